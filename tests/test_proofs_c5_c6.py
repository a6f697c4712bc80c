"""C5/C6 derivations against independent computations: brute-force quadratic forms over
covariance matrices built from random subspaces (numpy QR), exact rationals (fractions), a
Monte Carlo of shared-noise NW heads, and tight frames constructed here in numpy; and every
comparison decided by the group of steps named here."""

from __future__ import annotations

import math
import random
from fractions import Fraction
from itertools import combinations

import numpy as np
import pytest
import sympy as sp
from hypothesis import given
from hypothesis import strategies as st

from proofs import derivation
from proofs.c5_hdi_mse import counterexamples
from proofs.notation import HDI, B, H, V

LINE_TOL = 1e-12        # float64 rounding of a quadratic form over ≤ 7 heads with entries ≤ ~10
FRAME_TOL = 1e-12       # float64 rounding of sums of a few products of projectors
BOUND_SLACK = 1e-12     # rounding of the ρ sums of a random configuration that sits near the bound
ORTH_TOL = 1e-13        # U_hᵀU_h' of column blocks of one QR factor: pure rounding
TAYLOR_T = 1e-4         # curve step for the curvature check
TAYLOR_RTOL = 1e-2      # Φ(t)/t² differs from its limit by O(t) relative (t = 1e-4, constants ≤ ~10)
MC_REPS = 40_000        # noise replicates for the shared-noise covariance
MC_Z = 5.0              # a 5-standard-error band: a false failure has probability ~ 6e-7


@pytest.fixture(scope="module")
def c5():
    return derivation("C5")


@pytest.fixture(scope="module")
def c6():
    return derivation("C6")


# -- shared brute-force helpers (written for the tests alone) ---------------------------------
def random_bases(rng: np.random.Generator, h: int, dk: int, dim: int) -> list[np.ndarray]:
    """H random orthonormal d×d_k bases (QR of Gaussian matrices)."""
    return [np.linalg.qr(rng.standard_normal((dim, dk)))[0] for _ in range(h)]


pytestmark = pytest.mark.claim(part="derivation")  # the claim: each test's own mark or claim parameter


def overlap(bases: list[np.ndarray]) -> np.ndarray:
    """ρ_hh' = ||U_hᵀU_h'||_F² / d_k as a full symmetric matrix (diagonal 1)."""
    dk = bases[0].shape[1]
    return np.array([[np.sum((a.T @ b) ** 2) / dk for b in bases] for a in bases])


def mean_pair(rho) -> float:
    hh = len(rho)
    pairs = list(combinations(range(hh), 2))
    return sum(rho[i][j] for i, j in pairs) / len(pairs)


def brute_mse(bias, alpha, variances, rho):
    """B² + Σ_h Σ_h' α_h α_h' C_hh' with C_hh' = ρ_hh' sqrt(V_h V_h'), C_hh = V_h (double loop)."""
    total = bias * bias
    hh = len(alpha)
    for i in range(hh):
        for j in range(hh):
            c = variances[i] if i == j else rho[i][j] * math.sqrt(variances[i] * variances[j])
            total += alpha[i] * alpha[j] * c
    return total


def numeric(der, name: str, module: str = "numpy"):
    res = der.results[name]
    return sp.lambdify(res.args, res.expr, module)


# -- C5 ---------------------------------------------------------------------------------------
@pytest.mark.claim("C5", part="derivation")
@given(st.integers(0, 2**32 - 1))
def test_c5_line_against_brute_force_random_subspaces(seed):
    rng = np.random.default_rng(seed)
    hh, dk = int(rng.integers(2, 8)), int(rng.integers(1, 4))
    dim = int(rng.integers(dk, hh * dk + 3))
    bias, var = rng.normal(), rng.uniform(0.1, 5.0)
    rho = overlap(random_bases(rng, hh, dk, dim))
    want = brute_mse(bias, [1.0 / hh] * hh, [var] * hh, rho)
    got = numeric(derivation("C5"), "mse_line")(bias, var, hh, 1.0 - mean_pair(rho))
    assert got == pytest.approx(want, rel=LINE_TOL, abs=LINE_TOL)


@pytest.mark.claim("C5", part="derivation")
@given(st.integers(0, 2**32 - 1))
def test_c5_line_exact_in_rationals(seed):
    rnd = random.Random(seed)
    hh = rnd.randint(2, 6)
    rho = [[Fraction(1)] * hh for _ in range(hh)]
    for i, j in combinations(range(hh), 2):
        rho[i][j] = rho[j][i] = Fraction(rnd.randint(0, 97), 97)
    var, bias = Fraction(rnd.randint(1, 50), rnd.randint(1, 9)), Fraction(rnd.randint(-20, 20), 7)
    alpha = Fraction(1, hh)
    want = bias * bias + sum(alpha * alpha * (var if i == j else rho[i][j] * var)
                             for i in range(hh) for j in range(hh))
    hdi = 1 - mean_pair(rho)
    line = derivation("C5").results["mse_line"].expr
    got = line.subs({B: sp.Rational(bias.numerator, bias.denominator), V: sp.Rational(var.numerator, var.denominator),
                     H: hh, HDI: sp.Rational(hdi.numerator, hdi.denominator)})
    assert Fraction(int(got.p), int(got.q)) == want


@pytest.mark.claim("C5", part="derivation")
@pytest.mark.parametrize("sign", ["nonnegative", "mixed"])
def test_c5_weighted_form_is_a_line_in_wdi(c5, sign):
    rng = np.random.default_rng(5 if sign == "nonnegative" else 6)
    hh, dk, dim = 4, 2, 5
    alpha = rng.uniform(0.1, 1.0, hh) if sign == "nonnegative" else np.array([1.5, -0.8, 0.9, -0.6])
    variances = rng.uniform(0.5, 4.0, hh)
    bias = 0.3
    pairs = [(i, j) for i in range(hh) for j in range(hh) if i != j]
    pair_w = {p: alpha[p[0]] * alpha[p[1]] * math.sqrt(variances[p[0]] * variances[p[1]]) for p in pairs}
    s_val = sum(pair_w.values())
    q_val = float(np.sum(alpha ** 2 * variances))
    mse_wdi = numeric(c5, "mse_wdi")
    points = []
    for _ in range(12):
        rho = overlap(random_bases(rng, hh, dk, dim))
        wdi = 1 - sum(pair_w[p] * rho[p] for p in pairs) / s_val
        want = brute_mse(bias, alpha, variances, rho)
        assert mse_wdi(bias, q_val, s_val, wdi) == pytest.approx(want, rel=LINE_TOL, abs=LINE_TOL)
        points.append((wdi, want))
    points.sort()
    steps = np.diff([m for _, m in points])
    if sign == "nonnegative":
        assert s_val > 0 and np.all(steps <= LINE_TOL)       # non-increasing in WDI
    else:
        assert s_val < 0 and np.all(steps >= -LINE_TOL)      # the slope −S reverses
    assert {c.name: c.holds for c in c5.comparisons}["non_increasing_any_weights"] is False


def _exact_sqrt(q: Fraction) -> Fraction:
    num, den = math.isqrt(q.numerator), math.isqrt(q.denominator)
    assert num * num == q.numerator and den * den == q.denominator, f"{q} is not a rational square"
    return Fraction(num, den)


def _replay(case: dict, cfg: str) -> tuple[dict, Fraction, Fraction]:
    """ρ, HDI and MSE − B² of one configuration from its integer W_K columns, in Fractions."""
    assert case["d_k"] == 1
    cols = [[Fraction(row[0]) for row in w] for w in case["configs"][cfg]["W_K"]]
    dot = lambda a, b: sum(x * y for x, y in zip(a, b))  # noqa: E731
    hh = len(cols)
    rho = [[Fraction(1)] * hh for _ in range(hh)]
    for i, j in combinations(range(hh), 2):
        rho[i][j] = rho[j][i] = dot(cols[i], cols[j]) ** 2 / (dot(cols[i], cols[i]) * dot(cols[j], cols[j]))
    alpha = [Fraction(a) for a in case["alpha"]]
    var = [Fraction(v) for v in case["V"]]
    mse = sum(alpha[i] * alpha[j] * (var[i] if i == j else rho[i][j] * _exact_sqrt(var[i] * var[j]))
              for i in range(hh) for j in range(hh))
    return {f"{i + 1}{j + 1}": rho[i][j] for i, j in combinations(range(hh), 2)}, 1 - mean_pair(rho), mse


@pytest.mark.claim("C5", part="derivation")
def test_c5_counterexamples_replay_in_exact_rationals(c5):
    cases = counterexamples()
    assert set(cases) == {"unequal_variance", "nonuniform_weights"}
    violates = []
    for name, case in cases.items():
        got = {cfg: _replay(case, cfg) for cfg in ("A", "B")}
        for cfg, (rho, hdi, mse) in got.items():
            stored = case["configs"][cfg]
            assert {k: Fraction(v) for k, v in stored["rho"].items()} == rho
            assert Fraction(stored["HDI"]) == hdi and Fraction(stored["mse_minus_bias_sq"]) == mse
        (_, hdi_a, mse_a), (_, hdi_b, mse_b) = got["A"], got["B"]
        bad = hdi_b > hdi_a and mse_b > mse_a
        assert case["violates"] == bad
        violates.append(bad)
        assert c5.results[f"cx_{name}"].expr == sp.Tuple(*(sp.Rational(x.numerator, x.denominator)
                                                           for x in (hdi_a, hdi_b, mse_a, mse_b)))
    assert all(violates)
    found = {c.name: c.holds for c in c5.comparisons}
    assert found["monotone_in_hdi_outside_model"] is (not any(violates))
    assert found["line_under_model"] is True


def _softmax_weights(wq: np.ndarray, wk: np.ndarray, query: np.ndarray, keys: np.ndarray) -> np.ndarray:
    scores = (keys @ wk) @ (wq.T @ query) / math.sqrt(wk.shape[1])
    e = np.exp(scores - scores.max())
    return e / e.sum()


@pytest.mark.claim("C5", part="derivation")
def test_c5_orthogonal_nw_heads_share_the_noise(c5):
    """Monte Carlo over the noise, design fixed: Cov(f̂_1, f̂_2 | X) = σ² Σ w¹w² > 0 at ρ = 0."""
    rng = np.random.default_rng(20260521)
    n, sigma = 6, 0.7
    keys = rng.standard_normal((n, 2))
    query = np.array([0.8, -0.5])
    e1, e2 = np.array([[1.0], [0.0]]), np.array([[0.0], [1.0]])
    assert overlap([e1, e2])[0, 1] == 0.0
    w1, w2 = _softmax_weights(e1, e1, query, keys), _softmax_weights(e2, e2, query, keys)
    f = np.sin(keys[:, 0])
    y = f + sigma * rng.standard_normal((MC_REPS, n))
    est1, est2 = y @ w1, y @ w2
    prod = (est1 - est1.mean()) * (est2 - est2.mean())
    cov_mc, se = prod.mean(), prod.std(ddof=1) / math.sqrt(MC_REPS)
    cov_exact = sigma ** 2 * float(w1 @ w2)
    assert abs(cov_mc - cov_exact) <= MC_Z * se
    assert cov_mc > MC_Z * se > 0
    # Exact degenerate case of the derivation: query e1, keys in span(e2): both heads uniform.
    flat = np.column_stack([np.zeros(n), rng.standard_normal(n)])
    u1 = _softmax_weights(e1, e1, np.array([1.0, 0.0]), flat)
    u2 = _softmax_weights(e2, e2, np.array([1.0, 0.0]), flat)
    assert float(u1 @ u2) / math.sqrt(float(u1 @ u1) * float(u2 @ u2)) == pytest.approx(1.0, abs=1e-15)
    assert {c.name: c.holds for c in c5.comparisons}["premise_on_nw_heads"] is False


# -- C6 ---------------------------------------------------------------------------------------
@pytest.mark.claim("C6", part="derivation")
@given(st.integers(0, 2**32 - 1))
def test_c6_bound_never_exceeded_by_random_subspaces(seed):
    c6 = derivation("C6")
    rng = np.random.default_rng(seed)
    hh, dk = int(rng.integers(2, 7)), int(rng.integers(1, 4))
    dim = int(rng.integers(dk, 2 * hh * dk))
    bases = random_bases(rng, hh, dk, dim)
    rho = overlap(bases)
    projs = [u @ u.T for u in bases]
    frame = sum(projs)
    assert np.sum(frame * frame) >= (hh * dk) ** 2 / dim - BOUND_SLACK * (hh * dk) ** 2
    phi = sum(np.sum((bases[i].T @ bases[j]) ** 2) for i in range(hh) for j in range(hh) if i != j)
    assert phi >= numeric(c6, "min_overlap_potential")(hh, dk, dim) - BOUND_SLACK * hh * hh * dk
    assert 1 - mean_pair(rho) <= numeric(c6, "hdi_bound")(hh, dk, dim) + BOUND_SLACK
    bias, var = 0.4, 2.0
    assert brute_mse(bias, [1 / hh] * hh, [var] * hh, rho) >= numeric(c6, "min_mse")(bias, var, hh, dk, dim) - LINE_TOL


def _lines(angles) -> list[np.ndarray]:
    return [np.array([[math.cos(a)], [math.sin(a)]]) for a in angles]


def _tight_frames_numpy() -> dict[tuple[int, int, int], list[np.ndarray]]:
    """Tight fusion frames built here, independently of the derivation (all with H d_k > d)."""
    cube = [np.array([[sx], [sy], [1.0]]) / math.sqrt(3) for sx in (1, -1) for sy in (1, -1)]
    merc = _lines([math.pi / 2 + 2 * math.pi * k / 3 for k in range(3)])
    return {
        (3, 1, 2): merc,
        (5, 1, 2): _lines([math.pi * k / 5 for k in range(5)]),          # harmonic frame
        (4, 1, 3): cube,                                                   # cube diagonals
        (3, 2, 3): [np.delete(np.eye(3), h, axis=1) for h in range(3)],    # coordinate planes
        (3, 2, 4): [np.kron(u, np.eye(2)) for u in merc],                  # Mercedes ⊗ I_2
    }


@pytest.mark.claim("C6", part="derivation")
@pytest.mark.parametrize("shape", list(_tight_frames_numpy()))
def test_c6_tight_frames_reach_the_bound(c6, shape):
    hh, dk, dim = shape
    bases = [np.linalg.qr(w)[0] for w in _tight_frames_numpy()[shape]]
    frame = sum(u @ u.T for u in bases)
    assert np.allclose(frame, hh * dk / dim * np.eye(dim), rtol=0, atol=FRAME_TOL)
    assert 1 - mean_pair(overlap(bases)) == pytest.approx(numeric(c6, "hdi_bound")(hh, dk, dim), abs=FRAME_TOL)
    phi = sum(np.sum((bases[i].T @ bases[j]) ** 2) for i in range(hh) for j in range(hh) if i != j)
    assert phi == pytest.approx(numeric(c6, "min_overlap_potential")(hh, dk, dim), abs=FRAME_TOL)


@pytest.mark.claim("C6", part="derivation")
@pytest.mark.parametrize("shape", [(2, 2, 4), (3, 1, 3), (3, 2, 7), (2, 3, 8)])
def test_c6_orthogonal_blocks_reach_zero_overlap(c6, shape):
    hh, dk, dim = shape
    q = np.linalg.qr(np.random.default_rng(hh * 100 + dk * 10 + dim).standard_normal((dim, dim)))[0]
    bases = [q[:, h * dk:(h + 1) * dk] for h in range(hh)]
    rho = overlap(bases)
    assert np.max(np.abs(rho - np.eye(hh))) <= ORTH_TOL
    assert numeric(c6, "hdi_bound")(hh, dk, dim) == 1.0
    assert numeric(c6, "min_overlap_potential")(hh, dk, dim) == 0.0
    assert brute_mse(0.4, [1 / hh] * hh, [2.0] * hh, rho) == pytest.approx(
        numeric(c6, "min_mse")(0.4, 2.0, hh, dk, dim), abs=LINE_TOL)


@pytest.mark.claim("C6", part="derivation")
def test_c6_two_planes_in_r3_stay_above_the_bound(c6):
    rng = np.random.default_rng(11)
    bound = numeric(c6, "min_overlap_potential")(2, 2, 3)
    assert bound == pytest.approx(4 / 3, abs=1e-15)
    for _ in range(200):
        u1, u2 = random_bases(rng, 2, 2, 3)
        phi = 2 * np.sum((u1.T @ u2) ** 2)
        assert phi >= 2 - FRAME_TOL > bound


@pytest.mark.claim("C6", part="derivation")
def test_c6_curvature_at_orthogonal_subspaces():
    """Φ(t)/t² → 2||U_1ᵀΔ_2 + Δ_1ᵀU_2||_F² along U_h + tΔ_h (symbolic: d = 4; here d = 6)."""
    rng = np.random.default_rng(3)
    q = np.linalg.qr(rng.standard_normal((6, 6)))[0]
    u1, u2 = q[:, :2], q[:, 2:4]
    dl1, dl2 = rng.standard_normal((6, 2)), rng.standard_normal((6, 2))
    b1, b2 = np.linalg.qr(u1 + TAYLOR_T * dl1)[0], np.linalg.qr(u2 + TAYLOR_T * dl2)[0]
    phi = 2 * np.sum((b1.T @ b2) ** 2)
    limit = 2 * np.sum((u1.T @ dl2 + dl1.T @ u2) ** 2)
    assert phi / TAYLOR_T ** 2 == pytest.approx(limit, rel=TAYLOR_RTOL)


#: comparison -> (its deciding group, how, whether the statement holds)
DECIDED = {
    "C5": {"line_under_model": ("supported_by line", True),
           "a_straight_line": ("supported_by straight_line", True),
           "non_increasing_any_weights": ("refuted_by mixed_sign", False),
           "restored_by_equal_scaled_weights": ("supported_by restored", True),
           "monotone_in_hdi_outside_model": ("refuted_by outside_model", False),
           "premise_on_nw_heads": ("refuted_by shared_noise", False)},
    "C6": {"orthogonal_optimal_when_feasible": ("supported_by feasible", True),
           "orthogonal_optimal_beyond_d": ("refuted_by beyond_d", False),
           "fusion_bound_always_attained": ("refuted_by not_attained", False)},
}
#: steps each group must hold (the steps that carry its decision)
GROUP_STEPS = {
    "C5": {"line": {"cross_term", "mse_line", "non_increasing", "integrated_line", "mse_line_H5", "c3_split_H2"},
           "straight_line": {"mse_line", "slope", "straight_line"},
           "mixed_sign": {"mixed_sign_line", "mixed_sign_increasing"},
           "outside_model": {"cx_unequal_variance_hdi_higher", "cx_unequal_variance_mse_higher",
                             "cx_nonuniform_weights_hdi_higher", "cx_nonuniform_weights_mse_higher"},
           "shared_noise": {"conditional_covariance_n3", "orthogonal_example_correlation"},
           "restored": {"scaled_line_H3", "equal_pair_weights_force_equal_scaled_weights_H3"}},
    "C6": {"feasible": {"mse_increasing_in_potential", "potential_sum_of_squares", "orthogonal_blocks",
                        "order_t2_is_stationary", "lines_d3_stationary"},
           "beyond_d": {"pair_sum_bound", "hdi_bound_frame", "orthogonality_infeasible", "tight_frame_H3_dk1_d2"},
           "not_attained": {"two_planes_potential", "two_planes_above_bound"}},
}


@pytest.mark.claim(part="derivation")
@pytest.mark.parametrize("claim", ["C5", "C6"])
def test_every_comparison_is_decided_by_its_group(claim):
    der = derivation(claim)
    assert {c.name: (c.decided_by, c.holds) for c in der.comparisons} == DECIDED[claim]
    for name, steps in GROUP_STEPS[claim].items():
        assert steps <= set(der.groups[name].steps), (name, steps - set(der.groups[name].steps))


@pytest.mark.claim("C5", part="derivation")
def test_c5_ensemble_bias_is_stated_as_c3_derives_it(c5):
    """The setting quotes C3's corrected ensemble bias, Σ α_h b_h + (Σα − 1) f, and says when the
    f term drops (Σα = 1, which the uniform weights satisfy), not "B = Σ α_h b_h for any α"."""
    text = c5.assumptions["c3_decomposition"].statement
    assert r"B = \sum_h \alpha_h b_h + (\sum_h \alpha_h - 1) f" in text
    assert r"only when $\sum_h \alpha_h = 1$" in text and "uniform" in text
