"""Mutants of claim C7: one-line changes and the tests that must catch each."""

from mutant import ROWS, M  # noqa: F401

MUTANTS = [
    M('c7-stated-law-exponent', 'verify/claims/c7.py',
      'law = (mpmath.log(n2) / mpmath.log(n1)) ** (mpmath.mpf(2) / (4 + d))',
      'law = (mpmath.log(n2) / mpmath.log(n1)) ** (mpmath.mpf(2) / (6 + d))',
      ('tests/test_claim_c7.py',)),
    M('c7-slow-growth-criterion', 'verify/claims/c7.py',
      'SLOW_SLOPE_DROP = 0.3',
      'SLOW_SLOPE_DROP = 0.9',
      ('tests/test_claim_c7.py',)),
    M('replay-c7-n1-below-n2', 'verify/claims/c7.py',
      '    if not n1 < n2:\n',
      '    if False:\n',
      (ROWS + '[cli-replay-c7-n2-below-n1]',)),
    M('replay-c7-case-cap', 'verify/claims/c7.py',
      'MAX_REPLAY_CASES = 128',
      'MAX_REPLAY_CASES = 10**6',
      (ROWS + '[cli-replay-c7-too-many-cases]',)),
    M('c7-empirical-any-seed', 'verify/claims/c7.py',
      'violates=bool(growth) and all(o > LAW_FACTOR for o in off)',
      'violates=bool(growth) and any(o > 1e9 for o in off)',
      ('tests/test_claim_c7.py',)),
]
