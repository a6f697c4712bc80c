"""The compiled kernel (verify.numeric._kernel): its exp against mpmath at 40 digits, its estimates and
weights against torch's attention and the numpy path; the fallback and cache switches in fresh
processes (tests/test_nw.py runs every property test on both paths)."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from pathlib import Path

import mpmath
import numpy as np
import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

from verify.errors import VerifyError
from verify.numeric import _kernel as K
from verify.numeric import nw

ROOT = Path(__file__).resolve().parents[1]
EPS = np.finfo(np.float64).eps
EPS32 = np.finfo(np.float32).eps
# The module promises 2 ulp (truncation < 4e-18, ~1 ulp of rounding; measured max 0.79 with FMA).
EXP_ULPS = 2.0
# The spec's bar for "equal to rounding" against torch (relative to the largest output).
TORCH_RTOL = 1e-12
# float32: computed in float64 and rounded once (half an ulp), x2 for torch's own rounding.
F32_ULPS = 1.0


def ulps(ours: float, x: float) -> float:
    """|ours - e^x| in units of the last place of ours, e^x at 40 digits."""
    with mpmath.workdps(40):
        return float(abs(mpmath.mpf(ours) - mpmath.exp(mpmath.mpf(x))) / mpmath.mpf(float(np.spacing(ours))))


def with_backend(name: str, f, *args, fallback: bool = False, **kw):
    """``f(*args, **kw)`` on the named path; on numba, it must not hand the call back to numpy
    (unless ``fallback``), so that the result tested is the kernel's."""
    previous, before = nw.set_backend(name), nw.kernel_fallbacks
    try:
        return f(*args, **kw)
    finally:
        nw.set_backend(previous)
        assert fallback or nw.kernel_fallbacks == before, "the kernel handed the call back to numpy"


def test_exp_within_two_ulps_of_mpmath():
    rng = np.random.default_rng(0)
    xs = np.concatenate([rng.uniform(K.EXP_FLUSH_BELOW, 709.78, 3000), rng.uniform(-1, 1, 1000),
                         np.array([0.0, 1.0, -1.0, math.log(2), -math.log(2) / 2, math.log(2) / 2, 709.78,
                                   K.EXP_FLUSH_BELOW, -708.0, 1e-300, -1e-300, 5e-324])])
    out = np.empty_like(xs)
    K.exp_array(xs, out)
    worst = max(ulps(float(o), float(x)) for o, x in zip(out, xs))
    assert worst <= EXP_ULPS, worst
    assert out[xs == 0.0][0] == 1.0                      # the shifted row maximum weighs exactly 1


def test_exp_flushes_below_and_propagates_nan():
    xs = np.array([-708.4, -745.2, -1e4, -np.inf, np.nan])
    out = np.empty_like(xs)
    K.exp_array(xs, out)
    assert np.array_equal(out[:4], np.zeros(4)) and np.isnan(out[4])
    assert math.exp(-708.4) < 2.3e-308                   # what the flush drops is below the normal range


def test_softmax_exp_is_the_kernels_exp_on_numba_and_numpys_on_numpy():
    """The training experiments' exp follows the backend: bit for bit the kernel's exp (within 2 ulp
    of mpmath, above) or numpy's; a new array of the input's shape (also from a strided view),
    the input unchanged, e^-inf = 0 (a left-out key)."""
    rng = np.random.default_rng(3)
    base = rng.uniform(-30.0, 0.0, (3, 4, 5, 7))
    base[0, 0, 0, 0] = -np.inf
    for x in (base, base[..., ::2]):
        kept = x.copy()
        fast = with_backend("numba", nw.softmax_exp, x)
        plain = with_backend("numpy", nw.softmax_exp, x)
        ref = np.empty(x.size)
        K.exp_array(np.ascontiguousarray(x).reshape(-1), ref)
        assert np.array_equal(x, kept) and fast.shape == plain.shape == x.shape
        assert np.array_equal(fast.reshape(-1), ref) and np.array_equal(plain, np.exp(x))
        assert not np.shares_memory(fast, x) and not np.shares_memory(plain, x)
    finite = plain > 0
    assert fast[0, 0, 0, 0] == 0.0 and np.max(np.abs(fast - plain)[finite] / plain[finite]) <= 2 * EXP_ULPS * EPS


def torch_nw(q, k, v, kernel, param):
    """Softmax NW with torch's fused attention; Gaussian NW as softmax of -||q - k||^2/(2b^2)
    with torch.cdist (another formula for the scores)."""
    lead = np.broadcast_shapes(q.shape[:-2], k.shape[:-2], v.shape[:-2])
    tq, tk, tv = (torch.from_numpy(np.asarray(a, dtype=np.float64)).expand(*lead, *a.shape[-2:]) for a in (q, k, v))
    if kernel == "softmax":
        return torch.nn.functional.scaled_dot_product_attention(tq, tk, tv, scale=float(param)).numpy()
    w = torch.softmax(-torch.cdist(tq, tk) ** 2 / (2 * param * param), dim=-1)
    return (w @ tv).numpy()


CASES = [  # (lead_q, lead_k, lead_v, m, n, d, p)
    ((), (), (), 7, 300, 8, 1),
    ((), (), (), 5, 1000, 8, 8),            # p = d_k: torch's fused path
    ((3, 2), (2,), (3, 1), 6, 257, 3, 5),   # leading axes broadcast, n not a multiple of the tile
    ((2, 1), (1, 4), (2, 4), 4, 600, 1, 2),
    ((), (), (), 3, 70, 13, 6),             # d_k and p not multiples of 4
]


@pytest.mark.parametrize("kernel", ["softmax", "gaussian"])
@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{c[0]}x{c[1]}x{c[2]}-m{c[3]}n{c[4]}d{c[5]}p{c[6]}")
def test_kernel_matches_torch_and_numpy(kernel, case):
    lead_q, lead_k, lead_v, m, n, d, p = case
    rng = np.random.default_rng(hash(case) % 2**32)
    q, k = rng.standard_normal(lead_q + (m, d)), rng.standard_normal(lead_k + (n, d))
    v = rng.standard_normal(lead_v + (n, p))
    param = 1 / math.sqrt(d) if kernel == "softmax" else 0.9
    kw = {"kernel": kernel, ("scale" if kernel == "softmax" else "bandwidth"): param}
    ours = with_backend("numba", nw.nw_estimate, q, k, v, **kw)
    ref = torch_nw(q, k, v, kernel, param)
    assert ours.shape == ref.shape
    assert np.max(np.abs(ours - ref)) <= TORCH_RTOL * np.max(np.abs(ref))
    numpy_path = with_backend("numpy", nw.nw_estimate, q, k, v, **kw)
    assert np.max(np.abs(ours - numpy_path)) <= TORCH_RTOL * np.max(np.abs(ref))
    W = with_backend("numba", nw.nw_weights, q, k, **kw)
    assert np.max(np.abs(W - with_backend("numpy", nw.nw_weights, q, k, **kw))) <= TORCH_RTOL
    assert np.max(np.abs(W.sum(-1) - 1)) <= 16 * EPS


def test_each_kernel_is_compiled_for_one_signature_whatever_the_callers_arrays():
    """Queries that are writable, read-only (a broadcast view), strided or float32 all reach the
    kernel as one read-only float64 layout: each entry point has one compiled signature, the one the
    run's preload compiles in a first run (a second would be compiled again in every check's worker),
    and the caller's arrays keep their flags."""
    rng = np.random.default_rng(5)
    k, v = rng.standard_normal((40, 3)), rng.standard_normal((40, 2))
    base = rng.standard_normal((6, 3))
    queries = [base, np.broadcast_to(base[0], (4, 3)), rng.standard_normal((3, 12))[:, ::4],
               base.astype(np.float32)]
    for q in queries:
        writable = q.flags.writeable
        with_backend("numba", nw.nw_weights, q, k.astype(q.dtype))
        with_backend("numba", nw.nw_estimate, q, k.astype(q.dtype), v.astype(q.dtype))
        with_backend("numba", nw.nw_estimate, q, k.astype(q.dtype), v.astype(q.dtype), kernel="gaussian",
                     bandwidth=1.0)
        assert q.flags.writeable == writable
    assert len(K.weights_rows.signatures) == 1 and len(K.estimate_rows.signatures) == 1
    assert not K.weights_rows.signatures[0][0].mutable and not K.estimate_rows.signatures[0][0].mutable


@pytest.mark.parametrize("kernel", ["softmax", "gaussian"])
def test_kernel_float32(kernel):
    """float32 in, float32 out, within one float32 ulp of torch's float64 result on the same
    (float32) inputs: the kernel computes in float64 and rounds once."""
    rng = np.random.default_rng(3)
    q, k, v = (rng.standard_normal(s).astype(np.float32) for s in ((2, 9, 4), (2, 400, 4), (2, 400, 3)))
    param = 0.5 if kernel == "softmax" else 1.2
    kw = {"kernel": kernel, ("scale" if kernel == "softmax" else "bandwidth"): param}
    ours = with_backend("numba", nw.nw_estimate, q, k, v, **kw)
    assert ours.dtype == np.float32
    ref = torch_nw(q, k, v, kernel, np.float32(param) if kernel == "softmax" else param)
    if kernel == "gaussian":  # the working factor is 1/b^2 rounded to float32
        ref = torch_nw(q, k, v, kernel, 1 / math.sqrt(float(np.float32(1 / param**2))))
    assert np.all(np.abs(ours - ref) <= F32_ULPS * np.spacing(np.abs(ref).astype(np.float32)) + 4 * EPS)
    W = with_backend("numba", nw.nw_weights, q, k, **kw)
    assert W.dtype == np.float32 and np.max(np.abs(W.sum(-1) - 1)) <= 16 * EPS32


@given(st.integers(0, 2**32 - 1), st.sampled_from([1.0, 40.0, 400.0]), st.sampled_from(["softmax", "gaussian"]))
def test_kernel_extreme_and_shifted_scores_match_torch(seed, spread, kernel):
    """Scores far beyond FAST_EXP_BOUND (the row-maximum path) and mixed rows, against torch."""
    rng = np.random.default_rng(seed)
    q, k, v = rng.standard_normal((5, 3)) * spread, rng.standard_normal((40, 3)) * 4, rng.standard_normal((40, 2))
    param = 1.0 if kernel == "softmax" else 0.7
    kw = {"kernel": kernel, ("scale" if kernel == "softmax" else "bandwidth"): param}
    ours = with_backend("numba", nw.nw_estimate, q, k, v, **kw)
    ref = torch_nw(q, k, v, kernel, param)
    # the weights move by ~ eps |score| relative (rounding of scores of size up to 4 * spread * 12)
    tol = 4 * EPS * (4 * spread * 12 * 3 + 40) * np.max(np.abs(v))
    assert np.max(np.abs(ours - ref)) <= tol


@pytest.mark.parametrize("backend", ["numba", "numpy"])
def test_bitwise_independent_of_threads_and_kernel_blocks(monkeypatch, backend):
    """Every row is computed by the same code whatever thread takes it (on the kernel, whatever block
    or memory cap)."""
    rng = np.random.default_rng(8)
    q, k, v = rng.standard_normal((3, 2, 90, 4)), rng.standard_normal((3, 2, 1100, 4)), rng.standard_normal((3, 2, 1100, 3))
    assert q.shape[0] * q.shape[1] * q.shape[2] * k.shape[2] >= nw.MIN_PARALLEL_SCORES   # threaded when T > 1
    previous = nw.set_backend(backend), nw.set_default_threads(1)
    try:
        ref = nw.nw_estimate(q, k, v), nw.nw_weights(q, k, kernel="gaussian", bandwidth=1.1)
        for threads, block in ((2, None), (3, None)) + (((1, 1), (2, 5000)) if backend == "numba" else ()):
            nw.set_default_threads(threads)
            if block is not None:
                monkeypatch.setattr(nw, "KERNEL_BLOCK_SCORES", block)
            assert np.array_equal(nw.nw_estimate(q, k, v), ref[0])
            assert np.array_equal(nw.nw_weights(q, k, kernel="gaussian", bandwidth=1.1), ref[1])
            assert backend == "numpy" or np.array_equal(nw.nw_estimate(q, k, v, max_memory=2**20), ref[0])
    finally:
        nw.set_backend(previous[0])
        nw.set_default_threads(previous[1])


def test_kernel_allocates_nothing():
    """The memory cap is counted in verify.numeric.nw, where tracemalloc sees numpy's allocations; the
    kernels must allocate nothing of their own (numba's allocator is invisible to tracemalloc).
    numba's allocator counts one small wrapper per array argument of a call; a call ten times
    larger (one block either way) must not count one allocation more."""
    from numba.core.runtime import _nrt_python, rtsys

    rng = np.random.default_rng(1)

    def count(m: int, n: int) -> int:
        q, k, v = rng.standard_normal((m, 4)), rng.standard_normal((n, 4)), rng.standard_normal((n, 2))
        assert m * n <= nw.KERNEL_BLOCK_SCORES               # one block, one kernel call each
        _nrt_python.memsys_enable_stats()
        try:
            before = rtsys.get_allocation_stats()
            with_backend("numba", nw.nw_estimate, q, k, v, kernel="gaussian", bandwidth=0.8)
            with_backend("numba", nw.nw_weights, q * 300, k)     # the row-maximum path too
            with_backend("numba", nw.nw_estimate, q * 300, k, v)
            after = rtsys.get_allocation_stats()
        finally:
            _nrt_python.memsys_disable_stats()
        return after.alloc - before.alloc

    count(3, 5)                                                # compiled (or loaded) before counting
    assert count(30, 300) == count(60, 3000) == count(2, 7)


def test_kernel_overflow_falls_back_to_the_numpy_error():
    """Scores or sums beyond float64: the numpy path redoes the call and raises its error."""
    before = nw.kernel_fallbacks
    with pytest.raises(VerifyError, match="non-finite scores"):
        with_backend("numba", nw.nw_weights, np.full((1, 2), 1e200), np.full((2, 2), 1e200), fallback=True)
    with pytest.raises(VerifyError, match="values"):
        with_backend("numba", nw.nw_estimate, np.zeros((1, 1)), np.zeros((4, 1)),
                     np.array([[1.7e308], [1.7e308], [-1.7e308], [1.7e308]]), fallback=True)  # v - r sums past the range
    assert nw.kernel_fallbacks == before + 2


def run_child(code: str, **env: str) -> dict:
    full = dict(os.environ, PYTHONPATH=str(ROOT), **env)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=full, cwd=ROOT, timeout=300)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.strip().splitlines()[-1])


PROBE = """
import json, numpy as np
from verify.numeric import nw
rng = np.random.default_rng(0)
e = nw.nw_estimate(rng.standard_normal((3, 2)), rng.standard_normal((9, 2)), rng.standard_normal((9, 1)))
doc = {"backend": nw.get_backend(), "est": e.tolist()}
if doc["backend"] == "numba":
    from verify.numeric import _kernel as K
    doc["hits"] = sum(K.estimate_rows.stats.cache_hits.values())
    doc["misses"] = sum(K.estimate_rows.stats.cache_misses.values())
    doc["cache_dir"] = str(K.cache_dir())
print(json.dumps(doc))
"""


def test_environment_selects_the_numpy_path():
    numpy_doc = run_child(PROBE, MHA_NW_BACKEND="numpy")
    numba_doc = run_child(PROBE, MHA_NW_BACKEND="auto")
    assert numpy_doc["backend"] == "numpy" and numba_doc["backend"] == "numba"
    assert np.max(np.abs(np.array(numpy_doc["est"]) - np.array(numba_doc["est"]))) <= 1e-15


def test_without_numba_auto_falls_back_and_numba_is_refused():
    hide = "import sys; sys.modules['numba'] = None\n"   # import numba then raises ImportError
    assert run_child(hide + PROBE, MHA_NW_BACKEND="auto")["backend"] == "numpy"
    code = hide + ("from verify.numeric import nw\nfrom verify.errors import VerifyError\nimport json\n"
                   "try:\n    nw.nw_weights([[1.0]], [[1.0]])\nexcept VerifyError as e:\n"
                   "    print(json.dumps({'error': str(e)}))\n")
    assert "backend" in run_child(code, MHA_NW_BACKEND="numba")["error"]


def test_bad_backend_names_are_refused(monkeypatch):
    with pytest.raises(VerifyError, match="backend"):
        nw.set_backend("cuda")
    monkeypatch.setattr(nw, "_backend", "fortran")       # as if MHA_NW_BACKEND=fortran
    with pytest.raises(VerifyError, match="MHA_NW_BACKEND"):
        nw.nw_weights([[1.0]], [[1.0]])


@pytest.mark.slow   # compiles the kernel afresh in a child process (about 10 s of CPU)
def test_compile_cache_is_written_to_the_user_cache_and_reused(tmp_path):
    """A fresh cache folder: the first process compiles and stores, the second only loads."""
    first = run_child(PROBE, MHA_NW_CACHE_DIR=str(tmp_path))
    second = run_child(PROBE, MHA_NW_CACHE_DIR=str(tmp_path))
    assert first["cache_dir"] == str(tmp_path / "numba")
    assert first["misses"] >= 1 and first["hits"] == 0
    assert second["hits"] >= 1 and second["misses"] == 0
    assert any((tmp_path / "numba").rglob("*.nbi"))
    assert first["est"] == second["est"]
