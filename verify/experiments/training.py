"""A multi-head NW-ensemble regressor trained by gradient descent (C9; C5 and C6 train heads with it).

The model (SPEC, notation): head h has query and key projections ``W_Q^h, W_K^h`` (d × d_k)
and an output weight ``α_h``; at a query point x with keys ``x_i`` and values ``y_i``

    s_i^h = <W_Q^hᵀ x, W_K^hᵀ x_i> / sqrt(d_k)          (scores)
    w_i^h = exp(s_i^h) / Σ_j exp(s_j^h)                  (softmax = NW weights, kernel exp)
    f̂_h(x) = Σ_i w_i^h y_i,    f̂(x) = Σ_h α_h f̂_h(x)    (heads, ensemble)

Loss: split mode (``queries`` > 0, what C9 trains): the MSE at fresh query points against n fresh
keys, a stochastic gradient of the population risk at n keys; without queries, leave-one-out on the
step's n points (each point's own key left out of its softmax). Held-out MSE: fresh queries and keys,
against the noiseless ``f``. The gradient is written by hand (proofs/c9_training.py derives it; the
tests compare it with torch.autograd): with ``r_j = f̂(x_j) − y_j`` and ``g_j = 2 r_j / m``

    ∂L/∂α_h = Σ_j g_j f̂_h(x_j)
    ∂L/∂s_ji^h = G_ji^h = g_j α_h w_ji^h (y_i − f̂_h(x_j))       (∂f̂_h/∂s_i = w_i (y_i − f̂_h))
    ∂L/∂W_Q^h = X_qᵀ G^h K^h / sqrt(d_k),   ∂L/∂W_K^h = X_kᵀ G^hᵀ Q^h / sqrt(d_k)

Adam at a held learning rate or on a cosine schedule to 0. Arrays carry optional leading batch axes
(independent runs). Split-mode runs on fresh data train in compiled code where numba runs
(:mod:`verify.experiments._train_kernel`: the same numbers to rounding, several times faster).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from verify._validate import fail, one_of, positive_int, positive_number
from verify.numeric.baseline import hdi_from_overlaps, overlaps
from verify.numeric.dgp import DESIGN_NAMES, DGP_NAMES, haar_frame, make_dgp
from verify.numeric.nw import get_backend, softmax_exp
from verify.numeric.stats import paired, z_score

__all__ = ["forward", "loss_and_grad", "adam_step", "learning_rate", "TrainSetting", "Trace", "train", "train_many",
           "effect", "INITS", "DATA_MODES", "SCHEDULES", "ADAM", "MAX_WORK"]

INITS = ("gaussian", "haar")
DATA_MODES = ("fresh", "fixed")
#: Learning-rate schedules: held (constant), or cosine from lr at step 0 to 0 at the last step.
SCHEDULES = ("constant", "cosine")
#: Adam's constants (Kingma & Ba 2015, the defaults).
ADAM = {"beta1": 0.9, "beta2": 0.999, "eps": 1e-8}
#: The most score entries one setting may compute (:attr:`TrainSetting.work`; ~5-40 ns each on
#: one core): about a minute. A setting beyond it (from a saved file, say) is refused, not run.
MAX_WORK = 2e9
#: Training steps whose samples the numpy path draws at once (memory; the numbers do not depend on it).
CHUNK_STEPS = 50


def forward(WQ: np.ndarray, WK: np.ndarray, alpha: np.ndarray, Xq: np.ndarray, Xk: np.ndarray, yk: np.ndarray,
            *, exclude_self: bool = False) -> dict[str, np.ndarray]:
    """The ensemble at the queries ``Xq`` (..., m, d) with keys ``Xk`` (..., n, d), values ``yk``
    (..., n); heads ``WQ, WK`` (..., H, d, d_k), weights ``alpha`` (..., H). ``exclude_self``
    (needs Xq is Xk) removes key j from query j's softmax. Returns ``f`` (..., m), ``heads``
    (..., H, m), ``w`` (..., H, m, n) and the projected ``Q``, ``K``."""
    Q = Xq[..., None, :, :] @ WQ                      # (..., H, m, d_k)
    K = Xk[..., None, :, :] @ WK                      # (..., H, n, d_k)
    w = Q @ np.swapaxes(K, -1, -2)                    # scores s, then their softmax: (..., H, m, n)
    w *= 1.0 / math.sqrt(WQ.shape[-1])
    if exclude_self:
        m, n = w.shape[-2:]
        if m != n:
            raise fail("exclude_self", f"{m} queries and {n} keys", "the same points as queries and keys")
        w[..., np.arange(n), np.arange(n)] = -np.inf
    w -= w.max(axis=-1, keepdims=True)
    w = softmax_exp(w)
    w /= w.sum(axis=-1, keepdims=True)
    heads = (w @ yk[..., None, :, None])[..., 0]       # (..., H, m)
    return {"f": np.einsum("...h,...hm->...m", alpha, heads), "heads": heads, "w": w, "Q": Q, "K": K}


def loss_and_grad(WQ: np.ndarray, WK: np.ndarray, alpha: np.ndarray, X: np.ndarray, y: np.ndarray,
                  *, exclude_self: bool = True, Xq: np.ndarray | None = None,
                  yq: np.ndarray | None = None) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    """MSE ``L = mean_j (f̂(x_j) − y_j)²`` of each run (...,) and its gradient with respect to
    ``WQ``, ``WK``, ``alpha`` (module docstring). Without ``Xq``: the queries are the keys ``X``
    with values ``y`` (leave-one-out with ``exclude_self``); with ``Xq`` (..., m, d) and ``yq``
    (..., m): queries at fresh points against the keys ``X``, ``y`` (no key left out)."""
    if Xq is None:
        Xq, yq = X, y
    elif yq is None:
        raise fail("yq", "None", "the values at the queries Xq")
    else:
        exclude_self = False
    fw = forward(WQ, WK, alpha, Xq, X, y, exclude_self=exclude_self)
    r = fw["f"] - yq
    loss = np.mean(r * r, axis=-1)
    g = 2.0 * r / yq.shape[-1]                                        # ∂L/∂f̂(x_j)
    g_alpha = np.einsum("...j,...hj->...h", g, fw["heads"])
    g_heads = g[..., None, :] * alpha[..., :, None]                   # ∂L/∂f̂_h(x_j), (..., H, m)
    # G_ji = γ_j w_ji (y_i − f̂_j) (γ = g_heads, i over keys) is never formed: with W = (w_ji),
    # G K = γ ∘ ((W ∘ y) K − f̂ ∘ (W K))  and  (Gᵀ Q)ᵀ = (γ ∘ Q)ᵀ W ∘ y − (γ f̂ ∘ Q)ᵀ W
    # (the second transposed, so that its elementwise work runs along the n keys, not d_k).
    w, heads, Q, K = fw["w"], fw["heads"], fw["Q"], fw["K"]
    k = Q.shape[-1]
    GK = g_heads[..., None] * ((w * y[..., None, None, :]) @ K - heads[..., None] * (w @ K))
    gQ = g_heads[..., None] * Q
    QtW = np.swapaxes(np.concatenate([gQ, heads[..., None] * gQ], axis=-1), -1, -2) @ w    # (..., H, 2 d_k, n)
    GtQt = QtW[..., :k, :] * y[..., None, None, :] - QtW[..., k:, :]                      # (Gᵀ Q)ᵀ (..., H, d_k, n)
    c = 1.0 / math.sqrt(k)
    g_WQ = c * (np.swapaxes(Xq, -1, -2)[..., None, :, :] @ GK)       # Xqᵀ G K / sqrt(d_k)
    g_WK = c * np.swapaxes(GtQt @ X[..., None, :, :], -1, -2)       # Xkᵀ Gᵀ Q / sqrt(d_k)
    return loss, {"WQ": g_WQ, "WK": g_WK, "alpha": g_alpha}


def adam_step(params: dict[str, np.ndarray], grads: dict[str, np.ndarray], state: dict[str, Any],
              lr: float) -> None:
    """One Adam update of ``params`` in place; ``state`` holds the moments and the step count."""
    b1, b2, eps = ADAM["beta1"], ADAM["beta2"], ADAM["eps"]
    t = state["t"] = state.get("t", 0) + 1
    for key, g in grads.items():
        m = state.setdefault(("m", key), np.zeros_like(g))
        v = state.setdefault(("v", key), np.zeros_like(g))
        m *= b1
        m += (1 - b1) * g
        v *= b2
        v += (1 - b2) * g * g
        params[key] -= lr * (m / (1 - b1**t)) / (np.sqrt(v / (1 - b2**t)) + eps)


def learning_rate(lr: float, schedule: str, t: int, steps: int) -> float:
    """The learning rate of update t (0-based) of ``steps``: ``lr`` or ``lr (1 + cos(π t/steps))/2``."""
    if schedule == "cosine":
        return lr * 0.5 * (1.0 + math.cos(math.pi * t / steps))
    return lr


@dataclass(frozen=True)
class TrainSetting:
    """One training experiment of ``seeds`` runs: ``data`` "fresh" (new points every step) or "fixed"
    (one sample reused); ``queries`` per step (split mode), or 0 for leave-one-out. Evaluation (m fresh
    queries against n fresh keys, against f) every ``record_every`` steps and at the end. Run r draws its
    initial heads from ``SeedSequence([seed, r, 0])``, leave-one-out points from ``[seed, r, 1]``,
    evaluation data from ``[seed, r, 2]``, split-mode keys, their noise, queries and their noise from
    ``[seed, r, 3]`` to ``[seed, r, 6]``."""

    dgp: str
    d: int
    H: int
    d_k: int
    init: str
    n: int
    m: int
    sigma: float
    steps: int
    lr: float
    seeds: int
    seed: int
    record_every: int = 10
    data: str = "fresh"
    learn_alpha: bool = False
    queries: int = 0
    design: str = "normal"
    schedule: str = "constant"

    def __post_init__(self) -> None:
        for name, options in (("dgp", DGP_NAMES), ("init", INITS), ("schedule", SCHEDULES), ("design", DESIGN_NAMES),
                              ("data", DATA_MODES)):
            one_of(name, getattr(self, name), options)
        if not isinstance(self.learn_alpha, bool):
            raise fail("learn_alpha", repr(self.learn_alpha), "true or false")
        for name, lo in (("d", 2), ("H", 2), ("d_k", 1), ("n", 3), ("m", 2), ("steps", 1), ("seeds", 1),
                         ("record_every", 1), ("queries", 0), ("seed", 0)):
            positive_int(name, getattr(self, name), minimum=lo)
        if self.d_k > self.d:
            raise fail("d_k", repr(self.d_k), f"d_k <= d = {self.d}")
        positive_number("sigma", self.sigma)
        positive_number("lr", self.lr)
        if self.work > MAX_WORK:
            raise fail("setting", f"seeds·H·(n² + n m)·steps = {self.work:.1e} score entries",
                       f"at most {MAX_WORK:.0e}")

    @property
    def work(self) -> float:
        """Score entries of the setting: H·n·(queries or n) per run and step, H·n·m per record."""
        records = self.steps // self.record_every + 2
        return float(self.seeds) * self.H * (self.n * (self.queries or self.n) * (self.steps + 1)
                                             + self.n * self.m * records)

    @property
    def records(self) -> list[int]:
        """The steps at which the trace is recorded: every ``record_every`` and the last."""
        return sorted({*range(0, self.steps, self.record_every), self.steps})

    def _shape(self) -> tuple:
        return (self.d, self.H, self.d_k, self.n, self.m, self.steps, self.lr, self.record_every, self.data,
                self.queries, self.schedule)


@dataclass
class Trace:
    """What was recorded along training at ``steps`` (0 = initialisation), per run: ``hdi_keys``,
    ``hdi_queries``, ``train_mse`` (the step's training loss, against y) and ``test_mse``
    (evaluation set, against f), each (runs, T); the heads ``WQ_path``, ``WK_path`` (runs, T, H, d,
    d_k) and weights ``alpha_path`` (runs, T, H); the final ``WQ``, ``WK``, ``alpha``."""

    setting: TrainSetting
    steps: np.ndarray
    hdi_keys: np.ndarray
    hdi_queries: np.ndarray
    train_mse: np.ndarray
    test_mse: np.ndarray
    WQ_path: np.ndarray
    WK_path: np.ndarray
    alpha_path: np.ndarray

    @property
    def WQ(self) -> np.ndarray:
        return self.WQ_path[:, -1]

    @property
    def WK(self) -> np.ndarray:
        return self.WK_path[:, -1]

    @property
    def alpha(self) -> np.ndarray:
        return self.alpha_path[:, -1]


def _init_heads(s: TrainSetting, rng: np.random.Generator) -> np.ndarray:
    """Initial W (H, d, d_k): Gaussian entries N(0, 1/d) (unit expected column norm) or Haar
    frames (unit columns); both have Haar-distributed ranges."""
    if s.init == "gaussian":
        return rng.standard_normal((s.H, s.d, s.d_k)) / math.sqrt(s.d)
    return np.stack([haar_frame(rng, s.d, s.d_k) for _ in range(s.H)])


def _run_data(group: list[TrainSetting]) -> dict[str, np.ndarray]:
    """Per run (first axis): initial W_Q, W_K; leave-one-out training points for every step (fresh)
    or once (fixed), none in split mode; evaluation keys, values, queries and f at the queries."""
    out: dict[str, list] = {k: [] for k in ("WQ", "WK", "X", "y", "Xe", "ye", "Xq", "fq")}
    for s in group:
        dgp = make_dgp(s.dgp, d=s.d, sigma=s.sigma, design=s.design)
        batches = 0 if s.queries else (s.steps + 1 if s.data == "fresh" else 1)
        for r in range(s.seeds):
            init, data, evals = (np.random.default_rng(np.random.SeedSequence([s.seed, r, k])) for k in range(3))
            wq, wk = _init_heads(s, init), _init_heads(s, init)
            x, y = _noisy(dgp, data, data, (batches, s.n))
            xe, ye = _noisy(dgp, evals, evals, (s.n,))
            xq = dgp.sample_x(evals, (s.m,))
            for key, v in zip(out, (wq, wk, x, y, xe, ye, xq, dgp.f(xq))):
                out[key].append(v)
    return {k: np.stack(v) for k, v in out.items()}


def _noisy(dgp: Any, gx: np.random.Generator, gy: np.random.Generator, shape: tuple) -> tuple[np.ndarray, np.ndarray]:
    """Design points of ``shape`` drawn from ``gx``, and their values f + σ·noise, the noise from ``gy``."""
    x = dgp.sample_x(gx, shape)
    return x, dgp.f(x) + dgp.sigma * gy.standard_normal(shape)


def _streams(group: list[TrainSetting]) -> list[tuple[np.random.Generator, ...]]:
    """Split mode, per run: the generators of its keys, their noise, its queries and their noise."""
    return [tuple(np.random.default_rng(np.random.SeedSequence([s.seed, r, k])) for k in (3, 4, 5, 6))
            for s in group for r in range(s.seeds)]


class _Stream:
    """Split-mode training samples of the numpy path, drawn per chunk of steps from :func:`_streams`
    (each generator read in order, so the numbers do not depend on :data:`CHUNK_STEPS`)."""

    def __init__(self, group: list[TrainSetting]) -> None:
        self.s0 = group[0]
        self.dgps = [make_dgp(s.dgp, d=s.d, sigma=s.sigma, design=s.design) for s in group for _ in range(s.seeds)]
        self.gens = _streams(group)
        self.lo, self.hi, self.data = 0, 0, None

    def batch(self, t: int) -> dict[str, np.ndarray]:
        s0 = self.s0
        if self.data is None or not self.lo <= t < self.hi:
            size = min(CHUNK_STEPS, s0.steps + 1 - t)
            parts: dict[str, list] = {"X": [], "y": [], "Xq": [], "yq": []}
            for dgp, (kx, ky, qx, qy) in zip(self.dgps, self.gens):
                drawn = (*_noisy(dgp, kx, ky, (size, s0.n)), *_noisy(dgp, qx, qy, (size, s0.queries)))
                for key, v in zip(parts, drawn):
                    parts[key].append(v)
            self.data = {k: np.stack(v) for k, v in parts.items()}
            self.lo, self.hi = t, t + size
        return {k: v[:, t - self.lo] for k, v in self.data.items()}


def train(setting: TrainSetting) -> Trace:
    """Train the setting's runs (Adam) and record the trace (:attr:`TrainSetting.records`)."""
    return train_many([setting])[0]


def train_many(settings: list[TrainSetting]) -> list[Trace]:
    """Train several settings, those of the same sizes in one batch (a run's numbers do not
    depend on the batch it is trained in: every operation acts on each run's slice alone)."""
    groups: dict[tuple, list[int]] = {}
    for i, s in enumerate(settings):
        if not isinstance(s, TrainSetting):
            raise fail(f"settings[{i}]", type(s).__name__, "a TrainSetting")
        groups.setdefault(s._shape(), []).append(i)
    traces: list[Trace | None] = [None] * len(settings)
    for idx in groups.values():
        for i, tr in zip(idx, _train_group([settings[i] for i in idx])):
            traces[i] = tr
    return traces  # type: ignore[return-value]


def _train_group(group: list[TrainSetting]) -> list[Trace]:
    s0 = group[0]
    D = _run_data(group)
    R, H, d, k = D["WQ"].shape
    learn = np.array([s.learn_alpha for s in group for _ in range(s.seeds)])
    rec: dict[str, list] = {k: [] for k in ("hdi_keys", "hdi_queries", "train_mse", "test_mse", "WQ_path", "WK_path",
                                            "alpha_path")}

    def record(WQ: np.ndarray, WK: np.ndarray, alpha: np.ndarray, loss: np.ndarray) -> None:
        held = forward(WQ, WK, alpha, D["Xq"], D["Xe"], D["ye"])
        for key, v in (("hdi_keys", hdi_from_overlaps(overlaps(WK))), ("hdi_queries", hdi_from_overlaps(overlaps(WQ))),
                       ("train_mse", loss), ("test_mse", np.mean((held["f"] - D["fq"]) ** 2, axis=-1)),
                       ("WQ_path", WQ), ("WK_path", WK), ("alpha_path", alpha)):
            rec[key].append(np.array(v, copy=True))

    marks = s0.records
    if s0.queries and s0.data == "fresh" and get_backend() == "numba":   # the compiled kernel trains this group
        from verify.experiments import _train_kernel as K

        P = np.concatenate([D["WQ"].reshape(R, -1), D["WK"].reshape(R, -1), np.full((R, H), 1.0 / H)], axis=1)
        M, V = np.zeros_like(P), np.zeros_like(P)
        gens = _streams(group)
        codes = [(K.TARGETS.index(s.dgp), K.DESIGNS.index(s.design), s.sigma) for s in group for _ in range(s.seeds)]
        losses = np.empty(max(np.diff(marks), default=1))
        nq = H * d * k
        for a, b in zip(marks, [*marks[1:], s0.steps + 1]):
            snap = P.copy()
            loss = np.empty(R)
            for r in range(R):
                K.nw_segment(P[r], M[r], V[r], learn[r], a, b, s0.steps, s0.lr, s0.schedule == "cosine", H, d, k,
                             gens[r], *codes[r], s0.n, s0.queries, losses)
                loss[r] = losses[0]
            record(snap[:, :nq].reshape(R, H, d, k), snap[:, nq:2 * nq].reshape(R, H, d, k), snap[:, 2 * nq:], loss)
    else:
        params = {"WQ": D["WQ"], "WK": D["WK"], "alpha": np.full((R, H), 1.0 / H)}
        state: dict[str, Any] = {}
        stream = _Stream(group) if s0.queries else None
        for t in range(s0.steps + 1):
            if stream is not None:
                sb = stream.batch(t)
                loss, grads = loss_and_grad(params["WQ"], params["WK"], params["alpha"], sb["X"], sb["y"],
                                            Xq=sb["Xq"], yq=sb["yq"])
            else:
                b = t if s0.data == "fresh" else 0
                loss, grads = loss_and_grad(params["WQ"], params["WK"], params["alpha"], D["X"][:, b], D["y"][:, b])
            if t in marks:
                record(params["WQ"], params["WK"], params["alpha"], loss)
            if t < s0.steps:
                grads["alpha"] = grads["alpha"] * learn[:, None]       # fixed weights get no update
                adam_step(params, grads, state, learning_rate(s0.lr, s0.schedule, t, s0.steps))
    stack = {k: np.moveaxis(np.asarray(v), 0, 1) for k, v in rec.items()}  # runs first
    if not all(np.all(np.isfinite(stack[k])) for k in ("hdi_keys", "hdi_queries", "train_mse", "test_mse")):
        raise fail("lr", f"{s0.lr} (non-finite values in training)", "a learning rate that keeps training finite")
    out, lo = [], 0
    for s in group:
        sl = slice(lo, lo + s.seeds)
        lo += s.seeds
        out.append(Trace(setting=s, steps=np.asarray(marks), **{k: v[sl].copy() for k, v in stack.items()}))
    return out


def effect(before: Any, after: Any) -> dict[str, Any]:
    """Paired change over seeds (:func:`verify.numeric.stats.paired`): mean of ``after − before``,
    its SE, t, the fraction of runs rising, and the mean before and after."""
    mean, se = paired(before, after)
    diff = np.asarray(after, float) - np.asarray(before, float)
    return {"mean": mean, "se": se, "t": z_score(mean, se), "fraction_rising": float(np.mean(diff > 0)),
            "before": float(np.mean(before)), "after": float(np.mean(after))}
