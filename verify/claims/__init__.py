"""The claim checks, one module per claim, and the one registry of them.

``CLAIMS`` maps each claim id (``proofs.CLAIM_IDS``, in order) to the module of its check; a
module exposes ``check(ctx) -> ClaimResult`` and registers the replays of its counterexamples.
"""

from __future__ import annotations

import dataclasses
import time
from types import ModuleType

from proofs import CLAIM_IDS
from verify.claims import c1, c2, c3, c4, c5, c6, c7, c8, c9
from verify.judgment.claim import Context
from verify.judgment.verdicts import ClaimResult

__all__ = ["CLAIMS", "COST_ORDER", "Context", "run_claim"]

#: claim id -> the module of its check, in claim order.
CLAIMS: dict[str, ModuleType] = {"C1": c1, "C2": c2, "C3": c3, "C4": c4, "C5": c5, "C6": c6, "C7": c7, "C8": c8,
                                 "C9": c9}
assert tuple(CLAIMS) == CLAIM_IDS, "every derivation has its check, in the same order"

#: The claims, slowest check first (seconds of the default run: C9 7.1, C5 2.6, C7 2.1, C6 1.0, C8 0.8,
#: the others below 0.4; ``report.json``'s "seconds"): a worker pool that takes
#: them in this order finishes soonest.
COST_ORDER = ("C9", "C5", "C7", "C6", "C8", "C4", "C1", "C3", "C2")


def run_claim(claim: str, ctx: Context) -> ClaimResult:
    """Run the symbolic and numeric checks of ``claim`` and return its computed verdict."""
    from verify.judgment.claim import Claim

    module = CLAIMS[claim.upper()]
    t0 = time.perf_counter()
    result = module.check(ctx)
    if isinstance(getattr(module, "CLAIM", None), Claim):
        return result
    from proofs import derivation

    # a check not yet declared part by part
    return dataclasses.replace(result, seconds=time.perf_counter() - t0,
                               plots={name: ctx.relative(path) for name, path in result.plots.items()},
                               derivation=derivation(claim.upper()).to_dict())
