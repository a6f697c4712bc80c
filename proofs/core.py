"""The derivation framework: assumptions as data, machine-checked steps, named results.

A claim module builds one :class:`Derivation`. Every step is a SymPy relation that is checked
the moment it is added, by a named method; a step SymPy cannot check is recorded as
``unchecked`` with its reason, never silently accepted. Comparisons between what was derived
and what the paper states are *findings*: a comparison that comes out false is a result, not
a failure. A failed step is a failure: :meth:`Derivation.raise_on_failure` names it.
"""

from __future__ import annotations

import random
import time
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, Callable, Iterable, Sequence

import sympy as sp

__all__ = [
    "Assumption",
    "Step",
    "Result",
    "Comparison",
    "Derivation",
    "DerivationError",
    "CHECK_METHODS",
]

#: How a step can be checked. ``rational`` evaluates the difference exactly at random rational
#: points (a randomised identity test, exact arithmetic, never floating point).
CHECK_METHODS = (
    "simplify",     # simplify(lhs - rhs) == 0
    "expand",       # expand(lhs - rhs) == 0
    "equals",       # lhs.equals(rhs) is True
    "rational",     # lhs - rhs == 0 at RATIONAL_POINTS random rational points, exactly
    "nonneg",       # (greater side - smaller side) simplifies to something SymPy proves >= 0
    "certificate",  # greater - smaller == certificate (by expand), certificate provably >= 0
    "custom",       # a zero-argument callable returns True (solve, limit, series, ...)
    "unchecked",    # SymPy cannot check it: recorded with the reason, never counted as checked
)

#: Number of random rational points for the ``rational`` method. A non-zero rational function
#: of bounded degree vanishes at a random point of a large box with probability ~ deg / size.
RATIONAL_POINTS = 6


class DerivationError(RuntimeError):
    """A step of a derivation failed to check."""


@dataclass(frozen=True)
class Assumption:
    """A condition a result rests on.

    ``kind`` is ``"setting"`` for what defines the objects (symbol domains, the regression
    model ``y = f + eps``) and ``"model"`` for a restriction a claim needs beyond that
    (uniform weights, a covariance model). Only results free of ``model`` assumptions can
    support the verdict *exact*.
    """

    name: str
    statement: str
    kind: str = "model"
    expr: Any = None

    def to_dict(self) -> dict:
        out = {"name": self.name, "statement": self.statement, "kind": self.kind}
        if self.expr is not None:
            out["expr"] = str(self.expr)
        return out


@dataclass
class Step:
    """One checked (or explicitly unchecked) relation of a derivation."""

    name: str
    relation: Any
    method: str
    why: str = ""
    uses: tuple[str, ...] = ()
    status: str = "pending"   # checked | failed | unchecked
    detail: str = ""
    seconds: float = 0.0

    @property
    def checked(self) -> bool:
        return self.status == "checked"

    def latex(self, *, macros: bool = False) -> str:
        """The relation as LaTeX, printed by SymPy with the project's symbol names."""
        from .notation import to_latex

        return to_latex(self.relation, macros=macros)

    def to_dict(self) -> dict:
        return {
            "name": self.name,
            "relation": str(self.relation),
            "method": self.method,
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
    codegen: bool = True
    #: Where the result is meant to be evaluated, ``{symbol: (low, high)}``; symbols not listed
    #: range over what their SymPy assumptions allow. Tests sample the generated code here.
    domain: dict = field(default_factory=dict)

    def latex(self, *, macros: bool = False) -> str:
        """The expression as LaTeX, printed by SymPy with the project's symbol names."""
        from .notation import to_latex

        return to_latex(self.expr, macros=macros)

    def to_dict(self) -> dict:
        return {
            "name": self.name,
            "expr": str(self.expr),
            "args": [str(a) for a in self.args],
            "description": self.description,
            "uses": list(self.uses),
        }


@dataclass
class Comparison:
    """Derived versus stated: ``holds`` is a finding, True or False, never a failure."""

    name: str
    stated: str
    derived: str
    holds: bool
    method: str
    detail: str = ""
    uses: tuple[str, ...] = ()

    def to_dict(self) -> dict:
        return {
            "name": self.name,
            "stated": self.stated,
            "derived": self.derived,
            "holds": bool(self.holds),
            "method": self.method,
            "detail": self.detail,
            "uses": list(self.uses),
        }


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

    # -- building -----------------------------------------------------------------------------
    def assume(self, name: str, statement: str, *, kind: str = "model", expr: Any = None) -> Assumption:
        """Record an assumption; steps and results cite it by name in ``uses``."""
        if kind not in ("setting", "model"):
            raise ValueError(f"assumption kind must be 'setting' or 'model', got {kind!r}")
        a = Assumption(name, statement, kind, expr)
        self.assumptions[name] = a
        return a

    def step(
        self,
        name: str,
        relation: Any,
        *,
        by: str = "simplify",
        why: str = "",
        uses: Iterable[str] = (),
        check: Callable[[], bool] | None = None,
        certificate: Any = None,
        reason: str = "",
    ) -> Step:
        """Add a step and check it now. ``relation`` is a SymPy ``Eq``/``Le``/``Ge``/``Lt``/``Gt``
        (or, for ``by="custom"``/``"unchecked"``, any object describing the statement)."""
        if by not in CHECK_METHODS:
            raise ValueError(f"unknown check method {by!r}; choose from {CHECK_METHODS}")
        uses = tuple(uses)
        self._check_uses(name, uses)
        if relation in (sp.true, sp.false) and by not in ("custom", "unchecked"):
            raise ValueError(f"{self.claim}/{name}: the relation was evaluated to {relation} when it was built; "
                             "build it with evaluate=False so the record shows the statement")
        st = Step(name=name, relation=relation, method=by, why=why, uses=uses)
        t0 = time.perf_counter()
        if by == "unchecked":
            st.status, st.detail = "unchecked", reason or "SymPy cannot check this step"
        else:
            try:
                ok = self._run_check(relation, by, check, certificate)
            except Exception as exc:  # a check that raises has not checked anything
                ok, st.detail = False, f"{type(exc).__name__}: {exc}"
            st.status = "checked" if ok else "failed"
            if not ok and not st.detail:
                st.detail = f"{by} did not confirm {relation}"
        st.seconds = time.perf_counter() - t0
        self.steps.append(st)
        return st

    def result(
        self,
        name: str,
        expr: Any,
        *,
        args: Sequence = (),
        description: str = "",
        uses: Iterable[str] = (),
        codegen: bool = True,
        domain: dict | None = None,
    ) -> Result:
        """Name a derived expression. ``args`` fixes the argument order of its generated code
        and must cover every free symbol."""
        if not name.isidentifier():
            raise ValueError(f"result name must be a Python identifier, got {name!r}")
        uses = tuple(uses)
        self._check_uses(name, uses)
        args = tuple(args)
        if codegen:
            free = getattr(expr, "free_symbols", set())
            missing = set(free) - set(args)
            if missing:
                raise ValueError(f"result {name!r}: args {args} miss free symbols {sorted(map(str, missing))}")
        r = Result(name, expr, args, description, uses, codegen, dict(domain or {}))
        self.results[name] = r
        return r

    def compare(
        self,
        name: str,
        *,
        stated: str,
        derived: str,
        holds: bool,
        method: str,
        detail: str = "",
        uses: Iterable[str] = (),
    ) -> Comparison:
        """Record how a derived result compares with the paper's statement (a finding)."""
        uses = tuple(uses)
        self._check_uses(name, uses)
        c = Comparison(name, stated, derived, bool(holds), method, detail, uses)
        self.comparisons.append(c)
        return c

    # -- checking -----------------------------------------------------------------------------
    def _check_uses(self, name: str, uses: tuple[str, ...]) -> None:
        unknown = [u for u in uses if u not in self.assumptions]
        if unknown:
            raise ValueError(f"{self.claim}/{name}: cites unknown assumptions {unknown}")

    def _run_check(self, relation: Any, by: str, check: Callable[[], bool] | None, certificate: Any) -> bool:
        if by == "custom":
            if check is None:
                raise ValueError("by='custom' needs check=callable")
            return bool(check())
        if isinstance(relation, sp.Equality):
            diff = relation.lhs - relation.rhs
            if by == "simplify":
                return _is_zero(sp.simplify(diff))
            if by == "expand":
                return _is_zero(sp.expand(diff))
            if by == "equals":
                return relation.lhs.equals(relation.rhs) is True
            if by == "rational":
                return _rational_zero(diff, self._rng())
            raise ValueError(f"method {by!r} does not apply to an equality")
        if isinstance(relation, (sp.GreaterThan, sp.StrictGreaterThan, sp.LessThan, sp.StrictLessThan)):
            strict = isinstance(relation, (sp.StrictGreaterThan, sp.StrictLessThan))
            big, small = (relation.lhs, relation.rhs) if isinstance(
                relation, (sp.GreaterThan, sp.StrictGreaterThan)) else (relation.rhs, relation.lhs)
            gap = big - small
            if by == "nonneg":
                g = sp.simplify(gap)
                return bool(g.is_positive) if strict else bool(g.is_nonnegative)
            if by == "certificate":
                if certificate is None:
                    raise ValueError("by='certificate' needs certificate=expr")
                same = _is_zero(sp.expand(gap - certificate)) or _is_zero(sp.simplify(gap - certificate))
                sign = certificate.is_positive if strict else certificate.is_nonnegative
                return bool(same and sign)
            raise ValueError(f"method {by!r} does not apply to an inequality")
        raise ValueError(f"cannot check {type(relation).__name__} {relation!r} by {by!r}")

    def _rng(self) -> random.Random:
        return random.Random(f"{self.seed}/{self.claim}/{len(self.steps)}")

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
        }


def _is_zero(expr: Any) -> bool:
    if isinstance(expr, sp.MatrixBase):
        return all(_is_zero(e) for e in expr)
    if getattr(expr, "is_ZeroMatrix", False):
        return True
    return expr == 0 or expr.is_zero is True


def _rational_zero(diff: Any, rng: random.Random) -> bool:
    """Evaluate ``diff`` exactly at random rational points of its free symbols (respecting
    positivity/integer assumptions); True if it vanishes at every point."""
    syms = sorted(getattr(diff, "free_symbols", set()), key=str)
    if not syms:
        return _is_zero(sp.nsimplify(sp.simplify(diff)))
    for _ in range(RATIONAL_POINTS):
        subs = {s: _random_value(s, rng) for s in syms}
        val = diff.xreplace(subs) if not isinstance(diff, sp.MatrixBase) else diff.subs(subs)
        val = sp.nsimplify(sp.simplify(val)) if not _is_zero(val) else val
        if not _is_zero(val):
            return False
    return True


def _random_value(sym: sp.Symbol, rng: random.Random) -> sp.Rational:
    if sym.is_integer:
        return sp.Integer(rng.randint(2, 9))
    num = rng.randint(1, 997)
    den = rng.randint(1, 991)
    v = Fraction(num, den)
    if not (sym.is_positive or sym.is_nonnegative) and rng.random() < 0.5:
        v = -v
    return sp.Rational(v.numerator, v.denominator)
