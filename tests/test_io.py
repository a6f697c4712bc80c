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
