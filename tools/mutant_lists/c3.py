"""Mutants of claim C3: one-line changes and the tests that must catch each."""

from mutant import ROWS, M  # noqa: F401

MUTANTS = [
    M('c3-certificate-level', 'verify/claims/c3.py',
      'CERTIFIED_RESIDUAL = 1e-60',
      'CERTIFIED_RESIDUAL = -1.0',
      ('tests/test_snapshot.py',)),
]
