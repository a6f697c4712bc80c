"""C6's plot: the HDI along the overlap descent from random starts, with each size's fusion-frame bound."""

from __future__ import annotations

from typing import Any

import numpy as np

from verify.judgment.claim import Context
from verify.numeric import formulas
from verify.outputs import plots

__all__ = ["overlap_optimisation"]


def overlap_optimisation(ctx: Context, ds: dict[str, Any]) -> dict[str, str]:
    path = ctx.plot_path("overlap_optimisation")
    if path is None:
        return {}
    fig, ax = plots.new_figure("C6: HDI along the overlap descent from random starts\n(dashed: the fusion-frame "
                               r"bound $1 - \max(0, (H d_k/d - 1)/(H - 1))$)", "sweep (0: a random start)", "HDI",
                               size=(7.6, 4.4))
    for i, (cfg, hs) in enumerate(ds["hist"].items()):
        color = f"C{i % 10}"
        for j, h in enumerate(hs):
            ax.plot(np.arange(len(h)), h, "-", color=color, alpha=0.6, lw=1,
                    label=plots.label(f"$(H, d_k, d) = ({', '.join(map(str, cfg))})$") if j == 0 else None)
        ax.axhline(float(formulas.c6_hdi_bound(*cfg)), color=color, ls="--", lw=0.8)
    ax.legend(fontsize=7, loc="center left", bbox_to_anchor=(1.01, 0.5))
    return {"overlap_optimisation": plots.save(fig, path, caption=(
        r"The HDI of head sets along the descent of their overlap from random starts: each size reaches its bound, "
        r"1 where orthogonal heads exist ($H d_k \le d$), the fusion-frame bound beyond"))}
