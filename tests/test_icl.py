"""verify.experiments.icl (C9 reading iii) against independent computations written here: the
layer's gradient against torch.autograd (float64, a torch forward written here with einsum), the
forward pass against a loop over heads and tokens, the token layout, the documented seed streams,
independence of a run from its batch and from the chunking of the data, and bad input."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from verify.errors import VerifyError
from verify.experiments import icl

# Hand-written float64 gradient vs torch autograd on the same float64 data: sums of O(C T)
# products of size O(1); measured <= 3e-15 relative to the largest entry. 1e-10 is the bar.
GRAD_RTOL = 1e-10
# Forward vs a loop of exp/sum per head and token: float64 rounding of sums of <= 40 terms.
LOOP_RTOL = 1e-12


def _torch_loss(P, Z, y):
    T = {k: torch.tensor(v, dtype=torch.float64, requires_grad=True) for k, v in P.items()}
    tZ, ty = torch.tensor(Z), torch.tensor(y)
    k = P["WQ"].shape[-1]
    zq = tZ[..., -1, :]
    q = torch.einsum("...cp,...hpk->...chk", zq, T["WQ"])
    K = torch.einsum("...ctp,...hpk->...chtk", tZ, T["WK"])
    V = torch.einsum("...ctp,...hpv->...chtv", tZ, T["WV"])
    w = torch.softmax(torch.einsum("...chtk,...chk->...cht", K, q) / math.sqrt(k), dim=-1)
    o = torch.einsum("...cht,...chtv->...chv", w, V)
    out = zq + torch.einsum("...chv,...hvp->...cp", o, T["WO"])
    loss = ((out[..., -1] - ty) ** 2).mean(-1)
    loss.sum().backward()
    return loss.detach().numpy(), {k: t.grad.numpy() for k, t in T.items()}


@pytest.mark.parametrize("case", range(6))
def test_gradient_matches_torch_autograd(case):
    rng = np.random.default_rng(case)
    lead = [(), (3,), (2, 2)][case % 3]
    H, d, k, v = int(rng.integers(1, 4)), int(rng.integers(1, 6)), int(rng.integers(1, 4)), int(rng.integers(1, 4))
    C, n = int(rng.integers(1, 6)), int(rng.integers(1, 9))
    P = icl.init_params(rng, lead, H, d, k, v)
    scale = [0.5, 1.0, 4.0][case % 3]                       # flat, moderate and sharp attention
    P = {kk: scale * vv for kk, vv in P.items()}
    Z = rng.standard_normal((*lead, C, n + 1, d + 1))
    Z[..., -1, -1] = 0.0
    y = rng.standard_normal((*lead, C))
    loss, g = icl.loss_and_grad(P, Z, y)
    tloss, tg = _torch_loss(P, Z, y)
    np.testing.assert_allclose(loss, tloss, rtol=GRAD_RTOL, atol=0)
    for key in icl.PARAMS:
        err = np.abs(g[key] - tg[key]).max() / np.abs(tg[key]).max()
        assert err <= GRAD_RTOL, (key, err)
    assert np.all(g["WO"][..., :-1] == 0)                   # the loss reads the y-slot only


def test_forward_matches_a_loop_over_heads_and_tokens():
    rng = np.random.default_rng(7)
    H, d, k, v, C, n = 3, 4, 2, 3, 2, 5
    P = icl.init_params(rng, (), H, d, k, v)
    Z = rng.standard_normal((C, n + 1, d + 1))
    Z[:, -1, -1] = 0.0
    out = icl.forward(P, Z)
    for c in range(C):
        zq = Z[c, -1]
        total = zq.copy()
        for h in range(H):
            q = zq @ P["WQ"][h]
            sc = [math.exp(float(q @ (Z[c, t] @ P["WK"][h])) / math.sqrt(k)) for t in range(n + 1)]
            o = sum(s * (Z[c, t] @ P["WV"][h]) for t, s in enumerate(sc)) / sum(sc)
            total = total + o @ P["WO"][h]
        np.testing.assert_allclose(out["out"][c], total, rtol=LOOP_RTOL, atol=1e-15)
        assert out["yhat"][c] == pytest.approx(total[-1], rel=LOOP_RTOL, abs=1e-15)


def test_contexts_are_tokens_with_the_query_last_and_its_value_hidden():
    from verify.numeric.dgp import make_dgp

    dgp = make_dgp("block", d=4, sigma=0.1)
    a, b = np.random.default_rng(1), np.random.default_rng(2)
    Z, y, f = icl.contexts(dgp, a, b, (3,), 5)
    assert Z.shape == (3, 6, 5)
    a2, b2 = np.random.default_rng(1), np.random.default_rng(2)
    x = dgp.sample_x(a2, (3, 6))
    eps = b2.standard_normal((3, 6))
    np.testing.assert_array_equal(Z[..., :4], x)
    np.testing.assert_allclose(Z[:, :5, 4], dgp.f(x[:, :5]) + 0.1 * eps[:, :5], rtol=1e-15)
    assert np.all(Z[:, -1, -1] == 0)
    np.testing.assert_allclose(f, dgp.f(x[:, -1]), rtol=1e-15)
    np.testing.assert_allclose(y, f + 0.1 * eps[:, -1], rtol=1e-15)


def _setting(**kw):
    base = dict(dgp="block", design="normal", d=4, H=2, d_k=2, d_v=2, n=6, contexts=4, steps=8, lr=0.05, seeds=3, seed=5,
                eval_contexts=16, record_every=4)
    return icl.ICLSetting(**{**base, **kw})


def test_training_is_reproducible_batch_and_chunk_independent(monkeypatch):
    s1, s2 = _setting(), _setting(dgp="single-index", seed=9)
    a = icl.train_icl([s1])[0]
    again = icl.train_icl([s1])[0]
    together = icl.train_icl([s1, s2])
    for key in ("key_hdi", "query_hdi", "form_diversity", "test_mse", "train_mse", "alpha"):
        assert np.array_equal(getattr(a, key), getattr(again, key)), key
        np.testing.assert_allclose(getattr(together[0], key), getattr(a, key), rtol=1e-12, atol=1e-14)
    assert list(a.steps) == [0, 4, 8]
    monkeypatch.setattr(icl, "CHUNK_STEPS", 3)
    chunked = icl.train_icl([s1])[0]
    np.testing.assert_allclose(chunked.test_mse, a.test_mse, rtol=1e-12, atol=1e-14)
    more = icl.train_icl([_setting(seeds=4)])[0]
    np.testing.assert_allclose(more.test_mse[:3], a.test_mse, rtol=1e-12, atol=1e-14)


def test_initial_record_is_the_initial_layer_on_the_documented_streams():
    """Step 0 records the layer of init stream [seed, r, 0] on the evaluation contexts of stream
    [seed, r, 3]; its diagnostics are those of the x-rows of W_Q, W_K."""
    from verify.experiments.forms import diagnostics
    from verify.numeric.dgp import make_dgp

    s = _setting(seeds=2)
    tr = icl.train_icl([s])[0]
    dgp = make_dgp("block", d=4, sigma=0.1)
    for r in range(2):
        P = icl.init_params(np.random.default_rng(np.random.SeedSequence([s.seed, r, 0])), (), 2, 4, 2, 2)
        ev = np.random.default_rng(np.random.SeedSequence([s.seed, r, 3]))
        Z, _, f = icl.contexts(dgp, ev, ev, (16,), 6)
        assert tr.test_mse[r, 0] == pytest.approx(float(np.mean((icl.forward(P, Z)["yhat"] - f) ** 2)), rel=1e-12)
        dg = diagnostics(P["WQ"][:, :4], P["WK"][:, :4])
        assert tr.key_hdi[r, 0] == pytest.approx(float(dg["key_hdi"]), abs=1e-12)
        assert tr.alpha[r, 0] == pytest.approx(np.einsum("hv,hv->h", P["WV"][:, -1], P["WO"][:, :, -1]), rel=1e-12)


def test_the_layer_learns_a_linear_target_in_context():
    """A sanity check that training works: on f = x_1 (the value path can carry x) the held-out
    MSE falls well below Var f = 1."""
    tr = icl.train_icl([_setting(dgp="linear", d=4, steps=150, lr=0.03, contexts=16, n=16, seeds=2,
                                 record_every=50)])[0]
    assert tr.test_mse[:, -1].mean() < 0.5 * tr.test_mse[:, 0].mean() and tr.test_mse[:, -1].mean() < 0.3


def test_c9_icl_quick_reports_every_diagnostic_against_its_baseline():
    r = icl.c9_icl("quick", seed=0)
    import json

    json.dumps(r, allow_nan=False)
    assert {s["target"] for s in r["settings"]} == {"block", "single-index"}
    for s in r["settings"]:
        for k in ("key_hdi", "query_hdi", "form_diversity", "form_subspace_hdi"):
            e = s[k]
            assert {"mean", "se", "haar_mean", "haar_sd", "bound", "end_z_vs_haar"} <= set(e)
            assert len(s["trajectory"][k]) == len(s["steps_recorded"])
        assert s["seeds"] >= 8 and "converged" in s["convergence"]
    assert set(r["design"]) >= {"head_weights", "kernel_scale", "n", "steps", "convergence", "seeds", "diagnostic"}


@pytest.mark.parametrize("kw, name", [
    ({"dgp": "sine"}, "dgp"), ({"design": "sphere"}, "design"), ({"H": 1}, "H"), ({"d_k": 5}, "d_k"),
    ({"n": 0}, "n"), ({"lr": 0.0}, "lr"), ({"steps": 0}, "steps"), ({"seed": -1}, "seed"),
    ({"schedule": "step"}, "schedule"), ({"dgp": "block", "d": 5}, "d"),
    ({"seeds": 10**4, "steps": 10**5}, "setting"),
])
def test_bad_settings_are_refused_by_name(kw, name):
    with pytest.raises(VerifyError) as exc:
        _setting(**kw)
    assert str(exc.value).startswith(f"{name}: "), str(exc.value)


def test_bad_calls_are_refused_by_name():
    P = icl.init_params(np.random.default_rng(0), (), 2, 3, 2, 2)
    Z = np.ones((2, 3, 4))
    with pytest.raises(VerifyError, match="^params: "):
        icl.loss_and_grad({"WQ": P["WQ"]}, Z, np.ones(2))
    with pytest.raises(VerifyError, match="^params.WV: "):
        icl.forward({**P, "WV": np.ones((2, 4, 3, 1))}, Z)
    with pytest.raises(VerifyError, match="^Z: "):
        icl.forward(P, np.ones((2, 3, 5)))
    with pytest.raises(VerifyError, match="^y: "):
        icl.loss_and_grad(P, Z, np.ones(3))
    with pytest.raises(VerifyError, match="^params.WQ: "):
        icl.forward({**P, "WQ": np.full_like(P["WQ"], np.nan)}, Z)
    with pytest.raises(VerifyError, match=r"^settings\[0\]: "):
        icl.train_icl(["x"])
    with pytest.raises(VerifyError, match="^settings: "):
        icl.train_icl([_setting(), _setting(n=7)])
    with pytest.raises(VerifyError, match="^size: "):
        icl.c9_icl("huge")
