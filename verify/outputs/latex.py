"""LaTeX export: every claim's derivation, verdict and evidence as one document, one snippet per formula.

``python -m verify latex`` writes ``DIR/verification.tex`` (a standalone ``article`` for Debian's
texlive-latex-base: the walk of the report, :func:`verify.outputs.document.walk`),
``DIR/snippets/<claim>_<name>.tex`` (one ``equation`` labelled ``eq:<claim>:<name>`` per formula),
``DIR/macros.tex`` (:data:`proofs.notation.MACROS`) and ``DIR/plots/``. Texts are the markup
(:func:`text`; refused text is escaped, :func:`escape`); formulas are SymPy's printing broken over
lines (:func:`formula_lines`). A ``--report`` may come from anyone: its paths must resolve inside its
folder and its names are checked (:data:`NAME_CHARS`, :data:`proofs.CLAIM_IDS`) before anything is written.
"""

from __future__ import annotations

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

from proofs import CLAIM_IDS, DERIVATIONS, all_derivations, derivation, markup
from proofs.notation import LATEX_NAMES, MACROS, SPELLED, Printer
from verify._validate import error_line, fail, received
from verify.errors import VerifyError
from verify.io import atomic_write_bytes, atomic_write_text, output_folder
from verify.outputs.document import Block, Field, Figure, Fold, Heading, Items, Para, Table, walk
from verify.outputs.document import Formula as FormulaBlock
from verify.outputs.plots import MAX_PLOT_BYTES, plot_file
from verify.outputs.report import read_report

__all__ = ["Formula", "escape", "text", "formulas", "formula_lines", "macro_file", "snippet", "load_report",
           "run_checks", "render_document", "write_export", "compile_pdf", "run_latex", "NAME_CHARS", "MAX_NAME",
           "MAX_PLOT_BYTES"]

# --- text ----------------------------------------------------------------------------------------

#: Prose characters outside ASCII, as LaTeX spells them in OT1 (the document stays ASCII, so it
#: compiles with any input encoding and pulls in no TS1 font).
_PROSE = {"–": "--", "—": "---", "‘": "`", "’": "'", "“": "``", "”": "''", "…": r"\ldots{}",
          "°": r"\ensuremath{^\circ}", "µ": r"\ensuremath{\mu}", "§": r"\S{}", "\u00a0": "~", "ß": r"\ss{}", "æ": r"\ae{}", "Æ": r"\AE{}",
          "œ": r"\oe{}", "Œ": r"\OE{}", "ø": r"\o{}", "Ø": r"\O{}", "ł": r"\l{}", "Ł": r"\L{}", "ı": r"\i{}"}
#: Combining accents (after NFD) and their text-mode accent commands.
_COMBINING = {"\u0300": "`", "\u0301": "'", "\u0302": "^", "\u0303": "~", "\u0308": '"', "\u0304": "=",
              "\u0307": ".", "\u030a": "r", "\u0327": "c", "\u030c": "v", "\u0306": "u", "\u030b": "H",
              "\u0328": "k"}
#: ASCII characters that TeX would interpret (or OT1 would set as another glyph) in text mode.
_SPECIAL = {"\\": r"\textbackslash{}", "{": r"\{", "}": r"\}", "$": r"\$", "&": r"\&", "#": r"\#", "%": r"\%",
            "_": r"\_", "^": r"\textasciicircum{}", "~": r"\textasciitilde{}", "<": r"\textless{}",
            ">": r"\textgreater{}", "|": r"\textbar{}", '"': "''"}
#: Unicode mathematics in text that is not markup: each character as its math command.
_MATH_CHARS = {**{u: f"\\{name}" for name, u in markup._GREEK.items()},
               **{u: f"\\{name}" for name, (u, _a, _s) in reversed(list(markup._SYMBOLS.items()))
                  if len(u) == 1 and not u.isascii()},
               "−": "-", "∑": r"\sum", "∏": r"\prod", "∫": r"\int", "⋅": r"\cdot", "∥": r"\parallel",
               "⊥": r"\perp", "′": "'", "²": "^{2}", "³": "^{3}", "¹": "^{1}", "⁻": "^{-}", "√": r"\surd", "ᵀ": r"^{\top}"}
_MATH_CHARS.update({ch: f"_{{{d}}}" for d, ch in zip("0123456789", "₀₁₂₃₄₅₆₇₈₉")})
_MATH_CHARS.update({ch: f"^{{{d}}}" for d, ch in zip("0456789", "⁰⁴⁵⁶⁷⁸⁹")})


def _non_ascii(ch: str) -> str:
    """One non-ASCII prose character in ASCII LaTeX: a dash, quote or letter with its accent;
    anything else as a visible ``[U+XXXX]``."""
    if ch in _PROSE:
        return _PROSE[ch]
    base, *marks = unicodedata.normalize("NFD", ch)
    if base.isascii() and base.isalpha() and marks and all(m in _COMBINING for m in marks):
        out = base if base not in "ij" else "\\" + base   # dotless i/j under an accent
        for m in marks:
            out = f"\\{_COMBINING[m]}{{{out}}}"
        return out
    return f"[U+{ord(ch):04X}]"


def _prose(tex: str) -> str:
    """Rendered prose (markup's LaTeX of a text span) in ASCII, straight double quotes as TeX's."""
    quote = iter(("``", "''") * (tex.count('"') // 2 + 1))
    return "".join(next(quote) if ch == '"' else ch if ch.isascii() else _non_ascii(ch) for ch in tex)


def escape(value: Any) -> str:
    """Any text shown literally in text mode (text the markup refuses, names): ASCII, TeX's specials
    escaped, Unicode mathematics as inline mathematics, a control character as ``[U+XXXX]``."""
    out: list[str] = []
    for ch in unicodedata.normalize("NFC", str(value)):
        if ch in _COMBINING and out and out[-1].isascii():   # an accent on the character before it
            out[-1] = f"\\{_COMBINING[ch]}{{{out[-1]}}}"
        elif ch in _SPECIAL:
            out.append(_SPECIAL[ch])
        elif unicodedata.category(ch)[0] == "C":
            out.append(f"[U+{ord(ch):04X}]")
        elif ch.isascii():
            out.append(ch)
        elif ch in _MATH_CHARS:
            out.append(f"\\ensuremath{{{_MATH_CHARS[ch]}}}")
        else:
            out.append(_non_ascii(ch))
    return "".join(out)


def text(value: Any) -> str:
    """A text of the package (markup) as LaTeX, by :func:`proofs.markup.to_latex`; a text the markup
    refuses (another version's report, a traceback) is escaped, so nothing reaches TeX as a command."""
    if not isinstance(value, str):
        return escape(value)
    try:
        spans = markup.parse(value, "text")
    except markup.MarkupError:
        return escape(value)
    return "".join(_prose(markup.to_latex((s,))) if isinstance(s, markup.Text) else markup.to_latex((s,))
                   for s in spans)


def _comment(value: Any) -> str:
    """One line of a LaTeX comment in plain ASCII (the words of a text without its markup)."""
    try:
        words = markup.to_ascii(value) if isinstance(value, str) else str(value)
    except markup.MarkupError:
        words = markup.plain_ascii(str(value))
    return " ".join("".join(c if c.isascii() and c.isprintable() else "?" for c in words).split())


# --- formulas ------------------------------------------------------------------------------------

#: Characters of rendered mathematics per line the breaker aims for (about 15 cm of 11 pt display
#: mathematics: the 17 cm line less the indent of a continued line and the equation number).
LINE_UNITS = 55.0

_REL_OPS = {sp.Equality: "=", sp.Unequality: r"\neq", sp.StrictLessThan: "<", sp.StrictGreaterThan: ">",
            sp.LessThan: r"\leq", sp.GreaterThan: r"\geq"}
_FUNCTIONS = {sp.exp: r"\exp", sp.log: r"\log", sp.sqrt: r"\sqrt"}

class _Names(dict):
    """The symbol spelling of :func:`proofs.notation.to_latex`: the macros (if asked), then
    :data:`~proofs.notation.LATEX_NAMES`, then the spelling registered for the symbol's name."""

    def __init__(self, macros: bool) -> None:
        super().__init__()
        self.macros = macros

    def get(self, sym: Any, default: Any = None) -> Any:
        if self.macros and sym in MACROS:
            return MACROS[sym]
        if sym in LATEX_NAMES:
            return LATEX_NAMES[sym]
        return SPELLED.get(getattr(sym, "name", None), default) if isinstance(sym, sp.Symbol) else default


class _MemoPrinter(Printer):
    """The project's LaTeX printer with the project's spelling, printing each subexpression once (the
    breaker prints parts of formulas printed whole, and the derivations share subexpressions)."""

    def __init__(self, macros: bool) -> None:
        super().__init__({"symbol_names": _Names(macros)})
        self._memo: dict[int, tuple[Any, str]] = {}

    def _print(self, expr: Any, **kwargs: Any) -> str:
        if kwargs or not isinstance(expr, sp.Basic):
            return super()._print(expr, **kwargs)
        # keyed by identity (the node kept alive beside its LaTeX): equal is not enough, SymPy
        # counts Subs objects at different points as equal
        hit = self._memo.get(id(expr))
        if hit is None or hit[0] is not expr:
            hit = self._memo[id(expr)] = (expr, super()._print(expr))
        return hit[1]


_PRINTERS: dict[bool, _MemoPrinter] = {}


def _latex(expr: Any, macros: bool) -> str:
    """``proofs.notation.to_latex(expr, macros=macros)``, printed by one memoising printer per
    spelling (the derivations are built once per process and their large expressions share terms)."""
    printer = _PRINTERS.get(macros)
    if printer is None:
        printer = _PRINTERS[macros] = _MemoPrinter(macros)
    return printer.doprint(expr)


#: Widths of the tokens that are not one character wide (every other token is).
_WIDTHS = {"}": 0.0, "&": 0.0, "\\,": 0.2, "\\;": 0.2, "\\:": 0.2, "\\!": 0.2, "\\quad": 1.0, "\\qquad": 2.0,
           **dict.fromkeys(("\\HDI", "\\log", "\\exp", "\\sin", "\\cos", "\\max", "\\min", "\\lim"), 3.0)}


def _width(tex: str) -> float:
    """A rough width of rendered mathematics in character units (fractions count their wider
    part, scripts 0.7, matrices their widest row)."""
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
        if t in ("\\left", "\\right", "\\big", "\\Big", "\\bigg", "\\Bigg", "\\Bigl", "\\Bigr"):
            pos += 1
            return 0.5
        if t in ("\\mathrm", "\\mathit", "\\mathbf", "\\mathsf", "\\operatorname", "\\text", "\\hat", "\\bar",
                 "\\overline", "\\tilde", "\\dot", "\\ddot", "\\vec", "\\mathcal", "\\mathbb", "\\boldsymbol"):
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
        return _WIDTHS.get(t, 1.0)

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


def _parenthesised(pieces: list[str]) -> list[str]:
    r"""Pieces in parentheses: ``\left( ... \right)`` on one line, ``\Bigl( ... \Bigr)`` (which
    need not pair on a line) over several."""
    if len(pieces) == 1:
        return [rf"\left({pieces[0]}\right)"]
    return [r"\Bigl(" + pieces[0], *pieces[1:-1], pieces[-1] + r"\Bigr)"]


def _pieces(expr: Any, macros: bool) -> list[str]:
    """``expr`` as pieces of LaTeX, each printed by SymPy, between which a line may break: the
    terms of a sum (with their signs), the factors of a product, ``1/den`` times a numerator, the
    base of a power or the argument of exp/log/sqrt in breakable parentheses; recursively, until
    each piece fits a line or cannot be broken (a matrix, a symbol, a fraction's denominator)."""
    tex = _latex(expr, macros)
    if _width(tex) <= LINE_UNITS or not isinstance(expr, sp.Expr):
        return [tex]
    if isinstance(expr, sp.Add):
        out: list[str] = []
        for k, term in enumerate(expr.as_ordered_terms()):
            sign = ""
            if k and term.could_extract_minus_sign():
                sign, term = "- ", -term
            elif k:
                sign = "+ "
            sub = _pieces(term, macros)
            out += [sign + sub[0], *sub[1:]]
        return out
    if isinstance(expr, sp.Mul) and expr.could_extract_minus_sign():
        sub = _pieces(-expr, macros)
        return ["- " + sub[0], *sub[1:]]
    if isinstance(expr, sp.Subs):   # \left. body \right|_{x = a}: the bar closes the last line
        body, bar = _pieces(expr.expr, macros), tex.rfind(r"\right|")
        if len(body) > 1 and bar > 0:
            return [*body[:-1], body[-1] + r" \Bigr|" + tex[bar + len(r"\right|"):]]
        return [tex]
    if isinstance(expr, (sp.Mul, sp.Pow)):
        num, den = sp.fraction(expr)
        if den != 1:
            lower = _pieces(den, macros)
            lead = [rf"\frac{{1}}{{{lower[0]}}}"] if len(lower) == 1 else _powered(_parenthesised(lower), "-1")
            if num == 1:
                return lead
            body = _pieces(num, macros)
            return [*lead, *(_parenthesised(body) if isinstance(num, sp.Add) else body)]
        if isinstance(expr, sp.Mul):
            out = []
            for f in expr.as_ordered_factors():
                sub = _pieces(f, macros)
                out += _parenthesised(sub) if isinstance(f, sp.Add) else sub
            return out
        base = _pieces(expr.base, macros)
        if len(base) > 1:
            return _powered(_parenthesised(base), _latex(expr.exp, macros))
        return [tex]
    if isinstance(expr, sp.Function) and len(expr.args) == 1 and expr.func in _FUNCTIONS:
        arg = _pieces(expr.args[0], macros)
        if len(arg) > 1:
            body = _parenthesised(arg)
            return [_FUNCTIONS[expr.func] + body[0], *body[1:]]
    return _around_argument(expr, tex, macros)


def _powered(pieces: list[str], exp: str) -> list[str]:
    return [*pieces[:-1], pieces[-1] + "^{" + exp + "}"]


def _balanced(tex: str) -> bool:
    depth = 0
    for ch in re.sub(r"\\.", "", tex):
        depth += {"{": 1, "}": -1}.get(ch, 0)
        if depth < 0:
            return False
    return depth == 0


def _around_argument(expr: Any, tex: str, macros: bool) -> list[str]:
    r"""Any other node (a derivative, an expectation, an applied function) that SymPy prints as
    ``prefix \left(arg\right) suffix`` around one of its arguments: the argument broken in
    ``\Bigl( ... \Bigr)``, if prefix and suffix are whole groups once a brace pair around the
    argument (``E{\left(...\right)}``) is dropped."""
    for arg in getattr(expr, "args", ()):
        if not isinstance(arg, sp.Expr):
            continue
        inner = r"\left(" + _latex(arg, macros) + r"\right)"
        if tex.count(inner) != 1:
            continue
        prefix, suffix = tex.split(inner)
        if prefix.endswith("{") and suffix.startswith("}"):
            prefix, suffix = prefix[:-1], suffix[1:]
        body = _pieces(arg, macros)
        if len(body) > 1 and _balanced(prefix) and _balanced(suffix):
            body = _parenthesised(body)
            return [prefix + body[0], *body[1:-1], body[-1] + suffix]
    return [tex]


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


@dataclass(frozen=True)
class Line:
    """One display line: ``left & mid body`` (``left`` before the alignment point, ``mid`` a
    relation sign or an indent, ``body`` the mathematics that may be scaled to the page)."""

    left: str
    mid: str
    body: str

    def __str__(self) -> str:
        return f"{self.left}&{self.mid} {self.body}".rstrip() if self.mid else f"{self.left}&{self.body}"


def _continued(lines: list[str]) -> list[Line]:
    return [Line("", r"\quad", "{}" + line) for line in lines]


def _relation_lines(lhs: Any, op: str, rhs: Any, macros: bool, prefix: str = "") -> list[Line]:
    """``lhs op rhs`` aligned at ``op``; each side broken into lines of pieces."""
    left = _latex(lhs, macros)
    right = _pieces(rhs, macros)
    lw = _width(prefix) + _width(left)
    if lw <= LINE_UNITS / 3:   # continued lines start at the sign too, so all are as narrow as the first
        body = _pack(right, LINE_UNITS - lw - 2, LINE_UNITS - lw - 3)
        if _width(body[0]) > LINE_UNITS - lw:   # a first piece too wide beside the left side
            return [Line(prefix + left + " ", op, ""), *_continued(body)]
        return [Line(prefix + left + " ", op, body[0]), *_continued(body[1:])]
    lp = _pack(_pieces(lhs, macros), LINE_UNITS, LINE_UNITS - 3)
    rp = _pack(right, LINE_UNITS - 2, LINE_UNITS - 3)
    return [Line(prefix, "", lp[0]), *_continued(lp[1:]), Line("", op, rp[0]), *_continued(rp[1:])]


def _entry(k: int, shape: tuple[int, int]) -> str:
    """The label of a matrix's ``k``-th entry: its index in a vector, its row and column otherwise."""
    i, j = (k, None) if 1 in shape else divmod(k, shape[1])
    return rf"\text{{entry }} ({i + 1}{'' if j is None else f', {j + 1}'})\colon\quad "


def _lines(expr: Any, macros: bool) -> list[Line]:
    """:func:`formula_lines` as :class:`Line` objects (none: the formula fits one line)."""
    if _width(_latex(expr, macros)) <= LINE_UNITS:
        return []
    op = _REL_OPS.get(type(expr))
    if op is not None:
        lhs, rhs = expr.args
        if isinstance(lhs, sp.MatrixBase) and isinstance(rhs, sp.MatrixBase) and lhs.shape == rhs.shape:
            return [line for k, (a, b) in enumerate(zip(lhs, rhs))
                    for line in _relation_lines(a, op, b, macros, _entry(k, lhs.shape))]
        return _relation_lines(lhs, op, rhs, macros)
    if isinstance(expr, sp.And):
        out: list[Line] = []
        for k, arg in enumerate(expr.args):
            sub = _lines(arg, macros) or [Line("", "", _latex(arg, macros))]
            if k:
                sub[0] = Line(r"\wedge\ " + sub[0].left, sub[0].mid, sub[0].body)
            out += sub
        return out
    if isinstance(expr, sp.MatrixBase):
        out = []
        for k, entry in enumerate(expr):
            body = _pack(_pieces(entry, macros), LINE_UNITS - 12, LINE_UNITS - 3)
            out += [Line(_entry(k, expr.shape), "", body[0]), *_continued(body[1:])]
        return out
    body = _pack(_pieces(expr, macros), LINE_UNITS, LINE_UNITS - 3)
    return [] if len(body) == 1 else [Line("", "", body[0]), *_continued(body[1:])]


def formula_lines(expr: Any, *, macros: bool = True) -> list[str]:
    """The formula as display lines for ``align``/``split`` (``&`` at the alignment point): a relation
    at its sign, each side broken at its terms and factors (:func:`_pieces`), a conjunction one
    relation per line, a wide matrix entry by entry; a formula that fits is one line without ``&``."""
    return Formula("", "", "", expr).lines(macros=macros)


@dataclass(eq=False)
class Formula:
    """One formula of a derivation: a step's relation or a result's expression."""

    claim: str
    name: str          # the step or result name
    kind: str          # "result" | "step"
    expr: Any
    description: str = ""

    def __post_init__(self) -> None:
        self._lines: dict[bool, list[Line]] = {}   # breaking large expressions is slow: once each

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
        """The whole formula on one line, printed by SymPy (the printer memoises it)."""
        return _latex(self.expr, macros)

    def lines(self, *, macros: bool = True) -> list[str]:
        """:func:`formula_lines` of the formula."""
        return [str(x) for x in self.display_lines(macros=macros)] or [self.latex(macros=macros)]

    def display_lines(self, *, macros: bool = True) -> list[Line]:
        """The :class:`Line` objects of a formula that does not fit one line (else empty)."""
        if macros not in self._lines:
            self._lines[macros] = _lines(self.expr, macros)
        return self._lines[macros]


def _is_formula(obj: Any) -> bool:
    return isinstance(obj, (sp.Basic, sp.MatrixBase)) and not isinstance(obj, sp.logic.boolalg.BooleanAtom)


def formulas(claims: Iterable[str] | None = None) -> list[Formula]:
    """Every SymPy formula of the derivations (results first, then the steps whose relation is a
    SymPy object; a step stated in words is text, not a formula)."""
    out: list[Formula] = []
    for claim in claims or CLAIM_IDS:
        der = derivation(claim)
        out += [Formula(der.claim, r.name, "result", r.expr, r.description) for r in der.results.values()
                if _is_formula(r.expr)]
        out += [Formula(der.claim, s.name, "step", s.relation, s.why) for s in der.steps if _is_formula(s.relation)]
    return out


def snippet(f: Formula) -> str:
    """The snippet file of a formula: one ``equation`` (with ``split`` when long) and its label."""
    tex = f.latex()
    used = sorted(m for m in MACROS.values() if re.search(re.escape(m) + r"(?![A-Za-z])", tex))
    lines = f.lines()
    body = lines[0] if len(lines) == 1 and "&" not in lines[0] else \
        "\\begin{split}\n" + " \\\\\n".join(lines) + "\n\\end{split}"
    return "\n".join([
        f"% {f.claim} {f.kind} {f.name}: {_comment(f.description)}"[:400],
        "% Generated by `python -m verify latex` from proofs.derivation(\"" + f.claim + "\"); needs amsmath, amssymb"
        + (f" and the macros {', '.join(used)} of macros.tex." if used else "."),
        "\\begin{equation}", body, f"\\label{{{f.label}}}", "\\end{equation}", "",
    ])


def _display(f: Formula) -> str:
    r"""A formula in the document: one line in ``equation``, several in ``align`` (which may
    break across pages); each line's body scaled to the page if it is still wider (``\fitline``);
    numbered and labelled on the last line."""
    lines = f.display_lines()
    if not lines:
        return "\n".join(["\\begin{equation}", f"\\fitline{{{f.latex()}}}", f"\\label{{{f.label}}}",
                          "\\end{equation}"])
    rows = [f"{x.left}&{x.mid}" + (f" \\fitline{{{x.body}}}" if x.body else "")
            + (f" \\label{{{f.label}}}" if k == len(lines) - 1 else " \\notag \\\\") for k, x in enumerate(lines)]
    return "\\begin{align}\n" + "\n".join(rows) + "\n\\end{align}"


def macro_file() -> str:
    """``\\newcommand`` for each macro of :data:`proofs.notation.MACROS`, meaning the symbol's
    plain spelling."""
    lines = ["% Notation of the verification export (proofs.notation.MACROS); \\input once in the preamble."]
    for sym, macro in MACROS.items():
        lines.append(f"\\newcommand{{{macro}}}{{{_latex(sym, False)}}}  % the symbol {sym}")
    return "\n".join(lines) + "\n"


# --- reports and the names in them ---------------------------------------------------------------

#: The characters of a plot name, the one name from a report that becomes a file name and is
#: written into TeX (``\includegraphics{plots/<claim>_<name>.png}``): no '/', '.', '\\', braces,
#: '%' or space, so it can neither leave ``-o`` nor end TeX's argument.
NAME_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-")
#: The longest plot name (the package's are under 30 characters; file systems allow 255 bytes).
MAX_NAME = 64
#: The name of the report argument in messages.
REPORT_ARG = "--report FILE"


def valid_name(field: str, value: Any) -> str:
    """A plot name from a report: 1 to :data:`MAX_NAME` characters of :data:`NAME_CHARS`."""
    if not isinstance(value, str) or not 0 < len(value) <= MAX_NAME or not set(value) <= NAME_CHARS:
        raise fail(f"{REPORT_ARG} field {field}", received(value),
                   f"a name of 1 to {MAX_NAME} letters, digits, '_' or '-'")
    return value


def _claim(field: str, value: Any) -> str:
    if value not in CLAIM_IDS:
        raise fail(f"{REPORT_ARG} field {field}", received(value), f"a claim id among {', '.join(CLAIM_IDS)}")
    return value


def report_plots(report: dict[str, Any], folder: Path | None) -> dict[str, dict[str, Path]]:
    """Validate the names of ``report`` (claim ids, plot names) and resolve its plots inside
    ``folder`` (the report's own folder; None: a report made by this process, whose plots are
    taken as they are); :class:`VerifyError` (one line) on the first name or path refused."""
    seen: set[str] = set()
    out: dict[str, dict[str, Path]] = {}
    for k, c in enumerate(report["claims"]):
        cid = _claim(f"claims[{k}].id", c.get("id"))
        if cid in seen:
            raise fail(f"{REPORT_ARG} field claims[{k}].id", received(cid), "each claim once")
        seen.add(cid)
        for name, path in (c.get("evidence", {}).get("plots") or {}).items():
            field = f"claims[{k}].evidence.plots"
            valid_name(field, name)
            where = f"{REPORT_ARG} field {field}.{name}"
            out.setdefault(cid, {})[name] = plot_file(where, path, folder) if folder is not None else Path(path)
    for name in report.get("crashed", {}):
        _claim("crashed", name)
    return out


def load_report(path: str | Path) -> dict[str, Any]:
    """A ``report.json`` of ``python -m verify`` (schema checked by :func:`verify.outputs.report.read_report`),
    its names validated and its plots resolved inside its folder (``doc["plot_files"]``)."""
    doc = read_report(path, name=REPORT_ARG)
    doc.setdefault("crashed", {})
    doc.setdefault("meta", {})
    doc["source"] = Path(path).name
    doc["plot_files"] = report_plots(doc, Path(path).absolute().parent.resolve())
    return doc


def run_checks(*, seed: int = 0, quick: bool = False, large: bool = False, out: Path | None = None,
               claims: Iterable[str] | None = None) -> dict[str, Any]:
    """Run the claim checks and return them in report.json form (:func:`verify.run.run_report`)."""
    from verify.run import run_report

    doc, _ = run_report(list(claims or CLAIM_IDS), seed=seed, quick=quick, large=large, out=out)
    doc["source"] = None
    doc["plot_files"] = report_plots(doc, Path(out).absolute().resolve()) if out is not None else {}
    return doc


# --- the document --------------------------------------------------------------------------------

_PREAMBLE = r"""\documentclass[11pt,a4paper]{article}
\usepackage[margin=2cm]{geometry}
\usepackage{amsmath,amssymb}
\usepackage{graphicx}
\usepackage{longtable}
\input{macros.tex}
\allowdisplaybreaks
\renewcommand{\labelitemi}{$\bullet$}  % the text bullet would pull in a bitmap TS1 font
\renewcommand{\thesubsection}{\arabic{subsection}}  % level-1 headings are unnumbered: no "0." prefix
\sloppy\emergencystretch=3em
\raggedright  % long code names and inline formulas would stretch a justified line
\setlength{\parindent}{0pt}
\setlength{\tabcolsep}{5pt}  % tables of a name, numbers and a text fit the line
\setlength{\parskip}{0.4em}
\newsavebox{\fitbox}
% a line of a display that is still wider than 0.9 of the line is scaled down to it (never up)
\newcommand{\fitline}[1]{\sbox{\fitbox}{$\displaystyle #1$}%
  \ifdim\wd\fitbox>0.9\linewidth\resizebox{0.9\linewidth}{!}{\usebox{\fitbox}}\else\usebox{\fitbox}\fi}
"""

def _inline(value: Any) -> str:
    return text(" ".join(str(value).split()))


_SECTIONS = {1: "\\section*", 2: "\\subsection", 3: "\\subsubsection*"}


def render_blocks(blocks: list[Block], *, figures: dict[str, str], index: dict) -> list[str]:
    """The report's blocks as LaTeX: every text through the markup (:func:`text`), every derivation
    formula SymPy's own printing broken over lines where ``index`` has it (:func:`_display`), every
    plot from ``figures`` (the report's path -> the exported file)."""
    out: list[str] = []
    for b in blocks:
        if isinstance(b, Heading):
            label = f"\\label{{sec:{b.anchor}}}" if b.anchor and set(b.anchor) <= NAME_CHARS else ""
            command = _SECTIONS.get(b.level, "\\paragraph*")
            out += ["", f"{command}{{{_inline(b.text)}}}{label}"]
        elif isinstance(b, Para):
            out += ["", _inline(b.text)]
        elif isinstance(b, Field):
            out += ["", f"\\textbf{{{_inline(b.label)}:}} {_inline(b.text)}"]
        elif isinstance(b, Items):
            out += ["", f"\\textbf{{{_inline(b.label)}:}}"] if b.label else [""]
            out += ["\\begin{itemize}", *[f"\\item{{}} {_inline(x)}" for x in b.items], "\\end{itemize}"]
        elif isinstance(b, Table):
            n = len(b.head)   # a wide first column (a name) and a wide last one (a text); numbers between
            cols = ("p{0.2\\linewidth}" + "l" * (n - 2) + "p{0.45\\linewidth}") if n > 3 else \
                ("l" * (n - 1) + f"p{{{0.74 - 0.1 * (n - 2):.2f}\\linewidth}}")
            out += ["", f"\\begin{{longtable}}{{{cols}}}",
                    " & ".join(f"\\textbf{{{_inline(h)}}}" for h in b.head) + " \\\\ \\hline \\endhead"]
            out += [" & ".join(f"\\small {_inline(c)}" for c in row) + " \\\\" for row in b.rows]
            out.append("\\end{longtable}")
        elif isinstance(b, Figure) and b.path in figures:    # a plot the export did not copy is left out
            out += ["\\begin{center}", f"\\includegraphics[width=0.72\\linewidth]{{{figures[b.path]}}}\\\\",
                    f"\\small {_inline(b.caption)}" if b.caption else "", "\\end{center}"]
        elif isinstance(b, FormulaBlock):
            f = index.get((b.claim, b.kind, b.name))
            out.append(_display(f) if f is not None else "\\begin{equation*}\\fitline{" + b.latex + "}\\end{equation*}")
        elif isinstance(b, Fold):
            out += ["", f"\\textit{{{_inline(b.summary)}.}}"] + render_blocks(list(b.blocks), figures=figures,
                                                                               index=index)
    return out


def render_document(report: dict[str, Any], *, plots: dict[str, dict[str, str]] | None = None,
                    formulas_: list[Formula] | None = None, summary: bool = False) -> str:
    """The whole document for ``report`` (``summary``: the referee's summary alone); ``plots`` maps
    claim -> {name: file relative to the document}; ``formulas_`` reuses printed formulas."""
    index = {} if summary else {(f.claim, f.kind, f.name): f
                                for f in (formulas_ if formulas_ is not None else formulas())}
    if not summary:   # the derivation of each claim in the report, from this package where the report has none
        report = {**report, "claims": [
            c if (c.get("evidence") or {}).get("derivation") or c["id"] not in DERIVATIONS else
            {**c, "evidence": {**(c.get("evidence") or {}), "derivation": derivation(c["id"]).to_dict()}}
            for c in report["claims"]]}
    figures = {}
    for c in report["claims"]:
        for name, path in (c.get("evidence", {}).get("plots") or {}).items():
            if name in (plots or {}).get(c["id"], {}):
                figures[path] = plots[c["id"]][name]
    body = render_blocks(walk(report, record=not summary), figures=figures, index=index)
    src = report.get("source")
    origin = (f"Verdicts and figures read from \\texttt{{{escape(src)}}}." if src else
              "Verdicts and figures from running the claim checks.")
    snippets = ("" if summary else " Each formula is also in \\texttt{snippets/} as an \\texttt{equation} labelled "
                "as its number shows; the notation macros are in \\texttt{macros.tex}.")
    return "\n".join([_PREAMBLE, "\\title{Verification of \\emph{Multi-Head Attention as Ensemble Nadaraya--Watson "
                      "Estimation} (Fokou\\'e, 2026)" + (": the referee's summary" if summary else "") + "}",
                      "\\author{generated by \\texttt{python -m verify latex}}", "\\date{}", "\\begin{document}",
                      "\\maketitle", "", origin + snippets, *body, "", "\\end{document}", ""])


def _inside(out: Path, path: Path) -> Path:
    """``path`` (under ``out``) if, with every link resolved, it stays inside ``out``."""
    real = path.resolve()
    if not real.is_relative_to(out.resolve()) or path.is_symlink():
        raise fail("-o DIR", received(str(path)), f"a path inside {str(out)!r} that is not a link")
    return path


def write_export(out_dir: str | Path, report: dict[str, Any], *, summary: bool = False) -> Path:
    """Write verification.tex (``summary``: summary.tex, without snippets), macros.tex, snippets/ and
    plots/ under ``out_dir``; returns the .tex. Plots: ``report["plot_files"]``, else the report's
    paths resolved inside the current folder (:func:`report_plots`)."""
    out = Path(out_dir)
    plot_files = report["plot_files"] if "plot_files" in report else report_plots(report, Path.cwd().resolve())
    try:
        out.mkdir(parents=True, exist_ok=True)
        for sub in ("snippets", "plots"):
            _inside(out, out / sub).mkdir(exist_ok=True)
    except OSError as exc:
        raise fail("-o DIR", f"{str(out)!r} ({exc.strerror})", "a folder that can be created") from None
    atomic_write_text(_inside(out, out / "macros.tex"), macro_file(), encoding="ascii")
    all_formulas = [] if summary else formulas()
    for f in all_formulas:
        atomic_write_text(_inside(out, out / "snippets" / f.filename), snippet(f), encoding="ascii")
    plots: dict[str, dict[str, str]] = {}
    for claim, files in plot_files.items():
        for name, src in files.items():
            target = _inside(out, out / "plots" / f"{_claim('claims', claim)}_{valid_name('plots', name)}.png")
            if not (target.exists() and src.resolve() == target.resolve()):
                atomic_write_bytes(target, src.read_bytes())
            plots.setdefault(claim, {})[name] = target.relative_to(out).as_posix()
    tex = _inside(out, out / ("summary.tex" if summary else "verification.tex"))
    atomic_write_text(tex, render_document(report, plots=plots, formulas_=all_formulas, summary=summary),
                      encoding="ascii")
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
    """pdflatex ``tex`` ``runs`` times in a temporary folder beside it, then the PDF moved into place
    (a failed compilation leaves the previous PDF whole); :class:`PdfLatexMissing` without pdflatex,
    RuntimeError (with the log's error lines) when it fails."""
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
                                   "-no-shell-escape", f"-output-directory={build.name}", tex.name],
                                  cwd=tex.parent, capture_output=True, text=True, errors="replace")
            if proc.returncode != 0:
                log_path = build / f"{tex.stem}.log"
                log = log_path.read_text(errors="replace") if log_path.is_file() else proc.stdout
                raise RuntimeError("pdflatex failed on " + str(tex) + ":\n" + "\n".join(_log_errors(log) or
                                                                                        log.splitlines()[-30:]))
        os.replace(build / f"{tex.stem}.log", tex.with_suffix(".log"))     # pages, overfull lines
        os.replace(build / f"{tex.stem}.pdf", tex.with_suffix(".pdf"))
    finally:
        shutil.rmtree(build, ignore_errors=True)
    return tex.with_suffix(".pdf")


# --- the command ---------------------------------------------------------------------------------


def run_latex(out: Path, report_path: Path | None, *, pdf: bool = False, summary: bool = False, quick: bool = False,
              large: bool = False, seed: int | None = None) -> int:
    """``python -m verify latex`` (options parsed by :mod:`verify.cli`): 0 written (and compiled), 1 a
    check crashed, a write failed or pdflatex failed, 2 a report or an output folder refused, or no
    pdflatex for ``pdf``."""
    if report_path is not None and (quick or large or seed is not None):
        raise fail("--report FILE", "together with --quick/--large/--seed",
                   "either --report (its verdicts were computed with its own seed and sizes) or --quick/--large/--seed")
    if quick and large:
        raise fail("--quick --large", "both", "at most one of them (small or larger sizes)")
    if out.exists() and not out.is_dir():
        raise fail("-o DIR", f"{received(str(out))}, which exists and is not a folder", "a folder, or a path for one")
    report = load_report(report_path) if report_path is not None else None
    with output_folder("-o DIR", out, "python -m verify latex"):   # taken and locked before any work
        failed = [f"{d.claim}/{s.name}" for d in all_derivations() for s in d.failed]
        try:
            if report is None:
                report = run_checks(seed=seed or 0, quick=quick, large=large, out=out / "evidence")
            tex = write_export(out, report, summary=summary)
        except OSError as exc:   # a full disk or an unwritable file under -o, after the checks
            print(error_line(VerifyError(f"-o DIR: writing under {received(str(out))} failed: {exc.strerror or exc}")),
                  file=sys.stderr)
            return 1
    print(f"wrote {tex}, {out / 'macros.tex'} and {len(list((out / 'snippets').glob('*.tex')))} snippets in "
          f"{out / 'snippets'}")
    status = 0
    for claim in report["crashed"]:
        if report_path is not None:  # reported when that report was made; the document says so too
            print(f"note: {report_path} records that the {claim} check crashed", file=sys.stderr)
        else:
            print(f"{claim} check crashed:\n{report['crashed'][claim]}", file=sys.stderr)
            status = 1
    if failed:
        print(f"error: derivation steps failed to check: {', '.join(failed)}", file=sys.stderr)
        status = 1
    if pdf:
        try:
            print(f"wrote {compile_pdf(tex)}")
        except RuntimeError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 1
    return status
