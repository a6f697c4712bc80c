"""Input validation at the public boundary: one small helper per kind of check.

Every failure raises :class:`verify.errors.VerifyError` with a message that names the
argument, what was received and what was expected.
"""

from __future__ import annotations

import argparse
import contextlib
import math
import numbers
import os
import re
import tempfile
from pathlib import Path
from typing import Any, Iterator

import numpy as np

from verify.errors import VerifyError

__all__ = ["ArgParser", "seed_arg", "as_array", "positive_number", "positive_int", "finite_number", "integer_valued",
           "seed", "at_most", "one_of", "within", "physical_memory", "fits_in_memory", "memory_error_as",
           "path_like", "error_line", "full_column_rank", "fail", "received", "printable", "writable_file",
           "writable_folder", "exclusive", "MAX_QUOTED_CHARS", "MAX_INTEGER", "MAX_NUMERAL_CHARS", "MAX_JOBS",
           "MAX_SEED", "int_numeral", "real_numeral", "seed_numeral", "int_arg"]

#: Singular values below this fraction of the largest count as zero (rank): well above rounding noise.
RANK_RTOL = 1e-10
#: A message quotes at most this many characters of what it received (then its length).
MAX_QUOTED_CHARS = 80
#: The largest integer a size, count or index validator accepts: numpy's int64 range.
MAX_INTEGER = 2**63 - 1


def fail(name: str, received: Any, expected: str) -> VerifyError:
    """Build the package error: ``name: expected ..., got ...``."""
    return VerifyError(f"{name}: expected {expected}, got {received}")


def received(value: Any) -> str:
    """``repr(value)``, at most MAX_QUOTED_CHARS characters: a longer one is cut and says how long
    it was (an integer by its number of digits, computed without converting it to text)."""
    try:
        text = repr(value)
    except ValueError:   # int -> str refused past sys.get_int_max_str_digits
        digits = int(abs(int(value)).bit_length() * 0.30103) + 1   # log10(2): the count to within one
        return f"an integer of about {digits:,} digits"
    if len(text) <= MAX_QUOTED_CHARS:
        return printable(text)
    return f"{printable(text[:MAX_QUOTED_CHARS])}... ({len(text):,} characters)"


# The characters printable escapes: C0 controls, DEL and the C1 controls (they drive a terminal).
_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f]")


def printable(text: str) -> str:
    """``text`` with every control character written as a Python escape (``\\x1b``, ``\\n``):
    text read from a file never moves the cursor, recolours or clears the user's terminal."""
    return _CONTROL.sub(lambda m: repr(m.group())[1:-1], text)


def _describe(x: Any) -> str:
    return f"array of shape {x.shape} and dtype {x.dtype}" if isinstance(x, np.ndarray) else received(x)


def _as_float(name: str, value: Any, want: str) -> float:
    """``float(value)`` of a real number, an integer beyond float64 refused first."""
    if isinstance(value, (numbers.Integral, np.integer)) and abs(int(value)) > _FLOAT_MAX_INT:
        raise fail(name, received(value), want)
    return float(value)


_FLOAT_MAX_INT = int(np.finfo(np.float64).max)


def as_array(name: str, x: Any, *, ndim: int | None = None, min_ndim: int | None = None, finite: bool = True,
             keep_float32: bool = True) -> np.ndarray:
    """``x`` as a real floating array (float64, or float32 if it already is one); non-numeric,
    complex and boolean input, wrong ranks and (by default) NaN/inf are refused."""
    if isinstance(x, (str, bytes)) or x is None:
        raise fail(name, _describe(x), "a real numeric array")
    try:
        arr = np.asarray(x)
    except Exception as exc:  # ragged nested lists and the like
        raise fail(name, f"{type(x).__name__} that numpy cannot read ({exc})", "a real numeric array") from None
    if arr.dtype.kind not in "iuf":
        raise fail(name, _describe(arr), "a real numeric array (int or float dtype)")
    arr = arr.astype(np.float32 if arr.dtype == np.float32 and keep_float32 else np.float64, copy=False)
    if ndim is not None and arr.ndim != ndim:
        raise fail(name, f"shape {arr.shape} ({arr.ndim} axes)", f"{ndim} axes")
    if min_ndim is not None and arr.ndim < min_ndim:
        raise fail(name, f"shape {arr.shape} ({arr.ndim} axes)", f"at least {min_ndim} axes")
    if finite and not np.all(np.isfinite(arr)):
        bad = int(np.size(arr) - np.count_nonzero(np.isfinite(arr)))
        raise fail(name, f"{bad} NaN/inf entries in an array of shape {arr.shape}", "finite values")
    return arr


def positive_number(name: str, value: Any, *, allow_none: bool = False) -> float | None:
    """A finite real number > 0 (:func:`finite_number`)."""
    if value is None and allow_none:
        return None
    return finite_number(name, value, minimum=0, strict_minimum=True, want="a positive finite real number")


def _int_range(v: int, minimum: int | None, maximum: int, why: str | None) -> str | None:
    """What an integer ``v`` outside ``[minimum, maximum]`` should have been (None: inside)."""
    if minimum is not None and v < minimum:
        return f"an integer >= {minimum}"
    if v > maximum:
        why = why or ("MAX_INTEGER: numpy's int64 range" if maximum == MAX_INTEGER else None)
        return f"at most {maximum:,}" + (f" ({why})" if why else "")
    return None


def positive_int(name: str, value: Any, *, minimum: int = 1, maximum: int = MAX_INTEGER, why: str | None = None) -> int:
    """An integer in ``[minimum, maximum]`` (bools are rejected; ``maximum`` defaults to
    MAX_INTEGER; ``why`` names the cap and its reason in the message)."""
    if isinstance(value, bool) or not isinstance(value, (numbers.Integral, np.integer)):
        raise fail(name, received(value), f"an integer >= {minimum}")
    v = int(value)
    if (want := _int_range(v, minimum, maximum, why)) is not None:
        raise fail(name, received(value), want)
    return v


def full_column_rank(name: str, W: np.ndarray) -> None:
    """Each trailing ``(d, k)`` matrix of ``W`` must have rank ``k``."""
    if W.shape[-2] < W.shape[-1]:
        raise fail(name, f"shape {W.shape}", "matrices (..., d, d_k) with d_k <= d, as a rank-d_k projection needs")
    s = np.linalg.svd(W.astype(np.float64), compute_uv=False)
    smax = s[..., :1]
    deficient = np.any(s <= RANK_RTOL * np.maximum(smax, np.finfo(float).tiny), axis=-1)
    if np.any(deficient):
        idx = [tuple(int(i) for i in ix) for ix in np.argwhere(np.atleast_1d(deficient))]
        where = f" at index {idx[0]}" if W.ndim > 2 else ""
        raise fail(name, f"a rank-deficient projection{where} (shape {W.shape}, smallest singular value "
                         f"{float(s.min()):.3g})", f"full column rank {W.shape[-1]}")


def _is_real(value: Any) -> bool:
    return not isinstance(value, bool) and isinstance(value, (numbers.Real, np.floating, np.integer))


def finite_number(name: str, value: Any, *, minimum: float | None = None, maximum: float | None = None,
                  strict_minimum: bool = False, want: str | None = None) -> float:
    """A finite real number (bools and strings rejected) in ``[minimum, maximum]``
    (``(minimum, maximum]`` with ``strict_minimum``), as a float; ``want`` words the range."""
    lo = "" if minimum is None else (f" > {minimum:g}" if strict_minimum else f" >= {minimum:g}")
    hi = "" if maximum is None else f"{' and' if lo else ''} <= {maximum:g}"
    want = want or f"a finite real number{lo}{hi}"
    if not _is_real(value):
        raise fail(name, received(value), want)
    v = _as_float(name, value, want)
    if not math.isfinite(v) or (minimum is not None and (v <= minimum if strict_minimum else v < minimum)) \
            or (maximum is not None and v > maximum):
        raise fail(name, received(value), want)
    return v


def integer_valued(name: str, value: Any, *, minimum: int | None = None, maximum: int = MAX_INTEGER,
                   why: str | None = None) -> int:
    """An integer, or a float of integer value (``3.0``, as JSON may write it), in ``[minimum,
    maximum]`` (as :func:`positive_int`): 1.5, NaN, bools and strings refused, nothing rounded."""
    if isinstance(value, (numbers.Integral, np.integer)) and not isinstance(value, bool):
        v = int(value)
    elif _is_real(value) and math.isfinite(float(value)) and float(value).is_integer():
        v = int(float(value))
    else:
        raise fail(name, received(value), "an integer" + ("" if minimum is None else f" >= {minimum}"))
    if (want := _int_range(v, minimum, maximum, why)) is not None:
        raise fail(name, received(value), want)
    return v


def seed(name: str, value: Any) -> int:
    """A random seed: a non-negative integer, as ``numpy.random.SeedSequence`` takes it
    (bools, floats such as 1.5 or 2.0, and negative numbers are rejected)."""
    if isinstance(value, bool) or not isinstance(value, (numbers.Integral, np.integer)) or int(value) < 0:
        raise fail(name, received(value), "a non-negative integer seed")
    return int(value)


def at_most(name: str, value: Any, cap: int | float, why: str) -> Any:
    """``value`` unchanged if it is at most ``cap``, else the package error naming the cap and ``why``."""
    if value > cap:
        raise fail(name, received(value), f"at most {cap:,} ({why})")
    return value


def one_of(name: str, value: Any, options: Any) -> Any:
    """``value`` if it is one of ``options`` (strings, compared exactly; bools and lists refused)."""
    options = tuple(options)
    if not isinstance(value, str) or value not in options:
        raise fail(name, received(value), f"one of {', '.join(map(repr, options))}")
    return value


@contextlib.contextmanager
def within(prefix: str) -> Iterator[None]:
    """Name the package errors of the block as parts of ``prefix``: a call's ``n: expected ...``
    becomes ``params.n: expected ...`` when it checks a value read from ``params``."""
    try:
        yield
    except VerifyError as exc:
        raise VerifyError(f"{prefix}.{exc}") from None


def physical_memory() -> int | None:
    """Bytes of physical memory of this machine, or ``None`` where the OS does not say."""
    try:
        return int(os.sysconf("SC_PAGE_SIZE")) * int(os.sysconf("SC_PHYS_PAGES"))
    except (AttributeError, ValueError, OSError):
        return None


def fits_in_memory(name: str, nbytes: int | float, what: str) -> None:
    """Refuse a request for more bytes than the machine has (``what``: which arrays, from which
    sizes), instead of a ``MemoryError`` or a swap storm; no check where the OS does not say."""
    total = physical_memory()
    if total is not None and nbytes > total:
        raise fail(name, f"{what}: {nbytes / 2**30:.4g} GiB",
                   f"a size whose arrays fit in this machine's {total / 2**30:.4g} GiB of memory")


@contextlib.contextmanager
def memory_error_as(name: str, what: str) -> Iterator[None]:
    """A ``MemoryError`` inside the block as the package error naming ``name`` and ``what``."""
    try:
        yield
    except MemoryError:
        raise fail(name, f"{what}, more than this machine could allocate",
                   "a size that fits in memory") from None


def path_like(name: str, value: Any) -> str | os.PathLike:
    """A file-system path (``str`` or ``os.PathLike``) without NUL bytes."""
    if not isinstance(value, (str, os.PathLike)):
        raise fail(name, received(value), "a path (str or os.PathLike)")
    text = os.fspath(value)
    if isinstance(text, bytes) or "\0" in text:
        raise fail(name, received(value), "a path (str or os.PathLike) without NUL bytes")
    return value


def _probe(name: str, folder: Path, target: Path, expected: str) -> None:
    """Create and remove a file in ``folder``: the one test of writability that holds for root,
    read-only mounts and /proc alike."""
    try:
        fd, probe = tempfile.mkstemp(prefix=".verify-probe-", dir=folder)
        os.close(fd)
        os.unlink(probe)
    except OSError as exc:
        raise fail(name, f"{received(str(target))} ({exc.strerror or exc})", expected) from None


def _existing_ancestor(path: Path) -> Path:
    """``path`` itself or its nearest ancestor that exists (``Path.absolute`` keeps symlinks)."""
    path = path.absolute()
    while not os.path.lexists(path) and path != path.parent:
        path = path.parent
    return path


def writable_folder(name: str, value: Any) -> Path:
    """A folder the package can create files in (existing, or creatable in a writable ancestor),
    checked before the work starts."""
    path = Path(path_like(name, value))
    expected = "a folder that exists and is writable, or can be created"
    if str(value) == "":
        raise fail(name, "''", expected)
    base = _existing_ancestor(path)
    if not base.is_dir():
        what = "a file" if base == path.absolute() else f"below {received(str(base))}, which is not a folder"
        raise fail(name, f"{received(str(path))}, {what}", expected)
    _probe(name, base, path, expected)
    return path


def writable_file(name: str, value: Any) -> Path:
    """A path the package can write a file to (atomically, beside it): not a folder, and its
    folder exists and is writable or can be created (see :func:`writable_folder`)."""
    path = Path(path_like(name, value))
    expected = "a writable file path"
    if str(value) == "" or path.is_dir():
        raise fail(name, f"{received(str(value))}" + (", a folder" if str(value) else ""), expected)
    if os.path.lexists(path) and not path.is_file() and not path.is_symlink():
        raise fail(name, f"{received(str(path))}, not a regular file", expected)
    base = _existing_ancestor(path.parent)
    if not base.is_dir():
        raise fail(name, f"{received(str(path))}, below {received(str(base))}, which is not a folder", expected)
    _probe(name, base, path, expected)
    return path


def exclusive(*options: tuple[str, Any]) -> None:
    """Refuse contradictory options: at most one of the ``(flag, value)`` pairs may be given
    (a value other than None and False)."""
    given = [flag for flag, value in options if value is not None and value is not False]
    if len(given) > 1:
        raise fail(" / ".join(given), "all of them", f"at most one of {', '.join(f for f, _ in options)}")


def error_line(exc: BaseException) -> str:
    """``error: <message>`` on one line, as every CLI subcommand prints it before exit status 2."""
    return "error: " + " ".join(str(exc).split())


# --------------------------------------------------------------------------- numerals on the command line
# One grammar for every numeric flag, narrower than Python's int and float (which take '５', '1_000',
# spaces, 'inf', 'nan'): ASCII digits, an optional sign, decimal point and exponent.

#: The longest numeral a flag takes (any value in any flag's range is shorter); longer text is refused unread.
MAX_NUMERAL_CHARS = 64
#: Worker processes of ``--jobs``: beyond any machine's cores here, below a fork storm.
MAX_JOBS = 64
#: The largest ``--seed``: a seed is stored as a JSON integer, which int64 readers must read back.
MAX_SEED = 2**63 - 1

_INTEGER_NUMERAL = re.compile(r"[+-]?[0-9]+")            # [0-9], not \d: ASCII digits only
_DECIMAL_NUMERAL = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")


def _numeral_text(name: str, text: Any, want: str) -> str:
    if not isinstance(text, str):
        raise fail(name, received(text), want)
    if len(text) > MAX_NUMERAL_CHARS:
        raise fail(name, received(text), f"{want} (a numeral of at most {MAX_NUMERAL_CHARS} characters, "
                                         "MAX_NUMERAL_CHARS)")
    return text


def _integer_of(name: str, text: str, want: str, exponent: bool) -> int | None:
    """The integer ``text`` writes (None: not an integer numeral); with ``exponent`` also a decimal
    numeral of integral value (``1e6``), refused before expansion beyond MAX_NUMERAL_CHARS digits."""
    if _INTEGER_NUMERAL.fullmatch(text):
        return int(text)
    if exponent and _DECIMAL_NUMERAL.fullmatch(text):
        import decimal

        value = decimal.Decimal(text)
        if value.adjusted() >= MAX_NUMERAL_CHARS:
            raise fail(name, received(text), f"{want} (at most {MAX_NUMERAL_CHARS} digits, MAX_NUMERAL_CHARS)")
        if value == value.to_integral_value():
            return int(value)
    return None


def int_numeral(name: str, text: Any, *, minimum: int | None = None, maximum: int | None = MAX_INTEGER,
                why: str | None = None, want: str | None = None, exponent: bool = False) -> int:
    """The integer a command-line numeral ``text`` writes, in ``[minimum, maximum]`` (``maximum=None``:
    the caller's validator states the range); the refusal says ``want`` (default: the range)."""
    if want is None:
        want = ("an integer" if minimum is None else f"an integer in {minimum:,}..{maximum:,}" if maximum is not None
                else f"an integer >= {minimum:,}")
    value = _integer_of(name, _numeral_text(name, text, want), want, exponent)
    if value is None:
        raise fail(name, received(text), want)
    if maximum is not None and (bad := _int_range(value, minimum, maximum, why)) is not None:
        raise fail(name, received(text), bad)
    return value


def real_numeral(name: str, text: Any, *, minimum: float | None = None, maximum: float | None = None,
                 want: str = "a number") -> float:
    """The real number a command-line numeral ``text`` writes, finite and in ``[minimum, maximum]``
    where those are given (else as read, ``inf`` for ``1e400``, for the caller's validator to refuse)."""
    if not _DECIMAL_NUMERAL.fullmatch(_numeral_text(name, text, want)):
        raise fail(name, received(text), want)
    value = float(text)
    if (minimum is not None or maximum is not None) and not (
            math.isfinite(value) and (minimum is None or value >= minimum) and (maximum is None or value <= maximum)):
        raise fail(name, received(text), want)
    return value


def seed_numeral(name: str, text: Any) -> int:
    """A seed on the command line: an integer numeral in 0..MAX_SEED (``--seed`` of every command)."""
    want = "a non-negative integer"
    value = _integer_of(name, _numeral_text(name, text, want), want, False)
    if value is None:
        raise fail(name, received(text), want)
    if not 0 <= value <= MAX_SEED:
        raise fail(name, received(text), "a non-negative integer below 2**63")
    return value


def _argument_error(exc: VerifyError, name: str) -> argparse.ArgumentTypeError:
    """A package error of a numeral as argparse's type error (argparse names the argument itself)."""
    return argparse.ArgumentTypeError(str(exc)[len(name) + 2:])


def int_arg(minimum: int, maximum: int, why: str | None = None) -> Any:
    """An argparse ``type`` for an integer flag in ``[minimum, maximum]`` (:func:`int_numeral`)."""
    def parse(text: str) -> int:
        try:
            return int_numeral("N", text, minimum=minimum, maximum=maximum, why=why)
        except VerifyError as exc:
            raise _argument_error(exc, "N") from None
    return parse


def seed_arg(text: str) -> int:
    """``--seed``'s type on every command line: a non-negative integer below 2**63 (:func:`seed_numeral`)."""
    try:
        return seed_numeral("--seed", text)
    except VerifyError as exc:
        raise _argument_error(exc, "--seed") from None


class ArgParser(argparse.ArgumentParser):
    """The one argument parser of every subcommand: a usage error is a :class:`VerifyError`
    (printed as ``error: PROG: MESSAGE (usage: ...)``, exit status 2), never argparse's own exit."""

    def error(self, message: str) -> None:  # type: ignore[override]
        usage = " ".join(self.format_usage().split()[1:])
        raise VerifyError(f"{self.prog}: {message} (usage: {usage})")
