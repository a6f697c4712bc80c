"""C6 check (verify.claims.c6, verify.numeric.grassmann) against independent computations written
here: the model MSE as a loop over head pairs with ρ from scipy.linalg.subspace_angles, the
fusion-frame bound written out, a dimension count by matrix rank, NW heads by scipy's softmax over
explicit leave-one-out loops (tests/test_claim_c5.py), population MSEs from Bessel functions. The
judges are tables on both sides of every threshold, read from the module."""

from __future__ import annotations

import math
from fractions import Fraction as F

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from scipy.linalg import subspace_angles
from scipy.special import iv
from test_claim_c5 import KAPPA, _ensemble_by_loops, _torus_draws, _xy
from test_claims import part_of

from proofs.markup import sci, to_unicode
from verify.claims import Context, c5, c6
from verify.claims.c6 import experiments as E
from verify.errors import VerifyError
from verify.io import loads_json
from verify.numeric import grassmann as G
from verify.outputs.plots import data_path
from verify.replay import replay

#: Model MSE of order B² + V <= 3 from <= 15 pair terms of scipy's cos²: a few ulps each.
MSE_TOL = 1e-12
#: Orthonormality of a QR factor or a tangent direction: float64 rounding.
ORTH_TOL = 1e-12
#: Sizes with a known tight fusion frame (or orthogonal heads when H d_k <= d).
TIGHT = [(3, 1, 2), (4, 1, 3), (5, 1, 2), (3, 2, 4), (3, 2, 3), (2, 1, 3), (3, 2, 6), (6, 2, 5)]

CLAIM = "C6"
pytestmark = pytest.mark.claim(CLAIM, part="core")


def _rho(a, b):
    return float(np.mean(np.cos(subspace_angles(a, b)) ** 2))


def _hdi(U):
    H = len(U)
    return 1 - sum(_rho(U[i], U[j]) for i in range(H) for j in range(i + 1, H)) / (H * (H - 1) / 2)


def _bound(H, d_k, d):
    return 1 - max(0.0, (H * d_k / d - 1) / (H - 1))


def _up(x):
    return float(np.nextafter(x, np.inf))


# -- the judges ---------------------------------------------------------------------------------
@pytest.mark.parametrize("increase,want", [(-2 * c6.MOVE_TOL, True), (-c6.MOVE_TOL, False), (0.0, False)])
def test_lowers_mse(increase, want):
    assert c6.lowers_mse(increase) is want


@pytest.mark.parametrize("lowered,err,want", [
    (0, c6.MSE_RTOL, "rounding"), (0, _up(c6.MSE_RTOL), "disagree"), (1, 0.0, "disagree")])
def test_local_agreement(lowered, err, want):
    assert c6.local_agreement(lowered, err) == want


@pytest.mark.claim(CLAIM, part="scope")
@pytest.mark.parametrize("bound,final,want", [
    (c6.BOUND_TOL, 0.0, True), (2 * c6.BOUND_TOL, 0.0, False), (0.5, 0.6, True)])
def test_reaches_bound(bound, final, want):
    assert c6.reaches_bound(bound, final) is want


@pytest.mark.claim(CLAIM, part="scope")
@pytest.mark.parametrize("phi,lb,want", [(0.0, c6.BELOW_TOL, False), (-1e-12, c6.BELOW_TOL, True), (1.0, 1.0, False)])
def test_below_bound(phi, lb, want):
    assert c6.below_bound(phi, lb) is want


@pytest.mark.claim(CLAIM, part="scope")
@pytest.mark.parametrize("below,holds,want", [(0, True, "measured"), (1, True, "disagree"), (0, False, "disagree")])
def test_beyond_agreement(below, holds, want):
    assert c6.beyond_agreement(below, holds) == want


@pytest.mark.claim(CLAIM, part="scope")
@pytest.mark.parametrize("infeasible,bound,phi,want", [
    (True, F(4, 3), 2.0, True), (False, F(0), 2.0, False), (True, F(0), 1.0, False),
    (True, F(1, 3), c6.ORTH_EPS, False), (True, F(1, 3), _up(c6.ORTH_EPS), True)])
def test_infeasible_judge(infeasible, bound, phi, want):
    assert c6.infeasible_violated(infeasible, bound, phi) is want


def _step(diff, se=1.0):
    return {"diff": diff, "se": se}


@pytest.mark.claim(CLAIM, part="premise")
@pytest.mark.parametrize("steps,want", [
    ([_step(c6.Z_MIN)], False), ([_step(-9.0), _step(_up(c6.Z_MIN))], True), ([_step(-9.0)], False)])
def test_beats_orthogonal(steps, want):
    assert c6.beats_orthogonal(steps) is want


def _row(direction, diff):
    return {"config": "m", "direction": direction, "refit": {"diff": diff, "diff_se": 1.0}}


@pytest.mark.claim(CLAIM, part="premise")
@pytest.mark.parametrize("rows,want", [
    ([_row("up", _up(c6.Z_MIN)), _row("up", 9.0), _row("down", -9.0)], True),
    ([_row("up", c6.Z_MIN), _row("up", 9.0)], False), ([_row("down", 9.0)], False)])
def test_trained_judge(rows, want):
    assert c6.trained_violated(rows) is want


# -- the Grassmann moves and the overlap descent -------------------------------------------------
def _model_mse(U, B, V):
    H = len(U)
    return B * B + sum(V / H**2 * (1.0 if i == j else _rho(U[i], U[j])) for i in range(H) for j in range(H))


@given(H=st.integers(2, 4), d_k=st.integers(1, 3), extra=st.integers(0, 2), seed=st.integers(0, 2**32 - 1),
       t=st.floats(1e-4, 1.0), B=st.floats(-1, 1), V=st.floats(0.05, 2), tangent=st.booleans())
def test_no_perturbation_of_orthogonal_heads_lowers_the_model_mse(H, d_k, extra, seed, t, B, V, tangent):
    d = H * d_k + extra
    rng = np.random.default_rng(seed)
    frame = np.linalg.qr(rng.standard_normal((d, H * d_k)))[0]
    U0 = np.stack([frame[:, h * d_k:(h + 1) * d_k] for h in range(H)])
    if tangent:
        delta = G.tangent_move(U0, rng)
        assert max(np.abs(U0[h].T @ delta[h]).max() for h in range(H)) <= ORTH_TOL
        U = G.retract(U0, delta, t)
    else:
        U = np.stack([np.linalg.qr(u + t * rng.standard_normal(u.shape))[0] for u in U0])
    assert max(np.abs(u.T @ u - np.eye(d_k)).max() for u in U) <= ORTH_TOL
    base, moved = _model_mse(U0, B, V), _model_mse(U, B, V)
    assert abs(base - (B * B + V / H)) <= MSE_TOL and moved >= base - MSE_TOL
    assert abs(G.model_mse(U, B, V) - moved) <= MSE_TOL


@pytest.mark.claim(CLAIM, part="scope")
@given(cfg=st.sampled_from(TIGHT), seed=st.integers(0, 2**32 - 1))
def test_descent_reaches_the_bound_where_tight_frames_exist(cfg, seed):
    run = G.minimise_overlap(*cfg, rng=seed)
    assert all(b <= a + 1e-12 for a, b in zip(run.phi, run.phi[1:]))
    assert abs(_hdi(run.U) - _bound(*cfg)) <= c6.BOUND_TOL


@pytest.mark.claim(CLAIM, part="scope")
@given(H=st.integers(2, 5), d_k=st.integers(1, 3), d=st.integers(1, 6), seed=st.integers(0, 2**32 - 1))
def test_no_configuration_beats_the_bound(H, d_k, d, seed):
    d = max(d, d_k)
    assert _hdi(G.minimise_overlap(H, d_k, d, rng=seed).U) <= _bound(H, d_k, d) + c6.BOUND_TOL


@pytest.mark.parametrize("call,name", [
    (lambda: G.minimise_overlap(1, 1, 2, rng=0), "H"), (lambda: G.minimise_overlap(2, 3, 2, rng=0), "d_k"),
    (lambda: G.model_mse(np.ones((2, 3)), 0.0, 1.0), "U"), (lambda: G.minimise_overlap(2, 1, 2, rng="seed"), "rng"),
    (lambda: G.retract(np.zeros((2, 3, 1)) + np.eye(3)[:, :1], np.zeros((2, 3, 2)), 0.1), "delta")])
def test_bad_input_raises_verify_error(call, name):
    with pytest.raises(VerifyError, match=f"^{name}: "):
        call()


@pytest.mark.claim(CLAIM, part="scope")
def test_beyond_d_replays_and_holds_by_a_dimension_count(saved):
    result, out = saved
    part = part_of(result, "beyond-d")
    doc, outcome = replay(out / part.counterexample.file)
    H, d_k, d = (doc["params"][k] for k in ("H", "d_k", "d"))
    assert outcome.violates and H * d_k > d
    for s in range(3):   # any H d_k columns in R^d have rank <= d < H d_k: no H mutually orthogonal heads
        U = G.minimise_overlap(H, d_k, d, rng=s).U
        assert np.linalg.matrix_rank(np.concatenate(list(U), axis=1)) <= d < H * d_k
        phi = sum(d_k * _rho(U[i], U[j]) for i in range(H) for j in range(H) if i != j)
        assert abs(phi - H * d_k * (H * d_k / d - 1)) <= 1e-8 and abs(_hdi(U) - _bound(H, d_k, d)) <= c6.BOUND_TOL


@pytest.mark.claim(CLAIM, part="scope")
def test_fusion_frame_counts_by_brute_force(result):
    """Every size's bound written here; the starts that reach it recounted from descents at the
    check's seeds with the HDI from scipy's angles (tight sizes only; two planes in R³ apart)."""
    part = part_of(result, "beyond-d")
    figs, ctx = part.numeric.figures, Context(seed=0, quick=True)
    reached = starts = 0
    for row in figs["configs"]:
        H, d_k, d = row["H"], row["d_k"], row["d"]
        assert row["bound_hdi"] == pytest.approx(_bound(H, d_k, d), abs=1e-15)
        finals = [_hdi(G.minimise_overlap(H, d_k, d, rng=s).U)
                  for s in G.starts(ctx.seed_for(f"c6/opt/{H}-{d_k}-{d}"), row["starts"])]
        assert max(finals) <= _bound(H, d_k, d) + c6.BOUND_TOL
        if (H, d_k, d) != E.NOT_ATTAINED:
            reached += sum(_bound(H, d_k, d) - f <= c6.BOUND_TOL for f in finals)
            starts += len(finals)
    assert (figs["starts_reaching_bound"], figs["starts"]) == (reached, starts) == (15, 15)
    assert f"in {reached} of {starts} starts" in part.numeric.summary
    gap = max(r["max_gap"] for r in figs["configs"] if (r["H"], r["d_k"], r["d"]) != E.NOT_ATTAINED)
    assert f"the largest gap {sci(gap)}" in part.numeric.summary


@pytest.mark.claim(CLAIM, part="scope")
def test_bound_certificates_and_plot(saved):
    """Each arb certificate encloses (bound − HDI of the best optimum) with the bound written here, and
    fails for heads whose HDI beats the bound; the plot's dashed lines are those bounds and it draws one
    curve per start."""
    from flint import arb
    result, out = saved
    rows = part_of(result, "beyond-d").numeric.figures["configs"]
    for row in rows:
        cert = row["certificate"]
        mid = float(arb(cert["enclosure"]).mid())
        want = 2 - 4 / 3 if (row["H"], row["d_k"], row["d"]) == E.NOT_ATTAINED else \
            _bound(row["H"], row["d_k"], row["d"]) - row["final_hdi_max"]
        assert cert["holds"] and abs(mid - want) <= 1e-9
    U = np.stack([np.eye(3)[:, [h]] for h in range(3)])      # three orthogonal lines: HDI 1 beats 3/4 of R^2
    assert not E.certificate(U, 3, 1, 2, attained=True, tol=c6.BOUND_TOL)["holds"]
    lines = loads_json("plot", (out / data_path(result.plots["overlap_optimisation"])).read_text())["axes"][0]["lines"]
    flat = sorted({round(ln["y"][0], 12) for ln in lines if len(ln["y"]) == 2 and ln["y"][0] == ln["y"][1]})
    assert flat == sorted({round(_bound(r["H"], r["d_k"], r["d"]), 12) for r in rows})
    assert len([ln for ln in lines if len(ln["y"]) > 2]) == sum(r["starts"] for r in rows)


# -- real heads -------------------------------------------------------------------------------------
@pytest.mark.claim(CLAIM, part="scope")
def test_signal_heads_overlaps_match_scipy():
    for config, want in zip(E.GAUSSIAN_PAIR, (0.5, 1.0)):
        W = E.signal_heads(config, 3, 8, 2)
        assert abs(_hdi(list(W)) - want) <= 1e-12 and (W[:, 0, 0] == 1).sum() == (3 if want < 1 else 1)


@pytest.mark.claim(CLAIM, part="premise")
def test_sharing_path_by_brute_force(result):
    """Circle heads sharing fewer circles: HDI of each configuration from its circles, the MSE with
    both weightings by loops over angles, each configuration against the orthogonal heads, and the
    population MSE from A_2 = I_2(κ)/I_0(κ): with α = 1/H, Σ_b (1 − k_b A_2/4)²/8 (k_b heads on circle
    b), with refit weights 1/8 per circle that no head reads."""
    part = part_of(result, "in-scope-path")
    figs = part.numeric.figures
    n, R, m = (figs["sizes"][k] for k in ("n", "R", "m"))
    a2 = iv(2, KAPPA) / iv(0, KAPPA)
    f = lambda x: np.sum(x[:, 0::2] * x[:, 1::2], axis=1) / 2  # noqa: E731
    gain = math.sqrt(KAPPA * math.sqrt(2)) / math.sqrt(2)
    here = []  # per configuration, (R, 2) MSEs by loops; the run's figures stay untouched
    for row, circles in zip(figs["rows"], c5.heads.SHARING_PATH):
        k = [circles.count(b) for b in range(4)]
        assert row["hdi"] == pytest.approx(1 - sum(x * (x - 1) / 2 for x in k) / 6, abs=1e-12)
        assert row["uniform"]["population_mse"] == pytest.approx(sum((1 - x * a2 / 4) ** 2 for x in k) / 8, abs=1e-12)
        assert row["refit"]["population_mse"] == pytest.approx(k.count(0) / 8, abs=1e-12)
        W = np.zeros((4, 8, 2))
        for h, b in enumerate(circles):
            W[h, 2 * b:2 * b + 2] = gain * np.eye(2)
        got = []
        for r in range(R):
            tk, eps, tq = _torus_draws(figs["seed"], r, n, m, 8, 0.1)
            X, xe = _xy(tk), _xy(tq)
            got.append(_ensemble_by_loops(W, W, 1 / math.sqrt(2), X, f(X) + eps, xe, f(xe))[:2])
        here.append(np.array(got))
        assert [row["uniform"]["mse"], row["refit"]["mse"]] == pytest.approx(np.mean(got, axis=0), rel=1e-9)
    for k, w in enumerate(("uniform", "refit")):
        for mine, step in zip(here, figs["to_orthogonal"][w]):
            assert step["diff"] == pytest.approx((here[-1][:, k] - mine[:, k]).mean(), rel=1e-7, abs=1e-12)
    violated = any(c6.beats_orthogonal(s) for s in figs["to_orthogonal"].values())
    assert part.effect.value == ("undecided" if part.undecided else
                                 "premise fails on NW heads" if violated else "premise holds on NW heads")


@pytest.mark.claim(CLAIM, part="scope")
def test_one_direction_torus_is_judged_with_refit_weights(result):
    """The figures are C5's experiment (tests/test_claim_c5.py recomputes them); C6 judges the refit
    gap: a limit exactly when orthogonal heads are worse with refit weights by more than Z_MIN SE."""
    part = part_of(result, "one-direction-torus")
    g = part.numeric.figures["gap"]
    want = "limit" if c6.rises(g["refit"]["diff"], g["refit"]["se"]) else "holds beyond the stated scope"
    assert part.effect.value == ("undecided" if part.undecided else want)
    assert c6.rises(g["uniform"]["diff"], g["uniform"]["se"]) and not part.undecided    # the positive control
    assert "criterion: with α refit, higher by more than" in to_unicode(part.numeric.summary)
    d = {w: f"{g[w]['diff']:+.3f}".replace("-", "−") for w in ("uniform", "refit")}
    assert to_unicode(part.finding) == (f"one signal direction, torus: orthogonal minus sharing heads, MSE "
                                        f"{d['uniform']} with α = 1/H, {d['refit']} with α refit")


@pytest.mark.claim(CLAIM, part="scope")
def test_gaussian_design_by_brute_force(result):
    """The declared pair (coordinate heads) on the Gaussian design by loops, and the part undecided
    exactly when its best R² with refit weights is below R2_INFORMATIVE."""
    part = part_of(result, "one-direction-gaussian")
    figs, p = part.numeric.figures, part.numeric.figures["params"]
    for row in figs["rows"]:
        W = E.signal_heads(row["config"], 3, 8, 2)
        got = []
        for r in range(p["R"]):
            rng = np.random.default_rng(np.random.SeedSequence([p["seed"], r]))
            X, eps, xe = rng.standard_normal((p["n"], 8)), 0.5 * rng.standard_normal(p["n"]), rng.standard_normal((p["m"], 8))
            got.append(_ensemble_by_loops(W, W, 1 / math.sqrt(2), X, np.sin(2 * X[:, 0]) + eps, xe, np.sin(2 * xe[:, 0]))[:2])
        assert [row["uniform"]["mse"], row["refit"]["mse"]] == pytest.approx(np.mean(got, axis=0), rel=1e-9)
    decides = c5.decides([r["refit"]["r2"] for r in figs["rows"]], figs["gap"]["uniform"], figs["gap"]["refit"]["se"])
    assert "with α refit)" in to_unicode(part.finding)
    assert bool(part.undecided) is not decides


@pytest.mark.claim(CLAIM, part="premise")
def test_trained_heads_are_judged_by_their_orthogonal_moves(result):
    """C5's trained heads (tests/test_claim_c5.py recomputes the moves); C6's outcome follows its judge
    and the shared undecided rule."""
    part = part_of(result, "trained-heads")
    figs = part.numeric.figures
    undecided = c5.trained_undecided({**figs, "var_f": 0.5})
    assert part.undecided == undecided
    if not undecided:
        want = "premise fails on NW heads" if c6.trained_violated(figs["rows"]) else "premise holds on NW heads"
        assert part.effect.value == want
