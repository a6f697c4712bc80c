"""C5's plots: the premise (the correlation against the overlap and by regime) and the MSE of real heads
against HDI (the rotation path with both weightings, the moves of trained heads). Each returns
``{name: path}``, or ``{}`` when the run writes no files."""

from __future__ import annotations

import itertools
from typing import Any

from verify.claims.c5.experiments import REGIME_NS, REGIME_SIGMAS, RHO_LEVELS
from verify.judgment.claim import Context
from verify.outputs import plots

__all__ = ["corr_vs_overlap", "premise_regimes", "real_heads", "LINE_STYLES"]

#: One (colour, marker) per line of a plot: no two lines look alike.
LINE_STYLES = (("C0", "o"), ("C1", "s"), ("C2", "^"), ("C3", "D"), ("C4", "v"), ("C5", "P"))


def _legend_outside(ax: Any) -> None:
    """The legend to the right of the axes, off the data."""
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.02, 1.0), borderaxespad=0.0)


def corr_vs_overlap(ctx: Context, pr: dict[str, Any]) -> dict[str, str]:
    path = ctx.plot_path("corr_vs_overlap")
    if path is None:
        return {}
    fig, ax = plots.new_figure("C5: head-output correlation against the subspace overlap (real NW heads)",
                               r"subspace overlap $\rho$", "integrated head-output correlation", size=(8.0, 4.0))
    lv = [pr["levels"][str(r)] for r in RHO_LEVELS]
    ax.plot([0, 1], [0, 1], "--", color="gray", label=plots.label(r"premise: correlation $= \rho$"))
    ax.errorbar(list(RHO_LEVELS), [v["corr"] for v in lv], yerr=[2 * v["corr_se"] for v in lv], fmt="o", color="C3",
                capsize=3, label="measured (± 2 SE over batches)")
    ax.plot([0, 1], [pr["intercept"], pr["intercept"] + pr["slope"]], "-", color="C3", alpha=0.5,
            label=plots.label(f"fit ${pr['intercept']:.2f} + {pr['slope']:.2f} \\rho$ ($R^2 = {pr['fit_r2']:.3f}$)"))
    _legend_outside(ax)
    return {"corr_vs_overlap": plots.save(fig, path, caption=(
        r"The correlation of two real NW heads' outputs against their subspace overlap $\rho$: orthogonal heads "
        "($\\rho = 0$) still correlate, because they share the noise of the responses"))}


def premise_regimes(ctx: Context, pr: dict[str, Any]) -> dict[str, str]:
    path = ctx.plot_path("premise_regimes")
    if path is None:
        return {}
    fig, ax = plots.new_figure("C5: correlation of orthogonal NW heads ($\\rho = 0$) by regime\n(the premise: 0 in "
                               "every regime)", r"softmax scale factor $c$ (scale $c/\sqrt{d_k}$; larger: sharper "
                               "attention)", "integrated head-output correlation", size=(7.6, 4.0))
    for (color, marker), (n, sigma) in zip(LINE_STYLES, itertools.product(REGIME_NS, REGIME_SIGMAS)):
        rows = [r for r in pr["rows"] if r["n"] == n and r["sigma"] == sigma]
        ax.errorbar([r["scale_factor"] for r in rows], [r["corr_at_rho0"] for r in rows],
                    yerr=[2 * r["se"] for r in rows], fmt=marker + "-", color=color, capsize=3,
                    label=plots.label(f"$n = {n}$, $\\sigma = {sigma:g}$"))
    ax.axhline(0.0, color="gray", ls=":", label="premise")
    ax.set_xscale("log", base=2)
    _legend_outside(ax)
    return {"premise_regimes": plots.save(fig, path, caption=(
        "The correlation of orthogonal heads in every regime measured (scale, sample size, noise): the premise "
        "predicts 0; it is larger for flatter attention and smaller samples"))}


def real_heads(ctx: Context, path_reg: dict[str, Any], trained_rows: list[dict]) -> dict[str, str]:
    """MSE against HDI in scope: the rotation path (α = 1/H and refit, ± 2 SE) and each move of the
    trained heads (refit, ± 2 SE over training runs); the dashed line is Var f."""
    path = ctx.plot_path("real_heads")
    if path is None:
        return {}
    fig, ax = plots.new_figure("C5: real NW heads in scope (torus, block target), MSE against HDI\n"
                               f"dashed: $\\mathrm{{Var}}\\, f = {path_reg['var_f']:.3f}$ ($R^2 = 0$)", "key HDI",
                               "held-out MSE", size=(8.4, 4.2))
    rows = path_reg["rows"]
    for (color, marker), (w, name) in zip(LINE_STYLES, (("uniform", "α = 1/H"), ("refit", "α refit"))):
        ax.errorbar([r["hdi"] for r in rows], [r[w]["mse"] for r in rows], yerr=[2 * r[w]["se"] for r in rows],
                    fmt=marker + "-", color=color, capsize=3, label=f"rotation path, {name}")
    for (color, marker), r in zip(LINE_STYLES[2:] + LINE_STYLES[:2], trained_rows):
        ax.errorbar([r["hdi"]], [r["refit"]["mse"]], yerr=[2 * r["refit"]["se"]], fmt=marker, mfc="none", ms=9,
                    color=color, capsize=3, label=f"trained heads: {r['config']}, α refit")
    ax.axhline(path_reg["var_f"], color="gray", ls="--", lw=0.8)
    _legend_outside(ax)
    return {"real_heads": plots.save(fig, path, caption=(
        r"The MSE of real NW heads in scope ($H d_k = d$) along a rotation from identical to orthogonal heads, with "
        r"weights $1/H$ and refit; and trained heads moved to other HDI: the MSE falls with HDI along the path, "
        "while the trained heads sit at a minimum"))}
