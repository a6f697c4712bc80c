"""C8 (Thm 7.1): structured (geometric, Fibonacci) head weights versus uniform averaging.

The variance part of the ensemble MSE (C3) for weights with ``sum alpha_h = 1`` is
``W(alpha) = sum alpha_h^2 V_h + sum_{h != h'} alpha_h alpha_h' C_hh'``. With heads ordered best
first and two quality profiles (``model`` assumptions) -- polynomial ``V_h = V_1 h^beta`` and
exponential ``V_h = V_1 q^(h-1)`` -- this module derives the closed forms of ``W`` for uniform,
geometric, Fibonacci and inverse-variance weights, their orders in ``H``, the optimality of
inverse-variance weights (Lagrange) and of uniform weights for equal variances, and the
conditions under which geometric/Fibonacci weights beat uniform ones.

Closed forms in ``H`` are proved by induction (method ``induction``): ``S(0) = 0`` and
``S(H) - c S(H-1) = t(H)``, checked with every power ``b^H`` replaced by an independent symbol
(so the check holds for all H).
"""

from __future__ import annotations

from fractions import Fraction

import mpmath
import sympy as sp

from .core import Derivation
from .notation import H

__all__ = ["build", "PHI", "PSI", "fib", "GRID_GEOM", "GRID_FIB"]

h = sp.Symbol("h", integer=True, positive=True)
V_1 = sp.Symbol("V_1", positive=True)
beta = sp.Symbol("beta", positive=True)
r = sp.Symbol("r", positive=True)          # geometric ratio, 0 < r < 1
q = sp.Symbol("q", positive=True)          # exponential quality ratio
rho = sp.Symbol("rho", nonnegative=True)   # constant correlation, 0 <= rho <= 1
s_ = sp.Symbol("s", positive=True)         # a power in the Stolz-Cesaro lemma
u = sp.Symbol("u", positive=True)          # u = 1 - beta in (0, 1)
v = sp.Symbol("v", positive=True)          # v = beta - 1 > 0
t = sp.Symbol("t", positive=True)          # r = 1/(1+t) in (0, 1)
z = sp.Symbol("z", positive=True)          # r^H = 1/(1+z) in (0, 1); also r^2 q = 1/(1+z), q = phi^2/(1+z)
m = sp.Symbol("m", integer=True, positive=True)

PHI = (1 + sp.sqrt(5)) / 2
PSI = (1 - sp.sqrt(5)) / 2
PHI2 = sp.expand(PHI**2)
PSI2 = sp.expand(PSI**2)
#: the bases of the powers in Binet's forms as products of phi, psi: checked by power_symbols.
FIB_BASES = {PHI2: PHI**2, PSI2: PSI**2, sp.Integer(-1): PHI * PSI}

#: (H, r) grid for the finite-H threshold beta*(H, r) of geometric vs uniform weights.
GRID_GEOM = tuple((HH, rr) for HH in (2, 4, 8, 16, 64, 256) for rr in (sp.Rational(1, 4), sp.Rational(1, 2),
                                                                     sp.Rational(3, 4)))
#: H grid for the threshold of Fibonacci (best-first) vs uniform weights.
GRID_FIB = (3, 4, 8, 16, 64, 256)
THRESHOLD_DPS = 30
#: findroot's bracket [0, hi] doubles hi while g(hi) > 0, up to this bound (g -> -oo: the last weight
#: is below 1/H).
MAX_BRACKET = 2**20


def fib(k):
    """Binet's form F_k = (phi^k - psi^k)/sqrt(5)."""
    return (PHI**k - PSI**k) / sp.sqrt(5)


def _eq(lhs, rhs):
    return sp.Eq(lhs, rhs, evaluate=False)


def _ge(lhs, rhs):
    return sp.Ge(lhs, rhs, evaluate=False)


def _gt(lhs, rhs):
    return sp.Gt(lhs, rhs, evaluate=False)


def _lt(lhs, rhs):
    return sp.Lt(lhs, rhs, evaluate=False)


# ----------------------------------------------------------------------------------------------
# closed forms written as f(Hv, E) with E(base, s) = base^(H + s) (``_normal``); the step method
# ``induction`` checks them with every power b^H an independent symbol.

def _normal(b, s):
    return b ** (H + s)


def _sum_geometric(Hv, E, x):
    """sum_{h=1}^{H} x^(h-1) = (x^H - 1)/(x - 1)."""
    return (E(x, 0) - 1) / (x - 1)


def _sum_h_geometric(Hv, E, x):
    """sum_{h=1}^{H} h x^(h-1)."""
    return (1 - (Hv + 1) * E(x, 0) + Hv * E(x, 1)) / (1 - x) ** 2


def _sum_h2_geometric(Hv, E, x):
    """sum_{h=1}^{H} h^2 x^(h-1)."""
    return (1 + x - (Hv + 1) ** 2 * E(x, 0) + (2 * Hv**2 + 2 * Hv - 1) * E(x, 1) - Hv**2 * E(x, 2)) / (1 - x) ** 3


def _fib_best_exp_sum(Hv, E):
    """sum_{k=1}^{H} F_k^2 q^(H-k) = sum_h F_{H+1-h}^2 q^(h-1)."""
    return (PHI2 * (E(PHI2, 0) - E(q, 0)) / (PHI2 - q) + PSI2 * (E(PSI2, 0) - E(q, 0)) / (PSI2 - q)
            - 2 * (E(-1, 0) - E(q, 0)) / (1 + q)) / 5


def _fib_worst_exp_sum(Hv, E):
    """sum_{h=1}^{H} F_h^2 q^(h-1)."""
    return (PHI2 * (E(PHI2, 0) * E(q, 0) - 1) / (PHI2 * q - 1) + PSI2 * (E(PSI2, 0) * E(q, 0) - 1) / (PSI2 * q - 1)
            - 2 * (E(-1, 0) * E(q, 0) - 1) / (q + 1)) / 5


# ----------------------------------------------------------------------------------------------

def _assumptions(der: Derivation) -> None:
    der.assume("weights_affine", "weights sum to one: sum_h alpha_h = 1 (H heads)", kind="setting")
    der.assume("variance_part", "W(alpha) = sum alpha_h^2 V_h + sum_{h!=h'} alpha_h alpha_h' C_hh' "
               "(the variance part of C3's decomposition)", kind="setting")
    der.assume("zero_cov", "C_hh' = 0 for h != h'")
    der.assume("const_corr", "C_hh' = rho sqrt(V_h V_h'), 0 <= rho <= 1 (C5's model with equal overlap)")
    der.assume("equal_V", "V_h = V for every head")
    der.assume("pd_cov", "the covariance matrix C is positive definite")
    der.assume("profile_poly", "V_h = V_1 h^beta, beta > 0: heads ordered best first")
    der.assume("profile_exp", "V_h = V_1 q^(h-1), q > 0: heads ordered best first iff q > 1")
    der.assume("w_uniform", "alpha_h = 1/H", kind="setting")
    der.assume("w_geom", "alpha_h = r^(h-1) (1-r)/(1-r^H), 0 < r < 1 fixed", kind="setting")
    der.assume("w_fib_best", "alpha_h = F_{H+1-h}/(F_{H+2}-1): largest weight on the best head", kind="setting")
    der.assume("w_fib_worst", "alpha_h = F_h/(F_{H+2}-1): largest weight on the worst head", kind="setting")
    der.assume("w_inverse", "alpha_h = (1/V_h) / sum_h' (1/V_h')", kind="setting")
    der.assume("binet", "F_k = (phi^k - psi^k)/sqrt(5), phi = (1+sqrt 5)/2, psi = (1-sqrt 5)/2", kind="setting")
    der.assume("polylog_def", "Li_s(x) = sum_{k>=1} x^k / k^s for |x| < 1", kind="setting")


def _weights(der: Derivation) -> None:
    der.step("geom_sum", _eq(sp.Sum(r ** (h - 1), (h, 1, H)), (1 - r**H) / (1 - r)), by="induction",
             why="so the geometric weights sum to one", uses=["w_geom"])
    der.step("binet_recurrence", _eq(PHI**2 - PHI - 1, 0), by="expand", uses=["binet"])
    der.step("binet_square", _eq(fib(h) ** 2, (PHI2**h + PSI2**h - 2 * (-1) ** h) / 5), by="power_identity",
             k=h, bases=FIB_BASES,
             why="exponent laws for integer h: (phi^2)^h = (phi^h)^2 and (-1)^h = (phi psi)^h = phi^h psi^h",
             uses=["binet"])
    der.step("fib_sum", _eq(sp.Sum(fib(h), (h, 1, H)), fib(H + 2) - 1), by="induction",
             why="sum_{k<=H} F_k = F_{H+2} - 1, so both Fibonacci weight vectors sum to one",
             uses=["binet"])
    der.step("fib_first_values", _eq(sp.Matrix([fib(k) for k in range(1, 9)]),
                                     sp.Matrix([1, 1, 2, 3, 5, 8, 13, 21])), by="expand", uses=["binet"])
    der.result("fibonacci", fib(h), args=(h,), description="F_h by Binet's form", uses=["binet"])
    der.result("alpha_geom", r ** (h - 1) * (1 - r) / (1 - r**H), args=(h, H, r), uses=["w_geom"],
               description="geometric weight of head h (best first)")
    der.result("alpha_fib_best", fib(H + 1 - h) / (fib(H + 2) - 1), args=(h, H), uses=["w_fib_best", "binet"],
               description="Fibonacci weight F_{H+1-h}/(F_{H+2}-1), largest on head 1")
    der.result("alpha_fib_worst", fib(h) / (fib(H + 2) - 1), args=(h, H), uses=["w_fib_worst", "binet"],
               description="Fibonacci weight F_h/(F_{H+2}-1), largest on head H")
    der.result("alpha_inv_exp", (q - 1) * q ** (H - h) / (q**H - 1), args=(h, H, q),
               uses=["w_inverse", "profile_exp"], description="inverse-variance weight for V_h = V_1 q^(h-1)")


def _optimality(der: Derivation) -> None:
    # Lagrange, zero covariance, H = 3 explicit
    Vs = sp.symbols("V_1:4", positive=True)
    al = sp.symbols("alpha_1:4", real=True)
    lam = sp.Symbol("lambda", real=True)
    Lag = sum(a_**2 * V_ for a_, V_ in zip(al, Vs)) - lam * (sum(al) - 1)
    S = sum(1 / V_ for V_ in Vs)
    a_star = [1 / (V_ * S) for V_ in Vs]
    uses = ["weights_affine", "variance_part", "zero_cov"]
    der.step("lagrange_inverse_variance_H3", _eq(sp.Matrix(al), sp.Matrix(a_star)), by="solve",
             equation=[_eq(sp.Derivative(Lag, a_), 0) for a_ in al] + [_eq(sum(al), 1)], unknowns=[lam],
             why="grad(sum a^2 V - lam(sum a - 1)) = 0: 2 a_h V_h = lam, a_h ∝ 1/V_h", uses=uses)
    hess = sp.Matrix(3, 3, lambda i, j: sp.Derivative(Lag, al[i], al[j]))
    der.step("lagrange_hessian_H3", _eq(hess, 2 * sp.diag(*Vs)), by="simplify",
             why="second-order condition: the Hessian 2 diag(V) is positive definite", uses=uses)
    # general H: per-term identity and its sum
    a_h = sp.Symbol("a_h", real=True)
    V_h, cc = sp.symbols("V_h c", positive=True)
    der.step("inverse_variance_certificate_term", _eq(V_h * (a_h - cc / V_h) ** 2,
                                                      V_h * a_h**2 - 2 * cc * a_h + cc**2 / V_h), by="expand",
             why="summed over h with sum a_h = 1 and c = 1/sum(1/V_h): sum V_h (a_h - a*_h)^2 = W(a) - c, "
                 "so W(a) >= 1/sum(1/V_h) with equality iff a = a* (any H)", uses=uses)
    for HH in (2, 3, 4, 5):
        Vs_ = sp.symbols(f"V_1:{HH + 1}", positive=True)
        as_ = list(sp.symbols(f"alpha_1:{HH}", real=True))
        as_.append(1 - sum(as_))
        if HH == 2:   # larger H: the general per-term identity above (this certificate check is slow)
            S_ = sum(1 / V_ for V_ in Vs_)
            W = sum(a_**2 * V_ for a_, V_ in zip(as_, Vs_))
            cert = sum(V_ * (a_ - 1 / (V_ * S_)) ** 2 for a_, V_ in zip(as_, Vs_))
            der.step(f"inverse_variance_optimal_H{HH}", _ge(W, 1 / S_), by="certificate", certificate=cert,
                     why="W(a) - 1/sum(1/V) = sum V_h (a_h - a*_h)^2 >= 0 on the affine constraint", uses=uses)
        eq_cert = sum((a_ - sp.Rational(1, HH)) ** 2 for a_ in as_)
        der.step(f"uniform_optimal_equal_V_H{HH}", _ge(sum(a_**2 for a_ in as_), sp.Rational(1, HH)),
                 by="certificate", certificate=eq_cert,
                 why="Cauchy-Schwarz: sum a^2 >= (sum a)^2/H = 1/H, certificate sum (a_h - 1/H)^2",
                 uses=uses + ["equal_V"])
    Hs = sp.Symbol("H_", positive=True)
    der.step("uniform_optimal_equal_V_general",
             _eq((a_h - 1 / Hs) ** 2, a_h**2 - 2 * a_h / Hs + 1 / Hs**2), by="expand",
             why="summed over H heads with sum a_h = 1: sum (a_h - 1/H)^2 = sum a_h^2 - 1/H >= 0",
             uses=uses + ["equal_V"])
    # with covariance: alpha* = C^-1 1 / (1^T C^-1 1), W* = 1/(1^T C^-1 1)
    for HH in (2, 3):
        Cm = sp.Matrix(HH, HH, lambda i, j: sp.Symbol(f"C_{min(i, j) + 1}{max(i, j) + 1}", real=True))
        al_ = sp.Matrix(sp.symbols(f"alpha_1:{HH + 1}", real=True))
        one = sp.ones(HH, 1)
        Ci1 = Cm.adjugate() * one          # C^-1 1 up to the factor 1/det C
        a_opt = Ci1 / (one.T * Ci1)[0]
        W_opt = Cm.det() / (one.T * Ci1)[0]
        Lc = (al_.T * Cm * al_)[0] - lam * (sum(al_) - 1)
        cu = ["weights_affine", "variance_part", "pd_cov"]
        der.step(f"lagrange_covariance_H{HH}", _eq(al_, a_opt), by="solve",
                 equation=[_eq(sp.Derivative(Lc, a_), 0) for a_ in al_] + [_eq(sum(al_), 1)], unknowns=[lam],
                 why="2 C a = lam 1: a* = C^-1 1/(1^T C^-1 1)", uses=cu)
        on_plane = {al_[-1]: 1 - sum(al_[:-1])}
        d_ = (al_ - a_opt)
        der.step(f"covariance_certificate_H{HH}",
                 _eq(((al_.T * Cm * al_)[0] - W_opt).subs(on_plane), (d_.T * Cm * d_)[0].subs(on_plane)),
                 by="rational", why="W(a) - W* = (a - a*)^T C (a - a*) >= 0 for C positive definite", uses=cu)
    C2 = sp.Symbol("C_12", real=True)
    V1s, V2s = sp.symbols("V_1 V_2", positive=True)
    der.result("W_opt_cov_H2", (V1s * V2s - C2**2) / (V1s + V2s - 2 * C2), args=(V1s, V2s, C2),
               description="optimal variance of two heads with covariance C_12", uses=["pd_cov"])
    der.result("alpha1_opt_cov_H2", (V2s - C2) / (V1s + V2s - 2 * C2), args=(V1s, V2s, C2),
               description="optimal weight of head 1 of two", uses=["pd_cov"])
    C2m = sp.Matrix([[V1s, C2], [C2, V2s]])
    one_row, one_col = sp.ImmutableMatrix(sp.ones(1, 2)), sp.ImmutableMatrix(sp.ones(2, 1))
    w_star = 1 / sp.Trace(sp.MatMul(one_row, sp.Inverse(sp.ImmutableMatrix(C2m)), one_col))   # 1/(1ᵀC⁻¹1)
    der.step("cov_H2_closed_form", _eq(w_star, (V1s * V2s - C2**2) / (V1s + V2s - 2 * C2)), by="simplify",
             why="W* = 1/(1^T C^-1 1) = det C / (1^T adj(C) 1)", uses=["pd_cov"])


def _closed_forms(der: Derivation) -> None:
    """Closed forms of W for the four weightings and both profiles."""
    ue, up = ["variance_part", "zero_cov", "profile_exp"], ["variance_part", "zero_cov", "profile_poly"]
    x2q = r**2 * q
    # exponential profile: every sum is geometric
    der.step("unif_exp_sum", _eq(sp.Sum(q ** (h - 1), (h, 1, H)), (q**H - 1) / (q - 1)), by="induction", uses=ue)
    der.step("geom_exp_sum", _eq(sp.Sum(x2q ** (h - 1), (h, 1, H)), (x2q**H - 1) / (x2q - 1)), by="induction",
             why="alpha_h^2 V_h = ((1-r)/(1-r^H))^2 V_1 (r^2 q)^(h-1)", uses=ue + ["w_geom"])
    der.step("fib_best_exp_sum", _eq(sp.Sum(fib(H + 1 - h) ** 2 * q ** (h - 1), (h, 1, H)),
                                     _fib_best_exp_sum(H, _normal)), by="induction", coeff=q, bases=FIB_BASES,
             why="S(H) = sum_k F_k^2 q^(H-k) = q S(H-1) + F_H^2 (binet_square); valid for q != phi^2, psi^2",
             uses=ue + ["w_fib_best", "binet"])
    der.step("fib_worst_exp_sum", _eq(sp.Sum(fib(h) ** 2 * q ** (h - 1), (h, 1, H)),
                                      _fib_worst_exp_sum(H, _normal)), by="induction", bases=FIB_BASES,
             why="geometric sums in phi^2 q, psi^2 q, -q; valid for q != 1/phi^2, 1/psi^2",
             uses=ue + ["w_fib_worst", "binet"])
    inv_sum = lambda Hv, E: _sum_geometric(Hv, E, 1 / q)   # noqa: E731
    der.step("inv_exp_sum", _eq(sp.Sum(q ** (1 - h), (h, 1, H)), inv_sum(H, _normal)), by="induction",
             uses=ue + ["w_inverse"])
    W_inv_exp = (q - 1) * q ** (H - 1) * V_1 / (q**H - 1)
    der.step("inv_exp_closed", _eq(V_1 / inv_sum(H, _normal), W_inv_exp), by="simplify",
             why="W = 1/sum(1/V_h) (lagrange)", uses=ue + ["w_inverse"])
    den_fib = (fib(H + 2) - 1) ** 2
    forms_exp = {
        "W_uniform_exp": (V_1 * (q**H - 1) / ((q - 1) * H**2), ["w_uniform"]),
        "W_geom_exp": (V_1 * ((1 - r) / (1 - r**H)) ** 2 * (x2q**H - 1) / (x2q - 1), ["w_geom"]),
        "W_fib_best_exp": (V_1 * _fib_best_exp_sum(H, _normal) / den_fib, ["w_fib_best", "binet"]),
        "W_fib_worst_exp": (V_1 * _fib_worst_exp_sum(H, _normal) / den_fib, ["w_fib_worst", "binet"]),
        "W_inv_exp": (W_inv_exp, ["w_inverse"]),
    }
    argmap = {"W_uniform_exp": (V_1, q, H), "W_geom_exp": (V_1, q, H, r), "W_fib_best_exp": (V_1, q, H),
              "W_fib_worst_exp": (V_1, q, H), "W_inv_exp": (V_1, q, H)}
    for name, (expr, extra) in forms_exp.items():
        der.result(name, expr, args=argmap[name], uses=ue + extra,
                   description="sum_h alpha_h^2 V_h for V_h = V_1 q^(h-1) (closed form; removable singularities "
                               "at q = 1, r^2 q = 1, q = phi^(+-2) are excluded)")
    # polynomial profile: finite sums (printable), integer-beta closed forms by induction
    for bb, closed in ((1, lambda Hv, E: Hv * (Hv + 1) / 2), (2, lambda Hv, E: Hv * (Hv + 1) * (2 * Hv + 1) / 6)):
        der.step(f"unif_poly{bb}_sum", _eq(sp.Sum(h**bb, (h, 1, H)), closed(H, _normal)), by="induction", uses=up)
        der.result(f"W_uniform_poly{bb}", V_1 * closed(H, _normal) / H**2, args=(V_1, H), uses=up + ["w_uniform"],
                   description=f"uniform weights, V_h = V_1 h^{bb}")
    for bb, fn in ((1, _sum_h_geometric), (2, _sum_h2_geometric)):
        closed = lambda Hv, E, fn=fn: fn(Hv, E, r**2)   # noqa: E731
        der.step(f"geom_poly{bb}_sum", _eq(sp.Sum(h**bb * r ** (2 * h - 2), (h, 1, H)), closed(H, _normal)),
                 by="induction", uses=up)
        der.result(f"W_geom_poly{bb}", V_1 * ((1 - r) / (1 - r**H)) ** 2 * closed(H, _normal), args=(V_1, H, r),
                   uses=up + ["w_geom"], description=f"geometric weights, V_h = V_1 h^{bb}")
    sums = {
        "W_uniform_poly": (V_1 * sp.Sum(h**beta, (h, 1, H)) / H**2, (V_1, beta, H), ["w_uniform"],
                           "V_1 harmonic(H, -beta)/H^2"),
        "W_geom_poly": (V_1 * ((1 - r) / (1 - r**H)) ** 2 * sp.Sum(r ** (2 * h - 2) * h**beta, (h, 1, H)),
                        (V_1, beta, H, r), ["w_geom"], "((1-r)/(1-r^H))^2 V_1 sum r^(2h-2) h^beta"),
        "W_fib_best_poly": (V_1 * sp.Sum(fib(H + 1 - h) ** 2 * h**beta, (h, 1, H)) / den_fib, (V_1, beta, H),
                            ["w_fib_best", "binet"], "V_1 sum F_{H+1-h}^2 h^beta/(F_{H+2}-1)^2"),
        "W_fib_worst_poly": (V_1 * sp.Sum(fib(h) ** 2 * h**beta, (h, 1, H)) / den_fib, (V_1, beta, H),
                             ["w_fib_worst", "binet"], "V_1 sum F_h^2 h^beta/(F_{H+2}-1)^2"),
        "W_inv_poly": (V_1 / sp.Sum(h ** (-beta), (h, 1, H)), (V_1, beta, H), ["w_inverse"],
                       "V_1/harmonic(H, beta)"),
    }
    for name, (expr, args, extra, text) in sums.items():
        der.result(name, expr, args=args, uses=up + extra,
                   description=f"{text}: a finite sum over h = 1..H (H a Python int in generated code)")
    der.step("harmonic_forms", _eq(sp.Tuple(sp.harmonic(H, -beta), sp.harmonic(H, beta)),
                                   sp.Tuple(sp.Sum(h**beta, (h, 1, H)), sp.Sum(h ** (-beta), (h, 1, H)))),
             by="rewrite", target=sp.Sum,
             why="the generalised harmonic numbers: W_unif = V_1 harmonic(H, -beta)/H^2, W_inv = V_1/harmonic(H, beta)")
    der.result("W_uniform_poly_harmonic", V_1 * sp.harmonic(H, -beta) / H**2, args=(V_1, beta, H), codegen=False,
               uses=up + ["w_uniform"], description="W_uniform_poly as a generalised harmonic number")
    der.result("W_inv_poly_harmonic", V_1 / sp.harmonic(H, beta), args=(V_1, beta, H), codegen=False,
               uses=up + ["w_inverse"], description="W_inv_poly as a generalised harmonic number")
    alpha_g = r ** (h - 1) * (1 - r) / (1 - r**H)
    alpha_f = fib(H + 1 - h) / (fib(H + 2) - 1)
    der.result("threshold_geom_poly", sp.Sum((alpha_g**2 - 1 / H**2) * h**beta, (h, 1, H)), args=(beta, H, r),
               uses=up + ["w_geom", "w_uniform"],
               description="W_geom - W_unif divided by V_1 for V_h = V_1 h^beta; its unique root in beta is "
                           "the finite-H threshold beta*(H, r) (geometric wins above it)")
    der.result("threshold_fib_poly", sp.Sum((alpha_f**2 - 1 / H**2) * h**beta, (h, 1, H)), args=(beta, H),
               uses=up + ["w_fib_best", "w_uniform"],
               description="(W_fib_best - W_unif)/V_1 for V_h = V_1 h^beta; unique root beta*_fib(H) for H >= 3")


def _asymptotics(der: Derivation) -> None:
    """Orders in H of each W, and the limits that decide which weighting wins for large H."""
    up, ue = ["variance_part", "zero_cov", "profile_poly"], ["variance_part", "zero_cov", "profile_exp"]
    der.step("stolz_power_sum", _eq(sp.Tuple(sp.Limit(sp.Sum(h**s_, (h, 1, H)) / H ** (s_ + 1), H, sp.oo),
                                             sp.Limit(sp.Sum(h ** (u - 1), (h, 1, H)) / H**u, H, sp.oo)),
                                    sp.Tuple(1 / (s_ + 1), 1 / u)), by="stolz_cesaro",
             why="Stolz-Cesaro (H^(s+1) increases to oo for s > -1): the limit equals "
                 "lim (H+1)^s/((H+1)^(s+1) - H^(s+1)) = 1/(s+1); checked for s > 0 and s = u - 1 in (-1, 0)")
    Sig = sp.Symbol("Sigma", positive=True)
    der.step("uniform_poly_order", _eq(V_1 * Sig / H**2 * H ** (1 - beta) / V_1, Sig / H ** (beta + 1)), by="simplify",
             why="W_unif H^(1-beta)/V_1 = sum h^beta / H^(beta+1) -> 1/(beta+1): W_unif ~ V_1 H^(beta-1)/(beta+1); "
                 "-> 0 for beta < 1, -> V_1/2 at beta = 1, -> oo for beta > 1", uses=up + ["w_uniform"])
    der.step("uniform_poly1_limit", _eq(sp.Limit((H + 1) / (2 * H), H, sp.oo), sp.Rational(1, 2)), by="limit",
             uses=up + ["w_uniform"])
    Wsym = sp.Symbol("W", positive=True)
    der.step("inverse_poly_order_lt1", _eq(sp.Subs(Wsym * H ** (1 - beta) / V_1, Wsym, V_1 / Sig),
                                           1 / (Sig / H ** (1 - beta))),
             by="simplify", why="beta = 1 - u < 1: sum h^-beta / H^(1-beta) -> 1/(1-beta) (stolz, s = -beta), so "
                                "W_inv ~ (1-beta) V_1 H^(beta-1)", uses=up + ["w_inverse"])
    der.step("inverse_poly_order_eq1", _eq(sp.Limit(sp.harmonic(H) / sp.log(H), H, sp.oo), 1), by="limit",
             why="beta = 1: W_inv = V_1/harmonic(H) ~ V_1/log H", uses=up + ["w_inverse"])
    der.step("inverse_poly_order_gt1", _eq(sp.Limit(sp.harmonic(H, 1 + v), H, sp.oo), sp.zeta(1 + v)), by="limit",
             why="beta = 1 + v > 1: W_inv -> V_1/zeta(beta)", uses=up + ["w_inverse"])
    # geometric: a positive floor for every profile, and the limit
    der.step("geom_first_weight_floor",
             _ge(((1 - r) / (1 - 1 / (1 + z))) ** 2, (1 - r) ** 2), by="certificate",
             certificate=(1 - r) ** 2 * (1 + 2 * z) / z**2,
             why="r^H = 1/(1+z) in (0,1): alpha_1 = (1-r)/(1-r^H) >= 1-r, so W_geom >= alpha_1^2 V_1 >= "
                 "(1-r)^2 V_1 > 0 for every H and every profile: no decay to 0 for fixed r",
             uses=["variance_part", "zero_cov", "w_geom"])
    der.step("geom_poly_series_converges",
             _eq(sp.Tuple(sp.Limit((h + 1) ** beta / h**beta * r**2, h, sp.oo), sp.Limit((1 / (1 + t)) ** H, H, sp.oo)),
                 sp.Tuple(r**2, 0)), by="limit",
             why="ratio test (r^2 < 1) and r^H -> 0: W_geom -> V_1 (1-r)^2 Li_{-beta}(r^2)/r^2",
             uses=up + ["w_geom", "polylog_def"])
    W_geom_lim = V_1 * (1 - r) ** 2 * sp.polylog(-beta, r**2) / r**2
    der.result("W_geom_poly_limit", W_geom_lim, args=(V_1, beta, r), uses=up + ["w_geom", "polylog_def"],
               codegen=False, description="lim_{H->oo} W_geom for V_h = V_1 h^beta (> 0): mpmath.polylog(-beta, r^2)")
    der.step("geom_poly1_limit", _eq(sp.Subs(W_geom_lim, beta, 1), V_1 / (1 + r) ** 2), by="simplify",
             why="Li_{-1}(x) = x/(1-x)^2", uses=up + ["w_geom", "polylog_def"])
    der.step("geom_beats_uniform_beta1", _eq(r, sp.sqrt(2) - 1), by="solve", equation=_eq((1 + r) ** 2, 2),
             why="beta = 1: V_1/(1+r)^2 < V_1/2 iff (1+r)^2 > 2 iff r > sqrt(2) - 1 ((1+r)^2 increasing)",
             uses=up + ["w_geom", "w_uniform"])
    # exponential profile
    rt, qy = 1 / (1 + t), 1 + v                      # r in (0,1), q > 1
    der.step("uniform_exp_order", _eq(sp.Limit(((qy**H - 1) / ((qy - 1) * H**2)) / (qy**H / ((qy - 1) * H**2)), H,
                                                sp.oo), 1), by="limit",
             why="q > 1: W_unif ~ V_1 q^H/((q-1) H^2) -> oo", uses=ue + ["w_uniform"])
    der.step("uniform_exp_q_lt_1", _eq(sp.Limit(V_1 * ((1 / qy) ** H - 1) / ((1 / qy - 1) * H**2), H, sp.oo), 0),
             by="limit",
             why="q < 1 (heads ordered worst first): W_unif -> 0 while W_geom >= (1-r)^2 V_1: uniform wins",
             uses=ue + ["w_uniform"])
    x2q = r**2 * q
    W_geom_exp_lim = V_1 * (1 - r) ** 2 / (1 - x2q)
    der.step("geom_exp_limit", _eq(sp.Limit(V_1 * ((1 - r) / (1 - r**H)) ** 2 * (x2q**H - 1) / (x2q - 1), H, sp.oo),
                                   W_geom_exp_lim), by="power_limit",
             substitution={r: 1 / (1 + t), q: (1 + t) ** 2 / (1 + z)},
             why="r^2 q < 1: r^H, (r^2 q)^H -> 0 and the closed form is continuous there",
             uses=ue + ["w_geom"])
    der.step("inverse_exp_limit", _eq(sp.Limit((qy - 1) * qy ** (H - 1) * V_1 / (qy**H - 1), H, sp.oo),
                                      V_1 * (1 - 1 / qy)), by="limit",
             uses=ue + ["w_inverse"])
    der.step("geom_vs_uniform_exp_ratio",
             _eq(sp.Tuple(sp.Limit(H**3 * (qy - 1) / (qy**H - 1), H, sp.oo),
                          sp.Limit(H**3 * rt ** (2 * H - 2), H, sp.oo)), sp.Tuple(0, 0)), by="limit",
             why="the two bounds of lim W_geom/W_unif (q = 1 + v > 1, r = 1/(1 + t) in (0,1)): "
                 "sum_{h<=H} (r^2 q)^(h-1) <= H max(1, r^2 q)^(H-1) and q^(H-1)(q-1) <= q^H - 1, so "
                 "W_geom/W_unif <= const H^3 max(q^-H, r^(2H-2)); both tend to 0, hence W_geom/W_unif -> 0: "
                 "geometric wins for large H for every r (not only r^2 q < 1)",
             uses=ue + ["w_geom", "w_uniform"])
    # Fibonacci: weights tend to the geometric ones with r = 1/phi
    der.step("psi_is_minus_inverse_phi", _eq(PSI, -1 / PHI), by="simplify",
             uses=["binet"])
    der.step("fib_weight_limit", _eq(sp.Limit(fib(H + 1 - h) / (fib(H + 2) - 1), H, sp.oo), PHI ** (-h - 1)),
             by="power_limit", bases={PSI: -1 / PHI},
             why="psi = -1/phi: with e = phi^-H -> 0 the weight is a rational function of e, continuous at 0 "
                 "whatever the sign (-1)^H: alpha_h -> phi^-(h+1), i.e. geometric weights with r = 1/phi",
             uses=["w_fib_best", "binet"])
    F = [sp.Subs(fib(m), m, k) for k in (1, 2)]          # F_1, F_2 in Binet's form, unevaluated
    base_cases = [sp.Le(PHI ** (k - 2), F[k - 1], evaluate=False) for k in (1, 2)] + \
        [sp.Le(F[k - 1], PHI ** (k - 1), evaluate=False) for k in (1, 2)]
    der.step("fib_bounds", sp.And(*base_cases, _eq(PHI ** (m - 1) + PHI ** (m - 2), PHI**m)), by="conjunction",
             why="phi^(m-2) <= F_m <= phi^(m-1) for every m >= 1 by induction: the bounds hold for F_1, F_2 (the "
                 "four inequalities) and are carried to F_m = F_(m-1) + F_(m-2) by phi^(m-1) + phi^(m-2) = phi^m",
             uses=["binet"])
    der.step("fib_weight_domination", _eq(PHI ** (H - h) / PHI ** (H - 1), PHI ** (1 - h)), by="simplify",
             why="alpha_h = F_{H+1-h}/(F_{H+2}-1) <= phi^(H-h)/F_{H+1} <= phi^(1-h) (F_{H+2} - 1 >= F_{H+1}); "
                 "sum_h phi^(2-2h) h^beta < oo", uses=["w_fib_best", "binet"])
    der.step("fib_best_poly_limit", _eq(sp.Subs(((1 - r) / r) ** 2 * sp.polylog(-beta, r**2), r, 1 / PHI),
                                        PHI**-2 * sp.polylog(-beta, PHI**-2)), by="simplify",
             why="Tannery (fib_weight_limit, fib_weight_domination): W_fib_best -> V_1 sum phi^(-2h-2) h^beta "
                 "= the geometric limit at r = 1/phi > 0: no decay to 0", uses=["w_fib_best", "binet", "profile_poly"])
    der.step("fib_beats_uniform_beta1", sp.Gt(1 / PHI, sp.sqrt(2) - 1, evaluate=False), by="nonneg",
             why="beta = 1: Fibonacci -> V_1/phi^2 < V_1/2 (r = 1/phi > sqrt 2 - 1)",
             uses=["w_fib_best", "profile_poly"])
    der.step("fib_worst_floor", _eq(PHI ** (H - 2) / PHI ** (H + 1), PHI**-3), by="simplify",
             why="alpha_H = F_H/(F_{H+2}-1) >= phi^(H-2)/phi^(H+1): W_fib_worst >= phi^-6 V_1 H^beta, growing "
                 "faster than W_unif ~ H^(beta-1)/(beta+1)", uses=["w_fib_worst", "binet", "profile_poly"])

    W_fib_exp = V_1 * _fib_best_exp_sum(H, _normal) / (fib(H + 2) - 1) ** 2
    der.step("fib_best_exp_limit", _eq(sp.Limit(W_fib_exp, H, sp.oo),
                                       V_1 * PHI**-4 / (1 - q / PHI**2)), by="power_limit",
             bases={PHI2: PHI**2, PSI2: PHI**-2, PSI: -1 / PHI}, substitution={q: PHI**2 / (1 + z)},
             excluded=[q - PSI2],
             why="q = phi^2/(1 + z) < phi^2: divide by phi^(2H); the limit equals the geometric one at r = 1/phi "
                 "(the closed form excludes q = psi^2, where it is 0/0)",
             uses=ue + ["w_fib_best", "binet"])
    der.step("fib_vs_uniform_exp_ratio",
             _eq(sp.Tuple(sp.Limit(H**3 * qy ** (-H), H, sp.oo), sp.Limit(H**3 * PHI ** (-2 * H), H, sp.oo)),
                 sp.Tuple(0, 0)), by="limit",
             why="the two bounds of lim W_fib/W_unif (q = 1 + v > 1): W_fib <= V_1 phi^2 sum (q/phi^2)^(h-1) "
                 "phi^-2 <= const H max(1, q/phi^2)^H; against W_unif ~ q^H/H^2 the ratio is "
                 "<= const H^3 max(q^-H, phi^-2H); both tend to 0, hence W_fib/W_unif -> 0", uses=ue + ["w_fib_best"])
    for name, expr, extra in (("W_geom_exp_limit", W_geom_exp_lim, ["w_geom"]),
                              ("W_fib_best_exp_limit", V_1 * PHI**-4 / (1 - q / PHI**2), ["w_fib_best"]),
                              ("W_inv_exp_limit", V_1 * (1 - 1 / q), ["w_inverse"])):
        der.result(name, expr, args=(V_1, q, r) if "geom" in name else (V_1, q), uses=ue + extra,
                   description="lim_{H->oo} W (exponential profile; geometric needs r^2 q < 1, Fibonacci "
                               "q < phi^2, inverse q > 1)")


def _correlated(der: Derivation) -> None:
    """Constant correlation rho > 0 (C5's model): uniform weights lose for every beta > 0."""
    uses = ["variance_part", "const_corr", "profile_poly"]
    HH = 4
    al = sp.symbols(f"alpha_1:{HH + 1}", real=True)
    Vs = sp.symbols(f"V_1:{HH + 1}", positive=True)
    W = sum(al[i] * al[j] * (Vs[i] if i == j else rho * sp.sqrt(Vs[i] * Vs[j]))
            for i in range(HH) for j in range(HH))
    rhs = ((1 - rho) * sum(a_**2 * V_ for a_, V_ in zip(al, Vs))
           + rho * sum(a_ * sp.sqrt(V_) for a_, V_ in zip(al, Vs)) ** 2)
    der.step("corr_identity_H4", _eq(W, rhs), by="expand",
             why="W = (1-rho) sum a^2 V + rho (sum a sqrt V)^2 (bilinearity; any H)", uses=uses)
    der.step("corr_uniform_growth", _eq(sp.Subs((1 / (s_ + 1)) ** 2, s_, beta / 2), 4 / (beta + 2) ** 2), by="simplify",
             why="stolz with s = beta/2: (sum sqrt(V_h)/H)^2 ~ 4 V_1 H^beta/(beta+2)^2 -> oo for beta > 0, "
                 "so W_unif >= rho * that grows", uses=uses + ["w_uniform"])
    der.step("corr_geom_bounded", _eq(sp.Limit((h + 1) ** (beta / 2) / h ** (beta / 2) * r, h, sp.oo), r),
             by="limit",
             why="ratio test: sum alpha_h sqrt(V_h) -> sqrt(V_1) (1-r) Li_{-beta/2}(r)/r < oo; W_geom stays "
                 "bounded, so geometric beats uniform for large H for every beta > 0 once rho > 0",
             uses=uses + ["w_geom"])
    der.result("W_uniform_poly_corr",
               (1 - rho) * V_1 * sp.Sum(h**beta, (h, 1, H)) / H**2
               + rho * V_1 * (sp.Sum(h ** (beta / 2), (h, 1, H)) / H) ** 2,
               args=(V_1, beta, H, rho), uses=uses + ["w_uniform"],
               description="uniform weights, V_h = V_1 h^beta, C_hh' = rho sqrt(V_h V_h')")
    ag = r ** (h - 1) * (1 - r) / (1 - r**H)
    der.result("W_geom_poly_corr",
               (1 - rho) * V_1 * sp.Sum(ag**2 * h**beta, (h, 1, H))
               + rho * V_1 * sp.Sum(ag * h ** (beta / 2), (h, 1, H)) ** 2,
               args=(V_1, beta, H, r, rho), uses=uses + ["w_geom"],
               description="geometric weights, V_h = V_1 h^beta, C_hh' = rho sqrt(V_h V_h')")


def _fib_int(k: int) -> int:
    a_, b_ = 0, 1
    for _ in range(k):
        a_, b_ = b_, a_ + b_
    return a_


def _root(weights: list[Fraction]) -> mpmath.mpf:
    """A numerical root beta* of g(beta) = sum_h (alpha_h^2 - 1/H^2) h^beta (mpmath's findroot on a
    bracket); the step ``threshold_roots`` proves there is exactly one and that it is here."""
    HH = len(weights)
    coef = [w_ * w_ - Fraction(1, HH * HH) for w_ in weights]
    with mpmath.workdps(THRESHOLD_DPS + 10):
        cm = [mpmath.mpf(c_.numerator) / c_.denominator for c_ in coef]
        g = lambda b_: mpmath.fsum(cm[i] * mpmath.power(i + 1, b_) for i in range(HH))  # noqa: E731
        hi = mpmath.mpf(1)
        while g(hi) > 0 and hi < MAX_BRACKET:
            hi *= 2
        return +mpmath.findroot(g, (mpmath.mpf(0), hi), solver="anderson")


def _thresholds(der: Derivation) -> None:
    rows_g, rows_f, inst_g, inst_f = [], [], [], []
    for HH, rr in GRID_GEOM:
        rf = Fraction(rr.p, rr.q)
        norm = sum(rf**i for i in range(HH))
        root = sp.Float(mpmath.nstr(_root([rf**i / norm for i in range(HH)]), THRESHOLD_DPS), THRESHOLD_DPS)
        rows_g.append([HH, rr, root])
        inst_g.append(({H: HH, r: rr}, root))
    for HH in GRID_FIB:
        tot = _fib_int(HH + 2) - 1
        root = sp.Float(mpmath.nstr(_root([Fraction(_fib_int(HH + 1 - i), tot) for i in range(1, HH + 1)]),
                                    THRESHOLD_DPS), THRESHOLD_DPS)
        rows_f.append([HH, root])
        inst_f.append(({H: HH}, root))
    uses = ["variance_part", "zero_cov", "profile_poly", "w_uniform"]
    alpha_g = r ** (h - 1) * (1 - r) / (1 - r**H)
    alpha_f = sp.fibonacci(H + 1 - h) / (sp.fibonacci(H + 2) - 1)
    bs_g, bs_f = sp.Symbol("beta_star"), sp.Symbol("beta_star_fib")
    der.step("threshold_roots",
             _eq(sp.Tuple(sp.Sum((alpha_g**2 - 1 / H**2) * h**bs_g, (h, 1, H)),
                          sp.Sum((alpha_f**2 - 1 / H**2) * h**bs_f, (h, 1, H))), sp.Tuple(0, 0)),
             by="descartes_root", instances=[inst_g, inst_f], unknown=[bs_g, bs_f], digits=THRESHOLD_DPS - 5,
             why="for each (H, r) of the grid (geometric) and each H (Fibonacci, best first): the coefficients "
                 "alpha_h^2 - 1/H^2 decrease through 0 once, so sum c_h h^beta has at most one root (Laguerre's "
                 "rule of signs); g(0) > 0, g(oo) < 0, and the stated root (the tables) is bracketed to "
                 f"{THRESHOLD_DPS - 5} digits", uses=uses + ["w_geom", "w_fib_best"])
    der.result("beta_star_geom_table", sp.Matrix(rows_g), codegen=False, uses=uses + ["w_geom"],
               description="rows (H, r, beta*): geometric beats uniform iff beta > beta*(H, r); "
                           f"{THRESHOLD_DPS} digits")
    der.result("beta_star_fib_table", sp.Matrix(rows_f), codegen=False, uses=uses + ["w_fib_best"],
               description="rows (H, beta*): Fibonacci (best first) beats uniform iff beta > beta*(H)")


def _checked(der: Derivation, *names: str) -> bool:
    steps = {s.name: s for s in der.steps}
    return all(nm in steps and steps[nm].checked for nm in names)


def _rates_in_n(der: Derivation) -> None:
    """Reading (ii): heads of different consistency rates, MSE_h = c_h n^(-gamma_h), independent
    errors, weights fixed in n. The ensemble MSE sum_h a_h^2 c_h n^(-gamma_h) decays at the worst
    head's rate for any positive weights; only n-adaptive (inverse-MSE) weights reach the best one's."""
    der.assume("consistency_rates", "MSE_h = c_h n^(-gamma_h) with gamma_1 > ... > gamma_H > 0 (heads ordered by "
               "consistency rate), independent head errors")
    der.assume("fixed_weights", "the weights a_h > 0 do not depend on n", kind="setting")
    n = sp.Symbol("n", positive=True)
    gam = [sp.Integer(1), sp.Rational(4, 5), sp.Rational(3, 5), sp.Rational(2, 5)]   # RATE_PARAMS of the check
    a = sp.symbols("a_1:5", positive=True)
    c = sp.symbols("c_1:5", positive=True)
    M = sum(ai**2 * ci * n ** (-g) for ai, ci, g in zip(a, c, gam))
    der.step("rate_fixed_weights_H4", sp.Eq(sp.Limit(sp.log(M) / sp.log(n), n, sp.oo), -gam[-1], evaluate=False),
             by="limit", uses=["consistency_rates", "fixed_weights"],
             why="gamma = (1, 4/5, 3/5, 2/5), any positive weights and constants: the worst head's term "
                 "n^(-2/5) dominates, so the MSE decays like n^(-min gamma)")
    M_inv = 1 / sum(n**g / ci for g, ci in zip(gam, c))
    der.step("rate_inverse_mse_weights_H4", sp.Eq(sp.Limit(sp.log(M_inv) / sp.log(n), n, sp.oo), -gam[0],
                                                  evaluate=False),
             by="limit", uses=["consistency_rates"],
             why="weights a_h proportional to n^(gamma_h)/c_h (inverse MSE, they change with n) give "
                 "1/sum_h n^(gamma_h)/c_h: the best head's rate n^(-max gamma)")
    H, r = 4, sp.Rational(1, 2)
    w = [r ** (h - 1) for h in range(1, H + 1)]
    geom, unif = [x / sum(w) for x in w], [sp.Rational(1, H)] * H
    Mg = sum(x**2 * n ** (-g) for x, g in zip(geom, gam))
    Mu = sum(x**2 * n ** (-g) for x, g in zip(unif, gam))
    ratio = (geom[-1] / unif[-1]) ** 2
    der.step("geometric_constant_H4", sp.Eq(sp.Limit(Mg / Mu, n, sp.oo), ratio, evaluate=False), by="limit",
             uses=["consistency_rates", "fixed_weights", "w_geom", "w_uniform"],
             why="equal constants c_h = 1, r = 1/2: geometric and uniform MSE share the rate; their ratio tends to "
                 "(alpha_H^geom / alpha_H^unif)^2 = ((1/15)/(1/4))^2 = 16/225, a lower constant, not a faster rate")
    der.result("rates_geom_over_uniform_H4", ratio, codegen=False, uses=["consistency_rates", "fixed_weights"],
               description="lim_n MSE_geom/MSE_unif for gamma = (1, 4/5, 3/5, 2/5), c_h = 1, r = 1/2")
    der.compare("faster_rate_in_n",
                stated="geometric (or Fibonacci) weights give a faster MSE decay in n than uniform averaging "
                       "(heads ordered by consistency rate)",
                derived="with weights fixed in n every scheme decays at the worst head's rate n^(-min gamma) "
                        "(gamma = (1, 4/5, 3/5, 2/5): n^(-2/5) for any positive weights); only n-adaptive inverse-MSE "
                        "weights reach n^(-max gamma); geometric weights lower the constant (x16/225 against uniform "
                        "at H = 4, r = 1/2)",
                holds=False, method="steps rate_fixed_weights_H4, rate_inverse_mse_weights_H4, geometric_constant_H4",
                uses=["consistency_rates", "fixed_weights"])


def _compare(der: Derivation) -> None:
    """Findings, each computed from the derived floors, orders and checked steps."""
    stated = ("geometric (or Fibonacci) weights give a faster MSE decay than uniform averaging when head "
              "quality is heterogeneous")
    floor_geom = sp.factor(((1 - r) ** 2 * V_1).subs(r, 1 / (1 + t)))   # geom_first_weight_floor, r in (0,1)
    floor_fib = PHI**-4 * V_1                           # alpha_1 -> phi^-2 (fib_weight_limit, h = 1)
    unif_exp_half = sp.Rational(1, 2) - 1               # W_unif ~ H^(beta-1), at beta = 1/2
    uniform_to_zero = unif_exp_half < 0 and _checked(der, "stolz_power_sum", "uniform_poly_order")
    up = ["variance_part", "zero_cov", "profile_poly"]
    der.compare("faster_decay_geometric", stated=stated,
                derived="for fixed r, W_geom >= (1-r)^2 V_1 > 0 for every H and every profile: it does not decay "
                        "to 0, while W_unif ~ V_1 H^(beta-1)/(beta+1) -> 0 for beta < 1",
                holds=not (floor_geom.is_positive and _checked(der, "geom_first_weight_floor")),
                method="geom_first_weight_floor", uses=up + ["w_geom", "w_uniform"])
    der.compare("faster_decay_fibonacci", stated=stated,
                derived="W_fib_best >= alpha_1^2 V_1 -> V_1/phi^4 > 0 (limit V_1 phi^-2 Li_{-beta}(phi^-2), the "
                        "geometric one at r = 1/phi); W_fib_worst >= phi^-6 V_1 H^beta grows",
                holds=not (floor_fib.is_positive and _checked(der, "fib_weight_limit", "fib_best_poly_limit")),
                method="fib_best_poly_limit", uses=up + ["w_fib_best", "w_fib_worst"])
    der.compare("geometric_lower_mse_poly", stated=stated + " (read as: lower MSE for large H)",
                derived="V_h = V_1 h^beta, H -> oo: geometric wins iff beta > 1, or beta = 1 and r > sqrt(2) - 1; "
                        "uniform wins for 0 < beta < 1 (heterogeneous, yet uniform is better; e.g. beta = 1/2: "
                        "W_unif -> 0 < (1-r)^2 V_1). For finite H: iff beta > beta*(H, r) (table)",
                holds=not (uniform_to_zero and floor_geom.is_positive), method="geom_beats_uniform_beta1",
                uses=up + ["w_geom", "w_uniform"])
    der.compare("fibonacci_lower_mse_poly", stated=stated + " (read as: lower MSE for large H)",
                derived="best-first Fibonacci wins for large H iff beta >= 1 (r = 1/phi > sqrt 2 - 1); uniform wins "
                        "for 0 < beta < 1; worst-first Fibonacci always loses for beta > 0",
                holds=not (uniform_to_zero and floor_fib.is_positive), method="fib_beats_uniform_beta1",
                uses=up + ["w_fib_best", "w_uniform"])
    der.compare("lower_mse_exp", stated=stated + " (read as: lower MSE for large H)",
                derived="V_h = V_1 q^(h-1), q > 1: W_unif grows like q^H/H^2 and W_geom/W_unif -> 0 for every "
                        "r in (0,1) (also when r^2 q >= 1), likewise Fibonacci; for q < 1 uniform wins",
                holds=_checked(der, "geom_vs_uniform_exp_ratio", "fib_vs_uniform_exp_ratio"),
                method="geom_vs_uniform_exp_ratio",
                uses=["variance_part", "zero_cov", "profile_exp", "w_geom", "w_fib_best", "w_uniform"])
    der.compare("lower_mse_correlated", stated=stated + " (read as: lower MSE for large H)",
                derived="with C_hh' = rho sqrt(V_h V_h'), rho > 0: W_unif grows like 4 rho V_1 H^beta/(beta+2)^2 "
                        "for every beta > 0 while W_geom stays bounded: geometric wins for large H",
                holds=bool(beta.is_positive) and _checked(der, "corr_uniform_growth", "corr_geom_bounded"),
                method="corr_geom_bounded", uses=["variance_part", "const_corr", "profile_poly", "w_geom", "w_uniform"])
    der.compare("uniform_optimal_equal_V",
                stated="(converse) uniform averaging is optimal for equal V_h and zero covariance",
                derived="sum alpha^2 - 1/H = sum (alpha_h - 1/H)^2 >= 0",
                holds=_checked(der, "uniform_optimal_equal_V_general", "uniform_optimal_equal_V_H2"),
                method="uniform_optimal_equal_V_general",
                uses=["weights_affine", "variance_part", "zero_cov", "equal_V"])
    der.compare("inverse_variance_optimal", stated="(converse) inverse-variance weights are optimal among all",
                derived="W(alpha) - 1/sum(1/V_h) = sum V_h (alpha_h - alpha*_h)^2 >= 0; with covariance "
                        "alpha* = C^-1 1/(1^T C^-1 1). Orders: (1-beta) V_1 H^(beta-1) (beta < 1), V_1/log H "
                        "(beta = 1), V_1/zeta(beta) (beta > 1)",
                holds=_checked(der, "inverse_variance_certificate_term", "lagrange_inverse_variance_H3",
                               "lagrange_covariance_H3"),
                method="inverse_variance_certificate_term",
                uses=["weights_affine", "variance_part", "zero_cov", "w_inverse"])


def build() -> Derivation:
    der = Derivation(
        claim="C8",
        title="Structured head weights (geometric, Fibonacci) versus uniform averaging",
        stated="Thm 7.1: with heads ordered by quality, geometric or Fibonacci weights give a faster MSE decay "
               "than uniform averaging when head quality is heterogeneous",
    )
    _assumptions(der)
    _weights(der)
    _optimality(der)
    _closed_forms(der)
    _asymptotics(der)
    _correlated(der)
    _thresholds(der)
    _rates_in_n(der)
    _compare(der)
    _set_domains(der)
    return der


#: Where the generated code is meant to be used. The closed forms in r have a removable
#: singularity at r = 1 (0/0), where float64 loses digits to cancellation: use the ``_mp``
#: variant near it. Covariances must keep the 2x2 covariance matrix positive definite.
R_DOMAIN = (0.05, 0.95)


def _set_domains(der: Derivation) -> None:
    for res in der.results.values():
        if r in res.args:
            res.domain.setdefault(r, R_DOMAIN)
