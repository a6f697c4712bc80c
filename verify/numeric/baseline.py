"""Haar-random baselines and input-weighted head diversity (claim C9): pure array functions.

Overlap of two d_k-subspaces, ``rho = ||U_hᵀ U_h'||_F² / d_k`` (SPEC), for stacks of heads ``W`` of
shape ``(..., H, d, d_k)``; HDI ``= 1 − mean_{h<h'} rho_hh'``. *Weighted* overlap: the inner product
``<u, v>_Σ = uᵀ Σ v`` with Σ the covariance of the layer's inputs; with ``Σ = FᵀF`` its principal
angles are the Euclidean ones between ``Range(F W_h)`` and ``Range(F W_h')``, whose squared cosines
are the squared canonical correlations of the heads' features ``W_hᵀ x``.

Baselines: independent Haar subspaces (ranges of Gaussian ``d × d_k`` matrices). Their overlap has
mean ``d_k/d`` and variance ``2 (d − d_k)² / (d² (d − 1)(d + 2))`` (Weingarten calculus; the
Beta(1/2, (d−1)/2) law of ``cos²`` at d_k = 1), and the overlaps of distinct pairs are uncorrelated,
so the HDI of H Haar heads has mean ``1 − d_k/d`` and variance ``Var rho / (H(H−1)/2)`` (checked by
Monte Carlo in tests/test_training.py). The weighted baseline, Haar frames mapped by ``F``, is drawn.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from verify._validate import RANK_RTOL, as_array, fail, positive_int

__all__ = ["frames", "overlaps", "hdi_from_overlaps", "hdi_batch", "metric_factor", "haar_overlap_var",
           "haar_hdi_moments", "haar_hdi_draws", "layer_norm", "embedding_covariance", "MAX_BASELINE_WORK"]

#: The most multiply-adds one call of :func:`haar_hdi_draws` may cost (draws · H · d² · d_k):
#: ~5 s on one core; a request beyond it (from a file, say) is refused rather than run.
MAX_BASELINE_WORK = 2e10


def _heads(name: str, W: Any) -> np.ndarray:
    arr = as_array(name, W, min_ndim=3, keep_float32=False)
    if 0 in arr.shape:
        raise fail(name, f"shape {arr.shape}", "no empty axis")
    if arr.shape[-2] < arr.shape[-1]:
        raise fail(name, f"shape {arr.shape}", "heads (..., H, d, d_k) with d_k <= d")
    return arr


def frames(W: Any, factor: Any = None, name: str = "W") -> np.ndarray:
    """Orthonormal bases ``(..., H, d, d_k)`` of ``Range(F W_h)`` (``F = factor``, identity if
    None), by Householder QR; a rank-deficient head raises VerifyError (its |diag R| falls
    below :data:`verify._validate.RANK_RTOL` of its largest)."""
    W = _heads(name, W)
    if factor is not None:
        F = as_array("factor", factor, ndim=2, keep_float32=False)
        if F.shape != (W.shape[-2], W.shape[-2]):
            raise fail("factor", f"shape {F.shape}", f"a ({W.shape[-2]}, {W.shape[-2]}) matrix, the heads' d")
        W = F @ W
    q, r = np.linalg.qr(W)
    diag = np.abs(np.diagonal(r, axis1=-2, axis2=-1))
    bad = diag.min(axis=-1) <= RANK_RTOL * np.maximum(diag.max(axis=-1), np.finfo(float).tiny)
    if np.any(bad):
        idx = tuple(int(i) for i in np.argwhere(np.atleast_1d(bad))[0])
        raise fail(name, f"a rank-deficient head at index {idx} (shape {W.shape})", f"full column rank {W.shape[-1]}")
    return q


def overlaps(W: Any, factor: Any = None) -> np.ndarray:
    """``(..., H, H)`` overlaps ``rho_hh' = ||U_hᵀ U_h'||_F² / d_k`` of ``Range(F W_h)`` (weighted when
    ``F = metric_factor(Σ)``), from one Gram matrix of all head bases."""
    U = frames(W, factor)
    *lead, H, d, k = U.shape
    flat = np.swapaxes(U, -3, -2).reshape(*lead, d, H * k)        # head-major column blocks
    gram = np.swapaxes(flat, -1, -2) @ flat                          # (..., Hk, Hk)
    S = (gram**2).reshape(*lead, H, k, H, k).sum(axis=(-3, -1)) / k
    return (S + np.swapaxes(S, -1, -2)) / 2


def hdi_from_overlaps(rho: Any) -> np.ndarray:
    """``1 − mean_{h<h'} rho_hh'`` over the last two axes (H >= 2)."""
    rho = as_array("rho", rho, min_ndim=2, keep_float32=False)
    H = rho.shape[-1]
    if rho.shape[-2] != H or H < 2:
        raise fail("rho", f"shape {rho.shape}", "(..., H, H) overlap matrices with H >= 2")
    iu = np.triu_indices(H, 1)
    return 1.0 - rho[..., iu[0], iu[1]].mean(axis=-1)


def hdi_batch(W: Any, factor: Any = None) -> np.ndarray:
    """Subspace HDI of each stack of heads ``(..., H, d, d_k)``, weighted when ``factor`` is given."""
    return hdi_from_overlaps(overlaps(W, factor))


#: Symmetry of a covariance matrix to this relative tolerance (float64 sums of products).
SYMMETRY_RTOL = 1e-10


def metric_factor(sigma: Any, name: str = "sigma") -> tuple[np.ndarray, np.ndarray]:
    """``(F, scales)`` with ``Fᵀ F = Σ``: ``F = diag(√λ) Vᵀ`` from ``Σ = V diag(λ) Vᵀ``, ``scales = √λ``;
    eigenvalues below rounding (LayerNorm's centring leaves one) become 0."""
    S = as_array(name, sigma, ndim=2, keep_float32=False)
    if S.shape[0] != S.shape[1] or S.shape[0] == 0:
        raise fail(name, f"shape {S.shape}", "a square covariance matrix")
    scale = max(float(np.abs(S).max()), np.finfo(float).tiny)
    if float(np.abs(S - S.T).max()) > SYMMETRY_RTOL * scale:
        raise fail(name, "a non-symmetric matrix", "a symmetric covariance matrix")
    lam, V = np.linalg.eigh((S + S.T) / 2)
    top = float(lam.max())
    if top <= 0 or lam.min() < -1e-10 * top:
        raise fail(name, f"eigenvalues {float(lam.min()):.3g}..{top:.3g}", "a positive semi-definite matrix")
    scales = np.sqrt(np.clip(lam, 0.0, None))
    return scales[:, None] * V.T, scales


def _sizes(H: Any, d_k: Any, d: Any) -> tuple[int, int, int]:
    H, d_k, d = positive_int("H", H, minimum=2), positive_int("d_k", d_k), positive_int("d", d, minimum=2)
    if d_k > d:
        raise fail("d_k", repr(d_k), f"d_k <= d = {d}")
    return H, d_k, d


def haar_overlap_var(d_k: int, d: int) -> float:
    """Variance of the overlap of two independent Haar d_k-subspaces of R^d (module docstring)."""
    _, d_k, d = _sizes(2, d_k, d)
    return 2.0 * (d - d_k) ** 2 / (d * d * (d - 1) * (d + 2))


def haar_hdi_moments(H: int, d_k: int, d: int) -> tuple[float, float]:
    """Mean and standard deviation of the HDI of H independent Haar d_k-subspaces of R^d."""
    H, d_k, d = _sizes(H, d_k, d)
    return 1.0 - d_k / d, math.sqrt(haar_overlap_var(d_k, d) / (H * (H - 1) / 2))


def haar_hdi_draws(rng: np.random.Generator, H: int, d_k: int, d: int, draws: int, scales: Any = None) -> np.ndarray:
    """``draws`` HDIs of H independent Haar subspaces (ranges of Gaussian matrices G); with ``scales = √λ``
    of Σ, of Haar frames mapped by ``F`` (``Range(F G)`` has the law of ``Range(diag(√λ) G)``)."""
    H, d_k, d = _sizes(H, d_k, d)
    draws = positive_int("draws", draws)
    if not isinstance(rng, np.random.Generator):
        raise fail("rng", repr(rng), "a numpy Generator")
    work = float(draws) * H * d * d * d_k
    if work > MAX_BASELINE_WORK:
        raise fail("draws", f"{draws} draws of {H} heads {d} x {d_k} ({work:.1e} multiply-adds)",
                   f"at most {MAX_BASELINE_WORK:.0e} multiply-adds")
    G = rng.standard_normal((draws, H, d, d_k))
    if scales is not None:
        sc = as_array("scales", scales, ndim=1, keep_float32=False)
        if sc.shape != (d,) or np.any(sc < 0):
            raise fail("scales", f"shape {sc.shape}", f"{d} non-negative square roots of eigenvalues")
        G *= sc[:, None]
    return hdi_batch(G)


def layer_norm(x: Any, weight: Any, bias: Any, eps: float) -> np.ndarray:
    """BERT's LayerNorm over the last axis: ``(x − mean) / sqrt(var + eps) · weight + bias``
    (biased variance, as torch.nn.LayerNorm)."""
    x = as_array("x", x, min_ndim=1, keep_float32=False)
    g = as_array("weight", weight, ndim=1, keep_float32=False)
    b = as_array("bias", bias, ndim=1, keep_float32=False)
    if g.shape != (x.shape[-1],) or b.shape != g.shape:
        raise fail("weight, bias", f"shapes {g.shape}, {b.shape}", f"({x.shape[-1]},) each")
    if not (isinstance(eps, (int, float)) and math.isfinite(eps) and eps >= 0):
        raise fail("eps", repr(eps), "a finite number >= 0")
    mu = x.mean(axis=-1, keepdims=True)
    var = ((x - mu) ** 2).mean(axis=-1, keepdims=True)
    return (x - mu) / np.sqrt(var + eps) * g + b


def embedding_covariance(rng: np.random.Generator, word: Any, position: Any, token_type: Any, ln_weight: Any,
                         ln_bias: Any, eps: float, *, samples: int, positions: int) -> np.ndarray:
    """Sample covariance (d, d) of BERT's layer-0 input ``LayerNorm(word[t] + position[p] + token_type)``
    over ``samples`` draws of t uniform over the vocabulary and p over ``0..positions−1``."""
    if not isinstance(rng, np.random.Generator):
        raise fail("rng", repr(rng), "a numpy Generator")
    samples = positive_int("samples", samples, minimum=2)
    positions = positive_int("positions", positions)
    word = as_array("word", word, ndim=2)
    position = as_array("position", position, ndim=2)
    token_type = as_array("token_type", token_type, ndim=1, keep_float32=False)
    d = word.shape[1]
    if position.shape[1] != d or token_type.shape != (d,):
        raise fail("position, token_type", f"shapes {position.shape}, {token_type.shape}", f"width {d}, as word")
    if positions > position.shape[0]:
        raise fail("positions", repr(positions), f"at most the {position.shape[0]} position embeddings")
    tok = rng.integers(0, word.shape[0], samples)
    pos = rng.integers(0, positions, samples)
    x = word[tok].astype(np.float64) + position[pos].astype(np.float64) + token_type
    z = layer_norm(x, ln_weight, ln_bias, eps)
    z -= z.mean(axis=0)
    return (z.T @ z) / (samples - 1)
