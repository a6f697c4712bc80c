"""Matplotlib helpers shared by the claim checks (Agg backend, one style): each plot as PNG (the
report's), as SVG (a vector file for papers) and as the numbers it shows (JSON)."""

from __future__ import annotations

import io
import os
import stat
from pathlib import Path
from typing import Any

from verify._validate import fail, received
from verify.io import atomic_write_bytes, write_json

__all__ = ["new_figure", "save", "plotted_data", "data_path", "label", "plot_file", "Plot", "DPI", "MAX_PLOT_BYTES"]

#: Resolution of the report's PNGs: 5.6 x 4 inches at 96 dpi is 538 x 384 pixels, enough for a
#: report page; rendering time grows with the pixel count.
DPI = 96
#: The largest plot read back from a report's folder (the package's are ~100 kB).
MAX_PLOT_BYTES = 32 * 2**20
#: How a PNG file begins (the report embeds plots as PNG; anything else would stop pdflatex).
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def label(text: str) -> str:
    """A title, axis label or legend entry written in the package's markup, as the plot shows it:
    mathematics in Unicode (``$\\alpha_h$`` reads αₕ), or as matplotlib's mathtext where Unicode has
    no glyph for a script (``$W_K$``, ``$d_k^{1/4}$``), never ASCII maths."""
    from proofs import markup

    def span(s: Any) -> str:
        if not isinstance(s, markup.Math):
            return s.text
        shown = markup.math_to_unicode(s.nodes)
        return shown if "_" not in shown and "^" not in shown else _mathtext(markup.math_to_latex(s.nodes), shown)

    def line(text: str) -> str:
        try:
            return "".join(span(s) for s in markup.parse(text, "plot label"))
        except markup.MarkupError:   # not markup (a name read from a checkpoint): shown as it is
            return markup.escape(text, "unicode")

    return "\n".join(line(t) for t in text.split("\n"))


def _mathtext(tex: str, fallback: str) -> str:
    """``$tex$`` where matplotlib's mathtext parses it, else the Unicode ``fallback``."""
    from matplotlib.mathtext import MathTextParser

    try:
        MathTextParser("path").parse(f"${tex}$")
    except ValueError:
        return fallback
    return f"${tex}$"


def new_figure(title: str, xlabel: str, ylabel: str, *, size: tuple[float, float] = (5.6, 4.0)) -> tuple[Any, Any]:
    """A figure with one labelled axis, its texts in markup (:func:`label`); matplotlib is imported
    here so that the numeric core never pays for it."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=size, dpi=DPI)
    ax.set_title(label(title), fontsize=10)
    ax.set_xlabel(label(xlabel))
    ax.set_ylabel(label(ylabel))
    ax.grid(True, alpha=0.3)
    return fig, ax


def _finite(values: Any) -> list:
    import numpy as np

    a = np.asarray(values, dtype=float).ravel()
    return [float(v) if np.isfinite(v) else None for v in a]


def plotted_data(fig: Any) -> dict[str, Any]:
    """What the figure shows, as numbers (per axis its title, labels and lines; non-finite values as
    null), so that a plot can be checked against an independent computation."""
    axes = []
    for ax in fig.axes:
        lines = [{"label": str(ln.get_label()), "x": _finite(ln.get_xdata()), "y": _finite(ln.get_ydata())}
                 for ln in ax.get_lines()]
        axes.append({"title": ax.get_title(), "xlabel": ax.get_xlabel(), "ylabel": ax.get_ylabel(), "lines": lines})
    return {"axes": axes}


def data_path(path: Path | str) -> Path:
    """The JSON file of a plot's numbers, beside its PNG: ``name.png`` -> ``name.data.json``."""
    path = Path(path)
    return path.with_name(path.stem + ".data.json")


class Plot(str):
    """A written plot's path, with what it shows (``caption``, marked-up text)."""

    caption: str

    def __new__(cls, path: str, caption: str = "") -> "Plot":
        obj = super().__new__(cls, path)
        obj.caption = caption
        return obj


def save(fig: Any, path: Path, caption: str = "") -> Plot:
    """Write ``fig`` to ``path`` as PNG and SVG (each atomically) and its numbers to :func:`data_path`,
    close it and return the PNG's path with its ``caption`` (marked-up text)."""
    import matplotlib.pyplot as plt

    path = Path(path)
    try:
        fig.tight_layout()
        # tight_layout leaves a placeholder layout engine, for which savefig draws the figure twice
        # (once to lay it out, once to render); the margins are set, so one draw gives the same PNG
        fig.set_layout_engine(None)
        buf, svg = io.BytesIO(), io.BytesIO()
        fig.savefig(buf, format="png")
        with plt.rc_context({"svg.hashsalt": "mha-nw-verify"}):     # the same ids in every run
            fig.savefig(svg, format="svg", metadata={"Date": None})
        data = plotted_data(fig)
    finally:
        plt.close(fig)
    write_json(data_path(path), data, indent=None)
    atomic_write_bytes(path.with_suffix(".svg"), svg.getvalue())
    atomic_write_bytes(path, buf.getvalue())
    return Plot(str(path), caption)


def plot_file(where: str, value: str, folder: Path) -> Path:
    """The plot ``value`` (a path relative to the report's folder) as a regular PNG file inside
    ``folder`` once every link is resolved; anything else is refused (``where`` names the field)."""
    pure, folder = Path(value), folder.resolve()
    if not value or "\0" in value or pure.is_absolute() or ".." in pure.parts or "\\" in value:
        raise fail(where, received(value), "a path relative to the report's folder, without '..'")
    try:
        real = (folder / pure).resolve(strict=True)
    except (OSError, RuntimeError) as exc:
        raise fail(where, received(value), f"a file inside the report's folder ({getattr(exc, 'strerror', exc)})") \
            from None
    if not real.is_relative_to(folder):
        raise fail(where, received(value), "a file inside the report's folder (it links outside)")
    st = os.stat(real)
    if not stat.S_ISREG(st.st_mode) or st.st_size > MAX_PLOT_BYTES:
        raise fail(where, received(value), f"a regular file of at most {MAX_PLOT_BYTES} bytes")
    with open(real, "rb") as fh:
        if fh.read(len(PNG_MAGIC)) != PNG_MAGIC:
            raise fail(where, received(value), "a PNG file")
    return real
