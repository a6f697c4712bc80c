"""Ball-arithmetic certificates (verify/certify.py, Decomposition.arb_check) against independent
references: exact rationals, torch's attention, scipy's principal angles; and certificates that
must fail."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from scipy.linalg import subspace_angles

from verify.numeric import certify
from verify.numeric.dgp import head_projections, make_dgp
from verify.numeric.engine import decompose

# A float64 reference vs a 256-bit ball: the reference's own rounding (~1e-15 relative).
REF_RTOL = 1e-13


def _mid(x) -> float:
    return float(x.mid())


def test_balls_hold_floats_and_rationals_exactly():
    with certify.precision():
        third = certify.ball(Fraction(1, 3))
        assert certify.abs_at_most("3 · 1/3 − 1", 3 * third - 1, 1e-70).holds
        assert certify.abs_at_most("0.1 (float) − 1/10", certify.ball(0.1) - certify.ball(Fraction(1, 10)),
                                   1e-70).holds is False           # 0.1 is not 1/10 in binary
        assert _mid(certify.ball(0.1) - certify.ball(Fraction(1, 10))) == pytest.approx(5.551115123125783e-18)


@pytest.mark.parametrize("cert,holds", [
    (lambda: certify.greater_than("e − 2.718", certify.ball(1).exp() - certify.ball("2.718"), 0), True),
    (lambda: certify.greater_than("e − 2.719", certify.ball(1).exp() - certify.ball("2.719"), 0), False),
    (lambda: certify.between("π", certify.ball(-1).acos(), Fraction(314159, 100000), Fraction(314160, 100000)), True),
    (lambda: certify.between("π", certify.ball(-1).acos(), 3, Fraction(314159, 100000)), False),
], ids=["e-above", "e-not-above", "pi-in", "pi-not-in"])
def test_certificates_can_fail(cert, holds):
    with certify.precision():
        assert cert().holds is holds


def test_nw_estimates_in_arb_match_torch_attention():
    rng = np.random.default_rng(3)
    q, k, v = rng.standard_normal((3, 4)), rng.standard_normal((7, 4)), rng.standard_normal((7, 2))
    head = F.scaled_dot_product_attention(*(torch.from_numpy(a) for a in (q, k, v))).numpy()
    with certify.precision():
        est = certify.nw_softmax(q, k, v, certify.ball(1) / certify.ball(4).sqrt())
    assert np.allclose([[_mid(x) for x in row] for row in est], head, rtol=REF_RTOL, atol=0)
    # Gaussian NW vs a loop here
    b = 1.3
    w = np.exp(-((q[:, None, :] - k[None]) ** 2).sum(-1) / (2 * b * b))
    with certify.precision():
        est = certify.nw_gaussian(q, k, v, b)
    assert np.allclose([[_mid(x) for x in row] for row in est], (w @ v) / w.sum(1, keepdims=True), rtol=REF_RTOL)


def test_projector_overlap_matches_scipy_and_ignores_the_basis():
    rng = np.random.default_rng(5)
    U = head_projections("random", 3, 6, 2, rng=rng)
    A = U @ rng.standard_normal((3, 2, 2))            # the same subspaces in non-orthonormal bases
    with certify.precision():
        rho = certify.projector_overlap(A)
    for i in range(3):
        for j in range(3):
            ref = float(np.mean(np.cos(subspace_angles(U[i], U[j])) ** 2))
            assert abs(_mid(rho[i][j]) - ref) <= 1e-7      # scipy's angles: ~1e-8 near 0 (see test_diversity)


def test_decomposition_identity_certified_for_any_weights():
    W = head_projections("random", 3, 4, 2, rng=0)
    for method, alpha in (("exact", [1.5, -0.3, 0.2]), ("simulate", [0.2, 0.2, 0.2])):
        dec = decompose(make_dgp("bump", d=4), W, n=12, R=3, m=3, seed=1, method=method, alpha=np.array(alpha))
        chk = dec.arb_check(256)
        assert chk.points == 3 and chk.bound <= 1e-60, chk


#: 2^-200: far below float64 and far above the 256-bit working precision (~1e-77)
HAIR = Fraction(1, 2**200)


def _exact(q: Fraction):
    return certify.ball(q)


def _straddling(centre: Fraction, radius: Fraction):
    """A ball around ``centre`` with at least ``radius`` (arb rounds a radius up, never down)."""
    from flint import arb, fmpq

    return arb(fmpq(centre.numerator, centre.denominator), fmpq(radius.numerator, radius.denominator))


@pytest.mark.parametrize("make, holds", [
    # |x| <= b: the ball's upper end decides, equality included
    (lambda: certify.abs_at_most("x", _exact(Fraction(1, 2)), 0.5), True),
    (lambda: certify.abs_at_most("x", _exact(Fraction(1, 2) + HAIR), 0.5), False),
    (lambda: certify.abs_at_most("x", _exact(-Fraction(1, 2) - HAIR), 0.5), False),
    (lambda: certify.abs_at_most("x", _straddling(Fraction(1, 4), Fraction(1, 4) + HAIR), 0.5), False),
    # x > t: strict, the ball's lower end decides
    (lambda: certify.greater_than("x", _exact(Fraction(3)), 3), False),
    (lambda: certify.greater_than("x", _exact(Fraction(3) + HAIR), 3), True),
    (lambda: certify.greater_than("x", _straddling(Fraction(3) + HAIR, 2 * HAIR), 3), False),
    # lo <= x <= hi: both ends, equality included
    (lambda: certify.between("x", _exact(Fraction(1)), 1, 2), True),
    (lambda: certify.between("x", _exact(Fraction(2)), 1, 2), True),
    (lambda: certify.between("x", _exact(Fraction(1) - HAIR), 1, 2), False),
    (lambda: certify.between("x", _exact(Fraction(2) + HAIR), 1, 2), False),
    (lambda: certify.between("x", _straddling(Fraction(3, 2), Fraction(1, 2) + HAIR), 1, 2), False),
], ids=["abs-equal", "abs-hair-above", "abs-hair-below-negative", "abs-ball-hair-over",
        "gt-equal", "gt-hair-above", "gt-ball-straddles", "between-lo", "between-hi",
        "between-hair-below", "between-hair-above", "between-ball-hair-over"])
def test_certificates_at_their_boundary(make, holds):
    with certify.precision():
        assert make().holds is holds
