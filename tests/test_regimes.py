"""verify.experiments.regimes against computations written here: Var f by Monte Carlo over the
design, R² from a Monte Carlo of the ensemble's MSE, the fixed-design MSE as a brute-force loop,
the von Mises smoothing against Bessel functions (scipy.special), the torus population MSE
against the Jacobi-Anger series and against NW at large n, and the regimes' controls."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from scipy.special import iv, jv

from verify.errors import VerifyError
from verify.experiments import regimes as G
from verify.io import jsonable
from verify.numeric.dgp import make_dgp

Z_MC = 5.0
# Quadrature on 512 points vs Bessel series: both ~1e-15 for κ <= 16; the series' tail (k > 20)
# is below 1e-20 for ω r <= 3.
QUAD_ATOL = 1e-12


def test_paired_mse_against_a_monte_carlo_of_the_ensemble():
    """The MSE of an ensemble of two circle heads, estimated here by Monte Carlo (fresh designs, NW
    loop over queries), against the package's paired_mse in law."""
    rng = np.random.default_rng(3)
    dgp = make_dgp("single-index", d=6, sigma=0.2, design="torus", freq=1.0)
    WQ, WK = G.circle_heads([[0], [1]], 6, gain=1.5)
    reps = []
    for _ in range(40):
        X = dgp.sample_x(rng, (200,))
        y = dgp.f(X) + 0.2 * rng.standard_normal(200)
        xq = dgp.sample_x(rng, (50,))
        est = 0
        for h in range(2):
            s = (xq @ WQ[h]) @ (X @ WK[h]).T / math.sqrt(2)
            w = np.exp(s - s.max(1, keepdims=True))
            est = est + 0.5 * (w @ y) / w.sum(1)
        reps.append(np.mean((est - dgp.f(xq)) ** 2))
    mse = float(np.mean(reps))
    pm = G.paired_mse(dgp, {"a": (WQ, WK, np.full(2, 0.5), 1 / math.sqrt(2))}, n=200, R=40, m=50, seed=4)["a"]["mse"]
    se = math.sqrt(np.var(reps, ddof=1) / 40 + pm.var(ddof=1) / 40)
    assert abs(pm.mean() - mse) <= Z_MC * se


def test_paired_mse_matches_a_brute_force_loop():
    """Replicate r: design and evaluation points from SeedSequence([seed, r]); MSE = mean over x of
    (Σ α_h Σ_i w_i^h f(x_i) − f(x))² + σ² Σ_i (Σ_h α_h w_i^h)², by loops."""
    dgp = make_dgp("single-index", d=4, sigma=0.3, design="torus")
    WQ, WK = G.circle_heads([[0, 1], [1, 0]], 4, gain=1.2)
    alpha = np.array([0.7, 0.3])
    out = G.paired_mse(dgp, {"c": (WQ, WK, alpha, 0.4)}, n=7, R=3, m=5, seed=9)["c"]
    for r in range(3):
        rng = np.random.default_rng(np.random.SeedSequence([9, r]))
        X = dgp.sample_x(rng, (7,))
        xe = dgp.sample_x(rng, (5,))
        tot = 0.0
        for x in xe:
            mean, wsum = 0.0, np.zeros(7)
            for h in range(2):
                sc = [math.exp(0.4 * float((x @ WQ[h]) @ (xi @ WK[h]))) for xi in X]
                w = np.array(sc) / sum(sc)
                mean += alpha[h] * float(w @ dgp.f(X))
                wsum += alpha[h] * w
            tot += (mean - float(dgp.f(x))) ** 2 + 0.09 * float(wsum @ wsum)
        assert out["mse"][r] == pytest.approx(tot / 5, rel=1e-11)


@pytest.mark.parametrize("kappa", [0.5, 2.0, 8.0, 32.0])
def test_von_mises_smoothing_multiplies_harmonics_by_bessel_ratios(kappa):
    t = 2 * math.pi * np.arange(G.QUAD_POINTS) / G.QUAD_POINTS
    for mm in (1, 2, 3, 5):
        got = G.von_mises_smooth(np.cos(mm * t + 0.3), kappa)
        np.testing.assert_allclose(got, iv(mm, kappa) / iv(0, kappa) * np.cos(mm * t + 0.3), atol=QUAD_ATOL)


def test_torus_population_mse_against_the_jacobi_anger_series():
    """sin(ω r cos θ) = 2 Σ_k (−1)^k J_{2k+1}(ω r) cos((2k+1)θ): a head on circle 0 tends to the series
    with each harmonic m multiplied by I_m(κ)/I_0(κ); the ensemble (1/H of it when one of H heads
    sees circle 0) has MSE Σ_m c_m² (1 − β A_m)²/2."""
    w, r, kappa = 2.0, math.sqrt(2.0), 4.0
    c = {2 * k + 1: 2 * (-1) ** k * jv(2 * k + 1, w * r) for k in range(20)}

    def series(beta):
        return sum(cm**2 * (1 - beta * iv(mm, kappa) / iv(0, kappa)) ** 2 / 2 for mm, cm in c.items())

    heads_shared = [[(0, 0), (1, 1)], [(0, 0), (2, 2)], [(0, 0), (3, 3)]]
    heads_orth = [[(0, 0), (1, 1)], [(2, 2), (3, 3)], [(4, 4), (5, 5)]]
    a = np.full(3, 1 / 3)
    assert G.torus_population_mse("single-index", 14, heads_shared, a, kappa) == pytest.approx(series(1.0), abs=1e-12)
    assert G.torus_population_mse("single-index", 14, heads_orth, a, kappa) == pytest.approx(series(1 / 3), abs=1e-12)


@pytest.mark.slow   # 20 000 keys per design (seconds)
def test_torus_population_mse_is_the_large_n_limit():
    """NW at large n on the shared configuration: the MSE tends to the population value."""
    w, r, kappa = 2.0, math.sqrt(2.0), 4.0
    c = {2 * k + 1: 2 * (-1) ** k * jv(2 * k + 1, w * r) for k in range(20)}
    shared = sum(cm**2 * (1 - iv(mm, kappa) / iv(0, kappa)) ** 2 / 2 for mm, cm in c.items())
    a = np.full(3, 1 / 3)
    dgp = make_dgp("single-index", d=14, sigma=0.1, design="torus")
    WQ, WK = G.circle_heads([[0, 1], [0, 2], [0, 3]], 14, gain=G._gain(kappa, 4))
    pm = G.paired_mse(dgp, {"s": (WQ, WK, a, 0.5)}, n=20_000, R=4, m=64, seed=1)["s"]["mse"]
    assert abs(pm.mean() - shared) <= 0.01 + Z_MC * pm.std(ddof=1) / 2


#: Monte Carlo query points and midpoint nodes of the independent population computation below:
#: the MSE's Monte Carlo standard error is ~2 % of it, the 1024-node midpoint rule (spectrally
#: accurate on the circle) exact to ~1e-14 for κ = 3.
POP_MC_POINTS, POP_NODES = 2000, 1024


def _population_mse_by_monte_carlo(g, heads, alpha, kappa, B, seed):
    """E_θ (Σ_h α_h Σ_(q,k) (P_κ g_k)(θ_q) − Σ_b g_b(θ_b))² over θ uniform on the B circles, by Monte
    Carlo over θ (no independence of the circles assumed) with P_κ g by a midpoint rule of its own."""
    rng = np.random.default_rng(seed)
    theta = rng.uniform(0, 2 * math.pi, (POP_MC_POINTS, B))
    phi = (np.arange(POP_NODES) + 0.5) * 2 * math.pi / POP_NODES

    kernels = {}
    for q in range(B):
        K = np.exp(kappa * np.cos(theta[:, q, None] - phi[None, :]))
        kernels[q] = K / K.sum(axis=1, keepdims=True)
    est = sum(a * sum(kernels[q] @ g[k](phi) for q, k in pairs) for a, pairs in zip(alpha, heads))
    err = est - sum(g[b](theta[:, b]) for b in range(B))
    sq = err**2
    return sq.mean(), sq.std(ddof=1) / math.sqrt(sq.size)


@pytest.mark.parametrize("heads, alpha", [
    ([[(0, 0), (1, 1)], [(1, 1), (2, 2)], [(3, 3), (0, 0)]], (0.5, 0.3, 0.4)),      # overlapping circles
    ([[(0, 0)], [(2, 3)], [(1, 1), (3, 2)]], (1.0, -0.5, 0.7)),                   # query ≠ key circles
])
def test_torus_population_mse_against_monte_carlo(heads, alpha):
    """The block target sin(2θ_b)/sqrt(B) on 4 circles: the quadrature's population MSE of heads that
    share circles, read other circles than they query, with free weights, against Monte Carlo."""
    B, kappa = 4, 3.0
    g = [lambda t: np.sin(2 * t) / math.sqrt(B)] * B     # x_{2b-1} x_{2b} = r² cos θ sin θ = sin 2θ
    got = G.torus_population_mse("block", 2 * B, heads, np.asarray(alpha), kappa)
    mc, se = _population_mse_by_monte_carlo(g, heads, alpha, kappa, B, seed=3)
    assert abs(got - mc) <= Z_MC * se


def test_circle_heads_have_equal_key_norms_and_the_stated_concentration():
    dgp = make_dgp("zero", d=8, design="torus")
    x = dgp.sample_x(np.random.default_rng(0), (50,))
    WQ, WK = G.circle_heads([[0, 2], [1, 3]], 8, query_circles=[[1, 2], [0, 3]], gain=1.7)
    for h in range(2):
        np.testing.assert_allclose(np.linalg.norm(x @ WK[h], axis=1), 1.7 * math.sqrt(2) * math.sqrt(2), rtol=1e-13)
    # score of head 0 between x and x_i: gain² r² (cos(θ_1 − θ'_0) + cos(θ_2 − θ'_2))
    t = np.arctan2(x[:, 1::2], x[:, 0::2])
    s = (x[0] @ WQ[0]) @ (x[1] @ WK[0])
    assert s == pytest.approx(1.7**2 * 2 * (math.cos(t[0, 1] - t[1, 0]) + math.cos(t[0, 2] - t[1, 2])), rel=1e-12)


def test_jsonable_finite_gives_strict_json():
    out = jsonable({1: np.float64(2.5), "a": (np.int64(3), np.array([1.0, np.inf])), "b": np.bool_(True),
                   "c": float("nan")}, finite=True)
    assert out == {"1": 2.5, "a": [3, [1.0, None]], "b": True, "c": None}
    json.dumps(out, allow_nan=False)


@pytest.mark.parametrize("call, name", [
    (lambda: G.design_record(head_weights=(1, "x")), "design"),
    (lambda: G.design_record(**{k: (1, "") for k in G.DESIGN_KEYS}), "design.head_weights"),
    (lambda: G.circle_heads([[0, 0]], 4), "circles[0]"),
    (lambda: G.circle_heads([[0]], 5), "d"),
    (lambda: G.circle_heads([[0], [1]], 4, query_circles=[[0]]), "query_circles"),
    (lambda: G.von_mises_smooth(np.ones(3), 1.0), "values"),
    (lambda: G.von_mises_smooth(np.ones(G.QUAD_POINTS), 1e6), "kappa"),
    (lambda: G.torus_population_mse("bump", 4, [[(0, 0)]], [1.0], 1.0), "name"),
    (lambda: G.torus_population_mse("zero", 4, [[(0, 5)]], [1.0], 1.0), "heads[0]"),
    (lambda: G.torus_population_mse("zero", 4, [[(0, 1)]], [1.0, 2.0], 1.0), "alpha"),
    (lambda: G.paired_mse(make_dgp("zero", d=4), {}, n=1, R=2, m=2, seed=0), "n"),
    (lambda: G.paired_mse(make_dgp("zero", d=4), {"a": (np.ones((1, 4, 1)),) * 2 + (np.ones(1), 1.0)}, n=10**6, R=10**3,
                          m=10, seed=0), "n, R, m"),
])
def test_bad_input_names_the_argument(call, name):
    with pytest.raises(VerifyError) as exc:
        call()
    assert str(exc.value).startswith(f"{name}: "), str(exc.value)
