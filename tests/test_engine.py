"""verify.numeric.engine, the ensemble MSE decomposition (C3) on the empirical measure, against a brute
force written here (own kernel, moment loops and documented draws, in floats and in mpmath at 50
digits) and a brute-force noise simulation with standard errors."""

from __future__ import annotations

import math
from types import SimpleNamespace

import mpmath
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from scipy.stats import norm

from verify.errors import VerifyError
from verify.numeric.dgp import head_projections, make_dgp
from verify.numeric.engine import (
    EVAL_CHUNK,
    MP_MAX_OPS,
    decompose,
    decompose_mp,
    noise_simulation_check,
)

# Sums of k ~ 100 rounded products (R <= 9, H^2 <= 25, n <= 24): k 2^-53 ~ 1e-14 of the terms'
# magnitude, x10 for cancellation in centred sums. Measured: <= 5e-16.
IDENTITY_RTOL = 1e-13
# Engine vs the loops here: the same sums rounded differently; the same bound. Measured: <= 5e-16.
REF_RTOL = 1e-13
# mpmath at 50 digits: the identity residual is bounded by ~10^-50 times a few hundred operations.
MP_RESIDUAL = 1e-45
# float64 terms vs the same terms at 50 digits: float64 rounding of ~100-term sums (< 1e3 ulps).
MP_AGREEMENT = 1e-13
# Noise simulation vs exact conditional moments: Bonferroni, family-wise level 1e-3 (two-sided).
FAMILY_LEVEL = 1e-3

# Chunking evaluation points differently changes how BLAS rounds the scores: a few ulps.
CHUNK_RTOL = 1e-13

BANDWIDTH = 1.0  # gaussian kernel bandwidth used throughout (unit-variance design)
MP_BANDWIDTH = 0.7  # != 1, so that a 1/b for 1/b^2 in the kernel cannot pass unseen


def _heads(H, d, d_k, seed):
    return head_projections("random", H, d, d_k, rng=seed)


def _alpha(H, seed):
    # any sign, not summing to 1
    return 3.0 * np.random.default_rng(seed).standard_normal(H)


def _kernel_kwargs(kernel):
    return {"kernel": kernel, "bandwidth": BANDWIDTH if kernel == "gaussian" else None}


FLOAT = SimpleNamespace(num=float, exp=math.exp, sin=math.sin, sqrt=math.sqrt, fsum=math.fsum)
MP = SimpleNamespace(num=mpmath.mpf, exp=mpmath.exp, sin=mpmath.sin, sqrt=mpmath.sqrt, fsum=mpmath.fsum)


def _brute_force(ops, sigma, WQ, WK, alpha, x_eval, n, R, seed, method, kernel, bandwidth=BANDWIDTH):
    """The single-index decomposition (sin(2 x_1), N(0, I) design) from the raw inputs alone, by
    explicit loops in the arithmetic of ``ops`` (Python floats, or mpmath at the working precision):
    the documented draws (floats, converted exactly), projections, kernel (softmax scale
    1/sqrt(d_k), or Gaussian), weights, moments and MSE; nothing taken from the engine."""
    H, d, d_k = WQ.shape
    m, num, fsum = len(x_eval), ops.num, ops.fsum
    A, s2 = [num(float(a)) for a in alpha], num(sigma) ** 2

    def proj(W, x):
        return [fsum(num(float(W[a, c])) * num(float(x[a])) for a in range(d)) for c in range(d_k)]

    est = [[[None] * m for _ in range(H)] for _ in range(R)]
    S = [[[num(0)] * m for _ in range(H)] for _ in range(H)]
    noise = [[num(0)] * m for _ in range(R)]
    for r, child in enumerate(np.random.SeedSequence(seed).spawn(R)):
        rng = np.random.default_rng(child)
        X = rng.standard_normal((n, d))                      # dgp.sample_x for the N(0, I_d) design
        eps = sigma * rng.standard_normal(n) if method == "simulate" else np.zeros(n)
        fX = [ops.sin(2 * num(float(X[i, 0]))) for i in range(n)]
        resp = [fX[i] + num(float(eps[i])) for i in range(n)] if method == "simulate" else fX
        keys = [[proj(WK[h], X[i]) for i in range(n)] for h in range(H)]
        for j in range(m):
            w = []
            for h in range(H):
                q = proj(WQ[h], x_eval[j])
                if kernel == "softmax":
                    kern = [ops.exp(fsum(a * b for a, b in zip(q, k)) / ops.sqrt(d_k)) for k in keys[h]]
                else:
                    kern = [ops.exp(-fsum((a - b) ** 2 for a, b in zip(q, k)) / (2 * num(bandwidth) ** 2))
                            for k in keys[h]]
                tot = fsum(kern)
                w.append([v / tot for v in kern])
            for h in range(H):
                est[r][h][j] = fsum(a * b for a, b in zip(w[h], resp))
            if method == "exact":
                for h in range(H):
                    for g in range(H):
                        S[h][g][j] += s2 * fsum(a * b for a, b in zip(w[h], w[g]))
                noise[r][j] = s2 * fsum(fsum(A[h] * w[h][i] for h in range(H)) ** 2 for i in range(n))
    f = [ops.sin(2 * num(float(x[0]))) for x in x_eval]
    out = {k: [] for k in ("mean", "cov", "bias2", "var_term", "cov_term", "mse")}
    for j in range(m):
        mu = [fsum(est[r][h][j] for r in range(R)) / R for h in range(H)]
        C = [[fsum((est[r][h][j] - mu[h]) * (est[r][g][j] - mu[g]) for r in range(R)) / R + S[h][g][j] / R
              for g in range(H)] for h in range(H)]
        out["mean"].append(mu)
        out["cov"].append(C)
        out["bias2"].append((fsum(a * b for a, b in zip(A, mu)) - f[j]) ** 2)
        out["var_term"].append(fsum(A[h] ** 2 * C[h][h] for h in range(H)))
        out["cov_term"].append(fsum(A[h] * A[g] * C[h][g] for h in range(H) for g in range(H) if g != h))
        out["mse"].append(fsum((fsum(A[h] * est[r][h][j] for h in range(H)) - f[j]) ** 2 for r in range(R)) / R
                          + fsum(noise[r][j] for r in range(R)) / R)
    return out


@pytest.mark.parametrize("method", ["exact", "simulate"])
@pytest.mark.parametrize("kernel", ["softmax", "gaussian"])
def test_matches_brute_force_loops(method, kernel):
    d, d_k, H, n, m, R, seed, sigma = 3, 2, 2, 7, 3, 5, 12, 0.4
    dgp = make_dgp("single-index", d=d, sigma=sigma)
    WQ, WK = _heads(H, d, d_k, 1), _heads(H, d, d_k, 2)
    alpha = _alpha(H, 3)
    dec = decompose(dgp, WQ, WK, alpha=alpha, m=m, n=n, R=R, seed=seed, method=method, **_kernel_kwargs(kernel))
    ref = _brute_force(FLOAT, sigma, WQ, WK, alpha, dec.x_eval, n, R, seed, method, kernel)
    mean, cov, mse = np.array(ref["mean"]).T, np.moveaxis(np.array(ref["cov"]), 0, -1), np.array(ref["mse"])
    # x_eval is documented as drawn from the root SeedSequence(seed)
    assert np.array_equal(dec.x_eval, np.random.default_rng(np.random.SeedSequence(seed)).standard_normal((m, d)))
    scale_mean = np.max(np.abs(mean))
    assert np.max(np.abs(dec.head_mean - mean)) <= REF_RTOL * scale_mean
    assert np.max(np.abs(dec.head_cov - cov)) <= REF_RTOL * np.max(np.abs(cov))
    assert np.max(np.abs(dec.mse - mse)) <= REF_RTOL * np.max(mse)
    assert np.allclose(dec.head_bias, mean - np.sin(2.0 * dec.x_eval[:, 0]), rtol=0, atol=REF_RTOL * scale_mean)


@pytest.mark.parametrize("method", ["exact", "simulate"])
@pytest.mark.parametrize("kernel", ["softmax", "gaussian"])
@given(H=st.integers(1, 5), seed=st.integers(0, 2**31 - 1))
def test_identity_holds_to_rounding_for_any_alpha(method, kernel, H, seed):
    d, d_k = 6, 2
    dgp = make_dgp("additive", d=d, sigma=0.7)
    dec = decompose(dgp, _heads(H, d, d_k, seed), _heads(H, d, d_k, seed + 1), alpha=_alpha(H, seed + 2),
                    m=8, n=24, R=9, seed=seed, method=method, **_kernel_kwargs(kernel))
    assert dec.identity_error() <= IDENTITY_RTOL
    assert np.all(dec.bias2 >= 0) and np.all(dec.var_term >= 0)
    assert np.all(dec.mse > 0)


@pytest.mark.parametrize("method", ["exact", "simulate"])
def test_identical_heads_opposite_weights_cancel_exactly(method):
    # alpha = (1, -1) on identical heads: the ensemble is identically 0, so MSE = f^2, the
    # bias is f^2, and the variance and covariance terms cancel; correlations are 1.
    d, d_k = 4, 2
    U = head_projections("identical", 2, d, d_k, rng=0)
    dgp = make_dgp("bump", d=d, sigma=0.5)
    dec = decompose(dgp, U, alpha=[1.0, -1.0], m=6, n=20, R=8, seed=4, method=method)
    f2 = dec.f_eval**2
    assert np.allclose(dec.mse, f2, rtol=IDENTITY_RTOL, atol=0)
    assert np.allclose(dec.bias2, f2, rtol=IDENTITY_RTOL, atol=0)
    assert np.allclose(dec.var_term + dec.cov_term, 0.0, atol=IDENTITY_RTOL * np.max(dec.var_term))
    assert np.allclose(dec.head_corr, 1.0, rtol=0, atol=IDENTITY_RTOL)
    assert dec.identity_error() <= IDENTITY_RTOL


def test_simulate_with_one_replicate_has_no_correlation():
    dgp = make_dgp("bump", d=3, sigma=0.5)
    dec = decompose(dgp, _heads(2, 3, 1, 0), m=4, n=10, R=1, seed=0, method="simulate")
    with pytest.raises(VerifyError, match="^head_corr:"):
        dec.head_corr
    assert dec.integrated()["mean_pointwise_corr"] is None


def test_integrated():
    dgp = make_dgp("single-index", d=4, sigma=0.5)
    dec = decompose(dgp, _heads(3, 4, 2, 0), m=5, n=16, R=4, seed=1)
    integ = dec.integrated()
    assert integ["head_cov"].shape == (3, 3) and integ["head_corr"].shape == (3, 3)
    assert np.allclose(np.diag(integ["head_corr"]), 1.0)
    assert integ["mse"] == pytest.approx(integ["bias2"] + integ["var_term"] + integ["cov_term"], rel=IDENTITY_RTOL)


@pytest.mark.parametrize("kernel", ["softmax", "gaussian"])
def test_exact_conditional_moments_match_noise_simulation(kernel):
    d, d_k, H, n, m, N, seed = 4, 2, 3, 12, 4, 4000, 21
    dgp = make_dgp("single-index", d=d, sigma=0.6)
    WQ = _heads(H, d, d_k, 5)
    dec = decompose(dgp, WQ, m=m, n=n, R=1, seed=seed, method="exact", **_kernel_kwargs(kernel))
    chk = noise_simulation_check(dgp, WQ, m=m, n=n, N=N, seed=seed, **_kernel_kwargs(kernel))
    assert np.array_equal(chk.x_eval, dec.x_eval)
    z_max = norm.isf(FAMILY_LEVEL / (2 * (H * m + H * H * m)))
    # with R = 1 the exact path's moments are the conditional ones given replicate 0's design
    assert np.all(np.abs(chk.mean - dec.head_mean) <= z_max * chk.mean_se)
    assert np.all(np.abs(chk.cov - dec.head_cov) <= z_max * chk.cov_se)
    # and the noise must be visible at all: the standard errors are not degenerate
    assert np.all(chk.cov_se > 0) and np.all(chk.mean_se > 0)


@pytest.mark.parametrize("method", ["exact", "simulate"])
@pytest.mark.parametrize("kernel", ["softmax", "gaussian"])
def test_mpmath_recomputation_at_50_digits(method, kernel):
    """The engine's float64 terms and its own 50-digit recomputation (decompose_mp) against an
    independent 50-digit computation from the raw inputs: a wrong kernel, scale or bandwidth in the
    engine's weights moves both far beyond float64 rounding."""
    d, d_k, H, n, m, R, seed, sigma = 3, 2, 3, 8, 3, 4, 9, 0.8
    dgp = make_dgp("single-index", d=d, sigma=sigma)
    WQ, WK, alpha = _heads(H, d, d_k, 0), _heads(H, d, d_k, 1), _alpha(H, 2)
    b = MP_BANDWIDTH
    dec, chk = decompose_mp(dgp, WQ, WK, alpha=alpha, m=m, n=n, R=R, seed=seed, method=method, dps=50,
                            kernel=kernel, bandwidth=b if kernel == "gaussian" else None)
    assert chk.dps == 50 and chk.residual < MP_RESIDUAL and max(chk.agreement.values()) < MP_AGREEMENT
    with mpmath.workdps(50):
        ref = _brute_force(MP, sigma, WQ, WK, alpha, dec.x_eval, n, R, seed, method, kernel, b)
        scale = [abs(ref["mse"][j]) + ref["bias2"][j] + abs(ref["var_term"][j]) + abs(ref["cov_term"][j])
                 for j in range(m)]
        for key in ("bias2", "var_term", "cov_term", "mse"):
            for j in range(m):
                assert abs(mpmath.mpf(float(getattr(dec, key)[j])) - ref[key][j]) <= MP_AGREEMENT * scale[j], (key, j)


def test_mpmath_refuses_large_sizes():
    dgp = make_dgp("bump", d=4, sigma=0.5)
    dec = decompose(dgp, _heads(4, 4, 1, 0), m=16, n=1024, R=8, seed=0)
    assert 8 * 16 * 1024 * 4 * 6 > MP_MAX_OPS
    with pytest.raises(VerifyError, match="MP_MAX_OPS"):
        dec.mp_check()


def _arrays(dec):
    return [dec.x_eval, dec.head_mean, dec.head_cov, dec.bias2, dec.var_term, dec.cov_term, dec.mse]


@pytest.mark.parametrize("method", ["exact", "simulate"])
def test_same_seed_same_numbers_whatever_the_blocking(method):
    # m = 80 > EVAL_CHUNK: two chunks of evaluation points; 2 MB: a few replicates per block
    d, d_k, H, n, m, R = 5, 2, 3, 300, 80, 7
    dgp = make_dgp("single-index", d=d, sigma=0.5)
    WQ, alpha = _heads(H, d, d_k, 0), _alpha(H, 1)
    kw = dict(alpha=alpha, m=m, n=n, R=R, seed=17, method=method)
    ref = decompose(dgp, WQ, **kw)
    again = decompose(dgp, WQ, **kw)
    blocked = decompose(dgp, WQ, **kw, max_memory=2_000_000)
    assert ref.blocks == (R, EVAL_CHUNK)
    assert 1 < blocked.blocks[0] < R and blocked.blocks[1] == EVAL_CHUNK
    for other in (again, blocked):
        for a, b in zip(_arrays(ref), _arrays(other)):
            assert np.array_equal(a, b)
    # a budget below one replicate at EVAL_CHUNK points: smaller chunks, same numbers up to rounding
    chunked = decompose(dgp, WQ, **kw, max_memory=400_000)
    assert chunked.blocks[0] == 1 and 1 <= chunked.blocks[1] < EVAL_CHUNK
    for a, b in zip(_arrays(ref), _arrays(chunked)):
        assert np.allclose(a, b, rtol=CHUNK_RTOL, atol=CHUNK_RTOL * np.max(np.abs(a)))
    with pytest.raises(VerifyError, match="^max_memory:"):
        decompose(dgp, WQ, **kw, max_memory=150_000)
    different = decompose(dgp, WQ, **{**kw, "seed": 18})
    assert not np.array_equal(ref.mse, different.mse)
    assert not np.array_equal(ref.x_eval, different.x_eval)


def test_replicates_depend_only_on_seed_and_index():
    # replicate r's design comes from SeedSequence(seed, spawn_key=(r,)) whatever R is: the R = 3 head
    # means average noise_simulation_check's conditional means on those designs, one at a time
    d, n, m, seed = 3, 12, 4, 5
    dgp = make_dgp("bump", d=d, sigma=0.5)
    WQ = _heads(2, d, 1, 0)
    dec = decompose(dgp, WQ, m=m, n=n, R=3, seed=seed, method="exact")
    assert np.array_equal(dec.x_eval, decompose(dgp, WQ, m=m, n=n, R=1, seed=seed).x_eval)
    cond = []
    for r in range(3):
        X = np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(r,))).standard_normal((n, d))
        cond.append(noise_simulation_check(dgp, WQ, design=X, x_eval=dec.x_eval, N=2, seed=0).cond_mean)
    assert np.allclose(dec.head_mean, sum(cond) / 3, rtol=REF_RTOL, atol=0)


def test_bad_dgp_output_raises_verify_error():
    from verify.numeric.dgp import DGP

    good = make_dgp("bump", d=2, sigma=0.5)
    bad_f = DGP("bad", 2, 0.5, lambda x: np.full(x.shape[:-1], np.nan), good.sample_x)
    bad_x = DGP("bad", 2, 0.5, good.f, lambda rng, shape: rng.standard_normal((*shape, 3)))
    with pytest.raises(VerifyError, match="^dgp.f"):
        decompose(bad_f, _heads(1, 2, 1, 0), m=2, n=4, R=1, seed=0)
    with pytest.raises(VerifyError, match="^x_eval drawn by dgp.sample_x"):
        decompose(bad_x, _heads(1, 2, 1, 0), m=2, n=4, R=1, seed=0)
    with pytest.raises(VerifyError, match="^design drawn by dgp.sample_x"):
        decompose(bad_x, _heads(1, 2, 1, 0), x_eval=np.zeros((2, 2)), n=4, R=1, seed=0)


# With f = 0 every term is a quadratic form in alpha: c alpha scales it by c^2, to a few ulps.
HOMOGENEITY_RTOL = 1e-12


@pytest.mark.parametrize("method", ["exact", "simulate"])
def test_large_alpha_within_range_is_returned_and_beyond_it_refused(method):
    """alpha = 1e100 (1, -1) gives 1e200 times the terms of (1, -1): large but finite, returned;
    1e200 (1, -1) would need 1e400: refused naming alpha, never inf/NaN with identity error 0."""
    from verify.numeric.dgp import DGP

    dgp = DGP("zero", 4, 0.5, lambda x: np.zeros(x.shape[:-1]), make_dgp("bump", d=4).sample_x)
    W = _heads(2, 4, 2, 0)
    kw = dict(m=5, n=16, R=3, seed=1, method=method)
    base = decompose(dgp, W, alpha=[1.0, -1.0], **kw)
    big = decompose(dgp, W, alpha=[1e100, -1e100], **kw)
    for term in ("bias2", "var_term", "cov_term", "mse"):
        assert np.all(np.isfinite(getattr(big, term)))
        np.testing.assert_allclose(getattr(big, term), 1e200 * getattr(base, term), rtol=HOMOGENEITY_RTOL, atol=0)
    with pytest.raises(VerifyError, match=r"^alpha: .*overflow to non-finite"):
        decompose(dgp, W, alpha=[1e200, -1e200], **kw)
