"""The report: one document (``report.json``) and every view of it.

:func:`document` turns the claim results into the report document; every view reads that
document, so the terminal table, ``report.md``, the README's verdict table, the LaTeX export and
the notebooks show the same fields (verdict, headline, corrections, premise findings, limits).

Schema ``mha-nw-verify/report``, version 2 (documented in the README)::

    {"schema": "mha-nw-verify/report", "schema_version": 2,
     "claims": [{"id", "title", "stated", "verdict", "headline", "reading", "readings",
                 "corrections": [{"part", "finding", "stated", "derived", "evidence", "counterexample"}],
                 "premise": [{"part", "outcome", "finding", "statement", "regime", "evidence", "counterexample"}],
                 "limits": [{"part", "finding", "statement", "boundary", "regime", "evidence", "counterexample"}],
                 "assumptions", "restored_by", "summary",
                 "evidence": {"parts": [...], "plots": {...}, "derivation": {...}}, "seconds"}],
     "crashed": {claim: traceback}, "meta": {...}}
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

__all__ = ["SCHEMA", "SCHEMA_VERSION", "document", "verdict_rows", "table", "markdown", "readme_table",
           "write_report", "read_report", "Progress"]

SCHEMA = "mha-nw-verify/report"
SCHEMA_VERSION = 2


class Progress:
    """A one-line progress bar on stderr (plain lines when stderr is not a terminal)."""

    def __init__(self, total: int, stream: TextIO | None = None, width: int = 24) -> None:
        self.total, self.done, self.width = total, 0, width
        self.stream = stream or sys.stderr
        self.tty = hasattr(self.stream, "isatty") and self.stream.isatty()

    def show(self, label: str) -> None:
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
        if self.tty:
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


def verdict_rows(doc: dict) -> list[dict[str, Any]]:
    """Per claim: id, title, verdict, headline and the three counts; crashed claims included."""
    rows = [{"id": c["id"], "title": c.get("title", ""), "verdict": c["verdict"], "headline": c["headline"],
             "corrections": len(c["corrections"]), "premise": len(c["premise"]), "limits": len(c["limits"])}
            for c in doc["claims"]]
    rows += [{"id": k, "title": "", "verdict": "crashed", "headline": (v.strip().splitlines() or [""])[-1],
              "corrections": 0, "premise": 0, "limits": 0} for k, v in doc.get("crashed", {}).items()]
    return rows


def table(doc: dict, *, width: int = 118, ascii_only: bool = False) -> str:
    """The terminal table: claim | verdict | corrections, premise, limits | headline (wrapped), its
    mathematics in Unicode (``ascii_only``: in ASCII, for a terminal that cannot encode Unicode)."""
    medium = "ascii" if ascii_only else "unicode"
    w_id, w_v, w_n = 5, 17, 8
    w_h = max(30, width - w_id - w_v - w_n - 9)
    rule = "-" * (w_id + w_v + w_n + w_h + 9)
    lines = [rule, f"{'claim':<{w_id}} | {'verdict':<{w_v}} | {'c/p/l':<{w_n}} | headline", rule]
    for r in verdict_rows(doc):
        counts = f"{r['corrections']}/{r['premise']}/{r['limits']}"
        chunks = textwrap.wrap(render(r["headline"], medium) or "-", w_h, break_on_hyphens=False) or ["-"]
        lines.append(f"{r['id']:<{w_id}} | {r['verdict']:<{w_v}} | {counts:<{w_n}} | {chunks[0]}")
        lines += [f"{'':<{w_id}} | {'':<{w_v}} | {'':<{w_n}} | {c}" for c in chunks[1:]]
    lines += [rule, "c/p/l: corrections (details that are off), premise findings, limits (scope failures); "
                    "only core parts set a verdict"]
    return "\n".join(lines)


def _md(text: Any, *, table: bool = False) -> str:
    return render(" ".join(str(text).split()), "markdown", table=table)


def readme_table(doc: dict) -> str:
    """The README's verdict table (markdown), from the same rows as every other view."""
    out = ["| claim | verdict | corrections / premise / limits | headline |", "|---|---|---|---|"]
    for r in verdict_rows(doc):
        out.append(f"| {r['id']} {_md(r['title'], table=True)} | **{r['verdict']}** | {r['corrections']} / "
                   f"{r['premise']} / {r['limits']} | {_md(r['headline'], table=True)} |")
    return "\n".join(out)


_ROLE_ORDER = {"core": 0, "detail": 1, "premise": 2, "scope": 3}
_ROLE_WORDS = {"core": "core (sets the verdict)", "detail": "detail (a stated constant, convention or word)",
               "premise": "premise (is the model true of real NW heads?)", "scope": "scope (outside the stated scope)"}
_AGREEMENT_WORDS = {"rounding": "agrees to floating-point rounding", "statistical": "agrees within the Monte Carlo "
                    "error", "measured": "a measurement", "disagree": "the numbers contradict what they check"}


def _design_lines(design: dict) -> list[str]:
    out = []
    for key, value in design.items():
        if isinstance(value, dict) and "value" in value:
            why = f" ({_md(value['reason'])})" if value.get("reason") else ""
            out.append(f"  - {key.replace('_', ' ')}: {_md(value['value'])}{why}")
        else:
            out.append(f"  - {key.replace('_', ' ')}: {_md(value)}")
    return out


_NOT_STORED = object()   # a step's dict from before ``display`` was stored: parsed here


def _formula_md(step: dict) -> str:
    """A derivation step as display mathematics (its LaTeX as SymPy prints it, read and written back
    by the markup when the step was derived: ``display``), or as code if it does not parse."""
    from proofs.core import display_latex

    relation = step.get("latex") or step["relation"]
    display = step.get("display", _NOT_STORED)
    if display is _NOT_STORED:
        display = display_latex(relation)
    return "$$" + display + "$$" if isinstance(display, str) else "`" + relation.replace("`", "'") + "`"


def markdown(doc: dict) -> str:
    """``report.md``: the verdict table, then per claim its corrections, premise findings, limits
    and every part's evidence (core parts first), the plots and the derivation steps, typeset."""
    meta = doc.get("meta", {})
    out = ["# Verification report", "",
           f"Paper: *Multi-Head Attention as Ensemble Nadaraya-Watson Estimation* (Fokoue, 2026). "
           f"Seed {meta.get('seed')}{', quick sizes' if meta.get('quick') else ''}. A claim's verdict is set by its "
           "core parts alone; details that are off are corrections, premise parts are premise findings, failures "
           "outside the stated scope are limits. Replay any counterexample with `python -m verify replay FILE`.", "",
           readme_table(doc)]
    for c in doc["claims"]:
        reading = next((r for r in c.get("readings", []) if r["id"] == c.get("reading")), None)
        out += ["", f"## {c['id']}: {_md(c['title'])}", "", f"**Stated:** {_md(c['stated'])}", "",
                f"**Verdict:** {c['verdict']}"
                + (f" (reading {c['reading']}: {_md(reading['description'])})" if reading else ""), "",
                f"**Headline:** {_md(c['headline'])}"]
        if c.get("readings"):
            out += ["", "**Readings:**",
                    *[f"- {r['id']}, {_md(r['description'])}: {r['verdict']}" for r in c["readings"]]]
        if c["assumptions"]:
            out += ["", "**The verdict rests on these model assumptions:**", *[f"- {_md(a)}" for a in c["assumptions"]]]
        if c["restored_by"]:
            out += ["", "**What restores the claim:**", *[f"- {_md(x)}" for x in c["restored_by"]]]
        if c["corrections"]:
            out += ["", "**Corrections:**"]
            for x in c["corrections"]:
                out += [f"- *{x['part']}*: the paper states {_md(x['stated'])}; derived: {_md(x['derived'])}"
                        + (f" (replay: `{x['counterexample']}`)" if x.get("counterexample") else "")]
        if c["premise"]:
            out += ["", "**Premise:**"]
            out += [f"- *{x['part']}*: {x['outcome']}: {_md(x['finding'])} (measured in: {_md(x['regime'])})"
                    for x in c["premise"]]
        if c["limits"]:
            out += ["", "**Limits:**"]
            out += [f"- *{x['part']}*: {_md(x['finding'])} (measured in: {_md(x['regime'])}; the claim holds under: "
                    f"{_md(x['boundary'])})" + (f" (replay: `{x['counterexample']}`)" if x.get("counterexample") else "")
                    for x in c["limits"]]
        parts = sorted(c["evidence"]["parts"], key=lambda p: _ROLE_ORDER.get(p["role"], 9))
        for p in parts:
            role = _ROLE_WORDS.get(p["role"], p["role"]) + (f", reading {p['reading']}" if p.get("reading") else "")
            out += ["", f"### {c['id']}, {p['id']}: {p['effect']}", "", f"*{role}.* {_md(p['statement'])}", ""]
            if p.get("stated"):
                out.append(f"- the paper states: {_md(p['stated'])}; derived: {_md(p['derived'])}")
            if p.get("symbolic"):
                s = p["symbolic"]
                status = {"proved": "proved", "proved-with-unchecked-steps": "proved with unchecked steps",
                          "failed": "a step failed"}.get(s["status"], s["status"])
                groups = f" (the derivation's {', '.join(s['groups'])})" if s.get("groups") else ""
                out.append(f"- symbolic: {status}, {s['n_checked']} of {s['n_steps']} steps checked{groups}")
                for cmp in s.get("comparisons", []):
                    word = {True: "holds", False: "does not hold", None: "undecided"}[cmp["holds"]]
                    out.append(f"  - against the statement: {word}: {_md(cmp['derived'])}")
            if p.get("numeric"):
                n = p["numeric"]
                out.append(f"- numeric ({_AGREEMENT_WORDS.get(n['agreement'], n['agreement'])}): {_md(n['summary'])}")
            if p.get("r2"):
                out.append("- how much of the target the estimators learn, R² = 1 − excess MSE / Var f: "
                           + ", ".join(f"{k} {v:.3f}" for k, v in p["r2"].items()))
            if p.get("design"):
                out += ["- design:", *_design_lines(p["design"])]
            for kind in ("positive", "negative"):
                ctl = (p.get("controls") or {}).get(kind)
                if ctl:
                    out.append(f"- {kind} control: {_md(ctl.get('what', ''))}; measured: {_md(ctl.get('effect', ''))}")
            if p.get("regime"):
                out.append(f"- measured in: {_md(p['regime'])}")
            if p.get("counterexample"):
                cx = p["counterexample"]
                out.append(f"- counterexample: {_md(cx['description'])}"
                           + (f" (replay: `{cx['file']}`)" if cx.get("file") else ""))
            if p.get("restored_by"):
                out.append(f"- holds under: {_md(p['restored_by'])}")
            if p.get("assumptions"):
                out.append("- model assumptions: " + "; ".join(_md(a) for a in p["assumptions"]))
            if p.get("reason"):
                out.append(f"- not checkable: {_md(p['reason'])}")
        for name, plot in c["evidence"]["plots"].items():
            out += ["", f"![{name}]({plot})"]
        der = c["evidence"].get("derivation")
        if der:
            out += ["", f"<details><summary>The derivation: {len(der['steps'])} steps "
                        f"(<code>python -m verify proofs {c['id']}</code> prints it with every symbol)</summary>", ""]
            for k, s in enumerate(der["steps"], 1):
                status = "" if s["status"] == "checked" else f" **{s['status']}**"
                out += [f"{k}. `{s['name']}`{status}, checked by {s['method']}"
                        + (f": {_md(s['why'])}" if s.get("why") else ""), "",
                        "   " + _formula_md(s), ""]
            if der.get("comparisons"):
                out += ["Derived against stated:", ""]
                out += [f"- {({True: 'holds', False: '**does not hold**', None: 'undecided'})[x['holds']]}: "
                        f"{_md(x['derived'])}" for x in der["comparisons"]]
            out += ["", "</details>"]
    for claim, err in doc.get("crashed", {}).items():
        out += ["", f"## {claim}: crashed", "", "```", err.rstrip(), "```"]
    return "\n".join(out) + "\n"


def write_report(folder: Path | str, doc: dict) -> tuple[Path, Path]:
    """``report.json`` and ``report.md`` in ``folder``, each written atomically."""
    folder = Path(folder)
    return write_json(folder / "report.json", doc), atomic_write_text(folder / "report.md", markdown(doc))


#: Marks a JSON object whose values are all strings (in :data:`REPORT_SHAPE`).
_STR_MAP = "object of strings"
#: A free text field that may be absent or null.
_TEXT = "text?"

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
        return VerifyError(f"{name} field {field}: expected {expected}, got "
                           f"{_JSON_TYPES.get(type(value), type(value).__name__)} {repr(value)[:60]} in {source!r}"
                           if field else f"{name}: expected {expected}, got "
                           f"{_JSON_TYPES.get(type(value), type(value).__name__)} {repr(value)[:60]} in {source!r}")

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
    if isinstance(doc, dict) and doc.get("schema") != SCHEMA:
        raise VerifyError(f"{name}: expected a report with schema {SCHEMA!r}, got {doc.get('schema')!r} "
                          f"in {str(path)!r}")
    if isinstance(doc, dict) and doc.get("schema_version") != SCHEMA_VERSION:
        raise VerifyError(f"{name}: expected schema_version {SCHEMA_VERSION}, got {doc.get('schema_version')!r} "
                          f"in {str(path)!r}")
    check_shape(name, str(path), "", doc, REPORT_SHAPE)
    return doc
