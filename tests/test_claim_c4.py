"""C4 check (verify.claims.c4) against independent computations written here: principal angles
from scipy.linalg.subspace_angles, the literal formula as explicit loops over entries, and the
literal values of the saved counterexample in exact rationals, the correction's derived form
(W_hᵀW_h = sqrt(d_k) I) on heads with exact rational Gram matrices, and the headline and summary with
the subspace form's range over the quick run's seeded sets recomputed by scipy."""

from __future__ import annotations

import itertools
from fractions import Fraction

import numpy as np
import pytest
import sympy as sp
from hypothesis import given
from hypothesis import strategies as st
from scipy.linalg import subspace_angles
from test_claims import part_of

from proofs.c4_hdi import RESTORING_GRAM
from proofs.markup import num, sci
from verify.claims import Context, c4
from verify.io import loads_json
from verify.judgment.verdicts import Role
from verify.numeric.dgp import haar_frame, head_projections
from verify.numeric.subspace_reference import (
    mp_hdi,
    mp_principal_angles,
    well_conditioned,
)
from verify.replay import replay

# ρ from scipy's angles (cos² of each, ~1e-15) against QR + Frobenius sums; heads multiplied by
# matrices of condition <= e²: ~1e-15 measured; 1e-12 is rounding with margin.
REF_TOL = 1e-12
# Principal angles of well-conditioned d <= 6 matrices: scipy and the check's mpmath both ~1e-15.
REF_ANGLE_TOL = 1e-12
# scipy 1.17's subspace_angles pairs its sine/cosine mask with the reversed cosines, so it takes
# arccos for the small angles: error ~eps/θ (2.6e-8 at θ = 0). Angles are compared directly only
# above this, where that error is < 1e-12; below it, their cosines (accurate for every angle) are.
SCIPY_ARCCOS_MIN = 1e-3


C4_HEADLINE = (r"exact; 1 correction: the literal normalisation is scale-dependent, it equals $1 - \bar{\rho}$ only "
               r"when $W_h^\top W_h = \sqrt{d_k} I$")

#: the claim whose quick run the shared fixtures ``saved`` and ``result`` (tests/conftest.py) give
CLAIM = "C4"
pytestmark = pytest.mark.claim(CLAIM, part="core")


# -- references ----------------------------------------------------------------------------------
def _rho(a, b):
    return float(np.mean(np.cos(subspace_angles(a, b)) ** 2))


def _hdi_scipy(W):
    """1 − mean_{h<h'} mean cos² of the principal angles (scipy)."""
    return 1.0 - float(np.mean([_rho(W[a], W[b]) for a, b in itertools.combinations(range(len(W)), 2)]))


def _literal_loops(W):
    """1 − 2/(H(H−1)) Σ_{h<h'} Σ_ij (Σ_l W_h[l,i] W_h'[l,j] / d_k)², entry by entry."""
    H, d, d_k = len(W), len(W[0]), len(W[0][0])
    total = 0
    for a, b in itertools.combinations(range(H), 2):
        for i in range(d_k):
            for j in range(d_k):
                total += (sum(W[a][l][i] * W[b][l][j] for l in range(d)) / d_k) ** 2
    return 1 - total * 2 / (H * (H - 1))


# -- structure -------------------------------------------------------------------------------
def test_parts_and_roles(saved):
    result, out = saved
    assert {p.id: p.role for p in result.parts} == {"literal-formula": Role.DETAIL, "subspace-form": Role.CORE}
    lit = part_of(result, "literal-formula")
    assert RESTORING_GRAM == r"$W_h^\top W_h = \sqrt{d_k} I$"
    assert RESTORING_GRAM in lit.restored_by and RESTORING_GRAM in lit.derived and RESTORING_GRAM in lit.finding
    assert not part_of(result, "subspace-form").model_assumptions
    assert (out / result.plots["c4_literal_vs_subspace"]).stat().st_size > 0
    assert {p.id: p.numeric.agreement for p in result.parts} == {"literal-formula": "measured",
                                                                 "subspace-form": "rounding"}


@pytest.mark.claim(CLAIM, part="detail")
def test_counterexample_holds_independently(saved):
    """The saved head sets are identical heads whose literal value (exact rationals, loops) is far from
    the stated 0 while scipy's subspace form gives 0: identical orthonormal heads (1 − 1/d_k), and a
    scaled pair below 0."""
    result, out = saved
    doc, outcome = replay(out / "counterexamples" / "C4-literal-formula.json")
    cases = doc["params"]["cases"]
    assert len(cases) == 2
    for case in cases:
        W = case["W_K"]
        assert all(w == W[0] for w in W)                     # identical heads
        exact = _literal_loops([[[Fraction(x) for x in row] for row in w] for w in W])   # floats are exact rationals
        assert abs(float(exact) - outcome.figures[case["label"]]["literal_hdi"]) <= REF_TOL
        assert abs(float(exact)) > 0.4                       # far from the stated 0
        assert abs(_hdi_scipy(np.array(W))) <= REF_TOL       # the subspace form gives 0
    orth, scaled = cases
    d_k = len(orth["W_K"][0][0])
    assert abs(float(_literal_loops(orth["W_K"])) - (1 - 1 / d_k)) <= REF_TOL
    assert _literal_loops(scaled["W_K"]) < 0


# -- the check's mpmath references against scipy (the properties of hdi itself: tests/test_diversity.py) --
@given(H=st.integers(2, 5), d_k=st.integers(1, 3), extra=st.integers(0, 4), seed=st.integers(0, 2**31 - 1))
def test_mp_hdi_matches_scipy(H, d_k, extra, seed):
    W = np.random.default_rng(seed).standard_normal((H, d_k + 1 + extra, d_k))
    assert abs(mp_hdi(W) - _hdi_scipy(W)) <= REF_TOL


@given(d=st.integers(2, 6), k1=st.integers(1, 3), k2=st.integers(1, 3), seed=st.integers(0, 2**31 - 1))
def test_mp_principal_angles_match_scipy(d, k1, k2, seed):
    k1, k2 = min(k1, d), min(k2, d)
    rng = np.random.default_rng(seed)
    A, B = rng.standard_normal((d, k1)), rng.standard_normal((d, k2))
    ref = np.sort(subspace_angles(A, B))
    ours = mp_principal_angles(A, B)
    assert np.max(np.abs(np.cos(ours) - np.cos(ref))) <= REF_ANGLE_TOL
    big = ref > SCIPY_ARCCOS_MIN
    assert np.max(np.abs(ours[big] - ref[big]), initial=0.0) <= REF_ANGLE_TOL


@given(k=st.integers(1, 3), extra=st.integers(0, 2), log_theta=st.lists(st.floats(-12, 0.19), min_size=3, max_size=3),
       seed=st.integers(0, 2**31 - 1))
def test_mp_principal_angles_recover_prescribed_angles(k, extra, log_theta, seed):
    """A = Q[e_1..e_k], B = Q[cos θ_i e_i + sin θ_i e_{k+i}] with Q orthogonal: the principal angles
    are the θ_i exactly (tiny ones included, down to 1e-12), up to the rounding of Q's products."""
    d = 2 * k + extra
    theta = np.sort(10.0 ** np.array(log_theta[:k]))
    Q = np.linalg.qr(np.random.default_rng(seed).standard_normal((d, d)))[0]
    eye = np.eye(d)
    A = Q @ eye[:, :k]
    B = Q @ (eye[:, :k] * np.cos(theta) + eye[:, k:2 * k] * np.sin(theta))
    assert np.max(np.abs(mp_principal_angles(A, B) - theta)) <= REF_ANGLE_TOL


@pytest.mark.claim(CLAIM, part="detail")
def test_replay_judges_orthogonal_heads_and_identical_scaled_ones():
    ok = {"cases": [{"label": "orthogonal", "W_K": [[[1.0], [0.0]], [[0.0], [1.0]]]}]}
    assert c4.replay_literal(ok).violates is False                   # both forms give 1
    assert c4.replay_literal({"cases": [{"W_K": [[[2.0]], [[2.0]]]}]}).violates is True


# -- the correction's derived form, in exact rationals ----------------------------------------------
def _cayley(seed, k):
    """A rational orthogonal k x k matrix (I - S)(I + S)^-1, S skew-symmetric with small integers."""
    rng = np.random.default_rng(seed)
    S = sp.zeros(k, k)
    for a, b in itertools.combinations(range(k), 2):
        S[a, b] = int(rng.integers(-2, 3))
        S[b, a] = -S[a, b]
    Q = (sp.eye(k) - S) * (sp.eye(k) + S).inv()
    return [[Fraction(int(sp.fraction(x)[0]), int(sp.fraction(x)[1])) for x in Q.row(a)] for a in range(k)]


def _matmul(A, B):
    return [[sum(A[i][k] * B[k][j] for k in range(len(B))) for j in range(len(B[0]))] for i in range(len(A))]


def _t(A):
    return [list(r) for r in zip(*A)]


@pytest.mark.claim(CLAIM, part="detail")
def test_restoring_gram_recomputed_in_exact_rationals():
    """The correction's derived form W_hᵀW_h = sqrt(d_k) I: heads W_h = c U_h Q_h with rational
    orthonormal U_h (5 x 4) and rational orthogonal Q_h; their Gram products are c² Q_hᵀU_hᵀU_h'Q_h'
    (exact for rational c²). With c² = sqrt(d_k) = 2 the literal formula (loops, fractions) equals the
    subspace form 1 − mean ρ exactly; with c² = d_k it is 1 − d_k mean ρ, with c² = 1 it is
    1 − mean ρ/d_k."""
    d, d_k, H = 5, 4, 3
    U = [[row[:d_k] for row in _cayley(seed, d)] for seed in (1, 2, 3)]         # orthonormal columns
    Q = [_cayley(seed, d_k) for seed in (4, 5, 6)]
    eye = [[Fraction(int(i == j)) for j in range(d_k)] for i in range(d_k)]
    assert all(_matmul(_t(u), u) == eye for u in U)
    pairs = list(itertools.combinations(range(H), 2))
    rho = [sum(x * x for r in _matmul(_t(U[a]), U[b]) for x in r) / d_k for a, b in pairs]
    mean_rho = sum(rho) / len(rho)
    assert 0 < mean_rho < 1                                                      # neither identical nor orthogonal

    def literal(c2):
        gram = {(a, b): [[c2 * x for x in r] for r in _matmul(_matmul(_t(Q[a]), _matmul(_t(U[a]), U[b])), Q[b])]
                for a in range(H) for b in range(H)}
        for h in range(H):                                                       # W_hᵀW_h = c² I
            assert gram[h, h] == [[c2 * x for x in r] for r in eye]
        total = sum((x / d_k) ** 2 for a, b in pairs for r in gram[a, b] for x in r)
        return 1 - total * 2 / (H * (H - 1))

    assert literal(Fraction(2)) == 1 - mean_rho                                  # c² = sqrt(d_k): the subspace form
    assert literal(Fraction(d_k)) == 1 - d_k * mean_rho != 1 - mean_rho          # c² = d_k
    assert literal(Fraction(1)) == 1 - mean_rho / d_k != 1 - mean_rho            # orthonormal heads


def _smallest_literal(result):
    """The smallest literal value of the search (1 − c⁴/d_k, written here) and of the raw sets."""
    lit = part_of(result, "literal-formula").numeric.figures
    return min(min(1 - r["scale"] ** 4 / r["d_k"] for r in lit["search"]), lit["raw_gaussian_min_literal"])


@pytest.mark.claim(CLAIM, part="detail")
def test_search_values_are_the_closed_form(result):
    """Identical heads c·U (U orthonormal) give the literal value 1 − c⁴/d_k exactly: every row of the
    search, and the smallest literal value the summary quotes (test_c4_headline_summary_...)."""
    for row in part_of(result, "literal-formula").numeric.figures["search"]:
        assert abs(row["literal_hdi"] - (1 - row["scale"] ** 4 / row["d_k"])) <= REF_TOL * 16
    assert _smallest_literal(result) == -15.0


# -- the judges: synthetic inputs on both sides of every threshold -----------------------------
TOL = c4.HDI_TOL
IDENTICAL, OUTSIDE = c4.IDENTICAL_NONZERO, c4.OUTSIDE_RANGE


@pytest.mark.claim(CLAIM, part="detail")
@pytest.mark.parametrize("lit,identical,bad", [
    (0.0, True, []),
    (TOL, True, []),
    (np.nextafter(TOL, 1.0), True, [IDENTICAL]),
    (1e-11, True, [IDENTICAL]),     # 1e4 times the rounding measured (~1e-15) is no rounding
    (-TOL, True, []),
    (np.nextafter(-TOL, -1.0), True, [IDENTICAL, OUTSIDE]),
    (0.5, False, []),
    (-TOL, False, []),
    (np.nextafter(-TOL, -1.0), False, [OUTSIDE]),
    (1 + TOL, False, []),
    (np.nextafter(1 + TOL, 2.0), False, [OUTSIDE]),
    (-15.0, True, [IDENTICAL, OUTSIDE]),
], ids=["identical-zero", "identical-at-tol", "identical-one-ulp-over", "identical-not-rounding",
        "identical-at-minus-tol", "identical-below", "distinct-inside", "at-minus-tol", "below-minus-tol",
        "at-one-plus-tol", "above-one-plus-tol", "counterexample"])
def test_literal_judge(lit, identical, bad):
    assert c4.literal_violations(lit, identical) == bad


_FORMS_AT = {"identical_orthonormal_vs_c4_literal_identical_orthonormal": TOL, "scaled_vs_c4_literal_scaled": TOL,
             "matched_scale_literal_minus_subspace": TOL, "dk_identity_gram_vs_c4_literal_isotropic": TOL}


@pytest.mark.claim(CLAIM, part="detail")
@pytest.mark.parametrize("key", [None, *_FORMS_AT], ids=["all-at-tol", "identical", "scaled", "matched", "dk-gram"])
def test_literal_forms_judge(key):
    fig = dict(_FORMS_AT)
    if key is not None:
        fig[key] = np.nextafter(TOL, 1.0)
    assert c4.literal_forms_agree(fig) is (key is None)


_SUB_AT = {"hdi_min": -TOL, "hdi_max": 1 + TOL, "identical_max_abs_hdi": TOL, "orthogonal_max_abs_1_minus_hdi": TOL,
           "invariance_WA_max_change": TOL, "permutation_max_change": TOL, "rho_vs_mpmath_max_abs": TOL,
           "hdi_vs_mpmath_max_abs": TOL, "c4_subspace_hdi_h2_d3dk2_mp_vs_hdi": TOL, "c4_rho_dk2_vs_overlap": TOL,
           "principal_angles_vs_mpmath_max_abs": c4.ANGLE_TOL}


@pytest.mark.parametrize("key,value", [
    (None, None), ("hdi_min", np.nextafter(-TOL, -1.0)), ("hdi_max", np.nextafter(1 + TOL, 2.0)),
    *[(k, np.nextafter(TOL, 1.0)) for k in list(_SUB_AT)[2:-1]],
    ("principal_angles_vs_mpmath_max_abs", np.nextafter(c4.ANGLE_TOL, 1.0)),
], ids=["all-at-tol", "below-zero", "above-one", *list(_SUB_AT)[2:-1], "angles"])
def test_subspace_judge(key, value):
    fig = dict(_SUB_AT) if key is None else {**_SUB_AT, key: value}
    assert c4.subspace_agrees(fig) is (key is None)


# -- the headline and the summary ---------------------------------------------------------------
def test_c4_headline_summary_and_subspace_range_recomputed(result):
    """The subspace form's range over the quick run's 8 seeded head sets, by scipy's principal
    angles here (the draws replayed in the check's order); the summary's figure is the larger of
    the invariance change and the angle error."""
    assert result.headline == C4_HEADLINE
    sub = part_of(result, "subspace-form").numeric
    rng = Context(seed=0, quick=True).rng("c4/subspace")
    lo, hi = np.inf, -np.inf
    for _ in range(8):
        H, d_k = int(rng.integers(2, 6)), int(rng.integers(1, 4))
        d = int(rng.integers(d_k + 1, 9))
        v = _hdi_scipy(rng.standard_normal((H, d, d_k)))
        lo, hi = min(lo, v), max(hi, v)
        [well_conditioned(rng, d_k) for _ in range(H)]                # the check's draws, in its order
        rng.permutation(H)
        if H * d_k <= d:
            head_projections("orthogonal", H, d, d_k, rng=rng)
    assert abs(sub.figures["hdi_min"] - lo) <= REF_TOL and abs(sub.figures["hdi_max"] - hi) <= REF_TOL
    assert f"8 seeded raw head sets: HDI in [{num(lo, '.3f')}, {num(hi, '.3f')}]" in sub.summary
    worst = max(sub.figures["invariance_WA_max_change"], sub.figures["principal_angles_vs_mpmath_max_abs"])
    assert result.summary == (
        rf"literal formula: identical orthonormal heads $1 - 1/d_k$, values down to "
        f"{num(_smallest_literal(result), '.3g')}, equal to the subspace form only for $W_h^\\top W_h = "
        rf"\sqrt{{d_k}} I$; subspace form in $[0, 1]$, invariances and mpmath angles "
        f"{'exactly' if worst == 0 else 'to ' + sci(worst, 0)}")


#: The deviations each numeric part quotes, in its order.
QUOTED = {"literal-formula": ("identical_orthonormal_vs_c4_literal_identical_orthonormal",
                              "scaled_vs_c4_literal_scaled", "matched_scale_literal_minus_subspace",
                              "dk_identity_gram_vs_c4_literal_isotropic"),
          "subspace-form": ("identical_max_abs_hdi", "orthogonal_max_abs_1_minus_hdi", "invariance_WA_max_change",
                            "permutation_max_change", "principal_angles_vs_mpmath_max_abs", "hdi_vs_mpmath_max_abs",
                            "c4_subspace_hdi_h2_d3dk2_mp_vs_hdi")}


@pytest.mark.parametrize("pid", QUOTED)
def test_a_deviation_of_exactly_0_is_said_so(result, pid):
    """Each deviation a part quotes reads "exactly" where it is 0 and "to" its value otherwise (not
    "within $0$ of $1$" or "by at most $0$")."""
    numeric = part_of(result, pid).numeric
    said = [numeric.figures[k] for k in QUOTED[pid]]
    assert numeric.summary.count(" exactly") == said.count(0.0)
    assert all(f"to {sci(x, 0)}" in numeric.summary for x in said if x != 0)
    assert "$0$ of" not in numeric.summary and "at most $0$" not in numeric.summary


@pytest.mark.claim(CLAIM, part="detail")
def test_c4_correction_quotes_the_raw_sets_and_saves_the_first_violations(saved):
    """The literal formula's figures as quoted, and the head sets the counterexample saves: the first
    identical orthonormal set whose literal value (1 − c⁴/d_k, written here) is not 0, and the first
    set outside [0, 1], in the search's order (d, then d_k, then the scales 1, 2, 1/2)."""
    result, out = saved
    part = part_of(result, "literal-formula")
    rng = Context(seed=0, quick=True).rng("c4/literal/forms")           # the check's draws, in its order
    for dk in range(1, 5):
        haar_frame(rng, dk + 1, dk)
    lowest, gap = np.inf, 0.0
    for _ in range(6):
        H, d_k = int(rng.integers(2, 5)), int(rng.integers(1, 4))
        raw = rng.standard_normal((H, int(rng.integers(d_k + 1, 9)), d_k))
        lit = float(_literal_loops(raw.tolist()))
        lowest, gap = min(lowest, lit), max(gap, abs(lit - _hdi_scipy(raw)))
        rng.uniform(0.3, 3.0)
        head_projections("random", H, raw.shape[1], d_k, rng=rng)
        [haar_frame(rng, d_k, d_k) for _ in range(H)]
    assert (f"6 raw Gaussian sets: literal down to {num(lowest, '.2f')}, up to {num(gap, '.2f')} from the subspace "
            "form") in part.numeric.summary
    assert f"$d_k$ in {list(range(1, 5))}" in part.numeric.summary
    first = {}
    for d in (1, 2, 3):
        for d_k in range(1, d + 1):
            for c in (1.0, 2.0, 0.5):
                lit = 1 - c**4 / d_k
                kind = "identical, orthonormal columns" if c == 1.0 else f"identical, scaled by {c:g}"
                if c == 1.0 and abs(lit) > c4.HDI_TOL:
                    first.setdefault("orthonormal", f"{kind}, $d = {d}$, $d_k = {d_k}$")
                elif lit < -c4.HDI_TOL or lit > 1 + c4.HDI_TOL:
                    first.setdefault("outside", f"{kind}, $d = {d}$, $d_k = {d_k}$")
    expected = [first["orthonormal"], first["outside"]]
    assert expected == ["identical, orthonormal columns, $d = 2$, $d_k = 2$", "identical, scaled by 2, $d = 1$, $d_k = 1$"]
    doc = loads_json("counterexample", (out / part.counterexample.file).read_text())
    assert [c["label"] for c in doc["params"]["cases"]] == expected
