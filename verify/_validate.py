"""Input validation at the public boundary: one small helper per kind of check.

Every failure raises :class:`verify.errors.VerifyError` with a message that names the
argument, what was received and what was expected.
"""

from __future__ import annotations

import numbers
from typing import Any

import numpy as np

from .errors import VerifyError

__all__ = [
    "as_array",
    "positive_number",
    "positive_int",
    "full_column_rank",
    "fail",
]

# Singular values below this fraction of the largest one count as zero when deciding that
# a projection is rank-deficient (a few hundred ulps of float64, well above rounding noise).
RANK_RTOL = 1e-10


def fail(name: str, received: Any, expected: str) -> VerifyError:
    """Build the package error: ``name: expected ..., got ...``."""
    return VerifyError(f"{name}: expected {expected}, got {received}")


def _describe(x: Any) -> str:
    if isinstance(x, np.ndarray):
        return f"array of shape {x.shape} and dtype {x.dtype}"
    return repr(x)


def as_array(
    name: str,
    x: Any,
    *,
    ndim: int | None = None,
    min_ndim: int | None = None,
    finite: bool = True,
    keep_float32: bool = True,
) -> np.ndarray:
    """Return ``x`` as a real floating array (float64, or float32 if it already is one).

    Rejects non-numeric, complex and boolean input, wrong ranks and (by default) NaN/inf.
    """
    if isinstance(x, (str, bytes)) or x is None:
        raise fail(name, _describe(x), "a real numeric array")
    try:
        arr = np.asarray(x)
    except Exception as exc:  # ragged nested lists and the like
        raise fail(name, f"{type(x).__name__} that numpy cannot read ({exc})", "a real numeric array") from None
    if arr.dtype.kind not in "iuf":
        raise fail(name, _describe(arr), "a real numeric array (int or float dtype)")
    if arr.dtype == np.float32 and keep_float32:
        arr = arr.astype(np.float32, copy=False)
    else:
        arr = arr.astype(np.float64, copy=False)
    if ndim is not None and arr.ndim != ndim:
        raise fail(name, f"shape {arr.shape} ({arr.ndim} axes)", f"{ndim} axes")
    if min_ndim is not None and arr.ndim < min_ndim:
        raise fail(name, f"shape {arr.shape} ({arr.ndim} axes)", f"at least {min_ndim} axes")
    if finite and not np.all(np.isfinite(arr)):
        bad = int(np.size(arr) - np.count_nonzero(np.isfinite(arr)))
        raise fail(name, f"{bad} NaN/inf entries in an array of shape {arr.shape}", "finite values")
    return arr


def positive_number(name: str, value: Any, *, allow_none: bool = False) -> float | None:
    """A finite real number > 0."""
    if value is None and allow_none:
        return None
    if isinstance(value, bool) or not isinstance(value, (numbers.Real, np.floating, np.integer)):
        raise fail(name, repr(value), "a positive finite real number")
    v = float(value)
    if not np.isfinite(v) or v <= 0:
        raise fail(name, repr(value), "a positive finite real number")
    return v


def positive_int(name: str, value: Any, *, minimum: int = 1) -> int:
    """An integer >= ``minimum`` (bools are rejected)."""
    if isinstance(value, bool) or not isinstance(value, (numbers.Integral, np.integer)):
        raise fail(name, repr(value), f"an integer >= {minimum}")
    v = int(value)
    if v < minimum:
        raise fail(name, repr(value), f"an integer >= {minimum}")
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
