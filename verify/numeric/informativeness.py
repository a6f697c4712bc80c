"""How much of the target an estimator learns (SPEC, "How an experiment is designed"):
``R² = 1 − (MSE − noise part) / Var f``, where the noise part of an NW ensemble's MSE is
``σ² E ||Σ_h α_h w^h||²`` (what the noise adds given the design) and ``Var f`` is the variance
of the target under the design density, computed here by its own Monte Carlo, independent of
the evaluation points of the experiment. R² near 1: the ensemble learns the target; near 0 or
below: its MSE sits near ``Var f`` and a comparison of such MSEs says little.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from verify.numeric.dgp import DGP

__all__ = ["target_variance", "r_squared", "learns_little", "informs", "TARGET_POINTS", "R2_LOW", "R2_INFORMATIVE"]

#: Draws of the design for Var f: its relative standard error is ~sqrt(kurtosis − 1)/sqrt(N), about
#: 0.5% for the bump target in d = 8 (the most peaked the checks use) and 0.1% for sin(2 x_1).
TARGET_POINTS = 2**20
#: Below this R² an ensemble learns less than half of the target's variance: a comparison of such
#: ensembles says little, and the report says so (SPEC, "How an experiment is designed").
R2_LOW = 0.5
#: A comparison of estimators can come out either way only when the best of them learns at least
#: this share of Var f: below it every MSE sits near Var f (a tilt floor), and an experiment that could
#: not have confirmed a claim cannot refute it (SPEC, "How an experiment is designed"). A quarter is
#: "well above 0": several times the sampling error of R² in these experiments (about 0.01 to 0.03),
#: and clear of the Gaussian-design regimes (best R² at most 0.2) and the torus ones (at least 0.38).
R2_INFORMATIVE = 0.25
#: Draws per block (memory ~ CHUNK · d floats).
CHUNK = 2**16


def target_variance(dgp: DGP, seed: int, points: int = TARGET_POINTS) -> tuple[float, float]:
    """``(Var f, its standard error)`` over ``points`` design draws ``x ~ p`` from
    ``default_rng(seed)`` (sample variance with ddof = 1; SE from the fourth central moment)."""
    rng = np.random.default_rng(seed)
    values = np.concatenate([dgp.f(dgp.sample_x(rng, (min(CHUNK, points - k),))) for k in range(0, points, CHUNK)])
    dev = values - values.mean()
    var = float(np.sum(dev * dev) / (values.size - 1))
    m4 = float(np.mean(dev ** 4))
    return var, math.sqrt(max(m4 - var * var, 0.0) / values.size)


def r_squared(mse: float, noise: float, var_f: float) -> float:
    """``1 − (mse − noise) / var_f``: the share of the target's variance the estimator learns."""
    return 1.0 - (mse - noise) / var_f


def learns_little(r2: float) -> bool:
    """An ensemble with this R² learns less than R2_LOW of the target's variance."""
    return bool(r2 < R2_LOW)


def informs(r2_values: Any) -> bool:
    """A comparison of configurations with these R² can confirm or refute: the best of them has
    R² at least R2_INFORMATIVE (at equality it informs)."""
    values = [float(v) for v in (r2_values.values() if isinstance(r2_values, dict) else r2_values)]
    return bool(values) and max(values) >= R2_INFORMATIVE
