"""The sweep engine (verify.experiments.sweep): stable task keys, a sweep killed halfway resumes and
computes only the missing tasks, a SIGTERM stops it cleanly, broken files are recomputed, and
a 2-worker Dask LocalCluster gives the same table as the local run."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from verify.cli import SWEEPS
from verify.cli import main as verify_cli
from verify.experiments import scaling, sweep
from verify.experiments.sweep import Task, run_sweep, task_key

ROOT = Path(__file__).resolve().parents[1]
DEMO_TASKS = 24
# Seconds per demo task: long enough that the kill lands with tasks still to do.
DEMO_SLEEP = 0.3


def demo_cmd(out: Path, *extra: str) -> list[str]:
    return [sys.executable, "-m", "verify", "sweep", "demo", "--tasks", str(DEMO_TASKS), "--sleep", str(DEMO_SLEEP),
            "--out", str(out), "--jobs", "2", "--no-progress", *extra]


def env() -> dict:
    return dict(os.environ, PYTHONPATH=str(ROOT))


def task_files(out: Path) -> dict[str, tuple[int, bytes]]:
    return {p.name: (p.stat().st_mtime_ns, p.read_bytes()) for p in (out / "tasks").glob("*.json")}


def start_and_stop(out: Path, sig: int, at_least: int) -> subprocess.Popen:
    proc = subprocess.Popen(demo_cmd(out), env=env(), cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)
    deadline = time.monotonic() + 120
    while len(list((out / "tasks").glob("*.json"))) < at_least:
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < deadline, "the sweep made no progress"
        time.sleep(0.05)
    proc.send_signal(sig)
    proc.wait(timeout=60)
    return proc


def test_task_key_is_canonical_and_distinct():
    a = task_key("m:f", {"n": 10, "seed": 1})
    assert a == task_key("m:f", {"seed": 1, "n": 10}) == Task("m:f", {"seed": 1, "n": 10}).key
    assert len({a, task_key("m:f", {"n": 11, "seed": 1}), task_key("m:g", {"n": 10, "seed": 1}),
                task_key("m:f", {"n": 10.0, "seed": 1})}) == 4       # 10 and 10.0 are different JSON


@pytest.mark.slow   # subprocesses killed mid-run / a Dask cluster: tens of seconds
def test_killed_sweep_resumes_computing_only_the_missing_tasks(tmp_path):
    out = tmp_path / "killed"
    proc = start_and_stop(out, signal.SIGKILL, at_least=6)
    assert proc.returncode == -signal.SIGKILL
    before = task_files(out)
    assert 6 <= len(before) < DEMO_TASKS
    done = subprocess.run(demo_cmd(out), env=env(), cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout.strip().splitlines()[-1])
    assert summary["reused"] == len(before) and summary["computed"] == DEMO_TASKS - len(before)
    after = task_files(out)
    assert len(after) == DEMO_TASKS
    assert all(after[name] == before[name] for name in before)          # never rewritten
    fresh = tmp_path / "fresh"
    assert subprocess.run(demo_cmd(fresh), env=env(), cwd=ROOT, capture_output=True, timeout=300).returncode == 0
    assert (out / "results.csv").read_text() == (fresh / "results.csv").read_text()
    assert len(sweep.read_table(out / "results.csv")) == DEMO_TASKS


@pytest.mark.slow   # subprocesses killed mid-run / a Dask cluster: tens of seconds
def test_sigterm_stops_cleanly_and_writes_the_table(tmp_path):
    out = tmp_path / "term"
    proc = start_and_stop(out, signal.SIGTERM, at_least=4)
    _, err = proc.communicate()
    assert proc.returncode == 130, err
    assert "resume" in err
    rows = sweep.read_table(out / "results.csv")
    assert len(rows) == len(task_files(out)) and 4 <= len(rows) < DEMO_TASKS
    assert json.loads((out / "sweep.json").read_text())["missing"] == DEMO_TASKS - len(rows)


def test_duplicate_tasks_are_refused(tmp_path):
    from verify.errors import VerifyError

    with pytest.raises(VerifyError, match="duplicate"):
        run_sweep(sweep.demo_grid(2, 0.0) * 2, tmp_path, progress=False)


@pytest.mark.slow   # subprocesses killed mid-run / a Dask cluster: tens of seconds
def test_dask_local_cluster_gives_the_same_table_as_local_processes(tmp_path):
    """A real computation (the quick C7 grid of one seed) in this process, in two local worker
    processes and on a 2-worker Dask LocalCluster: the same results.csv, byte for byte."""
    from dask.distributed import LocalCluster

    tasks = [t for t in scaling.grid_tasks("quick", seed=5) if t.params["seed"] == 5 and t.params["n"] <= 50]
    here = run_sweep(tasks, tmp_path / "here", workers=1, progress=False)
    procs = run_sweep(tasks, tmp_path / "procs", workers=2, progress=False)
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster:
        on_dask = run_sweep(tasks, tmp_path / "dask", scheduler=cluster.scheduler_address, progress=False)
    assert here.computed == procs.computed == on_dask.computed == len(tasks)
    table = (tmp_path / "here" / "results.csv").read_text()
    assert (tmp_path / "procs" / "results.csv").read_text() == table
    assert (tmp_path / "dask" / "results.csv").read_text() == table
    assert "dask" in json.loads((tmp_path / "dask" / "sweep.json").read_text())["executor"]


@pytest.mark.parametrize("argv,needle", [
    ([], "sweep"), (["nope"], "'nope'"), (["demo", "--tasks", "x"], "--tasks"), (["demo", "--jobs", "0"], "--jobs"),
    (["demo", "--sleep", "-1"], "--sleep"), (["c7", "--grid", "huge"], "argument --grid: invalid choice"), (["c7", "--seed", "-3"], "--seed"),
])
def test_cli_argument_errors(argv, needle, capsys, tmp_path):
    assert verify_cli(["sweep", *(argv + (["--out", str(tmp_path)] if argv and argv[0] in SWEEPS else []))]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and needle in err


def test_unreachable_scheduler_is_an_argument_error(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(sweep, "SCHEDULER_TIMEOUT_S", 0.5)   # refused at once; 0.5 s bounds the attempt
    assert verify_cli(["sweep", "demo", "--tasks", "2", "--out", str(tmp_path), "--scheduler", "tcp://127.0.0.1:9"]) == 2
    assert "--scheduler" in capsys.readouterr().err


DAMAGED = {  # how a task file is broken -> its bytes (each is recomputed on resume, the others reused)
    "truncated-json": lambda doc: json.dumps(doc)[:-7],
    "null-result": lambda doc: json.dumps(dict(doc, result=None)),
    "result-a-list": lambda doc: json.dumps(dict(doc, result=[doc["result"]])),
    "result-a-number": lambda doc: json.dumps(dict(doc, result=1.5)),
    "file-a-list": lambda doc: json.dumps([doc]),
    "file-null": lambda doc: "null",
    "key-of-another-task": lambda doc: json.dumps(dict(doc, key="0" * 64)),
    "params-of-another-task": lambda doc: json.dumps(dict(doc, params=dict(doc["params"], i=99))),
    "params-null": lambda doc: json.dumps(dict(doc, params=None)),
    "empty": lambda doc: "",
    "not-utf8": lambda doc: b"\xff\xfe".decode("latin-1"),
    "over-max-task-bytes": lambda doc: json.dumps(dict(doc, pad="x" * sweep.MAX_TASK_BYTES)),
}


@pytest.mark.parametrize("damage", list(DAMAGED))
def test_resume_recomputes_a_damaged_task_file_and_reuses_the_rest(tmp_path, damage):
    grid = sweep.demo_grid(3, 0.0)
    first = run_sweep(grid, tmp_path, workers=1, progress=False)
    path = tmp_path / "tasks" / f"{grid[1].key}.json"
    path.write_text(DAMAGED[damage](json.loads(path.read_text())), encoding="latin-1")
    again = run_sweep(grid, tmp_path, workers=1, progress=False)
    assert (again.computed, again.reused) == (1, 2)
    assert [r["result"] for r in again.records] == [r["result"] for r in first.records]
    assert json.loads(path.read_text())["result"] == first.records[1]["result"]   # the file is repaired


def test_a_write_failing_mid_run_is_one_line_exit_1_and_the_finished_tasks_stay(tmp_path, capsys, monkeypatch):
    """Disk full after the first task: one ``error:`` line, exit status 1 (not 2: the arguments
    were right), no traceback; the first task's file is stored and a rerun computes only the rest."""
    import errno

    real, calls = sweep.write_json, []

    def full_after_one(path, doc, **kw):
        calls.append(path)
        if len(calls) > 1:
            raise OSError(errno.ENOSPC, "No space left on device", str(path))
        return real(path, doc, **kw)

    monkeypatch.setattr(sweep, "write_json", full_after_one)
    argv = ["demo", "--tasks", "3", "--sleep", "0", "-o", str(tmp_path / "o"), "--jobs", "1", "--no-progress"]
    assert verify_cli(["sweep", *argv]) == 1
    err = capsys.readouterr().err
    assert err.startswith("error: sweep: a write failed mid-run") and "No space left on device" in err
    assert err.count("\n") == 1 and "Traceback" not in err
    assert len(list((tmp_path / "o" / "tasks").glob("*.json"))) == 1
    monkeypatch.setattr(sweep, "write_json", real)
    assert verify_cli(["sweep", *argv]) == 0
    assert json.loads(capsys.readouterr().out)["reused"] == 1


@pytest.mark.parametrize("argv", [["--help"], ["demo", "--help"], ["c7", "--help"]])
def test_every_sweep_help_is_complete(argv, capsys):
    """``sweep --help`` printed only a usage line: each help names the options and gives an example."""
    assert verify_cli(["sweep", *argv]) == 0
    out = capsys.readouterr().out
    assert out.startswith("usage: python -m verify sweep")
    for needle in ("-o", "--out", "--jobs", "example", "python -m verify sweep "):
        assert needle in out, (needle, out)
    assert "--workers" not in out   # the old name is read, not advertised
    assert argv != ["--help"] or all(f"\n  {name} " in out for name in SWEEPS)


def test_old_workers_name_still_runs_as_jobs(tmp_path, capsys):
    assert verify_cli(["sweep", "demo", "--tasks", "2", "--sleep", "0", "-o", str(tmp_path), "--workers", "1",
                            "--no-progress"]) == 0
    assert "local processes (1)" in capsys.readouterr().out
