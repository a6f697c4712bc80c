"""Exact rational linear algebra for replays that must not round (C5's counterexamples outside
the model): matrices as lists of rows of :class:`fractions.Fraction`, products, transposes,
Gauss–Jordan inverses, projector overlaps ``ρ = tr(P_a P_b)/d_k`` and exact square roots, and
the parsing of a rational from a replay file with a bound on its size.
"""

from __future__ import annotations

import math
import re
from fractions import Fraction
from typing import Any

from verify._validate import fail

__all__ = ["Matrix", "matmul", "transpose", "inverse", "projector_overlap", "exact_sqrt", "rational",
           "MAX_RATIONAL_CHARS"]

Matrix = list[list[Fraction]]

#: A rational read from a file has at most this many characters ("104/9"; C5's saved cases use
#: <= 4), so no entry (say "1" followed by a million zeros) asks for unbounded integers.
MAX_RATIONAL_CHARS = 40
_RATIONAL = re.compile(r"[+-]?(\d+(/\d+)?|\d*\.\d+|\d+\.)")


def matmul(a: Matrix, b: Matrix) -> Matrix:
    """``a b`` (exact)."""
    return [[sum((a[i][k] * b[k][j] for k in range(len(b))), Fraction(0)) for j in range(len(b[0]))]
            for i in range(len(a))]


def transpose(a: Matrix) -> Matrix:
    return [list(col) for col in zip(*a)]


def inverse(a: Matrix, name: str, received: str = "a singular matrix", expected: str = "an invertible matrix") -> Matrix:
    """Gauss–Jordan inverse of the square matrix ``a`` in exact rationals; a singular ``a`` raises
    VerifyError naming the argument ``name`` (with ``received`` and ``expected`` as its message)."""
    n = len(a)
    m = [row[:] + [Fraction(int(i == j)) for j in range(n)] for i, row in enumerate(a)]
    for c in range(n):
        p = next((r for r in range(c, n) if m[r][c] != 0), None)
        if p is None:
            raise fail(name, received, expected)
        m[c], m[p] = m[p], m[c]
        piv = m[c][c]
        m[c] = [x / piv for x in m[c]]
        for r in range(n):
            if r != c and m[r][c] != 0:
                f = m[r][c]
                m[r] = [x - f * y for x, y in zip(m[r], m[c])]
    return [row[n:] for row in m]


def projector_overlap(wa: Matrix, wb: Matrix, name: str) -> Fraction:
    """``ρ = tr(P_a P_b)/d_k = tr(G_aa⁻¹ G_ab G_bb⁻¹ G_ba)/d_k`` with ``G_xy = W_xᵀ W_y``: the
    subspace overlap of the column spans of two (d, d_k) matrices of full column rank, exactly."""
    gab = matmul(transpose(wa), wb)
    ga = inverse(matmul(transpose(wa), wa), name, "a rank-deficient head", "full column rank d_k")
    gb = inverse(matmul(transpose(wb), wb), name, "a rank-deficient head", "full column rank d_k")
    prod = matmul(matmul(matmul(ga, gab), gb), transpose(gab))
    return sum((prod[i][i] for i in range(len(prod))), Fraction(0)) / len(prod)


def exact_sqrt(q: Fraction) -> Fraction | None:
    """The rational square root of ``q >= 0``, or None if ``q`` is not the square of a rational."""
    a, b = math.isqrt(q.numerator), math.isqrt(q.denominator)
    return Fraction(a, b) if a * a == q.numerator and b * b == q.denominator else None


def rational(name: str, x: Any, max_chars: int = MAX_RATIONAL_CHARS) -> Fraction:
    """An exact rational from an int, a finite float (its shortest decimal) or a string "p/q" or
    "1.25" of at most ``max_chars`` characters."""
    if isinstance(x, float) and math.isfinite(x):
        return Fraction(str(x))
    if isinstance(x, int) and not isinstance(x, bool) and abs(x) < 10**max_chars:
        return Fraction(x)
    if isinstance(x, str) and len(x) <= max_chars and _RATIONAL.fullmatch(x.strip()):
        try:
            return Fraction(x.strip())
        except ZeroDivisionError:
            pass
    raise fail(name, repr(x)[:80], f"an exact rational (an int, a finite float or a string 'p/q' or '1.25' of at "
                                   f"most {max_chars} characters, q != 0)")
