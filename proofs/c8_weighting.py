"""C8 (Thm 7.1): structured (geometric, Fibonacci) head weights versus uniform averaging.

The variance part of the ensemble MSE (C3) for weights summing to one is ``W(alpha) = sum alpha_h^2
V_h + sum_{h != h'} alpha_h alpha_h' C_hh'``. For heads ordered best first and two quality profiles
(``model`` assumptions), polynomial ``V_h = V_1 h^beta`` and exponential ``V_h = V_1 q^(h-1)``: the
closed forms of ``W`` for uniform, geometric, Fibonacci and inverse-variance weights (by induction,
every power ``b^H`` an independent symbol), their orders in ``H``, the optimality of inverse-variance
weights (and of uniform ones for equal variances), and when geometric/Fibonacci weights beat
uniform ones; then reading ii (rates in n). Every comparison is decided by one group.
"""

from __future__ import annotations

from fractions import Fraction

import mpmath
import sympy as sp

from .core import Derivation, eq, ge, gt
from .notation import H, spell

__all__ = ["build", "CLAIM", "TITLE", "STATED", "PHI", "PSI", "fib", "GRID_GEOM", "GRID_FIB", "RATE_GAMMAS",
           "RATE_R", "READINGS"]

CLAIM = "C8"
TITLE = "Structured head weights versus uniform averaging (Thm 7.1)"
STATED = ("Thm 7.1: with heads ordered by quality, geometric or Fibonacci weights give a faster MSE decay than "
          "uniform averaging when head quality is heterogeneous")
#: The two natural readings (SPEC, C8), by id: the id is text ("i", "ii"), the description markup.
READINGS = (("i", "in $H$, variances rising along the order"),
            ("ii", "in $n$, heads of different consistency rates"))

spell(beta_star=r"\beta^{*}", beta_star_fib=r"\beta^{*}_{\mathrm{F}}", rho_pos=r"\rho")

h = sp.Symbol("h", integer=True, positive=True)
V_1 = sp.Symbol("V_1", positive=True)
beta = sp.Symbol("beta", positive=True)
r = sp.Symbol("r", positive=True)          # geometric ratio, 0 < r < 1
q = sp.Symbol("q", positive=True)          # exponential quality ratio
rho = sp.Symbol("rho", nonnegative=True)   # constant correlation, 0 <= rho <= 1
rho_pos = sp.Symbol("rho_pos", positive=True)   # a positive correlation (the case where uniform loses)
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
#: Reading ii: the consistency rates gamma_h of the four heads (best first) and the geometric ratio
#: the derivation instantiates; the check's counterexample uses the same (verify.claims.c8.RATE_PARAMS).
RATE_GAMMAS = (sp.Integer(1), sp.Rational(4, 5), sp.Rational(3, 5), sp.Rational(2, 5))
RATE_R = sp.Rational(1, 2)


def fib(k):
    """Binet's form F_k = (phi^k - psi^k)/sqrt(5)."""
    return (PHI**k - PSI**k) / sp.sqrt(5)


# Closed forms of sums over h = 1..H, which the method ``induction`` checks for every H.
def _sum_h_geometric(x):
    """sum_{h=1}^{H} h x^(h-1)."""
    return (1 - (H + 1) * x**H + H * x ** (H + 1)) / (1 - x) ** 2


def _sum_h2_geometric(x):
    """sum_{h=1}^{H} h^2 x^(h-1)."""
    return (1 + x - (H + 1) ** 2 * x**H + (2 * H**2 + 2 * H - 1) * x ** (H + 1) - H**2 * x ** (H + 2)) / (1 - x) ** 3


#: sum_{k=1}^{H} F_k^2 q^(H-k) = sum_h F_{H+1-h}^2 q^(h-1)
FIB_BEST_EXP_SUM = (PHI2 * (PHI2**H - q**H) / (PHI2 - q) + PSI2 * (PSI2**H - q**H) / (PSI2 - q)
                    - 2 * ((-1) ** H - q**H) / (1 + q)) / 5
#: sum_{h=1}^{H} F_h^2 q^(h-1)
FIB_WORST_EXP_SUM = (PHI2 * (PHI2**H * q**H - 1) / (PHI2 * q - 1) + PSI2 * (PSI2**H * q**H - 1) / (PSI2 * q - 1)
                     - 2 * ((-1) ** H * q**H - 1) / (q + 1)) / 5


def _assumptions(der: Derivation) -> None:
    der.assume("weights_affine", r"weights sum to one: $\sum_h \alpha_h = 1$ ($H$ heads)", kind="setting")
    der.assume("variance_part", r"$W(\alpha) = \sum_h \alpha_h^2 V_h + \sum_{h \ne h'} \alpha_h \alpha_{h'} C_{hh'}$ "
               "(the variance part of the decomposition of C3)", kind="setting")
    der.assume("zero_cov", r"$C_{hh'} = 0$ for $h \ne h'$")
    der.assume("const_corr", r"$C_{hh'} = \rho \sqrt{V_h V_{h'}}$, $0 \le \rho \le 1$ (the model of C5 with equal "
               "overlap)")
    der.assume("equal_V", "$V_h = V$ for every head")
    der.assume("pd_cov", "the covariance matrix $C$ is positive definite")
    der.assume("profile_poly", r"$V_h = V_1 h^\beta$, $\beta > 0$: heads ordered best first")
    der.assume("profile_exp", r"$V_h = V_1 q^{h-1}$, $q > 0$: heads ordered best first iff $q > 1$")
    der.assume("w_uniform", r"$\alpha_h = 1/H$", kind="setting")
    der.assume("w_geom", r"$\alpha_h = r^{h-1} (1-r)/(1-r^H)$, $0 < r < 1$ fixed", kind="setting")
    der.assume("w_fib_best", r"$\alpha_h = F_{H+1-h}/(F_{H+2}-1)$: largest weight on the best head", kind="setting")
    der.assume("w_fib_worst", r"$\alpha_h = F_h/(F_{H+2}-1)$: largest weight on the worst head", kind="setting")
    der.assume("w_inverse", r"$\alpha_h = (1/V_h) / \sum_{h'} (1/V_{h'})$", kind="setting")
    der.assume("binet", r"$F_k = (\varphi^k - \psi^k)/\sqrt{5}$, $\varphi = (1+\sqrt{5})/2$, $\psi = (1-\sqrt{5})/2$",
               kind="setting")
    der.assume("polylog_def", r"$\mathrm{Li}_s(x) = \sum_{k \ge 1} x^k / k^s$ for $\lvert x \rvert < 1$",
               kind="setting")


def _define(der: Derivation) -> None:
    der.define(h="a head index (heads ordered best first)", V_1="the variance of the best head",
               beta=r"the exponent of the polynomial profile $V_h = V_1 h^\beta$",
               r="the ratio of the geometric weights", q=r"the ratio of the exponential profile $V_h = V_1 q^{h-1}$",
               rho=r"the constant correlation of the heads, $0 \le \rho \le 1$",
               rho_pos=r"a positive correlation $\rho > 0$",
               s="a power in the Stolz–Cesàro lemma", u=r"$u = 1 - \beta$ in $(0, 1)$", v=r"$v = \beta - 1 > 0$",
               t=r"$r = 1/(1+t)$ in $(0, 1)$",
               z=r"$r^H = 1/(1+z)$ in $(0, 1)$ (also $r^2 q = 1/(1+z)$ or $q = \varphi^2/(1+z)$)",
               m="a Fibonacci index", lambda_="the Lagrange multiplier",
               alpha_=r"the head weights $\alpha_h$", V_=r"the head variances $V_h$",
               C_=r"the head covariances $C_{hh'}$", a_=r"head weights $a_h$ (any weights)",
               c=r"the constant $1/\sum_h (1/V_h)$", c_=r"the constants $c_h$ of the head MSEs $c_h n^{-\gamma_h}$",
               Sigma=r"the power sum $\sum_h h^\beta$", W=r"the weighted variance $W(\alpha)$",
               beta_star=r"the finite-$H$ threshold $\beta^{*}(H, r)$ of geometric against uniform weights",
               beta_star_fib=r"the finite-$H$ threshold of best-first Fibonacci against uniform weights")
    # `lambda` is a keyword: the family key above registers "lambda*" (covers "lambda")


def _weights(der: Derivation) -> None:
    der.step("geom_sum", eq(sp.Sum(r ** (h - 1), (h, 1, H)), (1 - r**H) / (1 - r)), by="induction",
             why="so the geometric weights sum to one", uses=["w_geom"])
    der.step("binet_recurrence", eq(PHI**2 - PHI - 1, 0), by="expand", uses=["binet"])
    der.step("binet_square", eq(fib(h) ** 2, (PHI2**h + PSI2**h - 2 * (-1) ** h) / 5), by="power_identity",
             k=h, bases=FIB_BASES,
             why=r"exponent laws for integer $h$: $(\varphi^2)^h = (\varphi^h)^2$ and $(-1)^h = (\varphi \psi)^h = "
                 r"\varphi^h \psi^h$",
             uses=["binet"])
    der.step("fib_sum", eq(sp.Sum(fib(h), (h, 1, H)), fib(H + 2) - 1), by="induction",
             why=r"$\sum_{k \le H} F_k = F_{H+2} - 1$, so both Fibonacci weight vectors sum to one",
             uses=["binet"])
    der.step("fib_first_values", eq(sp.Matrix([fib(k) for k in range(1, 9)]),
                                    sp.Matrix([1, 1, 2, 3, 5, 8, 13, 21])), by="expand", uses=["binet"])
    der.result("fibonacci", fib(h), args=(h,), description="$F_h$ by the form of Binet", uses=["binet"])
    der.result("alpha_geom", r ** (h - 1) * (1 - r) / (1 - r**H), args=(h, H, r), uses=["w_geom"],
               description="geometric weight of head $h$ (best first)", codegen=("numpy",))
    der.result("alpha_fib_best", fib(H + 1 - h) / (fib(H + 2) - 1), args=(h, H), uses=["w_fib_best", "binet"],
               description="Fibonacci weight $F_{H+1-h}/(F_{H+2}-1)$, largest on head 1", codegen=("numpy", "mpmath"))
    der.result("alpha_fib_worst", fib(h) / (fib(H + 2) - 1), args=(h, H), uses=["w_fib_worst", "binet"],
               description="Fibonacci weight $F_h/(F_{H+2}-1)$, largest on head $H$", codegen=("numpy", "mpmath"))
    der.result("alpha_inv_exp", (q - 1) * q ** (H - h) / (q**H - 1), args=(h, H, q),
               uses=["w_inverse", "profile_exp"], description="inverse-variance weight for $V_h = V_1 q^{h-1}$")


def _uniform_equal_V(der: Derivation) -> None:
    """Uniform weights are optimal for equal variances and zero covariance (Cauchy-Schwarz)."""
    uses = ["weights_affine", "variance_part", "zero_cov", "equal_V"]
    for HH in (2, 3, 4, 5):
        as_ = list(sp.symbols(f"alpha_1:{HH}", real=True))
        as_.append(1 - sum(as_))
        eq_cert = sum((a_ - sp.Rational(1, HH)) ** 2 for a_ in as_)
        der.step(f"uniform_optimal_equal_V_H{HH}", ge(sum(a_**2 for a_ in as_), sp.Rational(1, HH)),
                 by="certificate", certificate=eq_cert,
                 why=r"Cauchy–Schwarz: $\sum \alpha^2 \ge (\sum \alpha)^2/H = 1/H$, certificate "
                     r"$\sum (\alpha_h - 1/H)^2$",
                 uses=uses)
    a_h = sp.Symbol("a_h", real=True)
    der.step("uniform_optimal_equal_V_general",
             eq((a_h - 1 / H) ** 2, a_h**2 - 2 * a_h / H + 1 / H**2), by="expand",
             why=r"summed over $H$ heads with $\sum a_h = 1$: $\sum (a_h - 1/H)^2 = \sum a_h^2 - 1/H \ge 0$",
             uses=uses)


def _inverse_variance(der: Derivation) -> None:
    """Inverse-variance weights are optimal among all weights summing to one (Lagrange), also with
    a covariance matrix: alpha* = C^-1 1/(1^T C^-1 1)."""
    Vs = sp.symbols("V_1:4", positive=True)
    al = sp.symbols("alpha_1:4", real=True)
    lam = sp.Symbol("lambda", real=True)
    Lag = sum(a_**2 * V_ for a_, V_ in zip(al, Vs)) - lam * (sum(al) - 1)
    S = sum(1 / V_ for V_ in Vs)
    a_star = [1 / (V_ * S) for V_ in Vs]
    uses = ["weights_affine", "variance_part", "zero_cov"]
    der.step("lagrange_inverse_variance_H3", eq(sp.Matrix(al), sp.Matrix(a_star)), by="solve",
             equation=[eq(sp.Derivative(Lag, a_), 0) for a_ in al] + [eq(sum(al), 1)], unknowns=[lam],
             why=r"$\nabla(\sum \alpha^2 V - \lambda(\sum \alpha - 1)) = 0$: $2 \alpha_h V_h = \lambda$, "
                 r"$\alpha_h \propto 1/V_h$", uses=uses)
    hess = sp.Matrix(3, 3, lambda i, j: sp.Derivative(Lag, al[i], al[j]))
    der.step("lagrange_hessian_H3", eq(hess, 2 * sp.diag(*Vs)), by="simplify",
             why=r"second-order condition: the Hessian $2 \mathrm{diag}(V)$ is positive definite", uses=uses)
    a_h = sp.Symbol("a_h", real=True)
    V_h, cc = sp.symbols("V_h c", positive=True)
    der.step("inverse_variance_certificate_term", eq(V_h * (a_h - cc / V_h) ** 2,
                                                     V_h * a_h**2 - 2 * cc * a_h + cc**2 / V_h), by="expand",
             why=r"summed over $h$ with $\sum a_h = 1$ and $c = 1/\sum_h (1/V_h)$: $\sum V_h (a_h - a^*_h)^2 = W(a) - c$, "
                 r"so $W(a) \ge 1/\sum_h (1/V_h)$ with equality iff $a = a^*$ (any $H$)", uses=uses)
    Vs2 = sp.symbols("V_1:3", positive=True)
    as2 = [sp.Symbol("alpha_1", real=True)]
    as2.append(1 - as2[0])
    S2 = sum(1 / V_ for V_ in Vs2)
    W2 = sum(a_**2 * V_ for a_, V_ in zip(as2, Vs2))
    cert = sum(V_ * (a_ - 1 / (V_ * S2)) ** 2 for a_, V_ in zip(as2, Vs2))
    der.step("inverse_variance_optimal_H2", ge(W2, 1 / S2), by="certificate", certificate=cert,
             why=r"$W(a) - 1/\sum_h (1/V_h) = \sum V_h (a_h - a^*_h)^2 \ge 0$ on the affine constraint", uses=uses)
    # with covariance: alpha* = C^-1 1 / (1^T C^-1 1), W* = 1/(1^T C^-1 1)
    cu = ["weights_affine", "variance_part", "pd_cov"]
    for HH in (2, 3):
        Cm = sp.Matrix(HH, HH, lambda i, j: sp.Symbol(f"C_{min(i, j) + 1}{max(i, j) + 1}", real=True))
        al_ = sp.Matrix(sp.symbols(f"alpha_1:{HH + 1}", real=True))
        one = sp.ones(HH, 1)
        Ci1 = Cm.adjugate() * one          # C^-1 1 up to the factor 1/det C
        a_opt = Ci1 / (one.T * Ci1)[0]
        W_opt = Cm.det() / (one.T * Ci1)[0]
        Lc = (al_.T * Cm * al_)[0] - lam * (sum(al_) - 1)
        der.step(f"lagrange_covariance_H{HH}", eq(al_, a_opt), by="solve",
                 equation=[eq(sp.Derivative(Lc, a_), 0) for a_ in al_] + [eq(sum(al_), 1)], unknowns=[lam],
                 why=r"$2 C \alpha = \lambda 1$: $\alpha^* = C^{-1} 1/(1^\top C^{-1} 1)$", uses=cu)
        on_plane = {al_[-1]: 1 - sum(al_[:-1])}
        d_ = (al_ - a_opt)
        der.step(f"covariance_certificate_H{HH}",
                 eq(((al_.T * Cm * al_)[0] - W_opt).subs(on_plane), (d_.T * Cm * d_)[0].subs(on_plane)),
                 by="rational", why=r"$W(\alpha) - W^* = (\alpha - \alpha^*)^\top C (\alpha - \alpha^*) \ge 0$ for $C$ "
                                    "positive definite", uses=cu)
    C2 = sp.Symbol("C_12", real=True)
    V1s, V2s = sp.symbols("V_1 V_2", positive=True)
    der.result("W_opt_cov_H2", (V1s * V2s - C2**2) / (V1s + V2s - 2 * C2), args=(V1s, V2s, C2),
               description="optimal variance of two heads with covariance $C_{12}$", uses=["pd_cov"], codegen=("numpy",))
    der.result("alpha1_opt_cov_H2", (V2s - C2) / (V1s + V2s - 2 * C2), args=(V1s, V2s, C2),
               description="optimal weight of head 1 of two", uses=["pd_cov"], codegen=("numpy",))
    C2m = sp.Matrix([[V1s, C2], [C2, V2s]])
    one_row, one_col = sp.ImmutableMatrix(sp.ones(1, 2)), sp.ImmutableMatrix(sp.ones(2, 1))
    w_star = 1 / sp.Trace(sp.MatMul(one_row, sp.Inverse(sp.ImmutableMatrix(C2m)), one_col))   # 1/(1ᵀC⁻¹1)
    der.step("cov_H2_closed_form", eq(w_star, (V1s * V2s - C2**2) / (V1s + V2s - 2 * C2)), by="simplify",
             why=r"$W^* = 1/(1^\top C^{-1} 1) = \det C / (1^\top \mathrm{adj}(C) 1)$", uses=["pd_cov"])


def _closed_forms(der: Derivation) -> None:
    """Closed forms of W for the four weightings and both profiles."""
    ue, up = ["variance_part", "zero_cov", "profile_exp"], ["variance_part", "zero_cov", "profile_poly"]
    x2q = r**2 * q
    # exponential profile: every sum is geometric
    der.step("unif_exp_sum", eq(sp.Sum(q ** (h - 1), (h, 1, H)), (q**H - 1) / (q - 1)), by="induction", uses=ue)
    der.step("geom_exp_sum", eq(sp.Sum(x2q ** (h - 1), (h, 1, H)), (x2q**H - 1) / (x2q - 1)), by="induction",
             why=r"$\alpha_h^2 V_h = ((1-r)/(1-r^H))^2 V_1 (r^2 q)^{h-1}$", uses=ue + ["w_geom"])
    der.step("fib_best_exp_sum", eq(sp.Sum(fib(H + 1 - h) ** 2 * q ** (h - 1), (h, 1, H)),
                                    FIB_BEST_EXP_SUM), by="induction", coeff=q, bases=FIB_BASES,
             why=r"$S(H) = \sum_k F_k^2 q^{H-k} = q S(H-1) + F_H^2$ (step `binet_square`); valid for "
                 r"$q \ne \varphi^2, \psi^2$",
             uses=ue + ["w_fib_best", "binet"])
    der.step("fib_worst_exp_sum", eq(sp.Sum(fib(h) ** 2 * q ** (h - 1), (h, 1, H)),
                                     FIB_WORST_EXP_SUM), by="induction", bases=FIB_BASES,
             why=r"geometric sums in $\varphi^2 q$, $\psi^2 q$, $-q$; valid for $q \ne 1/\varphi^2, 1/\psi^2$",
             uses=ue + ["w_fib_worst", "binet"])
    inv_sum = ((1 / q) ** H - 1) / (1 / q - 1)
    der.step("inv_exp_sum", eq(sp.Sum(q ** (1 - h), (h, 1, H)), inv_sum), by="induction",
             uses=ue + ["w_inverse"])
    W_inv_exp = (q - 1) * q ** (H - 1) * V_1 / (q**H - 1)
    der.step("inv_exp_closed", eq(V_1 / inv_sum, W_inv_exp), by="simplify",
             why=r"$W = 1/\sum_h (1/V_h)$ (the Lagrange optimum)", uses=ue + ["w_inverse"])
    den_fib = (fib(H + 2) - 1) ** 2
    forms_exp = {
        "W_uniform_exp": (V_1 * (q**H - 1) / ((q - 1) * H**2), ["w_uniform"]),
        "W_geom_exp": (V_1 * ((1 - r) / (1 - r**H)) ** 2 * (x2q**H - 1) / (x2q - 1), ["w_geom"]),
        "W_fib_best_exp": (V_1 * FIB_BEST_EXP_SUM / den_fib, ["w_fib_best", "binet"]),
        "W_fib_worst_exp": (V_1 * FIB_WORST_EXP_SUM / den_fib, ["w_fib_worst", "binet"]),
        "W_inv_exp": (W_inv_exp, ["w_inverse"]),
    }
    for name, (expr, extra) in forms_exp.items():
        args = (V_1, q, H, r) if name == "W_geom_exp" else (V_1, q, H)
        der.result(name, expr, codegen=("numpy", "mpmath"), args=args, uses=ue + extra,
                   description=r"$\sum_h \alpha_h^2 V_h$ for $V_h = V_1 q^{h-1}$ (closed form; removable "
                               r"singularities at $q = 1$, $r^2 q = 1$, $q = \varphi^{\pm 2}$ are excluded)")
    # polynomial profile: finite sums (printable), integer-beta closed forms by induction
    for bb, closed in ((1, H * (H + 1) / 2), (2, H * (H + 1) * (2 * H + 1) / 6)):
        der.step(f"unif_poly{bb}_sum", eq(sp.Sum(h**bb, (h, 1, H)), closed), by="induction", uses=up)
        der.result(f"W_uniform_poly{bb}", V_1 * closed / H**2, codegen=("numpy", "mpmath"), args=(V_1, H), uses=up + ["w_uniform"],
                   description=f"uniform weights, $V_h = V_1 h^{bb}$")
    for bb, closed in ((1, _sum_h_geometric(r**2)), (2, _sum_h2_geometric(r**2))):
        der.step(f"geom_poly{bb}_sum", eq(sp.Sum(h**bb * r ** (2 * h - 2), (h, 1, H)), closed), by="induction",
                 uses=up)
        der.result(f"W_geom_poly{bb}", V_1 * ((1 - r) / (1 - r**H)) ** 2 * closed, codegen=("numpy", "mpmath"),
                   args=(V_1, H, r),
                   uses=up + ["w_geom"], description=f"geometric weights, $V_h = V_1 h^{bb}$")
    sums = {
        "W_uniform_poly": (V_1 * sp.Sum(h**beta, (h, 1, H)) / H**2, (V_1, beta, H), ["w_uniform"],
                           r"$V_1 \operatorname{harmonic}(H, -\beta)/H^2$"),
        "W_geom_poly": (V_1 * ((1 - r) / (1 - r**H)) ** 2 * sp.Sum(r ** (2 * h - 2) * h**beta, (h, 1, H)),
                        (V_1, beta, H, r), ["w_geom"], r"$((1-r)/(1-r^H))^2 V_1 \sum_h r^{2h-2} h^\beta$"),
        "W_fib_best_poly": (V_1 * sp.Sum(fib(H + 1 - h) ** 2 * h**beta, (h, 1, H)) / den_fib, (V_1, beta, H),
                            ["w_fib_best", "binet"], r"$V_1 \sum_h F_{H+1-h}^2 h^\beta/(F_{H+2}-1)^2$"),
        "W_fib_worst_poly": (V_1 * sp.Sum(fib(h) ** 2 * h**beta, (h, 1, H)) / den_fib, (V_1, beta, H),
                             ["w_fib_worst", "binet"], r"$V_1 \sum_h F_h^2 h^\beta/(F_{H+2}-1)^2$"),
        "W_inv_poly": (V_1 / sp.Sum(h ** (-beta), (h, 1, H)), (V_1, beta, H), ["w_inverse"],
                       r"$V_1/\operatorname{harmonic}(H, \beta)$"),
    }
    for name, (expr, args, extra, text) in sums.items():
        der.result(name, expr, codegen=("numpy", "mpmath"), args=args, uses=up + extra,
                   description=f"{text}: a finite sum over $h = 1, \\ldots, H$ ($H$ a Python int in generated code)")
    der.step("harmonic_forms", eq(sp.Tuple(sp.harmonic(H, -beta), sp.harmonic(H, beta)),
                                  sp.Tuple(sp.Sum(h**beta, (h, 1, H)), sp.Sum(h ** (-beta), (h, 1, H)))),
             by="rewrite", target=sp.Sum,
             why=r"the generalised harmonic numbers: $W_{\mathrm{unif}} = V_1 \operatorname{harmonic}(H, -\beta)/H^2$, "
                 r"$W_{\mathrm{inv}} = V_1/\operatorname{harmonic}(H, \beta)$")
    der.result("W_uniform_poly_harmonic", V_1 * sp.harmonic(H, -beta) / H**2, args=(V_1, beta, H),
               uses=up + ["w_uniform"], description="`W_uniform_poly` as a generalised harmonic number")
    der.result("W_inv_poly_harmonic", V_1 / sp.harmonic(H, beta), args=(V_1, beta, H),
               uses=up + ["w_inverse"], description="`W_inv_poly` as a generalised harmonic number")
    alpha_g = r ** (h - 1) * (1 - r) / (1 - r**H)
    alpha_f = fib(H + 1 - h) / (fib(H + 2) - 1)
    der.result("threshold_geom_poly", sp.Sum((alpha_g**2 - 1 / H**2) * h**beta, (h, 1, H)), args=(beta, H, r),
               uses=up + ["w_geom", "w_uniform"],
               description=r"$W_{\mathrm{geom}} - W_{\mathrm{unif}}$ divided by $V_1$ for $V_h = V_1 h^\beta$; its unique "
                           r"root in $\beta$ is the finite-$H$ threshold $\beta^{*}(H, r)$ (geometric wins above it)")
    der.result("threshold_fib_poly", sp.Sum((alpha_f**2 - 1 / H**2) * h**beta, (h, 1, H)), args=(beta, H),
               uses=up + ["w_fib_best", "w_uniform"],
               description=r"$(W_{\mathrm{fib}} - W_{\mathrm{unif}})/V_1$ for $V_h = V_1 h^\beta$; unique root "
                           r"$\beta^{*}_{\mathrm{F}}(H)$ for $H \ge 3$")


def _uniform_wins_mild(der: Derivation) -> None:
    """0 < beta < 1: uniform weights decay like H^(beta-1) while geometric and best-first Fibonacci
    weights keep a positive floor (groups ``uniform_orders``, ``geometric_floor``, ``fibonacci_floor``)."""
    up = ["variance_part", "zero_cov", "profile_poly"]
    with der.group("uniform_orders", r"uniform weights: $W_{\mathrm{unif}} \sim V_1 H^{\beta-1}/(\beta+1)$, "
                                     r"so $W_{\mathrm{unif}} \to 0$ for $\beta < 1$"):
        der.step("stolz_power_sum", eq(sp.Tuple(sp.Limit(sp.Sum(h**s_, (h, 1, H)) / H ** (s_ + 1), H, sp.oo),
                                                sp.Limit(sp.Sum(h ** (u - 1), (h, 1, H)) / H**u, H, sp.oo)),
                                       sp.Tuple(1 / (s_ + 1), 1 / u)), by="stolz_cesaro",
                 why=r"Stolz–Cesàro ($H^{s+1}$ increases to $\infty$ for $s > -1$): the limit equals "
                     r"$\lim (H+1)^s/((H+1)^{s+1} - H^{s+1}) = 1/(s+1)$; checked for $s > 0$ and $s = u - 1$ in "
                     "$(-1, 0)$")
        Sig = sp.Symbol("Sigma", positive=True)
        der.step("uniform_poly_order", eq(V_1 * Sig / H**2 * H ** (1 - beta) / V_1, Sig / H ** (beta + 1)),
                 by="simplify",
                 why=r"$W_{\mathrm{unif}} H^{1-\beta}/V_1 = \sum h^\beta / H^{\beta+1} \to 1/(\beta+1)$: "
                     r"$W_{\mathrm{unif}} \sim V_1 H^{\beta-1}/(\beta+1)$; $\to 0$ for $\beta < 1$, $\to V_1/2$ at "
                     r"$\beta = 1$, $\to \infty$ for $\beta > 1$", uses=up + ["w_uniform"])
        der.step("uniform_poly1_limit", eq(sp.Limit((H + 1) / (2 * H), H, sp.oo), sp.Rational(1, 2)), by="limit",
                 uses=up + ["w_uniform"])
        der.step("uniform_poly_decays_mild", eq(sp.Limit(V_1 * H ** (-u) / (2 - u), H, sp.oo), 0), by="limit",
                 why=r"$\beta = 1 - u < 1$: the order $V_1 H^{\beta-1}/(\beta+1) = V_1 H^{-u}/(2-u)$ tends to 0, so "
                     r"$W_{\mathrm{unif}} \to 0$", uses=up + ["w_uniform"])
    with der.group("geometric_floor", r"for fixed $r$, $W_{\mathrm{geom}} \ge (1-r)^2 V_1 > 0$ for every $H$ and "
                                      "every profile: no decay to 0"):
        der.step("geom_first_weight_floor",
                 ge(((1 - r) / (1 - 1 / (1 + z))) ** 2, (1 - r) ** 2), by="certificate",
                 certificate=(1 - r) ** 2 * (1 + 2 * z) / z**2,
                 why=r"$r^H = 1/(1+z)$ in $(0,1)$: $\alpha_1 = (1-r)/(1-r^H) \ge 1-r$, so $W_{\mathrm{geom}} \ge "
                     r"\alpha_1^2 V_1 \ge (1-r)^2 V_1$ for every $H$ and every profile",
                 uses=["variance_part", "zero_cov", "w_geom"])
        der.step("geom_floor_positive", gt(((1 - r) ** 2 * V_1).subs(r, 1 / (1 + t)), 0), by="nonneg",
                 why=r"the floor is positive: with $r = 1/(1+t)$ in $(0, 1)$, $(1-r)^2 V_1 = t^2 V_1/(1+t)^2 > 0$",
                 uses=["w_geom"])
    with der.group("fibonacci_floor", r"best-first Fibonacci weights tend to the geometric ones with $r = 1/\varphi$: "
                                      r"$W_{\mathrm{fib}} \ge \alpha_1^2 V_1 \to V_1/\varphi^4 > 0$; worst-first ones "
                                      r"grow like $H^\beta$"):
        der.step("psi_is_minus_inverse_phi", eq(PSI, -1 / PHI), by="simplify", uses=["binet"])
        der.step("fib_weight_limit", eq(sp.Limit(fib(H + 1 - h) / (fib(H + 2) - 1), H, sp.oo), PHI ** (-h - 1)),
                 by="power_limit", bases={PSI: -1 / PHI},
                 why=r"$\psi = -1/\varphi$: with $e = \varphi^{-H} \to 0$ the weight is a rational function of $e$, "
                     r"continuous at 0 whatever the sign $(-1)^H$: $\alpha_h \to \varphi^{-(h+1)}$, i.e. geometric "
                     r"weights with $r = 1/\varphi$",
                 uses=["w_fib_best", "binet"])
        F = [sp.Subs(fib(m), m, k) for k in (1, 2)]          # F_1, F_2 in Binet's form, unevaluated
        base_cases = [sp.Le(PHI ** (k - 2), F[k - 1], evaluate=False) for k in (1, 2)] + \
            [sp.Le(F[k - 1], PHI ** (k - 1), evaluate=False) for k in (1, 2)]
        der.step("fib_bounds", sp.And(*base_cases, eq(PHI ** (m - 1) + PHI ** (m - 2), PHI**m)), by="conjunction",
                 why=r"$\varphi^{m-2} \le F_m \le \varphi^{m-1}$ for every $m \ge 1$ by induction: the bounds hold for "
                     r"$F_1, F_2$ (the four inequalities) and are carried to $F_m = F_{m-1} + F_{m-2}$ by "
                     r"$\varphi^{m-1} + \varphi^{m-2} = \varphi^m$",
                 uses=["binet"])
        der.step("fib_weight_domination", eq(PHI ** (H - h) / PHI ** (H - 1), PHI ** (1 - h)), by="simplify",
                 why=r"$\alpha_h = F_{H+1-h}/(F_{H+2}-1) \le \varphi^{H-h}/F_{H+1} \le \varphi^{1-h}$ "
                     r"($F_{H+2} - 1 \ge F_{H+1}$); $\sum_h \varphi^{2-2h} h^\beta < \infty$",
                 uses=["w_fib_best", "binet"])
        der.step("fib_best_poly_limit", eq(sp.Subs(((1 - r) / r) ** 2 * sp.polylog(-beta, r**2), r, 1 / PHI),
                                           PHI**-2 * sp.polylog(-beta, PHI**-2)), by="simplify",
                 why=r"Tannery (steps `fib_weight_limit`, `fib_weight_domination`): $W_{\mathrm{fib}} \to V_1 \sum_h "
                     r"\varphi^{-2h-2} h^\beta$, the geometric limit at $r = 1/\varphi$, which is positive",
                 uses=["w_fib_best", "binet", "profile_poly"])
        der.step("fib_floor_positive", gt(PHI**-4 * V_1, 0), by="nonneg",
                 why=r"the floor $\alpha_1^2 V_1 \to V_1/\varphi^4$ of best-first Fibonacci weights is positive",
                 uses=["w_fib_best", "binet"])
        der.step("fib_worst_floor", eq(PHI ** (H - 2) / PHI ** (H + 1), PHI**-3), by="simplify",
                 why=r"$\alpha_H = F_H/(F_{H+2}-1) \ge \varphi^{H-2}/\varphi^{H+1}$: $W_{\mathrm{fib,worst}} \ge "
                     r"\varphi^{-6} V_1 H^\beta$, growing faster than $W_{\mathrm{unif}} \sim H^{\beta-1}/(\beta+1)$",
                 uses=["w_fib_worst", "binet", "profile_poly"])


def _asymptotics(der: Derivation) -> None:
    """Orders in H of each W, and the limits that decide which weighting wins for large H."""
    up, ue = ["variance_part", "zero_cov", "profile_poly"], ["variance_part", "zero_cov", "profile_exp"]
    Sig = sp.Symbol("Sigma", positive=True)
    Wsym = sp.Symbol("W", positive=True)
    with der.group("inverse_orders", r"inverse-variance weights: $(1-\beta) V_1 H^{\beta-1}$ ($\beta < 1$), "
                                     r"$V_1/\log H$ ($\beta = 1$), $V_1/\zeta(\beta)$ ($\beta > 1$)"):
        der.step("inverse_poly_order_lt1", eq(sp.Subs(Wsym * H ** (1 - beta) / V_1, Wsym, V_1 / Sig),
                                              1 / (Sig / H ** (1 - beta))),
                 by="simplify",
                 why=r"$\beta = 1 - u < 1$: $\sum h^{-\beta} / H^{1-\beta} \to 1/(1-\beta)$ (Stolz–Cesàro, "
                     r"$s = -\beta$), so $W_{\mathrm{inv}} \sim (1-\beta) V_1 H^{\beta-1}$", uses=up + ["w_inverse"])
        der.step("inverse_poly_order_eq1", eq(sp.Limit(sp.harmonic(H) / sp.log(H), H, sp.oo), 1), by="limit",
                 why=r"$\beta = 1$: $W_{\mathrm{inv}} = V_1/\operatorname{harmonic}(H) \sim V_1/\log H$",
                 uses=up + ["w_inverse"])
        der.step("inverse_poly_order_gt1", eq(sp.Limit(sp.harmonic(H, 1 + v), H, sp.oo), sp.zeta(1 + v)), by="limit",
                 why=r"$\beta = 1 + v > 1$: $W_{\mathrm{inv}} \to V_1/\zeta(\beta)$", uses=up + ["w_inverse"])
        qy = 1 + v
        der.step("inverse_exp_limit", eq(sp.Limit((qy - 1) * qy ** (H - 1) * V_1 / (qy**H - 1), H, sp.oo),
                                         V_1 * (1 - 1 / qy)), by="limit",
                 uses=ue + ["w_inverse"])
    x2q = r**2 * q
    W_geom_lim = V_1 * (1 - r) ** 2 * sp.polylog(-beta, r**2) / r**2
    W_geom_exp_lim = V_1 * (1 - r) ** 2 / (1 - x2q)
    W_fib_exp = V_1 * FIB_BEST_EXP_SUM / (fib(H + 2) - 1) ** 2
    with der.group("structured_limits", r"the limits in $H$ of geometric and best-first Fibonacci weights: positive "
                                        "constants"):
        der.step("geom_poly_series_converges",
                 eq(sp.Tuple(sp.Limit((h + 1) ** beta / h**beta * r**2, h, sp.oo),
                             sp.Limit((1 / (1 + t)) ** H, H, sp.oo)), sp.Tuple(r**2, 0)), by="limit",
                 why=r"ratio test ($r^2 < 1$) and $r^H \to 0$: $W_{\mathrm{geom}} \to V_1 (1-r)^2 "
                     r"\mathrm{Li}_{-\beta}(r^2)/r^2$",
                 uses=up + ["w_geom", "polylog_def"])
        der.result("W_geom_poly_limit", W_geom_lim, args=(V_1, beta, r), uses=up + ["w_geom", "polylog_def"],
                   description=r"$\lim_{H \to \infty} W_{\mathrm{geom}}$ for $V_h = V_1 h^\beta$ (positive), with "
                               r"the polylogarithm $\mathrm{Li}_{-\beta}(r^2)$")
        der.step("geom_poly1_limit", eq(sp.Subs(W_geom_lim, beta, 1), V_1 / (1 + r) ** 2), by="simplify",
                 why=r"$\mathrm{Li}_{-1}(x) = x/(1-x)^2$", uses=up + ["w_geom", "polylog_def"])
        der.step("geom_exp_limit", eq(sp.Limit(V_1 * ((1 - r) / (1 - r**H)) ** 2 * (x2q**H - 1) / (x2q - 1), H,
                                               sp.oo), W_geom_exp_lim), by="power_limit",
                 substitution={r: 1 / (1 + t), q: (1 + t) ** 2 / (1 + z)},
                 why=r"$r^2 q < 1$: $r^H, (r^2 q)^H \to 0$ and the closed form is continuous there",
                 uses=ue + ["w_geom"])
        der.step("fib_best_exp_limit", eq(sp.Limit(W_fib_exp, H, sp.oo),
                                          V_1 * PHI**-4 / (1 - q / PHI**2)), by="power_limit",
                 bases={PHI2: PHI**2, PSI2: PHI**-2, PSI: -1 / PHI}, substitution={q: PHI**2 / (1 + z)},
                 excluded=[q - PSI2],
                 why=r"$q = \varphi^2/(1 + z) < \varphi^2$: divide by $\varphi^{2H}$; the limit equals the geometric "
                     r"one at $r = 1/\varphi$ (the closed form excludes $q = \psi^2$, where it is 0/0)",
                 uses=ue + ["w_fib_best", "binet"])
        for name, expr, extra in (("W_geom_exp_limit", W_geom_exp_lim, ["w_geom"]),
                                  ("W_fib_best_exp_limit", V_1 * PHI**-4 / (1 - q / PHI**2), ["w_fib_best"]),
                                  ("W_inv_exp_limit", V_1 * (1 - 1 / q), ["w_inverse"])):
            der.result(name, expr, args=(V_1, q, r) if "geom" in name else (V_1, q), uses=ue + extra,
                       description=r"$\lim_{H \to \infty} W$ (exponential profile; geometric needs $r^2 q < 1$, "
                                   r"Fibonacci $q < \varphi^2$, inverse $q > 1$)")
    with der.group("beta1_threshold", r"$\beta = 1$: geometric weights win iff $r > \sqrt{2} - 1$; best-first "
                                      r"Fibonacci ($r = 1/\varphi$) wins"):
        der.step("geom_beats_uniform_beta1", eq(r, sp.sqrt(2) - 1), by="solve", equation=eq((1 + r) ** 2, 2),
                 why=r"$\beta = 1$: $V_1/(1+r)^2 < V_1/2$ iff $(1+r)^2 > 2$ iff $r > \sqrt{2} - 1$ ($(1+r)^2$ "
                     "increasing)",
                 uses=up + ["w_geom", "w_uniform"])
        der.step("fib_beats_uniform_beta1", gt(1 / PHI, sp.sqrt(2) - 1), by="nonneg",
                 why=r"$\beta = 1$: Fibonacci $\to V_1/\varphi^2 < V_1/2$ ($r = 1/\varphi > \sqrt{2} - 1$)",
                 uses=["w_fib_best", "profile_poly"])
    rt, qy = 1 / (1 + t), 1 + v                      # r in (0,1), q > 1
    with der.group("exp_profile", r"$V_h = V_1 q^{h-1}$: for $q > 1$ structured weights win for large $H$ (their "
                                  r"ratio to uniform tends to 0), for $q < 1$ uniform wins"):
        der.step("uniform_exp_order", eq(sp.Limit(((qy**H - 1) / ((qy - 1) * H**2)) / (qy**H / ((qy - 1) * H**2)), H,
                                                  sp.oo), 1), by="limit",
                 why=r"$q > 1$: $W_{\mathrm{unif}} \sim V_1 q^H/((q-1) H^2) \to \infty$", uses=ue + ["w_uniform"])
        der.step("uniform_exp_q_lt_1", eq(sp.Limit(V_1 * ((1 / qy) ** H - 1) / ((1 / qy - 1) * H**2), H, sp.oo), 0),
                 by="limit",
                 why=r"$q < 1$ (heads ordered worst first): $W_{\mathrm{unif}} \to 0$ while $W_{\mathrm{geom}} \ge "
                     r"(1-r)^2 V_1$: uniform wins",
                 uses=ue + ["w_uniform"])
        der.step("geom_vs_uniform_exp_ratio",
                 eq(sp.Tuple(sp.Limit(H**3 * (qy - 1) / (qy**H - 1), H, sp.oo),
                             sp.Limit(H**3 * rt ** (2 * H - 2), H, sp.oo)), sp.Tuple(0, 0)), by="limit",
                 why=r"the two bounds of $\lim W_{\mathrm{geom}}/W_{\mathrm{unif}}$ ($q = 1 + v > 1$, $r = 1/(1 + t)$ "
                     r"in $(0,1)$): $\sum_{h \le H} (r^2 q)^{h-1} \le H \max(1, r^2 q)^{H-1}$ and $q^{H-1}(q-1) \le "
                     r"q^H - 1$, so $W_{\mathrm{geom}}/W_{\mathrm{unif}} \le \mathrm{const} \cdot H^3 \max(q^{-H}, "
                     r"r^{2H-2})$; both tend to 0: geometric wins for large $H$ for every $r$ (not only $r^2 q < 1$)",
                 uses=ue + ["w_geom", "w_uniform"])
        der.step("fib_vs_uniform_exp_ratio",
                 eq(sp.Tuple(sp.Limit(H**3 * qy ** (-H), H, sp.oo), sp.Limit(H**3 * PHI ** (-2 * H), H, sp.oo)),
                    sp.Tuple(0, 0)), by="limit",
                 why=r"the two bounds of $\lim W_{\mathrm{fib}}/W_{\mathrm{unif}}$ ($q = 1 + v > 1$): "
                     r"$W_{\mathrm{fib}} \le V_1 \varphi^2 \sum (q/\varphi^2)^{h-1} \varphi^{-2} \le \mathrm{const} "
                     r"\cdot H \max(1, q/\varphi^2)^H$; against $W_{\mathrm{unif}} \sim q^H/H^2$ the ratio is at most "
                     r"$\mathrm{const} \cdot H^3 \max(q^{-H}, \varphi^{-2H})$; both tend to 0",
                 uses=ue + ["w_fib_best"])


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
    der.step("corr_identity_H4", eq(W, rhs), by="expand",
             why=r"$W = (1-\rho) \sum \alpha^2 V + \rho (\sum \alpha \sqrt{V})^2$ (bilinearity; any $H$)", uses=uses)
    der.step("corr_uniform_growth", eq(sp.Subs((1 / (s_ + 1)) ** 2, s_, beta / 2), 4 / (beta + 2) ** 2),
             by="simplify",
             why=r"Stolz–Cesàro with $s = \beta/2$: $(\sum_h \sqrt{V_h}/H)^2 \sim 4 V_1 H^\beta/(\beta+2)^2$, so "
                 r"$W_{\mathrm{unif}} \ge \rho$ times that", uses=uses + ["w_uniform"])
    der.step("corr_uniform_unbounded", eq(sp.Limit(4 * rho_pos * V_1 * H**beta / (beta + 2) ** 2, H, sp.oo), sp.oo),
             by="limit", why=r"for $\rho > 0$ and every $\beta > 0$ that lower bound of $W_{\mathrm{unif}}$ grows "
                             "without bound", uses=uses + ["w_uniform"])
    der.step("corr_geom_bounded", eq(sp.Limit((h + 1) ** (beta / 2) / h ** (beta / 2) * r, h, sp.oo), r),
             by="limit",
             why=r"ratio test: $\sum \alpha_h \sqrt{V_h} \to \sqrt{V_1} (1-r) \mathrm{Li}_{-\beta/2}(r)/r < \infty$; "
                 r"$W_{\mathrm{geom}}$ stays bounded, so geometric beats uniform for large $H$ for every $\beta > 0$ "
                 r"once $\rho > 0$",
             uses=uses + ["w_geom"])
    der.result("W_uniform_poly_corr",
               (1 - rho) * V_1 * sp.Sum(h**beta, (h, 1, H)) / H**2
               + rho * V_1 * (sp.Sum(h ** (beta / 2), (h, 1, H)) / H) ** 2,
               args=(V_1, beta, H, rho), uses=uses + ["w_uniform"],
               description=r"uniform weights, $V_h = V_1 h^\beta$, $C_{hh'} = \rho \sqrt{V_h V_{h'}}$", codegen=("numpy",))
    ag = r ** (h - 1) * (1 - r) / (1 - r**H)
    der.result("W_geom_poly_corr",
               (1 - rho) * V_1 * sp.Sum(ag**2 * h**beta, (h, 1, H))
               + rho * V_1 * sp.Sum(ag * h ** (beta / 2), (h, 1, H)) ** 2,
               args=(V_1, beta, H, r, rho), uses=uses + ["w_geom"],
               description=r"geometric weights, $V_h = V_1 h^\beta$, $C_{hh'} = \rho \sqrt{V_h V_{h'}}$", codegen=("numpy",))


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
             eq(sp.Tuple(sp.Sum((alpha_g**2 - 1 / H**2) * h**bs_g, (h, 1, H)),
                         sp.Sum((alpha_f**2 - 1 / H**2) * h**bs_f, (h, 1, H))), sp.Tuple(0, 0)),
             by="descartes_root", instances=[inst_g, inst_f], unknown=[bs_g, bs_f], digits=THRESHOLD_DPS - 5,
             why=r"for each $(H, r)$ of the grid (geometric) and each $H$ (Fibonacci, best first): the coefficients "
                 r"$\alpha_h^2 - 1/H^2$ decrease through 0 once, so $\sum_h c_h h^\beta$ has at most one root (the rule "
                 r"of signs of Laguerre); $g(0) > 0$, $g(\infty) < 0$, and the stated root (the tables) is bracketed "
                 f"to {THRESHOLD_DPS - 5} digits", uses=uses + ["w_geom", "w_fib_best"])
    der.result("beta_star_geom_table", sp.Matrix(rows_g), uses=uses + ["w_geom"],
               description=r"rows $(H, r, \beta^{*})$: geometric beats uniform iff $\beta > \beta^{*}(H, r)$; "
                           f"{THRESHOLD_DPS} digits")
    der.result("beta_star_fib_table", sp.Matrix(rows_f), uses=uses + ["w_fib_best"],
               description=r"rows $(H, \beta^{*}_{\mathrm{F}})$: Fibonacci (best first) beats uniform iff "
                           r"$\beta > \beta^{*}_{\mathrm{F}}(H)$")


def _rates_in_n(der: Derivation) -> None:
    """Reading ii: heads of different consistency rates, MSE_h = c_h n^(-gamma_h), independent
    errors, weights fixed in n. The ensemble MSE sum_h a_h^2 c_h n^(-gamma_h) decays at the worst
    head's rate for any positive weights; only n-adaptive (inverse-MSE) weights reach the best one's."""
    n = sp.Symbol("n", positive=True)
    gam = RATE_GAMMAS
    a = sp.symbols("a_1:5", positive=True)
    c = sp.symbols("c_1:5", positive=True)
    M = sum(ai**2 * ci * n ** (-g) for ai, ci, g in zip(a, c, gam))
    der.step("rate_fixed_weights_H4", eq(sp.Limit(sp.log(M) / sp.log(n), n, sp.oo), -min(gam)),
             by="limit", uses=["consistency_rates", "fixed_weights"],
             why=r"$\gamma = (1, 4/5, 3/5, 2/5)$, any positive weights and constants: the worst head's term "
                 r"$n^{-2/5}$ dominates, so the MSE decays like $n^{-\min \gamma}$")
    M_inv = 1 / sum(n**g / ci for g, ci in zip(gam, c))
    der.step("rate_inverse_mse_weights_H4", eq(sp.Limit(sp.log(M_inv) / sp.log(n), n, sp.oo), -max(gam)),
             by="limit", uses=["consistency_rates"],
             why=r"weights $a_h \propto n^{\gamma_h}/c_h$ (inverse MSE, they change with $n$) give "
                 r"$1/\sum_h n^{\gamma_h}/c_h$: the best head's rate $n^{-\max \gamma}$")
    HH = len(gam)
    w = [RATE_R ** (k - 1) for k in range(1, HH + 1)]
    geom, unif = [x / sum(w) for x in w], [sp.Rational(1, HH)] * HH
    Mg = sum(x**2 * n ** (-g) for x, g in zip(geom, gam))
    Mu = sum(x**2 * n ** (-g) for x, g in zip(unif, gam))
    der.step("rates_geometric_uniform_same_H4",
             eq(sp.Tuple(sp.Limit(sp.log(Mg) / sp.log(n), n, sp.oo), sp.Limit(sp.log(Mu) / sp.log(n), n, sp.oo)),
                sp.Tuple(-min(gam), -min(gam))), by="limit",
             uses=["consistency_rates", "fixed_weights", "w_geom", "w_uniform"],
             why=r"equal constants $c_h = 1$, $r = 1/2$: geometric and uniform weights decay at the same rate "
                 r"$n^{-2/5}$, so neither is faster")
    ratio = (geom[-1] / unif[-1]) ** 2
    der.step("geometric_constant_H4", eq(sp.Limit(Mg / Mu, n, sp.oo), ratio), by="limit",
             uses=["consistency_rates", "fixed_weights", "w_geom", "w_uniform"],
             why=r"their ratio tends to $(\alpha_H^{\mathrm{geom}} / \alpha_H^{\mathrm{unif}})^2 = ((1/15)/(1/4))^2 "
                 r"= 16/225$: a lower constant, not a faster rate")
    der.result("rates_geom_over_uniform_H4", ratio, uses=["consistency_rates", "fixed_weights"],
               description=r"$\lim_n \mathrm{MSE}_{\mathrm{geom}}/\mathrm{MSE}_{\mathrm{unif}}$ for $\gamma = (1, 4/5, "
                           r"3/5, 2/5)$, $c_h = 1$, $r = 1/2$")


def _compare(der: Derivation) -> None:
    """Findings, each decided by the group of checked steps that proves it (supported_by) or proves
    the statement false (refuted_by)."""
    g = der.groups
    stated = ("geometric (or Fibonacci) weights give a faster MSE decay than uniform averaging when head "
              "quality is heterogeneous")
    large_H = stated + " (read as: lower MSE for large $H$)"
    up = ["variance_part", "zero_cov", "profile_poly"]
    der.compare("faster_rate_in_n",
                stated="geometric (or Fibonacci) weights give a faster MSE decay in $n$ than uniform averaging "
                       "(heads ordered by consistency rate)",
                derived=r"with weights fixed in $n$ every scheme decays at the worst head's rate $n^{-\min \gamma}$ "
                        r"($\gamma = (1, 4/5, 3/5, 2/5)$: $n^{-2/5}$ for any positive weights); only $n$-adaptive "
                        r"inverse-MSE weights reach $n^{-\max \gamma}$; geometric weights lower the constant "
                        r"($\times 16/225$ against uniform at $H = 4$, $r = 1/2$)",
                refuted_by=g["rates_in_n"], uses=["consistency_rates", "fixed_weights"])
    der.compare("faster_decay_geometric", stated=stated,
                derived=r"for fixed $r$, $W_{\mathrm{geom}} \ge (1-r)^2 V_1 > 0$ for every $H$ and every profile: it "
                        r"does not decay to 0, while $W_{\mathrm{unif}} \sim V_1 H^{\beta-1}/(\beta+1) \to 0$ for "
                        r"$\beta < 1$",
                refuted_by=g["geometric_floor"], uses=up + ["w_geom", "w_uniform"])
    der.compare("faster_decay_fibonacci", stated=stated,
                derived=r"$W_{\mathrm{fib}} \ge \alpha_1^2 V_1 \to V_1/\varphi^4 > 0$ (limit $V_1 \varphi^{-2} "
                        r"\mathrm{Li}_{-\beta}(\varphi^{-2})$, the geometric one at $r = 1/\varphi$); "
                        r"$W_{\mathrm{fib,worst}} \ge \varphi^{-6} V_1 H^\beta$ grows",
                refuted_by=g["fibonacci_floor"], uses=up + ["w_fib_best", "w_fib_worst"])
    der.compare("geometric_lower_mse_poly", stated=large_H,
                derived=r"$V_h = V_1 h^\beta$, $H \to \infty$: geometric wins iff $\beta > 1$, or $\beta = 1$ and "
                        r"$r > \sqrt{2} - 1$; uniform wins for $0 < \beta < 1$ (heterogeneous, yet uniform is better; "
                        r"e.g. $\beta = 1/2$: $W_{\mathrm{unif}} \to 0 < (1-r)^2 V_1$). For finite $H$: iff "
                        r"$\beta > \beta^{*}(H, r)$ (table)",
                refuted_by=g["uniform_wins_mild"], uses=up + ["w_geom", "w_uniform"])
    der.compare("fibonacci_lower_mse_poly", stated=large_H,
                derived=r"best-first Fibonacci wins for large $H$ iff $\beta \ge 1$ ($r = 1/\varphi > \sqrt{2} - 1$); "
                        r"uniform wins for $0 < \beta < 1$; worst-first Fibonacci always loses for $\beta > 0$",
                refuted_by=g["uniform_wins_mild"], uses=up + ["w_fib_best", "w_uniform"])
    der.compare("lower_mse_exp", stated=large_H,
                derived=r"$V_h = V_1 q^{h-1}$, $q > 1$: $W_{\mathrm{unif}}$ grows like $q^H/H^2$ and "
                        r"$W_{\mathrm{geom}}/W_{\mathrm{unif}} \to 0$ for every $r$ in $(0,1)$ (also when "
                        r"$r^2 q \ge 1$), likewise Fibonacci; for $q < 1$ uniform wins",
                supported_by=g["exp_profile"],
                uses=["variance_part", "zero_cov", "profile_exp", "w_geom", "w_fib_best", "w_uniform"])
    der.compare("lower_mse_correlated", stated=large_H,
                derived=r"with $C_{hh'} = \rho \sqrt{V_h V_{h'}}$, $\rho > 0$: $W_{\mathrm{unif}}$ grows like "
                        r"$4 \rho V_1 H^\beta/(\beta+2)^2$ for every $\beta > 0$ while $W_{\mathrm{geom}}$ stays "
                        "bounded: geometric wins for large $H$",
                supported_by=g["correlated"],
                uses=["variance_part", "const_corr", "profile_poly", "w_geom", "w_uniform"])
    der.compare("uniform_optimal_equal_V",
                stated="(converse) uniform averaging is optimal for equal $V_h$ and zero covariance",
                derived=r"$\sum \alpha^2 - 1/H = \sum (\alpha_h - 1/H)^2 \ge 0$",
                supported_by=g["uniform_equal_V"], uses=["weights_affine", "variance_part", "zero_cov", "equal_V"])
    der.compare("inverse_variance_optimal", stated="(converse) inverse-variance weights are optimal among all",
                derived=r"$W(\alpha) - 1/\sum_h (1/V_h) = \sum V_h (\alpha_h - \alpha^*_h)^2 \ge 0$; with covariance "
                        r"$\alpha^* = C^{-1} 1/(1^\top C^{-1} 1)$. Orders: $(1-\beta) V_1 H^{\beta-1}$ ($\beta < 1$), "
                        r"$V_1/\log H$ ($\beta = 1$), $V_1/\zeta(\beta)$ ($\beta > 1$)",
                supported_by=g["inverse_variance"], uses=["weights_affine", "variance_part", "zero_cov", "w_inverse"])


def build() -> Derivation:
    der = Derivation(CLAIM, TITLE, STATED, markup=True)
    _assumptions(der)
    der.assume("consistency_rates", r"$\mathrm{MSE}_h = c_h n^{-\gamma_h}$ with $\gamma_1 > \ldots > \gamma_H > 0$ "
               "(heads ordered by consistency rate), independent head errors")
    der.assume("fixed_weights", "the weights $a_h > 0$ do not depend on $n$", kind="setting")
    _define(der)
    der.in_groups(
        ("weights", "the four weightings sum to one; Fibonacci numbers by the form of Binet", _weights),
        ("uniform_equal_V", "uniform weights are optimal for equal variances and zero covariance", _uniform_equal_V),
        ("inverse_variance", r"inverse-variance weights are optimal among all weights summing to one; "
                             r"with covariance $\alpha^* = C^{-1} 1/(1^\top C^{-1} 1)$", _inverse_variance),
        ("closed_forms", r"closed forms of $W = \sum_h \alpha_h^2 V_h$ for both profiles", _closed_forms),
        ("uniform_wins_mild", r"for $0 < \beta < 1$ uniform weights decay to 0 while geometric and "
                              "best-first Fibonacci weights keep positive floors: uniform wins", _uniform_wins_mild))
    _asymptotics(der)
    der.in_groups(
        ("correlated", r"with a constant correlation $\rho > 0$ uniform weights grow like $H^\beta$ while "
                       "geometric ones stay bounded", _correlated),
        ("thresholds", r"the finite-$H$ thresholds $\beta^{*}$: one root each, bracketed", _thresholds),
        ("rates_in_n", r"reading ii: fixed weights decay at the worst head's rate $n^{-\min \gamma}$, "
                       r"geometric weights only lower the constant ($\times 16/225$)", _rates_in_n))
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
