"""verify.numeric.stats against computations written here: scipy's standard error, exact
bootstrap probabilities of a two-draw sample, Var f by a Monte Carlo of this file and by the
Gaussian moments of sin and exp, and each function's bad input."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats as sps

from verify.errors import VerifyError
from verify.numeric import stats
from verify.numeric.dgp import make_dgp

#: A Monte Carlo figure is compared within this many of its standard errors (two-sided 6e-7).
Z_MC = 5.0


@pytest.mark.parametrize("values,mean,se", [
    ([1.0, 3.0], 2.0, 1.0),                   # sd (ddof 1) = sqrt 2, SE = sqrt 2 / sqrt 2
    ([0.0, 0.0, 0.0, 4.0], 1.0, 1.0),         # sd = 2, SE = 2 / sqrt 4 (not 2/4)
    ([2.0, 2.0, 2.0], 2.0, 0.0),
    ([5.0], 5.0, math.inf),
], ids=["two", "four", "constant", "one"])
def test_mean_se(values, mean, se):
    assert stats.mean_se(values) == (mean, se)


def test_mean_se_is_scipys_standard_error():
    v = np.random.default_rng(3).standard_normal(37)
    assert stats.mean_se(v)[1] == pytest.approx(sps.sem(v), rel=1e-13)


def test_paired_and_z_score():
    assert stats.paired([1.0, 2.0], [3.0, 6.0]) == (3.0, 1.0)          # differences 2, 4
    assert [stats.z_score(m, s) for m, s in ((1.0, 0.5), (1.0, 0.0), (-1.0, 0.0), (0.0, 0.0))] == \
        [2.0, math.inf, -math.inf, 0.0]


def test_bootstrap_argmin_against_the_exact_two_draw_law():
    """Two draws, two options: a resample takes rows (0, 0), (0, 1) or (1, 1) with probabilities
    1/4, 1/2, 1/4. Row 0 favours option 0 by 1, row 1 option 1 by 3: the mean favours option 0
    only for (0, 0), so P(argmin = 0) = 1/4 exactly."""
    values = [[0.0, 1.0], [3.0, 0.0]]
    B = 40_000
    p = stats.bootstrap_argmin(values, np.random.default_rng(5), B)
    assert p.sum() == pytest.approx(1.0)
    assert abs(p[0] - 0.25) <= Z_MC * math.sqrt(0.25 * 0.75 / B)


def test_bootstrap_argmin_of_a_dominating_option_is_one():
    rng = np.random.default_rng(0)
    v = rng.standard_normal((12, 3))
    v[:, 1] -= 100.0
    assert stats.bootstrap_argmin(v, rng, 500).tolist() == [0.0, 1.0, 0.0]


def test_r_squared():
    assert stats.r_squared(0.6, 0.5, noise=0.1) == pytest.approx(0.0)
    assert stats.r_squared(0.25, 1.0) == 0.75
    np.testing.assert_allclose(stats.r_squared(np.array([0.5, 1.5]), 2.0), [0.75, 0.25])


@pytest.mark.parametrize("name, d, design, params", [
    ("single-index", 8, "normal", {}), ("single-index", 6, "torus", {"freq": 2.0}),
    ("single-index", 6, "torus", {"freq": 1.0}), ("linear", 4, "torus", {}), ("additive", 5, "normal", {}),
    ("bump", 4, "normal", {"width": 1.5}), ("block", 8, "normal", {}), ("block", 8, "torus", {}),
    ("sin-block", 8, "normal", {}), ("linear", 3, "normal", {}),
])
def test_closed_forms_against_a_monte_carlo_of_this_file(name, d, design, params):
    dgp = make_dgp(name, d=d, sigma=0.1, design=design, **params)
    N = 400_000
    fx = dgp.f(dgp.sample_x(np.random.default_rng(1), (N,)))
    z = fx - fx.mean()
    se = math.sqrt(np.var(z * z) / N)
    closed, zero = stats.target_variance(dgp, method="closed")
    assert zero == 0.0 and abs(closed - z.var()) <= Z_MC * se
    mc, mc_se = stats.target_variance(dgp, method="monte-carlo", seed=2, points=N)
    assert abs(mc - closed) <= Z_MC * mc_se


@pytest.mark.parametrize("name, d, params", [("single-index", 8, {}), ("linear", 3, {}), ("additive", 5, {}),
                                             ("bump", 4, {"width": 1.5}), ("bump", 8, {})])
def test_quadrature_meets_the_closed_forms(name, d, params):
    dgp = make_dgp(name, d=d, sigma=1.0, **params)
    assert stats.target_variance(dgp, method="quadrature")[0] == pytest.approx(
        stats.target_variance(dgp, method="closed")[0], rel=1e-12)


def test_monte_carlo_standard_error_is_the_fourth_moment_law():
    """sin(2x), x ~ N(0, 1): E sin² = (1 − e^{−8})/2, E sin⁴ = 3/8 − e^{−8}/2 + e^{−32}/8."""
    m2 = (1 - math.exp(-8)) / 2
    m4 = 3 / 8 - math.exp(-8) / 2 + math.exp(-32) / 8
    var, se = stats.target_variance(make_dgp("single-index", d=8, sigma=1.0), method="monte-carlo", seed=7)
    assert abs(var - m2) <= Z_MC * se
    assert se == pytest.approx(math.sqrt((m4 - m2 * m2) / stats.MC_POINTS), rel=0.02)


@pytest.mark.parametrize("call, name", [
    (lambda: stats.r_squared(0.1, 0.0), "var_f"),
    (lambda: stats.r_squared(-0.1, 1.0), "mse"),
    (lambda: stats.r_squared(0.1, 1.0, noise=float("nan")), "noise"),
    (lambda: stats.target_variance("dgp", method="closed"), "dgp"),
    (lambda: stats.target_variance(make_dgp("zero", d=2), method="exact"), "method"),
    (lambda: stats.target_variance(make_dgp("bump", d=4, design="torus"), method="closed"), "method"),
    (lambda: stats.target_variance(make_dgp("block", d=4), method="quadrature"), "method"),
    (lambda: stats.target_variance(make_dgp("zero", d=2), method="monte-carlo", seed=-1), "seed"),
    (lambda: stats.target_variance(make_dgp("zero", d=2), method="monte-carlo", points=1), "points"),
    (lambda: stats.bootstrap_argmin([[1.0, 2.0]], np.random.default_rng(0), 10), "values"),
    (lambda: stats.bootstrap_argmin([[1.0], [np.nan]], np.random.default_rng(0), 10), "values"),
    (lambda: stats.bootstrap_argmin([[1.0], [2.0]], np.random.default_rng(0), 0), "resamples"),
], ids=["r2-var-f", "r2-mse", "r2-noise", "var-f-dgp", "var-f-method", "var-f-no-closed-form",
        "var-f-no-quadrature", "var-f-seed", "var-f-points", "argmin-one-draw", "argmin-nan", "argmin-resamples"])
def test_bad_input_names_the_argument(call, name):
    with pytest.raises(VerifyError) as exc:
        call()
    assert str(exc.value).startswith(f"{name}: expected ")
