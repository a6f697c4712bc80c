"""Blocks of the report (:mod:`verify.outputs.document`) as Markdown and as one self-contained HTML page.

Markdown (``report.md``) keeps ``$...$`` mathematics for GitHub. The HTML page (``report.html``)
needs only a browser: MathML (``latex2mathml``), plots embedded as PNG data, the style inline. Text
that is not markup (another version's report, an error) is escaped, never interpreted.
"""

from __future__ import annotations

import base64
import html
from pathlib import Path
from typing import Any

from proofs import markup
from verify.errors import VerifyError
from verify.outputs.document import Block, Field, Figure, Fold, Formula, Heading, Items, Para, Table
from verify.outputs.plots import plot_file

__all__ = ["to_markdown", "to_html", "inline_html", "math_html", "STYLE"]


# --- Markdown ---------------------------------------------------------------------------------------


def _md(text: Any, *, table: bool = False) -> str:
    try:
        return markup.render(" ".join(str(text).split()), "markdown", table=table)
    except markup.MarkupError:
        return markup.escape(str(text), "markdown")


def to_markdown(blocks: list[Block]) -> str:
    """The blocks as GitHub Markdown (mathematics in ``$...$``; folds as ``<details>``)."""
    out: list[str] = []
    for b in blocks:
        if isinstance(b, Heading):
            out += ["", "#" * b.level + " " + _md(b.text), ""]
        elif isinstance(b, Para):
            out += [_md(b.text), ""]
        elif isinstance(b, Field):
            out += [f"**{_md(b.label)}:** {_md(b.text)}", ""]
        elif isinstance(b, Items):
            out += ([f"**{_md(b.label)}:**", ""] if b.label else []) + [f"- {_md(x)}" for x in b.items] + [""]
        elif isinstance(b, Table):
            out += ["| " + " | ".join(_md(h, table=True) for h in b.head) + " |", "|" + "---|" * len(b.head)]
            out += ["| " + " | ".join(_md(c, table=True) for c in row) + " |" for row in b.rows] + [""]
        elif isinstance(b, Figure):
            out += [f"![{_md(b.caption) or 'plot'}]({b.path})", "", f"*{_md(b.caption)}*" if b.caption else "", ""]
        elif isinstance(b, Formula):
            out += ["$$" + b.latex + "$$", ""]
        elif isinstance(b, Fold):
            out += [f"<details><summary>{html.escape(_md(b.summary))}</summary>", "",
                    to_markdown(list(b.blocks)).strip(), "", "</details>", ""]
    text = "\n".join(out).strip() + "\n"
    while "\n\n\n" in text:
        text = text.replace("\n\n\n", "\n\n")
    return text


# --- HTML -----------------------------------------------------------------------------------------

STYLE = """
body { font: 16px/1.5 Georgia, 'Times New Roman', serif; max-width: 58em; margin: 2em auto; padding: 0 1em;
       color: #1a1a1a; background: #fff; }
h1 { font-size: 1.6em; } h2 { font-size: 1.3em; border-bottom: 1px solid #ccc; margin-top: 2em; }
h3 { font-size: 1.05em; margin-top: 1.4em; }
table { border-collapse: collapse; margin: 1em 0; } td, th { border: 1px solid #ccc; padding: 0.3em 0.5em;
       vertical-align: top; text-align: left; }
code { font: 0.9em Menlo, Consolas, monospace; background: #f4f4f4; padding: 0 0.2em; }
figure { margin: 1em 0; } figure img { max-width: 100%; } figcaption { font-style: italic; font-size: 0.95em; }
details { margin: 0.5em 0; } summary { cursor: pointer; }
math[display="block"] { margin: 0.6em 0; overflow-x: auto; }
.field { margin: 0.4em 0; }
"""


def math_html(latex: str, *, display: bool = False) -> str:
    """A formula as MathML (``latex2mathml``); the Unicode reading of the markup where the converter
    refuses it, so that no TeX reaches the page."""
    import latex2mathml.converter

    try:
        return latex2mathml.converter.convert(latex, display="block" if display else "inline")
    except Exception:   # the converter's own errors are not one exception class
        try:
            return f'<span class="math">{html.escape(markup.math_to_unicode(markup.parse_math(latex, "html")))}</span>'
        except markup.MarkupError:
            return f"<code>{html.escape(latex)}</code>"


def inline_html(text: Any) -> str:
    """Marked-up text as HTML: prose escaped, code in ``<code>``, mathematics as MathML."""
    try:
        spans = markup.parse(" ".join(str(text).split()), "html")
    except markup.MarkupError:
        return html.escape(str(text))
    out = []
    for s in spans:
        if isinstance(s, markup.Math):
            out.append(math_html(markup.math_to_latex(s.nodes)))
        elif isinstance(s, markup.Code):
            out.append(f"<code>{html.escape(s.text)}</code>")
        else:
            out.append(html.escape(s.text))
    return "".join(out)


def _figure(b: Figure, folder: Path | None) -> str:
    caption = f"<figcaption>{inline_html(b.caption)}</figcaption>" if b.caption else ""
    data = None
    if folder is not None:     # a PNG file of this report's folder, or nothing
        try:
            data = plot_file(f"plot {b.path}", b.path, folder).read_bytes()
        except (VerifyError, OSError):
            data = None
    if data is None:
        return f"<figure><p>(plot {html.escape(b.path)} not found)</p>{caption}</figure>"
    src = "data:image/png;base64," + base64.b64encode(data).decode("ascii")
    alt = html.escape(markup.plain_ascii(b.caption) if b.caption else b.path)
    return f'<figure><img src="{src}" alt="{alt}">{caption}</figure>'


def _html_blocks(blocks: list[Block], folder: Path | None) -> list[str]:
    out: list[str] = []
    for b in blocks:
        if isinstance(b, Heading):
            anchor = f' id="{html.escape(b.anchor)}"' if b.anchor else ""
            out.append(f"<h{b.level}{anchor}>{inline_html(b.text)}</h{b.level}>")
        elif isinstance(b, Para):
            out.append(f"<p>{inline_html(b.text)}</p>")
        elif isinstance(b, Field):
            out.append(f'<p class="field"><strong>{inline_html(b.label)}:</strong> {inline_html(b.text)}</p>')
        elif isinstance(b, Items):
            if b.label:
                out.append(f"<p><strong>{inline_html(b.label)}:</strong></p>")
            out.append("<ul>" + "".join(f"<li>{inline_html(x)}</li>" for x in b.items) + "</ul>")
        elif isinstance(b, Table):
            head = "".join(f"<th>{inline_html(h)}</th>" for h in b.head)
            rows = "".join("<tr>" + "".join(f"<td>{inline_html(c)}</td>" for c in row) + "</tr>" for row in b.rows)
            out.append(f"<table><thead><tr>{head}</tr></thead><tbody>{rows}</tbody></table>")
        elif isinstance(b, Figure):
            out.append(_figure(b, folder))
        elif isinstance(b, Formula):
            out.append(math_html(b.latex, display=True))
        elif isinstance(b, Fold):
            out.append(f"<details><summary>{inline_html(b.summary)}</summary>"
                       + "\n".join(_html_blocks(list(b.blocks), folder)) + "</details>")
    return out


def to_html(blocks: list[Block], *, folder: Path | None, title: str = "Verification report") -> str:
    """One self-contained page: the plots read from ``folder`` (the report's) and embedded."""
    body = "\n".join(_html_blocks(blocks, folder))
    return (f'<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
            f'<meta name="viewport" content="width=device-width, initial-scale=1">\n'
            f"<title>{html.escape(title)}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n{body}\n</body>\n</html>\n")
