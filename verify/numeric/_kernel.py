"""Fused NW kernels compiled with numba: one pass per query row, scores to estimate.

Imported by :mod:`verify.numeric.nw` only when numba is installed; otherwise its numpy implementation
runs, and it stays the reference the tests compare with. Per query row ``i`` of a key set (float64)::

    qs   = s q_i                    (softmax)    or  (q_i - c) / b^2          (Gaussian)
    t_j  = qs . k_j                 (softmax)    or  qs . (k_j - c) - ||k_j - c||^2/(2b^2)
    e_j  = exp(t_j - shift)         shift = 0 when |t_j| <= B is bounded, else max_j t_j
    out  = r + (sum_j e_j (v_j - r)) / sum_j e_j        (estimate)   or   e_j / sum_l e_l  (weights)

as the numpy path (its docstring, "Numerics"), with the bound ``B = ||qs|| max||k|| + max half-norm``
decided per row. Nothing is allocated inside the kernels: the caller passes every buffer, so the
memory cap of ``verify.numeric.nw`` counts them all. Inner loops run over a whole row of keys (passed
transposed, ``(d_k, n)`` and ``(p, n)``), which LLVM vectorises; ``fastmath`` allows reassociation and
FMA in the sums, :func:`exp` FMA alone.

``exp``: Cody-Waite reduction ``x = k ln2 + r`` (``ln2`` split in fdlibm's 32 + 53 bits), the degree-13
Taylor polynomial of ``e^r`` in Horner form (truncation ``< 4e-18``) and ``2^k`` built in the exponent
bits, ``k`` found by adding ``1.5 * 2^52`` (no float-to-int conversion, which AVX2 lacks). Within 2 ulp
of the correctly rounded value on [-708.39, 709.78] (``tests/test_kernel.py`` checks against mpmath);
0 below, NaN propagates.

Compiled once per machine: ``cache=True`` stores the machine code in :func:`cache_dir`
(``$MHA_NW_CACHE_DIR/numba``, else ``$XDG_CACHE_HOME/mha-nw-verify/numba``, else
``~/.cache/mha-nw-verify/numba``, else a private folder under the system's temporary folder; numba's
``NUMBA_CACHE_DIR`` takes precedence), keyed by this file's contents and the CPU. When numba cannot be
used (its import fails, ``NUMBA_DISABLE_JIT=1``, no folder can hold the compiled code, a first call
fails or disagrees with numpy's exp) this module raises ImportError after one warning line on stderr,
once per process, and the numpy implementation runs (the same numbers).
"""

from __future__ import annotations

import math
import os
import sys
import tempfile
from pathlib import Path

import numpy as np

from proofs import cache

#: Set on the parent package when the kernel is unusable, so that a later import fails at once
#: (no second warning, no second attempt to import numba).
_UNUSABLE = "_kernel_unusable"


def _give_up(reason: str) -> None:
    """Record ``reason``, print the one warning line, and fail this import (the numpy path runs)."""
    package = sys.modules.get("verify.numeric")
    if package is not None:
        setattr(package, _UNUSABLE, reason)
    sys.stderr.write(f"warning: the compiled NW kernel is not used ({reason}); the numpy implementation "
                     "computes the same numbers, 2-4x slower\n")
    sys.stderr.flush()
    raise ImportError(f"the compiled NW kernel is unusable: {reason}")


if getattr(sys.modules.get("verify.numeric"), _UNUSABLE, None):
    raise ImportError(f"the compiled NW kernel is unusable: {getattr(sys.modules['verify.numeric'], _UNUSABLE)}")
try:
    import numba
    from llvmlite import ir
    from numba import njit as _njit
    from numba.core import types
    from numba.extending import intrinsic
except ImportError:
    raise
except Exception as exc:  # noqa: BLE001 - numba's import raises ValueError etc. on a bad setting
    _give_up(f"numba cannot be imported: {type(exc).__name__}: {' '.join(str(exc).split())[:200]}")
if numba.config.DISABLE_JIT:
    _give_up("NUMBA_DISABLE_JIT is set")


def njit(**options):  # noqa: ANN001, ANN201 - numba's decorator, with the fallback
    """numba's ``njit(**options)``; a function numba cannot cache ends the import (:func:`_give_up`)."""
    def decorate(func):  # noqa: ANN001, ANN202
        try:
            return _njit(**options)(func)
        except RuntimeError as exc:          # "cannot cache function 'exp': no locator available ..."
            _give_up(" ".join(str(exc).split())[:200])
    return decorate


__all__ = ["exp", "exp_array", "estimate_rows", "weights_rows", "cache_dir", "FAST_EXP_BOUND", "EXP_FLUSH_BELOW"]

#: Sums (scores, normaliser, weighted values): reassociation (vectorised reductions) and FMA.
SUM_FLAGS = {"reassoc", "contract"}
#: exp: FMA contraction only, never reassociation (it would undo the Cody-Waite reduction).
#: Measured (2 cores, AVX2): 0.79 ulp max against mpmath, 1.3 ns per value; without FMA
#: 1.05 ulp and 2.1 ns (the Horner chain's latency).
EXP_FLAGS = {"contract"}
#: Largest score bound for exp without the shift (float64: e^-512..n e^512 stay normal).
FAST_EXP_BOUND = 512.0
#: exp returns 0 below this (e^x is subnormal there: < 2.3e-308).
EXP_FLUSH_BELOW = -708.39

_INV_LN2 = 1.44269504088896338700e00
_LN2_HI = 6.93147180369123816490e-01   # fdlibm: 32 significant bits, k * _LN2_HI exact for |k| < 2^20
_LN2_LO = 1.90821492927058770002e-10
_ROUND = 6755399441055744.0            # 1.5 * 2^52: x + _ROUND rounds x to an integer in the low bits
_ROUND_BITS = int(np.float64(_ROUND).view(np.int64))
_C = [1.0 / math.factorial(i) for i in range(14)]
_C2, _C3, _C4, _C5, _C6, _C7, _C8, _C9, _C10, _C11, _C12, _C13 = _C[2:]


def cache_dir() -> Path:
    """Where the compiled kernels are stored (see the module docstring)."""
    try:
        return cache.cache_dir("numba")
    except OSError:   # not even a private temporary folder
        return Path(tempfile.gettempdir()) / "mha-nw-verify-unwritable" / "numba"   # the locator then declines


def _install_cache_locator() -> None:
    """Send this module's compiled code to :func:`cache_dir` (other numba users are untouched);
    numba's own choice stands when NUMBA_CACHE_DIR is set or its internals have moved."""
    from numba.core import caching

    # numba >= 0.62 names; older releases had a leading underscore on the first and last
    base = getattr(caching, "UserProvidedCacheLocator", getattr(caching, "_UserProvidedCacheLocator", None))
    mixin = getattr(caching, "_SourceFileBackedLocatorMixin", None)
    impl = getattr(caching, "CacheImpl", getattr(caching, "_CacheImpl", None))
    if base is None or mixin is None or not isinstance(getattr(impl, "_locator_classes", None), list):
        return  # another numba layout: keep its default locators (in-tree __pycache__ or ~/.cache/numba)
    this = os.path.abspath(__file__)

    class _Locator(base):  # type: ignore[misc, valid-type]
        def __init__(self, py_func, py_file):  # noqa: ANN001 - numba's signature
            self._py_file = py_file
            self._lineno = py_func.__code__.co_firstlineno
            self._cache_path = str(cache_dir() / self.get_suitable_cache_subpath(py_file))

        @classmethod
        def from_function(cls, py_func, py_file):  # noqa: ANN001
            if os.environ.get("NUMBA_CACHE_DIR") or os.path.abspath(py_file) != this:
                return None
            return mixin.from_function.__func__(cls, py_func, py_file)  # None if the folder is not writable

    if not any(getattr(c, "__name__", "") == "_Locator" and c.__module__ == __name__ for c in impl._locator_classes):
        impl._locator_classes.insert(0, _Locator)


_install_cache_locator()


@intrinsic
def _bits(typingctx, x):  # noqa: ANN001 - numba intrinsic
    """The int64 with the bits of the float64 ``x``."""
    def codegen(context, builder, signature, args):  # noqa: ANN001
        return builder.bitcast(args[0], ir.IntType(64))
    return types.int64(types.float64), codegen


@intrinsic
def _from_bits(typingctx, i):  # noqa: ANN001 - numba intrinsic
    """The float64 with the bits of the int64 ``i``."""
    def codegen(context, builder, signature, args):  # noqa: ANN001
        return builder.bitcast(args[0], ir.DoubleType())
    return types.float64(types.int64), codegen


@njit(cache=True, nogil=True, fastmath=EXP_FLAGS)
def exp(x: float) -> float:
    """e^x for x <= 709.78 (module docstring); 0 below EXP_FLUSH_BELOW."""
    t = x * _INV_LN2 + _ROUND
    kf = t - _ROUND                              # k = round(x / ln2), exactly
    k = _bits(t) - _ROUND_BITS                   # the same k as an integer
    r = (x - kf * _LN2_HI) - kf * _LN2_LO        # x - k ln2, |r| <= ln2/2
    p = _C13
    p = p * r + _C12
    p = p * r + _C11
    p = p * r + _C10
    p = p * r + _C9
    p = p * r + _C8
    p = p * r + _C7
    p = p * r + _C6
    p = p * r + _C5
    p = p * r + _C4
    p = p * r + _C3
    p = p * r + _C2
    p = p * r + 1.0
    p = p * r + 1.0                              # e^r
    y = p * _from_bits((k + 1023) << 52)         # e^r 2^k
    return 0.0 if x < EXP_FLUSH_BELOW else y     # NaN x: the comparison is false, y is NaN


@njit(cache=True, nogil=True)
def exp_array(x: np.ndarray, out: np.ndarray) -> None:
    """``out[j] = exp(x[j])`` for 1-D float64 arrays (tests, benchmark floor)."""
    for j in range(x.shape[0]):
        out[j] = exp(x[j])


#: Keys per tile of the estimate kernel: the tile's keys (d_k x 256) and values (p x 256) stay
#: in L1/L2 while every query row of the block uses them. Measured (n = 1024 and 65536, d_k = 8,
#: p = 1 and 8): 256-512 the fastest, 10-25% faster than whole rows (which stream the keys
#: from L2, or memory for large n, once per query row).
TILE = 256


@njit(cache=True, nogil=True, fastmath=SUM_FLAGS)
def _query(q, centre, factor, gauss, qs):
    """``qs = s q`` (softmax) or ``(q - c) / b^2`` (Gaussian); returns ``||qs||^2``."""
    qn2 = 0.0
    for l in range(q.shape[0]):
        x = (q[l] - centre[l]) * factor if gauss else q[l] * factor
        qs[l] = x
        qn2 += x * x
    return qn2


@njit(cache=True, nogil=True, fastmath=SUM_FLAGS)
def _tile_scores(qs, kT, half, gauss, j0, t, s):
    """``s[:t]`` = the scores of keys ``j0 .. j0 + t - 1`` (four key coordinates per pass)."""
    d = kT.shape[0]
    for j in range(t):
        s[j] = 0.0
    l = 0
    while l + 4 <= d:
        a0, a1, a2, a3 = qs[l], qs[l + 1], qs[l + 2], qs[l + 3]
        k0, k1, k2, k3 = kT[l, j0:j0 + t], kT[l + 1, j0:j0 + t], kT[l + 2, j0:j0 + t], kT[l + 3, j0:j0 + t]
        for j in range(t):
            s[j] += (a0 * k0[j] + a1 * k1[j]) + (a2 * k2[j] + a3 * k3[j])
        l += 4
    while l < d:
        a0 = qs[l]
        k0 = kT[l, j0:j0 + t]
        for j in range(t):
            s[j] += a0 * k0[j]
        l += 1
    if gauss:
        h = half[j0:j0 + t]
        for j in range(t):
            s[j] -= h[j]


@njit(cache=True, nogil=True, fastmath=SUM_FLAGS)
def _row_shift(qs, kT, half, gauss, qn2, knorm, half_max, fast_bound, limit, s):
    """The shift of one row: 0 when its scores are bounded by ``fast_bound`` (module docstring),
    else the row maximum (one pass over the scores, in tiles of ``s``); NaN when that maximum
    is beyond ``limit`` or not a number."""
    bound = math.sqrt(qn2) * knorm * (1 + 1e-6) + half_max * (1 + 1e-6)
    if bound <= fast_bound:                       # false also when the bound is NaN or inf
        return 0.0
    n = kT.shape[1]
    T = s.shape[0]
    top = -math.inf
    for j0 in range(0, n, T):
        t = min(T, n - j0)
        _tile_scores(qs, kT, half, gauss, j0, t, s)
        for j in range(t):
            top = max(top, s[j])
    return top if abs(top) <= limit else math.nan


@njit(cache=True, nogil=True, fastmath=SUM_FLAGS)
def estimate_rows(q, kT, vT, ref, centre, half, factor, knorm, half_max, fast_bound, limit, out, qs, acc, s):  # noqa: ANN001
    """NW estimates of the rows ``q`` (G, c, d) against G key sets: ``kT`` (G, d, n) keys
    (Gaussian: centred on ``centre`` (G, d)), ``vT`` (G, p, n) values minus ``ref`` (G, p),
    ``half`` (G, n) Gaussian half-norms / b^2 (shape (G, 0) for softmax); per key set the
    largest key norm ``knorm``, half-norm ``half_max`` and ``fast_bound`` (G,); results in
    ``out`` (G, c, p). Scratch: ``qs`` (c, d + 1) (scaled queries and shifts), ``acc``
    (c, p + 1), ``s`` (TILE,). Returns 0, or 1 on a score beyond ``limit`` or NaN."""
    G, c, d = q.shape
    p, n = vT.shape[1], vT.shape[2]
    T = s.shape[0]
    gauss = half.shape[1] > 0
    for g in range(G):
        kg, vg, hg = kT[g], vT[g], half[g]
        for i in range(c):
            qn2 = _query(q[g, i], centre[g], factor, gauss, qs[i])
            shift = _row_shift(qs[i], kg, hg, gauss, qn2, knorm[g], half_max[g], fast_bound[g], limit, s)
            if not (abs(shift) <= limit):
                return 1
            qs[i, d] = shift
            for cc in range(p + 1):
                acc[i, cc] = 0.0
        for j0 in range(0, n, T):                 # each tile of keys serves every row of the block
            t = min(T, n - j0)
            for i in range(c):
                _tile_scores(qs[i], kg, hg, gauss, j0, t, s)
                shift = qs[i, d]
                den = 0.0
                for j in range(t):
                    e = exp(s[j] - shift)         # e_ij, in (0, 1] after the shift
                    s[j] = e
                    den += e
                acc[i, p] += den
                cc = 0
                while cc + 4 <= p:
                    v0, v1 = vg[cc, j0:j0 + t], vg[cc + 1, j0:j0 + t]
                    v2, v3 = vg[cc + 2, j0:j0 + t], vg[cc + 3, j0:j0 + t]
                    a0 = 0.0
                    a1 = 0.0
                    a2 = 0.0
                    a3 = 0.0
                    for j in range(t):
                        e = s[j]
                        a0 += e * v0[j]
                        a1 += e * v1[j]
                        a2 += e * v2[j]
                        a3 += e * v3[j]
                    acc[i, cc] += a0
                    acc[i, cc + 1] += a1
                    acc[i, cc + 2] += a2
                    acc[i, cc + 3] += a3
                    cc += 4
                while cc < p:
                    v0 = vg[cc, j0:j0 + t]
                    a0 = 0.0
                    for j in range(t):
                        a0 += s[j] * v0[j]
                    acc[i, cc] += a0
                    cc += 1
        for i in range(c):
            den = acc[i, p]
            if not (den > 0.0 and den <= 1.7976931348623157e308):   # a NaN score makes den NaN
                return 1
            for cc in range(p):
                out[g, i, cc] = ref[g, cc] + acc[i, cc] / den      # r + sum e (v - r) / sum e
    return 0


@njit(cache=True, nogil=True, fastmath=SUM_FLAGS)
def weights_rows(q, kT, centre, half, factor, knorm, half_max, fast_bound, limit, out, qs):  # noqa: ANN001
    """NW weights of the rows ``q`` (G, c, d) into ``out`` (G, c, n) (arguments as
    :func:`estimate_rows`; scratch ``qs`` (d,)): each row's scores, exp and normaliser are
    computed in its own output row. Returns 0, or 1 on a score beyond ``limit`` or NaN."""
    G, c, d = q.shape
    n = kT.shape[2]
    gauss = half.shape[1] > 0
    for g in range(G):
        kg, hg = kT[g], half[g]
        for i in range(c):
            row = out[g, i]
            qn2 = _query(q[g, i], centre[g], factor, gauss, qs)
            _tile_scores(qs, kg, hg, gauss, 0, n, row)
            shift = 0.0
            bound = math.sqrt(qn2) * knorm[g] * (1 + 1e-6) + half_max[g] * (1 + 1e-6)
            if not (bound <= fast_bound[g]):
                shift = -math.inf
                for j in range(n):
                    shift = max(shift, row[j])
                if not (abs(shift) <= limit):
                    return 1
            den = 0.0
            for j in range(n):
                e = exp(row[j] - shift)
                row[j] = e
                den += e
            if not (den > 0.0 and den <= 1.7976931348623157e308):   # a NaN score makes den NaN
                return 1
            for j in range(n):
                row[j] = row[j] / den             # a division, as the numpy path: rows sum to 1 within n ulps
    return 0


def _smoke_test() -> None:
    """One compiled call (loaded from the cache after the first run): a compiler or CPU that
    cannot run the kernel ends the import here, not in a claim's check."""
    x = np.array([-1.5, 0.0, 0.5, 3.0])
    out = np.empty_like(x)
    try:
        exp_array(x, out)
    except Exception as exc:  # noqa: BLE001 - any failure of numba's compiler or runtime
        _give_up(f"the first compiled call failed: {type(exc).__name__}: {' '.join(str(exc).split())[:200]}")
    if not np.allclose(out, np.exp(x), rtol=1e-15, atol=0.0):
        _give_up("the compiled exp disagrees with numpy's")


_smoke_test()
