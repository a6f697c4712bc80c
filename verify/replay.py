"""``python -m verify replay FILE``: recompute a saved counterexample from its parameters alone
and judge it again (the claim module that found it registers the replay function)."""

from __future__ import annotations

from pathlib import Path

from verify.errors import VerifyError
from verify.judgment.counterexamples import (
    ReplayOutcome,
    load,
    registered_kinds,
    replayer_for,
)

__all__ = ["replay"]


def replay(path: Path | str) -> tuple[dict, ReplayOutcome]:
    """Recompute the counterexample in ``path`` and judge it again: ``(saved document, outcome)``."""
    from verify.claims import CLAIMS  # registers every claim's replays

    doc = load(path)
    module = CLAIMS[doc["claim"].upper()].__name__
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
