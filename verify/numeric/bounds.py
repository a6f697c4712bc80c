"""Float64 rounding bounds of the package's numeric identities (first order, with a safety factor).

An identity checked in float64 holds "to rounding" when its residual, relative to the magnitudes
of its terms, is at most a bound of the form ``safety · eps · (number of rounded operations that
feed one output)``. Each bound here states what it counts.
"""

from __future__ import annotations

import numpy as np

__all__ = ["EPS", "DECOMPOSITION_SAFETY", "decomposition_bound"]

EPS = float(np.finfo(np.float64).eps)
#: Factor on the first-order float64 bound ``eps · (R + H² + n)`` of the MSE decomposition's
#: residual relative to the terms' magnitudes: means over R replicates, sums over H² head pairs
#: and, on the engine's exact path, over n training points (Higham's worst case is ~1).
DECOMPOSITION_SAFETY = 4.0


def decomposition_bound(R: int, H: int, n: int) -> float:
    """Float64 rounding bound ``4 eps (R + H² + n)`` on the relative residual of the MSE
    decomposition the engine (:func:`verify.numeric.engine.decompose`) measures: the MSE against
    ``bias² + Σ α_h² V_h + Σ_{h≠h'} α_h α_h' C_hh'``, relative to ``|MSE| + bias² + |var| + |cov|``."""
    return DECOMPOSITION_SAFETY * EPS * (R + H * H + n)
