"""Mutants of claim C9: one-line changes and the tests that must catch each."""

from mutant import ROWS, M  # noqa: F401

MUTANTS = [
    M('c9-gradient-scale', 'verify/experiments/training.py',
      '    c = 1.0 / math.sqrt(k)\n    Xt',
      '    c = 1.0 / k\n    Xt',
      ('tests/test_training.py',)),
    M('c9-setting-any-run', 'verify/claims/c9.py',
      '"violates": bool(np.all(dk < 0) and mk < -delta_min and t <= -t_min),',
      '"violates": bool(np.any(dk < 0) and mk < -delta_min and t <= -t_min),',
      ('tests/test_claim_c9.py',)),
    M('c9-checkpoint-any-layer', 'verify/claims/c9.py',
      '    return ReplayOutcome(violates=all(below), summary=summary, figures={"layers": rows})',
      '    return ReplayOutcome(violates=any(below), summary=summary, figures={"layers": rows})',
      ('tests/test_claim_c9.py',)),
]
