"""What the user reads: C8's headline and summary compared exactly (numbers formatted as printed),
every figure they, a finding, a limit or a correction quote recomputed here by independent code
(mpmath loops, sums written here) from the same seeded inputs (the quick run, seed 0, shared through
the ``quick_run`` session fixture); for every claim, texts free of "0 × 10^k" and a criterion beside
each judgement. C1 to C5 have theirs in tests/test_claim_cN.py.

Figures already recomputed in tests/test_claim_c8.py (floors and rates) are taken from the part's
figures here and only their formatting and aggregation (the largest, the smallest, the count) is pinned.
"""

from __future__ import annotations

import math
from fractions import Fraction

import mpmath
import numpy as np
import pytest

from proofs.markup import num, sci
from tests.test_claim_c8 import exact_weights, mpq
from tests.test_claims import part_of
from verify.claims import Context, c1, c3, c4, c8

#: A figure recomputed here from the same seeded inputs by other code, against the check's: both
#: are float64 roundings of the same quantity (or of 50-digit values), so they agree to rounding of
#: the comparison itself; 1e-9 relative leaves room for sums taken in another order.
FIGURE_RTOL = 1e-9
QUICK = Context(seed=0, quick=True)


def _run(quick_run, claim):
    return quick_run(claim)[0]


def _close(a, b, rtol=FIGURE_RTOL):
    return abs(a - b) <= rtol * max(abs(a), abs(b))


# ============================================================================ C8
C8_HEADLINE = (r"holds under model (reading i, in $H$, variances rising along the order); 1 correction: geometric "
               r"weights level off at $(1-r)^2 V_1$ (Fibonacci at $V_1/\varphi^4$), they do not decay to 0; 1 limit: for "
               r"mild heterogeneity ($V_h \propto h^\beta$, $\beta < 1$) uniform averaging wins, its MSE decays like "
               r"$H^{\beta-1}$; reading ii, in $n$, heads of different consistency rates: refuted (fixed weights all "
               r"decay at the worst head's rate $n^{-\min \gamma}$, geometric weights only lower the constant)")
PHI = (1 + math.sqrt(5)) / 2


def _weights_here(scheme, H, r=0.5, V=None):
    """The weights from their definitions (tests/test_claim_c8.py, exact rationals) as floats."""
    return np.array([float(x) for x in exact_weights(scheme, H, Fraction(r), V)])


def _c8_monte_carlo():
    """The quick Monte Carlo replayed: R = 4000 draws of independent N(0, V_h) head errors per
    profile and H; mean of (Σ α_h e_h)², its standard error s/√R with the sample standard deviation
    s (divisor R − 1) written as a loop, z against Σ α_h² V_h."""
    rng, R, rows = QUICK.rng("c8/monte-carlo"), 4000, []
    for profile, param in (("poly", 0.5), ("exp", 1.5)):
        for H in (2, 8, 32):
            h = np.arange(1, H + 1, dtype=float)
            V = h ** param if profile == "poly" else param ** (h - 1)
            E = rng.standard_normal((R, H)) * np.sqrt(V)
            for scheme in ("uniform", "geom", "fib_best", "fib_worst", "inverse"):
                a = _weights_here(scheme, H, 0.5, V)
                sq = [float(x) ** 2 for x in E @ a]
                mean = math.fsum(sq) / R
                s = math.sqrt(math.fsum((x - mean) ** 2 for x in sq) / (R - 1))
                se = s / math.sqrt(R)
                W = math.fsum(x * x * v for x, v in zip(a, V))
                rows.append({"profile": profile, "H": H, "scheme": scheme, "mc_mean": mean, "mc_se": se,
                             "z": (mean - W) / se})
    return rows


def _c8_min_gap_inverse():
    """The optimality draws replayed (8 profiles, 200 weight vectors each): min (W(α) − W*)/W(α)
    with W* = 1/Σ 1/V_h written here."""
    rng, gap = QUICK.rng("c8/optimality"), math.inf
    for _ in range(8):
        H = int(rng.integers(2, 17))
        V = np.exp(1.5 * rng.standard_normal(H))
        A = c8.experiments.random_affine(rng, H, 200)
        W_star = 1.0 / math.fsum(1.0 / v for v in V)
        for a in A:
            W = math.fsum(x * x * v for x, v in zip(a, V))
            gap = min(gap, (W - W_star) / W)
        rng.standard_normal((H, H))                          # the covariance case's draw
    return gap


def _c8_decay_W(scheme, H):
    """Σ α_h² h^(1/2) at 30 digits, weights exact."""
    with mpmath.workdps(30):
        return float(mpmath.fsum(mpq(x) ** 2 * mpmath.sqrt(h)
                                 for h, x in enumerate(exact_weights(scheme, H, Fraction(1, 2), None), start=1)))


@pytest.mark.claim("C8", part="core")
def test_c8_monte_carlo_rows_and_largest_z_recomputed(quick_run):
    part = part_of(_run(quick_run, "C8"), "closed-forms")
    mc = part.numeric.figures["monte_carlo"]
    here = _c8_monte_carlo()
    assert len(here) == len(mc["rows"]) and mc["R"] == 4000
    for row, ref in zip(mc["rows"], here):
        assert (row["profile"], row["H"], row["scheme"]) == (ref["profile"], ref["H"], ref["scheme"])
        for key in ("mc_mean", "mc_se", "z"):
            assert _close(row[key], ref[key]), (key, row, ref)
    z = max(abs(r["z"]) for r in here)
    assert _close(mc["max_abs_z"], z)
    assert f"max $\\lvert z \\rvert = {z:.2f}$" in part.numeric.summary
    assert f"({mc['R']} replicates of independent Gaussian head errors, {len(here)} comparisons)" in part.numeric.summary


def _c8_ends(W: dict, s: str, spec: str = ".4f") -> str:
    """W of scheme ``s`` at the first and the last H as C8 quotes it: once where both print alike."""
    lo, hi = format(W[s][0], spec), format(W[s][-1], spec)
    return f"{lo} at both ends" if lo == hi else f"{lo} to {hi}"


@pytest.mark.claim("C8", part="core")
def test_c8_headline_and_summary_exactly(quick_run):
    result = _run(quick_run, "C8")
    assert result.headline == C8_HEADLINE
    ce = part_of(result, "closed-forms").numeric.figures["exact"]
    z = max(abs(r["z"]) for r in _c8_monte_carlo())
    gap = _c8_min_gap_inverse()
    op = part_of(result, "optimal-weights").numeric.figures
    assert _close(op["min_rel_gap_inverse"], gap, 1e-6)
    Hs = c8.DECAY_PARAMS["H_values"]
    W = {s: [_c8_decay_W(s, H) for H in (Hs[0], Hs[-1])] for s in ("uniform", "geom")}
    rate = min(c8.RATE_PARAMS["gammas"])
    assert result.summary == (
        f"closed forms equal exact sums to {sci(max(ce['max_rel_err_float'], ce['sums_max_rel_err_float']), 0)}, "
        f"Monte Carlo max $\\lvert z \\rvert = {z:.1f}$; inverse-variance weights never beaten (min gap "
        f"{num(gap, '.1e')}); $V_h = h^{{0.5}}$, $H = {Hs[0]}$ to {Hs[-1]}: uniform {_c8_ends(W, 'uniform', '.3f')}, "
        f"geometric {_c8_ends(W, 'geom', '.3f')} (floor "
        f"{(1 - 0.5) ** 2:.2f}); in $n$: rate $n^{{-{rate:g}}}$ for every fixed weighting")
    assert "Monte Carlo max $\\lvert z \\rvert = 2.6$" in result.summary


@pytest.mark.claim("C8", part="detail")
def test_c8_optimality_summary_quotes_the_smallest_gap(quick_run):
    op = part_of(_run(quick_run, "C8"), "optimal-weights").numeric
    gap = _c8_min_gap_inverse()
    assert f"min relative gap to inverse-variance {num(gap, '.2e')}," in op.summary
    assert f"{op.figures['profiles']} random profiles, {op.figures['weight_vectors_per_profile']} random" in op.summary


@pytest.mark.claim("C8", part="core")
def test_c8_condition_table_counts_the_structured_wins(quick_run):
    """'matches ... in every one of 15 cases (9 won by structured weights' counted here from the
    table's W values (a row with two schemes counts once if either wins)."""
    part = part_of(_run(quick_run, "C8"), "structured-beat-uniform")
    rows = part.numeric.figures["conditions"]
    wins = 0
    for r in rows:
        Ws = r["W_scheme"] if isinstance(r["W_scheme"], list) else [r["W_scheme"]]
        wins += any(w < r["W_uniform"] for w in Ws)
    assert (wins, len(rows)) == (9, 15)
    assert f"in every one of {len(rows)} cases ({wins} won by structured weights)" in part.numeric.summary


@pytest.mark.claim("C8", part="scope")
def test_c8_limit_and_correction_quote_the_decay_sums(quick_run):
    """The decay and mild-heterogeneity summaries: W at the first and last H, decay factors and the
    final log-log slope of uniform weights, from exact weights and 30-digit sums here."""
    result = _run(quick_run, "C8")
    Hs = c8.DECAY_PARAMS["H_values"]
    W = {s: [_c8_decay_W(s, H) for H in Hs] for s in ("uniform", "geom", "fib_best")}
    lim = part_of(result, "mild-heterogeneity").numeric.summary
    slope = math.log(W["uniform"][-1] / W["uniform"][-2]) / math.log(Hs[-1] / Hs[-2])
    assert (f"uniform {_c8_ends(W, 'uniform')} (decay factor "
            f"{W['uniform'][0] / W['uniform'][-1]:.3f}, final log-log slope {num(slope, '.3f')})") in lim
    assert f"geometric {_c8_ends(W, 'geom')} (factor {W['geom'][0] / W['geom'][-1]:.4f})" in lim
    assert (f"best-first Fibonacci {_c8_ends(W, 'fib_best')} (factor "
            f"{W['fib_best'][0] / W['fib_best'][-1]:.4f})") in lim
    dec = part_of(result, "decay").numeric.summary
    assert (f"geometric ($r = 1/2$) {_c8_ends(W, 'geom')} (floor $(1-r)^2 V_1 = 0.2500$), "
            f"best-first Fibonacci {_c8_ends(W, 'fib_best')} (floor "
            f"$V_1/\\varphi^4 = {PHI ** -4:.4f}$)") in dec


# ============================================================================ every claim here
@pytest.mark.parametrize("claim", ["C1", "C2", "C3", "C4", "C8"])
def test_no_figure_reads_zero_times_a_power_of_ten(quick_run, claim):
    """A figure that is exactly 0 reads "exactly" or "$0$", never "$0 \\times 10^{0}$"."""
    result = _run(quick_run, claim)
    texts = [result.headline, result.summary]
    for p in result.parts:
        texts += [p.finding, p.numeric.summary if p.numeric else ""]
    for text in texts:
        assert r"$0 \times 10^{" not in text, text
    if claim == "C2":
        sc = part_of(result, "free-weights").numeric
        err = sc.figures["closed_form_h2_n3_rel_error"]
        assert ("agrees exactly." if err == 0 else f"agrees to {sci(err, 0)}.") in sc.summary


@pytest.mark.parametrize("claim,pid,words", [
    ("C1", "exponential-kernel", ("float64 rounding bound",)),
    ("C1", "gaussian-equal-norms", ("rounding bound", f"{c1.MP_DIGITS_MIN:g} digits")),
    ("C1", "stated-bandwidth", ("differs from the head by more than", sci(c1.MISMATCH_MIN, 0), "MISMATCH_MIN")),
    ("C1", "unequal-norms", ("no bandwidth", sci(c1.MISMATCH_MIN, 0))),
    ("C3", "decomposition-identity", ("float64 rounding bound", "4 \\varepsilon (R + H^2 + n)",
                                      sci(c3.MP_RESIDUAL_MAX, 0), sci(c3.CERTIFIED_RESIDUAL, 0))),
    ("C3", "ensemble-bias", ("float64 rounding bound", "exact case")),
    ("C3", "ueda-nakano", ("float64 rounding bound", "4 \\varepsilon (R + H^2 + n)")),
    ("C4", "literal-formula", ("identical", "outside $[0, 1]$", sci(c4.HDI_TOL, 0), "HDI_TOL")),
    ("C4", "subspace-form", ("$[0, 1]$", sci(c4.ANGLE_TOL, 0), "rad")),
], ids=["c1-identity", "c1-gaussian", "c1-bandwidth", "c1-unequal-norms", "c3-identity", "c3-ensemble-bias",
        "c3-ueda-nakano", "c4-literal", "c4-subspace"])
def test_every_numeric_part_states_its_criterion(quick_run, claim, pid, words):
    """Each judgement states its criterion, with its threshold, beside its finding: the words after
    "(criterion: " up to the closing parenthesis."""
    text = part_of(_run(quick_run, claim), pid).numeric.summary
    assert "(criterion: " in text, text
    crit = text.split("(criterion: ", 1)[1].rsplit(")", 1)[0]
    for w in words:
        assert w in crit, (pid, crit)
