"""Hand-built real NW heads on the torus, for C5 and C6: their MSE with ``α = 1/H`` and ``α`` refit, measured
and in the population.

Whole-circle heads have keys of equal norm: a softmax head is a von Mises smoother of concentration ``κ``
per circle (:mod:`verify.experiments.regimes`). ``SIGNAL``: a target on one direction; ``BLOCK``: a target
over every circle (``H d_k = d``). Replicate r (``SeedSequence([seed, r])``: design, noise, evaluation
points) is shared by every configuration, so differences are paired. ``α`` refit: least squares of y on
the heads' leave-one-out estimates at the design, scored on fresh points against the noiseless f.
Population MSE: with ``f = Σ_b g_b(θ_b)`` head h tends to ``Σ_{b read} P_κ g_b``; refit, ``Var f − cᵀ G⁺ c``
with ``G_hh' = Σ_{b read by both} ⟨P g_b, P g_b⟩``, ``c_h = Σ_{b read} ⟨g_b, P g_b⟩``.
"""

from __future__ import annotations

import functools
import math
from typing import Any

import numpy as np

from proofs.markup import pm
from verify.io import jsonable
from verify.experiments.regimes import (
    QUAD_POINTS,
    circle_heads,
    design_record,
    torus_population_mse,
    variance_of_f,
    von_mises_smooth,
)
from verify.numeric.dgp import TORUS_RADIUS, make_dgp
from verify.numeric.diversity import hdi
from verify.numeric.nw import softmax_exp
from verify.numeric.stats import mean_se, paired, r_squared, z_score

__all__ = ["SIGNAL", "BLOCK", "SIZES", "SIGNAL_PAIR", "ROTATION_HDI", "SHARING_PATH", "head_outputs", "refit_alpha",
           "ensemble_mse", "population_mse", "circle_terms", "signal_pair", "rotation_heads", "rotation_path",
           "sharing_path", "path_summary", "compare", "r2_by_config", "WEIGHTS", "draws"]

#: One direction: sin(2 x_1) on circle 0 of a 7-circle torus, three heads of two circles each, the
#: paper's scale 1/sqrt(d_k) with head columns giving κ = 4 per circle (a bandwidth of about 0.5 rad).
SIGNAL = {"dgp": "single-index", "freq": 2.0, "d": 14, "H": 3, "d_k": 4, "sigma": 0.1, "kappa": 4.0}
#: The pair compared, declared before the run: the shared-signal heads and the orthogonal heads.
SIGNAL_PAIR = {"sharing the signal circle": [[0, 1], [0, 2], [0, 3]],
               "orthogonal, one on the signal": [[0, 1], [2, 3], [4, 5]]}
#: Every direction: the block target on a 4-circle torus, four heads of one circle each (H d_k = d).
BLOCK = {"dgp": "block", "d": 8, "H": 4, "d_k": 2, "sigma": 0.1, "kappa": 4.0}
#: The rotation path's HDI values (head h >= 1 turned from circle 0 towards circle h).
ROTATION_HDI = (0.0, 0.25, 0.5, 0.75, 1.0)
#: The circle-sharing path: the circle each head reads, from one shared circle to four.
SHARING_PATH = ((0, 0, 0, 0), (0, 0, 0, 1), (0, 0, 1, 1), (0, 0, 1, 2), (0, 1, 2, 3))
#: The two weightings: α = 1/H (the model's) and α refit.
WEIGHTS = ("uniform", "refit")
#: (n keys, R design replicates, m evaluation points) by size and regime.
SIZES = {"signal": {"quick": (128, 24, 32), "default": (128, 64, 32), "large": (256, 128, 64)},
         "block": {"quick": (128, 12, 48), "default": (128, 24, 64), "large": (256, 64, 128)}}


def _gain(kappa: float, d_k: int) -> float:
    """Column norm giving concentration κ = s gain² r² per circle at the scale s = 1/sqrt(d_k)."""
    return math.sqrt(kappa * math.sqrt(d_k)) / TORUS_RADIUS


def _softmax(S: np.ndarray) -> np.ndarray:
    S = S - S.max(axis=-1, keepdims=True)
    W = softmax_exp(S)
    return W / W.sum(axis=-1, keepdims=True)


def head_outputs(WQ: np.ndarray, WK: np.ndarray, scale: float, X: np.ndarray, Y: np.ndarray,
                 xe: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Heads ``(..., H, d, d_k)``, designs ``X (..., n, d)`` with values ``Y (..., n, p)``, evaluation
    points ``xe (..., m, d)`` (leading axes broadcast): the leave-one-out estimates at the design
    ``(..., H, n, p)`` (each point's own key removed from its softmax) and the estimates at ``xe``
    ``(..., H, m, p)``."""
    K = X[..., None, :, :] @ WK
    S = scale * (X[..., None, :, :] @ WQ) @ np.swapaxes(K, -1, -2)
    n = S.shape[-1]
    S[..., np.arange(n), np.arange(n)] = -np.inf
    Se = scale * (xe[..., None, :, :] @ WQ) @ np.swapaxes(K, -1, -2)
    Yh = Y[..., None, :, :]
    return _softmax(S) @ Yh, _softmax(Se) @ Yh


def refit_alpha(loo: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Least-squares head weights ``(..., H)``: y ``(..., n)`` on the leave-one-out estimates
    ``(..., H, n)`` (minimum norm where heads coincide)."""
    return (np.linalg.pinv(np.swapaxes(loo, -1, -2)) @ y[..., None])[..., 0]


def draws(dgp: Any, n: int, R: int, m: int, *entropy: int) -> tuple[np.ndarray, ...]:
    """Replicate r: design X (n), noise ε (n), evaluation points (m) from SeedSequence([*entropy, r])."""
    X, eps, xe = [], [], []
    for r in range(R):
        rng = np.random.default_rng(np.random.SeedSequence([*entropy, r]))
        X.append(dgp.sample_x(rng, (n,)))
        eps.append(dgp.sigma * rng.standard_normal(n))
        xe.append(dgp.sample_x(rng, (m,)))
    return np.stack(X), np.stack(eps), np.stack(xe)


def ensemble_mse(dgp: Any, configs: dict[str, tuple[np.ndarray, np.ndarray]], scale: float, *, n: int, R: int,
                 m: int, seed: int) -> dict[str, dict[str, np.ndarray]]:
    """Per configuration (``W_Q``, ``W_K``) and replicate: the MSE against f at the evaluation points
    with ``α = 1/H`` (``uniform``) and refit (``refit``, with its ``alpha``), and with ``α = 1/H`` on
    the noise alone (``noise_only``: the zero target, values ε)."""
    X, eps, xe = draws(dgp, n, R, m, seed)
    y, fe = dgp.f(X) + eps, dgp.f(xe)
    out = {}
    for name, (WQ, WK) in configs.items():
        loo, ev = head_outputs(WQ, WK, scale, X, np.stack([y, eps], axis=-1), xe)
        H = WK.shape[-3]
        alpha = refit_alpha(loo[..., 0], y)
        uniform = ev.mean(axis=-3)
        out[name] = {"uniform": np.mean((uniform[..., 0] - fe) ** 2, axis=-1),
                     "noise_only": np.mean(uniform[..., 1] ** 2, axis=-1),
                     "refit": np.mean((np.einsum("rh,rhm->rm", alpha, ev[..., 0]) - fe) ** 2, axis=-1),
                     "alpha": alpha * H}
    return out


# --------------------------------------------------------------------------- population
def circle_terms(target: str, d: int, freq: float = 2.0) -> list[np.ndarray]:
    """``g_b`` on the quadrature grid for ``f = Σ_b g_b(θ_b)`` (single-index on circle 0, block on every one)."""
    t, r, B = 2 * math.pi * np.arange(QUAD_POINTS) / QUAD_POINTS, TORUS_RADIUS, d // 2
    if target == "single-index":
        return [np.sin(freq * r * np.cos(t))] + [np.zeros(QUAD_POINTS)] * (B - 1)
    return [r * r * np.cos(t) * np.sin(t) / math.sqrt(B)] * B


def population_mse(target: str, d: int, circles: Any, kappa: float, *, refit: bool, freq: float = 2.0) -> float:
    """Population MSE of circle heads (head h reads the circles ``circles[h]``, queries on the same
    ones): ``α = 1/H`` (:func:`verify.experiments.regimes.torus_population_mse`) or, with ``refit``,
    the least-squares α in function space, ``Var f − cᵀ G⁺ c`` (module docstring)."""
    H = len(circles)
    if not refit:
        params = {"freq": freq} if target == "single-index" else {}
        return torus_population_mse(target, d, [[(b, b) for b in c] for c in circles], np.full(H, 1.0 / H), kappa,
                                    **params)
    g = circle_terms(target, d, freq)
    Pg = [von_mises_smooth(gb, kappa) for gb in g]
    G = np.array([[sum(float(np.mean(Pg[b] * Pg[b])) for b in set(a) & set(c)) for c in circles] for a in circles])
    c = np.array([sum(float(np.mean(g[b] * Pg[b])) for b in a) for a in circles])
    return float(sum(np.var(gb) for gb in g) - c @ np.linalg.pinv(G) @ c)


# --------------------------------------------------------------------------- the experiments
def _rows(reps: dict, var_f: float, hdis: dict, pop: dict | None = None) -> list[dict[str, Any]]:
    rows = []
    for name, v in reps.items():
        row = {"config": name, "hdi": hdis[name]}
        for w in WEIGHTS:
            mse, se = mean_se(v[w])
            row[w] = {"mse": mse, "se": se, "r2": r_squared(mse, var_f)}
            if pop is not None and name in pop:
                row[w]["population_mse"] = pop[name][w]
        row["noise_only"] = mean_se(v["noise_only"])[0]
        row["alpha_times_H"] = [float(a) for a in v["alpha"].mean(axis=0)]
        rows.append(row)
    return rows


def _step(reps: dict, a: str, b: str, weights: str) -> dict[str, Any]:
    """The paired difference MSE(b) − MSE(a) with its SE and z."""
    diff, se = paired(reps[a][weights], reps[b][weights])
    return {"from": a, "to": b, "weights": weights, "diff": diff, "se": se, "z": z_score(diff, se)}


def _design(regime: dict, target: str, sizes: dict, heads: str, diagnostic: str) -> dict[str, Any]:
    n, R, m = sizes["n"], sizes["R"], sizes["m"]
    return design_record(
        head_weights=(r"$\alpha = 1/H$ and $\alpha$ refit by least squares of $y$ on the heads' leave-one-out "
                      "estimates at the design, scored on fresh points", "the model's weights beside the weights a "
                      "learner would fit: with fixed weights, heads that see no signal dilute those that do"),
        kernel_scale=(rf"$s = 1/\sqrt{{d_k}}$, head columns giving $\kappa = {regime['kappa']:g}$ per circle",
                      r"a local von Mises smoother, bandwidth about $1/\sqrt{\kappa}$ rad"),
        design_density=(rf"torus, $d = {regime['d']}$ ({regime['d'] // 2} circles of radius $\sqrt{{2}}$)",
                        "whole-circle heads have keys of equal norm: Gaussian NW smoothers that learn the target"),
        target=(target, "the reach of the heads' subspaces is what the claim is about"),
        noise=(rf"$\sigma = {regime['sigma']:g}$ in $y$, the MSE against the noiseless $f$", "low noise, so the "
               "bias the subspaces cause is not drowned"),
        n=(n, "keys per design"), steps=(None, "no training: hand-built heads"),
        convergence=(None, "no iteration"),
        seeds=(f"{R} design replicates of {m} evaluation points, paired across configurations",
               "paired replicates give the SE of every difference"),
        diagnostic=(diagnostic, heads))


def compare(dgp: Any, heads: dict[str, np.ndarray], scale: float, *, n: int, R: int, m: int, seed: int,
            var_f: float) -> dict[str, Any]:
    """Declared configurations (queries = keys ``heads[name]``) with both weightings on the same
    draws: a row each (HDI, MSE ± SE and R² per weighting), the paired gap from the first to the
    last, and R² by configuration and weighting."""
    reps = ensemble_mse(dgp, {k: (W, W) for k, W in heads.items()}, scale, n=n, R=R, m=m, seed=seed)
    rows = _rows(reps, var_f, {k: round(hdi(W), 12) for k, W in heads.items()})
    a, b = list(heads)[0], list(heads)[-1]
    return {"rows": rows, "gap": {w: _step(reps, a, b, w) for w in WEIGHTS}, "var_f": var_f, "r2": r2_by_config(rows)}


def r2_by_config(rows: list[dict]) -> dict[str, float]:
    """R² by configuration and weighting (``"<config>, <weights>"``)."""
    return {f"{r['config']}, {w}": r[w]["r2"] for r in rows for w in WEIGHTS}


def _torus_run(p: dict, sizes: tuple, seed: int, configs: dict, circles: dict) -> tuple[dict, dict]:
    """``configs`` (name -> (W_Q, W_K)) on the torus regime ``p`` at ``sizes`` (n, R, m): the replicates'
    MSEs (:func:`ensemble_mse`) and the record's common part, with the population MSE of ``circles``."""
    (n, R, m), freq = sizes, {"freq": p["freq"]} if "freq" in p else {}
    dgp = make_dgp(p["dgp"], d=p["d"], sigma=p["sigma"], design="torus", **freq)
    reps = ensemble_mse(dgp, configs, 1 / math.sqrt(p["d_k"]), n=n, R=R, m=m, seed=seed)
    var_f = variance_of_f(p["dgp"], p["d"], "torus", **freq)
    pop = {k: {w: population_mse(p["dgp"], p["d"], c, p["kappa"], refit=w == "refit", **freq) for w in WEIGHTS}
           for k, c in circles.items()}
    rows = _rows(reps, var_f, {k: round(hdi(W[1]), 12) for k, W in configs.items()}, pop)
    return reps, {"regime": p, "sizes": {"n": n, "R": R, "m": m}, "seed": seed, "var_f": var_f, "rows": rows}


@functools.lru_cache(maxsize=8)
def signal_pair(size: str, seed: int) -> dict[str, Any]:
    """The single-direction regime: the declared pair (SIGNAL_PAIR) with both weightings, the
    population MSE of each (positive control) and the noise alone (negative control)."""
    g = _gain(SIGNAL["kappa"], SIGNAL["d_k"])
    configs = {name: circle_heads(c, SIGNAL["d"], gain=g) for name, c in SIGNAL_PAIR.items()}
    reps, rec = _torus_run(SIGNAL, SIZES["signal"][size], seed, configs, SIGNAL_PAIR)
    a, b = SIGNAL_PAIR
    noise = paired(reps[a]["noise_only"], reps[b]["noise_only"])
    return jsonable({
        **rec, "gap": {w: _step(reps, a, b, w) for w in WEIGHTS},
        "noise_only": {"diff": noise[0], "se": noise[1], "z": z_score(*noise)},
        "design": _design(SIGNAL, r"$\sin(2 x_1) = \sin(2 \sqrt{2} \cos \theta_1)$ on circle 0", rec["sizes"],
                          "C5 and C6 are statements about the MSE as a function of the subspaces",
                          "the paired MSE difference, orthogonal minus sharing, with each weighting")}, finite=True)


def rotation_heads(h: float, d: int = 8, H: int = 4, gain: float = 1.0) -> np.ndarray:
    """Keys (= queries) of the rotation path at ``HDI = h``: head 0 reads circle 0, head j >= 1 spans
    ``cos t E_0 + sin t E_j`` (E_b: circle b's coordinate pair), with ``cos² t = c``,
    ``HDI = 1 − (c + c²)/2`` (pairs (0, j): ρ = c; pairs (j, j'): ρ = c²)."""
    c = (math.sqrt(1 + 8 * (1 - h)) - 1) / 2
    W = np.zeros((H, d, 2))
    for j in range(H):
        W[j, 0:2] = gain * (1.0 if j == 0 else math.sqrt(c)) * np.eye(2)
        if j:
            W[j, 2 * j:2 * j + 2] = gain * math.sqrt(1 - c) * np.eye(2)
    return W


def _path(size: str, seed: int, heads: dict[str, np.ndarray], circles: dict[str, Any], diagnostic: str) -> dict:
    reps, rec = _torus_run(BLOCK, SIZES["block"][size], seed, {k: (W, W) for k, W in heads.items()}, circles)
    names = list(heads)
    return jsonable({
        **rec, "steps": {w: [_step(reps, a, b, w) for a, b in zip(names, names[1:])] for w in WEIGHTS},
        "to_orthogonal": {w: [_step(reps, a, names[-1], w) for a in names[:-1]] for w in WEIGHTS},
        "noise_only": [_step({k: {"x": v["noise_only"]} for k, v in reps.items()}, a, b, "x")
                       for a, b in zip(names, names[1:])],
        "design": _design(BLOCK, r"the block target $\sum_b x_{2b-1} x_{2b}/2 = \sum_b \sin(2 \theta_b)/2$ over every "
                          "circle", rec["sizes"], "in scope: every head is needed to learn the target", diagnostic)},
        finite=True)


@functools.lru_cache(maxsize=8)
def rotation_path(size: str, seed: int) -> dict[str, Any]:
    """In scope (C5): the MSE along the rotation path at the HDI values ROTATION_HDI."""
    g = _gain(BLOCK["kappa"], BLOCK["d_k"])
    heads = {f"HDI {h:g}": rotation_heads(h, gain=g) for h in ROTATION_HDI}
    ends = {f"HDI {ROTATION_HDI[0]:g}": [[0]] * 4, f"HDI {ROTATION_HDI[-1]:g}": [[0], [1], [2], [3]]}
    return _path(size, seed, heads, ends, "the MSE at each point of the path, paired steps along it")


@functools.lru_cache(maxsize=8)
def sharing_path(size: str, seed: int) -> dict[str, Any]:
    """In scope (C6): the MSE of circle heads sharing fewer circles along SHARING_PATH."""
    g = _gain(BLOCK["kappa"], BLOCK["d_k"])
    circles = {"circles " + "".join(map(str, c)): [[b] for b in c] for c in SHARING_PATH}
    heads = {k: circle_heads(c, BLOCK["d"], gain=g)[1] for k, c in circles.items()}
    return _path(size, seed, heads, circles, "each configuration's MSE against the orthogonal heads', paired")


def path_summary(rows: list[dict], weights: str) -> str:
    """``HDI h: MSE ± SE`` along a path (markup)."""
    return ", ".join(f"{r['hdi']:.2f}: {pm(r[weights]['mse'], r[weights]['se'])}" for r in rows)
