"""C6 (Thm 5.1): when is the MSE minimised by mutually orthogonal key subspaces?

Under the C5 model the MSE increases with the overlap potential ``Φ = Σ_{h≠h'} ||U_hᵀ U_h'||_F²``.
Orthogonal subspaces give Φ = 0, a stationary global minimum, but exist only when ``H d_k ≤ d``. For
any sizes the fusion-frame bound ``Σ_{h,h'} tr(P_h P_h') ≥ (H d_k)²/d`` gives ``HDI ≤ 1 − max(0,
(H d_k/d − 1)/(H − 1))``, reached by tight fusion frames where they exist, not always (two planes in R³).
"""

from __future__ import annotations

import sympy as sp

from .core import Derivation, eq, ge, gt, le
from .notation import HDI, B, H, V, d, d_k, spell

__all__ = ["build", "hdi_bound_expr", "TIGHT_FRAMES", "CLAIM", "TITLE", "STATED", "ORTHOGONAL_BLOCKS"]

CLAIM = "C6"
TITLE = "Orthogonal heads are optimal (Thm 5.1)"
STATED = r"Thm 5.1: the MSE is minimised when $(W_K^h)^\top W_K^{h'} \approx 0$ for $h \ne h'$."

R = sp.Symbol("R", nonnegative=True)          # Σ_{h≠h'} ρ_hh'
Phi = sp.Symbol("Phi", nonnegative=True)      # overlap potential Σ_{h≠h'} ||U_hᵀU_h'||_F²
T2 = sp.Symbol("T_2", nonnegative=True)       # tr(S²) = ||S||_F², S = Σ_h P_h
gamma = sp.Symbol("gamma", nonnegative=True)  # Cauchy–Schwarz slack tr(S²) − (tr S)²/d
t = sp.Symbol("t", real=True)                 # curve parameter on the Grassmannian
MSE = sp.Symbol("MSE", real=True)             # the model MSE (the cited C5 result's left side)
dk_int = sp.Symbol("d_k", integer=True, positive=True)   # d_k as a matrix size
CS_DIMS = (2, 3, 4, 5)                        # explicit d for the eigenvalue Cauchy–Schwarz step

#: (H, d_k, d) of the exact tight fusion frames checked in build() (all with H d_k > d).
TIGHT_FRAMES = ((3, 1, 2), (3, 2, 3), (3, 2, 4))
#: (H, d_k, d) with H d_k <= d whose orthogonal coordinate blocks are checked explicitly.
ORTHOGONAL_BLOCKS = ((2, 2, 4), (3, 1, 3), (2, 1, 3), (3, 2, 7))

# how MSE prints (matrix entries are named x^(h)_k, which prints as x^{(h)}_{k} by itself)
spell(MSE=r"\mathrm{MSE}")


def _entries(stem: str, h: int, count: int) -> list[sp.Symbol]:
    """The real symbols ``stem^(h)_1 .. stem^(h)_count``."""
    return [sp.Symbol(f"{stem}^({h})_{k}", real=True) for k in range(1, count + 1)]


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


MODEL = ("covariance_model", "equal_variance", "uniform_weights", "bias_subspace_free")


def build() -> Derivation:
    der = Derivation(CLAIM, TITLE, STATED, markup=True)
    from . import (
        derivation,  # the package imports this module: C5 is looked up when C6 is built
    )

    c5 = derivation("C5")
    for a in c5.model_assumptions():
        if a.name in MODEL:
            der.assume(a.name, a.statement, kind="model")
    der.assume("c5_line", r"$\mathrm{MSE} = B^2 + V - V (H - 1)/H \cdot \mathrm{HDI}$ under the four model "
               "assumptions (proved in `proofs.c5_hdi_mse`)", kind="setting", expr=c5.results["mse_line"].expr)
    der.assume("subspaces", r"$U_h \in \mathbb{R}^{d \times d_k}$ orthonormal bases of $\mathrm{Range}(W_K^h)$, "
               r"$P_h = U_h U_h^\top$, $\rho_{hh'} = \lVert U_h^\top U_{h'} \rVert_F^2 / d_k = \mathrm{tr}(P_h P_{h'}) "
               r"/ d_k$, $\Phi = \sum_{h \ne h'} \lVert U_h^\top U_{h'} \rVert_F^2 = d_k R$, "
               r"$R = \sum_{h \ne h'} \rho_{hh'}$, $\mathrm{HDI} = 1 - R/(H (H - 1))$, $H \ge 2$", kind="setting")
    _glossary(der)
    base = ["c5_line", "subspaces", *MODEL]

    with der.group("feasible", r"for $H d_k \le d$ mutually orthogonal subspaces give $\Phi = 0 = \min \Phi$: a "
                               "stationary global minimum of the model MSE") as feasible:
        mse_r = _potential(der, c5, base)
        _literal_condition(der)
        _orthogonal_optimum(der)
        _stationarity(der)
    der.compare("orthogonal_optimal_when_feasible",
                stated=r"the MSE is minimised when $(W_K^h)^\top W_K^{h'} \approx 0$ for $h \ne h'$",
                derived=r"$H d_k \le d$: orthogonal subspaces give $\Phi = 0 = \min \Phi$, a stationary global "
                        r"minimum of the model $\mathrm{MSE} = B^2 + V/H$",
                supported_by=feasible, uses=base)

    with der.group("beyond_d", r"for $H d_k > d$ orthogonal subspaces do not exist ($\Phi > 0$); the best "
                               r"reachable overlap is a tight fusion frame, $\sum_h P_h = (H d_k/d) I$") as beyond:
        _fusion_bound(der, mse_r, base)
        _tight_frames(der)
    der.compare("orthogonal_optimal_beyond_d",
                stated=r"the MSE is minimised when $(W_K^h)^\top W_K^{h'} \approx 0$ for $h \ne h'$",
                derived=r"$H d_k > d$: orthogonality is infeasible ($\Phi \ge H d_k (H d_k/d - 1) > 0$); the best "
                        r"reachable is a tight fusion frame, $\sum_h P_h = (H d_k/d) I$, "
                        r"$\mathrm{HDI} \le 1 - (H d_k/d - 1)/(H - 1)$, model $\mathrm{MSE} \ge B^2 + V d_k/d$",
                refuted_by=beyond,
                detail=r"the claim holds only under the extra assumption $H d_k \le d$", uses=base)

    with der.group("not_attained", r"the fusion-frame bound is not always reached: two planes in "
                                   r"$\mathbb{R}^3$ share a line, $\min \Phi = 2 > 4/3$") as not_attained:
        _not_always_attained(der)
    der.compare("fusion_bound_always_attained",
                stated="the fusion-frame bound is reached by tight fusion frames",
                derived="reached for $(H, d_k, d)$ in " + ", ".join(f"${c}$" for c in TIGHT_FRAMES)
                        + r"; not for $(H, d_k, d) = (2, 2, 3)$: two planes in $\mathbb{R}^3$ share a line, "
                          r"$\min \Phi = 2 > 4/3$",
                refuted_by=not_attained,
                detail="the bound is the minimum only where a tight fusion frame with these sizes exists",
                uses=["subspaces"])
    return der


def _glossary(der: Derivation) -> None:
    der.define(
        R=r"the pair sum $R = \sum_{h \ne h'} \rho_{hh'}$",
        Phi=r"the overlap potential $\Phi = \sum_{h \ne h'} \lVert U_h^\top U_{h'} \rVert_F^2 = d_k R$",
        T_2=r"the frame norm $T_2 = \mathrm{tr}(S^2) = \lVert S \rVert_F^2$ of the frame operator $S = \sum_h P_h$",
        gamma=r"the Cauchy-Schwarz slack $\gamma = \mathrm{tr}(S^2) - (\mathrm{tr}\, S)^2 / d \ge 0$",
        t="the parameter of a curve of subspaces", MSE="the model MSE",
        U=r"an orthonormal basis $U$ of a head's key subspace",
        U_=r"the orthonormal basis $U_h$ of head $h$",
        A_=r"an invertible $d_k \times d_k$ matrix $A_h$ with $W_K^h = U_h A_h$",
        Delta_=r"a tangent direction $\Delta_h$ at $U_h$",
        **{"u^(1)_": r"the entries of the basis $U_1$", "u^(2)_": r"the entries of the basis $U_2$"},
        **{f"delta^({h})_": rf"the entries of the direction $\Delta_{h}$" for h in (1, 2, 3)},
        **{"G^(1)_": r"the entries of $G_1 = (M_1^\top M_1)^{-1}$", "G^(2)_": r"the entries of $G_2 = (M_2^\top M_2)^{-1}$",
           "p^(1)_": r"the entries of a symmetric $2 \times 2$ matrix $P_1$", "p^(2)_": r"the entries of $P_2$",
           "p^(3)_": r"the entries of $P_3$"},
        g=r"the pair term $\mathrm{tr}(G_1 N G_2 N^\top) / t^2$ along the curve, a smooth function of $t$",
        tau=r"the rational parameter of a rotation of $\mathbb{R}^2$",
        a="an entry of a skew-symmetric matrix", b="an entry of a skew-symmetric matrix",
        c="an entry of a skew-symmetric matrix",
        lambda_=r"the eigenvalues $\lambda_i$ of the frame operator $S$",
        **{"lambda": r"the eigenvalues $\lambda_i$ of the frame operator $S$"},
        i="an eigenvalue index", j="an eigenvalue index",
        K=r"$K = H - 1 \ge 1$", s_1="a nonnegative slack of the pair sum", s_2="a nonnegative slack of the pair sum",
        x="a real number", e=r"a positive number with $d = H d_k / (1 + e)$",
        u_=r"the stereographic coordinates $u$ of the first plane's normal",
        v_=r"the stereographic coordinates $v$ of the second plane's normal",
    )


def _potential(der: Derivation, c5: Derivation, base: list[str]) -> sp.Expr:
    line = c5.results["mse_line"].expr
    with der.group("potential", r"under the C5 model the MSE is $B^2 + V/H + V \Phi / (H^2 d_k)$, increasing in the "
                                r"overlap potential $\Phi$"):
        der.step("c5_proved", eq(MSE, line), by="cited", derivation=c5, result="mse_line",
                 why="the C5 line this derivation starts from is machine-checked", uses=["c5_line"])
        mse_r = B ** 2 + V / H + V * R / H ** 2
        der.step("mse_in_pair_sum", eq(sp.Subs(line, HDI, 1 - R / (H * (H - 1))), mse_r), by="simplify",
                 why=r"$\mathrm{MSE} = B^2 + V/H + (V/H^2) \sum_{h \ne h'} \rho_{hh'}$", uses=base)
        mse_phi = B ** 2 + V / H + V * Phi / (H ** 2 * d_k)
        der.step("mse_in_potential", eq(sp.Subs(mse_r, R, Phi / d_k), mse_phi), by="expand",
                 why=r"$R = \Phi / d_k$", uses=base)
        der.step("mse_increasing_in_potential", gt(sp.Derivative(mse_phi, Phi), 0), by="nonneg",
                 why=r"minimising the MSE over subspaces is minimising $\Phi$", uses=base)
    return mse_r


def _literal_condition(der: Derivation) -> None:
    u1, u2 = sp.MatrixSymbol("U_1", d, dk_int), sp.MatrixSymbol("U_2", d, dk_int)
    a1, a2 = sp.MatrixSymbol("A_1", dk_int, dk_int), sp.MatrixSymbol("A_2", dk_int, dk_int)
    lhs, rhs = sp.MatMul(sp.Transpose(u1 * a1), u2 * a2), a1.T * (u1.T * u2) * a2
    der.step("literal_condition", eq(lhs, rhs), by="matrix_expand",
             why=r"$W_K^h = U_h A_h$ ($A_h$ invertible): $(W_K^h)^\top W_K^{h'} = A_h^\top (U_h^\top U_{h'}) A_{h'}$, "
                 r"zero if and only if $U_h^\top U_{h'} = 0$; $\approx 0$ in the scale-free sense means small "
                 r"$\rho_{hh'}$", uses=["subspaces"])


def _orthogonal_optimum(der: Derivation) -> None:
    u = [sp.Matrix(3, 2, _entries("u", h, 6)) for h in (1, 2)]
    phi = 2 * sum(x ** 2 for x in (u[0].T * u[1]))
    der.step("potential_sum_of_squares", ge(phi, 0), by="nonneg",
             why=r"$\Phi$ is a sum of squared entries (shown for $d = 3$, $d_k = 2$, $H = 2$; general by definition)",
             uses=["subspaces"])

    products, zeros = [], []
    for H_, dk, dim in ORTHOGONAL_BLOCKS:
        us = [sp.ImmutableMatrix(sp.eye(dim)[:, h * dk:(h + 1) * dk]) for h in range(H_)]
        for a_, b_ in ((i, j) for i in range(H_) for j in range(i + 1, H_)):
            products.append(sp.MatMul(sp.Transpose(us[a_]), us[b_]))     # U_aᵀU_b (and U_bᵀU_a, its transpose)
            zeros.append(sp.ImmutableMatrix(sp.zeros(dk, dk)))
    der.step("orthogonal_blocks", eq(sp.Tuple(*products), sp.Tuple(*zeros)), by="matrix_expand",
             why=r"$H d_k \le d$: disjoint blocks of $I_d$ give $U_h^\top U_{h'} = 0$, $\Phi = 0 = \min \Phi$ "
                 "(checked for $(H, d_k, d)$ in " + ", ".join(f"${c}$" for c in ORTHOGONAL_BLOCKS) + ")",
             uses=["subspaces"])


def _stationarity(der: Derivation) -> None:
    # General sizes: for U_1ᵀU_2 = 0 the block M_1ᵀM_2 of the curves M_h = U_h + tΔ_h is O(t).
    u1, u2, e1, e2 = (sp.MatrixSymbol(s, d, dk_int) for s in ("U_1", "U_2", "Delta_1", "Delta_2"))
    resid = ((u1 + t * e1).T * (u2 + t * e2) - t * (u1.T * e2 + e1.T * u2) - t ** 2 * e1.T * e2)
    der.step("overlap_block_order_t", eq(resid, u1.T * u2), by="matrix_expand",
             why=r"$M_1^\top M_2 = U_1^\top U_2 + t (U_1^\top \Delta_2 + \Delta_1^\top U_2) + t^2 \Delta_1^\top \Delta_2$ "
                 r"is of order $t$ at orthogonal $U$'s, any $d$ and $d_k$",
             uses=["subspaces"])
    gf = sp.Function("g")
    der.step("order_t2_is_stationary", eq(sp.Subs(sp.Derivative(t ** 2 * gf(t), t), t, 0), 0), by="simplify",
             why=r"each pair term $\mathrm{tr}(G_1 N G_2 N^\top) = t^2 g(t)$, $G_h = (M_h^\top M_h)^{-1}$ smooth near "
                 r"$t = 0$: $\Phi'(0) = 0$", uses=["subspaces"])
    der.step("order_t2_curvature", eq(sp.Subs(sp.Derivative(t ** 2 * gf(t), (t, 2)), t, 0), 2 * gf(0)),
             by="simplify", why=r"its second derivative at $t = 0$ is $2 g(0)$", uses=["subspaces"])

    # d = 4, d_k = 2, H = 2: explicit blocks.
    dl = [sp.Matrix(4, 2, _entries("delta", h, 8)) for h in (1, 2)]
    us = [sp.eye(4)[:, 0:2], sp.eye(4)[:, 2:4]]
    ms = [us[h] + t * dl[h] for h in range(2)]
    n1 = us[0].T * dl[1] + dl[0].T * us[1]
    n2 = dl[0].T * dl[1]
    der.step("planes_d4_block", eq(ms[0].T * ms[1], t * (n1 + t * n2)), by="expand",
             why=r"$d = 4$, $d_k = 2$, $H = 2$, $U_1 = [e_1\, e_2]$, $U_2 = [e_3\, e_4]$, $\Delta_h$ arbitrary",
             uses=["subspaces"])
    gs = [sp.Matrix(2, 2, _entries("G", h, 4)) for h in (1, 2)]
    nn = ms[0].T * ms[1]
    der.step("planes_d4_trace_cyclic",
             eq((ms[0] * gs[0] * ms[0].T * ms[1] * gs[1] * ms[1].T).trace(), (gs[0] * nn * gs[1] * nn.T).trace()),
             by="expand", why=r"$\mathrm{tr}(P_1 P_2) = \mathrm{tr}(G_1 N G_2 N^\top)$, $N = M_1^\top M_2$, "
                              r"$P_h = M_h G_h M_h^\top$", uses=["subspaces"])
    g0 = (n1 * n1.T).trace()
    g_at_0 = [(us[h].T * us[h]).inv() for h in range(2)]     # G_h(0) = (U_hᵀU_h)⁻¹ = I
    g0_premise = sp.Subs((gs[0] * n1 * gs[1] * n1.T).trace(), (*gs[0], *gs[1]), (*g_at_0[0], *g_at_0[1]))
    der.step("planes_d4_g0", eq(g0_premise, sum(x ** 2 for x in n1)),
             by="expand", why=r"$g(0) = \mathrm{tr}(G_1(0) N_1 G_2(0) N_1^\top) = \lVert N_1 \rVert_F^2$ as "
                              r"$G_h(0) = I$", uses=["subspaces"])
    der.step("planes_d4_curvature", ge(2 * 2 * g0, 0), by="nonneg",
             why=r"$G_h(0) = I$: $\Phi''(0) = 2 \cdot 2 g(0) = 4 \lVert U_1^\top \Delta_2 + \Delta_1^\top U_2 "
                 r"\rVert_F^2 \ge 0$", uses=["subspaces"])

    # d = 3, d_k = 1, H = 3: three lines m_h = e_h + tδ_h, Φ differentiated directly.
    dv = [sp.Matrix(_entries("delta", h, 3)) for h in (1, 2, 3)]
    m = [sp.eye(3)[:, h] + t * dv[h] for h in range(3)]
    pairs = [(a, b) for a in range(3) for b in range(a + 1, 3)]
    phi = 2 * sum(m[a].dot(m[b]) ** 2 / (m[a].dot(m[a]) * m[b].dot(m[b])) for a, b in pairs)
    der.step("lines_d3_stationary", eq(sp.Subs(sp.Derivative(phi, t), t, 0), 0), by="simplify",
             why=r"$d = 3$, $d_k = 1$, $H = 3$: $\Phi'(0) = 0$ at the orthonormal basis", uses=["subspaces"])
    curv = 4 * sum((dv[a][b] + dv[b][a]) ** 2 for a, b in pairs)
    der.step("lines_d3_curvature", eq(sp.Subs(sp.Derivative(phi, (t, 2)), t, 0), curv), by="expand",
             why=r"the curvature $\Phi''(0)$ is a sum of squares", uses=["subspaces"])
    der.step("lines_d3_curvature_nonneg", ge(curv, 0), by="nonneg", why=r"so $\Phi''(0) \ge 0$", uses=["subspaces"])


def _fusion_bound(der: Derivation, mse_r: sp.Expr, base: list[str]) -> None:
    with der.group("fusion_bound", r"for any sizes $\Phi \ge H d_k \max(0, H d_k/d - 1)$: $\mathrm{HDI} \le 1 - "
                                   r"\max(0, (H d_k/d - 1)/(H - 1))$ and the model $\mathrm{MSE} \ge B^2 + V \max(1/H, "
                                   r"d_k/d)$, with equality exactly for tight fusion frames"):
        # Σ_{h,h'} tr(P_hP_h') = tr(S²): bilinearity, H = 3 symmetric 2×2 matrices.
        ps = [sp.Matrix(2, 2, lambda i, j, h=h: sp.Symbol(f"p^({h})_{min(i, j) + 1}{max(i, j) + 1}", real=True))
              for h in (1, 2, 3)]
        s_ = ps[0] + ps[1] + ps[2]
        der.step("frame_operator_norm", eq(sum((a * b).trace() for a in ps for b in ps), (s_ * s_).trace()),
                 by="expand", why=r"$\sum_{h, h'} \mathrm{tr}(P_h P_{h'}) = \mathrm{tr}(S^2) = \lVert S \rVert_F^2$, "
                                  r"$S = \sum_h P_h$", uses=["subspaces"])
        uu = sp.MatrixSymbol("U", d, dk_int)
        sq = sp.MatMul(uu, uu.T, uu, uu.T)
        der.step("projector_idempotent", eq(sq, uu * uu.T), by="matrix_expand", given={uu.T * uu: sp.Identity(dk_int)},
                 why=r"$P_h^2 = U_h (U_h^\top U_h) U_h^\top = P_h$, so $\mathrm{tr}(P_h^2) = \mathrm{tr}(P_h) = d_k$",
                 uses=["subspaces"])
        # Eigen-decomposition: tr S = Σλ, tr S² = Σλ² (exact Cayley rotations, d = 2 and d = 3).
        th = sp.Symbol("tau", real=True)       # rational parameter of every rotation of R² but −I
        lam2 = sp.symbols("lambda_1:3", real=True)
        q2 = sp.Matrix([[1 - th ** 2, -2 * th], [2 * th, 1 - th ** 2]]) / (1 + th ** 2)
        s2 = q2 * sp.diag(*lam2) * q2.T
        tr2 = sp.Matrix([s2.trace(), (s2 * s2).trace()])
        ev2 = sp.Matrix([sum(lam2), sum(x ** 2 for x in lam2)])
        der.step("spectral_trace_d2", eq(tr2, ev2), by="identically_zero",
                 why=r"$\mathrm{tr}\, S = \sum_i \lambda_i$, $\mathrm{tr}(S^2) = \sum_i \lambda_i^2$ for "
                     r"$S = Q \Lambda Q^\top$ ($Q$ a Cayley rotation)", uses=["subspaces"])
        a, b, c = sp.symbols("a b c", real=True)
        lam3 = sp.symbols("lambda_1:4", real=True)
        skew = sp.Matrix([[0, -a, -b], [a, 0, -c], [b, c, 0]])
        q3 = (sp.eye(3) - skew) * (sp.eye(3) + skew).inv()
        s3 = q3 * sp.diag(*lam3) * q3.T
        der.step("spectral_trace_d3", eq(sp.Matrix([s3.trace(), (s3 * s3).trace()]),
                                         sp.Matrix([sum(lam3), sum(x ** 2 for x in lam3)])), by="rational",
                 why=r"the same with an exact Cayley rotation of $\mathbb{R}^3$", uses=["subspaces"])
        for n in CS_DIMS:
            lam = sp.symbols(f"lambda_1:{n + 1}", real=True)
            mean = sum(lam) / n
            der.step(f"cauchy_schwarz_d{n}", ge(sum(x ** 2 for x in lam), sum(lam) ** 2 / n), by="certificate",
                     certificate=sum((x - mean) ** 2 for x in lam),
                     why=rf"$\sum_i \lambda_i^2 - (\sum_i \lambda_i)^2 / d = \sum_i (\lambda_i - \bar{{\lambda}})^2 "
                         rf"\ge 0$, equality if and only if $S = (\mathrm{{tr}}\, S / d) I$ ($d = {n}$)",
                     uses=["subspaces"])
        i = sp.Symbol("i", integer=True, positive=True)
        lam = sp.IndexedBase("lambda", real=True)
        j = sp.Symbol("j", integer=True, positive=True)
        l1, l2 = sp.Sum(lam[i], (i, 1, d)), sp.Sum(lam[i] ** 2, (i, 1, d))
        cert = sp.Sum((lam[i] - sp.Sum(lam[j], (j, 1, d)) / d) ** 2, (i, 1, d))   # Σ_i (λ_i − mean λ)²
        der.step("cauchy_schwarz_general_d", ge(l2, l1 ** 2 / d), by="certificate", certificate=cert,
                 why=r"general $d$: $\sum_i (\lambda_i - \mu)^2 = \sum_i \lambda_i^2 - 2 \mu \sum_i \lambda_i + d \mu^2 "
                     r"\ge 0$, and at $\mu = \sum_i \lambda_i / d$ this is $\sum_i \lambda_i^2 - (\sum_i \lambda_i)^2/d$",
                 uses=["subspaces"])
        # R = (tr S² − H d_k)/d_k ≥ ((H d_k)²/d − H d_k)/d_k = H(H d_k/d − 1).
        r_of_t2 = (T2 - H * d_k) / d_k
        r_lb = H * (H * d_k / d - 1)
        der.step("pair_sum_bound", ge(r_of_t2.subs(T2, (H * d_k) ** 2 / d + gamma), r_lb), by="certificate",
                 certificate=gamma / d_k,
                 why=r"$R = (\mathrm{tr}(S^2) - \sum_h \mathrm{tr}(P_h^2)) / d_k$ with $\mathrm{tr}\, S = H d_k$, "
                     r"$\mathrm{tr}(S^2) = (H d_k)^2 / d + \gamma$, $\gamma \ge 0$",
                 uses=["subspaces"])
        K = sp.Symbol("K", integer=True, positive=True)     # H − 1 ≥ 1
        s1, s2_ = sp.symbols("s_1 s_2", nonnegative=True)
        hdi_of_r = 1 - R / (H * (H - 1))
        ub = 1 - (H * d_k / d - 1) / (H - 1)
        der.step("hdi_bound_frame", le(hdi_of_r.subs(R, r_lb + s1).subs(H, K + 1), ub.subs(H, K + 1)),
                 by="certificate", certificate=s1 / ((K + 1) * K),
                 why=r"$R = R_{\min} + s_1$, $s_1 \ge 0$, so $\mathrm{HDI} \le 1 - (H d_k/d - 1)/(H - 1)$",
                 uses=["subspaces"])
        der.step("hdi_bound_trivial", le(hdi_of_r.subs(R, s2_).subs(H, K + 1), 1), by="certificate",
                 certificate=s2_ / ((K + 1) * K), why=r"$R \ge 0$, so $\mathrm{HDI} \le 1$", uses=["subspaces"])
        x = sp.Symbol("x", real=True)
        der.step("min_of_bounds", eq(sp.Min(1, 1 - x), 1 - sp.Max(0, x)), by="piecewise",
                 why=r"combining both bounds: $\mathrm{HDI} \le 1 - \max(0, (H d_k/d - 1)/(H - 1))$",
                 uses=["subspaces"])
        bound = hdi_bound_expr()
        der.result("hdi_bound", bound, args=(H, d_k, d),
                   description=r"upper bound on $\mathrm{HDI}$ over all subspace configurations ($H \ge 2$); attained "
                               r"by orthogonal subspaces ($H d_k \le d$) or a tight fusion frame where one exists",
                   uses=["subspaces"], domain={H: (2, 64), d_k: (1, 64), d: (64, 128)}, codegen=("numpy",))
        rmin = H * sp.Max(0, H * d_k / d - 1)
        der.result("min_overlap_potential", d_k * rmin, args=(H, d_k, d),
                   description=r"lower bound on $\Phi = \sum_{h \ne h'} \lVert U_h^\top U_{h'} \rVert_F^2$: "
                               r"$\max(0, H d_k (H d_k/d - 1))$; the minimum where orthogonal subspaces or a tight "
                               r"fusion frame exist (not always: $(H, d_k, d) = (2, 2, 3)$ has $\min \Phi = 2 > 4/3$)",
                   uses=["subspaces"], codegen=("numpy",))
        min_mse = B ** 2 + V / H + V / H * sp.Max(0, H * d_k / d - 1)
        der.step("min_mse", eq(sp.Subs(mse_r, R, rmin), min_mse), by="expand",
                 why=r"the model MSE at the smallest pair sum", uses=base)
        der.step("min_mse_regimes", eq(min_mse, B ** 2 + V / H * sp.Max(1, H * d_k / d)), by="piecewise",
                 why=r"$= B^2 + V \max(1/H, d_k/d)$: $B^2 + V/H$ if $H d_k \le d$, else $B^2 + V d_k/d$ (independent "
                     "of $H$)", uses=base)
        der.result("min_mse", min_mse, args=(B, V, H, d_k, d),
                   description=r"lower bound on the model MSE over subspaces, $B^2 + V \max(1/H, d_k/d)$; attained where "
                               "`min_overlap_potential` is", uses=base, codegen=("numpy",))
    e = sp.Symbol("e", positive=True)
    der.step("orthogonality_infeasible", gt((d_k * rmin).subs(d, H * d_k / (1 + e)), 0), by="nonneg",
             why=r"$H d_k > d$, so $\Phi \ge H d_k (H d_k/d - 1) > 0$: no mutually orthogonal configuration (also: "
                 r"stacked orthonormal blocks would need $H d_k \le d$ columns in $\mathbb{R}^d$)", uses=["subspaces"])


def _tight_frames(der: Derivation) -> None:
    bound = hdi_bound_expr()
    for H_, dk, dim in TIGHT_FRAMES:
        ps = [_proj(w) for w in _tight_frame(H_, dk, dim)]
        tag = f"H{H_}_dk{dk}_d{dim}"
        ratio = sp.Rational(H_ * dk, dim)
        der.step(f"tight_frame_{tag}", eq(sp.MatAdd(*[sp.ImmutableMatrix(sp.simplify(pp)) for pp in ps]),
                                          ratio * sp.eye(dim)),
                 by="simplify", why=rf"$(H, d_k, d) = ({H_}, {dk}, {dim})$: $S = \sum_h P_h = (H d_k/d) I = "
                                    rf"{sp.latex(ratio)}\, I$", uses=["subspaces"])
        r = sum((ps[a] * ps[b]).trace() / dk for a in range(H_) for b in range(H_) if a != b)
        der.step(f"tight_frame_{tag}_hdi",
                 eq(sp.Subs(1 - R / (H * (H - 1)), (R, H), (sp.nsimplify(sp.simplify(r)), H_)),
                    sp.Subs(bound, (H, d_k, d), (H_, dk, dim))), by="simplify",
                 why=r"its $\mathrm{HDI}$, with $R = \sum_{h \ne h'} \mathrm{tr}(P_h P_{h'}) / d_k$ from the exact "
                     "projectors, equals the bound", uses=["subspaces"])


def _not_always_attained(der: Derivation) -> None:
    u = sp.symbols("u_1:3", real=True)
    v = sp.symbols("v_1:3", real=True)

    def unit(p: tuple) -> sp.Matrix:  # inverse stereographic projection: every plane's unit normal
        r2 = p[0] ** 2 + p[1] ** 2
        return sp.Matrix([2 * p[0], 2 * p[1], 1 - r2]) / (1 + r2)

    n1, n2 = unit(u), unit(v)
    der.step("stereographic_unit", eq(sp.Matrix([n1.dot(n1), n2.dot(n2)]), sp.Matrix([1, 1])), by="simplify",
             why=r"$n$ and $-n$ give the same plane, so these normals reach every plane of $\mathbb{R}^3$",
             uses=["subspaces"])
    p1, p2 = sp.eye(3) - n1 * n1.T, sp.eye(3) - n2 * n2.T
    dot = n1.dot(n2)
    der.step("two_planes_trace", eq((p1 * p2).trace(), 1 + dot ** 2), by="simplify",
             why=r"$\mathrm{tr}(P_1 P_2) = 3 - 1 - 1 + (n_1 \cdot n_2)^2$", uses=["subspaces"])
    der.step("two_planes_potential", ge(2 * (1 + dot ** 2), 2), by="certificate", certificate=2 * dot ** 2,
             why=r"$(H, d_k, d) = (2, 2, 3)$: $\Phi = 2 \mathrm{tr}(P_1 P_2) \ge 2$ (two planes share a line), attained "
                 "at orthogonal normals", uses=["subspaces"])
    der.step("two_planes_above_bound", gt(2, 2 * 2 * (sp.Rational(2 * 2, 3) - 1)), by="nonneg",
             why=r"$\min \Phi = 2 > H d_k (H d_k/d - 1) = 4/3$: the fusion-frame bound is not reached",
             uses=["subspaces"])
