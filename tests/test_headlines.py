"""What the user reads for C1, C2, C3, C4 and C8: each claim's headline and summary compared
exactly (numbers formatted as printed), and every figure they, a finding, a limit or a correction
quote recomputed here by independent code (mpmath loops, scipy, torch, sums written here) from the
same seeded inputs (the quick run, seed 0, shared with tests/test_claim_cN.py through the
``quick_run`` session fixture).

Figures already recomputed in tests/test_claim_cN.py (C1's identity and Gaussian errors, its named
case, C4's smallest literal value, C8's floors and rates) are taken from the part's figures here
and only their formatting and aggregation (the largest, the smallest, the count) is pinned.
"""

from __future__ import annotations

import math
from fractions import Fraction

import mpmath
import numpy as np
import pytest
import torch
from scipy.linalg import subspace_angles

from proofs.markup import num, sci
from verify.claims import Context, c1, c2, c3, c4, c8
from verify.io import loads_json
from verify.numeric.dgp import head_projections
from verify.numeric.subspace_reference import well_conditioned

#: A figure recomputed here from the same seeded inputs by other code, against the check's: both
#: are float64 roundings of the same quantity (or of 50-digit values), so they agree to rounding of
#: the comparison itself; 1e-9 relative leaves room for sums taken in another order.
FIGURE_RTOL = 1e-9
#: Digits of the mpmath loops written here.
DPS = 50
QUICK = Context(seed=0, quick=True)


def _run(quick_run, claim):
    return quick_run(claim)[0]


def _part(result, pid):
    return next(p for p in result.parts if p.id == pid)


def _close(a, b, rtol=FIGURE_RTOL):
    return abs(a - b) <= rtol * max(abs(a), abs(b))


# ============================================================================ C1
C1_HEADLINE = (r"exact; 1 correction: $1/\sqrt{d_k}$ is the kernel's scale (inverse temperature), the Gaussian "
               r"bandwidth is $d_k^{1/4}$; 1 limit: with unequal key norms the head is no Gaussian NW at any bandwidth "
               r"($e/(1 + e)$ against $1/2$)")


def _mp_nw(q, k, v, weight):
    """Σ_j w(q_i, k_j) v_j / Σ_j w(q_i, k_j) in mpmath, rounded to float64 at the end."""
    out = np.zeros((len(q), v.shape[1]))
    for i, qi in enumerate(q):
        w = [weight([mpmath.mpf(float(a)) for a in qi], [mpmath.mpf(float(a)) for a in kj]) for kj in k]
        for c in range(v.shape[1]):
            out[i, c] = float(mpmath.fsum(wj * mpmath.mpf(float(v[j, c])) for j, wj in enumerate(w)) / mpmath.fsum(w))
    return out


def _exp_kernel(s):
    return lambda a, k: mpmath.exp(s * mpmath.fsum(x * y for x, y in zip(a, k)))


def _gauss_kernel(b):
    return lambda a, k: mpmath.exp(-mpmath.fsum((x - y) ** 2 for x, y in zip(a, k)) / (2 * b * b))


@pytest.mark.claim("C1", part="detail")
def test_c1_headline_and_summary_exactly(quick_run):
    result = _run(quick_run, "C1")
    assert result.headline == C1_HEADLINE
    ident = _part(result, "exponential-kernel").numeric.figures["max_rel_error"]
    gauss = _part(result, "gaussian-equal-norms").numeric.figures["max_rel_error"]
    with mpmath.workdps(DPS):
        head, stated = 1 / (1 + mpmath.exp(-1)), 1 / (1 + mpmath.exp(-8))
    assert result.summary == (
        f"the head is exponential-kernel NW to {sci(ident, 0)} (mpmath, 50 digits); Gaussian NW with "
        rf"$b = d_k^{{1/4}}$ under equal key norms to {sci(gauss, 0)}; at $d_k = 4$, keys $\pm e_1$, $q = e_1$ the "
        f"stated $b = 1/2$ gives {num(float(stated), '.4f')} instead of {num(float(head), '.4f')}")
    assert "$0.9997$ instead of $0.7311$" in result.summary


@pytest.mark.claim("C1", part="detail")
def test_c1_correction_counts_and_worst_derived_bandwidth_recomputed(quick_run):
    """'in 6 of 9 seeded equal-norm cases ... while b = d_k^{1/4} stays within ...': each case's
    Gaussian NW with the stated and the derived bandwidth against the head, by mpmath loops here."""
    part = _part(_run(quick_run, "C1"), "stated-bandwidth")
    off, worst, n_cases, dks = 0, 0.0, 0, []
    with mpmath.workdps(DPS):
        for d_k in (1, 2, 4):
            for n in (2, 3, 8):
                c = c1.equal_norm_case(QUICK.seed_for(f"c1/bandwidth/{d_k}/{n}"), 2, n, d_k, 1, 1.0)
                s = 1 / mpmath.sqrt(d_k)
                head = _mp_nw(c["q"], c["k"], c["v"], _exp_kernel(s))
                vs = float(np.max(np.abs(c["v"])))
                diff_stated = float(np.max(np.abs(_mp_nw(c["q"], c["k"], c["v"], _gauss_kernel(s)) - head))) / vs
                diff_derived = float(np.max(np.abs(_mp_nw(c["q"], c["k"], c["v"],
                                                          _gauss_kernel(mpmath.mpf(d_k) ** 0.25)) - head))) / vs
                off += diff_stated > c1.MISMATCH_MIN
                worst = max(worst, diff_derived)
                n_cases += 1
                dks.append(d_k)
    summary = part.numeric.summary
    assert (off, n_cases) == (6, 9)
    assert f"in {off} of {n_cases} seeded equal-norm cases with $d_k$ in {sorted(set(dks))} the stated" in summary
    assert _close(worst, max(r["diff_derived"] for r in part.numeric.figures["cases"]), 1e-6)
    assert f"while $b = d_k^{{1/4}}$ stays within {sci(worst, 0)};" in summary


@pytest.mark.claim("C1", part="scope")
def test_c1_limit_quotes_the_grid_and_the_largest_seeded_discrepancy(quick_run):
    part = _part(_run(quick_run, "C1"), "unequal-norms")
    bands = sorted({*c1.UNEQUAL_BANDWIDTHS, 4 ** 0.25})
    assert part.numeric.figures["bandwidths"] == bands
    assert f"at {len(bands)} bandwidths from {num(bands[0], 'g')} to {num(bands[-1], 'g')}" in part.numeric.summary
    with mpmath.workdps(DPS):
        closest = min(abs(mpmath.e / (1 + mpmath.e) - mpmath.mpf(1) / 2) for _ in bands)   # 1/2 at every b
    assert f"the closest {num(float(closest), '.3g')} of" in part.numeric.summary
    assert part.restored_by.startswith("keys of one common norm")


# ============================================================================ C2
C2_HEADLINE = (r"exact; 1 correction: the head weights $\alpha_h = W_V^h W_O^h$ are free reals (any sign and sum), "
               "not a convex combination")
C2_ENSEMBLE = [(2, 4, 3, 5, 2, 3, 4, 1, 3, 4), (3, 6, 6, 6, 2, 2, 6, 2, 2, 3)]   # quick (H, d, kdim, vdim, ...)
C2_SCALAR = [(2, 3, 2, 2, 3, 4), (3, 4, 2, 3, 2, 5)]                            # quick (H, d, d_k, d_v, L, S)


def _mp_mha_sum_of_heads(mod, x, xk, xv):
    """Σ_h softmax(Q_h K_hᵀ/sqrt(d_k)) V_h W_O^h + b_O by loops in mpmath (one batch element)."""
    def M(a):
        return mpmath.matrix(np.asarray(a).tolist())

    L, S = x.shape[0], xk.shape[0]
    out = np.zeros((L, mod.d_out))
    s = 1 / mpmath.sqrt(mod.d_k)
    acc = [[mpmath.mpf(float(b)) for b in mod.b_O] for _ in range(L)]
    for h in range(mod.H):
        Q = M(x) * M(mod.W_Q[h]) + M([mod.b_Q[h].tolist()] * L)
        K = M(xk) * M(mod.W_K[h]) + M([mod.b_K[h].tolist()] * S)
        V = M(xv) * M(mod.W_V[h]) + M([mod.b_V[h].tolist()] * S)
        for i in range(L):
            w = [mpmath.exp(s * mpmath.fsum(Q[i, c] * K[j, c] for c in range(mod.d_k))) for j in range(S)]
            z = mpmath.fsum(w)
            est = [mpmath.fsum(w[j] * V[j, c] for j in range(S)) / z for c in range(mod.d_v)]
            for o in range(mod.d_out):
                acc[i][o] += mpmath.fsum(est[c] * mpmath.mpf(float(mod.W_O[h][c, o])) for c in range(mod.d_v))
    for i in range(L):
        out[i] = [float(a) for a in acc[i]]
    return out


def _c2_ensemble_error():
    worst = 0.0
    for i, (H, d, kdim, vdim, d_k, d_v, d_out, N, L, S) in enumerate(C2_ENSEMBLE):
        rng = QUICK.rng(f"c2/ensemble/{i}")
        mod = c2.random_module(rng, H, d, kdim, vdim, d_k, d_v, d_out)
        x, xk, xv = rng.standard_normal((N, L, d)), rng.standard_normal((N, S, kdim)), rng.standard_normal((N, S, vdim))
        va = max(float(np.max(np.abs(xv) @ np.abs(mod.W_V[h]) + np.abs(mod.b_V[h]))) for h in range(H))
        col = max(float(sum(np.abs(mod.W_O[h][:, o]).sum() for h in range(H))) for o in range(d_out))
        scale = va * col + float(np.max(np.abs(mod.b_O)))
        with mpmath.workdps(DPS):
            ref = np.stack([_mp_mha_sum_of_heads(mod, x[b], xk[b], xv[b]) for b in range(N)])
        worst = max(worst, float(np.max(np.abs(mod(x, xk, xv) - ref))) / scale)
    return worst


def _c2_alphas():
    """α_h = W_V^h W_O^h of the quick scalar modules (torch, float64)."""
    out = []
    for i, (H, d, d_k, d_v, L, S) in enumerate(C2_SCALAR):
        mod = c2.random_module(QUICK.rng(f"c2/scalar/{i}"), H, d, d, 1, d_k, d_v, 1)
        wv = torch.tensor(np.stack([mod.W_V[h][0] for h in range(H)]), dtype=torch.float64)
        wo = torch.tensor(np.stack([mod.W_O[h][:, 0] for h in range(H)]), dtype=torch.float64)
        out.append(torch.einsum("hv,hv->h", wv, wo).tolist())
    return out


@pytest.mark.claim("C2", part="core")
def test_c2_headline_summary_and_core_finding_exactly(quick_run):
    result = _run(quick_run, "C2")
    assert result.headline == C2_HEADLINE
    err = _c2_ensemble_error()
    core = _part(result, "ensemble-identity")
    assert _close(err, core.numeric.figures["max_rel_error"], 1e-6)
    sums = [sum(a) for a in _c2_alphas()]
    assert result.summary == (
        rf"$\mathrm{{MHA}} = \sum_h$ NW heads through $W_O^h$ to {sci(err, 0)} (mpmath, $H$ in "
        f"{sorted({c[0] for c in C2_ENSEMBLE})}); scalar case: $\\alpha_h = W_V^h W_O^h$ free reals "
        f"($\\sum_h \\alpha_h$ in {num(min(sums), '.2f')} to {num(max(sums), '.2f')})")
    assert core.finding == rf"$\mathrm{{MHA}} = \sum_h$ NW heads through $W_O^h$ to {sci(err, 0)}"
    assert f"max relative error {sci(err)}" in core.numeric.summary
    assert f"{len(C2_ENSEMBLE)} seeded random modules" in core.numeric.summary


@pytest.mark.claim("C2", part="detail")
def test_c2_correction_quotes_the_weights_as_recomputed(quick_run):
    """The range of Σα, the smallest α_h, how many modules lie on the simplex, and the module the
    counterexample names (the first off the simplex), from α_h = W_V^h W_O^h computed in torch."""
    part = _part(_run(quick_run, "C2"), "free-weights")
    alphas = _c2_alphas()
    sums = [sum(a) for a in alphas]
    on = [all(x >= 0 for x in a) and abs(sum(a) - 1) <= 1e-12 for a in alphas]
    smallest = min(x for a in alphas for x in a)
    text = part.numeric.summary
    assert (f"$\\sum_h \\alpha_h$ ranges over {num(min(sums), '.2f')} to {num(max(sums), '.2f')}, the smallest "
            f"$\\alpha_h$ is {num(smallest, '.2f')}; {sum(on)} of {len(alphas)} random modules have their weights on "
            "the simplex") in text
    assert (num(min(sums), ".2f"), num(max(sums), ".2f"), num(smallest, ".2f"), sum(on)) == \
        ("$-0.63$", "$4.02$", "$-0.70$", 0)
    first_off = next(i for i, o in enumerate(on) if not o)
    assert part.counterexample.description == (
        f"a seeded module with $H = {C2_SCALAR[first_off][0]}$: the weights $\\alpha_h = W_V^h W_O^h$ sum to "
        f"{num(sums[first_off], '.3f')}")
    for row, a in zip(part.numeric.figures["cases"], alphas):
        assert np.allclose(row["alpha"], a, rtol=FIGURE_RTOL, atol=0)


# ============================================================================ C3
C3_HEADLINE = (r"exact; 1 correction: the ensemble bias is $\sum_h \alpha_h b_h + (\sum_h \alpha_h - 1) f$, equal "
               r"to $\sum_h \alpha_h b_h$ only when $\sum_h \alpha_h = 1$")
C3_DECOMPOSITION = (r"$\mathrm{MSE} = (E \hat{f} - f)^2 + \sum_h \alpha_h^2 V_h + "
                    r"\sum_{h \neq h'} \alpha_h \alpha_{h'} C_{hh'}$")
C3_BIAS = r"$\sum_h \alpha_h b_h + (\sum_h \alpha_h - 1) f$"


def _c3_alphas():
    """The quick run's random weights, drawn here as documented (1.5 N(0, 1), α_1 += 1 when
    |Σα − 1| < SUM_ALPHA_GAP), in the order of the runs."""
    out = []
    for H in (1, 3):
        for method in ("simulate", "exact"):
            for kernel in ("softmax", "gaussian"):
                a = 1.5 * QUICK.rng(f"c3/any/{H}/{method}/{kernel}/alpha").standard_normal(H)
                if abs(a.sum() - 1.0) < c3.SUM_ALPHA_GAP:
                    a[0] += 1.0
                out.append((H, a))
    return out


@pytest.mark.claim("C3", part="core")
def test_c3_headline_and_summary_exactly(quick_run):
    """The summary's figures are the largest residuals over the runs (pointwise and integrated),
    the largest mpmath residual and the largest Ueda–Nakano gap: each aggregated here by a loop."""
    result = _run(quick_run, "C3")
    assert result.headline == C3_HEADLINE
    ident = _part(result, "decomposition-identity").numeric.figures
    un = _part(result, "ueda-nakano").numeric.figures
    worst = 0.0
    for row in ident["cases"]:
        worst = max(worst, row["pointwise"], row["integrated"])
    mp_res = 0.0
    for row in ident["mp"]:
        mp_res = max(mp_res, row["residual"])
    gap = 0.0
    for row in un["cases"]:
        for k in ("mse", "bias2", "var_term", "cov_term"):
            gap = max(gap, row[f"gap_{k}"])
    Hs = sorted({H for H, _ in _c3_alphas()})
    assert result.summary == (
        f"{C3_DECOMPOSITION} to {sci(worst, 0)} for any $\\alpha$ ($H$ in {Hs}); mpmath 50 digits residual "
        f"{sci(mp_res, 0)}; Ueda–Nakano to {sci(gap, 0)}; the ensemble bias is {C3_BIAS}, which is "
        r"$\sum_h \alpha_h b_h$ only if $\sum_h \alpha_h = 1$")


@pytest.mark.claim("C3", part="core")
def test_c3_core_summary_quotes_the_runs(quick_run):
    """Runs, H, the range of Σα (weights drawn here), the worst of each residual, the fewest digits."""
    part = _part(_run(quick_run, "C3"), "decomposition-identity")
    fig, text = part.numeric.figures, part.numeric.summary
    alphas = _c3_alphas()
    for row, (H, a) in zip(fig["cases"], alphas):
        assert row["H"] == H and np.allclose(row["alpha"], a, rtol=1e-15, atol=0)
    sums = [float(a.sum()) for _, a in alphas]
    assert (f"{len(alphas)} engine runs on real NW heads ($H$ in {sorted({H for H, _ in alphas})}" in text
            and f"from {num(min(sums), '.2f')} to {num(max(sums), '.2f')})" in text)
    assert min(sums) < 1 - c3.SUM_ALPHA_GAP and max(sums) > 1 + c3.SUM_ALPHA_GAP     # Σα away from 1 both ways
    for key, col in (("max_pointwise", "pointwise"), ("max_integrated", "integrated"),
                     ("max_generated_vs_measured", "generated_vs_measured")):
        assert fig[key] == max(r[col] for r in fig["cases"])
    ratio = max(max(r["pointwise"], r["integrated"], r["generated_vs_measured"]) / r["bound"] for r in fig["cases"])
    assert ratio <= fig["max_error_over_bound"] <= 1.0
    digits = min(r["digits_agreed"] for r in fig["mp"])
    assert f"float64 agrees to {digits:.1f} digits" in text
    assert f"relative residual at most {sci(max(r['certified_residual_bound'] for r in fig['mp']), 0)}" in text


@pytest.mark.claim("C3", part="detail")
def test_c3_ueda_nakano_summary_quotes_the_largest_gap(quick_run):
    part = _part(_run(quick_run, "C3"), "ueda-nakano")
    rows = part.numeric.figures["cases"]
    gap = max(r[f"gap_{k}"] for r in rows for k in ("mse", "bias2", "var_term", "cov_term"))
    ratio = max(max(r[f"gap_{k}"] for k in ("mse", "bias2", "var_term", "cov_term")) / r["bound"] for r in rows)
    assert f"{len(rows)} engine runs with $\\alpha = 1/H$ ($H$ in [2, 3]" in part.numeric.summary
    assert f"max {sci(gap)} (at most {num(ratio, '.2g')} of the rounding bound)" in part.numeric.summary


# ============================================================================ C4
C4_HEADLINE = (r"exact; 1 correction: the literal normalisation is scale-dependent, it equals $1 - \bar{\rho}$ only "
               r"when $W_h^\top W_h = \sqrt{d_k} I$")


def _hdi_scipy(W):
    """1 − mean_{h<h'} mean cos² of the principal angles (scipy)."""
    H = len(W)
    rho = [np.mean(np.cos(subspace_angles(W[a], W[b])) ** 2) for a in range(H) for b in range(a + 1, H)]
    return 1.0 - float(np.mean(rho))


@pytest.mark.claim("C4", part="core")
def test_c4_headline_summary_and_subspace_range_recomputed(quick_run):
    """The subspace form's range over the quick run's 8 seeded head sets, by scipy's principal
    angles here (the draws replayed in the check's order); the summary's figure is the larger of
    the invariance change and the angle error."""
    result = _run(quick_run, "C4")
    assert result.headline == C4_HEADLINE
    sub = _part(result, "subspace-form").numeric
    rng = QUICK.rng("c4/subspace")
    lo, hi = math.inf, -math.inf
    for _ in range(8):
        H, d_k = int(rng.integers(2, 6)), int(rng.integers(1, 4))
        d = int(rng.integers(d_k + 1, 9))
        W = rng.standard_normal((H, d, d_k))
        v = _hdi_scipy(W)
        lo, hi = min(lo, v), max(hi, v)
        [well_conditioned(rng, d_k) for _ in range(H)]                # the check's draws, in its order
        rng.permutation(H)
        if H * d_k <= d:
            head_projections("orthogonal", H, d, d_k, rng=rng)
    assert abs(sub.figures["hdi_min"] - lo) <= 1e-12 and abs(sub.figures["hdi_max"] - hi) <= 1e-12
    assert f"8 seeded raw head sets: HDI in [{num(lo, '.3f')}, {num(hi, '.3f')}]" in sub.summary
    f = sub.figures
    worst = max(f["invariance_WA_max_change"], f["principal_angles_vs_mpmath_max_abs"])
    lit = _part(result, "literal-formula").numeric.figures
    smallest = min(min(1 - r["scale"] ** 4 / r["d_k"] for r in lit["search"]), lit["raw_gaussian_min_literal"])
    worst_text = "$0$" if worst == 0 else sci(worst, 0)
    assert result.summary == (
        rf"literal formula: identical orthonormal heads $1 - 1/d_k$, values down to {num(smallest, '.3g')}, equal to "
        rf"the subspace form only for $W_h^\top W_h = \sqrt{{d_k}} I$; subspace form in $[0, 1]$, invariances and "
        f"mpmath angles to {worst_text}")


@pytest.mark.claim("C4", part="detail")
def test_c4_correction_quotes_the_raw_sets_and_saves_the_first_violations(quick_run):
    """The literal formula's figures as quoted, and the head sets the counterexample saves: the first
    identical orthonormal set whose literal value (1 − c⁴/d_k, written here) is not 0, and the first
    set outside [0, 1], in the search's order (d, then d_k, then the scales 1, 2, 1/2)."""
    result, out = quick_run("C4")
    part = _part(result, "literal-formula")
    fig = part.numeric.figures
    assert (f"{fig['sets']} raw Gaussian sets: literal down to {num(fig['raw_gaussian_min_literal'], '.2f')}, up to "
            f"{num(fig['raw_gaussian_max_literal_minus_subspace'], '.2f')} from the subspace form") in part.numeric.summary
    assert f"$d_k$ in {list(range(1, 5))}" in part.numeric.summary
    first = {}
    for d in (1, 2, 3):
        for d_k in range(1, d + 1):
            for c in (1.0, 2.0, 0.5):
                lit = 1 - c**4 / d_k
                kind = "identical, orthonormal columns" if c == 1.0 else f"identical, scaled by {c:g}"
                if c == 1.0 and abs(lit) > c4.HDI_TOL:
                    first.setdefault("orthonormal", f"{kind}, d = {d}, d_k = {d_k}")
                elif lit < -c4.HDI_TOL or lit > 1 + c4.HDI_TOL:
                    first.setdefault("outside", f"{kind}, d = {d}, d_k = {d_k}")
    expected = [first["orthonormal"], first["outside"]]
    assert expected == ["identical, orthonormal columns, d = 2, d_k = 2", "identical, scaled by 2, d = 1, d_k = 1"]
    doc = loads_json("counterexample", (out / part.counterexample.file).read_text())
    assert [c["label"] for c in doc["params"]["cases"]] == expected


# ============================================================================ C8
C8_HEADLINE = (r"holds under model (reading i, in $H$, variances rising along the order); 1 correction: geometric "
               r"weights level off at $(1-r)^2 V_1$ (Fibonacci at $V_1/\varphi^4$), they do not decay to 0; 1 limit: for "
               r"mild heterogeneity ($V_h \propto h^\beta$, $\beta < 1$) uniform averaging wins, its MSE decays like "
               r"$H^{\beta-1}$; reading ii, in $n$, heads of different consistency rates: refuted (fixed weights all "
               r"decay at the worst head's rate $n^{-\min \gamma}$, geometric weights only lower the constant)")
PHI = (1 + math.sqrt(5)) / 2


def _fib(k):
    a, b = 0, 1
    for _ in range(k):
        a, b = b, a + b
    return a


def _weights_here(scheme, H, r=0.5, V=None):
    """Weights written out: uniform 1/H, geometric ∝ r^(h−1), Fibonacci ∝ F_(H+1−h) (best first) or
    F_h (worst first), inverse ∝ 1/V_h."""
    if scheme == "uniform":
        raw = [1.0] * H
    elif scheme == "geom":
        raw = [r ** (h - 1) for h in range(1, H + 1)]
    elif scheme == "fib_best":
        raw = [float(_fib(H + 1 - h)) for h in range(1, H + 1)]
    elif scheme == "fib_worst":
        raw = [float(_fib(h)) for h in range(1, H + 1)]
    else:
        raw = [1.0 / v for v in V]
    tot = math.fsum(raw)
    return np.array([x / tot for x in raw])


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
    """Σ α_h² h^(1/2) at 30 digits, weights exact (fractions, integer Fibonacci numbers)."""
    if scheme == "uniform":
        w = [Fraction(1, H)] * H
    elif scheme == "geom":
        raw = [Fraction(1, 2) ** (h - 1) for h in range(1, H + 1)]
        w = [x / sum(raw) for x in raw]
    else:
        tot = _fib(H + 2) - 1
        w = [Fraction(_fib(H + 1 - h), tot) for h in range(1, H + 1)]
    with mpmath.workdps(30):
        return float(mpmath.fsum(mpmath.mpf(x.numerator) / x.denominator * mpmath.mpf(x.numerator) / x.denominator
                                 * mpmath.sqrt(h) for h, x in enumerate(w, start=1)))


@pytest.mark.claim("C8", part="core")
def test_c8_monte_carlo_rows_and_largest_z_recomputed(quick_run):
    part = _part(_run(quick_run, "C8"), "closed-forms")
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


@pytest.mark.claim("C8", part="core")
def test_c8_headline_and_summary_exactly(quick_run):
    result = _run(quick_run, "C8")
    assert result.headline == C8_HEADLINE
    ce = _part(result, "closed-forms").numeric.figures["exact"]
    z = max(abs(r["z"]) for r in _c8_monte_carlo())
    gap = _c8_min_gap_inverse()
    op = _part(result, "optimal-weights").numeric.figures
    assert _close(op["min_rel_gap_inverse"], gap, 1e-6)
    Hs = c8.DECAY_PARAMS["H_values"]
    W = {s: [_c8_decay_W(s, H) for H in (Hs[0], Hs[-1])] for s in ("uniform", "geom")}
    rate = min(c8.RATE_PARAMS["gammas"])
    assert result.summary == (
        f"closed forms equal exact sums to {sci(max(ce['max_rel_err_float'], ce['sums_max_rel_err_float']), 0)}, "
        f"Monte Carlo max $\\lvert z \\rvert = {z:.1f}$; inverse-variance weights never beaten (min gap "
        f"{num(gap, '.1e')}); $V_h = h^{{0.5}}$, $H = {Hs[0]}$ to {Hs[-1]}: uniform {W['uniform'][0]:.3f} to "
        f"{W['uniform'][-1]:.3f}, geometric {W['geom'][0]:.3f} to {W['geom'][-1]:.3f} (floor "
        f"{(1 - 0.5) ** 2:.2f}); in $n$: rate $n^{{-{rate:g}}}$ for every fixed weighting")
    assert "Monte Carlo max $\\lvert z \\rvert = 2.6$" in result.summary


@pytest.mark.claim("C8", part="detail")
def test_c8_optimality_summary_quotes_the_smallest_gap(quick_run):
    op = _part(_run(quick_run, "C8"), "optimal-weights").numeric
    gap = _c8_min_gap_inverse()
    assert f"min relative gap to inverse-variance {num(gap, '.2e')}," in op.summary
    assert f"{op.figures['profiles']} random profiles, {op.figures['weight_vectors_per_profile']} random" in op.summary


@pytest.mark.claim("C8", part="core")
def test_c8_condition_table_counts_the_structured_wins(quick_run):
    """'matches ... in every one of 15 cases (9 won by structured weights' counted here from the
    table's W values (a row with two schemes counts once if either wins)."""
    part = _part(_run(quick_run, "C8"), "structured-beat-uniform")
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
    lim = _part(result, "mild-heterogeneity").numeric.summary
    slope = math.log(W["uniform"][-1] / W["uniform"][-2]) / math.log(Hs[-1] / Hs[-2])
    assert (f"uniform {W['uniform'][0]:.4f} to {W['uniform'][-1]:.4f} (decay factor "
            f"{W['uniform'][0] / W['uniform'][-1]:.3f}, final log-log slope {num(slope, '.3f')})") in lim
    assert f"geometric {W['geom'][0]:.4f} to {W['geom'][-1]:.4f} (factor {W['geom'][0] / W['geom'][-1]:.4f})" in lim
    assert (f"best-first Fibonacci {W['fib_best'][0]:.4f} to {W['fib_best'][-1]:.4f} (factor "
            f"{W['fib_best'][0] / W['fib_best'][-1]:.4f})") in lim
    dec = _part(result, "decay").numeric.summary
    assert (f"geometric ($r = 1/2$) {W['geom'][0]:.4f} to {W['geom'][-1]:.4f} (floor $(1-r)^2 V_1 = 0.2500$), "
            f"best-first Fibonacci {W['fib_best'][0]:.4f} to {W['fib_best'][-1]:.4f} (floor "
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
        sc = _part(result, "free-weights").numeric
        err = sc.figures["closed_form_h2_n3_rel_error"]
        assert ("agrees exactly." if err == 0 else f"agrees to {sci(err, 0)}.") in sc.summary
