"""The claim checks: one module per claim, each exposing ``check(ctx) -> ClaimResult``."""

from __future__ import annotations

import importlib
import time

from verify.judgment.claim import Context
from verify.judgment.registry import CLAIM_MODULES
from verify.judgment.verdicts import ClaimResult

__all__ = ["CLAIM_CHECKS", "Context", "run_claim"]

CLAIM_CHECKS = CLAIM_MODULES


def run_claim(claim: str, ctx: Context) -> ClaimResult:
    """Run the symbolic and numeric checks of ``claim`` and return its computed verdict."""
    module = importlib.import_module(CLAIM_MODULES[claim.upper()])
    t0 = time.perf_counter()
    result = module.check(ctx)
    result.seconds = time.perf_counter() - t0
    result.plots = {name: ctx.relative(path) for name, path in result.plots.items()}
    return result
