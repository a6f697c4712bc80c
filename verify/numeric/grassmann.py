"""Head subspaces on the Grassmannian: the overlap potential, the model MSE it sets, random
tangent moves with their QR retraction, and a descent that minimises the overlap (C6).

``U`` holds H orthonormal bases, shape ``(H, d, d_k)``. The overlap potential is
``Φ = Σ_{h≠h'} ||U_hᵀU_h'||_F² = d_k Σ_{h≠h'} ρ_hh'``; under the C5 covariance model the MSE is
``B² + V/H + V Φ/(H² d_k)``, the C5 line at ``HDI = 1 − Φ/(d_k H (H−1))``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from verify._validate import as_array, fail, positive_int
from verify.numeric import formulas
from verify.numeric.dgp import haar_frame
from verify.numeric.diversity import check_sizes, hdi, overlap

__all__ = ["check_sizes", "overlap_potential", "model_mse", "tangent_move", "retract", "minimise_overlap", "OverlapRun", "starts",
           "PHI_STOP", "MAX_SWEEPS"]

#: The descent stops when a sweep lowers Φ by less than this (rounding of Φ <= ~20 is ~1e-14).
PHI_STOP = 1e-14
#: A descent gives up after this many sweeps (C6's descents stop after <= 40).
MAX_SWEEPS = 2000


def _heads(U: Any) -> np.ndarray:
    U = as_array("U", U, ndim=3, keep_float32=False)
    if U.shape[0] < 2 or U.shape[2] > U.shape[1] or 0 in U.shape:
        raise fail("U", f"shape {U.shape}", "(H, d, d_k) with H >= 2 and 1 <= d_k <= d")
    return U


def overlap_potential(U: Any) -> float:
    """Φ = Σ_{h≠h'} ||U_hᵀU_h'||_F² = d_k Σ_{h≠h'} ρ_hh' (ρ from :func:`verify.numeric.diversity.overlap`)."""
    U = _heads(U)
    rho = overlap(U)
    return float(U.shape[2] * (rho.sum() - np.trace(rho)))


def model_mse(U: Any, B: float, V: float) -> float:
    """The C5/C6 model MSE of the heads ``U`` (H, d, d_k): the generated C5 line at their HDI,
    ``B² + V − V(H−1)/H · HDI`` = ``B² + V/H + V Φ/(H² d_k)``."""
    U = _heads(U)
    return float(formulas.c5_mse_line(B, V, U.shape[0], hdi(U)))


def tangent_move(U: Any, rng: np.random.Generator) -> np.ndarray:
    """A random tangent direction at ``U``: ``Δ_h = (I − U_hU_hᵀ) G_h`` with G Gaussian, scaled
    so that ``Σ_h ||Δ_h||_F² = 1``. ``U`` must have orthonormal columns."""
    U = _heads(U)
    G = rng.standard_normal(U.shape)
    D = G - U @ (np.swapaxes(U, 1, 2) @ G)
    return D / np.linalg.norm(D)


def retract(U: Any, delta: Any, t: float) -> np.ndarray:
    """The retraction ``qr(U_h + t Δ_h).Q`` of each head (orthonormal columns again)."""
    U = _heads(U)
    delta = as_array("delta", delta, ndim=3, keep_float32=False)
    if delta.shape != U.shape:
        raise fail("delta", f"shape {delta.shape}", f"the shape of U, {U.shape}")
    return np.linalg.qr(U + float(t) * delta)[0]


@dataclass
class OverlapRun:
    """One descent: final bases ``U`` (H, d, d_k), Φ after each sweep (index 0: the start)."""

    U: np.ndarray
    phi: list[float] = field(default_factory=list)

    @property
    def sweeps(self) -> int:
        return len(self.phi) - 1

    def hdi_history(self) -> np.ndarray:
        H, _, d_k = self.U.shape
        return 1.0 - np.asarray(self.phi) / (d_k * H * (H - 1))


def _phi_of_frame(S: np.ndarray, H: int, d_k: int) -> float:
    # Σ_{h,h'} tr(P_hP_h') = ||S||_F², minus the H diagonal terms tr(P_h²) = d_k
    return float(np.sum(S * S) - H * d_k)


def minimise_overlap(H: int, d_k: int, d: int, *, rng: np.random.Generator | int,
                     max_sweeps: int = MAX_SWEEPS, stop: float = PHI_STOP) -> OverlapRun:
    """Minimise Φ over H subspaces of dimension d_k in R^d from a Haar-random start by block-coordinate
    descent: U_h ← the d_k eigenvectors of least eigenvalue of ``Σ_{h'≠h} P_h'`` (the exact minimiser
    over U_h), until a sweep lowers Φ by less than ``stop``."""
    H, d_k, d = check_sizes(H, d_k, d)
    max_sweeps = positive_int("max_sweeps", max_sweeps)
    if isinstance(rng, (int, np.integer)) and not isinstance(rng, bool):
        rng = np.random.default_rng(int(rng))
    if not isinstance(rng, np.random.Generator):
        raise fail("rng", repr(rng), "a numpy Generator or an int seed")
    U = np.stack([haar_frame(rng, d, d_k) for _ in range(H)])
    P = U @ np.swapaxes(U, 1, 2)
    S = P.sum(axis=0)
    run = OverlapRun(U, [_phi_of_frame(S, H, d_k)])
    for _ in range(max_sweeps):
        for h in range(H):
            _, vecs = np.linalg.eigh(S - P[h])
            U[h] = vecs[:, :d_k]
            new = U[h] @ U[h].T
            S, P[h] = S - P[h] + new, new
        run.phi.append(_phi_of_frame(S, H, d_k))
        if run.phi[-2] - run.phi[-1] < stop:
            break
    return run


def starts(seed: int, k: int) -> list[int]:
    """The seeds of ``k`` descents from one seed (``SeedSequence(seed).generate_state(k)``)."""
    return [int(s) for s in np.random.SeedSequence(seed).generate_state(k)]
