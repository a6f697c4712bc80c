"""Mutants of the derivation framework: one-line changes and the tests that must catch each."""

from mutant import ROWS, M  # noqa: F401

MUTANTS = [
    M('checker-one-rational-point', 'proofs/core.py',
      'RATIONAL_POINTS = 6',
      'RATIONAL_POINTS = 1',
      ('tests/test_proofs_core.py',)),
    M('checker-small-integers', 'proofs/core.py',
      'INT_RANGE = 10**9',
      'INT_RANGE = 9',
      ('tests/test_proofs_core.py',)),
    M('cache-ignores-bytes', 'proofs/cache.py',
      '        h.update(len(data).to_bytes(8, "little") + data)',
      '        h.update(len(data).to_bytes(8, "little"))',
      ('tests/test_derivation_cache.py',)),
]
