"""C7 (Thm 6.1): the optimal split of a fixed budget ``D = H d_k`` into heads and head size.

The summary states ``d_k* ~ (log n)^{2/(4+d)}`` and ``H*`` nearly linear in ``D`` but gives no
MSE model. Every candidate model is therefore written out as ``model`` assumptions:

* kernel rates ``bias^2 = c_b h^4``, per-head variance ``V = c_v / (n h^s)``;
* bandwidth ``h = d_k^{-1/2}`` (the summary's) or ``h = d_k^{1/4}`` (the Gaussian bandwidth of
  the softmax kernel with equal key norms, see C1);
* ``s = d`` (kernel acting in input space, models "a") or ``s = d_k`` (kernel in the head's own
  space, models "b");
* ensemble variance from the C5 model (uniform weights, equal ``V``, ``C_hh' = rho_hh' V``):
  ``corr`` fully correlated heads (``V``), ``orth`` orthogonal heads (``V/H``, needs ``D <= d``),
  ``frame`` the best overlap for ``D > d`` (fusion-frame bound, ``V d_k / d``).

For each model: the MSE as a function of ``d_k`` (``H = D/d_k``), the stationarity equation,
the optimum (closed form where one exists), and the growth of ``d_k*`` and ``H*``.
"""

from __future__ import annotations

import sympy as sp

from .core import Derivation
from .notation import D, H, V, d, d_k, n

__all__ = ["build", "MODELS_A", "MODELS_B", "MODELS_GAUSS"]

x = d_k
c_b = sp.Symbol("c_b", positive=True)   # bias constant: bias^2 = c_b h^4
c_v = sp.Symbol("c_v", positive=True)   # variance constant: V = c_v / (n h^s)
X = sp.Symbol("X", positive=True)       # a stationary point d_k*
N = sp.Symbol("N", positive=True)       # variance divisor of the ensemble (1, D or d)
A, B, a, b = sp.symbols("A B a b", positive=True)   # the generic trade-off A x^-a + B x^b
rho_bar = sp.Symbol("rho_bar", real=True)          # mean off-diagonal overlap
delta = sp.Symbol("delta", nonnegative=True)       # excess overlap above the bound
L = sp.Symbol("L", positive=True)       # log of the right-hand side of stationarity (b)
c = sp.Symbol("c", positive=True)       # a multiple of the asymptotic root
k = sp.Symbol("k", nonnegative=True)    # 0 (corr) or 1 (orth, frame) in models b
w = sp.Symbol("w", nonnegative=True)    # w = x log x + 1/e >= 0
p = sp.Symbol("p", positive=True)
C0 = sp.Symbol("C0", real=True)
hs = sp.Symbol("h", positive=True)      # the bandwidth, before it is written in d_k

ARGS = (d_k, n, D, d, c_b, c_v)
#: The optima do not depend on d_k: their code takes the problem constants only.
OPT_ARGS = ARGS[1:]


def _eq(lhs, rhs):
    return sp.Eq(lhs, rhs, evaluate=False)


def _ge(lhs, rhs):
    return sp.Ge(lhs, rhs, evaluate=False)


def _gt(lhs, rhs):
    return sp.Gt(lhs, rhs, evaluate=False)


def _le(lhs, rhs):
    return sp.Le(lhs, rhs, evaluate=False)


#: ensemble variance divisor per ensemble model: MSE variance term = V * d_k^e / N.
ENSEMBLES = {"corr": (0, sp.Integer(1)), "orth": (1, D), "frame": (1, d)}
MODELS_A = tuple(f"a_{e}" for e in ENSEMBLES)
MODELS_B = tuple(f"b_{e}" for e in ENSEMBLES)
MODELS_GAUSS = tuple(f"gauss_a_{e}" for e in ENSEMBLES)

_ENS_USES = {"corr": ["c5_model", "ens_corr"], "orth": ["c5_model", "ens_orth"],
             "frame": ["c5_model", "ens_frame", "fusion_frame_bound"]}


def _lemma_optimum(A_, a_, B_, b_):
    """Minimiser of ``A x^-a + B x^b`` (the lemma below), instantiated."""
    return (a_ * A_ / (b_ * B_)) ** (1 / (a_ + b_))


def _assumptions(der: Derivation) -> None:
    der.assume("budget", "H d_k = D with d_k > 0 continuous, H = D/d_k; 0 < d_k <= D (H >= 1)",
               kind="setting", expr=_eq(H * d_k, D))
    der.assume("domains", "n, D, c_b, c_v > 0; d a positive integer", kind="setting")
    der.assume("bias_rate", "squared bias of each head = c_b h^4 (standard NW rate)",
               expr=c_b * sp.Symbol("h") ** 4)
    der.assume("variance_rate", "variance of each head V = c_v / (n h^s) (standard NW rate)")
    # C1 shows that, written as a Gaussian kernel (equal key norms), the softmax kernel has bandwidth
    # d_k^(1/4), not d_k^(-1/2). Models a/b follow the summary's h = d_k^(-1/2) as SPEC asks (finding
    # "bandwidth_convention"); models gauss_a derive the variant with h = d_k^(1/4).
    der.assume("bandwidth_summary", "h = d_k^(-1/2), the summary's bandwidth (SPEC C1)")
    der.assume("bandwidth_gauss", "h = d_k^(1/4): the Gaussian bandwidth of the softmax kernel with "
               "equal key norms (C1), exp(<q,k>/sqrt(d_k)) ∝ exp(-|q-k|^2 / (2 sqrt(d_k)))")
    der.assume("s_input", "variance exponent s = d: the kernel smooths in the d-dim input space")
    der.assume("s_head", "variance exponent s = d_k: the kernel smooths in the head's own space")
    der.assume("c5_model", "uniform weights 1/H, equal head variances V, C_hh' = rho_hh' V (C5)")
    der.assume("ens_corr", "fully correlated heads: rho_hh' = 1")
    der.assume("ens_orth", "orthogonal heads: rho_hh' = 0 for h != h' (feasible iff D <= d)")
    der.assume("ens_frame", "D > d and the overlap attains the fusion-frame bound (tight fusion frame)")
    der.assume("fusion_frame_bound", "sum_{h,h'} |U_h^T U_h'|_F^2 >= (H d_k)^2 / d (SPEC C6)",
               kind="setting")
    der.assume("interior", "the continuous optimum lies in (0, D] (otherwise H* = 1)")
    der.assume("d_gt_4", "d > 4 (needed for an interior optimum with h = d_k^(1/4) and 1/H variance)")
    der.assume("n_eff_log", "effective sample size log n instead of n (reverse-engineered, non-standard)")


def _ensemble_variance(der: Derivation) -> None:
    var_mean = V / H * (1 + (H - 1) * rho_bar)
    der.step("ens_var_mean_overlap", _eq(V / H**2 * (H + H * (H - 1) * rho_bar), var_mean), by="expand",
             why="Var(sum f_h / H) = V/H^2 sum_{h,h'} rho_hh'; rho_hh = 1, rho_bar the off-diagonal mean",
             uses=["c5_model"])
    der.step("ens_var_corr", _eq(sp.Subs(var_mean, rho_bar, 1), V), by="simplify", uses=["c5_model", "ens_corr"])
    der.step("ens_var_orth", _eq(sp.Subs(var_mean, rho_bar, 0), V / H), by="simplify",
             uses=["c5_model", "ens_orth"])
    rho_min = (H * x / d - 1) / (H - 1)
    der.step("frame_rho_bar_min", _eq(((H * x) ** 2 / d / x - H) / (H * (H - 1)), rho_min), by="rational",
             why="sum rho = (1/d_k) sum |U_h^T U_h'|^2 >= H^2 d_k/d; rho_bar = (sum rho - H)/(H(H-1)) "
                 ">= (D/d - 1)/(H - 1)", uses=["fusion_frame_bound", "budget"])
    der.step("frame_var_at_bound", _eq(sp.Subs(var_mean, rho_bar, rho_min), V * x / d), by="simplify",
             uses=["c5_model", "fusion_frame_bound"])
    # (H - 1) rho_bar = (H d_k/d - 1) + (H - 1) delta, delta >= 0 the excess over the bound
    der.step("frame_var_lower_bound", _ge(V / H * (1 + (H * x / d - 1) + (H - 1) * delta), V * x / d),
             by="certificate", certificate=V * (H - 1) * delta / H,
             why="any overlap rho_bar = bound + delta, delta >= 0, gives ensemble variance >= V d_k / d",
             uses=["c5_model", "fusion_frame_bound"])
    der.step("frame_var_in_budget", _eq(sp.Subs(V / H, H, D / x), V * x / D), by="simplify",
             why="V/H = V d_k/D; so the best ensemble variance is V d_k / min(D, d) for every D",
             uses=["budget"])


def _lemma(der: Derivation) -> None:
    f = A * x ** (-a) + B * x ** b
    der.step("lemma_derivative", _eq(sp.Derivative(f, x), x ** (-a - 1) * (b * B * x ** (a + b) - a * A)),
             by="expand", why="f' = x^(-a-1) (b B x^(a+b) - a A): one sign change, from - to +")
    xs = _lemma_optimum(A, a, B, b)
    der.step("lemma_solve", _eq(x, xs), by="solve", equation=_eq(b * B * x ** (a + b) - a * A, 0),
             why="the unique positive root of f' (x^(a+b) is increasing): the global minimiser")
    der.step("lemma_root_power", _eq(sp.Pow(xs, a + b, evaluate=False), a * A / (b * B)), by="simplify")
    at_X = ((x, B), (X, a * A / (b * X ** (a + b))))     # x = X and B eliminated through X^(a+b) = a A/(b B)
    der.step("lemma_stationary", _eq(sp.Subs(sp.Derivative(f, x), *at_X), 0), by="expand",
             why="at X with X^(a+b) = a A/(b B)")
    der.step("lemma_second_derivative",
             _eq(sp.Subs(sp.Derivative(f, (x, 2)), *at_X), a * A * (a + b) * X ** (-a - 2)), by="expand")
    der.step("lemma_second_derivative_positive", _gt(a * A * (a + b) * X ** (-a - 2), 0), by="nonneg")


def _closed_form_model(der: Derivation, name: str, mse, form: tuple, xo, p_n, p_D, uses: list[str],
                       description: str, growth: dict) -> None:
    """One model with a power trade-off: form check, optimum, stationarity, exponents, results.
    Records in ``growth[name]`` the exponents of d_k* in n, of H* in D, and lim log d_k*/log log n."""
    A_, a_, B_, b_ = form
    der.step(f"{name}_mse_form", _eq(mse, sp.Subs(A * x ** (-a) + B * x ** b, (A, a, B, b), form)), by="expand",
             why="the lemma's A d_k^-a + B d_k^b", uses=uses)
    der.step(f"{name}_optimum", _eq(xo, sp.Subs(_lemma_optimum(A, a, B, b), (A, a, B, b), form)), by="simplify",
             why="lemma with (A, a, B, b) = " + str(form), uses=uses)
    # direct check: eliminate n through X^(a+b) = a A/(b B), then MSE'(X) must vanish
    rhs = a_ * A_ / (b_ * B_)                 # = K n or K / n
    K_ = sp.cancel(rhs / n)
    n_at_X = X ** (a_ + b_) / K_ if n not in K_.free_symbols else sp.cancel(rhs * n) / X ** (a_ + b_)
    der.step(f"{name}_stationary", _eq(sp.Subs(sp.Derivative(mse, x), (x, n), (X, n_at_X)), 0),
             by="simplify", why="MSE'(d_k*) = 0 (n eliminated through the optimum's defining equation)",
             uses=uses)
    der.step(f"{name}_exponent_n", _eq(n * sp.Derivative(sp.log(xo), n), p_n), by="simplify",
             why="constant elasticity: d_k* = const * n^p exactly", uses=uses)
    H_opt = D / xo
    der.step(f"{name}_H_exponent_D", _eq(D * sp.Derivative(sp.log(H_opt), D), p_D), by="simplify",
             why="H* = D/d_k* = const * D^p exactly", uses=uses)
    der.result(f"mse_{name}", mse, args=ARGS, description=f"MSE(d_k) of model {name}: {description}",
               uses=uses)
    der.result(f"dk_opt_{name}", xo, args=OPT_ARGS, description=f"continuous optimum d_k* of model {name}",
               uses=uses + ["interior"])
    der.result(f"H_opt_{name}", H_opt, args=OPT_ARGS, description=f"H* = D/d_k* of model {name}",
               uses=uses + ["interior", "budget"])
    # d_k* = C n^p: log d_k*/log log n -> sign(p) * oo (power_beats_loglog)
    growth[name] = {"n": p_n, "D": p_D, "loglog": sp.sign(p_n) * sp.oo}


def _models_a(der: Derivation, growth: dict) -> None:
    h = x ** sp.Rational(-1, 2)
    der.step("a_bias", _eq(sp.Subs(c_b * hs**4, hs, h), c_b / x**2), by="simplify",
             uses=["bias_rate", "bandwidth_summary"])
    der.step("a_head_variance", _eq(sp.Subs(c_v / (n * hs**d), hs, h), c_v * x ** (d / 2) / n), by="simplify",
             uses=["variance_rate", "bandwidth_summary", "s_input"])
    base = ["budget", "bias_rate", "variance_rate", "bandwidth_summary", "s_input"]
    exps = {"corr": (2 / (d + 4), sp.Integer(1)), "orth": (2 / (d + 6), (d + 4) / (d + 6)),
            "frame": (2 / (d + 6), sp.Integer(1))}
    opts = {"corr": (4 * c_b * n / (d * c_v)) ** (2 / (d + 4)),
            "orth": (4 * c_b * n * D / ((d + 2) * c_v)) ** (2 / (d + 6)),
            "frame": (4 * c_b * n * d / ((d + 2) * c_v)) ** (2 / (d + 6))}
    for ens, (e, NN) in ENSEMBLES.items():
        mse = c_b / x**2 + c_v * x ** (d / 2 + e) / (n * NN)
        _closed_form_model(der, f"a_{ens}", mse, (c_b, 2, c_v / (n * NN), d / 2 + e), opts[ens], *exps[ens],
                           uses=base + _ENS_USES[ens],
                           description=f"c_b/d_k^2 + c_v d_k^(d/2+{e})/(n*{NN})", growth=growth)


def _models_b(der: Derivation, growth: dict) -> None:
    h = x ** sp.Rational(-1, 2)
    der.step("b_head_variance", _eq(sp.Subs(c_v / (n * hs**x), hs, h), c_v * x ** (x / 2) / n), by="simplify",
             uses=["variance_rate", "bandwidth_summary", "s_head"])
    base = ["budget", "bias_rate", "variance_rate", "bandwidth_summary", "s_head"]
    # stationarity: MSE'(x) * 2 n N x^3 / c_v = x^(x/2+k+3) (log x + 1 + 2k/x) - 4 c_b n N / c_v
    def resid(kk, NN):
        return x ** (x / 2 + kk + 3) * (sp.log(x) + 1 + 2 * kk / x) - 4 * c_b * n * NN / c_v
    for kk in (0, 1):
        mse = c_b / x**2 + c_v * x ** (x / 2 + kk) / (n * N)
        der.step(f"b_k{kk}_derivative", _eq(sp.Derivative(mse, x) * 2 * n * N * x**3 / c_v, resid(kk, N)),
                 by="simplify", why="sign of MSE' = sign of the residual", uses=base)
    # k = 0: MSE is strictly convex
    der.step("b_k0_variance_convex",
             _eq(sp.Derivative(x ** (x / 2), (x, 2)), x ** (x / 2) * ((sp.log(x) + 1) ** 2 / 4 + 1 / (2 * x))),
             by="simplify", uses=base)
    der.step("b_k0_convex_positive", _gt((sp.log(x) + 1) ** 2 / 4 + 1 / (2 * x), 0), by="nonneg",
             why="c_b/x^2 and x^(x/2) are strictly convex: at most one stationary point", uses=base)
    u = sp.Symbol("u", nonnegative=True)
    der.step("b_k0_residual_negative_small", _le((sp.log(x) + 1).subs(x, sp.exp(-1) / (1 + u)), 0),
             by="nonneg", why="d_k = e^-1/(1+u) <= 1/e: log d_k + 1 = -log(1+u) <= 0, so the residual is "
                              "< 0 and MSE decreasing there", uses=base)
    # k = 1: every stationary point is a strict local minimum, hence there is only one
    der.step("xlogx_minimum", _ge(x * sp.log(x), -sp.exp(-1)), by="convex_bound",
             why="x log x is convex with its only stationary point at 1/e: x log x >= -1/e")
    P = (sp.log(x) + 1) / 2 + 1 / x   # d/dx log x^(x/2+1) = P
    der.step("b_k1_second_derivative_shape",
             _eq(sp.Derivative(x ** (x / 2 + 1), (x, 2)), x ** (x / 2 + 1) * (P**2 + sp.diff(P, x))), by="simplify")
    # at a stationary point (c_v/(nN)) x^(x/2+1) P = 2 c_b x^-3, so
    # MSE'' = 6 c_b x^-4 + 2 c_b x^-3 (P^2 + P')/P = (2 c_b/(x^5 P)) * x (3P + x P^2 + x P')
    Q = x * (3 * P + x * P**2 + x * sp.diff(P, x))
    Qw = sp.expand(Q).subs(sp.log(x), (w - sp.exp(-1)) / x)
    cert = (x * P.subs(sp.log(x), (w - sp.exp(-1)) / x)) ** 2 + 2 * x + sp.Rational(3, 2) * w \
        + sp.exp(-1) * (4 * sp.E - 3) / 2
    der.step("b_k1_curvature_positive", _gt(Qw, 0), by="certificate", certificate=cert,
             why="with w = x log x + 1/e >= 0: x(3P + xP^2 + xP') = x^2 P^2 + 2x + 3w/2 + 2 - 3/(2e) > 0, "
                 "and P > 0 at a stationary point, so MSE'' > 0 at every stationary point: at most one")
    g1 = x ** (x / 2 + 3) * (x * sp.log(x) + x + 2)   # = x^(x/2+4) (log x + 1 + 2/x)
    der.step("b_k1_residual_small", _eq(sp.Limit(g1, x, 0, "+"), 0), by="limit",
             why="residual -> -4 c_b n N/c_v < 0 as d_k -> 0+: MSE decreasing first")
    g0 = sp.exp((x / 2 + 3) * sp.log(x)) * (sp.log(x) + 1)   # = x^(x/2+3) (log x + 1)
    der.step("b_residual_large", _eq(sp.Tuple(sp.Limit(g0, x, sp.oo), sp.Limit(g1, x, sp.oo)), sp.Tuple(sp.oo, sp.oo)),
             by="limit",
             why="residual -> +oo (k = 0, 1): a root exists; it is the unique global minimiser")
    # asymptotics: G_k(x) = log(x^(x/2+k+3)(log x + 1 + 2k/x)) = L := log(4 c_b n N / c_v)
    xc = 2 * c * L / sp.log(L)
    G = (xc / 2 + k + 3) * sp.log(xc) + sp.log(sp.log(xc) + 1 + 2 * k / xc)
    lam = sp.Symbol("lambda", positive=True)   # lambda = log L, so L = e^lambda (faster for gruntz)
    der.step("b_asymptotic_root", _eq(sp.Limit(G / L, L, sp.oo), c), by="limit", change=(L, sp.exp(lam), lam, sp.oo),
             why="G_k(c * 2L/log L) / L -> c for every c > 0; with one sign change of the residual "
                 "this gives d_k* / (2L/log L) -> 1, i.e. d_k* ~ 2 log n / log log n", uses=base)
    K = sp.Symbol("K", positive=True)
    Ln = sp.log(K * n)
    xasym = 2 * Ln / sp.log(Ln)
    der.step("b_growth_loglog", _eq(sp.Limit(sp.log(xasym) / sp.log(sp.log(n)), n, sp.oo), 1), by="limit",
             why="log d_k* / log log n -> 1 (so log d_k*/log n -> 0): exponent 1 on log n up to log log n, "
                 "not 2/(4+d)", uses=base)
    for ens, (kk, NN) in ENSEMBLES.items():
        uses = base + _ENS_USES[ens]
        mse = c_b / x**2 + c_v * x ** (x / 2 + kk) / (n * NN)
        der.result(f"mse_b_{ens}", mse, args=ARGS, uses=uses,
                   description=f"MSE(d_k) of model b_{ens}: c_b/d_k^2 + c_v d_k^(d_k/2+{kk})/(n*{NN})")
        der.result(f"stationarity_b_{ens}", resid(kk, NN), args=ARGS, uses=uses,
                   description="MSE'(d_k) * 2 n N d_k^3 / c_v: one sign change (- to +), its root is d_k*")
        Lm = sp.log(4 * c_b * n * NN / c_v)
        der.result(f"dk_asym_b_{ens}", 2 * Lm / sp.log(Lm), args=OPT_ARGS, uses=uses,
                   description="leading asymptotic of d_k*: 2L/log L, L = log(4 c_b n N/c_v); ratio -> 1")
        # b_growth_loglog: log d_k*/log log n -> 1; d_k* depends on D only through N (orth: N = D)
        growth[f"b_{ens}"] = {"n": sp.Integer(0), "D": sp.Integer(1) if NN != D else sp.Symbol("1-o(1)"),
                              "loglog": sp.Integer(1)}


def _models_gauss(der: Derivation, growth: dict) -> None:
    qq, kk_, qk = sp.symbols("qq kk qk", real=True)
    der.step("gauss_kernel_identity",
             _eq(-(qq - 2 * qk + kk_) / (2 * sp.sqrt(x)) + (qq + kk_) / (2 * sp.sqrt(x)), qk / sp.sqrt(x)),
             by="expand", why="<q,k>/sqrt(d_k) = -|q-k|^2/(2 sqrt(d_k)) + (|q|^2+|k|^2)/(2 sqrt(d_k)): with "
                              "equal key norms a Gaussian kernel of bandwidth h, h^2 = sqrt(d_k)",
             uses=["bandwidth_gauss"])
    h = x ** sp.Rational(1, 4)
    der.step("gauss_bandwidth", _eq(sp.Subs(hs**2, hs, h), sp.sqrt(x)), by="simplify", uses=["bandwidth_gauss"])
    base = ["budget", "bias_rate", "variance_rate", "bandwidth_gauss", "s_input"]
    der.step("gauss_rates", _eq(sp.Subs(c_b * hs**4 + c_v / (n * hs**d), hs, h), c_b * x + c_v * x ** (-d / 4) / n),
             by="simplify", uses=base)
    mse = c_b * x + c_v * x ** (-d / 4) / n
    _closed_form_model(der, "gauss_a_corr", mse, (c_v / n, d / 4, c_b, 1),
                       (d * c_v / (4 * c_b * n)) ** (4 / (d + 4)), -4 / (d + 4), sp.Integer(1),
                       uses=base + _ENS_USES["corr"], description="c_b d_k + c_v d_k^(-d/4)/n", growth=growth)
    for ens in ("orth", "frame"):
        NN = ENSEMBLES[ens][1]
        mse = c_b * x + c_v * x ** (1 - d / 4) / (n * NN)
        p_D = 1 + 4 / d if ens == "orth" else sp.Integer(1)
        _closed_form_model(der, f"gauss_a_{ens}", mse, (c_v / (n * NN), d / 4 - 1, c_b, 1),
                           ((d - 4) * c_v / (4 * c_b * n * NN)) ** (4 / d), -4 / d, p_D,
                           uses=base + _ENS_USES[ens] + ["d_gt_4"],
                           description=f"c_b d_k + c_v d_k^(1-d/4)/(n*{NN}), interior optimum needs d > 4",
                           growth=growth)
    e4 = sp.Symbol("e4", nonnegative=True)   # 4 - d >= 0
    der.step("gauss_small_d_boundary", _gt(c_b + e4 / 4 * c_v * x ** (-d / 4) / (n * N), 0), by="nonneg",
             why="d <= 4: MSE' = c_b + (1 - d/4) c_v d_k^(-d/4)/(nN) > 0, the optimum is the smallest d_k "
                 "(H* = D)", uses=base)


def _reverse(der: Derivation, growth: dict) -> None:
    uses = ["budget", "bias_rate", "bandwidth_summary", "s_input", "c5_model", "ens_corr", "n_eff_log"]
    mse = c_b / x**2 + c_v * x ** (d / 2) / sp.log(n)
    xo = (4 * c_b * sp.log(n) / (d * c_v)) ** (2 / (d + 4))
    lemma_at = sp.Subs(_lemma_optimum(A, a, B, b), (A, a, B, b), (c_b, 2, c_v / sp.log(n), d / 2))
    der.step("reverse_optimum", _eq(xo, lemma_at),
             by="simplify",
             why="variance c_v/(log n * h^d), no 1/H reduction: the lemma gives (log n)^(2/(d+4))", uses=uses)
    ln_n = sp.Symbol("ell", positive=True)
    der.step("reverse_exponent_logn", _eq(ln_n * sp.Derivative(sp.log(xo.subs(sp.log(n), ln_n)), ln_n), 2 / (d + 4)),
             by="simplify", why="d_k* = const * (log n)^(2/(d+4)) exactly, H* = D/d_k* linear in D", uses=uses)
    der.step("general_exponent", _eq(N * sp.Derivative(sp.log(_lemma_optimum(A, a, B / N, b)), N), 1 / (a + b)),
             by="simplify", why="bias^2 ∝ d_k^-a, variance ∝ d_k^b / N_eff: d_k* ∝ N_eff^(1/(a+b)); the law "
                                "needs N_eff = log n and a + b = (4+d)/2")
    der.step("power_beats_loglog", _eq(sp.Limit((p * sp.log(n) + C0) / sp.log(sp.log(n)), n, sp.oo), sp.oo),
             by="limit",
             why="for d_k* = C n^p, log d_k*/log log n -> oo: no polynomial model has a log n law")
    der.result("mse_reverse", mse, args=ARGS, uses=uses,
               description="reverse-engineered model reproducing the stated law (effective sample size log n)")
    der.result("dk_opt_reverse", xo, args=OPT_ARGS, uses=uses, description="its optimum (4 c_b log n/(d c_v))^(2/(d+4))")
    growth["reverse"] = {"n": sp.Integer(0), "D": sp.Integer(1), "loglog": 2 / (d + 4)}


def _nearly_linear(p_D) -> bool:
    """H* ∝ D^p with p = 1, or p < 1 tending to 1 as d grows (a_orth: (d+4)/(d+6))."""
    if p_D == 1:
        return True
    if not isinstance(p_D, sp.Expr) or not p_D.free_symbols <= {d}:
        return False
    return bool((p_D < 1) == sp.true or sp.simplify(1 - p_D).is_positive) and sp.limit(p_D, d, sp.oo) == 1


def _compare(der: Derivation, growth: dict) -> None:
    stated_exp = 2 / (4 + d)
    stated = "d_k* ~ (log n)^(2/(4+d)) and H* nearly linear in D (Thm 6.1)"
    h_sum, h_gauss = x ** sp.Rational(-1, 2), x ** sp.Rational(1, 4)
    der.compare("bandwidth_convention", stated="bandwidth h = 1/sqrt(d_k)",
                derived="written as a Gaussian kernel (equal key norms) the softmax kernel has h = d_k^(1/4)",
                holds=sp.simplify(h_sum - h_gauss) == 0, method="gauss_kernel_identity",
                detail="models a/b follow the summary (h = d_k^-1/2); models gauss_a use h = d_k^(1/4)",
                uses=["bandwidth_gauss"])
    texts = {
        "a_corr": "d_k* = (4 c_b n/(d c_v))^(2/(d+4)): exponent 2/(4+d) but on n (polynomial), H* = D/d_k* linear",
        "a_orth": "d_k* = (4 c_b n D/((d+2) c_v))^(2/(d+6)), H* ∝ D^((d+4)/(d+6)) (only for D <= d)",
        "a_frame": "d_k* = (4 c_b n d/((d+2) c_v))^(2/(d+6)), independent of D; H* exactly linear in D",
        "b_corr": "d_k* ~ 2 log n / log log n (no closed form): log d_k*/log log n -> 1; H* linear in D",
        "b_orth": "d_k* ~ 2 log(nD) / log log(nD), H* = D^(1-o(1)) (only for D <= d)",
        "b_frame": "d_k* ~ 2 log(n d) / log log(n d), independent of D; H* linear in D",
        "gauss_a_corr": "d_k* = (d c_v/(4 c_b n))^(4/(d+4)): decreases with n",
        "gauss_a_orth": "d_k* ∝ (nD)^(-4/d) (d > 4): decreases with n; H* ∝ D^(1+4/d)",
        "gauss_a_frame": "d_k* ∝ (n d)^(-4/d) (d > 4): decreases with n; H* linear in D",
        "reverse": "d_k* = (4 c_b log n/(d c_v))^(2/(d+4)), H* = D/d_k* linear in D",
    }
    verdict = {}
    for name, g in growth.items():
        dk_ok = sp.simplify(g["loglog"] - stated_exp) == 0
        H_ok = _nearly_linear(g["D"]) or g["D"] == sp.Symbol("1-o(1)")
        verdict[name] = bool(dk_ok and H_ok)
        if name == "reverse":
            continue
        der.compare(f"law_{name}", stated=stated, derived=texts[name], holds=verdict[name],
                    method=f"{name}_exponent_n" if not name.startswith("b_") else "b_growth_loglog",
                    detail=f"lim log d_k*/log log n = {g['loglog']} (stated {stated_exp}); H* ∝ D^{g['D']}",
                    uses=list(der.results[f"mse_{name}"].uses))
    linear = [k for k, g in growth.items() if g["D"] == 1 and k != "reverse"]
    der.compare("H_nearly_linear", stated="H* grows nearly linearly in D",
                derived=f"H* = D/d_k* exactly linear in D for {', '.join(linear)}; D^((d+4)/(d+6)) for a_orth and "
                        "D^(1-o(1)) for b_orth (orthogonal heads, D <= d only); D^(1+4/d) for gauss_a_orth",
                holds=all(_nearly_linear(growth[k]["D"]) for k in ("a_corr", "a_orth", "a_frame", "b_corr", "b_frame")),
                method="*_H_exponent_D", uses=["budget", "interior"])
    der.compare("reverse_engineered_law", stated=stated,
                derived="reproduced exactly by bias^2 = c_b/d_k^2 with variance c_v d_k^(d/2)/log n and NO "
                        "variance reduction across heads (rho = 1): the law needs an effective sample size "
                        "log n; with 1/H or the fusion-frame floor the exponent becomes 2/(d+6)",
                holds=verdict["reverse"], method="reverse_exponent_logn",
                detail="not a standard NW model: the exponent 2/(4+d) is the standard rate on n (model a_corr)",
                uses=["n_eff_log", "ens_corr", "bandwidth_summary", "s_input"])
    summary_models = [k for k in growth if k.startswith(("a_", "b_"))]
    grows = [k for k in summary_models if growth[k]["loglog"].is_positive or growth[k]["n"].is_positive]
    der.compare("more_heads_for_large_n",
                stated="for large data sets more heads beat larger heads at fixed D",
                derived="with h = d_k^(-1/2) d_k* increases with n in " + ", ".join(grows) + ", so H* = D/d_k* "
                        "decreases with n; only with the Gaussian bandwidth h = d_k^(1/4) does H* grow with n",
                holds=not grows, method="*_exponent_n", uses=["bandwidth_summary"])


def build() -> Derivation:
    der = Derivation(
        claim="C7",
        title="Scaling law for heads vs head dimension under a fixed budget",
        stated="Thm 6.1: with D = H d_k fixed, d_k* ~ (log n)^(2/(4+d)) and H* grows nearly linearly in D",
    )
    _assumptions(der)
    _ensemble_variance(der)
    _lemma(der)
    growth: dict = {}
    _models_a(der, growth)
    _models_b(der, growth)
    _models_gauss(der, growth)
    _reverse(der, growth)
    _compare(der, growth)
    return der
