"""C7's plots: the candidate models' MSE over the divisor pairs of D, and the measured MSE of real NW
ensembles against d_k per n (each PNG with its numbers beside it, :func:`verify.outputs.plots.save`)."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import mpmath

from proofs.c7_scaling import model_name
from verify.experiments.allocate import MODELS, STANDARD_MODELS, continuous_optimum, divisor_pairs
from verify.outputs import plots

#: The model plot's case, and its scale: log10(MSE / best) up to PLOT_MAX_LOG10 (beyond: off the scale).
PLOT_CASE = {"D": 720, "d": 16, "n": 1e6, "c_b": 1.0, "c_v": 1.0}
PLOT_MAX_LOG10 = 6.0


def models_plot(path: Path) -> str:
    """log10(MSE / best pair's) against H over the divisor pairs of PLOT_CASE per model that applies,
    with a star at the derived continuous optimum H* = D/d_k*."""
    p = PLOT_CASE
    pairs = divisor_pairs(p["D"])
    fig, ax = plots.new_figure(f"C7: MSE against the number of heads at a fixed budget $D = {p['D']}$ ($d = {p['d']}$, "
                               f"$n = 10^{{{round(math.log10(p['n']))}}}$)\nstar: the derived optimum $H^* = D/d_k^*$; "
                               r"models of orthogonal heads need $D \le d$: not shown",
                               r"heads $H$ (divisor pairs $H d_k = D$)", r"$\log_{10}$ of MSE over the best pair's",
                               size=(7.2, 4.6))
    for i, model in enumerate(m for m in STANDARD_MODELS if MODELS[m].applies(p["D"], p["d"])[0]):
        f, args = MODELS[model].mse_mp, (p["n"], p["D"], p["d"], p["c_b"], p["c_v"])
        with mpmath.workdps(30):
            vals = [f(k, *args) for _, k in pairs]
            best = min(vals)
            ratio = [float(mpmath.log10(v / best)) for v in vals]
            x = continuous_optimum(model, p["n"], p["D"], p["d"])
            star = float(mpmath.log10(f(x, *args) / best)) if 1 <= x <= p["D"] else None
        keep = [j for j, r in enumerate(ratio) if r <= PLOT_MAX_LOG10]
        ax.plot([pairs[j][0] for j in keep], [ratio[j] for j in keep], "o-", ms=3, color=f"C{i}",
                label=plots.label(model_name(model) + ("" if star is not None else
                                                       f" ($d_k^* = {float(x):.2g} < 1$: the boundary)")))
        if star is not None:
            ax.plot([p["D"] / float(x)], [star], "*", ms=12, color=f"C{i}", mec="k")
    ax.set_xscale("log")
    ax.set_ylim(-0.3, PLOT_MAX_LOG10)
    ax.legend(fontsize=7)
    return plots.save(fig, path, caption=(
        r"Each candidate model's MSE over the ways to split the budget $D = H d_k$: the derived optimum (star) and "
        r"how it moves with $n$ decide whether $d_k^*$ grows like $(\log n)^{2/(4+d)}$"))


def optimum_plot(path: Path, rec: dict[str, Any], title: str) -> str:
    """The measured MSE (mean over the draws) against d_k, one line per n, with d_k*, the bootstrap
    probability of it and the R² of the best in the labels; dashed: Var f (R² = 0)."""
    fig, ax = plots.new_figure(f"C7: {title}, $D = {rec['D']}$\ndashed: $\\mathrm{{Var}}\\, f = {rec['var_f']:.3f}$ "
                               "($R^2 = 0$)", "head size $d_k$ ($H = D/d_k$)", "integrated MSE (mean over the draws)",
                               size=(8.4, 4.2))
    for i, (n, row, k, pr, r) in enumerate(zip(rec["n"], rec["mse"], rec["best_d_k"], rec["argmin_prob"],
                                               rec["best_r2"])):
        ax.plot(rec["d_k"], row, "osD^vP*X"[i % 8] + "-", color=f"C{i % 10}",
                label=plots.label(f"$n = {n}$: $d_k^* = {k}$ (bootstrap probability ${pr:.2f}$), $R^2 = {r:.2f}$"))
    ax.axhline(rec["var_f"], color="gray", ls="--", lw=0.8)
    ax.set_xscale("log", base=2)
    ax.set_xticks(rec["d_k"], [str(k) for k in rec["d_k"]])
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.02, 1.0), borderaxespad=0.0)
    return plots.save(fig, path, caption=(
        f"The measured MSE of real NW ensembles ({title}) against the head size at a fixed budget, one line per $n$, "
        "with the optimum, its bootstrap probability and the best configuration's $R^2$"))
