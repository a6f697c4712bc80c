"""Tests of verify.numeric.nw against references written here: Python double loops, statsmodels'
KernelReg (Gaussian NW) and mpmath at 50 digits, plus the properties of an NW estimator."""

from __future__ import annotations

import math
import tracemalloc

import mpmath
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from statsmodels.nonparametric.kernel_regression import KernelReg

from verify.errors import VerifyError
from verify.numeric import nw
from verify.numeric.nw import nw_estimate, nw_weights

EPS = np.finfo(np.float64).eps
EPS32 = np.finfo(np.float32).eps

# Sums of n terms each in (0, 1]: rows sum to 1 within n ulps (n <= 8) of the division's result.
ROWSUM_ULPS = 16


def _rng(seed: int) -> np.random.Generator:
    return np.random.default_rng(seed)


@pytest.fixture(scope="module", params=["numba", "numpy"], autouse=True)
def backend(request):
    """Every test of this module runs on the compiled kernel and on the numpy reference."""
    previous, fallbacks = nw.set_backend(request.param), nw.kernel_fallbacks
    assert nw.get_backend() == request.param       # numba is a test dependency: no silent fallback
    yield request.param
    nw.set_backend(previous)
    assert nw.kernel_fallbacks == fallbacks        # every kernel result tested here was the kernel's


def naive_nw(q, k, v, kernel: str, param: float):
    """Textbook NW in Python floats: K from its definition, weights = K / sum K (no shift)."""
    m, n = q.shape[0], k.shape[0]
    W = np.empty((m, n))
    for i in range(m):
        Ks = []
        for j in range(n):
            if kernel == "softmax":
                Ks.append(math.exp(param * math.fsum(a * b for a, b in zip(q[i], k[j]))))
            else:
                Ks.append(math.exp(-math.fsum((a - b) ** 2 for a, b in zip(q[i], k[j])) / (2 * param**2)))
        total = math.fsum(Ks)
        W[i] = [K / total for K in Ks]
    est = np.array([[math.fsum(W[i, j] * v[j, c] for j in range(n)) for c in range(v.shape[1])] for i in range(m)])
    return W, est


def rounding_tol(q, k, v, kernel: str, param: float, eps: float = EPS) -> float:
    """Bound on |a - b| for two evaluations of the same NW quantity that differ only in rounding: each
    score errs by <= (d_k + 2) eps B with B = factor d_k (max|q| + 2 max|k|)^2 bounding its terms, a
    weight moves by twice the score change, the n-term sums by 2n eps of the values' spread. A worst
    case: observed differences are a few ulps, any indexing or formula bug shows up at O(1)."""
    d, n = q.shape[-1], k.shape[-2]
    factor = param if kernel == "softmax" else 1.0 / param**2
    B = factor * d * (np.max(np.abs(q)) + 2 * np.max(np.abs(k))) ** 2
    spread = float(np.max(v) - np.min(v)) if v is not None else 1.0
    return eps * max(spread, 1.0) * (4 * (d + 2) * B + 2 * n + 4)


shapes = st.tuples(st.integers(1, 6), st.integers(1, 8), st.integers(1, 4), st.integers(1, 3))
kernels = st.sampled_from([("softmax", None), ("softmax", 0.3), ("softmax", 1.7), ("gaussian", 0.6), ("gaussian", 2.5)])
seeds = st.integers(0, 2**32 - 1)


def case(shape, kern, seed, lead=((), (), ())):
    """Queries (m, d), keys (n, d), values (n, p) (after their ``lead`` axes), the keyword arguments
    of the kernel (its default scale when the parameter is None) and the parameter in effect."""
    m, n, d, p = shape
    kernel, param = kern
    rng = _rng(seed)
    q, k, v = (rng.standard_normal(a + b) for a, b in zip(lead, ((m, d), (n, d), (n, p))))
    name = "scale" if kernel == "softmax" else "bandwidth"
    kw = {"kernel": kernel} if param is None else {"kernel": kernel, name: param}
    return q, k, v, kw, 1 / math.sqrt(d) if param is None else param


@given(shapes, kernels, seeds)
def test_matches_naive_double_loop(shape, kern, seed):
    q, k, v, kw, par = case(shape, kern, seed)
    W_ref, est_ref = naive_nw(q, k, v, kern[0], par)
    W, est = nw_weights(q, k, **kw), nw_estimate(q, k, v, **kw)
    assert W.shape == W_ref.shape and est.shape == est_ref.shape
    assert np.max(np.abs(W - W_ref)) <= rounding_tol(q, k, None, kern[0], par)
    assert np.max(np.abs(est - est_ref)) <= rounding_tol(q, k, v, kern[0], par)


@given(st.integers(1, 5), st.integers(2, 25), st.integers(1, 3), st.floats(0.3, 3.0), seeds)
def test_gaussian_matches_statsmodels_kernelreg(m, n, d, b, seed):
    rng = _rng(seed)
    X, y, Q = rng.standard_normal((n, d)), rng.standard_normal(n), rng.standard_normal((m, d))
    reg = KernelReg(y, X, var_type="c" * d, reg_type="lc", bw=[b] * d, rng=seed)
    ref = reg.fit(Q)[0]
    ours = nw_estimate(Q, X, y[:, None], kernel="gaussian", bandwidth=b)[:, 0]
    assert np.max(np.abs(ours - ref)) <= rounding_tol(Q, X, y, "gaussian", b)


def test_statsmodels_product_kernel_is_the_isotropic_gaussian():
    """statsmodels' product of 1-D Gaussians with equal bandwidths is exp(-||q-k||^2/(2b^2))
    up to a constant factor, so the KernelReg comparison above tests the same estimator."""
    from statsmodels.nonparametric import kernels as smk

    rng = _rng(11)
    b, d = 0.8, 3
    X, x = rng.standard_normal((9, d)), rng.standard_normal(d)
    product = np.prod([smk.gaussian(b, X[:, l], x[l]) for l in range(d)], axis=0)
    iso = np.exp(-np.sum((X - x) ** 2, axis=1) / (2 * b * b))
    ratio = product / iso
    assert np.allclose(ratio, ratio[0], rtol=1e-14, atol=0)
    assert ratio[0] == pytest.approx((2 * np.pi) ** (-d / 2), rel=1e-14)


@given(shapes, kernels, seeds)
def test_permutation_of_key_value_pairs(shape, kern, seed):
    q, k, v, kw, par = case(shape, kern, seed)
    perm = _rng(seed + 1).permutation(k.shape[0])
    a, b = nw_estimate(q, k, v, **kw), nw_estimate(q, k[perm], v[perm], **kw)
    assert np.max(np.abs(a - b)) <= rounding_tol(q, k, v, kern[0], par)
    Wa, Wb = nw_weights(q, k, **kw), nw_weights(q, k[perm], **kw)
    assert np.max(np.abs(Wa[:, perm] - Wb)) <= rounding_tol(q, k, None, kern[0], par)


@given(shapes, kernels, seeds,
       st.lists(st.floats(-1e300, 1e300, allow_nan=False, allow_subnormal=True), min_size=3, max_size=3))
def test_constant_values_returned_exactly(shape, kern, seed, consts):
    """Exact, not to a tolerance: the mid-range centring makes v - r == 0 for constant columns."""
    q, k, v, kw, _ = case(shape, kern, seed)
    c = np.array(consts[:v.shape[1]])
    est = nw_estimate(q * 30, k, np.broadcast_to(c, v.shape), **kw)        # large scores: very uneven weights
    assert np.array_equal(est, np.broadcast_to(c, est.shape))


@given(shapes, kernels, seeds)
def test_weights_nonnegative_and_sum_to_one(shape, kern, seed):
    q, k, _, kw, _ = case(shape, kern, seed)
    for scale_q in (1.0, 100.0):
        W = nw_weights(q * scale_q, k, **kw)
        assert np.all(W >= 0) and np.all(np.isfinite(W))
        assert np.max(np.abs(W.sum(axis=-1) - 1)) <= ROWSUM_ULPS * EPS


@given(st.integers(1, 3), st.integers(1, 3), shapes, kernels, seeds)
def test_batching_equals_looping(R, H, shape, kern, seed):
    """Leading axes broadcast: queries (R, 1, m, d), keys (H, n, d), values (R, H, n, p)."""
    q, k, v, kw, par = case(shape, kern, seed, lead=((R, 1), (H,), (R, H)))
    est, W = nw_estimate(q, k, v, **kw), nw_weights(q, k, **kw)
    assert est.shape == (R, H) + est.shape[2:] and W.shape == (R, H, q.shape[-2], k.shape[-2])
    for r in range(R):
        for h in range(H):
            e = nw_estimate(q[r, 0], k[h], v[r, h], **kw)
            assert np.max(np.abs(est[r, h] - e)) <= rounding_tol(q, k, v[r, h], kern[0], par)
            assert np.max(np.abs(W[r, h] - nw_weights(q[r, 0], k[h], **kw))) <= rounding_tol(q, k, None, kern[0], par)


@given(shapes, kernels, seeds)
def test_float32_kept(shape, kern, seed):
    q, k, v, kw, par = case(shape, kern, seed)
    f32 = [a.astype(np.float32) for a in (q, k, v)]
    est32, W32 = nw_estimate(*f32, **kw), nw_weights(*f32[:2], **kw)
    assert est32.dtype == np.float32 and W32.dtype == np.float32
    # compare with float64 on the float32-rounded data, so only the arithmetic differs
    ref = nw_estimate(*(a.astype(np.float64) for a in f32), **kw)
    assert np.max(np.abs(est32 - ref)) <= rounding_tol(q, k, v, kern[0], par, eps=EPS32)
    assert np.max(np.abs(W32.sum(-1) - 1)) <= ROWSUM_ULPS * EPS32
    # one float64 (or integer) argument makes the whole computation float64
    assert nw_estimate(f32[0], f32[1], v, **kw).dtype == np.float64
    assert nw_estimate(f32[0], f32[1], np.ones(v.shape, dtype=np.int64), **kw).dtype == np.float64


@pytest.mark.parametrize("kernel,param", [("softmax", None), ("gaussian", 0.9)])
@pytest.mark.parametrize("lead_q,lead_k", [((), ()), ((3, 2), (2,)), ((2, 1), (1, 3))])
def test_chunked_equals_unchunked(monkeypatch, kernel, param, lead_q, lead_k):
    """One-row blocks (cache target 1 byte) and several memory caps vs a single block.

    Not bitwise: a one-row block goes through BLAS's gemv instead of gemm, which may add in a
    different order, so the comparison uses rounding_tol (observed: <= a few ulps).
    """
    rng = _rng(5)
    m, n, d, p = 13, 17, 3, 2
    q, k = rng.standard_normal(lead_q + (m, d)), rng.standard_normal(lead_k + (n, d))
    v = rng.standard_normal(lead_k + (n, p))
    kw = {"kernel": kernel} if param is None else {"kernel": kernel, "bandwidth": param}
    par = param if param is not None else 1 / math.sqrt(d)
    whole_e, whole_w = nw_estimate(q, k, v, **kw), nw_weights(q, k, **kw)
    monkeypatch.setattr(nw, "CACHE_BLOCK_BYTES", 1)
    monkeypatch.setattr(nw, "KERNEL_BLOCK_SCORES", 1)
    tiny_e, tiny_w = nw_estimate(q, k, v, **kw), nw_weights(q, k, **kw)
    monkeypatch.undo()
    tries = 0
    for cap in (2**17, 140_000, 2**18, 300_000, 2**19):
        try:
            capped = nw_estimate(q, k, v, max_memory=cap, **kw)
        except VerifyError as exc:
            assert "max_memory" in str(exc)
            continue
        tries += 1
        assert np.max(np.abs(capped - whole_e)) <= rounding_tol(q, k, v, kernel, par)
    assert tries >= 2
    assert np.max(np.abs(tiny_e - whole_e)) <= rounding_tol(q, k, v, kernel, par)
    assert np.max(np.abs(tiny_w - whole_w)) <= rounding_tol(q, k, None, kernel, par)


@pytest.mark.parametrize("kernel,param", [("softmax", None), ("gaussian", 1.3)])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("cap", [2**18, 400_000, 2**20])
def test_memory_cap_holds(kernel, param, dtype, cap):
    """Peak traced allocation minus the result stays under max_memory, while the scores
    alone (R*H*m*n) would be several times the cap."""
    rng = _rng(9)
    q = rng.standard_normal((3, 2, 200, 4)).astype(dtype)
    k = rng.standard_normal((2, 700, 4)).astype(dtype)
    v = rng.standard_normal((3, 1, 700, 5)).astype(dtype)
    kw = {"kernel": kernel} if param is None else {"kernel": kernel, "bandwidth": param}
    assert 3 * 2 * 200 * 700 * np.dtype(dtype).itemsize > 3 * cap
    for f, args in ((nw_estimate, (q, k, v)), (nw_weights, (q, k))):
        tracemalloc.start()
        try:
            out = f(*args, max_memory=cap, **kw)
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
        assert peak - out.nbytes <= cap


def test_default_max_memory_setter():
    rng = _rng(2)
    q, k, v = rng.standard_normal((4, 2)), rng.standard_normal((50, 2)), rng.standard_normal((50, 1))
    ref = nw_estimate(q, k, v)
    previous = nw.set_default_max_memory(1000)
    try:
        assert previous == nw.DEFAULT_MAX_MEMORY
        assert nw.get_default_max_memory() == 1000
        with pytest.raises(VerifyError, match="max_memory"):
            nw_estimate(q, k, v)
        assert np.array_equal(nw_estimate(q, k, v, max_memory=2**20), ref)     # per call wins
    finally:
        nw.set_default_max_memory(previous)
    assert nw.get_default_max_memory() == nw.DEFAULT_MAX_MEMORY


def test_empty_query_and_batch_axes():
    k, v = np.ones((3, 2)), np.ones((3, 4))
    assert nw_estimate(np.ones((0, 2)), k, v).shape == (0, 4)
    assert nw_weights(np.ones((5, 0, 2)), k).shape == (5, 0, 3)
    assert nw_estimate(np.ones((0, 7, 2)), k, v).shape == (0, 7, 4)


@pytest.fixture(autouse=True)
def _fifty_digits():
    """The references below at 50 digits, for this module's tests only (the process's other tests run
    at mpmath's default, as a user's run does: tests/conftest.py)."""
    with mpmath.workdps(50):
        yield


def mp_nw(scores, v):
    """Weights and estimate from exact scores (given as mpf) at 50 digits."""
    W, E = [], []
    for row in scores:
        top = max(row)
        K = [mpmath.exp(s - top) for s in row]
        tot = mpmath.fsum(K)
        w = [x / tot for x in K]
        W.append(w)
        E.append([mpmath.fsum(wj * mpmath.mpf(float(v[j, c])) for j, wj in enumerate(w)) for c in range(v.shape[1])])
    return np.array([[float(x) for x in r] for r in W]), np.array([[float(x) for x in r] for r in E])


# Exact integer scores: only exp, the n-term sums and the division round: (n + 4) ulps, x4.
def extreme_tol(n: int, scale: float) -> float:
    return 4 * (n + 4) * EPS * scale


KEYS_INT = np.array([[100.0, 0.0], [99.0, 3.0], [100.0, -7.0], [98.0, 20.0], [-100.0, 0.0]])


@pytest.mark.parametrize("q,k", [
    pytest.param(np.array([[100.0, 0.0], [0.0, 100.0]]), KEYS_INT, id="mixed-plus-minus-1e4"),
    pytest.param(np.array([[-100.0, 0.0]]), KEYS_INT[:4], id="all-near-minus-1e4"),
    pytest.param(np.array([[100.0, 1.0]]), KEYS_INT[:4], id="all-near-plus-1e4"),
])
def test_extreme_scores_exact_integers(q, k):
    """Scores up to 1e4 in magnitude from integer vectors with scale 1 (exact in float64), where
    the unshifted formula gives 0/0 or inf/inf; compared with 50 digits."""
    v = _rng(3).standard_normal((k.shape[0], 2))
    scores = q @ k.T
    assert np.all(scores == np.round(scores)) and 9e3 < np.max(np.abs(scores)) <= 1e4
    with np.errstate(all="ignore"):
        naive = np.exp(scores) / np.exp(scores).sum(axis=1, keepdims=True)
    assert not np.all(np.isfinite(naive))                        # the case is really extreme
    W_ref, E_ref = mp_nw([[mpmath.mpf(float(s)) for s in row] for row in scores], v)
    W, E = nw_weights(q, k, scale=1.0), nw_estimate(q, k, v, scale=1.0)
    assert np.all(np.isfinite(W)) and np.all(np.isfinite(E))
    assert np.max(np.abs(W - W_ref)) <= extreme_tol(k.shape[0], 1.0)
    assert np.max(np.abs(E - E_ref)) <= extreme_tol(k.shape[0], np.max(np.abs(v)))


def test_extreme_scores_hugely_negative_rows_random():
    """Random float scores in about [-1e4, -2.4e3] for every key of a row (naively 0/0): finite,
    and equal to the 50-digit result on the same float inputs within the score rounding bound
    d_k eps |s| (doubled: own score and row maximum), which exp turns into relative error."""
    rng = _rng(4)
    d, n = 4, 6
    k = np.abs(rng.standard_normal((n, d)))
    k /= np.linalg.norm(k, axis=1, keepdims=True)
    q = -rng.uniform(2400, 2600, (3, d))
    v = rng.standard_normal((n, 3))
    exact = [[mpmath.fsum(mpmath.mpf(float(a)) * mpmath.mpf(float(b)) for a, b in zip(qi, kj)) for kj in k] for qi in q]
    flat = [float(s) for row in exact for s in row]
    assert max(flat) < -2e3 and min(flat) > -1.1e4
    W_ref, E_ref = mp_nw(exact, v)
    W, E = nw_weights(q, k, scale=1.0), nw_estimate(q, k, v, scale=1.0)
    tol = 2 * d * EPS * max(abs(s) for s in flat) + extreme_tol(n, 1.0)
    assert np.all(np.isfinite(W)) and np.all(np.isfinite(E))
    assert np.max(np.abs(W - W_ref)) <= tol
    assert np.max(np.abs(E - E_ref)) <= tol * np.max(np.abs(v))


def test_gaussian_tiny_bandwidth_all_kernels_underflow():
    """exp(-||q-k||^2/(2b^2)) underflows to 0 for every key (0/0 naively); the estimate is
    still the 50-digit one: with b = 1e-3 the scores are ~1e5-1e6 in magnitude."""
    q = np.array([[0.5, 0.25], [3.0, -1.0]])
    k = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0], [2.0, -2.0]])
    v = np.array([[1.0], [2.0], [4.0], [8.0]])
    b = 2.0**-10                                                   # exact: scores are dyadic
    with np.errstate(all="ignore"):
        Kn = np.exp(-((q[:, None, :] - k[None]) ** 2).sum(-1) / (2 * b * b))
    assert np.all(Kn == 0)
    exact = [[-mpmath.fsum((mpmath.mpf(float(a)) - mpmath.mpf(float(c))) ** 2 for a, c in zip(qi, kj))
              / (2 * mpmath.mpf(b) ** 2) for kj in k] for qi in q]
    W_ref, E_ref = mp_nw(exact, v)
    W = nw_weights(q, k, kernel="gaussian", bandwidth=b)
    E = nw_estimate(q, k, v, kernel="gaussian", bandwidth=b)
    assert np.max(np.abs(W - W_ref)) <= extreme_tol(4, 1.0)
    assert np.max(np.abs(E - E_ref)) <= extreme_tol(4, 8.0)
