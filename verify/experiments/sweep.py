"""Resumable parameter sweeps: a grid of tasks, one stored result per task, local processes or
a Dask cluster.

    python -m verify sweep c7 [--quick] [-o DIR] [--scheduler ADDRESS] [--jobs N] ...
    python -m verify sweep demo --tasks N [--sleep S] [-o DIR] ...   (the engine's self-test)

A *task* is a function ``"module:function"`` and a dict of JSON parameters; its *key* is the SHA-256
of both (canonical JSON). Its result is stored as ``DIR/tasks/<key>.json`` (``{"key", "function",
"params", "result", "seconds"}``), written atomically by the sweep's own process (workers need no
shared disk). A task whose file reads back and matches its key and parameters is done: an
interrupted sweep resumes where it was; a broken file is recomputed.

Execution: ``workers`` local processes (``spawn``, BLAS and ``verify.numeric.nw`` on one thread each;
they end with the sweep and ignore Ctrl-C, which the sweep handles: it ends them, writes the table of
the finished tasks and exits with status 130), or the workers of a running ``dask.distributed``
scheduler (``scheduler=ADDRESS``, parsed first by :func:`parse_scheduler`; the peer must send a Dask
handshake within :data:`SCHEDULER_TIMEOUT_S`). Either way a task depends on its parameters only. The
results folder follows :func:`verify.io.output_folder`. At the end ``DIR/results.csv`` holds one row
per task in grid order (key, parameters, scalar results, no timings: two runs give the same file) and
``DIR/sweep.json`` the grid's cost.
"""

from __future__ import annotations

import csv
import hashlib
import importlib
import io as _io
import ipaddress
import json
import os
import re
import socket
import struct
import threading
import time
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable

from verify import _processes
from verify._validate import MAX_JOBS, fail, int_numeral, positive_int, received, writable_folder
from verify.errors import VerifyError
from verify.io import atomic_write_text, output_folder, read_json, write_json

__all__ = ["Task", "SweepResult", "task_key", "run_sweep", "run_demo", "read_table", "demo_task", "parse_scheduler",
           "check_scheduler", "stop_on_sigterm", "stopped_by", "SWEEP_COMMAND"]

#: A task file larger than this is not read (results are a few hundred bytes).
MAX_TASK_BYTES = 2**20
#: The demo grid's largest size: 10,000 tasks are 3 MB and under a minute of work.
MAX_DEMO_TASKS = 10_000
#: The longest a demo task sleeps (``--sleep``): a self-test, not a benchmark.
MAX_DEMO_SLEEP_S = 60
#: The whole connection to a Dask scheduler (name lookup, connect, its handshake, the client's start)
#: must be done within this many seconds: a scheduler sends its handshake the moment it accepts, and
#: a peer that says nothing first is not one; 10 s leaves a slow name server its time.
SCHEDULER_TIMEOUT_S = 10.0
#: A Dask handshake (msgpack in one frame) is under 100 bytes; a peer announcing more is no scheduler.
MAX_HANDSHAKE_BYTES = 64 * 1024
#: At most this many frames in a handshake (Dask sends one).
MAX_HANDSHAKE_FRAMES = 16
#: The longest scheduler address read: a host name of 253 characters (RFC 1035), scheme and port.
MAX_ADDRESS_CHARS = 300
#: How much longer than the connection's own deadline the sweep waits for the thread that connects
#: (its socket calls end at that deadline; a name lookup that does not is left behind).
CONNECT_GRACE_S = 0.5
#: The command named in a sweep's results-folder marker (:func:`verify.io.output_folder`).
SWEEP_COMMAND = "python -m verify sweep"


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


def task_key(function: str, params: dict) -> str:
    """SHA-256 (hex) of the task's function and parameters (canonical JSON)."""
    doc = json.dumps({"function": function, "params": params}, sort_keys=True, separators=(",", ":"), allow_nan=False)
    return hashlib.sha256(doc.encode()).hexdigest()


def _execute(function: str, params: dict) -> tuple[dict, float]:
    """Run one task (in a worker): its result and CPU seconds."""
    t0 = time.process_time()
    module, _, name = function.partition(":")
    if not module or not name:
        raise fail("function", received(function), "'module:function'")
    result = getattr(importlib.import_module(module), name)(params)
    return result, time.process_time() - t0


def _worker_init(parent: int | None = None) -> None:
    """A worker's start: with ``parent`` (a local worker) it ignores Ctrl-C and ends with the sweep
    (:mod:`verify._processes`, as the main run's workers do); one NW thread (one process per core)."""
    if parent is not None:
        _processes.ignore_sigint_in_worker()
        _processes.die_with_parent(parent)
    from verify.numeric import nw

    nw.set_default_threads(1)


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


def _write_table(path: Path, records: list[dict]) -> Path:
    """``results.csv``: per record its key, parameters and scalar results (floats by repr)."""
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


def run_sweep(tasks: Iterable[Task], out: Path | str, *, workers: int | None = None, scheduler: str | None = None,
              progress: bool = True, label: str = "sweep") -> SweepResult:
    """Run every task of the grid not stored yet in ``out`` and return all records in grid order:
    ``workers`` local processes (default the usable CPUs; 1 runs here) or a Dask ``scheduler`` (its
    address and handshake checked first); ``out`` is checked before any task runs."""
    t_start = time.perf_counter()
    tasks = list(tasks)
    keys = [t.key for t in tasks]
    if len(set(keys)) != len(keys):
        raise fail("tasks", f"{len(keys) - len(set(keys))} duplicate tasks", "a grid of distinct tasks")
    address = parse_scheduler(scheduler) if scheduler is not None else None
    out = check_targets(out, keys)
    if address is not None:
        _check_handshake(address)            # before the folder is taken: a wrong peer changes nothing
    with output_folder("--out", out, SWEEP_COMMAND):
        return _run_in(out, tasks, keys, workers, address, progress, label, t_start)


def _run_in(out: Path, tasks: list[Task], keys: list[str], workers: int | None, address: tuple | None,
            progress: bool, label: str, t_start: float) -> SweepResult:
    """:func:`run_sweep` in its folder (taken, locked)."""
    from verify.outputs.report import Progress

    records: dict[str, dict] = {}
    todo = []
    for t in tasks:
        doc = _load_done(out, t)
        if doc is None:
            todo.append(t)
        else:
            records[t.key] = doc
    reused = len(records)
    bar = Progress(len(tasks)) if progress else None

    def advance(note: str) -> None:
        if bar is not None:
            bar.advance(f"{label}: {note}")

    for _ in range(reused):
        advance("stored")
    cpu = 0.0

    def finish(task: Task, result: dict, seconds: float) -> None:
        nonlocal cpu
        doc = {"key": task.key, "function": task.function, "params": task.params, "result": result,
               "seconds": seconds}
        write_json(_task_path(out, task.key), doc)
        records[task.key] = doc
        cpu += seconds
        advance(" ".join(f"{k}={v}" for k, v in list(task.params.items())[:6]))

    try:
        if todo:
            if address is not None:
                _run_dask(todo, address, finish)
            else:
                _run_local(todo, workers, finish)
    finally:
        if bar is not None:
            bar.close()
        done = [records[k] for k in keys if k in records]
        table = _write_table(out / "results.csv", done)
        summary = {"tasks": len(tasks), "computed": len(done) - reused, "reused": reused,
                   "missing": len(tasks) - len(done), "cpu_s_computed": cpu,
                   "cpu_s_all": sum(r.get("seconds", 0.0) for r in done),
                   "wall_s": time.perf_counter() - t_start,
                   "executor": f"dask {address[2]}" if address else f"local processes ({_workers(workers)})"}
        write_json(out / "sweep.json", summary)
    return SweepResult(records=done, computed=summary["computed"], reused=reused, wall_s=summary["wall_s"],
                       cpu_s=cpu, table=table, summary=summary)


def check_targets(out: Path | str, keys: list[str]) -> Path:
    """Refuse, before any task runs, a results folder the sweep cannot write into (a damaged *file* is
    fine: it is recomputed); whose folder it is :func:`verify.io.output_folder` decides next."""
    out = writable_folder("--out", out)
    expected = "a results folder whose entries the sweep can write"
    tasks_dir = out / "tasks"
    # the paths quoted below exist, so the file system bounds their length (PATH_MAX), and their ends name the entry
    if os.path.lexists(tasks_dir):
        if not tasks_dir.is_dir():
            raise fail("--out", f"{str(tasks_dir)!r}, which is not a folder", expected)
        writable_folder("--out", tasks_dir)
    for path in [out / "results.csv", out / "sweep.json", *(_task_path(out, k) for k in keys)]:
        if os.path.lexists(path) and not path.is_file():
            raise fail("--out", f"{str(path)!r}, which is not a regular file", expected)
    return out


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
    pool = ProcessPoolExecutor(n, mp_context=multiprocessing.get_context("spawn"), initializer=_worker_init,
                               initargs=(os.getpid(),))
    try:
        with _processes.forking_with_sigint_blocked():     # a spawn pool starts a worker in each submit
            pending = {pool.submit(_execute, t.function, t.params): t for t in todo}
        while pending:
            finished, _ = wait(pending, return_when=FIRST_COMPLETED)
            for fut in finished:
                task = pending.pop(fut)
                result, seconds = fut.result()
                finish(task, result, seconds)
    except BaseException:
        _processes.stop_pool(pool)   # stopped: the running tasks are lost, not waited for; the workers end now
        raise
    else:
        pool.shutdown()
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


_SCHEDULER_WANT = ("a Dask scheduler's address tcp://HOST:PORT (HOST a name, an IPv4 address or an IPv6 "
                   "address in brackets, PORT in 1..65535)")
#: One label of a host name (letters, digits, hyphens inside, underscores as some networks use them).
_HOST_LABEL = re.compile(r"[A-Za-z0-9_](?:[A-Za-z0-9_-]{0,61}[A-Za-z0-9_])?")
#: The longest host name (RFC 1035).
_MAX_HOST_CHARS = 253


def parse_scheduler(text: Any) -> tuple[str, int, str]:
    """``--scheduler`` ``tcp://HOST:PORT`` or ``HOST:PORT`` (a host name, IPv4 or bracketed IPv6 address;
    port 1..65535) as ``(host, port, address)``; anything else is refused naming ``--scheduler``."""
    def bad(detail: str) -> VerifyError:
        return fail("--scheduler", f"{received(text)} ({detail})", _SCHEDULER_WANT)

    if not isinstance(text, str):
        raise bad("not text")
    if len(text) > MAX_ADDRESS_CHARS:
        raise bad(f"longer than {MAX_ADDRESS_CHARS} characters, MAX_ADDRESS_CHARS")
    rest = text
    if "://" in text:
        scheme, rest = text.split("://", 1)
        if scheme != "tcp":
            raise bad(f"the scheme {received(scheme)}: only tcp")
    if rest.startswith("["):
        end = rest.find("]")
        if end < 0:
            raise bad("an unclosed '['")
        host, after = rest[1:end], rest[end + 1:]
        try:
            ipaddress.IPv6Address(host)
        except ValueError:
            raise bad("no IPv6 address in the brackets") from None
        if not after.startswith(":"):
            raise bad("no port after the host")
        port_text, shown_host = after[1:], f"[{host}]"
    else:
        host, sep, port_text = rest.rpartition(":")
        if not sep:
            raise bad("no port")
        if not host:
            raise bad("no host")
        labels = host.split(".")
        if len(host) > _MAX_HOST_CHARS or not all(_HOST_LABEL.fullmatch(label) for label in labels):
            raise bad("the host is neither a host name nor an IPv4 address")
        if all(label.isdigit() for label in labels):
            try:
                ipaddress.IPv4Address(host)
            except ValueError:
                raise bad("the host is not an IPv4 address") from None
        shown_host = host
    if not (port_text.isascii() and port_text.isdigit()):
        raise bad("the port is not ASCII digits")
    try:
        port = int_numeral("port", port_text, minimum=1, maximum=65535)
    except VerifyError:
        raise bad("the port is outside 1..65535") from None
    return host, port, f"tcp://{shown_host}:{port}"


def _bounded(fn: Callable[[], Any], seconds: float) -> tuple[bool, Any]:
    """``fn()`` in a daemon thread, waited for at most ``seconds``: (True, its value), or (False,
    None) if it has not returned by then (the thread is left to end on its own). Its exception is
    raised here."""
    box: dict[str, Any] = {}

    def run() -> None:
        try:
            box["value"] = fn()
        except BaseException as exc:   # noqa: BLE001 - raised in the caller's thread
            box["error"] = exc

    thread = threading.Thread(target=run, name="verify-scheduler-connect", daemon=True)
    thread.start()
    thread.join(seconds)
    if thread.is_alive():
        return False, None
    if "error" in box:
        raise box["error"]
    return True, box.get("value")


class _NotDask(Exception):
    """The peer answered, and not as a Dask scheduler (the reason)."""


def _recv_exactly(sock: socket.socket, n: int, deadline: float) -> bytes:
    buf = b""
    while len(buf) < n:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise TimeoutError
        sock.settimeout(remaining)
        try:
            chunk = sock.recv(n - len(buf))
        except ConnectionError as exc:      # it accepted, then reset: no scheduler does that
            raise _NotDask(f"it {exc.strerror or 'reset the connection'} before a Dask handshake") from None
        if not chunk:
            raise _NotDask(f"it closed the connection after {len(buf)} bytes, without a Dask handshake"
                           + (f" (its first bytes {_shown(buf)})" if buf else ""))
        buf += chunk
    return buf


def _shown(data: bytes) -> str:
    return received(bytes(data[:16]))


def _read_handshake(host: str, port: int, deadline: float) -> None:
    """Connect and read the scheduler's handshake (Dask's TCP framing: the total length, the frame
    count and lengths, then one msgpack map with ``python`` and ``pickle-protocol``), all before
    ``deadline``; :class:`_NotDask` for anything else, TimeoutError when too late."""
    with socket.create_connection((host, port), timeout=max(deadline - time.monotonic(), 0.001)) as sock:
        head = _recv_exactly(sock, 8, deadline)
        (total,) = struct.unpack("<Q", head)
        if not 16 <= total <= MAX_HANDSHAKE_BYTES:
            raise _NotDask(f"its first bytes {_shown(head)} are no Dask handshake")
        body = _recv_exactly(sock, total, deadline)
        (frames,) = struct.unpack_from("<Q", body)
        if not 1 <= frames <= MAX_HANDSHAKE_FRAMES or 8 + 8 * frames > total:
            raise _NotDask(f"its first bytes {_shown(head + body)} are no Dask handshake")
        lengths = struct.unpack_from(f"<{frames}Q", body, 8)
        first = body[8 + 8 * frames:8 + 8 * frames + lengths[0]]
        a_map = bool(first) and (0x80 <= first[0] <= 0x8F or first[0] in (0xDE, 0xDF))    # msgpack's map markers
        if 8 + 8 * frames + sum(lengths) != total or not a_map or b"python" not in first \
                or b"pickle-protocol" not in first:
            raise _NotDask(f"its first bytes {_shown(head + body)} are no Dask handshake")


def _check_handshake(address: tuple[str, int, str]) -> None:
    """Refuse, on one line naming ``--scheduler``, an address where no Dask scheduler answers within
    :data:`SCHEDULER_TIMEOUT_S` (the name lookup and the connection included)."""
    host, port, shown = address
    seconds = SCHEDULER_TIMEOUT_S
    want = "the address of a running Dask scheduler"

    def refused(detail: str) -> VerifyError:
        return fail("--scheduler", f"{received(shown)} ({detail})", want)

    try:
        done, _ = _bounded(lambda: _read_handshake(host, port, time.monotonic() + seconds), seconds + CONNECT_GRACE_S)
    except _NotDask as exc:
        raise fail("--scheduler", f"{received(shown)}, which is not a Dask scheduler: {exc}", want) from None
    except TimeoutError:
        done = False
    except socket.gaierror as exc:
        raise refused(f"the host name does not resolve: {exc.strerror or exc}") from None
    except OSError as exc:
        raise refused(f"nothing answers there: {exc.strerror or exc}") from None
    if not done:
        raise fail("--scheduler", f"{received(shown)}, which is not a Dask scheduler: it sent no Dask handshake "
                                  f"within {seconds:g} s (SCHEDULER_TIMEOUT_S; a scheduler sends one at once)", want)


def check_scheduler(text: Any) -> tuple[str, int, str]:
    """``--scheduler`` parsed (:func:`parse_scheduler`) and its peer's handshake checked: the address
    of a Dask scheduler that answers, or the package error naming ``--scheduler``."""
    address = parse_scheduler(text)
    _check_handshake(address)
    return address


def _run_dask(todo: list[Task], address: tuple[str, int, str], finish: Callable[[Task, dict, float], None]) -> None:
    shown = address[2]
    try:
        from dask.distributed import Client, as_completed
    except ImportError as exc:
        raise fail("--scheduler", received(shown),
                   f"dask.distributed installed (pip install 'mha-nw-verify[cluster]'): {exc}") from None
    seconds = SCHEDULER_TIMEOUT_S
    try:
        done, client = _bounded(lambda: Client(shown, timeout=seconds), seconds + CONNECT_GRACE_S)
    except (OSError, TimeoutError) as exc:
        raise fail("--scheduler", f"{received(shown)} ({received(str(exc))})",
                   "the address of a running Dask scheduler") from None
    if not done:
        raise fail("--scheduler", f"{received(shown)} (the client did not connect within {seconds:g} s, "
                                  "SCHEDULER_TIMEOUT_S)", "the address of a running Dask scheduler")
    try:
        client.run(_worker_init)
        futures = {client.submit(_execute, t.function, t.params, key=f"verify-sweep-{t.key}", pure=False): t
                   for t in todo}
        for fut in as_completed(list(futures)):
            result, seconds_ = fut.result()
            finish(futures[fut], result, seconds_)
    finally:
        client.close()


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


def run_demo(tasks: int, sleep: float, out: Path | str, *, workers: int | None = None, scheduler: str | None = None,
             progress: bool = True) -> int:
    """``python -m verify sweep demo``: the self-test grid, run (or resumed); its summary as JSON."""
    res = run_sweep(demo_grid(tasks, sleep), out, workers=workers, scheduler=scheduler, progress=progress, label="demo")
    print(json.dumps(res.summary))
    return 0


#: The signal that stopped the sweep, for its last line (SIGTERM raises KeyboardInterrupt too).
_STOPPED_BY = {"signal": "SIGINT"}


def stop_on_sigterm() -> None:
    """SIGTERM stops a sweep as Ctrl-C does: the stored results and the table stay consistent."""
    import signal

    def stop(signum: int, frame: Any) -> None:
        _STOPPED_BY["signal"] = "SIGTERM"
        raise KeyboardInterrupt

    if threading.current_thread() is threading.main_thread():
        _STOPPED_BY["signal"] = "SIGINT"
        signal.signal(signal.SIGTERM, stop)


def stopped_by() -> str:
    """The signal that stopped the last sweep of this process (for its error line)."""
    return _STOPPED_BY["signal"]


