"""LaTeX export: every claim's derivation and verdict as one document, one snippet per formula.

``python -m verify latex [-o DIR] [--pdf] [--quick] [--seed N] [--report FILE]`` writes

- ``DIR/verification.tex``: a standalone ``article`` (amsmath, amssymb, graphicx, geometry: all
  in Debian's texlive-latex-base) with, for every claim, the statement, the assumptions, the
  derivation steps (each relation with its check method and status), the results, the
  derived-vs-stated comparisons, the verdict and its numeric evidence;
- ``DIR/snippets/<claim>_<name>.tex``: one ``equation`` per formula with the label
  ``eq:<claim>:<name>`` (steps are ``<claim>_step_<name>``), for ``\\input`` into a paper;
- ``DIR/macros.tex``: the notation macros (:data:`proofs.notation.MACROS`), defined once.

Every formula is printed from its SymPy object by :func:`proofs.notation.to_latex`; every text
(statements, headlines, findings, the steps' reasons, descriptions, summaries) by
:func:`verify.outputs.texify.texify`, which typesets its mathematics as inline math; names of steps,
assumptions and figures are ``\\texttt``. Verdicts come from running the claim checks or
from a ``report.json`` written by ``python -m verify``.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import unicodedata
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable

import sympy as sp

from verify._validate import error_line, fail
from verify._validate import seed as valid_seed
from verify.errors import VerifyError
from verify.io import atomic_write_bytes, atomic_write_text

__all__ = [
    "Formula",
    "escape",
    "formulas",
    "formula_lines",
    "macro_file",
    "snippet",
    "load_report",
    "run_checks",
    "render_document",
    "write_export",
    "compile_pdf",
    "cli_latex",
    "TEXT_MAP",
]

# --- text ----------------------------------------------------------------------------------------

# Text is printed by verify.outputs.texify: prose as text, its mathematics as inline math, names of code
# as \texttt; escape() (plain text) is kept for the names themselves.
from verify.outputs.texify import _ACCENTS, _SUB, _SUPER, TEXT_MAP, escape, texify  # noqa: E402


def _code(name: Any) -> str:
    """A name of the package (a step, an assumption, a figure's key) in typewriter type."""
    return f"\\texttt{{{escape(name)}}}"


def _codes(names: Iterable[Any]) -> str:
    return ", ".join(_code(n) for n in names)


_PLAIN = {"ᵀ": "^T", "·": "*", "×": "x", "≤": "<=", "≥": ">=", "≠": "!=", "→": "->", "⇒": "=>", "≈": "~",
          "−": "-", "–": "-", "—": "-", "’": "'", "±": "+-", "∈": " in ", "√": "sqrt"}


def _comment(text: Any) -> str:
    """One line of a LaTeX comment in plain ASCII (``ρ`` -> ``rho``, ``²`` -> ``^2``)."""
    s = unicodedata.normalize("NFC", str(text))
    out = []
    for ch in s:
        if ord(ch) < 128:
            out.append(ch)
        elif ch in _SUPER or ch in _SUB:
            out.append(("^" if ch in _SUPER else "_") + (_SUPER.get(ch) or _SUB[ch]))
        elif ch in _PLAIN:
            out.append(_PLAIN[ch])
        elif ch in _ACCENTS:
            continue
        else:
            out.append(re.sub(r"[\\${}^]|mathsf|mathbb", "", TEXT_MAP.get(ch, "?")) or "?")
    return " ".join("".join(out).split())


# --- formulas ------------------------------------------------------------------------------------

#: Characters of rendered math per line the splitter aims for (about 17 cm of 11 pt display math).
LINE_UNITS = 62.0
#: Lines wider than this many LINE_UNITS would need shrinking below ~45 %: not typeset, see the snippet.
SCALE_LIMIT = 2.2
#: More lines than this are not typeset in the document either (the snippet holds the formula).
MAX_LINES = 28

_REL_OPS = {sp.Equality: "=", sp.Unequality: r"\neq", sp.StrictLessThan: "<", sp.StrictGreaterThan: ">",
            sp.LessThan: r"\leq", sp.GreaterThan: r"\geq"}


_PRINTED: dict[tuple[int, bool], tuple[Any, str]] = {}


def _latex(expr: Any, macros: bool) -> str:
    """``to_latex`` once per (object, spelling): the derivations are built once per process and
    printing their large expressions is slow."""
    from proofs.notation import to_latex

    hit = _PRINTED.get((id(expr), macros))
    if hit is None or hit[0] is not expr:
        hit = _PRINTED[id(expr), macros] = (expr, to_latex(expr, macros=macros))
    return hit[1]


def _cut(tex: str, seps: tuple[str, ...]) -> list[str]:
    """``tex`` cut before each separator (``" + "``, ``" = "``, ...) that lies outside every brace
    group and ``\\left...\\right`` pair: where SymPy's printer puts the terms of a sum and the sides
    of a relation. The first character is never a cut (a leading minus sign)."""
    pieces, depth, start, i = [], 0, 0, 0
    while i < len(tex):
        if tex.startswith("\\left", i) or tex.startswith("\\right", i):
            name = "\\left" if tex.startswith("\\left", i) else "\\right"
            j = i + len(name)
            if j < len(tex) and not tex[j].isalpha():
                depth += 1 if name == "\\left" else -1
                i = j + (1 if tex[j] != "\\" else 1 + max(1, len(re.match(r"[A-Za-z]*", tex[j + 1:]).group())))
                continue
        c = tex[i]
        if c == "\\":
            m = re.match(r"[A-Za-z]+", tex[i + 1:])
            i += 1 + (len(m.group()) if m else 1)
            continue
        if c == "{":
            depth += 1
        elif c == "}":
            depth -= 1
        elif depth == 0 and i > start and any(tex.startswith(sep, i) for sep in seps):
            pieces.append(tex[start:i].strip())
            start = i + 1
        i += 1
    pieces.append(tex[start:].strip())
    return [p for p in pieces if p]


def _width(tex: str) -> float:
    """A rough width of rendered math in character units (fractions count their wider part,
    scripts 0.7, matrices their widest row)."""
    tokens = re.findall(r"\\[A-Za-z]+|\\.|[{}^_&]|\S", tex)
    pos = 0

    def atom() -> float:
        nonlocal pos
        if pos >= len(tokens):
            return 0.0
        t = tokens[pos]
        pos += 1
        if t == "{":
            return group()
        if t in ("\\frac", "\\dfrac", "\\tfrac", "\\binom"):
            return max(atom(), atom()) + 0.5
        if t == "\\sqrt":
            extra = 0.0
            if pos < len(tokens) and tokens[pos] == "[":
                while pos < len(tokens) and tokens[pos] != "]":
                    pos += 1
                pos += 1
                extra = 0.6
            return atom() + 1.0 + extra
        if t in ("\\left", "\\right", "\\big", "\\Big", "\\bigg", "\\Bigg"):
            pos += 1
            return 0.5
        if t in ("\\mathrm", "\\mathit", "\\mathbf", "\\mathsf", "\\operatorname", "\\text", "\\hat", "\\bar",
                 "\\overline", "\\tilde", "\\dot", "\\ddot", "\\vec", "\\mathcal"):
            return atom()
        if t == "\\begin":  # an environment (matrix): its widest row
            atom()  # the environment name
            rows: list[float] = [0.0]
            while pos < len(tokens) and tokens[pos] != "\\end":
                if tokens[pos] == "\\\\":
                    pos += 1
                    rows.append(0.0)
                    continue
                if tokens[pos] == "&":
                    pos += 1
                    rows[-1] += 1.5
                    continue
                rows[-1] += atom()
            pos += 1
            atom()  # the environment name after end
            return max(rows) + 1.0
        if t in ("^", "_"):
            return 0.7 * atom()
        if t in ("}", "&"):
            return 0.0
        if t in ("\\,", "\\;", "\\:", "\\!", "\\quad", "\\qquad"):
            return {"\\quad": 1.0, "\\qquad": 2.0}.get(t, 0.2)
        if t.startswith("\\") and len(t) > 2:
            return {"\\HDI": 3.0, "\\log": 3.0, "\\exp": 3.0, "\\sin": 3.0, "\\cos": 3.0, "\\max": 3.0,
                    "\\min": 3.0, "\\lim": 3.0}.get(t, 1.0)
        return 1.0

    def group() -> float:
        nonlocal pos
        w = 0.0
        while pos < len(tokens) and tokens[pos] != "}":
            w += atom()
        pos += 1
        return w

    total = 0.0
    while pos < len(tokens):
        total += atom()
    return total


def _pack(pieces: list[str], first: float, rest: float) -> list[str]:
    """Greedy lines of pieces: the first line holds ``first`` units, the others ``rest``."""
    lines: list[str] = []
    cur, w, cap = "", 0.0, first
    for p in pieces:
        pw = _width(p)
        if cur and w + pw > cap:
            lines.append(cur)
            cur, w, cap = "", 0.0, rest
        cur = f"{cur} {p}".strip()
        w += pw
    if cur:
        lines.append(cur)
    return lines


def formula_lines(expr: Any, *, macros: bool = True, whole: str | None = None) -> list[str]:
    """The formula as display lines for an ``aligned``/``split`` block (``&`` marks the
    alignment point): relations at the relation sign, sums between their top-level terms.
    A formula that fits on one line is one line without ``&``. The lines are SymPy's printing
    of ``expr`` cut at those places, nothing else."""
    whole = _latex(expr, macros) if whole is None else whole
    if _width(whole) <= LINE_UNITS:
        return [whole]
    terms = (" + ", " - ")
    op = _REL_OPS.get(type(expr))
    sides = _cut(whole, (f" {op} ",)) if op is not None else []
    if len(sides) == 2:
        lhs, rhs = sides[0], sides[1][len(op) + 1:].strip()
        rp = _cut(rhs, terms)
        if _width(lhs) <= LINE_UNITS / 3:
            body = _pack(rp, LINE_UNITS - _width(lhs) - 2, LINE_UNITS - 3)
            return [f"{lhs} &{op} {body[0]}"] + [rf"&\quad {{}}{line}" for line in body[1:]]
        left = _pack(_cut(lhs, terms), LINE_UNITS, LINE_UNITS - 3)
        right = _pack(rp, LINE_UNITS - 2, LINE_UNITS - 3)
        return ([f"&{left[0]}"] + [rf"&\quad {{}}{line}" for line in left[1:]]
                + [f"&{op} {right[0]}"] + [rf"&\quad {{}}{line}" for line in right[1:]])
    body = _pack(_cut(whole, terms), LINE_UNITS, LINE_UNITS - 3)
    if len(body) == 1:
        return [whole]
    return [f"&{body[0]}"] + [rf"&\quad {{}}{line}" for line in body[1:]]


@dataclass(eq=False)
class Formula:
    """One formula of a derivation: a step's relation or a result's expression."""

    claim: str
    name: str          # the step or result name
    kind: str          # "result" | "step"
    expr: Any
    description: str = ""

    def __post_init__(self) -> None:
        self._cache: dict[Any, Any] = {}   # printing large expressions is slow: once each

    @property
    def key(self) -> str:
        return self.name if self.kind == "result" else f"step_{self.name}"

    @property
    def label(self) -> str:
        return f"eq:{self.claim}:{self.key}"

    @property
    def filename(self) -> str:
        return f"{self.claim}_{self.key}.tex"

    def latex(self, *, macros: bool = True) -> str:
        """The whole formula on one line, printed by SymPy."""
        if ("latex", macros) not in self._cache:
            self._cache["latex", macros] = _latex(self.expr, macros)
        return self._cache["latex", macros]

    def lines(self, *, macros: bool = True) -> list[str]:
        if ("lines", macros) not in self._cache:
            self._cache["lines", macros] = formula_lines(self.expr, macros=macros, whole=self.latex(macros=macros))
        return self._cache["lines", macros]

    def typesettable(self) -> bool:
        """Whether the document can show it legibly (else it points to the snippet)."""
        lines = self.lines()
        return len(lines) <= MAX_LINES and max(_width(x) for x in lines) <= SCALE_LIMIT * LINE_UNITS


def _is_formula(obj: Any) -> bool:
    return isinstance(obj, (sp.Basic, sp.MatrixBase)) and not isinstance(obj, sp.logic.boolalg.BooleanAtom)


def formulas(claims: Iterable[str] | None = None) -> list[Formula]:
    """Every SymPy formula of the derivations (results first, then the steps whose relation is a
    SymPy object; a step stated in words is text, not a formula)."""
    from proofs import CLAIM_IDS, derivation

    out: list[Formula] = []
    for claim in claims or CLAIM_IDS:
        der = derivation(claim)
        out += [Formula(der.claim, r.name, "result", r.expr, r.description) for r in der.results.values()
                if _is_formula(r.expr)]
        out += [Formula(der.claim, s.name, "step", s.relation, s.why) for s in der.steps if _is_formula(s.relation)]
    return out


def _block(lines: list[str], env: str) -> str:
    if len(lines) == 1 and "&" not in lines[0]:
        return lines[0]
    return f"\\begin{{{env}}}\n" + " \\\\\n".join(lines) + f"\n\\end{{{env}}}"


def snippet(f: Formula) -> str:
    """The snippet file of a formula: one ``equation`` (``split`` when long) with its label."""
    from proofs.notation import MACROS

    tex = f.latex()
    used = sorted(m for m in MACROS.values() if re.search(re.escape(m) + r"(?![A-Za-z])", tex))
    return "\n".join([
        f"% {f.claim} {f.kind} {f.name}: {_comment(f.description)}"[:400],
        "% Generated by `python -m verify latex` from proofs.derivation(\"" + f.claim + "\"); needs amsmath, amssymb"
        + (f" and the macros {', '.join(used)} of macros.tex." if used else "."),
        "\\begin{equation}",
        _block(f.lines(), "split"),
        f"\\label{{{f.label}}}",
        "\\end{equation}",
        "",
    ])


def macro_file() -> str:
    """``\\newcommand`` for each macro of :data:`proofs.notation.MACROS`, meaning the symbol's
    plain spelling."""
    from proofs.notation import MACROS

    lines = ["% Notation of the verification export (proofs.notation.MACROS); \\input once in the preamble."]
    for sym, macro in MACROS.items():
        lines.append(f"\\newcommand{{{macro}}}{{{_latex(sym, False)}}}  % the symbol {sym}")
    return "\n".join(lines) + "\n"


# --- verdicts and evidence -----------------------------------------------------------------------


def load_report(path: str | Path) -> dict[str, Any]:
    """A ``report.json`` of ``python -m verify`` (schema checked by :func:`verify.outputs.report.read_report`)."""
    from verify.outputs.report import read_report

    doc = read_report(path, name="--report FILE")
    doc.setdefault("crashed", {})
    doc.setdefault("meta", {})
    doc["source"] = str(path)
    return doc


def run_checks(*, seed: int = 0, quick: bool = False, out: Path | None = None,
               claims: Iterable[str] | None = None) -> dict[str, Any]:
    """Run the claim checks and return them in report.json form (:func:`verify.cli.run_report`)."""
    from proofs import CLAIM_IDS
    from verify.run import run_report

    doc, _ = run_report(list(claims or CLAIM_IDS), seed=seed, quick=quick, out=out)
    doc["source"] = None
    return doc


def _num(v: Any) -> str:
    if isinstance(v, bool) or v is None:
        return str(v)
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        return f"{v:.6g}"
    return str(v)


def _flat_figures(figures: Any, prefix: str = "", depth: int = 0) -> list[tuple[str, str]]:
    """Scalar figures as (dotted key, value); long lists and deep tables are summarised."""
    rows: list[tuple[str, str]] = []
    if isinstance(figures, dict):
        for k, v in figures.items():
            key = f"{prefix}.{k}" if prefix else str(k)
            if isinstance(v, dict) and depth < 2:
                rows += _flat_figures(v, key, depth + 1)
            elif isinstance(v, dict):
                rows.append((key, f"(table of {len(v)} entries; see report.json)"))
            elif isinstance(v, (list, tuple)):
                if len(v) <= 8 and all(not isinstance(x, (dict, list, tuple)) for x in v):
                    rows.append((key, "[" + ", ".join(_num(x) for x in v) + "]"))
                elif all(isinstance(x, (list, tuple)) and len(x) <= 4 and all(
                        not isinstance(y, (dict, list, tuple)) for y in x) for x in v) and len(v) <= 6:
                    rows.append((key, "[" + ", ".join("(" + ", ".join(_num(y) for y in x) + ")" for x in v) + "]"))
                else:
                    rows.append((key, f"(list of {len(v)} entries; see report.json)"))
            else:
                rows.append((key, _num(v)))
    return rows


# --- the document --------------------------------------------------------------------------------

_PREAMBLE = r"""\documentclass[11pt,a4paper]{article}
\usepackage[margin=2cm]{geometry}
\usepackage{amsmath,amssymb}
\usepackage{graphicx}
\usepackage{longtable}
\input{macros.tex}
\allowdisplaybreaks
\renewcommand{\labelitemi}{$\bullet$}  % the text bullet would pull in a bitmap TS1 font
\sloppy\emergencystretch=3em
\setlength{\parindent}{0pt}
\setlength{\parskip}{0.4em}
\newsavebox{\fitbox}
% a display that is wider than the line is scaled down to the line width (never up)
\newcommand{\fitmath}[1]{\sbox{\fitbox}{$\displaystyle #1$}%
  \ifdim\wd\fitbox>0.9\linewidth\resizebox{0.9\linewidth}{!}{\usebox{\fitbox}}\else\usebox{\fitbox}\fi}
\newcommand{\verdict}[1]{\fbox{\textbf{#1}}}
"""


def _display(f: Formula, snippets_dir: str) -> str:
    if not f.typesettable():
        return "\n".join([
            "\\begin{equation}",
            f"\\parbox{{0.85\\linewidth}}{{\\small\\centering (a formula of {len(f.latex())} characters of \\LaTeX, "
            f"too wide to read here: see \\texttt{{{escape(snippets_dir + '/' + f.filename)}}})}}",
            f"\\label{{{f.label}}}",
            "\\end{equation}",
        ])
    return "\n".join(["\\begin{equation}", f"\\fitmath{{{_block(f.lines(), 'aligned')}}}",
                      f"\\label{{{f.label}}}", "\\end{equation}"])


def _sentence(text: str) -> str:
    """Text (:func:`verify.outputs.texify.texify`) ending in a full stop (so that what follows reads as a new sentence)."""
    text = str(text).strip()
    return texify(text) + ("" if not text or text[-1] in ".!?)" else ".")


def _items(rows: list[str]) -> list[str]:
    if not rows:
        return []
    return ["\\begin{itemize}"] + [f"\\item {r}" for r in rows] + ["\\end{itemize}"]


def _claim_section(der: Any, result: dict | None, crashed: str | None, plots: dict[str, str],
                   snippets_dir: str, index: dict[tuple[str, str, str], Formula]) -> list[str]:
    from proofs.notation import to_latex

    out = [f"\\section{{{der.claim}: {texify(der.title)}}}", f"\\label{{sec:{der.claim}}}", "",
           f"\\textbf{{Claim as stated.}} {texify(der.stated)}", ""]
    if result is not None:
        out.append(f"\\textbf{{Verdict:}} \\verdict{{{escape(result['verdict'])}}}")
        out += ["", f"\\emph{{{texify(result['headline'])}}}"]
        if result.get("corrections"):
            out += ["", "\\textbf{Corrections} (details that are off; they do not set the verdict):"]
            out += _items([f"\\emph{{Stated:}} {texify(x['stated'])}. \\emph{{Derived:}} {_sentence(x['derived'])}"
                           for x in result["corrections"]])
        if result.get("premise"):
            out += ["", "\\textbf{Premise findings:}"]
            out += _items([f"{texify(x['outcome'])}: {texify(x['finding'])} (regime: {texify(x['regime'])})"
                           for x in result["premise"]])
        if result.get("limits"):
            out += ["", "\\textbf{Limits} (failures outside the stated scope):"]
            out += _items([f"{_sentence(x['finding'])} \\emph{{Holds under:}} {_sentence(x['boundary'])}"
                           for x in result["limits"]])
        if result.get("restored_by"):
            out += ["", "\\textbf{Restored by:}"] + _items([texify(x) for x in result["restored_by"]])
        if result.get("assumptions"):
            out += ["", "\\textbf{The verdict rests on these model assumptions:}"]
            out += _items([texify(a) for a in result["assumptions"]])
    elif crashed is not None:
        last = crashed.strip().splitlines()[-1] if crashed.strip() else "unknown error"
        out.append(f"\\textbf{{Verdict:}} \\verdict{{not available: the claim check crashed}} ({_code(last)})")
    else:
        out.append("\\textbf{Verdict:} \\verdict{not available: the report has no entry for this claim}")
    n_ok = sum(s.checked for s in der.steps)
    out += ["", "\\subsection*{Assumptions of the derivation}",
            f"Derivation status: \\textbf{{{escape(der.status)}}}, {n_ok} of {len(der.steps)} steps checked. "
            "Kind \\emph{setting} defines the objects; kind \\emph{model} is a restriction beyond them."]
    rows = []
    for a in der.assumptions.values():
        row = f"{_code(a.name)} ({a.kind}): {texify(a.statement)}"
        if _is_formula(a.expr):
            row += f" \\quad ${to_latex(a.expr, macros=True)}$"
        rows.append(row)
    out += _items(rows)

    out += ["", "\\subsection*{Derivation steps}",
            "Each relation is printed by SymPy from the object that was checked; the method names how."]
    for k, s in enumerate(der.steps, 1):
        uses = f" Uses: {_codes(s.uses)}." if s.uses else ""
        head = (f"\\textbf{{Step {k}}} \\texttt{{{escape(s.name)}}} --- checked by {_code(s.method)}: "
                f"\\textbf{{{escape(s.status)}}}. {_sentence(s.why)}{uses}")
        if s.status != "checked" and s.detail:
            head += f" \\emph{{Detail:}} {texify(s.detail)}"
        out += ["", head]
        if _is_formula(s.relation):
            out.append(_display(index[der.claim, "step", s.name], snippets_dir))
        else:
            out.append(f"\\begin{{quote}}{texify(s.relation)}\\end{{quote}}")

    out += ["", "\\subsection*{Results}"]
    for r in der.results.values():
        uses = f" Uses: {_codes(r.uses)}." if r.uses else ""
        args = ""
        if r.args:
            args = " Arguments: " + ", ".join(f"${to_latex(a, macros=True)}$" for a in r.args[:12]) + (
                ", \\ldots" if len(r.args) > 12 else "") + "."
        out += ["", f"\\textbf{{Result}} \\texttt{{{escape(r.name)}}}: {_sentence(r.description)}{args}{uses}"]
        if _is_formula(r.expr):
            out.append(_display(index[der.claim, "result", r.name], snippets_dir))
        else:
            out.append(f"\\begin{{quote}}{texify(r.expr)}\\end{{quote}}")

    if der.comparisons:
        out += ["", "\\subsection*{Derived versus stated}"]
        rows = []
        for c in der.comparisons:
            row = (f"\\texttt{{{escape(c.name)}}}: \\textbf{{{'holds' if c.holds else 'does not hold'}}}. "
                   f"\\emph{{Stated:}} {texify(c.stated)} \\emph{{Derived:}} {texify(c.derived)} "
                   f"\\emph{{Method:}} {texify(c.method)}.")
            if c.detail:
                row += f" {texify(c.detail)}"
            rows.append(row)
        out += _items(rows)

    if result is not None:
        out += ["", "\\subsection*{Evidence per part (role and effect)}"]
        for p in result.get("evidence", {}).get("parts", []):
            role = p["role"] + (f", reading {p['reading']}" if p.get("reading") else "")
            out += ["", f"\\textbf{{{_code(p['id'])}}} ({texify(role)}): \\verdict{{{escape(p['effect'])}}}. "
                        f"{texify(p['statement'])}"]
            rows = []
            sym = p.get("symbolic")
            if sym:
                rows.append(f"symbolic: {escape(sym['status'])}, {sym['n_checked']}/{sym['n_steps']} steps checked"
                            + (f"; results {_codes(sym['results'])}" if sym.get("results") else ""))
            num = p.get("numeric")
            if num:
                rows.append(f"numeric (agreement: \\emph{{{escape(num['agreement'])}}}): {texify(num['summary'])}")
                figs = _flat_figures(num.get("figures", {}))
                if figs:
                    rows.append("figures: " + "; ".join(f"{_code(k)} $=$ {texify(v)}" for k, v in figs))
            cx = p.get("counterexample")
            if cx:
                rows.append(f"counterexample: {texify(cx['description'])}"
                            + (f" (replay: \\texttt{{python -m verify replay {escape(cx['file'])}}})" if cx.get("file") else ""))
            if p.get("restored_by"):
                rows.append(f"restored by: {texify(p['restored_by'])}")
            if p.get("assumptions"):
                rows.append("assumptions: " + "; ".join(texify(a) for a in p["assumptions"]))
            if p.get("reason"):
                rows.append(f"not checkable: {texify(p['reason'])}")
            out += _items(rows)
        for name, path in plots.items():
            out += ["\\begin{center}", f"\\includegraphics[width=0.72\\linewidth]{{{path}}}\\\\",
                    f"\\small {der.claim}: {_code(name)}", "\\end{center}"]
    return out


def render_document(report: dict[str, Any], *, plots: dict[str, dict[str, str]] | None = None,
                    snippets_dir: str = "snippets", formulas_: list[Formula] | None = None) -> str:
    """The whole document for ``report`` (report.json form); plots maps claim -> {name: file
    relative to the document}; ``formulas_`` reuses already printed formulas."""
    from proofs import CLAIM_IDS, derivation
    from verify.outputs.report import verdict_rows

    index = {(f.claim, f.kind, f.name): f for f in (formulas_ if formulas_ is not None else formulas())}

    plots = plots or {}
    by_id = {c["id"]: c for c in report["claims"]}
    crashed = report.get("crashed", {})
    meta = report.get("meta", {})
    src = report.get("source")
    origin = (f"verdicts and figures read from \\texttt{{{escape(src)}}}" if src else
              "verdicts and figures from running the claim checks")
    sizes = "quick sizes" if meta.get("quick") else "full sizes"
    out = [_PREAMBLE, "\\title{Verification of \\emph{Multi-Head Attention as Ensemble Nadaraya--Watson "
           "Estimation} (Fokou\\'e, 2026)}", "\\author{generated by \\texttt{python -m verify latex}}",
           "\\date{}", "\\begin{document}", "\\maketitle", "",
           f"Every formula below is printed by SymPy from the object the derivation checked; {origin} "
           f"(seed {escape(meta.get('seed', '?'))}, {sizes}). Each formula is also in "
           f"\\texttt{{{escape(snippets_dir)}/}} as an \\texttt{{equation}} with the label shown by its number "
           "(\\texttt{eq:C5:mse\\_line} for result \\texttt{mse\\_line} of C5, "
           "\\texttt{eq:C5:step\\_mse\\_line} for the step of that name); the notation macros are in "
           "\\texttt{macros.tex}.", "",
           "A claim's verdict is set by its core parts alone; details that are off are \\emph{corrections}, "
           "premise parts give \\emph{premise findings}, failures outside the stated scope are \\emph{limits} "
           "(counts c/p/l below).", "",
           "\\begin{longtable}{l l l p{0.55\\linewidth}}",   # may break across pages: it starts on page 1
           "\\textbf{claim} & \\textbf{verdict} & \\textbf{c/p/l} & \\textbf{headline} \\\\ \\hline \\endhead"]
    rows = {r["id"]: r for r in verdict_rows(report)}
    for claim in CLAIM_IDS:
        r = rows.get(claim)
        if r is None:
            out.append(f"{claim} & not in the report & & \\\\")
            continue
        out.append(f"{claim} & \\textbf{{{escape(r['verdict'])}}} & {r['corrections']}/{r['premise']}/{r['limits']} "
                   f"& \\small {texify(r['headline'])} \\\\")
    out += ["\\end{longtable}", ""]
    for claim in CLAIM_IDS:
        der = derivation(claim)
        out += _claim_section(der, by_id.get(claim), crashed.get(claim), plots.get(claim, {}), snippets_dir, index)
        out.append("\\clearpage")
    out += ["\\end{document}", ""]
    return "\n".join(out)


def _find_plot(path: str, report_dir: Path | None) -> Path | None:
    p = Path(path)
    for cand in (p, *( [report_dir / p, report_dir / "plots" / p.name] if report_dir else [])):
        if cand.is_file():
            return cand
    return None


def write_export(out_dir: str | Path, report: dict[str, Any]) -> Path:
    """Write verification.tex, macros.tex, snippets/ and plots/ under ``out_dir``; returns the .tex."""
    out = Path(out_dir)
    try:
        (out / "snippets").mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise fail("-o DIR", f"{str(out)!r} ({exc.strerror})", "a directory that can be created") from None
    atomic_write_text(out / "macros.tex", macro_file(), encoding="ascii")
    all_formulas = formulas()
    for f in all_formulas:
        atomic_write_text(out / "snippets" / f.filename, snippet(f), encoding="ascii")
    src = report.get("source")
    report_dir = Path(src).parent if src else None
    plots: dict[str, dict[str, str]] = {}
    for c in report["claims"]:
        for name, path in c.get("evidence", {}).get("plots", {}).items():
            found = _find_plot(path, report_dir)
            if found is None:
                continue
            target = out / "plots" / f"{c['id']}_{name}.png"
            if found.resolve() != target.resolve():
                atomic_write_bytes(target, found.read_bytes())
            plots.setdefault(c["id"], {})[name] = target.relative_to(out).as_posix()
    tex = out / "verification.tex"
    atomic_write_text(tex, render_document(report, plots=plots, formulas_=all_formulas), encoding="ascii")
    return tex


# --- pdflatex -------------------------------------------------------------------------------------


class PdfLatexMissing(VerifyError):
    """``--pdf`` without pdflatex on the PATH."""


def _log_errors(log: str, context: int = 3) -> list[str]:
    lines = log.splitlines()
    out: list[str] = []
    for k, line in enumerate(lines):
        if line.startswith("!") or re.match(r"^[^:\s]+\.tex:\d+:", line):
            out += lines[k: k + context + 1]
            out.append("...")
    return out


def compile_pdf(tex: Path, *, runs: int = 2) -> Path:
    """pdflatex ``tex`` ``runs`` times (twice for the references) into a temporary folder beside it,
    then the PDF moved into place with ``os.replace`` (a killed or failed compilation leaves the
    previous PDF whole). Raises :class:`PdfLatexMissing` without pdflatex and RuntimeError (with the
    log's error lines) when the compilation fails."""
    exe = shutil.which("pdflatex")
    if exe is None:
        raise PdfLatexMissing("--pdf: expected pdflatex on the PATH (Debian: apt-get install texlive-latex-base "
                              "texlive-latex-recommended), got none; the .tex files are written, compile them "
                              "with any LaTeX")
    tex = Path(tex).absolute()
    # a visible subfolder named relative to the .tex: TeX's default openout_any = p refuses to
    # write under a dot-name and, for a relative -o, a path relative to another folder
    build = Path(tempfile.mkdtemp(prefix=f"{tex.stem}.pdflatex-", dir=tex.parent))
    try:
        for _ in range(runs):
            proc = subprocess.run([exe, "-interaction=nonstopmode", "-halt-on-error", "-file-line-error",
                                   f"-output-directory={build.name}", tex.name],
                                  cwd=tex.parent, capture_output=True, text=True, errors="replace")
            if proc.returncode != 0:
                log_path = build / f"{tex.stem}.log"
                log = log_path.read_text(errors="replace") if log_path.is_file() else proc.stdout
                raise RuntimeError("pdflatex failed on " + str(tex) + ":\n" + "\n".join(_log_errors(log) or
                                                                                        log.splitlines()[-30:]))
        os.replace(build / f"{tex.stem}.pdf", tex.with_suffix(".pdf"))
    finally:
        shutil.rmtree(build, ignore_errors=True)
    return tex.with_suffix(".pdf")


# --- command line ---------------------------------------------------------------------------------


class _ArgParser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]
        raise VerifyError(f"arguments: {message} (usage: {' '.join(self.format_usage().split()[1:])})")


def cli_latex(argv: list[str]) -> int:
    """``python -m verify latex``: 0 written (and compiled), 1 a check crashed or pdflatex failed,
    2 bad arguments or no pdflatex for ``--pdf``."""
    p = _ArgParser(prog="python -m verify latex",
                   description="Write every claim's derivation, verdict and evidence as a LaTeX document, "
                               "one snippet per formula and the notation macros.")
    p.add_argument("-o", "--out", type=Path, default=Path("latex-out"), metavar="DIR",
                   help="output folder (default ./latex-out)")
    p.add_argument("--pdf", action="store_true", help="compile verification.pdf with pdflatex (twice)")
    p.add_argument("--quick", action="store_true", help="small sizes for the claim checks")
    p.add_argument("--seed", type=int, default=None, help="seed of the claim checks (default 0)")
    p.add_argument("--report", type=Path, default=None, metavar="FILE",
                   help="take verdicts and figures from this report.json instead of running the checks")
    try:
        args = p.parse_args(argv)
        if args.report is not None and (args.quick or args.seed is not None):
            raise fail("--report FILE", "together with --quick/--seed",
                       "either --report (its verdicts were computed with its own seed and sizes) or --quick/--seed")
        if args.seed is not None:
            valid_seed("--seed", args.seed)
        if args.out.exists() and not args.out.is_dir():
            raise fail("-o DIR", f"{str(args.out)!r}, which exists and is not a folder", "a folder, or a path for one")
        report = load_report(args.report) if args.report is not None else None
        from proofs import all_derivations

        ders = all_derivations()
        failed = [f"{d.claim}/{s.name}" for d in ders for s in d.failed]
        if report is None:
            report = run_checks(seed=args.seed or 0, quick=args.quick, out=args.out / "evidence")
        tex = write_export(args.out, report)
    except SystemExit as exc:  # --help
        return int(exc.code or 0)
    except VerifyError as exc:
        print(error_line(exc), file=sys.stderr)
        return 2
    print(f"wrote {tex}, {args.out / 'macros.tex'} and {len(list((args.out / 'snippets').glob('*.tex')))} "
          f"snippets in {args.out / 'snippets'}")
    status = 0
    for claim, err in report["crashed"].items():
        if args.report is not None:  # reported when that report was made; the document says so too
            print(f"note: {args.report} records that the {claim} check crashed", file=sys.stderr)
        else:
            print(f"{claim} check crashed:\n{err}", file=sys.stderr)
            status = 1
    if failed:
        print(f"error: derivation steps failed to check: {', '.join(failed)}", file=sys.stderr)
        status = 1
    if args.pdf:
        try:
            pdf = compile_pdf(tex)
        except PdfLatexMissing as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 2
        except RuntimeError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 1
        print(f"wrote {pdf}")
    return status
