"""One run of the claim checks: derive, check, and return the report document."""

from __future__ import annotations

import traceback
from pathlib import Path
from typing import Any

from .errors import VerifyError

__all__ = ["run_report"]


def run_report(claims: list[str], *, seed: int, quick: bool, out: Path | None,
               progress: bool = True, large: bool = False, rederive: bool = False) -> tuple[dict, list[Any]]:
    """Derive and check ``claims`` (writing plots and counterexamples under ``out``); returns the
    report document and the derivations. A derivation step that fails raises DerivationError."""
    from proofs import derivation

    from .claims import Context, run_claim
    from .report import Progress, document

    bar = Progress(len(claims)) if progress else None
    ders = []
    for claim in claims:
        if bar:
            bar.show(f"deriving {claim}")
        ders.append(derivation(claim, rederive=rederive))
        if bar:
            bar.advance(f"derived {claim}")
    if bar:
        bar.close()
    for d in ders:
        d.raise_on_failure()
    ctx = Context(seed=seed, quick=quick, out=out, large=large)
    results, crashed = [], {}
    bar = Progress(len(claims)) if progress else None
    for claim, der in zip(claims, ders):
        if bar:
            bar.show(f"checking {claim}")
            ctx.progress = lambda message, claim=claim: bar.show(f"{claim}: {message}")
        try:
            result = run_claim(claim, ctx)
            result.derivation = der.to_dict()
            results.append(result)
        except VerifyError:
            raise
        except Exception:  # a crashed check is reported, and the run exits non-zero
            crashed[claim] = traceback.format_exc()
        if bar:
            bar.advance(f"checked {claim}")
    if bar:
        bar.close()
    return document(results, seed=seed, quick=quick, crashed=crashed), ders
