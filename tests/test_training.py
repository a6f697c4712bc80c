"""verify.experiments.training and verify.numeric.baseline against torch.autograd and torch.optim.Adam,
brute-force loops, the documented seed streams, scipy.linalg.subspace_angles and Monte Carlo draws;
the compiled training path against the numpy one, and compiled afresh against loaded from numba's cache."""

from __future__ import annotations

import json
import math
import os
import statistics
import subprocess
import sys

import numpy as np
import pytest
import torch
from scipy.linalg import subspace_angles

from verify.errors import VerifyError
from verify.experiments import training
from verify.experiments.training import TrainSetting, forward, loss_and_grad, train, train_many
from verify.numeric import baseline, nw
from verify.numeric.dgp import make_dgp

# Hand-written gradient vs torch autograd: measured <= 2e-15 relative; 1e-10 is the bar.
GRAD_RTOL = 1e-10
# Adam vs torch.optim.Adam after 20 steps, operations in another order: a few ulps per step.
ADAM_RTOL = 1e-12
# Ensemble vs a loop of exp/sum per query: float64 rounding of sums of <= 40 terms.
LOOP_RTOL = 1e-12
# Compiled vs numpy training over 20 steps, the same formulas in another order: measured <= 6e-15.
PATHS_ATOL = 1e-12
# Overlaps from QR vs scipy's principal angles: both backward stable, cos² to ~1e-15.
ANGLE_ATOL = 1e-12
# Monte Carlo mean and SD of the Haar HDI: 5 SE (the SD's relative SE from 4000 draws is 1.1 %).
Z_MC = 5.0
SD_RTOL = 0.06


def _torch_loss(WQ, WK, alpha, X, y, Xq=None, yq=None):
    """The ensemble's MSE in torch: leave-one-out on (X, y) without queries, else at the queries."""
    tq, tk, ta = (torch.tensor(v, dtype=torch.float64, requires_grad=True) for v in (WQ, WK, alpha))
    tX, ty = torch.tensor(X), torch.tensor(y)
    tXq, tyq = (tX, ty) if Xq is None else (torch.tensor(Xq), torch.tensor(yq))
    s = (tXq.unsqueeze(-3) @ tq) @ (tX.unsqueeze(-3) @ tk).transpose(-1, -2) / math.sqrt(WQ.shape[-1])
    if Xq is None:
        s = s.masked_fill(torch.eye(s.shape[-1], dtype=torch.bool), float("-inf"))
    heads = (torch.softmax(s, dim=-1) @ ty.unsqueeze(-2).unsqueeze(-1)).squeeze(-1)
    loss = (((ta.unsqueeze(-1) * heads).sum(-2) - tyq) ** 2).mean(-1)
    loss.sum().backward()
    return loss.detach().numpy(), {"WQ": tq.grad.numpy(), "WK": tk.grad.numpy(), "alpha": ta.grad.numpy()}


@pytest.mark.parametrize("case", range(12))
def test_gradient_matches_torch_autograd(case):
    """Leave-one-out (even cases) and split mode (odd), batched, with flat to sharp attention."""
    rng = np.random.default_rng(case)
    batch = [(), (3,), (2, 2)][case % 3]
    H, n, m, d = int(rng.integers(1, 5)), int(rng.integers(3, 12)), int(rng.integers(1, 7)), int(rng.integers(1, 7))
    k = int(rng.integers(1, d + 1))
    scale = [0.3, 1.0, 3.0][case % 3]
    WQ, WK = (scale * rng.standard_normal((*batch, H, d, k)) for _ in range(2))
    alpha = rng.standard_normal((*batch, H))
    X, y = rng.standard_normal((*batch, n, d)), rng.standard_normal((*batch, n))
    split = {} if case % 2 == 0 else {"Xq": rng.standard_normal((*batch, m, d)), "yq": rng.standard_normal((*batch, m))}
    loss, g = loss_and_grad(WQ, WK, alpha, X, y, **split)
    tloss, tg = _torch_loss(WQ, WK, alpha, X, y, split.get("Xq"), split.get("yq"))
    np.testing.assert_allclose(loss, tloss, rtol=GRAD_RTOL, atol=0)
    for key in ("WQ", "WK", "alpha"):
        assert np.abs(g[key] - tg[key]).max() <= GRAD_RTOL * np.abs(tg[key]).max(), key


def test_forward_matches_a_loop_and_leaves_out_the_query():
    rng = np.random.default_rng(5)
    H, n, d, k = 3, 7, 4, 2
    WQ, WK = rng.standard_normal((H, d, k)), rng.standard_normal((H, d, k))
    alpha, X, y = rng.standard_normal(H), rng.standard_normal((n, d)), rng.standard_normal(n)
    out = forward(WQ, WK, alpha, X, X, y, exclude_self=True)
    for j in range(n):
        total = 0.0
        for h in range(H):
            q = X[j] @ WQ[h]
            sc = [math.exp(float(q @ (X[i] @ WK[h])) / math.sqrt(k)) if i != j else 0.0 for i in range(n)]
            est = sum(s * yi for s, yi in zip(sc, y)) / sum(sc)
            assert out["heads"][h, j] == pytest.approx(est, rel=LOOP_RTOL)
            total += alpha[h] * est
        assert out["f"][j] == pytest.approx(total, rel=LOOP_RTOL, abs=1e-15)
    with pytest.raises(VerifyError, match="exclude_self"):
        forward(WQ, WK, alpha, X[:3], X, y, exclude_self=True)


def test_adam_matches_torch_optim():
    rng = np.random.default_rng(2)
    params = {"a": rng.standard_normal((3, 2)), "b": rng.standard_normal(4)}
    tp = {k: torch.tensor(v.copy(), requires_grad=True) for k, v in params.items()}
    opt = torch.optim.Adam(list(tp.values()), lr=0.05, betas=(0.9, 0.999), eps=1e-8)
    state = {}
    for step in range(20):
        grads = {k: np.sin(v * (step + 1)) + v for k, v in params.items()}   # any smooth function
        for k, t in tp.items():
            t.grad = torch.tensor(np.sin(t.detach().numpy() * (step + 1)) + t.detach().numpy())
        training.adam_step(params, grads, state, 0.05)
        opt.step()
    for k in params:
        np.testing.assert_allclose(params[k], tp[k].detach().numpy(), rtol=ADAM_RTOL, atol=1e-15)


def test_training_reaches_the_known_optimum():
    """Points on the unit circle in twins with distinct values: with the query's own key left out,
    the best key is its twin, so the leave-one-out loss has infimum 0; Adam must drive it there."""
    theta = np.repeat(np.linspace(0, 2 * math.pi, 8, endpoint=False), 2)
    X = np.stack([np.cos(theta), np.sin(theta)], axis=1)
    y = np.repeat(np.arange(8, dtype=float), 2)
    rng = np.random.default_rng(0)
    params = {"WQ": 0.5 * rng.standard_normal((2, 2, 2)), "WK": 0.5 * rng.standard_normal((2, 2, 2)),
              "alpha": np.full(2, 0.5)}
    state, losses = {}, []
    for _ in range(400):
        loss, g = loss_and_grad(params["WQ"], params["WK"], params["alpha"], X, y)
        losses.append(float(loss))
        training.adam_step(params, {"WQ": g["WQ"], "WK": g["WK"]}, state, 0.05)
    assert losses[-1] < 1e-3 * losses[0], (losses[0], losses[-1])


def _setting(**kw):
    base = dict(dgp="block", d=4, H=2, d_k=2, init="gaussian", n=12, m=10, sigma=0.1, steps=6, lr=0.05, seeds=2,
                seed=21, record_every=3, queries=5)
    return TrainSetting(**{**base, **kw})


@pytest.fixture
def numpy_path():
    old = nw.get_backend()
    nw.set_backend("numpy")
    yield
    nw.set_backend(old)


@pytest.mark.parametrize("schedule", ["constant", "cosine"])
def test_compiled_path_computes_the_numpy_paths_numbers(schedule):
    """Every target and design the kernel codes, free and fixed weights, one batch: the compiled
    runs against the numpy ones, 20 steps."""
    if nw.get_backend() != "numba":
        pytest.skip("numba is not the backend")
    grid = [_setting(dgp=g, d=8, H=4, design=ds, learn_alpha=la, steps=20, record_every=10, seed=3 + i,
                     schedule=schedule, lr=0.03)
            for i, (g, ds, la) in enumerate((("block", "normal", True), ("block", "torus", False),
                                             ("sin-block", "normal", True), ("single-index", "normal", False),
                                             ("additive", "uniform", True), ("bump", "normal", True),
                                             ("linear", "torus", True), ("zero", "normal", True)))]
    fast = train_many(grid)
    nw.set_backend("numpy")
    try:
        ref = train_many(grid)
    finally:
        nw.set_backend("auto")
    for a, b in zip(fast, ref):
        for key in ("test_mse", "train_mse", "hdi_keys", "hdi_queries", "WQ_path", "WK_path", "alpha_path"):
            np.testing.assert_allclose(getattr(a, key), getattr(b, key), rtol=0, atol=PATHS_ATOL, err_msg=key)


def test_split_mode_streams_are_the_documented_ones_and_chunk_free(numpy_path, monkeypatch):
    """With lr 1e-12 the heads stay at their initial values, so the recorded loss at step t is the
    split-mode MSE of the initial heads on batch t rebuilt from the documented streams: init
    [seed, r, 0], keys [seed, r, 3], their noise [seed, r, 4], queries [seed, r, 5], their noise
    [seed, r, 6]; the chunking of the numpy path's draws changes nothing."""
    s = _setting(lr=1e-12)
    monkeypatch.setattr(training, "CHUNK_STEPS", 4)
    tr = train(s)
    monkeypatch.setattr(training, "CHUNK_STEPS", 50)
    np.testing.assert_array_equal(train(s).train_mse, tr.train_mse)
    dgp = make_dgp("block", d=4, sigma=0.1)
    for r in range(2):
        init = np.random.default_rng(np.random.SeedSequence([s.seed, r, 0]))
        WQ, WK = (init.standard_normal((2, 4, 2)) / 2 for _ in range(2))
        g = [np.random.default_rng(np.random.SeedSequence([s.seed, r, k])) for k in (3, 4, 5, 6)]
        X = g[0].standard_normal((7, 12, 4))
        y = dgp.f(X) + 0.1 * g[1].standard_normal((7, 12))
        Xq = g[2].standard_normal((7, 5, 4))
        yq = dgp.f(Xq) + 0.1 * g[3].standard_normal((7, 5))
        for col, t in enumerate((0, 3, 6)):
            loss, _ = _torch_loss(WQ, WK, np.full(2, 0.5), X[t], y[t], Xq[t], yq[t])
            assert tr.train_mse[r, col] == pytest.approx(float(loss), rel=1e-9)


def test_leave_one_out_streams_fresh_and_fixed(numpy_path):
    """Leave-one-out: the training batch of step t is draw t of [seed, r, 1] (fresh) or draw 0 every
    step (fixed); the held-out MSE at step 0 is the initial heads on the evaluation stream [seed, r, 2],
    computed here by a loop."""
    kw = dict(dgp="additive", d=6, H=3, n=16, m=24, lr=1e-12, steps=8, record_every=4, queries=0, seed=11)
    tr, fixed = train(_setting(**kw)), train(_setting(**kw, data="fixed"))
    dgp = make_dgp("additive", d=6, sigma=0.1)
    for r in range(2):
        init = np.random.default_rng(np.random.SeedSequence([11, r, 0]))
        WQ, WK = (init.standard_normal((3, 6, 2)) / math.sqrt(6) for _ in range(2))
        data = np.random.default_rng(np.random.SeedSequence([11, r, 1]))
        X = data.standard_normal((9, 16, 6))
        y = dgp.f(X) + 0.1 * data.standard_normal((9, 16))
        for col, t in enumerate((0, 4, 8)):
            assert tr.train_mse[r, col] == pytest.approx(float(_torch_loss(WQ, WK, np.full(3, 1 / 3), X[t], y[t])[0]),
                                                         rel=1e-9)
        np.testing.assert_allclose(fixed.train_mse[r], fixed.train_mse[r, 0], rtol=1e-9)
        ev = np.random.default_rng(np.random.SeedSequence([11, r, 2]))
        Xe = ev.standard_normal((16, 6))
        ye = dgp.f(Xe) + 0.1 * ev.standard_normal(16)
        Xq = ev.standard_normal((24, 6))
        f = np.zeros(24)
        for h in range(3):
            for j, x in enumerate(Xq):
                sc = np.array([math.exp(float((x @ WQ[h]) @ (xi @ WK[h])) / math.sqrt(2)) for xi in Xe])
                f[j] += float(sc @ ye / sc.sum()) / 3
        assert tr.test_mse[r, 0] == pytest.approx(float(np.mean((f - dgp.f(Xq)) ** 2)), rel=1e-9)


def test_a_run_does_not_depend_on_its_batch_and_weights_move_only_when_free():
    """train_many batches settings of one size; each run's trace equals the one trained alone, run r
    of a setting with more seeds equals run r with fewer; fixed weights stay 1/H, free ones move."""
    s1, s2 = _setting(learn_alpha=True, steps=20, record_every=10), _setting(dgp="bump", init="haar", seed=99,
                                                                            steps=20, record_every=10)
    together = train_many([s1, s2])
    for s, tr in zip((s1, s2), together):
        np.testing.assert_allclose(tr.test_mse, train(s).test_mse, rtol=1e-13, atol=0)
    more = train(_setting(learn_alpha=True, steps=20, record_every=10, seeds=3))
    np.testing.assert_allclose(more.hdi_keys[:2], together[0].hdi_keys, rtol=0, atol=1e-13)
    assert np.abs(together[0].alpha - 0.5).max() > 1e-2 and np.all(together[0].alpha_path[:, 0] == 0.5)
    assert np.array_equal(together[1].alpha_path, np.full((2, 3, 2), 0.5))
    assert list(together[0].steps) == [0, 10, 20]


def test_c9_standard_errors_recomputed_from_the_runs(quick_run):
    """C9's reading-i settings in the quick run: each paired change (of every diagnostic from its
    initial value, of R² from T to 2T) and each R² mark, mean and SE over the seeds recomputed from
    the per-seed values the report stores, by the textbook formulas, sd (ddof 1) / sqrt(seeds)."""
    def check(stat: dict, values: list[float]) -> None:
        assert stat["mean"] == pytest.approx(statistics.fmean(values), rel=1e-9, abs=1e-15)
        assert stat["se"] == pytest.approx(statistics.stdev(values) / math.sqrt(len(values)), rel=1e-9, abs=1e-15)

    from verify.claims.c9.forms import DIAGNOSTICS

    fig = next(p for p in quick_run("C9")[0].parts if p.id == "nw-heads").numeric.figures
    for row in fig["settings"]:
        for key in DIAGNOSTICS:
            init, half, end = row[key]["runs"]
            for when, runs in (("half", half), ("end", end)):
                check(row[key][when], [b - a for a, b in zip(init, runs)])
        for when in ("init", "half", "end"):
            check(row["r2"][when], row["r2"][when]["runs"])
        check(row["r2"]["change"], [b - a for a, b in zip(row["r2"]["half"]["runs"], row["r2"]["end"]["runs"])])


def _scipy_hdi(W):
    H = len(W)
    return 1 - np.mean([np.mean(np.cos(subspace_angles(W[i], W[j])) ** 2) for i in range(H) for j in range(i + 1, H)])


def test_trace_hdi_matches_scipy_on_the_heads():
    tr = train(_setting(d=6, H=3, init="haar", steps=6, record_every=3))
    for r in range(2):
        for col in (0, -1):
            assert abs(tr.hdi_keys[r, col] - _scipy_hdi(tr.WK_path[r, col])) <= ANGLE_ATOL
            assert abs(tr.hdi_queries[r, col] - _scipy_hdi(tr.WQ_path[r, col])) <= ANGLE_ATOL
        assert abs(tr.hdi_keys[r, -1] - tr.hdi_keys[r, 0]) > 1e-6               # the heads did move


def test_overlaps_match_scipy_subspace_angles():
    rng = np.random.default_rng(3)
    for H, d, k in ((2, 5, 2), (4, 8, 2), (3, 6, 3), (5, 4, 1)):
        W = rng.standard_normal((2, H, d, k)) * rng.uniform(0.1, 10, (2, H, 1, k))   # badly scaled columns
        rho = baseline.overlaps(W)
        for b in range(2):
            for i in range(H):
                for j in range(H):
                    ref = float(np.mean(np.cos(subspace_angles(W[b, i], W[b, j])) ** 2))
                    assert abs(rho[b, i, j] - ref) <= ANGLE_ATOL
        ref_hdi = [1 - np.mean([rho[b, i, j] for i in range(H) for j in range(i + 1, H)]) for b in range(2)]
        np.testing.assert_allclose(baseline.hdi_batch(W), ref_hdi, atol=ANGLE_ATOL)


def test_weighted_overlaps_are_angles_in_the_sigma_inner_product():
    """Weighted overlap = mean cos² of the principal angles in <u, v>_Σ, computed here by
    Σ-orthonormalising each head (Cholesky of WᵀΣW) and the Σ-Gram of the two bases."""
    rng = np.random.default_rng(4)
    d, H, k = 6, 3, 2
    A = rng.standard_normal((d, d))
    sigma = A @ A.T + 0.1 * np.eye(d)
    W = rng.standard_normal((H, d, k))
    F, scales = baseline.metric_factor(sigma)
    np.testing.assert_allclose(F.T @ F, sigma, rtol=1e-12, atol=1e-12)
    rho = baseline.overlaps(W, F)
    for i in range(H):
        for j in range(H):
            Bi = W[i] @ np.linalg.inv(np.linalg.cholesky(W[i].T @ sigma @ W[i])).T
            Bj = W[j] @ np.linalg.inv(np.linalg.cholesky(W[j].T @ sigma @ W[j])).T
            ref = np.sum((Bi.T @ sigma @ Bj) ** 2) / k
            assert abs(rho[i, j] - ref) <= 1e-10


def test_haar_moments_match_monte_carlo():
    rng = np.random.default_rng(7)
    for H, k, d in ((3, 2, 6), (4, 1, 5)):
        R = 4000
        draws = baseline.haar_hdi_draws(rng, H, k, d, R)
        mu, sd = baseline.haar_hdi_moments(H, k, d)
        assert abs(draws.mean() - mu) <= Z_MC * sd / math.sqrt(R)
        assert draws.std(ddof=1) == pytest.approx(sd, rel=SD_RTOL)
    # pairs of one head set are uncorrelated (the variance formula needs it)
    rho = baseline.overlaps(rng.standard_normal((4000, 3, 6, 2)))
    c = np.corrcoef(rho[:, 0, 1], rho[:, 0, 2])[0, 1]
    assert abs(c) <= Z_MC / math.sqrt(4000)
    # d_k = 1: the overlap is u_1² of a uniform unit vector, Beta(1/2, (d−1)/2)
    d = 7
    a, b = 0.5, (d - 1) / 2
    assert baseline.haar_overlap_var(1, d) == pytest.approx(a * b / ((a + b) ** 2 * (a + b + 1)), rel=1e-14)


def test_weighted_baseline_draws_equal_mapped_haar_frames_in_law():
    """Range(F G) and Range(diag(√λ) G) have the same law; compare means over draws."""
    rng = np.random.default_rng(8)
    d, H, k, R = 6, 3, 2, 3000
    A = rng.standard_normal((d, d))
    F, scales = baseline.metric_factor(A @ A.T)
    direct = baseline.hdi_batch(F @ rng.standard_normal((R, H, d, k)))
    fast = baseline.haar_hdi_draws(rng, H, k, d, R, scales=scales)
    se = math.sqrt(direct.var(ddof=1) / R + fast.var(ddof=1) / R)
    assert abs(direct.mean() - fast.mean()) <= Z_MC * se


def test_layer_norm_matches_torch():
    rng = np.random.default_rng(9)
    x, g, b = rng.standard_normal((5, 7)), rng.standard_normal(7), rng.standard_normal(7)
    ref = torch.nn.functional.layer_norm(torch.tensor(x), (7,), torch.tensor(g), torch.tensor(b), eps=1e-12)
    np.testing.assert_allclose(baseline.layer_norm(x, g, b, 1e-12), ref.numpy(), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("kw, name", [
    ({"dgp": "sine"}, "dgp"), ({"init": "zeros"}, "init"), ({"d_k": 7}, "d_k"), ({"H": 1}, "H"),
    ({"n": 2.5}, "n"), ({"lr": -1.0}, "lr"), ({"steps": 0}, "steps"), ({"seed": -3}, "seed"),
    ({"data": "online"}, "data"), ({"learn_alpha": 1}, "learn_alpha"), ({"sigma": float("nan")}, "sigma"),
    ({"queries": -1}, "queries"), ({"design": "sphere"}, "design"), ({"schedule": "step"}, "schedule"),
    ({"n": 4096, "m": 4096, "steps": 1000, "queries": 0}, "setting"),
])
def test_bad_settings_are_refused_by_name(kw, name):
    with pytest.raises(VerifyError) as exc:
        _setting(**kw)
    assert str(exc.value).startswith(f"{name}: ")
    with pytest.raises(VerifyError, match=r"^settings\[0\]: "):
        train_many(["x"])


def test_baseline_refuses_bad_input():
    with pytest.raises(VerifyError, match="W"):
        baseline.overlaps(np.zeros((2, 4, 2)))                      # rank-deficient heads
    with pytest.raises(VerifyError, match="draws"):
        baseline.haar_hdi_draws(np.random.default_rng(0), 12, 64, 4096, 10**6)
    with pytest.raises(VerifyError, match="sigma"):
        baseline.metric_factor(np.array([[1.0, 2.0], [0.0, 1.0]]))
    with pytest.raises(VerifyError, match="sigma"):
        baseline.metric_factor(-np.eye(3))
    with pytest.raises(VerifyError, match="factor"):
        baseline.overlaps(np.ones((2, 3, 1)) + np.eye(3)[None, :, :1], np.eye(4))


_COLD_WARM = """
import json
import numpy as np
from verify.claims.c5 import trained
from verify.claims.c9.layer import LayerSetting, train_layers
from verify.experiments.training import TrainSetting, train_many
from verify.numeric.dgp import make_dgp
from verify.numeric.nw import get_backend, nw_estimate
c5 = trained.train_split(make_dgp("block", d=8, sigma=0.1, design="torus"), H=4, d_k=2, n=128, queries=16,
                         lr_warm=0.05, lr=0.02, gain=3.0, T0=200, T=200, seeds=4, seed=0, m_conv=128)
c9 = train_many([TrainSetting(dgp="block", d=8, H=4, d_k=2, init="gaussian", n=128, m=64, sigma=0.1, steps=600,
                              lr=0.02, seeds=4, seed=0, queries=16, design="torus")])[0]
c9_layer = train_layers([LayerSetting(dgp="linear", design="normal", d=4, H=2, d_k=2, d_v=2, n=16, contexts=8,
                                      steps=150, lr=0.03, seeds=2, seed=0, schedule="cosine")])[0]
rng = np.random.default_rng(3)
q, k, v = rng.standard_normal((64, 8)), rng.standard_normal((700, 8)), rng.standard_normal((700, 3))
nw = [nw_estimate(q * scale, k, v, **kw) for scale in (1.0, 40.0)
      for kw in ({}, {"kernel": "gaussian", "bandwidth": 1.3})]
print(json.dumps({"backend": get_backend(), "C5": c5["WQ"].ravel().tolist(), "C9": c9.WQ.ravel().tolist(),
                  "C9 layer": c9_layer.params["WQ"].ravel().tolist(), "NW": np.concatenate(nw, None).tolist()}))
"""


@pytest.mark.slow  # two processes, the first compiles every kernel it runs
def test_freshly_compiled_and_cached_kernels_give_the_same_bits(tmp_path):
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path)}   # an empty cache: the first process compiles
    runs = [json.loads(subprocess.run([sys.executable, "-c", _COLD_WARM], env=env, capture_output=True, text=True,
                                      check=True).stdout) for _ in range(2)]
    assert runs[0]["backend"] == runs[1]["backend"] == "numba" and any(tmp_path.rglob("*.nbc"))
    for claim in ("C5", "C9", "C9 layer", "NW"):
        cold, warm = np.array(runs[0][claim]), np.array(runs[1][claim])
        assert np.array_equal(warm, cold), claim     # bitwise: the same machine code both times
