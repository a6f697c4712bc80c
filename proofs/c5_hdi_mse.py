"""C5 (Thm 4.2): the MSE as a function of the head diversity index.

Under an explicit covariance model (head correlation = subspace overlap, equal head variances,
uniform weights, a bias that does not depend on the subspaces) the C3 decomposition becomes the
exact line ``MSE = B² + V − V (H−1)/H · HDI``. For any weights it is affine in a weighted index
WDI, non-increasing only while ``S = Σ_{h≠h'} α_h α_h' sqrt(V_h V_h') ≥ 0``. Outside the model
the plain HDI does not govern the MSE (two exact counterexamples, replayable from
:func:`counterexamples`), and the model's premise fails for NW heads that share the noise.
"""

from __future__ import annotations

from itertools import combinations
from typing import Any

import sympy as sp

from .core import Derivation
from .notation import HDI, B, H, V, sigma

__all__ = ["build", "counterexamples", "EXPLICIT_H", "WEIGHTED_H"]

EXPLICIT_H = (2, 3, 4, 5)   # head counts expanded with one explicit rho symbol per pair
WEIGHTED_H = (2, 3, 4)      # head counts for the general weighted form

_h, _hp = sp.symbols("h h'", integer=True, positive=True)
_rho = sp.IndexedBase("rho", real=True)
R = sp.Symbol("R", nonnegative=True)        # pair sum Σ_{h≠h'} ρ_hh'
Q = sp.Symbol("Q", nonnegative=True)        # Σ_h α_h² V_h
S = sp.Symbol("S", real=True)               # Σ_{h≠h'} α_h α_h' sqrt(V_h V_h')
W = sp.Symbol("W", real=True)               # Σ_{h≠h'} α_h α_h' sqrt(V_h V_h') ρ_hh'
WDI = sp.Symbol("WDI", real=True)           # weighted diversity index
beta = sp.Symbol("beta", positive=True)     # common scaled weight α_h sqrt(V_h)

# Counterexamples outside the model: H = 3 heads, d = 3, d_k = 1; each head's W_K is one
# integer column (rho only depends on its span). The stated numbers are checked in build().
_CX_SPECS: dict[str, dict[str, Any]] = {
    "unequal_variance": {
        "statement": "uniform weights, V = (1, 1, 100): configuration B has the higher HDI "
                     "and the higher MSE",
        "V": ("1", "1", "100"), "alpha": ("1/3", "1/3", "1/3"),
        "W_K": {"A": ((1, 0, 0), (1, 0, 0), (0, 0, 1)), "B": ((1, 0, 0), (0, 1, 0), (3, 0, 1))},
        "stated": {"A": {"rho": ("1", "0", "0"), "HDI": "2/3", "mse_minus_bias_sq": "104/9"},
                   "B": {"rho": ("0", "9/10", "0"), "HDI": "7/10", "mse_minus_bias_sq": "40/3"}},
    },
    "nonuniform_weights": {
        "statement": "equal variances V = 1, weights (1/2, 1/4, 1/4): configuration B has the "
                     "higher HDI and the higher MSE",
        "V": ("1", "1", "1"), "alpha": ("1/2", "1/4", "1/4"),
        "W_K": {"A": ((1, 0, 0), (0, 1, 0), (0, 1, 0)), "B": ((1, 0, 0), (3, 1, 0), (0, 0, 1))},
        "stated": {"A": {"rho": ("0", "0", "1"), "HDI": "2/3", "mse_minus_bias_sq": "1/2"},
                   "B": {"rho": ("9/10", "0", "0"), "HDI": "7/10", "mse_minus_bias_sq": "3/5"}},
    },
}
_PAIR_KEYS = ("12", "13", "23")


def _eq(a: Any, b: Any) -> sp.Eq:
    return sp.Eq(a, b, evaluate=False)   # unevaluated: the step's check does the work


def _ge(a: Any, b: Any) -> sp.Ge:
    return sp.Ge(a, b, evaluate=False)


def _gt(a: Any, b: Any) -> sp.Gt:
    return sp.Gt(a, b, evaluate=False)


def _le(a: Any, b: Any) -> sp.Le:
    return sp.Le(a, b, evaluate=False)


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
    strings, W_K as integer d×d_k matrices) that a numeric check can save and replay."""
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
def build() -> Derivation:
    d = Derivation(
        "C5", "HDI governs the MSE",
        "Thm 4.2: the integrated MSE is monotone non-increasing in HDI (a straight line).",
    )
    _assumptions(d)
    line = _in_model_line(d)
    _weighted_form(d)
    _restoring_assumption(d)
    _outside_model(d, line)
    _shared_noise(d)
    return d


def _assumptions(d: Derivation) -> None:
    d.assume("c3_decomposition",
             "MSE = B² + Σ_h α_h² V_h + Σ_{h≠h'} α_h α_h' C_hh' = B² + αᵀ C α, B = Σ_h α_h b_h "
             "(Thm 3.1, an exact identity for any α; proved in proofs.c3_decomposition)",
             kind="setting")
    d.assume("hdi_definition",
             "HDI = 1 − mean_{h<h'} ρ_hh' = 1 − Σ_{h≠h'} ρ_hh' / (H(H−1)), ρ symmetric in [0, 1], "
             "H ≥ 2 (C4, subspace form)", kind="setting", expr=_eq(HDI, 1 - R / (H * (H - 1))))
    d.assume("pointwise_integration",
             "every statement holds at each query x; HDI does not depend on x, so integrating "
             "over the query density keeps the line, with B² → ∫B², V → ∫V", kind="setting")
    d.assume("covariance_model", "C_hh' = ρ_hh' sqrt(V_h V_h'): head-output correlation equals "
             "the subspace overlap ρ_hh'")
    d.assume("equal_variance", "V_h = V for every head")
    d.assume("uniform_weights", "α_h = 1/H")
    d.assume("bias_subspace_free", "the ensemble bias B does not depend on the heads' subspaces "
             "(on real NW heads it does: each head's bias depends on its projection)")
    d.assume("regression_noise",
             "y_i = f(x_i) + ε_i, ε_i uncorrelated, mean 0, variance σ², independent of the design "
             "X; given X the NW weights w_i^h(x) are fixed numbers", kind="setting")
    d.assume("softmax_heads", "w_i^h(x) = exp(s_i^h) / Σ_j exp(s_j^h) with real scores "
             "s_i^h = <(W_Q^h)ᵀ x, (W_K^h)ᵀ x_i>/sqrt(d_k)", kind="setting")


def _in_model_line(d: Derivation) -> sp.Expr:
    model = ["covariance_model", "equal_variance", "uniform_weights"]
    for n in EXPLICIT_H:
        a = sp.symbols(f"alpha_1:{n + 1}", real=True)
        c = sp.Matrix(n, n, lambda i, j: sp.Symbol(f"C_{min(i, j) + 1}{max(i, j) + 1}", real=True))
        split = (sum(a[i] ** 2 * c[i, i] for i in range(n))
                 + sum(a[i] * a[j] * c[i, j] for i in range(n) for j in range(n) if i != j))
        d.step(f"c3_split_H{n}", _eq(_quad(list(a), c), split), by="expand",
               why="αᵀCα splits into the diagonal and the cross terms", uses=["c3_decomposition"])

    diag = sp.Sum((1 / H) ** 2 * V, (_h, 1, H))
    d.step("diagonal_term", _eq(diag, V / H), by="simplify",
           why="Σ_h (1/H)² V = V/H", uses=["c3_decomposition", "uniform_weights", "equal_variance"])
    off = 1 - sp.KroneckerDelta(_h, _hp)
    cross = sp.Sum(sp.Sum((1 / H) * (1 / H) * _rho[_h, _hp] * sp.sqrt(V * V) * off, (_hp, 1, H)), (_h, 1, H))
    pair_sum = sp.Sum(sp.Sum(_rho[_h, _hp] * off, (_hp, 1, H)), (_h, 1, H))
    d.step("cross_term", _eq(cross, V / H ** 2 * pair_sum), by="identically_zero",
           why="Σ_{h≠h'} α_h α_h' ρ_hh' sqrt(V_h V_h') = (V/H²) Σ_{h≠h'} ρ_hh'",
           uses=["c3_decomposition", *model])
    d.step("pair_sum_from_hdi", _eq(R, H * (H - 1) * (1 - HDI)), by="solve",
           equation=_eq(HDI, 1 - R / (H * (H - 1))),
           why="solve the HDI definition for the pair sum R = Σ_{h≠h'} ρ_hh'", uses=["hdi_definition"])
    d.step("mse_in_pair_sum", _eq(B ** 2 + diag + V / H ** 2 * R, B ** 2 + V / H + V * R / H ** 2),
           by="simplify",
           why="MSE = B² + (diagonal) + (cross) with the two terms above, R = Σ_{h≠h'} ρ_hh'",
           uses=["c3_decomposition", *model, "bias_subspace_free"])
    mid = sp.Subs(B ** 2 + V / H + V * R / H ** 2, R, H * (H - 1) * (1 - HDI))
    d.step("mse_in_hdi", _eq(mid, B ** 2 + V / H + V * (H - 1) / H * (1 - HDI)), by="simplify",
           uses=["c3_decomposition", "hdi_definition", *model, "bias_subspace_free"])
    line = B ** 2 + V - V * (H - 1) / H * HDI
    d.step("mse_line", _eq(mid, line), by="expand",
           why="MSE = B² + V − V (H−1)/H · HDI", uses=["c3_decomposition", "hdi_definition", *model,
                                                     "bias_subspace_free"])
    slope = -V * (H - 1) / H
    d.step("slope", _eq(sp.Derivative(line, HDI), slope), uses=[*model])
    d.step("straight_line", _eq(sp.Derivative(line, (HDI, 2)), 0), why="affine in HDI", uses=[*model])
    d.step("non_increasing", _le(slope, 0), by="certificate", certificate=V * (H - 1) / H,
           why="0 − slope = V (H−1)/H ≥ 0 as V > 0, H ≥ 1", uses=[*model])
    d.step("identical_heads_end", _eq(sp.Subs(line, HDI, 0), B ** 2 + V),
           why="HDI = 0 (identical heads): no variance reduction", uses=[*model])
    d.step("orthogonal_heads_end", _eq(sp.Subs(line, HDI, 1), B ** 2 + V / H),
           why="HDI = 1 (uncorrelated heads): Ueda–Nakano's V/H", uses=[*model])
    for n in EXPLICIT_H:
        rho = _rho_symbols(n)
        mse = B ** 2 + _quad([sp.Rational(1, n)] * n, _cov_model([V] * n, rho))
        d.step(f"mse_line_H{n}", _eq(mse, sp.Subs(line, (H, HDI), (n, _hdi(rho, n)))), by="expand",
               why=f"H = {n}, one ρ symbol per pair: the C3 form equals the line",
               uses=["c3_decomposition", "hdi_definition", *model, "bias_subspace_free"])
    bx, vx = sp.Function("B"), sp.Function("V")
    x, lo, hi = sp.symbols("x x_lo x_hi", real=True)
    c = (H - 1) / H
    d.step("integrated_line",
           _eq(sp.Integral(bx(x) ** 2 + vx(x) - c * vx(x) * HDI, (x, lo, hi)),
                 sp.Integral(bx(x) ** 2, (x, lo, hi)) + (1 - c * HDI) * sp.Integral(vx(x), (x, lo, hi))),
           by="identically_zero", why="HDI is constant in x: the integrated MSE is the same line in ∫B², ∫V",
           uses=["pointwise_integration", *model])

    d.result("mse_line", line, args=(B, V, H, HDI), description="MSE = B² + V − V(H−1)/H · HDI "
             "under the covariance model (B², V integrated over x for the integrated MSE)",
             uses=["c3_decomposition", "hdi_definition", *model, "bias_subspace_free"])
    d.result("slope", slope, args=(V, H), description="d MSE / d HDI = −V (H−1)/H ≤ 0",
             uses=model)
    names = ["mse_line", "slope", "straight_line", "non_increasing", "integrated_line",
             *(f"mse_line_H{n}" for n in EXPLICIT_H)]
    ok = all(s.checked for s in d.steps if s.name in names)
    d.compare("line_under_model", stated="the integrated MSE is a non-increasing straight line in HDI",
              derived="MSE = B² + V − V(H−1)/H · HDI, slope −V(H−1)/H ≤ 0, under the covariance "
                      "model, equal variances, uniform weights and a subspace-free bias",
              holds=ok, method="symbolic: general H and H = 2..5 expanded",
              uses=["c3_decomposition", "hdi_definition", *model, "bias_subspace_free"])
    return line


def _weighted_form(d: Derivation) -> None:
    d.step("weighted_affine", _eq(sp.Subs(B ** 2 + Q + S * (1 - WDI), WDI, 1 - W / S), B ** 2 + Q + W),
           by="expand", why="with WDI = 1 − W/S the cross term W equals S (1 − WDI)",
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
        d.step(f"weighted_affine_H{n}", _eq(mse, B ** 2 + q_n + s_n * (1 - wdi_n)), by="expand",
               why="MSE = B² + Σα²V + S (1 − WDI) for any weights (S ≠ 0)",
               uses=["c3_decomposition", "covariance_model"])
        d.step(f"weighted_reduces_to_hdi_H{n}",
               _eq(_at(wdi_n, {**{ai: sp.Rational(1, n) for ai in a}, **{vi: V for vi in vs}}), _hdi(rho, n)),
               by="simplify", why="uniform α, equal V: WDI = HDI",
               uses=["covariance_model", "equal_variance", "uniform_weights"])
        an = list(sp.symbols(f"alpha_1:{n + 1}", nonnegative=True))
        d.step(f"S_nonneg_H{n}", _ge(s_n.subs(dict(zip(a, an))), 0), by="nonneg",
               why="S ≥ 0 when every α_h ≥ 0, so the slope −S of MSE in WDI is ≤ 0",
               uses=["covariance_model"])
    d.step("weighted_slope", _eq(sp.Derivative(B ** 2 + Q + S * (1 - WDI), WDI), -S), uses=["covariance_model"])
    d.result("mse_wdi", B ** 2 + Q + S * (1 - WDI), args=(B, Q, S, WDI),
             description="MSE = B² + Q + S(1 − WDI), Q = Σα_h²V_h, S = Σ_{h≠h'} α_hα_h' sqrt(V_hV_h'), "
                         "WDI = 1 − Σ_{h≠h'} α_hα_h' sqrt(V_hV_h') ρ_hh' / S",
             uses=["c3_decomposition", "covariance_model"])

    # Mixed signs: H = 2, α = (2, −1) (an affine combination, Σα = 1), V = (1, 1).
    r12 = sp.Symbol("rho_12", nonnegative=True)
    mse2 = B ** 2 + _quad([2, -1], _cov_model([1, 1], {(0, 1): r12}))
    mixed = mse2.subs(r12, 1 - HDI)
    d.step("mixed_sign_line", _eq(sp.Subs(mse2, r12, 1 - HDI), B ** 2 + 1 + 4 * HDI), by="expand",
           why="H = 2, α = (2, −1), V = 1: S = −4, MSE = B² + 1 + 4 HDI", uses=["c3_decomposition",
                                                                              "covariance_model"])
    slope = sp.diff(mixed, HDI)
    d.step("mixed_sign_increasing", _gt(sp.Derivative(mixed, HDI), 0), by="nonneg", uses=["covariance_model"])
    d.compare("non_increasing_any_weights",
              stated="MSE non-increasing in the diversity index for any ensemble weights",
              derived=f"affine in WDI with slope −S; S < 0 for mixed-sign weights, e.g. α = (2, −1): "
                      f"slope {slope} in HDI",
              holds=bool(slope <= 0), method="symbolic, exact example",
              detail="non-increasing iff S ≥ 0 (e.g. all α_h ≥ 0); for H = 2, WDI = HDI for any α, V",
              uses=["c3_decomposition", "covariance_model"])


def _restoring_assumption(d: Derivation) -> None:
    d.assume("equal_scaled_weights", "α_h sqrt(V_h) = β for every head (contains equal V with "
             "uniform α; also α_h ∝ 1/sqrt(V_h))")
    off = 1 - sp.KroneckerDelta(_h, _hp)
    cross = sp.Sum(sp.Sum(beta ** 2 * _rho[_h, _hp] * off, (_hp, 1, H)), (_h, 1, H))
    pair_sum = sp.Sum(sp.Sum(_rho[_h, _hp] * off, (_hp, 1, H)), (_h, 1, H))
    d.step("scaled_cross_term", _eq(cross, beta ** 2 * pair_sum), by="identically_zero",
           why="constants leave the sums",
           uses=["c3_decomposition", "covariance_model", "equal_scaled_weights"])
    line = B ** 2 + H * beta ** 2 + beta ** 2 * H * (H - 1) * (1 - HDI)
    for n in (3, 4):
        vs = list(sp.symbols(f"V_1:{n + 1}", positive=True))
        rho = _rho_symbols(n)
        mse = B ** 2 + _quad([beta / sp.sqrt(v) for v in vs], _cov_model(vs, rho))
        d.step(f"scaled_line_H{n}", _eq(mse, line.subs({H: n, HDI: _hdi(rho, n)})), by="expand",
               why="α_h = β/sqrt(V_h), unequal V: still a line in HDI with slope −β² H(H−1)",
               uses=["c3_decomposition", "hdi_definition", "covariance_model", "equal_scaled_weights"])
    b = sp.symbols("beta_1:4", positive=True)

    d.step("equal_pair_weights_force_equal_scaled_weights_H3",
           _eq(sp.Tuple(b[1], b[2]), sp.Tuple(b[0], b[0])), by="solve",
           equation=_eq(sp.Tuple(b[0] * b[1], b[0] * b[1]), sp.Tuple(b[0] * b[2], b[1] * b[2])),
           why="H = 3, β_h = α_h sqrt(V_h) > 0: equal pair weights β_hβ_h' force β_1 = β_2 = β_3",
           uses=["covariance_model"])
    ok = all(s.checked for s in d.steps if s.name.startswith(("scaled_", "equal_pair")))
    d.compare("restored_by_equal_scaled_weights",
              stated="MSE is a non-increasing line in HDI",
              derived="MSE = B² + Hβ² + β² H(H−1)(1 − HDI) whenever α_h sqrt(V_h) = β (any V); for "
                      "H ≥ 3 and positive weights the pair weights α_hα_h' sqrt(V_hV_h') must all be "
                      "equal for MSE to be a function of HDI alone",
              holds=ok, method="symbolic: general H, H = 3, 4 expanded, H = 3 necessity",
              detail="necessity: the MSE is linear in the ρ's with pair weights β_hβ_h', HDI with equal "
                     "weights; unless proportional, some realisable move raises HDI and the MSE",
              uses=["c3_decomposition", "hdi_definition", "covariance_model", "equal_scaled_weights"])


def _outside_model(d: Derivation, line: sp.Expr) -> None:
    uses = ["c3_decomposition", "hdi_definition", "covariance_model", "bias_subspace_free"]
    violated = []
    u3, v3, rho_uv = _rho_lines(3)
    a_s, v_s = list(sp.symbols("alpha_1:4", real=True)), list(sp.symbols("V_1:4", positive=True))
    rho_s = _rho_symbols(3)
    mse_form = _quad(a_s, _cov_model(v_s, rho_s))
    for name, spec in _CX_SPECS.items():
        exact = _cx_exact(spec)
        for cfg in ("A", "B"):
            st = spec["stated"][cfg]
            got = exact[cfg]
            cols = spec["W_K"][cfg]
            rho_at = sp.Matrix([_at(rho_uv, dict(zip(u3 + v3, cols[p[0]] + cols[p[1]]))) for p in _pairs(3)])
            d.step(f"cx_{name}_{cfg}_rho", _eq(rho_at, sp.Matrix([sp.Rational(r) for r in st["rho"]])),
                   why=f"ρ_hh' = tr(P_h P_h') of configuration {cfg}, P = w wᵀ/(wᵀw) for its integer W_K "
                       "columns w (d_k = 1)", uses=["hdi_definition"])
            rho_vals = {rho_s[p]: got["rho"][p] for p in _pairs(3)}
            d.step(f"cx_{name}_{cfg}_hdi", _eq(_at(_hdi(rho_s, 3), rho_vals), sp.Rational(st["HDI"])),
                   why="HDI = 1 − mean ρ at the ρ's of the previous step", uses=["hdi_definition"])
            values = {**dict(zip(a_s, map(sp.Rational, spec["alpha"]))), **dict(zip(v_s, map(sp.Rational, spec["V"]))),
                      **rho_vals}
            d.step(f"cx_{name}_{cfg}_mse", _eq(_at(mse_form, values), sp.Rational(st["mse_minus_bias_sq"])),
                   why="MSE − B² = αᵀCα with C from the covariance model", uses=uses)
        hdi_up = d.step(f"cx_{name}_hdi_higher", _gt(exact["B"]["HDI"], exact["A"]["HDI"]), by="nonneg",
                        uses=["hdi_definition"])
        mse_up = d.step(f"cx_{name}_mse_higher",
                        _gt(exact["B"]["mse_minus_bias_sq"], exact["A"]["mse_minus_bias_sq"]), by="nonneg",
                        why="same bias B in both configurations", uses=uses)
        if hdi_up.checked and mse_up.checked:
            violated.append(name)
        d.result(f"cx_{name}", sp.Tuple(exact["A"]["HDI"], exact["B"]["HDI"], exact["A"]["mse_minus_bias_sq"],
                                        exact["B"]["mse_minus_bias_sq"]), codegen=False,
                 description="(HDI_A, HDI_B, MSE_A − B², MSE_B − B²); replay data in "
                             "proofs.c5_hdi_mse.counterexamples()", uses=uses)
    d.compare("monotone_in_hdi_outside_model",
              stated="the MSE is monotone non-increasing in HDI",
              derived="higher HDI with higher MSE: " + ("; ".join(
                  f"{n}: {_CX_SPECS[n]['statement']}" for n in violated) or "no counterexample verified"),
              holds=not violated, method="exact rational counterexamples (H = 3, d = 3, d_k = 1)",
              detail="outside equal V with uniform α, HDI weights all pairs alike while the MSE weights "
                     "pair (h, h') by α_hα_h' sqrt(V_hV_h')", uses=uses)


def _shared_noise(d: Derivation) -> None:
    n = 3
    w1 = list(sp.symbols(f"w1_1:{n + 1}", positive=True))
    w2 = list(sp.symbols(f"w2_1:{n + 1}", positive=True))
    f = list(sp.symbols(f"f_1:{n + 1}", real=True))
    eps = list(sp.symbols(f"epsilon_1:{n + 1}", real=True))
    y = [f[i] + eps[i] for i in range(n)]
    fh1 = sum(w1[i] * y[i] for i in range(n))
    fh2 = sum(w2[i] * y[i] for i in range(n))
    E_ = sp.Function("E")
    cov = E_((fh1 - E_(fh1)) * (fh2 - E_(fh2)))        # Cov(f̂_1, f̂_2 | X), unevaluated
    shared = sigma ** 2 * sum(w1[i] * w2[i] for i in range(n))
    d.step("conditional_covariance_n3", _eq(cov, shared), by="expectation", variables=eps,
           covariance=sigma ** 2 * sp.eye(n),
           why="Cov(f̂_1, f̂_2 | X) = σ² Σ_i w_i^1 w_i^2 (heads share the noise)", uses=["regression_noise"])
    d.step("conditional_covariance_positive", _gt(shared, 0), by="nonneg",
           why="strictly positive whenever all weights are positive", uses=["regression_noise"])
    s = list(sp.symbols(f"s_1:{n + 1}", real=True))
    wsoft = sp.exp(s[0]) / sum(sp.exp(si) for si in s)
    d.step("softmax_weights_positive", _gt(wsoft, 0), by="nonneg", uses=["softmax_heads"])

    # Exact example: d = 2, d_k = 1, W_Q^h = W_K^h = e_h (ρ_12 = 0), query x = e_1, keys x_i = (0, t_i).
    t = sp.symbols(f"t_1:{n + 1}", real=True)
    e1, e2 = sp.Matrix([1, 0]), sp.Matrix([0, 1])
    xq, keys = e1, [sp.Matrix([0, ti]) for ti in t]

    def weights(wq: sp.Matrix, wk: sp.Matrix) -> list:
        sc = [((wq.T * xq).T * (wk.T * k))[0, 0] for k in keys]
        return [sp.exp(si) / sum(sp.exp(sj) for sj in sc) for si in sc]

    wa, wb = weights(e1, e1), weights(e2, e2)
    u2, v2, rho_2 = _rho_lines(2)
    d.step("orthogonal_example_rho", _eq(_at(rho_2, dict(zip(u2 + v2, [*e1, *e2]))), 0),
           why="Range(W_K^1) ⊥ Range(W_K^2): ρ = tr(P_1 P_2) for the lines e_1, e_2", uses=["hdi_definition"])
    corr_form = (sigma ** 2 * sum(w1[i] * w2[i] for i in range(n))
                 / sp.sqrt(sigma ** 2 * sum(x ** 2 for x in w1) * sigma ** 2 * sum(x ** 2 for x in w2)))
    corr = _at(corr_form, dict(zip(w1 + w2, wa + wb)))   # Cov/sqrt(Var Var) at the softmax weights
    d.step("orthogonal_example_correlation", _eq(corr, 1),
           why="all scores vanish, both heads average uniformly: conditional correlation 1 at ρ = 0",
           uses=["regression_noise", "softmax_heads"])
    refuted = all(s.checked for s in d.steps if s.name in (
        "conditional_covariance_n3", "conditional_covariance_positive", "softmax_weights_positive",
        "orthogonal_example_rho", "orthogonal_example_correlation"))
    d.compare("premise_on_nw_heads",
              stated="covariance model C_hh' = ρ_hh' sqrt(V_hV_h'): orthogonal subspaces (ρ = 0) give "
                     "uncorrelated heads",
              derived="given X, Cov(f̂_h, f̂_h') = σ² Σ_i w_i^h w_i^h' > 0 for softmax heads; exact "
                      "example with ρ = 0 and conditional correlation 1",
              holds=not refuted, method="symbolic, n = 3",
              detail="the shared noise makes NW heads positively correlated whatever their subspaces; "
                     "the random design adds Cov of the conditional means",
              uses=["regression_noise", "softmax_heads", "covariance_model"])
