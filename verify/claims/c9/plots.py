"""C9's plots: the change of each diagnostic over training per setting, and MiniLM's per-layer HDI."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from verify.outputs import plots

LABELS = {"key_hdi": "key HDI", "query_hdi": "query HDI", "form_diversity": "score-form diversity",
          "form_subspace_hdi": "form-subspace HDI"}


def training_effects(path: Path, nw: dict[str, Any], layer: dict[str, Any]) -> str:
    """Change over training (± 1 SE over seeds) of each diagnostic per setting, at half the steps
    (open marks) and at the end (filled): NW heads (reading i) and the attention layer (reading iii)."""
    fig, _ = plots.new_figure("", "", "", size=(10.0, 4.6))
    fig.clf()
    axes = fig.subplots(1, 2, gridspec_kw={"width_ratios": [3, 1.4]})
    for ax, exp, title in ((axes[0], nw, "NW-ensemble heads (reading i)"),
                           (axes[1], layer, "attention layer (reading iii)")):
        rows = [r for r in exp["settings"] if r["head_weights"] != "tied"]
        x = np.arange(len(rows))
        for j, k in enumerate(LABELS):
            for when, shift in (("half", -0.05), ("end", 0.05)):
                ax.errorbar(x + (j - 1.5) * 0.18 + shift, [r[k][when]["mean"] for r in rows],
                            yerr=[r[k][when]["se"] for r in rows], fmt="o", ms=3.5, capsize=2, color=f"C{j}",
                            mfc="none" if when == "half" else f"C{j}", label=LABELS[k] if when == "end" else None)
        ax.axhline(0.0, color="gray", lw=0.8)
        ax.set_xticks(x, [f"{r['target']}{' torus' if r['design'] == 'torus' else ''}"
                          + (" (1/H)" if r["head_weights"] == "fixed" else "") for r in rows], rotation=40, ha="right",
                      fontsize=7)
        ax.set_title(title, fontsize=9)
        ax.grid(True, axis="y", alpha=0.3)
    axes[0].set_ylabel("change over training (± 1 SE over seeds)")
    axes[0].legend(fontsize=7, loc="lower left")
    fig.suptitle("C9: diversity of trained heads, initialisation to half the steps (open) and the end (filled)",
                 fontsize=10)
    return plots.save(fig, path, caption=(
        "How training changes the diversity of the heads, per target: the key HDI (the paper's diagnostic), the query "
        "HDI and the score forms, at half the steps and at the end, for NW-ensemble heads and an attention layer"))


def checkpoint_layers(path: Path, rows: dict[str, list[dict]], w: dict[str, Any]) -> str:
    """MiniLM's per-layer key and query HDI against the Haar band, and layer 0 in the input geometry."""
    fig, ax = plots.new_figure("C9: all-MiniLM-L6-v2, the HDI of each layer against Haar-random subspaces", "layer",
                               "HDI", size=(7.0, 4.4))
    mu, sd = rows["keys"][0]["haar_mean"], rows["keys"][0]["haar_sd"]
    ax.axhspan(mu - 2 * sd, mu + 2 * sd, color="gray", alpha=0.3)
    ax.axhline(mu, color="gray", lw=1, label=f"Haar-random heads {mu:.4f} ± 2 SD ({sd:.1e})")
    ax.errorbar([0], [w["weighted_haar_mean"]], yerr=[2 * w["weighted_haar_sd"]], fmt="D", color="gray", mfc="none",
                capsize=3, label=plots.label(r"the $\Sigma$-weighted Haar baseline (layer 0)"))
    for tensor, color in (("keys", "C0"), ("queries", "C1")):
        ax.plot([r["layer"] for r in rows[tensor]], [r["hdi"] for r in rows[tensor]], "o-", color=color, label=tensor)
        ax.plot([0.08], [w[tensor]["weighted_hdi"]], "D", color=color, mfc="none",
                label=plots.label(f"{tensor}, $\\Sigma$-weighted"))
    ax.legend(fontsize=7)
    return plots.save(fig, path, caption=(
        "The HDI of MiniLM's keys and queries in each layer against Haar-random subspaces of the same sizes (the "
        "band: 2 SD): every layer lies below chance, in the plain and in the input-weighted inner product"))
