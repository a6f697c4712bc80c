"""Files the package writes and reads: atomic writes, strict JSON, bounded reads, run folders.

Every file is written to a temporary ``.NAME.XXXX.tmp`` beside it and moved into place with
``os.replace`` (a reader sees the old file or the new one), mode ``0o644``; folders are created
``0o755``, whatever the umask. A write to a symbolic link writes through to its target; an existing
target that is not a regular file (folder, FIFO, socket, device) is refused, never opened. JSON is
written with ``allow_nan=False`` and read back refusing ``NaN``/``Infinity``, duplicate keys,
nesting deeper than :data:`MAX_JSON_DEPTH` and files larger than :data:`MAX_JSON_BYTES`.

Run folders (``python -m verify --out DIR``): a run is written into a staging folder
``.NAME.partial-PID.TOKEN`` beside ``DIR`` and published in one step, under an exclusive ``flock``
on the parent, by ``renameat2(RENAME_EXCHANGE)`` where Linux offers it, else by two renames (the
old run moved into the staging folder's ``previous/``). ``DIR`` is replaced only when it is absent,
empty, or holds :data:`RUN_MARKER`; the current folder and those above it are refused. A killed
run's staging folder is judged by its :data:`STAGING_MARKER` (pid, host, token, target), never by
its name: a later run into the same target removes it once its process has ended on this host.
Output folders of the other writing commands: :func:`output_folder`.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import hashlib
import json
import math
import os
import secrets
import shutil
import socket
import stat
import sys
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from proofs.cache import atomic_write
from verify.errors import VerifyError

try:
    import fcntl
except ImportError:  # not POSIX: no locks
    fcntl = None

__all__ = ["FILE_MODE", "FOLDER_MODE", "MAX_JSON_BYTES", "MAX_JSON_DEPTH", "NAME_MAX", "OUTPUT_MARKER", "OUTPUT_SCHEMA",
           "RUN_MARKER", "RUN_SCHEMA", "RUN_SCHEMA_VERSION", "STAGING_MARKER", "STAGING_SCHEMA", "atomic_write_bytes",
           "discard_staging", "atomic_write_text", "dump_json", "is_run_folder", "jsonable", "loads_json", "locked",
           "output_folder", "publish_folder", "read_json", "regular_file", "staging_folder", "write_json",
           "write_target"]

#: Deeper nesting than any file the package writes (report.json is < 12 levels deep).
MAX_JSON_DEPTH = 64
#: Larger than any file the package writes (a full report.json is ~1 MB).
MAX_JSON_BYTES = 64 * 2**20


#: Every file the package writes: readable by all, as any file a user's tools create.
FILE_MODE = 0o644
#: Every folder the package creates.
FOLDER_MODE = 0o755
#: The longest file name (bytes) where the file system does not say (POSIX's usual NAME_MAX).
NAME_MAX = 255
#: How much of a received path an error message quotes.
QUOTE_CHARS = 120
#: The file that marks a folder as this package's run (and so one a later run may replace).
RUN_MARKER = "mha-nw-verify-run.json"
RUN_SCHEMA = "mha-nw-verify/run"
RUN_SCHEMA_VERSION = 1
#: The file that marks a staging folder beside a run's target as this package's work in progress
#: (module docstring): a later run judges the folder by this marker alone, never by its name.
STAGING_MARKER = "mha-nw-verify-staging.json"
STAGING_SCHEMA = "mha-nw-verify/staging"
STAGING_SCHEMA_VERSION = 1
#: Random bytes of a staging folder's token (hex in its name and marker): two runs of one process id
#: (on two hosts sharing a folder, or after the id was reused) never share a name.
TOKEN_BYTES = 8
#: The file that marks a folder as the output folder of one writing command (:func:`output_folder`).
OUTPUT_MARKER = "mha-nw-verify-output.json"
OUTPUT_SCHEMA = "mha-nw-verify/output"
OUTPUT_SCHEMA_VERSION = 1
#: Larger than any marker the package writes (a few hundred bytes): a bigger one is not read.
MAX_MARKER_BYTES = 4096


def _quote(path: Path | str) -> str:
    text = str(path)
    return repr(text) if len(text) <= QUOTE_CHARS else repr(text[:QUOTE_CHARS]) + f" (+{len(text) - QUOTE_CHARS} characters)"


_KINDS = ((stat.S_ISREG, "a file"), (stat.S_ISDIR, "a folder"), (stat.S_ISFIFO, "a FIFO"), (stat.S_ISSOCK, "a socket"),
          (stat.S_ISCHR, "a device"), (stat.S_ISBLK, "a device"))


def _kind(mode: int) -> str:
    return next((word for test, word in _KINDS if test(mode)), "not a regular file")


#: Bytes of a target's name kept in the names written beside it (temporary files, staging
#: folders), so that a target of the longest allowed name still has room for them.
SIDE_NAME_BYTES = 96


def _side(name: str) -> str:
    """``name``, or its first SIDE_NAME_BYTES bytes and a hash of the whole, for a name beside it."""
    raw = os.fsencode(name)
    if len(raw) <= SIDE_NAME_BYTES:
        return name
    return raw[:SIDE_NAME_BYTES].decode("utf-8", "ignore") + "~" + hashlib.sha256(raw).hexdigest()[:8]


def _name_max(folder: Path) -> int:
    while True:
        try:
            return int(os.pathconf(folder, "PC_NAME_MAX"))
        except (OSError, ValueError):
            if folder.parent == folder:
                return NAME_MAX
            folder = folder.parent


def _named(name: str, path: Path | str, what: str) -> Path:
    """``path`` once its name is checked: not empty, and every component no longer than the file
    system allows (one line, not ENAMETOOLONG)."""
    if not str(path).strip():
        raise VerifyError(f"{name}: expected {what}, got {_quote(path)}")
    path = Path(path)
    limit = _name_max(Path(os.path.abspath(path)).parent)
    for part in path.parts:
        if len(os.fsencode(part)) > limit:
            raise VerifyError(f"{name}: expected file names of at most {limit} bytes, got one of "
                              f"{len(os.fsencode(part))} bytes ({_quote(part)})")
    return path


def write_target(name: str, path: Path | str) -> Path:
    """Where a write to ``path`` goes (symlinks resolved, module docstring), refusing a name too
    long for the file system and an existing target that is not a regular file."""
    path = _named(name, path, "a file name")
    real = Path(os.path.realpath(path))
    try:
        st = os.stat(real)
    except FileNotFoundError:
        return real
    except OSError as exc:
        raise VerifyError(f"{name}: expected a writable file, got {_quote(path)} ({exc.strerror})") from None
    if not stat.S_ISREG(st.st_mode):
        raise VerifyError(f"{name}: expected a regular file or a new name, got {_quote(path)}, which is "
                          f"{_kind(st.st_mode)} (never replaced)")
    return real


def _make_folders(folder: Path) -> None:
    """``folder`` and its missing parents, each created with :data:`FOLDER_MODE`."""
    missing = []
    while not folder.is_dir():
        missing.append(folder)
        if folder.parent == folder:
            break
        folder = folder.parent
    for f in reversed(missing):
        try:
            f.mkdir()
        except FileExistsError:
            if f.is_dir():
                continue
            raise
        os.chmod(f, FOLDER_MODE)


def atomic_write_bytes(path: Path | str, data: bytes, *, name: str | None = None) -> Path:
    """Write ``data`` to ``path`` through a temporary file in the same folder and ``os.replace``
    (the module docstring's policy: symlinks written through, special files refused, mode
    :data:`FILE_MODE`). An OSError names ``path``, not the temporary file."""
    target = write_target(name or "output file", path)
    try:
        _make_folders(target.parent)
        atomic_write(target, data, prefix=_side(target.name))
    except OSError as exc:
        raise OSError(exc.errno, exc.strerror, str(path)) from None
    return Path(path)


def atomic_write_text(path: Path | str, text: str, *, encoding: str = "utf-8", name: str | None = None) -> Path:
    """:func:`atomic_write_bytes` for text."""
    return atomic_write_bytes(path, text.encode(encoding), name=name)


def jsonable(x: Any, *, finite: bool = False) -> Any:
    """``x`` with numpy scalars and arrays turned into Python numbers and lists, tuples into lists
    and dict keys into strings; with ``finite``, non-finite floats into None (strict JSON, as
    report.json needs: an infinite z of a zero standard error becomes None). numpy is not imported
    here: where it was never imported, no value can be one of its types."""
    if isinstance(x, dict):
        return {str(k): jsonable(v, finite=finite) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [jsonable(v, finite=finite) for v in x]
    np = sys.modules.get("numpy")
    if np is not None:
        if isinstance(x, np.ndarray):
            return jsonable(x.tolist(), finite=finite)
        if isinstance(x, np.bool_):
            return bool(x)
        if isinstance(x, np.integer):
            return int(x)
        if isinstance(x, np.floating):
            x = float(x)
    if finite and isinstance(x, float) and not math.isfinite(x):
        return None
    return x


def dump_json(doc: Any, *, indent: int | None = 2) -> str:
    """Strict JSON text: NaN and infinities are refused (``ValueError``), numpy values converted."""
    return json.dumps(jsonable(doc), indent=indent, allow_nan=False, ensure_ascii=False) + "\n"


def write_json(path: Path | str, doc: Any, *, indent: int | None = 2, name: str | None = None) -> Path:
    """:func:`dump_json` written atomically (``name``: the argument an error names)."""
    return atomic_write_text(path, dump_json(doc, indent=indent), name=name)


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


def _marker_doc(path: Path, schema: str, latest: int) -> dict | None:
    """The marker at ``path`` if it is a regular file (not a link) of strict JSON, an object with
    ``schema`` and an integer ``schema_version`` from 1 to ``latest``; None otherwise."""
    try:
        if not stat.S_ISREG(os.lstat(path).st_mode):
            return None
        doc = read_json(path.name, path, max_bytes=MAX_MARKER_BYTES)
    except (OSError, VerifyError):
        return None
    if not isinstance(doc, dict):
        return None
    version = doc.get("schema_version")
    if (doc.get("schema") == schema and isinstance(version, int) and not isinstance(version, bool)
            and 1 <= version <= latest):
        return doc
    return None


def is_run_folder(folder: Path | str) -> bool:
    """Whether ``folder`` holds a valid :data:`RUN_MARKER` (:func:`_marker_doc`)."""
    return _marker_doc(Path(folder) / RUN_MARKER, RUN_SCHEMA, RUN_SCHEMA_VERSION) is not None


def _replaceable(name: str, target: Path, shown: Path | str) -> None:
    """The package's error unless ``target`` is absent, an empty folder or one of this package's runs."""
    try:
        st = os.stat(target)
    except (FileNotFoundError, NotADirectoryError):   # absent (under a file: creating it fails, with its message)
        return
    except OSError as exc:
        raise VerifyError(f"{name}: expected a folder, got {_quote(shown)} ({exc.strerror})") from None
    if not stat.S_ISDIR(st.st_mode):
        kind = _kind(st.st_mode)
        raise VerifyError(f"{name}: expected a folder, got {_quote(shown)}, which is {kind}")
    if any(target.iterdir()) and not is_run_folder(target):
        raise VerifyError(f"{name}: expected a new folder or one this package wrote (with {RUN_MARKER}), got "
                          f"{_quote(shown)}, a non-empty folder without it (nothing was changed there)")


@contextlib.contextmanager
def locked(path: Path) -> Iterator[None]:
    """An exclusive ``flock`` on ``path``, a folder or a lock file (created if absent), released on
    exit (and by the kernel if the process dies)."""
    if fcntl is None:
        yield
        return
    flags = getattr(os, "O_DIRECTORY", 0) if os.path.isdir(path) else os.O_CREAT
    fd = os.open(path, os.O_RDONLY | flags, FILE_MODE)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


def _staging_name(target_name: str, pid: int, token: str) -> str:
    return f".{_side(target_name)}.partial-{pid}.{token}"


def _staging_marker(folder: Path, target_name: str) -> dict | None:
    """The marker of ``folder`` if it is a staging folder this package made for ``target_name``:
    a real folder (not a link) holding a valid :data:`STAGING_MARKER` whose pid and token give this
    folder's own name and whose target is ``target_name``; None for anything else, whatever its name."""
    try:
        if not stat.S_ISDIR(os.lstat(folder).st_mode):
            return None
    except OSError:
        return None
    doc = _marker_doc(folder / STAGING_MARKER, STAGING_SCHEMA, STAGING_SCHEMA_VERSION)
    if doc is None:
        return None
    pid, token, host = doc.get("pid"), doc.get("token"), doc.get("host")
    if not (type(pid) is int and pid > 0 and isinstance(token, str) and isinstance(host, str)
            and doc.get("target") == target_name):
        return None
    return doc if folder.name == _staging_name(target_name, pid, token) else None


def _clear_leftovers(parent: Path, real: Path) -> None:
    """Under the parent's lock: remove the staging folders of ``real`` whose process has ended
    (:func:`_staging_marker` decides, never a name), putting a previous run they hold back first
    where ``real`` is missing (a run killed between the fallback's two renames)."""
    here = socket.gethostname()
    prefix = f".{_side(real.name)}.partial-"     # only a shortcut: the marker decides
    for entry in sorted(os.scandir(parent), key=lambda e: e.name):
        if not entry.name.startswith(prefix):
            continue
        folder = Path(entry.path)
        doc = _staging_marker(folder, real.name)
        if doc is None or doc["host"] != here or _alive(doc["pid"]):
            continue
        previous = folder / "previous"
        if not os.path.lexists(real) and is_run_folder(previous):
            os.rename(previous, real)
        shutil.rmtree(folder, ignore_errors=True)


def staging_folder(name: str, target: Path | str) -> Path:
    """A fresh folder, holding the run marker already, to write a whole run into before
    :func:`publish_folder`: ``run/`` inside a staging folder beside ``target`` (module docstring).
    A ``target`` that is not absent, empty or one of this package's runs is refused before any
    work; staging folders left by killed runs are removed."""
    shown = target
    real = Path(os.path.realpath(_named(name, target, "a folder name")))
    here = Path(os.path.realpath(os.getcwd()))
    if real == here or real in here.parents:
        raise VerifyError(f"{name}: expected a folder other than the current one and those above it, got "
                          f"{_quote(shown)} ({real}); a run replaces its whole folder")
    parent = real.parent
    try:
        _make_folders(parent)
        with locked(parent):   # checked under the lock: a concurrent fallback publish may be between its renames
            _replaceable(name, real, shown)
            _clear_leftovers(parent, real)
        token = secrets.token_hex(TOKEN_BYTES)
        holder = parent / _staging_name(real.name, os.getpid(), token)
        os.mkdir(holder, FOLDER_MODE)
        os.chmod(holder, FOLDER_MODE)
        write_json(holder / STAGING_MARKER, {
            "schema": STAGING_SCHEMA, "schema_version": STAGING_SCHEMA_VERSION, "pid": os.getpid(),
            "host": socket.gethostname(), "token": token, "target": real.name,
            "what": "a run of python -m verify in progress; a later run removes this folder once its process "
                    "has ended"})
        stage = holder / "run"
        stage.mkdir()
        os.chmod(stage, FOLDER_MODE)
        write_json(stage / RUN_MARKER, {"schema": RUN_SCHEMA, "schema_version": RUN_SCHEMA_VERSION,
                                    "what": "a run of python -m verify; the next run into this folder replaces it"})
        return stage
    except OSError as exc:
        raise VerifyError(f"{name}: expected a writable place for {_quote(shown)}, got {exc.strerror} "
                          f"({exc.filename})") from None


def _holder(stage: Path) -> Path | None:
    """The staging folder (with its marker) that holds ``stage``, if this process made it."""
    if stage.name != "run":
        return None
    doc = _marker_doc(stage.parent / STAGING_MARKER, STAGING_SCHEMA, STAGING_SCHEMA_VERSION)
    target = doc.get("target") if doc else None
    doc = _staging_marker(stage.parent, target) if isinstance(target, str) else None
    return stage.parent if doc is not None and doc["pid"] == os.getpid() else None


def discard_staging(stage: Path | str) -> None:
    """Remove a run's staging folder that was not published (the run failed or was stopped): the
    folder holding ``stage`` and its marker, only if this process made it; anything else is left."""
    holder = _holder(Path(stage))
    if holder is not None:
        shutil.rmtree(holder, ignore_errors=True)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


#: renameat2's flag (linux/fs.h): swap two existing paths in one step.
_RENAME_EXCHANGE = 2
_AT_FDCWD = -100


def _exchange(a: Path, b: Path) -> bool:
    """Swap ``a`` and ``b`` atomically (Linux ``renameat2``); False where that is not offered."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        fn = libc.renameat2
    except (OSError, AttributeError):
        return False
    fn.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
    if fn(_AT_FDCWD, os.fsencode(a), _AT_FDCWD, os.fsencode(b), _RENAME_EXCHANGE) == 0:
        return True
    err = ctypes.get_errno()
    if err in (errno.ENOSYS, errno.EINVAL, errno.ENOTSUP, errno.EOPNOTSUPP):
        return False
    raise OSError(err, os.strerror(err), str(b))


def publish_folder(staging: Path | str, target: Path | str) -> Path:
    """Move the complete ``staging`` folder (from :func:`staging_folder`) to ``target`` (symlinks
    resolved, checked again under the parent folder's lock), replacing a previous run's folder
    (module docstring); the staging folder, with the old run, is then removed."""
    staging, shown = Path(staging), Path(target)
    real = Path(os.path.realpath(shown))
    holder = _holder(staging)
    if holder is None:
        raise VerifyError(f"--out: expected a staging folder made by this run, got {_quote(staging)}")
    with locked(real.parent):
        _replaceable("--out", real, shown)
        if not real.exists():
            os.rename(staging, real)
        elif _exchange(staging, real):
            pass                                     # the staging folder now holds the old run
        else:
            os.replace(real, holder / "previous")
            os.replace(staging, real)
        shutil.rmtree(holder, ignore_errors=True)
    return shown


# --------------------------------------------------------------------------- output folders


#: This thread's output folders held by :func:`output_folder` (real path -> depth): a sweep's command
#: line and the sweep it runs take the same folder, in one thread, once.
_HELD = threading.local()


def _output_marker_doc(folder: Path) -> dict | None:
    doc = _marker_doc(folder / OUTPUT_MARKER, OUTPUT_SCHEMA, OUTPUT_SCHEMA_VERSION)
    return doc if doc is not None and isinstance(doc.get("command"), str) else None


def _claim_marker(name: str, real: Path, shown: Path | str, command: str) -> None:
    """Write ``real``'s :data:`OUTPUT_MARKER` for ``command`` if the folder is empty (created at once,
    never over one that appeared meanwhile), else check the one there; the package error otherwise."""
    expected = f"an empty folder or one that {command} wrote (with {OUTPUT_MARKER})"
    doc = _output_marker_doc(real)
    if doc is None and not os.path.lexists(real / OUTPUT_MARKER) and not any(real.iterdir()):
        text = dump_json({"schema": OUTPUT_SCHEMA, "schema_version": OUTPUT_SCHEMA_VERSION, "command": command,
                          "what": f"the output folder of {command}: it writes into this folder again, no other "
                                  "command of this package does"})
        fd, tmp = tempfile.mkstemp(prefix=f".{OUTPUT_MARKER}.", suffix=".tmp", dir=real)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                fh.write(text)
                fh.flush()
                os.fchmod(fh.fileno(), FILE_MODE)
                os.fsync(fh.fileno())
            try:
                os.link(tmp, real / OUTPUT_MARKER)   # atomic and exclusive: one of two racing commands wins
            except FileExistsError:
                pass
        finally:
            os.unlink(tmp)
        doc = _output_marker_doc(real)
    if doc is None:
        raise VerifyError(f"{name}: expected {expected}, got {_quote(shown)}, a non-empty folder without it "
                          "(nothing was changed there)")
    if doc["command"] != command:
        raise VerifyError(f"{name}: expected {expected}, got {_quote(shown)}, which {_printable(doc['command'])} "
                          "wrote (nothing was changed there)")


def _printable(text: str) -> str:
    return "".join(ch if ch.isprintable() else repr(ch)[1:-1] for ch in text[:QUOTE_CHARS])


@contextlib.contextmanager
def output_folder(name: str, folder: Path | str, command: str) -> Iterator[Path]:
    """The folder a command writes into (``sweep -o``, ``hdi -o``, ``latex -o``), held while the block
    runs: created if absent; an empty one gets :data:`OUTPUT_MARKER` naming ``command``; one holding
    that marker is taken; anything else, or a folder another command holds now (an exclusive lock on
    the marker), is refused with the package error before any work. Yields ``folder`` as given."""
    shown = folder
    real = Path(os.path.realpath(_named(name, folder, "a folder name")))
    held = getattr(_HELD, "folders", None)
    if held is None:
        held = _HELD.folders = {}
    if held.get(real):                # this thread holds it already (the sweep command, then its sweep)
        held[real] += 1
        try:
            yield Path(folder)
        finally:
            held[real] -= 1
        return
    try:
        if os.path.lexists(real) and not os.path.isdir(real):
            raise VerifyError(f"{name}: expected a folder, got {_quote(shown)}, which is "
                              f"{_kind(os.stat(real).st_mode)}")
        _make_folders(real)
        _claim_marker(name, real, shown, command)
        fd = os.open(real / OUTPUT_MARKER, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    except OSError as exc:
        raise VerifyError(f"{name}: expected a writable folder, got {_quote(shown)} ({exc.strerror or exc})") from None
    try:
        if fcntl is not None:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                raise VerifyError(f"{name}: expected a folder no other command is writing into, got {_quote(shown)}, "
                                  f"which another {command} is writing into now (it holds the lock on "
                                  f"{OUTPUT_MARKER}); run them one at a time, or into two folders") from None
        held[real] = 1
        try:
            yield Path(folder)
        finally:
            held.pop(real, None)
    finally:
        os.close(fd)
