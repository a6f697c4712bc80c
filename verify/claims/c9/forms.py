"""Diversity of trained heads beyond the key HDI (claim C9): queries, score forms, Haar baselines.

A head's scores are ``xᵀ M_h x_i / sqrt(d_k)`` with the *score form* ``M_h = W_Q^h (W_K^h)ᵀ``: two heads
score alike iff their forms agree, whatever their key subspaces (shared keys with orthogonal queries
have key HDI 0 and orthogonal forms). So C9 reads three diagnostics, each 0 for identical and 1 for
orthogonal heads: the key HDI (the paper's, C4) and the query HDI; the score-form diversity
``1 − mean_{h<h'} cos²(M_h, M_h')``, the forms as vectors of R^{d×d}; and, reported beside, the
form-subspace HDI ``1 − mean ρ(W_Q^h, W_Q^h') ρ(W_K^h, W_K^h')`` (the overlap of the subspaces
``Range(W_Q^h) ⊗ Range(W_K^h)`` in which the forms live).

For independent Haar frames U, V per head (``M = U Vᵀ``) ``E cos²(M, M') = 1/d²``, so the score-form
diversity of Haar heads has mean ``1 − 1/d²`` and the form-subspace HDI ``1 − (d_k/d)²``; their SDs
are drawn (:func:`haar_baselines`). H unit vectors of R^{d²} have ``mean cos² ≥ (H/d² − 1)/(H − 1)``
(Welch): the score-form diversity is at most 1 for H ≤ d² and ``1 − (H/d² − 1)/(H − 1)`` beyond.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from verify._validate import as_array, fail, positive_int
from verify.numeric.baseline import haar_hdi_moments, hdi_from_overlaps, overlaps
from verify.numeric.diversity import hdi_bound

#: The most Haar draws one baseline call makes (draws · H · d · d_k each for U and V): ~1 s.
MAX_FORM_DRAWS = 200_000


def _pair(WQ: Any, WK: Any) -> tuple[np.ndarray, np.ndarray]:
    WQ = as_array("WQ", WQ, min_ndim=3, keep_float32=False)
    WK = as_array("WK", WK, min_ndim=3, keep_float32=False)
    if WQ.shape != WK.shape:
        raise fail("WK", f"shape {WK.shape}", f"the shape of WQ, {WQ.shape}")
    if WQ.shape[-3] < 2:
        raise fail("WQ", f"shape {WQ.shape}", "heads (..., H, d, d_k) with H >= 2")
    return WQ, WK


def score_forms(WQ: Any, WK: Any) -> np.ndarray:
    """``M_h = W_Q^h (W_K^h)ᵀ``: (..., H, d, d) from heads (..., H, d, d_k)."""
    WQ, WK = _pair(WQ, WK)
    return WQ @ np.swapaxes(WK, -1, -2)


def form_cos2(WQ: Any, WK: Any) -> np.ndarray:
    """``cos²(M_h, M_h')`` (..., H, H) of the score forms as vectors of R^{d×d}."""
    M = score_forms(WQ, WK)
    flat = M.reshape(*M.shape[:-2], -1)                            # (..., H, d²)
    norm2 = np.einsum("...hi,...hi->...h", flat, flat)
    if np.any(norm2 <= 0):
        raise fail("WQ, WK", "a head whose score form is 0", "non-zero score forms W_Q W_Kᵀ")
    G = flat @ np.swapaxes(flat, -1, -2)                            # <M_h, M_h'>_F
    return G * G / (norm2[..., :, None] * norm2[..., None, :])


def form_diversity(WQ: Any, WK: Any) -> np.ndarray:
    """``1 − mean_{h<h'} cos²(M_h, M_h')`` per stack of heads."""
    return hdi_from_overlaps(form_cos2(WQ, WK))


def form_bound(H: int, d: int) -> float:
    """Largest score-form diversity of H heads in R^{d×d}: 1 for H ≤ d², else Welch's bound."""
    N = positive_int("d", d) ** 2
    H = positive_int("H", H, minimum=2)
    return 1.0 if H <= N else 1.0 - (H / N - 1.0) / (H - 1.0)


def haar_baselines(H: int, d_k: int, d: int, *, seed: int, draws: int = 4000) -> dict[str, dict[str, float]]:
    """Per diagnostic: the mean and SD of Haar heads (keys and queries: closed forms of
    :func:`verify.numeric.baseline.haar_hdi_moments`; forms: the closed-form means of the module
    docstring, SDs from ``draws`` draws of independent Haar frames U_h, V_h per head from
    ``SeedSequence(seed)``) and the largest value possible (the bound)."""
    H, d_k, d = positive_int("H", H, minimum=2), positive_int("d_k", d_k), positive_int("d", d, minimum=2)
    draws = positive_int("draws", draws, minimum=2)
    if d_k > d or draws > MAX_FORM_DRAWS:
        raise fail("d_k, draws", f"{d_k}, {draws}", f"d_k <= d = {d} and at most {MAX_FORM_DRAWS} draws")
    rng = np.random.default_rng(np.random.SeedSequence(int(seed)))
    q, r = np.linalg.qr(rng.standard_normal((2, draws, H, d, d_k)))
    U, V = q * np.where(np.diagonal(r, axis1=-2, axis2=-1) < 0, -1.0, 1.0)[..., None, :]
    dr = diagnostics(U, V)
    mu, sd = haar_hdi_moments(H, d_k, d)
    b = hdi_bound(H, d_k, d)
    return {**{k: {"haar_mean": mu, "haar_sd": sd, "bound": b} for k in ("key_hdi", "query_hdi")},
            **{k: {"haar_mean": mean, "haar_sd": float(dr[k].std(ddof=1)), "haar_mean_drawn": float(dr[k].mean()),
                   "bound": bound}
               for k, mean, bound in (("form_diversity", 1.0 - 1.0 / d**2, form_bound(H, d)),
                                      ("form_subspace_hdi", 1.0 - (d_k / d) ** 2, 1.0))}}


DIAGNOSTICS = ("key_hdi", "query_hdi", "form_diversity", "form_subspace_hdi")


def diagnostics(WQ: Any, WK: Any) -> dict[str, np.ndarray]:
    """The four diversity diagnostics of each stack of heads (..., H, d, d_k)."""
    WQ, WK = _pair(WQ, WK)
    rq, rk = overlaps(WQ), overlaps(WK)
    return {"key_hdi": hdi_from_overlaps(rk), "query_hdi": hdi_from_overlaps(rq),
            "form_diversity": form_diversity(WQ, WK), "form_subspace_hdi": hdi_from_overlaps(rq * rk)}
