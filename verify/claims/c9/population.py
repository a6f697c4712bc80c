"""C9's positive controls: population (n → ∞) NW-ensemble heads in closed form, and what reference heads
reach at finite n.

For ``X ~ N(0, I_d)`` the softmax weights ``∝ exp(aᵀ x_i)``, ``a = A_h x``, ``A_h = W_K^h (W_Q^h)ᵀ/sqrt(d_k)``,
tilt the design to ``N(a, I)``: head h tends to ``m_h(x) = E f(X + A_h x)``, an exponentially tilted
average. For ``block`` (``f = xᵀ J x``, harmonic in each block) ``m_h = xᵀ A_hᵀ J A_h x`` and, with
``Δ = Σ_h α_h A_hᵀ J A_h − J``, the MSE is ``(tr Δ)² + 2 ‖Δ‖_F²``; for ``sin-block`` (``f = c Σ_b sin x_{2b−1}
sin x_{2b}``) ``m_h = e^{−1} f(A_h x)`` and the MSE is a sum of ``C(p, q) = E cos(p·x) cos(q·x) =
(e^{−‖p−q‖²/2} + e^{−‖p+q‖²/2})/2``. Block heads reach MSE 0 with free α on both targets, with α = 1/H only
on ``block`` (at λ = sqrt(H)).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from verify._validate import as_array, fail, one_of, positive_int
from verify._validate import seed as valid_seed
from verify.claims.c9.forms import diagnostics
from verify.experiments import regimes
from verify.experiments.training import forward
from verify.numeric.dgp import SIN_BLOCK_VAR, make_dgp
from verify.numeric.stats import mean_se, r_squared

TARGETS = ("block", "sin-block")


def _cc(P: np.ndarray, Q: np.ndarray) -> np.ndarray:
    """``C(p, q) = E cos(p·x) cos(q·x)`` for all pairs of rows."""
    dm = np.sum((P[:, None] - Q[None]) ** 2, -1)
    dp = np.sum((P[:, None] + Q[None]) ** 2, -1)
    return (np.exp(-dm / 2) + np.exp(-dp / 2)) / 2


def _one(name: str, A: np.ndarray, alpha: np.ndarray) -> float:
    H, d, _ = A.shape
    B = d // 2
    if name == "block":
        J = np.zeros((d, d))
        for b in range(B):
            J[2 * b, 2 * b + 1] = J[2 * b + 1, 2 * b] = 0.5 / math.sqrt(B)
        S = np.einsum("h,hji,jk,hkl->il", alpha, A, J, A)              # Σ α_h A_hᵀ J A_h
        D = (S + S.T) / 2 - J
        return float(np.trace(D) ** 2 + 2 * np.sum(D * D))
    c = 1.0 / math.sqrt(B * SIN_BLOCK_VAR)                              # sin-block: ¼ Σ ± C over (u ∓ v)
    k = np.concatenate([np.repeat(alpha * math.exp(-1.0) * c, B), np.full(B, -c)])
    u = np.concatenate([A[:, 0::2, :].reshape(H * B, d), np.eye(d)[0::2]])
    v = np.concatenate([A[:, 1::2, :].reshape(H * B, d), np.eye(d)[1::2]])
    p1, p2 = u - v, u + v
    return float(k @ ((_cc(p1, p1) - _cc(p1, p2) - _cc(p2, p1) + _cc(p2, p2)) / 4) @ k)


def population_mse(name: str, WQ: Any, WK: Any, alpha: Any) -> np.ndarray:
    """``E(Σ_h α_h m_h(X) − f(X))²`` for X ~ N(0, I) and a block target, per stack of heads (...,)."""
    name = one_of("name", name, TARGETS)
    WQ = as_array("WQ", WQ, min_ndim=3, keep_float32=False)
    WK = as_array("WK", WK, min_ndim=3, keep_float32=False)
    alpha = as_array("alpha", alpha, min_ndim=1, keep_float32=False)
    if WQ.shape != WK.shape or WQ.shape[-2] % 2:
        raise fail("WK", f"shapes {WQ.shape}, {WK.shape}", "heads (..., H, d, d_k) of one shape with d even")
    if alpha.shape != WQ.shape[:-2]:
        raise fail("alpha", f"shape {alpha.shape}", f"{WQ.shape[:-2]} (one weight per head)")
    A = WK @ np.swapaxes(WQ, -1, -2) / math.sqrt(WQ.shape[-1])
    out = np.empty(A.shape[:-3])
    for idx in np.ndindex(*out.shape):
        out[idx] = _one(name, A[idx], alpha[idx])
    return out


# --------------------------------------------------------------------------- the positive controls
#: Scales searched for the finite-n optimum of a reference family: λ = s·gain² (Gaussian design,
#: the tilt a = λ P x) or the von Mises concentration κ (torus), log-spaced around the population
#: optimum (λ = 1, κ large), where the variance e^{‖a‖²}/n and the smoothing bias trade.
FINITE_SCALES = {"normal": (0.25, 0.35, 0.5, 0.7, 1.0, 1.4, 2.0), "torus": (2.0, 4.0, 8.0, 16.0, 32.0)}


def _golden(fn: Any, lo: float, hi: float, iters: int = 80) -> float:
    """Argmin of a unimodal function on [lo, hi] by golden-section search."""
    g = (math.sqrt(5) - 1) / 2
    a, b = lo, hi
    for _ in range(iters):
        c, e = b - g * (b - a), a + g * (b - a)
        a, b = (a, e) if fn(c) < fn(e) else (c, b)
    return (a + b) / 2


def positive_control(target: str, design: str, *, H: int = 4, d: int = 8, sigma: float = 0.1, n: int = 128,
                     seed: int = 0, replicates: int = 16, m: int = 64) -> dict[str, Any]:
    """A block target's positive control: the population MSE of reference configurations (``configs``:
    block or circle heads, shared keys with orthogonal queries, with free α and with α = 1/H, identical
    heads) and what each family (diverse, shared, identical) reaches at ``n`` keys (``finite_n``): at
    its best scale of :data:`FINITE_SCALES` and (free α) least-squares amplitude, chosen on ``replicates``
    fitting replicates and scored on as many fresh ones (``SeedSequence([seed, 9, 8, r])``, paired over
    the families). On the torus circle heads need α = 1/A_2(κ), ``A_2 = I_2(κ)/I_0(κ)``."""
    design = one_of("design", design, ("normal", "torus"))
    target = one_of("target", target, ("block", "sin-block") if design == "normal" else ("block",))
    n, seed = positive_int("n", n, minimum=2), valid_seed("seed", seed)
    replicates, m = positive_int("replicates", replicates, minimum=2), positive_int("m", m)
    s, vf = 1.0 / math.sqrt(2), regimes.variance_of_f(target, d, design)
    layouts = {"diverse": (range(H), range(H)), "shared": (range(H), [0] * H), "identical": ([0] * H, [0] * H)}
    radius2 = 1.0 if design == "normal" else regimes.TORUS_RADIUS**2

    def fam(keys: str, scale: float) -> tuple[np.ndarray, np.ndarray]:
        qc, kc = layouts[keys]
        return regimes.circle_heads([[b] for b in kc], d, query_circles=[[b] for b in qc],
                                    gain=math.sqrt(scale / (s * radius2)))

    def pop(keys: str, scale: float, a: float) -> float:
        if design == "normal":
            return float(population_mse(target, *fam(keys, scale), np.full(H, a)))
        pairs = [[(q, k)] for q, k in zip(*layouts[keys])]
        return float(regimes.torus_population_mse(target, d, pairs, np.full(H, a), scale))

    if design == "normal":
        amp = 1.0 if target == "block" else math.e              # α λ² = 1 (block), α = e at λ = 1 (sin-block)
        fixed = math.sqrt(H) if target == "block" else _golden(lambda L: pop("diverse", L, 1 / H), 0.05, 4.0)
        specs = (("block heads", "diverse", "free", 1.0, amp),
                 ("shared keys, orthogonal queries", "shared", "free", 1.0, amp),
                 (f"block heads, λ = {fixed:.3g}", "diverse", "fixed", fixed, 1 / H),
                 ("identical heads", "identical", "free", 1.0, amp / H))
    else:
        kappa = 8.0                                              # a local von Mises kernel (bandwidth ≈ 0.35 rad)
        t = 2 * math.pi * np.arange(regimes.QUAD_POINTS) / regimes.QUAD_POINTS
        e = np.exp(kappa * (np.cos(t) - 1))
        A2 = float(np.sum(e * np.cos(2 * t)) / np.sum(e))      # I_2(κ)/I_0(κ) by quadrature
        specs = (("circle heads", "diverse", "free", kappa, 1 / A2),
                 ("shared key circle, orthogonal query circles", "shared", "free", kappa, 1 / A2),
                 ("circle heads", "diverse", "fixed", kappa, 1 / H),
                 ("identical heads", "identical", "free", kappa, 1 / (A2 * H)))
    rows = []
    for name, keys, hw, scale, a in specs:
        pm, W = pop(keys, scale, a), fam(keys, scale)
        dg = diagnostics(W[0][None], W[1][None])
        rows.append({"config": name, "head_weights": hw, "population_mse": pm,
                     "population_r2": r_squared(max(pm, 0.0), vf),
                     **{k: float(dg[k][0]) for k in ("key_hdi", "query_hdi", "form_diversity")}})
    dgp = make_dgp(target, d=d, sigma=sigma, design=design)
    fit, score = (_replicates(dgp, n=n, R=replicates, m=m, seed=seed, offset=o) for o in (0, replicates))
    finite = []
    for keys in ("diverse", "shared", "identical"):
        sums = {sc: forward(*fam(keys, sc), np.ones(H), *fit[:3])["f"].ravel() for sc in FINITE_SCALES[design]}
        F = fit[3].ravel()
        for hw in ("free", "fixed"):
            amps = {sc: float(S @ F / (S @ S)) if hw == "free" else 1.0 / H for sc, S in sums.items()}
            sc = min(sums, key=lambda c: float(np.mean((amps[c] * sums[c] - F) ** 2)))
            mse = np.mean((forward(*fam(keys, sc), np.full(H, amps[sc]), *score[:3])["f"] - score[3]) ** 2, axis=-1)
            r2 = np.asarray(r_squared(mse, vf))
            finite.append({"family": keys, "head_weights": hw, "scale": sc, "amplitude": amps[sc],
                           "r2": mean_se(r2)[0], "se": mean_se(r2)[1], "r2_runs": r2.tolist()})
    ident = next(r for r in rows if r["config"] == "identical heads")
    return {"target": target, "design": design, "var_f": vf, "n": n, "configs": rows, "finite_n": finite,
            "specialisation_pays": bool(rows[0]["population_mse"] < 1e-12 < ident["population_mse"])}


def _replicates(dgp: Any, *, n: int, R: int, m: int, seed: int, offset: int) -> tuple[np.ndarray, ...]:
    """R stacked replicates (queries, keys, noisy values, f at the queries) of
    ``SeedSequence([seed, 9, 8, offset + r])``: keys, their values, then the queries."""
    out: list[list[np.ndarray]] = [[], [], [], []]
    for r in range(R):
        rng = np.random.default_rng(np.random.SeedSequence([seed, 9, 8, offset + r]))
        X = dgp.sample_x(rng, (n,))
        y = dgp.f(X) + dgp.sigma * rng.standard_normal(n)
        xq = dgp.sample_x(rng, (m,))
        for lst, v in zip(out, (xq, X, y, dgp.f(xq))):
            lst.append(v)
    return tuple(np.stack(v) for v in out)
