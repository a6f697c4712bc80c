"""C1: one softmax attention head is a Nadaraya-Watson (NW) estimator; when it is a *Gaussian* one.

With ``q = W_Qᵀ x``, ``k_i = W_Kᵀ x_i`` and the scale ``s = 1/sqrt(d_k)``, the attention weights
``exp(s q·k_i) / Σ_j exp(s q·k_j)`` are the NW weights of the exponential kernel
``K(q, k) = exp(s q·k)`` - an identity, not an approximation. The Gaussian kernel factors as
``exp(-|q-k|²/(2b²)) = exp(-|q|²/(2b²)) exp(q·k/b²) exp(-|k|²/(2b²))``; the q-factor cancels in
every NW weight, the k-factor only when all keys have the same norm. Then softmax with scale s is
Gaussian NW with ``b² = 1/s``, i.e. ``b = d_k^{1/4}``: the summary's "bandwidth 1/sqrt(d_k)" is the
scale (inverse temperature), not a bandwidth. Unequal key norms break the Gaussian identity
(exact counterexample below); in general Gaussian NW is softmax of the shifted scores
``(q·k_i - |k_i|²/2)/b²``.

Checked twice: with explicit symbols (n = 3 keys in d_k = 2, symbolic coordinates) and for
general n (SymPy ``Sum`` over an ``IndexedBase``) and general d_k (polarisation identity).
"""

from __future__ import annotations

import sympy as sp

from .core import Derivation, identically_zero
from .notation import d_k

__all__ = ["build", "STATED", "identically_zero"]

STATED = (
    "One softmax attention head is exactly a Nadaraya-Watson estimator with the exponential "
    "kernel; the summary calls its bandwidth h = 1/sqrt(d_k)."
)

# Local symbols ---------------------------------------------------------------------------------
s = sp.Symbol("s", positive=True)          # softmax scale (inverse temperature), 1/sqrt(d_k)
b = sp.Symbol("b", positive=True)          # Gaussian bandwidth
r = sp.Symbol("r", positive=True)          # common key norm
shift = sp.Symbol("m_shift", real=True)    # the max-subtraction shift of a stable softmax
q1, q2 = sp.symbols("q_1 q_2", real=True)
KEYS = [sp.symbols(f"k_{i}1 k_{i}2", real=True) for i in (1, 2, 3)]
Y = sp.symbols("y_1:4", real=True)

# general-n symbols
n_keys = sp.Symbol("n", integer=True, positive=True)
i_, j_, l_ = sp.symbols("i j l", integer=True, positive=True)
P = sp.IndexedBase("p", real=True)          # p_j = q·k_j
M = sp.IndexedBase("m", real=True)          # m_j = |k_j|²
KAPPA = sp.IndexedBase("kappa", positive=True)
Zs = sp.IndexedBase("z", real=True)
Qn = sp.Symbol("Q", real=True)              # |q|²
cpos = sp.Symbol("c", positive=True)
QI = sp.IndexedBase("q", real=True)
KI = sp.IndexedBase("k", real=True)
dk_int = sp.Symbol("d_k", integer=True, positive=True)   # d_k as a summation limit


def _dot(u, v):
    return sum(a * c for a, c in zip(u, v))


def _sq(u):
    return _dot(u, u)


def _gauss(q, k, bw):
    return sp.exp(-_sq([a - c for a, c in zip(q, k)]) / (2 * bw**2))


def _normalise(vals):
    tot = sum(vals)
    return [v / tot for v in vals]


def _gsum(expr, idx=j_):
    return sp.Sum(expr, (idx, 1, n_keys))


def build() -> Derivation:
    dv = Derivation("C1", "Softmax attention head = Nadaraya-Watson estimator", STATED)
    q = (q1, q2)

    dv.assume("head", "q = W_Qᵀx, k_i = W_Kᵀx_i in R^{d_k}; scores s·q·k_i with s = 1/sqrt(d_k); "
              "attention weights softmax(scores), output Σ_i weight_i y_i", kind="setting")
    dv.assume("nw", "NW estimator of kernel K: weights K(q,k_i)/Σ_j K(q,k_j), estimate Σ_i w_i y_i",
              kind="setting")
    dv.assume("gaussian", "Gaussian kernel exp(-|q-k|²/(2b²)), bandwidth b > 0", kind="setting")
    dv.assume("real", "all coordinates, values and the shift are real; s, b, r > 0", kind="setting")
    dv.assume("equal_key_norms", "every key has the same norm: |k_i| = r for all i", kind="model",
              expr=sp.Eq(sp.Symbol("|k_i|"), r))

    # 1. the score is a bilinear form of the raw inputs: the head sees x only through its projections
    x = sp.Matrix(sp.symbols("x_1:4", real=True))
    xi = sp.Matrix(sp.symbols("xi_1:4", real=True))
    WQ = sp.Matrix(3, 2, lambda a, c: sp.Symbol(f"WQ_{a+1}{c+1}", real=True))
    WK = sp.Matrix(3, 2, lambda a, c: sp.Symbol(f"WK_{a+1}{c+1}", real=True))
    score = s * ((WQ.T * x).T * (WK.T * xi))[0, 0]
    dv.step("score_bilinear", sp.Eq(score, s * (x.T * WQ * WK.T * xi)[0, 0], evaluate=False), by="expand",
            why="s (W_Qᵀx)·(W_Kᵀx_i) = s xᵀ W_Q W_Kᵀ x_i (d = 3, d_k = 2, symbolic entries)",
            uses=["head", "real"])

    # 2. softmax (torch's stable form, any shift) = NW weights of K(q,k) = exp(s q·k), n = 3 explicit
    scores = [s * _dot(q, k) for k in KEYS]
    soft = _normalise([sp.exp(z - shift) for z in scores])
    kexp = [sp.exp(s * _dot(q, k)) for k in KEYS]
    nw = _normalise(kexp)
    for i in range(3):
        dv.step(f"softmax_is_exp_nw_w{i+1}", sp.Eq(soft[i], nw[i], evaluate=False), by="identically_zero",
                why="exp(z_i - m)/Σ exp(z_j - m) = K_i/Σ K_j with K_i = exp(s q·k_i) (n = 3, d_k = 2)",
                uses=["head", "nw", "real"])
    att_out = sum(w * y for w, y in zip(soft, Y))
    nw_out = sum(w * y for w, y in zip(nw, Y))
    dv.step("attention_output_is_nw_estimate", sp.Eq(att_out, nw_out, evaluate=False), by="identically_zero",
            uses=["head", "nw", "real"],
            why="Σ softmax_i y_i = Σ K_i y_i / Σ K_j")

    # general n: shift invariance, scale invariance, weights sum to one
    soft_n = sp.exp(Zs[i_] - shift) / _gsum(sp.exp(Zs[j_] - shift))
    plain_n = sp.exp(Zs[i_]) / _gsum(sp.exp(Zs[j_]))
    dv.step("softmax_shift_invariant_general_n", sp.Eq(soft_n, plain_n, evaluate=False), by="identically_zero",
            uses=["head", "real"],
            why="a common shift of all n scores cancels (general n, symbolic Sum)")
    scaled = cpos * KAPPA[i_] / _gsum(cpos * KAPPA[j_])
    unscaled = KAPPA[i_] / _gsum(KAPPA[j_])
    dv.step("nw_weights_scale_invariant_general_n", sp.Eq(scaled, unscaled, evaluate=False), by="identically_zero",
            why="c K_i / Σ_j c K_j = K_i / Σ_j K_j for any c > 0 (general n)", uses=["nw"])
    total = sp.Sum(KAPPA[i_] / _gsum(KAPPA[j_]), (i_, 1, n_keys))
    dv.step("nw_weights_sum_to_one_general_n", sp.Eq(total, 1, evaluate=False), by="identically_zero", uses=["nw"],
            why="Σ_i K_i/Σ_j K_j = 1: pull the constant denominator out, the two sums agree up to the "
                "name of the bound index")

    # 3. Gaussian kernel factorisation (d_k = 2 explicit; general d_k via polarisation)
    kk = KEYS[0]
    gfac = sp.exp(-_sq(q) / (2 * b**2)) * sp.exp(_dot(q, kk) / b**2) * sp.exp(-_sq(kk) / (2 * b**2))
    dv.step("gaussian_factorises", sp.Eq(_gauss(q, kk, b), gfac, evaluate=False), by="expand",
            why="exp(-|q-k|²/(2b²)) = exp(-|q|²/(2b²)) exp(q·k/b²) exp(-|k|²/(2b²)) (d_k = 2)",
            uses=["gaussian", "real"])
    pol_l = sp.Sum(sp.expand((QI[l_] - KI[l_]) ** 2), (l_, 1, dk_int))
    pol_r = (sp.Sum(QI[l_] ** 2, (l_, 1, dk_int)) - 2 * sp.Sum(QI[l_] * KI[l_], (l_, 1, dk_int))
             + sp.Sum(KI[l_] ** 2, (l_, 1, dk_int)))
    dv.step("polarisation_general_dk", sp.Eq(pol_l, pol_r, evaluate=False), by="identically_zero",
            why="Σ_l (q_l - k_l)² = |q|² - 2 q·k + |k|² for general d_k", uses=["real"])
    g_pol = sp.exp(-(Qn - 2 * P[j_] + M[j_]) / (2 * b**2))
    g_fac = sp.exp(-Qn / (2 * b**2)) * sp.exp(P[j_] / b**2) * sp.exp(-M[j_] / (2 * b**2))
    dv.step("gaussian_factorises_general_dk", sp.Eq(g_pol, g_fac, evaluate=False), by="expand",
            why="the same factorisation with Q = |q|², p_j = q·k_j, m_j = |k_j|²", uses=["gaussian", "real"])

    # 4. Gaussian NW = softmax of the shifted scores (q·k_i - |k_i|²/2)/b², any key norms
    gw = _normalise([_gauss(q, k, b) for k in KEYS])
    shifted = _normalise([sp.exp((_dot(q, k) - _sq(k) / 2) / b**2) for k in KEYS])
    for i in range(3):
        dv.step(f"gaussian_nw_is_shifted_softmax_w{i+1}", sp.Eq(gw[i], shifted[i], evaluate=False),
                by="identically_zero",
                why="the q-factor exp(-|q|²/(2b²)) cancels; the key factor stays (n = 3, d_k = 2)",
                uses=["nw", "gaussian", "real"])
    kap_n = sp.exp(P[i_] / b**2 - M[i_] / (2 * b**2))
    lhs_n = sp.exp(-Qn / (2 * b**2)) * kap_n / _gsum(sp.exp(-Qn / (2 * b**2)) * kap_n.subs(i_, j_))
    rhs_n = kap_n / _gsum(kap_n.subs(i_, j_))
    dv.step("gaussian_nw_is_shifted_softmax_general_n", sp.Eq(lhs_n, rhs_n, evaluate=False), by="identically_zero",
            why="instance of scale invariance with c = exp(-|q|²/(2b²)) (general n)",
            uses=["nw", "gaussian", "real"])

    # 5. equal key norms: the key factor cancels too, Gaussian NW = softmax with scale 1/b²
    u = sp.symbols("u_1:4", real=True)
    circle = [(u[0], sp.sqrt(r**2 - u[0] ** 2)), (u[1], sp.sqrt(r**2 - u[1] ** 2)),
              (u[2], -sp.sqrt(r**2 - u[2] ** 2))]
    gw_eq = _normalise([_gauss(q, k, b) for k in circle])
    sm_eq = _normalise([sp.exp(_dot(q, k) / b**2) for k in circle])
    for i in range(3):
        dv.step(f"equal_norms_gaussian_is_softmax_w{i+1}", sp.Eq(gw_eq[i], sm_eq[i], evaluate=False),
                by="identically_zero",
                why="keys on the circle |k| = r (coordinates (u, ±sqrt(r²-u²))): Gaussian NW weight = "
                    "softmax weight with scale 1/b²",
                uses=["nw", "gaussian", "real", "equal_key_norms"])
    kap_r = sp.exp(P[i_] / b**2 - r**2 / (2 * b**2))
    lhs_r = kap_r / _gsum(kap_r.subs(i_, j_))
    rhs_r = sp.exp(P[i_] / b**2) / _gsum(sp.exp(P[j_] / b**2))
    dv.step("equal_norms_gaussian_is_softmax_general_n", sp.Eq(lhs_r, rhs_r, evaluate=False), by="identically_zero",
            why="m_j = r² for all j: the common factor cancels (general n)",
            uses=["nw", "gaussian", "real", "equal_key_norms"])

    # equal norms are also necessary: at q = 0 softmax is uniform, Gaussian weights are ∝ exp(-m_i/(2b²))
    mi, mj = sp.symbols("m_i m_j", nonnegative=True)
    ratio_at_0 = sp.exp(-mi / (2 * b**2)) / sp.exp(-mj / (2 * b**2))
    dv.step("equal_norms_necessary", sp.Eq(mi, mj, evaluate=False), by="solve",
            equation=sp.Eq(ratio_at_0, 1, evaluate=False),
            why="at q = 0 every softmax weight is 1/n while w_i^G/w_j^G = exp((m_j - m_i)/(2b²)); this is 1 "
                "(for every pair) only if all |k_i|² are equal",
            uses=["nw", "gaussian", "real"])

    # 6. the bandwidth: s = 1/b²  =>  b = 1/sqrt(s) = d_k^{1/4}
    b_of_s = 1 / sp.sqrt(s)
    dv.step("bandwidth_from_scale", sp.Eq(b, b_of_s, evaluate=False), by="solve",
            equation=sp.Eq(1 / b**2, s, evaluate=False),
            why="matching exp(q·k/b²) with exp(s q·k): the positive root of 1/b² = s",
            uses=["gaussian", "equal_key_norms"])
    b_dk = sp.Subs(b_of_s, s, 1 / sp.sqrt(d_k))
    dv.step("gaussian_bandwidth_dk", sp.Eq(b_dk, d_k ** sp.Rational(1, 4), evaluate=False), by="simplify",
            why="s = 1/sqrt(d_k) gives b = d_k^{1/4}", uses=["head", "gaussian", "equal_key_norms"])
    quarter, half = d_k ** sp.Rational(1, 4), sp.sqrt(d_k)
    dv.step("bandwidth_is_not_scale", sp.Eq(d_k, 1, evaluate=False), by="solve",
            equation=sp.Or(sp.Eq(quarter, 1 / half, evaluate=False), sp.Eq(half, 1 / half, evaluate=False)),
            why="the bandwidth d_k^{1/4} or the temperature sqrt(d_k) equals the scale 1/sqrt(d_k) only at "
                "d_k = 1 (times sqrt(d_k) > 0: d_k^{3/4} = 1 resp. d_k = 1)",
            uses=["head", "gaussian"])

    # 7. exact counterexample: unequal key norms (d_k = 4, s = 1/2, b² = 2)
    dk4 = 4
    s4 = 1 / sp.sqrt(sp.Integer(dk4))
    b4 = 1 / sp.sqrt(s4)
    qc = (1, 0, 0, 0)
    kc = [(0, 0, 0, 0), (2, 0, 0, 0)]
    yc = (0, 1)
    soft_c = _normalise([sp.exp(s4 * _dot(qc, k)) for k in kc])
    gauss_c = _normalise([_gauss(qc, k, b4) for k in kc])
    est_soft = sp.simplify(sum(w * y for w, y in zip(soft_c, yc)))
    est_gauss = sp.simplify(sum(w * y for w, y in zip(gauss_c, yc)))
    # the two estimates for n = 2 keys on the q-axis (only the first coordinate is non-zero)
    q0, k01, k02 = sp.symbols("q k_1 k_2", real=True)
    soft_2 = sp.exp(s * q0 * k02) / (sp.exp(s * q0 * k01) + sp.exp(s * q0 * k02))
    gauss_2 = _gauss((q0,), (k02,), b) / (_gauss((q0,), (k01,), b) + _gauss((q0,), (k02,), b))
    at = ((q0, k01, k02), (qc[0], kc[0][0], kc[1][0]))
    dv.step("counterexample_values",
            sp.Eq(sp.Tuple(sp.Subs(soft_2, (s, *at[0]), (s4, *at[1])), sp.Subs(gauss_2, (b, *at[0]), (b4, *at[1]))),
                  sp.Tuple(sp.E / (1 + sp.E), sp.Rational(1, 2)), evaluate=False),
            by="simplify",
            why="q = e_1, k_1 = 0, k_2 = 2e_1 (norms 0 and 2), y = (0, 1), d_k = 4: softmax gives "
                "e/(1+e), Gaussian NW with b = d_k^{1/4} = sqrt(2) gives 1/2",
            uses=["head", "nw", "gaussian"])
    dv.step("counterexample_differs", sp.Gt(est_soft, est_gauss, evaluate=False), by="nonneg",
            why="e/(1+e) - 1/2 = (e-1)/(2(e+1)) > 0", uses=["head", "nw", "gaussian"])

    # the stated bandwidth at one configuration, in closed form: d_k = 4, q = e_1, unit keys +-e_1,
    # values (1, 0) (keys of one norm, so the Gaussian reading applies)
    half = sp.Rational(1, 2)
    w_head = [sp.exp(half * 1), sp.exp(half * -1)]                    # exp(s q.k), s = 1/sqrt(4)
    head_named = sp.Mul(w_head[0], sp.Pow(sp.Add(*w_head, evaluate=False), -1, evaluate=False), evaluate=False)
    sq_dist = [0, 4]                                                  # |q - k|^2 for k = e_1, -e_1
    def gauss_named(bw):
        w = [sp.exp(sp.Mul(-sp.Integer(dd), sp.Pow(2 * bw**2, -1), evaluate=False), evaluate=False) for dd in sq_dist]
        return sp.Mul(w[0], sp.Pow(sp.Add(*w, evaluate=False), -1, evaluate=False), evaluate=False)
    dv.step("named_case_head", sp.Eq(head_named, 1 / (1 + sp.exp(-1)), evaluate=False), by="simplify",
            why="d_k = 4, q = e_1, keys +-e_1, values (1, 0): softmax weights exp(+-1/2) give 1/(1 + e^-1)",
            uses=["head", "nw"])
    dv.step("named_case_stated_bandwidth", sp.Eq(gauss_named(half), 1 / (1 + sp.exp(-8)), evaluate=False), by="simplify",
            why="Gaussian NW with the stated b = 1/sqrt(d_k) = 1/2: weights exp(0), exp(-4/(2/4)) = e^-8",
            uses=["nw", "gaussian"])
    dv.step("named_case_derived_bandwidth", sp.Eq(gauss_named(sp.sqrt(2)), head_named, evaluate=False), by="simplify",
            why="with b = d_k^(1/4) = sqrt 2 the weights are exp(0), exp(-4/4) = e^-1: the head's estimate",
            uses=["nw", "gaussian", "equal_key_norms"])
    dv.step("named_case_differs", sp.Gt(1 / (1 + sp.exp(-8)) - 1 / (1 + sp.exp(-1)), sp.Rational(1, 4),
                                        evaluate=False), by="nonneg",
            why="1/(1 + e^-8) - 1/(1 + e^-1) = 0.2686...: the stated bandwidth moves the estimate by a quarter of "
                "the values' range", uses=["head", "nw", "gaussian"])

    # results
    qk, ksq = sp.symbols("qk k_sq", real=True)
    dk_dom = {d_k: (1, 1024)}
    dv.result("softmax_scale", 1 / sp.sqrt(d_k), args=(d_k,), uses=["head"], domain=dk_dom,
              description="s = 1/sqrt(d_k): the factor multiplying q·k (inverse temperature)")
    dv.result("temperature", sp.sqrt(d_k), args=(d_k,), uses=["head"], domain=dk_dom,
              description="tau = sqrt(d_k): exp(q·k/tau)")
    dv.result("gaussian_bandwidth", d_k ** sp.Rational(1, 4), args=(d_k,), domain=dk_dom,
              uses=["head", "gaussian", "equal_key_norms"],
              description="b = d_k^{1/4}: the Gaussian NW bandwidth a softmax head equals (equal key norms)")
    dv.result("bandwidth_from_scale", b_of_s, args=(s,), uses=["gaussian", "equal_key_norms"],
              description="b = 1/sqrt(s): Gaussian bandwidth for softmax scale s (equal key norms)")
    dv.result("gaussian_softmax_score", (qk - ksq / 2) / b**2, args=(qk, ksq, b), uses=["nw", "gaussian"],
              domain={b: (0.1, 10), ksq: (0, 100)},
              description="Gaussian NW = softmax of (q·k_i - |k_i|²/2)/b² (any key norms)")
    coord_dom = {x: (-3, 3) for x in (q1, q2, *[c for k in KEYS for c in k])}
    dv.result("exp_kernel", sp.exp(s * _dot(q, KEYS[0])), args=(q1, q2, *KEYS[0], s), uses=["head", "nw"],
              domain={**coord_dom, s: (0.01, 2)},
              description="K(q,k) = exp(s q·k), d_k = 2")
    dv.result("gaussian_kernel", _gauss(q, KEYS[0], b), args=(q1, q2, *KEYS[0], b), uses=["gaussian"],
              domain={**coord_dom, b: (0.5, 5)},
              description="exp(-|q-k|²/(2b²)), d_k = 2")
    flat_keys = [c for k in KEYS for c in k]
    dv.result("attention_estimate_n3", nw_out, args=(q1, q2, *flat_keys, *Y, s), uses=["head", "nw"],
              domain={**coord_dom, s: (0.01, 2)},
              description="Σ_i softmax_i(s q·k) y_i for n = 3 keys in d_k = 2")
    dv.result("gaussian_nw_estimate_n3", sum(w * y for w, y in zip(gw, Y)), args=(q1, q2, *flat_keys, *Y, b),
              uses=["nw", "gaussian"], description="Gaussian NW estimate, n = 3 keys in d_k = 2",
              domain={**coord_dom, b: (0.5, 5)})
    dv.result("counterexample", sp.Tuple(est_soft, est_gauss), codegen=False, uses=["head", "nw", "gaussian"],
              description="(softmax estimate, Gaussian NW estimate) for q = e_1, k = (0, 2e_1), y = (0, 1), "
                          "d_k = 4")

    # findings
    dv.compare("softmax_is_exponential_nw",
               stated="one softmax attention head is exactly a NW estimator with the exponential kernel",
               derived="softmax(s q·k_i) = exp(s q·k_i)/Σ_j exp(s q·k_j), the NW weights of "
                       "K(q,k) = exp(s q·k); exact for any n, d_k, keys and shift",
               holds=True, method="steps softmax_is_exp_nw_*, softmax_shift_invariant_general_n",
               uses=["head", "nw", "real"])
    dv.compare("stated_bandwidth",
               stated="bandwidth h = 1/sqrt(d_k)",
               derived="1/sqrt(d_k) is the scale s multiplying q·k (inverse temperature); the temperature "
                       "is sqrt(d_k); read as a Gaussian NW (equal key norms only) the bandwidth is "
                       "b = 1/sqrt(s) = d_k^{1/4}. Neither equals 1/sqrt(d_k) unless d_k = 1",
               holds=False, method="steps bandwidth_from_scale, gaussian_bandwidth_dk, bandwidth_is_not_scale",
               uses=["head", "gaussian", "equal_key_norms"])
    dv.compare("gaussian_needs_equal_key_norms",
               stated="(literature reading) softmax attention = Gaussian-kernel NW",
               derived="only if all keys have equal norm; in general Gaussian NW = softmax of "
                       "(q·k_i - |k_i|²/2)/b². Counterexample d_k = 4, q = e_1, k = (0, 2e_1), y = (0, 1): "
                       f"softmax {est_soft}, Gaussian NW 1/2",
               holds=False, method="steps counterexample_values, counterexample_differs",
               uses=["head", "nw", "gaussian"])
    return dv
