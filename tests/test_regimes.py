"""verify.experiments.regimes against computations written here: the von Mises smoothing against
Bessel functions (scipy.special), the torus population MSE against the Jacobi-Anger series, a Monte
Carlo and NW at large n, and the circle heads' geometry."""

from __future__ import annotations

import json
import math
import statistics

import numpy as np
import pytest
from scipy.special import iv, jv

from verify.errors import VerifyError
from verify.experiments import regimes as G
from verify.io import jsonable
from verify.numeric.dgp import make_dgp
from verify.numeric.nw import nw_weights

Z_MC = 5.0
# Quadrature on 512 points vs Bessel series: both ~1e-15 (the series' tail is below 1e-20).
QUAD_ATOL = 1e-12


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
    """NW at large n on the shared configuration (κ = gain² r² s = 4): the MSE against f, noise part
    included, tends to the population value."""
    w, r, kappa = 2.0, math.sqrt(2.0), 4.0
    c = {2 * k + 1: 2 * (-1) ** k * jv(2 * k + 1, w * r) for k in range(20)}
    shared = sum(cm**2 * (1 - iv(mm, kappa) / iv(0, kappa)) ** 2 / 2 for mm, cm in c.items())
    dgp = make_dgp("single-index", d=14, sigma=0.1, design="torus")
    WQ, WK = G.circle_heads([[0, 1], [0, 2], [0, 3]], 14, gain=2.0)
    mse = []
    for rep in range(4):
        rng = np.random.default_rng([1, rep])
        X, xe = dgp.sample_x(rng, (20_000,)), dgp.sample_x(rng, (64,))
        wbar = nw_weights(xe[None] @ WQ, X[None] @ WK, scale=0.5).mean(axis=0)   # the heads' mean weights
        mse.append(np.mean((wbar @ dgp.f(X) - dgp.f(xe)) ** 2) + 0.01 * np.mean(np.sum(wbar * wbar, axis=-1)))
    assert abs(np.mean(mse) - shared) <= 0.01 + Z_MC * np.std(mse, ddof=1) / 2


#: Monte Carlo points (SE ~2 % of the MSE) and midpoint nodes (exact to ~1e-14 for κ = 3) below.
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


def test_c7_torus_standard_errors_recomputed_from_the_replicates(quick_run):
    """C7's torus regime in the quick run: per (n, d_k) the mean MSE and its SE over the design
    replicates, recomputed from the replicates' MSEs (regenerated from the part's size and seed) by
    the textbook formulas, sd (ddof 1) / sqrt(R)."""
    from verify.claims.c7 import empirical

    fig = next(p for p in quick_run("C7")[0].parts if p.id == "optimum-torus").numeric.figures
    values = empirical.torus(fig["params"]["size"], fig["params"]["seed"])["values"]
    for i in range(len(fig["n"])):
        for j in range(len(fig["d_k"])):
            v = [float(x) for x in values[:, i, j]]
            assert fig["mse"][i][j] == pytest.approx(statistics.fmean(v), rel=1e-12)
            assert fig["se"][i][j] == pytest.approx(statistics.stdev(v) / math.sqrt(len(v)), rel=1e-12)


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
])
def test_bad_input_names_the_argument(call, name):
    with pytest.raises(VerifyError) as exc:
        call()
    assert str(exc.value).startswith(f"{name}: "), str(exc.value)
