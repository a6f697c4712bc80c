"""C4 check (verify.claims.c4) against independent computations written here: principal angles
from scipy.linalg.subspace_angles, the literal formula as explicit loops over entries, and the
literal values of the saved counterexample in exact rationals."""

from __future__ import annotations

import itertools
import json
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from scipy.linalg import subspace_angles

from verify.claims import Context, c4, run_claim
from verify.errors import VerifyError
from verify.judgment.verdicts import Role
from verify.numeric.diversity import hdi
from verify.replay import replay

# ρ from scipy's angles (cos² of each, ~1e-15) against QR + Frobenius sums; heads multiplied by
# matrices of condition <= e²: ~1e-15 measured; 1e-12 is rounding with margin.
HDI_TOL = 1e-12
# Principal angles of well-conditioned d <= 6 matrices: scipy and the check's mpmath both ~1e-15.
ANGLE_TOL = 1e-12
# scipy 1.17's subspace_angles pairs its sine/cosine mask with the reversed cosines, so it takes
# arccos for the small angles: error ~eps/θ (2.6e-8 at θ = 0). Angles are compared directly only
# above this, where that error is < 1e-12; below it, their cosines (accurate for every angle) are.
SCIPY_ARCCOS_MIN = 1e-3


#: the claim whose quick run the shared fixtures ``saved`` and ``result`` (tests/conftest.py) give
CLAIM = "C4"
pytestmark = pytest.mark.claim(CLAIM, part="core")


def _part(result, pid):
    return next(p for p in result.parts if p.id == pid)


# -- references ----------------------------------------------------------------------------------
def _rho(a, b):
    return float(np.mean(np.cos(subspace_angles(a, b)) ** 2))


def _hdi_scipy(W):
    H = len(W)
    return 1.0 - float(np.mean([_rho(W[a], W[b]) for a, b in itertools.combinations(range(H), 2)]))


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
    assert result.id == "C4" and result.stated
    assert {p.id: p.role for p in result.parts} == {"literal formula as stated": Role.DETAIL,
                                                    "subspace form": Role.CORE}
    lit = _part(result, "literal formula as stated")
    assert "sqrt(d_k)·I" in lit.restored_by
    assert not _part(result, "subspace form").model_assumptions
    assert (out / result.plots["c4_literal_vs_subspace"]).stat().st_size > 0


@pytest.mark.claim(CLAIM, part="detail")
def test_counterexample_replays_and_holds_independently(saved):
    result, out = saved
    files = sorted((out / "counterexamples").glob("*.json"))
    assert [f.name for f in files] == ["C4-literal-formula.json"]
    doc, outcome = replay(files[0])
    assert outcome.violates is True and doc["expected"]["violates"] is True
    assert outcome.summary == doc["expected"]["summary"]
    cases = doc["params"]["cases"]
    assert len(cases) == 2                                   # identical orthonormal heads; a scaled pair outside [0, 1]
    for case in cases:
        W = case["W_K"]
        assert all(w == W[0] for w in W)                     # identical heads
        exact = _literal_loops([[[Fraction(x) for x in row] for row in w] for w in W])   # floats are exact rationals
        assert abs(float(exact) - outcome.figures[case["label"]]["literal_hdi"]) <= HDI_TOL
        assert abs(float(exact)) > 0.4                       # far from the stated 0
        assert abs(_hdi_scipy(np.array(W))) <= HDI_TOL       # the subspace form gives 0
    orth, scaled = cases
    d_k = len(orth["W_K"][0][0])
    assert abs(float(_literal_loops(orth["W_K"])) - (1 - 1 / d_k)) <= HDI_TOL
    assert _literal_loops(scaled["W_K"]) < 0


def test_same_seed_same_figures(result):
    again = run_claim("C4", Context(seed=0, quick=True))
    assert again.headline == result.headline
    for a, b in zip(result.parts, again.parts):
        assert a.numeric.figures == b.numeric.figures, a.id
        assert (a.counterexample.data == b.counterexample.data) if a.counterexample else b.counterexample is None


# -- properties of the subspace form against scipy ------------------------------------------------
heads = st.tuples(st.integers(2, 5), st.integers(1, 3), st.integers(0, 4), st.integers(0, 2**31 - 1))


@given(heads)
def test_subspace_hdi_range_and_invariances_against_scipy(cfg):
    H, d_k, extra, seed = cfg
    d = d_k + 1 + extra
    rng = np.random.default_rng(seed)
    W = rng.standard_normal((H, d, d_k))
    ref = _hdi_scipy(W)
    assert -HDI_TOL <= ref <= 1 + HDI_TOL
    assert abs(hdi(W) - ref) <= HDI_TOL
    A = [c4.well_conditioned(rng, d_k) for _ in range(H)]
    WA = np.stack([W[h] @ A[h] for h in range(H)])
    assert abs(_hdi_scipy(WA) - ref) <= HDI_TOL and abs(hdi(WA) - ref) <= HDI_TOL
    perm = rng.permutation(H)
    assert abs(hdi(W[perm]) - ref) <= HDI_TOL
    assert abs(c4.mp_hdi(W) - ref) <= HDI_TOL


@given(heads)
def test_subspace_hdi_extremes_against_scipy(cfg):
    H, d_k, extra, seed = cfg
    rng = np.random.default_rng(seed)
    d = H * d_k + extra
    frame = np.linalg.qr(rng.standard_normal((d, H * d_k)))[0]
    A = [c4.well_conditioned(rng, d_k) for _ in range(H)]
    orth = np.stack([frame[:, h * d_k:(h + 1) * d_k] @ A[h] for h in range(H)])
    same = np.stack([frame[:, :d_k] @ A[h] for h in range(H)])          # one subspace, different bases
    assert abs(_hdi_scipy(orth) - 1) <= HDI_TOL and abs(hdi(orth) - 1) <= HDI_TOL
    assert abs(_hdi_scipy(same)) <= HDI_TOL and abs(hdi(same)) <= HDI_TOL


@given(d=st.integers(2, 6), k1=st.integers(1, 3), k2=st.integers(1, 3), seed=st.integers(0, 2**31 - 1))
def test_mp_principal_angles_match_scipy(d, k1, k2, seed):
    k1, k2 = min(k1, d), min(k2, d)
    rng = np.random.default_rng(seed)
    A, B = rng.standard_normal((d, k1)), rng.standard_normal((d, k2))
    ref = np.sort(subspace_angles(A, B))
    ours = c4.mp_principal_angles(A, B)
    assert np.max(np.abs(np.cos(ours) - np.cos(ref))) <= ANGLE_TOL
    big = ref > SCIPY_ARCCOS_MIN
    assert np.max(np.abs(ours[big] - ref[big]), initial=0.0) <= ANGLE_TOL


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
    assert np.max(np.abs(c4.mp_principal_angles(A, B) - theta)) <= ANGLE_TOL


# -- the literal formula: scale dependence and the restoring scale --------------------------------
@pytest.mark.claim(CLAIM, part="detail")
@given(heads, st.floats(0.2, 4.0))
def test_literal_formula_against_loops_and_its_restoring_scale(cfg, c):
    H, d_k, extra, seed = cfg
    d = d_k + 1 + extra
    rng = np.random.default_rng(seed)
    W = rng.standard_normal((H, d, d_k))
    lit = _literal_loops(W.tolist())
    assert abs(hdi(W, form="literal") - lit) <= HDI_TOL * max(1.0, abs(lit))
    assert abs(_literal_loops((c * W).tolist()) - (1 - c**4 * (1 - lit))) <= HDI_TOL * max(1.0, c**4 * abs(1 - lit))
    # W_h = d_k^(1/4) U_h Q_h (orthonormal U_h, orthogonal Q_h): W_hᵀW_h = sqrt(d_k) I and the
    # literal formula equals the subspace form
    U = [np.linalg.qr(w)[0] for w in W]
    iso = np.stack([d_k**0.25 * U[h] @ np.linalg.qr(rng.standard_normal((d_k, d_k)))[0] for h in range(H)])
    for h in range(H):
        assert np.allclose(iso[h].T @ iso[h], np.sqrt(d_k) * np.eye(d_k), atol=HDI_TOL)
    assert abs(_literal_loops(iso.tolist()) - _hdi_scipy(iso)) <= HDI_TOL


@pytest.mark.claim(CLAIM, part="detail")
def test_replayer_judges_and_rejects_bad_params():
    ok = {"cases": [{"label": "orthogonal", "W_K": [[[1.0], [0.0]], [[0.0], [1.0]]]}]}
    assert c4.judge_literal(ok).violates is False                    # both forms give 1
    assert c4.judge_literal({"cases": [{"W_K": [[[2.0]], [[2.0]]]}]}).violates is True
    with pytest.raises(VerifyError, match="params"):
        c4.judge_literal({"cases": []})
    with pytest.raises(VerifyError, match="cases"):
        c4.judge_literal({"cases": [{"W_K": [[1.0, 2.0]]}]})


@pytest.mark.claim(CLAIM, part="detail")
def test_saved_file_is_plain_json(saved):
    _, out = saved
    for f in (out / "counterexamples").glob("*.json"):
        json.loads(f.read_text())
