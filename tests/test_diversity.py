"""C4/C6: principal angles, overlap, HDI (both forms), the fusion-frame bound and the Haar mean against
scipy.linalg.subspace_angles, mpmath at 80 digits, pair loops, exact rationals, hand-built
configurations (orthogonal heads, tight fusion frames, the "Mercedes" frame) and Monte Carlo."""

from __future__ import annotations

import mpmath
import numpy as np
import pytest
import scipy.linalg
from hypothesis import example, given
from hypothesis import strategies as st

from verify.errors import VerifyError
from verify.numeric.diversity import haar_overlap_mean, hdi, hdi_bound, overlap, principal_angles
from verify.numeric.subspace_reference import well_conditioned

# Angle errors ~ kappa eps with kappa < 1e4 almost surely; far below the sqrt(2 eps) ~ 2e-8 an
# arccos near 1 loses.
ANGLE_ATOL = 1e-10
# scipy 1.17 takes a zero angle next to a large one from arccos (its branch mask is mirrored): an
# error up to sqrt(2 eps) ~ 2.1e-8 (d=4, k1=k2=3, seed 0), so scipy is a reference to this only.
SCIPY_ANGLE_ATOL = 1e-7
# Overlaps and HDIs are sums of squares of O(1) entries computed from QR bases: rounding ~1e-15.
RHO_ATOL = 1e-12
# Angles ~1e-9 against mpmath: an absolute error ~1e-16 is ~1e-7 relative; 100x that.
SMALL_ANGLE_RTOL = 1e-5
# A cos-only method is off by at least this at these angles (cos(1e-9) rounds to 1).
COS_ONLY_MIN_RERR = 0.1
# Monte Carlo: |sample mean - d_k/d| <= Z standard errors (a fixed seed: deterministic).
Z = 4.0

seeds = st.integers(0, 2**32 - 1)


def _rho_bruteforce(W: np.ndarray) -> np.ndarray:
    """rho_hh' = mean cos^2 of scipy's principal angles, pair by pair."""
    H, _, d_k = W.shape
    rho = np.empty((H, H))
    for h in range(H):
        for g in range(H):
            theta = scipy.linalg.subspace_angles(W[h], W[g])
            rho[h, g] = np.sum(np.cos(theta) ** 2) / d_k
    return rho


@given(seed=seeds, d=st.integers(1, 12), k1=st.integers(1, 12), k2=st.integers(1, 12))
@example(seed=0, d=4, k1=3, k2=3)  # two zero angles beside a large one: scipy's arccos branch
def test_principal_angles_match_scipy_and_mpmath(seed: int, d: int, k1: int, k2: int) -> None:
    # includes k1 + k2 > d, where k1 + k2 - d angles are exactly 0 (the subspaces intersect)
    k1, k2 = min(k1, d), min(k2, d)
    rng = np.random.default_rng(seed)
    A, B = rng.standard_normal((d, k1)), rng.standard_normal((d, k2))
    ours = principal_angles(A, B)
    assert ours.shape == (min(k1, k2),) and np.all(np.diff(ours) >= 0)
    np.testing.assert_allclose(ours, np.sort(scipy.linalg.subspace_angles(A, B)), rtol=0, atol=SCIPY_ANGLE_ATOL)
    np.testing.assert_allclose(ours, _angles_mpmath(A, B), rtol=0, atol=ANGLE_ATOL)
    np.testing.assert_allclose(principal_angles(B, A), ours, rtol=0, atol=ANGLE_ATOL)
    assert np.all(ours[: max(0, k1 + k2 - d)] < ANGLE_ATOL)


def _angles_mpmath(A: np.ndarray, B: np.ndarray, dps: int = 80) -> np.ndarray:
    """Principal angles of the exact float64 inputs at ``dps`` digits (cosine method)."""
    with mpmath.workdps(dps):
        qa, _ = mpmath.qr(mpmath.matrix(A.tolist()), mode="skinny")
        qb, _ = mpmath.qr(mpmath.matrix(B.tolist()), mode="skinny")
        s = mpmath.svd_r(qa.T * qb, compute_uv=False)
        # at 80 digits arccos near 1 still leaves ~40 correct digits of the angle
        return np.sort(np.array([float(mpmath.acos(min(s[i], 1))) for i in range(len(s))]))


def test_tiny_angles_accurate_against_mpmath() -> None:
    rng = np.random.default_rng(7)
    d, k = 9, 3
    q, _ = np.linalg.qr(rng.standard_normal((d, 2 * k)))
    eps = np.array([1e-9, 3e-9, 2e-7])
    A = q[:, :k] @ well_conditioned(rng, k)
    B = (q[:, :k] + eps * q[:, k:]) @ well_conditioned(rng, k)
    ref = _angles_mpmath(A, B)
    assert np.all(np.abs(ref / eps - 1) < 1e-6)  # the construction does make angles ~ eps

    ours = principal_angles(A, B)
    np.testing.assert_allclose(ours, ref, rtol=SMALL_ANGLE_RTOL, atol=0)
    np.testing.assert_allclose(np.sort(scipy.linalg.subspace_angles(A, B)), ref, rtol=SMALL_ANGLE_RTOL, atol=0)

    # the naive float64 method: arccos of the cosines alone
    qa, qb = np.linalg.qr(A)[0], np.linalg.qr(B)[0]
    cos_only = np.sort(np.arccos(np.clip(np.linalg.svd(qa.T @ qb, compute_uv=False), -1, 1)))
    assert np.max(np.abs(cos_only / ref - 1)) > COS_ONLY_MIN_RERR


def test_angles_near_right_angle_against_mpmath() -> None:
    rng = np.random.default_rng(8)
    q, _ = np.linalg.qr(rng.standard_normal((8, 4)))
    delta = np.array([1e-9, 1e-5])
    A = q[:, :2]
    B = q[:, 2:] + delta * q[:, :2]  # nearly orthogonal to A
    ref = _angles_mpmath(A, B)
    np.testing.assert_allclose(principal_angles(A, B), ref, rtol=1e-14, atol=ANGLE_ATOL)


@given(seed=seeds, H=st.integers(1, 6), d=st.integers(1, 10), d_k=st.integers(1, 6))
def test_overlap_and_hdi_match_scipy_bruteforce(seed: int, H: int, d: int, d_k: int) -> None:
    d_k = min(d_k, d)  # includes H*d_k > d
    W = np.random.default_rng(seed).standard_normal((H, d, d_k))
    rho, ref = overlap(W), _rho_bruteforce(W)
    np.testing.assert_allclose(rho, ref, rtol=0, atol=RHO_ATOL)
    np.testing.assert_allclose(np.diag(rho), 1.0, rtol=0, atol=RHO_ATOL)
    np.testing.assert_array_equal(rho, rho.T)
    if H >= 2:
        assert -RHO_ATOL <= hdi(W) <= 1 + RHO_ATOL
        assert hdi(W) == pytest.approx(1 - np.mean(ref[np.triu_indices(H, 1)]), abs=RHO_ATOL)


@given(seed=seeds, H=st.integers(2, 6), d=st.integers(1, 10), d_k=st.integers(1, 6))
def test_identical_subspaces_give_zero(seed: int, H: int, d: int, d_k: int) -> None:
    d_k = min(d_k, d)
    rng = np.random.default_rng(seed)
    base = rng.standard_normal((d, d_k))
    W = np.stack([base @ well_conditioned(rng, d_k) for _ in range(H)])  # same range, other bases
    assert hdi(W) == pytest.approx(0.0, abs=RHO_ATOL)


@given(seed=seeds, H=st.integers(2, 6), d_k=st.integers(1, 4), extra=st.integers(0, 4))
def test_mutually_orthogonal_subspaces_give_one(seed: int, H: int, d_k: int, extra: int) -> None:
    d = H * d_k + extra  # H*d_k <= d
    rng = np.random.default_rng(seed)
    q, _ = np.linalg.qr(rng.standard_normal((d, H * d_k)))
    W = np.stack([q[:, h * d_k:(h + 1) * d_k] @ well_conditioned(rng, d_k) for h in range(H)])
    assert hdi(W) == pytest.approx(1.0, abs=RHO_ATOL)
    assert hdi_bound(H, d_k, d) == 1.0


@given(seed=seeds, H=st.integers(2, 6), d=st.integers(1, 10), d_k=st.integers(1, 6))
def test_invariant_under_right_multiplication_and_head_permutation(seed: int, H: int, d: int, d_k: int) -> None:
    d_k = min(d_k, d)
    rng = np.random.default_rng(seed)
    W = rng.standard_normal((H, d, d_k))
    W2 = np.stack([W[h] @ well_conditioned(rng, d_k) for h in range(H)])
    assert hdi(W2) == pytest.approx(hdi(W), abs=RHO_ATOL)
    np.testing.assert_allclose(overlap(W2), overlap(W), rtol=0, atol=RHO_ATOL)
    perm = rng.permutation(H)
    assert hdi(W[perm]) == pytest.approx(hdi(W), abs=RHO_ATOL)
    assert hdi(W[perm], "literal") == pytest.approx(hdi(W, "literal"), rel=1e-12, abs=RHO_ATOL)
    np.testing.assert_allclose(overlap(W[perm]), overlap(W)[np.ix_(perm, perm)], rtol=0, atol=RHO_ATOL)


def _scaled_orthonormal(rng: np.random.Generator, W: np.ndarray, scales: np.ndarray) -> np.ndarray:
    """Heads with the ranges of W and (W_K^h)^T W_K^h = scales[h]^2 I (random orthonormal bases)."""
    out = []
    for h, c in enumerate(scales):
        u, _ = np.linalg.qr(W[h])
        rot, _ = np.linalg.qr(rng.standard_normal((u.shape[1], u.shape[1])))
        out.append(c * u @ rot)
    return np.stack(out)


@given(seed=seeds, H=st.integers(3, 6), d=st.integers(1, 10), d_k=st.integers(1, 6))
def test_literal_equals_subspace_when_gram_is_sqrt_dk_identity(seed: int, H: int, d: int, d_k: int) -> None:
    d_k = min(d_k, d)
    rng = np.random.default_rng(seed)
    W = _scaled_orthonormal(rng, rng.standard_normal((H, d, d_k)), np.full(H, d_k**0.25))
    gram = np.einsum("hdi,hdj->hij", W, W)
    np.testing.assert_allclose(gram, np.broadcast_to(np.sqrt(d_k) * np.eye(d_k), gram.shape), atol=1e-12)
    assert hdi(W, "literal") == pytest.approx(hdi(W, "subspace"), abs=RHO_ATOL)


@given(seed=seeds, d=st.integers(2, 10), d_k=st.integers(1, 6), log_c=st.floats(-1, 1))
def test_two_heads_need_only_product_of_scales_sqrt_dk(seed: int, d: int, d_k: int, log_c: float) -> None:
    d_k = min(d_k, d)
    rng = np.random.default_rng(seed)
    c1 = 10.0**log_c
    W = _scaled_orthonormal(rng, rng.standard_normal((2, d, d_k)), np.array([c1, np.sqrt(d_k) / c1]))
    assert hdi(W, "literal") == pytest.approx(hdi(W, "subspace"), abs=RHO_ATOL)


@pytest.mark.parametrize("d_k", [2, 4, 16, 64])
def test_literal_form_is_scale_dependent_and_leaves_unit_interval(d_k: int) -> None:
    rng = np.random.default_rng(d_k)
    d, H = 2 * d_k, 3
    u, _ = np.linalg.qr(rng.standard_normal((d, d_k)))
    identical = np.stack([u] * H)  # orthonormal columns, the same subspace: subspace HDI = 0
    assert hdi(identical) == pytest.approx(0.0, abs=RHO_ATOL)
    # G = I/d_k for every pair, ||G||_F^2 = 1/d_k (exact arithmetic, by hand)
    assert hdi(identical, "literal") == pytest.approx(1 - 1 / d_k, abs=RHO_ATOL)
    # the columns-of-norm-sqrt(d_k) reading: G = I, ||G||_F^2 = d_k, literal HDI = 1 - d_k < 0
    assert hdi(np.sqrt(d_k) * identical, "literal") == pytest.approx(1 - d_k, abs=1e-9)
    assert hdi(np.sqrt(d_k) * identical, "literal") < 0
    # scaling by c multiplies the pair sum by c^4; the subspace form does not move
    W = rng.standard_normal((H, d, d_k))
    for c in (0.1, 3.0):
        assert hdi(c * W) == pytest.approx(hdi(W), abs=RHO_ATOL)
        assert 1 - hdi(c * W, "literal") == pytest.approx(c**4 * (1 - hdi(W, "literal")), rel=1e-10)
        assert abs(hdi(c * W, "literal") - hdi(c * W)) > 1e-3
    # right norm on average but not isotropic: W^T W = sqrt(d_k) diag(s^2), mean(s^2) = 1;
    # identical heads give ||G||_F^2 = mean(s^4) > 1, so literal HDI = 1 - mean(s^4) < 0 = subspace HDI
    s2 = np.linspace(0.5, 1.5, d_k)
    aniso = np.stack([d_k**0.25 * u * np.sqrt(s2)] * H)
    assert hdi(aniso, "literal") == pytest.approx(1 - np.mean(s2**2), abs=RHO_ATOL)
    assert hdi(aniso) == pytest.approx(0.0, abs=RHO_ATOL)


def test_literal_form_with_orthogonal_columns_of_norm_sqrt_dk_differs() -> None:
    # (W_K^h)^T W_K^h = d_k I: literal = 1 - d_k * mean rho, not the subspace value (d_k > 1)
    rng = np.random.default_rng(3)
    H, d, d_k = 4, 10, 3
    W = _scaled_orthonormal(rng, rng.standard_normal((H, d, d_k)), np.full(H, np.sqrt(d_k)))
    rho = _rho_bruteforce(W)
    mean_rho = np.mean([rho[h, g] for h in range(H) for g in range(h + 1, H)])
    assert hdi(W, "literal") == pytest.approx(1 - d_k * mean_rho, abs=1e-10)
    assert abs(hdi(W, "literal") - hdi(W)) > 0.1


def _literal_hdi_exact(W: np.ndarray):
    """The literal HDI in exact rationals from the float entries (every float is a rational)."""
    from fractions import Fraction

    H, d, d_k = W.shape
    F = [[[Fraction(float(W[h, i, j])) for j in range(d_k)] for i in range(d)] for h in range(H)]
    total, pairs = Fraction(0), 0
    for h in range(H):
        for g in range(h + 1, H):
            G = [[sum(F[h][i][a] * F[g][i][b] for i in range(d)) for b in range(d_k)] for a in range(d_k)]
            total += sum(x * x for row in G for x in row) / d_k**2
            pairs += 1
    return 1 - total / pairs


# The literal HDI sums ~H^2 d_k^2 d products of four entries: relative rounding ~d * 1e-16.
LITERAL_RTOL = 1e-13


@pytest.mark.parametrize("scale", [1e-150, 1e-40, 1.0, 1e40, 1e75])
def test_literal_hdi_at_extreme_scales_matches_exact_rationals(scale: float) -> None:
    """Near the top of the float range (|W|^4 ~ 1e300 at 1e75) and far below it (1e-600: the
    pair sum underflows, HDI is 1 to rounding) the literal form is finite and right."""
    W = np.random.default_rng(11).standard_normal((3, 5, 2)) * scale
    exact = _literal_hdi_exact(W)
    got = hdi(W, "literal")
    assert np.isfinite(got)
    assert abs(got - float(exact)) <= LITERAL_RTOL * max(1.0, abs(float(exact)))


def test_literal_hdi_whose_pair_sums_exceed_float64_but_mean_does_not() -> None:
    """Identical heads c [e_1 .. e_64] (exact coordinate columns): G = c^2 I / 64, so the literal
    HDI is 1 - c^4/64 exactly in terms of the float c. With c^4 ~ 1e309 the pair sum
    ||W_h^T W_g||_F^2 = 64 c^4 is beyond float64 while the value, -1.6e307, is not."""
    from fractions import Fraction

    d_k, c = 64, 10.0 ** 77.25  # c^4 ~ 1e309
    W = np.stack([c * np.eye(2 * d_k)[:, :d_k]] * 3)
    exact = 1 - Fraction(c) ** 4 / d_k
    assert Fraction(d_k) * Fraction(c) ** 4 > Fraction(np.finfo(np.float64).max) > -exact
    assert hdi(W, "literal") == pytest.approx(float(exact), rel=LITERAL_RTOL)


def test_literal_hdi_beyond_float64_is_refused_not_minus_infinity() -> None:
    from fractions import Fraction

    W = np.random.default_rng(11).standard_normal((3, 5, 2))
    for scale in (1e80, 1e100):  # the exact value is below -max float64: no float can hold it
        assert _literal_hdi_exact(scale * W) < -Fraction(np.finfo(np.float64).max)
        with pytest.raises(VerifyError, match=r"^W_K: expected weights whose literal HDI .* fits in float64"):
            hdi(scale * W, "literal")


BOUND_CASES = [(2, 1, 1), (3, 1, 2), (4, 2, 6), (6, 4, 16), (8, 3, 10), (12, 8, 96), (16, 8, 64), (5, 7, 9)]


@pytest.mark.parametrize(("H", "d_k", "d"), BOUND_CASES)
def test_haar_subspaces_never_exceed_bound(H: int, d_k: int, d: int) -> None:
    rng = np.random.default_rng(H * 1000 + d)
    bound = hdi_bound(H, d_k, d)
    values = [hdi(rng.standard_normal((H, d, d_k))) for _ in range(20)]
    assert max(values) <= bound + RHO_ATOL


@pytest.mark.parametrize(("m", "d_k", "d"), [(2, 2, 4), (2, 2, 6), (3, 1, 5), (3, 3, 6)])
def test_tight_fusion_frames_attain_bound(m: int, d_k: int, d: int) -> None:
    # m orthonormal bases of R^d, each cut into d/d_k blocks: sum_h P_h = m I, a tight fusion frame
    rng = np.random.default_rng(m * 100 + d)
    heads = []
    for _ in range(m):
        q, _ = np.linalg.qr(rng.standard_normal((d, d)))
        heads += [q[:, j:j + d_k] for j in range(0, d, d_k)]
    W = np.stack(heads)
    H = W.shape[0]
    assert H * d_k > d
    assert hdi(W) == pytest.approx(hdi_bound(H, d_k, d), abs=RHO_ATOL)


def test_mercedes_frame_bound_by_geometry() -> None:
    # three lines in the plane at 60 degrees: rho = cos^2(60 deg) = 1/4 per pair, HDI = 3/4
    lines = np.array([[[np.cos(a)], [np.sin(a)]] for a in (0, np.pi / 3, 2 * np.pi / 3)])
    assert hdi(lines) == pytest.approx(0.75, abs=RHO_ATOL)
    assert hdi_bound(3, 1, 2) == pytest.approx(0.75, abs=1e-15)
    assert hdi_bound(2, 1, 1) == 0.0  # two lines in R^1 coincide
    assert hdi_bound(12, 32, 384) == 1.0


@pytest.mark.parametrize(("d_k", "d"), [(1, 2), (2, 7), (4, 16), (32, 384)])
def test_haar_overlap_mean_by_simulation(d_k: int, d: int) -> None:
    rng = np.random.default_rng(1000 + d)
    n = 200
    # independent of verify: batched QR of Gaussian pairs, rho = ||Q_a^T Q_b||_F^2 / d_k
    q = np.linalg.qr(rng.standard_normal((2, n, d, d_k)))[0]
    samples = np.sum(np.einsum("ndi,ndj->nij", q[0], q[1]) ** 2, axis=(1, 2)) / d_k
    se = samples.std(ddof=1) / np.sqrt(n)
    assert abs(samples.mean() - haar_overlap_mean(d_k, d)) <= Z * se
