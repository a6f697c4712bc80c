"""Matplotlib helpers shared by the claim checks (Agg backend, one style, PNG output)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

__all__ = ["new_figure", "save"]


def new_figure(title: str, xlabel: str, ylabel: str, *, size: tuple[float, float] = (5.6, 4.0)) -> tuple[Any, Any]:
    """A figure with one labelled axis; matplotlib is imported here so that the numeric core
    never pays for it."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=size, dpi=110)
    ax.set_title(title, fontsize=10)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.grid(True, alpha=0.3)
    return fig, ax


def save(fig: Any, path: Path) -> str:
    """Write ``fig`` to ``path`` as PNG, close it and return the path as a string."""
    import matplotlib.pyplot as plt

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.tight_layout()
    fig.savefig(path, format="png")
    plt.close(fig)
    return str(path)
