"""Mutants of the hostile-input checks (validators, replay fields, caps, output targets)."""

from mutant import ROWS, M  # noqa: F401

MUTANTS = [
    M('int-range-before-float-dropped', 'verify/_validate.py',
      'if isinstance(value, (numbers.Integral, np.integer)) and abs(int(value)) > _FLOAT_MAX_INT:',
      'if False:',
      (ROWS + "[cli-replay-c8-V1-400-digits]",)),
    M('max-integer-ignored', 'verify/_validate.py',
      '    if v > maximum:\n        why = why or',
      '    if False:\n        why = why or',
      (ROWS + "[dgp-d-400-digits]",)),
    M('control-chars-c1-not-escaped', 'verify/_validate.py',
      '_CONTROL = re.compile("[\\x00-\\x1f\\x7f-\\x9f]")',
      '_CONTROL = re.compile("[\\x00-\\x1f]")',
      ('tests/test_bad_input.py::test_replay_prints_text_from_the_file_with_control_characters_escaped',)),
    M('replay-version-bool-accepted', 'verify/judgment/counterexamples.py',
      'if type(version) is not int or version != VERSION:',
      'if version != VERSION:',
      (ROWS + "[cli-replay-version-true]",)),
    M('replay-sizes-not-against-data', 'verify/claims/c5/__init__.py',
      'if p[key] != value:',
      'if False:',
      (ROWS + "[cli-replay-c5-exact-H-disagrees-with-data]",)),
    M('sweep-targets-unchecked', 'verify/experiments/sweep.py',
      '    out = check_targets(out, keys)',
      '    out = Path(out)',
      (ROWS + "[cli-sweep-task-file-a-folder]",)),
    M('safetensors-tensor-cap-off-by-one', 'verify/experiments/checkpoint.py',
      'if count > MAX_TENSORS:',
      'if count > MAX_TENSORS + 1:',
      ('tests/test_checkpoint.py::test_tensor_count_is_capped_on_both_sides',)),
    M('allocate-ranks-na-model', 'verify/experiments/allocate.py',
      '            continue\n        c = m["continuous"]',
      '            pass\n        c = m["continuous"]',
      ('tests/test_allocate.py::test_a_model_that_does_not_apply_is_named_not_ranked',)),
]

# -- the replay schema (verify/schema.py): validation derived from one declaration
MUTANTS += [
    M('schema-unknown-keys-allowed', 'verify/schema.py',
      'extra = sorted(map(str, set(value) - set(self.fields)))',
      'extra = []',
      ('tests/test_claims.py::test_every_bad_input_a_schema_implies_is_refused_by_name',)),
    M('schema-list-no-max', 'verify/schema.py',
      'if not isinstance(value, list) or not self.min_len <= len(value) <= self.max_len:',
      'if not isinstance(value, list) or not self.min_len <= len(value):',
      ('tests/test_claims.py::test_every_bad_input_a_schema_implies_is_refused_by_name',)),
    M('schema-items-unchecked', 'verify/schema.py',
      'return [self.item.check(f"{name}[{k}]", v) for k, v in enumerate(value)]',
      'return list(value)',
      ('tests/test_claims.py::test_every_bad_input_a_schema_implies_is_refused_by_name',)),
]
