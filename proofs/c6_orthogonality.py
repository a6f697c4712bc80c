"""C6 (Thm 5.1): when is the MSE minimised by mutually orthogonal key subspaces?

Under the C5 model the MSE is ``B² + V/H + V Φ / (H² d_k)`` with the overlap potential
``Φ = Σ_{h≠h'} ||U_hᵀ U_h'||_F²``, so minimising the MSE over subspaces is minimising Φ ≥ 0.
Mutually orthogonal subspaces give Φ = 0 (a stationary, global minimum) but exist only when
``H d_k ≤ d``. Beyond that the fusion-frame bound ``Σ_{h,h'} tr(P_h P_h') ≥ (H d_k)²/d`` holds,
with equality exactly for tight fusion frames (``Σ_h P_h = (H d_k/d) I``), giving
``HDI ≤ 1 − max(0, (H d_k/d − 1)/(H − 1))``; the bound is reached where such frames exist and
not always (two planes in R³).
"""

from __future__ import annotations

from typing import Any

import sympy as sp

from .core import Derivation
from .notation import HDI, B, H, V, d, d_k

__all__ = ["build", "hdi_bound_expr", "TIGHT_FRAMES"]

R = sp.Symbol("R", nonnegative=True)        # Σ_{h≠h'} ρ_hh'
Phi = sp.Symbol("Phi", nonnegative=True)    # overlap potential Σ_{h≠h'} ||U_hᵀU_h'||_F²
T2 = sp.Symbol("T_2", nonnegative=True)     # tr(S²) = ||S||_F², S = Σ_h P_h
g = sp.Symbol("g", nonnegative=True)        # Cauchy–Schwarz slack tr(S²) − (tr S)²/d
t = sp.Symbol("t", real=True)               # curve parameter on the Grassmannian
CS_DIMS = (2, 3, 4, 5)                      # explicit d for the eigenvalue Cauchy–Schwarz step

#: (H, d_k, d) of the exact tight fusion frames checked in build() (all with H d_k > d).
TIGHT_FRAMES = ((3, 1, 2), (3, 2, 3), (3, 2, 4))


def _eq(a: Any, b: Any) -> sp.Eq:
    return sp.Eq(a, b, evaluate=False)   # unevaluated: the step's check does the work


def _ge(a: Any, b: Any) -> sp.Ge:
    return sp.Ge(a, b, evaluate=False)


def _le(a: Any, b: Any) -> sp.Le:
    return sp.Le(a, b, evaluate=False)


def _gt(a: Any, b: Any) -> sp.Gt:
    return sp.Gt(a, b, evaluate=False)


def hdi_bound_expr() -> sp.Expr:
    """HDI ≤ 1 − max(0, (H d_k/d − 1)/(H − 1)) (H ≥ 2)."""
    return 1 - sp.Max(0, (H * d_k / d - 1) / (H - 1))


def _proj(w: sp.Matrix) -> sp.Matrix:
    """Orthogonal projector onto Range(w)."""
    return sp.simplify(w * (w.T * w).inv() * w.T)


def _mercedes(k: int) -> sp.Matrix:
    th = sp.pi / 2 + 2 * sp.pi * k / 3
    return sp.Matrix([sp.cos(th), sp.sin(th)])


def _tight_frame(H_: int, dk: int, dim: int) -> list[sp.Matrix]:
    """Exact key bases W_K^h (dim × dk) of the tight fusion frames in TIGHT_FRAMES."""
    if (H_, dk, dim) == (3, 1, 2):      # Mercedes frame: three lines at 120°
        return [_mercedes(k) for k in range(3)]
    if (H_, dk, dim) == (3, 2, 3):      # the three coordinate planes of R³
        eye = sp.eye(3)
        return [eye[:, [j for j in range(3) if j != h]] for h in range(3)]
    if (H_, dk, dim) == (3, 2, 4):      # Mercedes ⊗ I_2: complex lines of C² ≅ R⁴
        return [sp.kronecker_product(_mercedes(k), sp.eye(2)) for k in range(3)]
    raise ValueError(f"no exact tight fusion frame stored for (H, d_k, d) = {(H_, dk, dim)}")


def build() -> Derivation:
    der = Derivation(
        "C6", "Orthogonal heads are optimal",
        "Thm 5.1: the MSE is minimised when (W_K^h)ᵀ W_K^h' ≈ 0 for h ≠ h'.",
    )
    from . import (
        derivation,  # the package imports this module: C5 is looked up when C6 is built
    )

    c5 = derivation("C5")
    for a in c5.model_assumptions():
        if a.name in ("covariance_model", "equal_variance", "uniform_weights", "bias_subspace_free"):
            der.assume(a.name, a.statement, kind="model")
    der.assume("c5_line", "MSE = B² + V − V(H−1)/H · HDI under the four model assumptions "
               "(proved in proofs.c5_hdi_mse)", kind="setting", expr=c5.results["mse_line"].expr)
    der.assume("subspaces", "U_h ∈ R^{d×d_k} orthonormal bases of Range(W_K^h), P_h = U_hU_hᵀ, "
               "ρ_hh' = ||U_hᵀU_h'||_F²/d_k = tr(P_hP_h')/d_k, Φ = Σ_{h≠h'} ||U_hᵀU_h'||_F² = d_k R, "
               "R = Σ_{h≠h'} ρ_hh', HDI = 1 − R/(H(H−1)), H ≥ 2", kind="setting")
    model = ["covariance_model", "equal_variance", "uniform_weights", "bias_subspace_free"]
    base = ["c5_line", "subspaces", *model]

    line = c5.results["mse_line"].expr
    der.step("c5_proved", _eq(sp.Symbol("MSE"), line), by="cited", derivation=c5, result="mse_line",
             why="the C5 line this derivation starts from is machine-checked", uses=["c5_line"])
    mse_r = B ** 2 + V / H + V * R / H ** 2
    der.step("mse_in_pair_sum", _eq(sp.Subs(line, HDI, 1 - R / (H * (H - 1))), mse_r), by="simplify",
             why="MSE = B² + V/H + (V/H²) Σ_{h≠h'} ρ_hh'", uses=base)
    mse_phi = B ** 2 + V / H + V * Phi / (H ** 2 * d_k)
    der.step("mse_in_potential", _eq(sp.Subs(mse_r, R, Phi / d_k), mse_phi), by="expand", uses=base)
    der.step("mse_increasing_in_potential", _gt(sp.Derivative(mse_phi, Phi), 0), by="nonneg",
             why="minimising the MSE over subspaces = minimising Φ", uses=base)
    _literal_condition(der)
    _orthogonal_optimum(der)
    _stationarity(der)
    _fusion_bound(der, mse_r, base)
    _tight_frames(der)
    _not_always_attained(der)
    _findings(der, base)
    return der


def _literal_condition(der: Derivation) -> None:
    k, dd = sp.symbols("k n_d", integer=True, positive=True)
    u1, u2 = sp.MatrixSymbol("U_1", dd, k), sp.MatrixSymbol("U_2", dd, k)
    a1, a2 = sp.MatrixSymbol("A_1", k, k), sp.MatrixSymbol("A_2", k, k)
    lhs, rhs = sp.MatMul(sp.Transpose(u1 * a1), u2 * a2), a1.T * (u1.T * u2) * a2
    der.step("literal_condition", _eq(lhs, rhs), by="matrix_expand",
             why="W_K^h = U_h A_h (A_h invertible): (W_K^h)ᵀW_K^h' = A_hᵀ(U_hᵀU_h')A_h', zero iff "
                 "U_hᵀU_h' = 0; ≈ 0 in the scale-free sense means small ρ_hh'", uses=["subspaces"])


def _orthogonal_optimum(der: Derivation) -> None:
    u = [sp.Matrix(3, 2, sp.symbols(f"u{h}_1:7", real=True)) for h in range(2)]
    phi = 2 * sum(x ** 2 for x in (u[0].T * u[1]))
    der.step("potential_sum_of_squares", _ge(phi, 0), by="nonneg",
             why="Φ is a sum of squared entries (shown for d = 3, d_k = 2, H = 2; general by definition)",
             uses=["subspaces"])

    products, zeros = [], []
    for H_, dk, dim in ((2, 2, 4), (3, 1, 3), (2, 1, 3), (3, 2, 7)):
        us = [sp.ImmutableMatrix(sp.eye(dim)[:, h * dk:(h + 1) * dk]) for h in range(H_)]
        for a_, b_ in ((a_, b_) for a_ in range(H_) for b_ in range(a_ + 1, H_)):
            products.append(sp.MatMul(sp.Transpose(us[a_]), us[b_]))     # U_aᵀU_b (and U_bᵀU_a, its transpose)
            zeros.append(sp.ImmutableMatrix(sp.zeros(dk, dk)))
    der.step("orthogonal_blocks", _eq(sp.Tuple(*products), sp.Tuple(*zeros)), by="matrix_expand",
             why="H d_k ≤ d: disjoint blocks of I_d give U_hᵀU_h' = 0, Φ = 0 = min Φ "
                 "(checked for (H, d_k, d) = (2,2,4), (3,1,3), (2,1,3), (3,2,7))", uses=["subspaces"])


def _stationarity(der: Derivation) -> None:
    # General sizes: for U_1ᵀU_2 = 0 the block M_1ᵀM_2 of the curves M_h = U_h + tΔ_h is O(t).
    k, dd = sp.symbols("k n_d", integer=True, positive=True)
    u1, u2, e1, e2 = (sp.MatrixSymbol(s, dd, k) for s in ("U_1", "U_2", "Delta_1", "Delta_2"))
    resid = ((u1 + t * e1).T * (u2 + t * e2) - t * (u1.T * e2 + e1.T * u2) - t ** 2 * e1.T * e2)
    der.step("overlap_block_order_t", _eq(resid, u1.T * u2), by="matrix_expand",
             why="M_1ᵀM_2 = U_1ᵀU_2 + t(U_1ᵀΔ_2 + Δ_1ᵀU_2) + t²Δ_1ᵀΔ_2 = O(t) at orthogonal U's, "
                 "any d, d_k",
             uses=["subspaces"])
    gf = sp.Function("g")
    der.step("order_t2_is_stationary", _eq(sp.Subs(sp.Derivative(t ** 2 * gf(t), t), t, 0), 0), by="simplify",
             why="each pair term tr(G_1 N G_2 Nᵀ) = t² g(t), G_h = (M_hᵀM_h)⁻¹ smooth near t = 0: "
                 "dΦ/dt(0) = 0", uses=["subspaces"])
    der.step("order_t2_curvature", _eq(sp.Subs(sp.Derivative(t ** 2 * gf(t), (t, 2)), t, 0), 2 * gf(0)),
             by="simplify",
             uses=["subspaces"])

    # d = 4, d_k = 2, H = 2: explicit blocks.
    dl = [sp.Matrix(4, 2, sp.symbols(f"delta{h}_1:9", real=True)) for h in range(2)]
    us = [sp.eye(4)[:, 0:2], sp.eye(4)[:, 2:4]]
    ms = [us[h] + t * dl[h] for h in range(2)]
    n1 = us[0].T * dl[1] + dl[0].T * us[1]
    n2 = dl[0].T * dl[1]
    der.step("planes_d4_block", _eq(ms[0].T * ms[1], t * (n1 + t * n2)), by="expand",
             why="d = 4, d_k = 2, H = 2, U_1 = [e1 e2], U_2 = [e3 e4], Δ_h arbitrary", uses=["subspaces"])
    gs = [sp.Matrix(2, 2, sp.symbols(f"G{h}_1:5", real=True)) for h in range(2)]
    nn = ms[0].T * ms[1]
    der.step("planes_d4_trace_cyclic",
             _eq((ms[0] * gs[0] * ms[0].T * ms[1] * gs[1] * ms[1].T).trace(), (gs[0] * nn * gs[1] * nn.T).trace()),
             by="expand", why="tr(P_1P_2) = tr(G_1 N G_2 Nᵀ), N = M_1ᵀM_2, P_h = M_h G_h M_hᵀ",
             uses=["subspaces"])
    g0 = (n1 * n1.T).trace()
    g_at_0 = [(us[h].T * us[h]).inv() for h in range(2)]     # G_h(0) = (U_hᵀU_h)⁻¹ = I
    g0_premise = sp.Subs((gs[0] * n1 * gs[1] * n1.T).trace(), (*gs[0], *gs[1]), (*g_at_0[0], *g_at_0[1]))
    der.step("planes_d4_g0", _eq(g0_premise, sum(x ** 2 for x in n1)),
             by="expand", why="g(0) = tr(G_1(0) N_1 G_2(0) N_1ᵀ) = ||N_1||_F² as G_h(0) = I", uses=["subspaces"])
    der.step("planes_d4_curvature", _ge(2 * 2 * g0, 0), by="nonneg",
             why="G_h(0) = I: Φ''(0) = 2·2 g(0) = 4||U_1ᵀΔ_2 + Δ_1ᵀU_2||_F² ≥ 0", uses=["subspaces"])

    # d = 3, d_k = 1, H = 3: three lines m_h = e_h + tδ_h, Φ differentiated directly.
    dv = [sp.Matrix(sp.symbols(f"delta{h}_1:4", real=True)) for h in range(3)]
    m = [sp.eye(3)[:, h] + t * dv[h] for h in range(3)]
    pairs = [(a, b) for a in range(3) for b in range(a + 1, 3)]
    phi = 2 * sum(m[a].dot(m[b]) ** 2 / (m[a].dot(m[a]) * m[b].dot(m[b])) for a, b in pairs)
    der.step("lines_d3_stationary", _eq(sp.Subs(sp.Derivative(phi, t), t, 0), 0), by="simplify",
             why="d = 3, d_k = 1, H = 3: dΦ/dt = 0 at the orthonormal basis", uses=["subspaces"])
    curv = 4 * sum((dv[a][b] + dv[b][a]) ** 2 for a, b in pairs)
    der.step("lines_d3_curvature", _eq(sp.Subs(sp.Derivative(phi, (t, 2)), t, 0), curv), by="expand",
             uses=["subspaces"])
    der.step("lines_d3_curvature_nonneg", _ge(curv, 0), by="nonneg", uses=["subspaces"])


def _fusion_bound(der: Derivation, mse_r: sp.Expr, base: list[str]) -> None:
    # Σ_{h,h'} tr(P_hP_h') = tr(S²): bilinearity, H = 3 symmetric 2×2 matrices.
    ps = [sp.Matrix(2, 2, lambda i, j, h=h: sp.Symbol(f"p{h}_{min(i, j)}{max(i, j)}", real=True)) for h in range(3)]
    s_ = ps[0] + ps[1] + ps[2]
    der.step("frame_operator_norm", _eq(sum((a * b).trace() for a in ps for b in ps), (s_ * s_).trace()),
             by="expand", why="Σ_{h,h'} tr(P_hP_h') = tr(S²) = ||S||_F², S = Σ_h P_h", uses=["subspaces"])
    k, dd = sp.symbols("k n_d", integer=True, positive=True)
    uu = sp.MatrixSymbol("U", dd, k)
    sq = sp.MatMul(uu, uu.T, uu, uu.T)
    der.step("projector_idempotent", _eq(sq, uu * uu.T), by="matrix_expand", given={uu.T * uu: sp.Identity(k)},
             why="P_h² = U_h(U_hᵀU_h)U_hᵀ = P_h, so tr(P_h²) = tr(P_h) = tr(U_hᵀU_h) = d_k", uses=["subspaces"])
    # Eigen-decomposition: tr S = Σλ, tr S² = Σλ² (exact Cayley rotations, d = 2 and d = 3).
    th = sp.Symbol("tau", real=True)       # rational parameter of every rotation of R² but −I
    lam2 = sp.symbols("lambda_1:3", real=True)
    q2 = sp.Matrix([[1 - th ** 2, -2 * th], [2 * th, 1 - th ** 2]]) / (1 + th ** 2)
    s2 = q2 * sp.diag(*lam2) * q2.T
    tr2 = sp.Matrix([s2.trace(), (s2 * s2).trace()])
    ev2 = sp.Matrix([sum(lam2), sum(x ** 2 for x in lam2)])
    der.step("spectral_trace_d2", _eq(tr2, ev2), by="identically_zero",
             why="tr S = Σλ_i, tr S² = Σλ_i² for S = QΛQᵀ (Q a Cayley rotation)", uses=["subspaces"])
    a, b, c = sp.symbols("a b c", real=True)
    lam3 = sp.symbols("lambda_1:4", real=True)
    skew = sp.Matrix([[0, -a, -b], [a, 0, -c], [b, c, 0]])
    q3 = (sp.eye(3) - skew) * (sp.eye(3) + skew).inv()
    s3 = q3 * sp.diag(*lam3) * q3.T
    der.step("spectral_trace_d3", _eq(sp.Matrix([s3.trace(), (s3 * s3).trace()]),
                                      sp.Matrix([sum(lam3), sum(x ** 2 for x in lam3)])), by="rational",
             why="the same with an exact Cayley rotation of R³", uses=["subspaces"])
    for n in CS_DIMS:
        lam = sp.symbols(f"lambda_1:{n + 1}", real=True)
        mean = sum(lam) / n
        der.step(f"cauchy_schwarz_d{n}", _ge(sum(x ** 2 for x in lam), sum(lam) ** 2 / n), by="certificate",
                 certificate=sum((x - mean) ** 2 for x in lam),
                 why="Σλ² − (Σλ)²/d = Σ(λ_i − mean)² ≥ 0, equality iff S = (tr S/d) I",
                 uses=["subspaces"])
    i = sp.Symbol("i", integer=True, positive=True)
    lam = sp.IndexedBase("lambda", real=True)
    j = sp.Symbol("j", integer=True, positive=True)
    l1, l2 = sp.Sum(lam[i], (i, 1, d)), sp.Sum(lam[i] ** 2, (i, 1, d))
    cert = sp.Sum((lam[i] - sp.Sum(lam[j], (j, 1, d)) / d) ** 2, (i, 1, d))   # Σ_i (λ_i − mean λ)²
    der.step("cauchy_schwarz_general_d", _ge(l2, l1 ** 2 / d), by="certificate", certificate=cert,
             why="general d: Σ_i(λ_i − μ)² = Σλ² − 2μΣλ + dμ² ≥ 0, and at μ = Σλ/d this is "
                 "Σλ² − (Σλ)²/d",
             uses=["subspaces"])
    # R = (tr S² − H d_k)/d_k ≥ ((H d_k)²/d − H d_k)/d_k = H(H d_k/d − 1).
    r_of_t2 = (T2 - H * d_k) / d_k
    r_lb = H * (H * d_k / d - 1)
    der.step("pair_sum_bound", _ge(r_of_t2.subs(T2, (H * d_k) ** 2 / d + g), r_lb), by="certificate",
             certificate=g / d_k,
             why="R = (tr S² − Σ_h tr P_h²)/d_k with tr S = H d_k, tr S² = (H d_k)²/d + g, g ≥ 0",
             uses=["subspaces"])
    K = sp.Symbol("K", integer=True, positive=True)     # H − 1 ≥ 1
    s1, s2_ = sp.symbols("s_1 s_2", nonnegative=True)
    hdi_of_r = 1 - R / (H * (H - 1))
    ub = 1 - (H * d_k / d - 1) / (H - 1)
    der.step("hdi_bound_frame", _le(hdi_of_r.subs(R, r_lb + s1).subs(H, K + 1), ub.subs(H, K + 1)),
             by="certificate", certificate=s1 / ((K + 1) * K),
             why="R = R_lb + s_1, s_1 ≥ 0 ⇒ HDI ≤ 1 − (H d_k/d − 1)/(H − 1)", uses=["subspaces"])
    der.step("hdi_bound_trivial", _le(hdi_of_r.subs(R, s2_).subs(H, K + 1), 1), by="certificate",
             certificate=s2_ / ((K + 1) * K), why="R ≥ 0 ⇒ HDI ≤ 1", uses=["subspaces"])
    x = sp.Symbol("x", real=True)
    der.step("min_of_bounds", _eq(sp.Min(1, 1 - x), 1 - sp.Max(0, x)), by="piecewise",
             why="combining both bounds: HDI ≤ 1 − max(0, (H d_k/d − 1)/(H − 1))", uses=["subspaces"])
    bound = hdi_bound_expr()
    der.result("hdi_bound", bound, args=(H, d_k, d),
               description="upper bound on HDI over all subspace configurations (H ≥ 2); attained by "
                           "orthogonal subspaces (H d_k ≤ d) or a tight fusion frame where one exists",
               uses=["subspaces"], domain={H: (2, 64), d_k: (1, 64), d: (64, 128)})
    rmin = H * sp.Max(0, H * d_k / d - 1)
    der.result("min_overlap_potential", d_k * rmin, args=(H, d_k, d),
               description="lower bound on Φ = Σ_{h≠h'} ||U_hᵀU_h'||_F²: max(0, H d_k (H d_k/d − 1)); "
                           "the minimum where orthogonal subspaces or a tight fusion frame exist (not "
                           "always: (H, d_k, d) = (2, 2, 3) has min Φ = 2 > 4/3)", uses=["subspaces"])
    min_mse = B ** 2 + V / H + V / H * sp.Max(0, H * d_k / d - 1)
    der.step("min_mse", _eq(sp.Subs(mse_r, R, rmin), min_mse), by="expand", uses=base)
    der.step("min_mse_regimes", _eq(min_mse, B ** 2 + V / H * sp.Max(1, H * d_k / d)), by="piecewise",
             why="= B² + V max(1/H, d_k/d): B² + V/H if H d_k ≤ d, else B² + V d_k/d (independent of H)",
             uses=base)
    der.result("min_mse", min_mse, args=(B, V, H, d_k, d),
               description="lower bound on the model MSE over subspaces, B² + V max(1/H, d_k/d); "
                           "attained where min_overlap_potential is", uses=base)
    e = sp.Symbol("e", positive=True)
    der.step("orthogonality_infeasible", _gt((d_k * rmin).subs(d, H * d_k / (1 + e)), 0), by="nonneg",
             why="H d_k > d ⇒ Φ ≥ H d_k(H d_k/d − 1) > 0: no mutually orthogonal configuration "
                 "(also: stacked orthonormal blocks would need H d_k ≤ d columns in R^d)", uses=["subspaces"])


def _tight_frames(der: Derivation) -> None:
    bound = hdi_bound_expr()
    for H_, dk, dim in TIGHT_FRAMES:
        ps = [_proj(w) for w in _tight_frame(H_, dk, dim)]
        tag = f"H{H_}_dk{dk}_d{dim}"
        der.step(f"tight_frame_{tag}", _eq(sp.MatAdd(*[sp.ImmutableMatrix(sp.simplify(pp)) for pp in ps]),
                                           sp.Rational(H_ * dk, dim) * sp.eye(dim)),
                 by="simplify", why=f"S = Σ_h P_h = (H d_k/d) I = {sp.Rational(H_ * dk, dim)} I", uses=["subspaces"])
        r = sum((ps[a] * ps[b]).trace() / dk for a in range(H_) for b in range(H_) if a != b)
        der.step(f"tight_frame_{tag}_hdi",
                 _eq(sp.Subs(1 - R / (H * (H - 1)), (R, H), (sp.nsimplify(sp.simplify(r)), H_)),
                     sp.Subs(bound, (H, d_k, d), (H_, dk, dim))), by="simplify",
                 why="its HDI, with R = Σ_{h≠h'} tr(P_hP_h')/d_k from the exact projectors, equals the bound",
                 uses=["subspaces"])


def _not_always_attained(der: Derivation) -> None:
    u = sp.symbols("u_1:3", real=True)
    v = sp.symbols("v_1:3", real=True)

    def unit(p: tuple) -> sp.Matrix:  # inverse stereographic projection: every plane's unit normal
        r2 = p[0] ** 2 + p[1] ** 2
        return sp.Matrix([2 * p[0], 2 * p[1], 1 - r2]) / (1 + r2)

    n1, n2 = unit(u), unit(v)
    der.step("stereographic_unit", _eq(sp.Matrix([n1.dot(n1), n2.dot(n2)]), sp.Matrix([1, 1])), by="simplify",
             why="±n give the same plane, so these normals reach every plane of R³", uses=["subspaces"])
    p1, p2 = sp.eye(3) - n1 * n1.T, sp.eye(3) - n2 * n2.T
    dot = n1.dot(n2)
    der.step("two_planes_trace", _eq((p1 * p2).trace(), 1 + dot ** 2), by="simplify",
             why="tr(P_1P_2) = 3 − 1 − 1 + (n_1·n_2)²", uses=["subspaces"])
    der.step("two_planes_potential", _ge(2 * (1 + dot ** 2), 2), by="certificate", certificate=2 * dot ** 2,
             why="(H, d_k, d) = (2, 2, 3): Φ = 2 tr(P_1P_2) ≥ 2 (two planes share a line), attained at "
                 "orthogonal normals", uses=["subspaces"])
    der.step("two_planes_above_bound", _gt(2, 2 * 2 * (sp.Rational(2 * 2, 3) - 1)), by="nonneg",
             why="min Φ = 2 > H d_k (H d_k/d − 1) = 4/3: the fusion-frame bound is not reached",
             uses=["subspaces"])


def _findings(der: Derivation, base: list[str]) -> None:
    ok = lambda *names: all(s.checked for s in der.steps if s.name in names)  # noqa: E731
    feasible = ok("mse_in_pair_sum", "mse_in_potential", "mse_increasing_in_potential",
                  "potential_sum_of_squares", "orthogonal_blocks", "overlap_block_order_t",
                  "order_t2_is_stationary", "lines_d3_stationary", "planes_d4_block")
    der.compare("orthogonal_optimal_when_feasible",
                stated="MSE minimised when (W_K^h)ᵀW_K^h' ≈ 0 for h ≠ h'",
                derived="H d_k ≤ d: orthogonal subspaces give Φ = 0 = min Φ, a stationary global "
                        "minimum of the model MSE = B² + V/H",
                holds=feasible, method="symbolic: Φ ≥ 0, stationarity for any sizes, d = 3 and 4 explicit",
                uses=base)
    infeasible = ok("orthogonality_infeasible", "pair_sum_bound", "hdi_bound_frame", *(
        f"tight_frame_H{a}_dk{b}_d{c}" for a, b, c in TIGHT_FRAMES))
    der.compare("orthogonal_optimal_beyond_d",
                stated="MSE minimised when (W_K^h)ᵀW_K^h' ≈ 0 for h ≠ h'",
                derived="H d_k > d: orthogonality is infeasible (Φ ≥ H d_k(H d_k/d − 1) > 0); the best "
                        "reachable is a tight fusion frame, Σ_h P_h = (H d_k/d) I, "
                        "HDI ≤ 1 − (H d_k/d − 1)/(H − 1), model MSE ≥ B² + V d_k/d",
                holds=not infeasible, method="symbolic: fusion-frame bound, exact tight frames "
                                             + ", ".join(map(str, TIGHT_FRAMES)),
                detail="the claim holds only under the extra assumption H d_k ≤ d", uses=base)
    der.compare("fusion_bound_always_attained",
                stated="the fusion-frame bound is reached by tight fusion frames",
                derived="reached for " + ", ".join(map(str, TIGHT_FRAMES)) + "; not for (H, d_k, d) = "
                        "(2, 2, 3): two planes in R³ share a line, min Φ = 2 > 4/3",
                holds=not ok("two_planes_potential", "two_planes_above_bound"),
                method="symbolic, exact", detail="the bound is the minimum only where a tight fusion "
                                                 "frame with these (H, d_k, d) exists", uses=["subspaces"])
