"""One run of the claim checks: derive, check, and return the report document.

The checks are independent (each draws from its own seed streams, ``Context.rng(name)``), so
with ``jobs > 1`` they run in that many forked worker processes, longest first; every number is
the same as in one process (the NW core's results do not depend on its thread count, and a worker
uses one thread so that the processes do not oversubscribe the CPUs).
"""

from __future__ import annotations

import multiprocessing
import os
import traceback
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from pathlib import Path
from typing import Any

from verify.errors import VerifyError

__all__ = ["run_report", "default_jobs"]


def default_jobs() -> int:
    """Worker processes for the checks: the CPUs this process may use, at most 4."""
    try:
        cpus = len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        cpus = os.cpu_count() or 1
    return max(1, min(4, cpus))


def _check(claim: str, ctx_kwargs: dict) -> tuple[str, Any, str | None, bool]:
    """In a worker: (claim, result or None, traceback or None, raised VerifyError)."""
    from verify.claims import Context, run_claim

    try:
        return claim, run_claim(claim, Context(**ctx_kwargs)), None, False
    except VerifyError as exc:
        return claim, None, str(exc), True
    except Exception:
        return claim, None, traceback.format_exc(), False


def _worker_init() -> None:
    from verify.numeric import nw

    nw.set_default_threads(1)


def _preload(claims: list[str]) -> None:
    """Import, once in the parent, what every worker would otherwise load for itself after the
    fork (the claim modules, matplotlib and its fonts, the compiled NW kernel from its cache)."""
    import matplotlib
    import numpy as np

    import verify.claims  # noqa: F401  (every claim module)
    from verify.numeric import nw

    matplotlib.use("Agg")
    import matplotlib.pyplot  # noqa: F401  (pyplot and its font manager)
    from matplotlib import font_manager

    font_manager.findfont("DejaVu Sans")
    previous = nw.set_default_threads(1)
    try:
        q, k = np.zeros((2, 2)), np.zeros((3, 2))
        nw.nw_estimate(q, k, np.zeros((3, 1)))
        nw.nw_weights(q, k)
        nw.nw_estimate(q, k, np.zeros((3, 1)), kernel="gaussian", bandwidth=1.0)
    finally:
        nw.set_default_threads(previous)


def run_report(claims: list[str], *, seed: int, quick: bool, out: Path | None,
               progress: bool = True, large: bool = False, rederive: bool = False,
               jobs: int = 1) -> tuple[dict, list[Any]]:
    """Derive and check ``claims`` (writing plots and counterexamples under ``out``); returns the
    report document and the derivations. A derivation step that fails raises DerivationError.
    ``jobs > 1`` runs the checks in worker processes (where ``fork`` exists)."""
    from proofs import derivation
    from verify.claims import COST_ORDER, Context, run_claim
    from verify.outputs.report import Progress, document

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
    by_claim: dict[str, Any] = {}
    crashed: dict[str, str] = {}
    bar = Progress(len(claims)) if progress else None
    jobs = min(int(jobs), len(claims))
    if jobs > 1 and "fork" in multiprocessing.get_all_start_methods():
        _preload(claims)
        ctx_kwargs = {"seed": seed, "quick": quick, "out": out, "large": large}
        order = sorted(claims, key=lambda c: COST_ORDER.index(c) if c in COST_ORDER else -1)
        with ProcessPoolExecutor(max_workers=jobs, mp_context=multiprocessing.get_context("fork"),
                                 initializer=_worker_init) as pool:
            pending = {pool.submit(_check, c, ctx_kwargs) for c in order}
            if bar:
                bar.show(f"checking {len(claims)} claims in {jobs} processes")
            while pending:
                done, pending = wait(pending, return_when=FIRST_COMPLETED)
                for fut in done:
                    claim, result, error, bad_input = fut.result()
                    if bad_input:
                        raise VerifyError(error)
                    if result is None:
                        crashed[claim] = error or ""
                    else:
                        by_claim[claim] = result
                    if bar:
                        bar.advance(f"checked {claim}")
    else:
        ctx = Context(seed=seed, quick=quick, out=out, large=large)
        for claim in claims:
            if bar:
                bar.show(f"checking {claim}")
                ctx.progress = lambda message, claim=claim: bar.show(f"{claim}: {message}")
            try:
                by_claim[claim] = run_claim(claim, ctx)
            except VerifyError:
                raise
            except Exception:  # a crashed check is reported, and the run exits non-zero
                crashed[claim] = traceback.format_exc()
            if bar:
                bar.advance(f"checked {claim}")
    if bar:
        bar.close()
    results = [by_claim[claim] for claim in claims if claim in by_claim]
    crashed = {c: crashed[c] for c in claims if c in crashed}
    return document(results, seed=seed, quick=quick, crashed=crashed), ders
