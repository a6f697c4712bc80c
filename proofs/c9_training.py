"""C9: the gradient that trains the NW-ensemble heads, and the Haar baseline's spread.

C9 itself is empirical (does training make heads more diverse?); derived here is the machinery its
experiment runs on, so that the hand-written numpy gradient of ``verify/experiments/training.py`` is
the gradient of the loss: the softmax NW estimate's gradient in the scores, the free head weights'
gradient, the leave-one-out MSE's chain rule, the gradient through the bilinear scores (and the
products the code forms instead of G), and the spread of the Haar baseline at ``d_k = 1``. Softmax
steps are written in ``z_i = exp(s_i)``, where they are identities of rational functions.
"""

from __future__ import annotations

import sympy as sp

from .core import Derivation
from .notation import d, d_k, entries, normalised

__all__ = ["build", "CLAIM", "TITLE", "STATED"]

CLAIM = "C9"
TITLE = "Training drives heads towards orthogonal subspaces (3.C)"
STATED = ("Training pressure drives the heads towards orthogonal subspaces: specialisation (diverse heads) is the "
          "optimal strategy (summary, sections 2, 4 and 3.C).")

c = sp.Symbol("c", positive=True)          # the score scale 1/sqrt(d_k)


def _d_ds(expr: sp.Expr, z: sp.Symbol) -> sp.Expr:
    """∂/∂s of a function of z = exp(s): the chain rule ∂z/∂s = z, so ∂/∂s = z ∂/∂z."""
    return z * sp.diff(expr, z)


def _vec(name: str, n: int) -> sp.Matrix:
    return sp.Matrix(n, 1, lambda a, _: sp.Symbol(f"{name}_{a + 1}", real=True))


def _glossary(der: Derivation) -> None:
    der.define(
        z_=r"the exponentiated scores: $z_i = e^{s_i}$ of key $i$, and $z_{hji} = e^{s^h_{ji}}$ of head $h$, query "
           r"$j$, key $i$",
        y_=r"the values $y_i$ of the keys", y=r"the value $y$ the ensemble is fitted to",
        alpha_=r"the head weights $\alpha_h$", F_=r"the head estimates $F_h = \hat{f}_h$ at one point",
        c=r"the score scale $c = 1/\sqrt{d_k}$",
        x_=r"the entries $x_{ab}$ of the inputs $X$ (one row per point)",
        q_=r"the entries $q_{ab}$ of the query projection $W_Q$",
        k_=r"the entries $k_{ab}$ of the key projection $W_K$",
        G_=r"the entries $G_{ji} = \partial L / \partial S_{ji}$ of the score gradient $G$",
        w_=r"the softmax (NW) weights $w_{ji}$ of query $j$ on key $i$",
        gamma_=r"the weights $\gamma_j = \partial L / \partial \hat{f}(x_j)$ of a head's residuals",
        K_=r"the entries of the projected keys $K = X W_K$",
        Q_=r"the entries of the projected queries $Q = X W_Q$",
    )


def build() -> Derivation:
    der = Derivation(CLAIM, TITLE, STATED, markup=True)
    der.assume("nw_head", r"a head estimates $\hat{f} = \sum_i w_i y_i$ with softmax weights $w_i = z_i / \sum_j z_j$, "
               r"$z_i = e^{s_i}$ of real scores $s_i$ (so $\partial / \partial s_i = z_i \partial / \partial z_i$)",
               kind="setting")
    der.assume("ensemble", r"the ensemble is $\hat{f} = \sum_h \alpha_h \hat{f}_h$ with real head weights $\alpha_h$ "
               r"(free, as C2 finds); its residual is $r = \hat{f} - y$", kind="setting")
    der.assume("loo", r"the leave-one-out loss $L = (1/n) \sum_j (\hat{f}(x_j) - y_j)^2$, the softmax of query $j$ "
               r"running over the keys $i \ne j$", kind="setting")
    der.assume("bilinear", r"scores $S = c (X W_Q)(X W_K)^\top$ with $c = 1/\sqrt{d_k}$, $X$ the $n \times d$ inputs, "
               r"and $G = \partial L / \partial S$", kind="setting")
    der.assume("sphere_moments", r"a uniform unit vector $u$ of $\mathbb{R}^d$ has $E u_1^2 = 1/d$ and "
               r"$E u_1^4 = 3/(d (d + 2))$", kind="setting")
    _glossary(der)

    with der.group("gradient", "the hand-written gradient of the training loss, link by link") as gradient:
        with der.group("softmax_gradient", r"$\partial \hat{f} / \partial s_i = w_i (y_i - \hat{f})$ for a softmax "
                                           "NW head"):
            _softmax_gradient(der)
        with der.group("weight_gradient", r"$\partial (\sum_h \alpha_h \hat{f}_h - y)^2 / \partial \alpha_h = "
                                          r"2 r \hat{f}_h$: the free head weights' gradient"):
            _weight_gradient(der)
        with der.group("loo_chain", r"the leave-one-out MSE's score gradient $\partial L / \partial s^h_{ji} = "
                                    r"(2 r_j / n) \alpha_h w^h_{ji} (y_i - \hat{f}_h(x_j))$"):
            _loo_chain(der)
        with der.group("bilinear", r"the score gradient carried to $W_Q$ and $W_K$ through the bilinear scores, "
                                   r"without forming $G$"):
            _bilinear(der)
    der.compare("gradient_is_the_loss_gradient",
                stated="the experiment trains the heads by gradient descent on the MSE",
                derived=r"the gradient the numpy code forms, $c X^\top G K$ and $c X^\top G^\top Q$ with "
                        r"$G_{ji} = \gamma_j w_{ji} (y_i - \hat{f}_j)$ and $2 r \hat{f}_h$ for the head weights, is "
                        "the gradient of the leave-one-out MSE",
                supported_by=gradient, uses=["nw_head", "ensemble", "loo", "bilinear"])

    with der.group("haar_spread", "the spread of the Haar baseline: the general formula at $d_k = 1$ is the "
                                  "variance of a squared coordinate of a uniform unit vector") as spread:
        _haar_spread(der)
    der.compare("haar_baseline_spread",
                stated="trained heads are compared with Haar-random heads of the same sizes",
                derived=r"the variance of the overlap of two independent Haar subspaces, "
                        r"$2 (d - d_k)^2 / (d^2 (d - 1)(d + 2))$, is right at $d_k = 1$",
                supported_by=spread, uses=["sphere_moments"])
    return der


def _softmax_gradient(der: Derivation) -> None:
    for n in (2, 3, 4):
        z = sp.symbols(f"z_1:{n + 1}", positive=True)
        y = sp.symbols(f"y_1:{n + 1}", real=True)
        w = normalised(list(z))
        f = sum(wi * yi for wi, yi in zip(w, y))
        for i in range(n):
            der.step(f"softmax_nw_gradient_n{n}_i{i + 1}", sp.Eq(_d_ds(f, z[i]), w[i] * (y[i] - f), evaluate=False),
                     by="rational", why=rf"$\partial \hat{{f}} / \partial s_{{{i + 1}}} = w_{{{i + 1}}} (y_{{{i + 1}}} "
                                        rf"- \hat{{f}})$, $n = {n}$ keys", uses=["nw_head"])


def _weight_gradient(der: Derivation) -> None:
    al = sp.symbols("alpha_1:4", real=True)
    fh = sp.symbols("F_1:4", real=True)
    yv = sp.Symbol("y", real=True)
    r = sum(a * g for a, g in zip(al, fh)) - yv
    der.step("ensemble_alpha_gradient",
             sp.Eq(sp.Matrix([sp.diff(r**2, a) for a in al]), sp.Matrix([2 * r * g for g in fh]), evaluate=False),
             by="expand", why=r"$\partial / \partial \alpha_h$ of the squared error of a three-head ensemble is "
                              r"$2 r F_h$", uses=["ensemble"])


def _loo_chain(der: Derivation) -> None:
    n, H = 3, 2
    ys = sp.symbols("y_1:4", real=True)
    alphas = sp.symbols("alpha_1:3", real=True)
    S = {(h, j, i): sp.Symbol(f"z_{h + 1}{j + 1}{i + 1}", positive=True)   # z = exp(s)
         for h in range(H) for j in range(n) for i in range(n) if i != j}
    W, F = {}, {}
    for h in range(H):
        for j in range(n):
            keys = [i for i in range(n) if i != j]
            for i, wv in zip(keys, normalised([S[h, j, i] for i in keys])):
                W[h, j, i] = wv
            F[h, j] = sum(W[h, j, i] * ys[i] for i in keys)
    res = [sum(alphas[h] * F[h, j] for h in range(H)) - ys[j] for j in range(n)]
    L = sum(rj**2 for rj in res) / n
    # head 1's six scores; head 2's follow by relabelling the heads (L is symmetric in them)
    for (h, j, i) in sorted(k for k in S if k[0] == 0):
        rhs = 2 * res[j] / n * alphas[h] * W[h, j, i] * (ys[i] - F[h, j])
        der.step(f"loo_score_gradient_j{j + 1}_i{i + 1}", sp.Eq(_d_ds(L, S[h, j, i]), rhs, evaluate=False),
                 by="rational",
                 why=rf"$\partial L / \partial s^1_{{{j + 1}{i + 1}}} = (2 r_{{{j + 1}}} / n) \alpha_1 "
                     rf"w^1_{{{j + 1}{i + 1}}} (y_{{{i + 1}}} - \hat{{f}}_1(x_{{{j + 1}}}))$ ($H = 2$ heads, $n = 3$ "
                     rf"points, query {j + 1} without its own key)", uses=["nw_head", "ensemble", "loo"])


def _bilinear(der: Derivation) -> None:
    X, WQ, WK, G = entries("x", 3, 2), entries("q", 2, 2), entries("k", 2, 2), entries("G", 3, 3)
    Smat = c * (X * WQ) * (X * WK).T
    phi = sum(G[a, b] * Smat[a, b] for a in range(3) for b in range(3))
    dQ = sp.Matrix(2, 2, lambda a, b: sp.diff(phi, WQ[a, b]))
    dK = sp.Matrix(2, 2, lambda a, b: sp.diff(phi, WK[a, b]))
    der.step("score_gradient_WQ", sp.Eq(dQ, c * X.T * G * X * WK, evaluate=False), by="expand",
             why=r"$\partial / \partial W_Q \sum_{ji} G_{ji} S_{ji} = c X^\top G (X W_K)$ ($n = 3$, $d = 2$, "
                 r"$d_k = 2$, every entry symbolic)", uses=["bilinear"])
    der.step("score_gradient_WK", sp.Eq(dK, c * X.T * G.T * X * WQ, evaluate=False), by="expand",
             why=r"$\partial / \partial W_K \sum_{ji} G_{ji} S_{ji} = c X^\top G^\top (X W_Q)$", uses=["bilinear"])
    Wm = entries("w", 3, 3)
    yv3, gam = _vec("y", 3), _vec("gamma", 3)
    Km, Qm = entries("K", 3, 2), entries("Q", 3, 2)
    fv = Wm * yv3
    Gm = sp.Matrix(3, 3, lambda j, i: gam[j] * Wm[j, i] * (yv3[i] - fv[j]))
    Dy, Dg, Df = sp.diag(*yv3), sp.diag(*gam), sp.diag(*fv)
    der.step("gk_without_g", sp.Eq(Gm * Km, Dg * (Wm * Dy * Km - Df * Wm * Km), evaluate=False), by="expand",
             why=r"for $G_{ji} = \gamma_j w_{ji} (y_i - \hat{f}_j)$: $G K = \gamma \circ (W (y \circ K) - \hat{f} "
                 r"\circ (W K))$ with $\hat{f} = W y$", uses=["loo"])
    der.step("gtq_without_g", sp.Eq(Gm.T * Qm, Dy * Wm.T * Dg * Qm - Wm.T * Dg * Df * Qm, evaluate=False),
             by="expand", why=r"$G^\top Q = y \circ (W^\top (\gamma \circ Q)) - W^\top (\gamma \hat{f} \circ Q)$",
             uses=["loo"])


def _haar_spread(der: Derivation) -> None:
    var_line = sp.Rational(3) / (d * (d + 2)) - (1 / d) ** 2
    general = 2 * (d - d_k) ** 2 / (d**2 * (d - 1) * (d + 2))
    der.step("haar_line_variance", sp.Eq(var_line, 2 * (d - 1) / (d**2 * (d + 2)), evaluate=False), by="rational",
             why=r"$\mathrm{Var}\, u_1^2 = E u_1^4 - (E u_1^2)^2 = 3/(d (d + 2)) - 1/d^2$", uses=["sphere_moments"])
    der.step("haar_variance_at_k1", sp.Eq(general.subs(d_k, 1), var_line, evaluate=False), by="rational",
             why=r"the general formula $2 (d - d_k)^2 / (d^2 (d - 1)(d + 2))$ at $d_k = 1$ is the line's variance",
             uses=["sphere_moments"])
    der.result("haar_overlap_variance", general,
               description="the variance of the overlap of two independent Haar subspaces of dimension $d_k$ "
                           "(checked at $d_k = 1$)", uses=["sphere_moments"])
