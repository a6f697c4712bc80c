"""``python -m verify replay FILE``: recompute a saved counterexample from its parameters alone
and judge it again (the claim module that found it registers the replay function)."""

from __future__ import annotations

import importlib
from pathlib import Path

from verify.errors import VerifyError
from verify.judgment.counterexamples import (
    ReplayOutcome,
    load,
    registered_kinds,
    replayer_for,
)
from verify.judgment.registry import CLAIM_MODULES

__all__ = ["replay"]


def replay(path: Path | str) -> tuple[dict, ReplayOutcome]:
    """Recompute the counterexample in ``path`` and judge it again: ``(saved document, outcome)``."""
    doc = load(path)
    module = CLAIM_MODULES[doc["claim"].upper()]
    importlib.import_module(module)
    func = replayer_for(doc["kind"])
    if func is None or func.__module__ != module:   # a kind of another claim is not this claim's replay
        kinds = [k for k in registered_kinds() if replayer_for(k).__module__ == module]
        raise VerifyError(f"FILE: expected a counterexample kind of {doc['claim']} ({', '.join(kinds)}), "
                          f"got {doc['kind']!r}")
    try:
        outcome = func(doc["params"])
    except MemoryError:
        raise VerifyError(f"FILE: params of {str(path)!r} ask for more memory than this machine has") from None
    return doc, outcome
