"""A multi-head NW-ensemble regressor trained by gradient descent (claim C9).

The model (SPEC, notation): head h has query and key projections ``W_Q^h, W_K^h`` (d × d_k)
and an output weight ``α_h``; at a query point x with keys ``x_i`` and values ``y_i``

    s_i^h = <W_Q^hᵀ x, W_K^hᵀ x_i> / sqrt(d_k)          (scores)
    w_i^h = exp(s_i^h) / Σ_j exp(s_j^h)                  (softmax = NW weights, kernel exp)
    f̂_h(x) = Σ_i w_i^h y_i,    f̂(x) = Σ_h α_h f̂_h(x)    (heads, ensemble)

Training minimises the leave-one-out MSE on the training set, ``L = mean_j (f̂(x_j) − y_j)²``
with each training point's own key removed from its softmax (with its own key the optimum is
the trivial interpolant ``f̂(x_j) = y_j``). Held-out MSE: queries at fresh points, keys the
whole training set, against the noiseless target ``f`` (the estimation error).

The gradient is written by hand (proofs/c9_training.py derives each identity; tests compare
it with torch.autograd): with ``r_j = f̂(x_j) − y_j`` and ``g_j = 2 r_j / n``

    ∂L/∂α_h = Σ_j g_j f̂_h(x_j)
    ∂L/∂s_ji^h = G_ji^h = g_j α_h w_ji^h (y_i − f̂_h(x_j))       (∂f̂_h/∂s_i = w_i (y_i − f̂_h))
    ∂L/∂W_Q^h = Xᵀ G^h K^h / sqrt(d_k),   ∂L/∂W_K^h = Xᵀ G^hᵀ Q^h / sqrt(d_k)

(``Q^h = X W_Q^h``, ``K^h = X W_K^h``). The optimiser is Adam (Kingma & Ba 2015: β1 = 0.9,
β2 = 0.999, ε = 1e-8, bias-corrected moments), full batch, a fixed learning rate or a cosine
schedule to 0 (``schedule``).

Split mode (``queries`` > 0, the C9 (i) redesign): each step draws n fresh keys and ``queries``
fresh query points; the loss is the MSE at the queries against the keys (no key left out), a
stochastic gradient of the population risk ``E(f̂_n(x) − y)² = MSE + σ²`` at n keys, with the same
gradient formulas (``∂L/∂W_Q = X_qᵀ G K``, ``∂L/∂W_K = X_kᵀ Gᵀ Q``); it is cheaper than leave-one-out
(H·n·queries scores a step instead of H·n²). :func:`c9_training` is the redesigned experiment:
positive controls (block targets, :func:`c9_population_optima`) and scope targets, free and fixed
head weights, the diagnostics of :mod:`verify.experiments.forms`, convergence (:data:`CONV_RTOL`).

Every array carries optional leading batch axes ``R`` (independent runs trained together, one
numpy call per operation for all of them): a run's numbers do not depend on the others in the
batch.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from proofs.markup import num
from verify._validate import as_array, fail, positive_int, positive_number
from verify.experiments.forms import form_diversity
from verify.numeric.baseline import haar_hdi_moments, hdi_from_overlaps, overlaps
from verify.numeric.dgp import DESIGN_NAMES, DGP_NAMES, haar_frame, make_dgp
from verify.numeric.diversity import hdi_bound
from verify.numeric.nw import softmax_exp

__all__ = [
    "c9_training",
    "c9_settings",
    "c9_population_optima",
    "c9_baselines",
    "setting_summary",
    "effect",
    "convergence",
    "learning_rate",
    "C9_SIZES",
    "C9_TARGETS",
    "CONV_RTOL",
    "SCHEDULES",
    "forward",
    "loss_and_grad",
    "adam_step",
    "TrainSetting",
    "Trace",
    "train",
    "train_many",
    "DATA_MODES",
    "INITS",
    "ADAM",
    "MAX_WORK",
]

INITS = ("gaussian", "haar")
#: Adam's constants (Kingma & Ba 2015, the defaults).
ADAM = {"beta1": 0.9, "beta2": 0.999, "eps": 1e-8}
#: The most score entries one setting may compute (:attr:`TrainSetting.work`; ~20-40 ns each on
#: one core): about a minute. A setting beyond it (from a saved file, say) is refused, not run.
MAX_WORK = 2e9


def _softmax(s: np.ndarray) -> np.ndarray:
    z = s - s.max(axis=-1, keepdims=True)
    e = np.exp(z)
    return e / e.sum(axis=-1, keepdims=True)


def forward(WQ: np.ndarray, WK: np.ndarray, alpha: np.ndarray, Xq: np.ndarray, Xk: np.ndarray, yk: np.ndarray,
            *, exclude_self: bool = False) -> dict[str, np.ndarray]:
    """The ensemble at the queries ``Xq`` (..., m, d) with keys ``Xk`` (..., n, d), values ``yk``
    (..., n); heads ``WQ, WK`` (..., H, d, d_k), weights ``alpha`` (..., H). ``exclude_self``
    (needs Xq is Xk) removes key j from query j's softmax. Returns ``f`` (..., m), ``heads``
    (..., H, m), ``w`` (..., H, m, n) and the projected ``Q``, ``K``."""
    d_k = WQ.shape[-1]
    Q = Xq[..., None, :, :] @ WQ                      # (..., H, m, d_k)
    K = Xk[..., None, :, :] @ WK                      # (..., H, n, d_k)
    w = Q @ np.swapaxes(K, -1, -2)                    # scores s, then their softmax: (..., H, m, n)
    w *= 1.0 / math.sqrt(d_k)
    if exclude_self:
        m, n = w.shape[-2:]
        if m != n:
            raise fail("exclude_self", f"{m} queries and {n} keys", "the same points as queries and keys")
        idx = np.arange(n)
        w[..., idx, idx] = -np.inf
    w -= w.max(axis=-1, keepdims=True)
    w = softmax_exp(w)
    w /= w.sum(axis=-1, keepdims=True)
    heads = (w @ yk[..., None, :, None])[..., 0]       # (..., H, m)
    f = np.einsum("...h,...hm->...m", alpha, heads)
    return {"f": f, "heads": heads, "w": w, "Q": Q, "K": K}


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
    m = yq.shape[-1]
    r = fw["f"] - yq
    loss = np.mean(r * r, axis=-1)
    g = 2.0 * r / m                                                   # ∂L/∂f̂(x_j)
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
    GtQt = QtW[..., :k, :] * y[..., None, None, :] - QtW[..., k:, :]                       # (Gᵀ Q)ᵀ, (..., H, d_k, n)
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


DATA_MODES = ("fresh", "fixed")
#: Learning-rate schedules: constant, or cosine from lr at step 0 to 0 at the last step (anneals
#: the noise of the stochastic gradient, so the run settles instead of diffusing at its final lr).
SCHEDULES = ("constant", "cosine")


def learning_rate(lr: float, schedule: str, t: int, steps: int) -> float:
    """The learning rate of update t (0-based) of ``steps``: ``lr`` or ``lr (1 + cos(π t/steps))/2``."""
    if schedule == "cosine":
        return lr * 0.5 * (1.0 + math.cos(math.pi * t / steps))
    return lr


#: Fields added with the split mode, the design and the schedule, and their defaults.
_NEW_FIELDS = {"queries": 0, "design": "normal", "schedule": "constant"}


@dataclass(frozen=True)
class TrainSetting:
    """One training experiment of ``seeds`` runs.

    ``data="fresh"``: every step draws a new training sample of n points (stochastic gradient
    of the population leave-one-out risk, E(f̂_{n−1}(x) − y)² = MSE + σ²: the MSE pressure the
    paper's argument is about, with no training set to overfit); ``"fixed"``: one training
    split of n points, reused every step. Evaluation: m fresh queries against n fresh keys,
    drawn once per run, against f. Run r draws its initial heads, training data and evaluation
    data from ``SeedSequence([seed, r, 0])``, ``[seed, r, 1]`` and ``[seed, r, 2]``.
    """

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
        if self.dgp not in DGP_NAMES:
            raise fail("dgp", repr(self.dgp), f"one of {', '.join(DGP_NAMES)}")
        if self.init not in INITS:
            raise fail("init", repr(self.init), f"one of {', '.join(INITS)}")
        if self.schedule not in SCHEDULES:
            raise fail("schedule", repr(self.schedule), f"one of {', '.join(SCHEDULES)}")
        if self.design not in DESIGN_NAMES:
            raise fail("design", repr(self.design), f"one of {', '.join(DESIGN_NAMES)}")
        if self.data not in DATA_MODES:
            raise fail("data", repr(self.data), f"one of {', '.join(DATA_MODES)}")
        if not isinstance(self.learn_alpha, bool):
            raise fail("learn_alpha", repr(self.learn_alpha), "true or false")
        positive_int("d", self.d, minimum=2)
        positive_int("H", self.H, minimum=2)
        positive_int("d_k", self.d_k)
        if self.d_k > self.d:
            raise fail("d_k", repr(self.d_k), f"d_k <= d = {self.d}")
        positive_int("n", self.n, minimum=3)
        positive_int("m", self.m, minimum=2)
        positive_number("sigma", self.sigma)
        positive_int("steps", self.steps)
        positive_number("lr", self.lr)
        positive_int("seeds", self.seeds)
        positive_int("record_every", self.record_every)
        positive_int("queries", self.queries, minimum=0)     # 0: leave-one-out on the n points
        positive_int("seed", self.seed, minimum=0)
        if self.work > MAX_WORK:
            raise fail("setting", f"seeds·H·(n² + n m)·steps = {self.work:.1e} score entries",
                       f"at most {MAX_WORK:.0e}")

    @property
    def work(self) -> float:
        """Score entries of the setting: H·n·(queries or n) per run and step, H·n·m per record."""
        records = self.steps // self.record_every + 2
        per_step = self.n * (self.queries or self.n)
        return float(self.seeds) * self.H * (per_step * (self.steps + 1) + self.n * self.m * records)

    @property
    def bound(self) -> float:
        return hdi_bound(self.H, self.d_k, self.d)

    @property
    def haar(self) -> tuple[float, float]:
        """Mean and SD of the HDI of Haar-random heads of these sizes."""
        return haar_hdi_moments(self.H, self.d_k, self.d)

    def _shape(self) -> tuple:
        return (self.d, self.H, self.d_k, self.n, self.m, self.steps, self.lr, self.record_every, self.data,
                self.learn_alpha, self.queries, self.design, self.schedule)

    def to_dict(self) -> dict[str, Any]:
        """The fields as a dict; ``queries``, ``design`` and ``schedule`` only where they differ from
        their defaults, so that the dict of a setting of the original kind is unchanged (saved
        counterexamples and their readers know only the original fields)."""
        out = dict(self.__dict__)
        for k, default in _NEW_FIELDS.items():
            if out[k] == default:
                del out[k]
        return out


@dataclass
class Trace:
    """What was recorded along training, at ``steps`` (0 = initialisation), for each run:
    ``hdi_keys``/``hdi_queries`` (runs, T), ``train_mse`` (leave-one-out on the step's
    training sample, against y) and ``test_mse`` (evaluation set, against f), ``overlap_keys``
    (runs, T, H, H), ``head_corr`` (runs, T, H, H: correlation of the heads' outputs across
    the evaluation points) and the final ``alpha`` (runs, H), ``WQ`` and ``WK`` (runs, H, d, d_k).
    Also (:mod:`verify.experiments.forms`) ``form_div`` (score-form diversity) and ``form_sub``
    (form-subspace HDI), (runs, T); ``alpha_path`` (runs, T, H); the initial heads ``WQ0``,
    ``WK0``."""

    setting: TrainSetting
    steps: np.ndarray
    hdi_keys: np.ndarray
    hdi_queries: np.ndarray
    train_mse: np.ndarray
    test_mse: np.ndarray
    overlap_keys: np.ndarray
    head_corr: np.ndarray
    alpha: np.ndarray
    WQ: np.ndarray
    WK: np.ndarray
    form_div: np.ndarray | None = None
    form_sub: np.ndarray | None = None
    alpha_path: np.ndarray | None = None
    WQ0: np.ndarray | None = None
    WK0: np.ndarray | None = None

    @property
    def delta_hdi(self) -> np.ndarray:
        """HDI of the keys at the end minus at initialisation, per run."""
        return self.hdi_keys[:, -1] - self.hdi_keys[:, 0]

    @property
    def delta_hdi_queries(self) -> np.ndarray:
        return self.hdi_queries[:, -1] - self.hdi_queries[:, 0]


def _init_heads(s: TrainSetting, rng: np.random.Generator) -> np.ndarray:
    """Initial W (H, d, d_k): Gaussian entries N(0, 1/d) (unit expected column norm) or Haar
    frames (unit columns); both have Haar-distributed ranges."""
    if s.init == "gaussian":
        return rng.standard_normal((s.H, s.d, s.d_k)) / math.sqrt(s.d)
    return np.stack([haar_frame(rng, s.d, s.d_k) for _ in range(s.H)])


#: Training steps whose samples are drawn at once in the split mode (queries > 0): bounds the
#: memory of the pre-drawn samples; the numbers do not depend on it (each stream is drawn in order).
CHUNK_STEPS = 50


def _run_data(s: TrainSetting) -> dict[str, np.ndarray]:
    """Per run (first axis): initial W_Q, W_K; training points and values for every step
    (fresh) or once (fixed) (none in the split mode, drawn per chunk by :class:`_Stream`);
    evaluation keys, values, queries and f at the queries."""
    dgp = make_dgp(s.dgp, d=s.d, sigma=s.sigma, design=s.design)
    keys = ("WQ", "WK", "X", "y", "Xe", "ye", "Xq", "fq")
    out: dict[str, list] = {k: [] for k in keys}
    batches = 0 if s.queries else (s.steps + 1 if s.data == "fresh" else 1)
    for r in range(s.seeds):
        init, data, evals = (np.random.default_rng(np.random.SeedSequence([s.seed, r, k])) for k in range(3))
        out["WQ"].append(_init_heads(s, init))
        out["WK"].append(_init_heads(s, init))
        x = dgp.sample_x(data, (batches, s.n))
        out["X"].append(x)
        out["y"].append(dgp.f(x) + s.sigma * data.standard_normal((batches, s.n)))
        xe = dgp.sample_x(evals, (s.n,))
        out["Xe"].append(xe)
        out["ye"].append(dgp.f(xe) + s.sigma * evals.standard_normal(s.n))
        xq = dgp.sample_x(evals, (s.m,))
        out["Xq"].append(xq)
        out["fq"].append(dgp.f(xq))
    return {k: np.stack(v) for k, v in out.items()}


class _Stream:
    """Training samples of the split mode (``queries`` > 0), drawn per chunk of steps: run r's
    keys from ``SeedSequence([seed, r, 3])``, their noise ``[seed, r, 4]``, queries ``[seed, r, 5]``,
    their noise ``[seed, r, 6]``; each generator is read in order, so a chunk's draws continue
    the previous ones and the numbers do not depend on :data:`CHUNK_STEPS`. Fixed data: one batch."""

    def __init__(self, group: list[TrainSetting]) -> None:
        self.group = group
        self.dgps = [make_dgp(s.dgp, d=s.d, sigma=s.sigma, design=s.design) for s in group]
        self.gens = [[[np.random.default_rng(np.random.SeedSequence([s.seed, r, k])) for k in (3, 4, 5, 6)]
                      for r in range(s.seeds)] for s in group]
        self.lo, self.hi, self.data = 0, 0, None

    def batch(self, t: int) -> dict[str, np.ndarray]:
        s0 = self.group[0]
        b = t if s0.data == "fresh" else 0
        if self.data is None or not self.lo <= b < self.hi:
            size = min(CHUNK_STEPS, s0.steps + 1 - b) if s0.data == "fresh" else 1
            parts: dict[str, list] = {"X": [], "y": [], "Xq": [], "yq": []}
            for s, dgp, gens in zip(self.group, self.dgps, self.gens):
                for kx, ky, qx, qy in gens:
                    x = dgp.sample_x(kx, (size, s.n))
                    parts["X"].append(x)
                    parts["y"].append(dgp.f(x) + s.sigma * ky.standard_normal((size, s.n)))
                    xq = dgp.sample_x(qx, (size, s.queries))
                    parts["Xq"].append(xq)
                    parts["yq"].append(dgp.f(xq) + s.sigma * qy.standard_normal((size, s.queries)))
            self.data = {k: np.stack(v) for k, v in parts.items()}
            self.lo, self.hi = b, b + size
        i = b - self.lo
        return {k: v[:, i] for k, v in self.data.items()}


def _corr(heads: np.ndarray) -> np.ndarray:
    """Correlation matrix (runs, H, H) of the heads' outputs across the evaluation points."""
    z = heads - heads.mean(axis=-1, keepdims=True)
    cov = z @ np.swapaxes(z, -1, -2)
    sd = np.sqrt(np.clip(np.diagonal(cov, axis1=-2, axis2=-1), 1e-300, None))
    return cov / (sd[..., :, None] * sd[..., None, :])


def train(setting: TrainSetting) -> Trace:
    """Train the setting's runs (Adam) and record the trace every ``record_every`` steps and at
    the end."""
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
    runs = [_run_data(s) for s in group]
    D = {k: np.concatenate([r[k] for r in runs]) for k in runs[0]}
    R = D["WQ"].shape[0]
    params = {"WQ": D["WQ"], "WK": D["WK"], "alpha": np.full((R, s0.H), 1.0 / s0.H)}
    WQ0, WK0 = D["WQ"].copy(), D["WK"].copy()
    state: dict[str, Any] = {}
    rec: dict[str, list] = {k: [] for k in ("steps", "hdi_keys", "hdi_queries", "train_mse", "test_mse",
                                            "overlap_keys", "head_corr", "form_div", "form_sub", "alpha_path")}
    stream = _Stream(group) if s0.queries else None
    for t in range(s0.steps + 1):
        if stream is not None:
            sb = stream.batch(t)
            loss, grads = loss_and_grad(params["WQ"], params["WK"], params["alpha"], sb["X"], sb["y"], Xq=sb["Xq"],
                                        yq=sb["yq"])
        else:
            b = t if s0.data == "fresh" else 0
            loss, grads = loss_and_grad(params["WQ"], params["WK"], params["alpha"], D["X"][:, b], D["y"][:, b])
        if t % s0.record_every == 0 or t == s0.steps:
            rho_k, rho_q = overlaps(params["WK"]), overlaps(params["WQ"])
            held = forward(params["WQ"], params["WK"], params["alpha"], D["Xq"], D["Xe"], D["ye"])
            rec["steps"].append(t)
            rec["overlap_keys"].append(rho_k)
            rec["hdi_keys"].append(hdi_from_overlaps(rho_k))
            rec["hdi_queries"].append(hdi_from_overlaps(rho_q))
            rec["form_div"].append(form_diversity(params["WQ"], params["WK"]))
            rec["form_sub"].append(hdi_from_overlaps(rho_q * rho_k))
            rec["alpha_path"].append(params["alpha"].copy())
            rec["test_mse"].append(np.mean((held["f"] - D["fq"]) ** 2, axis=-1))
            rec["head_corr"].append(_corr(held["heads"]))
            rec["train_mse"].append(loss)
        if t < s0.steps:
            if not s0.learn_alpha:
                grads = {k: g for k, g in grads.items() if k != "alpha"}
            adam_step(params, grads, state, learning_rate(s0.lr, s0.schedule, t, s0.steps))
    steps = np.asarray(rec.pop("steps"))
    stack = {k: np.moveaxis(np.asarray(v), 0, 1) for k, v in rec.items()}  # runs first
    for k in ("hdi_keys", "hdi_queries", "train_mse", "test_mse"):
        if not np.all(np.isfinite(stack[k])):
            raise fail("lr", f"{s0.lr} (non-finite {k} in training)", "a learning rate that keeps training finite")
    out, lo = [], 0
    for s in group:
        sl = slice(lo, lo + s.seeds)
        lo += s.seeds
        out.append(Trace(setting=s, steps=steps, alpha=params["alpha"][sl].copy(), WQ=params["WQ"][sl].copy(),
                         WK=params["WK"][sl].copy(), WQ0=WQ0[sl], WK0=WK0[sl],
                         **{k: v[sl].copy() for k, v in stack.items()}))
    return out


def check_arrays(WQ: Any, WK: Any, alpha: Any, X: Any, y: Any) -> tuple[np.ndarray, ...]:
    """Validate the inputs of :func:`loss_and_grad` for callers outside the package."""
    WQ = as_array("WQ", WQ, min_ndim=3, keep_float32=False)
    WK = as_array("WK", WK, min_ndim=3, keep_float32=False)
    alpha = as_array("alpha", alpha, min_ndim=1, keep_float32=False)
    X = as_array("X", X, min_ndim=2, keep_float32=False)
    y = as_array("y", y, min_ndim=1, keep_float32=False)
    if WK.shape != WQ.shape:
        raise fail("WK", f"shape {WK.shape}", f"the shape of WQ, {WQ.shape}")
    if alpha.shape != WQ.shape[:-2]:
        raise fail("alpha", f"shape {alpha.shape}", f"{WQ.shape[:-2]} (one weight per head)")
    if X.shape[-1] != WQ.shape[-2] or y.shape != X.shape[:-1]:
        raise fail("X, y", f"shapes {X.shape}, {y.shape}", f"(..., n, {WQ.shape[-2]}) and (..., n)")
    return WQ, WK, alpha, X, y


# --------------------------------------------------------------------------- C9 (i), redesigned
#: Sizes of C9's positive controls (d = 8 = H·d_k: four heads of two dimensions, one per block).
C9_D, C9_H, C9_DK = 8, 4, 2
#: Low noise: the targets have Var f = 1 (0.5 on the torus), so σ² = 0.01 is 1-2 % of it.
C9_SIGMA = 0.1
#: (target, design, kind): positive controls (a population computation shows that diverse heads
#: are needed) and scope targets (today's three: one direction, nearly linear, radial).
C9_TARGETS = (("block", "normal", "positive"), ("sin-block", "normal", "positive"), ("block", "torus", "positive"),
              ("single-index", "normal", "scope"), ("additive", "normal", "scope"), ("bump", "normal", "scope"))
#: n keys and `queries` fresh query points per step, Adam steps, seeds per setting, learning
#: rate, held-out queries m (against n fresh keys), by size.
#: ``scope_fixed``: whether the scope targets are also trained with fixed weights (the positive
#: controls always are); off at quick and default sizes to keep the default run's time.
C9_SIZES = {"quick": {"n": 64, "queries": 8, "steps": 150, "seeds": 8, "lr": 0.05, "m": 128, "scope_fixed": False},
            "default": {"n": 128, "queries": 8, "steps": 300, "seeds": 8, "lr": 0.05, "m": 128, "scope_fixed": False},
            "large": {"n": 256, "queries": 32, "steps": 2000, "seeds": 16, "lr": 0.03, "m": 256, "scope_fixed": True}}
#: Converged: the held-out MSE (mean over seeds) at the end differs from its value at 3/4 of the
#: steps by at most this fraction of the end value (a plateau over the last quarter).
CONV_RTOL = 0.05
#: A head weight "moved" when it is farther than this from 1/H (Adam's steps are ~lr = 1e-2).
ALPHA_MOVED = 1e-3


def c9_settings(size: str = "default", seed: int = 0) -> list[TrainSetting]:
    """The C9 (i) grid: every target of :data:`C9_TARGETS` with free (trained) and fixed (1/H)
    head weights, Gaussian initialisation, fresh keys and queries every step (split mode)."""
    from verify._validate import one_of
    from verify._validate import seed as valid_seed

    z = C9_SIZES[one_of("size", size, tuple(C9_SIZES))]
    seed = valid_seed("seed", seed)
    out = []
    for i, (dgp, design, kind) in enumerate(C9_TARGETS):
        for j, learn in enumerate((True, False)):
            if not learn and kind == "scope" and not z["scope_fixed"]:
                continue
            out.append(TrainSetting(dgp=dgp, d=C9_D, H=C9_H, d_k=C9_DK, init="gaussian", n=z["n"], m=z["m"],
                                    sigma=C9_SIGMA, steps=z["steps"], lr=z["lr"], seeds=z["seeds"],
                                    seed=int(np.random.SeedSequence([seed, 9, i, j]).generate_state(1)[0]),
                                    record_every=max(1, z["steps"] // 10), learn_alpha=learn, queries=z["queries"],
                                    design=design, schedule=z.get("schedule", "cosine")))
    return out


def effect(before: np.ndarray, after: np.ndarray) -> dict[str, Any]:
    """Paired change over seeds: mean of ``after − before``, its SE, t, fraction of runs rising,
    and the mean before and after."""
    diff = np.asarray(after, float) - np.asarray(before, float)
    k = diff.size
    mean = float(diff.mean())
    se = float(diff.std(ddof=1) / math.sqrt(k)) if k > 1 else math.inf
    t = mean / se if se > 0 else (0.0 if mean == 0 else math.copysign(math.inf, mean))
    return {"mean": mean, "se": se, "t": float(t), "fraction_rising": float(np.mean(diff > 0)),
            "before": float(np.mean(before)), "after": float(np.mean(after))}


def convergence(test_mse: np.ndarray, steps: np.ndarray, rtol: float = CONV_RTOL) -> dict[str, Any]:
    """The plateau criterion (:data:`CONV_RTOL`) on held-out MSEs (runs, T) recorded at ``steps``."""
    T = steps[-1]
    i = int(np.argmin(np.abs(steps - 0.75 * T)))
    end, q3 = test_mse[:, -1], test_mse[:, i]
    rel = abs(float(end.mean() - q3.mean())) / float(end.mean())
    per_run = np.abs(end - q3) / end
    return {"criterion": f"|mean MSE(step {T}) − mean MSE(step {int(steps[i])})| <= {rtol:g} × mean MSE(step {T})",
            "relative_change_last_quarter": rel, "converged": bool(rel <= rtol),
            "fraction_of_runs_converged": float(np.mean(per_run <= rtol))}


def _var_f(dgp: str, design: str) -> float:
    from verify.experiments.regimes import variance_of_f

    return variance_of_f(dgp, C9_D, design)


def setting_summary(tr: Trace, kind: str, baselines: dict[str, dict[str, float]]) -> dict[str, Any]:
    """Effect sizes of one C9 setting over its seeds: ΔHDI of keys, queries, score forms and form
    subspaces (:func:`effect`, with the end value's z against the Haar law and the bound), held-out
    MSE and R² (against f: no σ² part), its relative change, the population MSE of the trained
    heads (Gaussian design, :mod:`verify.experiments.population`), convergence, head weights."""
    from verify.experiments import population
    from verify.numeric.stats import r_squared

    s = tr.setting
    vf = _var_f(s.dgp, s.design)
    diag = {"key_hdi": tr.hdi_keys, "query_hdi": tr.hdi_queries, "form_diversity": tr.form_div,
            "form_subspace_hdi": tr.form_sub}
    out: dict[str, Any] = {"target": s.dgp, "design": s.design, "kind": kind,
                           "head_weights": "free (trained)" if s.learn_alpha else "fixed 1/H", "H": s.H, "d_k": s.d_k,
                           "d": s.d, "seeds": s.seeds, "n": s.n, "queries": s.queries, "steps": s.steps, "lr": s.lr,
                           "var_f": vf}
    for k, v in diag.items():
        e = effect(v[:, 0], v[:, -1])
        b = baselines[k]
        e.update({"haar_mean": b["haar_mean"], "haar_sd": b["haar_sd"], "bound": b["bound"],
                  "end_z_vs_haar": (e["after"] - b["haar_mean"]) / b["haar_sd"]})
        out[k] = e
    m0, m1 = tr.test_mse[:, 0], tr.test_mse[:, -1]
    ch = m1 / m0 - 1.0
    out["test_mse"] = effect(m0, m1)
    out["test_mse_relative_change"] = {"mean": float(ch.mean()), "se": float(ch.std(ddof=1) / math.sqrt(ch.size))}
    out["r2_init"], out["r2_end"] = r_squared(float(m0.mean()), vf), r_squared(float(m1.mean()), vf)
    out["r2_end_runs"] = np.asarray(r_squared(m1, vf)).tolist()
    if s.design == "normal":
        p0 = population.population_mse(s.dgp, tr.WQ0, tr.WK0, np.full((s.seeds, s.H), 1.0 / s.H))
        p1 = population.population_mse(s.dgp, tr.WQ, tr.WK, tr.alpha)
        out["population_mse"] = {"init": float(p0.mean()), "end": float(np.mean(p1)),
                                 "end_median": float(np.median(p1)), "r2_end": r_squared(float(np.median(p1)), vf)}
    out["convergence"] = convergence(tr.test_mse, tr.steps)
    a = np.sort(tr.alpha, axis=-1)
    out["alpha"] = {"sorted_mean": a.mean(axis=0).tolist(), "sum_mean": float(tr.alpha.sum(-1).mean()),
                    "max_abs_change": float(np.abs(tr.alpha - 1.0 / s.H).max()),
                    "moved": bool(np.abs(tr.alpha - 1.0 / s.H).max() > ALPHA_MOVED),
                    "fraction_negative": float(np.mean(tr.alpha < 0))}
    out["runs"] = {k: v[:, -1].tolist() for k, v in diag.items()} | {"test_mse_end": m1.tolist()}
    out["runs_init"] = {k: v[:, 0].tolist() for k, v in diag.items()} | {"test_mse_init": m0.tolist()}
    return out


def c9_baselines(seed: int) -> dict[str, dict[str, float]]:
    """The Haar baselines of the C9 (i) sizes (:func:`verify.experiments.forms.haar_baselines`) for
    the run ``seed`` of :func:`c9_training`."""
    from verify.experiments.forms import haar_baselines

    return haar_baselines(C9_H, C9_DK, C9_D, seed=int(np.random.SeedSequence([int(seed), 9, 99]).generate_state(1)[0]))


def c9_training(size: str = "default", seed: int = 0) -> dict[str, Any]:
    """C9 reading (i), redesigned: NW-ensemble heads trained by Adam from random initialisation
    with free and with fixed head weights, on positive controls (block targets, whose population
    optimum needs diverse heads: :func:`c9_population_optima`) and on today's scope targets.

    Returns ``{"design" (design_record), "haar" (baselines per diagnostic), "positive_controls"
    (per positive target: population optima and the finite-n effect), "settings" (one
    :func:`setting_summary` per setting), "by_kind" (mean effects per kind of target and head
    weights), "size", "seconds"}``."""
    import time

    t0 = time.process_time()
    grid = c9_settings(size, seed)
    traces = train_many(grid)
    base = c9_baselines(seed)
    kinds = {(g, d): k for g, d, k in C9_TARGETS}
    rows = [setting_summary(tr, kinds[(tr.setting.dgp, tr.setting.design)], base) for tr in traces]
    z = C9_SIZES[size]
    pcs = [c9_population_optima(g, d, n=z["n"], seed=seed) for g, d, k in C9_TARGETS if k == "positive"]
    from verify.experiments.regimes import plain

    return plain({"design": _c9_design(size), "haar": base, "positive_controls": pcs, "settings": rows,
                  "by_kind": _by_kind(rows), "size": size, "seconds": time.process_time() - t0})


def _by_kind(rows: list[dict]) -> list[dict[str, Any]]:
    out = []
    for kind in ("positive", "scope"):
        for hw in ("free (trained)", "fixed 1/H"):
            sel = [r for r in rows if r["kind"] == kind and r["head_weights"] == hw]
            if not sel:
                continue
            entry: dict[str, Any] = {"kind": kind, "head_weights": hw, "targets": [f"{r['target']} ({r['design']})"
                                                                                  for r in sel]}
            for k in ("key_hdi", "query_hdi", "form_diversity", "form_subspace_hdi"):
                entry[f"delta_{k}"] = [r[k]["mean"] for r in sel]
                entry[f"delta_{k}_se"] = [r[k]["se"] for r in sel]
            entry["r2_end"] = [r["r2_end"] for r in sel]
            entry["test_mse_relative_change"] = [r["test_mse_relative_change"]["mean"] for r in sel]
            entry["converged"] = [r["convergence"]["converged"] for r in sel]
            names = {"key_hdi": "key HDI", "query_hdi": "query HDI", "form_diversity": "score-form diversity",
                     "form_subspace_hdi": "form-subspace HDI"}
            parts = []
            for k, label in names.items():
                vals = ", ".join(f"{r[k]['mean']:+.3f} ± {r[k]['se']:.3f}" for r in sel)
                parts.append(f"{label} {vals}")
            entry["text"] = (f"{kind} targets ({', '.join(entry['targets'])}), head weights {hw}: ΔHDI over training "
                             + "; ".join(parts) + "; held-out MSE " + ", ".join(f"{c:+.0%}" for c in
                                                                             entry["test_mse_relative_change"])
                             + ", R² at the end " + ", ".join(f"{v:.2f}" for v in entry["r2_end"]) + f" ({sel[0]['seeds']} "
                             "seeds each; converged: " + ", ".join("yes" if c else "no" for c in entry["converged"]) + ")")
            out.append(entry)
    return out


def _c9_design(size: str) -> dict[str, Any]:
    """The C9 (i) design choices as data, each with its reason (marked-up text)."""
    from verify.experiments.regimes import design_record

    z = C9_SIZES[size]
    scope = "" if z["scope_fixed"] else "; the scope targets with free weights only (both at the large size)"
    return design_record(
        head_weights=("free (trained with the heads) and fixed at $1/H$" + scope,
                      r"C2: the head weights $\alpha_h = W_V^h W_O^h$ are free reals, so the free setting is the model "
                      r"the claim is about; fixed $1/H$ is the C5 model's"),
        kernel_scale=(r"$1/\sqrt{d_k}$ with learned $W_Q^h$, $W_K^h$ (their norms set the effective scale)",
                      "the paper's head: training chooses how sharp the attention is"),
        design_density=(r"$N(0, I_8)$ (positive controls and scope targets) and the torus (block target)",
                        r"Gaussian: the population head is $E f(X + a)$ in closed form, which gives the positive "
                        "control's optimum; torus: whole-circle heads are local Gaussian NW smoothers, where heads "
                        "learn more"),
        target=("positive controls: block and sin-block (Gaussian design), block (torus); scope targets: "
                "single-index, additive, bump",
                "the block targets need four heads on four different blocks (or four query blocks); the scope "
                "targets reward heads that share directions"),
        noise=(rf"$\sigma = {C9_SIGMA:g}$; held-out MSE against the noiseless $f$ (no noise part)",
               "a small noise part, so the MSE is the estimation error"),
        n=(z["n"], f"keys per step and per held-out context ({z['queries']} fresh query points per step, {z['m']} "
           "held-out queries); the finite-sample optimum of the positive controls is shown beside"),
        steps=(z["steps"], f"Adam, learning rate {num(z['lr'], 'g')} on a cosine schedule to 0 (anneals the noise of "
               f"{z['queries']}-query gradients), fresh data every step"),
        convergence=(rf"a plateau: the mean held-out MSE over seeds changes by at most {num(CONV_RTOL, 'g')} of its end "
                     "value over the last quarter of the steps",
                     "reported per setting (converged or not), never assumed"),
        seeds=(z["seeds"], "independent initialisations and data streams per setting; effects are paired over seeds"),
        diagnostic=("key HDI, query HDI, score-form diversity and form-subspace HDI, each against its Haar law and "
                    "its bound; held-out MSE and its share of the target's variance",
                    "shared keys with orthogonal queries are also optimal on block targets, so a verdict on keys "
                    "alone would miss specialisation"))


def _block_maps(d: int, H: int, gain: float, shared_keys: bool) -> tuple[np.ndarray, np.ndarray]:
    """Heads on the coordinate blocks: W_Q^h = gain·[e_{2h−1}, e_{2h}], W_K^h the same (or block 0
    for every head with ``shared_keys``)."""
    WQ, WK = np.zeros((H, d, 2)), np.zeros((H, d, 2))
    for h in range(H):
        WQ[h, 2 * h:2 * h + 2] = gain * np.eye(2)
        b = 0 if shared_keys else h
        WK[h, 2 * b:2 * b + 2] = gain * np.eye(2)
    return WQ, WK


def _golden(fn: Any, lo: float, hi: float, iters: int = 80) -> tuple[float, float]:
    """Minimum of a unimodal function on [lo, hi] by golden-section search."""
    g = (math.sqrt(5) - 1) / 2
    a, b = lo, hi
    c, e = b - g * (b - a), a + g * (b - a)
    fc, fe = fn(c), fn(e)
    for _ in range(iters):
        if fc < fe:
            b, e, fe = e, c, fc
            c = b - g * (b - a)
            fc = fn(c)
        else:
            a, c, fc = c, e, fe
            e = a + g * (b - a)
            fe = fn(e)
    x = (a + b) / 2
    return x, fn(x)


#: Scales searched for the finite-n optimum of a reference configuration: λ = s·gain² (Gaussian
#: design, the tilt a = λ P x) or the von Mises concentration κ (torus), log-spaced around the
#: population optimum (λ = 1, κ large), where the variance e^{‖a‖²}/n and the smoothing bias trade.
FINITE_SCALES = {"normal": (0.25, 0.35, 0.5, 0.7, 1.0, 1.4, 2.0), "torus": (2.0, 4.0, 8.0, 16.0, 32.0)}


def c9_population_optima(target: str, design: str, *, n: int = 128, seed: int = 0, replicates: int = 16,
                         m: int = 64) -> dict[str, Any]:
    """The positive control of a block target: population MSE (n → ∞) of reference head
    configurations, in closed form, and their finite-n held-out MSE at ``n`` keys (the effect
    the training experiment can measure there).

    Gaussian design (``block``, ``sin-block``): block heads and shared keys with orthogonal
    queries reach MSE 0 with free α (λ = s·gain² = 1, α = 1 for block, e for sin-block); with
    α = 1/H the block target needs λ = sqrt(H) (MSE 0), the sin-block target cannot reach 0 (the
    best λ by golden section); identical heads reach at best 1 − 1/B = 0.75 of Var f; Gaussian
    heads as at initialisation (α = 1/H) about Var f. Torus (``block``): circle heads with
    α_h = 1/A_2(κ), A_2 = I_2(κ)/I_0(κ) (MSE 0), with α = 1/H ``(1 − A_2/4)² Var f``, identical
    heads 3/4 of Var f.

    Finite n: each family (diverse heads, shared keys with orthogonal queries, identical heads)
    at its best scale of :data:`FINITE_SCALES` and (free α) its least-squares common amplitude,
    both chosen on ``replicates`` fitting replicates and scored on as many fresh ones.

    Returns ``{"target", "design", "var_f", "n", "configs": [{"config", "head_weights", "alpha",
    "population_mse", "population_r2", "key_hdi", "query_hdi", "form_diversity"}], "finite_n":
    [{"family", "head_weights", "scale", "amplitude", "mse", "se", "r2"}], "specialisation_pays"
    (population), "finite_n_effect" (identical − diverse at their finite-n optima, paired)}``."""
    from verify._validate import one_of
    from verify._validate import seed as valid_seed
    from verify.experiments import population, regimes
    from verify.experiments.forms import diagnostics
    from verify.numeric.stats import r_squared

    design = one_of("design", design, ("normal", "torus"))
    target = one_of("target", target, ("block", "sin-block") if design == "normal" else ("block",))
    n, seed = positive_int("n", n, minimum=2), valid_seed("seed", seed)
    replicates, m = positive_int("replicates", replicates, minimum=2), positive_int("m", m)
    d, H = C9_D, C9_H
    s = 1.0 / math.sqrt(C9_DK)
    vf = _var_f(target, design)
    configs: list[tuple[str, str, np.ndarray, np.ndarray, np.ndarray, float]] = []
    if design == "normal":
        amp = 1.0 if target == "block" else math.e          # α λ² = 1 (block), α = e at λ = 1 (sin-block)

        def fam(name: str, lam: float) -> tuple[np.ndarray, np.ndarray]:
            g = math.sqrt(lam / s)                            # λ = s gain²
            if name == "identical":
                WQ = np.repeat(_block_maps(d, H, g, False)[0][:1], H, axis=0)
                return WQ, WQ.copy()
            return _block_maps(d, H, g, name == "shared")

        def pop(WQ: np.ndarray, WK: np.ndarray, a: np.ndarray) -> float:
            return float(population.population_mse(target, WQ, WK, a))

        for name, key in (("block heads", "diverse"), ("shared keys, orthogonal queries", "shared")):
            WQ, WK = fam(key, 1.0)
            configs.append((name, "free", WQ, WK, np.full(H, amp), pop(WQ, WK, np.full(H, amp))))
        if target == "block":
            lam = math.sqrt(H)
        else:
            lam, _ = _golden(lambda L: pop(*fam("diverse", L), np.full(H, 1.0 / H)), 0.05, 4.0)
        WQ, WK = fam("diverse", lam)
        configs.append((f"block heads, λ = {lam:.3g}", "fixed 1/H", WQ, WK, np.full(H, 1.0 / H),
                        pop(WQ, WK, np.full(H, 1.0 / H))))
        WQ, WK = fam("identical", 1.0)
        configs.append(("identical heads (block 0)", "free", WQ, WK, np.full(H, amp / H), pop(WQ, WK, np.full(H, amp / H))))
        rng = np.random.default_rng(np.random.SeedSequence([seed, 9, 7]))
        G = rng.standard_normal((2, 256, H, d, C9_DK)) / math.sqrt(d)
        pm = population.population_mse(target, G[0], G[1], np.full((256, H), 1.0 / H))
        init = {"config": "Gaussian heads as at initialisation (mean of 256 draws)", "head_weights": "fixed 1/H",
                "population_mse": float(pm.mean()), "population_mse_se": float(pm.std(ddof=1) / 16),
                "population_r2": r_squared(float(pm.mean()), vf)}
    else:
        kappa = 8.0                                            # a local von Mises kernel (bandwidth ≈ 0.35 rad)
        circ = [[h] for h in range(H)]
        layouts = {"diverse": (circ, circ), "shared": (circ, [[0]] * H), "identical": ([[0]] * H, [[0]] * H)}

        def fam(name: str, kap: float) -> tuple[np.ndarray, np.ndarray]:
            qc, kc = layouts[name]
            return regimes.circle_heads(kc, d, query_circles=qc, gain=math.sqrt(kap / (s * regimes.TORUS_RADIUS**2)))

        def a2(kap: float) -> float:                           # I_2(κ)/I_0(κ) by quadrature
            t = 2 * math.pi * np.arange(regimes.QUAD_POINTS) / regimes.QUAD_POINTS
            e = np.exp(kap * (np.cos(t) - 1))
            return float(np.sum(e * np.cos(2 * t)) / np.sum(e))

        A2 = a2(kappa)
        for name, key, a in (("circle heads", "diverse", 1 / A2), ("shared key circle, orthogonal query circles",
                                                                 "shared", 1 / A2),
                             ("circle heads", "diverse", 1.0 / H), ("identical heads (circle 0)", "identical",
                                                                    1 / (A2 * H))):
            qc, kc = layouts[key]
            WQ, WK = fam(key, kappa)
            pairs = [[(q[0], k[0])] for q, k in zip(qc, kc)]
            configs.append((name, "fixed 1/H" if a == 1.0 / H else "free", WQ, WK, np.full(H, a),
                            float(regimes.torus_population_mse(target, d, pairs, np.full(H, a), kappa))))
        init = None
    rows = []
    for name, hw, WQ, WK, a, pm in configs:
        dg = diagnostics(WQ[None], WK[None])
        rows.append({"config": name, "head_weights": hw, "alpha": a.tolist(), "population_mse": pm,
                     "population_r2": r_squared(max(pm, 0.0), vf), "key_hdi": float(dg["key_hdi"][0]),
                     "query_hdi": float(dg["query_hdi"][0]), "form_diversity": float(dg["form_diversity"][0])})
    if init is not None:
        rows.append(init)
    dgp = make_dgp(target, d=d, sigma=C9_SIGMA, design=design)
    fin = _finite_n(dgp, fam, FINITE_SCALES[design], vf, n=n, R=replicates, m=m, seed=seed)
    best = {(r["family"], r["head_weights"]): r for r in fin["rows"]}
    diff = fin["reps"][("identical", "free")] - fin["reps"][("diverse", "free")]
    ident = next(r for r in rows if r["config"].startswith("identical"))
    return {"target": target, "design": design, "var_f": vf, "configs": rows, "n": n, "finite_n": fin["rows"],
            "specialisation_pays": bool(rows[0]["population_mse"] < 1e-12 < ident["population_mse"]),
            "finite_n_effect": {"identical_minus_diverse": float(diff.mean()),
                                "se": float(diff.std(ddof=1) / math.sqrt(diff.size)),
                                "diverse_mse": best[("diverse", "free")]["mse"],
                                "identical_mse": best[("identical", "free")]["mse"], "n": n,
                                "replicates": replicates, "head_weights": "free (least-squares amplitude)"}}


def _replicates(dgp: Any, *, n: int, R: int, m: int, seed: int, offset: int) -> tuple[np.ndarray, ...]:
    """R stacked replicates (keys X, noisy values y, queries xq, f there) of ``SeedSequence([seed, 9, 8, offset + r])``."""
    out: list[list[np.ndarray]] = [[], [], [], []]
    for r in range(R):
        rng = np.random.default_rng(np.random.SeedSequence([seed, 9, 8, offset + r]))
        X = dgp.sample_x(rng, (n,))
        y = dgp.f(X) + dgp.sigma * rng.standard_normal(n)
        xq = dgp.sample_x(rng, (m,))
        for lst, v in zip(out, (X, y, xq, dgp.f(xq))):
            lst.append(v)
    return tuple(np.stack(v) for v in out)


def _finite_n(dgp: Any, fam: Any, scales: tuple[float, ...], var_f: float, *, n: int, R: int, m: int,
              seed: int) -> dict[str, Any]:
    """Finite-n optimum of each reference family (diverse, shared keys, identical) and head-weight
    mode: the scale (and, free, the least-squares common amplitude a, α_h = a) chosen on R
    fitting replicates, the held-out MSE against f on R fresh ones (``SeedSequence([seed, 9, 8, r])``,
    r < R fitting, R <= r < 2R scoring; the same replicates for every family, so differences pair)."""
    X, y, xq, fq = _replicates(dgp, n=n, R=R, m=m, seed=seed, offset=0)
    X2, y2, xq2, fq2 = _replicates(dgp, n=n, R=R, m=m, seed=seed, offset=R)
    ones = np.ones(C9_H)
    rows, reps = [], {}
    for name in ("diverse", "shared", "identical"):
        sums = {sc: forward(*fam(name, sc), ones, xq, X, y)["f"].ravel() for sc in scales}   # Σ_h f̂_h, all replicates
        F = fq.ravel()
        for hw in ("free", "fixed 1/H"):
            best = None
            for sc, S in sums.items():
                amp = float(S @ F / (S @ S)) if hw == "free" else 1.0 / C9_H
                err = float(np.mean((amp * S - F) ** 2))
                if best is None or err < best[0]:
                    best = (err, sc, amp)
            _, sc, amp = best
            v = np.mean((forward(*fam(name, sc), np.full(C9_H, amp), xq2, X2, y2)["f"] - fq2) ** 2, axis=-1)
            reps[(name, hw)] = v
            rows.append({"family": name, "head_weights": hw, "scale": sc, "amplitude": amp, "mse": float(v.mean()),
                         "se": float(v.std(ddof=1) / math.sqrt(R)), "r2": 1.0 - float(v.mean()) / var_f})
    return {"rows": rows, "reps": reps}
