"""The command line: the report's files, seeds, exit statuses, replay."""

from __future__ import annotations

import json
import math
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import sympy as sp

import proofs
from proofs import CLAIM_IDS
from proofs.core import Derivation
from verify.cli import main
from proofs.markup import render
from verify.io import loads_json
from verify.outputs.report import SCHEMA_VERSION
from verify.snapshot import SNAPSHOT, differences, snapshot_of

ROOT = Path(__file__).resolve().parent.parent


def _strip_timing(obj):
    """report.json without wall-clock fields (the only thing a seed does not fix)."""
    if isinstance(obj, dict):
        return {k: _strip_timing(v) for k, v in obj.items() if k not in ("seconds", "meta")}
    if isinstance(obj, list):
        return [_strip_timing(v) for v in obj]
    if isinstance(obj, str) and obj.startswith("/"):
        return obj.rsplit("/", 2)[-2:]  # output paths differ between the two runs
    return obj


def _cli_quick_run(tmp_path_factory, seed: int, *only: str) -> tuple[Path, dict]:
    """A quick run through the command line (worker processes): its folder and report.json."""
    d = tmp_path_factory.mktemp(f"seed{seed}")
    argv = ["--quick", "--seed", str(seed), "--out", str(d)] + (["--only", ",".join(only)] if only else [])
    assert main(argv) == 0
    return d, json.loads((d / "report.json").read_text())


@pytest.fixture(scope="module")
def cli_runs(tmp_path_factory):
    """The whole quick run through the command line (worker processes), by seed, each run once when a
    test first asks for it: seed 0 and, in the slow tier, seed 8."""
    class Runs(dict):
        def __missing__(self, seed: int) -> tuple[Path, dict]:
            self[seed] = _cli_quick_run(tmp_path_factory, seed)
            return self[seed]

    return Runs()


def test_report_has_every_claim_with_its_fields_and_evidence(cli_runs):
    d, doc = cli_runs[0]
    assert doc["schema"] == "mha-nw-verify/report" and doc["schema_version"] == SCHEMA_VERSION
    assert [c["id"] for c in doc["claims"]] == list(CLAIM_IDS)
    assert doc["crashed"] == {}
    for claim in doc["claims"]:
        assert claim["evidence"]["parts"], claim["id"]
        assert claim["headline"].startswith(claim["verdict"])
        for key in ("corrections", "premise", "limits"):
            assert isinstance(claim[key], list)
        for part in claim["evidence"]["parts"]:
            cx = part["counterexample"]
            if cx is not None:
                assert not Path(cx["file"]).is_absolute()            # relative to the report folder
                saved = loads_json(cx["file"], (d / cx["file"]).read_text())
                assert saved["claim"] == claim["id"]
        for plot in claim["evidence"]["plots"].values():
            assert (d / plot).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    headings = [line for line in (d / "report.md").read_text().splitlines() if line.startswith("## C")]
    summaries = [h for h in headings if not h.endswith(("part by part", "the derivation"))]
    assert [h.split(":")[0] for h in summaries] == [f"## {c}" for c in CLAIM_IDS] and len(headings) == 3 * len(summaries)


@pytest.mark.slow   # a second whole run (seed 0: test_same_seed_same_numbers and tests/test_snapshot.py)
def test_verdicts_do_not_depend_on_the_seed(cli_runs):
    """Seed 8 gives the verdicts and part effects of the stored seed-0 snapshot. A part's experiment
    may lack the power to decide at the quick sizes: only a part undecided under one of the seeds
    may differ; no verdict, deciding reading or decided effect may."""
    stored, now = loads_json("snapshot", (ROOT / SNAPSHOT).read_text()), snapshot_of(cli_runs[8][1])
    undecided = [f"{c}/{p}:" for snap in (stored, now) for c, v in snap["claims"].items()
                 for p, (_, effect) in v["parts"].items() if effect == "undecided"]
    diff = [d for d in differences(stored, now) if not d.startswith(tuple(undecided))]
    assert not diff, diff


def test_terminal_table_shows_verdict_headline_and_counts(tmp_path, capsys):
    assert main(["--quick", "--only", "C3", "--out", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    doc = json.loads((tmp_path / "report.json").read_text())
    lines = out.splitlines()
    k = next(i for i, line in enumerate(lines) if line.startswith("C3    "))
    c3 = doc["claims"][0]
    assert lines[k] == f"C3    {c3['verdict']:<20}{len(c3['corrections'])}/{len(c3['premise'])}/{len(c3['limits'])}/0"
    assert lines[k + 1] == "      " + " ".join(render(c3["headline"], "unicode").split())[:len(lines[k + 1]) - 6]
    assert max(len(line) for line in lines if not line.startswith(("wrote", "C3  proved", "Symbolic"))) <= 80


#: Two processes may round a figure differently in its last bits: numpy's vectorised reductions
#: depend on the arrays' memory alignment, which differs between processes (seen once in six runs
#: of the suite, in C7). Texts and every other value are compared exactly.
SAME_SEED_RTOL = 1e-9


def _differences(a, b, path="") -> list[str]:
    """Where two report documents differ: floats beyond SAME_SEED_RTOL, anything else at all."""
    if isinstance(a, float) and isinstance(b, float):
        close = math.isclose(a, b, rel_tol=SAME_SEED_RTOL, abs_tol=SAME_SEED_RTOL * 1e-3)
        return [] if close else [f"{path}: {a!r} != {b!r}"]
    if isinstance(a, dict) and isinstance(b, dict):
        only = [f"{path}: key {k!r} only in the {'first' if k in a else 'second'}" for k in a.keys() ^ b.keys()]
        return only + [d for k in a if k in b for d in _differences(a[k], b[k], f"{path}/{k}")]
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        return [d for i, (x, y) in enumerate(zip(a, b)) for d in _differences(x, y, f"{path}[{i}]")]
    return [] if a == b and type(a) is type(b) else [f"{path}: {a!r:.200} != {b!r:.200}"]


def test_same_seed_same_numbers(cli_runs, quick_run):
    """The command line's seed-0 run (each claim in a worker process) has every number of the
    suite's shared seed-0 quick run (each claim in a test process): the same seed, the same numbers,
    whatever process computes them (floats to SAME_SEED_RTOL)."""
    from verify.outputs.report import document

    shared = document([quick_run(c)[0] for c in proofs.CLAIM_IDS], seed=0, quick=True)
    assert _differences(_strip_timing(cli_runs[0][1]["claims"]), _strip_timing(shared["claims"])) == []


@pytest.mark.parametrize("a, b, same", [
    (0.1, 0.1 * (1 + 1e-12), True), (0.1, 0.1 * (1 + 1e-7), False), (1e-20, 0.0, True), (1e-8, 0.0, False),
    ("0.1", "0.10", False), ({"x": [1, 2.0]}, {"x": [1, 2.0]}, True), ({"x": [1]}, {"x": [1, 2]}, False),
    ({"x": 1}, {"y": 1}, False), (1, 1.0, False), (True, 1, False)],
    ids=["rounding", "beyond-rtol", "tiny-vs-zero", "small-vs-zero", "text", "equal", "length", "keys", "int-float",
         "bool-int"])
def test_same_seed_comparison_tolerates_rounding_only(a, b, same):
    assert (_differences(a, b) == []) is same


def test_other_seed_other_numbers(cli_runs, tmp_path_factory):
    """Seed 8 gives other numbers than seed 0 (the seed reaches the experiments), claim by claim on
    C3 and C5 (with seed 0 the same numbers in every process: test_same_seed_same_numbers)."""
    claims = ("C3", "C5")
    seed0 = [c for c in cli_runs[0][1]["claims"] if c["id"] in claims]
    other = _cli_quick_run(tmp_path_factory, 8, *claims)[1]["claims"]
    assert [c["id"] for c in other] == list(claims)
    for a, b in zip(seed0, other):
        assert _strip_timing(a["evidence"]) != _strip_timing(b["evidence"]), a["id"]


def test_replay_prints_for_a_reader_and_its_record_with_json(tmp_path, capsys):
    """``replay FILE`` prints :func:`verify.replay.lines` (what it holds: tests/test_claims.py, every
    kind); ``--json`` the recomputed record, which parses; a file the replay judges differently
    exits 1 and says so."""
    from verify.claims import CLAIMS
    from verify.judgment.counterexamples import save
    from verify.replay import lines, record, replay

    rp = CLAIMS["C2"].replays["free-weights"]
    outcome = rp(rp.example)
    path = save(tmp_path, claim="C2", part="free-weights", kind=rp.kind, statement="s", params=rp.example,
                outcome=outcome)
    doc, again = replay(path)
    assert main(["replay", str(path)]) == 0
    assert capsys.readouterr().out == "\n".join(lines(doc, again)) + "\n"
    assert main(["replay", "--json", str(path)]) == 0
    assert json.loads(capsys.readouterr().out) == record(doc, again) == json.loads(json.dumps(record(doc, again)))
    flipped = json.loads(path.read_text())
    flipped["expected"]["violates"] = not outcome.violates
    path.write_text(json.dumps(flipped))
    assert main(["replay", str(path)]) == 1
    assert "reproduced: no, the replay judges differently" in capsys.readouterr().out
    assert main(["replay", str(path), "--json"]) == 1
    assert json.loads(capsys.readouterr().out)["reproduced"] is False


def test_a_crashing_check_is_reported_and_exits_1(tmp_path, monkeypatch, capsys):
    from verify.claims import CLAIMS

    def boom(ctx):
        raise RuntimeError("deliberate failure")

    monkeypatch.setattr(CLAIMS["C2"], "check", boom)
    out = tmp_path / "r"
    assert main(["--quick", "--only", "C2,C3", "--out", str(out)]) == 1
    doc = json.loads((out / "report.json").read_text())
    assert [c["id"] for c in doc["claims"]] == ["C3"]
    assert "deliberate failure" in doc["crashed"]["C2"]
    assert "C2 CRASHED" in capsys.readouterr().err


def test_a_failed_derivation_step_fails_the_run_naming_it(tmp_path, monkeypatch, capsys):
    bad = Derivation(claim="C3", title="broken", stated="x")
    x = sp.Symbol("x")
    bad.step("wrong_square", sp.Eq((x + 1) ** 2, x**2 + 1), by="expand")
    monkeypatch.setitem(proofs._CACHE, "C3", bad)
    assert main(["--quick", "--only", "C3", "--out", str(tmp_path / "r")]) == 1
    assert "C3/wrong_square" in capsys.readouterr().err


# The child writes the report, then sleeps inside the publishing step, where it is killed.
_SLOW_PUBLISH = """
import sys, time
import verify.io as io
real = io.publish_folder
def slow(stage, target):
    print("PUBLISHING", flush=True)
    time.sleep(60)
    return real(stage, target)
io.publish_folder = slow
from verify.cli import main
sys.exit(main(sys.argv[1:]))
"""


def _child(code, *argv):
    return subprocess.Popen([sys.executable, "-c", code, *argv], cwd=ROOT, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, text=True, env={**os.environ, "PYTHONPATH": str(ROOT)})


@pytest.mark.slow   # kills child runs at assorted moments (seconds each)
def test_a_run_killed_while_it_writes_leaves_the_previous_report(tmp_path):
    out = tmp_path / "report"
    assert main(["--quick", "--only", "C2", "--out", str(out)]) == 0
    before = (out / "report.json").read_bytes()
    files_before = sorted(p.relative_to(out) for p in out.rglob("*"))
    # killed after the new report is written, before it is moved into place
    child = _child(_SLOW_PUBLISH, "--quick", "--only", "C2,C3", "--out", str(out))
    for line in child.stdout:          # the report is written; the child sleeps before moving it into place
        if line.strip() == "PUBLISHING":
            break
    else:
        pytest.fail("the child never reached the publishing step")
    child.send_signal(signal.SIGKILL)
    child.wait()
    assert (out / "report.json").read_bytes() == before
    assert sorted(p.relative_to(out) for p in out.rglob("*")) == files_before
    # killed at assorted moments of a run: the folder always holds one complete run
    for delay in (0.3, 1.5, 3.0):
        child = _child("import sys; from verify.cli import main; sys.exit(main(sys.argv[1:]))",
                       "--quick", "--only", "C3", "--out", str(out))
        time.sleep(delay)
        child.send_signal(signal.SIGKILL)
        child.wait()
        doc = loads_json("report.json", (out / "report.json").read_text())
        assert [c["id"] for c in doc["claims"]] in (["C2"], ["C3"])
        for c in doc["claims"]:
            for p in c["evidence"]["parts"]:
                if p["counterexample"]:
                    assert (out / p["counterexample"]["file"]).is_file()
    # the next complete run replaces it and clears what the killed runs left
    assert main(["--quick", "--only", "C3", "--out", str(out)]) == 0
    assert not list(tmp_path.glob(".report.*"))


def _derive_and_note(claim: str) -> str:
    """``verify.run._derive``, noting the process that ran it (for the test below)."""
    import verify.run

    Path(os.environ["MHA_NW_TEST_NOTES"], f"{claim}-{os.getpid()}").touch()
    status = verify.run._ORIGINAL_DERIVE(claim)
    Path(os.environ["MHA_NW_TEST_NOTES"], f"done-{claim}").touch()
    return status


def _preload_and_note(claims: list) -> None:
    """``verify.run._preload``, noting the process that ran it and how many derivations had ended
    when it began (for the test below)."""
    import verify.run

    notes = Path(os.environ["MHA_NW_TEST_NOTES"])
    ended = len(list(notes.glob("done-*")))
    (notes / f"preload-{os.getpid()}-{ended}").touch()
    return verify.run._ORIGINAL_PRELOAD(claims)


def test_a_first_run_derives_in_parallel_in_worker_processes(tmp_path, monkeypatch):
    """With an empty derivation cache and --jobs 2, the derivations are built by worker processes
    (slowest first), stored, and loaded by the run; meanwhile the parent fills the caches the checks
    read (numba's, matplotlib's): its preload begins before any derivation ends (each takes over a
    second; the preload begins when they are submitted). A warm run derives nothing and preloads
    once, in the parent."""
    import proofs
    import verify.run

    notes = tmp_path / "notes"
    notes.mkdir()
    monkeypatch.setenv("MHA_NW_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("MHA_NW_TEST_NOTES", str(notes))
    monkeypatch.setattr(verify.run, "_ORIGINAL_DERIVE", verify.run._derive, raising=False)
    monkeypatch.setattr(verify.run, "_derive", _derive_and_note)
    monkeypatch.setattr(verify.run, "_ORIGINAL_PRELOAD", verify.run._preload, raising=False)
    monkeypatch.setattr(verify.run, "_preload", _preload_and_note)
    for claim in ("C2", "C3"):
        monkeypatch.delitem(proofs._CACHE, claim, raising=False)
    doc, ders = verify.run.run_report(["C2", "C3"], seed=0, quick=True, out=None, progress=False, jobs=2)
    made = sorted(p.name for p in notes.iterdir())
    derived = {n.split("-")[1] for n in made if n.startswith(("C2-", "C3-"))}
    assert sorted(n.split("-")[0] for n in made if n.startswith(("C2-", "C3-"))) == ["C2", "C3"]
    assert derived and str(os.getpid()) not in derived
    # beside the derivations, then (everything loaded already) before the checks
    assert [n for n in made if n.startswith("preload-")] == [f"preload-{os.getpid()}-0", f"preload-{os.getpid()}-2"]
    assert all(d.from_cache for d in ders) and [c["verdict"] for c in doc["claims"]] == ["exact", "exact"]
    for p in notes.iterdir():
        p.unlink()
    verify.run.run_report(["C2", "C3"], seed=0, quick=True, out=None, progress=False, jobs=2)
    assert [p.name for p in notes.iterdir()] == [f"preload-{os.getpid()}-0"]


_EXIT_NOW = """
import atexit, sys
from verify.cli import exit_now
atexit.register(lambda: print("atexit ran"))
print("x" * int(sys.argv[1]))   # 100000: more than a pipe's buffer; a few: only the flush writes them
sys.stderr.write("to stderr")
exit_now(3)
"""


def test_the_command_line_exits_with_its_status_after_atexit_and_a_flush(tmp_path):
    """``exit_now`` (the end of ``python -m verify``) skips the interpreter's teardown, not the
    output: atexit handlers run, both streams are flushed (to a pipe, block-buffered), the status
    is kept; a reader that closed the pipe gets no traceback."""
    # buffered streams (as a user's pipe is), so that only the flush writes what is left
    env = {**{k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}, "PYTHONPATH": str(ROOT)}
    proc = subprocess.run([sys.executable, "-c", _EXIT_NOW, "100000"], cwd=ROOT, capture_output=True, text=True,
                          env=env)
    assert (proc.returncode, proc.stdout, proc.stderr) == (3, "x" * 100000 + "\natexit ran\n", "to stderr")
    closed = subprocess.Popen([sys.executable, "-c", _EXIT_NOW, "10"], cwd=ROOT, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True, env=env)
    closed.stdout.close()                       # the reader is gone before anything is written
    assert closed.wait() == 3 and closed.stderr.read() == "to stderr"
    closed.stderr.close()
    run = subprocess.run([sys.executable, "-m", "verify", "--quick", "--only", "C2", "--out", str(tmp_path / "r")],
                         cwd=ROOT, capture_output=True, text=True, env=env)
    assert run.returncode == 0 and run.stdout.rstrip().splitlines()[-1].startswith(f"wrote {tmp_path / 'r'}")
    bad = subprocess.run([sys.executable, "-m", "verify", "--only", "C0"], cwd=ROOT, capture_output=True, text=True,
                         env=env)
    assert bad.returncode == 2 and bad.stderr.startswith("error: ") and bad.stdout == ""


_BLAS_AT_NUMPY = """
import os, sys

class Spy:   # records the BLAS settings at the moment numpy is first imported
    def find_spec(self, name, path=None, target=None):
        if name == "numpy":
            print(",".join(os.environ.get(v, "unset") for v in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS",
                                                                 "MKL_NUM_THREADS")))
            sys.meta_path.remove(self)
        return None

sys.meta_path.insert(0, Spy())
import verify.cli
"""


@pytest.mark.parametrize("user, seen", [({}, "1,1,1"), ({"OPENBLAS_NUM_THREADS": "2"}, "2,1,1")],
                         ids=["unset-gives-one-thread", "the-users-setting-wins"])
def test_the_command_line_sets_one_blas_thread_before_numpy_loads(user, seen):
    """numpy reads the BLAS thread counts once, when it is first imported: the command line's
    module sets them before its own imports load numpy (else two workers run two BLAS threads
    each on two cores), and leaves a count the user set."""
    env = {k: v for k, v in os.environ.items() if k not in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS",
                                                           "MKL_NUM_THREADS")}
    env.update(user, PYTHONPATH=str(ROOT))
    proc = subprocess.run([sys.executable, "-c", _BLAS_AT_NUMPY], cwd=ROOT, capture_output=True, text=True, env=env)
    assert (proc.returncode, proc.stdout.strip()) == (0, seen), proc.stderr
