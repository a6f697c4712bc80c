"""Mutants of claim C5: one-line changes and the tests that must catch each."""

from mutant import ROWS, M  # noqa: F401

MUTANTS = [
    M('c5-premise-scale', 'verify/claims/c5.py',
      'scale=factor / math.sqrt(d_k))',
      'scale=factor / d_k)',
      ('tests/test_claim_c5.py',)),
    M('c5-line-slope', 'verify/claims/c5.py',
      'return float(B * B + alpha @ C @ alpha)',
      'return float(B * B + alpha @ C @ alpha * 1.01)',
      ('tests/test_claim_c5.py', 'tests/test_snapshot.py')),
    M('replay-c5-replicate-cap', 'verify/claims/c5.py',
      'MAX_REPLAY_REPLICATES = 1024',
      'MAX_REPLAY_REPLICATES = 10**9',
      (ROWS + '[cli-replay-c5-batches-1000]', ROWS + '[cli-replay-c5-n-1e6-R-1e4]')),
    M('replay-c5-nw-passes', 'verify/claims/c5.py',
      '_nw_inputs(params, 4)',
      '_nw_inputs(params, 1)',
      (ROWS + '[cli-replay-c5-nw-R-too-large]',)),
    M('replay-c5-nw-R-one', 'verify/claims/c5.py',
      'min_R=2))',
      'min_R=1))',
      (ROWS + '[cli-replay-c5-nw-R-one]',)),
    M('replay-c5-rational-length', 'verify/claims/c5.py',
      'len(x) <= MAX_RATIONAL_CHARS and',
      '',
      (ROWS + '[cli-replay-c5-exact-V-too-many-digits]',)),
]
