"""C5 (Thm 4.2): the MSE as a function of the head diversity index.

Under an explicit covariance model (head correlation = subspace overlap, equal head variances,
uniform weights, a bias free of the subspaces) the C3 decomposition is the exact line ``MSE = B² +
V − V (H−1)/H · HDI``. For any weights the MSE is affine in a weighted index ``WDI`` with slope
``−S``, non-increasing only while ``S ≥ 0``; equal scaled weights ``α_h sqrt(V_h) = β`` restore a
line in HDI for any variances. Outside the model HDI does not govern the MSE (two exact
counterexamples, replayable from :func:`counterexamples`), and the model's premise fails for NW
heads that share the noise.
"""

from __future__ import annotations

from itertools import combinations
from typing import Any

import sympy as sp

from .core import Derivation, eq, ge, gt, le
from .notation import HDI, B, H, V, sigma, spell, sympy_math

__all__ = ["build", "counterexamples", "CLAIM", "TITLE", "STATED", "EXPLICIT_H", "WEIGHTED_H", "SHARED_NOISE_N"]

CLAIM = "C5"
TITLE = "HDI governs the MSE (Thm 4.2)"
STATED = r"Thm 4.2: the integrated MSE is monotone non-increasing in $\mathrm{HDI}$ (a straight line)."

EXPLICIT_H = (2, 3, 4, 5)   # head counts expanded with one explicit rho symbol per pair
WEIGHTED_H = (2, 3, 4)      # head counts for the general weighted form
SHARED_NOISE_N = 3          # training points of the symbolic shared-noise covariance

_h, _hp = sp.symbols("h h'", integer=True, positive=True)
_rho = sp.IndexedBase("rho", real=True)
R = sp.Symbol("R", nonnegative=True)        # pair sum Σ_{h≠h'} ρ_hh'
Q = sp.Symbol("Q", nonnegative=True)        # Σ_h α_h² V_h
S = sp.Symbol("S", real=True)               # Σ_{h≠h'} α_h α_h' sqrt(V_h V_h')
W = sp.Symbol("W", real=True)               # Σ_{h≠h'} α_h α_h' sqrt(V_h V_h') ρ_hh'
WDI = sp.Symbol("WDI", real=True)           # weighted diversity index
beta = sp.Symbol("beta", positive=True)     # common scaled weight α_h sqrt(V_h)

# how the multi-letter symbols print (the NW weights w_i^h print as w^{h}_{i} by themselves)
spell(WDI=r"\mathrm{WDI}", x_lo=r"x_{\mathrm{lo}}", x_hi=r"x_{\mathrm{hi}}")

# Counterexamples outside the model: H = 3 heads, d = 3, d_k = 1; each head's W_K is one
# integer column (rho only depends on its span). The stated numbers are checked in build().
_CX_SPECS: dict[str, dict[str, Any]] = {
    "unequal_variance": {
        "statement": r"uniform weights, $V = (1, 1, 100)$: configuration B has the higher $\mathrm{HDI}$ and the "
                     "higher MSE",
        "V": ("1", "1", "100"), "alpha": ("1/3", "1/3", "1/3"),
        "W_K": {"A": ((1, 0, 0), (1, 0, 0), (0, 0, 1)), "B": ((1, 0, 0), (0, 1, 0), (3, 0, 1))},
        "stated": {"A": {"rho": ("1", "0", "0"), "HDI": "2/3", "mse_minus_bias_sq": "104/9"},
                   "B": {"rho": ("0", "9/10", "0"), "HDI": "7/10", "mse_minus_bias_sq": "40/3"}},
    },
    "nonuniform_weights": {
        "statement": r"equal variances $V = 1$, weights $(1/2, 1/4, 1/4)$: configuration B has the higher "
                     r"$\mathrm{HDI}$ and the higher MSE",
        "V": ("1", "1", "1"), "alpha": ("1/2", "1/4", "1/4"),
        "W_K": {"A": ((1, 0, 0), (0, 1, 0), (0, 1, 0)), "B": ((1, 0, 0), (3, 1, 0), (0, 0, 1))},
        "stated": {"A": {"rho": ("0", "0", "1"), "HDI": "2/3", "mse_minus_bias_sq": "1/2"},
                   "B": {"rho": ("9/10", "0", "0"), "HDI": "7/10", "mse_minus_bias_sq": "3/5"}},
    },
}
_PAIR_KEYS = ("12", "13", "23")


# -- explicit-H building blocks ---------------------------------------------------------------
def _pairs(n: int) -> list[tuple[int, int]]:
    return list(combinations(range(n), 2))


def _rho_symbols(n: int) -> dict[tuple[int, int], sp.Symbol]:
    return {p: sp.Symbol(f"rho_{p[0] + 1}{p[1] + 1}", nonnegative=True) for p in _pairs(n)}


def _cov_model(variances: list, rho: dict) -> sp.Matrix:
    """C_hh = V_h, C_hh' = ρ_hh' sqrt(V_h V_h') (the covariance model)."""
    C = sp.diag(*variances)
    for (i, j), r in rho.items():
        C[i, j] = C[j, i] = r * sp.sqrt(variances[i] * variances[j])
    return C


def _quad(alpha: list, C: sp.Matrix) -> sp.Expr:
    """αᵀ C α: the variance part of the C3 decomposition."""
    a = sp.Matrix(alpha)
    return (a.T * C * a)[0, 0]


def _hdi(rho: dict, n: int) -> sp.Expr:
    """HDI = 1 − mean_{h<h'} ρ_hh'."""
    return 1 - sp.Add(*rho.values()) / sp.Rational(n * (n - 1), 2)


def _subspace_rho(wa: sp.Matrix, wb: sp.Matrix) -> sp.Expr:
    """ρ = tr(P_a P_b)/d_k with P = W (WᵀW)⁻¹ Wᵀ the projector onto Range(W) (exact)."""
    pa = wa * (wa.T * wa).inv() * wa.T
    pb = wb * (wb.T * wb).inv() * wb.T
    return sp.nsimplify((pa * pb).trace() / wa.shape[1])


def _rho_lines(dim: int) -> tuple[list, list, sp.Expr]:
    """ρ = tr(P_u P_v) for the lines spanned by u, v ∈ R^dim (d_k = 1, P = u uᵀ/(uᵀu)), as a
    formula in symbolic coordinates (SymPy's factored trace)."""
    u = sp.Matrix(sp.symbols(f"u_1:{dim + 1}", real=True))
    v = sp.Matrix(sp.symbols(f"v_1:{dim + 1}", real=True))
    pu, pv = u * u.T / u.dot(u), v * v.T / v.dot(v)
    return list(u), list(v), sp.factor((pu * pv).trace())


def _pair_sum(weight: sp.Expr) -> sp.Sum:
    """Σ_{h≠h'} weight · ρ_hh' over general H."""
    return sp.Sum(sp.Sum(weight * _rho[_h, _hp] * (1 - sp.KroneckerDelta(_h, _hp)), (_hp, 1, H)), (_h, 1, H))


def _at(expr: sp.Expr, values: dict) -> sp.Subs:
    """``expr`` at ``values``, unevaluated (the step's premise)."""
    return sp.Subs(expr, tuple(values), tuple(values.values()))


def _cx_exact(spec: dict) -> dict[str, dict[str, sp.Expr]]:
    """Recompute ρ, HDI and MSE − B² of both configurations of a counterexample, exactly."""
    vs = [sp.Rational(v) for v in spec["V"]]
    alpha = [sp.Rational(a) for a in spec["alpha"]]
    out = {}
    for cfg, cols in spec["W_K"].items():
        ws = [sp.Matrix(c) for c in cols]
        rho = {p: _subspace_rho(ws[p[0]], ws[p[1]]) for p in _pairs(len(ws))}
        out[cfg] = {"rho": rho, "HDI": _hdi(rho, len(ws)),
                    "mse_minus_bias_sq": _quad(alpha, _cov_model(vs, rho))}
    return out


def counterexamples() -> dict[str, dict[str, Any]]:
    """The exact counterexamples outside the model, as plain JSON-able data (rationals as
    strings, W_K as integer d×d_k matrices) that a numeric check can save and replay. Whether
    each violates the claim is decided by the derivation's steps (group ``outside_model``) and
    by the replay, not here."""
    out = {}
    for name, spec in _CX_SPECS.items():
        exact = _cx_exact(spec)
        configs = {}
        for cfg, cols in spec["W_K"].items():
            e = exact[cfg]
            configs[cfg] = {
                "W_K": [[[x] for x in col] for col in cols],
                "rho": {k: str(e["rho"][p]) for k, p in zip(_PAIR_KEYS, _pairs(3))},
                "HDI": str(e["HDI"]),
                "mse_minus_bias_sq": str(e["mse_minus_bias_sq"]),
            }
        out[name] = {
            "claim": "C5", "statement": spec["statement"], "H": 3, "d": 3, "d_k": 1,
            "V": list(spec["V"]), "alpha": list(spec["alpha"]), "configs": configs,
            "violates": bool(exact["B"]["HDI"] > exact["A"]["HDI"]
                             and exact["B"]["mse_minus_bias_sq"] > exact["A"]["mse_minus_bias_sq"]),
        }
    return out


# -- the derivation ---------------------------------------------------------------------------
MODEL = ("covariance_model", "equal_variance", "uniform_weights")


def build() -> Derivation:
    der = Derivation(CLAIM, TITLE, STATED, markup=True)
    _assumptions(der)
    _glossary(der)
    _in_model_line(der)
    _weighted_form(der)
    _restoring_assumption(der)
    _outside_model(der)
    _shared_noise(der)
    return der


def _assumptions(der: Derivation) -> None:
    der.assume("c3_decomposition",
               r"$\mathrm{MSE} = B^2 + \sum_h \alpha_h^2 V_h + \sum_{h \ne h'} \alpha_h \alpha_{h'} C_{hh'} = B^2 + "
               r"\alpha^\top C \alpha$ with the ensemble bias $B = \sum_h \alpha_h b_h + (\sum_h \alpha_h - 1) f$ "
               r"(Thm 3.1 as C3 derives it, an exact identity for any $\alpha$; proved in `proofs.c3_decomposition`). "
               r"$B = \sum_h \alpha_h b_h$ only when $\sum_h \alpha_h = 1$, which the uniform $\alpha_h = 1/H$ of "
               "this model satisfy", kind="setting")
    der.assume("hdi_definition",
               r"$\mathrm{HDI} = 1 - \mathrm{mean}_{h < h'} \rho_{hh'} = 1 - \sum_{h \ne h'} \rho_{hh'} / (H (H - 1))$, "
               r"$\rho$ symmetric in $[0, 1]$, $H \ge 2$ (C4, subspace form)",
               kind="setting", expr=eq(HDI, 1 - R / (H * (H - 1))))
    der.assume("pointwise_integration",
               r"every statement holds at each query $x$; $\mathrm{HDI}$ does not depend on $x$, so integrating "
               r"over the query density keeps the line, with $B^2 \to \int B^2$, $V \to \int V$", kind="setting")
    der.assume("covariance_model", r"$C_{hh'} = \rho_{hh'} \sqrt{V_h V_{h'}}$: head-output correlation equals "
               r"the subspace overlap $\rho_{hh'}$")
    der.assume("equal_variance", r"$V_h = V$ for every head")
    der.assume("uniform_weights", r"$\alpha_h = 1/H$")
    der.assume("bias_subspace_free", r"the ensemble bias $B$ does not depend on the heads' subspaces "
               "(on real NW heads it does: each head's bias depends on its projection)")
    der.assume("regression_noise",
               r"$y_i = f(x_i) + \varepsilon_i$, $\varepsilon_i$ uncorrelated, mean 0, variance $\sigma^2$, "
               r"independent of the design $X$; given $X$ the NW weights $w_i^h(x)$ are fixed numbers",
               kind="setting")
    der.assume("softmax_heads", r"$w_i^h(x) = \exp(s_i^h) / \sum_j \exp(s_j^h)$ with real scores "
               r"$s_i^h = \langle (W_Q^h)^\top x, (W_K^h)^\top x_i \rangle / \sqrt{d_k}$", kind="setting")


def _glossary(der: Derivation) -> None:
    der.define(
        h="a head index", **{"h'": "a second head index"},
        rho=r"the subspace overlaps $\rho_{hh'} = \lVert U_h^\top U_{h'} \rVert_F^2 / d_k$ (C4)",
        rho_=r"the overlap $\rho_{hh'}$ of one pair of heads",
        R=r"the pair sum $R = \sum_{h \ne h'} \rho_{hh'}$",
        Q=r"the diagonal variance part $Q = \sum_h \alpha_h^2 V_h$",
        S=r"the cross weight $S = \sum_{h \ne h'} \alpha_h \alpha_{h'} \sqrt{V_h V_{h'}}$",
        W=r"the weighted cross term $W = \sum_{h \ne h'} \alpha_h \alpha_{h'} \sqrt{V_h V_{h'}} \rho_{hh'}$",
        WDI=r"the weighted diversity index $\mathrm{WDI} = 1 - W/S$; it equals $\mathrm{HDI}$ for uniform "
            r"$\alpha$ and equal $V_h$, and for $H = 2$ whatever $\alpha$ and $V_h$",
        beta=r"the common scaled weight $\beta = \alpha_h \sqrt{V_h}$",
        beta_=r"the scaled weight $\beta_h = \alpha_h \sqrt{V_h}$ of head $h$",
        alpha_=r"the ensemble weight $\alpha_h$ of head $h$",
        C_=r"the head covariance $C_{hh'} = \mathrm{Cov}(\hat{f}_h, \hat{f}_{h'})$",
        V_=r"the variance $V_h$ of head $h$",
        u_=r"the coordinates of a vector $u$ spanning a line (a head with $d_k = 1$)",
        v_=r"the coordinates of a vector $v$ spanning a second line",
        w_=r"the NW weights $w_i^h$ of head $h$ at the query",
        f_=r"the target values $f(x_i)$ at the training points",
        epsilon_=r"the noise $\varepsilon_i$ of the training responses",
        s_=r"the scores $s_i$ of one softmax head",
        t_=r"the second coordinates $t_i$ of the keys $x_i = (0, t_i)$",
        x="a query point",
        x_lo="the lower end of the query range", x_hi="the upper end of the query range",
        E=r"the expectation over the noise $\varepsilon$ given the design",
    )


def _in_model_line(der: Derivation) -> None:
    model = list(MODEL)
    full = ["c3_decomposition", "hdi_definition", *model, "bias_subspace_free"]
    with der.group("line", r"under the covariance model, equal $V_h$, uniform $\alpha$ and a subspace-free bias "
                           r"the MSE is the non-increasing line $B^2 + V - V (H - 1)/H \cdot \mathrm{HDI}$, "
                           "for general and explicit $H$, pointwise and integrated") as line:
        for n in EXPLICIT_H:
            a = sp.symbols(f"alpha_1:{n + 1}", real=True)
            c = sp.Matrix(n, n, lambda i, j: sp.Symbol(f"C_{min(i, j) + 1}{max(i, j) + 1}", real=True))
            split = (sum(a[i] ** 2 * c[i, i] for i in range(n))
                     + sum(a[i] * a[j] * c[i, j] for i in range(n) for j in range(n) if i != j))
            der.step(f"c3_split_H{n}", eq(_quad(list(a), c), split), by="expand",
                     why=rf"$\alpha^\top C \alpha$ splits into the diagonal and the cross terms ($H = {n}$)",
                     uses=["c3_decomposition"])

        diag = sp.Sum((1 / H) ** 2 * V, (_h, 1, H))
        der.step("diagonal_term", eq(diag, V / H), by="simplify",
                 why=r"$\sum_h (1/H)^2 V = V/H$", uses=["c3_decomposition", "uniform_weights", "equal_variance"])
        der.step("cross_term", eq(_pair_sum((1 / H) * (1 / H) * sp.sqrt(V * V)), V / H ** 2 * _pair_sum(1)),
                 by="identically_zero",
                 why=r"$\sum_{h \ne h'} \alpha_h \alpha_{h'} \rho_{hh'} \sqrt{V_h V_{h'}} = (V/H^2) "
                     r"\sum_{h \ne h'} \rho_{hh'}$", uses=["c3_decomposition", *model])
        der.step("pair_sum_from_hdi", eq(R, H * (H - 1) * (1 - HDI)), by="solve",
                 equation=eq(HDI, 1 - R / (H * (H - 1))),
                 why=r"solve the $\mathrm{HDI}$ definition for the pair sum $R = \sum_{h \ne h'} \rho_{hh'}$",
                 uses=["hdi_definition"])
        der.step("mse_in_pair_sum", eq(B ** 2 + diag + V / H ** 2 * R, B ** 2 + V / H + V * R / H ** 2),
                 by="simplify",
                 why=r"$\mathrm{MSE} = B^2 +$ (diagonal) $+$ (cross) with the two terms above, "
                     r"$R = \sum_{h \ne h'} \rho_{hh'}$",
                 uses=["c3_decomposition", *model, "bias_subspace_free"])
        mid = sp.Subs(B ** 2 + V / H + V * R / H ** 2, R, H * (H - 1) * (1 - HDI))
        der.step("mse_in_hdi", eq(mid, B ** 2 + V / H + V * (H - 1) / H * (1 - HDI)), by="simplify",
                 why=r"the pair sum $R = H (H - 1)(1 - \mathrm{HDI})$ substituted", uses=full)
        mse_line = B ** 2 + V - V * (H - 1) / H * HDI
        slope = -V * (H - 1) / H
        with der.group("straight_line", r"the MSE is affine in $\mathrm{HDI}$ with the constant slope "
                                        r"$-V (H - 1)/H$ (under the model)") as straight:
            der.step("mse_line", eq(mid, mse_line), by="expand",
                     why=r"$\mathrm{MSE} = B^2 + V - V (H - 1)/H \cdot \mathrm{HDI}$", uses=full)
            der.step("slope", eq(sp.Derivative(mse_line, HDI), slope),
                     why=r"the derivative in $\mathrm{HDI}$ is $-V (H - 1)/H$, free of $\mathrm{HDI}$", uses=model)
            der.step("straight_line", eq(sp.Derivative(mse_line, (HDI, 2)), 0),
                     why=r"the second derivative vanishes: affine in $\mathrm{HDI}$", uses=model)
            der.result("slope", slope, args=(V, H),
                       description=r"$\partial \mathrm{MSE} / \partial \mathrm{HDI} = -V (H - 1)/H \le 0$", uses=model, codegen=("numpy",))
        der.step("non_increasing", le(slope, 0), by="certificate", certificate=V * (H - 1) / H,
                 why=r"$0 - \mathrm{slope} = V (H - 1)/H \ge 0$ as $V > 0$, $H \ge 1$", uses=model)
        der.step("identical_heads_end", eq(sp.Subs(mse_line, HDI, 0), B ** 2 + V),
                 why=r"$\mathrm{HDI} = 0$ (identical heads): no variance reduction", uses=model)
        der.step("orthogonal_heads_end", eq(sp.Subs(mse_line, HDI, 1), B ** 2 + V / H),
                 why=r"$\mathrm{HDI} = 1$ (uncorrelated heads): the variance $V/H$ of Ueda and Nakano", uses=model)
        for n in EXPLICIT_H:
            rho = _rho_symbols(n)
            mse = B ** 2 + _quad([sp.Rational(1, n)] * n, _cov_model([V] * n, rho))
            der.step(f"mse_line_H{n}", eq(mse, sp.Subs(mse_line, (H, HDI), (n, _hdi(rho, n)))), by="expand",
                     why=rf"$H = {n}$, one $\rho$ symbol per pair: the C3 form equals the line", uses=full)
        bx, vx = sp.Function("B"), sp.Function("V")
        x, lo, hi = sp.symbols("x x_lo x_hi", real=True)
        c = (H - 1) / H
        der.step("integrated_line",
                 eq(sp.Integral(bx(x) ** 2 + vx(x) - c * vx(x) * HDI, (x, lo, hi)),
                    sp.Integral(bx(x) ** 2, (x, lo, hi)) + (1 - c * HDI) * sp.Integral(vx(x), (x, lo, hi))),
                 by="identically_zero",
                 why=r"$\mathrm{HDI}$ is constant in $x$: the integrated MSE is the same line in $\int B^2$ and "
                     r"$\int V$", uses=["pointwise_integration", *model])
        der.result("mse_line", mse_line, args=(B, V, H, HDI),
                   description=r"$\mathrm{MSE} = B^2 + V - V (H - 1)/H \cdot \mathrm{HDI}$ under the covariance model "
                               r"($B^2$ and $V$ integrated over $x$ for the integrated MSE)", uses=full, codegen=("numpy",))
    der.compare("line_under_model",
                stated=r"the integrated MSE is a non-increasing straight line in $\mathrm{HDI}$",
                derived=r"$\mathrm{MSE} = B^2 + V - V (H - 1)/H \cdot \mathrm{HDI}$, slope $-V (H - 1)/H \le 0$, under "
                        r"the covariance model, equal variances, uniform weights and a subspace-free bias "
                        r"(general $H$ and $H = 2, \ldots, 5$ expanded)",
                supported_by=line, uses=full)
    der.compare("a_straight_line", stated=r"a straight line in $\mathrm{HDI}$",
                derived=r"affine in $\mathrm{HDI}$: the second derivative is 0 and the slope $-V (H - 1)/H$ is "
                        "constant (under the model)",
                supported_by=straight, uses=model)


def _weighted_form(der: Derivation) -> None:
    with der.group("weighted", r"for any weights the MSE is affine in the weighted index $\mathrm{WDI}$ with slope "
                               r"$-S$; $S \ge 0$ when every $\alpha_h \ge 0$, and $\mathrm{WDI} = \mathrm{HDI}$ for "
                               r"uniform $\alpha$ with equal $V_h$"):
        der.step("weighted_affine", eq(W, S * (1 - WDI)), by="solve", equation=eq(WDI, 1 - W / S),
                 why=r"solve $\mathrm{WDI} = 1 - W/S$ for the cross term: $W = S (1 - \mathrm{WDI})$, so "
                     r"$\mathrm{MSE} = B^2 + Q + W = B^2 + Q + S (1 - \mathrm{WDI})$",
                 uses=["c3_decomposition", "covariance_model"])
        for n in WEIGHTED_H:
            a = list(sp.symbols(f"alpha_1:{n + 1}", real=True))
            vs = list(sp.symbols(f"V_1:{n + 1}", positive=True))
            rho = _rho_symbols(n)
            pw = {p: 2 * a[p[0]] * a[p[1]] * sp.sqrt(vs[p[0]] * vs[p[1]]) for p in _pairs(n)}
            s_n = sp.Add(*pw.values())
            wdi_n = 1 - sp.Add(*(pw[p] * rho[p] for p in pw)) / s_n
            mse = B ** 2 + _quad(a, _cov_model(vs, rho))
            q_n = sum(a[i] ** 2 * vs[i] for i in range(n))
            der.step(f"weighted_affine_H{n}", eq(mse, B ** 2 + q_n + s_n * (1 - wdi_n)), by="expand",
                     why=rf"$\mathrm{{MSE}} = B^2 + \sum_h \alpha_h^2 V_h + S (1 - \mathrm{{WDI}})$ for any weights "
                         rf"($S \ne 0$, $H = {n}$)",
                     uses=["c3_decomposition", "covariance_model"])
            der.step(f"weighted_reduces_to_hdi_H{n}",
                     eq(_at(wdi_n, {**{ai: sp.Rational(1, n) for ai in a}, **{vi: V for vi in vs}}), _hdi(rho, n)),
                     by="simplify", why=rf"uniform $\alpha$, equal $V$: $\mathrm{{WDI}} = \mathrm{{HDI}}$ ($H = {n}$)",
                     uses=["covariance_model", "equal_variance", "uniform_weights"])
            an = list(sp.symbols(f"alpha_1:{n + 1}", nonnegative=True))
            der.step(f"S_nonneg_H{n}", ge(s_n.subs(dict(zip(a, an))), 0), by="nonneg",
                     why=rf"$S \ge 0$ when every $\alpha_h \ge 0$, so the slope $-S$ of the MSE in $\mathrm{{WDI}}$ "
                         rf"is $\le 0$ ($H = {n}$)",
                     uses=["covariance_model"])
        der.step("weighted_slope", eq(sp.Derivative(B ** 2 + Q + S * (1 - WDI), WDI), -S),
                 why=r"the slope of the MSE in $\mathrm{WDI}$ is $-S$", uses=["covariance_model"])
        der.result("mse_wdi", B ** 2 + Q + S * (1 - WDI), args=(B, Q, S, WDI),
                   description=r"$\mathrm{MSE} = B^2 + Q + S (1 - \mathrm{WDI})$, $Q = \sum_h \alpha_h^2 V_h$, "
                               r"$S = \sum_{h \ne h'} \alpha_h \alpha_{h'} \sqrt{V_h V_{h'}}$, $\mathrm{WDI} = 1 - "
                               r"\sum_{h \ne h'} \alpha_h \alpha_{h'} \sqrt{V_h V_{h'}} \rho_{hh'} / S$",
                   uses=["c3_decomposition", "covariance_model"])

    # Mixed signs: H = 2, α = (2, −1) (an affine combination, Σα = 1), V = (1, 1).
    r12 = sp.Symbol("rho_12", nonnegative=True)
    mse2 = B ** 2 + _quad([2, -1], _cov_model([1, 1], {(0, 1): r12}))
    mixed = mse2.subs(r12, 1 - HDI)
    with der.group("mixed_sign", r"with mixed-sign weights $\alpha = (2, -1)$ ($H = 2$, $V_h = 1$) the MSE rises "
                                 r"with $\mathrm{HDI}$") as mixed_sign:
        der.step("mixed_sign_line", eq(sp.Subs(mse2, r12, 1 - HDI), B ** 2 + 1 + 4 * HDI), by="expand",
                 why=r"$H = 2$, $\alpha = (2, -1)$, $V = 1$: $S = -4$, $\mathrm{MSE} = B^2 + 1 + 4 \mathrm{HDI}$",
                 uses=["c3_decomposition", "covariance_model"])
        der.step("mixed_sign_increasing", gt(sp.Derivative(mixed, HDI), 0), by="nonneg",
                 why=r"its slope in $\mathrm{HDI}$ is $4 > 0$", uses=["covariance_model"])
    der.compare("non_increasing_any_weights",
                stated="the MSE is non-increasing in the diversity index for any ensemble weights",
                derived=r"affine in $\mathrm{WDI}$ with slope $-S$; $S < 0$ for mixed-sign weights, e.g. "
                        r"$\alpha = (2, -1)$: $\mathrm{MSE} = B^2 + 1 + 4 \mathrm{HDI}$, slope "
                        + sympy_math(sp.diff(mixed, HDI)) + r" in $\mathrm{HDI}$",
                refuted_by=mixed_sign,
                detail=r"non-increasing if and only if $S \ge 0$ (e.g. all $\alpha_h \ge 0$); for $H = 2$, "
                       r"$\mathrm{WDI} = \mathrm{HDI}$ for any $\alpha$ and $V$",
                uses=["c3_decomposition", "covariance_model"])


def _restoring_assumption(der: Derivation) -> None:
    der.assume("equal_scaled_weights", r"$\alpha_h \sqrt{V_h} = \beta$ for every head (contains equal $V$ with "
               r"uniform $\alpha$; also $\alpha_h \propto 1/\sqrt{V_h}$)")
    uses = ["c3_decomposition", "hdi_definition", "covariance_model", "equal_scaled_weights"]
    with der.group("restored", r"equal scaled weights $\alpha_h \sqrt{V_h} = \beta$ make the MSE a non-increasing "
                               r"line in $\mathrm{HDI}$ for any variances, and for $H \ge 3$ they are needed") as rest:
        der.step("scaled_cross_term", eq(_pair_sum(beta ** 2), beta ** 2 * _pair_sum(1)), by="identically_zero",
                 why=r"the constant $\beta^2$ leaves the sums",
                 uses=["c3_decomposition", "covariance_model", "equal_scaled_weights"])
        line = B ** 2 + H * beta ** 2 + beta ** 2 * H * (H - 1) * (1 - HDI)
        for n in (3, 4):
            vs = list(sp.symbols(f"V_1:{n + 1}", positive=True))
            rho = _rho_symbols(n)
            mse = B ** 2 + _quad([beta / sp.sqrt(v) for v in vs], _cov_model(vs, rho))
            der.step(f"scaled_line_H{n}", eq(mse, line.subs({H: n, HDI: _hdi(rho, n)})), by="expand",
                     why=rf"$\alpha_h = \beta/\sqrt{{V_h}}$, unequal $V$: still a line in $\mathrm{{HDI}}$ with slope "
                         rf"$-\beta^2 H (H - 1)$ ($H = {n}$)", uses=uses)
        b = sp.symbols("beta_1:4", positive=True)
        der.step("equal_pair_weights_force_equal_scaled_weights_H3",
                 eq(sp.Tuple(b[1], b[2]), sp.Tuple(b[0], b[0])), by="solve",
                 equation=eq(sp.Tuple(b[0] * b[1], b[0] * b[1]), sp.Tuple(b[0] * b[2], b[1] * b[2])),
                 why=r"$H = 3$, $\beta_h = \alpha_h \sqrt{V_h} > 0$: equal pair weights $\beta_h \beta_{h'}$ force "
                     r"$\beta_1 = \beta_2 = \beta_3$",
                 uses=["covariance_model"])
    der.compare("restored_by_equal_scaled_weights",
                stated=r"the MSE is a non-increasing line in $\mathrm{HDI}$",
                derived=r"$\mathrm{MSE} = B^2 + H \beta^2 + \beta^2 H (H - 1)(1 - \mathrm{HDI})$ whenever "
                        r"$\alpha_h \sqrt{V_h} = \beta$ (any $V$); for $H \ge 3$ and positive weights the pair weights "
                        r"$\alpha_h \alpha_{h'} \sqrt{V_h V_{h'}}$ must all be equal for the MSE to be a function of "
                        r"$\mathrm{HDI}$ alone",
                supported_by=rest,
                detail=r"necessity: the MSE is linear in the $\rho$'s with pair weights $\beta_h \beta_{h'}$, "
                       r"$\mathrm{HDI}$ with equal weights; unless they are proportional, some realisable move raises "
                       r"$\mathrm{HDI}$ and the MSE",
                uses=uses)


def _outside_model(der: Derivation) -> None:
    uses = ["c3_decomposition", "hdi_definition", "covariance_model", "bias_subspace_free"]
    u3, v3, rho_uv = _rho_lines(3)
    a_s, v_s = list(sp.symbols("alpha_1:4", real=True)), list(sp.symbols("V_1:4", positive=True))
    rho_s = _rho_symbols(3)
    mse_form = _quad(a_s, _cov_model(v_s, rho_s))
    labels = {"unequal_variance": r"unequal $V_h$ with uniform $\alpha$",
              "nonuniform_weights": r"non-uniform $\alpha$ with equal $V_h$"}
    with der.group("outside_model", r"outside equal $V_h$ with uniform $\alpha$, a configuration with the higher "
                                    r"$\mathrm{HDI}$ has the higher MSE (two exact cases, $H = 3$, $d = 3$, "
                                    r"$d_k = 1$)") as outside:
        for name, spec in _CX_SPECS.items():
            exact = _cx_exact(spec)
            with der.group(f"cx_{name}", f"{labels[name]}: {spec['statement']} (exact rationals)"):
                for cfg in ("A", "B"):
                    st = spec["stated"][cfg]
                    got = exact[cfg]
                    cols = spec["W_K"][cfg]
                    rho_at = sp.Matrix([_at(rho_uv, dict(zip(u3 + v3, cols[p[0]] + cols[p[1]]))) for p in _pairs(3)])
                    der.step(f"cx_{name}_{cfg}_rho", eq(rho_at, sp.Matrix([sp.Rational(r) for r in st["rho"]])),
                             why=rf"$\rho_{{hh'}} = \mathrm{{tr}}(P_h P_{{h'}})$ of configuration {cfg}, "
                                 r"$P = w w^\top / (w^\top w)$ for its integer columns $w$ of $W_K$ ($d_k = 1$)",
                             uses=["hdi_definition"])
                    rho_vals = {rho_s[p]: got["rho"][p] for p in _pairs(3)}
                    der.step(f"cx_{name}_{cfg}_hdi", eq(_at(_hdi(rho_s, 3), rho_vals), sp.Rational(st["HDI"])),
                             why=r"$\mathrm{HDI} = 1 - \mathrm{mean}\, \rho$ at the $\rho$'s of the previous step",
                             uses=["hdi_definition"])
                    values = {**dict(zip(a_s, map(sp.Rational, spec["alpha"]))),
                              **dict(zip(v_s, map(sp.Rational, spec["V"]))), **rho_vals}
                    der.step(f"cx_{name}_{cfg}_mse", eq(_at(mse_form, values), sp.Rational(st["mse_minus_bias_sq"])),
                             why=r"$\mathrm{MSE} - B^2 = \alpha^\top C \alpha$ with $C$ from the covariance model",
                             uses=uses)
                der.step(f"cx_{name}_hdi_higher", gt(exact["B"]["HDI"], exact["A"]["HDI"]), by="nonneg",
                         why=r"configuration B has the higher $\mathrm{HDI}$", uses=["hdi_definition"])
                der.step(f"cx_{name}_mse_higher",
                         gt(exact["B"]["mse_minus_bias_sq"], exact["A"]["mse_minus_bias_sq"]), by="nonneg",
                         why="and the higher MSE (the same bias $B$ in both configurations)", uses=uses)
                der.result(f"cx_{name}", sp.Tuple(exact["A"]["HDI"], exact["B"]["HDI"],
                                                  exact["A"]["mse_minus_bias_sq"], exact["B"]["mse_minus_bias_sq"]),
                           description=r"$(\mathrm{HDI}_A, \mathrm{HDI}_B, \mathrm{MSE}_A - B^2, \mathrm{MSE}_B - B^2)$; "
                                       "replay data in `proofs.c5_hdi_mse.counterexamples()`", uses=uses)
    der.compare("monotone_in_hdi_outside_model",
                stated=r"the MSE is monotone non-increasing in $\mathrm{HDI}$",
                derived=r"higher $\mathrm{HDI}$ with higher MSE: "
                        + "; ".join(f"{labels[n]}, {s['statement']}" for n, s in _CX_SPECS.items()),
                refuted_by=outside,
                detail=r"outside equal $V$ with uniform $\alpha$, $\mathrm{HDI}$ weights all pairs alike while the MSE "
                       r"weights pair $(h, h')$ by $\alpha_h \alpha_{h'} \sqrt{V_h V_{h'}}$", uses=uses)


def _shared_noise(der: Derivation) -> None:
    n = SHARED_NOISE_N
    w1 = [sp.Symbol(f"w_{i}^1", positive=True) for i in range(1, n + 1)]
    w2 = [sp.Symbol(f"w_{i}^2", positive=True) for i in range(1, n + 1)]
    f = list(sp.symbols(f"f_1:{n + 1}", real=True))
    eps = list(sp.symbols(f"epsilon_1:{n + 1}", real=True))
    y = [f[i] + eps[i] for i in range(n)]
    fh1 = sum(w1[i] * y[i] for i in range(n))
    fh2 = sum(w2[i] * y[i] for i in range(n))
    E_ = sp.Function("E")
    cov = E_((fh1 - E_(fh1)) * (fh2 - E_(fh2)))        # Cov(f̂_1, f̂_2 | X), unevaluated
    shared = sigma ** 2 * sum(w1[i] * w2[i] for i in range(n))
    with der.group("shared_noise", r"NW heads share the noise: given the design, "
                                   r"$\mathrm{Cov}(\hat{f}_h, \hat{f}_{h'} \mid X) = \sigma^2 \sum_i w_i^h w_i^{h'} > 0$ "
                                   r"for softmax heads, even at $\rho = 0$ (an exact example with correlation 1)") as noise:
        der.step("conditional_covariance_n3", eq(cov, shared), by="expectation", variables=eps,
                 covariance=sigma ** 2 * sp.eye(n),
                 why=rf"$\mathrm{{Cov}}(\hat{{f}}_1, \hat{{f}}_2 \mid X) = \sigma^2 \sum_i w_i^1 w_i^2$: the heads "
                     rf"share the noise ($n = {n}$)", uses=["regression_noise"])
        der.step("conditional_covariance_positive", gt(shared, 0), by="nonneg",
                 why="strictly positive whenever all weights are positive", uses=["regression_noise"])
        s = list(sp.symbols(f"s_1:{n + 1}", real=True))
        wsoft = sp.exp(s[0]) / sum(sp.exp(si) for si in s)
        der.step("softmax_weights_positive", gt(wsoft, 0), by="nonneg",
                 why="softmax weights are positive", uses=["softmax_heads"])

        # Exact example: d = 2, d_k = 1, W_Q^h = W_K^h = e_h (ρ_12 = 0), query x = e_1, keys x_i = (0, t_i).
        t = sp.symbols(f"t_1:{n + 1}", real=True)
        e1, e2 = sp.Matrix([1, 0]), sp.Matrix([0, 1])
        xq, keys = e1, [sp.Matrix([0, ti]) for ti in t]

        def weights(wq: sp.Matrix, wk: sp.Matrix) -> list:
            sc = [((wq.T * xq).T * (wk.T * k))[0, 0] for k in keys]
            return [sp.exp(si) / sum(sp.exp(sj) for sj in sc) for si in sc]

        wa, wb = weights(e1, e1), weights(e2, e2)
        u2, v2, rho_2 = _rho_lines(2)
        der.step("orthogonal_example_rho", eq(_at(rho_2, dict(zip(u2 + v2, [*e1, *e2]))), 0),
                 why=r"$\mathrm{Range}(W_K^1)$ is orthogonal to $\mathrm{Range}(W_K^2)$: $\rho = \mathrm{tr}(P_1 P_2) = 0$ "
                     r"for the lines $e_1$, $e_2$", uses=["hdi_definition"])
        corr_form = (sigma ** 2 * sum(w1[i] * w2[i] for i in range(n))
                     / sp.sqrt(sigma ** 2 * sum(x ** 2 for x in w1) * sigma ** 2 * sum(x ** 2 for x in w2)))
        corr = _at(corr_form, dict(zip(w1 + w2, wa + wb)))   # Cov/sqrt(Var Var) at the softmax weights
        der.step("orthogonal_example_correlation", eq(corr, 1),
                 why=r"all scores vanish, both heads average uniformly: conditional correlation 1 at $\rho = 0$",
                 uses=["regression_noise", "softmax_heads"])
    der.compare("premise_on_nw_heads",
                stated=r"covariance model $C_{hh'} = \rho_{hh'} \sqrt{V_h V_{h'}}$: orthogonal subspaces ($\rho = 0$) "
                       "give uncorrelated heads",
                derived=r"given $X$, $\mathrm{Cov}(\hat{f}_h, \hat{f}_{h'}) = \sigma^2 \sum_i w_i^h w_i^{h'} > 0$ for "
                        r"softmax heads; an exact example with $\rho = 0$ and conditional correlation 1",
                refuted_by=noise,
                detail="the shared noise makes NW heads positively correlated whatever their subspaces; the random "
                       "design adds the covariance of the conditional means",
                uses=["regression_noise", "softmax_heads", "covariance_model"])
