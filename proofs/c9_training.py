"""C9: the gradient that trains the NW-ensemble heads, and the Haar baseline's spread.

C9 itself is empirical (does training raise HDI?); what can be derived is the machinery its
experiment runs on, so that the hand-written numpy gradient of ``verify/training.py`` is the
gradient of the loss and not a restatement of it:

1. the softmax NW estimate ``f̂ = Σ_i w_i y_i``, ``w_i = e^{s_i}/Σ_j e^{s_j}``, has
   ``∂f̂/∂s_i = w_i (y_i − f̂)`` (n = 2, 3, 4 keys);
2. the ensemble's squared error ``(Σ_h α_h f̂_h − y)²`` has ``∂/∂α_h = 2 r f̂_h``;
3. the leave-one-out MSE of a two-head ensemble at three points (each query's own key left out)
   has ``∂L/∂s_ji^h = (2 r_j / n) α_h w_ji^h (y_i − f̂_h(x_j))``, each score of head 1 (head 2's
   by relabelling);
4. through the bilinear scores ``S = c (X W_Q)(X W_K)ᵀ``: ``∂/∂W_Q Σ G∘S = c Xᵀ G X W_K`` and
   ``∂/∂W_K Σ G∘S = c Xᵀ Gᵀ X W_Q`` (n = 3, d = 2, d_k = 2, every entry symbolic);
5. the products the code forms instead of G: ``G K = γ ∘ (W (y ∘ K) − f̂ ∘ (W K))`` and
   ``Gᵀ Q = y ∘ (Wᵀ (γ ∘ Q)) − Wᵀ (γ f̂ ∘ Q)`` for ``G_ji = γ_j w_ji (y_i − f̂_j)``;
6. the spread of the Haar baseline: for lines (d_k = 1) the overlap is ``cos² = u_1²`` of a
   uniform unit vector, whose variance ``E u_1⁴ − (E u_1²)² = 2(d − 1)/(d²(d + 2))`` equals the
   general-d_k formula ``2 (d − d_k)²/(d² (d − 1)(d + 2))`` (verify/baseline.py) at d_k = 1.

Checked with ``expand``, ``simplify`` and ``rational`` only; the softmax steps are written in
``z_i = exp(s_i)`` (``∂/∂s_i = z_i ∂/∂z_i``), where they are identities of rational functions
and the ``rational`` method tests them exactly at random rational points.
"""

from __future__ import annotations

import sympy as sp

from .core import Derivation
from .notation import d

__all__ = ["build", "STATED"]

STATED = ("Training pressure drives the heads towards orthogonal subspaces: specialisation "
          "(diverse heads) is the optimal strategy (summary, sections 2, 4 and 3.C).")

c = sp.Symbol("c", positive=True)          # the score scale 1/sqrt(d_k)
kk = sp.Symbol("k", integer=True, positive=True)


def _normalise(z: list) -> list:
    """Softmax weights in the variables z_i = exp(s_i) > 0: w_i = z_i / Σ_j z_j."""
    tot = sum(z)
    return [v / tot for v in z]


def _d_ds(expr, z):
    """∂/∂s of a function of z = exp(s): the chain rule ∂z/∂s = z, so ∂/∂s = z ∂/∂z."""
    return z * sp.diff(expr, z)


def _mat(name: str, rows: int, cols: int) -> sp.Matrix:
    return sp.Matrix(rows, cols, lambda a, b: sp.Symbol(f"{name}_{a + 1}{b + 1}", real=True))


def _vec(name: str, n: int) -> sp.Matrix:
    return sp.Matrix(n, 1, lambda a, _: sp.Symbol(f"{name}_{a + 1}", real=True))


def build() -> Derivation:
    dv = Derivation("C9", "Training drives heads towards orthogonal subspaces (the experiment's gradient)", STATED)
    dv.assume("nw_head", "head estimate f̂ = Σ_i w_i y_i with softmax weights w_i = z_i/Σ_j z_j, z_i = exp(s_i) of "
              "real scores s_i (so ∂z_i/∂s_i = z_i: ∂/∂s_i = z_i ∂/∂z_i)", kind="setting")
    dv.assume("ensemble", "ensemble f̂ = Σ_h α_h f̂_h with real weights α_h; residual r = f̂ − y", kind="setting")
    dv.assume("loo", "leave-one-out training loss L = (1/n) Σ_j (f̂(x_j) − y_j)², the softmax of query j "
              "running over the keys i ≠ j", kind="setting")
    dv.assume("bilinear", "scores S = c (X W_Q)(X W_K)ᵀ, c = 1/sqrt(d_k), X the n × d inputs; G = ∂L/∂S", kind="setting")
    dv.assume("sphere_moments", "a uniform unit vector u of R^d has E u_1² = 1/d and E u_1⁴ = 3/(d(d + 2))",
              kind="setting")

    # 1. ∂f̂/∂s_i = w_i (y_i − f̂)
    for n in (2, 3, 4):
        z = sp.symbols(f"z_1:{n + 1}", positive=True)
        y = sp.symbols(f"y_1:{n + 1}", real=True)
        w = _normalise(list(z))
        f = sum(wi * yi for wi, yi in zip(w, y))
        for i in range(n):
            dv.step(f"softmax_nw_gradient_n{n}_i{i + 1}", sp.Eq(_d_ds(f, z[i]), w[i] * (y[i] - f), evaluate=False),
                    by="rational", why=f"∂f̂/∂s_{i + 1} = w_{i + 1} (y_{i + 1} − f̂), n = {n} keys", uses=["nw_head"])

    # 2. ∂(Σ α_h f̂_h − y)²/∂α_h = 2 r f̂_h
    al = sp.symbols("alpha_1:4", real=True)
    fh = sp.symbols("fhat_1:4", real=True)
    yv = sp.Symbol("y", real=True)
    r = sum(a * g for a, g in zip(al, fh)) - yv
    dv.step("ensemble_alpha_gradient",
            sp.Eq(sp.Matrix([sp.diff(r**2, a) for a in al]), sp.Matrix([2 * r * g for g in fh]), evaluate=False),
            by="expand", why="∂/∂α_h of the squared error of a three-head ensemble", uses=["ensemble"])

    # 3. the leave-one-out chain: two heads, three points, each query without its own key
    n, Hh = 3, 2
    ys = sp.symbols("y_1:4", real=True)
    alphas = sp.symbols("alpha_1:3", real=True)
    S = {(h, j, i): sp.Symbol(f"z_{h + 1}{j + 1}{i + 1}", positive=True)   # z = exp(s)
         for h in range(Hh) for j in range(n) for i in range(n) if i != j}
    W, F = {}, {}
    for h in range(Hh):
        for j in range(n):
            keys = [i for i in range(n) if i != j]
            ws = _normalise([S[h, j, i] for i in keys])
            for i, wv in zip(keys, ws):
                W[h, j, i] = wv
            F[h, j] = sum(W[h, j, i] * ys[i] for i in keys)
    res = [sum(alphas[h] * F[h, j] for h in range(Hh)) - ys[j] for j in range(n)]
    L = sum(rj**2 for rj in res) / n
    # head 1's six scores; head 2's follow by relabelling the heads (L is symmetric in them)
    for (h, j, i) in sorted(k for k in S if k[0] == 0):
        rhs = 2 * res[j] / n * alphas[h] * W[h, j, i] * (ys[i] - F[h, j])
        dv.step(f"loo_score_gradient_j{j + 1}_i{i + 1}", sp.Eq(_d_ds(L, S[h, j, i]), rhs, evaluate=False),
                by="rational", why=f"∂L/∂s_{j + 1}{i + 1}^1 = (2 r_{j + 1}/n) α_1 w_{j + 1}{i + 1}^1 (y_{i + 1} − "
                f"f̂_1(x_{j + 1})) (H = 2 heads, n = 3 points, query {j + 1} without its own key)",
                uses=["nw_head", "ensemble", "loo"])

    # 4. through the bilinear scores (n = 3 points, d = 2, d_k = 2)
    X, WQ, WK, G = _mat("x", 3, 2), _mat("q", 2, 2), _mat("k", 2, 2), _mat("G", 3, 3)
    Smat = c * (X * WQ) * (X * WK).T
    phi = sum(G[a, b] * Smat[a, b] for a in range(3) for b in range(3))
    dQ = sp.Matrix(2, 2, lambda a, b: sp.diff(phi, WQ[a, b]))
    dK = sp.Matrix(2, 2, lambda a, b: sp.diff(phi, WK[a, b]))
    dv.step("score_gradient_WQ", sp.Eq(dQ, c * X.T * G * X * WK, evaluate=False), by="expand",
            why="∂/∂W_Q Σ_ji G_ji S_ji = c Xᵀ G (X W_K)", uses=["bilinear"])
    dv.step("score_gradient_WK", sp.Eq(dK, c * X.T * G.T * X * WQ, evaluate=False), by="expand",
            why="∂/∂W_K Σ_ji G_ji S_ji = c Xᵀ Gᵀ (X W_Q)", uses=["bilinear"])

    # 5. G K and Gᵀ Q without forming G (n = 3, d_k = 2)
    Wm = _mat("w", 3, 3)
    yv3, gam = _vec("y", 3), _vec("gamma", 3)
    Km, Qm = _mat("K", 3, 2), _mat("Q", 3, 2)
    fv = Wm * yv3
    Gm = sp.Matrix(3, 3, lambda j, i: gam[j] * Wm[j, i] * (yv3[i] - fv[j]))
    Dy, Dg, Df = sp.diag(*yv3), sp.diag(*gam), sp.diag(*fv)
    dv.step("gk_without_g", sp.Eq(Gm * Km, Dg * (Wm * Dy * Km - Df * Wm * Km), evaluate=False), by="expand",
            why="G K = γ ∘ (W (y ∘ K) − f̂ ∘ (W K)) with f̂ = W y", uses=["loo"])
    dv.step("gtq_without_g", sp.Eq(Gm.T * Qm, Dy * Wm.T * Dg * Qm - Wm.T * Dg * Df * Qm, evaluate=False),
            by="expand", why="Gᵀ Q = y ∘ (Wᵀ (γ ∘ Q)) − Wᵀ (γ f̂ ∘ Q)", uses=["loo"])

    # 6. the Haar overlap's variance at d_k = 1 from the sphere's moments
    var_line = sp.Rational(3) / (d * (d + 2)) - (1 / d) ** 2
    general = 2 * (d - kk) ** 2 / (d**2 * (d - 1) * (d + 2))
    dv.step("haar_line_variance", sp.Eq(var_line, 2 * (d - 1) / (d**2 * (d + 2)), evaluate=False), by="rational",
            why="Var u_1² = E u_1⁴ − (E u_1²)² = 3/(d(d+2)) − 1/d²", uses=["sphere_moments"])
    dv.step("haar_variance_at_k1", sp.Eq(general.subs(kk, 1), var_line, evaluate=False), by="rational",
            why="the general formula 2(d − d_k)²/(d²(d−1)(d+2)) at d_k = 1 is the line's variance",
            uses=["sphere_moments"])
    dv.result("haar_overlap_variance", general, codegen=False,
              description="variance of the overlap of two independent Haar d_k-subspaces (checked at d_k = 1)",
              uses=["sphere_moments"])
    return dv
