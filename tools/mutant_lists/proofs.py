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
    M('cache-stores-without-readback-check', 'proofs/cache.py',
      '        if _fingerprint(back["derivation"]) != _fingerprint(der) or back["dict"] != as_dict:',
      '        if back["dict"] != as_dict:',
      ('tests/test_derivation_cache.py::test_a_derivation_that_does_not_read_back_identical_is_not_stored',)),
    M('cache-readback-ignores-parameters', 'proofs/cache.py',
      '    exprs += [sp.srepr(x) for s in der.steps for x in _sympy_in(s.params)]',
      '    pass',
      ('tests/test_derivation_cache.py::test_a_derivation_that_does_not_read_back_identical_is_not_stored',)),
]
