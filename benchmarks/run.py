"""Run the benchmark from a checkout: ``python benchmarks/run.py [--quick] [--json FILE] ...``
(the same as ``python -m verify bench``; see :mod:`verify.bench`)."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from verify.bench import cli_bench  # noqa: E402

if __name__ == "__main__":
    raise SystemExit(cli_bench(sys.argv[1:]))
