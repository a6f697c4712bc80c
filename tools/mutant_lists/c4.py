"""Mutants of claim C4: one-line changes and the tests that must catch each."""

from mutant import ROWS, M  # noqa: F401

MUTANTS = [
    M('c4-literal-normalisation', 'verify/numeric/diversity.py',
      'd_k**2',
      'd_k',
      ('tests/test_diversity.py', 'tests/test_claim_c4.py')),
    M('replay-c4-error-names-case', 'verify/claims/c4.py',
      'with within(f"params.cases[{i}]"):',
      "with __import__('contextlib').nullcontext():",
      (ROWS + '[cli-replay-c4-literal-overflows]',)),
]
