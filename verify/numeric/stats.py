"""The statistics the claims' judgements rest on, each once: a mean and its standard error, paired
differences, z, a bootstrap, the variance of a target under its design and the R² it enters.

``R² = 1 − (MSE − noise part) / Var f`` (SPEC, "How an experiment is designed"), with ``Var f``
computed without the estimator (:data:`VAR_F_METHODS`), never from an experiment's evaluation points.
"""

from __future__ import annotations

import math
from typing import Any

import mpmath
import numpy as np

from verify._validate import at_most, fail, one_of, positive_int
from verify._validate import seed as valid_seed
from verify.numeric.dgp import DGP, TORUS_RADIUS

__all__ = ["mean_se", "paired", "z_score", "bootstrap_argmin", "r_squared", "target_variance", "VAR_F_METHODS",
           "QUADRATURE_NODES", "MC_POINTS"]

#: How ``Var f`` may be computed: ``closed`` (a formula of the design, where the package knows one),
#: ``quadrature`` (product and sum targets on the normal or uniform design, by 1-D Gauss rules),
#: ``monte-carlo`` (seeded draws of the design; the value carries its standard error).
VAR_F_METHODS = ("closed", "quadrature", "monte-carlo")
#: Nodes of the one-dimensional rules: the targets are entire functions of a coordinate, which 120
#: nodes integrate to float64 rounding (sin(2t) under N(0, 1): below 1e-16).
QUADRATURE_NODES = 120
#: Draws of the design for a Monte Carlo Var f: relative SE about 0.5% for the bump target in d = 8.
MC_POINTS = 2**20
#: Draws per block of the Monte Carlo (memory ~ CHUNK · d floats).
CHUNK = 2**16
#: How each target combines its coordinates, for quadrature: one coordinate, a sum, a product.
_STRUCTURE = {"single-index": "one", "linear": "one", "additive": "sum", "bump": "product"}


def mean_se(values: Any) -> tuple[float, float]:
    """The mean of ``k`` independent values and its standard error ``sd/sqrt(k)`` (sample sd,
    ddof = 1); the error is infinite for one value (no spread to estimate it from)."""
    v = np.asarray(values, dtype=float).ravel()
    if v.size == 0:
        raise ValueError("mean_se of no values")
    se = float(v.std(ddof=1) / math.sqrt(v.size)) if v.size > 1 else math.inf
    return float(v.mean()), se


def paired(a: Any, b: Any) -> tuple[float, float]:
    """Mean and standard error of the paired differences ``b − a`` (the same replicates)."""
    return mean_se(np.asarray(b, dtype=float) - np.asarray(a, dtype=float))


def z_score(mean: float, se: float) -> float:
    """``mean / se``; with ``se = 0`` an infinite z of the mean's sign (0 for a zero mean)."""
    if se > 0:
        return mean / se
    return math.copysign(math.inf, mean) if mean != 0 else 0.0


def bootstrap_argmin(values: Any, rng: np.random.Generator, resamples: int) -> np.ndarray:
    """``values`` (draws × k options, one row per independent draw): the share of ``resamples``
    bootstrap resamples of the rows in which each option has the least mean (ties to the first):
    the bootstrap probability that each option is the argmin of the mean."""
    v = np.asarray(values, dtype=float)
    if v.ndim != 2 or v.shape[0] < 2 or not np.all(np.isfinite(v)):
        raise fail("values", f"shape {v.shape}", "a finite (draws, options) array with at least two draws")
    resamples = positive_int("resamples", resamples)
    idx = rng.integers(0, v.shape[0], size=(resamples, v.shape[0]))
    winners = np.argmin(v[idx].mean(axis=1), axis=1)
    return np.bincount(winners, minlength=v.shape[1]) / resamples


def r_squared(mse: Any, var_f: Any, noise: Any = 0.0) -> Any:
    """``1 − (mse − noise)/var_f`` (arrays broadcast): the share of the target's variance learnt.
    ``noise``: the σ² part of ``mse`` (0 for an MSE against the noiseless f, σ² against y)."""
    mse_a, noise_a, var_a = (np.asarray(x, dtype=float) for x in (mse, noise, var_f))
    if not np.all(np.isfinite(mse_a)) or np.any(mse_a < 0):
        raise fail("mse", repr(mse)[:80], "finite non-negative mean squared errors")
    if not np.all(np.isfinite(noise_a)) or np.any(noise_a < 0):
        raise fail("noise", repr(noise)[:80], "a finite non-negative noise part")
    if not np.all(np.isfinite(var_a)) or np.any(var_a <= 0):
        raise fail("var_f", repr(var_f)[:80], "positive finite variances of f")
    out = 1.0 - (mse_a - noise_a) / var_a
    return float(out) if out.ndim == 0 else out


def _closed(dgp: DGP) -> float | None:
    """Var f in closed form, where the package knows one (else None): ``single-index`` sin(ω x_1) has
    ``(1 − e^{−2ω²})/2`` on the normal design, ``(1 − J_0(2ωr))/2`` on the torus (x_1 = r cos θ); the
    torus ``block`` is ``sin 2θ`` summed over circles; ``bump`` (width w) ``(1 + 2/w²)^{−d/2} −
    (1 + 1/w²)^{−d}``."""
    params = dict(dgp.params)
    w, r, d = float(params.get("freq", 2.0)), TORUS_RADIUS, dgp.d
    if dgp.design == "normal":
        if dgp.name == "bump":
            wd = float(params.get("width", 1.0)) ** 2
            return (1 + 2 / wd) ** (-d / 2) - (1 + 1 / wd) ** (-d)
        return {"single-index": (1 - math.exp(-2 * w * w)) / 2, "linear": 1.0, "additive": (1 - math.exp(-2)) / 2,
                "block": 1.0, "sin-block": 1.0, "zero": 0.0}.get(dgp.name)
    if dgp.design == "torus":
        return {"single-index": (1 - float(mpmath.besselj(0, 2 * w * r))) / 2, "linear": r * r / 2, "block": 0.5,
                "zero": 0.0}.get(dgp.name)
    return None


def _quadrature(dgp: DGP) -> float | None:
    """Var f by 1-D Gauss rules (Hermite for the normal design, Legendre for the uniform one) of f
    along ``t e_1``, for targets of one coordinate, a sum or a product of coordinates (else None)."""
    kind = _STRUCTURE.get(dgp.name)
    if kind is None or dgp.design not in ("normal", "uniform"):
        return None
    if dgp.design == "normal":       # probabilists' Hermite: weight exp(-t²/2), total sqrt(2π)
        t, w = np.polynomial.hermite_e.hermegauss(QUADRATURE_NODES)
        w = w / math.sqrt(2 * math.pi)
    else:                            # uniform on [-√3, √3]: unit variance
        t, w = np.polynomial.legendre.leggauss(QUADRATURE_NODES)
        t, w = math.sqrt(3.0) * t, w / 2
    x = np.zeros((t.size, dgp.d))
    x[:, 0] = t
    g = np.asarray(dgp.f(x), dtype=float)          # f along t e_1 (g(0) = 1 on the other axes of a product)
    mean, second = float(w @ g), float(w @ (g * g))
    if kind == "one":
        return second - mean * mean
    if kind == "sum":                              # independent coordinates, the same part each
        return dgp.d * (second - mean * mean)
    return second**dgp.d - mean ** (2 * dgp.d)


def target_variance(dgp: DGP, *, method: str, seed: int = 0, points: int = MC_POINTS) -> tuple[float, float]:
    """``(Var f, its standard error)`` of ``dgp``'s target under its design density, by ``method``
    (:data:`VAR_F_METHODS`; SE 0 for the exact ones). Monte Carlo: ``points`` draws from ``default_rng(seed)``,
    sample variance (ddof 1), SE from the fourth central moment."""
    if not isinstance(dgp, DGP):
        raise fail("dgp", type(dgp).__name__, "a verify.numeric.dgp.DGP")
    method = one_of("method", method, VAR_F_METHODS)
    if method != "monte-carlo":
        value = _closed(dgp) if method == "closed" else _quadrature(dgp)
        if value is None:
            raise fail("method", repr(method), f"a method that knows the {dgp.name!r} target on the {dgp.design!r} "
                                               "design ('monte-carlo' knows every one)")
        return float(value), 0.0
    rng = np.random.default_rng(valid_seed("seed", seed))
    points = at_most("points", positive_int("points", points, minimum=2), 2**26, "memory and time: 8 d floats a draw")
    values = np.concatenate([dgp.f(dgp.sample_x(rng, (min(CHUNK, points - k),))) for k in range(0, points, CHUNK)])
    dev = values - values.mean()
    var = float(np.sum(dev * dev) / (values.size - 1))
    m4 = float(np.mean(dev ** 4))
    return var, math.sqrt(max(m4 - var * var, 0.0) / values.size)
