"""C9 reading (iii): a real attention layer trained from scratch on in-context regression.

The layer (one attention-only layer, per-head ``W_Q^h, W_K^h ∈ R^{p×d_k}``, ``W_V^h ∈ R^{p×d_v}``,
``W_O^h ∈ R^{d_v×p}``, width ``p = d + 1``, a residual connection, no biases, no MLP). A context is
n tokens ``z_i = (x_i, y_i)`` and a query token ``z_q = (x, 0)``; the sequence ``Z = [z_1..z_n, z_q]``
(T = n + 1 tokens: the query attends to the context and to itself, as in a real layer). At the
query position

    q_h = W_Q^hᵀ z_q,  k_ht = W_K^hᵀ z_t,  v_ht = W_V^hᵀ z_t             (projections)
    s_ht = <q_h, k_ht> / sqrt(d_k),  w_ht = softmax_t(s_ht)                (scores, weights)
    o_h = Σ_t w_ht v_ht,  out = z_q + Σ_h W_O^hᵀ o_h,  ŷ = out_{p}          (heads, output)

and the prediction is the y-slot of the output (the query's own y-slot is 0, so the residual adds
nothing there). The loss of a step is ``L = mean_c (ŷ_c − y_c)²`` over C fresh contexts.

Gradient (written by hand; the tests compare it with torch.autograd): with ``g_c = 2(ŷ_c − y_c)/C``
and ``u_h = W_O^h[:, p]`` (the only column of W_O the prediction reads)

    ∂L/∂W_O^h[:, p] = Σ_c g_c o_ch,   δo_ch = g_c u_h
    ∂L/∂W_V^h = Σ_c z̄_chᵀ δo_ch,      z̄_ch = Σ_t w_cht z_ct                (∂o/∂v_t = w_t)
    δs_cht = w_cht (<v_cht, δo_ch> − <o_ch, δo_ch>)                        (softmax)
    ∂L/∂W_Q^h = Σ_c z_qc ⊗ Σ_t δs_cht k_cht / sqrt(d_k)
    ∂L/∂W_K^h = Σ_c (Σ_t δs_cht z_ct) ⊗ q_ch / sqrt(d_k)

(the other columns of W_O get no gradient: the loss reads only the y-slot). Optimiser: Adam with
the cosine schedule of :mod:`verify.experiments.training`.

Diagnostics: the x-rows of W_Q^h and W_K^h (``[:d]``, the part that reads the inputs; the query's
y-slot is 0, so W_Q's last row never acts) give the key HDI, query HDI, score-form diversity and
form-subspace HDI of :mod:`verify.experiments.forms`; the effective head weight of the y-path is
``α_h = W_V^h[p] · W_O^h[:, p]`` (C2's α for scalar values).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from typing import Any

import numpy as np

from proofs.markup import num
from verify._validate import as_array, fail, one_of, positive_int, positive_number
from verify._validate import seed as valid_seed
from verify.experiments.forms import diagnostics, haar_baselines
from verify.experiments.training import adam_step, convergence, effect, learning_rate
from verify.numeric.dgp import DESIGN_NAMES, DGP_NAMES, make_dgp
from verify.numeric.nw import softmax_exp

__all__ = ["PARAMS", "ICLSetting", "ICLTrace", "init_params", "forward", "loss_and_grad", "contexts", "train_icl",
           "c9_icl", "icl_settings", "icl_summary", "icl_baselines", "ICL_SIZES", "ICL_TARGETS", "MAX_ICL_WORK"]

PARAMS = ("WQ", "WK", "WV", "WO")
#: The most token projections a setting may compute, seeds · steps · C · (n + 1) · H
#: (~50-100 ns each with the backward pass): about a minute.
MAX_ICL_WORK = 1e9
#: Training steps whose contexts are drawn at once (memory; the numbers do not depend on it).
CHUNK_STEPS = 50


def _check_params(params: Any) -> dict[str, np.ndarray]:
    if not isinstance(params, dict) or set(params) != set(PARAMS):
        raise fail("params", repr(sorted(params) if isinstance(params, dict) else type(params).__name__)[:80],
                   f"a dict with keys {', '.join(PARAMS)}")
    P = {k: as_array(f"params.{k}", params[k], min_ndim=3, keep_float32=False) for k in PARAMS}
    *lead, H, p, k = P["WQ"].shape
    v = P["WV"].shape[-1]
    want = {"WK": (*lead, H, p, k), "WV": (*lead, H, p, v), "WO": (*lead, H, v, p)}
    for name, shape in want.items():
        if P[name].shape != tuple(shape):
            raise fail(f"params.{name}", f"shape {P[name].shape}", f"{tuple(shape)}")
    return P


def init_params(rng: np.random.Generator, lead: tuple[int, ...], H: int, d: int, d_k: int, d_v: int) -> dict[str, np.ndarray]:
    """Random initialisation: W_Q, W_K, W_V with N(0, 1/p) entries (unit expected column norm,
    Haar ranges), W_O with N(0, 1/(H d_v)) (an output of unit scale at initialisation)."""
    p = d + 1
    return {"WQ": rng.standard_normal((*lead, H, p, d_k)) / math.sqrt(p),
            "WK": rng.standard_normal((*lead, H, p, d_k)) / math.sqrt(p),
            "WV": rng.standard_normal((*lead, H, p, d_v)) / math.sqrt(p),
            "WO": rng.standard_normal((*lead, H, d_v, p)) / math.sqrt(H * d_v)}


def _flat(P: dict[str, np.ndarray], Z: np.ndarray) -> tuple[tuple[int, ...], dict[str, np.ndarray], np.ndarray]:
    """Leading axes of the runs folded into one (B): params (B, H, ·, ·), Z (B, C, T, p)."""
    lead = P["WQ"].shape[:-3]
    B = int(np.prod(lead)) if lead else 1
    if Z.shape[:len(lead)] != lead:
        raise fail("Z", f"shape {Z.shape}", f"contexts (..., C, T, p) with leading axes {lead}")
    return lead, {k: v.reshape(B, *v.shape[-3:]) for k, v in P.items()}, Z.reshape(B, *Z.shape[len(lead):])


def _forward(P: dict[str, np.ndarray], Z: np.ndarray) -> dict[str, np.ndarray]:
    """Layout: per-head tensors with the tokens last, (B, C, H, ·, T), so that the softmax and
    the sums over tokens run along contiguous memory; the small axes d_k, d_v are looped."""
    B, H, p, k = P["WQ"].shape
    v = P["WV"].shape[-1]
    _, C, T, _ = Z.shape
    zq = Z[:, :, -1, :]                                                  # (B, C, p)
    q = (zq @ np.swapaxes(P["WQ"], 1, 2).reshape(B, p, H * k)).reshape(B, C, H, k)
    W = np.concatenate([P["WK"], P["WV"]], axis=-1)                      # (B, H, p, k + v)
    KV = (Z.reshape(B, C * T, p) @ np.swapaxes(W, 1, 2).reshape(B, p, H * (k + v))).reshape(B, C, T, H, k + v)
    KV = np.ascontiguousarray(KV.transpose(0, 1, 3, 4, 2))               # (B, C, H, k + v, T)
    K, V = KV[:, :, :, :k], KV[:, :, :, k:]
    w = q[..., 0, None] * K[:, :, :, 0]                                  # scores s_t = <q, k_t>/sqrt(d_k) ...
    for j in range(1, k):
        w += q[..., j, None] * K[:, :, :, j]
    w *= 1.0 / math.sqrt(k)
    w -= w.max(axis=-1, keepdims=True)                                   # ... then softmax over the tokens
    w = softmax_exp(w)
    w /= w.sum(axis=-1, keepdims=True)                                   # (B, C, H, T)
    o = np.stack([np.sum(w * V[:, :, :, j], axis=-1) for j in range(v)], axis=-1)   # Σ_t w_t v_t (B, C, H, v)
    out = zq + o.reshape(B, C, H * v) @ P["WO"].reshape(B, H * v, p)
    return {"yhat": out[..., -1], "out": out, "q": q, "K": K, "V": V, "w": w, "o": o}


def _check(params: Any, Z: Any, y: Any = None) -> tuple[dict[str, np.ndarray], np.ndarray, np.ndarray | None]:
    P = _check_params(params)
    Z = as_array("Z", Z, min_ndim=3, keep_float32=False)
    lead = P["WQ"].shape[:-3]
    p = P["WQ"].shape[-2]
    if Z.ndim != len(lead) + 3 or Z.shape[:len(lead)] != lead or Z.shape[-1] != p:
        raise fail("Z", f"shape {Z.shape}", f"contexts {(*lead, 'C', 'T', p)} (the params' leading axes, width p)")
    if y is not None:
        y = as_array("y", y, min_ndim=1, keep_float32=False)
        if y.shape != Z.shape[:-2]:
            raise fail("y", f"shape {y.shape}", f"{Z.shape[:-2]} (one target per context)")
    return P, Z, y


def forward(params: dict[str, np.ndarray], Z: np.ndarray) -> dict[str, np.ndarray]:
    """The layer at the query (last) token of each context ``Z`` (..., C, T, p), params
    (..., H, ·, ·). Returns ``yhat`` (..., C), ``out`` (..., C, p) and, with the leading axes
    folded into one (B), the intermediates ``q`` (B, C, H, d_k), ``K`` (B, C, H, d_k, T), ``V``
    (B, C, H, d_v, T), ``w`` (B, C, H, T), ``o`` (B, C, H, d_v)."""
    P, Z, _ = _check(params, Z)
    lead, P, Zf = _flat(P, Z)
    fw = _forward(P, Zf)
    fw["yhat"] = fw["yhat"].reshape(*lead, -1)
    fw["out"] = fw["out"].reshape(*lead, *fw["out"].shape[1:])
    return fw


def loss_and_grad(params: dict[str, np.ndarray], Z: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    """``L = mean_c (ŷ_c − y_c)²`` per run (...,) and its gradient (module docstring); validated."""
    P, Z, y = _check(params, Z, y)
    return _loss_and_grad(P, Z, y)


def _loss_and_grad(params: dict[str, np.ndarray], Z: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    lead, P, Zf = _flat(params, Z)
    B, H, p, k = P["WQ"].shape
    v = P["WV"].shape[-1]
    C = Zf.shape[1]
    fw = _forward(P, Zf)
    yf = y.reshape(B, C)
    r = fw["yhat"] - yf
    loss = np.mean(r * r, axis=-1)
    g = 2.0 * r / C                                                      # ∂L/∂ŷ_c
    u = P["WO"][..., -1]                                                 # (B, H, v)
    q, K, V, w, o = fw["q"], fw["K"], fw["V"], fw["w"], fw["o"]
    gWO = np.zeros_like(P["WO"])
    gWO[..., -1] = (g[:, None, :] @ o.reshape(B, C, H * v)).reshape(B, H, v)
    do = g[:, :, None, None] * u[:, None]                                # δo (B, C, H, v)
    zbar = w @ Zf                                                        # Σ_t w_t z_t (B, C, H, p)
    gWV = np.swapaxes(zbar, 1, 2).swapaxes(2, 3) @ np.swapaxes(do, 1, 2)  # Σ_c z̄ᵀ δo (B, H, p, v)
    vdo = do[..., 0, None] * V[:, :, :, 0]                               # <v_t, δo> (B, C, H, T)
    for j in range(1, v):
        vdo += do[..., j, None] * V[:, :, :, j]
    ds = w * (vdo - np.sum(o * do, axis=-1)[..., None])                  # δs (B, C, H, T)
    c = 1.0 / math.sqrt(k)
    dq = np.stack([np.sum(ds * K[:, :, :, j], axis=-1) for j in range(k)], axis=-1) * c   # Σ_t δs_t k_t/sqrt(d_k)
    gWQ = np.swapaxes((np.swapaxes(Zf[:, :, -1, :], 1, 2) @ dq.reshape(B, C, H * k)).reshape(B, p, H, k), 1, 2)
    zds = ds @ Zf                                                        # Σ_t δs_t z_t (B, C, H, p)
    gWK = (np.swapaxes(zds, 1, 2).swapaxes(2, 3) @ np.swapaxes(q, 1, 2)) * c   # (B, H, p, k)
    grads = {"WQ": gWQ, "WK": gWK, "WV": gWV, "WO": gWO}
    return loss.reshape(lead), {kk: gg.reshape(*lead, *gg.shape[1:]) for kk, gg in grads.items()}


ICL_TARGETS = (("block", "normal", "positive"), ("sin-block", "normal", "positive"), ("block", "torus", "positive"),
               ("single-index", "normal", "scope"), ("additive", "normal", "scope"), ("bump", "normal", "scope"))


@dataclass(frozen=True)
class ICLSetting:
    """One in-context regression experiment of ``seeds`` runs: ``contexts`` fresh contexts of n
    points per step; evaluation on ``eval_contexts`` contexts drawn once per run. Run r draws its
    initial weights from ``SeedSequence([seed, r, 0])``, its training inputs from ``[seed, r, 1]``,
    their noise from ``[seed, r, 2]`` and its evaluation contexts from ``[seed, r, 3]``."""

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
    schedule: str = "cosine"

    def __post_init__(self) -> None:
        one_of("dgp", self.dgp, DGP_NAMES)
        one_of("design", self.design, DESIGN_NAMES)
        one_of("schedule", self.schedule, ("constant", "cosine"))
        positive_int("d", self.d, minimum=2)
        positive_int("H", self.H, minimum=2)
        positive_int("d_k", self.d_k)
        positive_int("d_v", self.d_v)
        if self.d_k > self.d:
            raise fail("d_k", repr(self.d_k), f"d_k <= d = {self.d} (the key HDI is read on the x-rows)")
        positive_int("n", self.n, minimum=1)
        positive_int("contexts", self.contexts, minimum=1)
        positive_int("steps", self.steps)
        positive_number("lr", self.lr)
        positive_int("seeds", self.seeds)
        valid_seed("seed", self.seed)
        positive_number("sigma", self.sigma)
        positive_int("eval_contexts", self.eval_contexts, minimum=2)
        positive_int("record_every", self.record_every)
        make_dgp(self.dgp, d=self.d, sigma=self.sigma, design=self.design)
        if self.work > MAX_ICL_WORK:
            raise fail("setting", f"seeds·steps·contexts·(n + 1)·H = {self.work:.1e} token projections",
                       f"at most {MAX_ICL_WORK:.0e}")

    @property
    def work(self) -> float:
        return float(self.seeds) * (self.steps + 1) * (self.contexts + self.eval_contexts / max(self.record_every, 1)) \
            * (self.n + 1) * self.H

    def _shape(self) -> tuple:
        return (self.d, self.H, self.d_k, self.d_v, self.n, self.contexts, self.steps, self.lr, self.eval_contexts,
                self.record_every, self.schedule)


@dataclass
class ICLTrace:
    """Recorded at ``steps`` (0 = initialisation), per run: the four diagnostics (runs, T) of the
    heads' x-rows, ``test_mse`` (runs, T, against f), ``train_mse``, ``alpha`` (runs, T, H: the
    y-path weights W_V^h[p]·W_O^h[:, p]) and the final parameters."""

    setting: ICLSetting
    steps: np.ndarray
    key_hdi: np.ndarray
    query_hdi: np.ndarray
    form_diversity: np.ndarray
    form_subspace_hdi: np.ndarray
    test_mse: np.ndarray
    train_mse: np.ndarray
    alpha: np.ndarray
    params: dict[str, np.ndarray]


def contexts(dgp: Any, xs: np.random.Generator, noise: np.random.Generator, shape: tuple[int, ...],
             n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Contexts of ``shape`` (…): tokens Z (…, n + 1, d + 1) with the query token (x, 0) last, the
    noisy value y at the query (training target) and f at the query (evaluation target). Inputs
    from ``xs`` (the context's n points, then the query, one draw), noise from ``noise``."""
    x = dgp.sample_x(xs, (*shape, n + 1))
    eps = noise.standard_normal((*shape, n + 1))
    fx = dgp.f(x)
    Z = np.concatenate([x, (fx + dgp.sigma * eps)[..., None]], axis=-1)
    Z[..., -1, -1] = 0.0
    return Z, fx[..., -1] + dgp.sigma * eps[..., -1], fx[..., -1]


def _diag(P: dict[str, np.ndarray], d: int) -> dict[str, np.ndarray]:
    return diagnostics(P["WQ"][..., :d, :], P["WK"][..., :d, :])


def _alpha(P: dict[str, np.ndarray]) -> np.ndarray:
    return np.einsum("...hv,...hv->...h", P["WV"][..., -1, :], P["WO"][..., :, -1])


def train_icl(settings: list[ICLSetting]) -> list[ICLTrace]:
    """Train settings of the same sizes together (one numpy call per operation for every run;
    a run's numbers do not depend on the batch)."""
    for i, s in enumerate(settings):
        if not isinstance(s, ICLSetting):
            raise fail(f"settings[{i}]", type(s).__name__, "an ICLSetting")
    if len({s._shape() for s in settings}) != 1:
        raise fail("settings", f"{len(settings)} settings of different sizes", "settings of the same sizes")
    s0 = settings[0]
    dgps, gens, init, ev = [], [], [], {"Z": [], "f": []}
    for s in settings:
        dgp = make_dgp(s.dgp, d=s.d, sigma=s.sigma, design=s.design)
        for r in range(s.seeds):
            rs = [np.random.default_rng(np.random.SeedSequence([s.seed, r, k])) for k in range(4)]
            init.append(init_params(rs[0], (), s.H, s.d, s.d_k, s.d_v))
            Z, _, f = contexts(dgp, rs[3], rs[3], (s.eval_contexts,), s.n)
            ev["Z"].append(Z)
            ev["f"].append(f)
            dgps.append(dgp)
            gens.append(rs[1:3])
    P = {k: np.stack([p[k] for p in init]) for k in PARAMS}
    EZ, Ef = np.stack(ev["Z"]), np.stack(ev["f"])
    state: dict[str, Any] = {}
    rec: dict[str, list] = {k: [] for k in ("steps", "key_hdi", "query_hdi", "form_diversity", "form_subspace_hdi",
                                            "test_mse", "train_mse", "alpha")}
    chunk: tuple[np.ndarray, np.ndarray] | None = None
    lo = 0
    for t in range(s0.steps + 1):
        if chunk is None or t >= lo + chunk[0].shape[1]:
            size = min(CHUNK_STEPS, s0.steps + 1 - t)
            parts = [contexts(dgp, g[0], g[1], (size, s0.contexts), s0.n) for dgp, g in zip(dgps, gens)]
            chunk = (np.stack([p[0] for p in parts]), np.stack([p[1] for p in parts]))
            lo = t
        Z, y = chunk[0][:, t - lo], chunk[1][:, t - lo]
        loss, grads = _loss_and_grad(P, Z, y)
        if t % s0.record_every == 0 or t == s0.steps:
            dg = _diag(P, s0.d)
            rec["steps"].append(t)
            for k2, v in dg.items():
                rec[k2].append(v)
            fw = _forward(*_flat(P, EZ)[1:])
            rec["test_mse"].append(np.mean((fw["yhat"].reshape(Ef.shape) - Ef) ** 2, axis=-1))
            rec["train_mse"].append(loss)
            rec["alpha"].append(_alpha(P))
        if t < s0.steps:
            adam_step(P, grads, state, learning_rate(s0.lr, s0.schedule, t, s0.steps))
    steps = np.asarray(rec.pop("steps"))
    stack = {k: np.moveaxis(np.asarray(v), 0, 1) for k, v in rec.items()}
    if not all(np.all(np.isfinite(stack[k])) for k in ("test_mse", "train_mse")):
        raise fail("lr", f"{s0.lr} (non-finite MSE in training)", "a learning rate that keeps training finite")
    out, lo = [], 0
    for s in settings:
        sl = slice(lo, lo + s.seeds)
        lo += s.seeds
        out.append(ICLTrace(setting=s, steps=steps, params={k: v[sl].copy() for k, v in P.items()},
                            **{k: v[sl].copy() for k, v in stack.items()}))
    return out


#: Sizes of the C9 (iii) layer: d = 8, H = 4 heads of d_k = d_v = 2 (H·d_k = d, as for the NW
#: heads); n context points, C contexts per step, Adam steps, seeds, learning rate, held-out
#: contexts, and the targets (indices into ICL_TARGETS). The layer needs ~1500 steps of 32
#: contexts before it learns a block target (R² 0.2-0.4, measured); the quick and default sizes
#: (three targets: the two block controls and single-index) show the start of training only.
ICL_SIZES = {"quick": {"n": 16, "contexts": 8, "steps": 100, "seeds": 8, "lr": 0.03, "eval_contexts": 64,
                       "targets": (0, 2, 3)},
             "default": {"n": 32, "contexts": 16, "steps": 200, "seeds": 8, "lr": 0.03, "eval_contexts": 128,
                         "targets": (0, 2, 3)},
             "large": {"n": 32, "contexts": 32, "steps": 2000, "seeds": 16, "lr": 0.02, "eval_contexts": 512,
                       "targets": (0, 1, 2, 3, 4, 5)}}


def icl_settings(size: str = "default", seed: int = 0) -> list[ICLSetting]:
    """One setting per target of :data:`ICL_TARGETS` (the C9 (i) targets), all of the same sizes."""
    z = ICL_SIZES[one_of("size", size, tuple(ICL_SIZES))]
    seed = valid_seed("seed", seed)
    return [ICLSetting(dgp=g, design=dz, d=8, H=4, d_k=2, d_v=2, n=z["n"], contexts=z["contexts"], steps=z["steps"],
                       lr=z["lr"], seeds=z["seeds"], seed=int(np.random.SeedSequence([seed, 93, i]).generate_state(1)[0]),
                       eval_contexts=z["eval_contexts"], record_every=max(1, z["steps"] // 10))
            for i, (g, dz, _) in enumerate(ICL_TARGETS) if i in z["targets"]]


def icl_baselines(seed: int) -> dict[str, dict[str, float]]:
    """The Haar baselines of the layer's sizes (:func:`verify.experiments.forms.haar_baselines`) for
    the run ``seed`` of :func:`c9_icl`."""
    return haar_baselines(4, 2, 8, seed=int(np.random.SeedSequence([int(seed), 93, 99]).generate_state(1)[0]))


def icl_summary(tr: ICLTrace, base: dict[str, dict[str, float]]) -> dict[str, Any]:
    """One setting of :func:`c9_icl`: the change of each diagnostic over training (paired over
    seeds, against the Haar law and the bound), held-out MSE, R², convergence, head weights, the
    trajectory (mean over seeds at every record) and each run's initial and end values."""
    from verify.experiments.regimes import variance_of_f
    from verify.numeric.stats import r_squared

    kinds = {(g, d): k for g, d, k in ICL_TARGETS}
    s = tr.setting
    vf = variance_of_f(s.dgp, s.d, s.design)
    row: dict[str, Any] = {"target": s.dgp, "design": s.design, "kind": kinds[(s.dgp, s.design)], "seeds": s.seeds,
                           "var_f": vf, "steps_recorded": tr.steps.tolist()}
    traj, runs = {}, {}
    for k in ("key_hdi", "query_hdi", "form_diversity", "form_subspace_hdi"):
        v = getattr(tr, k)
        e = effect(v[:, 0], v[:, -1])
        b = base[k]
        e.update({"haar_mean": b["haar_mean"], "haar_sd": b["haar_sd"], "bound": b["bound"],
                  "end_z_vs_haar": (e["after"] - b["haar_mean"]) / b["haar_sd"]})
        row[k] = e
        traj[k] = v.mean(axis=0).tolist()
        runs[k] = [v[:, 0].tolist(), v[:, -1].tolist()]
    m0, m1 = tr.test_mse[:, 0], tr.test_mse[:, -1]
    row["test_mse"] = effect(m0, m1)
    row["r2_init"], row["r2_end"] = r_squared(float(m0.mean()), vf), r_squared(float(m1.mean()), vf)
    row["convergence"] = convergence(tr.test_mse, tr.steps)
    a = np.sort(tr.alpha[:, -1], axis=-1)
    row["alpha"] = {"sorted_mean_end": a.mean(axis=0).tolist(), "sorted_mean_init":
                    np.sort(tr.alpha[:, 0], axis=-1).mean(axis=0).tolist()}
    traj["test_mse"] = tr.test_mse.mean(axis=0).tolist()
    row["trajectory"] = traj
    row["runs"] = runs          # per diagnostic: [initial, end] value of each run
    return row


def c9_icl(size: str = "default", seed: int = 0) -> dict[str, Any]:
    """C9 reading (iii): the attention layer trained from scratch on each target, per setting the
    change of the four diagnostics over training (paired over seeds, against the Haar law and the
    bound), the held-out MSE and R² (against f), convergence and the y-path head weights; the
    trajectory of each diagnostic (mean over seeds at every record).

    Returns ``{"design", "haar", "settings": [{"target", "design", "kind", "seeds", "var_f",
    "key_hdi", "query_hdi", "form_diversity", "form_subspace_hdi" (effect dicts), "test_mse",
    "r2_init", "r2_end", "convergence", "alpha", "trajectory"}], "size", "seconds"}``."""
    from verify.experiments.regimes import design_record, plain

    size, seed = one_of("size", size, tuple(ICL_SIZES)), valid_seed("seed", seed)
    t0 = time.process_time()
    grid = icl_settings(size, seed)
    traces = train_icl(grid)
    base = icl_baselines(seed)
    rows = [icl_summary(tr, base) for tr in traces]
    z = ICL_SIZES[size]
    design = design_record(
        head_weights=(r"free: $W_V^h$ and $W_O^h$ are trained, so the head weight of the value path, "
                      r"$\alpha_h = W_V^h[y] \cdot W_O^h[:, y]$, is learned",
                      "a real layer's head weights are its value and output blocks (C2)"),
        kernel_scale=(r"$1/\sqrt{d_k}$ with learned $W_Q^h$, $W_K^h$", "the standard layer"),
        design_density=(r"$N(0, I_8)$ and the torus (block target)", "the designs of reading i, for comparison"),
        target=("the targets of reading i: block, sin-block, block (torus); single-index, additive, bump "
                "(the default size trains the two block controls and single-index)",
                "positive controls and scope targets as in reading i"),
        noise=(r"$\sigma = 0.1$ on the context values and the training target; held-out MSE against $f$",
               "as in reading i"),
        n=(z["n"], f"context points per sequence ({z['contexts']} fresh contexts per step)"),
        steps=(z["steps"], f"Adam, learning rate {num(z['lr'], 'g')}, cosine schedule to 0"),
        convergence=("the plateau criterion of reading i on the held-out MSE", "reported per setting"),
        seeds=(z["seeds"], "independent initialisations and data streams per setting"),
        diagnostic=(r"key HDI, query HDI, score-form diversity and form-subspace HDI of the input rows of $W_Q^h$, "
                    r"$W_K^h$, tracked over training", "the same diagnostics as reading i, on a real layer"))
    return plain({"design": design, "haar": base, "settings": rows, "size": size, "seconds": time.process_time() - t0})
