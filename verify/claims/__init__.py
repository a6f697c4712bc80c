"""The claim registry: one module per claim, each exposing ``check(ctx) -> ClaimResult``."""

from __future__ import annotations

import importlib
import time

from ..verdicts import ClaimResult
from .base import Context

__all__ = ["CLAIM_CHECKS", "Context", "run_claim"]

CLAIM_CHECKS: dict[str, str] = {f"C{i}": f"verify.claims.c{i}" for i in range(1, 9)}


def run_claim(claim: str, ctx: Context) -> ClaimResult:
    """Run the symbolic and numeric checks of ``claim`` and return its computed verdict."""
    module = importlib.import_module(CLAIM_CHECKS[claim.upper()])
    t0 = time.perf_counter()
    result = module.check(ctx)
    result.seconds = time.perf_counter() - t0
    return result
