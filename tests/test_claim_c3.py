"""C3 check (verify.claims.c3) against independent computations written here: the engine's head
moments and MSE recomputed by brute-force loops (NW weights from scipy.special.softmax, the
engine's documented draws re-derived from SeedSequence), and the decomposition on the empirical
measure of rational head estimates in exact arithmetic (fractions); the correction (Σα − 1) f
recomputed in exact rationals from the runs' weights and the engine's documented evaluation points; the
headline and the summary with their figures aggregated here."""

from __future__ import annotations

import itertools
import math
import re
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from scipy.special import softmax
from test_claims import part_of

from proofs import markup
from proofs.markup import num, sci
from verify.claims import Context, c3
from verify.judgment.verdicts import Role
from verify.numeric import formulas
from verify.numeric.bounds import decomposition_bound
from verify.numeric.dgp import head_projections, make_dgp
from verify.numeric.engine import decompose

# Engine (einsum, blocked) vs the loops here: the same sums of <= 16 products, rounded in another
# order; measured ~1e-16 relative to the largest entry.
REF_RTOL = 1e-12
# A generated float64 expansion of <= 6 heads (~H² terms of O(1) rationals): a few ulps each.
FORMULA_RTOL = 1e-12
# The check's Σ α_h μ_h − f − Σ α_h (μ_h − f) (float64, O(1) terms) against (Σα − 1) f computed here
# in exact rationals from the same floats: a few ulps of the terms' magnitudes.
CORRECTION_RTOL = 1e-12


QUICK = Context(seed=0, quick=True)
C3_HEADLINE = (r"exact; 1 correction: the ensemble bias is $\sum_h \alpha_h b_h + (\sum_h \alpha_h - 1) f$, equal "
               r"to $\sum_h \alpha_h b_h$ only when $\sum_h \alpha_h = 1$")
C3_DECOMPOSITION = (r"$\mathrm{MSE} = (E \hat{f} - f)^2 + \sum_h \alpha_h^2 V_h + "
                    r"\sum_{h \neq h'} \alpha_h \alpha_{h'} C_{hh'}$")
#: the correction's form as every text writes it (markup)
CORRECTION = r"$\sum_h \alpha_h b_h + (\sum_h \alpha_h - 1) f$"
GAPS = ("gap_mse", "gap_bias2", "gap_var_term", "gap_cov_term")

#: the claim whose quick run the shared fixtures ``saved`` and ``result`` (tests/conftest.py) give
CLAIM = "C3"
pytestmark = pytest.mark.claim(CLAIM, part="core")


def _alphas():
    """The quick run's random weights, drawn here as documented (1.5 N(0, 1), α_1 += 1 when
    |Σα − 1| < SUM_ALPHA_GAP), with each run's tag, in the order of the runs."""
    out = []
    for H, method, kernel in itertools.product((1, 3), ("simulate", "exact"), ("softmax", "gaussian")):
        tag = f"any/{H}/{method}/{kernel}"
        a = 1.5 * QUICK.rng(f"c3/{tag}/alpha").standard_normal(H)
        if abs(a.sum() - 1.0) < c3.SUM_ALPHA_GAP:
            a[0] += 1.0
        out.append((tag, H, a))
    return out


# -- structure -------------------------------------------------------------------------------
def test_parts_and_roles(saved):
    result, out = saved
    assert {p.id: p.role for p in result.parts} == {"decomposition-identity": Role.CORE, "ensemble-bias": Role.DETAIL,
                                                    "ueda-nakano": Role.DETAIL}
    ident = part_of(result, "decomposition-identity").numeric.figures
    assert ident["max_error_over_bound"] <= 1.0
    assert {r["method"] for r in ident["cases"]} == {"simulate", "exact"}
    assert {r["kernel"] for r in ident["cases"]} == {"softmax", "gaussian"}
    assert all(abs(r["sum_alpha"] - 1) >= c3.SUM_ALPHA_GAP for r in ident["cases"])
    assert any(min(r["alpha"]) < 0 for r in ident["cases"])
    assert all(r["residual"] <= c3.MP_RESIDUAL_MAX and r["digits_agreed"] >= 14 for r in ident["mp"])
    # the finding: Σ α_h b_h is not the ensemble bias when Σα ≠ 1
    assert ident["ensemble_bias_minus_weighted_head_bias_max"] > 0.1
    assert (out / result.plots["c3_ueda_nakano"]).stat().st_size > 0
    assert {p.numeric.agreement for p in result.parts} == {"rounding"}
    # Ueda-Nakano's uniform weights are that statement's hypothesis, not a model assumption
    assert not part_of(result, "ueda-nakano").model_assumptions
    assert not part_of(result, "decomposition-identity").model_assumptions


def _texts(result):
    texts = [result.summary]
    for p in result.parts:
        texts += [p.finding, p.derived, p.numeric.summary]
    return texts + [c["derived"] for p in result.parts for c in p.symbolic.comparisons]


def test_no_text_repeats_the_corrected_statement(result):
    """The statement C3 corrects, "B = Σ α_h b_h for any α", is in no text of the result; the
    correction's derived form is in the summary, the detail's derived form and finding."""
    for t in _texts(result):
        shown = markup.to_unicode(t)
        assert not re.search(r"B = Σ", shown) and "ensemble bias = Σ" not in shown, shown
    bias = part_of(result, "ensemble-bias")
    for t in (result.summary, bias.derived, bias.finding):
        assert CORRECTION in t, t


@pytest.mark.claim(CLAIM, part="detail")
def test_correction_recomputed_in_exact_rationals(result):
    """The correction (Σα − 1) f: the detail quotes the largest gap between the ensemble bias and
    Σ α_h b_h over the runs; recomputed here as max |(Σα − 1) f(x)| in exact rationals, with α from
    the runs and x the engine's evaluation points (drawn from SeedSequence(seed), as documented)."""
    m = 16                                                   # the quick run's evaluation points
    gap = Fraction(0)
    ident = part_of(result, "decomposition-identity").numeric.figures
    for row, (tag, H, alpha) in zip(ident["cases"], _alphas(), strict=True):
        assert alpha.tolist() == row["alpha"] and H == row["H"]                 # the run's weights
        x = np.random.default_rng(np.random.SeedSequence(QUICK.seed_for(f"c3/{tag}/engine"))).standard_normal((m, 4))
        correction = sum(Fraction(a) for a in row["alpha"]) - 1                # Σα − 1, exactly
        for xi in x:
            gap = max(gap, abs(correction * Fraction(math.sin(2.0 * float(xi[0])))))
    bias = part_of(result, "ensemble-bias").numeric
    assert abs(bias.figures["ensemble_bias_minus_weighted_head_bias_max"] - float(gap)) <= CORRECTION_RTOL * float(gap)
    assert num(float(gap), ".2f") in bias.summary


# -- the judges: synthetic inputs on both sides of every threshold -----------------------------
@pytest.mark.parametrize("alpha,moved", [
    ([0.5, 0.5], True), ([1.0 - c3.SUM_ALPHA_GAP / 2], True), ([1.0 + c3.SUM_ALPHA_GAP], False),
    ([1.0 - c3.SUM_ALPHA_GAP], False), ([-1.0, 0.5], False),
], ids=["sum-1", "half-the-gap", "at-the-gap-above", "at-the-gap-below", "negative-sum"])
def test_weights_kept_away_from_one(alpha, moved):
    out = c3.away_from_one(np.array(alpha))
    assert out.tolist() == ([alpha[0] + 1.0, *alpha[1:]] if moved else alpha)


@pytest.mark.parametrize("error,bound,ok", [
    (0.0, 1e-14, True), (1e-14, 1e-14, True), (np.nextafter(1e-14, 1.0), 1e-14, False), (2e-14, 1e-14, False),
], ids=["zero", "at-bound", "one-ulp-over", "twice"])
def test_rounding_judge(error, bound, ok):
    assert c3.within_rounding(error, bound) is ok


@pytest.mark.parametrize("bound,ok", [
    (0.0, True), (c3.CERTIFIED_RESIDUAL, True), (np.nextafter(c3.CERTIFIED_RESIDUAL, 1.0), False),
    (1e-16, False),         # an enclosure as wide as float64's rounding certifies nothing the float64 run did not show
], ids=["zero", "at-level", "one-ulp-over", "float64-wide"])
def test_certificate_judge(bound, ok):
    assert c3.certified(bound) is ok


_MP_AT = {"residual": c3.MP_RESIDUAL_MAX, "worst_term_gap": 1e-14, "certified": True}


@pytest.mark.parametrize("change,ok", [
    ({}, True),
    ({"residual": np.nextafter(c3.MP_RESIDUAL_MAX, 1.0)}, False),
    ({"residual": 1e-42}, False),   # a 50-digit recomputation off in its 42nd digit: more than cancellation explains
    ({"worst_term_gap": np.nextafter(1e-14, 1.0)}, False),
    ({"certified": False}, False),
    ({"residual": 0.0, "worst_term_gap": 0.0}, True),
], ids=["all-at-threshold", "residual-over", "eight-digits-lost", "float64-term-over", "not-certified", "all-below"])
def test_mp_recomputation_judge(change, ok):
    assert c3.mp_row_agrees({**_MP_AT, **change}, 1e-14) is ok


@pytest.mark.parametrize("ratio,rows,ok", [
    (1.0, [_MP_AT, _MP_AT], True),
    (np.nextafter(1.0, 2.0), [_MP_AT], False),
    (0.5, [_MP_AT, {**_MP_AT, "certified": False}], False),
    (0.5, [{**_MP_AT, "residual": 1e-40}, _MP_AT], False),
], ids=["at-bound", "run-over-bound", "one-recomputation-uncertified", "one-recomputation-off"])
def test_identity_judge(ratio, rows, ok):
    assert c3.identity_agrees(ratio, rows, lambda r: 1e-14) is ok


def test_c3_headline_and_summary_exactly(result):
    """The summary's figures are the largest residuals over the runs (pointwise and integrated),
    the largest mpmath residual and the largest Ueda–Nakano gap, each aggregated here."""
    assert result.headline == C3_HEADLINE
    ident = part_of(result, "decomposition-identity").numeric.figures
    worst = max(max(row["pointwise"], row["integrated"]) for row in ident["cases"])
    mp_res = max(row["residual"] for row in ident["mp"])
    gap = max(row[k] for row in part_of(result, "ueda-nakano").numeric.figures["cases"] for k in GAPS)
    Hs = sorted({H for _, H, _ in _alphas()})
    assert result.summary == (
        f"{C3_DECOMPOSITION} to {sci(worst, 0)} for any $\\alpha$ ($H$ in {Hs}); mpmath 50 digits residual "
        f"{sci(mp_res, 0)}; Ueda–Nakano to {sci(gap, 0)}; the ensemble bias is {CORRECTION}, which is "
        r"$\sum_h \alpha_h b_h$ only if $\sum_h \alpha_h = 1$")


def test_figures_quoted_are_the_figures(result):
    """The core's summary quotes the runs (weights drawn here), the worst of each residual as measured,
    the fewest digits and the certified bound; the rounding bound it compares with is 4 eps (R + H² + n)
    of each run."""
    part = part_of(result, "decomposition-identity")
    fig, text = part.numeric.figures, part.numeric.summary
    alphas = _alphas()
    for row, (_, H, a) in zip(fig["cases"], alphas, strict=True):
        assert row["H"] == H and np.allclose(row["alpha"], a, rtol=1e-15, atol=0)
        assert row["bound"] == 4 * np.finfo(float).eps * (8 + H ** 2 + 32)     # quick R = 8, n = 32
    sums = [float(a.sum()) for _, _, a in alphas]
    assert (f"{len(alphas)} engine runs on real NW heads ($H$ in {sorted({H for _, H, _ in alphas})}" in text
            and f"from {num(min(sums), '.2f')} to {num(max(sums), '.2f')})" in text)
    assert min(sums) < 1 - c3.SUM_ALPHA_GAP and max(sums) > 1 + c3.SUM_ALPHA_GAP     # Σα away from 1 both ways
    for key, col in (("max_pointwise", "pointwise"), ("max_integrated", "integrated"),
                     ("max_generated_vs_measured", "generated_vs_measured")):
        assert fig[key] == max(r[col] for r in fig["cases"]) and sci(fig[key]) in text
    ratio = max(max(r["pointwise"], r["integrated"], r["generated_vs_measured"]) / r["bound"] for r in fig["cases"])
    assert ratio <= fig["max_error_over_bound"] <= 1.0
    assert f"float64 agrees to {min(r['digits_agreed'] for r in fig['mp']):.1f} digits" in text
    assert f"relative residual at most {sci(max(r['certified_residual_bound'] for r in fig['mp']), 0)}" in text


@pytest.mark.claim(CLAIM, part="detail")
def test_c3_ueda_nakano_summary_quotes_the_largest_gap(result):
    part = part_of(result, "ueda-nakano")
    rows = part.numeric.figures["cases"]
    gap = max(r[k] for r in rows for k in GAPS)
    ratio = max(max(r[k] for k in GAPS) / r["bound"] for r in rows)
    assert f"{len(rows)} engine runs with $\\alpha = 1/H$ ($H$ in [2, 3]" in part.numeric.summary
    assert f"max {sci(gap)} (at most {num(ratio, '.2g')} of the rounding bound)" in part.numeric.summary


# -- the engine against loops written here ------------------------------------------------------
def _brute_force(dgp, W, alpha, x_eval, n, R, seed, method):
    """Head moments and MSE on the empirical measure of R replicates, by loops (see engine docs:
    replicate r draws X = N(0, I) (n, d) then, for simulate, the noise, from SeedSequence(seed).spawn(R)[r])."""
    H, d_k = W.shape[0], W.shape[2]
    m = x_eval.shape[0]
    f_eval = np.sin(2.0 * x_eval[:, 0])
    est = np.zeros((R, H, m))
    cond = np.zeros((H, H, m))
    noise_mse = np.zeros(m)
    for r, child in enumerate(np.random.SeedSequence(seed).spawn(R)):
        rng = np.random.default_rng(child)
        X = rng.standard_normal((n, dgp.d))
        y = np.sin(2.0 * X[:, 0])
        if method == "simulate":
            y = y + dgp.sigma * rng.standard_normal(n)
        w = [softmax((x_eval @ W[h]) @ (X @ W[h]).T / math.sqrt(d_k), axis=1) for h in range(H)]
        for h in range(H):
            est[r, h] = w[h] @ y
            if method == "exact":
                for g in range(H):
                    cond[h, g] += dgp.sigma**2 * np.sum(w[h] * w[g], axis=1) / R
        if method == "exact":
            w_ens = sum(alpha[h] * w[h] for h in range(H))
            noise_mse += dgp.sigma**2 * np.sum(w_ens**2, axis=1) / R
    mu = est.mean(axis=0)
    cov = np.zeros((H, H, m))
    for h in range(H):
        for g in range(H):
            cov[h, g] = np.mean((est[:, h] - mu[h]) * (est[:, g] - mu[g]), axis=0) + cond[h, g]
    mse = np.mean((np.einsum("h,rhm->rm", alpha, est) - f_eval) ** 2, axis=0) + noise_mse
    bias2 = (alpha @ mu - f_eval) ** 2
    var = sum(alpha[h] ** 2 * cov[h, h] for h in range(H))
    cross = sum(alpha[h] * alpha[g] * cov[h, g] for h in range(H) for g in range(H) if g != h)
    return mu, cov, mse, bias2, var, cross


@given(H=st.integers(1, 6), alpha_seed=st.integers(0, 2**31 - 1), seed=st.integers(0, 2**31 - 1),
       method=st.sampled_from(["simulate", "exact"]), n=st.integers(4, 16), R=st.integers(2, 6))
def test_engine_matches_brute_force_for_any_weights_and_head_count(H, alpha_seed, seed, method, n, R):
    d, d_k, m = 4, 2, 4
    dgp = make_dgp("single-index", d=d, sigma=0.5)
    arng = np.random.default_rng(alpha_seed)
    alpha = 2.0 * arng.standard_normal(H)                       # any sign, Σα anything
    W = head_projections("random", H, d, d_k, rng=arng)
    x_eval = arng.standard_normal((m, d))
    dec = decompose(dgp, W, alpha=alpha, x_eval=x_eval, n=n, R=R, seed=seed, method=method)
    mu, cov, mse, bias2, var, cross = _brute_force(dgp, W, alpha, x_eval, n, R, seed, method)
    scale = np.abs(mse) + bias2 + np.abs(var) + np.abs(cross)
    assert np.max(np.abs(dec.head_mean - mu)) <= REF_RTOL * max(1.0, np.max(np.abs(mu)))
    assert np.max(np.abs(dec.head_cov - cov)) <= REF_RTOL * np.max(np.abs(cov))
    for ours, ref in ((dec.mse, mse), (dec.bias2, bias2), (dec.var_term, var), (dec.cov_term, cross)):
        assert np.max(np.abs(ours - ref) / scale) <= REF_RTOL
    # the theorem on the brute-force numbers themselves, and the generated expansion
    assert np.max(np.abs(mse - (bias2 + var + cross)) / scale) <= REF_RTOL
    assert np.max(np.abs(c3.stated_mse(dec) - mse) / scale) <= REF_RTOL
    assert dec.identity_error() <= decomposition_bound(R, H, n)


# -- exact arithmetic: any weights, any head count ----------------------------------------------
rationals = st.fractions(min_value=-3, max_value=3, max_denominator=20)


@given(data=st.data(), H=st.integers(1, 6), R=st.integers(1, 5))
def test_decomposition_is_exact_in_rationals(data, H, R):
    """Head estimates F[r][h] (rational), weights α (rational, any sign), target f: on the empirical
    measure of the R replicates, mean (αᵀF_r − f)² = (αᵀμ − f)² + Σ α_h² V_h
    + Σ_{h≠h'} α_h α_h' C_hh' exactly; the generated c3_mse_h<H> evaluates it to float rounding."""
    F = [[data.draw(rationals) for _ in range(H)] for _ in range(R)]
    alpha = [data.draw(rationals) for _ in range(H)]
    f = data.draw(rationals)
    mu = [sum(F[r][h] for r in range(R)) / R for h in range(H)]
    C = [[sum((F[r][a] - mu[a]) * (F[r][b] - mu[b]) for r in range(R)) / R for b in range(H)] for a in range(H)]
    mse = sum((sum(alpha[h] * F[r][h] for h in range(H)) - f) ** 2 for r in range(R)) / R
    bias2 = (sum(a * m for a, m in zip(alpha, mu)) - f) ** 2
    var = sum(alpha[h] ** 2 * C[h][h] for h in range(H))
    cross = sum(alpha[a] * alpha[b] * C[a][b] for a in range(H) for b in range(H) if a != b)
    assert mse == bias2 + var + cross
    gen = c3.MSE_FORMS[H](*map(float, alpha), *map(float, mu), float(f),
                          *(float(C[a][b]) for a in range(H) for b in range(a, H)))
    assert abs(float(gen) - float(mse)) <= FORMULA_RTOL * float(abs(mse) + bias2 + abs(var) + abs(cross) + 1)
    # the ensemble bias in head biases: Σ α_h b_h + (Σα − 1) f, not Σ α_h b_h unless Σα = 1 (or f = 0)
    weighted = sum(a * (m - f) for a, m in zip(alpha, mu))
    assert sum(a * m for a, m in zip(alpha, mu)) - f == weighted + (sum(alpha) - 1) * f
    if H >= 2:
        # uniform weights: Ueda-Nakano, exactly, and the generated form
        u = [Fraction(1, H)] * H
        mse_u = sum((sum(F[r]) / H - f) ** 2 for r in range(R)) / R
        bias_bar = sum(m - f for m in mu) / H
        var_bar = sum(C[h][h] for h in range(H)) / H
        covar_bar = sum(C[a][b] for a in range(H) for b in range(H) if a != b) / (H * (H - 1))
        assert mse_u == bias_bar**2 + var_bar / H + (1 - Fraction(1, H)) * covar_bar
        assert sum(u) == 1
        gen_u = float(formulas.c3_ueda_nakano(float(bias_bar), float(var_bar), float(covar_bar), H))
        assert abs(gen_u - float(mse_u)) <= FORMULA_RTOL * float(bias_bar**2 + var_bar + abs(covar_bar) + 1)


@pytest.mark.claim(CLAIM, part="detail")
def test_weighted_head_bias_counterexample_in_fractions():
    """The derivation's case H = 2, α = (1, 1), μ = (1, 1), f = 1, C = 0: every head is unbiased
    (Σ α_h b_h = 0) but the ensemble predicts 2, MSE 1."""
    alpha, mu, f = [1, 1], [Fraction(1), Fraction(1)], Fraction(1)
    assert sum(a * (m - f) for a, m in zip(alpha, mu)) == 0
    assert (sum(a * m for a, m in zip(alpha, mu)) - f) ** 2 == 1
    assert float(formulas.c3_mse_h2(1, 1, 1, 1, 1, 0, 0, 0)) == 1.0
