"""C1's mpmath references of the NW estimators and the conditioning figures of their rounding bounds.

Each writes its estimator out literally, ``Σ_j K(q, k_j) v_j / Σ_j K(q, k_j)`` with no max shift, at
``dps`` digits (default ``MP_DPS`` = 50) from exactly converted inputs: independent of
:mod:`verify.numeric.nw`, whose fast estimates they check (a head with projections: :func:`verify.claims.c2.mp_mha`).
"""

from __future__ import annotations

from typing import Any

import mpmath
import numpy as np

from verify._validate import as_array, fail
from verify.numeric import formulas
from verify.numeric.attention import MP_DPS

__all__ = ["mp_exp_nw", "mp_gaussian_nw", "exp_nw_rows", "abs_score", "gauss_abs_score"]


def _mp(a: np.ndarray) -> list[list[Any]]:
    """float64 matrix -> lists of mpf (exact conversion)."""
    return [[mpmath.mpf(float(x)) for x in row] for row in np.atleast_2d(a)]


def _nw_rows(kernel_rows: list[list[Any]], V: list[list[Any]]) -> list[list[Any]]:
    """``Σ_j K_ij v_j / Σ_j K_ij`` for each row i (mpmath, at the caller's precision)."""
    cols = list(zip(*V))
    return [[mpmath.fdot(K, c) / mpmath.fsum(K) for c in cols] for K in kernel_rows]


def _qkv(q: Any, k: Any, v: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    q, k, v = (as_array(nm, x, ndim=2, keep_float32=False) for nm, x in (("q", q), ("k", k), ("v", v)))
    if k.shape[1] != q.shape[1] or v.shape[0] != k.shape[0]:
        raise fail("q, k, v", f"shapes {q.shape}, {k.shape}, {v.shape}", "(m, d_k), (n, d_k), (n, p)")
    return q, k, v


def exp_nw_rows(q: np.ndarray, k: np.ndarray, v: np.ndarray, s: Any) -> list[list[Any]]:
    """The exponential-kernel NW estimate ``Σ_j exp(s q·k_j) v_j / Σ_j exp(s q·k_j)`` as mpf rows,
    at the caller's precision (``mpmath.workdps``)."""
    Q, K, V = _mp(q), _mp(k), _mp(v)
    return _nw_rows([[mpmath.exp(s * mpmath.fdot(qi, kj)) for kj in K] for qi in Q], V)


def mp_exp_nw(q: Any, k: Any, v: Any, scale: Any = None, dps: int = MP_DPS) -> np.ndarray:
    """The NW estimate with the exponential kernel ``K = exp(scale <q, k>)``, literally (no shift),
    at ``dps`` digits; ``scale`` None means the exact ``1/sqrt(d_k)``. Returns float64 ``(m, p)``."""
    q, k, v = _qkv(q, k, v)
    with mpmath.workdps(dps):
        s = formulas.c1_softmax_scale_mp(q.shape[1]) if scale is None else mpmath.mpmathify(scale)
        return np.array(exp_nw_rows(q, k, v, s), dtype=float)


def mp_gaussian_nw(q: Any, k: Any, v: Any, bandwidth: Any, dps: int = MP_DPS) -> np.ndarray:
    """The Gaussian NW estimate ``K = exp(-|q - k|² / (2 b²))``, literally, at ``dps`` digits."""
    Q, K, V = (_mp(a) for a in _qkv(q, k, v))
    with mpmath.workdps(dps):
        b = mpmath.mpmathify(bandwidth)
        kernel = [[mpmath.exp(-mpmath.fsum((a - c) ** 2 for a, c in zip(qi, kj)) / (2 * b * b)) for kj in K]
                  for qi in Q]
        return np.array(_nw_rows(kernel, V), dtype=float)


def abs_score(q: np.ndarray, k: np.ndarray, scale: float) -> float:
    """``A = max_ij scale Σ_l |q_il| |k_jl|``: the condition of the scores (a bound on |score|)."""
    return float(np.max(scale * (np.abs(q) @ np.abs(k).T)))


def gauss_abs_score(q: np.ndarray, k: np.ndarray, inv_b2: float) -> float:
    """The same for :mod:`verify.numeric.nw`'s Gaussian scores ``((q-c)·(k-c) - |k-c|²/2)/b²``,
    c = the mean key."""
    c = k.mean(axis=0)
    half = 0.5 * np.sum((k - c) ** 2, axis=1)
    return float(np.max(inv_b2 * (np.abs(q - c) @ np.abs(k - c).T + half[None, :])))
