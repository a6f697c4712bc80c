"""Mutants of claim C2: one-line changes and the tests that must catch each."""

from mutant import ROWS, M  # noqa: F401

T = 'tests/test_claim_c2.py'
HL = 'tests/test_headlines.py'

MUTANTS = [
    # the judges and their thresholds
    M('c2-simplex-test', 'verify/claims/c2.py',
      'return bool(np.all(alpha >= 0) and abs(float(alpha.sum()) - 1) <= SIMPLEX_TOL)',
      'return bool(abs(float(alpha.sum()) - 1) <= SIMPLEX_TOL)',
      (T,)),
    M('c2-simplex-and-or', 'verify/claims/c2.py',
      'return bool(np.all(alpha >= 0) and abs(float(alpha.sum()) - 1) <= SIMPLEX_TOL)',
      'return bool(np.all(alpha >= 0) or abs(float(alpha.sum()) - 1) <= SIMPLEX_TOL)',
      (T + '::test_simplex_judge',)),
    M('c2-simplex-zero-weight-gt', 'verify/claims/c2.py',
      'np.all(alpha >= 0) and',
      'np.all(alpha > 0) and',
      (T + '::test_simplex_judge',)),
    M('c2-simplex-tol-lt', 'verify/claims/c2.py',
      'abs(float(alpha.sum()) - 1) <= SIMPLEX_TOL)',
      'abs(float(alpha.sum()) - 1) < SIMPLEX_TOL)',
      (T + '::test_simplex_judge',)),
    M('c2-ensemble-and-or', 'verify/claims/c2.py',
      'return bool(worst_ratio <= 1.0 and key_bias_ratio <= 1.0)',
      'return bool(worst_ratio <= 1.0 or key_bias_ratio <= 1.0)',
      (T + '::test_ensemble_agreement_judge',)),
    M('c2-scalar-and-or', 'verify/claims/c2.py',
      'return bool(worst_ratio <= 1.0 and closed_err <= closed_bound',
      'return bool(worst_ratio <= 1.0 or closed_err <= closed_bound',
      (T + '::test_scalar_agreement_judge',)),
    M('c2-scalar-alpha-gap-lt', 'verify/claims/c2.py',
      'alpha_gap <= 4 * EPS)',
      'alpha_gap < 4 * EPS)',
      (T + '::test_scalar_agreement_judge',)),
    # the figures the correction and the summary quote
    M('c2-min-alpha-max', 'verify/claims/c2.py',
      '"min_alpha": min(min(r["alpha"]) for r in rows)',
      '"min_alpha": max(min(r["alpha"]) for r in rows)',
      (T + '::test_c2_correction_quotes_the_weights_as_recomputed',)),
    M('c2-simplex-count-wrong-list', 'verify/claims/c2.py',
      '"modules_on_simplex": sum(r["on_simplex"] for r in rows)',
      '"modules_on_simplex": sum(not r["on_simplex"] for r in rows)',
      (T + '::test_c2_correction_quotes_the_weights_as_recomputed',)),
    M('c2-sum-range-max', 'verify/claims/c2.py',
      '"sum_alpha_range": [min(sums), max(sums)]',
      '"sum_alpha_range": [max(sums), max(sums)]',
      (T + '::test_c2_headline_summary_and_core_finding_exactly',)),
    M('c2-agrees-exactly-inverted', 'verify/claims/__init__.py',
      'return "exactly" if x == 0 else',
      'return "exactly" if x != 0 else',
      (HL + '::test_no_figure_reads_zero_times_a_power_of_ten',)),
    M('replay-c2-overflow', 'verify/claims/c2.py',
      'if not (np.all(np.isfinite(alpha)) and math.isfinite(total)):',
      'if False:',
      (ROWS + '[cli-replay-c2-products-overflow]',)),
]
