"""Means with standard errors, the statistics the claims' Monte Carlo judgements rest on: one
place for ``SE = sd (ddof = 1) / sqrt(k)`` and the z-score ``mean / SE``."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

__all__ = ["mean_se", "paired", "z_score"]


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
