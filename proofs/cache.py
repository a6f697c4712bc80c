"""On-disk cache of the checked derivations, so that a run pays for SymPy only once per source.

A derivation is pickled under :func:`cache_dir`, keyed by :func:`source_key`; ``rederive=True`` or
``MHA_NW_REDERIVE=1`` bypass it. SymPy's own pickles re-evaluate every expression (as slow as deriving),
so each compound SymPy object is stored as its class, args and extra state and rebuilt with
``Basic.__new__``. A derivation is written (atomically) only if it reads back identical, with its
``to_dict()`` beside it; a file that does not load, is foreign or larger than :data:`MAX_BYTES` is
ignored and rewritten. The cache trusts its folder as Python trusts ``__pycache__``. Free of ``verify``.
"""

from __future__ import annotations

import contextlib
import copy
import functools
import hashlib
import io
import os
import pickle
import sys
import tempfile
from pathlib import Path
from typing import Any, Iterator

import sympy as sp

__all__ = ["cache_dir", "private_temp_dir", "source_key", "load", "store", "is_cached", "rederive_requested", "deriving",
           "atomic_write", "ENV_REDERIVE", "MAX_BYTES", "FORMAT", "KEEP_PER_CLAIM"]

#: Bump when the file layout changes.
FORMAT = 1
#: Set to 1 (or true/yes) to re-derive and ignore the cache.
ENV_REDERIVE = "MHA_NW_REDERIVE"
#: Larger than any derivation (the largest is ~40 kB); a bigger file is not read.
MAX_BYTES = 16 * 2**20
#: Files kept per claim (older keys: earlier sources, other checkouts); the rest are removed.
KEEP_PER_CLAIM = 8

_PACKAGE = Path(__file__).resolve().parent
_BASIC_SLOTS = frozenset(sp.Basic.__slots__)


def _usable(folder: Path) -> bool:
    """Whether ``folder`` exists (created if missing) and this process may write in it."""
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError:
        return False
    return folder.is_dir() and os.access(folder, os.W_OK | os.X_OK)


def private_temp_dir(name: str) -> Path:
    """``<tempdir>/mha-nw-verify-<uid>/<name>``: a folder of this user's alone (mode 0700, owned by
    this user, not a link; a fresh ``mkdtemp`` folder when that name is taken by someone else)."""
    uid = os.getuid() if hasattr(os, "getuid") else 0
    root = Path(tempfile.gettempdir()) / f"mha-nw-verify-{uid}"
    try:
        root.mkdir(mode=0o700, exist_ok=True)
        st = os.lstat(root)
        if not (os.path.isdir(root) and not os.path.islink(root) and st.st_uid == uid and st.st_mode & 0o077 == 0):
            raise PermissionError(f"{root} is not this user's private folder")
    except OSError:
        root = Path(tempfile.mkdtemp(prefix=f"mha-nw-verify-{uid}-"))
    return root / name


def cache_dir(name: str = "derivations") -> Path:
    """``$MHA_NW_CACHE_DIR/<name>``, else ``$XDG_CACHE_HOME/mha-nw-verify/<name>``, else
    ``~/.cache/mha-nw-verify/<name>``; :func:`private_temp_dir` when that folder cannot be created or
    written, or there is no home (the derivations here; the compiled kernels in ``numba``)."""
    root = os.environ.get("MHA_NW_CACHE_DIR", "").strip()
    if root:
        folder: Path | None = Path(root).expanduser() / name
    else:
        xdg = os.environ.get("XDG_CACHE_HOME", "").strip()
        try:
            folder = (Path(xdg).expanduser() if xdg else Path.home() / ".cache") / "mha-nw-verify" / name
        except (RuntimeError, KeyError, OSError):   # HOME unset and no passwd entry
            folder = None
    if folder is not None and _usable(folder):
        return folder
    return private_temp_dir(name)


@contextlib.contextmanager
def deriving(claim: str) -> Iterator[None]:
    """Hold the cache's lock for ``claim`` while it is derived: a second process that needs the same
    claim waits, then loads what the first stored, instead of deriving it again (a test run's
    processes, two runs at once). Without ``fcntl`` (not POSIX) or a writable folder: no lock."""
    try:
        import fcntl

        fh = open(cache_dir() / f"{claim}.lock", "a+b")
    except (ImportError, OSError):
        yield
        return
    with fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def rederive_requested() -> bool:
    """Whether ``MHA_NW_REDERIVE`` asks to bypass the cache."""
    return os.environ.get(ENV_REDERIVE, "").strip().lower() in ("1", "true", "yes")


def source_key() -> str:
    """SHA-256 of every file of ``proofs/`` (path and bytes), SymPy's and Python's versions."""
    h = hashlib.sha256(f"format {FORMAT}\0sympy {sp.__version__}\0python {sys.version_info[:2]}\0".encode())
    for path in sorted(p for p in _PACKAGE.rglob("*") if p.is_file() and "__pycache__" not in p.parts):
        h.update(path.relative_to(_PACKAGE).as_posix().encode() + b"\0")
        data = path.read_bytes()
        h.update(len(data).to_bytes(8, "little") + data)
    return h.hexdigest()


# --------------------------------------------------------------------------- pickling


def _rebuild(cls: type, args: tuple, state: dict) -> Any:
    """A SymPy object from its class, args and extra slots, without evaluating it."""
    obj = sp.Basic.__new__(cls, *args)
    for name, value in state.items():
        object.__setattr__(obj, name, value)
    return obj


def _extra_slots(cls: type) -> tuple[str, ...]:
    names: list[str] = []
    for klass in cls.__mro__:
        for name in getattr(klass, "__slots__", ()):
            if name not in _BASIC_SLOTS and name not in names and name != "__weakref__":
                names.append(name)
    return tuple(names)


class _Pickler(pickle.Pickler):
    def reducer_override(self, obj: Any) -> Any:
        # compound SymPy objects only (atoms: symbols, numbers, ... keep SymPy's own pickling);
        # their extra state: slots beyond Basic's and instance attributes (Subs._expr, a
        # function's cached nargs)
        if isinstance(obj, sp.Basic) and not obj.is_Atom:
            state = {n: getattr(obj, n) for n in _extra_slots(type(obj)) if hasattr(obj, n)}
            state.update(getattr(obj, "__dict__", None) or {})
            return _rebuild, (type(obj), obj.args, state)
        return NotImplemented


def _dumps(doc: Any) -> bytes:
    buf = io.BytesIO()
    _Pickler(buf, protocol=pickle.HIGHEST_PROTOCOL).dump(doc)
    return buf.getvalue()


def _sympy_in(value: Any) -> list:
    """The SymPy objects in a method parameter (nested in dicts, lists and tuples)."""
    if isinstance(value, sp.Basic):
        return [value]
    if isinstance(value, dict):
        return [x for k, v in value.items() for x in _sympy_in(k) + _sympy_in(v)]
    if isinstance(value, (list, tuple)):
        return [x for v in value for x in _sympy_in(v)]
    return []


def _fingerprint(der: Any) -> tuple:
    """What must read back identical: the ``srepr`` (classes, arguments, atoms: equal ones print alike)
    of every SymPy object ``to_dict()`` prints, and the ``repr`` of every comparison."""
    exprs = [sp.srepr(s.relation) for s in der.steps]
    exprs += [sp.srepr(x) for s in der.steps for x in _sympy_in(s.params)]
    exprs += [sp.srepr(x) for r in der.results.values() for x in (r.expr, *r.args)]
    exprs += [sp.srepr(a.expr) for a in der.assumptions.values() if a.expr is not None]
    exprs += [repr(c) for c in der.comparisons]
    return tuple(exprs)


# --------------------------------------------------------------------------- files


def _path(claim: str, key: str) -> Path:
    return cache_dir() / f"{claim}-{key[:40]}.pickle"


def is_cached(claim: str, key: str | None = None) -> bool:
    """Whether a file for ``claim`` and ``key`` (default: today's :func:`source_key`) is in the cache
    (the progress line says "loading" rather than "deriving"; :func:`load` still checks it)."""
    try:
        return _path(claim, key or source_key()).is_file()
    except OSError:
        return False


def load(claim: str, key: str) -> Any | None:
    """The cached derivation of ``claim`` for ``key``, or None (absent, unreadable, too large,
    corrupt, or from another key or claim)."""
    path = _path(claim, key)
    try:
        if not path.is_file() or path.stat().st_size > MAX_BYTES:
            return None
        data = path.read_bytes()
        doc = pickle.loads(data)
    except Exception:  # noqa: BLE001 - any broken file is a cache miss
        return None
    if not isinstance(doc, dict) or doc.get("format") != FORMAT or doc.get("key") != key or doc.get("claim") != claim:
        return None
    der = doc.get("derivation")
    if getattr(der, "claim", None) != claim or not isinstance(doc.get("dict"), dict):
        return None
    der.to_dict = functools.partial(copy.deepcopy, doc["dict"])   # a copy: verified equal when stored
    return der


def atomic_write(path: Path, data: bytes, *, prefix: str = "") -> None:
    """Temporary file (named ``.<prefix or the file's name>.*.tmp``), fsync, ``os.replace`` (mode
    0o644): a reader sees the old file or the new one, never a part. Every file the package
    writes goes through here (``verify.io.atomic_write_bytes`` adds its checks of the target)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{prefix or path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fchmod(fh.fileno(), 0o644)   # mkstemp's 0o600 otherwise
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise


def store(claim: str, key: str, der: Any) -> bool:
    """Write ``der`` for ``key`` if it reads back identical; False when it does not, or the
    folder is not writable (the run goes on uncached)."""
    try:
        as_dict = der.to_dict()
        data = _dumps({"format": FORMAT, "key": key, "claim": claim, "derivation": der, "dict": as_dict})
        back = pickle.loads(data)
        if _fingerprint(back["derivation"]) != _fingerprint(der) or back["dict"] != as_dict:
            return False
        path = _path(claim, key)
        atomic_write(path, data)
        _prune(claim, keep=path)
    except (OSError, pickle.PicklingError, TypeError, AttributeError, RecursionError):
        return False
    return True


def _prune(claim: str, keep: Path) -> None:
    """Remove all but the KEEP_PER_CLAIM newest files of ``claim`` (never ``keep``)."""
    dated = []
    for p in cache_dir().glob(f"{claim}-*.pickle"):
        try:
            dated.append((p.stat().st_mtime, p))
        except OSError:   # removed meanwhile by another run
            pass
    for _, old in sorted((d for d in dated if d[1] != keep), reverse=True)[KEEP_PER_CLAIM - 1:]:
        try:
            old.unlink()
        except OSError:
            pass
