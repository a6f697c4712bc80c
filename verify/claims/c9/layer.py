"""C9 reading iii: one attention layer trained from scratch on in-context regression.

Per-head ``W_Q^h, W_K^h ∈ R^{p×d_k}``, ``W_V^h ∈ R^{p×d_v}``, ``W_O^h ∈ R^{d_v×p}``, width ``p = d + 1``, a
residual connection, no biases, no MLP. A context is n tokens ``z_i = (x_i, y_i)`` and the query token
``z_q = (x, 0)`` last (it attends to itself too); at the query ``s_ht = <W_Q^hᵀ z_q, W_K^hᵀ z_t>/sqrt(d_k)``,
``w_h = softmax_t s_h``, ``ŷ = (z_q + Σ_h W_O^hᵀ Σ_t w_ht W_V^hᵀ z_t)_p``, and a step's loss is
``mean_c (ŷ_c − y_c)²`` over C fresh contexts, its gradient written by hand (:func:`loss_and_grad`; the
tests compare it with torch.autograd). ``tied``: the identical-heads reference, whose heads share W_Q,
W_K. Diagnostics read the x-rows of W_Q^h, W_K^h; the head weight is ``α_h = W_V^h[p]·W_O^h[:, p]``.
Runs train in compiled code where numba runs (:mod:`verify.claims.c9._layer_kernel`), else here.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from verify._validate import as_array, fail, one_of, positive_int, positive_number
from verify._validate import seed as valid_seed
from verify.experiments.training import SCHEDULES, adam_step, learning_rate
from verify.numeric.dgp import DESIGN_NAMES, DGP_NAMES, make_dgp
from verify.numeric.nw import get_backend, softmax_exp

PARAMS = ("WQ", "WK", "WV", "WO")
#: The most token projections a setting may compute, seeds · steps · C · (n + 1) · H
#: (~20-100 ns each with the backward pass): about a minute.
MAX_LAYER_WORK = 1e9
#: Training steps whose contexts the numpy path draws at once (memory; the numbers do not depend on it).
CHUNK_STEPS = 50


def _check_params(params: Any) -> dict[str, np.ndarray]:
    if not isinstance(params, dict) or set(params) != set(PARAMS):
        raise fail("params", repr(sorted(params) if isinstance(params, dict) else type(params).__name__)[:80],
                   f"a dict with keys {', '.join(PARAMS)}")
    P = {k: as_array(f"params.{k}", params[k], min_ndim=3, keep_float32=False) for k in PARAMS}
    *lead, H, p, k = P["WQ"].shape
    v = P["WV"].shape[-1]
    for name, shape in {"WK": (*lead, H, p, k), "WV": (*lead, H, p, v), "WO": (*lead, H, v, p)}.items():
        if P[name].shape != tuple(shape):
            raise fail(f"params.{name}", f"shape {P[name].shape}", f"{tuple(shape)}")
    return P


def init_params(rng: np.random.Generator, lead: tuple[int, ...], H: int, d: int, d_k: int,
                d_v: int) -> dict[str, np.ndarray]:
    """Random initialisation: W_Q, W_K, W_V with N(0, 1/p) entries (unit expected column norm,
    Haar ranges), W_O with N(0, 1/(H d_v)) (an output of unit scale at initialisation)."""
    p = d + 1
    return {"WQ": rng.standard_normal((*lead, H, p, d_k)) / math.sqrt(p),
            "WK": rng.standard_normal((*lead, H, p, d_k)) / math.sqrt(p),
            "WV": rng.standard_normal((*lead, H, p, d_v)) / math.sqrt(p),
            "WO": rng.standard_normal((*lead, H, d_v, p)) / math.sqrt(H * d_v)}


def _forward(P: dict[str, np.ndarray], Z: np.ndarray) -> dict[str, np.ndarray]:
    """Runs folded into one axis B: params (B, H, ·, ·), Z (B, C, T, p); per-head tensors with the
    tokens last, (B, C, H, ·, T), so that the softmax and the sums over tokens are contiguous."""
    B, H, p, k = P["WQ"].shape
    v = P["WV"].shape[-1]
    _, C, T, _ = Z.shape
    zq = Z[:, :, -1, :]                                                  # (B, C, p)
    q = (zq @ np.swapaxes(P["WQ"], 1, 2).reshape(B, p, H * k)).reshape(B, C, H, k)
    W = np.concatenate([P["WK"], P["WV"]], axis=-1)                      # (B, H, p, k + v)
    KV = (Z.reshape(B, C * T, p) @ np.swapaxes(W, 1, 2).reshape(B, p, H * (k + v))).reshape(B, C, T, H, k + v)
    KV = np.ascontiguousarray(KV.transpose(0, 1, 3, 4, 2))               # (B, C, H, k + v, T)
    K, V = KV[:, :, :, :k], KV[:, :, :, k:]
    w = np.einsum("bchk,bchkt->bcht", q, K) / math.sqrt(k)              # scores, then their softmax
    w = softmax_exp(w - w.max(axis=-1, keepdims=True))
    w /= w.sum(axis=-1, keepdims=True)                                   # (B, C, H, T)
    o = np.einsum("bcht,bchvt->bchv", w, V)                              # Σ_t w_t v_t
    out = zq + o.reshape(B, C, H * v) @ P["WO"].reshape(B, H * v, p)
    return {"yhat": out[..., -1], "out": out, "q": q, "K": K, "V": V, "w": w, "o": o}


def _fold(params: Any, Z: Any, y: Any = None) -> tuple[tuple[int, ...], dict[str, np.ndarray], np.ndarray, Any]:
    """Validated params and contexts with the runs' leading axes folded into one."""
    P = _check_params(params)
    Z = as_array("Z", Z, min_ndim=3, keep_float32=False)
    lead, p = P["WQ"].shape[:-3], P["WQ"].shape[-2]
    if Z.ndim != len(lead) + 3 or Z.shape[:len(lead)] != lead or Z.shape[-1] != p:
        raise fail("Z", f"shape {Z.shape}", f"contexts {(*lead, 'C', 'T', p)} (the params' leading axes, width p)")
    if y is not None:
        y = as_array("y", y, min_ndim=1, keep_float32=False)
        if y.shape != Z.shape[:-2]:
            raise fail("y", f"shape {y.shape}", f"{Z.shape[:-2]} (one target per context)")
    B = int(np.prod(lead)) if lead else 1
    return lead, {k: v.reshape(B, *v.shape[-3:]) for k, v in P.items()}, Z.reshape(B, *Z.shape[len(lead):]), y


def forward(params: dict[str, np.ndarray], Z: np.ndarray) -> dict[str, np.ndarray]:
    """The layer at the query (last) token of each context ``Z`` (..., C, T, p), params
    (..., H, ·, ·): ``yhat`` (..., C), ``out`` (..., C, p) and, runs folded into one axis, the
    intermediates ``q``, ``K``, ``V``, ``w``, ``o``."""
    lead, P, Zf, _ = _fold(params, Z)
    fw = _forward(P, Zf)
    fw["yhat"] = fw["yhat"].reshape(*lead, -1)
    fw["out"] = fw["out"].reshape(*lead, *fw["out"].shape[1:])
    return fw


def loss_and_grad(params: dict[str, np.ndarray], Z: np.ndarray,
                  y: np.ndarray) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    """``L = mean_c (ŷ_c − y_c)²`` per run (...,) and its gradient: with ``g_c = 2(ŷ_c − y_c)/C`` and
    ``u_h = W_O^h[:, p]``, ``δo_ch = g_c u_h`` and ``δs_cht = w_cht (<v_cht, δo_ch> − <o_ch, δo_ch>)``, then
    the chain rule through o (W_V, W_O[:, p]) and the scores (W_Q, W_K); the other columns of W_O get none."""
    lead, P, Zf, y = _fold(params, Z, y)
    B, H, p, k = P["WQ"].shape
    C = Zf.shape[1]
    fw = _forward(P, Zf)
    r = fw["yhat"] - y.reshape(B, C)
    g = 2.0 * r / C                                                      # ∂L/∂ŷ_c
    q, K, V, w, o = fw["q"], fw["K"], fw["V"], fw["w"], fw["o"]
    gWO = np.zeros_like(P["WO"])
    gWO[..., -1] = np.einsum("bc,bchv->bhv", g, o)
    do = g[:, :, None, None] * P["WO"][:, None, :, :, -1]                # δo (B, C, H, v)
    gWV = np.einsum("bcht,bctp,bchv->bhpv", w, Zf, do)                   # Σ_c z̄ᵀ δo
    ds = w * (np.einsum("bchvt,bchv->bcht", V, do) - np.sum(o * do, axis=-1)[..., None])     # δs (B, C, H, T)
    c = 1.0 / math.sqrt(k)
    gWQ = c * np.einsum("bcp,bcht,bchkt->bhpk", Zf[:, :, -1, :], ds, K)
    gWK = c * np.einsum("bcht,bctp,bchk->bhpk", ds, Zf, q)
    grads = {"WQ": gWQ, "WK": gWK, "WV": gWV, "WO": gWO}
    return np.mean(r * r, axis=-1).reshape(lead), {kk: gg.reshape(*lead, *gg.shape[1:]) for kk, gg in grads.items()}


@dataclass(frozen=True)
class LayerSetting:
    """One in-context regression experiment of ``seeds`` runs: ``contexts`` fresh contexts of n
    points per step, recorded every ``record_every`` steps and at the end on ``eval_contexts``
    contexts drawn once per run. Run r draws its initial weights from ``SeedSequence([seed, r, 0])``,
    its training inputs from ``[seed, r, 1]``, their noise from ``[seed, r, 2]`` and its evaluation
    contexts from ``[seed, r, 3]``. ``tied``: the identical-heads reference (module docstring)."""

    dgp: str
    design: str
    d: int
    H: int
    d_k: int
    d_v: int
    n: int
    contexts: int
    steps: int
    lr: float
    seeds: int
    seed: int
    sigma: float = 0.1
    eval_contexts: int = 256
    record_every: int = 10
    schedule: str = "constant"
    tied: bool = False

    def __post_init__(self) -> None:
        one_of("dgp", self.dgp, DGP_NAMES)
        one_of("design", self.design, DESIGN_NAMES)
        one_of("schedule", self.schedule, SCHEDULES)
        for name, lo in (("d", 2), ("H", 2), ("d_k", 1), ("d_v", 1), ("n", 1), ("contexts", 1), ("steps", 1),
                         ("seeds", 1), ("eval_contexts", 2), ("record_every", 1)):
            positive_int(name, getattr(self, name), minimum=lo)
        if self.d_k > self.d:
            raise fail("d_k", repr(self.d_k), f"d_k <= d = {self.d} (the key HDI is read on the x-rows)")
        positive_number("lr", self.lr)
        valid_seed("seed", self.seed)
        positive_number("sigma", self.sigma)
        if not isinstance(self.tied, bool):
            raise fail("tied", repr(self.tied), "true or false")
        make_dgp(self.dgp, d=self.d, sigma=self.sigma, design=self.design)
        if self.work > MAX_LAYER_WORK:
            raise fail("setting", f"seeds·steps·contexts·(n + 1)·H = {self.work:.1e} token projections",
                       f"at most {MAX_LAYER_WORK:.0e}")

    @property
    def work(self) -> float:
        return float(self.seeds) * (self.steps + 1) * (self.contexts + self.eval_contexts / self.record_every) \
            * (self.n + 1) * self.H

    @property
    def records(self) -> list[int]:
        return sorted({*range(0, self.steps, self.record_every), self.steps})

    def _shape(self) -> tuple:
        return (self.d, self.H, self.d_k, self.d_v, self.n, self.contexts, self.steps, self.lr, self.eval_contexts,
                self.record_every, self.schedule)


@dataclass
class LayerTrace:
    """Recorded at ``steps`` (0 = initialisation), per run: ``test_mse`` (against f) and ``train_mse``
    (runs, T), the heads' x-rows ``WQ_path``, ``WK_path`` (runs, T, H, d, d_k), the y-path weights
    ``alpha_path`` (runs, T, H), and the final parameters."""

    setting: LayerSetting
    steps: np.ndarray
    test_mse: np.ndarray
    train_mse: np.ndarray
    WQ_path: np.ndarray
    WK_path: np.ndarray
    alpha_path: np.ndarray
    params: dict[str, np.ndarray]


def contexts(dgp: Any, xs: np.random.Generator, noise: np.random.Generator, shape: tuple[int, ...],
             n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Contexts of ``shape``: tokens Z (…, n + 1, d + 1) with the query token (x, 0) last, the
    noisy value y at the query (training target) and f at the query (evaluation target); the points
    from ``xs`` (the context's n points, then the query), the noise from ``noise``."""
    x = dgp.sample_x(xs, (*shape, n + 1))
    eps = noise.standard_normal((*shape, n + 1))
    fx = dgp.f(x)
    Z = np.concatenate([x, (fx + dgp.sigma * eps)[..., None]], axis=-1)
    Z[..., -1, -1] = 0.0
    return Z, fx[..., -1] + dgp.sigma * eps[..., -1], fx[..., -1]


def train_layers(settings: list[LayerSetting]) -> list[LayerTrace]:
    """Train settings of the same sizes together (a run's numbers do not depend on the batch)."""
    for i, s in enumerate(settings):
        if not isinstance(s, LayerSetting):
            raise fail(f"settings[{i}]", type(s).__name__, "a LayerSetting")
    if len({s._shape() for s in settings}) != 1:
        raise fail("settings", f"{len(settings)} settings of different sizes", "settings of the same sizes")
    s0, runs = settings[0], [(s, r) for s in settings for r in range(s.seeds)]
    dgps = {s: make_dgp(s.dgp, d=s.d, sigma=s.sigma, design=s.design) for s in settings}
    init, EZ, Ef, gens = [], [], [], []
    for s, r in runs:
        rs = [np.random.default_rng(np.random.SeedSequence([s.seed, r, k])) for k in range(4)]
        P0 = init_params(rs[0], (), s.H, s.d, s.d_k, s.d_v)
        if s.tied:
            P0["WQ"][:], P0["WK"][:] = P0["WQ"][0], P0["WK"][0]
        init.append(P0)
        Z, _, f = contexts(dgps[s], rs[3], rs[3], (s.eval_contexts,), s.n)
        EZ.append(Z)
        Ef.append(f)
        gens.append((rs[1], rs[2]))
    P = {k: np.stack([p[k] for p in init]) for k in PARAMS}
    EZ, Ef = np.stack(EZ), np.stack(Ef)
    tied = np.array([s.tied for s, _ in runs])
    rec: dict[str, list] = {k: [] for k in ("test_mse", "train_mse", "WQ_path", "WK_path", "alpha_path")}
    d, marks = s0.d, s0.records

    def record(P: dict[str, np.ndarray], loss: np.ndarray) -> None:
        rec["test_mse"].append(np.mean((_forward(P, EZ)["yhat"] - Ef) ** 2, axis=-1))
        rec["train_mse"].append(np.array(loss, copy=True))
        rec["WQ_path"].append(P["WQ"][..., :d, :].copy())
        rec["WK_path"].append(P["WK"][..., :d, :].copy())
        rec["alpha_path"].append(np.einsum("rhv,rhv->rh", P["WV"][..., -1, :], P["WO"][..., :, -1]))

    if get_backend() == "numba":
        _train_compiled(s0, runs, P, gens, tied, marks, record)
    else:
        state: dict[str, Any] = {}
        chunk: tuple[np.ndarray, np.ndarray] | None = None
        lo = 0
        for t in range(s0.steps + 1):
            if chunk is None or t >= lo + chunk[0].shape[1]:
                size = min(CHUNK_STEPS, s0.steps + 1 - t)
                parts = [contexts(dgps[s], *g, (size, s0.contexts), s0.n) for (s, _), g in zip(runs, gens)]
                chunk, lo = (np.stack([p[0] for p in parts]), np.stack([p[1] for p in parts])), t
            loss, grads = loss_and_grad(P, chunk[0][:, t - lo], chunk[1][:, t - lo])
            if t in marks:
                record(P, loss)
            if t < s0.steps:
                for key in ("WQ", "WK"):
                    grads[key] = np.where(tied[:, None, None, None], grads[key].sum(axis=1, keepdims=True), grads[key])
                adam_step(P, grads, state, learning_rate(s0.lr, s0.schedule, t, s0.steps))
    stack = {k: np.moveaxis(np.asarray(v), 0, 1) for k, v in rec.items()}
    if not all(np.all(np.isfinite(stack[k])) for k in ("test_mse", "train_mse")):
        raise fail("lr", f"{s0.lr} (non-finite MSE in training)", "a learning rate that keeps training finite")
    out, lo = [], 0
    for s in settings:
        sl = slice(lo, lo + s.seeds)
        lo += s.seeds
        out.append(LayerTrace(setting=s, steps=np.asarray(marks), params={k: v[sl].copy() for k, v in P.items()},
                              **{k: v[sl].copy() for k, v in stack.items()}))
    return out


def _train_compiled(s0: LayerSetting, runs: list, P: dict[str, np.ndarray], gens: list, tied: np.ndarray,
                    marks: list[int], record: Any) -> None:
    """The runs in compiled code (:mod:`verify.claims.c9._layer_kernel`), recording at ``marks``; runs
    of one seed stream (a layer and its tied reference) are trained on the same draws, drawn once."""
    from verify.claims.c9 import _layer_kernel as LK
    from verify.experiments._train_kernel import DESIGNS, TARGETS

    R = len(runs)
    H, p, k, v = s0.H, s0.d + 1, s0.d_k, s0.d_v
    nq, nv = H * p * k, H * p * v
    flat = np.concatenate([P["WQ"].reshape(R, -1), P["WK"].reshape(R, -1), P["WV"].reshape(R, -1),
                           P["WO"][..., -1].reshape(R, -1)], axis=1)
    streams: dict[tuple, list[int]] = {}
    for r, (s, i) in enumerate(runs):
        streams.setdefault((s.dgp, s.design, s.seed, i), []).append(r)
    groups = [(idx, flat[idx], np.zeros((len(idx), flat.shape[1])), np.zeros((len(idx), flat.shape[1])))
              for idx in streams.values()]
    losses = np.empty((max(len(g[0]) for g in groups), max(np.diff(marks), default=1)))
    for a, b in zip(marks, [*marks[1:], s0.steps + 1]):
        P["WQ"][:] = flat[:, :nq].reshape(R, H, p, k)
        P["WK"][:] = flat[:, nq:2 * nq].reshape(R, H, p, k)
        P["WV"][:] = flat[:, 2 * nq:2 * nq + nv].reshape(R, H, p, v)
        P["WO"][..., -1] = flat[:, 2 * nq + nv:].reshape(R, H, v)
        loss = np.empty(R)
        for idx, Pg, Mg, Vg in groups:
            s = runs[idx[0]][0]
            LK.layer_segment(Pg, Mg, Vg, tied[idx], a, b, s0.steps, s0.lr, s0.schedule == "cosine", H, p, k, v,
                             gens[idx[0]], TARGETS.index(s.dgp), DESIGNS.index(s.design), s.sigma, s0.n, s0.contexts,
                             losses)
            loss[idx], flat[idx] = losses[:len(idx), 0], Pg
        record(P, loss)
