"""C2: multi-head attention is a weighted sum (ensemble) of H Nadaraya-Watson heads.

The output projection of the concatenated heads is the sum over its row blocks ``W_O^h`` (symbolic
sizes, H = 1..6), and as ``Σ_i w_i^h = 1`` the value bias passes through once per head:
``MHA(x) = Σ_h (W_O^h)ᵀ (W_V^h)ᵀ Σ_i w_i^h v_i + Σ_h (W_O^h)ᵀ b_V^h + b_O``. For scalar values and
output this is ``Σ_h α_h f̂_h + β`` with free real weights ``α_h``; a key bias cancels.
"""

from __future__ import annotations

import sympy as sp

from .core import Derivation, eq
from .notation import entries, spell

__all__ = ["build", "CLAIM", "TITLE", "STATED", "MAX_H"]

CLAIM = "C2"
TITLE = "Multi-head attention is an ensemble of NW heads"
STATED = ("Multi-head attention is a weighted sum (ensemble) of $H$ NW estimators, each in its own "
          "projection subspace.")

#: Largest H for which the general-size block identity is checked head by head.
MAX_H = 6

d_in, d_v, d_out = sp.symbols("d d_v d_out", integer=True, positive=True)
s = sp.Symbol("s", positive=True)
q1, q2 = sp.symbols("q_1 q_2", real=True)
KEYS = [sp.symbols(f"k_{i}1 k_{i}2", real=True) for i in (1, 2, 3)]
BK = sp.symbols("bK_1 bK_2", real=True)
# the entries of the biases (value bias of head h, output bias, key bias), printed b_{V,1}^{1}, b_{O,1}, b_{K,1}
spell(**{f"bV{h}_{i}": f"b_{{V,{i}}}^{{{h}}}" for h in (1, 2) for i in (1, 2)},
      **{f"b{x}_{i}": f"b_{{{x},{i}}}" for x in "OK" for i in (1, 2)})
# the entries of head h's value and output blocks (2 x 2), printed W_{V,11}^{h}, ... (spelled on import)
WV_ENTRIES = [entries(f"WV{h}", 2, 2, f"W_{{V,#}}^{{{h}}}") for h in (1, 2)]
WO_ENTRIES = [entries(f"WO{h}", 2, 2, f"W_{{O,#}}^{{{h}}}") for h in (1, 2)]
spell(WV_1=r"W_{V,1}", WV_2=r"W_{V,2}", WO_1=r"W_{O,1}", WO_2=r"W_{O,2}")   # one head's, in head_weight_dv2


def _weights(h: int, n: int):
    """NW weights of head h with Σ_i w_i = 1 built in: the last one is 1 - the others."""
    w = list(sp.symbols(f"w_{h}_1:{n}", real=True))
    spell(**{x.name: f"w_{{{x.name.rpartition('_')[2]}}}^{{{h}}}" for x in w})   # w_i^h, as the prose writes it
    return w + [1 - sum(w)]


_HEAD = r"\mathrm{head}_"


def _stack(base: str, H: int) -> str:
    """``base1; …; baseH`` as LaTeX, every block written out up to three heads."""
    return "; ".join(f"{base}{{{h}}}" for h in range(1, H + 1)) if H <= 3 else rf"{base}{{1}}; \ldots; {base}{{{H}}}"


HEAD_WEIGHTS = [_weights(h, 3) for h in (1, 2)]   # at import: a derivation read from the cache prints them too


def build() -> Derivation:
    dv = Derivation(CLAIM, TITLE, STATED, markup=True)
    dv.assume("heads", r"head $h$: NW weights $w_i^h(x)$ of the exponential kernel of C1 with its own "
              r"$W_Q^h, W_K^h$; value inputs $v_i$; head output $\sum_i w_i^h ((W_V^h)^\top v_i + b_V^h)$",
              kind="setting")
    dv.assume("output_projection", r"$\mathrm{MHA}(x) = W_O^\top \mathrm{concat}_h(\mathrm{head}_h) + b_O$, "
              r"$W_O$ stacked from row blocks $W_O^h$ ($d_v \times d_{out}$ each)", kind="setting")
    dv.assume("weights_sum_to_one", r"$\sum_i w_i^h = 1$ for every head (proved in C1, step "
              "`nw_weights_sum_to_one_general_n`)", kind="setting")
    dv.assume("real", "all entries real", kind="setting")
    dv.define(d="the input dimension", d_v="the value dimension of a head", d_out="the output dimension",
              s=r"the softmax scale $1/\sqrt{d_k}$", n="the number of keys", i="a key index", j="a key index",
              W_O_=r"the row block $W_O^h$ of the output projection, head $h$",
              W_V_=r"the value projection $W_V^h$ of head $h$", WO_=r"entries of the output block $W_O^h$",
              WV_=r"entries of the value projection $W_V^h$", b_V_=r"the value bias $b_V^h$ of head $h$",
              bV_=r"entries of the value bias $b_V^h$", b_O=r"the output bias $b_O$",
              bO_=r"entries of the output bias $b_O$", bK_=r"entries of the key bias $b_K$",
              m_=r"the smoothed values of head $h$, $m_h = \sum_i w_i^h v_i$", w_=r"the NW weights $w_i^h$",
              kappa=r"the kernel values $\kappa_i = K(x, x_i)$", v=r"the values $v_i$",
              v_=r"entries of the values $v_i$", y_=r"the scalar values $y_i$", k_=r"entries of the keys $k_i$",
              q_=r"entries of the query $q$", a="a coefficient of the value map",
              c="the value bias (one coordinate)")

    with dv.group("ensemble", "the concatenate-then-project form is the sum of the NW heads through their "
                              "output blocks, plus the biases") as ensemble:
        # 1. concatenation + output projection = sum over head blocks (symbolic sizes, H = 1..MAX_H)
        for H in range(1, MAX_H + 1):
            WO = [sp.MatrixSymbol(f"W_O^{h}", d_v, d_out) for h in range(1, H + 1)]   # W_O^h, as the prose
            WV = [sp.MatrixSymbol(f"W_V^{h}", d_in, d_v) for h in range(1, H + 1)]
            bV = [sp.MatrixSymbol(f"b_V^{h}", d_v, 1) for h in range(1, H + 1)]
            m = [sp.MatrixSymbol(f"m{h}", d_in, 1) for h in range(1, H + 1)]   # Σ_i w_i^h v_i
            bO = sp.MatrixSymbol("b_O", d_out, 1)
            heads = [WV[h].T * m[h] + bV[h] for h in range(H)]
            # unevaluated: the stacked W_O (transposed) times the concatenated heads, plus b_O
            concat_out = sp.MatAdd(sp.MatMul(sp.Transpose(sp.BlockMatrix([[a] for a in WO])),
                                             sp.BlockMatrix([[x] for x in heads])), bO)
            ensemble_form = (sp.MatAdd(*[(WV[h] * WO[h]).T * m[h] for h in range(H)])
                             + sp.MatAdd(*[WO[h].T * bV[h] for h in range(H)]) + bO)
            dv.step(f"concat_projection_is_head_sum_h{H}", eq(concat_out, ensemble_form), by="matrix_expand",
                    why=f"$[{_stack('W_O^', H)}]^\\top [{_stack(_HEAD, H)}] "
                        r"+ b_O = \sum_h (W_V^h W_O^h)^\top m_h + \sum_h (W_O^h)^\top b_V^h + b_O$, with symbolic "
                        r"$d, d_v, d_{out}$ (block multiplication)",
                    uses=["heads", "output_projection", "weights_sum_to_one"])

        # 2. the value bias passes through once per head: Σ_i w_i (A v_i + c) = A Σ_i w_i v_i + c
        n_keys = sp.Symbol("n", integer=True, positive=True)
        i_, j_ = sp.symbols("i j", integer=True, positive=True)
        kap, v = sp.IndexedBase("kappa", positive=True), sp.IndexedBase("v", real=True)
        a_, c_ = sp.symbols("a c", real=True)
        w_i = kap[i_] / sp.Sum(kap[j_], (j_, 1, n_keys))
        n = len(HEAD_WEIGHTS[0])
        WVm, WOm = WV_ENTRIES, WO_ENTRIES
        bVm = [sp.Matrix(sp.symbols(f"bV{h}_1:3", real=True)) for h in (1, 2)]
        bOm = sp.Matrix(sp.symbols("bO_1:3", real=True))
        vs = [sp.Matrix(sp.symbols(f"v_{i}1 v_{i}2", real=True)) for i in range(1, n + 1)]
        W = HEAD_WEIGHTS
        heads = [sum((W[h][i] * (WVm[h].T * vs[i] + bVm[h]) for i in range(n)), sp.zeros(2, 1)) for h in range(2)]
        smooth = [sum((W[h][i] * vs[i] for i in range(n)), sp.zeros(2, 1)) for h in range(2)]
        with dv.group("value_bias", "the value bias passes through each head once, since its NW weights sum to 1"):
            lhs = sp.Sum(w_i * (a_ * v[i_] + c_), (i_, 1, n_keys))
            rhs = a_ * sp.Sum(w_i * v[i_], (i_, 1, n_keys)) + c_
            dv.step("value_bias_passes_through_general_n", eq(lhs, rhs), by="identically_zero",
                    why=r"$\sum_i w_i (a v_i + c) = a \sum_i w_i v_i + c$ with $w_i = K_i/\sum_j K_j$ "
                        "(general $n$, one coordinate)",
                    uses=["heads", "weights_sum_to_one", "real"])
            for h in range(2):
                dv.step(f"value_bias_passes_through_h{h+1}", eq(heads[h], WVm[h].T * smooth[h] + bVm[h]),
                        by="expand",
                        why=r"$\mathrm{head}_h = (W_V^h)^\top \sum_i w_i^h v_i + b_V^h$ ($n = 3$, $d = d_v = 2$, "
                            "$w_3 = 1 - w_1 - w_2$)",
                        uses=["heads", "weights_sum_to_one", "real"])

        # 3. explicit H = 2 (d = d_v = d_out = 2): torch's concat form = the ensemble form
        WO = sp.Matrix.vstack(*WOm)
        mha = WO.T * sp.Matrix.vstack(*heads) + bOm
        ens = sum(((WOm[h].T * WVm[h].T) * smooth[h] for h in range(2)), sp.zeros(2, 1)) \
            + sum((WOm[h].T * bVm[h] for h in range(2)), sp.zeros(2, 1)) + bOm
        dv.step("mha_vector_form_h2", eq(mha, ens), by="expand",
                why=r"$W_O^\top [\mathrm{head}_1; \mathrm{head}_2] + b_O = \sum_h (W_O^h)^\top (W_V^h)^\top "
                    r"\sum_i w_i^h v_i + \sum_h (W_O^h)^\top b_V^h + b_O$",
                uses=["heads", "output_projection", "weights_sum_to_one", "real"])

        # 5. a key bias cancels in every head's weights (common shift of the scores); n = 3, d_k = 2
        q = (q1, q2)
        dot = lambda u, w: sum(a * c for a, c in zip(u, w))  # noqa: E731
        plain = [sp.exp(s * dot(q, k)) for k in KEYS]
        biased = [sp.exp(s * dot(q, [a + c for a, c in zip(k, BK)])) for k in KEYS]
        for i in range(n):
            lhs_i, rhs_i = biased[i] / sum(biased), plain[i] / sum(plain)
            dv.step(f"key_bias_cancels_w{i+1}", eq(lhs_i, rhs_i), by="identically_zero",
                    why=r"$s q \cdot (k_i + b_K) = s q \cdot k_i + s q \cdot b_K$; the second term is the same "
                        "for every key",
                    uses=["heads", "real"])
        dv.result("mha_vector_h2", ens, uses=["heads", "output_projection", "weights_sum_to_one"],
                  description=r"$\sum_h (W_O^h)^\top (W_V^h)^\top \sum_i w_i^h v_i + \sum_h (W_O^h)^\top b_V^h + "
                              r"b_O$, $H = 2$, $d = d_v = d_{out} = 2$")

    # 4. scalar values and output: MHA = Σ_h α_h f̂_h + β, α_h = W_V^h W_O^h (1 x d_v times d_v x 1)
    with dv.group("scalar_weights", r"with scalar values and output, $\mathrm{MHA} = \sum_h \alpha_h \hat{f}_h + "
                                    r"\beta$ with free weights $\alpha_h = W_V^h W_O^h$"):
        ys = sp.symbols("y_1:4", real=True)
        WVs, WOs = [W[0, :] for W in WV_ENTRIES], [W[:, 0] for W in WO_ENTRIES]
        bO = sp.Symbol("b_O", real=True)
        heads_s = [sum((W[h][i] * (WVs[h].T * ys[i] + bVm[h]) for i in range(n)), sp.zeros(2, 1)) for h in range(2)]
        mha_s = (sp.Matrix.vstack(*WOs).T * sp.Matrix.vstack(*heads_s))[0, 0] + bO
        alpha = [(WVs[h] * WOs[h])[0, 0] for h in range(2)]
        fhat = [sum(W[h][i] * ys[i] for i in range(n)) for h in range(2)]
        beta = sum((WOs[h].T * bVm[h])[0, 0] for h in range(2)) + bO
        ens_s = alpha[0] * fhat[0] + alpha[1] * fhat[1] + beta
        dv.step("mha_scalar_is_weighted_sum_h2", eq(mha_s, ens_s), by="expand",
                why=r"scalar $y_i$, $d_v = 2$, scalar output: $\mathrm{MHA} = \alpha_1 \hat{f}_1 + \alpha_2 \hat{f}_2 "
                    r"+ \beta$",
                uses=["heads", "output_projection", "weights_sum_to_one", "real"])
        wv1, wv2, wo1, wo2 = sp.symbols("WV_1 WV_2 WO_1 WO_2", real=True)
        dv.result("head_weight_dv2", wv1 * wo1 + wv2 * wo2, args=(wv1, wv2, wo1, wo2),
                  uses=["heads", "output_projection"],
                  description=r"$\alpha_h = W_V^h W_O^h$ for scalar values and output, $d_v = 2$", codegen=("numpy",))
        wargs = [x for h in range(2) for x in W[h][:-1]]
        margs = [*wargs, *ys, *[x for h in range(2) for x in WVs[h]], *[x for h in range(2) for x in WOs[h]],
                 *[x for h in range(2) for x in bVm[h]], bO]
        dv.result("mha_scalar_h2_n3", ens_s, args=tuple(margs),
                  uses=["heads", "output_projection", "weights_sum_to_one"],
                  description=r"$\sum_h \alpha_h \hat{f}_h + \beta$, $H = 2$, $n = 3$, $d_v = 2$ "
                              r"($w_{h3} = 1 - w_{h1} - w_{h2}$)", codegen=("numpy",))
        dv.result("offset_h2", beta, uses=["heads", "output_projection", "weights_sum_to_one"],
                  description=r"$\beta = \sum_h (b_V^h)^\top W_O^h + b_O$ (scalar output)")

    dv.compare("mha_is_weighted_sum_of_nw",
               stated="MHA is a weighted sum (ensemble) of $H$ NW estimators, each in its own projection subspace",
               derived=r"$\mathrm{MHA}(x) = \sum_h (W_O^h)^\top (W_V^h)^\top \sum_i w_i^h v_i + \sum_h (W_O^h)^\top "
                       r"b_V^h + b_O$ exactly; for scalar values and output $\mathrm{MHA} = \sum_h \alpha_h "
                       r"\hat{f}_h + \beta$ with $\alpha_h = W_V^h W_O^h$ free real numbers (not constrained to sum "
                       r"to 1 or to be nonnegative) and an offset $\beta$; head $h$ sees $x$ only through "
                       r"$(W_Q^h)^\top x$ and $(W_K^h)^\top x_i$; a key bias cancels",
               supported_by=ensemble, uses=["heads", "output_projection", "weights_sum_to_one"])
    return dv
