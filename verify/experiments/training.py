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
β2 = 0.999, ε = 1e-8, bias-corrected moments), full batch, a fixed learning rate.

Every array carries optional leading batch axes ``R`` (independent runs trained together, one
numpy call per operation for all of them): a run's numbers do not depend on the others in the
batch.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from verify._validate import as_array, fail, positive_int, positive_number
from verify.numeric.baseline import haar_hdi_moments, hdi_from_overlaps, overlaps
from verify.numeric.dgp import DGP_NAMES, haar_frame, make_dgp
from verify.numeric.diversity import hdi_bound

__all__ = [
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
#: The most score entries × steps one setting may compute (seeds · H · (n² + n m) · steps;
#: ~20-40 ns each on one core): about a minute. A setting beyond it (from a saved file, say) is
#: refused, not run.
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
    w = Q @ np.swapaxes(K, -1, -2)                    # scores s, then softmax in place: (..., H, m, n)
    w *= 1.0 / math.sqrt(d_k)
    if exclude_self:
        m, n = w.shape[-2:]
        if m != n:
            raise fail("exclude_self", f"{m} queries and {n} keys", "the same points as queries and keys")
        idx = np.arange(n)
        w[..., idx, idx] = -np.inf
    w -= w.max(axis=-1, keepdims=True)
    np.exp(w, out=w)
    w /= w.sum(axis=-1, keepdims=True)
    heads = (w @ yk[..., None, :, None])[..., 0]       # (..., H, m)
    f = np.einsum("...h,...hm->...m", alpha, heads)
    return {"f": f, "heads": heads, "w": w, "Q": Q, "K": K}


def loss_and_grad(WQ: np.ndarray, WK: np.ndarray, alpha: np.ndarray, X: np.ndarray, y: np.ndarray,
                  *, exclude_self: bool = True) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    """Leave-one-out MSE ``L = mean_j (f̂(x_j) − y_j)²`` of each run (...,) and its gradient
    with respect to ``WQ``, ``WK``, ``alpha`` (module docstring)."""
    fw = forward(WQ, WK, alpha, X, X, y, exclude_self=exclude_self)
    n = y.shape[-1]
    r = fw["f"] - y
    loss = np.mean(r * r, axis=-1)
    g = 2.0 * r / n                                                   # ∂L/∂f̂(x_j)
    g_alpha = np.einsum("...j,...hj->...h", g, fw["heads"])
    g_heads = g[..., None, :] * alpha[..., :, None]                   # ∂L/∂f̂_h(x_j), (..., H, n)
    # G_ji = γ_j w_ji (y_i − f̂_j) (γ = g_heads) is never formed: with W = (w_ji),
    # G K = γ ∘ (W (y ∘ K) − f̂ ∘ (W K))  and  Gᵀ Q = y ∘ (Wᵀ (γ ∘ Q)) − Wᵀ (γ f̂ ∘ Q).
    w, heads, Q, K = fw["w"], fw["heads"], fw["Q"], fw["K"]
    k = Q.shape[-1]
    yK = y[..., None, :, None] * K
    WK_ = w @ np.concatenate([yK, K], axis=-1)
    GK = g_heads[..., None] * (WK_[..., :k] - heads[..., None] * WK_[..., k:])
    gQ = g_heads[..., None] * Q
    WtQ = np.swapaxes(w, -1, -2) @ np.concatenate([gQ, heads[..., None] * gQ], axis=-1)
    GtQ = y[..., None, :, None] * WtQ[..., :k] - WtQ[..., k:]
    c = 1.0 / math.sqrt(k)
    Xt = np.swapaxes(X, -1, -2)[..., None, :, :]                      # (..., 1, d, n)
    g_WQ = c * (Xt @ GK)
    g_WK = c * (Xt @ GtQ)
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

    def __post_init__(self) -> None:
        if self.dgp not in DGP_NAMES:
            raise fail("dgp", repr(self.dgp), f"one of {', '.join(DGP_NAMES)}")
        if self.init not in INITS:
            raise fail("init", repr(self.init), f"one of {', '.join(INITS)}")
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
        if isinstance(self.seed, bool) or not isinstance(self.seed, int) or not 0 <= self.seed < 2**63:
            raise fail("seed", repr(self.seed), "an integer in [0, 2**63)")
        if self.work > MAX_WORK:
            raise fail("setting", f"seeds·H·(n² + n m)·steps = {self.work:.1e} score entries",
                       f"at most {MAX_WORK:.0e}")

    @property
    def work(self) -> float:
        return float(self.seeds) * self.H * (self.n * self.n + self.n * self.m) * (self.steps + 1)

    @property
    def bound(self) -> float:
        return hdi_bound(self.H, self.d_k, self.d)

    @property
    def haar(self) -> tuple[float, float]:
        """Mean and SD of the HDI of Haar-random heads of these sizes."""
        return haar_hdi_moments(self.H, self.d_k, self.d)

    def _shape(self) -> tuple:
        return (self.d, self.H, self.d_k, self.n, self.m, self.steps, self.lr, self.record_every, self.data,
                self.learn_alpha)

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


@dataclass
class Trace:
    """What was recorded along training, at ``steps`` (0 = initialisation), for each run:
    ``hdi_keys``/``hdi_queries`` (runs, T), ``train_mse`` (leave-one-out on the step's
    training sample, against y) and ``test_mse`` (evaluation set, against f), ``overlap_keys``
    (runs, T, H, H), ``head_corr`` (runs, T, H, H: correlation of the heads' outputs across
    the evaluation points) and the final ``alpha`` (runs, H), ``WQ`` and ``WK`` (runs, H, d, d_k)."""

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


def _run_data(s: TrainSetting) -> dict[str, np.ndarray]:
    """Per run (first axis): initial W_Q, W_K; training points and values for every step
    (fresh) or once (fixed); evaluation keys, values, queries and f at the queries."""
    dgp = make_dgp(s.dgp, d=s.d, sigma=s.sigma)
    out: dict[str, list] = {k: [] for k in ("WQ", "WK", "X", "y", "Xe", "ye", "Xq", "fq")}
    batches = s.steps + 1 if s.data == "fresh" else 1
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
    state: dict[str, Any] = {}
    rec: dict[str, list] = {k: [] for k in ("steps", "hdi_keys", "hdi_queries", "train_mse", "test_mse",
                                            "overlap_keys", "head_corr")}
    for t in range(s0.steps + 1):
        b = t if s0.data == "fresh" else 0
        loss, grads = loss_and_grad(params["WQ"], params["WK"], params["alpha"], D["X"][:, b], D["y"][:, b])
        if t % s0.record_every == 0 or t == s0.steps:
            rho_k = overlaps(params["WK"])
            held = forward(params["WQ"], params["WK"], params["alpha"], D["Xq"], D["Xe"], D["ye"])
            rec["steps"].append(t)
            rec["overlap_keys"].append(rho_k)
            rec["hdi_keys"].append(hdi_from_overlaps(rho_k))
            rec["hdi_queries"].append(hdi_from_overlaps(overlaps(params["WQ"])))
            rec["test_mse"].append(np.mean((held["f"] - D["fq"]) ** 2, axis=-1))
            rec["head_corr"].append(_corr(held["heads"]))
            rec["train_mse"].append(loss)
        if t < s0.steps:
            if not s0.learn_alpha:
                grads = {k: g for k, g in grads.items() if k != "alpha"}
            adam_step(params, grads, state, s0.lr)
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
                         WK=params["WK"][sl].copy(),
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
