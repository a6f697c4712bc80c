"""Every code block of the README runs: the Python blocks are executed, the command blocks are run
line by line in a scratch folder (with a quick report to replay and export), and the install block
is the one CI runs verbatim (.ci/run). The schema listing names the fields report.json has."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from verify.outputs.report import REPORT_SHAPE

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text(encoding="utf-8")
BLOCKS = re.findall(r"^ *```(\w+)\n(.*?)^ *```$", README, flags=re.S | re.M)


def _blocks(lang: str) -> list[str]:
    return [body for kind, body in BLOCKS if kind == lang]


def test_the_install_block_is_the_one_ci_runs():
    first = _blocks("sh")[0].strip().splitlines()
    assert len(first) == 2 and first[0].endswith("python -m verify") and "python -m pytest" in first[1]
    assert "awk '/^```sh$/" in (ROOT / ".ci" / "run").read_text()


@pytest.mark.parametrize("code", _blocks("python"), ids=lambda c: c.splitlines()[0][:40])
def test_python_blocks_run(code, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    exec(compile(code, "README.md", "exec"), {"__name__": "__readme__"})


@pytest.fixture(scope="module")
def scratch(tmp_path_factory):
    """A folder with a quick report at verify-report/, as the commands expect after the first one:
    of C5, whose counterexample the replay example names (CI exports and compiles a full run)."""
    d = tmp_path_factory.mktemp("readme")
    subprocess.run([sys.executable, "-m", "verify", "--quick", "--only", "C5", "--out", "verify-report"], cwd=d, check=True,
                   capture_output=True, env=_env())
    return d


def _env() -> dict:
    # `python` in a command is this interpreter; the package is imported from this checkout
    return {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
            "PYTHONPATH": str(ROOT)}


COMMANDS = [line.split("  #")[0].strip() for block in _blocks("sh")[1:] for line in block.splitlines()
            if line.strip() and not line.lstrip().startswith("#")]


#: README commands that belong to the slow tier: the benchmark (minutes), the PDF compilation, a sweep.
SLOW_COMMANDS = ("benchmarks/bench.py", "--pdf", "verify sweep")


@pytest.mark.parametrize("command", [pytest.param(c, marks=[pytest.mark.slow] if any(s in c for s in SLOW_COMMANDS)
                                                  else []) for c in COMMANDS], ids=lambda c: " ".join(c.split()[:4]))
def test_command_blocks_run(command, scratch):
    # codegen --check compares this checkout; the developer tools run from it
    cwd = ROOT if "proofs codegen" in command or command.startswith(("python benchmarks/", "python tools/")) else scratch
    proc = subprocess.run(["bash", "-c", command], cwd=cwd, capture_output=True, text=True, env=_env())
    assert proc.returncode == 0, f"{command}\n{proc.stdout[-2000:]}\n{proc.stderr[-2000:]}"


def test_the_schema_listing_names_every_field():
    listing = _blocks("text")[0]
    keys = set(REPORT_SHAPE) | set(REPORT_SHAPE["claims"][0]) | set(REPORT_SHAPE["claims"][0]["evidence"]["parts"][0])
    missing = [k.rstrip("?") for k in keys if f'"{k.rstrip("?")}"' not in listing]
    assert not missing, missing
