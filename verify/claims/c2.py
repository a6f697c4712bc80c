"""C2: multi-head attention is a weighted sum (ensemble) of H NW estimators, one per subspace (SPEC, C2).

The core compares :class:`verify.numeric.attention.MultiHeadNW` (H NW heads, each through its own ``W_O^h``,
summed) with concatenate-then-project attention written in mpmath (:func:`mp_mha`); the detail finds the
scalar weights ``α_h = W_V^h W_O^h`` free reals (a correction: the paper says "weighted sum", not "average").
"""

from __future__ import annotations

import math
from typing import Any

import mpmath
import numpy as np

import proofs
from proofs.markup import num, sci
from verify._validate import as_array, fail
from verify.claims import agreement
from verify.judgment.claim import Cap, Claim, Context, Evidence, Threshold, shared
from verify.judgment.counterexamples import ReplayOutcome
from verify.judgment.verdicts import Numeric, Role
from verify.numeric import formulas
from verify.numeric.attention import EPS, MP_DPS, MultiHeadNW, rounding_bound
from verify.schema import Float, List, Schema

__all__ = ["CLAIM", "random_module", "mp_mha", "scale_and_bound", "scalar_weights", "replay_free_weights", "ensemble",
           "scalar", "SIMPLEX_TOL", "MAX_REPLAY_HEADS", "on_simplex", "ensemble_agrees", "scalar_agrees"]

CLAIM = Claim(proofs.c2_ensemble)

SIMPLEX_TOL = Threshold(1e-12, r"$\alpha$ is on the simplex when every $\alpha_h \ge 0$ and $\lvert \sum_h \alpha_h - 1 \rvert$ "
                               "is below this: float64 rounding of a sum of a few products of order 1")
MAX_REPLAY_HEADS = Cap(1024, r"a replay lists every $\alpha_h$ in its summary; the check saves $H \le 8$, and the "
                             "work is one product per entry of the file (about 10 ms at the largest file)")


# --------------------------------------------------------------------------- the judges
def on_simplex(alpha: np.ndarray) -> bool:
    """The head weights are a convex combination: every α_h >= 0 and |Σα − 1| <= SIMPLEX_TOL."""
    return bool(np.all(alpha >= 0) and abs(float(alpha.sum()) - 1) <= SIMPLEX_TOL)


def ensemble_agrees(worst_ratio: float, key_bias_ratio: float) -> bool:
    """The core agrees to rounding: every module's error (``worst_ratio``: the largest error / bound) and
    the move a random key bias makes (``key_bias_ratio``) within the float64 rounding bound."""
    return bool(worst_ratio <= 1.0 and key_bias_ratio <= 1.0)


def scalar_agrees(worst_ratio: float, closed_err: float, closed_bound: float, alpha_gap: float) -> bool:
    """The detail agrees to rounding: every module and the generated ``c2_mha_scalar_h2_n3`` within their
    rounding bounds, the generated α_h within 4 ulps of W_V^h W_O^h."""
    return bool(worst_ratio <= 1.0 and closed_err <= closed_bound and alpha_gap <= 4 * EPS)


def random_module(rng: np.random.Generator, H: int, d: int, kdim: int, vdim: int, d_k: int, d_v: int,
                  d_out: int) -> MultiHeadNW:
    """A MultiHeadNW whose parameters, biases included, are N(0, 1) draws from ``rng``."""
    g = rng.standard_normal
    return MultiHeadNW(g((H, d, d_k)), g((H, kdim, d_k)), g((H, vdim, d_v)), g((H, d_v, d_out)),
                       b_Q=g((H, d_k)), b_K=g((H, d_k)), b_V=g((H, d_v)), b_O=g(d_out))


def _mpm(a: np.ndarray) -> list[list[Any]]:
    return [[mpmath.mpf(float(x)) for x in row] for row in a]


def _affine(X: list[list[Any]], W: list[list[Any]], b: list[Any]) -> list[list[Any]]:
    """Rows of ``X W + b`` (mpmath)."""
    cols = list(zip(*W))
    return [[mpmath.fdot(x, c) + bc for c, bc in zip(cols, b)] for x in X]


def _mp_nw(q: list[Any], K: list[list[Any]], V: list[list[Any]], s: Any) -> list[Any]:
    """``Σ_j exp(s q·k_j) v_j / Σ_j exp(s q·k_j)`` for one query, each column of ``V`` (mpmath)."""
    e = [mpmath.exp(s * mpmath.fdot(q, k)) for k in K]
    z = mpmath.fsum(e)
    return [mpmath.fdot(e, col) / z for col in V]


def mp_mha(module: MultiHeadNW, query: Any, key: Any, value: Any, dps: int = MP_DPS) -> np.ndarray:
    """Standard multi-head attention in mpmath, concatenate-then-project: with the full projections
    ``W_q = [W_Q^1 ... W_Q^H]`` (d, H d_k) etc., ``Q = x W_q + b_q``; head h uses columns
    ``h d_k:(h+1) d_k``: ``softmax(Q_h K_hᵀ / sqrt(d_k)) V_h``; the heads are concatenated
    (L, H d_v) and projected once, ``concat · W_o + b_o`` with ``W_o`` (H d_v, d_out).
    Inputs ``(L, ·)`` or ``(N, L, ·)``; returns float64 of the same leading shape."""
    q, k, v = (as_array(nm, a, keep_float32=False) for nm, a in (("query", query), ("key", key), ("value", value)))
    if q.ndim == 2:
        return mp_mha(module, q[None], k[None], v[None], dps)[0]
    if not (q.ndim == k.ndim == v.ndim == 3) or not (q.shape[0] == k.shape[0] == v.shape[0]):
        raise fail("query, key, value", f"shapes {q.shape}, {k.shape}, {v.shape}",
                   "(N, L, d), (N, S, kdim), (N, S, vdim)")
    H, d_k, d_v = module.H, module.d_k, module.d_v
    out = []
    with mpmath.workdps(dps):
        s = formulas.c1_softmax_scale_mp(d_k)
        Wq, Wk, Wv = (_mpm(np.concatenate(list(getattr(module, nm)), axis=1)) for nm in ("W_Q", "W_K", "W_V"))
        bq, bk, bv = (_mpm([np.concatenate(list(getattr(module, nm)))])[0] for nm in ("b_Q", "b_K", "b_V"))
        Wo, bo = _mpm(np.concatenate(list(module.W_O), axis=0)), _mpm([module.b_O])[0]
        for x, xk, xv in zip(q, k, v):
            Q, K, V = _affine(_mpm(x), Wq, bq), _affine(_mpm(xk), Wk, bk), _affine(_mpm(xv), Wv, bv)
            concat = [[] for _ in Q]
            for h in range(H):
                qs, cols = slice(h * d_k, (h + 1) * d_k), [[vj[c] for vj in V] for c in range(h * d_v, (h + 1) * d_v)]
                for i, qi in enumerate(Q):
                    concat[i] += _mp_nw(qi[qs], [kj[qs] for kj in K], cols, s)
            out.append([[float(t) for t in row] for row in _affine(concat, Wo, bo)])
    return np.array(out)


def scale_and_bound(module: MultiHeadNW, q: np.ndarray, k: np.ndarray, v: np.ndarray) -> tuple[float, float]:
    """(the output's scale Σ|head||W_O| + |b_O|, the rounding bound) of one batch of inputs."""
    A, va_max = 0.0, 0.0
    for h in range(module.H):
        qa = np.abs(q) @ np.abs(module.W_Q[h]) + np.abs(module.b_Q[h])
        ka = np.abs(k) @ np.abs(module.W_K[h]) + np.abs(module.b_K[h])
        va = np.abs(v) @ np.abs(module.W_V[h]) + np.abs(module.b_V[h])
        A = max(A, float(np.max(module.scale * (qa.reshape(-1, module.d_k) @ ka.reshape(-1, module.d_k).T))))
        va_max = max(va_max, float(np.max(va)))
    W_o = np.concatenate(list(module.W_O), axis=0)
    scale = va_max * float(np.max(np.sum(np.abs(W_o), axis=0))) + float(np.max(np.abs(module.b_O)))
    terms = module.d + module.kdim + module.vdim + module.d_k + k.shape[-2] + module.H * module.d_v
    return scale, rounding_bound(A, terms)


# --------------------------------------------------------------------------- part 1
@shared
def ensemble(ctx: Context) -> dict[str, Any]:
    # (H, d, kdim, vdim, d_k, d_v, d_out, N, L, S)
    cfgs = ctx.size([(2, 4, 3, 5, 2, 3, 4, 1, 3, 4), (3, 6, 6, 6, 2, 2, 6, 2, 2, 3)],
                    [(1, 3, 3, 3, 3, 3, 3, 1, 3, 4), (2, 4, 3, 5, 2, 3, 4, 1, 3, 4), (3, 6, 6, 6, 2, 2, 6, 2, 2, 3),
                     (4, 8, 5, 3, 2, 1, 8, 1, 3, 5), (6, 6, 2, 7, 1, 2, 6, 1, 2, 4), (2, 5, 5, 5, 4, 3, 2, 2, 3, 3)])
    rows, worst, worst_ratio, key_bias = [], 0.0, 0.0, 0.0
    for i, (H, d, kdim, vdim, d_k, d_v, d_out, N, L, S) in enumerate(cfgs):
        rng = ctx.rng(f"c2/ensemble/{i}")
        mod = random_module(rng, H, d, kdim, vdim, d_k, d_v, d_out)
        x, xk, xv = rng.standard_normal((N, L, d)), rng.standard_normal((N, S, kdim)), rng.standard_normal((N, S, vdim))
        ours, ref = mod(x, xk, xv), mp_mha(mod, x, xk, xv)
        scale, bound = scale_and_bound(mod, x, xk, xv)
        err = float(np.max(np.abs(ours - ref))) / scale
        # a key bias shifts all scores of a head by s q·b_K: the output must not move
        moved = MultiHeadNW(mod.W_Q, mod.W_K, mod.W_V, mod.W_O, b_Q=mod.b_Q,
                            b_K=mod.b_K + rng.standard_normal(mod.b_K.shape), b_V=mod.b_V, b_O=mod.b_O)
        kb = float(np.max(np.abs(moved(x, xk, xv) - ours))) / scale
        _, bound_moved = scale_and_bound(moved, x, xk, xv)
        rows.append({"H": H, "d": d, "kdim": kdim, "vdim": vdim, "d_k": d_k, "d_v": d_v, "d_out": d_out,
                     "N": N, "L": L, "S": S, "rel_error": err, "bound": bound, "key_bias_shift": kb})
        worst, worst_ratio = max(worst, err), max(worst_ratio, err / bound)
        key_bias = max(key_bias, kb / (bound + bound_moved))
    return {"cases": rows, "max_rel_error": worst, "max_error_over_bound": worst_ratio,
            "max_key_bias_shift_over_bound": key_bias, "dps": MP_DPS, "ok": ensemble_agrees(worst_ratio, key_bias)}


# --------------------------------------------------------------------------- part 2
def scalar_weights(module: MultiHeadNW) -> tuple[np.ndarray, float]:
    """``α_h = W_V^h W_O^h`` (1 x d_v times d_v x 1) and ``β = Σ_h b_V^h W_O^h + b_O`` of a module
    with scalar values (vdim = 1) and scalar output (d_out = 1)."""
    if module.vdim != 1 or module.d_out != 1:
        raise fail("module", repr(module), "vdim = 1 and d_out = 1 (scalar values and output)")
    alpha = np.array([float(module.W_V[h][0] @ module.W_O[h][:, 0]) for h in range(module.H)])
    beta = float(sum(module.b_V[h] @ module.W_O[h][:, 0] for h in range(module.H)) + module.b_O[0])
    return alpha, beta


def _mp_heads_scalar(module: MultiHeadNW, x: np.ndarray, xk: np.ndarray, y: np.ndarray) -> list[list[Any]]:
    """f̂_h(x_l) = Σ_i w_i^h y_i with each head's literal exponential kernel (mpmath)."""
    s = formulas.c1_softmax_scale_mp(module.d_k)
    Y = [mpmath.mpf(float(t)) for t in y]
    out = []
    for h in range(module.H):
        Q = _affine(_mpm(x), _mpm(module.W_Q[h]), [mpmath.mpf(float(t)) for t in module.b_Q[h]])
        K = _affine(_mpm(xk), _mpm(module.W_K[h]), [mpmath.mpf(float(t)) for t in module.b_K[h]])
        out.append([_mp_nw(qi, K, [Y], s)[0] for qi in Q])
    return out


@shared
def scalar(ctx: Context) -> dict[str, Any]:
    cfgs = ctx.size([(2, 3, 2, 2, 3, 4), (3, 4, 2, 3, 2, 5)],
                    [(2, 3, 2, 2, 3, 4), (3, 4, 2, 3, 2, 5), (4, 5, 3, 1, 3, 6), (6, 6, 1, 2, 2, 4)])
    rows, worst_ratio, worst = [], 0.0, 0.0
    for i, (H, d, d_k, d_v, L, S) in enumerate(cfgs):
        rng = ctx.rng(f"c2/scalar/{i}")
        mod = random_module(rng, H, d, d, 1, d_k, d_v, 1)
        x, xk, y = rng.standard_normal((L, d)), rng.standard_normal((S, d)), rng.standard_normal((S, 1))
        alpha, beta = scalar_weights(mod)
        ours = mod(x, xk, y)[:, 0]
        with mpmath.workdps(MP_DPS):
            fh = _mp_heads_scalar(mod, x, xk, y[:, 0])
            ref = np.array([float(mpmath.fdot([mpmath.mpf(float(a)) for a in alpha], [fh[h][l] for h in range(H)])
                                  + mpmath.mpf(beta)) for l in range(L)])
        scale, bound = scale_and_bound(mod, x, xk, y)
        err = float(np.max(np.abs(ours - ref))) / scale
        rows.append({"H": H, "d_k": d_k, "d_v": d_v, "alpha": alpha.tolist(), "sum_alpha": float(alpha.sum()),
                     "W_V": [mod.W_V[h][0].tolist() for h in range(H)], "W_O": [mod.W_O[h][:, 0].tolist() for h in range(H)],
                     "beta": beta, "rel_error": err, "bound": bound, "on_simplex": on_simplex(alpha)})
        worst, worst_ratio = max(worst, err), max(worst_ratio, err / bound)
    # the generated closed forms: H = 2, n = 3, d_v = 2 (w_h3 = 1 - w_h1 - w_h2 built in)
    rng = ctx.rng("c2/scalar/h2n3")
    mod = random_module(rng, 2, 3, 3, 1, 2, 2, 1)
    x, xk, y = rng.standard_normal((1, 3)), rng.standard_normal((3, 3)), rng.standard_normal((3, 1))
    w = mod.weights(x, xk)[:, 0, :]                                       # (H, n)
    alpha_gen = [float(formulas.c2_head_weight_dv2(*mod.W_V[h][0], *mod.W_O[h][:, 0])) for h in range(2)]
    alpha, beta = scalar_weights(mod)
    closed = float(formulas.c2_mha_scalar_h2_n3(w[0, 0], w[0, 1], w[1, 0], w[1, 1], *y[:, 0],
                                                *mod.W_V[0][0], *mod.W_V[1][0], *mod.W_O[0][:, 0], *mod.W_O[1][:, 0],
                                                *mod.b_V[0], *mod.b_V[1], mod.b_O[0]))
    scale, bound = scale_and_bound(mod, x, xk, y)
    closed_err = abs(closed - float(mod(x, xk, y)[0, 0])) / scale
    alpha_gap = float(np.max(np.abs(np.array(alpha_gen) - alpha)) / np.max(np.abs(alpha)))
    sums = [r["sum_alpha"] for r in rows]
    return {"cases": rows, "max_rel_error": worst, "max_error_over_bound": worst_ratio,
            "closed_form_h2_n3_rel_error": closed_err, "closed_form_bound": bound,
            "c2_head_weight_dv2_vs_alpha": alpha_gap, "modules_on_simplex": sum(r["on_simplex"] for r in rows),
            "modules": len(rows), "sum_alpha_range": [min(sums), max(sums)],
            "min_alpha": min(min(r["alpha"]) for r in rows),
            "ok": scalar_agrees(worst_ratio, closed_err, bound, alpha_gap)}


_BLOCKS = List(List(Float(), max_len=MAX_REPLAY_HEADS), max_len=MAX_REPLAY_HEADS)


@CLAIM.replay("free-weights", schema=Schema(W_V=_BLOCKS, W_O=_BLOCKS),
              example={"W_V": [[1.0, 0.5], [-1.0, 0.2]], "W_O": [[0.3, 0.1], [0.2, 0.4]]})
def replay_free_weights(params: dict) -> ReplayOutcome:
    """``α_h = W_V^h W_O^h`` from the saved blocks (``W_V``: H rows of d_v, ``W_O``: H columns of d_v);
    violated (the weights are not a convex combination) when some α_h < 0 or |Σα − 1| > SIMPLEX_TOL."""
    wv = as_array("params.W_V", params["W_V"], ndim=2, keep_float32=False)
    wo = as_array("params.W_O", params["W_O"], ndim=2, keep_float32=False)
    if wv.shape != wo.shape:
        raise fail("params", f"W_V {wv.shape}, W_O {wo.shape}", "W_V and W_O of one shape (H, d_v)")
    with np.errstate(over="ignore", invalid="ignore"):
        alpha = np.einsum("hv,hv->h", wv, wo)
        total = float(alpha.sum())
    if not (np.all(np.isfinite(alpha)) and math.isfinite(total)):
        raise fail("params.W_V, W_O", f"entries up to {max(np.abs(wv).max(), np.abs(wo).max()):.3g}, "
                   "whose products overflow float64", "weights whose α_h and Σα are finite")
    on = on_simplex(alpha)
    crit = r"not on the simplex $\alpha_h \ge 0$, $\sum_h \alpha_h = 1$"
    summary = (f"$H = {alpha.size}$: $\\alpha = ({', '.join(f'{a:.3f}' for a in alpha)})$, $\\sum_h \\alpha_h = "
               f"{alpha.sum():.3f}$, $\\min_h \\alpha_h = {alpha.min():.3f}$ (violation: {crit})")
    return ReplayOutcome(violates=not on, summary=summary, criterion=crit,
                         figures={"alpha": alpha.tolist(), "sum": float(alpha.sum())})


# --------------------------------------------------------------------------- the parts
@CLAIM.part("ensemble-identity", Role.CORE, groups=("ensemble",), label="ensemble identity",
            statement=r"multi-head attention is the sum over heads of each head's NW estimate through its "
                      r"$W_V^h, W_O^h$ blocks (plus biases): a weighted sum of $H$ NW estimators, each in its own "
                      "projection subspace")
def ensemble_identity(ctx: Context) -> Evidence:
    """MultiHeadNW against concatenate-then-project attention written in mpmath."""
    ens = ensemble(ctx)
    Hs = sorted({r["H"] for r in ens["cases"]})
    return Evidence(
        numeric=Numeric("rounding" if ens["ok"] else "disagree",
                        f"{len(ens['cases'])} seeded random modules with biases ($H$ in {Hs}, kdim and vdim "
                        f"unlike $d$, batched) against concatenate-then-project attention in mpmath at {MP_DPS} "
                        f"digits: max relative error {sci(ens['max_rel_error'])} (at most "
                        f"{num(ens['max_error_over_bound'], '.2g')} of the float64 rounding bound); a random key "
                        f"bias moves the output by at most {num(ens['max_key_bias_shift_over_bound'], '.2g')} of "
                        "the rounding bound", ens),
        finding=r"$\mathrm{MHA} = \sum_h$ NW heads through $W_O^h$ to " + sci(ens["max_rel_error"], 0))


@CLAIM.part("free-weights", Role.DETAIL, groups=("value_bias", "scalar_weights"), label="scalar ensemble weights",
            statement=r"with scalar values and output, $\mathrm{MHA} = \sum_h \alpha_h \hat{f}_h + \beta$ with "
                      r"$\alpha_h = W_V^h W_O^h$ and $\beta = \sum_h b_V^h W_O^h + b_O$; the $\alpha_h$ are free "
                      "real weights (no simplex constraint)",
            stated="a weighted sum (ensemble) of $H$ NW estimators",
            instead=r"With scalar values and output, multi-head attention is $\sum_h \alpha_h \hat{f}_h + \beta$: a "
                    r"sum of $H$ NW estimators with free real weights $\alpha_h = W_V^h W_O^h$ (any sign and sum) and an "
                    r"offset $\beta = \sum_h b_V^h W_O^h + b_O$, not an average of them.")
def scalar_ensemble_weights(ctx: Context) -> Evidence:
    """The scalar case against mpmath, and whether random modules' α lie on the simplex."""
    sc = scalar(ctx)
    lo, hi = sc["sum_alpha_range"]
    off = next((r for r in sc["cases"] if not r["on_simplex"]), None)
    cx = None
    if off is not None:
        cx = ctx.counterexample(
            statement=r"multi-head attention is an ensemble average: head weights $\alpha_h \ge 0$ with "
                      r"$\sum_h \alpha_h = 1$",
            params={"W_V": off["W_V"], "W_O": off["W_O"]},
            description=f"a seeded module with $H = {off['H']}$: the weights $\\alpha_h = W_V^h W_O^h$ sum to "
                        f"{num(off['sum_alpha'], '.3f')}")
    return Evidence(
        numeric=Numeric("rounding" if sc["ok"] else "disagree",
                        f"{sc['modules']} seeded modules: MultiHeadNW against "
                        r"$\sum_h \alpha_h \hat{f}_h + \beta$ in mpmath, max relative error "
                        f"{sci(sc['max_rel_error'])}; the generated `c2_mha_scalar_h2_n3` agrees "
                        f"{agreement(sc['closed_form_h2_n3_rel_error'])}. $\\sum_h \\alpha_h$ ranges over "
                        f"{num(lo, '.2f')} to {num(hi, '.2f')}, the smallest $\\alpha_h$ is "
                        f"{num(sc['min_alpha'], '.2f')}; {sc['modules_on_simplex']} of {sc['modules']} random "
                        "modules have their weights on the simplex", sc),
        counterexample=cx,
        derived=r"$\sum_h \alpha_h \hat{f}_h + \beta$ with $\alpha_h = W_V^h W_O^h$ free reals (matrices for vector "
                r"values) and an offset $\beta$ from the biases: not a convex combination",
        finding=r"the head weights $\alpha_h = W_V^h W_O^h$ are free reals (any sign and sum), not a convex "
                "combination")


@CLAIM.summary
def summary(ctx: Context, parts: tuple) -> str:
    ens, sc = ensemble(ctx), scalar(ctx)
    lo, hi = sc["sum_alpha_range"]
    Hs = sorted({r["H"] for r in ens["cases"]})
    return (r"$\mathrm{MHA} = \sum_h$ NW heads through $W_O^h$ to " + sci(ens["max_rel_error"], 0)
            + f" (mpmath, $H$ in {Hs}); scalar case: $\\alpha_h = W_V^h W_O^h$ free reals ($\\sum_h \\alpha_h$ in "
            f"{num(lo, '.2f')} to {num(hi, '.2f')})")

