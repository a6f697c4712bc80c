"""Tests for verify.numeric.dgp: the regression functions against per-point math, the design densities'
moments, and the head configurations' overlaps against scipy.linalg.subspace_angles."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from scipy.linalg import subspace_angles

from verify.errors import VerifyError
from verify.numeric.dgp import (
    DGP_NAMES,
    HEAD_KINDS,
    haar_frame,
    head_projections,
    make_dgp,
)

# A few products of orthonormal frames (a handful of ulps); subspace_angles adds ~1e-15 per angle.
GEOMETRY_ATOL = 1e-12
# Monte Carlo checks: |estimate - truth| <= Z_MC standard errors (6e-7 per comparison by chance).
Z_MC = 5.0


def _mean_cos2(U: np.ndarray, V: np.ndarray) -> float:
    """Overlap rho from the principal angles, computed by scipy (independent of U^T V)."""
    return float(np.mean(np.cos(subspace_angles(U, V)) ** 2))


def _reference_f(name: str, x: np.ndarray) -> float:
    if name == "single-index":
        return math.sin(2.0 * x[0])
    if name == "additive":
        return sum(math.sin(v) for v in x) / math.sqrt(len(x))
    if name == "bump":
        return math.exp(-sum(v * v for v in x) / 2.0)
    if name == "linear":
        return float(x[0])
    B = len(x) // 2
    if name == "block":
        return sum(x[2 * b] * x[2 * b + 1] for b in range(B)) / math.sqrt(B)
    if name == "sin-block":
        v = ((1 - math.exp(-2)) / 2) ** 2          # Var sin(X1) sin(X2), X ~ N(0, I_2): (E sin² X)²
        return sum(math.sin(x[2 * b]) * math.sin(x[2 * b + 1]) for b in range(B)) / math.sqrt(B * v)
    if name == "zero":
        return 0.0
    raise AssertionError(name)


@pytest.mark.parametrize("name", DGP_NAMES)
def test_regression_function_matches_its_formula_pointwise(name):
    dgp = make_dgp(name, d=4, sigma=0.3)
    x = np.random.default_rng(0).standard_normal((4, 5, 4))
    fx = dgp.f(x)
    assert fx.shape == (4, 5)
    for idx in np.ndindex(4, 5):
        assert fx[idx] == pytest.approx(_reference_f(name, x[idx]), rel=1e-14, abs=1e-15)
    assert dgp.d == 4 and dgp.sigma == 0.3 and dgp.name == name


@pytest.mark.parametrize("name", ["block", "sin-block"])
def test_block_targets_have_unit_variance_and_no_linear_part(name):
    """Var f = 1 under N(0, I) (the normalisation), and E f x_j = 0: no linear part (Monte Carlo)."""
    N = 200_000
    x = np.random.default_rng(3).standard_normal((N, 8))
    fx = make_dgp(name, d=8).f(x)
    v = fx.var()
    assert abs(v - 1.0) <= Z_MC * math.sqrt(np.var((fx - fx.mean()) ** 2) / N)
    lin = (x * fx[:, None]).mean(axis=0)
    assert np.all(np.abs(lin) <= Z_MC * np.sqrt(np.var(x * fx[:, None], axis=0) / N))


def test_block_targets_and_torus_need_an_even_dimension():
    for name in ("block", "sin-block"):
        with pytest.raises(VerifyError, match="^d: "):
            make_dgp(name, d=5)
    with pytest.raises(VerifyError, match="^d: "):
        make_dgp("single-index", d=5, design="torus")
    with pytest.raises(VerifyError, match="^design: "):
        make_dgp("single-index", d=4, design="sphere")


def test_torus_design_puts_each_pair_on_a_circle_with_uniform_angle():
    """Each coordinate pair has norm sqrt 2 exactly, angles uniform (mean of cos, sin, cos 2t ~ 0)
    and the pairs independent (correlation of their angles' cosines ~ 0); unit variance per
    coordinate."""
    dgp = make_dgp("block", d=6, design="torus")
    N = 40_000
    x = dgp.sample_x(np.random.default_rng(2), (N,))
    pairs = x.reshape(N, 3, 2)
    np.testing.assert_allclose(np.linalg.norm(pairs, axis=-1), math.sqrt(2.0), rtol=1e-14)
    t = np.arctan2(pairs[..., 1], pairs[..., 0])
    for stat in (np.cos(t), np.sin(t), np.cos(2 * t)):
        assert np.all(np.abs(stat.mean(axis=0)) <= Z_MC / math.sqrt(2 * N) * 1.5)
    c = np.corrcoef(np.cos(t[:, 0]), np.cos(t[:, 1]))[0, 1]
    assert abs(c) <= Z_MC / math.sqrt(N)
    assert np.all(np.abs((x**2).mean(axis=0) - 1.0) <= Z_MC * math.sqrt(0.5 / N))


def test_extra_parameters_change_the_function():
    x = np.array([[0.3, -1.0]])
    assert make_dgp("single-index", d=2, freq=3.0).f(x)[0] == pytest.approx(math.sin(0.9))
    assert make_dgp("bump", d=2, width=2.0).f(x)[0] == pytest.approx(math.exp(-(0.09 + 1.0) / 8.0))


@pytest.mark.parametrize("design", ["normal", "uniform"])
def test_design_density_has_zero_mean_unit_variance(design):
    dgp = make_dgp("bump", d=3, design=design)
    N = 20000
    x = dgp.sample_x(np.random.default_rng(1), (N,))
    assert x.shape == (N, 3)
    se_mean = 1.0 / math.sqrt(N)
    # Var of x^2 is 2 for N(0,1) and 4/5 for U[-sqrt3, sqrt3]
    se_var = math.sqrt((2.0 if design == "normal" else 0.8) / N)
    assert np.all(np.abs(x.mean(axis=0)) <= Z_MC * se_mean)
    assert np.all(np.abs((x**2).mean(axis=0) - 1.0) <= Z_MC * se_var)
    if design == "uniform":
        assert np.all(np.abs(x) <= math.sqrt(3.0))


def test_same_generator_seed_same_design():
    dgp = make_dgp("additive", d=2)
    a = dgp.sample_x(np.random.default_rng(7), (3, 4))
    b = dgp.sample_x(np.random.default_rng(7), (3, 4))
    assert a.shape == (3, 4, 2) and np.array_equal(a, b)


@pytest.mark.parametrize(
    "kind, rho, expected",
    [
        ("orthogonal", None, 0.0),
        ("identical", None, 1.0),
        ("coordinate", None, 0.0),
        ("overlap", 0.0, 0.0),
        ("overlap", 0.3, 0.3),
        ("overlap", 1.0, 1.0),
        ("aligned", 0.55, 0.55),
    ],
)
def test_pairwise_overlap_matches_principal_angles(kind, rho, expected):
    H, d, d_k = 3, 9, 2
    U = head_projections(kind, H, d, d_k, rng=np.random.default_rng(3), rho=rho)
    assert U.shape == (H, d, d_k)
    for h in range(H):
        assert np.allclose(U[h].T @ U[h], np.eye(d_k), atol=GEOMETRY_ATOL)
        for g in range(h + 1, H):
            assert _mean_cos2(U[h], U[g]) == pytest.approx(expected, abs=GEOMETRY_ATOL)


@given(
    H=st.integers(1, 4),
    d_k=st.integers(1, 3),
    extra=st.integers(0, 3),
    rho=st.floats(0.0, 1.0),
    seed=st.integers(0, 2**32 - 1),
)
def test_overlap_family_has_the_prescribed_rho_for_every_pair(H, d_k, extra, rho, seed):
    d = (H + 1) * d_k + extra
    U = head_projections("overlap", H, d, d_k, rng=seed, rho=rho)
    for h in range(H):
        assert np.allclose(U[h].T @ U[h], np.eye(d_k), atol=GEOMETRY_ATOL)
        for g in range(h + 1, H):
            assert _mean_cos2(U[h], U[g]) == pytest.approx(rho, abs=GEOMETRY_ATOL)


def test_aligned_heads_turn_away_from_e1_as_rho_falls():
    H, d, d_k = 2, 6, 2
    e1 = np.eye(d)[:, 0]
    for rho in (1.0, 0.5, 0.1, 0.0):
        U = head_projections("aligned", H, d, d_k, rho=rho)
        for h in range(H):
            # squared length of e_1's projection onto Range(U_h) = cos^2 t = sqrt(rho)
            proj = U[h] @ np.linalg.lstsq(U[h], e1, rcond=None)[0]
            assert float(proj @ proj) == pytest.approx(math.sqrt(rho), abs=GEOMETRY_ATOL)
    C = head_projections("coordinate", 3, 6, 2)
    assert np.array_equal(C[0], np.eye(6)[:, :2])  # only head 1 sees e_1
    assert np.all(C[1:, 0, :] == 0)


def test_coordinate_and_aligned_heads_by_hand_in_high_dimension():
    """Head h of "coordinate" is e_{h d_k + 1..(h+1) d_k}; "aligned" is cos t e_j + sin t e_{(h+1) d_k + j}
    with cos^4 t = rho. Built without a d x d identity: d = 200000 would need 320 GB for one."""
    H, d, d_k, rho = 3, 200_000, 2, 0.5
    C = head_projections("coordinate", H, d, d_k)
    A = head_projections("aligned", H, d, d_k, rho=rho)
    cos_t = rho ** 0.25
    sin_t = math.sqrt(1 - cos_t**2)
    for h in range(H):
        want_c = np.zeros((d, d_k))
        want_a = np.zeros((d, d_k))
        for j in range(d_k):
            want_c[h * d_k + j, j] = 1.0
            want_a[j, j] = cos_t
            want_a[(h + 1) * d_k + j, j] = sin_t
        assert np.array_equal(C[h], want_c)
        np.testing.assert_allclose(A[h], want_a, rtol=0, atol=GEOMETRY_ATOL)


def test_random_heads_have_the_haar_mean_overlap():
    # For independent uniformly random d_k-subspaces of R^d, E rho = d_k / d.
    d, d_k, reps = 6, 2, 400
    rng = np.random.default_rng(11)
    rhos = []
    for _ in range(reps):
        U = head_projections("random", 2, d, d_k, rng=rng)
        rhos.append(_mean_cos2(U[0], U[1]))
    rhos = np.array(rhos)
    assert abs(rhos.mean() - d_k / d) <= Z_MC * rhos.std(ddof=1) / math.sqrt(reps)


def test_haar_frame_signs_are_fixed():
    # Without moving diag(R)'s signs into Q, LAPACK's QR makes Q[0, 0] < 0 always; Haar needs E = 0.
    rng = np.random.default_rng(5)
    q00 = np.array([haar_frame(rng, 4, 2)[0, 0] for _ in range(2000)])
    assert abs(q00.mean()) <= Z_MC * q00.std(ddof=1) / math.sqrt(q00.size)
    assert 0.3 < np.mean(q00 > 0) < 0.7


def test_same_seed_same_heads_and_every_kind_builds():
    for kind in ("orthogonal", "identical", "random"):
        a = head_projections(kind, 2, 5, 2, rng=4)
        b = head_projections(kind, 2, 5, 2, rng=np.random.default_rng(4))
        assert np.array_equal(a, b)
    assert not np.array_equal(head_projections("random", 2, 5, 2, rng=4), head_projections("random", 2, 5, 2, rng=5))
    for kind in HEAD_KINDS:
        U = head_projections(kind, 2, 8, 2, rng=0, rho=0.5 if kind in ("overlap", "aligned") else None)
        assert U.shape == (2, 8, 2) and np.all(np.isfinite(U))
