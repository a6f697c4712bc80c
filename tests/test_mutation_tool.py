"""tools/mutants.py decides 'killed' only from a test that fails because of the mutant: on a tiny
repository of its own (one function, its test), a mutant the test catches is killed, one it misses
survives, one that breaks the import is an error, and tests that fail without any mutant stop the
run before a mutant counts; and every listed mutant still applies to today's code."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

#: The tests of ``run`` start pytest a few times in a subprocess (about 8 s in all): the slow tier,
#: beside the mutation run they check. ``stale`` reads files only: the default tier.
slow = pytest.mark.slow

TOOLS = Path(__file__).resolve().parent.parent / "tools"


@pytest.fixture(scope="module")
def mutants():
    spec = importlib.util.spec_from_file_location("mutants_tool", TOOLS / "mutants.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _repo(root: Path, test_body: str) -> Path:
    (root / "tests").mkdir(parents=True)
    (root / "lib.py").write_text("def double(x):\n    return 2 * x\n")
    (root / "tests" / "test_lib.py").write_text(f"from lib import double\n\n\ndef test_double():\n    {test_body}\n")
    subprocess.run(["git", "init", "-q"], cwd=root, check=True)
    return root


def _mutant(mutants, name: str, new: str):
    return mutants.Mutant(name, "lib.py", "return 2 * x", new, ("tests/test_lib.py",))


@slow
def test_caught_missed_and_broken_mutants(mutants, tmp_path, capsys):
    root = _repo(tmp_path / "repo", "assert double(2) == 4")
    code = mutants.run([_mutant(mutants, "caught", "return 3 * x"),
                        _mutant(mutants, "missed", "return x + x"),
                        _mutant(mutants, "broken", "return 2 * x)")], sys.executable, root)
    out = capsys.readouterr().out
    rows = {line.split()[0]: line.split()[2] for line in out.splitlines() if line.split()[:1] in (["caught"], ["missed"], ["broken"])}
    assert rows == {"caught": "killed", "missed": "SURVIVED", "broken": "ERROR"}
    assert "killed 1 / 3" in out and code == 1


@slow
def test_tests_failing_without_a_mutant_stop_the_run(mutants, tmp_path, capsys):
    root = _repo(tmp_path / "repo", "assert double(2) == 5")
    code = mutants.run([_mutant(mutants, "caught", "return 3 * x")], sys.executable, root)
    out = capsys.readouterr().out
    assert code == 2 and "fail without any mutant" in out and "killed" not in out


@pytest.mark.parametrize("old, tests, found", [
    ("return 2 * x", ("tests/test_lib.py",), []),
    ("return 4 * x", ("tests/test_lib.py",), ["m: the edit matches 0 times in lib.py"]),
    ("return 2 * x", ("tests/test_gone.py",), ["m: no test file tests/test_gone.py"])],
    ids=["applies", "edit-gone", "test-gone"])
def test_stale_finds_the_mutants_that_no_longer_apply(mutants, tmp_path, old, tests, found):
    root = _repo(tmp_path / "repo", "assert double(2) == 4")
    assert mutants.stale([mutants.Mutant("m", "lib.py", old, "return 3 * x", tests)], root) == found


@pytest.mark.parametrize("test, found", [
    ("tests/test_lib.py::test_double", []),
    ("tests/test_lib.py::test_double[2]", []),
    ("tests/test_lib.py::test_triple", ["m: pytest collects no tests/test_lib.py::test_triple"]),
    ("tests/test_lib.py::test_double[3]", ["m: pytest collects no tests/test_lib.py::test_double[3]"])],
    ids=["named", "named-row", "test-gone", "row-gone"])
@pytest.mark.parametrize("given", [False, True], ids=["collects", "session-ids"])
def test_unknown_tests_are_those_pytest_does_not_collect(mutants, tmp_path, test, found, given):
    """By collecting the file, or (``given``) from a session's ids of it, without starting pytest."""
    root = _repo(tmp_path / "repo", "assert double(x) == 2 * x")
    body = (root / "tests" / "test_lib.py").read_text().replace("def test_double():", "import pytest\n\n\n"
                                                               "@pytest.mark.parametrize('x', [1, 2])\ndef test_double(x):")
    (root / "tests" / "test_lib.py").write_text(body)
    ids = frozenset(f"tests/test_lib.py::test_double[{x}]" for x in (1, 2)) if given else frozenset()
    assert mutants.unknown_tests([mutants.Mutant("m", "lib.py", "return 2 * x", "return 3 * x", (test,))],
                                 python=str(tmp_path / "no-python") if given else sys.executable, root=root,
                                 collected=ids) == found


def test_every_listed_mutant_still_applies(mutants, collected_ids):
    """After a refactoring the lists follow the code: each edit matches once, each test file exists
    and pytest collects each named test (``python tools/mutants.py --stale``), in this session's
    collection where it has the file."""
    everything = mutants.all_mutants()
    assert mutants.stale(everything) == []
    assert mutants.unknown_tests(everything, collected=collected_ids) == []


def test_the_printed_table_keeps_its_columns_whatever_the_lengths(mutants):
    """The name and file columns are as wide as their longest entry (fixed widths let a long name or
    path push a row's later columns out of line)."""
    short = mutants.Mutant("m", "a.py", "x", "y", ("tests/t.py",))
    long = mutants.Mutant("a-mutant-name-far-longer-than-any-usual-column", "a/deeply/nested/folder/of/the/module.py",
                          "x", "y", ("tests/t.py",))
    row = mutants._table([short, long])
    lines = [row(m.name, m.file, "tests") for m in (short, long)]
    assert lines[0].index("a.py") == lines[1].index("a/deeply") > len(long.name)
    assert lines[0].index("tests") == lines[1].index("tests") > lines[1].index("a/deeply") + len(long.file)
