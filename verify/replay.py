"""``python -m verify replay FILE``: recompute a saved counterexample from its parameters alone
and judge it again.

A counterexample file may come from anyone: its own fields are checked by
:func:`~verify.judgment.counterexamples.load`, its ``params`` by the schema of the part's replay
(declared with ``CLAIM.replay`` beside the part) before any computation.
"""

from __future__ import annotations

from pathlib import Path

from verify.errors import VerifyError
from verify.judgment.counterexamples import ReplayOutcome, load, shown

__all__ = ["replay"]


def replay(path: Path | str) -> tuple[dict, ReplayOutcome]:
    """Recompute the counterexample in ``path`` and judge it again: ``(saved document, outcome)``.
    The document's texts (part, statement, saved summary) come back as they may be printed:
    control characters escaped, long texts cut."""
    from verify.claims import CLAIMS

    doc = load(path)
    claim = CLAIMS[doc["claim"].upper()]
    own = {rp.kind: rp for rp in claim.replays.values()}
    func = own.get(doc["kind"])
    if func is None:     # another claim's kind, or none
        raise VerifyError(f"FILE: expected a counterexample kind of {doc['claim']} ({', '.join(sorted(own))}), "
                          f"got {shown(doc['kind'])!r}")
    try:
        outcome = func(doc["params"])
    except MemoryError:
        raise VerifyError(f"FILE: params of {str(path)!r} ask for more memory than this machine has") from None
    except OverflowError as exc:   # a float from the file beyond what a claim's arithmetic holds
        raise VerifyError(f"FILE: params of {shown(str(path))!r} overflow float arithmetic ({exc})") from None
    expected = {**doc["expected"], "summary": shown(doc["expected"].get("summary", ""))}
    shown_doc = {**doc, "part": shown(doc["part"]),
                 "statement": shown(doc.get("statement", "")), "expected": expected}
    return shown_doc, outcome
