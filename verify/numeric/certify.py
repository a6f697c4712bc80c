"""Certified enclosures in ball arithmetic (python-flint's ``arb``).

An mpmath recomputation rounds; an ``arb`` ball encloses the exact value of an expression of exactly
represented inputs (every float64 and rational converts exactly), so "|residual| ≤ 1e-60" or "x > 0"
read off a ball is certified for those inputs. The claim checks attach :class:`Certificate` records.
"""

from __future__ import annotations

from contextlib import contextmanager
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Iterator, Sequence

import numpy as np

from verify._validate import fail

__all__ = ["PREC", "Certificate", "precision", "ball", "abs_at_most", "greater_than", "between",
           "nw_softmax", "nw_gaussian", "projector_overlap"]

#: Working precision of every certificate, in bits (~77 decimal digits): far beyond what any
#: bound below needs, so the balls' radii (~1e-70) never decide a certificate.
PREC = 256


@dataclass(frozen=True)
class Certificate:
    """``value`` (an arb ball, as text) satisfies ``statement``; ``holds`` is read off the ball."""

    what: str
    statement: str
    enclosure: str
    holds: bool
    prec: int = PREC

    def to_dict(self) -> dict[str, Any]:
        return {"what": self.what, "statement": self.statement, "enclosure": self.enclosure,
                "holds": self.holds, "prec_bits": self.prec}

    def line(self) -> str:
        return f"certified ({self.prec}-bit arb): {self.what}: {self.statement}" + ("" if self.holds else " FAILS")


@contextmanager
def precision(bits: int = PREC) -> Iterator[None]:
    from flint import ctx

    old = ctx.prec
    ctx.prec = bits
    try:
        yield
    finally:
        ctx.prec = old


def ball(x: Any) -> Any:
    """An exact arb for a float64, int or Fraction (a str is read as a decimal, also exactly
    enclosed)."""
    from flint import arb, fmpq

    if isinstance(x, Fraction):
        return arb(fmpq(x.numerator, x.denominator))
    if isinstance(x, (bool, np.bool_)):
        raise fail("x", repr(x), "a number")
    if isinstance(x, (int, np.integer)):
        return arb(int(x))
    if isinstance(x, (float, np.floating)):
        return arb(float(x))
    if isinstance(x, str):
        return arb(x)
    return x


def _text(v: Any, digits: int = 20) -> str:
    return v.str(digits, radius=True) if hasattr(v, "str") else str(v)


def abs_at_most(what: str, value: Any, bound: float) -> Certificate:
    """Certified ``|value| ≤ bound`` (the upper end of the ball's absolute value)."""
    ub = abs(value).upper()
    # compared as balls: a float64 of the upper end would round a hair above the bound down to it
    return Certificate(what, f"|x| ≤ {bound:.0e} (the ball's bound {float(ub):.1e})", _text(value),
                       bool(ub <= ball(bound)))


def greater_than(what: str, value: Any, threshold: float | Fraction | int = 0) -> Certificate:
    """Certified ``value > threshold`` (the lower end of the ball above it)."""
    return Certificate(what, f"x > {threshold}", _text(value), bool(value.lower() > ball(threshold)))


def between(what: str, value: Any, lo: Any, hi: Any) -> Certificate:
    """Certified ``lo ≤ value ≤ hi``."""
    ok = bool(value.lower() >= ball(lo)) and bool(value.upper() <= ball(hi))
    return Certificate(what, f"{lo} ≤ x ≤ {hi}", _text(value), ok)


def _rows(a: Any) -> list[list[Any]]:
    return [[ball(float(x)) for x in row] for row in np.atleast_2d(np.asarray(a, dtype=float))]


def _nw(q: Sequence, k: Sequence, v: Sequence, kernel: Any) -> list[list[Any]]:
    """``Σ_j K(q, k_j) v_j / Σ_j K(q, k_j)`` in arb for each query row, ``kernel(q, k)`` in arb."""
    from flint import arb

    Q, K, V = _rows(q), _rows(k), _rows(v)
    out = []
    for qi in Q:
        w = [kernel(qi, kj) for kj in K]
        tot = sum(w, arb(0))
        out.append([sum((wj * vj[c] for wj, vj in zip(w, V)), arb(0)) / tot for c in range(len(V[0]))])
    return out


def nw_softmax(q: Sequence, k: Sequence, v: Sequence, scale: Any) -> list[list[Any]]:
    """The exponential-kernel NW estimate, ``K = exp(s q·k)``, in arb."""
    from flint import arb

    s = ball(scale)
    return _nw(q, k, v, lambda qi, kj: (s * sum((a * b for a, b in zip(qi, kj)), arb(0))).exp())


def nw_gaussian(q: Sequence, k: Sequence, v: Sequence, bandwidth: Any) -> list[list[Any]]:
    """The Gaussian NW estimate, ``K = exp(−|q − k|²/(2 b²))``, in arb."""
    from flint import arb

    b = ball(bandwidth)
    return _nw(q, k, v, lambda qi, kj: (-sum(((a - c) ** 2 for a, c in zip(qi, kj)), arb(0)) / (2 * b * b)).exp())


def projector_overlap(U: Any) -> list[list[Any]]:
    """``ρ_hh' = tr(P_h P_h')/d_k`` for the (H, d, d_k) float64 bases ``U`` in arb, with the exact
    projectors ``P_h = U_h (U_hᵀU_h)⁻¹ U_hᵀ`` (no orthonormality of the float columns assumed)."""
    from flint import arb_mat

    U = np.asarray(U, dtype=float)
    H, d, d_k = U.shape
    P = []
    for h in range(H):
        A = arb_mat([[ball(float(x)) for x in row] for row in U[h]])
        P.append(A * (A.transpose() * A).inv() * A.transpose())
    rho = [[None] * H for _ in range(H)]
    for i in range(H):
        for j in range(H):
            M = P[i] * P[j]
            rho[i][j] = sum((M[r, r] for r in range(d)), ball(0)) / d_k
    return rho
