"""``python -m verify replay FILE``: recompute a saved counterexample from its parameters alone
and judge it again (the claim module that found it registers the replay function).

A counterexample file may come from anyone, so its fields are checked here, centrally, before a
claim's replay sees them: the document's own fields by :func:`~verify.judgment.counterexamples.load`,
every integer size the package's replays share (``INTEGER_PARAMS``) through the validators, and
the sizes a kind records beside the data they describe (``DESCRIBED_BY``) against that data, so
that a file whose ``H`` says 3 while its ``V`` lists 2 variances is refused, not "reproduced".
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

from verify._validate import integer_valued, seed, within
from verify._validate import fail as _fail
from verify.errors import VerifyError
from verify.judgment.counterexamples import (
    ReplayOutcome,
    load,
    registered_kinds,
    replayer_for,
    shown,
)

__all__ = ["replay", "check_params", "INTEGER_PARAMS", "MAX_REPLAY_SIZE", "DESCRIBED_BY"]

#: The largest size any replay of the package takes (its own work caps are far lower): a size
#: parameter beyond it is refused by name here, before any claim multiplies it into a work count
#: (where a ``batches`` of 400 digits was blamed on ``R``) or converts it to a float.
MAX_REPLAY_SIZE = 2**31 - 1
#: Integer parameters the replays share, by name, with their least value: each is checked (an
#: integer, 3.0 allowed, not true, 'abc', 1.5, 1e400 or null) wherever a kind's params hold it.
INTEGER_PARAMS = {"H": 1, "d": 1, "d_k": 1, "D": 1, "n": 1, "R": 1, "m": 1, "batches": 1, "starts": 1,
                  "steps": 1, "seeds": 1, "record_every": 1, "samples": 1, "draws": 1}
#: Parameters that are seeds (any non-negative integer below 2^64, as the package writes them).
SEED_PARAMS = ("seed",)
#: A seed the package writes is drawn from 64 bits at most; a longer one is not one of its files.
MAX_SEED = 2**64 - 1


#: Kind -> the sizes its data imply: a recorded size must equal the implied one.
DESCRIBED_BY: dict[str, Callable[[dict], dict[str, Any]]] = {}


def check_params(kind: str, params: dict) -> None:
    """Refuse a replay's ``params`` whose shared integer fields are not integers in range, or
    whose recorded sizes disagree with the data they describe (VerifyError naming the field)."""
    with within("params"):
        for key, least in INTEGER_PARAMS.items():
            if key in params:
                integer_valued(key, params[key], minimum=least, maximum=MAX_REPLAY_SIZE,
                               why="MAX_REPLAY_SIZE: beyond any replay's work")
        for key in SEED_PARAMS:
            if key in params and seed(key, params[key]) > MAX_SEED:
                raise _fail(key, "a seed of more than 64 bits", "a seed below 2^64 (MAX_SEED)")
    implied = DESCRIBED_BY.get(kind, lambda p: {})(params)
    for key, value in implied.items():
        if key in params and value is not None and params[key] != value:
            raise _fail(f"params.{key}", f"{params[key]!r} while the data describe {key} = {value}",
                        f"the size of the saved data ({key} = {value})")


def replay(path: Path | str) -> tuple[dict, ReplayOutcome]:
    """Recompute the counterexample in ``path`` and judge it again: ``(saved document, outcome)``.
    The document's texts (part, statement, saved summary) come back as they may be printed:
    control characters escaped, long texts cut."""
    from verify.claims import CLAIMS  # registers every claim's replays

    doc = load(path)
    claim = CLAIMS[doc["claim"].upper()]
    own = {rp.kind: rp for rp in claim.replays.values()}
    module = claim.module_name
    func = own.get(doc["kind"]) or replayer_for(doc["kind"])
    if func is None or (doc["kind"] not in own and func.__module__ != module):   # another claim's kind
        kinds = sorted(own) + [k for k in registered_kinds() if k not in own and replayer_for(k).__module__ == module]
        raise VerifyError(f"FILE: expected a counterexample kind of {doc['claim']} ({', '.join(kinds)}), "
                          f"got {shown(doc['kind'])!r}")
    if doc["kind"] not in own:
        check_params(doc["kind"], doc["params"])
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
