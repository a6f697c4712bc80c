"""C8's plot: the weighted variance of every scheme against H (closed forms, Monte Carlo points)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from verify.outputs import plots

from .experiments import MC_PROFILES
from .weights import SCHEMES, closed_form

LABELS = {"uniform": "uniform", "geom": "geometric, $r = 1/2$", "fib_best": "Fibonacci, best first",
          "fib_worst": "Fibonacci, worst first", "inverse": "inverse variance"}


def decay_plot(path: Path, mc: dict[str, Any]) -> str:
    """Σ α_h² V_h against H for V_h = h^β (the first Monte Carlo profile), r = 1/2: lines the closed forms,
    points the Monte Carlo means (± 2 SE), dotted the geometric floor."""
    beta, r, V_1 = MC_PROFILES[0][1], 0.5, 1.0
    fig, ax = plots.new_figure(f"C8: the weighted variance $\\sum_h \\alpha_h^2 V_h$ against $H$, $V_h = h^{{{beta:g}}}$ (no "
                               "covariance)\nlines: closed forms; points: Monte Carlo (± 2 SE)", "heads $H$",
                               "MSE (its variance part)")
    Hs = np.unique(np.round(np.geomspace(1, 256, 40)).astype(int))
    for i, s in enumerate(SCHEMES):
        ax.plot(Hs, [closed_form(s, "poly", int(H), V_1, beta, r) for H in Hs], "-", color=f"C{i}",
                label=plots.label(LABELS[s]))
        pts = [row for row in mc["rows"] if row["profile"] == "poly" and row["scheme"] == s]
        ax.errorbar([p["H"] for p in pts], [p["mc_mean"] for p in pts], yerr=[2 * p["mc_se"] for p in pts], fmt="o",
                    color=f"C{i}", ms=4, capsize=2)
    ax.axhline((1 - r) ** 2 * V_1, color="C1", ls=":", lw=0.8, label=plots.label("the geometric floor $(1 - r)^2 V_1$"))
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.legend(fontsize=7)
    return plots.save(fig, path, caption=(
        r"The variance part of the MSE of each weighting against the number of heads, for head variances rising as "
        r"$V_h = h^\beta$: geometric and Fibonacci weights level off at a floor, uniform weights keep decaying"))
