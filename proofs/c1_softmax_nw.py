"""C1: one softmax attention head is a Nadaraya-Watson (NW) estimator; when it is a *Gaussian* one.

With ``q = W_Qᵀ x``, ``k_i = W_Kᵀ x_i`` and the scale ``s = 1/sqrt(d_k)``, the attention weights are
exactly the NW weights of the kernel ``K(q, k) = exp(s q·k)``. The Gaussian kernel's q-factor cancels
in every NW weight, its k-factor only when all keys have one norm: then softmax with scale s is
Gaussian NW with ``b = d_k^{1/4}``, and the summary's "bandwidth 1/sqrt(d_k)" is the scale (inverse
temperature), not a bandwidth. Unequal key norms break the Gaussian reading (an exact case). Checked
with explicit symbols (n = 3 keys, d_k = 2) and for general n (``Sum`` over an ``IndexedBase``) and d_k.
"""

from __future__ import annotations

import sympy as sp

from .core import Derivation, eq, gt
from .notation import d_k, entries, normalised, spell

__all__ = ["build", "CLAIM", "TITLE", "STATED", "NAMED_CASE"]

CLAIM = "C1"
TITLE = "A softmax attention head is a Nadaraya-Watson estimator with the exponential kernel"
STATED = (r"One softmax attention head is exactly a Nadaraya-Watson estimator with the exponential kernel; "
          r"the summary calls its bandwidth $h = 1/\sqrt{d_k}$.")

#: The configuration at which the stated bandwidth's discrepancy is worked out in closed form
#: (the check's headline figure): d_k = 4, q = e_1, two unit keys ±e_1, values (1, 0).
NAMED_CASE = {"d_k": 4, "q": (1, 0, 0, 0), "keys": ((1, 0, 0, 0), (-1, 0, 0, 0)), "values": (1, 0)}

# Local symbols ---------------------------------------------------------------------------------
s = sp.Symbol("s", positive=True)          # softmax scale (inverse temperature), 1/sqrt(d_k)
b = sp.Symbol("b", positive=True)          # Gaussian bandwidth
r = sp.Symbol("r", positive=True)          # common key norm
shift = sp.Symbol("m_shift", real=True)    # the max-subtraction shift of a stable softmax
key_norm = sp.Symbol("key_norm", positive=True)   # |k_i|, in the assumption's formula
q1, q2 = sp.symbols("q_1 q_2", real=True)
KEYS = [sp.symbols(f"k_{i}1 k_{i}2", real=True) for i in (1, 2, 3)]
Y = sp.symbols("y_1:4", real=True)
# the entries of the projections W_Q, W_K (d = 3, d_k = 2), printed W_{Q,11}, ... (spelled on import)
WQ, WK = entries("WQ", 3, 2, "W_{Q,#}"), entries("WK", 3, 2, "W_{K,#}")

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

# how the multi-letter names print (notation.spell): m_shift would print as m_{shift}
spell(m_shift=r"m_{\mathrm{shift}}", key_norm=r"\lVert k_i \rVert", qk=r"q \cdot k", k_sq=r"\lVert k \rVert^{2}")


def _dot(u, v):
    return sum(a * c for a, c in zip(u, v))


def _sq(u):
    return _dot(u, u)


def _gauss(q, k, bw):
    return sp.exp(-_sq([a - c for a, c in zip(q, k)]) / (2 * bw**2))


def _gsum(expr, idx=j_):
    return sp.Sum(expr, (idx, 1, n_keys))


def _define(dv: Derivation) -> None:
    """What every symbol of the steps and results means."""
    dv.define(s=r"the softmax scale $s = 1/\sqrt{d_k}$ (an inverse temperature)",
              b="the Gaussian bandwidth", r="the common norm of the keys", m_shift="the shift a stable softmax "
              "subtracts from every score (the largest score)",
              key_norm=r"the norm $\lVert k_i \rVert$ of key $i$",
              q_=r"the query $q$ and its entries", k_=r"the keys $k_i$ and their entries",
              y_=r"the values $y_i$", x_="entries of the raw query input", xi_="entries of a raw key input",
              WQ_=r"entries of the query projection $W_Q$", WK_=r"entries of the key projection $W_K$",
              i="a key index", j="a key index", l="a coordinate index",
              p=r"the scores $p_j = q \cdot k_j$", m=r"the squared key norms $m_j = \lVert k_j \rVert^2$",
              m_=r"the squared key norms $m_i = \lVert k_i \rVert^2$",
              kappa=r"the kernel values $\kappa_i = K(q, k_i)$", z=r"the scores $z_i$ of a softmax",
              Q=r"the squared query norm $Q = \lVert q \rVert^2$", c="a positive constant factor",
              u_="the first coordinates of keys on a circle",
              qk=r"the score $q \cdot k$", k_sq=r"the squared key norm $\lVert k \rVert^2$")


def build() -> Derivation:
    dv = Derivation(CLAIM, TITLE, STATED, markup=True)
    q = (q1, q2)

    dv.assume("head", r"$q = W_Q^\top x$, $k_i = W_K^\top x_i$ in $\mathbb{R}^{d_k}$; scores $s q \cdot k_i$ with "
              r"$s = 1/\sqrt{d_k}$; attention weights $\mathrm{softmax}$ of the scores, output $\sum_i w_i y_i$",
              kind="setting")
    dv.assume("nw", r"NW estimator of kernel $K$: weights $w_i = K(q, k_i)/\sum_j K(q, k_j)$, estimate "
              r"$\sum_i w_i y_i$", kind="setting")
    dv.assume("gaussian", r"Gaussian kernel $\exp(-\lVert q - k \rVert^2/(2 b^2))$, bandwidth $b > 0$", kind="setting")
    dv.assume("real", r"all coordinates, values and the shift are real; $s, b, r > 0$", kind="setting")
    dv.assume("equal_key_norms", r"every key has the same norm: $\lVert k_i \rVert = r$ for all $i$", kind="model",
              expr=eq(key_norm, r))
    _define(dv)

    # 1-2. the exponential-kernel identity --------------------------------------------------------
    with dv.group("exponential_kernel", "softmax attention is the NW estimator of the exponential kernel "
                                        r"$\exp(s q \cdot k)$, exactly, for any $n$, $d_k$ and shift") as expo:
        # the score is a bilinear form of the raw inputs: the head sees x only through its projections
        x = sp.Matrix(sp.symbols("x_1:4", real=True))
        xi = sp.Matrix(sp.symbols("xi_1:4", real=True))
        score = s * ((WQ.T * x).T * (WK.T * xi))[0, 0]
        dv.step("score_bilinear", eq(score, s * (x.T * WQ * WK.T * xi)[0, 0]), by="expand",
                why=r"$s (W_Q^\top x) \cdot (W_K^\top x_i) = s x^\top W_Q W_K^\top x_i$ ($d = 3$, $d_k = 2$, "
                    "symbolic entries)",
                uses=["head", "real"])

        # softmax (torch's stable form, any shift) = NW weights of K(q,k) = exp(s q·k), n = 3 explicit
        scores = [s * _dot(q, k) for k in KEYS]
        soft = normalised([sp.exp(z - shift) for z in scores])
        kexp = [sp.exp(s * _dot(q, k)) for k in KEYS]
        nw = normalised(kexp)
        for i in range(3):
            dv.step(f"softmax_is_exp_nw_w{i+1}", eq(soft[i], nw[i]), by="identically_zero",
                    why=r"$\exp(z_i - m)/\sum_j \exp(z_j - m) = K_i/\sum_j K_j$ with $K_i = \exp(s q \cdot k_i)$ "
                        r"($n = 3$, $d_k = 2$)",
                    uses=["head", "nw", "real"])
        att_out = sum(w * y for w, y in zip(soft, Y))
        nw_out = sum(w * y for w, y in zip(nw, Y))
        dv.step("attention_output_is_nw_estimate", eq(att_out, nw_out), by="identically_zero",
                uses=["head", "nw", "real"],
                why=r"$\sum_i \mathrm{softmax}_i y_i = \sum_i K_i y_i / \sum_j K_j$")

        # general n: shift invariance, scale invariance, weights sum to one
        soft_n = sp.exp(Zs[i_] - shift) / _gsum(sp.exp(Zs[j_] - shift))
        plain_n = sp.exp(Zs[i_]) / _gsum(sp.exp(Zs[j_]))
        dv.step("softmax_shift_invariant_general_n", eq(soft_n, plain_n), by="identically_zero",
                uses=["head", "real"],
                why=r"a common shift of all $n$ scores cancels (general $n$, symbolic sum)")
        scaled = cpos * KAPPA[i_] / _gsum(cpos * KAPPA[j_])
        unscaled = KAPPA[i_] / _gsum(KAPPA[j_])
        dv.step("nw_weights_scale_invariant_general_n", eq(scaled, unscaled), by="identically_zero",
                why=r"$c K_i / \sum_j c K_j = K_i / \sum_j K_j$ for any $c > 0$ (general $n$)", uses=["nw"])
        total = sp.Sum(KAPPA[i_] / _gsum(KAPPA[j_]), (i_, 1, n_keys))
        dv.step("nw_weights_sum_to_one_general_n", eq(total, 1), by="identically_zero", uses=["nw"],
                why=r"$\sum_i K_i/\sum_j K_j = 1$: pull the constant denominator out, the two sums agree up to "
                    "the name of the bound index")

        dk_dom = {d_k: (1, 1024)}
        coord_dom = {x_: (-3, 3) for x_ in (q1, q2, *[c for k in KEYS for c in k])}
        flat_keys = [c for k in KEYS for c in k]
        dv.result("softmax_scale", 1 / sp.sqrt(d_k), args=(d_k,), uses=["head"], domain=dk_dom,
                  description=r"$s = 1/\sqrt{d_k}$: the factor multiplying $q \cdot k$ (inverse temperature)", codegen=("numpy", "mpmath"))
        dv.result("temperature", sp.sqrt(d_k), args=(d_k,), uses=["head"], domain=dk_dom,
                  description=r"$\tau = \sqrt{d_k}$: $\exp(q \cdot k/\tau)$")
        dv.result("exp_kernel", sp.exp(s * _dot(q, KEYS[0])), args=(q1, q2, *KEYS[0], s), uses=["head", "nw"],
                  domain={**coord_dom, s: (0.01, 2)},
                  description=r"$K(q, k) = \exp(s q \cdot k)$, $d_k = 2$")
        dv.result("attention_estimate_n3", nw_out, args=(q1, q2, *flat_keys, *Y, s), uses=["head", "nw"],
                  domain={**coord_dom, s: (0.01, 2)},
                  description=r"$\sum_i \mathrm{softmax}_i(s q \cdot k) y_i$ for $n = 3$ keys in $d_k = 2$", codegen=("numpy", "mpmath"))
    dv.compare("softmax_is_exponential_nw",
               stated="one softmax attention head is exactly a NW estimator with the exponential kernel",
               derived=r"$\mathrm{softmax}(s q \cdot k_i) = \exp(s q \cdot k_i)/\sum_j \exp(s q \cdot k_j)$, the "
                       r"NW weights of $K(q, k) = \exp(s q \cdot k)$: exact for any $n$, $d_k$, keys and shift",
               supported_by=expo, uses=["head", "nw", "real"])

    # 3-5. the Gaussian reading, under equal key norms ---------------------------------------------
    with dv.group("gaussian_reading", r"with keys of one norm the head is Gaussian NW with bandwidth "
                                      r"$b = 1/\sqrt{s} = d_k^{1/4}$; for any key norms Gaussian NW is the "
                                      r"softmax of the shifted scores") as gauss_group:
        # Gaussian kernel factorisation (d_k = 2 explicit; general d_k via polarisation)
        kk = KEYS[0]
        gfac = sp.exp(-_sq(q) / (2 * b**2)) * sp.exp(_dot(q, kk) / b**2) * sp.exp(-_sq(kk) / (2 * b**2))
        dv.step("gaussian_factorises", eq(_gauss(q, kk, b), gfac), by="expand",
                why=r"$\exp(-\lVert q - k \rVert^2/(2 b^2)) = \exp(-\lVert q \rVert^2/(2 b^2)) \exp(q \cdot k/b^2) "
                    r"\exp(-\lVert k \rVert^2/(2 b^2))$ ($d_k = 2$)",
                uses=["gaussian", "real"])
        pol_l = sp.Sum(sp.expand((QI[l_] - KI[l_]) ** 2), (l_, 1, dk_int))
        pol_r = (sp.Sum(QI[l_] ** 2, (l_, 1, dk_int)) - 2 * sp.Sum(QI[l_] * KI[l_], (l_, 1, dk_int))
                 + sp.Sum(KI[l_] ** 2, (l_, 1, dk_int)))
        dv.step("polarisation_general_dk", eq(pol_l, pol_r), by="identically_zero",
                why=r"$\sum_l (q_l - k_l)^2 = \lVert q \rVert^2 - 2 q \cdot k + \lVert k \rVert^2$ for general "
                    r"$d_k$", uses=["real"])
        g_pol = sp.exp(-(Qn - 2 * P[j_] + M[j_]) / (2 * b**2))
        g_fac = sp.exp(-Qn / (2 * b**2)) * sp.exp(P[j_] / b**2) * sp.exp(-M[j_] / (2 * b**2))
        dv.step("gaussian_factorises_general_dk", eq(g_pol, g_fac), by="expand",
                why=r"the same factorisation with $Q = \lVert q \rVert^2$, $p_j = q \cdot k_j$, "
                    r"$m_j = \lVert k_j \rVert^2$", uses=["gaussian", "real"])

        # Gaussian NW = softmax of the shifted scores (q·k_i - |k_i|²/2)/b², any key norms
        gw = normalised([_gauss(q, k, b) for k in KEYS])
        shifted = normalised([sp.exp((_dot(q, k) - _sq(k) / 2) / b**2) for k in KEYS])
        for i in range(3):
            dv.step(f"gaussian_nw_is_shifted_softmax_w{i+1}", eq(gw[i], shifted[i]), by="identically_zero",
                    why=r"the query factor $\exp(-\lVert q \rVert^2/(2 b^2))$ cancels; the key factor stays "
                        r"($n = 3$, $d_k = 2$)",
                    uses=["nw", "gaussian", "real"])
        kap_n = sp.exp(P[i_] / b**2 - M[i_] / (2 * b**2))
        lhs_n = sp.exp(-Qn / (2 * b**2)) * kap_n / _gsum(sp.exp(-Qn / (2 * b**2)) * kap_n.subs(i_, j_))
        rhs_n = kap_n / _gsum(kap_n.subs(i_, j_))
        dv.step("gaussian_nw_is_shifted_softmax_general_n", eq(lhs_n, rhs_n), by="identically_zero",
                why=r"an instance of scale invariance with $c = \exp(-\lVert q \rVert^2/(2 b^2))$ (general $n$)",
                uses=["nw", "gaussian", "real"])

        # equal key norms: the key factor cancels too, Gaussian NW = softmax with scale 1/b²
        u = sp.symbols("u_1:4", real=True)
        circle = [(u[0], sp.sqrt(r**2 - u[0] ** 2)), (u[1], sp.sqrt(r**2 - u[1] ** 2)),
                  (u[2], -sp.sqrt(r**2 - u[2] ** 2))]
        gw_eq = normalised([_gauss(q, k, b) for k in circle])
        sm_eq = normalised([sp.exp(_dot(q, k) / b**2) for k in circle])
        for i in range(3):
            dv.step(f"equal_norms_gaussian_is_softmax_w{i+1}", eq(gw_eq[i], sm_eq[i]), by="identically_zero",
                    why=r"keys on the circle $\lVert k \rVert = r$ (coordinates $(u, \pm \sqrt{r^2 - u^2})$): the "
                        r"Gaussian NW weight is the softmax weight with scale $1/b^2$",
                    uses=["nw", "gaussian", "real", "equal_key_norms"])
        kap_r = sp.exp(P[i_] / b**2 - r**2 / (2 * b**2))
        lhs_r = kap_r / _gsum(kap_r.subs(i_, j_))
        rhs_r = sp.exp(P[i_] / b**2) / _gsum(sp.exp(P[j_] / b**2))
        dv.step("equal_norms_gaussian_is_softmax_general_n", eq(lhs_r, rhs_r), by="identically_zero",
                why=r"$m_j = r^2$ for all $j$: the common factor cancels (general $n$)",
                uses=["nw", "gaussian", "real", "equal_key_norms"])

        # 6. the bandwidth: s = 1/b²  =>  b = 1/sqrt(s) = d_k^{1/4}
        with dv.group("derived_bandwidth", r"matching $\exp(q \cdot k/b^2)$ with $\exp(s q \cdot k)$ gives "
                                           r"$b = 1/\sqrt{s} = d_k^{1/4}$"):
            b_of_s = 1 / sp.sqrt(s)
            dv.step("bandwidth_from_scale", eq(b, b_of_s), by="solve", equation=eq(1 / b**2, s),
                    why=r"matching $\exp(q \cdot k/b^2)$ with $\exp(s q \cdot k)$: the positive root of $1/b^2 = s$",
                    uses=["gaussian", "equal_key_norms"])
            b_dk = sp.Subs(b_of_s, s, 1 / sp.sqrt(d_k))
            dv.step("gaussian_bandwidth_dk", eq(b_dk, d_k ** sp.Rational(1, 4)), by="simplify",
                    why=r"$s = 1/\sqrt{d_k}$ gives $b = d_k^{1/4}$", uses=["head", "gaussian", "equal_key_norms"])
            dv.result("gaussian_bandwidth", d_k ** sp.Rational(1, 4), args=(d_k,), domain=dk_dom,
                      uses=["head", "gaussian", "equal_key_norms"],
                      description=r"$b = d_k^{1/4}$: the Gaussian NW bandwidth a softmax head equals (equal key "
                                  "norms)", codegen=("numpy", "mpmath"))
            dv.result("bandwidth_from_scale", b_of_s, args=(s,), uses=["gaussian", "equal_key_norms"],
                      description=r"$b = 1/\sqrt{s}$: the Gaussian bandwidth for softmax scale $s$ (equal key norms)", codegen=("numpy", "mpmath"))

        qk, ksq = sp.symbols("qk k_sq", real=True)
        dv.result("gaussian_softmax_score", (qk - ksq / 2) / b**2, args=(qk, ksq, b), uses=["nw", "gaussian"],
                  domain={b: (0.1, 10), ksq: (0, 100)},
                  description=r"Gaussian NW is the softmax of $(q \cdot k_i - \lVert k_i \rVert^2/2)/b^2$ (any key "
                              "norms)")
        dv.result("gaussian_kernel", _gauss(q, KEYS[0], b), args=(q1, q2, *KEYS[0], b), uses=["gaussian"],
                  domain={**coord_dom, b: (0.5, 5)},
                  description=r"$\exp(-\lVert q - k \rVert^2/(2 b^2))$, $d_k = 2$")
        dv.result("gaussian_nw_estimate_n3", sum(w * y for w, y in zip(gw, Y)), args=(q1, q2, *flat_keys, *Y, b),
                  uses=["nw", "gaussian"], description=r"Gaussian NW estimate, $n = 3$ keys in $d_k = 2$",
                  domain={**coord_dom, b: (0.5, 5)}, codegen=("mpmath",))
        dv.compare("gaussian_reading_equal_norms",
                   stated="the head is a (Gaussian) kernel smoother with a bandwidth",
                   derived=r"with keys of one common norm the head is Gaussian NW with bandwidth "
                           r"$b = 1/\sqrt{s} = d_k^{1/4}$; for any key norms Gaussian NW is the softmax of "
                           r"$(q \cdot k_i - \lVert k_i \rVert^2/2)/b^2$",
                   supported_by=gauss_group, uses=["nw", "gaussian", "equal_key_norms"])

    # 6'. the stated bandwidth is not a bandwidth: a proof that the two differ, and the named case
    with dv.group("stated_bandwidth", r"the stated $h = 1/\sqrt{d_k}$ is neither the Gaussian bandwidth "
                                      r"$d_k^{1/4}$ nor the temperature $\sqrt{d_k}$ unless $d_k = 1$; at the named "
                                      r"configuration it moves the estimate from $1/(1 + e^{-1})$ to "
                                      r"$1/(1 + e^{-8})$") as stated_group:
        quarter, half = d_k ** sp.Rational(1, 4), sp.sqrt(d_k)
        dv.step("bandwidth_is_not_scale", eq(d_k, 1), by="solve",
                equation=sp.Or(eq(quarter, 1 / half), eq(half, 1 / half)),
                why=r"the bandwidth $d_k^{1/4}$ or the temperature $\sqrt{d_k}$ equals the scale $1/\sqrt{d_k}$ only "
                    r"at $d_k = 1$ (times $\sqrt{d_k} > 0$: $d_k^{3/4} = 1$, resp. $d_k = 1$)",
                uses=["head", "gaussian"])

        # the stated bandwidth at one configuration, in closed form: d_k = 4, q = e_1, unit keys ±e_1,
        # values (1, 0) (keys of one norm, so the Gaussian reading applies)
        qn, kn, vn = NAMED_CASE["q"], NAMED_CASE["keys"], NAMED_CASE["values"]
        s4 = sp.Rational(1, 2)                                           # 1/sqrt(d_k) at d_k = 4
        w_head = [sp.exp(s4 * _dot(qn, k)) for k in kn]                 # exp(s q.k) = exp(±1/2)
        head_named = sp.Mul(sum(w * v for w, v in zip(w_head, vn)),
                            sp.Pow(sp.Add(*w_head, evaluate=False), -1, evaluate=False), evaluate=False)
        sq_dist = [_sq([a - c for a, c in zip(qn, k)]) for k in kn]     # |q - k|² = 0, 4

        def gauss_named(bw):
            w = [sp.exp(sp.Mul(-sp.Integer(dd), sp.Pow(2 * bw**2, -1), evaluate=False), evaluate=False)
                 for dd in sq_dist]
            return sp.Mul(sum(wi * v for wi, v in zip(w, vn)), sp.Pow(sp.Add(*w, evaluate=False), -1, evaluate=False),
                          evaluate=False)

        dv.step("named_case_head", eq(head_named, 1 / (1 + sp.exp(-1))), by="simplify",
                why=r"$d_k = 4$, $q = e_1$, keys $\pm e_1$, values $(1, 0)$: the softmax weights "
                    r"$\exp(\pm 1/2)$ give $1/(1 + e^{-1})$",
                uses=["head", "nw"])
        dv.step("named_case_stated_bandwidth", eq(gauss_named(s4), 1 / (1 + sp.exp(-8))), by="simplify",
                why=r"Gaussian NW with the stated $b = 1/\sqrt{d_k} = 1/2$: weights $\exp(0)$ and "
                    r"$\exp(-4/(2/4)) = e^{-8}$",
                uses=["nw", "gaussian"])
        dv.step("named_case_derived_bandwidth", eq(gauss_named(sp.sqrt(2)), head_named), by="simplify",
                why=r"with $b = d_k^{1/4} = \sqrt{2}$ the weights are $\exp(0)$ and $\exp(-4/4) = e^{-1}$: the "
                    "head's estimate",
                uses=["nw", "gaussian", "equal_key_norms"])
        dv.step("named_case_differs", gt(1 / (1 + sp.exp(-8)) - 1 / (1 + sp.exp(-1)), sp.Rational(1, 4)),
                by="nonneg",
                why=r"$1/(1 + e^{-8}) - 1/(1 + e^{-1}) = 0.2686\ldots$: the stated bandwidth moves the estimate by "
                    "more than a quarter of the values' range", uses=["head", "nw", "gaussian"])
    dv.compare("stated_bandwidth",
               stated=r"the head's bandwidth is $h = 1/\sqrt{d_k}$",
               derived=r"$1/\sqrt{d_k}$ is the scale $s$ multiplying $q \cdot k$ (an inverse temperature, the "
                       r"temperature is $\sqrt{d_k}$); read as Gaussian NW (keys of equal norm only) the bandwidth is "
                       r"$b = 1/\sqrt{s} = d_k^{1/4}$, and neither equals $1/\sqrt{d_k}$ unless $d_k = 1$. At "
                       r"$d_k = 4$, $q = e_1$, keys $\pm e_1$, values $(1, 0)$ Gaussian NW with $b = 1/2$ gives "
                       r"$1/(1 + e^{-8})$, the head $1/(1 + e^{-1})$",
               refuted_by=stated_group, uses=["head", "gaussian", "equal_key_norms"])

    # 7. unequal key norms: no Gaussian reading ------------------------------------------------------
    with dv.group("unequal_norms", r"with keys of unequal norms the head is no Gaussian NW smoother: equal norms "
                                   r"are necessary, and an exact case gives $e/(1 + e)$ against $1/2$") as unequal:
        # equal norms are also necessary: at q = 0 softmax is uniform, Gaussian weights are ∝ exp(-m_i/(2b²))
        mi, mj = sp.symbols("m_i m_j", nonnegative=True)
        ratio_at_0 = sp.exp(-mi / (2 * b**2)) / sp.exp(-mj / (2 * b**2))
        dv.step("equal_norms_necessary", eq(mi, mj), by="solve", equation=eq(ratio_at_0, 1),
                why=r"at $q = 0$ every softmax weight is $1/n$ while $w_i/w_j = \exp((m_j - m_i)/(2 b^2))$ for "
                    r"Gaussian NW; this is $1$ (for every pair) only if all $\lVert k_i \rVert^2$ are equal",
                uses=["nw", "gaussian", "real"])

        # exact counterexample: unequal key norms (d_k = 4, s = 1/2, b² = 2)
        s4 = 1 / sp.sqrt(sp.Integer(4))
        b4 = 1 / sp.sqrt(s4)
        qc = (1, 0, 0, 0)
        kc = [(0, 0, 0, 0), (2, 0, 0, 0)]
        yc = (0, 1)
        soft_c = normalised([sp.exp(s4 * _dot(qc, k)) for k in kc])
        gauss_c = normalised([_gauss(qc, k, b4) for k in kc])
        est_soft = sp.simplify(sum(w * y for w, y in zip(soft_c, yc)))
        est_gauss = sp.simplify(sum(w * y for w, y in zip(gauss_c, yc)))
        # the two estimates for n = 2 keys on the q-axis (only the first coordinate is non-zero)
        q0, k01, k02 = sp.symbols("q k_1 k_2", real=True)
        soft_2 = sp.exp(s * q0 * k02) / (sp.exp(s * q0 * k01) + sp.exp(s * q0 * k02))
        gauss_2 = _gauss((q0,), (k02,), b) / (_gauss((q0,), (k01,), b) + _gauss((q0,), (k02,), b))
        at = ((q0, k01, k02), (qc[0], kc[0][0], kc[1][0]))
        dv.step("counterexample_values",
                eq(sp.Tuple(sp.Subs(soft_2, (s, *at[0]), (s4, *at[1])), sp.Subs(gauss_2, (b, *at[0]), (b4, *at[1]))),
                   sp.Tuple(sp.E / (1 + sp.E), sp.Rational(1, 2))),
                by="simplify",
                why=r"$q = e_1$, $k_1 = 0$, $k_2 = 2 e_1$ (norms $0$ and $2$), $y = (0, 1)$, $d_k = 4$: softmax gives "
                    r"$e/(1 + e)$, Gaussian NW with $b = d_k^{1/4} = \sqrt{2}$ gives $1/2$",
                uses=["head", "nw", "gaussian"])
        dv.step("counterexample_differs", gt(est_soft, est_gauss), by="nonneg",
                why=r"$e/(1 + e) - 1/2 = (e - 1)/(2 (e + 1)) > 0$", uses=["head", "nw", "gaussian"])
        dv.result("counterexample", sp.Tuple(est_soft, est_gauss), uses=["head", "nw", "gaussian"],
                  description=r"(softmax estimate, Gaussian NW estimate) for $q = e_1$, $k = (0, 2 e_1)$, "
                              r"$y = (0, 1)$, $d_k = 4$")
    dv.compare("gaussian_needs_equal_key_norms",
               stated="softmax attention is a Gaussian-kernel NW estimator (a reading in the literature)",
               derived=r"only if all keys have one norm; in general Gaussian NW is the softmax of "
                       r"$(q \cdot k_i - \lVert k_i \rVert^2/2)/b^2$. At $d_k = 4$, $q = e_1$, keys $0$ and $2 e_1$, "
                       r"values $(0, 1)$ the head gives $e/(1 + e)$, Gaussian NW gives $1/2$ at every bandwidth",
               refuted_by=unequal, uses=["head", "nw", "gaussian"])
    return dv
