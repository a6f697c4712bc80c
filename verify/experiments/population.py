"""Population (n → ∞) NW-ensemble heads on the Gaussian design, in closed form (claim C9).

For ``X ~ N(0, I_d)`` the softmax weights ``∝ exp(aᵀ x_i)`` with ``a = s W_K W_Qᵀ x``
(``s = 1/sqrt(d_k)``) tilt the design: ``E[g(X) e^{aᵀX}] / E[e^{aᵀX}] = E g(X + a)`` (the tilted
Gaussian is ``N(a, I)``). So as n → ∞ head h at x tends to ``m_h(x) = E f(X + a_h(x))``, the
target smoothed by the unit Gaussian and read at the linear map ``a_h(x) = A_h x``,
``A_h = s W_K^h (W_Q^h)ᵀ``: a head is an exponentially tilted average, not a local smoother.
The ensemble's population MSE ``E(Σ_h α_h m_h(X) − f(X))²`` (the bias part; its finite-n excess is
variance) has closed forms for every target of :mod:`verify.numeric.dgp` (Gaussian design):

- ``block`` ``f = xᵀ J x`` (J symmetric: ``c/2`` at each pair (2b−1, 2b), ``c = 1/sqrt(B)``):
  ``m_h = f(A_h x) = xᵀ A_hᵀ J A_h x`` (f is harmonic in each block, so smoothing leaves it), and with
  ``Δ = Σ_h α_h A_hᵀ J A_h − J``: ``MSE = (tr Δ)² + 2 ‖Δ‖_F²`` (``E (xᵀΔx)²`` for Gaussian x). Block
  heads ``A_h = λ P_b`` (projection on block b) give ``m_h = λ² f_b``: with ``α_h λ² = 1`` the MSE is
  0, reachable with free α at any λ and with α = 1/H at ``λ = sqrt(H)``; shared keys with
  orthogonal queries (``A_h = λ E_{b0} P_b``-type maps into one block) reach 0 too.
- ``sin-block`` ``f = c Σ_b sin x_{2b−1} sin x_{2b}``: ``m_h = e^{−1} f(A_h x)``
  (``E sin(Z + a) = e^{−1/2} sin a``); the MSE is a sum over pairs of sine products,
  ``E sin(u·x) sin(v·x) sin(u'·x) sin(v'·x) = ¼ Σ ± C(u ∓ v, u' ∓ v')``,
  ``C(p, q) = E cos(p·x) cos(q·x) = (e^{−‖p−q‖²/2} + e^{−‖p+q‖²/2})/2``. Block heads need
  ``α_h = e`` (free α) for MSE 0: with α = 1/H no scale reaches it (a head's output is bounded).
- ``single-index`` ``sin(ω x_1)``: ``m_h = e^{−ω²/2} sin(ω (A_h x)_1)``; ``additive``:
  ``m_h = e^{−1/2} Σ_j sin((A_h x)_j)/sqrt(d)`` (two-sine products ``E sin(u·x) sin(v·x) =
  (e^{−‖u−v‖²/2} − e^{−‖u+v‖²/2})/2``); ``linear``: ``m_h = (A_h x)_1``; ``bump`` (width w):
  ``m_h = (w²/(1+w²))^{d/2} exp(−‖A_h x‖²/(2(1+w²)))`` and ``E exp(−xᵀPx/2) = det(I+P)^{−1/2}``;
  ``zero``: 0.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from verify._validate import as_array, fail, one_of
from verify.numeric.dgp import SIN_BLOCK_VAR, make_dgp

__all__ = ["tilt_maps", "population_heads", "population_mse", "TARGETS"]

TARGETS = ("block", "sin-block", "single-index", "additive", "linear", "bump", "zero")


def _heads(WQ: Any, WK: Any, alpha: Any = None) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    WQ = as_array("WQ", WQ, min_ndim=3, keep_float32=False)
    WK = as_array("WK", WK, min_ndim=3, keep_float32=False)
    if WQ.shape != WK.shape:
        raise fail("WK", f"shape {WK.shape}", f"the shape of WQ, {WQ.shape}")
    if alpha is not None:
        alpha = as_array("alpha", alpha, min_ndim=1, keep_float32=False)
        if alpha.shape != WQ.shape[:-2]:
            raise fail("alpha", f"shape {alpha.shape}", f"{WQ.shape[:-2]} (one weight per head)")
    return WQ, WK, alpha


def tilt_maps(WQ: Any, WK: Any, scale: float | None = None) -> np.ndarray:
    """``A_h = s W_K^h (W_Q^h)ᵀ`` (..., H, d, d): the tilt ``a_h(x) = A_h x`` (s = 1/sqrt(d_k) by default)."""
    WQ, WK, _ = _heads(WQ, WK)
    s = 1.0 / math.sqrt(WQ.shape[-1]) if scale is None else float(scale)
    return s * WK @ np.swapaxes(WQ, -1, -2)


def _target(name: Any, d: int, params: dict) -> tuple[str, dict]:
    name = one_of("name", name, TARGETS)
    make_dgp(name, d=d, sigma=1.0, **params)           # validates d (even for blocks) and the parameters
    return name, {k: float(v) for k, v in params.items()}


def population_heads(name: str, WQ: Any, WK: Any, x: Any, **params: Any) -> np.ndarray:
    """``m_h(x) = E f(X + A_h x)`` (..., H, m) at points x (..., m, d), Gaussian design (module docstring)."""
    WQ, WK, _ = _heads(WQ, WK)
    x = as_array("x", x, min_ndim=2, keep_float32=False)
    d = WQ.shape[-2]
    if x.shape[-1] != d:
        raise fail("x", f"shape {x.shape}", f"points (..., m, {d})")
    name, p = _target(name, d, params)
    a = x[..., None, :, :] @ np.swapaxes(tilt_maps(WQ, WK), -1, -2)     # (..., H, m, d): rows A_h x
    if name == "block":
        return np.sum(a[..., 0::2] * a[..., 1::2], axis=-1) / math.sqrt(d // 2)
    if name == "sin-block":
        f = make_dgp("sin-block", d=d, sigma=1.0)
        return math.exp(-1.0) * f.f(a)
    if name == "single-index":
        w = p.get("freq", 2.0)
        return math.exp(-w * w / 2) * np.sin(w * a[..., 0])
    if name == "additive":
        return math.exp(-0.5) * np.sin(a).sum(axis=-1) / math.sqrt(d)
    if name == "linear":
        return a[..., 0].copy()
    if name == "bump":
        w2 = p.get("width", 1.0) ** 2
        return (w2 / (1 + w2)) ** (d / 2) * np.exp(-np.sum(a * a, axis=-1) / (2 * (1 + w2)))
    return np.zeros(a.shape[:-1])


def _sin2(U: np.ndarray, V: np.ndarray) -> np.ndarray:
    """``E sin(u·x) sin(v·x)`` for all pairs of rows u of U (p, d), v of V (q, d)."""
    dm = np.sum((U[:, None] - V[None]) ** 2, -1)
    dp = np.sum((U[:, None] + V[None]) ** 2, -1)
    return (np.exp(-dm / 2) - np.exp(-dp / 2)) / 2


def _cc(P: np.ndarray, Q: np.ndarray) -> np.ndarray:
    """``C(p, q) = E cos(p·x) cos(q·x)`` for all pairs of rows."""
    dm = np.sum((P[:, None] - Q[None]) ** 2, -1)
    dp = np.sum((P[:, None] + Q[None]) ** 2, -1)
    return (np.exp(-dm / 2) + np.exp(-dp / 2)) / 2


def _sin4(k: np.ndarray, u: np.ndarray, v: np.ndarray) -> float:
    """``E (Σ_t k_t sin(u_t·x) sin(v_t·x))²``: ¼ Σ ± C over the differences and sums of (u_t, v_t)."""
    p1, p2 = u - v, u + v
    E = (_cc(p1, p1) - _cc(p1, p2) - _cc(p2, p1) + _cc(p2, p2)) / 4
    return float(k @ E @ k)


def _one(name: str, p: dict, A: np.ndarray, alpha: np.ndarray) -> float:
    H, d, _ = A.shape
    if name == "zero":
        return 0.0
    if name == "block":
        B = d // 2
        J = np.zeros((d, d))
        for b in range(B):
            J[2 * b, 2 * b + 1] = J[2 * b + 1, 2 * b] = 0.5 / math.sqrt(B)
        S = np.einsum("h,hji,jk,hkl->il", alpha, A, J, A)              # Σ α_h A_hᵀ J A_h
        D = (S + S.T) / 2 - J
        return float(np.trace(D) ** 2 + 2 * np.sum(D * D))
    if name == "sin-block":
        B = d // 2
        c = 1.0 / math.sqrt(B * SIN_BLOCK_VAR)
        k = np.concatenate([np.repeat(alpha * math.exp(-1.0) * c, B), np.full(B, -c)])
        u = np.concatenate([A[:, 0::2, :].reshape(H * B, d), np.eye(d)[0::2]])
        v = np.concatenate([A[:, 1::2, :].reshape(H * B, d), np.eye(d)[1::2]])
        return _sin4(k, u, v)
    if name in ("single-index", "additive"):
        if name == "single-index":
            w = p.get("freq", 2.0)
            k = np.concatenate([alpha * math.exp(-w * w / 2), [-1.0]])
            U = np.concatenate([w * A[:, 0, :], w * np.eye(d)[:1]])
        else:
            k = np.concatenate([np.repeat(alpha * math.exp(-0.5), d), -np.ones(d)]) / math.sqrt(d)
            U = np.concatenate([A.reshape(H * d, d), np.eye(d)])
        return float(k @ _sin2(U, U) @ k)
    if name == "linear":
        r = np.einsum("h,hj->j", alpha, A[:, 0, :]) - np.eye(d)[0]
        return float(r @ r)
    w2 = p.get("width", 1.0) ** 2                                         # bump
    k = np.concatenate([alpha * (w2 / (1 + w2)) ** (d / 2), [-1.0]])
    P = np.concatenate([np.swapaxes(A, -1, -2) @ A / (1 + w2), np.eye(d)[None] / w2])
    T = len(k)
    E = np.empty((T, T))
    for i in range(T):
        for j in range(T):
            E[i, j] = np.linalg.det(np.eye(d) + P[i] + P[j]) ** -0.5
    return float(k @ E @ k)


def population_mse(name: str, WQ: Any, WK: Any, alpha: Any, **params: Any) -> np.ndarray:
    """``E(Σ_h α_h m_h(X) − f(X))²`` for X ~ N(0, I), per stack of heads (...,), in closed form."""
    WQ, WK, alpha = _heads(WQ, WK, alpha)
    if alpha is None:
        raise fail("alpha", "None", "one weight per head")
    name, p = _target(name, WQ.shape[-2], params)
    A = tilt_maps(WQ, WK)
    lead = A.shape[:-3]
    out = np.empty(lead)
    for idx in np.ndindex(*lead):
        out[idx] = _one(name, p, A[idx], alpha[idx])
    return out
