"""docs/adding-a-claim.md, run: its code blocks are written into a package in a temporary folder,
the claim is checked through the verdict rule, the report and the notebook helpers in this process,
and the package's own tests run in a pytest of their own whose theorem ledger shows the claim's
row as the guide prints it. A change of the framework that the guide does not follow fails here."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
GUIDE = ROOT / "docs" / "adding-a-claim.md"


def _blocks(kind: str) -> list[str]:
    return re.findall(rf"^```{kind}\n(.*?)^```$", GUIDE.read_text(), flags=re.S | re.M)


def _files() -> dict[str, str]:
    out = {}
    for block in _blocks("python") + _blocks("toml"):
        first, _, body = block.partition("\n")
        m = re.fullmatch(r"# file: (\S+)", first.strip())
        assert m, f"a code block of the guide names its file on its first line, got {first!r}"
        out[m.group(1)] = body
    return out


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("own-claim")
    for rel, text in _files().items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    sys.path.insert(0, str(root))
    yield root
    sys.path.remove(str(root))
    for name in [m for m in sys.modules if m == "mypkg" or m.startswith("mypkg.")]:
        del sys.modules[name]


def test_the_guide_has_every_piece():
    assert set(_files()) == {"mypkg/__init__.py", "mypkg/x1_derivation.py", "mypkg/x1_check.py", "tests/test_x1.py",
                             "pyproject.toml", "mypkg/report.py", "mypkg/notebook_cell.py"}


def test_the_worked_example_is_checked_judged_and_reported(project, capsys):
    from mypkg import notebook_cell, report, x1_check, x1_derivation

    from proofs import derivation
    from proofs.__main__ import describe
    from verify.judgment.claim import Context
    from verify.judgment.verdicts import Role, Verdict

    der = derivation(x1_derivation)
    assert der.status == "proved" and [c.holds for c in der.comparisons] == [True]
    text = describe(der)
    assert "(not defined)" not in text and "alpha*: the head weights αₕ" in text
    result = x1_check.CLAIM.check(Context(seed=0, quick=True))
    assert result.id == "X1" and result.verdict is Verdict.HOLDS_UNDER_MODEL
    assert [(p.id, p.role) for p in result.parts] == [("no-reduction", Role.CORE)]
    assert {"identical", "weights_sum_to_one"} <= {a.name for a in der.model_assumptions()}
    # the figure the finding quotes, recomputed: the ensemble of identical heads is one head
    fig = result.parts[0].numeric.figures
    assert fig["rel_error"] == abs(fig["ensemble_variance"] - fig["head_variance"]) / fig["head_variance"]
    assert fig["rel_error"] <= x1_check.RTOL
    terminal, md = report.report_text()
    assert "X1" in terminal and "holds under model" in terminal
    assert "## X1: Identical heads give no variance reduction" in md and "$H$" in md
    notebook_cell.cell()
    shown = capsys.readouterr().out
    assert "Identical heads give no variance reduction" in shown and "identical_heads_H2" in shown


def test_the_ledger_shows_the_row_the_guide_prints(project):
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), str(project)])}
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"], cwd=project, env=env,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
    ledger = proc.stdout.split("theorem ledger", 1)[1]
    expected = _blocks("text")[0].split("theorem ledger", 1)[1].split("=", 1)[-1]
    for line in filter(None, (x.rstrip() for x in expected.splitlines())):
        assert line.strip("= ") in ledger, (line, ledger)
