"""C5's computations (functions of plain parameters, returning dicts): the model line on random
head sets, the covariance of real NW heads (the premise), the exact cases outside the model, and
the Gaussian-design pair.

Seeds of the engine runs (so that a replay recomputes the same numbers): batch ``k`` of the
premise uses ``SeedSequence([seed, k]).generate_state(2) = (head seed, engine seed)``.
"""

from __future__ import annotations

import itertools
import math
from fractions import Fraction
from typing import Any

import numpy as np

from verify._validate import fail
from verify.claims.c5.heads import compare
from verify.numeric import formulas
from verify.numeric.dgp import head_projections, make_dgp
from verify.numeric.diversity import hdi, overlap
from verify.numeric.engine import decompose
from verify.numeric.exact import exact_sqrt, projector_overlap
from verify.numeric.stats import mean_se, r_squared, target_variance, z_score

__all__ = ["model_mse", "line_sets", "premise_batches", "corr_at_rho0", "regime_summary", "premise_experiment",
           "exact_config", "restored_weights", "gaussian_pair", "RHO_LEVELS", "REGIME_SCALES", "REGIME_NS",
           "REGIME_SIGMAS", "NOISELESS_SIGMA", "GAUSSIAN", "GAUSSIAN_PAIR"]

#: Pairwise overlaps ρ of the premise's head sets (orthogonal, overlap family, identical).
RHO_LEVELS = (0.0, 0.25, 0.5, 0.75, 1.0)
#: The premise's regime table: the softmax scale as a multiple of 1/sqrt(d_k) (larger = sharper
#: attention = a smaller bandwidth), the sample size and the noise level.
REGIME_SCALES = (0.5, 1.0, 2.0, 4.0)
REGIME_NS = (64, 256)
REGIME_SIGMAS = (0.5, 2.0)
#: The exact path at this noise level gives the MSE without its noise part σ² ||Σ_h α_h w^h||²
#: (then ~1e-300): the designs do not depend on σ, so the same heads and designs are compared.
NOISELESS_SIGMA = 1e-150
#: The Gaussian-design regime: sin(2 x_1), the paper's kernel scale.
GAUSSIAN = {"d": 8, "sigma": 0.5, "H": 3, "d_k": 2}
#: Its pair, declared before the run: the aligned family at ρ = 1 (HDI 0) and ρ = 0 (HDI 1).
GAUSSIAN_PAIR = {"every head on the signal block": 1.0, "each head on its own block": 0.0}


def model_mse(rho: np.ndarray, B: float, V: float) -> float:
    """B² + αᵀCα with α = 1/H, C_hh' = ρ_hh' V, C_hh = V (the covariance model, equal V)."""
    H = rho.shape[0]
    C = V * rho
    np.fill_diagonal(C, V)
    alpha = np.full(H, 1.0 / H)
    return float(B * B + alpha @ C @ alpha)


def line_sets(rng: np.random.Generator, Hs: tuple[int, ...], per_H: int, d: int = 8) -> dict[str, Any]:
    """Random head sets (Haar subspaces and the overlap family): the model MSE by the quadratic form
    against the generated line, its largest rise between sets ordered by HDI (relative to B² + V),
    and the fitted slope against the derived one."""
    worst, worst_rise, hdis, slopes = 0.0, -math.inf, [], {}
    for H in Hs:
        B, V = float(rng.uniform(-1, 1)), float(rng.uniform(0.1, 2.0))
        pts = []
        for j in range(per_H):
            d_k = int(rng.integers(1, d // (H + 1) + 1))
            W = (head_projections("overlap", H, d, d_k, rng=rng, rho=float(rng.uniform())) if j % 2 else
                 head_projections("random", H, d, d_k, rng=rng))
            h, mse = hdi(W), model_mse(overlap(W), B, V)
            worst = max(worst, abs(mse - float(formulas.c5_mse_line(B, V, H, h))) / abs(mse))
            pts.append((h, mse))
        pts.sort()
        worst_rise = max(worst_rise, max(b[1] - a[1] for a, b in zip(pts, pts[1:])) / (B * B + V))
        x, y = np.array(pts).T
        slopes[str(H)] = [round(float(np.polyfit(x, y, 1)[0]), 12), round(float(formulas.c5_slope(V, H)), 12)]
        hdis += list(x)
    return {"sets": len(hdis), "H": list(Hs), "hdi_range": [float(min(hdis)), float(max(hdis))],
            "max_rel_error": worst, "max_relative_increase_along_hdi": float(worst_rise),
            "fitted_vs_derived_slope": slopes}


# --------------------------------------------------------------------------- the premise
def premise_batches(p: dict, rho: float) -> list[dict[str, Any]]:
    """Batch ``k < p["batches"]``: H heads with pairwise overlap ``rho`` (orthogonal, overlap family
    or identical), the engine's exact path with R design replicates; per batch the integrated
    head-output correlation of each pair, the heads' ρ, HDI and the integrated MSE terms."""
    dgp = make_dgp(p["dgp"], d=p["d"], sigma=p["sigma"], design=p["design"])
    kind = "orthogonal" if rho == 0.0 else "identical" if rho == 1.0 else "overlap"
    out = []
    for k in range(p["batches"]):
        head_seed, engine_seed = np.random.SeedSequence([p["seed"], k]).generate_state(2)
        W = head_projections(kind, p["H"], p["d"], p["d_k"], rng=np.random.default_rng(int(head_seed)),
                             rho=rho if kind == "overlap" else None)
        dec = decompose(dgp, W, n=p["n"], R=p["R"], m=p["m"], seed=int(engine_seed), method="exact",
                        kernel="softmax", scale=p.get("scale_factor", 1.0) / math.sqrt(p["d_k"]))
        integ = dec.integrated()
        upper = np.triu_indices(p["H"], 1)
        out.append({"corr": integ["head_corr"][upper], "rho": overlap(W)[upper], "hdi": hdi(W), "mse": integ["mse"],
                    "bias2": integ["bias2"]})
    return out


def corr_at_rho0(batches: list[dict[str, Any]]) -> dict[str, Any]:
    """Correlation of orthogonal heads: mean over batches of the pair mean, SE from the batch spread."""
    vals = np.array([float(np.mean(b["corr"])) for b in batches])
    mean, se = mean_se(vals)
    return {"corr_at_rho0": mean, "se": se, "z": z_score(mean, se), "batch_values": vals.tolist(),
            "max_rho_of_heads": float(max(np.max(b["rho"]) for b in batches))}


def regime_summary(rows: list[dict[str, Any]], violated: Any, excess_min: float) -> dict[str, Any]:
    """The regime table's range of the correlation of orthogonal heads, the cells that violate the
    premise (``violated(corr, se)``) and those below ``excess_min``, the mean by scale factor and
    by n, and whether the correlation falls with sharper attention and with larger n in every cell."""
    corr = [r["corr_at_rho0"] for r in rows]
    cell = {(r["scale_factor"], r["n"], r["sigma"]): r["corr_at_rho0"] for r in rows}
    scales, ns, sigmas = (sorted({k[i] for k in cell}) for i in range(3))
    falls_scale = all(cell[(a, n, s)] > cell[(b, n, s)] for a, b in zip(scales, scales[1:]) for n in ns for s in sigmas)
    falls_n = all(cell[(c, a, s)] > cell[(c, b, s)] for a, b in zip(ns, ns[1:]) for c in scales for s in sigmas)
    return {"min": float(min(corr)), "max": float(max(corr)), "cells": len(rows),
            "violating": int(sum(violated(r["corr_at_rho0"], r["se"]) for r in rows)),
            "below_excess_min": int(sum(c < excess_min for c in corr)),
            "by_scale": {str(c): float(np.mean([cell[k] for k in cell if k[0] == c])) for c in scales},
            "by_n": {str(n): float(np.mean([cell[k] for k in cell if k[1] == n])) for n in ns},
            "falls_with_sharper_attention": bool(falls_scale), "falls_with_larger_n": bool(falls_n)}


def premise_experiment(base: dict, table: dict) -> dict[str, Any]:
    """At the base regime, head sets at each overlap of RHO_LEVELS: the correlation against ρ (fit),
    at ρ = 0, the MSE and, at ρ = 0 and 1, R² (the noise part from the same designs at
    NOISELESS_SIGMA); then the correlation of orthogonal heads over the regime table (``table``:
    batches, R, m per cell)."""
    levels = {rho: premise_batches(base, rho) for rho in RHO_LEVELS}
    xs = np.concatenate([b["rho"] for bs in levels.values() for b in bs])
    ys = np.concatenate([b["corr"] for bs in levels.values() for b in bs])
    slope, intercept = np.polyfit(xs, ys, 1)
    fit_r2 = 1.0 - float(np.sum((ys - (slope * xs + intercept)) ** 2) / np.sum((ys - ys.mean()) ** 2))
    per_level = {}
    for rho, bs in levels.items():
        corr, corr_se = mean_se([np.mean(b["corr"]) for b in bs])
        mse, mse_se = mean_se([b["mse"] for b in bs])
        per_level[str(rho)] = {"corr": corr, "corr_se": corr_se, "hdi": float(np.mean([b["hdi"] for b in bs])),
                               "mse": mse, "mse_se": mse_se, "bias2": float(np.mean([b["bias2"] for b in bs]))}
    dgp = make_dgp(base["dgp"], d=base["d"], sigma=base["sigma"], design=base["design"])
    var_f = target_variance(dgp, method="closed")[0]
    r2 = {}
    for rho in (0.0, 1.0):
        lv = per_level[str(rho)]
        lv["noise_part"] = lv["mse"] - float(np.mean([b["mse"] for b in
                                                      premise_batches({**base, "sigma": NOISELESS_SIGMA}, rho)]))
        r2[f"$\\rho = {rho:g}$"] = r_squared(lv["mse"], var_f, lv["noise_part"])
    rows = []
    for c, n, sigma in itertools.product(REGIME_SCALES, REGIME_NS, REGIME_SIGMAS):
        params = {**base, "scale_factor": c, "n": n, "sigma": sigma, **table}
        rows.append({"scale_factor": c, "n": n, "sigma": sigma, **corr_at_rho0(premise_batches(params, 0.0)),
                     "params": params})
    return {"params": base, "levels": per_level, "slope": float(slope), "intercept": float(intercept),
            "fit_r2": fit_r2, "rho0": corr_at_rho0(levels[0.0]), "rows": rows, "var_f": var_f, "r2": r2}


# --------------------------------------------------------------------------- outside the model, exactly
def exact_config(W_K: list, V: list[Fraction], alpha: list[Fraction]) -> dict[str, Any]:
    """ρ (exact projectors), HDI and MSE − B² = αᵀCα under the covariance model, in rationals."""
    H = len(W_K)
    rho = {(i, j): projector_overlap(W_K[i], W_K[j], "params.configs.W_K") for i in range(H) for j in range(i + 1, H)}
    h = 1 - sum(rho.values(), Fraction(0)) / len(rho)

    def root(q: Fraction) -> Fraction:
        r = exact_sqrt(q)
        if r is None:
            raise fail("params.V", f"a pair product {q}", "variances whose pairwise products are squares of "
                                                           "rationals (exact replay)")
        return r

    mse = sum((alpha[i] ** 2 * V[i] for i in range(H)), Fraction(0))
    mse += 2 * sum((alpha[i] * alpha[j] * r * root(V[i] * V[j]) for (i, j), r in rho.items()), Fraction(0))
    return {"rho": {f"{i + 1}{j + 1}": str(r) for (i, j), r in rho.items()}, "HDI": h, "mse_minus_bias_sq": mse}


def restored_weights(V: list[str]) -> list[str]:
    """α_h ∝ 1/sqrt(V_h) (α_h sqrt(V_h) constant), normalised to Σα = 1, as strings."""
    inv = [1 / exact_sqrt(Fraction(v)) for v in V]
    return [str(x / sum(inv)) for x in inv]


# --------------------------------------------------------------------------- the Gaussian design
def gaussian_pair(p: dict) -> dict[str, Any]:
    """GAUSSIAN_PAIR on the Gaussian design (GAUSSIAN) at the sizes and seed ``p`` (n, R, m, seed), with
    both weightings (:func:`verify.claims.c5.heads.compare`), R² against the closed-form Var f."""
    g = GAUSSIAN
    dgp = make_dgp("single-index", d=g["d"], sigma=g["sigma"], design="normal")
    W = {k: head_projections("aligned", g["H"], g["d"], g["d_k"], rho=r) for k, r in GAUSSIAN_PAIR.items()}
    return {"params": p, **compare(dgp, W, 1 / math.sqrt(g["d_k"]), n=p["n"], R=p["R"], m=p["m"], seed=p["seed"],
                                   var_f=target_variance(dgp, method="closed")[0])}
