"""Trained NW heads for C5 and C6: heads trained in scope (the block target on the torus, ``H d_k = d``), their
key HDI then moved down and up (:data:`MOVES`), each move scored with ``α`` refit and ``α = 1/H`` against the
trained heads on the same fresh draws.

Training is C9's model (:mod:`verify.experiments.training`): free ``W_Q, W_K, α``, fresh keys and queries
every step (no training set to overfit), Adam for ``T0`` steps at ``lr_warm``, then ``2T`` held at ``lr``,
with ``loss_and_grad``'s gradient compiled here for ``d_k = 2`` (:func:`gradient`). Convergence (SPEC: twice
the length, the learning rate held) compares steps ``T0 + T`` and ``T0 + 2T``, each averaged over the last
fifth of its segment. Run s draws its heads from ``SeedSequence([seed, s, 0])``, its training stream from
``[seed, s, 1]``, its convergence set from ``[seed, s, 2]`` and evaluation replicate r from ``[seed, s, 3, r]``.

Moves: down, *blend* (every head half way, then all the way, to head 0) and *shared keys* (head 0's keys);
up, *orthogonal keys* (the nearest keys with orthogonal columns up to scale, ``c·U Vᵀ``) and *block
projection* (each head restricted to one circle, assigned one-to-one to keep the most key energy).
"""

from __future__ import annotations

import functools
import itertools
import math
from typing import Any

import numpy as np

from verify.claims.c5.heads import draws, head_outputs, refit_alpha
from verify.io import jsonable
from verify.experiments.regimes import design_record, variance_of_f
from verify.experiments.training import adam_step, forward, loss_and_grad
from verify.numeric.baseline import hdi_batch
from verify.numeric.dgp import make_dgp
from verify.numeric.stats import mean_se, z_score

__all__ = ["TRAINED", "TRAIN_SIZES", "MOVES", "gradient", "train_split", "moved_heads", "trained_experiment"]

#: The trained regime: the block target on the torus (every circle), H d_k = d, low noise; the
#: Adam learning rate held at LR; initial columns of norm about GAIN (a local kernel from the start).
TRAINED = {"dgp": "block", "d": 8, "H": 4, "d_k": 2, "sigma": 0.1, "lr_warm": 0.05, "lr": 0.02, "gain": 3.0,
           "n": 128, "queries": 16}
#: By size: T (the convergence test compares step T with step 2T), seeds, evaluation replicates R of
#: n keys and m points, and the convergence set's m.
TRAIN_SIZES = {"quick": {"T0": 200, "T": 200, "seeds": 4, "R": 2, "m": 64, "m_conv": 128},
               "default": {"T0": 400, "T": 600, "seeds": 6, "R": 3, "m": 64, "m_conv": 256},
               "large": {"T0": 400, "T": 2000, "seeds": 12, "R": 8, "m": 128, "m_conv": 512}}
#: Steps whose training samples are drawn at once (memory; the numbers do not depend on it).
CHUNK = 100
#: The held-out MSE and key HDI at the end of each of the two held segments are means over this many
#: records in its last fifth (at a held learning rate the iterate jitters around its limit).
WINDOW = 5
#: The moves, in the order reported, with the direction they move the key HDI.
MOVES = {"trained": "", "blend half way": "down", "identical": "down", "shared keys": "down",
         "orthogonal keys": "up", "block projection": "up"}


def _grad_split(WQ, WK, alpha, XT, y, n, gWQ, gWK, ga):  # noqa: ANN001 - compiled by numba (:func:`_kernel`)
    """The split-mode loss and gradient of :func:`verify.experiments.training.loss_and_grad` for
    ``d_k = 2``, a few passes per query row: keys ``XT[s, :, :n]``, queries ``XT[s, :, n:]`` (``(S, d, n + q)``,
    rows contiguous), values ``y[s]``; writes the gradients, returns the losses ``(S,)``."""
    S, H, d, _ = WQ.shape
    q, c = XT.shape[2] - n, 1.0 / math.sqrt(2.0)
    K0, K1, Q0, Q1 = np.empty((H, n)), np.empty((H, n)), np.empty((H, q)), np.empty((H, q))
    W, fh, g = np.empty((H, q, n)), np.empty((H, q)), np.empty(q)
    B0, B1, A0, A1 = np.empty(n), np.empty(n), np.empty(q), np.empty(q)
    loss = np.empty(S)
    for s in range(S):
        ys = y[s]
        for h in range(H):
            k0, k1, q0, q1 = K0[h], K1[h], Q0[h], Q1[h]
            k0[:], k1[:], q0[:], q1[:] = 0.0, 0.0, 0.0, 0.0
            for b in range(d):
                x = XT[s, b]
                w0, w1, v0, v1 = WK[s, h, b, 0], WK[s, h, b, 1], WQ[s, h, b, 0] * c, WQ[s, h, b, 1] * c
                for i in range(n):
                    k0[i] += w0 * x[i]
                    k1[i] += w1 * x[i]
                for j in range(q):
                    q0[j] += v0 * x[n + j]
                    q1[j] += v1 * x[n + j]
            for j in range(q):                           # the softmax row of query j and the head's estimate
                row, a0, a1 = W[h, j], q0[j], q1[j]
                for i in range(n):
                    row[i] = a0 * k0[i] + a1 * k1[i]
                top = row[0]
                for i in range(n):
                    top = max(top, row[i])
                tot = 0.0
                for i in range(n):
                    row[i] = math.exp(row[i] - top)
                    tot += row[i]
                acc = 0.0
                for i in range(n):
                    row[i] /= tot
                    acc += row[i] * ys[i]
                fh[h, j] = acc
        loss[s], ga[s] = 0.0, 0.0
        for j in range(q):
            r = -ys[n + j]
            for h in range(H):
                r += alpha[s, h] * fh[h, j]
            loss[s] += r * r / q
            g[j] = 2.0 * r / q
            for h in range(H):
                ga[s, h] += g[j] * fh[h, j]
        for h in range(H):                               # G_ji = g_j α_h w_ji (y_i − f̂_h(x_j)): G K and Gᵀ Q
            B0[:], B1[:] = 0.0, 0.0
            for j in range(q):
                gam, fj, row, a0, a1 = g[j] * alpha[s, h], fh[h, j], W[h, j], Q0[h, j], Q1[h, j]
                s0, s1 = 0.0, 0.0
                for i in range(n):
                    G = gam * row[i] * (ys[i] - fj)
                    s0 += G * K0[h, i]
                    s1 += G * K1[h, i]
                    B0[i] += G * a0
                    B1[i] += G * a1
                A0[j], A1[j] = s0, s1
            for b in range(d):
                x = XT[s, b]
                aq0, aq1, ak0, ak1 = 0.0, 0.0, 0.0, 0.0
                for j in range(q):
                    aq0 += x[n + j] * A0[j]
                    aq1 += x[n + j] * A1[j]
                for i in range(n):
                    ak0 += x[i] * B0[i]
                    ak1 += x[i] * B1[i]
                gWQ[s, h, b, 0], gWQ[s, h, b, 1], gWK[s, h, b, 0], gWK[s, h, b, 1] = aq0 * c, aq1 * c, ak0, ak1
    return loss


_COMPILED: Any = None


def _kernel() -> Any:
    """:func:`_grad_split` compiled by numba where the package's compiled backend runs
    (:func:`verify.numeric.nw.get_backend`), else None: then ``loss_and_grad`` (numpy) computes the
    same numbers, to rounding."""
    global _COMPILED
    if _COMPILED is None:
        _COMPILED = False
        try:
            from verify.numeric import nw
            if nw.get_backend() == "numba":
                import numba
                kernel = numba.njit(cache=True, nogil=True, fastmath={"reassoc", "contract"})(_grad_split)
                z = np.zeros((1, 1, 2, 2))
                kernel(z, z, np.zeros((1, 1)), np.zeros((1, 2, 3)), np.zeros((1, 3)), 2, z.copy(), z.copy(),
                       np.zeros((1, 1)))                                    # compiles (or loads) here
                _COMPILED = kernel
        except Exception:  # noqa: BLE001 - numba cannot compile or cache here: the numpy path runs
            _COMPILED = False
    return _COMPILED or None


def gradient(WQ: np.ndarray, WK: np.ndarray, alpha: np.ndarray, XT: np.ndarray, y: np.ndarray,
             n: int) -> tuple[np.ndarray, np.ndarray]:
    """Losses ``(S,)`` and the flat gradient ``[WQ, WK, alpha]`` of split-mode training on the keys
    ``XT[..., :n]`` and queries ``XT[..., n:]`` (``(S, d, n + q)``): the compiled kernel for ``d_k = 2``
    where it runs, else :func:`verify.experiments.training.loss_and_grad`."""
    K = _kernel() if WQ.shape[-1] == 2 else None
    if K is not None:
        out = np.empty(WQ.size + WK.size + alpha.size)
        gq, gk, ga = np.split(out, [WQ.size, WQ.size + WK.size])
        loss = K(WQ, WK, alpha, XT, y, n, gq.reshape(WQ.shape), gk.reshape(WK.shape), ga.reshape(alpha.shape))
        return loss, out
    X = np.swapaxes(XT, -1, -2)
    loss, g = loss_and_grad(WQ, WK, alpha, X[:, :n], y[:, :n], Xq=X[:, n:], yq=y[:, n:])
    return loss, np.concatenate([g["WQ"].ravel(), g["WK"].ravel(), g["alpha"].ravel()])


def train_split(dgp: Any, *, H: int, d_k: int, n: int, queries: int, lr_warm: float, lr: float, gain: float, T0: int,
                T: int, seeds: int, seed: int, m_conv: int) -> dict[str, np.ndarray]:
    """Train ``seeds`` runs for ``T0`` Adam steps at ``lr_warm``, then ``2T`` at ``lr`` (module
    docstring); returns the final ``WQ``, ``WK`` ``(seeds, H, d, d_k)`` and ``alpha``, and the held-out
    MSE and key HDI at the ends of the two held segments (``T0 + T``, ``T0 + 2T``; WINDOW records each)."""
    d = dgp.d
    rngs = [[np.random.default_rng(np.random.SeedSequence([seed, s, k])) for k in range(3)] for s in range(seeds)]
    shapes = ((seeds, H, d, d_k), (seeds, H, d, d_k), (seeds, H))
    theta = np.concatenate([np.stack([gain * r[0].standard_normal((H, d, d_k)) / math.sqrt(d) for r in rngs]).ravel(),
                            np.stack([gain * r[0].standard_normal((H, d, d_k)) / math.sqrt(d) for r in rngs]).ravel(),
                            np.full(seeds * H, 1.0 / H)])
    WQ, WK, alpha = (a.reshape(sh) for a, sh in zip(np.split(theta, np.cumsum([np.prod(x) for x in shapes])[:2]), shapes))
    Xe = np.stack([dgp.sample_x(r[2], (n,)) for r in rngs])
    ye = dgp.f(Xe) + dgp.sigma * np.stack([r[2].standard_normal(n) for r in rngs])
    Xq = np.stack([dgp.sample_x(r[2], (m_conv,)) for r in rngs])
    fq = dgp.f(Xq)
    params, state = {"theta": theta}, {}
    ends = (T0 + T, T0 + 2 * T)                  # each averaged over WINDOW records in its last fifth: jitter
    marks = {e - k * max(1, T // (5 * WINDOW)) for e in ends for k in range(WINDOW)}
    rec: dict[int, tuple] = {}
    for t0 in range(0, T0 + 2 * T, CHUNK):
        size = min(CHUNK, T0 + 2 * T - t0)
        X = np.stack([dgp.sample_x(r[1], (size, n + queries)) for r in rngs], axis=1)   # (size, seeds, n + q, d)
        y = dgp.f(X) + dgp.sigma * np.stack([r[1].standard_normal((size, n + queries)) for r in rngs], axis=1)
        XT = np.ascontiguousarray(np.swapaxes(X, -1, -2))
        for i in range(size):
            _, grad = gradient(WQ, WK, alpha, XT[i], y[i], n)
            adam_step(params, {"theta": grad}, state, lr_warm if t0 + i < T0 else lr)
            if t0 + i + 1 in marks:
                f = forward(WQ, WK, alpha, Xq, Xe, ye)["f"]
                rec[t0 + i + 1] = (np.mean((f - fq) ** 2, axis=-1), hdi_batch(WK))
    window = [[rec[t] for t in sorted(marks) if (t <= ends[0]) == (e == ends[0])] for e in ends]
    return {"WQ": WQ.copy(), "WK": WK.copy(), "alpha": alpha.copy(),
            "mse": np.stack([np.mean([m for m, _ in w], axis=0) for w in window]),
            "hdi": np.stack([np.mean([h for _, h in w], axis=0) for w in window])}


def _orthogonal_keys(WK: np.ndarray) -> np.ndarray:
    """The nearest keys with orthogonal columns: ``c U Vᵀ`` of the stacked ``(d, H d_k)`` keys."""
    H, d, k = WK.shape
    W = np.swapaxes(WK, 0, 1).reshape(d, H * k)
    U, s, Vt = np.linalg.svd(W, full_matrices=False)
    return np.swapaxes((s.mean() * U @ Vt).reshape(d, H, k), 0, 1)


def _block_projection(WQ: np.ndarray, WK: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each head restricted to one circle's coordinate pair, circles assigned one-to-one to keep the
    most key energy ``Σ_h ||rows of circle b(h) in W_K^h||²`` (every assignment tried)."""
    H = WK.shape[0]
    energy = np.array([[np.sum(WK[h, 2 * b:2 * b + 2] ** 2) for b in range(H)] for h in range(H)])
    best = max(itertools.permutations(range(H)), key=lambda p: sum(energy[h, p[h]] for h in range(H)))
    Q, K = np.zeros_like(WQ), np.zeros_like(WK)
    for h, b in enumerate(best):
        Q[h, 2 * b:2 * b + 2], K[h, 2 * b:2 * b + 2] = WQ[h, 2 * b:2 * b + 2], WK[h, 2 * b:2 * b + 2]
    return Q, K


def moved_heads(WQ: np.ndarray, WK: np.ndarray) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """The trained heads of one run ``(H, d, d_k)`` and each move of MOVES (module docstring)."""
    half = (WQ + WQ[:1]) / 2, (WK + WK[:1]) / 2
    same = np.broadcast_to(WQ[:1], WQ.shape).copy(), np.broadcast_to(WK[:1], WK.shape).copy()
    return {"trained": (WQ, WK), "blend half way": half, "identical": same, "shared keys": (WQ, same[1]),
            "orthogonal keys": (WQ, _orthogonal_keys(WK)), "block projection": _block_projection(WQ, WK)}


def _design(size: str) -> dict[str, Any]:
    p, z = TRAINED, TRAIN_SIZES[size]
    return design_record(
        head_weights=(r"trained free; after a move, refit by least squares on the leave-one-out estimates at a fresh "
                      r"design, beside $\alpha = 1/H$", "the trained heads learn their weights; moved heads get "
                      "the best weights for them, so a move is judged by its subspaces, not its stale weights"),
        kernel_scale=(rf"$s = 1/\sqrt{{d_k}}$, trained $W_Q, W_K$ from columns of norm about {p['gain']:g}",
                      "the scale is learnt with the projections"),
        design_density=(rf"torus, $d = {p['d']}$", "whole-circle heads are Gaussian NW smoothers"),
        target=(r"the block target over every circle", r"in scope: $H d_k = d$ and every head is needed"),
        noise=(rf"$\sigma = {p['sigma']:g}$", "low noise, so the MSE reflects the heads"),
        n=(p["n"], "keys per training step and per evaluation design"),
        steps=(z["T0"] + 2 * z["T"], f"Adam: {z['T0']} steps at the rate {p['lr_warm']:g}, then {2 * z['T']} held at "
               f"{p['lr']:g}; {p['queries']} fresh queries a step"),
        convergence=(f"step {z['T0'] + z['T']} against step {z['T0'] + 2 * z['T']}", "the SPEC's test: twice the "
                     "length, the learning rate held"),
        seeds=(f"{z['seeds']} training runs, each scored on {z['R']} fresh designs of {z['m']} points",
               "the SE of a move's effect is over training runs"),
        diagnostic=(r"the key $\mathrm{HDI}$ after each move and the paired held-out MSE against the trained heads",
                    "whether the MSE is monotone in the HDI where heads have learned"))


@functools.lru_cache(maxsize=4)
def trained_experiment(size: str, seed: int) -> dict[str, Any]:
    """Train (TRAINED, TRAIN_SIZES[size]), check convergence, move the heads (MOVES) and score every
    move with both weightings on the same fresh draws; effects are paired per run, then averaged
    over runs with their SE."""
    p, z = TRAINED, TRAIN_SIZES[size]
    dgp = make_dgp(p["dgp"], d=p["d"], sigma=p["sigma"], design="torus")
    tr = train_split(dgp, **{k: p[k] for k in ("H", "d_k", "n", "queries", "lr_warm", "lr", "gain")}, T0=z["T0"], T=z["T"],
                     seeds=z["seeds"], seed=seed, m_conv=z["m_conv"])
    S, R, n, m = z["seeds"], z["R"], p["n"], z["m"]
    X, eps, xe = (np.stack(a) for a in zip(*(draws(dgp, n, R, m, seed, s, 3) for s in range(S))))
    y, fe = dgp.f(X) + eps, dgp.f(xe)
    moved = [moved_heads(tr["WQ"][s], tr["WK"][s]) for s in range(S)]
    mse, hdis = {}, {}
    for name in MOVES:
        WQ = np.stack([mv[name][0] for mv in moved])[:, None]
        WK = np.stack([mv[name][1] for mv in moved])[:, None]
        loo, ev = head_outputs(WQ, WK, 1 / math.sqrt(p["d_k"]), X, y[..., None], xe)
        loo, ev = loo[..., 0], ev[..., 0]
        alpha = refit_alpha(loo, y)
        err = {"refit": np.einsum("srh,srhm->srm", alpha, ev), "uniform": ev.mean(axis=-2)}
        if name == "trained":
            err["trained weights"] = np.einsum("sh,srhm->srm", tr["alpha"], ev)
        mse[name] = {w: np.mean((e - fe) ** 2, axis=(-1, -2)) for w, e in err.items()}   # per run, mean over R
        hdis[name] = np.clip(hdi_batch(WK[:, 0]), 0.0, 1.0)   # rounding puts identical heads at -1e-16
    var_f = variance_of_f(p["dgp"], p["d"], "torus")
    rows = []
    for name, direction in MOVES.items():
        row = {"config": name, "direction": direction, "hdi": mean_se(hdis[name])[0], "hdi_range":
               [float(hdis[name].min()), float(hdis[name].max())]}
        for w, v in mse[name].items():
            mean, se = mean_se(v)
            diff, dse = mean_se(v - mse["trained"][w]) if w in mse["trained"] and name != "trained" else (0.0, 0.0)
            row[w] = {"mse": mean, "se": se, "r2": 1 - mean / var_f, "diff": diff, "diff_se": dse,
                      "z": z_score(diff, dse), "per_run": v}
        rows.append(row)
    (mT, m2T), (hT, h2T) = tr["mse"], tr["hdi"]
    conv = {"T0": z["T0"], "T": z["T"], "mse_T": mean_se(mT), "mse_2T": mean_se(m2T), "hdi_T": mean_se(hT), "hdi_2T": mean_se(h2T),
            "r2_gain": float((mT.mean() - m2T.mean()) / var_f), "hdi_change": float(abs(h2T.mean() - hT.mean())),
            "r2_2T": float(1 - m2T.mean() / var_f)}
    return jsonable({"regime": p, "sizes": z, "seed": seed, "var_f": var_f, "rows": rows, "convergence": conv,
                     "heads": {k: tr[k] for k in ("WQ", "WK", "alpha")}, "design": _design(size)}, finite=True)
