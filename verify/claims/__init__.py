"""The claim checks and the one registry of them.

Every module or package ``c<number>`` in this folder is a claim's check: it declares
``CLAIM = verify.judgment.claim.Claim(<its derivation module>)`` with its thresholds, replays and
parts. :data:`CLAIMS` finds them (nothing lists them by hand) and pairs each with its derivation
(:data:`proofs.CLAIM_IDS`); every list of claims (the command line's ``--only``, ``replay``, the
report, the ledger, the snapshot, the tests) derives from it. The run order comes from the costs
recorded by the last ``python -m verify snapshot --write`` (``costs.json`` beside this file).
"""

from __future__ import annotations

import importlib
import json
import pkgutil
import re
from pathlib import Path
from typing import Any

from proofs import CLAIM_IDS, claim_number
from proofs.markup import sci
from verify.errors import DefinitionError
from verify.judgment.claim import Claim, Context
from verify.judgment.verdicts import ClaimResult

__all__ = ["CLAIMS", "Context", "run_claim", "by_cost", "COSTS_FILE", "agreement", "span"]

#: A check's module name: ``c`` and the claim's number.
MODULE_NAME = re.compile(r"c(\d+)")
#: Seconds per claim of the default run ("check") and of a first derivation ("derive"), recorded by
#: ``python -m verify snapshot --write`` on the machine that wrote it: only their order matters.
COSTS_FILE = Path(__file__).with_name("costs.json")


def agreement(x: float) -> str:
    """"to x" for an agreement figure, "exactly" where it is 0 (markup; the claims' texts share it)."""
    return "exactly" if x == 0 else f"to {sci(x, 0)}"


def span(lo: str, hi: str, same: str = "", sep: str = " to ") -> str:
    """A range as printed (markup): its end once, and ``same``, where both ends print alike."""
    return f"{lo}{same}" if lo == hi else f"{lo}{sep}{hi}"


def _discover() -> dict[str, Claim]:
    found: dict[str, Claim] = {}
    for info in pkgutil.iter_modules(__path__):
        m = MODULE_NAME.fullmatch(info.name)
        if m is None:
            continue
        module = importlib.import_module(f"{__name__}.{info.name}")
        claim = getattr(module, "CLAIM", None)
        if not isinstance(claim, Claim) or claim_number(claim.id) != int(m.group(1)):
            raise DefinitionError(f"verify.claims.{info.name}: expected CLAIM = Claim(<the derivation of "
                                  f"C{m.group(1)}>), got {claim!r}")
        found[claim.id] = claim.bind(module)
    if tuple(sorted(found, key=claim_number)) != CLAIM_IDS:
        raise DefinitionError(f"every derivation has its check: derivations {list(CLAIM_IDS)}, checks {sorted(found)}")
    return {c: found[c] for c in CLAIM_IDS}


#: claim id -> its declared check, in claim order.
CLAIMS: dict[str, Claim] = _discover()


def _costs() -> dict[str, dict[str, float]]:
    try:
        data = json.loads(COSTS_FILE.read_text())
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def by_cost(claims: list[str], kind: str) -> list[str]:
    """``claims``, most expensive first by the recorded ``kind`` ("check" or "derive") seconds; a
    claim without a record first of all (unknown is treated as expensive)."""
    costs = _costs()

    def cost(c: str) -> float:
        rec: Any = costs.get(c, {})
        v = rec.get(kind) if isinstance(rec, dict) else None
        return float(v) if isinstance(v, (int, float)) else float("inf")

    return sorted(claims, key=lambda c: (-cost(c), claim_number(c)))


def run_claim(claim: str, ctx: Context) -> ClaimResult:
    """Run the symbolic and numeric checks of ``claim`` and return its computed verdict."""
    return CLAIMS[claim.upper()].check(ctx)
