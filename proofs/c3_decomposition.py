"""C3 (Thm 3.1): bias-variance-covariance decomposition of the ensemble MSE, for any weights.

At a point x the head estimates are ``F = μ + Z`` with ``E Z = 0``, ``E Z Zᵀ = C``; for every real α,
``E[(αᵀF - f)²] = (αᵀμ - f)² + αᵀCα``: checked for general H (MatrixSymbols and an expectation
operator) and term by term for H = 1..6, pointwise and integrated. The ensemble bias in head biases
``b_h = μ_h - f`` is ``Σ α_h b_h + (Σ α_h - 1) f``, so "ensemble bias = Σ α_h b_h" needs Σ α = 1;
for α_h = 1/H it reduces to Ueda-Nakano (1996).
"""

from __future__ import annotations

import sympy as sp

from .core import Derivation, eq, gt
from .notation import H as H_sym
from .notation import spell

__all__ = ["build", "CLAIM", "TITLE", "STATED", "MAX_H", "head_symbols", "BIAS_CASE"]

CLAIM = "C3"
TITLE = "Bias-variance-covariance decomposition of the ensemble MSE (Thm 3.1)"
STATED = (r"Thm 3.1: $\mathrm{MSE}_H = (\text{ensemble bias})^2 + \sum_h \alpha_h^2 V_h + "
          r"\sum_{h \neq h'} \alpha_h \alpha_{h'} C_{hh'}$.")

#: The explicit, term-by-term check runs for H = 1..MAX_H.
MAX_H = 6
#: The exact case where Σ α_h b_h is not the ensemble bias: H = 2, every head unbiased, α = (1, 1).
BIAS_CASE = {"alpha": (1, 1), "mu": (1, 1), "f": 1}

f = sp.Symbol("f", real=True)

# how the multi-letter names print (notation.spell)
spell(bias_bar=r"\bar{b}", var_bar=r"\bar{V}", covar_bar=r"\bar{C}")


def head_symbols(H: int) -> dict:
    """alpha_h, mu_h, b_h, Z_h (h = 1..H) and the symmetric covariance C with C[h,h'] = C_{hh'}."""
    rng = range(1, H + 1)
    C = sp.Matrix(H, H, lambda a, c: sp.Symbol(f"C_{min(a, c)+1}{max(a, c)+1}", real=True))
    return {
        "alpha": [sp.Symbol(f"alpha_{h}", real=True) for h in rng],
        "mu": [sp.Symbol(f"mu_{h}", real=True) for h in rng],
        "b": [sp.Symbol(f"b_{h}", real=True) for h in rng],
        "Z": [sp.Symbol(f"Z_{h}", real=True) for h in rng],
        "C": C,
        "C_args": [C[a, c] for a in range(H) for c in range(a, H)],
    }


def _stated_form(alpha, mu, C, H):
    """(Σ α_h μ_h - f)² + Σ α_h² V_h + Σ_{h≠h'} α_h α_h' C_hh' (V_h = C_hh)."""
    bias = sum(a * m for a, m in zip(alpha, mu)) - f
    var = sum(alpha[h] ** 2 * C[h, h] for h in range(H))
    cov = sum(alpha[h] * alpha[k] * C[h, k] for h in range(H) for k in range(H) if h != k)
    return bias**2 + var + cov


def _squared_error(sy: dict):
    """(Σ α_h (μ_h + Z_h) - f)²: the ensemble's squared error at x."""
    return (sum(ai * (mi + zi) for ai, mi, zi in zip(sy["alpha"], sy["mu"], sy["Z"])) - f) ** 2


E_ = sp.Function("E")


def _define(dv: Derivation) -> None:
    dv.define(E="the expectation over the training data and the noise",
              f=r"the target $f(x)$ at the point (a $1 \times 1$ matrix in the matrix form)",
              alpha=r"the weight vector $\alpha$ (any real entries)", alpha_=r"the head weights $\alpha_h$",
              mu=r"the vector of head means $\mu_h = E \hat{f}_h(x)$", mu_=r"the head means $\mu_h = E \hat{f}_h(x)$",
              Z=r"the centred head estimates $Z_h = \hat{f}_h(x) - \mu_h$", Z_=r"the centred head estimates $Z_h$",
              C=r"the covariance matrix of the head estimates ($C_{hh} = V_h$)",
              C_=r"the head covariances $C_{hh'}$ ($C_{hh} = V_h$), as functions of $x$ in the integrated form",
              b=r"the vector of head biases $b_h = \mu_h - f$", b_=r"the head biases $b_h = \mu_h - f$",
              S_b=r"the sum of the head biases $\sum_h b_h$", S_V=r"the sum of the head variances $\sum_h V_h$",
              S_C=r"the sum of the head covariances $\sum_{h \neq h'} C_{hh'}$",
              bias_bar=r"the mean head bias $\bar{b} = \sum_h b_h/H$",
              var_bar=r"the mean head variance $\bar{V} = \sum_h V_h/H$",
              covar_bar=r"the mean head covariance $\bar{C} = \sum_{h \neq h'} C_{hh'}/(H (H - 1))$",
              x="the input point (integrated over $[0, 1]$)", V_=r"the head variances $V_h(x)$")


def build() -> Derivation:
    dv = Derivation(CLAIM, TITLE, STATED, markup=True)
    dv.assume("moments", r"at a fixed $x$: $F_h = \hat{f}_h(x) = \mu_h + Z_h$ with $E Z_h = 0$ and "
              r"$E Z_h Z_{h'} = C_{hh'}$ ($C$ symmetric, $V_h = C_{hh}$); $f = f(x)$", kind="setting")
    dv.assume("linearity", r"$E$ is linear; $\alpha$, $\mu$, $f$, $C$ are deterministic ($\alpha$ any real vector, "
              "not only the simplex)", kind="setting")
    dv.assume("scalar_1x1", r"a $1 \times 1$ matrix is a scalar: $u u^\top = u^2$ for $u \in \mathbb{R}^{1 \times 1}$",
              kind="setting")
    dv.assume("head_bias", r"$b_h = \mu_h - f$ (head bias)", kind="setting")
    dv.assume("weights_sum_to_one", r"$\sum_h \alpha_h = 1$", kind="model")
    dv.assume("uniform_weights", r"$\alpha_h = 1/H$ for all $h$: the hypothesis of the Ueda-Nakano reduction, part "
              "of that statement (not a restriction of Thm 3.1)", kind="setting")
    dv.assume("H_at_least_2", r"$H \ge 2$, so $\bar{C} = \mathrm{mean}_{h \neq h'} C_{hh'}$ is defined", kind="setting")
    dv.assume("sum_split", r"$S_b = 1^\top b = \sum_h b_h$; $1^\top C 1 = \sum_{h, h'} C_{hh'} = S_V + S_C$ with "
              r"$S_V = \sum_h V_h$ (diagonal) and $S_C = \sum_{h \neq h'} C_{hh'}$ (off-diagonal); "
              r"$\bar{b} = S_b/H$, $\bar{V} = S_V/H$, $\bar{C} = S_C/(H (H - 1))$", kind="setting")
    dv.assume("x_free_weights", r"$\alpha$ does not depend on $x$; the integral over $x$ is linear", kind="setting")
    _define(dv)

    al = sp.MatrixSymbol("alpha", H_sym, 1)
    mu = sp.MatrixSymbol("mu", H_sym, 1)
    Z = sp.MatrixSymbol("Z", H_sym, 1)
    C = sp.MatrixSymbol("C", H_sym, H_sym)
    bvec = sp.MatrixSymbol("b", H_sym, 1)
    fM = sp.MatrixSymbol("f", 1, 1)
    one = sp.OneMatrix(H_sym, 1)
    mu_b = bvec + one * fM

    # (i)-(ii) the theorem, for any weights -------------------------------------------------------
    with dv.group("decomposition", r"$E[(\sum_h \alpha_h \hat{f}_h - f)^2] = (\sum_h \alpha_h \mu_h - f)^2 + "
                                   r"\sum_h \alpha_h^2 V_h + \sum_{h \neq h'} \alpha_h \alpha_{h'} C_{hh'}$ for every "
                                   r"real $\alpha$: general $H$, $H = 1, \ldots, 6$ term by term, pointwise and "
                                   "integrated") as decomposition:
        err = al.T * (mu + Z) - fM
        sq = sp.expand(err * err.T)
        target = (al.T * mu - fM) * (al.T * mu - fM).T + al.T * C * al
        dv.step("matrix_square_expanded", eq(err * err.T, sq), by="matrix_expand",
                why=r"$(\alpha^\top (\mu + Z) - f)(\alpha^\top (\mu + Z) - f)^\top$ expanded (symbolic $H$)",
                uses=["moments"])
        dv.step("matrix_form_general_H", eq(E_(sq), target), by="expectation", variables=Z, covariance=C,
                why=r"$E$ term by term: the four terms linear in $Z$ vanish, $\alpha^\top Z Z^\top \alpha \to "
                    r"\alpha^\top C \alpha$ (symbolic $H$); with $u u^\top = u^2$ this is "
                    r"$\mathrm{MSE} = (\alpha^\top \mu - f)^2 + \alpha^\top C \alpha$",
                uses=["moments", "linearity", "scalar_1x1"])
        for H in range(1, MAX_H + 1):
            sy = head_symbols(H)
            stated_h = _stated_form(sy["alpha"], sy["mu"], sy["C"], H)
            dv.step(f"decomposition_h{H}", eq(E_(_squared_error(sy)), stated_h), by="expectation",
                    variables=sy["Z"], covariance=sy["C"],
                    why=rf"$E[(\sum_h \alpha_h (\mu_h + Z_h) - f)^2]$ expanded term by term, $H = {H}$, any $\alpha$",
                    uses=["moments", "linearity"])
            dv.result(f"mse_h{H}", stated_h, codegen=("numpy",), args=(*sy["alpha"], *sy["mu"], f, *sy["C_args"]),
                      uses=["moments", "linearity"],
                      description=rf"$E[(\sum_h \alpha_h F_h - f)^2]$ for $H = {H}$, any real $\alpha$")

        # integrated: the identity holds at every x, so it integrates term by term (H = 2 shown)
        x = sp.Symbol("x", real=True)
        a1, a2 = sp.symbols("alpha_1 alpha_2", real=True)
        Bx, V1, V2, C12 = (sp.Function(nm, real=True)(x) for nm in ("B", "V_1", "V_2", "C_12"))
        pointwise = Bx**2 + a1**2 * V1 + a2**2 * V2 + 2 * a1 * a2 * C12
        integrated = (sp.Integral(Bx**2, (x, 0, 1)) + a1**2 * sp.Integral(V1, (x, 0, 1))
                      + a2**2 * sp.Integral(V2, (x, 0, 1)) + 2 * a1 * a2 * sp.Integral(C12, (x, 0, 1)))
        dv.step("integrated_h2", eq(sp.Integral(pointwise, (x, 0, 1)), integrated), by="identically_zero",
                why=r"$\int \mathrm{MSE}(x) \, dx = \int B^2 + \alpha_1^2 \int V_1 + \alpha_2^2 \int V_2 + "
                    r"2 \alpha_1 \alpha_2 \int C_{12}$ ($\alpha$ free of $x$)",
                uses=["x_free_weights"])
        dv.result("mse_matrix", target, uses=["moments", "linearity", "scalar_1x1"],
                  description=r"$(\alpha^\top \mu - f)^2 + \alpha^\top C \alpha$, general $H$")
    dv.compare("decomposition_any_weights",
               stated=r"$\mathrm{MSE}_H = (\text{ensemble bias})^2 + \sum_h \alpha_h^2 V_h + "
                      r"\sum_{h \neq h'} \alpha_h \alpha_{h'} C_{hh'}$",
               derived=r"exact for every real $\alpha$ (general $H$ in matrix form, $H = 1, \ldots, 6$ term by term), "
                       r"pointwise and integrated, with the ensemble bias $\sum_h \alpha_h \mu_h - f = E \hat{f} - f$, "
                       r"which is $\sum_h \alpha_h b_h + (\sum_h \alpha_h - 1) f$",
               supported_by=decomposition, uses=["moments", "linearity", "scalar_1x1"])

    # (iii) the ensemble bias in head biases -------------------------------------------------------
    with dv.group("ensemble_bias", r"the ensemble bias is $\sum_h \alpha_h b_h + (\sum_h \alpha_h - 1) f$; it is "
                                   r"$\sum_h \alpha_h b_h$ when $\sum_h \alpha_h = 1$, and an exact case with every "
                                   r"head unbiased has MSE $1$") as bias_group:
        bias_rhs = al.T * bvec + (al.T * one - sp.Identity(1)) * fM
        dv.step("ensemble_bias_general_H", eq(al.T * mu_b - fM, bias_rhs), by="matrix_expand",
                why=r"with $\mu = b + f 1$: $\alpha^\top \mu - f = \alpha^\top b + (\alpha^\top 1 - 1) f$ "
                    r"(symbolic $H$)", uses=["head_bias"])
        for H in range(1, MAX_H + 1):
            sy = head_symbols(H)
            a, m, b = sy["alpha"], sy["mu"], sy["b"]
            bias_h = sum(ai * mi for ai, mi in zip(a, m)) - f
            by_b = sum(ai * bi for ai, bi in zip(a, b)) + (sum(a) - 1) * f
            mu_of_b = {mi: bi + f for mi, bi in zip(m, b)}
            at_b = (tuple(mu_of_b), tuple(mu_of_b.values()))
            dv.step(f"ensemble_bias_h{H}", eq(sp.Subs(bias_h, *at_b), by_b), by="expand",
                    why=r"$\sum_h \alpha_h \mu_h - f = \sum_h \alpha_h b_h + (\sum_h \alpha_h - 1) f$",
                    uses=["head_bias"])
            last = {a[-1]: 1 - sum(a[:-1])}
            dv.step(f"ensemble_bias_simplex_h{H}",
                    eq(sp.Subs(bias_h, (*at_b[0], *last), (*at_b[1], *last.values())),
                       sum(ai * bi for ai, bi in zip(a, b)).subs(last)),
                    by="expand", why=r"with $\sum_h \alpha_h = 1$ the ensemble bias is $\sum_h \alpha_h b_h$",
                    uses=["head_bias", "weights_sum_to_one"])
            dv.result(f"ensemble_bias_h{H}", bias_h, codegen=("numpy",), args=(*a, *m, f), uses=["moments"],
                      description=rf"$\sum_h \alpha_h \mu_h - f$, $H = {H}$")

        # the stated "ensemble bias = Σ α_h b_h" without Σα = 1: an exact case where it fails
        sy2 = head_symbols(2)
        cex = {**{a: v for a, v in zip(sy2["alpha"], BIAS_CASE["alpha"])},
               **{m: v for m, v in zip(sy2["mu"], BIAS_CASE["mu"])}, f: BIAS_CASE["f"],
               **{c: 0 for c in sy2["C_args"]}}
        at_cex = (tuple(cex), tuple(cex.values()))
        head_bias_sum = sum(ai * (mi - f) for ai, mi in zip(sy2["alpha"], sy2["mu"]))
        dv.step("bias_counterexample", eq(sp.Tuple(sp.Subs(E_(_squared_error(sy2)), *at_cex),
                                                   sp.Subs(head_bias_sum, *at_cex)), sp.Tuple(1, 0)),
                by="expectation", variables=sy2["Z"], covariance=sy2["C"],
                why=r"$H = 2$, $\alpha = (1, 1)$, $\mu = (1, 1)$, $f = 1$, $C = 0$: every head is unbiased "
                    r"($\sum_h \alpha_h b_h = 0$) but the ensemble predicts $2$, MSE $1$",
                uses=["moments", "linearity", "head_bias"])
        correction = sp.Subs((sum(sy2["alpha"]) - 1) * f, *at_cex)
        dv.step("bias_correction_nonzero", gt(correction, 0), by="nonneg",
                why=r"the correction $(\sum_h \alpha_h - 1) f$ is $1 > 0$ in that case: the ensemble bias is not "
                    r"$\sum_h \alpha_h b_h$", uses=["head_bias"])
        dv.result("ensemble_bias_matrix", bias_rhs, uses=["head_bias"],
                  description=r"$\alpha^\top b + (\alpha^\top 1 - 1) f$, general $H$")
    dv.compare("ensemble_bias_is_weighted_head_bias",
               stated=r"ensemble bias $= \sum_h \alpha_h b_h$ (the weighted sum of the head biases)",
               derived=r"$\sum_h \alpha_h \mu_h - f = \sum_h \alpha_h b_h + (\sum_h \alpha_h - 1) f$: the two "
                       r"agree only if $\sum_h \alpha_h = 1$ (or $f = 0$). At $H = 2$, $\alpha = (1, 1)$, "
                       r"$\mu = (1, 1)$, $f = 1$, $C = 0$ every head is unbiased ($\sum_h \alpha_h b_h = 0$) and "
                       r"the MSE is $1$",
               refuted_by=bias_group, uses=["head_bias"])

    # (iv) uniform weights: Ueda-Nakano ------------------------------------------------------------
    with dv.group("ueda_nakano", r"for $\alpha_h = 1/H$ the decomposition is "
                                 r"$\bar{b}^2 + \bar{V}/H + (1 - 1/H) \bar{C}$ (Ueda and Nakano, 1996)") as un_group:
        uni = one / H_sym
        dv.step("uniform_bias_general_H", eq(uni.T * mu_b - fM, uni.T * bvec), by="matrix_expand",
                why=r"$\alpha = 1/H$: $\alpha^\top 1 = 1$, the $f$ term drops; the ensemble bias is the mean head bias",
                uses=["head_bias", "uniform_weights"])
        dv.step("uniform_quadratic_general_H", eq(sp.MatMul(sp.Transpose(uni), C, uni), one.T * C * one / H_sym**2),
                by="matrix_expand",
                why=r"$\alpha = 1/H$: $\alpha^\top C \alpha = 1^\top C 1/H^2$ (symbolic $H$)",
                uses=["moments", "uniform_weights"])
        # Ueda-Nakano, general H: 1ᵀb = S_b, 1ᵀC1 = S_V + S_C (diagonal + off-diagonal sums)
        S_b, S_V, S_C = sp.symbols("S_b S_V S_C", real=True)
        mse_uniform = (S_b / H_sym) ** 2 + (S_V + S_C) / H_sym**2
        bias_bar, var_bar, covar_bar = sp.symbols("bias_bar var_bar covar_bar", real=True)
        un_form = bias_bar**2 + var_bar / H_sym + (1 - 1 / H_sym) * covar_bar
        un_sub = sp.Subs(un_form, (bias_bar, var_bar, covar_bar),
                         (S_b / H_sym, S_V / H_sym, S_C / (H_sym * (H_sym - 1))))
        dv.step("ueda_nakano_general_H", eq(mse_uniform, un_sub), by="simplify",
                why=r"$(1^\top b/H)^2 + 1^\top C 1/H^2$ (steps `uniform_bias_general_H`, "
                    r"`uniform_quadratic_general_H`) with $1^\top b = S_b$, $1^\top C 1 = S_V + S_C$ equals "
                    r"$\bar{b}^2 + \bar{V}/H + (1 - 1/H) \bar{C}$",
                uses=["moments", "uniform_weights", "H_at_least_2", "head_bias", "sum_split"])
        for H in range(1, MAX_H + 1):
            sy = head_symbols(H)
            a, m, b, Cm = sy["alpha"], sy["mu"], sy["b"], sy["C"]
            stated_h = _stated_form(a, m, Cm, H)
            mu_of_b = {mi: bi + f for mi, bi in zip(m, b)}
            uniform = {ai: sp.Rational(1, H) for ai in a}
            bb = sum(b) / H
            vb = sum(Cm[h, h] for h in range(H)) / H
            cb = (sum(Cm[h, k] for h in range(H) for k in range(H) if h != k) / (H * (H - 1))) if H > 1 else 0
            un_h = bb**2 + vb / H + (1 - sp.Rational(1, H)) * cb
            mse_u_premise = sp.Subs(stated_h, (*uniform, *mu_of_b), (*uniform.values(), *mu_of_b.values()))
            dv.step(f"ueda_nakano_h{H}", eq(mse_u_premise, un_h), by="expand",
                    why=rf"$\alpha_h = 1/{H}$: $\mathrm{{MSE}} = \bar{{b}}^2 + \bar{{V}}/H + (1 - 1/H) \bar{{C}}$"
                        + (r" ($H = 1$: no covariance term)" if H == 1 else ""),
                    uses=["moments", "head_bias", "uniform_weights"] + (["H_at_least_2"] if H > 1 else []))
        dv.result("ueda_nakano", un_form, args=(bias_bar, var_bar, covar_bar, H_sym),
                  domain={H_sym: (2, 64)},
                  uses=["moments", "uniform_weights", "H_at_least_2"],
                  description=r"$\bar{b}^2 + \bar{V}/H + (1 - 1/H) \bar{C}$ (uniform $\alpha_h = 1/H$)", codegen=("numpy",))
    dv.compare("reduces_to_ueda_nakano",
               stated=r"uniform weights give Ueda and Nakano's (1996) $\bar{b}^2 + \bar{V}/H + (1 - 1/H) \bar{C}$",
               derived=r"exact for $\alpha_h = 1/H$ (general $H$ and $H = 1, \ldots, 6$)",
               supported_by=un_group, uses=["uniform_weights", "H_at_least_2"])
    return dv
