"""C6 check (verify.claims.c6) against independent computations written here: the model MSE as a
brute-force loop over head pairs with ρ from scipy.linalg.subspace_angles, the fusion-frame
bound written out, a dimension count by matrix rank, NW heads by scipy.special.softmax with the
engine's documented draws, and Var f in closed form. The judges are tables of synthetic inputs on
both sides of every threshold; the headline figures are recomputed from the same seeded inputs."""

from __future__ import annotations

import math
from fractions import Fraction as F

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from scipy.linalg import subspace_angles
from scipy.special import softmax

from proofs.markup import check as markup_check
from proofs.markup import pm, sci
from verify.claims import Context, c6, run_claim
from verify.errors import VerifyError
from verify.io import loads_json
from verify.judgment.counterexamples import replayer_for
from verify.judgment.verdicts import Role
from verify.numeric import informativeness
from verify.outputs.plots import data_path as plot_data_path
from verify.replay import replay

# Model MSE of order B² + V ≤ 3 from ≤ 15 pair terms, each a mean of cos² from scipy: a few ulps
# each; an orthogonal configuration's cos are ~1e-16, so its ρ are ~1e-32.
MSE_TOL = 1e-12
# The descent stops when a sweep gains < 1e-14 in Φ (c6.PHI_STOP); HDI = 1 − Φ/(d_k H(H−1)) is
# then within ~1e-12 of its limit (measured ≤ 1e-12 over 8 configurations x 8 starts); scipy's
# angles add ~1e-15. The same margin as the check's c6.BOUND_TOL, not looser.
BOUND_TOL = 1e-9
# Orthonormality of a QR factor / a tangent direction: pure float64 rounding.
ORTH_TOL = 1e-12

# sizes with a known tight fusion frame (or orthogonal heads when H d_k <= d)
TIGHT = [(3, 1, 2), (4, 1, 3), (5, 1, 2), (3, 2, 4), (3, 2, 3), (2, 1, 3), (3, 2, 6), (6, 2, 5)]


#: the claim whose quick run the shared fixtures ``saved`` and ``result`` (tests/conftest.py) give
CLAIM = "C6"
pytestmark = pytest.mark.claim(CLAIM, part="core")


def _part(result, pid):
    return next(p for p in result.parts if p.id == pid)


# -- brute-force references --------------------------------------------------------------------
def _rho(a, b):
    return float(np.mean(np.cos(subspace_angles(a, b)) ** 2))


def _model_mse(U, B, V):
    """B² + Σ_h Σ_h' α_hα_h' C_hh' with α = 1/H, C_hh' = ρ_hh' V, C_hh = V (loop over pairs)."""
    H = len(U)
    total = B * B
    for i in range(H):
        for j in range(H):
            total += V / H**2 * (1.0 if i == j else _rho(U[i], U[j]))
    return total


def _hdi(U):
    H = len(U)
    return 1 - sum(_rho(U[i], U[j]) for i in range(H) for j in range(i + 1, H)) / (H * (H - 1) / 2)


def _bound(H, d_k, d):
    """HDI ≤ 1 − max(0, (H d_k/d − 1)/(H − 1))."""
    return 1 - max(0.0, (H * d_k / d - 1) / (H - 1))


# -- structure and verdict -------------------------------------------------------------------
def test_parts_and_roles(saved):
    result, out = saved
    assert result.id == "C6" and result.stated
    assert {p.id: p.role for p in result.parts} == {
        "feasible regime (H·d_k ≤ d)": Role.CORE,
        "beyond d (H·d_k > d)": Role.SCOPE,
        "real NW heads, single-index target": Role.SCOPE,
        "real NW heads, single-index target, Gaussian design": Role.SCOPE}
    beyond = _part(result, "beyond d (H·d_k > d)")
    assert beyond.numeric.agreement == "measured" and beyond.restored_by.startswith(r"$H d_k \le d$")
    figs = beyond.numeric.figures
    assert figs["starts_reaching_bound"] == figs["starts"] and figs["below_bound"] == 0
    assert abs(figs["two_planes_phi"] - 2.0) <= BOUND_TOL
    assert (out / result.plots["overlap_optimisation"]).stat().st_size > 0


# Paired MSE replicates: the engine vs softmax + loops here, the same sums rounded differently.
REF_RTOL = 1e-10


def _signal_mse_here(p, config):
    """Per-replicate integrated MSE of the coordinate heads of ``config`` on sin(2 x_1), by
    softmax and loops (the engine's documented draws: x_eval from SeedSequence(s), X from its
    first spawn)."""
    H, d, d_k = p["H"], p["d"], p["d_k"]
    eye = np.eye(d)
    cols = {"identical, on the signal": [list(range(d_k))] * H,
            "sharing the signal direction": [[0, *range(1 + h * (d_k - 1), 1 + (h + 1) * (d_k - 1))] for h in range(H)],
            "orthogonal, one on the signal": [list(range(h * d_k, (h + 1) * d_k)) for h in range(H)]}[config]
    heads = [eye[:, c] for c in cols]
    out = []
    for r in range(p["R"]):
        s = int(np.random.SeedSequence([p["seed"], r]).generate_state(1)[0])
        x_eval = np.random.default_rng(np.random.SeedSequence(s)).standard_normal((p["m"], d))
        X = np.random.default_rng(np.random.SeedSequence(s, spawn_key=(0,))).standard_normal((p["n"], d))
        w = sum(softmax((x_eval @ U) @ (X @ U).T / math.sqrt(d_k), axis=1) for U in heads) / H
        err = (w @ np.sin(2 * X[:, 0]) - np.sin(2 * x_eval[:, 0])) ** 2 + p["sigma"] ** 2 * np.sum(w ** 2, axis=1)
        out.append(err.mean())
    return np.array(out)


@pytest.mark.claim(CLAIM, part="scope")
def test_shared_signal_beats_orthogonal_by_brute_force(saved):
    """The Gaussian-design probe recomputed here: heads sharing the signal direction have a lower MSE
    than orthogonal heads by more than SIGNAL_Z_MIN paired SE, but the best R² is below
    R2_INFORMATIVE, so the part saves no counterexample (it could not have confirmed the claim)."""
    result, out = saved
    part = _part(result, "real NW heads, single-index target, Gaussian design")
    p = part.numeric.figures["params"]
    a, b = (_signal_mse_here(p, c) for c in p["configs"])
    assert np.allclose([a.mean(), b.mean()], part.numeric.figures["mse"], rtol=REF_RTOL, atol=0)
    diff = b - a
    assert diff.mean() > c6.SIGNAL_Z_MIN * diff.std(ddof=1) / math.sqrt(diff.size)
    assert p["configs"][1] == "orthogonal, one on the signal"
    assert max(part.r2.values()) < informativeness.R2_INFORMATIVE and part.counterexample is None
    assert not (out / "counterexamples" / "C6-shared-signal.json").exists()


@pytest.mark.claim(CLAIM, part="scope")
def test_signal_heads_overlaps_match_scipy():
    for config, want in (("identical, on the signal", 0.0), ("sharing the signal direction", 0.5),
                         ("orthogonal, one on the signal", 1.0)):
        W = c6.signal_heads(config, 3, 8, 2)
        assert abs(_hdi(list(W)) - want) <= 1e-12
        assert all(abs(W[h][0, 0]) == 1.0 for h in range(3)) is (config != "orthogonal, one on the signal")


@pytest.mark.claim(CLAIM, part="scope")
def test_refutation_replays_and_holds_independently(saved):
    result, out = saved
    files = sorted((out / "counterexamples").glob("*.json"))
    assert [f.name for f in files] == ["C6-beyond-d.json", "C6-shared-signal-torus.json"]
    doc, outcome = replay(files[0])
    assert outcome.violates is True and doc["expected"]["violates"] is True
    assert outcome.summary == doc["expected"]["summary"]
    p = doc["params"]
    H, d_k, d = p["H"], p["d_k"], p["d"]
    assert H * d_k > d
    # dimension count: any H d_k columns in R^d have rank ≤ d < H d_k, so no H mutually
    # orthogonal d_k-dimensional subspaces (their bases together would be orthonormal)
    runs = [c6.minimise_overlap(H, d_k, d, rng=s) for s in range(3)]
    for run in runs:
        stacked = np.concatenate(list(run.U), axis=1)
        assert np.linalg.matrix_rank(stacked) <= d < H * d_k
        phi = sum(d_k * _rho(run.U[i], run.U[j]) for i in range(H) for j in range(H) if i != j)
        assert abs(phi - H * d_k * (H * d_k / d - 1)) <= 1e-8 and phi > 0
        assert abs(_hdi(run.U) - _bound(H, d_k, d)) <= BOUND_TOL


@pytest.mark.slow   # re-runs a claim or a grid end to end (seconds)
def test_same_seed_same_figures(result):
    again = run_claim("C6", Context(seed=0, quick=True))
    assert again.headline == result.headline
    for a, b in zip(result.parts, again.parts):
        assert a.numeric.figures == b.numeric.figures, a.id


# -- orthogonal optimality: no perturbation lowers the model MSE ---------------------------------
@given(H=st.integers(2, 4), d_k=st.integers(1, 3), extra=st.integers(0, 2), seed=st.integers(0, 2**32 - 1),
       t=st.floats(1e-4, 1.0), B=st.floats(-1, 1), V=st.floats(0.05, 2), tangent=st.booleans())
def test_no_perturbation_of_orthogonal_heads_lowers_the_model_mse(H, d_k, extra, seed, t, B, V, tangent):
    d = H * d_k + extra
    rng = np.random.default_rng(seed)
    frame = np.linalg.qr(rng.standard_normal((d, H * d_k)))[0]
    U0 = np.stack([frame[:, h * d_k:(h + 1) * d_k] for h in range(H)])
    if tangent:  # the check's own moves
        delta = c6.tangent_move(U0, rng)
        for h in range(H):
            assert np.abs(U0[h].T @ delta[h]).max() <= ORTH_TOL
        U = c6.retract(U0, delta, t)
    else:        # any perturbation
        U = np.stack([np.linalg.qr(u + t * rng.standard_normal(u.shape))[0] for u in U0])
    for u in U:
        assert np.abs(u.T @ u - np.eye(d_k)).max() <= ORTH_TOL
    base, moved = _model_mse(U0, B, V), _model_mse(U, B, V)
    assert abs(base - (B * B + V / H)) <= MSE_TOL            # orthogonal heads: B² + V/H
    assert moved >= base - MSE_TOL
    assert abs(c6.model_mse(U, B, V) - moved) <= MSE_TOL     # the check's model MSE agrees


# -- the optimiser ------------------------------------------------------------------------------
@pytest.mark.claim(CLAIM, part="scope")
@given(cfg=st.sampled_from(TIGHT), seed=st.integers(0, 2**32 - 1))
def test_descent_reaches_the_bound_where_tight_frames_exist(cfg, seed):
    H, d_k, d = cfg
    run = c6.minimise_overlap(H, d_k, d, rng=seed)
    assert all(b <= a + 1e-12 for a, b in zip(run.phi, run.phi[1:]))  # Φ never increases
    assert abs(_hdi(run.U) - _bound(H, d_k, d)) <= BOUND_TOL


@pytest.mark.claim(CLAIM, part="scope")
@given(H=st.integers(2, 5), d_k=st.integers(1, 3), d=st.integers(1, 6), seed=st.integers(0, 2**32 - 1))
def test_no_configuration_beats_the_bound(H, d_k, d, seed):
    if d_k > d:
        d = d_k
    run = c6.minimise_overlap(H, d_k, d, rng=seed)
    assert _hdi(run.U) <= _bound(H, d_k, d) + BOUND_TOL


@pytest.mark.claim(CLAIM, part="scope")
@pytest.mark.parametrize("seed", range(3))
def test_two_planes_in_r3_stop_above_the_bound(seed):
    run = c6.minimise_overlap(2, 2, 3, rng=seed)
    a, b = run.U
    phi = 2 * 2 * _rho(a, b)                       # Φ = 2 ||U_1ᵀU_2||_F² = 2 d_k ρ
    assert abs(phi - 2.0) <= 1e-9                   # the planes share a line, normals orthogonal
    assert phi > 2 * 2 * (2 * 2 / 3 - 1) + 0.5      # far above the fusion-frame value 4/3


def test_bad_input_raises_verify_error():
    with pytest.raises(VerifyError, match="H"):
        c6.minimise_overlap(1, 1, 2, rng=0)
    with pytest.raises(VerifyError, match="d_k"):
        c6.minimise_overlap(2, 3, 2, rng=0)
    with pytest.raises(VerifyError, match="U"):
        c6.model_mse(np.ones((2, 3)), 0.0, 1.0)
    with pytest.raises(VerifyError, match="rng"):
        c6.minimise_overlap(2, 1, 2, rng="seed")
    with pytest.raises(VerifyError, match="delta"):
        c6.retract(np.zeros((2, 3, 1)) + np.eye(3)[:, :1], np.zeros((2, 3, 2)), 0.1)


@pytest.mark.claim(CLAIM, part="scope")
def test_overlap_plot_shows_the_bounds_and_descents_below_them(saved):
    """Every descent curve starts below and ends at (or below) its configuration's fusion-frame
    bound, drawn as a horizontal line at 1 − max(0, (H d_k/d − 1)/(H − 1)) (written here)."""
    result, out = saved
    data = loads_json("plot", (out / plot_data_path(result.plots["overlap_optimisation"])).read_text())
    lines = data["axes"][0]["lines"]
    flat = sorted({round(ln["y"][0], 12) for ln in lines if len(ln["y"]) == 2 and ln["y"][0] == ln["y"][1]})
    rows = _part(result, "beyond d (H·d_k > d)").numeric.figures["configs"]
    assert flat == sorted({round(_bound(r["H"], r["d_k"], r["d"]), 12) for r in rows})
    curves = [ln for ln in lines if len(ln["y"]) > 2]
    assert len(curves) == sum(r["starts"] for r in rows)
    assert all(max(ln["y"]) <= 1 + 1e-12 for ln in curves)


@pytest.mark.claim(CLAIM, part="scope")
def test_bound_certificates_enclose_the_bound_written_here(result):
    """Each arb certificate encloses (bound − HDI of the best optimum) with the bound written here,
    and holds: the optimum found never beats the fusion-frame bound."""
    from flint import arb

    for row in _part(result, "beyond d (H·d_k > d)").numeric.figures["configs"]:
        cert = row["certificate"]
        assert cert["holds"], cert
        mid = float(arb(cert["enclosure"]).mid())
        if (row["H"], row["d_k"], row["d"]) == c6.NOT_ATTAINED:
            assert abs(mid - (2 - 4 / 3)) <= 1e-9                    # Φ = 2 against the bound 4/3
        else:
            assert abs(mid - (_bound(row["H"], row["d_k"], row["d"]) - row["final_hdi_max"])) <= 1e-12


# Var f of the check is a Monte Carlo over 2**20 design draws, the reference here its closed form:
# they agree within this many of the Monte Carlo's standard errors (a false failure ~6e-7).
VAR_F_Z = 5.0


# -- judges: both sides of every threshold, equality included -----------------------------------
@pytest.mark.parametrize("increase,lowers", [
    (-2 * c6.MOVE_TOL, True), (-c6.MOVE_TOL, False), (0.0, False), (1e-9, False)],
    ids=["below", "at-tolerance", "zero", "increase"])
def test_lowers_mse_judge(increase, lowers):
    assert c6.lowers_mse(increase) is lowers


@pytest.mark.parametrize("lowered,err,agreement", [
    (0, 0.0, "rounding"), (0, c6.MSE_RTOL, "rounding"), (0, 2 * c6.MSE_RTOL, "disagree"), (1, 0.0, "disagree")],
    ids=["clean", "err-at-tolerance", "err-above", "one-lowering-move"])
def test_local_agreement_judge(lowered, err, agreement):
    assert c6.local_agreement(lowered, err) == agreement


@pytest.mark.claim(CLAIM, part="scope")
@pytest.mark.parametrize("bound,final,reached", [
    (c6.BOUND_TOL, 0.0, True), (2 * c6.BOUND_TOL, 0.0, False), (0.5, 0.5, True), (0.5, 0.6, True)],
    ids=["gap-at-tolerance", "gap-above", "on-the-bound", "above-the-bound"])
def test_reaches_bound_judge(bound, final, reached):
    assert c6.reaches_bound(bound, final) is reached


@pytest.mark.claim(CLAIM, part="scope")
@pytest.mark.parametrize("phi,lb,below", [
    (0.0, c6.BELOW_TOL, False), (-1e-12, c6.BELOW_TOL, True), (1.0, 1.0, False), (0.5, 1.0, True)],
    ids=["at-tolerance", "beyond-tolerance", "on-the-bound", "far-below"])
def test_below_bound_judge(phi, lb, below):
    assert c6.below_bound(phi, lb) is below


@pytest.mark.claim(CLAIM, part="scope")
@pytest.mark.parametrize("below,holds,agreement", [
    (0, True, "measured"), (1, True, "disagree"), (0, False, "disagree")], ids=["clean", "one-below", "a-certificate-fails"])
def test_beyond_agreement_judge(below, holds, agreement):
    assert c6.beyond_agreement(below, holds) == agreement


@pytest.mark.claim(CLAIM, part="scope")
@pytest.mark.parametrize("infeasible,bound,phi,violated", [
    (True, F(4, 3), 2.0, True),
    (False, F(0), 2.0, False),                          # H d_k <= d: orthogonal heads exist
    (True, F(0), 1.0, False),                           # no positive lower bound
    (True, F(1, 3), c6.ORTH_EPS, False),                # optimum at the orthogonality threshold
    (True, F(1, 3), 2 * c6.ORTH_EPS, True),
], ids=["beyond-d", "feasible", "zero-bound", "phi-at-eps", "phi-above-eps"])
def test_infeasible_judge(infeasible, bound, phi, violated):
    assert c6.infeasible_violated(infeasible, bound, phi) is violated


@pytest.mark.claim(CLAIM, part="scope")
@pytest.mark.parametrize("diff,se,violated", [
    (0.625, 0.125, False), (0.626, 0.125, True), (0.1, 0.0, True), (-0.1, 0.001, False), (0.0, 0.0, False),
    (0.05, 0.02, False)],
    ids=["z-at-min", "z-above", "zero-se", "orthogonal-better", "no-difference", "z-2.5"])
def test_signal_judge(diff, se, violated):
    assert c6.signal_violated(diff, se) is violated


# -- headline figures, recomputed ----------------------------------------------------------------
@pytest.mark.claim(CLAIM, part="scope")
def test_fusion_frame_boundary_and_counts_by_brute_force(result):
    """Every configuration's bound is 1 − max(0, (H d_k/d − 1)/(H − 1)) (written here); the starts that
    reach it are recounted from descents at the check's seeds, with the HDI from scipy's angles, over
    the configurations with tight frames only (the two planes in R³ are reported apart)."""
    part = _part(result, "beyond d (H·d_k > d)")
    figs = part.numeric.figures
    ctx = Context(seed=0, quick=True)
    reached = starts = 0
    gaps = []
    for row in figs["configs"]:
        H, d_k, d = row["H"], row["d_k"], row["d"]
        assert row["bound_hdi"] == pytest.approx(_bound(H, d_k, d), abs=1e-15)
        seeds = np.random.SeedSequence(ctx.seed_for(f"c6/opt/{H}-{d_k}-{d}")).generate_state(row["starts"])
        finals = [_hdi(c6.minimise_overlap(H, d_k, d, rng=int(s)).U) for s in seeds]
        assert max(finals) <= _bound(H, d_k, d) + BOUND_TOL
        if (H, d_k, d) == c6.NOT_ATTAINED:
            assert max(finals) < _bound(H, d_k, d) - 0.1
            continue
        reached += sum(_bound(H, d_k, d) - f <= BOUND_TOL for f in finals)
        starts += len(finals)
        gaps += [_bound(H, d_k, d) - f for f in finals]
    assert (figs["starts_reaching_bound"], figs["starts"]) == (reached, starts) == (15, 15)
    assert f"in {reached} of {starts} starts" in part.numeric.summary
    assert max(gaps) <= BOUND_TOL
    tight = [r for r in figs["configs"] if (r["H"], r["d_k"], r["d"]) != c6.NOT_ATTAINED]
    assert f"the largest gap {sci(max(r['max_gap'] for r in tight))}" in part.numeric.summary
    assert part.finding.endswith(r"with $\mathrm{HDI} = 1 - (H d_k/d - 1)/(H - 1)$ where one exists")


def _signal_terms_here(p, config):
    """Per replicate (squared error of the ensemble's conditional mean, its MSE) on sin(2 x_1)."""
    H, d, d_k = p["H"], p["d"], p["d_k"]
    eye = np.eye(d)
    cols = {"identical, on the signal": [list(range(d_k))] * H,
            "sharing the signal direction": [[0, *range(1 + h * (d_k - 1), 1 + (h + 1) * (d_k - 1))] for h in range(H)],
            "orthogonal, one on the signal": [list(range(h * d_k, (h + 1) * d_k)) for h in range(H)]}[config]
    heads = [eye[:, c] for c in cols]
    sq, mse = [], []
    for r in range(p["R"]):
        s = int(np.random.SeedSequence([p["seed"], r]).generate_state(1)[0])
        x_eval = np.random.default_rng(np.random.SeedSequence(s)).standard_normal((p["m"], d))
        X = np.random.default_rng(np.random.SeedSequence(s, spawn_key=(0,))).standard_normal((p["n"], d))
        w = sum(softmax((x_eval @ U) @ (X @ U).T / math.sqrt(d_k), axis=1) for U in heads) / H
        err = (w @ np.sin(2 * X[:, 0]) - np.sin(2 * x_eval[:, 0])) ** 2
        sq.append(err.mean())
        mse.append((err + p["sigma"] ** 2 * np.sum(w ** 2, axis=1)).mean())
    return np.array(sq), np.array(mse)


def _signal_headline(p):
    """The single-index limit from scratch: every configuration's MSE, the better non-orthogonal one,
    its paired difference to the orthogonal heads, and R² with Var f = E sin²(2 x) = (1 − e⁻⁸)/2."""
    terms = {c: _signal_terms_here(p, c) for c in c6.SIGNAL_CONFIGS}
    orth = "orthogonal, one on the signal"
    best = min((c for c in terms if c != orth), key=lambda c: terms[c][1].mean())
    diff = terms[orth][1] - terms[best][1]
    var_f = (1 - math.exp(-8)) / 2
    return {"best": best, "mse": (terms[best][1].mean(), terms[orth][1].mean()), "diff": diff.mean(),
            "se": diff.std(ddof=1) / math.sqrt(diff.size),
            "r2": {c: 1 - t[0].mean() / var_f for c, t in terms.items()}, "var_f": var_f}


def _signal_finding(h):
    best = max(h["r2"].values())
    return (f"Gaussian design, $R^2 \\le {best:.2f}$: sharing the signal gives MSE {h['mse'][0]:.3f} vs "
            f"{h['mse'][1]:.3f}, " + ("a limit" if best >= informativeness.R2_INFORMATIVE else
                                     r"too near $\mathrm{Var}\, f$ to refute"))


@pytest.mark.claim(CLAIM, part="scope")
def test_single_index_headline_by_brute_force(result):
    """The configuration reported is the better of the two that share the signal (min, recomputed),
    and the finding's MSEs, difference ± SE and the part's R² are those recomputed here."""
    part = _part(result, "real NW heads, single-index target, Gaussian design")
    figs = part.numeric.figures
    p = figs["params"]
    h = _signal_headline(p)
    assert p["configs"] == [h["best"], "orthogonal, one on the signal"]
    assert np.allclose(figs["mse"], h["mse"], rtol=REF_RTOL, atol=0)
    assert figs["diff"] == pytest.approx(h["diff"], rel=1e-9) and figs["se"] == pytest.approx(h["se"], rel=1e-7)
    assert part.finding == _signal_finding(h)
    assert abs(figs["var_f"] - h["var_f"]) <= VAR_F_Z * figs["var_f_se"]
    for c, want in h["r2"].items():
        assert abs(part.r2[c] - want) <= (1 - want) * VAR_F_Z * figs["var_f_se"] / h["var_f"] + 1e-9
    assert "criterion for a limit: positive and above 5 paired standard errors" in part.numeric.summary


@pytest.mark.slow   # re-runs a claim or a grid end to end (seconds)
@pytest.mark.claim(CLAIM, part="scope")
def test_single_index_headline_of_the_full_run():
    """The README's figures (the full default run, seed 0): MSE 0.403 vs 0.467, difference 0.064 ± 0.002,
    recomputed here from the experiment's full-size parameters and against the experiment itself."""
    exp = c6.signal_experiment(Context(seed=0))
    p = exp["params"]
    assert (p["n"], p["R"], p["m"], p["seed"]) == (256, 48, 64, Context(seed=0).seed_for("c6/signal"))
    h = _signal_headline(p)
    assert (f"{h['mse'][0]:.3f}", f"{h['mse'][1]:.3f}", f"{h['diff']:.3f}", f"{h['se']:.3f}") == \
        ("0.403", "0.467", "0.064", "0.002")
    assert np.allclose(exp["outcome"].figures["mse"], h["mse"], rtol=REF_RTOL, atol=0)
    assert exp["outcome"].violates


def test_every_text_is_markup_and_states_its_criterion(result):
    for p in result.parts:
        design = [t for v in p.design.values() for t in (v.values() if isinstance(v, dict) else [v])
                  if isinstance(t, str)]
        controls = [c[k] for c in p.controls.values() for k in ("what", "effect")]
        for t in [p.statement, p.finding, p.stated, p.derived, p.regime, p.restored_by, p.numeric.summary,
                  *design, *controls, p.counterexample.description if p.counterexample else ""]:
            markup_check(t, p.id)
        assert "criterion" in p.numeric.summary, p.id
    markup_check(result.summary)
    assert {p.id for p in result.parts if p.r2} == {"real NW heads, single-index target",
                                                     "real NW heads, single-index target, Gaussian design"}


# -- the torus regime: recomputed here from its seeds, with angles instead of projections ----------
#: Per-replicate MSEs here (softmax of κ Σ cos of angle differences, scipy) against the regime's
#: (projections, max-shifted softmax, einsum): the same sums rounded differently, ~1e-15 relative.
TORUS_RTOL = 1e-9
#: The Jacobi–Anger series truncated after 40 odd harmonics: terms below 1e-30 there.
SERIES_TOL = 1e-12
TORUS_C6 = {"identical, on the signal": [[0, 1]] * 3, "sharing the signal circle": [[0, 1], [0, 2], [0, 3]],
            "orthogonal, one on the signal": [[0, 1], [2, 3], [4, 5]]}
RADIUS = math.sqrt(2.0)


def torus_mse_here(circles, *, n, R, m, seed, d, kappa, sigma, freq):
    """Per replicate MSE (design bias plus noise part) of circle heads with α = 1/H: replicate r draws the
    angles of its n keys, then of its m queries, uniform from SeedSequence([seed, r]); head weights
    softmax_i(κ Σ_b cos(θ_q,b − θ_i,b)); f = sin(freq r cos θ_0)."""
    out = []
    for r in range(R):
        rng = np.random.default_rng(np.random.SeedSequence([seed, r]))
        tk = rng.uniform(0.0, 2 * math.pi, (n, d // 2))
        tq = rng.uniform(0.0, 2 * math.pi, (m, d // 2))
        fk, fq = np.sin(freq * RADIUS * np.cos(tk[:, 0])), np.sin(freq * RADIUS * np.cos(tq[:, 0]))
        w = sum(softmax(kappa * sum(np.cos(tq[:, [b]] - tk[:, b][None, :]) for b in c), axis=1)
                for c in circles) / len(circles)
        out.append(float(np.mean((w @ fk - fq) ** 2 + sigma**2 * np.sum(w * w, axis=1))))
    return np.array(out)


def jacobi_anger_mse(beta, kappa, freq=2.0):
    """Σ_m c_m² (1 − β I_m(κ)/I_0(κ))²/2, c_m = 2 (−1)^k J_m(ω r), m = 2k + 1: the population MSE
    when the ensemble smooths sin(ω r cos θ_0) with weight β."""
    from scipy.special import iv, jv
    return sum((2 * jv(2 * k + 1, freq * RADIUS)) ** 2 * (1 - beta * iv(2 * k + 1, kappa) / iv(0, kappa)) ** 2 / 2
               for k in range(40))


@pytest.mark.claim(CLAIM, part="scope")
def test_torus_limit_by_brute_force(result):
    """Every figure the torus limit quotes, recomputed here from its seed: MSE per configuration, the
    better sharing one (min), the paired difference ± SE (ddof 1), R² with Var f = (1 − J_0(2ωr))/2,
    the population MSE by the Jacobi–Anger series, the finding and the headline's words."""
    from scipy.special import j0

    from proofs.markup import to_unicode
    from verify.experiments import regimes
    part = _part(result, "real NW heads, single-index target")
    figs = part.numeric.figures
    size, seed = figs["params"]["size"], figs["params"]["seed"]
    n, R, m = regimes.SIGNAL_SIZES[size]
    here = {c: torus_mse_here(circ, n=n, R=R, m=m, seed=seed, d=14, kappa=4.0, sigma=0.1, freq=2.0)
            for c, circ in TORUS_C6.items()}
    var_f = (1 - j0(4.0 * RADIUS)) / 2
    rows = {r["config"]: r for r in figs["rows"]}
    for c, v in here.items():
        assert rows[c]["mse"] == pytest.approx(v.mean(), rel=TORUS_RTOL)
        assert part.r2[c] == pytest.approx(1 - v.mean() / var_f, rel=1e-9)
    for c, beta in (("identical, on the signal", 1.0), ("sharing the signal circle", 1.0),
                    ("orthogonal, one on the signal", 1 / 3)):
        assert rows[c]["population_mse"] == pytest.approx(jacobi_anger_mse(beta, 4.0), abs=SERIES_TOL)
    orth = "orthogonal, one on the signal"
    best = min((c for c in here if c != orth), key=lambda c: here[c].mean())
    diff = here[orth] - here[best]
    mean, se = diff.mean(), diff.std(ddof=1) / math.sqrt(R)
    assert (figs["A"], figs["B"]) == (best, orth)
    assert figs["diff"] == pytest.approx(mean, rel=1e-9) and figs["se"] == pytest.approx(se, rel=1e-7)
    ma, mb = here[best].mean(), here[orth].mean()
    want = (f"torus design, heads that learn the target: sharing the signal beats orthogonal heads (MSE {ma:.3f} vs "
            f"{mb:.3f}, R² {1 - ma / var_f:.2f} vs {1 - mb / var_f:.2f})")
    assert to_unicode(part.finding) == want and want in to_unicode(result.headline)
    assert pm(mean, se, ".4f") in part.numeric.summary and part.counterexample is not None
    pos, neg = part.controls["positive"], part.controls["negative"]
    assert pos["population_effect"] == pytest.approx(jacobi_anger_mse(1 / 3, 4.0) - jacobi_anger_mse(1.0, 4.0),
                                                     abs=2 * SERIES_TOL)
    zero = {c: torus_mse_here(circ, n=n, R=R, m=m, seed=seed, d=14, kappa=4.0, sigma=0.1, freq=0.0)
            for c, circ in TORUS_C6.items()}                      # sin(0) = 0: the zero target, noise only
    assert neg["best"] == min(zero, key=lambda c: zero[c].mean()) == orth
    zd = zero[orth] - zero["sharing the signal circle"]
    assert neg["orthogonal_minus_sharing"]["diff"] == pytest.approx(zd.mean(), rel=1e-9)


@pytest.mark.claim(CLAIM, part="scope")
def test_torus_counterexample_replays(saved):
    result, out = saved
    part = _part(result, "real NW heads, single-index target")
    doc, outcome = replay(out / part.counterexample.file)
    assert outcome.violates and outcome.summary == doc["expected"]["summary"]
    with pytest.raises(VerifyError, match="params.size"):
        replayer_for("c6.shared-signal-torus")({"size": "huge", "seed": 0})


@pytest.mark.claim(CLAIM, part="scope")
@pytest.mark.parametrize("diff,se,r2,violated", [
    (0.2, 0.01, [0.8, 0.3], True),
    (0.2, 0.01, [0.25, 0.1], True),           # the better learns exactly R2_INFORMATIVE: informs
    (0.2, 0.01, [0.1, 0.24], False),         # neither learns enough (max, not min)
    (0.2, 0.01, [0.1, 0.8], True),
    (0.05, 0.01, [0.8, 0.3], False),         # z = 5 exactly: not beyond SIGNAL_Z_MIN
    (-0.2, 0.01, [0.8, 0.3], False),
])
def test_torus_signal_judge(diff, se, r2, violated):
    assert c6.torus_signal_violated(diff, se, r2) is violated
