"""Whether an experiment informs: judges of R² (:func:`verify.numeric.stats.r_squared`). R² near 1:
the ensemble learns the target; near 0 or below: its MSE sits near ``Var f`` and a comparison of
such MSEs says little.
"""

from __future__ import annotations

from typing import Any

__all__ = ["learns_little", "informs", "R2_LOW", "R2_INFORMATIVE"]

#: Below this R² an ensemble learns less than half of the target's variance: a comparison of such
#: ensembles says little, and the report says so (SPEC, "How an experiment is designed").
R2_LOW = 0.5
#: A comparison of estimators can come out either way only when the best of them learns at least
#: this share of Var f: below it every MSE sits near Var f (a tilt floor), and an experiment that could
#: not have confirmed a claim cannot refute it (SPEC, "How an experiment is designed"). A quarter is
#: "well above 0": several times the sampling error of R² in these experiments (about 0.01 to 0.03),
#: and clear of the Gaussian-design regimes (best R² at most 0.2) and the torus ones (at least 0.38).
R2_INFORMATIVE = 0.25
def learns_little(r2: float) -> bool:
    """An ensemble with this R² learns less than R2_LOW of the target's variance."""
    return bool(r2 < R2_LOW)


def informs(r2_values: Any) -> bool:
    """A comparison of configurations with these R² can confirm or refute: the best of them has
    R² at least R2_INFORMATIVE (at equality it informs)."""
    values = [float(v) for v in (r2_values.values() if isinstance(r2_values, dict) else r2_values)]
    return bool(values) and max(values) >= R2_INFORMATIVE
