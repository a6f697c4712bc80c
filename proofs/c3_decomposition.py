"""C3 (Thm 3.1): bias-variance-covariance decomposition of the ensemble MSE, for any weights.

At a point x the head estimates are random: ``F = μ + Z`` with ``E Z = 0`` and ``E Z Zᵀ = C``
(``μ_h = E f̂_h``, ``V_h = C_hh``, ``C_hh' = Cov(f̂_h, f̂_h')``). For every real weight vector α

    E[(αᵀF - f)²] = (αᵀμ - f)² + αᵀCα
                  = (Σ α_h μ_h - f)² + Σ α_h² V_h + Σ_{h≠h'} α_h α_h' C_hh'.

Checked (i) for general H with MatrixSymbols of symbolic size H and an explicit expectation
operator (linearity; terms linear in Z vanish; Z Zᵀ -> C); (ii) term by term for H = 1..6 on
polynomials in Z_1..Z_H. (iii) The ensemble bias in head biases ``b_h = μ_h - f`` is
``Σ α_h b_h + (Σ α_h - 1) f``: "ensemble bias = Σ α_h b_h" needs Σ α = 1. (iv) For α_h = 1/H it
reduces to Ueda-Nakano (1996): ``bias̄² + var̄/H + (1 - 1/H) covar̄``. The identity holds at
every x, so it integrates term by term (x-independent α).
"""

from __future__ import annotations

import sympy as sp

from .core import Derivation, expect_matexpr, expect_poly
from .notation import H as H_sym

__all__ = ["build", "STATED", "MAX_H", "head_symbols", "expect_poly", "expect_matexpr"]

STATED = "Thm 3.1: MSE_H = (ensemble bias)² + Σ α_h² V_h + Σ_{h≠h'} α_h α_h' C_hh'."

#: The explicit, term-by-term check runs for H = 1..MAX_H.
MAX_H = 6

f = sp.Symbol("f", real=True)


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


E_ = sp.Function("E")


def build() -> Derivation:
    dv = Derivation("C3", "Ensemble bias-variance-covariance decomposition (Thm 3.1)", STATED)
    dv.assume("moments", "at a fixed x: F_h = f̂_h(x) = μ_h + Z_h with E Z_h = 0 and E Z_h Z_h' = C_hh' "
              "(C symmetric, V_h = C_hh); f = f(x)", kind="setting")
    dv.assume("linearity", "E is linear; α, μ, f, C are deterministic (α any real vector, not only the simplex)",
              kind="setting")
    dv.assume("scalar_1x1", "a 1x1 matrix is a scalar: u uᵀ = u² for u ∈ R^{1x1}", kind="setting")
    dv.assume("head_bias", "b_h = μ_h - f (head bias)", kind="setting")
    dv.assume("weights_sum_to_one", "Σ_h α_h = 1", kind="model")
    dv.assume("uniform_weights", "α_h = 1/H for all h", kind="model")
    dv.assume("H_at_least_2", "H >= 2, so covar̄ = mean_{h≠h'} C_hh' is defined", kind="setting")
    dv.assume("sum_split", "S_b = 1ᵀb = Σ_h b_h; 1ᵀC1 = Σ_{h,h'} C_hh' = S_V + S_C with "
              "S_V = Σ_h V_h (diagonal) "
              "and S_C = Σ_{h≠h'} C_hh' (off-diagonal); bias̄ = S_b/H, var̄ = S_V/H, covar̄ = S_C/(H(H-1))",
              kind="setting")
    dv.assume("x_free_weights", "α does not depend on x; the integral over x is linear", kind="setting")

    # (i) general H, matrix form
    al = sp.MatrixSymbol("alpha", H_sym, 1)
    mu = sp.MatrixSymbol("mu", H_sym, 1)
    Z = sp.MatrixSymbol("Z", H_sym, 1)
    C = sp.MatrixSymbol("C", H_sym, H_sym)
    bvec = sp.MatrixSymbol("b", H_sym, 1)
    fM = sp.MatrixSymbol("f", 1, 1)
    err = al.T * (mu + Z) - fM
    sq = sp.expand(err * err.T)
    target = (al.T * mu - fM) * (al.T * mu - fM).T + al.T * C * al
    dv.step("matrix_square_expanded", sp.Eq(err * err.T, sq, evaluate=False), by="matrix_expand",
            why="(αᵀ(μ+Z) - f)(αᵀ(μ+Z) - f)ᵀ expanded (symbolic H)", uses=["moments"])
    dv.step("matrix_form_general_H", sp.Eq(E_(sq), target, evaluate=False), by="expectation",
            variables=Z, covariance=C,
            why="E term by term: the four terms linear in Z vanish, αᵀZZᵀα -> αᵀCα (symbolic H); with "
                "u uᵀ = u² this is MSE = (αᵀμ - f)² + αᵀCα",
            uses=["moments", "linearity", "scalar_1x1"])
    mu_b = bvec + sp.OneMatrix(H_sym, 1) * fM
    bias_rhs = al.T * bvec + (al.T * sp.OneMatrix(H_sym, 1) - sp.Identity(1)) * fM
    dv.step("ensemble_bias_general_H", sp.Eq(al.T * mu_b - fM, bias_rhs, evaluate=False), by="matrix_expand",
            why="with μ = b + f·1: αᵀμ - f = αᵀb + (αᵀ1 - 1) f (symbolic H)", uses=["head_bias"])
    uni = sp.OneMatrix(H_sym, 1) / H_sym
    dv.step("uniform_bias_general_H", sp.Eq(uni.T * mu_b - fM, uni.T * bvec, evaluate=False), by="matrix_expand",
            why="α = 1/H: αᵀ1 = 1, the f term drops; the ensemble bias is the mean head bias",
            uses=["head_bias", "uniform_weights"])
    one = sp.OneMatrix(H_sym, 1)
    dv.step("uniform_quadratic_general_H",
            sp.Eq(sp.MatMul(sp.Transpose(uni), C, uni), one.T * C * one / H_sym**2, evaluate=False),
            by="matrix_expand",
            why="α = 1/H: αᵀCα = 1ᵀC1/H² (symbolic H)", uses=["moments", "uniform_weights"])
    # Ueda-Nakano, general H: 1ᵀb = S_b, 1ᵀC1 = S_V + S_C (diagonal + off-diagonal sums)
    S_b, S_V, S_C = sp.symbols("S_b S_V S_C", real=True)
    mse_uniform = (S_b / H_sym) ** 2 + (S_V + S_C) / H_sym**2
    bias_bar, var_bar, covar_bar = sp.symbols("bias_bar var_bar covar_bar", real=True)
    un_form = bias_bar**2 + var_bar / H_sym + (1 - 1 / H_sym) * covar_bar
    un_sub = sp.Subs(un_form, (bias_bar, var_bar, covar_bar), (S_b / H_sym, S_V / H_sym, S_C / (H_sym * (H_sym - 1))))
    dv.step("ueda_nakano_general_H", sp.Eq(mse_uniform, un_sub, evaluate=False), by="simplify",
            why="(1ᵀb/H)² + 1ᵀC1/H² (steps uniform_bias_general_H, uniform_quadratic_general_H) with "
                "1ᵀb = S_b, 1ᵀC1 = S_V + S_C equals bias̄² + var̄/H + (1-1/H) covar̄",
            uses=["moments", "uniform_weights", "H_at_least_2", "head_bias", "sum_split"])

    # (ii)-(iv) explicit H = 1..MAX_H
    for H in range(1, MAX_H + 1):
        sy = head_symbols(H)
        a, m, b, Zs, Cm = sy["alpha"], sy["mu"], sy["b"], sy["Z"], sy["C"]
        sq_h = (sum(ai * (mi + zi) for ai, mi, zi in zip(a, m, Zs)) - f) ** 2
        stated_h = _stated_form(a, m, Cm, H)
        dv.step(f"decomposition_h{H}", sp.Eq(E_(sq_h), stated_h, evaluate=False), by="expectation",
                variables=Zs, covariance=Cm,
                why=f"E[(Σ α_h(μ_h + Z_h) - f)²] expanded term by term, H = {H}, any α",
                uses=["moments", "linearity"])
        bias_h = sum(ai * mi for ai, mi in zip(a, m)) - f
        by_b = sum(ai * bi for ai, bi in zip(a, b)) + (sum(a) - 1) * f
        mu_of_b = {mi: bi + f for mi, bi in zip(m, b)}
        at_b = (tuple(mu_of_b), tuple(mu_of_b.values()))
        dv.step(f"ensemble_bias_h{H}", sp.Eq(sp.Subs(bias_h, *at_b), by_b, evaluate=False), by="expand",
                why="Σ α_h μ_h - f = Σ α_h b_h + (Σ α_h - 1) f", uses=["head_bias"])
        last = {a[-1]: 1 - sum(a[:-1])}
        dv.step(f"ensemble_bias_simplex_h{H}",
                sp.Eq(sp.Subs(bias_h, (*at_b[0], *last), (*at_b[1], *last.values())),
                      sum(ai * bi for ai, bi in zip(a, b)).subs(last), evaluate=False),
                by="expand", why="with Σ α_h = 1 the ensemble bias is Σ α_h b_h",
                uses=["head_bias", "weights_sum_to_one"])
        uniform = {ai: sp.Rational(1, H) for ai in a}
        bb = sum(b) / H
        vb = sum(Cm[h, h] for h in range(H)) / H
        cb = (sum(Cm[h, k] for h in range(H) for k in range(H) if h != k) / (H * (H - 1))) if H > 1 else 0
        un_h = bb**2 + vb / H + (1 - sp.Rational(1, H)) * cb
        mse_u_premise = sp.Subs(stated_h, (*uniform, *at_b[0]), (*uniform.values(), *at_b[1]))
        dv.step(f"ueda_nakano_h{H}", sp.Eq(mse_u_premise, un_h, evaluate=False), by="expand",
                why=f"α_h = 1/{H}: MSE = bias̄² + var̄/H + (1 - 1/H) covar̄"
                    + (" (H = 1: no covariance term)" if H == 1 else ""),
                uses=["moments", "head_bias", "uniform_weights"] + (["H_at_least_2"] if H > 1 else []))
        dv.result(f"mse_h{H}", stated_h, args=(*a, *m, f, *sy["C_args"]), uses=["moments", "linearity"],
                  description=f"E[(Σ α_h F_h - f)²] for H = {H}, any real α")
        dv.result(f"ensemble_bias_h{H}", bias_h, args=(*a, *m, f), uses=["moments"],
                  description=f"Σ α_h μ_h - f, H = {H}")

    # integrated: the identity holds at every x, so it integrates term by term (H = 2 shown)
    x = sp.Symbol("x", real=True)
    a1, a2 = sp.symbols("alpha_1 alpha_2", real=True)
    Bx, V1, V2, C12 = (sp.Function(nm, real=True)(x) for nm in ("B", "V_1", "V_2", "C_12"))
    pointwise = Bx**2 + a1**2 * V1 + a2**2 * V2 + 2 * a1 * a2 * C12
    integrated = (sp.Integral(Bx**2, (x, 0, 1)) + a1**2 * sp.Integral(V1, (x, 0, 1))
                  + a2**2 * sp.Integral(V2, (x, 0, 1)) + 2 * a1 * a2 * sp.Integral(C12, (x, 0, 1)))

    dv.step("integrated_h2", sp.Eq(sp.Integral(pointwise, (x, 0, 1)), integrated, evaluate=False),
            by="identically_zero",
            why="∫ MSE(x) dx = ∫ B² + α_1²∫V_1 + α_2²∫V_2 + 2α_1α_2∫C_12 (x-free α)",
            uses=["x_free_weights"])

    # the stated "ensemble bias = Σ α_h b_h" without Σα = 1: exact counterexample
    sy2 = head_symbols(2)
    cex = {sy2["alpha"][0]: 1, sy2["alpha"][1]: 1, sy2["mu"][0]: 1, sy2["mu"][1]: 1, f: 1,
           **{c: 0 for c in sy2["C_args"]}}
    sq2 = (sum(ai * (mi + zi) for ai, mi, zi in zip(sy2["alpha"], sy2["mu"], sy2["Z"])) - f) ** 2
    at_cex = (tuple(cex), tuple(cex.values()))
    head_bias_sum = sum(ai * (mi - f) for ai, mi in zip(sy2["alpha"], sy2["mu"]))
    dv.step("bias_counterexample", sp.Eq(sp.Tuple(sp.Subs(E_(sq2), *at_cex), sp.Subs(head_bias_sum, *at_cex)),
                                         sp.Tuple(1, 0), evaluate=False),
            by="expectation", variables=sy2["Z"], covariance=sy2["C"],
            why="H = 2, α = (1, 1), μ = (1, 1), f = 1, C = 0: every head is unbiased (Σ α_h b_h = 0) but "
                "the ensemble 2 has MSE 1", uses=["moments", "linearity", "head_bias"])

    dv.result("ueda_nakano", un_form, args=(bias_bar, var_bar, covar_bar, H_sym),
              domain={H_sym: (2, 64)},
              uses=["moments", "uniform_weights", "H_at_least_2"],
              description="bias̄² + var̄/H + (1 - 1/H) covar̄ (uniform α_h = 1/H)")
    dv.result("mse_matrix", (al.T * mu - fM) * (al.T * mu - fM).T + al.T * C * al, codegen=False,
              uses=["moments", "linearity", "scalar_1x1"], description="(αᵀμ - f)² + αᵀCα, general H")
    dv.result("ensemble_bias_matrix", bias_rhs, codegen=False, uses=["head_bias"],
              description="αᵀb + (αᵀ1 - 1) f, general H")

    dv.compare("decomposition_any_weights",
               stated="MSE_H = (ensemble bias)² + Σ α_h² V_h + Σ_{h≠h'} α_h α_h' C_hh'",
               derived="exact for every real α (general H in matrix form, H = 1..6 term by term) with "
                       "ensemble bias = Σ α_h μ_h - f = E f̂ - f; pointwise and integrated",
               holds=True, method="steps matrix_form_general_H, decomposition_h1..h6, integrated_h2",
               uses=["moments", "linearity", "scalar_1x1"])
    dv.compare("ensemble_bias_is_weighted_head_bias",
               stated="ensemble bias = Σ α_h b_h (weighted sum of the head biases)",
               derived="Σ α_h μ_h - f = Σ α_h b_h + (Σ α_h - 1) f: equal only if Σ α_h = 1 (or f = 0). "
                       "Counterexample H = 2, α = (1, 1), μ = (1, 1), f = 1, C = 0: Σ α_h b_h = 0, MSE = 1",
               holds=False, method="steps ensemble_bias_h*, ensemble_bias_simplex_h*, bias_counterexample",
               uses=["head_bias"])
    dv.compare("reduces_to_ueda_nakano",
               stated="uniform weights give Ueda-Nakano (1996): bias̄² + var̄/H + (1 - 1/H) covar̄",
               derived="exact for α_h = 1/H (general H and H = 1..6)",
               holds=True, method="steps ueda_nakano_general_H, ueda_nakano_h*",
               uses=["uniform_weights", "H_at_least_2"])
    return dv
