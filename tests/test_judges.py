"""The judges of C2 (and the thresholds that decide a part's outcome) as tables of synthetic inputs
on both sides of every threshold, equality included, so that `and`/`or`, `>`/`>=` and tolerance
mutants fail. The judges of C1, C3, C4 and C8 have their tables in tests/test_claim_cN.py; the
verdict rule in tests/test_verdicts.py."""

from __future__ import annotations

import numpy as np
import pytest

from verify.claims import c2
from verify.numeric.attention import EPS

pytestmark = pytest.mark.claim("C2", part="detail")

ABOVE_ONE = np.nextafter(1.0, 2.0)
#: Half and twice the declared tolerance (the sums below are off from 1 by these, to rounding).
HALF, TWICE = 0.5 * c2.SIMPLEX_TOL, 2.0 * c2.SIMPLEX_TOL


@pytest.mark.parametrize("alpha,tol,on", [
    ([0.5, 0.5], None, True),
    ([0.0, 1.0], None, True),                                  # a zero weight is on the simplex
    ([-0.0, 1.0], None, True),
    ([-2.0**-60, 1.0 + 2.0**-60], None, False),                # a negative weight, however small
    ([0.5, 0.5 + HALF], None, True),                           # |Σα − 1| half the tolerance
    ([0.5, 0.5 + TWICE], None, False),                         # twice it
    ([0.5, 0.5 + 2.0**-40], 2.0**-40, True),                   # exactly at the tolerance
    ([0.5, 0.5 + 2.0**-40], 2.0**-41, False),
    ([0.5, 0.5 - 2.0**-40], 2.0**-40, True),                   # below 1 by the tolerance
    ([0.5, 0.5 - 2.0**-39], 2.0**-40, False),
    ([2.0, -1.0], None, False),                                # sums to 1 with a negative weight
    ([1.0, 1.0], None, False),                                 # non-negative, sums to 2
], ids=["average", "zero-weight", "minus-zero", "tiny-negative", "sum-below-tol", "sum-above-tol", "sum-at-tol",
        "sum-above-smaller-tol", "sum-at-tol-below-1", "sum-below-1-beyond-tol", "negative-sum-1", "sum-2"])
def test_simplex_judge(alpha, tol, on, monkeypatch):
    if tol is not None:
        monkeypatch.setattr(c2, "SIMPLEX_TOL", tol)
    a = np.array(alpha)
    assert c2.on_simplex(a) is on
    # the replayer judges the same: α_h = W_V^h W_O^h with W_O = 1
    out = c2.replay_free_weights({"W_V": [[x] for x in alpha], "W_O": [[1.0] for _ in alpha]})
    assert out.violates is (not on)


@pytest.mark.parametrize("ratio,key_bias,ok", [
    (0.0, 0.0, True), (1.0, 1.0, True), (ABOVE_ONE, 0.0, False), (0.0, ABOVE_ONE, False), (2.0, 2.0, False),
], ids=["zero", "at-bound", "error-over", "key-bias-over", "both-over"])
def test_ensemble_agreement_judge(ratio, key_bias, ok):
    assert c2.ensemble_agrees(ratio, key_bias) is ok


@pytest.mark.parametrize("ratio,closed,bound,gap,ok", [
    (1.0, 3e-16, 3e-16, 4 * EPS, True),
    (ABOVE_ONE, 0.0, 3e-16, 0.0, False),
    (0.5, np.nextafter(3e-16, 1.0), 3e-16, 0.0, False),
    (0.5, 0.0, 3e-16, np.nextafter(4 * EPS, 1.0), False),
    (0.0, 0.0, 0.0, 0.0, True),
], ids=["all-at-threshold", "module-over", "closed-form-over", "alpha-gap-over", "all-zero"])
def test_scalar_agreement_judge(ratio, closed, bound, gap, ok):
    assert c2.scalar_agrees(ratio, closed, bound, gap) is ok
