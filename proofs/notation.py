"""Shared SymPy symbols of SPEC's notation, and their LaTeX names.

One place fixes how each symbol is spelled in code and in LaTeX, so the generated code, the
notebooks and the LaTeX export agree. Claim modules import the symbols they need from here and
declare only their local ones (e.g. indexed weights ``alpha_1..alpha_H``).
"""

from __future__ import annotations

from typing import Any

import sympy as sp
from sympy.printing.latex import LatexPrinter
from sympy.printing.precedence import precedence_traditional

from .errors import DefinitionError
from .markup import parse_math

__all__ = ["H", "d", "d_k", "D", "n", "sigma", "V", "B", "HDI", "to_latex", "Printer", "LATEX_NAMES", "MACROS",
           "GLOSSARY", "SPELLED", "spell", "sympy_math", "entries", "normalised"]

H = sp.Symbol("H", integer=True, positive=True)      # number of heads
d = sp.Symbol("d", integer=True, positive=True)      # input (model) dimension
d_k = sp.Symbol("d_k", positive=True)                # head (key) dimension; continuous when optimised
D = sp.Symbol("D", positive=True)                    # budget D = H d_k
n = sp.Symbol("n", positive=True)                    # sample size
sigma = sp.Symbol("sigma", positive=True)            # noise standard deviation
V = sp.Symbol("V", positive=True)                    # common head variance
B = sp.Symbol("B", real=True)                        # ensemble bias
HDI = sp.Symbol("HDI", real=True)                    # head diversity index

#: What the shared symbols mean (markup), for every printed derivation.
GLOSSARY: dict[str, str] = {
    "H": "the number of heads",
    "d": "the input (model) dimension",
    "d_k": "the head (key) dimension",
    "D": r"the budget $D = H d_k$",
    "n": "the sample size (number of keys)",
    "sigma": r"the noise standard deviation $\sigma$",
    "V": "the common head variance",
    "B": "the ensemble bias",
    "HDI": "the head diversity index",
}

#: LaTeX spelling of the shared symbols (plain LaTeX, for notebooks and MathJax).
LATEX_NAMES: dict[sp.Symbol, str] = {
    d_k: r"d_k",
    HDI: r"\mathrm{HDI}",
    sigma: r"\sigma",
}

#: The same symbols spelled with the export's macros (defined once in its macro file).
MACROS: dict[sp.Symbol, str] = {
    d_k: r"\dk",
    HDI: r"\HDI",
    D: r"\budget",
    H: r"\nheads",
}


#: LaTeX of symbols by their SymPy name, registered by the derivation modules with :func:`spell`
#: (``bias_bar`` would otherwise print as ``bias_{bar}``).
SPELLED: dict[str, str] = {}


def spell(**names: str) -> None:
    """Register how symbols print by their name: ``spell(bias_bar=r"\\bar{b}")`` (each module
    registers its own symbols; a name registered twice with another spelling is an error)."""
    for name, tex in names.items():
        parse_math(tex, f"spelling of {name}")
        if SPELLED.get(name, tex) != tex:
            raise DefinitionError(f"symbol {name!r} spelled {SPELLED[name]!r} and {tex!r}")
        SPELLED[name] = tex


class Printer(LatexPrinter):
    """SymPy's LaTeX printer with the prose's transpose, ``^{\\top}`` (SymPy prints ``^{T}``), and no
    second pair of brackets around a transposed block matrix."""

    def _print_Transpose(self, expr: Any) -> str:
        arg = expr.arg
        if isinstance(arg, sp.BlockMatrix):
            return self._print(arg) + r"^{\top}"
        if isinstance(arg, (sp.MatrixSymbol, sp.Identity, sp.ZeroMatrix)) or not arg.is_MatrixExpr:
            s = self.parenthesize(arg, precedence_traditional(expr), True)
            return s + r"^{\top}" if "^" not in s else rf"\left({s}\right)^{{\top}}"
        return rf"\left({self._print(arg)}\right)^{{\top}}"


#: Printed formulas, by the identity of the object printed (kept with it, so that an id is never
#: reused while cached) and the state of the spelling registry: SymPy's LaTeX printer takes ~30 ms
#: per step, and the terminal, the notebooks and the export print the same steps. Not by equality:
#: SymPy counts two ``Subs`` at different points as equal.
_PRINTED: dict[tuple, tuple[Any, str]] = {}
#: Entries kept at most (a derivation has at most a few hundred steps and results).
MAX_PRINTED = 20_000


def to_latex(expr: Any, *, macros: bool = False, **kwargs: Any) -> str:
    """``sympy.latex`` with the project's symbol spelling (``macros=True`` for the export)."""
    key = (id(expr), macros, len(SPELLED), repr(sorted(kwargs.items())))
    hit = _PRINTED.get(key)
    if hit is not None and hit[0] is expr:
        return hit[1]
    names = dict(LATEX_NAMES)
    if SPELLED:   # every symbol, bound ones too (a Sum's index, a Subs's variable)
        atoms = expr.atoms(sp.Symbol) if isinstance(expr, (sp.Basic, sp.MatrixBase)) else ()
        for s in atoms:
            if isinstance(s, sp.Symbol) and s.name in SPELLED and s not in names:
                names[s] = SPELLED[s.name]
    if macros:
        names.update(MACROS)
    text = Printer({"symbol_names": names, **kwargs}).doprint(expr)
    if len(_PRINTED) >= MAX_PRINTED:
        _PRINTED.clear()
    _PRINTED[key] = (expr, text)
    return text


def sympy_math(expr: Any) -> str:
    """A math span of a SymPy object (marked-up text), printed by SymPy with the project's names."""
    tex = " ".join(to_latex(expr).split())
    parse_math(tex, "sympy_math")
    return f"${tex}$"


def entries(name: str, rows: int, cols: int, tex: str = "") -> sp.Matrix:
    """A matrix of real symbols ``name_<row><column>`` (from 1); where ``tex`` is given they print as
    it with ``#`` the row and column (``entries("WK", 3, 2, "W_{K,#}")`` prints ``W_{K,11}``, ...)."""
    M = sp.Matrix(rows, cols, lambda a, b: sp.Symbol(f"{name}_{a + 1}{b + 1}", real=True))
    if tex:
        spell(**{e.name: tex.replace("#", e.name.rpartition("_")[2]) for e in M})
    return M


def normalised(values: list) -> list:
    """Each value divided by their sum: NW (or softmax) weights from kernel values."""
    total = sum(values)
    return [v / total for v in values]
