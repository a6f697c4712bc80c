"""The derivation framework: each check method confirms true steps and rejects false ones (each of
its soundness rules alone), the random sampling of ``rational`` cannot be fooled by a few linear
factors, every derivation reads as a derivation (no identical sides, every symbol defined and
printed as mathematics, every text markup, every finding decided by a group), and the command line
fails cleanly."""

from __future__ import annotations

import importlib.util
import re
from fractions import Fraction
from pathlib import Path

import pytest
import sympy as sp
from sympy.core.function import AppliedUndef

import proofs
from proofs import all_derivations, derivation, markup
from proofs.__main__ import describe, main
from proofs.core import (CHECK_METHODS, METHODS, DefinitionError, Derivation, DerivationError, expect_matexpr,
                         expect_poly, identically_zero, trace_equal)
from proofs.notation import to_latex
from verify.claims import CLAIMS
from verify.notebook import identical_sides

x, y = sp.symbols("x y", positive=True)
a = sp.Symbol("a", real=True)
n = sp.Symbol("n", integer=True)
m = sp.Symbol("m", integer=True, positive=True)
k = sp.Symbol("k", integer=True)
H = sp.Symbol("H", integer=True, positive=True)
h = sp.Symbol("h", integer=True, positive=True)
r = sp.Symbol("r", positive=True)
s = sp.Symbol("s", positive=True)
beta = sp.Symbol("beta")
i, j = sp.symbols("i j", integer=True, positive=True)
kappa = sp.IndexedBase("kappa", positive=True)
E = sp.Function("E")
Z = sp.symbols("Z_1:3", real=True)
C = sp.Matrix(2, 2, lambda p, q: sp.Symbol(f"C_{min(p, q) + 1}{max(p, q) + 1}", real=True))
dk = sp.Symbol("d_k", integer=True, positive=True)
A_, M_ = sp.MatrixSymbol("A", dk, dk), sp.MatrixSymbol("M", dk, dk)
U = sp.MatrixSymbol("U", n, dk)
X3, Y3, Z3 = (sp.MatrixSymbol(nm, 3, 3) for nm in "XYZ")
PHI, PSI = (1 + sp.sqrt(5)) / 2, (1 - sp.sqrt(5)) / 2
FIB = lambda t: (PHI**t - PSI**t) / sp.sqrt(5)  # noqa: E731
BINET_BASES = {sp.expand(PHI**2): PHI**2, sp.expand(PSI**2): PSI**2, sp.Integer(-1): PHI * PSI}
#: g(beta) = 1 - 2^beta/4: one sign change, root beta* = 2 exactly
G_ROOT = sp.Sum(sp.Piecewise((1, sp.Eq(h, 1)), (-sp.Rational(1, 4), True)) * h**beta, (h, 1, 2))


def fresh(name: str = "CX") -> Derivation:
    d = Derivation(claim=name, title="test", stated="nothing")
    d.assume("pos", "x, y > 0", kind="setting")
    d.assume("model", "a restriction", kind="model")
    return d


def proved_source() -> Derivation:
    src = fresh("CS")
    src.step("ok", sp.Eq(x + x, 2 * x, evaluate=False), by="expand")
    src.result("double", 2 * x, args=(x,))
    return src


def failed_source() -> Derivation:
    src = proved_source()
    src.step("bad", sp.Eq(x + x, 3 * x, evaluate=False), by="expand")
    return src


def _eq(lhs, rhs):
    return sp.Eq(lhs, rhs, evaluate=False)


# (relation, method, parameters): one true and at least one false case for every method
TRUE_STEPS = [
    pytest.param(_eq((x + y) ** 2, x**2 + 2 * x * y + y**2), "expand", {}, id="expand"),
    pytest.param(_eq(sp.sin(x) ** 2 + sp.cos(x) ** 2, 1), "simplify", {}, id="simplify"),
    pytest.param(_eq(sp.Subs(x**2 + y, x, 3), y + 9), "simplify", {}, id="simplify-subs"),
    pytest.param(_eq((x**3 - y**3) / (x - y), x**2 + x * y + y**2), "rational", {}, id="rational"),
    pytest.param(_eq(sp.Product(n - k, (k, 2, 9)), sp.expand(sp.prod([n - t for t in range(2, 10)]))), "rational",
                 {}, id="rational-product"),
    pytest.param(_eq(kappa[i] / sp.Sum(kappa[j], (j, 1, m)) * sp.Sum(kappa[j], (j, 1, m)) / kappa[i], 1),
                 "identically_zero", {}, id="identically_zero"),
    pytest.param(_eq(sp.Sum(kappa[i] / sp.Sum(kappa[j], (j, 1, m)), (i, 1, m)), 1), "identically_zero", {},
                 id="identically_zero-sum"),
    pytest.param(sp.Ge(x**2 + y**2, 2 * x * y), "certificate", {"certificate": (x - y) ** 2}, id="certificate"),
    pytest.param(sp.Ge(x + y, x, evaluate=False), "nonneg", {}, id="nonneg"),
    pytest.param(_eq(sp.MatMul(sp.Transpose(A_ * M_), A_), M_.T * A_.T * A_), "matrix_expand", {},
                 id="matrix_expand"),
    pytest.param(_eq(U * U.T * U * U.T, U * U.T), "matrix_expand", {"given": {U.T * U: sp.Identity(dk)}},
                 id="matrix_expand-given"),
    pytest.param(_eq(sp.Trace((A_.T * M_).T * (A_.T * M_)), sp.Trace(M_.T * M_)), "trace_cyclic",
                 {"assumptions": sp.Q.orthogonal(A_)}, id="trace_cyclic"),
    pytest.param(_eq(E((Z[0] + Z[1] + a) ** 2), a**2 + C[0, 0] + 2 * C[0, 1] + C[1, 1]), "expectation",
                 {"variables": Z, "covariance": C}, id="expectation"),
    pytest.param(_eq(x, 2), "solve", {"equation": _eq(x**2, 4)}, id="solve"),
    pytest.param(_eq(sp.Limit(1 / x, x, sp.oo), 0), "limit", {}, id="limit"),
    pytest.param(_eq(sp.Limit(sp.log(x) / x, x, sp.oo), 0), "limit", {"change": (x, sp.exp(y), y, sp.oo)},
                 id="limit-change"),
    pytest.param(_eq(sp.Limit(2**H / (2**H + 1), H, sp.oo), 1), "power_limit", {}, id="power_limit"),
    pytest.param(_eq(sp.Limit(FIB(H + 1) / FIB(H), H, sp.oo), PHI), "power_limit", {"bases": {PSI: -1 / PHI}},
                 id="power_limit-fibonacci"),
    pytest.param(_eq(sp.Limit(sp.Sum(h, (h, 1, H)) / H**2, H, sp.oo), sp.Rational(1, 2)), "stolz_cesaro", {},
                 id="stolz_cesaro"),
    pytest.param(_eq(sp.Sum(r ** (h - 1), (h, 1, H)), (1 - r**H) / (1 - r)), "induction", {}, id="induction"),
    # sum_k F_k s^(H-k) (k = H+1-h): two geometric sums, phi^k and psi^k against s^(H-k)
    pytest.param(_eq(sp.Sum(FIB(H + 1 - h) * s ** (h - 1), (h, 1, H)),
                     (PHI * (PHI**H - s**H) / (PHI - s) - PSI * (PSI**H - s**H) / (PSI - s)) / sp.sqrt(5)),
                 "induction", {"coeff": s}, id="induction-coeff"),
    pytest.param(_eq(FIB(h) ** 2, (sp.expand(PHI**2) ** h + sp.expand(PSI**2) ** h - 2 * (-1) ** h) / 5),
                 "power_identity", {"k": h, "bases": BINET_BASES}, id="power_identity"),
    pytest.param(_eq(((-1) ** h + 1) ** 2, 2 + 2 * (-1) ** h), "power_identity", {"k": h},
                 id="power_identity-sign"),       # needs ((-1)^h)^2 = 1: both signs tried
    pytest.param(_eq(sp.harmonic(H, -2), sp.Sum(h**2, (h, 1, H))), "rewrite", {"target": sp.Sum}, id="rewrite"),
    pytest.param(_eq(sp.Symbol("D"), 2 * x), "cited", {"derivation": proved_source(), "result": "double"},
                 id="cited"),
    pytest.param(sp.Ge(x * sp.log(x), -sp.exp(-1), evaluate=False), "convex_bound", {}, id="convex_bound"),
    pytest.param(_eq(sp.Min(1, 1 - a), 1 - sp.Max(0, a)), "piecewise", {}, id="piecewise"),
    pytest.param(_eq(G_ROOT, 0), "descartes_root", {"instances": [({}, sp.Float(2))], "unknown": beta},
                 id="descartes_root"),
    pytest.param(_eq(sp.Inverse(X3 * Y3 * Z3), Z3.I * Y3.I * X3.I), "inverse", {}, id="inverse"),
    pytest.param(sp.And(_eq(x + x, 2 * x), sp.Ge(x + y, x, evaluate=False)), "conjunction", {}, id="conjunction"),
]

FALSE_STEPS = [
    pytest.param(_eq((x + y) ** 2, x**2 + y**2), "expand", {}, id="expand"),
    pytest.param(_eq(sp.sin(x) ** 2 + sp.cos(x) ** 2, 2), "simplify", {}, id="simplify"),
    pytest.param(_eq(sp.Subs(x**2 + y, x, 3), y + 6), "simplify", {}, id="simplify-subs-evaluated"),
    pytest.param(_eq((x**3 - y**3) / (x - y), x**2 + y**2), "rational", {}, id="rational"),
    pytest.param(_eq(sp.Product(n - k, (k, 2, 9)), 0), "rational", {}, id="rational-vanishes-on-2..9"),
    pytest.param(_eq(sp.Product(m - k, (k, 1, 100)), 0), "rational", {}, id="rational-vanishes-on-1..100"),
    pytest.param(_eq(sp.Product(x - k / 7, (k, 1, 60)), 0), "rational", {}, id="rational-small-fractions"),
    pytest.param(_eq(sp.Sum(kappa[i] / sp.Sum(kappa[j], (j, 1, m)), (i, 1, m)), 2), "identically_zero", {},
                 id="identically_zero"),
    pytest.param(sp.Ge(x**2 + y**2, 3 * x * y), "certificate", {"certificate": (x - y) ** 2}, id="certificate"),
    pytest.param(sp.Ge(a, 0, evaluate=False), "certificate", {"certificate": a}, id="certificate-not-nonneg"),
    pytest.param(sp.Ge(x, x + y, evaluate=False), "nonneg", {}, id="nonneg"),
    pytest.param(_eq(sp.MatMul(sp.Transpose(A_ * M_), A_), A_.T * M_.T * A_), "matrix_expand", {},
                 id="matrix_expand"),
    pytest.param(_eq(U * U.T * U * U.T, U * U.T), "matrix_expand", {}, id="matrix_expand-without-rule"),
    pytest.param(_eq(sp.Trace((A_.T * M_).T * (A_.T * M_)), sp.Trace(M_.T * M_)), "trace_cyclic", {},
                 id="trace_cyclic-not-orthogonal"),
    pytest.param(_eq(E((Z[0] + Z[1] + a) ** 2), a**2 + C[0, 0] + C[0, 1] + C[1, 1]), "expectation",
                 {"variables": Z, "covariance": C}, id="expectation"),
    pytest.param(_eq(x, 3), "solve", {"equation": _eq(x**2, 4)}, id="solve-wrong-root"),
    pytest.param(_eq(a, 2), "solve", {"equation": _eq(a**2, 4)}, id="solve-not-unique"),
    pytest.param(_eq(a, -2), "solve", {"equation": _eq(a**2, 4)}, id="solve-not-unique-first-root"),
    pytest.param(_eq(sp.Limit(1 / x, x, sp.oo), 1), "limit", {}, id="limit"),
    pytest.param(_eq(sp.Limit(sp.log(x) / x, x, sp.oo), 0), "limit", {"change": (x, sp.cos(y), y, sp.oo)},
                 id="limit-change-not-monotone"),
    pytest.param(_eq(sp.Limit(sp.log(x) / x, x, sp.oo), 0), "limit", {"change": (x, -sp.exp(y), y, sp.oo)},
                 id="limit-change-wrong-point"),
    pytest.param(_eq(sp.Limit(2**H / (2**H + 1), H, sp.oo), 0), "power_limit", {}, id="power_limit"),
    pytest.param(_eq(sp.Limit(FIB(H + 1) / FIB(H), H, sp.oo), -PSI), "power_limit", {"bases": {PSI: -1 / PHI}},
                 id="power_limit-fibonacci"),
    # (1 + 1/H)^H -> e, not oo: its base is not a constant, the power is no independent variable
    pytest.param(_eq(sp.Limit((1 + 1 / H) ** H / (1 + (1 + 1 / H) ** H), H, sp.oo), 1), "power_limit", {},
                 id="power_limit-base-with-H"),
    pytest.param(_eq(sp.Limit(H * (1 - 2 ** (-H)), H, sp.oo), H), "power_limit", {}, id="power_limit-H-outside"),
    pytest.param(_eq(sp.Limit(sp.Sum(h, (h, 1, H)) / H**2, H, sp.oo), 1), "stolz_cesaro", {}, id="stolz_cesaro"),
    pytest.param(_eq(sp.Sum(r ** (h - 1), (h, 1, H)), (1 - r ** (H + 1)) / (1 - r)), "induction", {},
                 id="induction"),
    pytest.param(_eq(sp.Sum(h, (h, 1, H)), H * (H + 1) / 2 + 1), "induction", {}, id="induction-base-case"),
    pytest.param(_eq(sp.Sum(H, (h, 1, H)), H * (H + 1) / 2), "induction", {}, id="induction-summand-with-H"),
    pytest.param(_eq(FIB(h) ** 2, (sp.expand(PHI**2) ** h + sp.expand(PSI**2) ** h + 2 * (-1) ** h) / 5),
                 "power_identity", {"k": h, "bases": BINET_BASES}, id="power_identity"),
    pytest.param(_eq(sp.harmonic(H, -2), sp.Sum(h**3, (h, 1, H))), "rewrite", {"target": sp.Sum}, id="rewrite"),
    pytest.param(_eq(sp.Symbol("D"), 3 * x), "cited", {"derivation": proved_source(), "result": "double"},
                 id="cited-other-expression"),
    pytest.param(_eq(sp.Symbol("D"), 2 * x), "cited", {"derivation": failed_source(), "result": "double"},
                 id="cited-failed-derivation"),
    pytest.param(sp.Ge(x * sp.log(x), -sp.exp(-1) + sp.Rational(1, 10), evaluate=False), "convex_bound", {},
                 id="convex_bound"),
    pytest.param(sp.Ge(-a**2, -1, evaluate=False), "convex_bound", {}, id="convex_bound-concave"),
    pytest.param(_eq(sp.Min(1, 1 - a), 1 - sp.Max(0, -a)), "piecewise", {}, id="piecewise"),
    pytest.param(_eq(G_ROOT, 0), "descartes_root", {"instances": [({}, sp.Float(2.001))], "unknown": beta},
                 id="descartes_root"),
    pytest.param(_eq(sp.Inverse(X3 * Y3 * Z3), X3.I * Y3.I * Z3.I), "inverse", {}, id="inverse"),
    pytest.param(sp.And(_eq(x + x, 2 * x), sp.Ge(x, x + y, evaluate=False)), "conjunction", {}, id="conjunction"),
]


def test_every_method_has_a_true_and_a_false_case():
    """A method without a false relation here is untested: it could accept anything."""
    methods = set(METHODS)
    assert {p.values[1] for p in TRUE_STEPS} == methods
    assert {p.values[1] for p in FALSE_STEPS} == methods
    assert "custom" not in CHECK_METHODS and CHECK_METHODS[-1] == "unchecked"


@pytest.mark.parametrize("relation,method,extra", TRUE_STEPS)
def test_true_steps_check(relation, method, extra):
    d = fresh()
    st = d.step("s", relation, by=method, uses=["pos"], **extra)
    assert st.status == "checked", st.detail
    assert d.status == "proved"
    d.raise_on_failure()


@pytest.mark.parametrize("relation,method,extra", FALSE_STEPS)
def test_false_steps_fail_and_are_named(relation, method, extra):
    d = fresh()
    d.step("good", _eq(x + x, 2 * x), by="expand")
    st = d.step("the_bad_step", relation, by=method, **extra)
    assert st.status == "failed" and st.detail
    assert d.status == "failed"
    with pytest.raises(DerivationError, match="CX/the_bad_step"):
        d.raise_on_failure()


# -- by a hair: each method at the smallest difference it claims to resolve -----------------------
#: An exact method must see a difference of 10^-40 (exact arithmetic resolves any nonzero rational).
HAIR = sp.Rational(1, 10**40)
#: descartes_root brackets its root to 10^-digits: a stated root 100 brackets away must fail,
#: one 10^-2 brackets away must pass.
DIGITS = 25

HAIR_STEPS = [
    pytest.param(_eq((x + 1) ** 2, x**2 + 2 * x + 1 + HAIR), "expand", {}, False, id="expand-hair"),
    pytest.param(_eq(sp.sin(x) ** 2 + sp.cos(x) ** 2, 1 + HAIR), "simplify", {}, False, id="simplify-hair"),
    pytest.param(_eq((x**3 - y**3) / (x - y), x**2 + x * y + y**2 + HAIR * x), "rational", {}, False,
                 id="rational-hair"),
    pytest.param(_eq(sp.Sum(kappa[i] / sp.Sum(kappa[j], (j, 1, m)), (i, 1, m)), 1 + HAIR), "identically_zero", {},
                 False, id="identically_zero-hair"),
    # an inequality at equality: holds when not strict, fails when strict, fails a hair beyond
    pytest.param(sp.Ge(a**2 + 1, 1, evaluate=False), "nonneg", {}, True, id="nonneg-equality"),
    pytest.param(sp.Gt(a**2 + 1, 1, evaluate=False), "nonneg", {}, False, id="nonneg-strict-at-equality"),
    pytest.param(sp.Ge(a**2 + 1, 1 + HAIR, evaluate=False), "nonneg", {}, False, id="nonneg-hair"),
    pytest.param(sp.Ge(a**2 + 1, 1, evaluate=False), "certificate", {"certificate": a**2}, True,
                 id="certificate-equality"),
    pytest.param(sp.Gt(a**2 + 1, 1, evaluate=False), "certificate", {"certificate": a**2}, False,
                 id="certificate-strict-at-equality"),
    pytest.param(sp.Ge(a**2 + 1, 1, evaluate=False), "certificate", {"certificate": a**2 + HAIR}, False,
                 id="certificate-hair"),
    pytest.param(_eq(x, 2 + HAIR), "solve", {"equation": _eq(x**2, 4)}, False, id="solve-hair"),
    pytest.param(_eq(sp.Limit(1 / x, x, sp.oo), HAIR), "limit", {}, False, id="limit-hair"),
    pytest.param(_eq(sp.Limit(2**H / (2**H + 1), H, sp.oo), 1 - HAIR), "power_limit", {}, False, id="power_limit-hair"),
    pytest.param(_eq(sp.Limit(sp.Sum(h, (h, 1, H)) / H**2, H, sp.oo), sp.Rational(1, 2) + HAIR), "stolz_cesaro", {},
                 False, id="stolz_cesaro-hair"),
    pytest.param(_eq(sp.Sum(r ** (h - 1), (h, 1, H)), (1 - r**H) / (1 - r) + HAIR), "induction", {}, False,
                 id="induction-hair"),
    pytest.param(sp.Ge(x * sp.log(x), -sp.exp(-1) + HAIR, evaluate=False), "convex_bound", {}, False,
                 id="convex_bound-hair"),
    pytest.param(sp.Ge(x * sp.log(x), -sp.exp(-1), evaluate=False), "convex_bound", {}, True,
                 id="convex_bound-at-the-minimum"),
    pytest.param(_eq(G_ROOT, 0), "descartes_root",
                 {"instances": [({}, sp.Float(2, 40) + sp.Float(10, 40) ** (2 - DIGITS))], "unknown": beta,
                  "digits": DIGITS},
                 False, id="descartes_root-100-brackets-off"),
    pytest.param(_eq(G_ROOT, 0), "descartes_root",
                 {"instances": [({}, sp.Float(2, 40) + sp.Float(10, 40) ** (-2 - DIGITS))], "unknown": beta,
                  "digits": DIGITS}, True, id="descartes_root-within-its-bracket"),
    pytest.param(sp.And(_eq(x + x, 2 * x), sp.Ge(x + y, x + HAIR, evaluate=False)), "conjunction", {}, False,
                 id="conjunction-hair"),
]


@pytest.mark.parametrize("relation,method,extra,holds", HAIR_STEPS)
def test_methods_at_their_resolution(relation, method, extra, holds):
    """A step off by the least amount the method claims to resolve fails; one at the boundary of a
    non-strict inequality passes and fails when strict."""
    st = fresh().step("s", relation, by=method, uses=["pos"], **extra)
    assert (st.status == "checked") is holds, st.detail


# -- each soundness rule alone (issue 38): a false step that only this rule rejects -------------------
#: A R = I but R A != I: a right inverse of an n x k matrix, no inverse unless it is square
N_K = sp.MatrixSymbol("A", n, sp.Symbol("k", integer=True, positive=True))
#: an unknown that is positive: an exponential sum whose only root is negative has no root for it
beta_pos = sp.Symbol("beta", positive=True)


def _root(root, unknown=beta_pos):
    return {"instances": [({}, root)], "unknown": unknown, "digits": DIGITS}


ONE_RULE = [
    # descartes_root's bracket [r - eps, r + eps]: g > 0 at its lower end (HAIR_STEPS: 100 brackets above the
    # root, g < 0 at both ends) and g < 0 at its upper end (here: 100 brackets below, g > 0 at both ends)
    pytest.param(_eq(G_ROOT, 0), "descartes_root", _root(sp.Float(2, 40) - sp.Float(10, 40) ** (2 - DIGITS), beta),
                 id="bracket-upper-end"),
    # g(0) > 0: 1 - 2 2^beta changes sign once, falls through its root -1, but g(0) = -1
    pytest.param(_eq(1 - 2 * 2**beta_pos, 0), "descartes_root", _root(sp.Float(-1)), id="g0"),
    # Descartes' rule of signs: (2^beta - 2)(2^beta - 4) = 8 - 6 2^beta + 4^beta falls through 1, rises through 2
    pytest.param(_eq(8 - 6 * 2**beta_pos + 4**beta_pos, 0), "descartes_root", _root(sp.Float(1)), id="sign-changes"),
    # inverse: A R = I and R A = I
    pytest.param(_eq(sp.Inverse(N_K), N_K.T * (N_K * N_K.T).I), "inverse", {}, id="inverse-right-only"),
    # solve: the stated root is a solution (here no solution) and every solution is it (FALSE_STEPS: solve-not-unique)
    pytest.param(_eq(x, 2), "solve", {"equation": _eq(x**2, -4)}, id="solve-no-solution"),
]


@pytest.mark.parametrize("relation,method,extra", ONE_RULE)
def test_each_soundness_rule_alone(relation, method, extra):
    """Each false step here passes every rule of its method but one (named in its id): a method that
    dropped that rule would accept it. TRUE_STEPS has a true step that passes all of them."""
    st = fresh().step("s", relation, by=method, uses=["pos"], **extra)
    assert st.status == "failed", (st.detail, st.computed)


# -- rational: the sample set ------------------------------------------------------------------
#: The checker's documented number of points. A relation that vanishes at fewer of its points
#: must be rejected; lowering RATIONAL_POINTS below this breaks test_rational_uses_all_its_points.
DOCUMENTED_POINTS = 6


@pytest.mark.parametrize("sym", [x, a, n, m], ids=str)
def test_rational_uses_all_its_points(sym):
    """A false relation built to vanish exactly at the first 1..5 points the checker samples for
    this step (read from Derivation.rational_points) is still rejected: every point is used."""
    for count in range(1, DOCUMENTED_POINTS):
        d = fresh()
        d.step("good", _eq(x + x, 2 * x), by="expand")
        points = [p[sym] for p in d.rational_points([sym], DOCUMENTED_POINTS)]
        assert len(set(points)) == DOCUMENTED_POINTS, points
        trap = sp.Mul(*[sym - v for v in points[:count]])
        st = d.step("trap", _eq(trap, 0), by="rational")
        assert st.status == "failed", (count, points, st.computed)


def test_rational_points_are_the_points_the_checker_uses():
    """Control for the trap above: vanishing at *all* the announced points is accepted (the known
    limit of a randomised test), so the announced points are exactly those checked."""
    d = fresh()
    points = [p[x] for p in d.rational_points([x])]
    st = d.step("all_points", _eq(sp.Mul(*[x - v for v in points]), 0), by="rational")
    assert st.status == "checked", st.detail


def test_rational_samples_wide_ranges_respecting_assumptions():
    d = fresh()
    nonneg = sp.Symbol("u", integer=True, nonnegative=True)
    neg = sp.Symbol("w", negative=True)
    draws = list(d.rational_points([n, m, nonneg, neg, x, a], 200))
    ints = [p[n] for p in draws]
    assert all(v.is_Integer for v in ints) and min(ints) < -10**6 and max(ints) > 10**6
    assert all(p[m].is_Integer and p[m] >= 1 for p in draws) and max(p[m] for p in draws) > 10**6
    assert all(p[nonneg].is_Integer and p[nonneg] >= 0 for p in draws)
    assert all(p[neg] < 0 for p in draws) and all(p[x] > 0 for p in draws)
    fractions = [Fraction(int(p[x].p), int(p[x].q)) for p in draws]
    assert len({f.denominator for f in fractions}) > 150       # not a handful of small denominators
    assert any(p[a] < 0 for p in draws) and any(p[a] > 0 for p in draws)


def test_rational_points_are_reproducible_from_the_seed():
    one, two, other = fresh(), fresh(), fresh()
    other.seed += 1
    assert list(one.rational_points([x, n])) == list(two.rational_points([x, n]))
    assert list(one.rational_points([x, n])) != list(other.rational_points([x, n]))


def test_rational_refuses_what_it_cannot_sample_soundly():
    d = fresh()
    st = d.step("exponent", _eq((2**m) ** 2, 4**m), by="rational")     # true, but m is an exponent
    assert st.status == "failed" and "exponent" in st.detail
    st = d.step("bound", _eq(sp.Sum(sp.sin(k), (k, 1, m)), m), by="rational")      # no closed form: m a bound
    assert st.status == "failed" and "bound" in st.detail


# -- the step record ---------------------------------------------------------------------------
def test_step_record_names_the_method_and_what_it_computed():
    d = fresh()
    st = d.step("root", _eq(x, 2), by="solve", equation=_eq(x**2, 4))
    rec = st.to_dict()
    assert rec["method"] == "solve" and "solve" in rec["method_summary"]
    assert rec["computed"] == "solutions: x = 2" and rec["params"] == {"equation": "Eq(x**2, 4)"}
    lim = d.step("lim", _eq(sp.Limit((x + 1) / x, x, sp.oo), 1), by="limit")
    assert lim.computed == "limit 1"
    sub = d.step("sub", _eq(sp.Subs(x**2, x, 3), 9), by="simplify")
    assert sub.computed == "lhs evaluates to 9"
    text = describe(d)
    assert "1. root  [ok; by solve:" in text and "computed: solutions: x = 2" in text and "computed: limit 1" in text
    assert "x: (not defined)" in text            # a symbol without a meaning is shown as such


def test_unchecked_steps_are_marked_not_accepted():
    d = fresh()
    d.step("hard", "every measurable f is a limit of simple functions", by="unchecked",
           reason="needs a measure-theoretic argument")
    assert d.status == "proved-with-unchecked-steps"
    assert [s.name for s in d.unchecked] == ["hard"]
    assert d.steps[0].detail == "needs a measure-theoretic argument"


def test_bad_step_calls_are_refused():
    d = fresh()
    with pytest.raises(DefinitionError, match="unknown assumptions"):
        d.step("s", _eq(x, x), by="expand", uses=["nope"])
    with pytest.raises(DefinitionError, match="unknown check method 'custom'"):
        d.step("s", _eq(x, x), by="custom")
    with pytest.raises(DefinitionError, match="missing \\['equation'\\]"):
        d.step("s", _eq(x, 2), by="solve")
    with pytest.raises(DefinitionError, match="unknown \\['check'\\]"):
        d.step("s", _eq(x, x), by="expand", check=lambda: True)
    with pytest.raises(DefinitionError, match="needs a SymPy relation"):
        d.step("s", "x == x", by="simplify")
    with pytest.raises(DefinitionError, match="evaluate=False"):     # Eq(x, x) is True: the record would say 'True'
        d.step("s", sp.Eq(x, x), by="expand")


def test_assumptions_must_exist_and_results_cover_their_symbols():
    d = fresh()
    with pytest.raises(DefinitionError, match="miss free symbols"):
        d.result("r", x + y, args=(x,), codegen=("numpy",))
    with pytest.raises(DefinitionError, match='codegen names "numpy" and/or "mpmath"'):
        d.result("r", x + y, args=(x, y), codegen=("cuda",))
    res = d.result("r", x + y, args=(x, y), uses=["model"])
    assert d.model_assumptions(res.uses)[0].name == "model"


def test_comparison_false_is_a_finding_not_a_failure():
    d = fresh()
    with d.group("constant") as g:
        d.step("flat", _eq(sp.Derivative(y, x), 0))
    d.compare("law", stated="x grows", derived="x is constant", refuted_by=g)
    assert d.status == "proved"
    assert d.to_dict()["comparisons"][0]["holds"] is False
    with pytest.raises(DefinitionError, match="exactly one group"):
        d.compare("typed", stated="x grows", derived="x is constant")


def test_the_helpers_of_the_methods():
    q = sp.Symbol("q", real=True)
    assert identically_zero(sp.exp(q + 1) - sp.E * sp.exp(q))
    assert expect_poly(Z[0] ** 2, Z, C) == C[0, 0]
    assert trace_equal(A_ * M_, M_ * A_) and not trace_equal(A_ * M_, A_.T * M_)
    Zv, Cv = sp.MatrixSymbol("Z", 3, 1), sp.MatrixSymbol("C", 3, 3)
    assert isinstance(expect_matexpr(Zv * Zv.T, Zv, Cv), sp.MatrixSymbol)


# -- every derivation --------------------------------------------------------------------------
def test_no_step_of_any_derivation_prints_with_identical_sides():
    """Each step records its premise unevaluated: 'V = V' would show nothing."""
    same = [f"{der.claim}/{st.name}" for der in all_derivations() for st in der.steps if identical_sides(st.relation)]
    assert not same, same


def test_every_step_is_checked_by_a_named_method():
    steps = [(der.claim, st) for der in all_derivations() for st in der.steps]
    assert len(steps) >= 324
    assert all(st.method in METHODS and st.checked for _, st in steps), \
        [(c, st.name, st.method, st.status) for c, st in steps if st.method not in METHODS or not st.checked]
    assert all(isinstance(st.relation, (sp.Basic, sp.MatrixBase)) for _, st in steps)


def _symbol_names(expr) -> set[str]:
    """Names of every symbol, indexed base, matrix symbol and undefined function in ``expr``, free or
    bound (a substitution's or a sum's variables print as well); not a limit's direction."""
    items = list(expr) if isinstance(expr, sp.MatrixBase) else [expr]
    atoms = {a for e in items if isinstance(e, sp.Basic)
             for a in e.atoms(sp.Symbol, sp.IndexedBase, sp.MatrixSymbol, AppliedUndef)}
    return {a.func.__name__ if isinstance(a, AppliedUndef) else str(a.name) for a in atoms} - {"+", "-"}


#: a multi-letter lower-case run in a symbol's LaTeX that is not a command: a SymPy name leaking (bias_{bar})
LEAK = re.compile(r"(?<![\\a-zA-Z])[a-z]{2,}")
#: in a printed formula: a multi-letter subscript (x_{lo}) or name printed as italic letters (WDI)
LEAK_FORMULA = re.compile(r"_\{[a-z]{2,}\}|(?<![{\\a-zA-Z])(WDI|MSE)(?![a-zA-Z])")
#: two indices run together (w_{1 1}), or a name's letter and a head's number (W_{O1}): SymPy's
#: defaults for symbols named w_1_1 and W_O1
INDICES = re.compile(r"_\{(\d+ \d+|[A-Za-z]\d+)\}")
#: SymPy's transpose (^{T}) where the prose writes ^\top, or a bracketed block or a lone letter or
#: identity transposed inside parentheses
SYMPY_TRANSPOSE = re.compile(r"\^\{T\}|\\right\]\s*\\right\)\^|\\left\(\s*(\\mathbb\{I\}|[A-Za-z])\s*\\right\)\^")


@pytest.mark.claim(part="derivation")
@pytest.mark.parametrize("claim", proofs.CLAIM_IDS)
def test_every_symbol_has_a_meaning_and_prints_as_mathematics(claim):
    der = derivation(claim)
    formulas = [(s.name, s.relation) for s in der.steps] + [(r.name, r.expr) for r in der.results.values()]
    formulas += [(a.name, a.expr) for a in der.assumptions.values() if a.expr is not None]
    undefined = sorted({nm for _, e in formulas for nm in _symbol_names(e) if der.meaning(nm) is None})
    assert not undefined, undefined
    for where, e in formulas:
        for sym in getattr(e, "free_symbols", ()):
            if isinstance(sym, (sp.Symbol, sp.MatrixSymbol)):
                tex = to_latex(sym)
                markup.parse_math(tex, f"{claim}/{where}: {sym}")
                assert not LEAK.search(re.sub(r"\\(mathrm|text)\{[^}]*\}", "", tex)), (where, sym.name, tex)
    for item in [*der.steps, *der.results.values()]:
        tex = item.latex()
        markup.parse_math(" ".join(tex.split()), item.name)
        assert not LEAK_FORMULA.search(tex) and not INDICES.search(tex), (item.name, tex)
        assert not SYMPY_TRANSPOSE.search(tex), (item.name, tex)


@pytest.mark.claim(part="derivation")
@pytest.mark.parametrize("claim", proofs.CLAIM_IDS)
def test_every_text_is_markup_and_reads_for_a_referee(claim):
    """One title (the module's, the check's) and the module's statement; every text checked as markup
    where it is defined (``markup=True``; each rendered: tests/test_rendering.py); a comparison names
    no code (no code span, and but for C7's c_b and c_v no snake_case)."""
    der, mod = derivation(claim), proofs.DERIVATIONS[claim]
    assert der.markup and der.claim == mod.CLAIM and der.stated == mod.STATED
    assert der.title == mod.TITLE == CLAIMS[claim].title
    assert not any(hasattr(mod, h) for h in ("_eq", "_ge", "_gt", "_le", "_lt", "_checked"))
    for c in der.comparisons:
        assert "`" not in c.stated + c.derived, c.name
        rendered = markup.to_unicode(c.stated) + markup.to_unicode(c.derived)
        assert claim == "C7" or not re.search(r"[a-z]+_[a-z]+", rendered), c.name
    check = Path(importlib.util.find_spec(f"verify.claims.{claim.lower()}").origin).read_text(encoding="utf-8")
    assert "steps=[" not in check and "step_names" not in check and "Symbolic.from_derivation" not in check


@pytest.mark.claim(part="derivation")
@pytest.mark.parametrize("claim", proofs.CLAIM_IDS)
def test_every_step_is_grouped_and_every_comparison_decided_by_a_group(claim):
    """No comparison carries a typed-in finding: each names the group of checked steps that decides
    it, holds when a supporting group is proved and fails when a refuting one is. Every step is in a
    group and (but for C7's and C8's lemmas) cites an assumption."""
    der = derivation(claim)
    assert {s for g in der.groups.values() for s in g.steps} == {s.name for s in der.steps}
    assert claim in ("C7", "C8") or all(s.uses for s in der.steps), [s.name for s in der.steps if not s.uses]
    assert der.comparisons and all(g.proved for g in der.groups.values())
    for c in der.comparisons:
        kind, group = c.decided_by.split(" ")
        assert kind in ("supported_by", "refuted_by") and der.groups[group].proved, c.name
        assert c.holds is (kind == "supported_by") and c.steps == tuple(der.groups[group].steps), c.name


# -- command line --------------------------------------------------------------------------------
def test_help_prints_usage(capsys):
    assert main(["--help"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("usage: python -m proofs") and "codegen --check" in out


@pytest.mark.parametrize("argv,message", [(["C99"], "unknown claim 'C99'"), (["C1", "--bogus"], "unknown option"),
                                          (["codegen", "--force"], "codegen takes only --check")])
def test_bad_arguments_exit_2_with_one_line(argv, message, capsys):
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and message in err and err.count("\n") == 1


def test_a_failed_step_exits_1_naming_it(monkeypatch, capsys):
    bad = fresh("C3")
    bad.step("wrong_square", _eq((x + 1) ** 2, x**2 + 1), by="expand")
    monkeypatch.setitem(proofs._CACHE, "C3", bad)
    assert main(["c3"]) == 1
    captured = capsys.readouterr()
    assert "1. wrong_square  [FAILED; by expand:" in captured.out and "C3/wrong_square" in captured.err
