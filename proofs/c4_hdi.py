"""C4: the Head Diversity Index - the literal formula versus the subspace form.

Literal: ``HDI_lit = 1 - 2/(H(H-1)) Σ_{h<h'} ||W_hᵀ W_h' / d_k||_F²`` on the raw key projections.
Subspace form: ``HDI_sub = 1 - mean_{h<h'} ρ_hh'``, ``ρ_hh' = ||U_hᵀ U_h'||_F² / d_k`` with U_h an
orthonormal basis of Range(W_h). The literal form scales by c⁴ under ``W -> cW``, leaves [0, 1] and
is ``1 - 1/d_k`` for identical orthonormal heads; for ``W_hᵀW_h = c² I`` it is the subspace form
exactly when ``c = d_k^{1/4}``. ρ lies in [0, 1] and depends only on the subspaces. General sizes
are checked with MatrixSymbols, small explicit sizes independently with entries.
"""

from __future__ import annotations

import sympy as sp

from .core import Derivation, eq, ge, gt, lt
from .notation import d, d_k, entries, spell

__all__ = ["build", "CLAIM", "TITLE", "STATED", "rotation2", "projector", "RESTORING_GRAM"]

CLAIM = "C4"
TITLE = "Head Diversity Index: literal formula vs subspace form"
STATED = (r"$\mathrm{HDI} = 1 - \frac{2}{H (H - 1)} \sum_{h < h'} \lVert G_{hh'} \rVert_F^2$, "
          r"$G_{hh'} = (W_K^h)^\top W_K^{h'}/d_k$; $0$ for identical heads, $1$ for orthogonal ones.")

#: The correction's derived form: the Gram matrix of every head under which the literal formula is
#: the subspace form (markup).
RESTORING_GRAM = r"$W_h^\top W_h = \sqrt{d_k} I$"

dk_i = sp.Symbol("d_k", integer=True, positive=True)   # d_k as a matrix size
c = sp.Symbol("c", positive=True)

# how the multi-letter names print (notation.spell)
spell(rho_bar=r"\bar{\rho}", mean_rho=r"\bar{\rho}", hdi=r"\mathrm{HDI}_{\mathrm{lit}}")
# the entries of the two heads' key projections (3 x 2), printed W_{1,11}, W_{2,11}, ... (spelled on import)
KEY_ENTRIES = entries("Wa", 3, 2, "W_{1,#}"), entries("Wb", 3, 2, "W_{2,#}")


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


def _define(dv: Derivation) -> None:
    dv.define(c=r"a common scale of the heads ($W_h^\top W_h = c^2 I$)", c_=r"the scale $c_h$ of head $h$",
              Q1=r"an orthogonal $d_k \times d_k$ matrix $Q_1$", Q2=r"an orthogonal $d_k \times d_k$ matrix $Q_2$",
              M=r"a $d_k \times d_k$ matrix", M_=r"entries of a $2 \times 2$ matrix $M$",
              t_="the parameters of $2 \\times 2$ rotations (Cayley form)",
              W1=r"the key projection $W_1$ of head 1", W2=r"the key projection $W_2$ of head 2",
              W=r"a key projection $W_h$ ($d \times d_k$, full column rank)",
              Wa_=r"entries of the key projection $W_1$", Wb_=r"entries of the key projection $W_2$",
              w_=r"the key projections $W_h = (w_h)$ for $d = d_k = 1$",
              A=r"an invertible $d_k \times d_k$ matrix $A$", A_=r"entries of a $2 \times 2$ matrix $W_1$",
              B_=r"entries of a $2 \times 2$ matrix $W_2$", G_=r"entries of a $2 \times 2$ cross-Gram matrix $G$",
              U1=r"an orthonormal basis $U_1$ of the range of $W_1$",
              U2=r"an orthonormal basis $U_2$ of the range of $W_2$",
              rho_bar=r"the mean overlap $\bar{\rho} = \mathrm{mean}_{h < h'} \rho_{hh'}$",
              mean_rho=r"the mean overlap $\bar{\rho} = \mathrm{mean}_{h < h'} \rho_{hh'}$",
              hdi=r"the literal HDI of $(W_1, \ldots, W_H)$", p_=r"a quaternion $(p_0, p_1, p_2, p_3)$ (a rotation of "
              r"$\mathbb{R}^3$)", sigma_=r"the singular values $\sigma_i = \cos \theta_i$ of $U_1^\top U_2$",
              X=r"an invertible $d_k \times d_k$ matrix", Y=r"an invertible $d_k \times d_k$ matrix",
              Z=r"an invertible $d_k \times d_k$ matrix", i="an index of the principal angles",
              nu=r"the eigenvalues $\nu_i = 1 - \lambda_i \ge 0$ of $I - M^\top M$",
              **{"lambda": r"the eigenvalues $\lambda_i = \sigma_i^2$ of $M^\top M$"})


def build() -> Derivation:
    dv = Derivation(CLAIM, TITLE, STATED, markup=True)
    dv.assume("literal", r"$\mathrm{HDI}_{\mathrm{lit}} = 1 - \frac{2}{H (H - 1)} \sum_{h < h'} "
              r"\lVert W_h^\top W_{h'}/d_k \rVert_F^2$, $W_h \in \mathbb{R}^{d \times d_k}$", kind="setting")
    dv.assume("subspace", r"$U_h$ an orthonormal basis of the range of $W_h$ ($U_h^\top U_h = I$); "
              r"$\rho_{hh'} = \lVert U_h^\top U_{h'} \rVert_F^2/d_k$; "
              r"$\mathrm{HDI}_{\mathrm{sub}} = 1 - \mathrm{mean}_{h < h'} \rho_{hh'}$", kind="setting")
    dv.assume("frobenius", r"$\lVert X \rVert_F^2 = \mathrm{tr}(X^\top X)$, the sum of squared entries; "
              r"$\mathrm{tr}$ is cyclic", kind="setting")
    dv.assume("orthogonal", r"$Q$ orthogonal: $Q^\top Q = Q Q^\top = I$", kind="setting")
    dv.assume("gram_psd", r"a Gram matrix $B^\top B$ is symmetric positive semidefinite (real eigenvalues "
              r"$\ge 0$)", kind="setting")
    dv.assume("invertible", r"$W_h$ has full column rank and $A$ is invertible ($d_k \times d_k$)", kind="setting")
    dv.assume("isotropic_heads", r"$W_h^\top W_h = c^2 I_{d_k}$ for every head, one $c > 0$", kind="model")
    dv.assume("quarter_scale", r"$c = d_k^{1/4}$, that is " + RESTORING_GRAM, kind="model")
    _define(dv)

    Q1, Q2 = sp.MatrixSymbol("Q1", dk_i, dk_i), sp.MatrixSymbol("Q2", dk_i, dk_i)
    orth = sp.Q.orthogonal(Q1) & sp.Q.orthogonal(Q2)
    W1, W2 = sp.MatrixSymbol("W1", d, dk_i), sp.MatrixSymbol("W2", d, dk_i)
    Id = sp.Identity(dk_i)
    U1, U2 = sp.MatrixSymbol("U1", d, dk_i), sp.MatrixSymbol("U2", d, dk_i)
    t1, t2 = sp.symbols("t_1 t_2", real=True)
    Wa, Wb = KEY_ENTRIES
    hdi, mrho = sp.symbols("hdi mean_rho", real=True)
    dk_dom = {d_k: (1, 1024)}

    # the literal formula, as written ---------------------------------------------------------------
    with dv.group("literal", r"the literal formula on raw weights depends on their scale, is not $0$ for "
                             r"identical heads and leaves $[0, 1]$; it is the subspace form exactly when "
                             + RESTORING_GRAM):
        # invariant under W -> WQ, scales by c⁴ under W -> cW
        cross = (W1 * Q1).T * (W2 * Q2)
        dv.step("cross_gram_rotated", eq(sp.MatMul(sp.Transpose(W1 * Q1), W2 * Q2), Q1.T * (W1.T * W2) * Q2),
                by="matrix_expand",
                why=r"$(W_1 Q_1)^\top (W_2 Q_2) = Q_1^\top (W_1^\top W_2) Q_2$", uses=["literal"])
        Gq = cross.doit()
        dv.step("literal_invariant_orthogonal", eq(sp.Trace(Gq.T * Gq), sp.Trace((W1.T * W2).T * (W1.T * W2))),
                by="trace_cyclic", assumptions=orth,
                why=r"$\lVert (W_1 Q_1)^\top (W_2 Q_2) \rVert^2 = \lVert W_1^\top W_2 \rVert^2$",
                uses=["literal", "frobenius", "orthogonal"])

        with dv.group("literal_range", r"$1 - \mathrm{HDI}_{\mathrm{lit}}$ scales by $c^4$ under $W \to c W$; "
                                       r"$\mathrm{HDI}_{\mathrm{lit}} \le 1$ always and it is $-15$ at a case with "
                                       r"$d = d_k = 1$") as lit_range:
            Gc = sp.MatMul(sp.Transpose(c * W1), c * W2)          # (cW_1)ᵀ(cW_2), unevaluated
            fro_c, fro_1 = sp.Trace(sp.MatMul(sp.Transpose(Gc), Gc)), sp.Trace((W1.T * W2).T * (W1.T * W2)).doit()
            dv.step("literal_scales_c4", eq(fro_c, c**4 * fro_1), by="expand",
                    why=r"$\lVert (c W_1)^\top (c W_2) \rVert^2 = c^4 \lVert W_1^\top W_2 \rVert^2$; hence "
                        r"$1 - \mathrm{HDI}_{\mathrm{lit}}(c W) = c^4 (1 - \mathrm{HDI}_{\mathrm{lit}}(W))$",
                    uses=["literal", "frobenius"])
            lit_h2 = 1 - _frob2(Wa.T * Wb / 2)
            dv.step("literal_at_most_one", ge(1, lit_h2), by="certificate", certificate=_frob2(Wa.T * Wb / 2),
                    why=r"$1 - \mathrm{HDI}_{\mathrm{lit}}$ is a sum of squares ($H = 2$, $d = 3$, $d_k = 2$, "
                        r"symbolic entries; any $H$: a mean of squared Frobenius norms)", uses=["literal", "frobenius"])
            w1s, w2s, dks = sp.symbols("w_1 w_2 d_k", real=True)     # H = 2, d = d_k = 1: W_h = (w_h)
            lit_cex = sp.Subs(1 - (w1s * w2s / dks) ** 2, (w1s, w2s, dks), (2, 2, 1))
            dv.step("literal_below_zero", eq(lit_cex, -15), by="expand",
                    why=r"$H = 2$, $d = d_k = 1$, $W_1 = W_2 = (2)$: $G = 4$, "
                        r"$\mathrm{HDI}_{\mathrm{lit}} = 1 - 16 = -15$", uses=["literal"])
            dv.step("literal_outside_unit_interval", lt(lit_cex, 0), by="nonneg",
                    why=r"that value is below $0$: the literal formula leaves $[0, 1]$", uses=["literal"])
            dv.result("literal_scaled", 1 - c**4 * (1 - hdi), args=(hdi, c), uses=["literal"],
                      domain={hdi: (-10, 1), c: (0.1, 10)},
                      description=r"$\mathrm{HDI}_{\mathrm{lit}}$ of $(c W_1, \ldots, c W_H)$ given "
                                  r"$\mathrm{HDI}_{\mathrm{lit}}$ of $(W_1, \ldots, W_H)$", codegen=("numpy",))
            Wc = sp.Matrix([[2]])                                   # W_1 = W_2 = (2), d = d_k = 1
            dv.result("counterexample_below_zero", 1 - _frob2(Wc.T * Wc / 1),
                      uses=["literal"],
                      description=r"$\mathrm{HDI}_{\mathrm{lit}} = -15$ for $H = 2$, $d = d_k = 1$, $W_1 = W_2 = (2)$")

        with dv.group("literal_identical", r"identical heads with orthonormal columns give "
                                           r"$\mathrm{HDI}_{\mathrm{lit}} = 1 - 1/d_k$, not $0$") as lit_identical:
            fro_id = sp.Trace(sp.MatMul(sp.Transpose(Id), Id)) / dk_i**2      # ||I/d_k||² = tr(IᵀI)/d_k²
            dv.step("identical_orthonormal_literal", eq(1 - fro_id, 1 - 1 / dk_i), by="simplify",
                    why=r"$W_h = U$ ($U^\top U = I$) for all $h$: $G = I/d_k$, "
                        r"$\lVert G \rVert^2 = d_k/d_k^2 = 1/d_k$, $\mathrm{HDI}_{\mathrm{lit}} = 1 - 1/d_k$",
                    uses=["literal", "frobenius"])
            I2 = sp.eye(2)
            A2, B2 = entries("A", 2, 2), entries("B", 2, 2)
            lit_i2 = sp.Subs(1 - _frob2(A2.T * B2 / 2), (*A2, *B2), (*I2, *I2))  # HDI_lit(A, B) at A = B = I_2
            dv.step("identical_counterexample", eq(lit_i2, sp.Rational(1, 2)), by="expand",
                    why=r"$d = d_k = 2$, $W_1 = W_2 = I_2$: $\mathrm{HDI}_{\mathrm{lit}} = 1/2$ (subspace form: $0$)",
                    uses=["literal"])
            dv.step("identical_literal_not_zero", gt(lit_i2, 0), by="nonneg",
                    why=r"that value is above $0$: identical heads do not give $0$", uses=["literal"])
            dv.result("literal_identical_orthonormal", 1 - 1 / d_k, args=(d_k,), uses=["literal"], domain=dk_dom,
                      description=r"$\mathrm{HDI}_{\mathrm{lit}}$ for identical heads with orthonormal columns (the "
                                  r"stated value is $0$)", codegen=("numpy",))

        # isotropic heads W_h = c U_h: ||G||² = (c⁴/d_k) ρ; literal = subspace iff c = d_k^{1/4}
        with dv.group("restoring_scale", r"for $W_h^\top W_h = c^2 I$ the literal formula is "
                                         r"$1 - (c^4/d_k) \bar{\rho}$: the subspace form exactly when $c = d_k^{1/4}$, "
                                         r"that is " + RESTORING_GRAM) as restoring:
            Wg = sp.MatrixSymbol("W", d, dk_i)
            Ug = (Wg / c)
            dv.step("isotropic_basis", eq(sp.MatMul(sp.Transpose(Ug), Ug), Id), by="matrix_expand",
                    given={Wg.T * Wg: c**2 * Id},
                    why=r"$W_h^\top W_h = c^2 I$ implies that $U_h = W_h/c$ has orthonormal columns and spans the "
                        r"range of $W_h$",
                    uses=["isotropic_heads", "subspace"])
            Giso = sp.MatMul(sp.Transpose(c * U1), c * U2) / dk_i
            fro_iso = sp.Trace(sp.MatMul(sp.Transpose(Giso), Giso))
            rho12 = sp.Trace((U1.T * U2).T * (U1.T * U2)).doit() / dk_i
            dv.step("isotropic_literal_term", eq(fro_iso, c**4 / dk_i * rho12), by="simplify",
                    why=r"$G_{hh'} = c^2 U_h^\top U_{h'}/d_k$, $\lVert G_{hh'} \rVert^2 = (c^4/d_k) \rho_{hh'}$",
                    uses=["isotropic_heads", "literal", "subspace"])
            rbar = sp.Symbol("rho_bar", nonnegative=True)
            lit_iso = 1 - c**4 / d_k * rbar
            sub = 1 - rbar
            dv.step("isotropic_literal_vs_subspace", eq(lit_iso - sub, rbar * (1 - c**4 / d_k)), by="expand",
                    why=r"$\mathrm{HDI}_{\mathrm{lit}} - \mathrm{HDI}_{\mathrm{sub}} = \bar{\rho} (1 - c^4/d_k)$: zero "
                        r"for every configuration if and only if $c^4 = d_k$",
                    uses=["isotropic_heads", "literal", "subspace"])
            dv.step("matching_scale", eq(c, d_k ** sp.Rational(1, 4)), by="solve", equation=eq(c**4, d_k),
                    why=r"the positive root of $c^4 = d_k$: " + RESTORING_GRAM, uses=["isotropic_heads"])
            dv.step("literal_equals_subspace", eq(sp.Subs(lit_iso, c, d_k ** sp.Rational(1, 4)), sub), by="expand",
                    why=r"with " + RESTORING_GRAM + " the two forms agree exactly",
                    uses=["isotropic_heads", "quarter_scale", "literal", "subspace"])
            dv.step("dk_normalisation_gives_1_minus_dk_rho", eq(sp.Subs(lit_iso, c, sp.sqrt(d_k)), 1 - d_k * rbar),
                    by="expand",
                    why=r"$W_h^\top W_h = d_k I$ ($c = \sqrt{d_k}$) gives $\mathrm{HDI}_{\mathrm{lit}} = "
                        r"1 - d_k \bar{\rho}$, not $\mathrm{HDI}_{\mathrm{sub}}$",
                    uses=["isotropic_heads", "literal", "subspace"])
            gap_dk = sp.Subs(rbar * (1 - c**4 / d_k), (rbar, c, d_k), (1, sp.sqrt(2), 2))
            dv.step("dk_normalisation_differs", lt(gap_dk, 0), by="nonneg",
                    why=r"for instance identical subspaces ($\bar{\rho} = 1$) with $d_k = 2$ and "
                        r"$W_h^\top W_h = d_k I$: $\mathrm{HDI}_{\mathrm{lit}} - \mathrm{HDI}_{\mathrm{sub}} = -1$",
                    uses=["isotropic_heads", "literal", "subspace"])
            # only c = d_k^{1/4} works when head scales may differ (H = 3, overlaps > 0)
            ch = sp.symbols("c_1:4", positive=True)
            dv.step("equal_scales_forced", eq(sp.Tuple(*ch), sp.Tuple(*[d_k ** sp.Rational(1, 4)] * 3)),
                    by="solve", equation=[sp.Eq(ch[0]**2 * ch[1]**2, d_k), sp.Eq(ch[0]**2 * ch[2]**2, d_k),
                                          sp.Eq(ch[1]**2 * ch[2]**2, d_k)],
                    why=r"$W_h^\top W_h = c_h^2 I$: the pair $(h, h')$ needs $c_h^2 c_{h'}^2 = d_k$; for three heads "
                        r"with nonzero overlaps this forces $c_1 = c_2 = c_3 = d_k^{1/4}$",
                    uses=["literal", "subspace"])

            # explicit end-to-end check (d = 3, d_k = 2, H = 2): W_h = 2^{1/4} U_h R(t_h)
            p0, p1, p2, p3 = sp.symbols("p_0 p_1 p_2 p_3", real=True)
            nq = p0**2 + p1**2 + p2**2 + p3**2
            rot3 = sp.Matrix([[p0**2 + p1**2 - p2**2 - p3**2, 2 * (p1 * p2 - p0 * p3), 2 * (p1 * p3 + p0 * p2)],
                              [2 * (p1 * p2 + p0 * p3), p0**2 - p1**2 + p2**2 - p3**2, 2 * (p2 * p3 - p0 * p1)],
                              [2 * (p1 * p3 - p0 * p2), 2 * (p2 * p3 + p0 * p1), p0**2 - p1**2 - p2**2 + p3**2]]) / nq
            Ue1 = sp.Matrix([[1, 0], [0, 1], [0, 0]])
            Ue2 = rot3[:, :2]
            sc = sp.Integer(2) ** sp.Rational(1, 4)
            We1, We2 = sc * Ue1 * rotation2(t1), sc * Ue2 * rotation2(t2)
            lit_e = 1 - _frob2(We1.T * We2 / 2)
            sub_e = 1 - _frob2(Ue1.T * Ue2) / 2
            dv.step("literal_equals_subspace_explicit", eq(lit_e, sub_e), by="rational",
                    why=r"$U_2$ is the first two columns of a general rotation of $\mathbb{R}^3$ (a quaternion), any "
                        r"rotations $Q_h$; exact at random rational points (a full cancellation takes about 10 s)",
                    uses=["quarter_scale", "literal", "subspace", "orthogonal"])
            dv.result("literal_isotropic", 1 - c**4 * mrho / d_k, args=(mrho, c, d_k),
                      uses=["literal", "subspace", "isotropic_heads"], domain={mrho: (0, 1), c: (0.1, 10), **dk_dom},
                      description=r"$\mathrm{HDI}_{\mathrm{lit}}$ when $W_h^\top W_h = c^2 I$, in terms of "
                                  r"$\bar{\rho}$", codegen=("numpy",))
            dv.result("matching_scale", d_k ** sp.Rational(1, 4), args=(d_k,), uses=["isotropic_heads"],
                      domain=dk_dom,
                      description=r"$c$ with $W_h^\top W_h = c^2 I$ at which "
                                  r"$\mathrm{HDI}_{\mathrm{lit}} = \mathrm{HDI}_{\mathrm{sub}}$", codegen=("numpy",))

        flat = [*Wa, *Wb]
        # well-conditioned heads for sampling: dominant "diagonal" entries, small others (full column rank)
        w_dom = {x: ((2, 3) if (i % 2 == i // 2) else (-0.5, 0.5)) for W_ in (Wa, Wb) for i, x in enumerate(W_)}
        dv.result("literal_hdi_h2_d3dk2", 1 - _frob2(Wa.T * Wb / 2), args=tuple(flat), uses=["literal"],
                  domain=w_dom,
                  description=r"$\mathrm{HDI}_{\mathrm{lit}}$ for $H = 2$, $d = 3$, $d_k = 2$ (row-major entries of "
                              r"$W_1$, then $W_2$)")
        dv.compare("literal_in_unit_interval", stated=r"$\mathrm{HDI} \in [0, 1]$ ($0$ identical, $1$ orthogonal)",
                   derived=r"$\mathrm{HDI}_{\mathrm{lit}} \le 1$ always but unbounded below: "
                           r"$1 - \mathrm{HDI}_{\mathrm{lit}}$ scales by $c^4$ under $W \to c W$; $H = 2$, "
                           r"$d = d_k = 1$, $W_1 = W_2 = (2)$ gives $-15$",
                   refuted_by=lit_range, uses=["literal"])
        dv.compare("identical_heads_give_zero", stated="HDI $= 0$ for identical heads",
                   derived=r"literal: $1 - 1/d_k$ for identical orthonormal heads ($1/2$ for $W_1 = W_2 = I_2$), "
                           r"$1 - d_k$ for $W_h^\top W_h = d_k I$; subspace form: $0$",
                   refuted_by=lit_identical, uses=["literal", "subspace"])
        dv.compare("literal_equals_subspace_when", stated="the literal formula measures subspace overlap",
                   derived=r"only for " + RESTORING_GRAM + r" ($c = d_k^{1/4}$); then "
                           r"$\mathrm{HDI}_{\mathrm{lit}} = 1 - \bar{\rho}$ exactly. $W_h^\top W_h = d_k I$ gives "
                           r"$1 - d_k \bar{\rho}$, orthonormal $W_h$ give $1 - \bar{\rho}/d_k$",
                   refuted_by=restoring, uses=["literal", "subspace", "isotropic_heads", "quarter_scale"])

    # the subspace form --------------------------------------------------------------------------------
    with dv.group("subspace", r"$\mathrm{HDI}_{\mathrm{sub}} = 1 - \bar{\rho}$ lies in $[0, 1]$, is $0$ for identical "
                              r"and $1$ for orthogonal subspaces, and depends only on the ranges of the $W_h$, "
                              "symmetrically in each pair") as subspace:
        # the Frobenius norm is invariant under orthogonal factors on both sides
        Mg = sp.MatrixSymbol("M", dk_i, dk_i)
        X = Q1.T * Mg * Q2
        dv.step("frobenius_orthogonal_invariance", eq(sp.Trace(X.T * X), sp.Trace(Mg.T * Mg)),
                by="trace_cyclic", assumptions=orth,
                why=r"$\lVert Q_1^\top M Q_2 \rVert^2 = \lVert M \rVert^2$ for orthogonal $Q_1$, $Q_2$ (symbolic "
                    r"$d_k$)", uses=["frobenius", "orthogonal"])
        M2 = entries("M", 2, 2)
        refl = sp.diag(1, -1)
        for nm, A, B in (("rotations", rotation2(t1), rotation2(t2)),
                         ("reflection", rotation2(t1) * refl, rotation2(t2))):
            lhs, rhs = _frob2(A.T * M2 * B), _frob2(M2)
            dv.step(f"frobenius_orthogonal_invariance_dk2_{nm}", eq(lhs, rhs), by="identically_zero",
                    why=rf"explicit $2 \times 2$ $M$, $Q_1$, $Q_2$ {nm} (rational parametrisation)",
                    uses=["frobenius", "orthogonal"])
        rho_id = sp.Trace(sp.MatMul(sp.Transpose(Id), Id)) / dk_i
        dv.step("identical_subspace", eq(1 - rho_id, 0), by="simplify",
                why=r"$\rho = \lVert U^\top U \rVert^2/d_k = \lVert I \rVert^2/d_k = 1$, "
                    r"$\mathrm{HDI}_{\mathrm{sub}} = 0$",
                uses=["subspace", "frobenius"])
        G2 = entries("G", 2, 2)
        dv.step("orthogonal_heads_literal_and_subspace", eq(sp.Subs(1 - _frob2(G2), tuple(G2), (0,) * 4), 1),
                by="expand",
                why=r"$U_h^\top U_{h'} = 0$ (or $W_h^\top W_{h'} = 0$): $G = 0$, $\rho = 0$, both forms give $1$ at "
                    "any scale",
                uses=["literal", "subspace"])

        # ρ ∈ [0, 1]: ρ = mean σ_i² (σ_i = cos θ_i), and I - MᵀM is a Gram matrix
        Mx = U1.T * U2
        Bm = U2 - U1 * (U1.T * U2)
        dv.step("one_minus_cos2_is_gram", eq(Bm.T * Bm, Id - Mx.T * Mx), by="matrix_expand",
                given={U1.T * U1: Id, U2.T * U2: Id},
                why=r"$((I - U_1 U_1^\top) U_2)^\top ((I - U_1 U_1^\top) U_2) = I - M^\top M$ with $M = U_1^\top U_2$: "
                    r"the eigenvalues $\sigma_i^2 = \cos^2 \theta_i$ of $M^\top M$ lie in $[0, 1]$",
                uses=["subspace", "gram_psd"])
        s1, s2 = sp.symbols("sigma_1 sigma_2", nonnegative=True)
        svd = rotation2(t1) * sp.diag(s1, s2) * rotation2(t2).T
        dv.step("rho_is_mean_cos2_dk2", eq(_frob2(svd) / 2, (s1**2 + s2**2) / 2), by="identically_zero",
                why=r"$\rho = \lVert P \mathrm{diag}(\sigma) R^\top \rVert^2/d_k = \mathrm{mean}_i \sigma_i^2$ "
                    r"($d_k = 2$, rotations $P$, $R$)",
                uses=["subspace", "orthogonal"])
        lam = sp.IndexedBase("lambda", nonnegative=True)
        nu = sp.IndexedBase("nu", nonnegative=True)          # nu_i = 1 - lambda_i >= 0
        i_ = sp.Symbol("i", integer=True, positive=True)
        rho_sum = sp.Sum(lam[i_], (i_, 1, dk_i)) / dk_i
        dv.step("rho_nonnegative", ge(rho_sum, 0), by="nonneg",
                why=r"$\rho = (1/d_k) \sum_i \lambda_i$ with $\lambda_i = \sigma_i^2 \ge 0$",
                uses=["subspace", "gram_psd"])
        dv.step("rho_at_most_one", ge(1 - sp.Sum(1 - nu[i_], (i_, 1, dk_i)) / dk_i, 0),
                by="certificate", certificate=sp.Sum(nu[i_], (i_, 1, dk_i)) / dk_i,
                why=r"$1 - \rho = (1/d_k) \sum_i (1 - \lambda_i)$, each $1 - \lambda_i \ge 0$ (eigenvalues of the "
                    r"Gram matrix $I - M^\top M$)",
                uses=["subspace", "gram_psd"])

        # ρ depends only on the subspaces: ρ = tr(P_1 P_2)/d_k and P(WA) = P(W)
        dv.step("rho_is_projector_trace", eq(sp.Trace(Mx.T * Mx), sp.Trace(U1 * U1.T * U2 * U2.T)),
                by="trace_cyclic",
                why=r"$\lVert U_1^\top U_2 \rVert^2 = \mathrm{tr}(U_2^\top U_1 U_1^\top U_2) = \mathrm{tr}(P_1 P_2)$, "
                    r"$P_h = U_h U_h^\top$ the projector onto the range of $W_h$",
                uses=["subspace", "frobenius"])
        Xs, Ys, Zs = (sp.MatrixSymbol(nm, dk_i, dk_i) for nm in ("X", "Y", "Z"))
        dv.step("inverse_of_product", eq(sp.Inverse(Xs * Ys * Zs), Zs.I * Ys.I * Xs.I), by="inverse",
                why=r"$(X Y Z)(Z^{-1} Y^{-1} X^{-1}) = I$ for invertible square $X$, $Y$, $Z$ (symbolic $d_k$)",
                uses=["invertible"])
        Wg2, Ag = sp.MatrixSymbol("W", d, dk_i), sp.MatrixSymbol("A", dk_i, dk_i)
        WA = Wg2 * Ag
        P_WA = sp.MatMul(WA, sp.Inverse(sp.MatMul(sp.Transpose(WA), WA)), sp.Transpose(WA))   # P(WA), unevaluated
        P_W = Wg2 * (Wg2.T * Wg2).I * Wg2.T
        dv.step("projector_invariant", eq(P_WA, P_W), by="matrix_expand",
                given={sp.Inverse(Ag.T * Wg2.T * Wg2 * Ag): Ag.I * (Wg2.T * Wg2).I * Ag.T.I},
                why=r"$W A ((W A)^\top W A)^{-1} (W A)^\top = W (W^\top W)^{-1} W^\top$ for invertible $A$ (symbolic "
                    r"sizes): $\mathrm{HDI}_{\mathrm{sub}}$ is invariant under $W_K^h \to W_K^h A$, while "
                    r"$\mathrm{HDI}_{\mathrm{lit}}$ is not (step `literal_scales_c4`)",
                uses=["subspace", "invertible"])
        dv.step("pair_symmetric", eq(sp.Trace((W1.T * W2).T * (W1.T * W2)), sp.Trace((W2.T * W1).T * (W2.T * W1))),
                by="trace_cyclic",
                why=r"$\lVert G_{hh'} \rVert = \lVert G_{h'h} \rVert$: both forms are symmetric in each pair, hence "
                    "invariant under permuting heads", uses=["literal", "frobenius"])
        dv.result("rho_dk2", (s1**2 + s2**2) / 2, args=(s1, s2), uses=["subspace"], domain={s1: (0, 1), s2: (0, 1)},
                  description=r"$\rho$ from the principal-angle cosines ($d_k = 2$)", codegen=("numpy",))
        P1, P2 = projector(Wa), projector(Wb)
        w_dom = {x: ((2, 3) if (i % 2 == i // 2) else (-0.5, 0.5)) for W_ in (Wa, Wb) for i, x in enumerate(W_)}
        dv.result("subspace_hdi_h2_d3dk2", 1 - (P1 * P2).trace() / 2, args=tuple([*Wa, *Wb]), uses=["subspace"],
                  domain=w_dom,
                  description=r"$\mathrm{HDI}_{\mathrm{sub}} = 1 - \mathrm{tr}(P_1 P_2)/d_k$ for $H = 2$, $d = 3$, "
                              r"$d_k = 2$ (full column rank)", codegen=("mpmath",))
    dv.compare("orthogonal_heads_give_one", stated="HDI $= 1$ for orthogonal heads",
               derived=r"both forms give $1$ when $W_h^\top W_{h'} = 0$ for $h \neq h'$, at any scale",
               supported_by=subspace, uses=["literal", "subspace"])
    dv.compare("subspace_form_properties",
               stated=r"a diversity index in $[0, 1]$, invariant, $0$ for identical and $1$ for orthogonal heads",
               derived=r"$\mathrm{HDI}_{\mathrm{sub}} = 1 - \bar{\rho}$: "
                       r"$\rho = \mathrm{mean} \cos^2 \theta \in [0, 1]$, depends only on the ranges of the $W_h$ "
                       r"(invariant under $W \to W A$), symmetric in each pair; $0$ for identical, $1$ for "
                       r"orthogonal subspaces",
               supported_by=subspace, uses=["subspace", "gram_psd", "orthogonal", "frobenius"])
    return dv
