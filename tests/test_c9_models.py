"""C9's models against independent computations written here: the attention layer's gradient
against torch.autograd (a torch forward written with einsum), its forward pass against a loop over
heads and tokens, its compiled training against the numpy one, its documented seed streams; the
score forms and their diversity as loops over matrix entries and against scipy's principal angles,
their Haar means against Monte Carlo; population NW heads against the tilted average of a large
sample and Monte Carlo over x, the positive controls' optima against closed forms, Bessel
functions and NW at large n."""

from __future__ import annotations

import functools
import math

import numpy as np
import pytest
import torch
from scipy.linalg import subspace_angles
from scipy.special import iv

from verify.claims.c9 import forms, layer, population
from verify.claims.c9.population import positive_control
from verify.errors import VerifyError
from verify.experiments.training import forward
from verify.numeric import nw
from verify.numeric.dgp import make_dgp

pytestmark = pytest.mark.claim("C9", part="core")

# Hand-written float64 gradient vs torch autograd on the same float64 data: sums of O(C T)
# products of size O(1); measured <= 3e-15 relative to the largest entry. 1e-10 is the bar.
GRAD_RTOL = 1e-10
# Forward vs a loop of exp/sum per head and token: float64 rounding of sums of <= 40 terms.
LOOP_RTOL = 1e-12
# Compiled vs numpy layer training over 12 steps (reassociated sums, the kernel's exp): ~2e-15.
PATHS_ATOL = 1e-12
# Products and sums of O(d²) float64 terms of size O(1): rounding ~1e-15; 1e-12 leaves room.
ATOL = 1e-12
# |estimate − reference| <= Z_MC standard errors (normal tail ~6e-7 per comparison).
Z_MC = 5.0
# Closed forms evaluated in float64 (sums of a few hundred exponentials): rounding ~1e-15.
EXACT_ATOL = 1e-12


# --------------------------------------------------------------------------- the attention layer
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
    P = layer.init_params(rng, lead, H, d, k, v)
    scale = [0.5, 1.0, 4.0][case % 3]                       # flat, moderate and sharp attention
    P = {kk: scale * vv for kk, vv in P.items()}
    Z = rng.standard_normal((*lead, C, n + 1, d + 1))
    Z[..., -1, -1] = 0.0
    y = rng.standard_normal((*lead, C))
    loss, g = layer.loss_and_grad(P, Z, y)
    tloss, tg = _torch_loss(P, Z, y)
    np.testing.assert_allclose(loss, tloss, rtol=GRAD_RTOL, atol=0)
    for key in layer.PARAMS:
        err = np.abs(g[key] - tg[key]).max() / np.abs(tg[key]).max()
        assert err <= GRAD_RTOL, (key, err)
    assert np.all(g["WO"][..., :-1] == 0)                   # the loss reads the y-slot only


def test_forward_matches_a_loop_over_heads_and_tokens():
    rng = np.random.default_rng(7)
    H, d, k, v, C, n = 3, 4, 2, 3, 2, 5
    P = layer.init_params(rng, (), H, d, k, v)
    Z = rng.standard_normal((C, n + 1, d + 1))
    Z[:, -1, -1] = 0.0
    out = layer.forward(P, Z)
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
    dgp = make_dgp("block", d=4, sigma=0.1)
    a, b = np.random.default_rng(1), np.random.default_rng(2)
    Z, y, f = layer.contexts(dgp, a, b, (3,), 5)
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
    base = dict(dgp="block", design="normal", d=4, H=2, d_k=2, d_v=2, n=6, contexts=4, steps=12, lr=0.05, seeds=2,
                seed=5, eval_contexts=16, record_every=4)
    return layer.LayerSetting(**{**base, **kw})


def test_layer_training_compiled_equals_numpy_and_keeps_tied_heads_identical():
    """The compiled runs (a layer and its tied reference on one seed stream, drawn once) against the
    numpy ones; the tied heads' W_Q and W_K stay identical; a run does not depend on its batch."""
    if nw.get_backend() != "numba":
        pytest.skip("numba is not the backend")
    grid = [_setting(d=8, H=4, tied=t, dgp=g, design=ds) for g, ds in (("block", "normal"), ("block", "torus"))
            for t in (False, True)] + [_setting(dgp="single-index", seed=9, schedule="cosine")]
    fast = layer.train_layers(grid[:4])
    nw.set_backend("numpy")
    try:
        ref = layer.train_layers(grid[:4])
    finally:
        nw.set_backend("auto")
    for a, b in zip(fast, ref):
        for key in ("test_mse", "train_mse", "WQ_path", "WK_path", "alpha_path"):
            np.testing.assert_allclose(getattr(a, key), getattr(b, key), rtol=0, atol=PATHS_ATOL, err_msg=key)
    assert np.all(fast[1].params["WQ"] == fast[1].params["WQ"][:, :1])
    assert np.any(fast[0].WQ_path[:, -1, 0] != fast[0].WQ_path[:, -1, 1])
    alone = layer.train_layers([grid[0]])[0]
    np.testing.assert_allclose(alone.test_mse, fast[0].test_mse, rtol=1e-13, atol=0)


def test_initial_record_is_the_initial_layer_on_the_documented_streams():
    """Step 0 records the layer of init stream [seed, r, 0] on the evaluation contexts of stream
    [seed, r, 3] (its points, then their noise); the x-rows of W_Q, W_K; the y-path weights."""
    tr = layer.train_layers([_setting()])[0]
    dgp = make_dgp("block", d=4, sigma=0.1)
    for r in range(2):
        P = layer.init_params(np.random.default_rng(np.random.SeedSequence([5, r, 0])), (), 2, 4, 2, 2)
        ev = np.random.default_rng(np.random.SeedSequence([5, r, 3]))
        Z, _, f = layer.contexts(dgp, ev, ev, (16,), 6)
        assert tr.test_mse[r, 0] == pytest.approx(float(np.mean((layer.forward(P, Z)["yhat"] - f) ** 2)), rel=1e-12)
        np.testing.assert_array_equal(tr.WK_path[r, 0], P["WK"][:, :4])
        assert tr.alpha_path[r, 0] == pytest.approx(np.einsum("hv,hv->h", P["WV"][:, -1], P["WO"][:, :, -1]), rel=1e-12)


def test_the_layer_learns_a_linear_target_in_context():
    """Training works: on f = x_1 (the value path can carry x) the held-out MSE falls well below Var f."""
    tr = layer.train_layers([_setting(dgp="linear", steps=150, lr=0.03, contexts=16, n=16, record_every=50)])[0]
    assert tr.test_mse[:, -1].mean() < 0.5 * tr.test_mse[:, 0].mean() and tr.test_mse[:, -1].mean() < 0.3


@pytest.mark.parametrize("kw, name", [
    ({"dgp": "sine"}, "dgp"), ({"design": "sphere"}, "design"), ({"H": 1}, "H"), ({"d_k": 5}, "d_k"),
    ({"n": 0}, "n"), ({"lr": 0.0}, "lr"), ({"steps": 0}, "steps"), ({"seed": -1}, "seed"), ({"tied": 1}, "tied"),
    ({"schedule": "step"}, "schedule"), ({"d": 5}, "d"), ({"seeds": 10**4, "steps": 10**5}, "setting")])
def test_bad_settings_are_refused_by_name(kw, name):
    with pytest.raises(VerifyError) as exc:
        _setting(**kw)
    assert str(exc.value).startswith(f"{name}: "), str(exc.value)


def test_bad_calls_are_refused_by_name():
    P = layer.init_params(np.random.default_rng(0), (), 2, 3, 2, 2)
    Z = np.ones((2, 3, 4))
    for call, name in ((lambda: layer.loss_and_grad({"WQ": P["WQ"]}, Z, np.ones(2)), "params"),
                       (lambda: layer.forward({**P, "WV": np.ones((2, 4, 3, 1))}, Z), "params.WV"),
                       (lambda: layer.forward(P, np.ones((2, 3, 5))), "Z"),
                       (lambda: layer.loss_and_grad(P, Z, np.ones(3)), "y"),
                       (lambda: layer.forward({**P, "WQ": np.full_like(P["WQ"], np.nan)}, Z), "params.WQ"),
                       (lambda: layer.train_layers(["x"]), r"settings\[0\]"),
                       (lambda: layer.train_layers([_setting(), _setting(n=7)]), "settings")):
        with pytest.raises(VerifyError, match=f"^{name}: "):
            call()


# --------------------------------------------------------------------------- score forms
def _frame(rng, d, k):
    q, r = np.linalg.qr(rng.standard_normal((d, k)))
    return q * np.sign(np.diag(r))


def test_score_forms_and_cos2_match_loops():
    rng = np.random.default_rng(0)
    H, d, k = 3, 5, 2
    WQ, WK = rng.standard_normal((H, d, k)), rng.standard_normal((H, d, k))
    M = forms.score_forms(WQ, WK)
    for h in range(H):
        for i in range(d):
            for j in range(d):
                assert M[h, i, j] == pytest.approx(sum(WQ[h, i, a] * WK[h, j, a] for a in range(k)), abs=ATOL)
    c2 = forms.form_cos2(WQ, WK)
    for h in range(H):
        for g in range(H):
            dot = sum(M[h, i, j] * M[g, i, j] for i in range(d) for j in range(d))
            nh = sum(M[h, i, j] ** 2 for i in range(d) for j in range(d))
            ng = sum(M[g, i, j] ** 2 for i in range(d) for j in range(d))
            assert c2[h, g] == pytest.approx(dot * dot / (nh * ng), abs=ATOL)
    div = 1 - np.mean([c2[h, g] for h in range(H) for g in range(h + 1, H)])
    assert forms.form_diversity(WQ, WK) == pytest.approx(div, abs=ATOL)


def test_form_subspace_hdi_is_the_product_of_query_and_key_overlaps():
    rng = np.random.default_rng(1)
    H, d, k = 4, 6, 2
    WQ, WK = rng.standard_normal((H, d, k)), rng.standard_normal((H, d, k))

    def rho(A, B):
        return float(np.mean(np.cos(subspace_angles(A, B)) ** 2))

    ref = 1 - np.mean([rho(WQ[h], WQ[g]) * rho(WK[h], WK[g]) for h in range(H) for g in range(h + 1, H)])
    dg = forms.diagnostics(WQ[None], WK[None])
    assert dg["form_subspace_hdi"][0] == pytest.approx(ref, abs=ATOL)
    ref_k = 1 - np.mean([rho(WK[h], WK[g]) for h in range(H) for g in range(h + 1, H)])
    assert dg["key_hdi"][0] == pytest.approx(ref_k, abs=ATOL)


def test_shared_keys_with_orthogonal_queries_differ_only_in_queries_and_forms():
    """W_K^h = W_K for all h, W_Q^h on disjoint coordinate blocks: key HDI 0, query HDI 1, score-form
    diversity 1, form-subspace HDI 1; identical heads: every diagnostic 0."""
    H, d = 4, 8
    E = np.eye(d)
    WQ = np.stack([E[:, 2 * h:2 * h + 2] for h in range(H)])
    WK = np.stack([E[:, :2]] * H)
    dg = forms.diagnostics(WQ, WK)
    assert dg["key_hdi"] == pytest.approx(0.0, abs=ATOL)
    for key in ("query_hdi", "form_diversity", "form_subspace_hdi"):
        assert dg[key] == pytest.approx(1.0, abs=ATOL), key
    same = forms.diagnostics(WK, WK)
    for key, v in same.items():
        assert v == pytest.approx(0.0, abs=ATOL), key


def test_haar_form_means_match_monte_carlo_of_frames_built_here():
    """cos²(U Vᵀ, U' V'ᵀ) for independent Haar frames has mean 1/d²; ρ_Q ρ_K mean (d_k/d)²."""
    rng = np.random.default_rng(2)
    for d, k in ((6, 2), (8, 2), (5, 1)):
        N = 6000
        c2, pr = np.empty(N), np.empty(N)
        for i in range(N):
            U, V, U2, V2 = (_frame(rng, d, k) for _ in range(4))
            M, M2 = U @ V.T, U2 @ V2.T
            c2[i] = np.sum(M * M2) ** 2 / (np.sum(M * M) * np.sum(M2 * M2))
            pr[i] = np.sum((U.T @ U2) ** 2) / k * np.sum((V.T @ V2) ** 2) / k
        means = {key: v["haar_mean"] for key, v in forms.haar_baselines(2, k, d, seed=0, draws=2).items()}
        assert abs((1 - c2.mean()) - means["form_diversity"]) <= Z_MC * c2.std(ddof=1) / math.sqrt(N)
        assert abs((1 - pr.mean()) - means["form_subspace_hdi"]) <= Z_MC * pr.std(ddof=1) / math.sqrt(N)


def test_haar_baselines_draws_agree_with_the_closed_mean_and_bounds():
    b = forms.haar_baselines(4, 2, 8, seed=3, draws=4000)
    for key in ("form_diversity", "form_subspace_hdi"):
        e = b[key]
        assert abs(e["haar_mean_drawn"] - e["haar_mean"]) <= Z_MC * e["haar_sd"] / math.sqrt(4000)
    assert b["key_hdi"]["haar_mean"] == pytest.approx(1 - 2 / 8)
    assert forms.form_bound(4, 8) == 1.0
    # Welch: H unit vectors of R^N, H > N, have mean cos² >= (H/N − 1)/(H − 1); equality for N+1 simplex vectors
    H, N = 5, 4
    assert forms.form_bound(H, 2) == pytest.approx(1 - (H / N - 1) / (H - 1))
    again = forms.haar_baselines(4, 2, 8, seed=3, draws=4000)
    assert again == b


@pytest.mark.parametrize("call, name", [
    (lambda: forms.score_forms(np.ones((2, 3, 2)), np.ones((2, 4, 2))), "WK"),
    (lambda: forms.form_cos2(np.zeros((2, 3, 1)), np.ones((2, 3, 1))), "WQ, WK"),
    (lambda: forms.score_forms(np.ones((1, 3, 2)), np.ones((1, 3, 2))), "WQ"),
    (lambda: forms.form_bound(1, 3), "H"),
    (lambda: forms.haar_baselines(2, 4, 3, seed=0), "d_k, draws"),
    (lambda: forms.haar_baselines(2, 1, 3, seed=0, draws=10**9), "d_k, draws"),
    (lambda: forms.diagnostics("x", np.ones((2, 3, 1))), "WQ")])
def test_forms_bad_input_names_the_argument(call, name):
    with pytest.raises(VerifyError, match=f"^{name}: "):
        call()


# --------------------------------------------------------------------------- population heads, positive controls
def _reference_heads(name, d, A, x):
    """E f(X + A x) for X ~ N(0, I), written here: the block target is bilinear in disjoint pairs, so
    E f(X + a) = f(a); for sin-block E sin(Z + a) = e^{−1/2} sin a in each coordinate."""
    a = x @ A.T
    f = make_dgp(name, d=d, sigma=1.0).f
    return f(a) if name == "block" else math.exp(-1.0) * f(a)


@pytest.mark.parametrize("name", population.TARGETS)
def test_population_mse_matches_monte_carlo_over_x(name):
    rng = np.random.default_rng(5)
    d, H, k, N = 8, 3, 2, 400_000
    WQ, WK = 0.6 * rng.standard_normal((H, d, k)), 0.6 * rng.standard_normal((H, d, k))
    alpha = rng.standard_normal(H)
    A = np.stack([WK[h] @ WQ[h].T / math.sqrt(k) for h in range(H)])
    x = rng.standard_normal((N, d))
    ens = sum(alpha[h] * _reference_heads(name, d, A[h], x) for h in range(H))
    err = (ens - make_dgp(name, d=d, sigma=1.0).f(x)) ** 2
    got = float(population.population_mse(name, WQ, WK, alpha))
    assert abs(got - err.mean()) <= Z_MC * err.std(ddof=1) / math.sqrt(N) + EXACT_ATOL, (got, err.mean())


def test_population_mse_is_batched_per_stack():
    rng = np.random.default_rng(6)
    WQ, WK = rng.standard_normal((2, 2, 3, 4, 8, 2))
    al = rng.standard_normal((2, 3, 4))
    out = population.population_mse("block", WQ, WK, al)
    assert out.shape == (2, 3)
    one = population.population_mse("block", WQ[1, 2], WK[1, 2], al[1, 2])
    assert out[1, 2] == pytest.approx(float(one), rel=1e-14)


@functools.cache
def _optimum(target, design):
    pc = positive_control(target, design, n=64, replicates=4, m=16)
    return {(c["config"], c["head_weights"]): c for c in pc["configs"]}


#: Circle heads (κ = 8) tend to A_2(κ) sin 2θ_b / 2 with A_2 = I_2/I_0 (Bessel functions).
A2 = iv(2, 8.0) / iv(0, 8.0)


@pytest.mark.parametrize("target, design, config, hw, mse", [
    ("block", "normal", "block heads", "free", 0.0), ("block", "normal", "shared keys, orthogonal queries", "free", 0.0),
    ("block", "normal", "block heads, λ = 2", "fixed", 0.0), ("block", "normal", "identical heads", "free", 0.75),
    ("sin-block", "normal", "block heads", "free", 0.0), ("sin-block", "normal", "identical heads", "free", 0.75),
    ("block", "torus", "circle heads", "free", 0.0),
    ("block", "torus", "shared key circle, orthogonal query circles", "free", 0.0),
    ("block", "torus", "circle heads", "fixed", (1 - A2 / 4) ** 2 / 2), ("block", "torus", "identical heads", "free", 0.375)])
def test_population_optima_in_closed_form(target, design, config, hw, mse):
    """Block heads (free α; α = 1/H at λ = sqrt(H) = 2 on the block target) and shared keys with orthogonal
    queries reach population MSE 0; identical heads leave 3 of the 4 blocks, 3/4 of Var f; circle heads
    reach 0 with α = 1/A_2, and with α = 1/4 leave (1 − A_2/4)² Var f (Var f = 1/2)."""
    row = _optimum(target, design)[config, hw]
    assert row["population_mse"] == pytest.approx(mse, rel=0 if design == "normal" else 1e-10, abs=EXACT_ATOL)
    if config == "shared keys, orthogonal queries":
        assert row["key_hdi"] == pytest.approx(0.0, abs=EXACT_ATOL) and row["form_diversity"] == pytest.approx(1.0)


def test_gaussian_sin_block_optimum_with_fixed_weights():
    """α = 1/H: the golden-section scale is the minimum of a grid computed here (MSE(λ) written from the
    closed form of two-sine products)."""
    opt = _optimum("sin-block", "normal")
    fixed = next(v for (c, hw), v in opt.items() if hw == "fixed")
    # with heads λ P_b and α = 1/4: F − f = c Σ_b [e^{-1}/4 sin(λx)sin(λy) − sin x sin y], blocks independent:
    # MSE = B c² E[(e^{-1}/4 sin λX sin λY − sin X sin Y)²],
    # E sin(uX) sin(vX) = (e^{−(u−v)²/2} − e^{−(u+v)²/2})/2
    v = ((1 - math.exp(-2)) / 2) ** 2

    def S(u, w):
        return (math.exp(-(u - w) ** 2 / 2) - math.exp(-(u + w) ** 2 / 2)) / 2

    def mse(lam):
        a = math.exp(-1) / 4
        return (a * a * S(lam, lam) ** 2 - 2 * a * S(lam, 1) ** 2 + S(1, 1) ** 2) / v    # B c² = 1/v

    grid = np.linspace(0.05, 4.0, 4000)
    best = min(mse(g) for g in grid)
    assert fixed["population_mse"] == pytest.approx(best, abs=1e-6)
    assert fixed["population_mse"] > 0.5          # no scale lets four bounded heads at weight 1/4 fit f


def test_positive_control_optima_at_large_n_by_monte_carlo():
    """The population optimum is reached by the NW ensemble itself as n grows: block heads with a
    small tilt λ = 0.5 and α = 1/λ² (Gaussian design), circle heads with α = 1/A_2(κ) (torus); identical
    heads stay near 3/4 of Var f."""
    rng = np.random.default_rng(8)
    s, E, m = 1 / math.sqrt(2), np.eye(8), 64
    # Gaussian: A_h = s g² P_b = λ P_b with g² = λ/s; torus: κ = s g² r² = 8
    cases = (("normal", 0.5 / s, 4.0, 200_000, 0.02), ("torus", 8.0 / (s * 2.0), 1 / A2, 50_000, 0.01))
    for design, g2, alpha, n, tol in cases:
        WQ = np.stack([math.sqrt(g2) * E[:, 2 * h:2 * h + 2] for h in range(4)])
        dgp = make_dgp("block", d=8, sigma=0.1, design=design)
        X = dgp.sample_x(rng, (n,))
        y = dgp.f(X) + 0.1 * rng.standard_normal(n)
        xq = dgp.sample_x(rng, (m,))
        good = np.mean((forward(WQ, WQ, np.full(4, alpha), xq, X, y)["f"] - dgp.f(xq)) ** 2)
        assert good < tol, (design, good)
        if design == "normal":
            same = np.repeat(WQ[:1], 4, axis=0)
            assert np.mean((forward(same, same, np.full(4, 1.0), xq, X, y)["f"] - dgp.f(xq)) ** 2) > 0.5


@pytest.mark.parametrize("call, name", [
    (lambda: population.population_mse("sine", np.ones((2, 4, 2)), np.ones((2, 4, 2)), np.ones(2)), "name"),
    (lambda: population.population_mse("block", np.ones((2, 5, 2)), np.ones((2, 5, 2)), np.ones(2)), "WK"),
    (lambda: population.population_mse("block", np.ones((2, 4, 2)), np.ones((3, 4, 2)), np.ones(2)), "WK"),
    (lambda: population.population_mse("block", np.ones((2, 4, 2)), np.ones((2, 4, 2)), np.ones(3)), "alpha"),
    (lambda: population.population_mse("block", np.full((2, 4, 2), np.nan), np.ones((2, 4, 2)), np.ones(2)), "WQ"),
    (lambda: positive_control("bump", "normal"), "target"),
    (lambda: positive_control("block", "sphere"), "design"),
    (lambda: positive_control("sin-block", "torus"), "target"),
    (lambda: positive_control("block", "normal", n=1), "n")])
def test_population_bad_input_names_the_argument(call, name):
    with pytest.raises(VerifyError, match=f"^{name}: "):
        call()
