"""Mutants of claim C1: one-line changes and the tests that must catch each."""

from mutant import ROWS, M  # noqa: F401

MUTANTS = [
    M('c1-named-case-keys', 'verify/claims/c1.py',
      '"keys": [[1.0, 0.0, 0.0, 0.0], [-1.0, 0.0, 0.0, 0.0]], "values": [[1.0], [0.0]]}',
      '"keys": [[1.0, 0.0, 0.0, 0.0], [-1.0, 0.0, 0.0, 0.0]], "values": [[1.0], [1.0]]}',
      ('tests/test_claim_c1.py',)),
    M('c1-unequal-bandwidth-grid', 'verify/claims/c1.py',
      'bands = sorted({*UNEQUAL_BANDWIDTHS, float(formulas.c1_gaussian_bandwidth(d_k))})',
      'bands = sorted({*UNEQUAL_BANDWIDTHS})[:1]',
      ('tests/test_claim_c1.py',)),
    M('c1-bandwidth-role', 'verify/claims/c1.py',
      'id="bandwidth as stated", role=Role.DETAIL,',
      'id="bandwidth as stated", role=Role.CORE,',
      ('tests/test_claim_c1.py', 'tests/test_snapshot.py')),
    M('replay-c1-terms-cap', 'verify/claims/c1.py',
      'at_most("params.queries, keys, values", m * n * (d_k + p + 1),',
      'at_most("params.queries, keys, values", m * n,',
      (ROWS + '[cli-replay-c1-unequal-too-large]',)),
    M('replay-c1-magnitude-cap', 'verify/claims/c1.py',
      'MAX_REPLAY_ABS = 1e100',
      'MAX_REPLAY_ABS = 1e300',
      (ROWS + '[cli-replay-c1-keys-huge]',)),
]
