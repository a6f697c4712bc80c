"""Population NW heads and C9's positive controls against independent computations written here:
the tilted average of a large sample (NW at n = 4e5 keys, a Monte Carlo of E f(X) e^{aᵀX}/E e^{aᵀX}),
the integrated MSE by Monte Carlo over x of the tilting identity E f(X + a) coded here per target,
the torus heads against Bessel functions (scipy.special.iv) and NW at large n, and the positive
controls' optima against closed forms written in the tests."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.special import iv

from verify.errors import VerifyError
from verify.experiments import population
from verify.experiments.training import C9_D, C9_DK, C9_H, c9_population_optima, forward
from verify.numeric.dgp import make_dgp

# |estimate − reference| <= Z_MC standard errors (normal tail ~6e-7 per comparison).
Z_MC = 5.0
# Closed forms evaluated in float64 (sums of a few hundred exponentials): rounding ~1e-15.
EXACT_ATOL = 1e-12


def _reference_heads(name, d, A, x):
    """E f(X + A x) for X ~ N(0, I) written here from E sin(Z + a) = e^{−1/2} sin a, E (Z + a) = a,
    E exp(−(Z + a)²/(2w²)) = (w²/(1+w²))^{1/2} exp(−a²/(2(1+w²))) and independence across coordinates."""
    a = x @ A.T                                                   # rows A x
    f = make_dgp(name, d=d, sigma=1.0).f
    if name == "block":
        return f(a)                                               # bilinear in disjoint pairs: E f(X + a) = f(a)
    if name == "sin-block":
        return math.exp(-1.0) * f(a)
    if name == "single-index":
        return math.exp(-2.0) * np.sin(2.0 * a[:, 0])
    if name == "additive":
        return math.exp(-0.5) * f(a)
    if name == "linear":
        return a[:, 0]
    if name == "bump":
        return 0.5 ** (d / 2) * np.exp(-np.sum(a * a, axis=1) / 4.0)
    return np.zeros(len(x))


@pytest.mark.parametrize("name", population.TARGETS)
def test_population_heads_are_the_tilted_average_of_a_large_sample(name):
    """NW with 4e5 keys at moderate tilts (‖a‖ ~ 0.5) against the module's m_h(x); the SE of the
    self-normalised average is sqrt(Σ w_i² (f_i − f̂)²)."""
    rng = np.random.default_rng(11)
    d, H, k, N = 4, 2, 2, 400_000
    WQ, WK = 0.45 * rng.standard_normal((H, d, k)), 0.45 * rng.standard_normal((H, d, k))
    X = rng.standard_normal((N, d))
    fX = make_dgp(name, d=d, sigma=1.0).f(X)
    xq = rng.standard_normal((4, d))
    m = population.population_heads(name, WQ, WK, xq)
    for h in range(H):
        s = (xq @ WQ[h]) @ (X @ WK[h]).T / math.sqrt(k)
        w = np.exp(s - s.max(axis=1, keepdims=True))
        w /= w.sum(axis=1, keepdims=True)
        est = w @ fX
        se = np.sqrt(np.sum(w**2 * (fX[None] - est[:, None]) ** 2, axis=1)) + 1e-300
        assert np.all(np.abs(est - m[h]) <= Z_MC * se + 1e-12), (name, h, est, m[h], se)


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
    WQ, WK, al = rng.standard_normal((2, 3, 4, 8, 2)), rng.standard_normal((2, 3, 4, 8, 2)), rng.standard_normal((2, 3, 4))
    out = population.population_mse("block", WQ, WK, al)
    assert out.shape == (2, 3)
    assert out[1, 2] == pytest.approx(float(population.population_mse("block", WQ[1, 2], WK[1, 2], al[1, 2])), rel=1e-14)


def _optimum(target, design):
    return {(c["config"], c.get("head_weights")): c for c in c9_population_optima(target, design, n=64, replicates=4,
                                                                                  m=16)["configs"]}


def test_gaussian_block_target_optima_in_closed_form():
    """Block heads and shared keys with orthogonal queries reach population MSE 0 (free α); with
    α = 1/H the block heads need λ = sqrt(H) = 2; identical heads leave 3 of the 4 blocks: 3/4."""
    opt = _optimum("block", "normal")
    assert opt[("block heads", "free")]["population_mse"] == pytest.approx(0.0, abs=EXACT_ATOL)
    assert opt[("shared keys, orthogonal queries", "free")]["population_mse"] == pytest.approx(0.0, abs=EXACT_ATOL)
    assert opt[("block heads, λ = 2", "fixed 1/H")]["population_mse"] == pytest.approx(0.0, abs=EXACT_ATOL)
    assert opt[("identical heads (block 0)", "free")]["population_mse"] == pytest.approx(0.75, abs=EXACT_ATOL)
    shared = opt[("shared keys, orthogonal queries", "free")]
    assert shared["key_hdi"] == pytest.approx(0.0, abs=EXACT_ATOL) and shared["form_diversity"] == pytest.approx(1.0)


def test_gaussian_sin_block_optima():
    """Free α: block heads at λ = 1 with α = e reach 0; α = 1/H: the golden-section scale is the
    minimum of a grid computed here (MSE(λ) written from the closed form of two-sine products)."""
    opt = _optimum("sin-block", "normal")
    assert opt[("block heads", "free")]["population_mse"] == pytest.approx(0.0, abs=EXACT_ATOL)
    assert opt[("identical heads (block 0)", "free")]["population_mse"] == pytest.approx(0.75, abs=EXACT_ATOL)
    fixed = next(v for (c, hw), v in opt.items() if hw == "fixed 1/H")
    # with heads λ P_b and α = 1/4: F − f = c Σ_b [e^{-1}/4 sin(λx)sin(λy) − sin x sin y], blocks independent:
    # MSE = B c² E[(e^{-1}/4 sin λX sin λY − sin X sin Y)²], E sin(uX) sin(vX) = (e^{−(u−v)²/2} − e^{−(u+v)²/2})/2
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


def test_torus_block_optima_against_bessel_functions():
    """Circle heads (κ = 8): head b tends to A_2(κ) sin 2θ_b / 2 with A_2 = I_2/I_0, so α = 1/A_2 is
    exact and α = 1/4 leaves (1 − A_2/4)² Var f (Var f = 1/2); identical heads 3/4 of Var f."""
    A2 = iv(2, 8.0) / iv(0, 8.0)
    opt = _optimum("block", "torus")
    assert opt[("circle heads", "free")]["population_mse"] == pytest.approx(0.0, abs=1e-12)
    assert opt[("shared key circle, orthogonal query circles", "free")]["population_mse"] == pytest.approx(0.0, abs=1e-12)
    assert opt[("circle heads", "fixed 1/H")]["population_mse"] == pytest.approx((1 - A2 / 4) ** 2 / 2, rel=1e-10)
    assert opt[("identical heads (circle 0)", "free")]["population_mse"] == pytest.approx(0.375, rel=1e-10)


def test_positive_control_optima_at_large_n_by_monte_carlo():
    """The population optimum is reached by the NW ensemble itself as n grows: block heads with a
    small tilt λ = 0.5 and α = 1/λ² (Gaussian design), circle heads with α = 1/A_2(κ) (torus), at
    n = 2e5 keys; identical heads stay near 3/4 of Var f."""
    rng = np.random.default_rng(8)
    s = 1 / math.sqrt(C9_DK)
    E = np.eye(C9_D)
    n, m = 200_000, 64
    # Gaussian: A_h = s g² P_b = λ P_b with g² = λ/s
    g = math.sqrt(0.5 / s)
    WQ = np.stack([g * E[:, 2 * h:2 * h + 2] for h in range(C9_H)])
    dgp = make_dgp("block", d=C9_D, sigma=0.1)
    X = dgp.sample_x(rng, (n,))
    y = dgp.f(X) + 0.1 * rng.standard_normal(n)
    xq = dgp.sample_x(rng, (m,))
    fq = dgp.f(xq)
    good = np.mean((forward(WQ, WQ, np.full(C9_H, 4.0), xq, X, y)["f"] - fq) ** 2)
    same = np.repeat(WQ[:1], C9_H, axis=0)
    bad = np.mean((forward(same, same, np.full(C9_H, 1.0), xq, X, y)["f"] - fq) ** 2)
    assert good < 0.02 and bad > 0.5, (good, bad)
    # torus: κ = s g² r² = 8
    A2 = iv(2, 8.0) / iv(0, 8.0)
    gt = math.sqrt(8.0 / (s * 2.0))
    WT = np.stack([gt * E[:, 2 * h:2 * h + 2] for h in range(C9_H)])
    dgt = make_dgp("block", d=C9_D, sigma=0.1, design="torus")
    X = dgt.sample_x(rng, (50_000,))
    y = dgt.f(X) + 0.1 * rng.standard_normal(50_000)
    xq = dgt.sample_x(rng, (m,))
    good_t = np.mean((forward(WT, WT, np.full(C9_H, 1 / A2), xq, X, y)["f"] - dgt.f(xq)) ** 2)
    assert good_t < 0.01, good_t


@pytest.mark.parametrize("call, name", [
    (lambda: population.population_heads("sine", np.ones((2, 4, 2)), np.ones((2, 4, 2)), np.ones((3, 4))), "name"),
    (lambda: population.population_heads("block", np.ones((2, 4, 2)), np.ones((2, 4, 2)), np.ones((3, 5))), "x"),
    (lambda: population.population_heads("block", np.ones((2, 5, 2)), np.ones((2, 5, 2)), np.ones((3, 5))), "d"),
    (lambda: population.population_mse("block", np.ones((2, 4, 2)), np.ones((3, 4, 2)), np.ones(2)), "WK"),
    (lambda: population.population_mse("block", np.ones((2, 4, 2)), np.ones((2, 4, 2)), np.ones(3)), "alpha"),
    (lambda: population.population_mse("block", np.ones((2, 4, 2)), np.ones((2, 4, 2)), None), "alpha"),
    (lambda: population.tilt_maps(np.full((2, 4, 2), np.nan), np.ones((2, 4, 2))), "WQ"),
    (lambda: c9_population_optima("bump", "normal"), "target"),
    (lambda: c9_population_optima("block", "sphere"), "design"),
    (lambda: c9_population_optima("sin-block", "torus"), "target"),
    (lambda: c9_population_optima("block", "normal", n=1), "n"),
])
def test_bad_input_names_the_argument(call, name):
    with pytest.raises(VerifyError, match=f"^{name}: "):
        call()
