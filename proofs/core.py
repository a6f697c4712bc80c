"""The derivation framework: assumptions as data, machine-checked steps, named results.

A claim module builds one :class:`Derivation`. Every step is a SymPy relation, its premise kept
unevaluated (``Subs``, ``Derivative``, ``Limit``, ``Sum``, ``E(...)``) so that it reads as a
derivation, checked when it is added by a named method of :data:`METHODS`, which evaluates the
premise and records what it computed; a step SymPy cannot check is recorded as ``unchecked``. Steps
are gathered in named groups (``with der.group("line"): ...``); a comparison of derived with stated
cites the group that decides it (``supported_by=`` or ``refuted_by=``), so its finding is computed
from checked steps. A false comparison is a finding; a failed step is a failure. A malformed
definition raises :class:`DefinitionError` where it is made.
"""

from __future__ import annotations

import contextlib
import functools
import itertools
import random
import time
from dataclasses import asdict, dataclass, field
from typing import Any, Callable, Iterable, Iterator, Sequence

import mpmath
import sympy as sp
from sympy.core.function import AppliedUndef

from . import markup
from .errors import DefinitionError

__all__ = ["Assumption", "display_latex", "Step", "Result", "Comparison", "Group", "Derivation", "DerivationError",
           "DefinitionError", "eq", "le", "lt", "ge", "gt", "Method", "METHODS", "CHECK_METHODS", "RATIONAL_POINTS",
           "identically_zero", "expect_poly", "expect_matexpr", "trace_equal", "power_symbols", "sample_point"]

#: Number of random points for the ``rational`` method. A non-zero rational function of degree
#: m in a symbol vanishes at a uniform draw from N values with probability <= m/N per point.
RATIONAL_POINTS = 6
#: Integer symbols are drawn uniformly from [-INT_RANGE, INT_RANGE] (clipped to their sign), so a
#: product of m linear factors vanishes at a draw with probability <= m/INT_RANGE.
INT_RANGE = 10**9
#: Other symbols are drawn as p/q with 1 <= |p|, q <= FRACTION_RANGE (random sign if allowed).
FRACTION_RANGE = 2**30
#: Draws per point before ``rational`` gives up on finding one where the relation is finite.
MAX_DRAWS = 20
#: Working digits of the root brackets of ``descartes_root``.
ROOT_DPS = 60
#: Characters of a computed value kept in the step record.
COMPUTED_CHARS = 400


class DerivationError(RuntimeError):
    """A step of a derivation failed to check."""


#: Relations kept unevaluated, so that the record shows the statement (a step's premise).
eq, le, lt, ge, gt = (functools.partial(rel, evaluate=False) for rel in (sp.Eq, sp.Le, sp.Lt, sp.Ge, sp.Gt))


@dataclass(frozen=True)
class Assumption:
    """A condition a result rests on.

    ``kind`` is ``"setting"`` for what defines the objects (symbol domains, the regression
    model ``y = f + eps``) and ``"model"`` for a restriction a claim needs beyond that
    (uniform weights, a covariance model). Only results free of ``model`` assumptions can
    support the verdict *exact*. ``choice`` names a group of alternatives (``"bandwidth"``): the
    assumptions sharing it are options of which each candidate model takes one, not conditions
    that hold together; the report lists them apart from the common ones.
    """

    name: str
    statement: str
    kind: str = "model"
    expr: Any = None
    choice: str = ""

    def to_dict(self) -> dict:
        out = {"name": self.name, "statement": self.statement, "kind": self.kind}
        if self.expr is not None:
            out["expr"] = str(self.expr)
        if self.choice:
            out["choice"] = self.choice
        return out


def display_latex(latex: str) -> str | None:
    """A step's LaTeX as the report typesets it: read by the markup's parser (which refuses what it
    does not know) and written back, normalised; None when it does not parse (the report then shows
    the relation as code). Part of the stored dict, so a run from the cache does not parse again."""
    try:
        return markup.math_to_latex(markup.parse_math(latex, "step"))
    except markup.MarkupError:
        return None


@dataclass
class Step:
    """One checked (or explicitly unchecked) relation of a derivation.

    ``relation`` keeps the premise unevaluated; ``computed`` says what the method computed from
    it (the evaluated side, the root found, the limit's value); ``params`` are the method's
    inputs beyond the relation (a certificate, the equation solved, substitution rules)."""

    name: str
    relation: Any
    method: str
    why: str = ""
    uses: tuple[str, ...] = ()
    status: str = "pending"   # checked | failed | unchecked
    detail: str = ""
    seconds: float = 0.0
    computed: str = ""
    params: dict = field(default_factory=dict)

    @property
    def checked(self) -> bool:
        return self.status == "checked"

    @property
    def method_summary(self) -> str:
        """One line saying what the method checks."""
        return METHODS[self.method].summary if self.method in METHODS else "not checked"

    def latex(self, *, macros: bool = False) -> str:
        """The relation as LaTeX, printed by SymPy with the project's symbol names."""
        from .notation import to_latex

        return to_latex(self.relation, macros=macros)

    def to_dict(self) -> dict:
        latex = " ".join(self.latex().split())
        return {
            "name": self.name,
            "relation": str(self.relation),
            "latex": latex,
            "display": display_latex(latex),
            "method": self.method,
            "method_summary": self.method_summary,
            "params": {k: _param_text(v) for k, v in self.params.items()},
            "computed": self.computed,
            "why": self.why,
            "uses": list(self.uses),
            "status": self.status,
            "detail": self.detail,
            "seconds": round(self.seconds, 4),
        }


@dataclass
class Result:
    """A named derived expression, with the argument order its generated code takes."""

    name: str
    expr: Any
    args: tuple = ()
    description: str = ""
    uses: tuple[str, ...] = ()
    #: The generated functions a check or test calls by name: "numpy" (``cN_<name>``) and/or
    #: "mpmath" (``cN_<name>_mp``); none by default (nothing generated that nothing calls).
    codegen: tuple[str, ...] = ()
    #: Where the result is meant to be evaluated, ``{symbol: (low, high)}``; symbols not listed
    #: range over what their SymPy assumptions allow. Tests sample the generated code here.
    domain: dict = field(default_factory=dict)

    def latex(self, *, macros: bool = False) -> str:
        """The expression as LaTeX, printed by SymPy with the project's symbol names."""
        from .notation import to_latex

        return to_latex(self.expr, macros=macros)

    def to_dict(self) -> dict:
        latex = " ".join(self.latex().split()) if isinstance(self.expr, (sp.Basic, sp.MatrixBase)) else ""
        return {
            "name": self.name,
            "expr": str(self.expr),
            "latex": latex,
            "display": display_latex(latex) if latex else None,
            "args": [str(a) for a in self.args],
            "description": self.description,
            "uses": list(self.uses),
        }


@dataclass
class Comparison:
    """Derived versus stated: ``holds`` is a finding, True or False, never a failure; it is
    computed from the group of steps that decides it (``None`` while a step of it failed)."""

    name: str
    stated: str
    derived: str
    holds: bool | None
    method: str
    detail: str = ""
    uses: tuple[str, ...] = ()
    #: the steps that decide it, and whether they support or refute the statement
    steps: tuple[str, ...] = ()
    decided_by: str = ""

    def to_dict(self) -> dict:
        return {**asdict(self), "uses": list(self.uses), "steps": list(self.steps)}


@dataclass
class Group:
    """A named set of a derivation's steps, results and comparisons (what one part of a claim's
    check rests on). ``proved``: every step in it checked."""

    name: str
    description: str = ""
    steps: list[str] = field(default_factory=list)
    results: list[str] = field(default_factory=list)
    comparisons: list[str] = field(default_factory=list)
    statuses: dict[str, str] = field(default_factory=dict)

    @property
    def proved(self) -> bool:
        return bool(self.steps) and all(s == "checked" for s in self.statuses.values())

    def to_dict(self) -> dict:
        return {"name": self.name, "description": self.description, "steps": list(self.steps),
                "results": list(self.results), "comparisons": list(self.comparisons), "proved": self.proved}


# -- Evaluation helpers shared by the methods ------------------------------------------------------


def _value(expr: Any) -> Any:
    """Evaluate the notation a premise is written in (``Subs``, ``Derivative``, ``Sum``,
    ``Limit``, ``Trace``, ``UnevaluatedExpr``, ...): SymPy's ``doit``."""
    return expr.doit() if isinstance(expr, (sp.Basic, sp.MatrixBase)) else expr


def _unfold(expr: Any) -> Any:
    """Evaluate only substitutions, derivatives and ``UnevaluatedExpr`` (sums and integrals stay:
    methods that treat them as linear operators need them unevaluated)."""
    if not isinstance(expr, (sp.Basic, sp.MatrixBase)):
        return expr
    kinds = (sp.Subs, sp.Derivative, sp.UnevaluatedExpr)
    return expr.replace(lambda e: isinstance(e, kinds), lambda e: e.doit())


def _is_zero(expr: Any) -> bool:
    if isinstance(expr, sp.MatrixBase):
        return all(_is_zero(e) for e in expr)
    if getattr(expr, "is_ZeroMatrix", False):
        return True
    return expr == 0 or getattr(expr, "is_zero", None) is True


def _param_text(value: Any) -> str:
    """A method parameter as text (a cited derivation by its claim)."""
    if isinstance(value, Derivation):
        return f"derivation {value.claim} ({value.status})"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{_short(k)}: {_param_text(v)}" for k, v in value.items()) + "}"
    if isinstance(value, (list, tuple)) and len(value) > 8:
        return f"{len(value)} items: " + ", ".join(_param_text(v) for v in value[:3]) + ", ..."
    return _short(value)


def _pairs(lhs: Any, rhs: Any) -> list[tuple[Any, Any]]:
    """Corresponding entries of two sides: elementwise for tuples and explicit matrices."""
    if isinstance(lhs, sp.Tuple) and isinstance(rhs, sp.Tuple):
        if len(lhs) != len(rhs):
            raise ValueError(f"tuples of different lengths {len(lhs)} and {len(rhs)}")
        return [p for a, b in zip(lhs, rhs) for p in _pairs(a, b)]
    if isinstance(lhs, sp.MatrixBase) and isinstance(rhs, sp.MatrixBase):
        if lhs.shape != rhs.shape:
            raise ValueError(f"matrices of shapes {lhs.shape} and {rhs.shape}")
        return list(zip(lhs, rhs))
    return [(lhs, rhs)]


def _short(expr: Any) -> str:
    text = " ".join(sp.sstr(expr).split()) if isinstance(expr, (sp.Basic, sp.MatrixBase)) else str(expr)
    return text if len(text) <= COMPUTED_CHARS else text[: COMPUTED_CHARS - 3] + "..."


def _sides(relation: Any, method: str) -> tuple[Any, Any]:
    if not isinstance(relation, sp.Equality):
        raise ValueError(f"method {method!r} checks an equality, got {type(relation).__name__}")
    return relation.lhs, relation.rhs


def _inequality(relation: Any, method: str) -> tuple[Any, Any, bool]:
    """(greater side, smaller side, strict) of an inequality."""
    if isinstance(relation, (sp.GreaterThan, sp.StrictGreaterThan)):
        return relation.lhs, relation.rhs, isinstance(relation, sp.StrictGreaterThan)
    if isinstance(relation, (sp.LessThan, sp.StrictLessThan)):
        return relation.rhs, relation.lhs, isinstance(relation, sp.StrictLessThan)
    raise ValueError(f"method {method!r} checks an inequality, got {type(relation).__name__}")


def _fraction_zero(expr: Any) -> bool:
    """Identically zero as a rational function: one fraction, radicals rationalised, expanded."""
    if isinstance(expr, sp.MatrixBase):
        return all(_fraction_zero(e) for e in expr)
    num = sp.expand(sp.numer(sp.together(expr)))
    if num == 0:
        return True
    radical = any(isinstance(p, sp.Pow) and p.exp.is_Rational and not p.exp.is_Integer
                  for p in sp.preorder_traversal(num))
    return radical and sp.expand(sp.radsimp(num)) == 0


def _linear_parts(op: Any) -> Any:
    """A Sum or Integral split over the terms of its expanded argument, with the factors free of
    its bound variables pulled out (linearity)."""
    bound = set(op.variables)
    out = sp.Integer(0)
    for term in sp.Add.make_args(sp.expand(op.function)):
        const, rest = term.as_independent(*bound, as_Add=False)
        part = op.func(rest, *op.limits)
        out += const * (part.doit() if not rest.has(*bound) else part)   # Σ_{i=1}^{n} c = n c
    return out


def identically_zero(expr: Any) -> bool:
    """Is ``expr`` identically zero? One fraction with an expanded numerator first; else expand
    (splits exp of sums), treat every Sum and Integral as a linear operator (split over terms,
    constant factors out), give bound variables canonical names (so equal sums compare equal),
    one fraction again; simplify only if all that fails. Explicit matrices: every entry."""
    if isinstance(expr, sp.MatrixBase):
        return all(identically_zero(e) for e in expr)
    e = _unfold(expr)
    if _fraction_zero(e):
        return True
    e = sp.expand(e)
    e = e.replace(lambda x: isinstance(x, (sp.Sum, sp.Integral)), _linear_parts)
    e = sp.expand(e).as_dummy()
    if sp.expand(sp.numer(sp.together(e))) == 0:
        return True
    return sp.simplify(e) == 0


def _matrix_zero(diff: Any, given: dict | None) -> bool:
    """A matrix expression is the zero matrix after expansion, the substitution rules ``given``
    (e.g. UᵀU -> I), and evaluation (block products collapsed; numeric sizes made explicit)."""
    e = diff
    for _ in range(3):
        e = sp.expand(e).doit()
        if given:
            e = e.subs(given).doit()
        if isinstance(e, sp.MatrixExpr) and e.has(sp.BlockMatrix):
            e = sp.block_collapse(e)
        if isinstance(e, sp.ZeroMatrix) or e == 0:
            return True
        if isinstance(e, sp.MatrixExpr) and all(getattr(n, "is_Integer", False) for n in e.shape):
            e = e.as_explicit()
        if isinstance(e, sp.MatrixBase) and all(sp.expand(x) == 0 for x in e):
            return True
    return False


def trace_equal(a: Any, b: Any, assumptions: Any = True, rounds: int = 3) -> bool:
    """Trace(a) == Trace(b) after refining with ``assumptions`` (e.g. ``Q.orthogonal(Q)``:
    QᵀQ = I) and bringing each product to a canonical cyclic order."""
    def red(tr):
        for _ in range(rounds):
            tr = sp.Trace(sp.refine(tr.arg, assumptions).doit())._normalize()
        return tr
    return red(sp.Trace(a)) == red(sp.Trace(b))


def expect_poly(expr: Any, Z: Sequence, C: Any) -> Any:
    """E of a polynomial of degree <= 2 in the centred variables Z: linearity, E Z_h = 0,
    E Z_h Z_h' = C_hh'. Coefficients are deterministic; a higher degree raises."""
    poly = sp.Poly(sp.expand(expr), *Z)
    out = sp.Integer(0)
    for monom, coeff in poly.terms():
        idx = [h for h, e in enumerate(monom) for _ in range(e)]
        if len(idx) == 0:
            out += coeff
        elif len(idx) == 2:
            out += coeff * C[idx[0], idx[1]]
        elif len(idx) != 1:
            raise ValueError(f"expect_poly covers degree <= 2 only, got monomial {monom}")
    return out


def expect_matexpr(expr: Any, Z: sp.MatrixSymbol, C: sp.MatrixSymbol) -> Any:
    """E of a matrix polynomial of degree <= 2 in the centred random vector Z: linearity, a term
    with one Z (or Zᵀ) has mean 0, an adjacent pair Z Zᵀ has mean C; all other factors are
    deterministic. Anything else raises (not covered, rather than guessed)."""
    e = sp.expand(expr)
    terms = e.args if isinstance(e, sp.MatAdd) else (e,)
    out = []
    for t in terms:
        coeff, mats = t.as_coeff_matrices() if isinstance(t, sp.MatMul) else (sp.Integer(1), [t])
        at = [k for k, m in enumerate(mats) if m in (Z, Z.T)]
        if not at:
            out.append(t)
        elif len(at) == 1:
            continue
        elif len(at) == 2 and at[1] == at[0] + 1 and mats[at[0]] == Z and mats[at[1]] == Z.T:
            k = at[0]
            out.append(coeff * sp.MatMul(*mats[:k], C, *mats[k + 2:]))
        else:
            raise ValueError(f"expect_matexpr does not cover the term {t}")
    return sp.MatAdd(*out).doit() if out else sp.ZeroMatrix(*e.shape)


# -- powers of an integer symbol as independent symbols --------------------------------------------


def _generators(base: Any, bases: dict) -> dict:
    """``base`` as a product of generators with integer exponents: a base listed in ``bases``
    is replaced by its stated product (checked by the caller), a product or integer power is
    split; anything else is its own generator."""
    if base in bases:
        out: dict = {}
        for g, m in bases[base].as_powers_dict().items():
            for gg, mm in _generators(g, {}).items():
                out[gg] = out.get(gg, 0) + mm * m
        return out
    if isinstance(base, sp.Mul):
        out = {}
        for factor in base.args:
            for g, m in _generators(factor, bases).items():
                out[g] = out.get(g, 0) + m
        return out
    if isinstance(base, sp.Pow) and base.exp.is_integer and base.exp.is_number:
        return {g: m * base.exp for g, m in _generators(base.base, bases).items()}
    if isinstance(base, sp.Rational) and base.q != 1:
        out = dict(_generators(sp.Integer(base.p), bases)) if base.p != 1 else {}
        out[sp.Integer(base.q)] = out.get(sp.Integer(base.q), 0) - 1
        return out
    return {base: sp.Integer(1)}


def power_symbols(expr: Any, k: sp.Symbol, bases: dict | None = None) -> tuple[Any, dict]:
    """Replace every power ``b**(c*k + s)`` of the integer symbol ``k`` (c an integer) by
    ``P_g**(c m)`` ``b**s`` with one new symbol ``P_g`` per generator g of b (``bases`` states
    products such as ``{phi**2 + 1: ...}``; checked). An identity in the ``P_g`` as independent
    symbols holds for every integer k. Returns the new expression and ``{P_g: g**k}``; raises if
    k is left in an exponent this does not cover."""
    if not (k.is_integer and k.is_Symbol):
        raise ValueError(f"power_symbols: {k} must be an integer symbol")
    bases = dict(bases or {})
    for base, product in bases.items():
        if not _fraction_zero(base - product):
            raise ValueError(f"bases: {base} is not equal to {product}")
        for m in product.as_powers_dict().values():
            if not (m.is_integer and m.is_number):
                raise ValueError(f"bases: {product} must be a product of integer powers")
    gens: dict = {}

    def sym(g):
        if g not in gens:
            gens[g] = sp.Dummy(f"P{len(gens)}")
        return gens[g]

    def replace(p):
        b, e = p.base, sp.expand(p.exp)
        if b.has(k, *gens.values()):
            raise ValueError(f"power_symbols: the base of {p} depends on {k}")
        c = e.coeff(k)
        s = sp.expand(e - c * k)
        if not (c.is_integer and c.is_number) or s.has(k):
            raise ValueError(f"power_symbols: exponent {p.exp} is not c*{k} + s with an integer c")
        if b.is_negative is not False and not s.is_integer:
            raise ValueError(f"power_symbols: {p} splits only with an integer shift for a base that may be negative")
        out = b**s
        for g, m in _generators(b, bases).items():
            out *= sym(g) ** (c * m)
        return out

    e = expr.replace(lambda x: isinstance(x, sp.Pow) and x.exp.has(k), replace)
    e = e.replace(lambda x: isinstance(x, sp.exp) and x.args[0].has(k),
                  lambda x: replace(sp.Pow(sp.E, x.args[0], evaluate=False)))
    if any(isinstance(x, (sp.Pow, sp.exp)) and x.args[-1].has(k) for x in sp.preorder_traversal(e)):
        raise ValueError(f"power_symbols: {k} is left in an exponent of {e}")
    return e, {P: g**k for g, P in gens.items()}


def _sign_values(gens: dict) -> list[dict]:
    """Every assignment of +-1 to the symbols standing for (-1)**k."""
    signs = [P for P, power in gens.items() if power.base == -1]
    return [dict(zip(signs, vals)) for vals in itertools.product((-1, 1), repeat=len(signs))]


def _power_identity_zero(expr: Any, ks: Sequence, bases: dict) -> bool:
    """``expr`` vanishes for every integer value of the symbols ``ks``: powers of each k become
    independent symbols (``power_symbols``), (-1)**k takes both signs, the rest is a rational
    function that must be identically zero."""
    e, gens = expr, {}
    for k in ks:
        e, g = power_symbols(e, k, bases)
        gens.update(g)
    for signs in _sign_values(gens) or [{}]:
        v = e.xreplace(signs)
        if not (_fraction_zero(v) or sp.simplify(v) == 0):
            return False
    return True


# -- random rational points ------------------------------------------------------------------------


def _draw(sym: sp.Symbol, rng: random.Random) -> sp.Rational:
    """A random value respecting the symbol's sign and integrality (wide ranges)."""
    pos = sym.is_positive or (sym.is_nonnegative and sym.is_nonzero)
    nonneg, neg = sym.is_nonnegative, sym.is_negative or (sym.is_nonpositive and sym.is_nonzero)
    nonpos = sym.is_nonpositive
    if sym.is_integer:
        lo, hi = -INT_RANGE, INT_RANGE
        if pos:
            lo = 1
        elif nonneg:
            lo = 0
        if neg:
            hi = -1
        elif nonpos:
            hi = 0
        v = sp.Integer(rng.randint(lo, hi))
    else:
        v = sp.Rational(rng.randint(1, FRACTION_RANGE), rng.randint(1, FRACTION_RANGE))
        if neg or nonpos or (not (pos or nonneg) and rng.random() < 0.5):
            v = -v
    for fact in ("integer", "positive", "nonnegative", "negative", "nonpositive", "nonzero", "zero",
                 "even", "odd", "prime", "composite", "rational", "real"):
        want = sym.assumptions0.get(fact)
        if want is not None and getattr(v, f"is_{fact}") is not want:
            raise ValueError(f"rational: cannot sample {sym} with assumption {fact}={want}")
    return v


def sample_point(symbols: Iterable[sp.Symbol], rng: random.Random) -> dict:
    """One random point of the ``rational`` method: a value for each symbol, in name order."""
    return {s: _draw(s, rng) for s in sorted(symbols, key=str)}


def _sampled_symbols(diff: Any) -> list[sp.Symbol]:
    syms = sorted(getattr(diff, "free_symbols", set()), key=str)
    bad = [s for s in syms if not isinstance(s, sp.Symbol)]
    if bad:
        raise ValueError(f"rational: cannot sample {bad} (not plain symbols)")
    for node in sp.preorder_traversal(diff):
        if isinstance(node, sp.Pow) and set(syms) & node.exp.free_symbols:
            raise ValueError(f"rational: a sampled symbol is in the exponent of {node}; use another method")
        if isinstance(node, (sp.Sum, sp.Product, sp.Integral)) and any(
                set(syms) & sp.Tuple(*lim[1:]).free_symbols for lim in node.limits):
            raise ValueError(f"rational: a sampled symbol is a bound of {type(node).__name__}; use another method")
    return syms


def _rational_zero(diff: Any, rng: random.Random) -> tuple[bool, str]:
    """``diff`` vanishes exactly at RATIONAL_POINTS random points (a point where it is not finite
    is replaced by the next draw)."""
    syms = _sampled_symbols(diff)
    # exact values only: nsimplify would round a nonzero rational below its tolerance (10^-40 x) to 0
    if not syms:
        v = sp.simplify(_value(diff))
        return _is_zero(v), "no free symbols: exact value checked"
    done = 0
    for _ in range(RATIONAL_POINTS):
        for _attempt in range(MAX_DRAWS):
            subs = sample_point(syms, rng)
            val = diff.xreplace(subs) if not isinstance(diff, sp.MatrixBase) else diff.subs(subs)
            val = _value(val)
            if not _is_zero(val):
                val = sp.simplify(val)
            if not (val.has(sp.nan, sp.zoo, sp.oo, -sp.oo)):
                break
        else:
            raise ValueError(f"rational: no finite value after {MAX_DRAWS} draws")
        if not _is_zero(val):
            return False, f"nonzero at {subs}: {_short(val)}"
        done += 1
    return True, f"exactly zero at {done} random points of {', '.join(map(str, syms))}"


# -- The check methods -----------------------------------------------------------------------------


@dataclass(frozen=True)
class Method:
    """A named way of checking a step: ``run(relation, params, rng) -> (ok, computed)``, ``rng()`` the
    step's own random generator."""

    name: str
    summary: str
    run: Callable[..., tuple[bool, str]]
    params: tuple[str, ...] = ()
    required: tuple[str, ...] = ()


def _difference_zero(name: str, reduce: Callable) -> Callable:
    """The method ``name``: both sides evaluated, ``reduce(lhs - rhs)`` is 0 entry by entry."""
    def run(rel, p, rng):
        lhs, rhs = _sides(rel, name)
        lv, rv = _value(lhs), _value(rhs)
        note = "" if lhs == lv else f"lhs evaluates to {_short(lv)}"   # what an unevaluated side became
        return all(_is_zero(reduce(a - b)) for a, b in _pairs(lv, rv)), note
    return run


def _m_rational(rel, p, rng):
    lhs, rhs = _sides(rel, "rational")
    notes = []
    for a, b in _pairs(_value(lhs), _value(rhs)):
        ok, note = _rational_zero(a - b, rng())
        notes.append(note)
        if not ok:
            return False, note
    return True, notes[0] if len(notes) == 1 else f"{len(notes)} entries, each " + notes[0]


def _m_identically_zero(rel, p, rng):
    lhs, rhs = _sides(rel, "identically_zero")
    return all(identically_zero(a - b) for a, b in _pairs(lhs, rhs)), ""


def _m_nonneg(rel, p, rng):
    big, small, strict = _inequality(rel, "nonneg")
    gap = sp.simplify(_value(big) - _value(small))
    ok = bool(gap.is_positive) if strict else bool(gap.is_nonnegative)
    return ok, f"difference {_short(gap)}"


def _m_certificate(rel, p, rng):
    big, small, strict = _inequality(rel, "certificate")
    cert = p["certificate"]
    gap = _value(big) - _value(small)
    d = gap - cert
    same = _is_zero(sp.expand(d)) or identically_zero(d)
    sign = cert.is_positive if strict else cert.is_nonnegative
    bound = "> 0" if strict else ">= 0"
    return bool(same and sign), (f"difference {'=' if same else 'is not'} certificate {_short(cert)}, "
                                 f"{'proved' if sign else 'not proved'} {bound}")


def _m_matrix_expand(rel, p, rng):
    lhs, rhs = _sides(rel, "matrix_expand")
    pairs = list(zip(lhs, rhs)) if isinstance(lhs, sp.Tuple) and isinstance(rhs, sp.Tuple) else [(lhs, rhs)]
    return all(_matrix_zero(a - b, p.get("given")) for a, b in pairs), ""


def _m_trace_cyclic(rel, p, rng):
    lhs, rhs = _sides(rel, "trace_cyclic")
    if not (isinstance(lhs, sp.Trace) and isinstance(rhs, sp.Trace)):
        raise ValueError("trace_cyclic checks Trace(A) = Trace(B)")
    return trace_equal(lhs.arg.doit(), rhs.arg.doit(), p.get("assumptions", True)), ""


def _m_expectation(rel, p, rng):
    lhs, rhs = _sides(rel, "expectation")
    Z, C = p["variables"], p["covariance"]
    op = sp.Function("E")
    matrix = isinstance(Z, sp.MatrixSymbol)

    def ev(node):
        arg = node.args[0]
        return expect_matexpr(arg, Z, C) if matrix else expect_poly(arg, list(Z), C)

    found = []
    lv = lhs.replace(lambda x: isinstance(x, AppliedUndef) and x.func == op,
                     lambda x: found.append(x) or ev(x))
    if not found:
        raise ValueError(f"expectation: no {op}(...) on the left-hand side")
    lv = _value(lv)
    if matrix:
        return _matrix_zero(lv - rhs, None), ""
    return all(_is_zero(sp.expand(a - b)) for a, b in _pairs(lv, _value(rhs))), f"E evaluates to {_short(lv)}"


def _m_solve(rel, p, rng):
    lhs, rhs = _sides(rel, "solve")
    unknowns = list(lhs) if isinstance(lhs, (sp.Tuple, sp.MatrixBase)) else [lhs]
    roots = list(rhs) if isinstance(rhs, (sp.Tuple, sp.MatrixBase)) else [rhs]
    extra = list(p.get("unknowns", ()))
    eqs = p["equation"]
    alternatives = list(eqs.args) if isinstance(eqs, sp.Or) else [eqs]
    found = []
    for alt in alternatives:
        system = [_value(e) for e in (alt if isinstance(alt, (list, tuple)) else [alt])]
        system = [x for e in system for x in ([a - b for a, b in _pairs(e.lhs, e.rhs)]
                                              if isinstance(e, sp.Equality) else [e])]
        sols = sp.solve(system, unknowns + [u for u in extra if u not in unknowns], dict=True)
        if not sols:
            return False, f"no solution of {_short(alt)}"
        found += sols
    ok = all(all(x in s and (_fraction_zero(s[x] - r) or sp.simplify(s[x] - r) == 0)
                 for x, r in zip(unknowns, roots)) for s in found)
    text = "; ".join(", ".join(f"{x} = {_short(s.get(x, '?'))}" for x in unknowns) for s in found)
    return ok, f"solutions: {text}"


def _limit_values(expr, change):
    """Evaluate every Limit in ``expr`` with SymPy's limit (gruntz), after the change of the
    limit variable ``change = (x, phi(y), y, y0)`` where given (checked: phi(y) -> x0 as y -> y0,
    phi strictly monotone)."""
    computed = []

    def lim(node):
        f, x, x0, d = node.args[0], node.args[1], node.args[2], str(node.args[3])
        if change is not None and change[0] == x:
            _, phi, y, y0 = change
            if sp.limit(phi, y, y0) != x0:
                raise ValueError(f"limit: {phi} does not tend to {x0} as {y} -> {y0}")
            dphi = sp.diff(phi, y)
            if not (dphi.is_positive or dphi.is_negative):
                raise ValueError(f"limit: {phi} is not strictly monotone in {y}")
            g = sp.expand_log(f.subs(x, phi))
            value = sp.limit(g, y, y0)
        else:
            value = sp.limit(f, x, x0, d if d in ("+", "-") else "+-")
        computed.append(value)
        return value

    out = expr.replace(lambda e: isinstance(e, sp.Limit), lim)
    if not computed:
        raise ValueError("limit: no Limit in the relation")
    return out, computed


def _same_value(a, b) -> bool:
    if a.has(sp.oo, -sp.oo, sp.zoo) or b.has(sp.oo, -sp.oo, sp.zoo):
        return a == b
    return _fraction_zero(a - b) or sp.simplify(a - b) == 0


def _m_limit(rel, p, rng):
    lhs, rhs = _sides(rel, "limit")
    lv, values = _limit_values(lhs, p.get("change"))
    ok = all(_same_value(_value(a), _value(b)) for a, b in _pairs(lv, rhs))
    return ok, "limit " + ", ".join(_short(v) for v in values)


def _m_power_limit(rel, p, rng):
    """Limit over the integer H -> oo of a rational function of powers b**H."""
    lhs, rhs = _sides(rel, "power_limit")
    if not isinstance(lhs, sp.Limit) or lhs.args[2] != sp.oo:
        raise ValueError("power_limit checks Limit(f, H, oo) = value")
    f, k = lhs.args[0], lhs.args[1]
    sub = p.get("substitution", {})
    f, target = f.subs(sub), rhs.subs(sub)
    e, gens = power_symbols(f, k, p.get("bases"))
    if e.has(k):
        raise ValueError(f"power_limit: {k} is left outside the powers b**{k}; the limit is not a substitution")
    small, notes = {}, []
    for P, power in gens.items():
        g = power.base
        if g == -1:
            continue
        if (abs(g) - 1).is_positive:
            small[P] = ("inv", sp.Dummy(f"e{len(small)}", real=True))
        elif (1 - abs(g)).is_positive:
            small[P] = ("same", sp.Dummy(f"e{len(small)}", real=True))
        else:
            raise ValueError(f"power_limit: cannot decide whether |{g}| is above or below 1")
        notes.append(f"({g})^{k} = {'1/' if small[P][0] == 'inv' else ''}e{len(notes)}")
    repl = {P: (1 / v if how == "inv" else v) for P, (how, v) in small.items()}
    zero = {v: 0 for _, v in small.values()}
    excluded = [sp.sympify(x).subs(sub) for x in p.get("excluded", ())]
    values, exceptions = [], []
    for signs in _sign_values(gens) or [{}]:
        num, den = _at_zero(e.xreplace(signs).xreplace(repl), list(zero))
        den0 = sp.factor(sp.radsimp(sp.expand(den)))
        if den0.is_nonzero is not True:
            if den0 not in exceptions and not _zeros_excluded(den0, excluded):
                return False, f"not shown continuous at e = 0: denominator there {_short(den0)} ({', '.join(notes)})"
            exceptions.append(den0)
        values.append(num / den0)
    ok = all(_same_value(v, target) for v in values)
    shown = target if ok else values[0]
    text = f"{', '.join(notes)} -> 0: value {_short(shown)}" + (f"; with {_short(sub)}" if sub else "")
    if exceptions:
        text += f"; except where {_short(p['excluded'])} = 0 (where the lhs is undefined)"
    return ok, text


def _at_zero(expr: Any, es: list) -> tuple[Any, Any]:
    """Numerator and denominator of the rational function ``expr`` of ``es`` at es = 0, after
    dividing both by the largest common monomial in the es (a cheap cancel); if that leaves the
    denominator zero there, after a full cancel."""
    num, den = sp.fraction(sp.together(expr))
    N, D = sp.Poly(sp.expand(num), *es), sp.Poly(sp.expand(den), *es)
    low = [min(min(m[i] for m in N.monoms()), min(m[i] for m in D.monoms())) for i in range(len(es))]
    n0 = sum((c for m, c in N.terms() if list(m) == low), sp.Integer(0))
    d0 = sum((c for m, c in D.terms() if list(m) == low), sp.Integer(0))
    if sp.radsimp(sp.expand(d0)) != 0:
        return n0, d0
    num, den = sp.fraction(sp.cancel(sp.together(expr)))
    zero = {v: 0 for v in es}
    return num.xreplace(zero), sp.expand(den.xreplace(zero))


def _zeros_excluded(den0: Any, excluded: list) -> bool:
    """The one-parameter ``den0`` is (a numerator of) an ``excluded`` expression times a factor that
    SymPy proves non-zero on the parameter's domain: it vanishes only where the caller states the
    left-hand side is undefined."""
    syms = list(den0.free_symbols)
    if len(syms) != 1 or not excluded:
        return False
    (z,) = syms
    rest = sp.expand(den0)
    for x in excluded:
        nx = sp.expand(sp.numer(sp.together(x)))
        if not nx.has(z):
            continue
        quo, rem = sp.div(rest, nx, z)
        if _fraction_zero(rem):
            rest = quo
    rest = sp.factor_terms(sp.radsimp(rest))
    return rest.is_nonzero is True or sp.factor(rest).is_nonzero is True


def _m_stolz_cesaro(rel, p, rng):
    lhs, rhs = _sides(rel, "stolz_cesaro")
    values = []
    for a, target in _pairs(lhs, rhs):
        if not isinstance(a, sp.Limit) or a.args[2] != sp.oo:
            raise ValueError("stolz_cesaro checks Limit(S(H)/b(H), H, oo) = value")
        ratio, H = a.args[0], a.args[1]
        num, den = sp.fraction(sp.together(ratio))
        sums = [f for f in sp.Mul.make_args(num) if isinstance(f, sp.Sum)]
        s = sums[0] if len(sums) == 1 else None
        const = sp.Mul(*[f for f in sp.Mul.make_args(num) if not isinstance(f, sp.Sum)])
        if not (isinstance(s, sp.Sum) and len(s.limits) == 1 and s.limits[0][2] == H and not const.has(H)):
            raise ValueError(f"stolz_cesaro: numerator {num} is not c*Sum(f, (h, a, H))")
        h = s.limits[0][0]
        if sp.limit(den, H, sp.oo) != sp.oo or not sp.diff(den, H).is_positive:
            raise ValueError(f"stolz_cesaro: {den} must increase to oo")
        step = const * s.function.subs(h, H + 1) / (den.subs(H, H + 1) - den)
        v = sp.limit(step, H, sp.oo)
        values.append(v)
        if not _same_value(v, target):
            return False, f"lim of the difference quotient = {_short(v)}"
    return True, "lim of the difference quotients: " + ", ".join(_short(v) for v in values)


def _m_induction(rel, p, rng):
    lhs, g = _sides(rel, "induction")
    if not (isinstance(lhs, sp.Sum) and len(lhs.limits) == 1):
        raise ValueError("induction checks Sum(f, (h, a, H)) = g(H)")
    h, lo, H = lhs.limits[0]
    if not (H.is_Symbol and H.is_integer):
        raise ValueError(f"induction: the upper bound {H} must be an integer symbol")
    f, c, bases = lhs.function, p.get("coeff", sp.Integer(1)), p.get("bases", {})
    ks = [H] + ([h] if h.is_integer else [])
    base = g.subs(H, lo - 1)
    if not (_fraction_zero(base) or sp.simplify(base) == 0):
        return False, f"g({lo - 1}) = {_short(base)}, not the empty sum 0"
    if c == 1 and not f.has(H):
        step = g - g.subs(H, H - 1) - f.subs(h, H)
        shift_ok, text = True, "g(H) - g(H-1) = f(H)"
    else:
        shift = c * f.subs(H, H - 1) - f.subs(h, h + 1)
        shift_ok = _power_identity_zero(shift, ks, bases)
        step = g - c * g.subs(H, H - 1) - f.subs(h, lo)
        text = f"{c} f(H-1, h) = f(H, h+1) and g(H) - {c} g(H-1) = f(H, {lo})"
    ok = shift_ok and _power_identity_zero(step, [H], bases)
    return ok, f"g({lo - 1}) = 0; {text} (powers of H as independent symbols)"


def _m_power_identity(rel, p, rng):
    lhs, rhs = _sides(rel, "power_identity")
    ks = p["k"] if isinstance(p["k"], (list, tuple)) else [p["k"]]
    return all(_power_identity_zero(_value(a) - _value(b), ks, p.get("bases", {})) for a, b in _pairs(lhs, rhs)), ""


def _m_rewrite(rel, p, rng):
    lhs, rhs = _sides(rel, "rewrite")
    target = p["target"]
    ok, shown = True, []
    for a, b in _pairs(lhs, rhs):
        ra = a.rewrite(target)
        shown.append(ra)
        ok &= ra.as_dummy() == b.as_dummy() or identically_zero(ra - b)
    return ok, "rewritten: " + ", ".join(_short(x) for x in shown)


def _m_cited(rel, p, rng):
    lhs, rhs = _sides(rel, "cited")
    der, name = p["derivation"], p["result"]
    if der.status != "proved":
        return False, f"{der.claim} is {der.status}"
    if name not in der.results:
        return False, f"{der.claim} has no result {name}"
    return _fraction_zero(rhs - der.results[name].expr), f"{der.claim} {der.status}; result {name}"


def _m_convex_bound(rel, p, rng):
    big, small, strict = _inequality(rel, "convex_bound")
    (x,) = big.free_symbols
    f2 = sp.simplify(sp.diff(big, x, 2))
    if not f2.is_positive:
        return False, f"f'' = {_short(f2)} not shown > 0"
    crit = sp.solve(sp.diff(big, x), x)
    if len(crit) != 1:
        return False, f"stationary points {crit}"
    gap = sp.simplify(big.subs(x, crit[0]) - small)
    ok = bool(gap.is_positive) if strict else bool(gap.is_nonnegative)
    return ok, f"f'' = {_short(f2)} > 0; f' = 0 only at {x} = {_short(crit[0])}; f there - bound = {_short(gap)}"


def _m_piecewise(rel, p, rng):
    lhs, rhs = _sides(rel, "piecewise")
    ok = all(sp.simplify(sp.piecewise_fold((_value(a) - _value(b)).rewrite(sp.Piecewise))) == 0
             for a, b in _pairs(lhs, rhs))
    return ok, "Min/Max as Piecewise: every piece of the difference simplifies to 0"


def _explicit_sums(expr: Any) -> Any:
    """Every Sum with integer bounds written out term by term (faster than SymPy's summation)."""
    def out(node):
        (i, lo, hi), = node.limits if len(node.limits) == 1 else (None,)
        if i is None or not (lo.is_Integer and hi.is_Integer):
            return node.doit()
        return sp.Add(*[node.function.xreplace({i: sp.Integer(k)}) for k in range(int(lo), int(hi) + 1)])
    return expr.replace(lambda x: isinstance(x, sp.Sum), out)


def _exponential_sum_coefficients(g: Any, x: sp.Symbol) -> dict:
    """``{b: c_b}`` of g(x) = sum_b c_b b**x (rational c_b, b > 0); a Sum over i = a..b of
    c(i) i**x is read off term by term without building the sum."""
    coef: dict = {}
    if isinstance(g, sp.Sum) and len(g.limits) == 1 and all(v.is_Integer for v in g.limits[0][1:]):
        i, lo, hi = g.limits[0]
        c, pw = g.function.as_independent(x, as_Add=False)
        if pw == i**x:
            for k in range(int(lo), int(hi) + 1):
                b = sp.Integer(k)
                coef[b] = coef.get(b, 0) + c.xreplace({i: b})
            g = sp.Integer(0)
    for term in sp.Add.make_args(_explicit_sums(g)):
        if term == 0:
            continue
        c, pw = term.as_coeff_Mul()
        b = sp.Integer(1) if pw == 1 else (pw.base if isinstance(pw, sp.Pow) and pw.exp == x else None)
        if b is None:
            raise ValueError(f"descartes_root: {term} is not c*b**{x}")
        coef[b] = coef.get(b, 0) + c
    for b, c in coef.items():
        if not (c.is_Rational and b.is_Rational and b > 0):
            raise ValueError(f"descartes_root: coefficient {c} of {b}**{x} is not rational with {b} > 0")
    return coef


def _m_descartes_root(rel, p, rng):
    lhs, rhs = _sides(rel, "descartes_root")
    comps = list(zip(lhs, rhs)) if isinstance(lhs, sp.Tuple) else [(lhs, rhs)]
    insts = p["instances"] if isinstance(lhs, sp.Tuple) else [p["instances"]]
    unknowns = p["unknown"] if isinstance(lhs, sp.Tuple) else [p["unknown"]]
    eps = mpmath.mpf(10) ** (-p.get("digits", 25))
    n = 0
    for (g, zero), cases, x in zip(comps, insts, unknowns):
        if zero != 0:
            raise ValueError("descartes_root checks g(x) = 0")
        for subs, root in cases:
            coef = _exponential_sum_coefficients(g.subs(subs), x)
            seq = [coef[b] for b in sorted(coef) if coef[b] != 0]
            changes = sum(1 for a, b in zip(seq, seq[1:]) if (a > 0) != (b > 0))
            if not (changes == 1 and seq[0] > 0 and sum(seq) > 0):
                return False, f"{subs}: {changes} sign changes, g(0) = {sum(seq)}"
            with mpmath.workdps(ROOT_DPS):
                gm = lambda t: mpmath.fsum(mpmath.mpf(c.p) / c.q * mpmath.power(mpmath.mpf(b.p) / b.q, t)  # noqa: E731
                                           for b, c in coef.items())
                r = mpmath.mpf(str(root))
                if not (gm(r - eps) > 0 > gm(r + eps)):
                    return False, f"{subs}: the root is not within {mpmath.nstr(eps, 3)} of {root}"
            n += 1
    return True, (f"{n} instances: coefficients change sign once (<= 1 root), g(0) > 0, "
                  f"sign change within {mpmath.nstr(eps, 3)} of the stated root")


def _m_inverse(rel, p, rng):
    lhs, rhs = _sides(rel, "inverse")
    if not isinstance(lhs, sp.Inverse):
        raise ValueError("inverse checks Inverse(M) = R")
    M = lhs.arg
    eye = sp.Identity(M.shape[0])
    return (sp.MatMul(M, rhs).doit() == eye and sp.MatMul(rhs, M).doit() == eye), "M R = R M = I"


def _m_conjunction(rel, p, rng):
    if not isinstance(rel, sp.And):
        raise ValueError("conjunction checks And(r1, r2, ...)")
    for part in rel.args:
        ok, _ = METHODS["simplify" if isinstance(part, sp.Equality) else "nonneg"].run(part, {}, rng)
        if not ok:
            return False, f"not confirmed: {_short(part)}"
    return True, f"{len(rel.args)} parts: equalities by simplify, inequalities by nonneg"


#: Every check method, by name. ``unchecked`` records a step SymPy cannot check.
METHODS: dict[str, Method] = {m.name: m for m in (
    Method("simplify", "both sides evaluated (doit); simplify(lhs - rhs) is 0",
           _difference_zero("simplify", sp.simplify)),
    Method("expand", "both sides evaluated (doit); expand(lhs - rhs) is 0", _difference_zero("expand", sp.expand)),
    Method("rational", f"lhs - rhs is exactly 0 at {RATIONAL_POINTS} random points (integers up to "
                       f"{INT_RANGE:.0e}, fractions p/q up to 2^30, signs as assumed)", _m_rational),
    Method("identically_zero", "lhs - rhs is 0 as one fraction, after expanding and treating sums and "
                               "integrals as linear operators with canonical bound variables", _m_identically_zero),
    Method("nonneg", "greater side - smaller side simplifies to something SymPy proves >= 0 (> 0)", _m_nonneg),
    Method("certificate", "greater - smaller equals the certificate, which SymPy proves >= 0 (> 0)",
           _m_certificate, ("certificate",), ("certificate",)),
    Method("matrix_expand", "lhs - rhs expanded and evaluated (with the stated rules) is the zero matrix",
           _m_matrix_expand, ("given",)),
    Method("trace_cyclic", "the traces agree after the stated refinement (e.g. QᵀQ = I) and cyclic "
                           "reordering", _m_trace_cyclic, ("assumptions",)),
    Method("expectation", "E(...) evaluated by linearity, E Z = 0, E Z Zᵀ = C (degree <= 2); then "
                          "equal to the rhs by expansion", _m_expectation,
           ("variables", "covariance"), ("variables", "covariance")),
    Method("solve", "SymPy's solve of the stated equation(s) gives exactly the rhs", _m_solve,
           ("equation", "unknowns"), ("equation",)),
    Method("limit", "every Limit evaluated by SymPy's limit (after the stated change of variable); "
                    "equal to the rhs", _m_limit, ("change",)),
    Method("power_limit", "integer H -> oo: powers b^H become 1/e or e (|b| > 1 or < 1), (-1)^H both "
                          "signs; the rational function is continuous at e = 0 with the rhs as value",
           _m_power_limit, ("bases", "substitution", "excluded")),
    Method("stolz_cesaro", "lim S(H)/b(H) with b increasing to oo: the limit of (S(H+1) - S(H))/"
                           "(b(H+1) - b(H)) equals the rhs", _m_stolz_cesaro),
    Method("induction", "sum closed form by induction on H: empty sum g(a-1) = 0 and the recurrence "
                        "step as an identity in powers of H", _m_induction, ("coeff", "bases")),
    Method("power_identity", "identity in powers of integer symbols: each power b^k an independent "
                             "symbol (bases as stated products), (-1)^k both signs", _m_power_identity,
           ("k", "bases"), ("k",)),
    Method("rewrite", "lhs rewritten by SymPy into the target form equals the rhs up to bound-variable "
                      "names", _m_rewrite, ("target",), ("target",)),
    Method("cited", "the rhs is a result of another derivation, which is proved", _m_cited,
           ("derivation", "result"), ("derivation", "result")),
    Method("convex_bound", "f'' > 0, f' = 0 at exactly one point, f there >= the bound: f >= bound",
           _m_convex_bound),
    Method("piecewise", "Min/Max rewritten as Piecewise; the difference simplifies to 0 on every piece",
           _m_piecewise),
    Method("descartes_root", "for each instance: the coefficients of sum c_b b^x change sign once "
                             "(at most one root), g(0) > 0, and g changes sign at the stated root",
           _m_descartes_root, ("instances", "unknown", "digits"), ("instances", "unknown")),
    Method("inverse", "R is the inverse of M: M R and R M evaluate to the identity", _m_inverse),
    Method("conjunction", "every part of the And checked: equalities by simplify, inequalities by nonneg",
           _m_conjunction),
)}

#: How a step can be checked: the names of :data:`METHODS`, and ``unchecked`` (SymPy cannot
#: check it: recorded with the reason, never counted as checked).
CHECK_METHODS = tuple(METHODS) + ("unchecked",)


@dataclass
class Derivation:
    """The machine-checked derivation of one claim."""

    claim: str
    title: str
    stated: str
    assumptions: dict[str, Assumption] = field(default_factory=dict)
    steps: list[Step] = field(default_factory=list)
    results: dict[str, Result] = field(default_factory=dict)
    comparisons: list[Comparison] = field(default_factory=list)
    seconds: float = 0.0
    seed: int = 20260521
    groups: dict[str, Group] = field(default_factory=dict)
    #: symbol name (or a family ``"w_*"``) -> its meaning (markup), for the printed derivation
    glossary: dict[str, str] = field(default_factory=dict)
    #: every text (title, statements, why, descriptions) is checked as markup (proofs.markup)
    markup: bool = False
    _open: list = field(default_factory=list, repr=False)

    def __post_init__(self) -> None:
        self._text(f"{self.claim}: title", self.title)
        self._text(f"{self.claim}: stated", self.stated)

    def _text(self, where: str, text: str) -> None:
        if self.markup and text:
            markup.check(text, where)

    # -- building -----------------------------------------------------------------------------
    def assume(self, name: str, statement: str, *, kind: str = "model", expr: Any = None,
               choice: str = "") -> Assumption:
        """Record an assumption; steps and results cite it by name in ``uses``. ``choice``: the
        group of alternatives it is one option of (see :class:`Assumption`)."""
        if kind not in ("setting", "model"):
            raise DefinitionError(f"assumption kind must be 'setting' or 'model', got {kind!r}")
        self._text(f"{self.claim}/{name}: statement", statement)
        self._text(f"{self.claim}/{name}: choice", choice)
        a = Assumption(name, statement, kind, expr, choice)
        self.assumptions[name] = a
        return a

    def step(self, name: str, relation: Any, *, by: str = "simplify", why: str = "", uses: Iterable[str] = (),
             reason: str = "", **params: Any) -> Step:
        """Add a step and check it now by the method ``by`` (see :data:`METHODS`); ``params`` are
        that method's inputs (``certificate=``, ``equation=``, ``given=``, ...). ``relation`` is a
        SymPy relation (``Eq``/``Le``/``Ge``/``Lt``/``Gt``/``And``) with its premise unevaluated;
        only ``by="unchecked"`` accepts a plain statement, with ``reason``."""
        if by not in CHECK_METHODS:
            raise DefinitionError(f"unknown check method {by!r}; choose from {CHECK_METHODS}")
        if any(s.name == name for s in self.steps):
            raise DefinitionError(f"{self.claim}/{name}: a second step of this name")
        uses = tuple(uses)
        self._check_uses(name, uses)
        self._text(f"{self.claim}/{name}: why", why)
        if by != "unchecked":
            method = METHODS[by]
            unknown = sorted(set(params) - set(method.params))
            missing = sorted(set(method.required) - set(params))
            if unknown or missing:
                raise DefinitionError(f"{self.claim}/{name}: method {by!r} takes {method.params or 'no parameters'}; "
                                      f"unknown {unknown}, missing {missing}")
            if relation in (sp.true, sp.false):
                raise DefinitionError(f"{self.claim}/{name}: the relation was evaluated to {relation} when it was "
                                      "built; build it with evaluate=False so the record shows the statement")
            if not isinstance(relation, (sp.Basic, sp.MatrixBase)):
                raise DefinitionError(f"{self.claim}/{name}: method {by!r} needs a SymPy relation, got "
                                      f"{type(relation).__name__}")
        elif params:
            raise DefinitionError(f"{self.claim}/{name}: an unchecked step takes only reason=, got {sorted(params)}")
        st = Step(name=name, relation=relation, method=by, why=why, uses=uses, params=dict(params))
        t0 = time.perf_counter()
        if by == "unchecked":
            st.status, st.detail = "unchecked", reason or "SymPy cannot check this step"
        else:
            try:
                ok, st.computed = METHODS[by].run(relation, params, functools.partial(self._rng, len(self.steps)))
            except Exception as exc:  # a check that raises has not checked anything
                ok, st.detail = False, f"{type(exc).__name__}: {exc}"
            st.status = "checked" if ok else "failed"
            if not ok and not st.detail:
                st.detail = f"{by} did not confirm {_short(relation)}" + (f" ({st.computed})" if st.computed else "")
        st.seconds = time.perf_counter() - t0
        self.steps.append(st)
        for g in self._open:
            g.steps.append(name)
            g.statuses[name] = st.status
        return st

    @contextlib.contextmanager
    def group(self, name: str, description: str = "") -> Iterator[Group]:
        """Gather the steps, results and comparisons made inside the block into the group ``name``
        (groups may nest: an inner step belongs to every open group)."""
        if not name.isidentifier() or name in self.groups:
            raise DefinitionError(f"{self.claim}: group name {name!r} must be a new Python identifier")
        self._text(f"{self.claim}/group {name}: description", description)
        g = Group(name, description)
        self.groups[name] = g
        self._open.append(g)
        try:
            yield g
        finally:
            self._open.remove(g)
        if not g.steps:
            raise DefinitionError(f"{self.claim}: group {name!r} has no steps")

    def in_groups(self, *table: tuple[str, str, Callable]) -> None:
        """Each ``(name, description, build)`` of ``table``: ``build(self)`` inside the group ``name``."""
        for name, description, build in table:
            with self.group(name, description):
                build(self)

    def define(self, **meanings: str) -> None:
        """Say what symbols mean, for the printed derivation: ``der.define(V="the common head
        variance")``; a name ending in ``_`` defines a family (``w_="the NW weights w_i^h"``)."""
        for key, text in meanings.items():
            self._text(f"{self.claim}: meaning of {key}", text)
            self.glossary[key[:-1] + "*" if key.endswith("_") else key] = text

    def glossary_entry(self, symbol_name: str) -> tuple[str, str] | None:
        """``(key, meaning)`` of ``symbol_name``: its own entry, the longest family that covers it
        (``"w_*"``), or the shared notation's; None if it is not defined."""
        from .notation import GLOSSARY

        if symbol_name in self.glossary:
            return symbol_name, self.glossary[symbol_name]
        fams = [k for k in self.glossary if k.endswith("*") and symbol_name.startswith(k[:-1])]
        if fams:
            key = max(fams, key=len)
            return key, self.glossary[key]
        return (symbol_name, GLOSSARY[symbol_name]) if symbol_name in GLOSSARY else None

    def meaning(self, symbol_name: str) -> str | None:
        """What ``symbol_name`` means (None if it is not defined)."""
        entry = self.glossary_entry(symbol_name)
        return entry[1] if entry else None

    def result(self, name: str, expr: Any, *, args: Sequence = (), description: str = "", uses: Iterable[str] = (),
               codegen: tuple[str, ...] = (), domain: dict | None = None) -> Result:
        """Name a derived expression. ``codegen`` names the generated functions the numeric side
        calls ("numpy", "mpmath"); ``args`` fixes their argument order and must cover every free
        symbol."""
        if not name.isidentifier():
            raise DefinitionError(f"result name must be a Python identifier, got {name!r}")
        uses = tuple(uses)
        self._check_uses(name, uses)
        self._text(f"{self.claim}/{name}: description", description)
        args, codegen = tuple(args), tuple(codegen)
        if not set(codegen) <= {"numpy", "mpmath"} or len(set(codegen)) != len(codegen):
            raise DefinitionError(f"result {name!r}: codegen names \"numpy\" and/or \"mpmath\", got {codegen}")
        missing = set(getattr(expr, "free_symbols", set())) - set(args) if codegen else set()
        if missing:
            raise DefinitionError(f"result {name!r}: args {args} miss free symbols {sorted(map(str, missing))}")
        r = Result(name, expr, args, description, uses, codegen, dict(domain or {}))
        self.results[name] = r
        for g in self._open:
            g.results.append(name)
        return r

    def compare(self, name: str, *, stated: str, derived: str, supported_by: Group | None = None,
                refuted_by: Group | None = None, detail: str = "", uses: Iterable[str] = ()) -> Comparison:
        """Record how a derived result compares with the paper's statement (a finding), decided
        by a group of checked steps: it holds when the steps of ``supported_by`` all checked and
        fails when those of ``refuted_by`` did (``None``, undecided, while one of them failed:
        the derivation then fails as a whole)."""
        uses = tuple(uses)
        self._check_uses(name, uses)
        for w, text in (("stated", stated), ("derived", derived), ("detail", detail)):
            self._text(f"{self.claim}/{name}: {w}", text)
        if (supported_by is None) == (refuted_by is None):
            raise DefinitionError(f"{self.claim}/{name}: a comparison names exactly one group, supported_by= or "
                                  "refuted_by=")
        group = supported_by if supported_by is not None else refuted_by
        if not isinstance(group, Group) or self.groups.get(group.name) is not group:
            raise DefinitionError(f"{self.claim}/{name}: {group!r} is not a group of this derivation")
        failed = any(s == "failed" for s in group.statuses.values())
        value = None if failed else group.proved == (supported_by is not None)
        kind = "supported_by" if supported_by is not None else "refuted_by"
        c = Comparison(name, stated, derived, value, f"the steps of group {group.name}", detail, uses,
                       steps=tuple(group.steps), decided_by=f"{kind} {group.name}")
        self.comparisons.append(c)
        for g in self._open:
            g.comparisons.append(name)
        return c

    # -- checking -----------------------------------------------------------------------------
    def _check_uses(self, name: str, uses: tuple[str, ...]) -> None:
        unknown = [u for u in uses if u not in self.assumptions]
        if unknown:
            raise DefinitionError(f"{self.claim}/{name}: cites unknown assumptions {unknown}")

    def _rng(self, index: int) -> random.Random:
        return random.Random(f"{self.seed}/{self.claim}/{index}")

    def rational_points(self, symbols: Iterable[sp.Symbol], count: int = RATIONAL_POINTS) -> Iterator[dict]:
        """The points the ``rational`` method draws for the *next* step of this derivation, in
        order (deterministic from ``seed``, ``claim`` and the step's index). A point where the
        relation is not finite is skipped and the next one used."""
        rng = self._rng(len(self.steps))
        syms = list(symbols)
        for _ in range(count):
            yield sample_point(syms, rng)

    # -- reading ------------------------------------------------------------------------------
    @property
    def failed(self) -> list[Step]:
        return [s for s in self.steps if s.status == "failed"]

    @property
    def unchecked(self) -> list[Step]:
        return [s for s in self.steps if s.status == "unchecked"]

    @property
    def status(self) -> str:
        """``proved`` (all steps checked), ``proved-with-unchecked-steps`` or ``failed``."""
        if self.failed:
            return "failed"
        if self.unchecked:
            return "proved-with-unchecked-steps"
        return "proved"

    def model_assumptions(self, uses: Iterable[str] | None = None) -> list[Assumption]:
        """The ``model`` assumptions, all of them or those among ``uses``."""
        names = self.assumptions if uses is None else uses
        return [self.assumptions[n] for n in names if self.assumptions[n].kind == "model"]

    def raise_on_failure(self) -> None:
        if self.failed:
            names = ", ".join(f"{self.claim}/{s.name} ({s.detail})" for s in self.failed)
            raise DerivationError(f"step failed to check: {names}")

    def to_dict(self) -> dict:
        return {
            "claim": self.claim,
            "title": self.title,
            "stated": self.stated,
            "status": self.status,
            "seconds": round(self.seconds, 3),
            "assumptions": [a.to_dict() for a in self.assumptions.values()],
            "steps": [s.to_dict() for s in self.steps],
            "results": [r.to_dict() for r in self.results.values()],
            "comparisons": [c.to_dict() for c in self.comparisons],
            "groups": [g.to_dict() for g in self.groups.values()],
            "glossary": dict(self.glossary),
        }
