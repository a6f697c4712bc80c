"""Hostile places (issue 23): the run's folder, symlinks and special files, concurrent publishes,
signals, odd environments, progress wording, contradictory options and file modes.

Each test states the behaviour a user relies on; the cases were failures of an independent run
against the entry points (a folder replaced although it was not this package's, links turned into
files, tracebacks on SIGINT, on an ASCII terminal or without a home)."""

from __future__ import annotations

import contextlib
import errno
import json
import math
import os
import re
import shutil
import signal
import socket
import stat
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

import proofs
import verify.claims
from proofs import cache
from proofs.markup import render
from verify import io
from verify.cli import _derivation_summary, main
from verify.errors import VerifyError

ROOT = Path(__file__).resolve().parent.parent
#: The quickest claim whose check writes plots and counterexamples (~1 s in process, derived at session start).
QUICK = "C4"
#: A child process gets this long to reach a named point of its run (a loaded 2-core machine).
CHILD_DEADLINE_S = 120


def _env(**extra: str) -> dict:
    return {**os.environ, "PYTHONPATH": str(ROOT), **extra}


def _one_error_line(err: str) -> str:
    lines = [ln for ln in err.strip().splitlines() if not ln.startswith("[")]   # progress lines start with "["
    assert len(lines) == 1 and lines[0].startswith("error: "), err
    return lines[0]


def _no_work(monkeypatch):
    """Make any run that starts its work fail the test: refusals must come first."""
    import verify.run

    def forbidden(*a, **k):
        raise AssertionError("the run started its work")

    monkeypatch.setattr(verify.run, "run_report", forbidden)


def _marker(folder: Path, doc) -> None:
    (folder / io.RUN_MARKER).write_text(doc if isinstance(doc, str) else json.dumps(doc))


# --------------------------------------------------------------------------- 1. --out


def test_a_folder_with_someone_elses_report_json_is_never_replaced(tmp_path, capsys, monkeypatch):
    _no_work(monkeypatch)
    out = tmp_path / "mine"
    (out / "photos").mkdir(parents=True)
    (out / "report.json").write_text('{"my": "own data"}')
    (out / "photos" / "a.jpg").write_text("jpeg")
    assert main(["--quick", "--only", QUICK, "--out", str(out)]) == 2
    line = _one_error_line(capsys.readouterr().err)
    assert "--out" in line and io.RUN_MARKER in line
    assert (out / "report.json").read_text() == '{"my": "own data"}' and (out / "photos" / "a.jpg").is_file()


@pytest.mark.parametrize("doc,ok", [
    ({"schema": io.RUN_SCHEMA, "schema_version": 1}, True),
    ({"schema": io.RUN_SCHEMA, "schema_version": io.RUN_SCHEMA_VERSION}, True),
    ({"schema": io.RUN_SCHEMA, "schema_version": io.RUN_SCHEMA_VERSION + 1}, False),   # a later package's
    ({"schema": io.RUN_SCHEMA, "schema_version": 0}, False),
    ({"schema": io.RUN_SCHEMA, "schema_version": True}, False),                        # a bool is no version
    ({"schema": io.RUN_SCHEMA, "schema_version": 1.0}, False),
    ({"schema": io.RUN_SCHEMA}, False),
    ({"schema": "mha-nw-verify/report", "schema_version": 1}, False),
    ([io.RUN_SCHEMA, 1], False),
    ("", False),
    ('{"schema": "mha-nw-verify/run", "schema_version": 1', False),                   # truncated
], ids=["v1", "current", "future", "v0", "bool", "float", "no-version", "other-schema", "list", "empty", "truncated"])
def test_the_run_marker_is_checked_against_its_schema(tmp_path, doc, ok):
    (tmp_path / "notes.txt").write_text("x")
    _marker(tmp_path, doc)
    assert io.is_run_folder(tmp_path) is ok
    if ok:
        io.publish_folder(io.staging_folder("--out", tmp_path), tmp_path)
        assert not (tmp_path / "notes.txt").exists() and io.is_run_folder(tmp_path)
    else:
        with pytest.raises(VerifyError, match="--out: expected a new folder or one this package wrote"):
            io.staging_folder("--out", tmp_path)
        assert (tmp_path / "notes.txt").read_text() == "x"


def test_a_marker_that_is_a_link_or_a_folder_does_not_count(tmp_path):
    real = tmp_path / "real.json"
    real.write_text(json.dumps({"schema": io.RUN_SCHEMA, "schema_version": 1}))
    linked = tmp_path / "linked"
    linked.mkdir()
    (linked / io.RUN_MARKER).symlink_to(real)
    folder = tmp_path / "folder"
    (folder / io.RUN_MARKER).mkdir(parents=True)
    assert not io.is_run_folder(linked) and not io.is_run_folder(folder)


def test_a_run_writes_the_marker_and_a_second_run_replaces_the_first(tmp_path):
    out = tmp_path / "run"
    assert main(["--quick", "--only", QUICK, "--out", str(out)]) == 0
    doc = json.loads((out / io.RUN_MARKER).read_text())
    assert doc["schema"] == io.RUN_SCHEMA and doc["schema_version"] == io.RUN_SCHEMA_VERSION
    (out / "stale.txt").write_text("from the first run's folder")
    assert main(["--quick", "--only", QUICK, "--out", str(out)]) == 0
    assert not (out / "stale.txt").exists() and (out / "report.json").is_file()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["run"]


@pytest.mark.parametrize("which", [".", "", "cwd", "parent", "grandparent", "root", "dotdot", "cwd-slash-dot"])
def test_the_current_folder_its_ancestors_and_empty_names_are_refused_before_any_work(tmp_path, monkeypatch,
                                                                                      capsys, which):
    here = tmp_path / "a" / "b"
    here.mkdir(parents=True)
    _marker(here, {"schema": io.RUN_SCHEMA, "schema_version": 1})     # even a folder holding a run
    (here / "work.txt").write_text("the user's")
    (here / "report.json").write_text("{}")                             # and what the old check looked for
    monkeypatch.chdir(here)
    _no_work(monkeypatch)
    arg = {".": ".", "": "", "cwd": str(here), "parent": str(here.parent), "grandparent": str(tmp_path),
           "root": "/", "dotdot": "..", "cwd-slash-dot": str(here) + "/."}[which]
    assert main(["--quick", "--only", QUICK, "--out", arg]) == 2
    assert "--out" in _one_error_line(capsys.readouterr().err)
    assert (here / "work.txt").read_text() == "the user's"


@pytest.mark.parametrize("length,ok", [(255, True), (256, False), (4000, False)])
def test_a_name_too_long_for_the_file_system_is_one_line(tmp_path, monkeypatch, capsys, length, ok):
    _no_work(monkeypatch)
    argv = ["--quick", "--only", QUICK, "--out", str(tmp_path / ("n" * length))]
    if ok:   # accepted as a name: the run starts (and meets the test's stand-in)
        with pytest.raises(AssertionError, match="started its work"):
            main(argv)
        return
    code = main(argv)
    err = capsys.readouterr().err
    assert code == 2
    line = _one_error_line(err)
    assert "--out" in line and f"{length} bytes" in line and "at most 255" in line and len(line) < 400


def test_a_write_failing_mid_run_is_one_line_exit_1_and_the_previous_run_stays(tmp_path, monkeypatch, capsys):
    out = tmp_path / "run"
    assert main(["--quick", "--only", QUICK, "--out", str(out)]) == 0
    before = {p.relative_to(out): p.read_bytes() for p in out.rglob("*") if p.is_file()}
    capsys.readouterr()
    real_replace = os.replace

    def full_disk(src, dst, *a, **k):
        if Path(dst).name == "report.md":
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return real_replace(src, dst, *a, **k)

    monkeypatch.setattr(io.os, "replace", full_disk)
    assert main(["--quick", "--only", QUICK, "--out", str(out)]) == 1
    line = _one_error_line(capsys.readouterr().err)
    assert "No space left on device" in line and "report.md" in line and ".tmp" not in line
    monkeypatch.undo()
    assert {p.relative_to(out): p.read_bytes() for p in out.rglob("*") if p.is_file()} == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["run"]          # no staging folder left


# --------------------------------------------------------------------------- 2. symlinks and special files


def test_out_through_a_link_publishes_into_its_target_and_keeps_the_link(tmp_path):
    real = tmp_path / "runs" / "today"
    link = tmp_path / "latest"
    real.parent.mkdir()
    assert main(["--quick", "--only", QUICK, "--out", str(real)]) == 0
    link.symlink_to(real, target_is_directory=True)
    first = (real / "report.json").stat().st_ino
    assert main(["--quick", "--only", QUICK, "--out", str(link)]) == 0
    assert link.is_symlink() and os.readlink(link) == str(real)
    assert (real / "report.json").stat().st_ino != first and io.is_run_folder(real)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["latest", "runs"]
    assert sorted(p.name for p in real.parent.iterdir()) == ["today"]        # no .today.old-PID, no partial


def test_a_write_to_a_link_writes_through_to_its_target(tmp_path):
    target = tmp_path / "data" / "README.md"
    target.parent.mkdir()
    target.write_text("old")
    link = tmp_path / "README.md"
    link.symlink_to(target)
    io.atomic_write_text(link, "new")                     # snapshot --write writes README.md this way
    io.write_json(tmp_path / "hdi.json", {"a": 1})
    (tmp_path / "out.json").symlink_to(tmp_path / "hdi.json")
    io.write_json(tmp_path / "out.json", {"b": 2})       # hdi --json LINK
    assert link.is_symlink() and target.read_text() == "new"
    assert (tmp_path / "out.json").is_symlink() and json.loads((tmp_path / "hdi.json").read_text()) == {"b": 2}
    dangling = tmp_path / "dangling.json"
    dangling.symlink_to(tmp_path / "created.json")
    io.write_json(dangling, [1])
    assert dangling.is_symlink() and json.loads((tmp_path / "created.json").read_text()) == [1]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["README.md", "created.json", "dangling.json", "data",
                                                          "hdi.json", "out.json"]
    assert sorted(p.name for p in target.parent.iterdir()) == ["README.md"]


def _special(tmp_path, kind):
    path = tmp_path / kind
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "socket":
        s = socket.socket(socket.AF_UNIX)
        s.bind(str(path))
        s.close()
    elif kind == "folder":
        path.mkdir()
    elif kind == "stdout-like":      # /dev/stdout is a link to the process's stream
        os.mkfifo(tmp_path / "stream")
        path.symlink_to(tmp_path / "stream")
    return path


@pytest.mark.parametrize("kind", ["fifo", "socket", "folder", "stdout-like"])
def test_a_special_file_is_refused_and_never_replaced(tmp_path, kind):
    path = _special(tmp_path, kind)
    before = os.stat(path).st_mode
    with pytest.raises(VerifyError, match=r"--json: expected a regular file or a new name, got .* which is a"):
        io.write_json(path, {"a": 1}, name="--json")
    assert os.stat(path).st_mode == before and stat.S_IFMT(before) != stat.S_IFREG
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]          # no temporary file


# --------------------------------------------------------------------------- 3. concurrency

def _forked(fn, *args) -> int:
    """Run ``fn(*args)`` in a forked child (the test's modules already loaded: no import cost);
    returns the child's pid. Its exit status: 0 when ``fn`` returned, 1 when it raised."""
    pid = os.fork()
    if pid == 0:   # pragma: no cover - the child
        code = 1
        try:
            fn(*args)
            code = 0
        except BaseException as exc:       # noqa: BLE001 - reported through the exit status
            sys.stderr.write(f"{type(exc).__name__}: {exc}\n")
        finally:
            os._exit(code)
    return pid


def _status(pid: int) -> int:
    _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status)


#: Each rename in the publishing children takes this much longer, so that the two processes'
#: steps interleave within a few publishes (a race the lock must close, every time).
RENAME_DELAY_S = 0.003


def _publish_many(target: Path, n: int, mode: str, go: int, times: Path) -> None:
    """Publish ``n`` runs into ``target`` once the parent says go (all publishers start together),
    recording when each call to publish_folder began and ended in ``times``."""
    if mode == "renames":
        io._exchange = lambda a, b: False           # the two-rename fallback (no renameat2)
    real_replace = os.replace

    def slow_replace(src, dst):
        real_replace(src, dst)
        time.sleep(RENAME_DELAY_S)

    os.replace = slow_replace                       # this forked child's own os module
    os.read(go, 1)
    spans = []
    for i in range(n):
        stage = io.staging_folder("--out", target)
        (stage / "report.json").write_text(str(i))
        began = time.monotonic()
        io.publish_folder(stage, target)
        spans.append((began, time.monotonic()))
    times.write_text(json.dumps(spans))


def _overlaps(a: list, b: list) -> int:
    """How many of ``a``'s spans overlap one of ``b``'s."""
    return sum(any(s < e2 and s2 < e for s2, e2 in b) for s, e in a)


#: Publishes per process: enough for two processes to overlap many times (each takes ~10 ms).
PUBLISHES = 25


def test_two_publishers_into_one_folder_take_turns(tmp_path):
    """Two processes publish into one folder, in each of the two ways (one atomic exchange; the
    fallback's two renames): never an error such as "Directory not empty", and with the exchange a
    reader never finds the folder absent. The four processes run at once."""
    targets = {mode: tmp_path / mode / "out" for mode in ("exchange", "renames")}
    for target in targets.values():
        target.parent.mkdir()
        io.publish_folder(io.staging_folder("--out", target), target)
    absent = {mode: 0 for mode in targets}
    stop = threading.Event()

    def reader():
        while not stop.is_set():
            for mode, target in targets.items():
                if not target.is_dir():
                    absent[mode] += 1

    go_r, go_w = os.pipe()
    times = {(mode, i): tmp_path / f"{mode}-{i}.json" for mode in targets for i in range(2)}
    pids = [_forked(_publish_many, targets[mode], PUBLISHES, mode, go_r, path) for (mode, i), path in times.items()]
    watcher = threading.Thread(target=reader)
    watcher.start()
    try:
        os.write(go_w, b"g" * len(pids))            # every publisher forked and waiting: all start at once
        codes = [_status(pid) for pid in pids]
    finally:
        stop.set()
        watcher.join()
        os.close(go_r)
        os.close(go_w)
    assert codes == [0, 0, 0, 0]
    for mode in targets:                            # the race was run: the two were in publish_folder together
        assert _overlaps(*(json.loads(times[mode, i].read_text()) for i in range(2))) > 0, mode
    for target in targets.values():
        assert io.is_run_folder(target) and sorted(p.name for p in target.parent.iterdir()) == ["out"]
    assert absent["exchange"] == 0            # readers always see the old run or the new one


# --------------------------------------------------------------------------- 4. signals


@pytest.fixture(autouse=True)
def _ctrl_c_as_in_a_terminal():
    """Python's own SIGINT handler in every test here, however pytest was started: a shell starts a
    background job with SIGINT ignored and Python keeps that, as do the processes it forks and starts,
    so a Ctrl-C that a test sends would reach nothing and the tests below would pass or fail for that
    reason alone. (A process started from here gets the default action, and Python's handler.)"""
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, previous)


def _children(pid: int) -> list[int]:
    out = []
    for d in Path("/proc").iterdir():
        if d.name.isdigit():
            try:
                fields = (d / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == pid:
                out.append(int(d.name))
    return out


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def _start_run(tmp_path, *argv):
    return subprocess.Popen([sys.executable, "-m", "verify", *argv, "--out", str(tmp_path / "run")], cwd=tmp_path,
                            env=_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True)


def _wait_for(proc, text: str) -> list[str]:
    lines, t0 = [], time.monotonic()
    for line in proc.stderr:
        lines.append(line)
        if text in line:
            return lines
        assert time.monotonic() - t0 < CHILD_DEADLINE_S, lines
    pytest.fail(f"the child ended before {text!r}: {''.join(lines)}")


def test_a_worker_whose_parent_is_gone_exits_at_once():
    """die_with_parent: a parent id that is not the real parent (it died before the signal was armed)."""
    from verify.run import die_with_parent

    assert _status(_forked(lambda: die_with_parent(os.getppid()))) == 0              # its parent lives: it goes on
    assert _status(_forked(lambda: die_with_parent(os.getppid() + 10**6))) == 1      # os._exit(1), at once


def _init_after_a_ctrl_c(parent: int) -> None:
    """``verify.run._worker_init``, after a Ctrl-C that reaches the worker before it (for the test below)."""
    import verify.run

    os.kill(os.getpid(), signal.SIGINT)
    verify.run._ORIGINAL_INIT(parent)


@pytest.mark.parametrize("pool", ["checks", "first-run-derivations"])
def test_a_ctrl_c_between_a_workers_fork_and_its_init_is_ignored_there(pool, tmp_path, monkeypatch, capfd):
    """A Ctrl-C reaches the whole process group, also a worker just forked, before its initializer
    ignores SIGINT: the worker must not raise KeyboardInterrupt there (a traceback on the terminal, a
    broken pool) but go on; the parent alone handles a Ctrl-C. The worker here signals itself at that
    moment, so the race is hit every time."""
    import verify.run

    monkeypatch.setattr(verify.run, "_ORIGINAL_INIT", verify.run._worker_init, raising=False)
    monkeypatch.setattr(verify.run, "_worker_init", _init_after_a_ctrl_c)
    if pool == "first-run-derivations":
        monkeypatch.setenv("MHA_NW_CACHE_DIR", str(tmp_path / "cache"))
        for claim in ("C2", "C3"):
            monkeypatch.delitem(proofs._CACHE, claim, raising=False)
    doc, ders = verify.run.run_report(["C2", "C3"], seed=0, quick=True, out=None, progress=False, jobs=2)
    assert [c["verdict"] for c in doc["claims"]] == ["exact", "exact"] and not doc["crashed"]
    if pool == "first-run-derivations":
        assert all(d.from_cache for d in ders)       # derived by the pool's workers, then loaded from the cache
    assert "Traceback" not in capfd.readouterr().err
    assert signal.SIGINT not in signal.pthread_sigmask(signal.SIG_BLOCK, [])   # the parent takes a Ctrl-C again


def test_an_interrupted_main_run_exits_130_with_one_line_and_leaves_the_previous_run(tmp_path, monkeypatch, capsys):
    import verify.run

    out = tmp_path / "run"
    assert main(["--quick", "--only", QUICK, "--out", str(out)]) == 0
    before = (out / "report.json").read_bytes()
    capsys.readouterr()

    def interrupted(*a, **k):
        raise KeyboardInterrupt

    monkeypatch.setattr(verify.run, "run_report", interrupted)
    try:
        code = main(["--quick", "--only", QUICK, "--out", str(out)])
    except KeyboardInterrupt:            # the traceback a user would see
        code = "KeyboardInterrupt escaped"
    assert code == 130
    assert "interrupted" in _one_error_line(capsys.readouterr().err)
    assert (out / "report.json").read_bytes() == before and sorted(p.name for p in tmp_path.iterdir()) == ["run"]


def test_ctrl_c_in_a_subcommand_exits_130_with_one_line(monkeypatch):
    """A real SIGINT reaches a subcommand (a forked child, its work replaced by a sleep)."""
    import verify.cli

    ready_r, ready_w = os.pipe()
    err_r, err_w = os.pipe()

    def slow(argv):
        os.write(ready_w, b"R")
        time.sleep(60)

    monkeypatch.setitem(verify.cli.COMMANDS, "replay", slow)
    pid = os.fork()
    if pid == 0:   # pragma: no cover - the child
        try:
            sys.stderr = os.fdopen(err_w, "w")
            code = verify.cli.main(["replay", "x.json"])
            sys.stderr.flush()
        finally:
            os._exit(locals().get("code", 99))
    os.close(err_w)
    assert os.read(ready_r, 1) == b"R"
    os.kill(pid, signal.SIGINT)
    assert _status(pid) == 130
    with os.fdopen(err_r) as fh:
        assert "interrupted" in _one_error_line(fh.read())


# --------------------------------------------------------------------------- 5. environments


def test_an_ascii_stdout_gets_the_table_in_ascii(tmp_path, monkeypatch):
    """What PYTHONIOENCODING=ascii gives: a stdout that raises on any non-ASCII character."""
    import io as stdio

    raw = stdio.BytesIO()
    stream = stdio.TextIOWrapper(raw, encoding="ascii", errors="strict")
    monkeypatch.setattr(sys, "stdout", stream)
    assert main(["--quick", "--only", QUICK, "--out", str(tmp_path / "run")]) == 0
    stream.flush()
    text = raw.getvalue().decode("ascii")
    doc = json.loads((tmp_path / "run" / "report.json").read_text())
    assert f"{QUICK}    {doc['claims'][0]['verdict']}" in text and "\\u" not in text
    row = text.split(f"\n{QUICK}    ")[1].splitlines()
    assert row[0].split()[0] == doc["claims"][0]["verdict"].split()[0]
    assert render(doc["claims"][0]["headline"], "ascii").split()[:3] == row[1].split()[:3]


@pytest.mark.slow
def test_an_ascii_terminal_gets_ascii_and_the_report(tmp_path):
    proc = subprocess.run([sys.executable, "-m", "verify", "--quick", "--only", QUICK, "--jobs", "1", "--out",
                           str(tmp_path / "run")], cwd=tmp_path, capture_output=True,
                          env=_env(PYTHONIOENCODING="ascii", LC_ALL="C", LANG="C"), timeout=CHILD_DEADLINE_S)
    assert proc.returncode == 0, proc.stderr.decode(errors="replace")[-2000:]
    text = proc.stdout.decode("ascii")                     # raises on any non-ASCII byte
    doc = json.loads((tmp_path / "run" / "report.json").read_text())
    assert [c["id"] for c in doc["claims"]] == [QUICK]
    assert "\\u" not in text and "\\x" not in text         # ASCII renderings, not escapes
    assert re.search(rf"^{QUICK} +{re.escape(doc['claims'][0]['verdict'])} ", text, flags=re.M) and "sqrt" in text


def test_the_report_is_in_place_before_anything_is_printed(tmp_path, monkeypatch):
    from verify.outputs import report

    out = tmp_path / "run"
    seen = []
    real_table = report.table

    def table(doc, **kw):
        seen.append(io.is_run_folder(out) and (out / "report.json").is_file() and (out / "report.md").is_file())
        return real_table(doc, **kw)

    monkeypatch.setattr(report, "table", table)
    printed = []
    monkeypatch.setattr("builtins.print", lambda *a, **k: printed.append((out / "report.json").is_file()))
    assert main(["--quick", "--only", QUICK, "--out", str(out)]) == 0
    assert seen == [True] and printed and all(printed)


_KERNEL_PROBE = """
import json, math, sys
import numpy as np
from verify.numeric import nw
est = nw.nw_estimate(np.array([[1.0, 0.0]]), np.array([[0.0, 0.0], [1.0, 0.0]]), np.array([[0.0], [1.0]]), scale=1.0)
est2 = nw.nw_estimate(np.array([[1.0, 0.0]]), np.array([[0.0, 0.0], [1.0, 0.0]]), np.array([[0.0], [1.0]]), scale=1.0)
print(json.dumps({"backend": nw.get_backend(), "est": float(est[0, 0]), "est2": float(est2[0, 0])}))
"""
_NO_LOCATOR = ("import tempfile; tempfile.gettempdir = lambda: {file!r}\n"
               "from numba.core import caching; caching.CacheImpl._locator_classes[:] = []\n")


@pytest.fixture
def kernel_copy(monkeypatch):
    """Execute verify/numeric/_kernel.py again as a new module (the import-time checks run anew;
    what it records on verify.numeric is undone afterwards)."""
    import importlib.util

    import verify.numeric
    from verify.numeric import _kernel

    monkeypatch.setattr(verify.numeric, "_kernel_unusable", None, raising=False)

    def load():
        spec = importlib.util.spec_from_file_location("verify.numeric._kernel_copy", _kernel.__file__)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module
    return load


def test_disabled_jit_ends_the_kernel_import_with_one_warning_once(kernel_copy, monkeypatch, capsys):
    import numba

    monkeypatch.setattr(numba.config, "DISABLE_JIT", True)
    for _ in range(3):
        with pytest.raises(ImportError, match="NUMBA_DISABLE_JIT"):
            kernel_copy()
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("warning: the compiled NW kernel is not used (NUMBA_DISABLE_JIT")


def test_cannot_cache_ends_the_kernel_import_with_one_warning(kernel_copy, monkeypatch, capsys, tmp_path):
    import tempfile

    from numba.core import caching

    blocker = tmp_path / "a-file"
    blocker.write_text("x")
    monkeypatch.setenv("MHA_NW_CACHE_DIR", str(blocker / "cache"))
    monkeypatch.delenv("NUMBA_CACHE_DIR", raising=False)
    monkeypatch.setattr(tempfile, "gettempdir", lambda: str(blocker))
    monkeypatch.setattr(caching.CacheImpl, "_locator_classes", [])      # numba's own places unusable too
    with pytest.raises(ImportError, match="cannot cache function"):
        kernel_copy()
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "cannot cache function 'exp'" in err[0] and err[0].startswith("warning: ")


def test_a_failed_import_sends_nw_to_numpy_with_the_same_numbers(monkeypatch):
    from verify.numeric import nw

    monkeypatch.setattr(nw, "_kernel_module", None)
    import verify.numeric

    monkeypatch.setattr(verify.numeric, "_kernel_unusable", "a test's reason", raising=False)
    monkeypatch.delitem(sys.modules, "verify.numeric._kernel")
    monkeypatch.delattr(verify.numeric, "_kernel")
    monkeypatch.setattr(nw, "_backend", "auto")
    assert nw.get_backend() == "numpy"
    est = nw.nw_estimate([[1.0, 0.0]], [[0.0, 0.0], [1.0, 0.0]], [[0.0], [1.0]], scale=1.0)
    assert est[0, 0] == pytest.approx(math.e / (1 + math.e), rel=1e-15)


@pytest.mark.slow
def test_numba_that_cannot_run_falls_back_to_numpy_with_one_warning(tmp_path):
    """NUMBA_DISABLE_JIT=1, NUMBA_NUM_THREADS=0, and no folder that can hold the compiled code
    (numba's "cannot cache function 'exp'"): three children, started together."""
    blocker = tmp_path / "a-file"
    blocker.write_text("x")
    cases = {"disable-jit": ({"NUMBA_DISABLE_JIT": "1"}, _KERNEL_PROBE),
             "no-threads": ({"NUMBA_NUM_THREADS": "0"}, _KERNEL_PROBE),
             "cannot-cache": ({"MHA_NW_CACHE_DIR": str(blocker / "cache"), "HOME": str(blocker)},
                              _NO_LOCATOR.format(file=str(blocker)) + _KERNEL_PROBE)}
    procs = {}
    for case, (extra, code) in cases.items():
        env = {k: v for k, v in _env(MHA_NW_BACKEND="auto", **extra).items() if k != "NUMBA_CACHE_DIR"}
        procs[case] = subprocess.Popen([sys.executable, "-c", code], env=env, stdout=subprocess.PIPE,
                                       stderr=subprocess.PIPE, text=True)
    for case, proc in procs.items():
        out, err = proc.communicate(timeout=CHILD_DEADLINE_S)
        assert proc.returncode == 0, (case, err[-2000:])
        doc = json.loads(out)
        assert doc["backend"] == "numpy", case
        assert doc["est"] == pytest.approx(math.e / (1 + math.e), rel=1e-15) and doc["est2"] == doc["est"]
        warnings = err.strip().splitlines()
        assert len(warnings) == 1 and warnings[0].startswith("warning: the compiled NW kernel is not used"), (case, err)


def test_an_unwritable_home_moves_the_kernel_cache_to_a_private_temporary_folder(tmp_path, monkeypatch):
    import tempfile

    from verify.numeric import _kernel

    blocker = tmp_path / "a-file"
    blocker.write_text("x")
    for var in ("MHA_NW_CACHE_DIR", "XDG_CACHE_HOME"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("HOME", str(blocker))
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    private = tmp_path / f"mha-nw-verify-{os.getuid()}"
    assert _kernel.cache_dir() == private / "numba" and stat.S_IMODE(os.stat(private).st_mode) == 0o700
    monkeypatch.setenv("MHA_NW_CACHE_DIR", str(blocker / "cache"))        # an explicit folder that cannot be
    assert _kernel.cache_dir() == private / "numba"
    monkeypatch.setenv("MHA_NW_CACHE_DIR", str(tmp_path / "mine"))
    assert _kernel.cache_dir() == tmp_path / "mine" / "numba"


def _tiny_derivation(claim="C3"):
    import sympy as sp

    from proofs.core import Derivation

    der = Derivation(claim=claim, title="tiny", stated="x")
    x = sp.Symbol("x")
    der.step("square", sp.Eq((x + 1) ** 2, x**2 + 2 * x + 1), by="expand")
    return der


@pytest.fixture
def no_home(monkeypatch, tmp_path):
    """HOME unset and no passwd entry for this user; the system's temporary folder is tmp_path."""
    import pwd
    import tempfile

    for var in ("HOME", "XDG_CACHE_HOME", "MHA_NW_CACHE_DIR", cache.ENV_REDERIVE):
        monkeypatch.delenv(var, raising=False)

    def no_entry(uid):
        raise KeyError(f"getpwuid(): uid not found: {uid}")

    monkeypatch.setattr(pwd, "getpwuid", no_entry)
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    return tmp_path


def test_no_home_at_all_puts_the_derivation_cache_in_a_private_temporary_folder(no_home):
    with pytest.raises(RuntimeError):
        Path.home()                               # what the cache used to call unguarded
    where = cache.cache_dir()
    private = no_home / f"mha-nw-verify-{os.getuid()}"
    assert where == private / "derivations" and stat.S_IMODE(os.stat(private).st_mode) == 0o700
    der = _tiny_derivation()
    assert cache.store("C3", "k" * 64, der) is True
    back = cache.load("C3", "k" * 64)
    assert back is not None and back.to_dict() == der.to_dict()


def test_a_home_that_is_a_file_and_a_hijacked_temporary_name_are_not_used(no_home, monkeypatch):
    blocker = no_home / "a-file"
    blocker.write_text("x")
    monkeypatch.setenv("HOME", str(blocker))
    elsewhere = no_home / "someone-elses"
    elsewhere.mkdir()
    (no_home / f"mha-nw-verify-{os.getuid()}").symlink_to(elsewhere)      # planted before the run
    where = cache.cache_dir()
    assert not str(where).startswith(str(blocker)) and where.parent.parent == no_home
    assert where.parent.name.startswith(f"mha-nw-verify-{os.getuid()}-")   # a fresh mkdtemp folder
    assert cache.store("C3", "k" * 64, _tiny_derivation()) and not list(elsewhere.iterdir())


# --------------------------------------------------------------------------- 6. progress and derivation summaries


def test_progress_tells_a_cache_hit_from_a_derivation(tmp_path, monkeypatch, capsys):
    from verify.run import run_report

    monkeypatch.setenv("MHA_NW_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv(cache.ENV_REDERIVE, raising=False)
    monkeypatch.setattr(verify.claims, "run_claim", lambda claim, ctx: (_ for _ in ()).throw(RuntimeError("skip")))
    monkeypatch.setattr(proofs, "_CACHE", {})
    monkeypatch.setattr(proofs.DERIVATIONS["C3"], "build", lambda: _tiny_derivation())

    def labels():
        run_report(["C3"], seed=0, quick=True, out=tmp_path / "o", jobs=1)
        return [ln.split("] ", 1)[1].split(" ", 1)[1] for ln in capsys.readouterr().err.splitlines()
                if ln.startswith("[") and "C3" in ln and "check" not in ln]

    assert labels() == ["deriving C3", "derived C3"]                  # an empty cache
    monkeypatch.setattr(proofs, "_CACHE", {})
    assert labels() == ["loading C3 (cached)", "loaded C3 (cached)"]  # from the disk cache
    assert labels() == ["loading C3 (cached)", "loaded C3 (cached)"]  # from this process's memory


def test_the_derivation_summary_is_one_ascii_line_that_counts_no_points(monkeypatch):
    """One line per derivation, its steps checked (the table's counts are the only counts: a
    derived form that differs from the stated one is a correction there, issue #35 item 3)."""
    for claim in ("C1", "C4", "C7"):
        proofs.derivation(claim)                     # on disk from here on, even from an empty cache
        monkeypatch.delitem(proofs._CACHE, claim)    # so that the next call reads it from there
        der = proofs.derivation(claim)
        text = _derivation_summary(der)
        assert text == f"{claim:<4}{len(der.steps)}/{len(der.steps)} steps checked (from the cache)"
        assert text.isascii() and "\n" not in text and len(text) <= 80


# --------------------------------------------------------------------------- 7. options


def test_quick_and_large_together_are_refused(capsys, monkeypatch):
    _no_work(monkeypatch)
    assert main(["--quick", "--large", "--only", QUICK]) == 2
    line = _one_error_line(capsys.readouterr().err)
    assert "--quick" in line and "--large" in line


@pytest.mark.parametrize("option", ["--workers", "--threads", "-j"])
def test_jobs_is_the_main_runs_one_parallelism_option(option, capsys, monkeypatch):
    _no_work(monkeypatch)
    assert main([option, "2", "--only", QUICK]) == 2
    assert "unrecognized" in _one_error_line(capsys.readouterr().err)


def test_help_names_jobs_only(capsys):
    from verify.cli import _parser

    text = _parser().format_help()
    assert "--jobs" in text and "--workers" not in text and "--threads" not in text


# --------------------------------------------------------------------------- 8. file modes


@pytest.fixture
def tight_umask():
    old = os.umask(0o077)
    yield
    os.umask(old)


def _modes(root: Path) -> dict[str, int]:
    return {str(p.relative_to(root)): stat.S_IMODE(p.lstat().st_mode) for p in root.rglob("*")}


def test_every_file_written_is_0644_and_every_folder_0755_whatever_the_umask(tmp_path, tight_umask):
    from verify.outputs import plots

    io.atomic_write_text(tmp_path / "a" / "b" / "x.txt", "x")
    io.write_json(tmp_path / "y.json", {"a": 1})
    fig, ax = plots.new_figure("t", "x", "y")
    ax.plot([0, 1], [1, 2])
    plots.save(fig, tmp_path / "plots" / "p.png")
    modes = _modes(tmp_path)
    for name, mode in modes.items():
        want = io.FOLDER_MODE if (tmp_path / name).is_dir() else io.FILE_MODE
        assert mode == want == (0o755 if (tmp_path / name).is_dir() else 0o644), (name, oct(mode))
    assert {"a", "a/b", "a/b/x.txt", "y.json", "plots/p.png", "plots/p.data.json"} <= set(modes)


def test_a_whole_run_writes_0644_files_and_0755_folders_under_a_tight_umask(tmp_path, tight_umask):
    out = tmp_path / "new" / "run"
    assert main(["--quick", "--only", QUICK, "--out", str(out)]) == 0
    modes = _modes(tmp_path)
    assert len(modes) >= 7                                   # report.json, report.md, marker, plots, counterexamples
    for name, mode in modes.items():
        assert mode == (0o755 if (tmp_path / name).is_dir() else 0o644), (name, oct(mode))


# --------------------------------------------------------------------------- 9. issue 37: nothing lost


def _reaped_child() -> int:
    pid = os.fork()
    if pid == 0:   # pragma: no cover - the child
        os._exit(0)
    os.waitpid(pid, 0)
    return pid


def _users_folders(parent: Path, name: str) -> dict[Path, str]:
    """Folders of the user's beside ``parent / name`` whose names look like a run's leftovers: an
    ``.old-`` with a year, ``.old-`` and ``.partial-`` with the id of a process that has ended."""
    dead = _reaped_child()
    made = {}
    for folder in (f".{name}.old-2024", f".{name}.old-{dead}", f".{name}.partial-{dead}.abc", f".{name}.partial-{dead}.x.y"):
        (parent / folder).mkdir()
        (parent / folder / "precious.txt").write_text(f"the user's {folder}")
        made[parent / folder] = f"the user's {folder}"
    return made


@pytest.mark.parametrize("out_exists", [True, False], ids=["out-present", "out-absent"])
def test_a_users_folders_named_like_leftovers_are_never_moved_or_deleted(tmp_path, out_exists):
    """Issue 37 (1): leftovers are judged by a marker the package wrote inside them, never by their
    name. A run beside the user's ``.OUT.old-2024`` (and ``.old-``/``.partial-`` names with the id of
    an ended process) leaves them as they were, and never moves one into OUT."""
    out = tmp_path / "run"
    if out_exists:
        assert main(["--quick", "--only", QUICK, "--out", str(out)]) == 0
    users = _users_folders(tmp_path, "run")
    assert main(["--quick", "--only", QUICK, "--out", str(out)]) == 0
    for folder, text in users.items():
        assert (folder / "precious.txt").read_text() == text, folder
    assert io.is_run_folder(out) and not (out / "precious.txt").exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(["run", *(f.name for f in users)])


def _stage_and_die(target: Path, report: str) -> None:
    """In a forked child: stage a run into ``target``, write into it, and end without publishing."""
    stage = io.staging_folder("--out", target)
    (stage / "report.json").write_text(report)
    os._exit(0)


def test_a_killed_runs_staging_folder_is_removed_by_its_marker_and_a_copy_is_not(tmp_path):
    """A run that ended before publishing leaves its staging folder; the next run removes it because
    the marker inside says which process made it (ended now) and which folder it is (its token is in
    the name). A copy of that folder under another token's name, and one whose process lives, are kept."""
    target = tmp_path / "run"
    assert _status(_forked(_stage_and_die, target, "killed")) == 0
    (left,) = [p for p in tmp_path.iterdir() if p.name != "run"]
    marker = json.loads((left / io.STAGING_MARKER).read_text())
    assert marker["pid"] != os.getpid() and marker["token"] in left.name and marker["target"] == "run"
    copy = tmp_path / left.name.replace(marker["token"], "f" * len(marker["token"]))
    shutil.copytree(left, copy)
    mine = io.staging_folder("--out", target)              # this process's own: it lives
    assert not left.exists()                               # the ended run's staging folder is gone
    assert copy.is_dir() and (copy / io.STAGING_MARKER).is_file()   # a marker not naming its folder: kept
    again = io.staging_folder("--out", target)
    assert mine.is_dir()                                   # a living process's staging folder: kept
    for stage in (mine, again):
        io.discard_staging(stage)
        assert not stage.exists() and not stage.parent.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == [copy.name]


def _publish_and_die_between_renames(target: Path) -> None:
    """In a forked child: publish a second run with the two-rename fallback and end between them."""
    io._exchange = lambda a, b: False
    stage = io.staging_folder("--out", target)
    (stage / "report.json").write_text("2")
    real_replace = os.replace
    calls = []

    def replace(src, dst):
        real_replace(src, dst)
        calls.append(dst)
        if len(calls) == 1:          # the old run moved aside, the new one not yet in place
            os._exit(0)

    io.os.replace = replace
    io.publish_folder(stage, target)


def test_a_run_killed_between_its_two_renames_is_put_back_by_the_next(tmp_path):
    target = tmp_path / "run"
    first = io.staging_folder("--out", target)
    (first / "report.json").write_text("1")
    io.publish_folder(first, target)
    assert _status(_forked(_publish_and_die_between_renames, target)) == 0
    assert not target.exists()
    stage = io.staging_folder("--out", target)              # the next run puts the previous one back
    assert (target / "report.json").read_text() == "1" and io.is_run_folder(target)
    io.discard_staging(stage)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["run"]


# --- output folders of the other writing commands: empty, or carrying the command's own marker


def _tiny_checkpoint(folder: Path) -> Path:
    import numpy as np
    import safetensors.numpy

    folder.mkdir(parents=True)
    tensors = {f"encoder.layer.0.attention.self.{p}.weight": np.eye(4, dtype=np.float32) for p in ("query", "key")}
    (folder / "model.safetensors").write_bytes(safetensors.numpy.save(tensors))
    (folder / "config.json").write_text(json.dumps({"hidden_size": 4, "num_attention_heads": 2, "num_hidden_layers": 1}))
    return folder


def _empty_report(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "r.json").write_text(json.dumps({"schema": "mha-nw-verify/report", "schema_version": 3, "claims": []}))
    return folder / "r.json"


def _writing_command(which: str, tmp_path: Path, out: Path) -> tuple[list[str], str, str]:
    """``(argv, the output flag, the module attribute that does the work)`` of a writing command."""
    if which == "sweep":
        return ["sweep", "demo", "--tasks", "2", "--sleep", "0", "--jobs", "1", "--no-progress", "-o", str(out)], "--out", \
            "verify.experiments.sweep:_run_local"
    if which == "hdi":
        return ["hdi", str(_tiny_checkpoint(tmp_path / "model")), "-o", str(out)], "--out DIR", \
            "verify.experiments.checkpoint:analyze_checkpoint"
    return ["latex", "--report", str(_empty_report(tmp_path / "report")), "-o", str(out)], "-o DIR", \
        "verify.outputs.latex:write_export"


USERS_FILES = {"sweep": ("results.csv", "sweep.json"), "hdi": ("hdi_per_layer.png",),
               "latex": ("verification.tex", "macros.tex")}


@pytest.mark.parametrize("which", list(USERS_FILES))
def test_a_writing_command_refuses_a_folder_of_the_users_before_any_work(which, tmp_path, monkeypatch, capsys):
    """Issue 37 (4): ``sweep -o``, ``hdi -o`` and ``latex -o`` replaced the user's files of the same
    names; they now write only into an empty folder or one carrying their own marker."""
    import importlib

    out = tmp_path / "out"
    out.mkdir()
    for name in USERS_FILES[which]:
        (out / name).write_text(f"the user's {name}")
    argv, flag, work = _writing_command(which, tmp_path, out)
    module, attr = work.split(":")

    def forbidden(*a, **k):
        raise AssertionError("the command started its work")

    monkeypatch.setattr(importlib.import_module(module), attr, forbidden)
    assert main(argv) == 2
    line = _one_error_line(capsys.readouterr().err)
    assert line.startswith(f"error: {flag}: ") and io.OUTPUT_MARKER in line and "without it" in line
    assert {p.name: p.read_text() for p in out.iterdir()} == {n: f"the user's {n}" for n in USERS_FILES[which]}


@pytest.mark.parametrize("which", list(USERS_FILES))
def test_a_writing_command_writes_its_marker_and_runs_again_into_its_own_folder(which, tmp_path, capsys):
    out = tmp_path / "new" / "out"
    argv, flag, _ = _writing_command(which, tmp_path, out)
    assert main(argv) == 0
    doc = json.loads((out / io.OUTPUT_MARKER).read_text())
    assert doc["schema"] == io.OUTPUT_SCHEMA and doc["command"] == f"python -m verify {which}"
    assert main(argv) == 0                               # its own folder: written again
    other = [c for c in USERS_FILES if c != which][0]
    argv2, flag2, _ = _writing_command(other, tmp_path / other, out)
    capsys.readouterr()
    assert main(argv2) == 2                              # another command's folder: refused
    line = _one_error_line(capsys.readouterr().err)
    assert line.startswith(f"error: {flag2}: ") and f"which python -m verify {which} wrote" in line


def test_two_sweeps_into_one_folder_at_once_the_second_is_refused(tmp_path, capsys):
    """Issue 37 (9): two sweeps on one folder both exited 0 and the last table written won; the
    second now holds off with one line (exit 2) while the first holds the folder's lock."""
    from verify.experiments import sweep

    out = tmp_path / "o"
    first_done = threading.Event()
    result = {}

    def first():
        try:
            result["first"] = sweep.run_sweep(sweep.demo_grid(6, 0.3), out, workers=1, progress=False)
        except BaseException as exc:   # noqa: BLE001 - reported below
            result["first"] = exc
        first_done.set()

    thread = threading.Thread(target=first)
    thread.start()
    try:
        deadline = time.monotonic() + CHILD_DEADLINE_S
        while not list((out / "tasks").glob("*.json")):
            assert time.monotonic() < deadline and not first_done.is_set(), result
            time.sleep(0.02)
        code = main(["sweep", "c7", "--quick", "--jobs", "1", "--no-progress", "-o", str(out)])
        line = _one_error_line(capsys.readouterr().err)
        assert not first_done.is_set()                   # the second was refused while the first ran
    finally:
        thread.join(CHILD_DEADLINE_S)
    assert code == 2 and line.startswith("error: --out: ") and "another" in line
    assert isinstance(result["first"], sweep.SweepResult) and result["first"].computed == 6
    assert len(sweep.read_table(out / "results.csv")) == 6            # the first sweep's table, whole


# --- the scheduler: its address checked before use, the handshake bounded, a non-Dask peer refused


class _Peer:
    """A loopback TCP server in a thread that answers every connection as ``kind`` does: "http"
    (waits for a request, as ``python3 -m http.server``), "ssh" (its banner first), "closes" (hangs
    up at once), "huge" (a Dask-like length prefix of 3 EiB)."""

    def __init__(self, kind: str) -> None:
        self.kind = kind
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.port = self.sock.getsockname()[1]
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self.serve, daemon=True)
        self.thread.start()

    def serve(self) -> None:
        self.sock.settimeout(0.1)
        conns = []
        while not self.stop.is_set():
            try:
                conn, _ = self.sock.accept()
            except OSError:
                continue
            conns.append(conn)
            if self.kind == "ssh":
                conn.sendall(b"SSH-2.0-OpenSSH_9.6p1 Debian-4\r\n")
            elif self.kind == "huge":
                conn.sendall((3 * 2**60).to_bytes(8, "little"))
            elif self.kind == "closes":
                conn.close()
        for conn in conns:
            conn.close()
        self.sock.close()

    def close(self) -> None:
        self.stop.set()
        self.thread.join(5)


#: The scheduler timeout in these tests (the default is SCHEDULER_TIMEOUT_S): a silent peer is refused after it.
TEST_SCHEDULER_TIMEOUT_S = 1.0


@pytest.mark.parametrize("kind", ["http", "ssh", "closes", "huge"])
def test_a_peer_that_is_not_a_dask_scheduler_is_refused_in_one_line_within_the_timeout(kind, tmp_path, monkeypatch, capsys):
    from verify.experiments import sweep

    monkeypatch.setattr(sweep, "SCHEDULER_TIMEOUT_S", TEST_SCHEDULER_TIMEOUT_S, raising=False)
    peer = _Peer(kind)
    outcome = {}

    def run():
        try:
            outcome["code"] = main(["sweep", "demo", "--tasks", "2", "--sleep", "0", "--no-progress", "-o",
                                    str(tmp_path / "o"), "--scheduler", f"tcp://127.0.0.1:{peer.port}"])
        except BaseException as exc:   # noqa: BLE001 - a traceback a user would see
            outcome["code"] = exc

    t0 = time.monotonic()
    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(TEST_SCHEDULER_TIMEOUT_S + 10)
    elapsed = time.monotonic() - t0
    peer.close()
    assert not thread.is_alive(), f"still connecting after {elapsed:.0f} s"
    assert outcome["code"] == 2, outcome
    line = _one_error_line(capsys.readouterr().err)
    assert line.startswith("error: --scheduler: ") and "not a Dask scheduler" in line and f":{peer.port}'" in line
    assert elapsed < TEST_SCHEDULER_TIMEOUT_S + 5


# --- workers and Ctrl-C of a sweep, and Ctrl-C while the package is imported


def _sweep_child(out: Path, pipes: bool = True) -> subprocess.Popen:
    """A sweep of 24 tasks of 0.3 s on 2 workers (its output piped, or discarded: a worker that
    outlives the sweep would hold a pipe open, and reading it would wait for that worker)."""
    stream = subprocess.PIPE if pipes else subprocess.DEVNULL
    return subprocess.Popen([sys.executable, "-m", "verify", "sweep", "demo", "--tasks", "24", "--sleep", "0.3",
                             "--jobs", "2", "--no-progress", "-o", str(out)], cwd=out.parent, env=_env(),
                            stdout=stream, stderr=stream, text=True, start_new_session=True)


def _wait_for_tasks(proc, out: Path, n: int) -> None:
    deadline = time.monotonic() + CHILD_DEADLINE_S
    while len(list((out / "tasks").glob("*.json"))) < n:
        assert proc.poll() is None, proc.returncode
        assert time.monotonic() < deadline, "the sweep made no progress"
        time.sleep(0.05)


def _descendants(pid: int) -> list[int]:
    found, todo = [], [pid]
    while todo:
        kids = _children(todo.pop())
        found += kids
        todo += kids
    return found


def _alive_after(workers: list[int], seconds: float) -> list[int]:
    """The workers still alive once they had ``seconds`` to end."""
    deadline = time.monotonic() + seconds
    while any(_alive(w) for w in workers) and time.monotonic() < deadline:
        time.sleep(0.05)
    return [w for w in workers if _alive(w)]


@contextlib.contextmanager
def _parallel_child(tmp_path: Path, command: str, pipes: bool = True):
    """A parallel run or a sweep (:func:`_sweep_child`) in a session of its own, once its 2 workers
    run: (the child, its descendants); whatever is left of its group is killed at the end."""
    out = tmp_path / "o"
    if command == "run":
        proc = _start_run(tmp_path, "--quick", "--jobs", "2", "--only", "C2,C5,C6,C7")
    else:
        proc = _sweep_child(out, pipes)
    try:
        if command == "run":
            _wait_for(proc, "in 2 processes")
        else:
            _wait_for_tasks(proc, out, 2)
        yield proc, _descendants(proc.pid)
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)


@pytest.mark.slow
@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads the process table from /proc")
@pytest.mark.parametrize("command", ["run", "sweep"])
def test_sigkill_of_the_parent_leaves_no_worker_behind(tmp_path, command):
    """A parallel run's workers, and a sweep's (with multiprocessing's resource tracker, issue 37 (5)), end
    with it."""
    with _parallel_child(tmp_path, command, pipes=False) as (proc, workers):
        assert len(workers) >= 2, workers
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        assert not _alive_after(workers, 10)


@pytest.mark.slow
@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads the process table from /proc")
@pytest.mark.parametrize("command", ["run", "sweep"])
def test_ctrl_c_during_a_parallel_run_exits_130_with_one_line_and_no_worker(tmp_path, command):
    """Issue 37 (6): a Ctrl-C reaches the whole process group: exit 130, one line, no traceback from the
    parent or a worker, no worker left; a run leaves no folder, a sweep the table of its finished tasks."""
    with _parallel_child(tmp_path, command) as (proc, workers):
        os.killpg(proc.pid, signal.SIGINT)
        _, err = proc.communicate(timeout=CHILD_DEADLINE_S)
        assert not _alive_after(workers, 0.2 if command == "run" else 10)
    assert proc.returncode == 130, err
    line = _one_error_line(err)
    assert line.startswith("error: interrupted") and "Traceback" not in err
    if command == "run":
        assert list(tmp_path.iterdir()) == []                 # no run folder, no staging folder left
    else:
        rows = (tmp_path / "o" / "results.csv").read_text().splitlines()
        assert "resume" in line and 2 <= len(rows) - 1 < 24, rows


#: Sends this process a SIGINT when the named module starts to be imported (or, for "exit", at the
#: last atexit step), so that the Ctrl-C lands at that moment every time.
_SIGINT_AT = """
import atexit, os, signal, sys, time
WHEN = os.environ["SIGINT_AT"]

def interrupt():
    os.kill(os.getpid(), signal.SIGINT)
    time.sleep(2)              # Python runs the handler at its next step; this one never ends normally

class Finder:
    def find_spec(self, name, path=None, target=None):
        if name == WHEN:
            sys.meta_path.remove(self)
            interrupt()
        return None

if WHEN == "exit":
    atexit.register(interrupt)     # registered first: it runs last
else:
    sys.meta_path.insert(0, Finder())
"""


@pytest.mark.parametrize("when", ["sympy", "verify.cli", "numpy", "verify.experiments.allocate", "exit"],
                         ids=["importing-the-package", "importing-the-cli", "importing-numpy", "in-the-command",
                              "at-exit"])
def test_ctrl_c_at_every_moment_of_a_command_is_one_line_and_exit_130(when, tmp_path):
    """Issue 37 (6): a Ctrl-C while ``python -m verify`` still imports the package (a traceback and
    exit -2 before), while a command runs, and while it exits: one line, exit 130."""
    (tmp_path / "sitecustomize.py").write_text(_SIGINT_AT)
    proc = subprocess.run([sys.executable, "-m", "verify", "allocate", "--budget", "96", "--n", "1e6", "--dim", "8"],
                          cwd=tmp_path, env=_env(PYTHONPATH=f"{tmp_path}{os.pathsep}{ROOT}", SIGINT_AT=when),
                          capture_output=True, text=True, timeout=CHILD_DEADLINE_S)
    assert proc.returncode == 130, (proc.returncode, proc.stderr[-3000:])
    line = _one_error_line(proc.stderr)
    assert line.startswith("error: interrupted") and "Traceback" not in proc.stderr
