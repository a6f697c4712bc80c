"""Head diversity (claims C4 and C6): principal angles, subspace overlap, HDI and its bound.

With ``U_h`` an orthonormal basis of ``Range(W_K^h)`` (d x d_k), the overlap of two heads is
``rho_hh' = ||U_h^T U_h'||_F^2 / d_k`` (the mean cos^2 of their principal angles, in [0, 1]) and the
head diversity index (subspace form) ``HDI = 1 - mean_{h<h'} rho_hh'``.

The paper's literal formula ``1 - 2/(H(H-1)) sum_{h<h'} ||G_hh'||_F^2``, ``G_hh' = (W_K^h)^T W_K^h' /
d_k``, works on the raw weights: with ``W_K^h = U_h R_h`` it equals ``rho_hh'`` for every relative
position of the subspaces only when ``(W_K^h)^T W_K^h = sqrt(d_k) I`` (three or more heads); with
orthonormal columns it is ``1 - d_k * mean rho``, and scaling W by c multiplies the pair sum by c^4.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from verify._validate import as_array, fail, fits_in_memory, full_column_rank, positive_int

__all__ = ["principal_angles", "orthonormal_basis", "overlap", "hdi", "hdi_bound", "haar_overlap_mean", "check_sizes"]

# Angles whose cos^2 is at least this (angles <= pi/4) are taken from their sine, the rest from
# their cosine: each formula is then used where its derivative is bounded (Bjorck-Golub).
_SINE_BRANCH_COS2 = 0.5


def _matrices(name: str, W: Any, ndim: int | None = None, want: str = " (at least one head, row and column)"
              ) -> np.ndarray:
    """A float64 array of ``ndim`` axes (at least two when None) with no empty axis."""
    arr = as_array(name, W, ndim=ndim, min_ndim=2, keep_float32=False)
    if 0 in arr.shape:
        raise fail(name, f"shape {arr.shape}", "no empty axis" + want)
    return arr


def orthonormal_basis(W: Any, name: str = "W") -> np.ndarray:
    """Orthonormal bases ``Q`` (..., d, d_k) of ``Range(W)`` by Householder QR, after a rank check."""
    arr = _matrices(name, W, want="")
    full_column_rank(name, arr)
    q, _ = np.linalg.qr(arr)
    return q


def principal_angles(A: Any, B: Any) -> np.ndarray:
    """Principal angles between ``Range(A)`` and ``Range(B)``, ascending, min(k1, k2) of them: the cosines
    are the singular values of ``Q_A^T Q_B``, the sines those of ``Q_B - Q_A Q_A^T Q_B`` (Knyazev-Argentati
    2002); each angle is taken from the one well conditioned there (arccos loses angles near 0)."""
    A = _matrices("A", A, 2)
    B = _matrices("B", B, 2)
    if A.shape[0] != B.shape[0]:
        raise fail("B", f"shape {B.shape}", f"{A.shape[0]} rows, the ambient dimension of A {A.shape}")
    qa = orthonormal_basis(A, "A")
    qb = orthonormal_basis(B, "B")
    if qa.shape[1] < qb.shape[1]:
        qa, qb = qb, qa
    m = qa.T @ qb
    cos = np.linalg.svd(m, compute_uv=False)  # descending: angles ascending
    sin = np.linalg.svd(qb - qa @ m, compute_uv=False)[::-1]  # ascending, paired with cos
    theta = np.where(
        cos**2 >= _SINE_BRANCH_COS2,
        np.arcsin(np.clip(sin, 0.0, 1.0)),
        np.arccos(np.clip(cos, -1.0, 1.0)),
    )
    return np.sort(theta)


def _pairwise_sq_frob(X: np.ndarray) -> np.ndarray:
    """``S[h, g] = ||X_h^T X_g||_F^2`` for X of shape (H, d, k); one matmul per head."""
    H, d, k = X.shape
    # S, its transpose sum and the callers' pair selections: ~4 (H, H) float64 arrays
    fits_in_memory("W_K", 32 * H * H, f"H = {H} heads: (H, H) overlap matrices of float64")
    flat = X.transpose(1, 0, 2).reshape(d, H * k)  # head-major column blocks
    S = np.empty((H, H))
    for h in range(H):
        block = X[h].T @ flat  # (k, H*k): X_h^T X_g for every g
        S[h] = (block**2).reshape(k, H, k).sum(axis=(0, 2))
    return (S + S.T) / 2  # symmetric in exact arithmetic; remove the rounding asymmetry


def overlap(W_K: Any) -> np.ndarray:
    """``(H, H)`` matrix of ``rho_hh' = ||U_h^T U_h'||_F^2 / d_k`` for ``W_K`` (H, d, d_k), in [0, 1];
    rank-deficient heads raise VerifyError."""
    W = _matrices("W_K", W_K, 3)
    U = orthonormal_basis(W, "W_K")
    return _pairwise_sq_frob(U) / W.shape[2]


def hdi(W_K: Any, form: str = "subspace") -> float:
    """Head diversity index of ``W_K`` (H, d, d_k), H >= 2: ``form="subspace"``, ``1 - mean rho_hh'`` in
    [0, 1], invariant under ``W_K^h -> W_K^h A_h``; ``form="literal"``, the paper's formula on the raw
    weights, scale-dependent and not confined to [0, 1] (module docstring)."""
    if form not in ("subspace", "literal"):
        raise fail("form", repr(form), "'subspace' or 'literal'")
    W = _matrices("W_K", W_K, 3)
    H, _, d_k = W.shape
    if H < 2:
        raise fail("W_K", f"shape {W.shape} ({H} head)", "at least 2 heads: HDI averages over pairs h < h'")
    fits_in_memory("W_K", 32 * H * H, f"H = {H} heads: (H, H) overlap matrices and pair indices")
    upper = np.triu_indices(H, 1)
    if form == "subspace":
        return float(1.0 - overlap(W)[upper].mean())
    # ||G_hh'||_F^2 of W = 2^e W' (W' = W scaled by a power of two: exact) is 2^(4e) times that
    # of W': the sums run on W', in range, and give bitwise the unscaled values wherever those
    # do not overflow or underflow; the mean is then scaled back, refused if beyond float64.
    e = int(np.frexp(np.max(np.abs(W)))[1])
    g_sq = _pairwise_sq_frob(np.ldexp(W, -e)) / d_k**2  # ||G'_hh'||_F^2
    with np.errstate(over="ignore"):
        mean = float(np.ldexp(g_sq[upper].mean(), 4 * e))
    if not np.isfinite(mean):
        raise fail("W_K", f"weights up to {float(np.max(np.abs(W))):.3g} (mean ||G_hh'||_F^2 ~ 2^{4 * e}, "
                   "beyond float64)", "weights whose literal HDI (on the raw scale, ~ |W|^4) fits in float64")
    return float(1.0 - mean)


def hdi_bound(H: int, d_k: int, d: int) -> float:
    """Largest HDI of H subspaces of dimension d_k in R^d (fusion-frame bound, C6): ``||sum_h P_h||_F^2 >=
    (H d_k)^2 / d`` (equality for tight fusion frames) gives ``HDI <= 1 - max(0, (H d_k/d - 1)/(H - 1))``."""
    H, d_k, d = check_sizes(H, d_k, d)
    return 1.0 - max(0.0, (H * d_k - d) / (d * (H - 1)))


def haar_overlap_mean(d_k: int, d: int) -> float:
    """Expected overlap of two independent Haar d_k-subspaces of R^d: ``E[P_V] = (d_k/d) I`` (it commutes
    with every rotation), so ``E rho = tr(P_U E[P_V]) / d_k = d_k / d``."""
    _, d_k, d = check_sizes(2, d_k, d)
    return d_k / d


def check_sizes(H: Any, d_k: Any, d: Any) -> tuple[int, int, int]:
    """``(H, d_k, d)`` validated: H >= 2 heads of dimension 1 <= d_k <= d."""
    H, d_k, d = positive_int("H", H, minimum=2), positive_int("d_k", d_k), positive_int("d", d)
    if d_k > d:
        raise fail("d_k", repr(d_k), f"d_k <= d = {d} (a d_k-dimensional subspace of R^d)")
    return H, d_k, d
