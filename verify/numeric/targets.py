"""The variance of a regression target under its design density, ``Var f = E f(x)² − (E f(x))²``,
by quadrature: the denominator of an experiment's R² (SPEC, "How an experiment is designed").

The targets of :mod:`verify.numeric.dgp` reduce to one-dimensional integrals over a coordinate of
the (product) design density: ``single-index`` and ``linear`` depend on ``x_1`` only, ``additive``
is a sum of one function of each coordinate, ``bump`` a product. Each integral is taken by
Gauss–Hermite quadrature (normal design) or Gauss–Legendre quadrature (uniform design) on the
target's own ``f`` along ``t e_1``; nothing here reuses an experiment's evaluation points, so the
R² it enters is not a restatement of the Monte Carlo it labels.
"""

from __future__ import annotations

import math

import numpy as np

from verify._validate import fail, one_of
from verify.numeric.dgp import DGP

__all__ = ["target_variance", "QUADRATURE_NODES", "STRUCTURE"]

#: Nodes of the one-dimensional rules: the targets are entire functions of a coordinate (sines,
#: Gaussians, polynomials) against a Gaussian or bounded weight, where 120 nodes integrate to
#: float64 rounding (sin(2t) under N(0, 1): the error of the 120-node rule is below 1e-16).
QUADRATURE_NODES = 120
#: How each target combines its coordinates: one coordinate, a sum over coordinates, a product.
STRUCTURE = {"single-index": "one", "linear": "one", "additive": "sum", "bump": "product"}


def _rule(design: str) -> tuple[np.ndarray, np.ndarray]:
    """Nodes and weights of the design's one-coordinate density (weights sum to 1)."""
    if design == "normal":       # probabilists' Hermite: weight exp(-t²/2), total sqrt(2π)
        t, w = np.polynomial.hermite_e.hermegauss(QUADRATURE_NODES)
        return t, w / math.sqrt(2 * math.pi)
    t, w = np.polynomial.legendre.leggauss(QUADRATURE_NODES)   # uniform on [-√3, √3]: unit variance
    return math.sqrt(3.0) * t, w / 2


def target_variance(dgp: DGP, design: str = "normal") -> float:
    """``Var f`` of ``dgp``'s target under its design density (``normal``: N(0, I_d); ``uniform``:
    U[−√3, √3]^d), by one-dimensional quadrature of f along ``t e_1`` (module docstring)."""
    if not isinstance(dgp, DGP):
        raise fail("dgp", type(dgp).__name__, "a verify.numeric.dgp.DGP")
    kind = STRUCTURE.get(dgp.name)
    if kind is None:
        raise fail("dgp.name", repr(dgp.name), f"one of {', '.join(STRUCTURE)}")
    design = one_of("design", design, ("normal", "uniform"))
    t, w = _rule(design)
    x = np.zeros((t.size, dgp.d))
    x[:, 0] = t
    g = np.asarray(dgp.f(x), dtype=float)          # f along t e_1: g(t) (+ constants of the other coordinates)
    mean, second = float(w @ g), float(w @ (g * g))
    var_1 = second - mean * mean                   # the variance of one coordinate's part
    if kind == "one":
        return var_1
    if kind == "sum":                              # independent coordinates, the same part each
        return dgp.d * var_1
    return second**dgp.d - mean ** (2 * dgp.d)     # product of independent parts (g(0) = 1 on the other axes)
