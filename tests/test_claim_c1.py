"""C1 check (verify.claims.c1) against independent computations written here: torch's attention
(scaled_dot_product_attention, softmax), statsmodels' Gaussian NW (KernelReg, reg_type='lc', fixed
bandwidth), and mpmath loops written in this file for the figures the findings, the headline and the
summary quote (from the quick run's seeded inputs)."""

from __future__ import annotations

import math
import re
from fractions import Fraction

import mpmath
import numpy as np
import pytest
import torch
import torch.nn.functional as F
from hypothesis import given
from hypothesis import strategies as st
from statsmodels.nonparametric.kernel_regression import KernelReg
from test_claim_c2 import _mp_mha_sum_of_heads
from test_claims import part_of

import proofs
from proofs.markup import num, sci
from verify.claims import Context, c1
from verify.claims.c1 import experiments
from verify.claims.c1.reference import mp_exp_nw, mp_gaussian_nw
from verify.errors import VerifyError
from verify.io import loads_json
from verify.judgment.verdicts import Role
from verify.numeric.attention import EPS, MultiHeadNW
from verify.numeric.formulas import c1_bandwidth_from_scale, c1_gaussian_bandwidth
from verify.numeric.nw import nw_estimate
from verify.outputs.plots import data_path as plot_data_path
from verify.replay import replay

pytestmark = [pytest.mark.filterwarnings("ignore::FutureWarning"),  # statsmodels' internal RNG notice
              pytest.mark.claim("C1", part="core")]

# Float64 on both sides, O(10) operations per output on O(1) data: differences are ~1e-15;
# 1e-12 (relative to the largest output) is the bar the spec sets for "equal to rounding".
TORCH_RTOL = 1e-12
# statsmodels multiplies per-coordinate Gaussian densities (no max shift) for bandwidths >= 0.4
# and |q - k| <= ~6: rounding of ~d_k products and n sums, ~1e-15; same bar.
KERNELREG_RTOL = 1e-12
# Two generated float64 formulas for the same bandwidth (1/sqrt(1/sqrt(d_k)) and d_k^(1/4)): a few ulps.
FORMULA_RTOL = 1e-15
# A figure the check reports against the same figure recomputed here from the same seeded inputs
# with an mpmath reference written here: both references are the float64 roundings of 50-digit
# values, so they agree to the last bit but for a value within 1e-34 of a rounding boundary.
FIGURE_RTOL = 1e-9
# A closed form at 50 digits against the check's float64 figure: the float64 rounding, 1 ulp.
CLOSED_FORM_TOL = 2e-16
# Digits of the mpmath loops written here.
DPS = 50

#: the roles of the SPEC's reading of C1 (core: the identity; details: the bandwidth; scope: unequal norms)
ROLES = {"exponential-kernel": Role.CORE, "gaussian-equal-norms": Role.DETAIL, "stated-bandwidth": Role.DETAIL,
         "unequal-norms": Role.SCOPE}


#: the claim whose quick run the shared fixtures ``saved`` and ``result`` (tests/conftest.py) give
CLAIM = "C1"


def _gaussian_nw_statsmodels(q, k, v, b):
    """Gaussian NW (local constant) with bandwidth b in every coordinate, one column of v at a time."""
    d_k = k.shape[1]
    cols = [KernelReg(endog=v[:, c], exog=k, var_type="c" * d_k, reg_type="lc", bw=[b] * d_k).fit(q)[0]
            for c in range(v.shape[1])]
    return np.stack(cols, axis=1)


def _rel(a, b, scale):
    return float(np.max(np.abs(np.asarray(a) - np.asarray(b)))) / scale


def _nw_loop(q, k, v, kernel):
    """Σ_j K(q_i, k_j) v_j / Σ_j K(q_i, k_j) by explicit loops in mpmath (float64 in, float64 out)."""
    out = np.zeros((len(q), v.shape[1]))
    for i, qi in enumerate(q):
        w = [kernel([mpmath.mpf(float(a)) for a in qi], [mpmath.mpf(float(a)) for a in kj]) for kj in k]
        for c in range(v.shape[1]):
            out[i, c] = float(mpmath.fsum(wj * mpmath.mpf(float(v[j, c])) for j, wj in enumerate(w)) / mpmath.fsum(w))
    return out


def _exp_kernel(s):
    return lambda q, k: mpmath.exp(s * mpmath.fsum(a * b for a, b in zip(q, k)))


def _gauss_kernel(b):
    return lambda q, k: mpmath.exp(-mpmath.fsum((a - c) ** 2 for a, c in zip(q, k)) / (2 * b * b))


# -- structure -------------------------------------------------------------------------------
def test_parts_and_roles(saved):
    result, out = saved
    assert {p.id: p.role for p in result.parts} == ROLES
    # the numbers agree with the derivation (no part's numeric side contradicts what it checks)
    assert {p.id: p.numeric.agreement for p in result.parts} == {
        "exponential-kernel": "rounding", "gaussian-equal-norms": "rounding", "stated-bandwidth": "measured",
        "unequal-norms": "measured"}
    gauss = part_of(result, "gaussian-equal-norms")
    assert gauss.model_assumptions == [r"every key has the same norm: $\lVert k_i \rVert = r$ for all $i$"]
    assert gauss.numeric.figures["unequal_norms_max_discrepancy"] > 10 * c1.MISMATCH_MIN
    bw = part_of(result, "stated-bandwidth")
    assert bw.counterexample is not None and "d_k^{1/4}" in bw.derived
    # the seeded search: d_k = 1 never violates (1/sqrt(1) = 1^(1/4)), every d_k > 1 case does
    table = bw.numeric.figures["cases"]
    assert all(not r["violates"] for r in table if r["d_k"] == 1)
    assert all(r["violates"] for r in table if r["d_k"] > 1)
    assert bw.counterexample.data["params"] == c1.NAMED_BANDWIDTH_CASE
    assert (out / result.plots["c1_bandwidth"]).stat().st_size > 0


@pytest.mark.claim(CLAIM, part="detail")
def test_headline_figure_recomputed_in_mpmath(result):
    """The correction's figure: at d_k = 4, q = e_1, keys ±e_1, values (1, 0) the head is
    1/(1 + e^{-1}) (torch) and Gaussian NW with the stated b = 1/2 is 1/(1 + e^{-8}), with b = sqrt 2 the
    head (statsmodels); recomputed here by a loop in mpmath from the derivation's configuration, against
    the closed forms, the replay and the figures the numeric summary quotes."""
    q, k, v = (np.array(c1.NAMED_BANDWIDTH_CASE[x]) for x in ("queries", "keys", "values"))
    torch_head = F.scaled_dot_product_attention(*(torch.from_numpy(a) for a in (q, k, v))).numpy()[0, 0]
    assert abs(torch_head - 1 / (1 + math.exp(-1))) <= TORCH_RTOL
    assert abs(_gaussian_nw_statsmodels(q, k, v, 0.5)[0, 0] - 1 / (1 + math.exp(-8))) <= KERNELREG_RTOL
    assert abs(_gaussian_nw_statsmodels(q, k, v, math.sqrt(2))[0, 0] - torch_head) <= KERNELREG_RTOL
    out = c1.replay_stated_bandwidth(c1.NAMED_BANDWIDTH_CASE)
    assert out.violates and abs(out.figures["diff_stated_bandwidth_mp"] - (1 / (1 + math.exp(-8)) - torch_head)) \
        <= TORCH_RTOL
    case = proofs.c1_softmax_nw.NAMED_CASE
    q, keys, values = case["q"], case["keys"], case["values"]
    assert case["d_k"] == len(q) == 4
    with mpmath.workdps(DPS):
        def estimate(weight):
            w = [weight(k) for k in keys]
            return sum(wi * v for wi, v in zip(w, values)) / sum(w)

        head = estimate(lambda k: mpmath.exp(sum(a * b for a, b in zip(q, k)) / mpmath.sqrt(case["d_k"])))
        stated = estimate(lambda k: mpmath.exp(-sum((a - b) ** 2 for a, b in zip(q, k)) / (2 * mpmath.mpf(1) / 4)))
        assert abs(head - 1 / (1 + mpmath.exp(-1))) < mpmath.mpf(10) ** (5 - DPS)
        assert abs(stated - 1 / (1 + mpmath.exp(-8))) < mpmath.mpf(10) ** (5 - DPS)
    named = part_of(result, "stated-bandwidth").numeric.figures["named_case"]
    assert abs(named["head"] - float(head)) <= CLOSED_FORM_TOL
    assert abs(named["stated_bandwidth_estimate"] - float(stated)) <= CLOSED_FORM_TOL
    assert abs(named["difference"] - float(stated - head)) <= CLOSED_FORM_TOL
    summary = part_of(result, "stated-bandwidth").numeric.summary
    for x in (stated, head, stated - head):
        assert num(float(x), ".5f") in summary


def _identity_figure():
    """max relative error of nw_estimate and MultiHeadNW (H = 1) against mpmath loops, on the
    check's seeded quick inputs (draw order as documented in verify.claims.c1.experiments.identity)."""
    ctx = Context(seed=0, quick=True)
    worst = 0.0
    for i, (m, n, d_k, p) in enumerate([(2, 3, 1, 1), (3, 8, 4, 2)]):
        rng = ctx.rng(f"c1/identity/nw/{i}")
        q = rng.standard_normal((m, d_k)) * 1.5
        k = rng.standard_normal((n, d_k)) * 1.5
        v = rng.standard_normal((n, p))
        with mpmath.workdps(DPS):
            ref = _nw_loop(q, k, v, _exp_kernel(1 / mpmath.sqrt(d_k)))
        worst = max(worst, float(np.max(np.abs(nw_estimate(q, k, v) - ref)) / np.max(np.abs(v))))
    d, kdim, vdim, d_k, d_v, d_out, L, S = (3, 4, 5, 2, 3, 2, 2, 4)
    g = ctx.rng("c1/identity/head/0").standard_normal
    W_Q, W_K, W_V, W_O = g((d, d_k)), g((kdim, d_k)), g((vdim, d_v)), g((d_v, d_out))
    b_Q, b_K, b_V, b_O = g(d_k), g(d_k), g(d_v), g(d_out)
    x, xk, xv = g((L, d)), g((S, kdim)), g((S, vdim))
    head = MultiHeadNW(W_Q[None], W_K[None], W_V[None], W_O[None], b_Q=b_Q[None], b_K=b_K[None], b_V=b_V[None],
                       b_O=b_O)
    with mpmath.workdps(DPS):
        ref = _mp_mha_sum_of_heads(head, x, xk, xv)
    va = np.abs(xv) @ np.abs(W_V) + np.abs(b_V)
    out_scale = float(np.max(va) * np.max(np.sum(np.abs(W_O), axis=0)) + np.max(np.abs(b_O)))
    return max(worst, float(np.max(np.abs(head(x, xk, xv) - ref)) / out_scale))


def test_core_finding_figure_recomputed(result):
    """The core's finding quotes the largest relative error of the head against exponential-kernel
    NW: recomputed here with mpmath loops from the same seeded inputs."""
    part = part_of(result, "exponential-kernel")
    fig = _identity_figure()
    assert fig == pytest.approx(part.numeric.figures["max_rel_error"], rel=FIGURE_RTOL, abs=0)
    assert sci(fig, 0) in part.finding and sci(fig) in part.numeric.summary


def _gaussian_figure():
    """max relative error of softmax (nw_estimate) and of nw_estimate's Gaussian kernel against an
    mpmath Gaussian NW loop, on the check's seeded equal-norm quick inputs (c1.experiments.gaussian);
    and the largest gap of torch's softmax from that Gaussian NW when each key is rescaled (unequal norms)."""
    ctx = Context(seed=0, quick=True)
    worst = unequal = 0.0
    for i, (m, n, d_k, p) in enumerate([(2, 6, 2, 1), (3, 12, 4, 2)]):
        seed = ctx.seed_for(f"c1/gaussian/{i}")
        rng = np.random.default_rng(seed + 1)
        for s in (1 / math.sqrt(d_k), float(rng.uniform(0.1, 2))):
            norm = float(rng.uniform(0.5, 2.0)) * math.sqrt(d_k)
            draw = np.random.default_rng(seed)
            q, k = draw.standard_normal((m, d_k)), draw.standard_normal((n, d_k))
            k = norm * k / np.linalg.norm(k, axis=1, keepdims=True)
            v = draw.standard_normal((n, p))
            with mpmath.workdps(DPS):
                ref = _nw_loop(q, k, v, _gauss_kernel(1 / mpmath.sqrt(mpmath.mpf(s))))
            vs = float(np.max(np.abs(v)))
            worst = max(worst, _rel(nw_estimate(q, k, v, scale=s), ref, vs),
                        _rel(nw_estimate(q, k, v, kernel="gaussian", bandwidth=1 / math.sqrt(s)), ref, vs))
            k2 = k * rng.uniform(0.5, 2.0, size=(n, 1))      # the check's unequal-norm rescaling
            soft = torch.softmax(torch.from_numpy(q @ k2.T) * s, dim=-1).numpy() @ v
            with mpmath.workdps(DPS):
                unequal = max(unequal, _rel(soft, _nw_loop(q, k2, v, _gauss_kernel(mpmath.mpf(1 / math.sqrt(s)))), vs))
    return worst, unequal


@pytest.mark.claim(CLAIM, part="detail")
def test_gaussian_finding_figure_recomputed(result):
    """The Gaussian detail's finding quotes the largest relative error of softmax against Gaussian NW
    with b = 1/sqrt(s) on equal-norm keys: recomputed here with an mpmath loop."""
    part = part_of(result, "gaussian-equal-norms")
    fig, unequal = _gaussian_figure()
    assert fig == pytest.approx(part.numeric.figures["max_rel_error"], rel=FIGURE_RTOL, abs=0)
    assert unequal == pytest.approx(part.numeric.figures["unequal_norms_max_discrepancy"], rel=1e-9)
    assert f"discrepancy up to {num(unequal, '.2f')} of" in part_of(result, "unequal-norms").numeric.summary
    assert sci(fig, 0) in part.finding and sci(fig) in part.numeric.summary
    assert sci(fig, 0) in result.summary


@pytest.mark.claim(CLAIM, part="scope")
def test_limit_figures_recomputed(result):
    """Keys 0 and 2e_1 are both at distance 1 from q = e_1: Gaussian NW is 1/2 at every bandwidth
    (statsmodels), the head e/(1 + e) (torch, mpmath); the replay, the limit's figures and its summary
    quote them, with the grid of bandwidths."""
    q, k, v = (np.array(c1.UNEQUAL_NORMS_CASE[x]) for x in ("queries", "keys", "values"))
    torch_head = F.scaled_dot_product_attention(*(torch.from_numpy(a) for a in (q, k, v))).numpy()[0, 0]
    assert abs(torch_head - math.e / (1 + math.e)) <= TORCH_RTOL
    for b in (0.3, 1.0, 3.0):
        assert abs(_gaussian_nw_statsmodels(q, k, v, b)[0, 0] - 0.5) <= KERNELREG_RTOL
    out = c1.replay_unequal_norms(c1.UNEQUAL_NORMS_CASE)
    assert out.violates and abs(out.figures["closest"] - (torch_head - 0.5)) <= TORCH_RTOL
    part = part_of(result, "unequal-norms")
    with mpmath.workdps(DPS):
        head = mpmath.e / (1 + mpmath.e)
    case, text = part.numeric.figures["derivation_case"], part.numeric.summary
    assert abs(case["softmax"] - float(head)) <= CLOSED_FORM_TOL and case["gaussian"] == 0.5
    assert num(float(head), ".6f") in text and num(0.5, ".6f") in text
    assert abs(part.numeric.figures["closest"] - float(head - mpmath.mpf(1) / 2)) <= CLOSED_FORM_TOL
    bands = sorted({*c1.UNEQUAL_BANDWIDTHS, 4 ** 0.25})
    assert part.numeric.figures["bandwidths"] == bands
    assert f"at {len(bands)} bandwidths from {num(bands[0], 'g')} to {num(bands[-1], 'g')}" in text
    assert f"the closest {num(float(head) - 0.5, '.3g')} of" in text
    assert part.restored_by.startswith("keys of one common norm")


@pytest.mark.claim(CLAIM, part="scope")
@given(d_k=st.integers(1, 4), n=st.integers(2, 6), seed=st.integers(0, 2**31 - 1))
def test_unequal_norms_replayer_judges_like_statsmodels(d_k, n, seed):
    """On random unequal-norm keys the replayer's closest bandwidth matches torch vs statsmodels."""
    rng = np.random.default_rng(seed)
    q, k, v = rng.standard_normal((2, d_k)), rng.standard_normal((n, d_k)) * rng.uniform(0.5, 2, (n, 1)), \
        rng.standard_normal((n, 1))
    out = c1.replay_unequal_norms({"d_k": d_k, "queries": q.tolist(), "keys": k.tolist(), "values": v.tolist()})
    # every bandwidth of the documented grid, and the one that works for equal norms, is tried
    assert {float(b) for b in out.figures["diff_by_bandwidth"]} == {*c1.UNEQUAL_BANDWIDTHS, d_k ** 0.25}
    head = F.scaled_dot_product_attention(*(torch.from_numpy(a) for a in (q, k, v))).numpy()
    vs = float(np.max(np.abs(v)))
    for b, diff in out.figures["diff_by_bandwidth"].items():
        assert abs(_rel(head, _gaussian_nw_statsmodels(q, k, v, float(b)), vs) - diff) <= KERNELREG_RTOL
    assert out.violates == (out.figures["closest"] > c1.MISMATCH_MIN)


@pytest.mark.claim(CLAIM, part="detail")
def test_stated_bandwidth_counterexample_holds_independently(saved):
    """The saved case has keys of one norm; statsmodels' Gaussian NW with the stated bandwidth is another
    estimator than torch's head, with b = d_k^(1/4) it is the head."""
    result, out = saved
    doc, outcome = replay(out / "counterexamples" / "C1-stated-bandwidth.json")
    p = doc["params"]
    q, k, v = (np.array(p[key]) for key in ("queries", "keys", "values"))
    d_k, scale = p["d_k"], float(np.max(np.abs(v)))
    norms = np.linalg.norm(k, axis=1)
    assert np.ptp(norms) <= c1.NORM_RTOL * norms.max()               # equal key norms, as the statement needs
    head = F.scaled_dot_product_attention(*(torch.from_numpy(a) for a in (q, k, v))).numpy()
    stated = _gaussian_nw_statsmodels(q, k, v, 1 / math.sqrt(d_k))
    derived = _gaussian_nw_statsmodels(q, k, v, d_k**0.25)
    assert _rel(head, stated, scale) > c1.MISMATCH_MIN                # the stated bandwidth is another estimator
    assert _rel(head, derived, scale) <= KERNELREG_RTOL               # b = d_k^(1/4) is the head
    assert abs(_rel(head, stated, scale) - outcome.figures["diff_stated_bandwidth_mp"]) <= TORCH_RTOL


# -- the judges: synthetic inputs on both sides of every threshold ------------------------------
MISMATCH = c1.MISMATCH_MIN
ABOVE = np.nextafter(MISMATCH, 1.0)


@pytest.mark.claim(CLAIM, part="detail")
@pytest.mark.parametrize("diff,off", [
    (0.0, False), (MISMATCH / 2, False), (MISMATCH, False), (ABOVE, True), (2 * MISMATCH, True), (0.27, True),
    (5e-3, True),           # the judge's purpose: half a percent of max |v| is a difference between two estimators
], ids=["zero", "half", "at-threshold", "one-ulp-above", "twice", "named-case", "half-a-percent"])
def test_stated_bandwidth_judge(diff, off):
    assert c1.stated_bandwidth_off(diff) is off


@pytest.mark.claim(CLAIM, part="scope")
@pytest.mark.parametrize("diffs,fails", [
    ({"0.5": 0.2, "1.0": 0.3}, True),
    ({"0.5": 0.2, "1.0": MISMATCH}, False),                       # one bandwidth at the threshold fits
    ({"0.5": 0.2, "1.0": ABOVE}, True),
    ({"0.5": 0.2, "1.0": MISMATCH / 2}, False),                   # the best one fits, the other does not
    ({"0.5": 0.0}, False),
], ids=["all-off", "best-at-threshold", "best-one-ulp-above", "one-fits", "exact"])
def test_unequal_norms_judge(diffs, fails):
    assert c1.no_bandwidth_fits(diffs) is fails


@pytest.mark.claim(CLAIM, part="detail")
@pytest.mark.parametrize("spread,rtol,equal", [
    (0.0, None, True), (0.5, None, True), (2.0, None, False),     # spreads in units of NORM_RTOL
    (0.25, 0.25, True),                                           # [0.75, 1]: exactly at a tolerance of 1/4
    (0.25 + 2.0**-20, 0.25, False),
], ids=["identical", "half-the-tolerance", "twice-the-tolerance", "at-tolerance", "above-at-0.25"])
def test_one_common_norm_judge(spread, rtol, equal, monkeypatch):
    if rtol is not None:
        monkeypatch.setattr(c1, "NORM_RTOL", rtol)
    norms = np.array([1.0 - spread, 1.0]) if rtol is not None else np.array([1.0, 1.0 + spread * c1.NORM_RTOL])
    assert c1.one_common_norm(norms) is equal


_IDENTITY_AT = {"max_error_over_bound": 1.0, "n3_closed_form_rel_error": 3e-16, "n3_bound": 3e-16,
                "n3_closed_form_mp_vs_literal_mp": c1.MP_AGREE}


@pytest.mark.parametrize("change,ok", [
    ({}, True),
    ({"max_error_over_bound": np.nextafter(1.0, 2.0)}, False),
    ({"n3_closed_form_rel_error": np.nextafter(3e-16, 1.0)}, False),
    ({"n3_closed_form_mp_vs_literal_mp": np.nextafter(c1.MP_AGREE, 1.0)}, False),
    ({"max_error_over_bound": 0.5, "n3_closed_form_rel_error": 0.0, "n3_closed_form_mp_vs_literal_mp": 0.0}, True),
], ids=["all-at-threshold", "error-over-bound", "closed-form-over-bound", "mp-gap-over", "all-below"])
def test_identity_agreement_judge(change, ok):
    assert c1.identity_agrees({**_IDENTITY_AT, **change}) is ok


_ULPS = c1.FORMULA_ULPS * EPS
_GAUSS_AT = {"max_error_over_bound": 1.0, "n3_circle_keys_digits_agreed": c1.MP_DIGITS_MIN,
             "derivation_counterexample": {"vs_exact_e_over_1_plus_e_and_half": _ULPS},
             "bandwidth_from_scale_vs_gaussian_bandwidth": _ULPS}


@pytest.mark.claim(CLAIM, part="detail")
@pytest.mark.parametrize("change,ok", [
    ({}, True),
    ({"max_error_over_bound": np.nextafter(1.0, 2.0)}, False),
    ({"n3_circle_keys_digits_agreed": np.nextafter(c1.MP_DIGITS_MIN, 0.0)}, False),
    ({"derivation_counterexample": {"vs_exact_e_over_1_plus_e_and_half": np.nextafter(_ULPS, 1.0)}}, False),
    ({"bandwidth_from_scale_vs_gaussian_bandwidth": np.nextafter(_ULPS, 1.0)}, False),
], ids=["all-at-threshold", "error-over-bound", "too-few-digits", "counterexample-off", "bandwidths-differ"])
def test_gaussian_agreement_judge(change, ok):
    assert c1.gaussian_agrees({**_GAUSS_AT, **change}) is ok


@pytest.mark.claim(CLAIM, part="detail")
@pytest.mark.parametrize("table,violates,certified,ok", [
    ([{"diff_derived": 1e-16, "derived_bound": 1e-16}], True, [True, True], True),
    ([{"diff_derived": np.nextafter(1e-16, 1.0), "derived_bound": 1e-16}], True, [True, True], False),
    ([{"diff_derived": 0.0, "derived_bound": 1e-16}], False, [True, True], False),
    ([{"diff_derived": 0.0, "derived_bound": 1e-16}], True, [True, False], False),
    ([{"diff_derived": 0.0, "derived_bound": 1e-16}, {"diff_derived": 2e-16, "derived_bound": 1e-16}], True,
     [True], False),
], ids=["at-bound", "derived-over-bound", "named-case-not-off", "certificate-fails", "one-case-over"])
def test_bandwidth_consistency_judge(table, violates, certified, ok):
    named = {"violates": violates, "certificates": [{"holds": h} for h in certified]}
    assert c1.bandwidth_consistent(table, named) is ok


@pytest.mark.claim(CLAIM, part="detail")
@pytest.mark.parametrize("level,holds", [(c1.CERTIFIED_EQUAL, True), (c1.CERTIFIED_EQUAL * 1e-20, False)],
                         ids=["at-the-level", "below-the-balls-radii"])
def test_certified_equality_level(level, holds):
    """At the named case, arb certifies that b = d_k^(1/4) reproduces the head to CERTIFIED_EQUAL; a level
    below the radii of 256-bit balls (~1e-75) certifies nothing."""
    certs = experiments.certificates(c1.NAMED_BANDWIDTH_CASE, Fraction(1, 2), c1.MISMATCH_MIN, level)
    assert [c["holds"] for c in certs] == [True, holds]


# -- the check's mpmath references against torch and statsmodels -----------------------------
@given(m=st.integers(1, 4), n=st.integers(1, 8), d_k=st.integers(1, 6), p=st.integers(1, 3),
       spread=st.floats(0.1, 3.0), seed=st.integers(0, 2**31 - 1))
def test_mp_exp_nw_is_torch_attention(m, n, d_k, p, spread, seed):
    g = torch.Generator().manual_seed(seed)
    q, k = (spread * torch.randn(s, generator=g, dtype=torch.float64) for s in ((m, d_k), (n, d_k)))
    v = torch.randn((n, p), generator=g, dtype=torch.float64)
    ref = F.scaled_dot_product_attention(q, k, v).numpy()
    ours = mp_exp_nw(q.numpy(), k.numpy(), v.numpy())
    assert _rel(ours, ref, float(v.abs().max())) <= TORCH_RTOL


@given(m=st.integers(1, 3), n=st.integers(2, 6), d_k=st.integers(1, 4), r=st.floats(0.2, 2.0),
       s=st.one_of(st.none(), st.floats(0.1, 2.0)), seed=st.integers(0, 2**31 - 1))
@pytest.mark.claim(CLAIM, part="detail")
def test_equal_norms_softmax_is_statsmodels_gaussian_nw(m, n, d_k, r, s, seed):
    """Keys of one norm: torch's softmax with scale s = statsmodels' Gaussian NW with the check's
    b = c1_bandwidth_from_scale(s) (= c1_gaussian_bandwidth(d_k) for s = 1/sqrt(d_k)) = the check's
    mpmath Gaussian NW."""
    c = c1.equal_norm_case(seed, m, n, d_k, 2, r)
    scale = 1 / math.sqrt(d_k) if s is None else s
    b = float(c1_bandwidth_from_scale(scale))
    if s is None:
        assert b == pytest.approx(float(c1_gaussian_bandwidth(d_k)), rel=FORMULA_RTOL)
    soft = torch.softmax(torch.from_numpy(c["q"] @ c["k"].T) * scale, dim=-1).numpy() @ c["v"]
    ref = _gaussian_nw_statsmodels(c["q"], c["k"], c["v"], b)
    vs = float(np.max(np.abs(c["v"])))
    assert _rel(soft, ref, vs) <= KERNELREG_RTOL
    assert _rel(mp_gaussian_nw(c["q"], c["k"], c["v"], b), ref, vs) <= KERNELREG_RTOL


@pytest.mark.claim(CLAIM, part="detail")
@given(d_k=st.integers(2, 6), n=st.integers(2, 6), seed=st.integers(0, 2**31 - 1))
def test_replayer_judges_like_statsmodels(d_k, n, seed):
    """The replayer's verdict on any equal-norm case agrees with torch vs statsmodels at b = 1/sqrt(d_k)."""
    c = c1.equal_norm_case(seed, 2, n, d_k, 1, 1.0)
    out = c1.replay_stated_bandwidth({"d_k": d_k, "queries": c["q"].tolist(), "keys": c["k"].tolist(),
                              "values": c["v"].tolist()})
    soft = torch.softmax(torch.from_numpy(c["q"] @ c["k"].T) / math.sqrt(d_k), dim=-1).numpy() @ c["v"]
    stated = _gaussian_nw_statsmodels(c["q"], c["k"], c["v"], 1 / math.sqrt(d_k))
    diff = _rel(soft, stated, float(np.max(np.abs(c["v"]))))
    assert abs(diff - out.figures["diff_stated_bandwidth_mp"]) <= TORCH_RTOL
    assert out.violates == (diff > c1.MISMATCH_MIN)
    assert out.figures["diff_derived_bandwidth_mp"] <= out.figures["derived_bandwidth_rounding_bound"]


@pytest.mark.claim(CLAIM, part="detail")
def test_replay_refuses_entries_beyond_the_magnitude_bound():
    """The replays' schema bounds every entry: scores stay finite in float64 (the at-the-cap run is in
    tests/test_bad_input.py)."""
    big = np.nextafter(c1.MAX_REPLAY_ABS, np.inf)
    with pytest.raises(VerifyError, match=rf"^params\.keys\[0\]\[0\]: .*<= {re.escape(f'{c1.MAX_REPLAY_ABS:g}')}"):
        c1.replay_stated_bandwidth({**c1.NAMED_BANDWIDTH_CASE, "keys": [[big, 0.0, 0.0, 0.0], [-big, 0.0, 0.0, 0.0]]})


def test_reference_refuses_shapes_that_do_not_match():
    with pytest.raises(VerifyError, match="q, k, v"):
        mp_exp_nw(np.ones((2, 3)), np.ones((4, 2)), np.ones((4, 1)))


@pytest.mark.claim(CLAIM, part="detail")
def test_bandwidth_plot_marks_the_two_bandwidths_and_dips_at_the_derived_one(saved):
    """The plot's vertical markers sit at d_k^(1/4) and 1/sqrt(d_k) for d_k = 4, and the equal-norm
    curve reaches rounding level only at the derived bandwidth (as statsmodels' NW would)."""
    result, out = saved
    data = loads_json("plot", (out / plot_data_path(result.plots["c1_bandwidth"])).read_text())
    lines = {ln["label"]: ln for ln in data["axes"][0]["lines"]}
    assert lines["$b = d_{k}^{1/4}$ (derived)"]["x"] == [math.sqrt(2), math.sqrt(2)]
    assert lines["b = 1/√dₖ (stated)"]["x"] == [0.5, 0.5]
    eq = lines["keys of equal norm"]
    best = min(range(len(eq["x"])), key=lambda i: eq["y"][i])
    assert abs(eq["x"][best] - math.sqrt(2)) <= 1e-12 and eq["y"][best] <= 1e-12
    assert min(y for x, y in zip(eq["x"], eq["y"]) if abs(x - math.sqrt(2)) > 0.1) > c1.MISMATCH_MIN


# -- the headline and the summary ---------------------------------------------------------------
C1_HEADLINE = (r"exact; 1 correction: $1/\sqrt{d_k}$ is the kernel's scale (inverse temperature), the Gaussian "
               r"bandwidth is $d_k^{1/4}$; 1 limit: with unequal key norms the head is no Gaussian NW at any bandwidth "
               r"($e/(1 + e)$ against $1/2$)")


def test_c1_headline_and_summary_exactly(result):
    assert result.headline == C1_HEADLINE
    ident = part_of(result, "exponential-kernel").numeric.figures["max_rel_error"]
    gauss = part_of(result, "gaussian-equal-norms").numeric.figures["max_rel_error"]
    with mpmath.workdps(DPS):
        head, stated = 1 / (1 + mpmath.exp(-1)), 1 / (1 + mpmath.exp(-8))
    assert result.summary == (
        f"the head is exponential-kernel NW to {sci(ident, 0)} (mpmath, 50 digits); Gaussian NW with "
        rf"$b = d_k^{{1/4}}$ under equal key norms to {sci(gauss, 0)}; at $d_k = 4$, keys $\pm e_1$, $q = e_1$ the "
        f"stated $b = 1/2$ gives {num(float(stated), '.4f')} instead of {num(float(head), '.4f')}")
    assert "$0.9997$ instead of $0.7311$" in result.summary


@pytest.mark.claim(CLAIM, part="detail")
def test_c1_correction_counts_and_worst_derived_bandwidth_recomputed(result):
    """'in 6 of 9 seeded equal-norm cases ... while b = d_k^{1/4} stays within ...': each case's
    Gaussian NW with the stated and the derived bandwidth against the head, by mpmath loops here."""
    part = part_of(result, "stated-bandwidth")
    quick = Context(seed=0, quick=True)
    off, worst, n_cases, dks = 0, 0.0, 0, []
    with mpmath.workdps(DPS):
        for d_k in (1, 2, 4):
            for n in (2, 3, 8):
                c = c1.equal_norm_case(quick.seed_for(f"c1/bandwidth/{d_k}/{n}"), 2, n, d_k, 1, 1.0)
                s = 1 / mpmath.sqrt(d_k)
                head = _nw_loop(c["q"], c["k"], c["v"], _exp_kernel(s))
                vs = float(np.max(np.abs(c["v"])))
                off += _rel(_nw_loop(c["q"], c["k"], c["v"], _gauss_kernel(s)), head, vs) > c1.MISMATCH_MIN
                worst = max(worst, _rel(_nw_loop(c["q"], c["k"], c["v"], _gauss_kernel(mpmath.mpf(d_k) ** 0.25)),
                                        head, vs))
                n_cases += 1
                dks.append(d_k)
    summary = part.numeric.summary
    assert (off, n_cases) == (6, 9)
    assert f"in {off} of {n_cases} seeded equal-norm cases with $d_k$ in {sorted(set(dks))} the stated" in summary
    assert worst == pytest.approx(max(r["diff_derived"] for r in part.numeric.figures["cases"]), rel=1e-6)
    assert f"while $b = d_k^{{1/4}}$ stays within {sci(worst, 0)};" in summary
