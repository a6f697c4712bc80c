"""Files the package writes and reads: atomic writes, strict JSON, bounded reads.

Every file is written to a temporary name in its own folder and moved into place with
``os.replace``, so a reader sees either the previous file or the new one, never a part.
JSON is written with ``allow_nan=False`` and read back rejecting ``NaN``/``Infinity``
literals, duplicate keys, nesting deeper than :data:`MAX_JSON_DEPTH` and files larger
than :data:`MAX_JSON_BYTES`, each with the package's error naming the file.
"""

from __future__ import annotations

import json
import os
import shutil
import stat
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

from verify.errors import VerifyError

__all__ = ["atomic_write_bytes", "atomic_write_text", "dump_json", "write_json", "read_json", "loads_json",
           "jsonable", "regular_file", "staging_folder", "publish_folder", "MAX_JSON_DEPTH", "MAX_JSON_BYTES"]

#: Deeper nesting than any file the package writes (report.json is < 12 levels deep).
MAX_JSON_DEPTH = 64
#: Larger than any file the package writes (a full report.json is ~1 MB).
MAX_JSON_BYTES = 64 * 2**20


def atomic_write_bytes(path: Path | str, data: bytes) -> Path:
    """Write ``data`` to ``path`` through a temporary file in the same folder and ``os.replace``."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise
    return path


def atomic_write_text(path: Path | str, text: str, *, encoding: str = "utf-8") -> Path:
    """:func:`atomic_write_bytes` for text."""
    return atomic_write_bytes(path, text.encode(encoding))


def jsonable(x: Any) -> Any:
    """``x`` with numpy scalars and arrays turned into Python numbers and lists."""
    if isinstance(x, dict):
        return {str(k): jsonable(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [jsonable(v) for v in x]
    if isinstance(x, np.ndarray):
        return jsonable(x.tolist())
    if isinstance(x, np.bool_):
        return bool(x)
    if isinstance(x, np.integer):
        return int(x)
    if isinstance(x, np.floating):
        return float(x)
    return x


def dump_json(doc: Any, *, indent: int | None = 2) -> str:
    """Strict JSON text: NaN and infinities are refused (``ValueError``), numpy values converted."""
    return json.dumps(jsonable(doc), indent=indent, allow_nan=False, ensure_ascii=False) + "\n"


def write_json(path: Path | str, doc: Any, *, indent: int | None = 2) -> Path:
    """:func:`dump_json` written atomically."""
    return atomic_write_text(path, dump_json(doc, indent=indent))


def regular_file(name: str, path: Path | str, *, max_bytes: int | None = None) -> Path:
    """``path`` if it is an existing regular file (not a FIFO, device or folder) of at most
    ``max_bytes``; the package's error naming ``name`` otherwise."""
    path = Path(path)
    try:
        st = os.stat(path)
    except OSError as exc:
        raise VerifyError(f"{name}: expected an existing readable file, got {str(path)!r} ({exc.strerror})") from None
    if not stat.S_ISREG(st.st_mode):
        kind = "a folder" if stat.S_ISDIR(st.st_mode) else "not a regular file (FIFO, socket or device)"
        raise VerifyError(f"{name}: expected a regular file, got {str(path)!r}, which is {kind}")
    if max_bytes is not None and st.st_size > max_bytes:
        raise VerifyError(f"{name}: expected a file of at most {max_bytes} bytes, got {str(path)!r} "
                          f"with {st.st_size} bytes")
    return path


def _reject_constant(token: str) -> Any:
    raise ValueError(f"the non-standard literal {token} (JSON has no NaN or Infinity)")


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict:
    out: dict = {}
    for key, value in pairs:
        if key in out:
            raise ValueError(f"the key {key!r} appears twice in one object")
        out[key] = value
    return out


def _depth_ok(text: str, limit: int) -> int:
    """The deepest nesting of ``[``/``{`` outside strings (a linear scan, before parsing)."""
    depth = deepest = 0
    in_str = esc = False
    for ch in text:
        if in_str:
            if esc:
                esc = False
            elif ch == "\\":
                esc = True
            elif ch == '"':
                in_str = False
        elif ch == '"':
            in_str = True
        elif ch in "[{":
            depth += 1
            if depth > deepest:
                deepest = depth
                if deepest > limit:
                    return deepest
        elif ch in "]}":
            depth -= 1
    return deepest


def loads_json(name: str, text: str, *, max_depth: int = MAX_JSON_DEPTH) -> Any:
    """Parse strict JSON (see the module docstring); errors name ``name``."""
    if _depth_ok(text, max_depth) > max_depth:
        raise VerifyError(f"{name}: expected JSON nested at most {max_depth} levels deep, got deeper nesting")
    try:
        return json.loads(text, parse_constant=_reject_constant, object_pairs_hook=_no_duplicates)
    except (json.JSONDecodeError, ValueError, RecursionError) as exc:
        raise VerifyError(f"{name}: expected strict JSON, got {exc}") from None


def read_json(name: str, path: Path | str, *, max_bytes: int = MAX_JSON_BYTES, max_depth: int = MAX_JSON_DEPTH) -> Any:
    """Read a strict JSON file: a regular file of at most ``max_bytes``, UTF-8, see :func:`loads_json`."""
    path = regular_file(name, path, max_bytes=max_bytes)
    try:
        text = path.read_bytes().decode("utf-8")
    except UnicodeDecodeError as exc:
        raise VerifyError(f"{name}: expected UTF-8 JSON, got undecodable bytes in {str(path)!r} ({exc})") from None
    except OSError as exc:
        raise VerifyError(f"{name}: expected a readable file, got {str(path)!r} ({exc.strerror})") from None
    return loads_json(f"{name} ({path})", text, max_depth=max_depth)


def staging_folder(name: str, target: Path | str, *, marker: str) -> Path:
    """A fresh folder beside ``target`` to write a whole run into before :func:`publish_folder`.

    ``target`` must be absent, empty, or a folder the package wrote before (it holds ``marker``);
    anything else is refused, so publishing never replaces a folder of the user's. Staging folders
    left by killed runs (their process is gone) are removed.
    """
    target = Path(target)
    if target.exists() and not target.is_dir():
        raise VerifyError(f"{name}: expected a folder, got {str(target)!r}, which is a file")
    if target.is_dir() and any(target.iterdir()) and not (target / marker).is_file():
        raise VerifyError(f"{name}: expected a new folder or one this package wrote (with {marker}), got "
                          f"{str(target)!r}, a non-empty folder without it")
    parent = target.absolute().parent
    try:
        parent.mkdir(parents=True, exist_ok=True)
        for old in parent.glob(f".{target.name}.partial-*"):
            pid = old.name.rsplit("-", 1)[-1].split(".")[0]
            if pid.isdigit() and not _alive(int(pid)):
                shutil.rmtree(old, ignore_errors=True)
        for old in parent.glob(f".{target.name}.old-*"):   # a run killed between publish's two renames
            pid = old.name.rsplit("-", 1)[-1]
            if pid.isdigit() and not _alive(int(pid)):
                if not target.exists():
                    os.replace(old, target)
                else:
                    shutil.rmtree(old, ignore_errors=True)
        stage = Path(tempfile.mkdtemp(prefix=f".{target.name}.partial-{os.getpid()}.", dir=parent))
        mask = os.umask(0)
        os.umask(mask)
        os.chmod(stage, 0o777 & ~mask)   # mkdtemp's 0700 would outlive the rename
        return stage
    except OSError as exc:
        raise VerifyError(f"{name}: expected a writable place for {str(target)!r}, got {exc.strerror} "
                          f"({exc.filename})") from None


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def publish_folder(staging: Path | str, target: Path | str) -> Path:
    """Move the complete ``staging`` folder to ``target``, replacing a previous run's folder.

    Two renames: the old folder aside, the new one in its place; a reader sees the old run or the
    new one, never a mix (between the renames, for an instant, no folder). The old one is removed.
    """
    staging, target = Path(staging), Path(target)
    old = None
    if target.exists():
        old = target.absolute().parent / f".{target.name}.old-{os.getpid()}"
        if old.exists():
            shutil.rmtree(old)
        os.replace(target, old)
    os.replace(staging, target)
    if old is not None:
        shutil.rmtree(old, ignore_errors=True)
    return target
