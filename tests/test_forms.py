"""verify.experiments.forms against computations written here: score forms and their cos² as
loops over matrix entries, overlaps from scipy's principal angles, the Haar means (1 − 1/d² and
1 − (d_k/d)²) against Monte Carlo draws of frames built here, and the configurations whose
diagnostics are known exactly (identical heads, shared keys with orthogonal queries)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.linalg import subspace_angles

from verify.errors import VerifyError
from verify.experiments import forms

# Products and sums of O(d²) float64 terms of size O(1): rounding ~1e-15; 1e-12 leaves room.
ATOL = 1e-12
# Monte Carlo mean checks: |mean − formula| <= Z_MC standard errors (two-sided tail ~6e-7).
Z_MC = 5.0


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
    assert forms.form_subspace_hdi(WQ, WK) == pytest.approx(ref, abs=ATOL)
    dg = forms.diagnostics(WQ[None], WK[None])
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
        means = forms.haar_form_mean(k, d)
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
    (lambda: forms.haar_form_mean(4, 3), "d_k"),
    (lambda: forms.haar_form_draws(0, 2, 1, 3, 10), "rng"),
    (lambda: forms.haar_form_draws(np.random.default_rng(0), 2, 1, 3, 10**9), "draws"),
    (lambda: forms.diagnostics("x", np.ones((2, 3, 1))), "WQ"),
])
def test_bad_input_names_the_argument(call, name):
    with pytest.raises(VerifyError, match=f"^{name}: "):
        call()
