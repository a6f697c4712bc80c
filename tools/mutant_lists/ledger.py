"""Mutants of the snapshot, the theorem ledger and the layer rule: one-line changes and the tests
that must catch each."""

from mutant import M

MUTANTS = [
    M('snapshot-ignores-headline', 'verify/snapshot.py',
      'for key in ("verdict", "reading", *(("headline",) if same_run else ())):',
      'for key in ("verdict", "reading"):',
      ('tests/test_snapshot.py',), "a changed headline figure must be a difference"),
    M('snapshot-ignores-regime', 'verify/snapshot.py',
      'for key in ("finding", "regime"):',
      'for key in ("finding",):',
      ('tests/test_snapshot.py',), "a limit's boundary (its regime) is pinned"),
    M('snapshot-texts-across-sizes', 'verify/snapshot.py',
      'same_run = expected.get("quick") == actual.get("quick") and expected.get("seed") == actual.get("seed")',
      'same_run = True',
      ('tests/test_snapshot.py',), "a default run's figures are not compared with the quick run's"),
    M('ledger-quick-run-not-shared', 'verify/pytest_plugin.py',
      '            if done.is_file():\n                return pickle.loads(done.read_bytes()), out',
      '            if False:\n                return pickle.loads(done.read_bytes()), out',
      ('tests/test_ledger.py',), "the second process loads the first one's quick run instead of computing it"),
    M('layers-allow-upward', 'tests/test_layers.py',
      '            if dep_layer > own and dep not in LAZY_UPWARD.get(module, ()):',
      '            if dep_layer > own + 10 and dep not in LAZY_UPWARD.get(module, ()):',
      ('tests/test_layers.py::test_the_check_can_fail',), "the rule is checked on a known upward import"),
    M('checkpoint-imports-pretrained', 'verify/experiments/checkpoint.py',
      '    banded = r.get("band") is not None',
      '    from verify.experiments import pretrained  # noqa: F401\n    banded = r.get("band") is not None',
      ('tests/test_layers.py::test_no_import_circle',), "an import circle inside one layer (checkpoint <-> pretrained)"),
    M('layers-circle-check-off', 'tests/test_layers.py',
      '        graphlib.TopologicalSorter(edges).prepare()',
      '        pass',
      ('tests/test_layers.py::test_the_check_can_fail',), "the circle rule is checked on a known circle"),
]
