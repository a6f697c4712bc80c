"""Resumable parameter sweeps: a grid of tasks, one stored result per task, local processes or
a Dask cluster.

    python -m verify sweep c7 [--quick] [-o DIR] [--scheduler ADDRESS] [--jobs N] ...
    python -m verify sweep demo --tasks N [--sleep S] [-o DIR] ...   (the engine's self-test)

A *task* is a function ``"module:function"`` and a dict of JSON parameters; its *key* is the
SHA-256 of both (canonical JSON), so the same task always has the same key. Its result (a dict
of JSON values) is stored as ``DIR/tasks/<key>.json`` (``{"key", "function", "params",
"result", "seconds"}``), written atomically by the process that runs the sweep (never by the
workers, which need no shared disk). A task whose file exists, reads back and matches its key
and parameters is done: an interrupted sweep (killed, crashed, stopped) resumes where it was
and never recomputes a finished task; a broken file is recomputed.

Execution: ``workers`` local processes (``--jobs N`` on the command line) (``spawn``: a clean interpreter each, BLAS and
``verify.numeric.nw`` on one thread each, so that N processes use N cores), or with
``scheduler=ADDRESS`` the workers of a running ``dask.distributed`` scheduler (the ``cluster``
extra; every worker needs this package installed). Either way the results are the same numbers:
a task depends on its parameters only.

At the end (and whatever was interrupted before) ``DIR/results.csv`` holds one row per task of
the grid, in grid order: the key, the parameters and the scalar results, no timings, so two
runs of the same grid give the same file. ``DIR/sweep.json`` records the grid's cost: tasks
computed and reused, CPU seconds of the computed ones, wall time.
"""

from __future__ import annotations

import argparse
import csv
import hashlib
import importlib
import io as _io
import json
import math
import os
import sys
import time
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable

from verify._validate import ArgParser, error_line, exclusive, fail, positive_int, received, writable_folder
from verify.errors import VerifyError
from verify.io import atomic_write_text, read_json, write_json

__all__ = ["Task", "SweepResult", "task_key", "run_sweep", "read_table", "demo_task", "cli_sweep", "SWEEPS"]

#: Named sweeps of ``python -m verify sweep NAME``: ``"module:function"`` taking argv.
SWEEPS = {"c7": "verify.experiments.scaling:cli_sweep_c7", "demo": "verify.experiments.sweep:cli_sweep_demo"}
#: A task file larger than this is not read (results are a few hundred bytes).
MAX_TASK_BYTES = 2**20
#: The demo grid's largest size: a self-test of a few hundred bytes per task file; 10,000 tasks are
#: 3 MB and under a minute of work, where ``--tasks 10000000`` ran silently until killed.
MAX_DEMO_TASKS = 10_000
#: The most local worker processes (``--jobs``), as ``python -m verify --jobs`` allows.
MAX_JOBS = 64
#: How long to try to reach a Dask scheduler before calling its address wrong.
SCHEDULER_TIMEOUT = "20s"


@dataclass(frozen=True)
class Task:
    """One point of a grid: ``function`` (``"module:function"``) applied to ``params``."""

    function: str
    params: dict

    @property
    def key(self) -> str:
        return task_key(self.function, self.params)


@dataclass
class SweepResult:
    """What :func:`run_sweep` did: the records in grid order, and its cost."""

    records: list[dict]
    computed: int
    reused: int
    wall_s: float
    cpu_s: float
    table: Path
    summary: dict = field(default_factory=dict)


def _canonical(doc: Any) -> str:
    return json.dumps(doc, sort_keys=True, separators=(",", ":"), allow_nan=False)


def task_key(function: str, params: dict) -> str:
    """SHA-256 (hex) of the task's function and parameters (canonical JSON)."""
    return hashlib.sha256(_canonical({"function": function, "params": params}).encode()).hexdigest()


def _resolve(function: str) -> Callable[[dict], dict]:
    module, _, name = function.partition(":")
    if not module or not name:
        raise fail("function", repr(function), "'module:function'")
    return getattr(importlib.import_module(module), name)


def _execute(function: str, params: dict) -> tuple[dict, float]:
    """Run one task (in a worker): its result and CPU seconds."""
    t0 = time.process_time()
    result = _resolve(function)(params)
    return result, time.process_time() - t0


def _worker_init() -> None:
    from verify.numeric import nw

    nw.set_default_threads(1)   # one process per core: no threads inside


_ONE_THREAD = {"OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}


def _task_path(out: Path, key: str) -> Path:
    return out / "tasks" / f"{key}.json"


def _load_done(out: Path, task: Task) -> dict | None:
    """The stored record of ``task``, or None (absent, unreadable, or another task's)."""
    path = _task_path(out, task.key)
    if not path.is_file():
        return None
    try:
        doc = read_json("sweep task file", path, max_bytes=MAX_TASK_BYTES)
    except VerifyError:
        return None
    if (not isinstance(doc, dict) or doc.get("key") != task.key or doc.get("function") != task.function
            or doc.get("params") != task.params or not isinstance(doc.get("result"), dict)):
        return None
    return doc


def _table_rows(records: list[dict]) -> tuple[list[str], list[dict]]:
    rows = []
    for rec in records:
        row: dict = {"key": rec["key"]}
        for k, v in rec["params"].items():
            row[f"param.{k}"] = v
        for k, v in rec["result"].items():
            if isinstance(v, (int, float, str, bool)) or v is None:
                row[k] = v
        rows.append(row)
    columns: list[str] = []
    for row in rows:
        columns += [c for c in row if c not in columns]
    return columns, rows


def _write_table(path: Path, records: list[dict]) -> Path:
    columns, rows = _table_rows(records)
    buf = _io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=columns, lineterminator="\n")
    writer.writeheader()
    for row in rows:
        writer.writerow({c: (repr(v) if isinstance(v, float) else v) for c, v in row.items()})
    return atomic_write_text(path, buf.getvalue())


def read_table(path: Path | str) -> list[dict]:
    """The rows of a ``results.csv``, numbers parsed (floats exactly: they are written with repr)."""
    def parse(text: str) -> Any:
        for kind in (int, float):
            try:
                return kind(text)
            except ValueError:
                pass
        return {"True": True, "False": False, "": None}.get(text, text)

    with open(path, newline="") as fh:
        return [{k: parse(v) for k, v in row.items()} for row in csv.DictReader(fh)]


class _Progress:
    def __init__(self, total: int, label: str, enabled: bool) -> None:
        from verify.outputs.report import Progress

        self.bar = Progress(total) if enabled else None
        self.label = label

    def advance(self, note: str) -> None:
        if self.bar is not None:
            self.bar.advance(f"{self.label}: {note}")

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


def run_sweep(tasks: Iterable[Task], out: Path | str, *, workers: int | None = None, scheduler: str | None = None,
              progress: bool = True, label: str = "sweep") -> SweepResult:
    """Run every task of the grid that is not stored yet in ``out`` (module docstring); return
    all records in grid order. ``workers``: local processes (default: the usable CPUs; 1 runs
    in this process); ``scheduler``: a Dask scheduler address instead."""
    t_start = time.perf_counter()
    tasks = list(tasks)
    keys = [t.key for t in tasks]
    if len(set(keys)) != len(keys):
        raise fail("tasks", f"{len(keys) - len(set(keys))} duplicate tasks", "a grid of distinct tasks")
    out = check_targets(out, keys)
    records: dict[str, dict] = {}
    todo = []
    for t in tasks:
        doc = _load_done(out, t)
        if doc is None:
            todo.append(t)
        else:
            records[t.key] = doc
    reused = len(records)
    bar = _Progress(len(tasks), label, progress)
    for _ in range(reused):
        bar.advance("stored")
    cpu = 0.0

    def finish(task: Task, result: dict, seconds: float) -> None:
        nonlocal cpu
        doc = {"key": task.key, "function": task.function, "params": task.params, "result": result,
               "seconds": seconds}
        write_json(_task_path(out, task.key), doc)
        records[task.key] = doc
        cpu += seconds
        bar.advance(_short(task.params))

    try:
        if todo:
            if scheduler is not None:
                _run_dask(todo, scheduler, finish)
            else:
                _run_local(todo, workers, finish)
    finally:
        bar.close()
        done = [records[k] for k in keys if k in records]
        table = _write_table(out / "results.csv", done)
        summary = {"tasks": len(tasks), "computed": len(done) - reused, "reused": reused,
                   "missing": len(tasks) - len(done), "cpu_s_computed": cpu,
                   "cpu_s_all": sum(r.get("seconds", 0.0) for r in done),
                   "wall_s": time.perf_counter() - t_start,
                   "executor": f"dask {scheduler}" if scheduler else f"local processes ({_workers(workers)})"}
        write_json(out / "sweep.json", summary)
    return SweepResult(records=done, computed=summary["computed"], reused=reused, wall_s=summary["wall_s"],
                       cpu_s=cpu, table=table, summary=summary)


def check_targets(out: Path | str, keys: list[str]) -> Path:
    """Refuse, before any task runs, a results folder the sweep cannot write into: ``out`` a file
    or unwritable, ``out/tasks`` not a folder, a task file, ``results.csv`` or ``sweep.json`` a
    folder or another non-file (a damaged *file* is fine: it is recomputed)."""
    out = writable_folder("--out", out)
    expected = "a results folder whose entries the sweep can write"
    tasks_dir = out / "tasks"
    if os.path.lexists(tasks_dir):
        if not tasks_dir.is_dir():
            raise fail("--out", f"{str(tasks_dir)!r}, which is not a folder", expected)
        writable_folder("--out", tasks_dir)
    for path in [out / "results.csv", out / "sweep.json", *(_task_path(out, k) for k in keys)]:
        if os.path.lexists(path) and not path.is_file():
            raise fail("--out", f"{str(path)!r}, which is not a regular file", expected)
    return out


def _short(params: dict) -> str:
    return " ".join(f"{k}={v}" for k, v in list(params.items())[:6])


def _workers(workers: int | None) -> int:
    if workers is None:
        from verify.numeric.nw import _usable_cpus

        return _usable_cpus()
    return positive_int("workers", workers, maximum=MAX_JOBS)


def _run_local(todo: list[Task], workers: int | None, finish: Callable[[Task, dict, float], None]) -> None:
    n = min(_workers(workers), len(todo))
    if n == 1:
        for t in todo:
            result, seconds = _execute(t.function, t.params)
            finish(t, result, seconds)
        return
    import multiprocessing

    saved = {k: os.environ.get(k) for k in _ONE_THREAD}
    os.environ.update(_ONE_THREAD)        # read by numpy as the spawned workers import it
    pool = ProcessPoolExecutor(n, mp_context=multiprocessing.get_context("spawn"), initializer=_worker_init)
    try:
        pending = {pool.submit(_execute, t.function, t.params): t for t in todo}
        while pending:
            finished, _ = wait(pending, return_when=FIRST_COMPLETED)
            for fut in finished:
                task = pending.pop(fut)
                result, seconds = fut.result()
                finish(task, result, seconds)
    except BaseException:
        pool.shutdown(wait=False, cancel_futures=True)   # stopped: the running tasks are lost, not waited for
        raise
    else:
        pool.shutdown()
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def _run_dask(todo: list[Task], scheduler: str, finish: Callable[[Task, dict, float], None]) -> None:
    try:
        from dask.distributed import Client, as_completed
    except ImportError as exc:
        raise fail("--scheduler", repr(scheduler),
                   f"dask.distributed installed (pip install 'mha-nw-verify[cluster]'): {exc}") from None
    try:
        client = Client(scheduler, timeout=SCHEDULER_TIMEOUT)
    except (OSError, TimeoutError) as exc:
        raise fail("--scheduler", repr(scheduler), f"the address of a running Dask scheduler ({exc})") from None
    try:
        client.run(_worker_init)
        futures = {client.submit(_execute, t.function, t.params, key=f"verify-sweep-{t.key}", pure=False): t
                   for t in todo}
        for fut in as_completed(list(futures)):
            result, seconds = fut.result()
            finish(futures[fut], result, seconds)
    finally:
        client.close()


# --------------------------------------------------------------------------- demo sweep


def demo_task(params: dict) -> dict:
    """The engine's self-test task: sleeps ``params["sleep"]`` seconds and returns numbers that
    depend on the parameters only (a few steps of the logistic map from ``params["i"]``)."""
    time.sleep(float(params.get("sleep", 0.0)))
    x = (int(params["i"]) + 0.5) / (int(params.get("tasks", 1)) + 1)
    for _ in range(50):
        x = 3.9 * x * (1 - x)
    return {"x": x, "i2": int(params["i"]) ** 2}


def demo_grid(tasks: int, sleep: float) -> list[Task]:
    return [Task("verify.experiments.sweep:demo_task", {"i": i, "tasks": tasks, "sleep": sleep}) for i in range(tasks)]


def common_arguments(p: argparse.ArgumentParser, default_out: str) -> None:
    """The options every named sweep takes (``--workers`` is the old name of ``--jobs``: still
    read, not listed, refused together with ``--jobs``)."""
    p.add_argument("-o", "--out", default=default_out, metavar="DIR", help=f"results folder (default {default_out})")
    p.add_argument("--scheduler", default=None, metavar="ADDRESS",
                   help="run on this Dask scheduler (e.g. tcp://host:8786) instead of local processes")
    p.add_argument("--jobs", "-j", dest="workers", default=None, metavar="N",
                   help=f"local worker processes, 1..{MAX_JOBS} (default: usable CPUs)")
    p.add_argument("--workers", dest="old_workers", default=None, help=argparse.SUPPRESS)
    p.add_argument("--no-progress", action="store_true", help="no progress bar")


def parse_workers(text: str | None, old: str | None = None) -> int | None:
    """``--jobs N`` as an integer in 1..MAX_JOBS (``old``: the same from ``--workers``)."""
    exclusive(("--jobs", text), ("--workers", old))
    flag, text = ("--workers", old) if old is not None else ("--jobs", text)
    if text is None:
        return None
    try:
        value = int(text)
    except ValueError:
        raise fail(flag, received(text), f"an integer in 1..{MAX_JOBS}") from None
    return positive_int(flag, value, maximum=MAX_JOBS, why="MAX_JOBS")


def _workers_of(a: argparse.Namespace) -> int | None:
    return parse_workers(a.workers, getattr(a, "old_workers", None))


def _help_parser(prog: str, description: str, example: str) -> ArgParser:
    return ArgParser(prog=prog, description=description, epilog=f"example:\n  {example}",
                     formatter_class=argparse.RawDescriptionHelpFormatter)


def cli_sweep_demo(argv: list[str]) -> int:
    p = _help_parser("python -m verify sweep demo",
                     "The sweep engine's self-test grid: N tasks that sleep S seconds each and return numbers "
                     "that depend on their parameters only; kill it and run it again to see it resume.",
                     "python -m verify sweep demo --tasks 20 --sleep 0.1 -o sweep-demo --jobs 2")
    p.add_argument("--tasks", default="20", metavar="N", help=f"tasks in the grid, 1..{MAX_DEMO_TASKS:,} (default 20)")
    p.add_argument("--sleep", default="0.1", metavar="S", help="seconds each task sleeps, 0..60 (default 0.1)")
    common_arguments(p, "sweep-demo")
    a = p.parse_args(argv)
    try:
        tasks = int(a.tasks)
    except ValueError:
        raise fail("--tasks", received(a.tasks), f"an integer in 1..{MAX_DEMO_TASKS:,}") from None
    try:
        sleep = float(a.sleep)
    except ValueError:
        raise fail("--sleep", received(a.sleep), "seconds in [0, 60]") from None
    tasks = positive_int("--tasks", tasks, maximum=MAX_DEMO_TASKS, why="MAX_DEMO_TASKS: the self-test's size")
    if not (math.isfinite(sleep) and 0 <= sleep <= 60):
        raise fail("--sleep", received(a.sleep), "seconds in [0, 60]")
    res = run_sweep(demo_grid(tasks, sleep), a.out, workers=_workers_of(a), scheduler=a.scheduler,
                    progress=not a.no_progress, label="demo")
    print(json.dumps(res.summary))
    return 0


def _stop_on_sigterm() -> None:
    """SIGTERM stops a sweep as Ctrl-C does: the stored results and the table stay consistent."""
    import signal
    import threading

    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, lambda signum, frame: (_ for _ in ()).throw(KeyboardInterrupt()))


SWEEP_HELP = f"""usage: python -m verify sweep NAME [options]

Run (or resume) a named, resumable parameter sweep: one stored result per task under DIR/tasks/,
the table DIR/results.csv; a killed or interrupted sweep resumes where it stopped.

sweeps:
  c7     C7's empirical scaling law on real NW ensembles (--quick: the quick grid)
  demo   the sweep engine's self-test grid

options of every sweep (NAME --help lists the rest):
  -o, --out DIR         results folder
  --jobs N, -j N        local worker processes, 1..{MAX_JOBS} (default: usable CPUs)
  --scheduler ADDRESS   run on a Dask scheduler instead of local processes
  --no-progress         no progress bar

examples:
  python -m verify sweep c7 --quick -o c7-sweep
  python -m verify sweep demo --tasks 20 -o sweep-demo --jobs 2"""


def cli_sweep(argv: list[str]) -> int:
    """``python -m verify sweep NAME [options]``: 0 on success, 2 on bad arguments
    (``error: ...`` on stderr), 130 when interrupted (what was finished is stored)."""
    _stop_on_sigterm()
    try:
        if not argv or argv[0] in ("-h", "--help"):
            if not argv:
                raise fail("sweep", "no name", f"one of {', '.join(SWEEPS)} (python -m verify sweep --help)")
            print(SWEEP_HELP)
            return 0
        if argv[0] not in SWEEPS:
            raise fail("sweep", received(argv[0]), f"one of {', '.join(SWEEPS)}")
        return int(_resolve(SWEEPS[argv[0]])(argv[1:]) or 0)
    except VerifyError as exc:
        print(error_line(exc), file=sys.stderr)
        return 2
    except OSError as exc:   # a write failed mid-run (disk full, folder removed): what was stored stays
        where = f" ({exc.filename})" if exc.filename else ""
        print(f"error: sweep: a write failed mid-run{where}: {exc.strerror or exc}; the finished tasks are "
              "stored, run the same command again to resume", file=sys.stderr)
        return 1
    except SystemExit as exc:  # --help
        return int(exc.code or 0)
    except KeyboardInterrupt:
        print("interrupted: the finished tasks are stored; run the same command again to resume", file=sys.stderr)
        return 130


if __name__ == "__main__":
    raise SystemExit(cli_sweep(sys.argv[1:]))
