"""The command line: the report's files, seeds, exit statuses, replay."""

from __future__ import annotations

import json

import pytest
import sympy as sp

import proofs
import verify.claims
from proofs.core import Derivation
from verify.cli import main
from verify.verdicts import Verdict

VERDICTS = {v.value for v in Verdict}


def _strip_timing(obj):
    """report.json without wall-clock fields (the only thing a seed does not fix)."""
    if isinstance(obj, dict):
        return {k: _strip_timing(v) for k, v in obj.items() if k not in ("seconds", "meta")}
    if isinstance(obj, list):
        return [_strip_timing(v) for v in obj]
    if isinstance(obj, str) and obj.startswith("/"):
        return obj.rsplit("/", 2)[-2:]  # output paths differ between the two runs
    return obj


@pytest.fixture(scope="module")
def two_runs(tmp_path_factory):
    """The whole quick run, twice with seed 7, and once with seed 8."""
    out = {}
    for name, seed in (("a", 7), ("b", 7), ("c", 8)):
        d = tmp_path_factory.mktemp(name)
        assert main(["--quick", "--seed", str(seed), "--out", str(d)]) == 0
        out[name] = (d, json.loads((d / "report.json").read_text()))
    return out


def test_report_has_every_claim_with_a_verdict_and_evidence(two_runs):
    d, doc = two_runs["a"]
    assert [c["id"] for c in doc["claims"]] == [f"C{i}" for i in range(1, 9)]
    assert doc["crashed"] == {}
    for claim in doc["claims"]:
        assert claim["verdict"] in VERDICTS
        assert claim["evidence"]["parts"], claim["id"]
        assert isinstance(claim["assumptions"], list)
        for part in claim["evidence"]["parts"]:
            assert part["verdict"] in VERDICTS
            if part["verdict"] == Verdict.REFUTED.value:
                cx = part["counterexample"]
                assert part["restored_by"] and cx["file"]
                assert json.loads(open(cx["file"]).read())["claim"] == claim["id"]
    headings = [line for line in (d / "report.md").read_text().splitlines() if line.startswith("## C")]
    assert [h.split(":")[0] for h in headings] == [f"## C{i}" for i in range(1, 9)]
    pngs = list((d / "plots").glob("*.png"))
    assert len(pngs) >= 4 and all(p.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" for p in pngs)


def test_same_seed_same_numbers(two_runs):
    assert _strip_timing(two_runs["a"][1]) == _strip_timing(two_runs["b"][1])


def test_other_seed_other_numbers(two_runs):
    assert _strip_timing(two_runs["a"][1]) != _strip_timing(two_runs["c"][1])


def test_every_saved_counterexample_replays(two_runs, capsys):
    d, _ = two_runs["a"]
    files = sorted((d / "counterexamples").glob("*.json"))
    assert files
    for f in files:
        assert main(["replay", str(f)]) == 0, f
    assert "reproduced" in capsys.readouterr().out


def test_a_crashing_check_is_reported_and_exits_1(tmp_path, monkeypatch, capsys):
    import verify.claims.c2 as c2

    def boom(ctx):
        raise RuntimeError("deliberate failure")

    monkeypatch.setattr(c2, "check", boom)
    assert main(["--quick", "--only", "C2,C3", "--out", str(tmp_path)]) == 1
    doc = json.loads((tmp_path / "report.json").read_text())
    assert [c["id"] for c in doc["claims"]] == ["C3"]
    assert "deliberate failure" in doc["crashed"]["C2"]
    assert "C2 CRASHED" in capsys.readouterr().err


def test_a_failed_derivation_step_fails_the_run_naming_it(tmp_path, monkeypatch, capsys):
    bad = Derivation(claim="C3", title="broken", stated="x")
    x = sp.Symbol("x")
    bad.step("wrong_square", sp.Eq((x + 1) ** 2, x**2 + 1), by="expand")
    monkeypatch.setitem(proofs._CACHE, "C3", bad)
    assert main(["--quick", "--only", "C3", "--out", str(tmp_path)]) == 1
    assert "C3/wrong_square" in capsys.readouterr().err


BAD_CALLS = [
    pytest.param(["--only", "C9"], id="unknown-claim"),
    pytest.param(["--seed", "x"], id="seed-not-int"),
    pytest.param(["replay", "/nonexistent.json"], id="replay-missing-file"),
]


@pytest.mark.parametrize("argv", BAD_CALLS)
def test_bad_arguments_exit_2(argv, capsys):
    try:
        code = main(argv)
    except SystemExit as exc:  # argparse's own usage errors
        code = exc.code
    assert code == 2


def test_replay_rejects_a_file_that_is_not_a_counterexample(tmp_path, capsys):
    f = tmp_path / "x.json"
    f.write_text(json.dumps({"format": "something else"}))
    assert main(["replay", str(f)]) == 2
    assert "FILE: expected a counterexample" in capsys.readouterr().err


def test_registry_covers_every_claim():
    assert list(verify.claims.CLAIM_CHECKS) == list(proofs.CLAIM_MODULES)
