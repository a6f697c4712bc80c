"""The report: one document (``report.json``) and every view of it.

:func:`document` turns the claim results into the report document; every view reads it through one
walk (:func:`verify.outputs.document.walk`). Schema ``mha-nw-verify/report``, version 3: the README
lists its fields, :data:`REPORT_SHAPE` those its readers use.
"""

from __future__ import annotations

import platform
import sys
import textwrap
from pathlib import Path
from typing import Any, Iterable, TextIO

from proofs.markup import render
from verify.errors import VerifyError
from verify.io import atomic_write_text, jsonable, read_json, write_json
from verify.judgment.verdicts import ClaimResult
from verify.outputs.document import counts, verdict_rows, walk
from verify.outputs.render import _md, to_html, to_markdown

__all__ = ["SCHEMA", "SCHEMA_VERSION", "document", "verdict_rows", "table", "terminal_verdicts", "markdown", "html_page", "readme_table",
           "write_report", "read_report", "Progress", "TABLE_WIDTH"]

SCHEMA = "mha-nw-verify/report"
SCHEMA_VERSION = 3
#: The terminal table's width: an 80-column terminal shows it without wrapping.
TABLE_WIDTH = 80


class Progress:
    """A one-line progress bar on stderr (plain lines when stderr is not a terminal; nothing when
    not ``shown``)."""

    def __init__(self, total: int, stream: TextIO | None = None, width: int = 24, *, shown: bool = True) -> None:
        self.total, self.done, self.width, self.shown = total, 0, width, shown
        self.stream = stream or sys.stderr
        self.tty = hasattr(self.stream, "isatty") and self.stream.isatty()

    def show(self, label: str) -> None:
        if not self.shown:
            return
        filled = int(self.width * self.done / max(self.total, 1))
        bar = "#" * filled + "-" * (self.width - filled)
        line = f"[{bar}] {self.done}/{self.total} {label}"
        if self.tty:
            self.stream.write("\r" + line[:100].ljust(100))
        else:
            self.stream.write(line + "\n")
        self.stream.flush()

    def advance(self, label: str = "") -> None:
        self.done += 1
        self.show(label)

    def close(self) -> None:
        if self.tty and self.shown:
            self.stream.write("\n")
            self.stream.flush()


def _meta(seed: int, quick: bool) -> dict:
    import mpmath
    import numpy
    import sympy

    from verify import __version__

    return {"package_version": __version__, "seed": seed, "quick": quick, "python": platform.python_version(),
            "numpy": numpy.__version__, "sympy": sympy.__version__, "mpmath": mpmath.__version__}


def document(results: Iterable[ClaimResult], *, seed: int, quick: bool, crashed: dict[str, str] | None = None) -> dict:
    """The report document (plain JSON values) for ``results``."""
    return jsonable({"schema": SCHEMA, "schema_version": SCHEMA_VERSION,
                     "claims": [r.to_dict() for r in results], "crashed": dict(crashed or {}),
                     "meta": _meta(seed, quick)})


def table(doc: dict, *, width: int = TABLE_WIDTH, ascii_only: bool = False) -> str:
    """The terminal's table, ``width`` columns wide: per claim a line of id, verdict and the counts
    c/p/l/u, then its headline wrapped below it; mathematics in Unicode (``ascii_only``: in ASCII,
    for a terminal that cannot encode Unicode). The full texts are in the report."""
    medium = "ascii" if ascii_only else "unicode"
    rule = "-" * width
    lines = [rule, f"{'claim':<6}{'verdict':<20}c/p/l/u", rule]
    for r in verdict_rows(doc):
        lines.append(f"{r['id']:<6}{r['verdict']:<20}{counts(r)}")
        lines += textwrap.wrap(render(r["short"], medium) or "-", width - 6, initial_indent=" " * 6,
                               subsequent_indent=" " * 6, break_on_hyphens=False)
    lines += [rule, *textwrap.wrap("c/p/l/u: corrections (details that are off), premise findings, limits (scope "
                                   "failures), undecided parts beside the core; only core parts set a verdict. "
                                   "The full texts: report.html.", width)]
    return "\n".join(lines)


def terminal_verdicts(doc: dict, *, ascii_only: bool = False) -> str:
    """What the command line prints of a run's verdicts: a heading naming the run, then the table."""
    meta = doc.get("meta", {})
    return (f"Verdicts (python -m verify{' --quick' if meta.get('quick') else ''}, seed {meta.get('seed')}):\n"
            + table(doc, ascii_only=ascii_only))


def readme_table(doc: dict) -> str:
    """The README's verdict table (markdown), from the same rows as every other view."""
    out = ["| claim | verdict | corrections / premise / limits / undecided | headline |", "|---|---|---|---|"]
    for r in verdict_rows(doc):
        out.append(f"| {r['id']} {_md(r['title'], table=True)} | **{r['verdict']}** | {counts(r, ' / ')} | "
                   f"{_md(r['headline'], table=True)} |")
    return "\n".join(out)


def markdown(doc: dict) -> str:
    """``report.md``: the referee's summary, the glossary and the full record (:func:`walk`)."""
    return to_markdown(walk(doc))


def html_page(doc: dict, folder: Path | None) -> str:
    """``report.html``: the same blocks as one self-contained page (plots from ``folder``)."""
    return to_html(walk(doc), folder=folder)


def write_report(folder: Path | str, doc: dict) -> tuple[Path, Path, Path]:
    """``report.json``, ``report.md`` and ``report.html`` in ``folder``, each written atomically."""
    folder = Path(folder)
    return (write_json(folder / "report.json", doc), atomic_write_text(folder / "report.md", markdown(doc)),
            atomic_write_text(folder / "report.html", html_page(doc, folder)))


#: Marks a JSON object whose values are all strings (in :data:`REPORT_SHAPE`).
_STR_MAP = "object of strings"

#: The fields of a report.json (schema 2) that its readers use, and their types: a type,
#: ``[shape]`` (a list of such) or ``{key: shape}`` (an object; a key ending in ``?`` may be absent
#: or null; other keys are free).
REPORT_SHAPE: dict[str, Any] = {
    "schema": str, "schema_version": int,
    "claims": [{
        "id": str, "title": str, "stated": str, "verdict": str, "headline": str, "reading?": str,
        "readings?": [{"id": str, "description": str, "verdict": str}],
        "corrections": [{"part": str, "finding": str, "stated": str, "derived": str, "evidence?": str,
                         "counterexample?": str}],
        "premise": [{"part": str, "outcome": str, "finding": str, "regime": str, "statement?": str,
                     "evidence?": str, "counterexample?": str}],
        "limits": [{"part": str, "finding": str, "boundary": str, "regime": str, "statement?": str,
                    "evidence?": str, "counterexample?": str}],
        "assumptions": [str], "restored_by": [str], "summary?": str,
        "evidence": {
            "plots?": _STR_MAP,
            "parts": [{
                "id": str, "role": str, "effect": str, "statement": str, "reading?": str, "finding?": str,
                "stated?": str, "derived?": str, "regime?": str, "restored_by?": str, "assumptions?": [str],
                "reason?": str, "r2?": dict, "design?": dict, "controls?": dict,
                "symbolic?": {"status": str, "n_checked": int, "n_steps": int, "results?": [str]},
                "numeric?": {"agreement": str, "summary": str, "figures?": dict},
                "counterexample?": {"description": str, "file?": str},
            }],
        },
    }],
    "crashed?": _STR_MAP,
    "meta?": dict,
}
_JSON_TYPES = {dict: "an object", list: "a list", str: "a string", int: "an integer", float: "a number",
               bool: "a boolean", type(None): "null"}


def check_shape(name: str, source: str, field: str, value: Any, shape: Any) -> None:
    """``value`` (the report's ``field``) against ``shape`` (see :data:`REPORT_SHAPE`); the error
    names ``name`` (the argument), the field and what was found."""
    def bad(expected: str) -> VerifyError:
        where = f"{name} field {field}" if field else name
        return VerifyError(f"{where}: expected {expected}, got {_JSON_TYPES.get(type(value), type(value).__name__)} "
                           f"{repr(value)[:60]} in {source!r}")

    if isinstance(shape, dict):
        if not isinstance(value, dict):
            raise bad("an object")
        for key, sub in shape.items():
            key_name = key.rstrip("?")
            child = f"{field}.{key_name}" if field else key_name
            if value.get(key_name) is None:
                if key.endswith("?"):
                    continue
                raise VerifyError(f"{name} field {child}: expected a value (a report.json written by python -m "
                                  f"verify), got none in {source!r}")
            check_shape(name, source, child, value[key_name], sub)
    elif isinstance(shape, list):
        if not isinstance(value, list):
            raise bad("a list")
        for k, item in enumerate(value):
            check_shape(name, source, f"{field}[{k}]", item, shape[0])
    elif shape is _STR_MAP:
        if not isinstance(value, dict) or not all(isinstance(v, str) for v in value.values()):
            raise bad("an object of strings")
    elif not isinstance(value, shape) or isinstance(value, bool):
        raise bad(_JSON_TYPES[shape])


def read_report(path: Path | str, *, name: str = "--report") -> dict:
    """Read a ``report.json`` as strict JSON (:func:`verify.io.read_json`) and check its schema,
    version and every field its readers use (:data:`REPORT_SHAPE`)."""
    doc = read_json(name, path)
    for key, value, expected in (("schema", SCHEMA, f"a report with schema {SCHEMA!r}"),
                                 ("schema_version", SCHEMA_VERSION, f"schema_version {SCHEMA_VERSION}")):
        if isinstance(doc, dict) and doc.get(key) != value:
            raise VerifyError(f"{name}: expected {expected}, got {doc.get(key)!r} in {str(path)!r}")
    check_shape(name, str(path), "", doc, REPORT_SHAPE)
    return doc
