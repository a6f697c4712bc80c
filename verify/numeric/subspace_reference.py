"""High-precision references of subspace geometry (mpmath): principal angles between two ranges
and the subspace form of the head diversity index, plus well-conditioned random changes of basis.

The references orthonormalise with an mpmath QR at ``dps`` digits (default 50), so they are exact
for a float64 comparison, tiny angles included (``acos`` of singular values at 50 digits). Written
for claim C4, independent of :mod:`verify.numeric.diversity`, whose float64 figures they check.
"""

from __future__ import annotations

import itertools
from typing import Any

import mpmath
import numpy as np

from verify._validate import as_array, fail
from verify.numeric.dgp import haar_frame

__all__ = ["MP_DPS", "well_conditioned", "mp_principal_angles", "mp_hdi"]

#: Digits of the references: far beyond float64's 16.
MP_DPS = 50


def well_conditioned(rng: np.random.Generator, k: int) -> np.ndarray:
    """A random invertible k x k matrix ``Q_1 diag(e^u) Q_2``, u ~ U[-1, 1]: condition <= e²."""
    return haar_frame(rng, k, k) @ np.diag(np.exp(rng.uniform(-1, 1, k))) @ haar_frame(rng, k, k)


def _mp_basis(W: np.ndarray) -> Any:
    """Orthonormal basis of Range(W) in mpmath (the first k columns of a full QR)."""
    Q, _ = mpmath.qr(mpmath.matrix(W.tolist()))
    return Q[:, : W.shape[1]]


def mp_principal_angles(A: Any, B: Any, dps: int = MP_DPS) -> np.ndarray:
    """Principal angles between Range(A) and Range(B) at ``dps`` digits: ``acos`` of the singular
    values of ``Q_Aᵀ Q_B`` (exact enough at 50 digits even for tiny angles); ascending, float64."""
    A = as_array("A", A, ndim=2, keep_float32=False)
    B = as_array("B", B, ndim=2, keep_float32=False)
    if A.shape[0] != B.shape[0]:
        raise fail("B", f"shape {B.shape}", f"{A.shape[0]} rows (the ambient dimension of A)")
    with mpmath.workdps(dps):
        M = _mp_basis(A).T * _mp_basis(B)
        sv = mpmath.svd_r(M, compute_uv=False)
        return np.sort([float(mpmath.acos(min(s, mpmath.mpf(1)))) for s in sv])


def mp_hdi(W_K: Any, dps: int = MP_DPS) -> float:
    """Subspace HDI ``1 − mean_{h<h'} ||U_hᵀU_h'||_F² / d_k`` with U_h from an mpmath QR."""
    W = as_array("W_K", W_K, ndim=3, keep_float32=False)
    H, _, d_k = W.shape
    with mpmath.workdps(dps):
        U = [_mp_basis(w) for w in W]
        rho = [mpmath.fsum(x ** 2 for x in (U[a].T * U[b])) / d_k for a, b in itertools.combinations(range(H), 2)]
        return float(1 - mpmath.fsum(rho) / len(rho))
