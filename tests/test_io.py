"""verify/io.py: atomic writes, strict JSON, regular files, the staging folder and its publication."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from verify import io
from verify.errors import VerifyError


def test_atomic_write_leaves_the_old_file_when_the_move_fails(tmp_path, monkeypatch):
    target = tmp_path / "report.json"
    target.write_text("old")
    monkeypatch.setattr(io.os, "replace", lambda a, b: (_ for _ in ()).throw(OSError("disk full")))
    with pytest.raises(OSError):
        io.atomic_write_text(target, "new")
    assert target.read_text() == "old" and sorted(p.name for p in tmp_path.iterdir()) == ["report.json"]


def test_a_writer_killed_mid_write_leaves_the_old_file(tmp_path):
    target = tmp_path / "big.json"
    target.write_text("old")
    code = ("import os, signal, sys; from verify import io\n"
            "real = os.fsync\n"
            "def die(fd): os.kill(os.getpid(), signal.SIGKILL)\n"
            "os.fsync = die\n"
            f"io.atomic_write_text({str(target)!r}, 'x' * 10_000_000)\n")
    proc = subprocess.run([sys.executable, "-c", code], env={**os.environ, "PYTHONPATH": os.getcwd()})
    assert proc.returncode == -9
    assert target.read_text() == "old"


@pytest.mark.parametrize("doc", [float("nan"), {"a": float("inf")}, [1.0, -float("inf")]], ids=["nan", "inf", "-inf"])
def test_non_finite_numbers_are_never_written(doc, tmp_path):
    with pytest.raises(ValueError):
        io.write_json(tmp_path / "x.json", doc)
    assert not list(tmp_path.iterdir())


@pytest.mark.parametrize("text,match", [
    ('{"a": NaN}', "NaN"), ('{"a": Infinity}', "Infinity"), ('{"a": -Infinity}', "Infinity"),
    ('{"a": 1, "a": 2}', "appears twice"), ("[" * 65 + "]" * 65, "nested at most 64"), ('{"a": ', "strict JSON"),
], ids=["nan", "inf", "minus-inf", "duplicate-key", "too-deep", "truncated"])
def test_strict_reading(text, match):
    with pytest.raises(VerifyError, match=match):
        io.loads_json("FILE", text)
    assert json.loads("[" * 64 + "]" * 64) is not None      # the stdlib's own reading of the depth case


def test_depth_scan_ignores_brackets_in_strings():
    s = "[" * 500 + '"\\\\{'                   # brackets, a quote and escaped backslashes inside a string
    assert io.loads_json("FILE", json.dumps({"s": s})) == {"s": s}


def test_read_json_refuses_what_is_not_a_regular_file(tmp_path):
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    with pytest.raises(VerifyError, match="not a regular file"):
        io.read_json("FILE", fifo)
    with pytest.raises(VerifyError, match="a folder"):
        io.read_json("FILE", tmp_path)
    big = tmp_path / "big.json"
    big.write_text("[" + "0," * 100 + "0]")
    with pytest.raises(VerifyError, match="at most 10 bytes"):
        io.read_json("FILE", big, max_bytes=10)


def test_staging_refuses_foreign_folders_and_files(tmp_path):
    (tmp_path / "file").write_text("x")
    with pytest.raises(VerifyError, match="which is a file"):
        io.staging_folder("--out", tmp_path / "file")
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "notes.txt").write_text("x")
    with pytest.raises(VerifyError, match="without it"):
        io.staging_folder("--out", tmp_path / "mine")


def test_publish_replaces_and_leaves_folders_without_the_marker_alone(tmp_path):
    """A run replaces its own folder; folders beside it whose names look like a dead run's leftovers
    but hold no staging marker are the user's, and stay (issue 37; the package's own leftovers, judged
    by their marker, are removed or put back: tests/test_places.py)."""
    target = tmp_path / "out"
    stage = io.staging_folder("--out", target)
    (stage / "report.json").write_text("1")
    io.publish_folder(stage, target)
    assert (target / "report.json").read_text() == "1" and oct(target.stat().st_mode & 0o777) != "0o700"
    dead_pid = 2**22 + 12345
    named = [tmp_path / f".out.old-{dead_pid}", tmp_path / f".out.partial-{dead_pid}.abc"]
    for folder in named:
        folder.mkdir()
        (folder / "notes.txt").write_text("the user's")
    stage = io.staging_folder("--out", target)
    (stage / "report.json").write_text("2")
    io.publish_folder(stage, target)
    assert (target / "report.json").read_text() == "2"
    assert all((folder / "notes.txt").read_text() == "the user's" for folder in named)
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(["out", *(f.name for f in named)])
