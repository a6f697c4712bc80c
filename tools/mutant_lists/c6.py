"""Mutants of claim C6: one-line changes and the tests that must catch each."""

from mutant import ROWS, M  # noqa: F401

MUTANTS = [
    M('c6-signal-heads', 'verify/claims/c6.py',
      'cols = [[0, *range(1 + h * (d_k - 1), 1 + (h + 1) * (d_k - 1))] for h in range(H)]',
      'cols = [[1, *range(1 + h * (d_k - 1), 1 + (h + 1) * (d_k - 1))] for h in range(H)]',
      ('tests/test_claim_c6.py',)),
    M('c6-bound-certificate', 'verify/claims/c6.py',
      'bound = 1 - max(Fraction(0), (Fraction(H * d_k, d) - 1) / (H - 1))',
      'bound = 1 - max(Fraction(0), (Fraction(H * d_k, d) - 1) / H)',
      ('tests/test_claim_c6.py',)),
    M('replay-c6-seed-truncated', 'verify/claims/c6.py',
      'seed = valid_seed("params.seed", params["seed"])\n    starts',
      'seed = int(params["seed"])\n    starts',
      (ROWS + '[cli-replay-c6-seed-fraction]', ROWS + '[cli-replay-c6-seed-string]')),
]
