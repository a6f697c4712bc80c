"""C4: the Head Diversity Index - the literal formula versus the subspace form.

Literal (as the summary writes it): ``HDI_lit = 1 - 2/(H(H-1)) Σ_{h<h'} ||G_hh'||_F²`` with
``G_hh' = W_hᵀ W_h' / d_k`` on the raw key projections ``W_h ∈ R^{d x d_k}``.
Subspace form: ``HDI_sub = 1 - mean_{h<h'} ρ_hh'``, ``ρ_hh' = ||U_hᵀ U_h'||_F² / d_k`` with U_h an
orthonormal basis of Range(W_h).

Derived: ``||W_hᵀW_h'||_F²`` is invariant under ``W_h -> W_h Q`` (Q orthogonal) but scales by c⁴
under ``W -> cW``, so HDI_lit is scale dependent and not in [0, 1] (it is always <= 1); identical
heads with orthonormal columns give HDI_lit = 1 - 1/d_k, not 0. For isotropic heads
``W_hᵀW_h = c² I`` one has ``HDI_lit = 1 - (c⁴/d_k) mean ρ``: the literal and subspace forms agree
exactly when ``c = d_k^{1/4}``, i.e. ``W_hᵀW_h = sqrt(d_k) I`` (not ``d_k I``, which gives
1 - d_k mean ρ). ρ = mean cos² of the principal angles lies in [0, 1] (I - MᵀM is a Gram matrix),
and ρ depends only on the subspaces (projectors unchanged by W -> WA, A invertible).

General sizes are checked with MatrixSymbols (``Trace._normalize`` for cyclicity, ``refine`` with
``Q.orthogonal``, substitution ``UᵀU -> I``); small explicit sizes independently with entries.
"""

from __future__ import annotations

import sympy as sp

from .core import Derivation, trace_equal
from .notation import d, d_k

__all__ = ["build", "STATED", "rotation2", "projector", "trace_equal"]

STATED = ("HDI = 1 − 2/(H(H−1)) Σ_{h<h'} ||G_hh'||_F², G_hh' = (W_K^h)ᵀ W_K^h' / d_k; "
          "0 for identical heads, 1 for orthogonal ones.")

dk_i = sp.Symbol("d_k", integer=True, positive=True)   # d_k as a matrix size
c = sp.Symbol("c", positive=True)


def rotation2(t):
    """2x2 rotation, rational (Cayley) parametrisation: every rotation but the half turn."""
    den = 1 + t**2
    return sp.Matrix([[(1 - t**2) / den, -2 * t / den], [2 * t / den, (1 - t**2) / den]])


def projector(W: sp.Matrix) -> sp.Matrix:
    """Orthogonal projector onto Range(W) (full column rank): W (WᵀW)⁻¹ Wᵀ, via the adjugate."""
    gram = W.T * W
    return W * gram.adjugate() * W.T / gram.det()


def _frob2(X: sp.Matrix):
    return sum(e**2 for e in X)


def _mat(name: str, rows: int, cols: int) -> sp.Matrix:
    return sp.Matrix(rows, cols, lambda a, b: sp.Symbol(f"{name}_{a+1}{b+1}", real=True))


def build() -> Derivation:
    dv = Derivation("C4", "Head Diversity Index: literal formula vs subspace form", STATED)
    dv.assume("literal", "HDI_lit = 1 - 2/(H(H-1)) Σ_{h<h'} ||W_hᵀW_h'/d_k||_F², W_h ∈ R^{d x d_k}",
              kind="setting")
    dv.assume("subspace", "U_h orthonormal basis of Range(W_h) (U_hᵀU_h = I); ρ_hh' = ||U_hᵀU_h'||_F²/d_k; "
              "HDI_sub = 1 - mean_{h<h'} ρ_hh'", kind="setting")
    dv.assume("frobenius", "||X||_F² = tr(XᵀX) = sum of squared entries; tr is cyclic", kind="setting")
    dv.assume("orthogonal", "Q orthogonal: QᵀQ = QQᵀ = I", kind="setting")
    dv.assume("gram_psd", "a Gram matrix BᵀB is symmetric positive semidefinite (real eigenvalues >= 0)",
              kind="setting")
    dv.assume("invertible", "W_h has full column rank and A is invertible (d_k x d_k)", kind="setting")
    dv.assume("isotropic_heads", "W_hᵀW_h = c² I_{d_k} for every head, one c > 0", kind="model")
    dv.assume("quarter_scale", "c = d_k^{1/4}, i.e. W_hᵀW_h = sqrt(d_k) I", kind="model")

    # 1. Frobenius norm is invariant under orthogonal factors on both sides
    Q1, Q2 = sp.MatrixSymbol("Q1", dk_i, dk_i), sp.MatrixSymbol("Q2", dk_i, dk_i)
    Mg = sp.MatrixSymbol("M", dk_i, dk_i)
    X = Q1.T * Mg * Q2
    orth = sp.Q.orthogonal(Q1) & sp.Q.orthogonal(Q2)
    dv.step("frobenius_orthogonal_invariance", sp.Eq(sp.Trace(X.T * X), sp.Trace(Mg.T * Mg), evaluate=False),
            by="trace_cyclic", assumptions=orth,
            why="||Q_1ᵀ M Q_2||² = ||M||² for orthogonal Q_1, Q_2 (symbolic d_k)", uses=["frobenius", "orthogonal"])
    M2 = _mat("M", 2, 2)
    t1, t2 = sp.symbols("t_1 t_2", real=True)
    refl = sp.diag(1, -1)
    for nm, A, B in (("rotations", rotation2(t1), rotation2(t2)), ("reflection", rotation2(t1) * refl, rotation2(t2))):
        lhs, rhs = _frob2(A.T * M2 * B), _frob2(M2)
        dv.step(f"frobenius_orthogonal_invariance_dk2_{nm}", sp.Eq(lhs, rhs, evaluate=False),
                by="identically_zero",
                why=f"explicit 2x2 M, Q_1, Q_2 {nm} (rational parametrisation)", uses=["frobenius", "orthogonal"])

    # 2. literal: invariant under W -> WQ, scales by c⁴ under W -> cW
    W1, W2 = sp.MatrixSymbol("W1", d, dk_i), sp.MatrixSymbol("W2", d, dk_i)
    cross = (W1 * Q1).T * (W2 * Q2)
    dv.step("cross_gram_rotated", sp.Eq(sp.MatMul(sp.Transpose(W1 * Q1), W2 * Q2), Q1.T * (W1.T * W2) * Q2,
                                        evaluate=False), by="matrix_expand",
            why="(W_1Q_1)ᵀ(W_2Q_2) = Q_1ᵀ(W_1ᵀW_2)Q_2", uses=["literal"])
    Gq = cross.doit()
    dv.step("literal_invariant_orthogonal", sp.Eq(sp.Trace(Gq.T * Gq), sp.Trace((W1.T * W2).T * (W1.T * W2)),
                                                  evaluate=False),
            by="trace_cyclic", assumptions=orth,
            why="||(W_1Q_1)ᵀ(W_2Q_2)||² = ||W_1ᵀW_2||²", uses=["literal", "frobenius", "orthogonal"])
    Gc = sp.MatMul(sp.Transpose(c * W1), c * W2)          # (cW_1)ᵀ(cW_2), unevaluated
    fro_c, fro_1 = sp.Trace(sp.MatMul(sp.Transpose(Gc), Gc)), sp.Trace((W1.T * W2).T * (W1.T * W2)).doit()
    dv.step("literal_scales_c4", sp.Eq(fro_c, c**4 * fro_1, evaluate=False), by="expand",
            why="||(cW_1)ᵀ(cW_2)||² = c⁴||W_1ᵀW_2||²; hence 1 - HDI_lit(cW) = c⁴ (1 - HDI_lit(W))",
            uses=["literal", "frobenius"])

    # 3. range: HDI_lit <= 1 always, unbounded below (exact counterexample)
    Wa, Wb = _mat("Wa", 3, 2), _mat("Wb", 3, 2)
    lit_h2 = 1 - _frob2(Wa.T * Wb / 2)
    dv.step("literal_at_most_one", sp.Ge(1, lit_h2, evaluate=False), by="certificate",
            certificate=_frob2(Wa.T * Wb / 2),
            why="1 - HDI_lit is a sum of squares (H = 2, d = 3, d_k = 2, symbolic entries; any H: a mean of "
                "squared Frobenius norms)", uses=["literal", "frobenius"])
    Wc, dk1 = sp.Matrix([[2]]), 1
    lit_cex = 1 - _frob2(Wc.T * Wc / dk1)
    w1s, w2s, dks = sp.symbols("w_1 w_2 d_k", real=True)     # H = 2, d = d_k = 1: W_h = (w_h)
    dv.step("literal_below_zero", sp.Eq(sp.Subs(1 - (w1s * w2s / dks) ** 2, (w1s, w2s, dks), (2, 2, dk1)), -15,
                                        evaluate=False), by="expand",
            why="H = 2, d = d_k = 1, W_1 = W_2 = (2): G = 4, HDI_lit = 1 - 16 = -15", uses=["literal"])

    # 4. identical heads with orthonormal columns: literal 1 - 1/d_k, subspace 0
    Id = sp.Identity(dk_i)
    fro_id = sp.Trace(sp.MatMul(sp.Transpose(Id), Id)) / dk_i**2      # ||I/d_k||² = tr(IᵀI)/d_k²
    dv.step("identical_orthonormal_literal", sp.Eq(1 - fro_id, 1 - 1 / dk_i, evaluate=False), by="simplify",
            why="W_h = U (UᵀU = I) for all h: G = I/d_k, ||G||² = d_k/d_k² = 1/d_k, HDI_lit = 1 - 1/d_k",
            uses=["literal", "frobenius"])
    rho_id = sp.Trace(sp.MatMul(sp.Transpose(Id), Id)) / dk_i
    dv.step("identical_subspace", sp.Eq(1 - rho_id, 0, evaluate=False), by="simplify",
            why="ρ = ||UᵀU||²/d_k = ||I||²/d_k = 1, HDI_sub = 0", uses=["subspace", "frobenius"])
    I2 = sp.eye(2)
    A2, B2 = _mat("A", 2, 2), _mat("B", 2, 2)
    lit_i2 = sp.Subs(1 - _frob2(A2.T * B2 / 2), (*A2, *B2), (*I2, *I2))     # HDI_lit(A, B) at A = B = I_2
    dv.step("identical_counterexample", sp.Eq(lit_i2, sp.Rational(1, 2), evaluate=False), by="expand",
            why="d = d_k = 2, W_1 = W_2 = I_2: HDI_lit = 1/2 (subspace form: 0)", uses=["literal"])
    G2 = _mat("G", 2, 2)
    dv.step("orthogonal_heads_literal_and_subspace",
            sp.Eq(sp.Subs(1 - _frob2(G2), tuple(G2), (0,) * 4), 1, evaluate=False),
            by="expand", why="U_hᵀU_h' = 0 (or W_hᵀW_h' = 0): G = 0, ρ = 0, both forms give 1 at any scale",
            uses=["literal", "subspace"])

    # 5. isotropic heads W_h = c U_h: ||G||² = (c⁴/d_k) ρ; literal = subspace iff c = d_k^{1/4}
    Wg = sp.MatrixSymbol("W", d, dk_i)
    Ug = (Wg / c)
    dv.step("isotropic_basis", sp.Eq(sp.MatMul(sp.Transpose(Ug), Ug), Id, evaluate=False), by="matrix_expand",
            given={Wg.T * Wg: c**2 * Id},
            why="W_hᵀW_h = c²I  =>  U_h = W_h/c has orthonormal columns and spans Range(W_h)",
            uses=["isotropic_heads", "subspace"])
    U1, U2 = sp.MatrixSymbol("U1", d, dk_i), sp.MatrixSymbol("U2", d, dk_i)
    Giso = sp.MatMul(sp.Transpose(c * U1), c * U2) / dk_i
    fro_iso = sp.Trace(sp.MatMul(sp.Transpose(Giso), Giso))
    rho12 = sp.Trace((U1.T * U2).T * (U1.T * U2)).doit() / dk_i
    dv.step("isotropic_literal_term", sp.Eq(fro_iso, c**4 / dk_i * rho12, evaluate=False), by="simplify",
            why="G_hh' = c² U_hᵀU_h'/d_k, ||G_hh'||² = (c⁴/d_k) ρ_hh'",
            uses=["isotropic_heads", "literal", "subspace"])
    rbar = sp.Symbol("rho_bar", nonnegative=True)
    lit_iso = 1 - c**4 / d_k * rbar
    sub = 1 - rbar
    dv.step("isotropic_literal_vs_subspace", sp.Eq(lit_iso - sub, rbar * (1 - c**4 / d_k), evaluate=False),
            by="expand", why="HDI_lit - HDI_sub = mean ρ (1 - c⁴/d_k): zero for every configuration iff c⁴ = d_k",
            uses=["isotropic_heads", "literal", "subspace"])
    dv.step("matching_scale", sp.Eq(c, d_k ** sp.Rational(1, 4), evaluate=False), by="solve",
            equation=sp.Eq(c**4, d_k, evaluate=False),
            why="the positive root of c⁴ = d_k: W_hᵀW_h = sqrt(d_k) I", uses=["isotropic_heads"])
    dv.step("literal_equals_subspace", sp.Eq(sp.Subs(lit_iso, c, d_k ** sp.Rational(1, 4)), sub, evaluate=False),
            by="expand", why="with W_hᵀW_h = sqrt(d_k) I the two forms agree exactly",
            uses=["isotropic_heads", "quarter_scale", "literal", "subspace"])
    dv.step("dk_normalisation_gives_1_minus_dk_rho", sp.Eq(sp.Subs(lit_iso, c, sp.sqrt(d_k)), 1 - d_k * rbar,
                                                           evaluate=False),
            by="expand", why="W_hᵀW_h = d_k I (c = sqrt(d_k)) gives HDI_lit = 1 - d_k mean ρ, not HDI_sub",
            uses=["isotropic_heads", "literal", "subspace"])
    # only c = d_k^{1/4} works when head scales may differ (H = 3, overlaps > 0): c_h c_h' = sqrt(d_k)... per pair
    ch = sp.symbols("c_1:4", positive=True)
    dv.step("equal_scales_forced", sp.Eq(sp.Tuple(*ch), sp.Tuple(*[d_k ** sp.Rational(1, 4)] * 3), evaluate=False),
            by="solve", equation=[sp.Eq(ch[0]**2 * ch[1]**2, d_k), sp.Eq(ch[0]**2 * ch[2]**2, d_k),
                                  sp.Eq(ch[1]**2 * ch[2]**2, d_k)],
            why="W_hᵀW_h = c_h² I: pair (h,h') needs c_h²c_h'² = d_k; for three heads with nonzero overlaps "
                "this forces c_1 = c_2 = c_3 = d_k^{1/4}", uses=["literal", "subspace"])

    # explicit end-to-end check (d = 3, d_k = 2, H = 2): W_h = 2^{1/4} U_h R(t_h)
    a, b_, cc, e = sp.symbols("a b cq e", real=True)
    nq = a**2 + b_**2 + cc**2 + e**2
    rot3 = sp.Matrix([[a**2 + b_**2 - cc**2 - e**2, 2 * (b_ * cc - a * e), 2 * (b_ * e + a * cc)],
                      [2 * (b_ * cc + a * e), a**2 - b_**2 + cc**2 - e**2, 2 * (cc * e - a * b_)],
                      [2 * (b_ * e - a * cc), 2 * (cc * e + a * b_), a**2 - b_**2 - cc**2 + e**2]]) / nq
    Ue1 = sp.Matrix([[1, 0], [0, 1], [0, 0]])
    Ue2 = rot3[:, :2]
    sc = sp.Integer(2) ** sp.Rational(1, 4)
    We1, We2 = sc * Ue1 * rotation2(t1), sc * Ue2 * rotation2(t2)
    lit_e = 1 - _frob2(We1.T * We2 / 2)
    sub_e = 1 - _frob2(Ue1.T * Ue2) / 2
    dv.step("literal_equals_subspace_explicit", sp.Eq(lit_e, sub_e, evaluate=False), by="rational",
            why="U_2 = first two columns of a general rotation of R³ (quaternion), any Q_h rotations; "
                "exact at random rational points (a full cancel takes ~10 s)",
            uses=["quarter_scale", "literal", "subspace", "orthogonal"])

    # 6. ρ ∈ [0, 1]: ρ = mean σ_i² (σ_i = cos θ_i), and I - MᵀM is a Gram matrix
    Mx = U1.T * U2
    Bm = U2 - U1 * (U1.T * U2)
    dv.step("one_minus_cos2_is_gram", sp.Eq(Bm.T * Bm, Id - Mx.T * Mx, evaluate=False), by="matrix_expand",
            given={U1.T * U1: Id, U2.T * U2: Id},
            why="((I - U_1U_1ᵀ)U_2)ᵀ((I - U_1U_1ᵀ)U_2) = I - MᵀM with M = U_1ᵀU_2: the eigenvalues "
                "σ_i² = cos²θ_i of MᵀM lie in [0, 1]", uses=["subspace", "gram_psd"])
    s1, s2 = sp.symbols("sigma_1 sigma_2", nonnegative=True)
    svd = rotation2(t1) * sp.diag(s1, s2) * rotation2(t2).T
    dv.step("rho_is_mean_cos2_dk2", sp.Eq(_frob2(svd) / 2, (s1**2 + s2**2) / 2, evaluate=False),
            by="identically_zero",
            why="ρ = ||P diag(σ) Rᵀ||²/d_k = mean σ_i² (d_k = 2, rotations P, R)",
            uses=["subspace", "orthogonal"])
    lam = sp.IndexedBase("lambda", nonnegative=True)
    nu = sp.IndexedBase("nu", nonnegative=True)          # nu_i = 1 - lambda_i >= 0
    i_ = sp.Symbol("i", integer=True, positive=True)
    rho_sum = sp.Sum(lam[i_], (i_, 1, dk_i)) / dk_i
    dv.step("rho_nonnegative", sp.Ge(rho_sum, 0, evaluate=False), by="nonneg",
            why="ρ = (1/d_k) Σ λ_i with λ_i = σ_i² >= 0", uses=["subspace", "gram_psd"])
    dv.step("rho_at_most_one", sp.Ge(1 - sp.Sum(1 - nu[i_], (i_, 1, dk_i)) / dk_i, 0, evaluate=False),
            by="certificate", certificate=sp.Sum(nu[i_], (i_, 1, dk_i)) / dk_i,
            why="1 - ρ = (1/d_k) Σ (1 - λ_i), each 1 - λ_i >= 0 (eigenvalues of the Gram matrix I - MᵀM)",
            uses=["subspace", "gram_psd"])

    # 7. ρ depends only on the subspaces: ρ = tr(P_1 P_2)/d_k and P(WA) = P(W)
    dv.step("rho_is_projector_trace", sp.Eq(sp.Trace(Mx.T * Mx), sp.Trace(U1 * U1.T * U2 * U2.T), evaluate=False),
            by="trace_cyclic",
            why="||U_1ᵀU_2||² = tr(U_2ᵀU_1U_1ᵀU_2) = tr(P_1P_2), P_h = U_hU_hᵀ the projector onto Range(W_h)",
            uses=["subspace", "frobenius"])
    Xs, Ys, Zs = (sp.MatrixSymbol(nm, dk_i, dk_i) for nm in ("X", "Y", "Z"))
    dv.step("inverse_of_product", sp.Eq(sp.Inverse(Xs * Ys * Zs), Zs.I * Ys.I * Xs.I, evaluate=False),
            by="inverse",
            why="(XYZ)(Z⁻¹Y⁻¹X⁻¹) = I for invertible square X, Y, Z (symbolic d_k)", uses=["invertible"])
    Wg2, Ag = sp.MatrixSymbol("W", d, dk_i), sp.MatrixSymbol("A", dk_i, dk_i)
    WA = Wg2 * Ag
    P_WA = sp.MatMul(WA, sp.Inverse(sp.MatMul(sp.Transpose(WA), WA)), sp.Transpose(WA))   # P(WA), unevaluated
    P_W = Wg2 * (Wg2.T * Wg2).I * Wg2.T
    dv.step("projector_invariant", sp.Eq(P_WA, P_W, evaluate=False), by="matrix_expand",
            given={sp.Inverse(Ag.T * Wg2.T * Wg2 * Ag): Ag.I * (Wg2.T * Wg2).I * Ag.T.I},
            why="WA ((WA)ᵀWA)⁻¹ (WA)ᵀ = W (WᵀW)⁻¹ Wᵀ for invertible A (symbolic sizes): HDI_sub is "
                "invariant under W_K^h -> W_K^h A, while HDI_lit is not (step literal_scales_c4)",
            uses=["subspace", "invertible"])
    dv.step("pair_symmetric", sp.Eq(sp.Trace((W1.T * W2).T * (W1.T * W2)), sp.Trace((W2.T * W1).T * (W2.T * W1)),
                                    evaluate=False),
            by="trace_cyclic",
            why="||G_hh'|| = ||G_h'h||: both forms are symmetric in each pair, hence invariant under "
                "permuting heads", uses=["literal", "frobenius"])

    # results
    hdi, mrho = sp.symbols("hdi mean_rho", real=True)
    dk_dom = {d_k: (1, 1024)}
    dv.result("literal_identical_orthonormal", 1 - 1 / d_k, args=(d_k,), uses=["literal"], domain=dk_dom,
              description="HDI_lit for identical heads with orthonormal columns (the stated value is 0)")
    dv.result("literal_scaled", 1 - c**4 * (1 - hdi), args=(hdi, c), uses=["literal"],
              domain={hdi: (-10, 1), c: (0.1, 10)},
              description="HDI_lit of (cW_1, ..., cW_H) given HDI_lit of (W_1, ..., W_H)")
    dv.result("literal_isotropic", 1 - c**4 * mrho / d_k, args=(mrho, c, d_k),
              uses=["literal", "subspace", "isotropic_heads"], domain={mrho: (0, 1), c: (0.1, 10), **dk_dom},
              description="HDI_lit when W_hᵀW_h = c²I, in terms of mean ρ")
    dv.result("matching_scale", d_k ** sp.Rational(1, 4), args=(d_k,), uses=["isotropic_heads"], domain=dk_dom,
              description="c with W_hᵀW_h = c²I at which HDI_lit = HDI_sub")
    dv.result("rho_dk2", (s1**2 + s2**2) / 2, args=(s1, s2), uses=["subspace"], domain={s1: (0, 1), s2: (0, 1)},
              description="ρ from the principal-angle cosines (d_k = 2)")
    w1e, w2e = Wa, Wb
    flat = [*w1e, *w2e]
    # well-conditioned heads for sampling: dominant "diagonal" entries, small others (full column rank)
    w_dom = {x: ((2, 3) if (i % 2 == i // 2) else (-0.5, 0.5)) for W_ in (w1e, w2e) for i, x in enumerate(W_)}
    dv.result("literal_hdi_h2_d3dk2", 1 - _frob2(w1e.T * w2e / 2), args=tuple(flat), uses=["literal"], domain=w_dom,
              description="HDI_lit for H = 2, d = 3, d_k = 2 (row-major entries of W_1 then W_2)")
    P1, P2 = projector(w1e), projector(w2e)
    dv.result("subspace_hdi_h2_d3dk2", 1 - (P1 * P2).trace() / 2, args=tuple(flat), uses=["subspace"], domain=w_dom,
              description="HDI_sub = 1 - tr(P_1P_2)/d_k for H = 2, d = 3, d_k = 2 (full column rank)")
    dv.result("counterexample_below_zero", lit_cex, codegen=False, uses=["literal"],
              description="HDI_lit = -15 for H = 2, d = d_k = 1, W_1 = W_2 = (2)")

    # findings
    dv.compare("literal_in_unit_interval", stated="HDI ∈ [0, 1] (0 identical, 1 orthogonal)",
               derived="HDI_lit <= 1 always but unbounded below: 1 - HDI_lit scales by c⁴ under W -> cW; "
                       "H = 2, d = d_k = 1, W_1 = W_2 = (2) gives -15",
               holds=False, method="steps literal_scales_c4, literal_at_most_one, literal_below_zero",
               uses=["literal"])
    dv.compare("identical_heads_give_zero", stated="HDI = 0 for identical heads",
               derived="literal: 1 - 1/d_k for identical orthonormal heads (1/2 for W_1 = W_2 = I_2), "
                       "1 - d_k for W_hᵀW_h = d_k I; subspace form: 0",
               holds=False, method="steps identical_orthonormal_literal, identical_counterexample, identical_subspace",
               uses=["literal", "subspace"])
    dv.compare("orthogonal_heads_give_one", stated="HDI = 1 for orthogonal heads",
               derived="both forms give 1 when W_hᵀW_h' = 0 for h ≠ h', at any scale",
               holds=True, method="step orthogonal_heads_literal_and_subspace", uses=["literal", "subspace"])
    dv.compare("literal_equals_subspace_when", stated="the literal formula measures subspace overlap",
               derived="only for W_hᵀW_h = sqrt(d_k) I (c = d_k^{1/4}); then HDI_lit = 1 - mean ρ exactly. "
                       "W_hᵀW_h = d_k I gives 1 - d_k mean ρ; orthonormal W_h give 1 - mean ρ/d_k",
               holds=False, method="steps isotropic_literal_term .. literal_equals_subspace_explicit",
               uses=["literal", "subspace", "isotropic_heads", "quarter_scale"])
    dv.compare("subspace_form_properties", stated="diversity index in [0, 1], invariant, 0 identical, 1 orthogonal",
               derived="HDI_sub = 1 - mean ρ: ρ = mean cos²θ ∈ [0, 1], depends only on Range(W_h) "
                       "(W -> WA invariant), symmetric in each pair; 0 for identical, 1 for orthogonal subspaces",
               holds=True, method="steps rho_*, projector_invariant, identical_subspace, pair_symmetric",
               uses=["subspace", "gram_psd", "orthogonal", "frobenius"])
    return dv
