"""Matplotlib helpers shared by the claim checks (Agg backend, one style, PNG output)."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

from .io import atomic_write_bytes

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
    """Write ``fig`` to ``path`` as PNG (rendered in memory, then written atomically: a reader
    sees the previous file or the new one, never a part), close it and return the path."""
    import matplotlib.pyplot as plt

    path = Path(path)
    try:
        fig.tight_layout()
        buf = io.BytesIO()
        fig.savefig(buf, format="png")
    finally:
        plt.close(fig)
    atomic_write_bytes(path, buf.getvalue())
    return str(path)
