"""docs/adding-a-claim.md, done: in a copy of the repository, the guide's three files are written,
its regeneration command run, and the new claim C10 must then appear in ``--only``, ``replay``, the
report, the ledger and the snapshot, with the whole default tier passing and no other file edited
by hand. A change of the framework that the guide does not follow fails here."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[1]
GUIDE = ROOT / "docs" / "adding-a-claim.md"
#: What the guide writes by hand, and what its regeneration command rewrites: nothing else changes.
HAND = {"proofs/c10_identical_heads.py", "verify/claims/c10.py", "tests/test_claim_c10.py"}
REGENERATED = {"tests/snapshots/verdicts.json", "tests/snapshots/quick-report.json", "tests/snapshots/quick-report.md",
               "tests/snapshots/quick-terminal.txt", "tests/snapshots/quick-report-html.txt", "README.md",
               "verify/claims/costs.json"}
#: The default tier in a copy (its derivations from a fresh cache): a few minutes on 2 cores.
TIMEOUT_S = 1800


def _files() -> dict[str, str]:
    out = {}
    for block in re.findall(r"^```python\n(.*?)^```$", GUIDE.read_text(), flags=re.S | re.M):
        first, _, body = block.partition("\n")
        m = re.fullmatch(r"# file: (\S+)", first.strip())
        assert m, f"a code block of the guide names its file on its first line, got {first!r}"
        out[m.group(1)] = body
    return out


def _run(tree: Path, *args: str, timeout: int = TIMEOUT_S) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "MHA_NW_QUICK_RUN_DIR")}
    env.update(PYTHONPATH=str(tree), MHA_NW_CACHE_DIR=str(tree.parent / "cache"))
    return subprocess.run([sys.executable, *args], cwd=tree, env=env, capture_output=True, text=True, timeout=timeout)


def _tracked(root: Path) -> list[str]:
    out = subprocess.run(["git", "ls-files", "-co", "--exclude-standard"], cwd=root, capture_output=True, text=True,
                         check=True).stdout
    return [f for f in out.splitlines() if (root / f).is_file()]


@pytest.fixture(scope="module")
def copied(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, bytes]]:
    """The repository copied, the guide's files written, ``snapshot --write`` run; with the copy's
    files as they were before the guide's."""
    tree = tmp_path_factory.mktemp("add-c10") / "repo"
    before = {}
    for rel in _tracked(ROOT):
        (tree / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / rel, tree / rel)
        before[rel] = (tree / rel).read_bytes()
    subprocess.run(["git", "init", "-q"], cwd=tree, check=True)
    for rel, text in _files().items():
        (tree / rel).write_text(text)
    proc = _run(tree, "-m", "verify", "snapshot", "--write")
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    return tree, before


@pytest.fixture(scope="module")
def tree(copied: tuple[Path, dict[str, bytes]]) -> Path:
    return copied[0]


def test_the_guide_writes_three_files():
    assert set(_files()) == HAND


def test_only_the_three_files_and_the_regenerated_outputs_change(copied):
    tree, before = copied
    changed = {rel for rel in _tracked(tree) if before.get(rel) != (tree / rel).read_bytes()}
    assert changed == HAND | REGENERATED


def test_the_snapshot_and_the_readme_table_have_c10(tree):
    snap = json.loads((tree / "tests/snapshots/verdicts.json").read_text())
    assert snap["claims"]["C10"]["verdict"] == "holds under model"
    assert "| C10 Identical heads give no variance reduction | **holds under model** |" in (tree / "README.md").read_text()


def test_only_c10_is_checked_and_reported(tree, tmp_path):
    proc = _run(tree, "-m", "verify", "--quick", "--only", "C10", "--out", str(tmp_path / "out"))
    assert proc.returncode == 0, proc.stderr[-3000:]
    doc = json.loads((tmp_path / "out" / "report.json").read_text())
    assert [c["id"] for c in doc["claims"]] == ["C10"] and doc["claims"][0]["verdict"] == "holds under model"
    assert "C10: Identical heads give no variance reduction" in (tmp_path / "out" / "report.md").read_text()
    assert "Identical heads give no variance reduction" in (tmp_path / "out" / "report.html").read_text()
    assert "C10  " in proc.stdout and "holds under model" in proc.stdout


def test_a_c10_counterexample_replays(tree, tmp_path):
    save = ("from verify.claims import CLAIMS; from verify.judgment import counterexamples as cx; "
            "rp = CLAIMS['C10'].replays['no-reduction']; "
            f"print(cx.save({str(tmp_path)!r}, claim='C10', part='no-reduction', kind=rp.kind, statement='s', "
            "params=rp.example, outcome=rp(rp.example)))")
    proc = _run(tree, "-c", save)
    assert proc.returncode == 0, proc.stderr[-3000:]
    proc = _run(tree, "-m", "verify", "replay", proc.stdout.strip())
    assert proc.returncode == 0 and "C10" in proc.stdout, proc.stdout + proc.stderr


def test_the_default_tier_passes_with_c10_in_the_ledger(tree):
    proc = _run(tree, "-m", "pytest", "-q", "-p", "no:cacheprovider")
    failed = [line for line in proc.stdout.splitlines() if line.startswith(("FAILED", "ERROR"))]
    assert proc.returncode == 0, "\n".join(failed) + proc.stdout[-2000:] + proc.stderr[-2000:]
    ledger = proc.stdout.split("theorem ledger", 1)[1]
    assert re.search(r"^C10\s+holds under model\s+tests pass$", ledger, flags=re.M), ledger[-3000:]
