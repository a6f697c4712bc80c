"""The theorem-ledger plugin (verify/pytest_plugin.py), run on small synthetic suites in a
subprocess: the ledger's rows, --claims selection, the missing-marker failure, JUnit properties."""

from __future__ import annotations

import os
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from proofs import CLAIM_IDS

ROOT = Path(__file__).resolve().parent.parent

SUITE = '''
import pytest

@pytest.mark.claim("C3", part="core")
def test_identity():
    assert 1 + 1 == 2

@pytest.mark.claim("C3", part="detail")
def test_bias_word():
    assert False, "deliberately failing"

@pytest.mark.claim("C5", part="premise")
def test_premise():
    pass

@pytest.mark.claim("C5", part="scope")
def test_skipped():
    pytest.skip("not today")

def test_unmarked_infrastructure():
    pass
'''


def _pytest(tmp_path: Path, files: dict[str, str], *args: str) -> subprocess.CompletedProcess:
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    (tmp_path / "pytest.ini").write_text("[pytest]\n")          # keep the project's own config out
    # the synthetic suite computes its own quick runs (none), not this run's shared ones
    env = {k: v for k, v in os.environ.items() if k != "MHA_NW_QUICK_RUN_DIR"} | {"PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, "-m", "pytest", "-p", "verify.pytest_plugin", "-q",
                           "-p", "no:cacheprovider", *args], cwd=tmp_path, capture_output=True, text=True, env=env)


def test_ledger_rows_count_each_part_and_name_the_failure_and_junit_carries_claim_and_part(tmp_path):
    out = _pytest(tmp_path, {"test_suite.py": SUITE}, "--junitxml", "junit.xml").stdout
    ledger = out.split("theorem ledger", 1)[1]
    c3 = ledger.split("C3", 1)[1].split("C5", 1)[0]
    assert "TESTS FAILED" in c3 and "core 1 passed" in c3 and "detail 0 passed, 1 FAILED" in c3
    assert "FAILED (detail): test_suite.py::test_bias_word" in c3
    c5 = ledger.split("C5", 1)[1]
    assert "tests pass" in c5 and "premise 1 passed" in c5 and "scope 0 passed, 1 skipped" in c5
    assert "not computed" in c3      # no test ran the claim's quick check in this session
    cases = {c.get("name"): {p.get("name"): p.get("value") for p in c.iter("property")}
             for c in ET.parse(tmp_path / "junit.xml").getroot().iter("testcase")}
    assert cases["test_identity"] == {"claim": "C3", "part": "core"}
    assert cases["test_premise"] == {"claim": "C5", "part": "premise"}
    assert cases["test_unmarked_infrastructure"] == {}


@pytest.mark.slow  # a pytest in a subprocess
def test_claims_option_selects(tmp_path):
    out = _pytest(tmp_path, {"test_suite.py": SUITE}, "--claims", "C5")
    assert out.returncode == 0, out.stdout
    assert "1 passed, 1 skipped, 3 deselected" in out.stdout
    bad = _pytest(tmp_path, {"test_suite.py": SUITE}, "--claims", "C42")
    assert bad.returncode != 0 and "--claims" in bad.stderr


@pytest.mark.slow  # a pytest in a subprocess
def test_a_claim_module_test_without_marker_fails(tmp_path):
    out = _pytest(tmp_path, {"test_claim_c3.py": "def test_forgot():\n    pass\n"})
    assert out.returncode == 1 and "claim test without @pytest.mark.claim" in out.stdout
    out = _pytest(tmp_path, {"test_claim_c3.py": "import pytest\n@pytest.mark.claim('C3', part='vibes')\n"
                                                 "def test_bad_part():\n    pass\n"})
    assert out.returncode == 1 and "expected part among" in out.stdout


@pytest.mark.slow  # a pytest in a subprocess
def test_every_test_in_the_claim_modules_of_this_suite_is_marked():
    """Collect the real suite: every test in test_claim_*.py / test_proofs_c*.py has a claim."""
    out = subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider", "-n", "0",
                          "--claims", ",".join(CLAIM_IDS), "tests/"],
                         cwd=ROOT, capture_output=True, text=True)
    selected = {line.split("::")[0] for line in out.stdout.splitlines() if "::" in line}
    claim_modules = {f"tests/{p.name}" for p in (ROOT / "tests").glob("test_claim_c*.py")}
    assert claim_modules <= selected


def test_quick_runs_are_computed_once_per_test_run(tmp_path, monkeypatch):
    """Two test processes sharing the run's folder: the first computes a claim's quick run, the
    second loads it (the same result), and the ledger's view of the folder has it too."""
    from verify import pytest_plugin as plugin

    calls = []

    def compute(self, claim, out):
        calls.append((claim, out))
        return {"claim": claim, "out": str(out)}

    monkeypatch.setattr(plugin.QuickRun, "_compute", compute)
    first, second = plugin.QuickRun(None, tmp_path), plugin.QuickRun(None, tmp_path)
    a, b = first("C2"), second("c2")
    assert calls == [("C2", tmp_path / "c2")]
    assert a == b == ({"claim": "C2", "out": str(tmp_path / "c2")}, tmp_path / "c2")
    assert plugin.QuickRun.stored(tmp_path).results == {"C2": a}


def test_a_failed_quick_run_is_not_repeated_by_another_process(tmp_path, monkeypatch):
    from verify import pytest_plugin as plugin

    calls = []

    def compute(self, claim, out):
        calls.append(claim)
        raise ValueError("boom")

    monkeypatch.setattr(plugin.QuickRun, "_compute", compute)
    for run in (plugin.QuickRun(None, tmp_path), plugin.QuickRun(None, tmp_path)):
        with pytest.raises(Exception, match="boom"):
            run("C3")
    assert calls == ["C3"]
    assert plugin.QuickRun.stored(tmp_path).errors == {"C3": "ValueError: boom"}
