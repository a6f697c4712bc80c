"""Mutants of claim C2: one-line changes and the tests that must catch each."""

from mutant import ROWS, M  # noqa: F401

MUTANTS = [
    M('c2-simplex-test', 'verify/claims/c2.py',
      'on = bool(np.all(alpha >= 0) and abs(float(alpha.sum()) - 1) <= SIMPLEX_TOL)',
      'on = bool(abs(float(alpha.sum()) - 1) <= SIMPLEX_TOL)',
      ('tests/test_claim_c2.py',)),
    M('replay-c2-overflow', 'verify/claims/c2.py',
      'if not (np.all(np.isfinite(alpha)) and math.isfinite(total)):',
      'if False:',
      (ROWS + '[cli-replay-c2-products-overflow]',)),
]
