"""One run of the claim checks: derive, check, and return the report document.

The checks are independent (each draws from its own seed streams), so with ``jobs > 1`` they run in
forked worker processes (one NW thread each), longest first, with the same numbers as in one
process. Workers die with their parent and ignore SIGINT (:mod:`verify._processes`).
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import traceback
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from pathlib import Path
from typing import Any, Iterator

from verify._processes import die_with_parent, ignore_sigint_in_worker, stop_pool
from verify._processes import forking_with_sigint_blocked as _forking_with_sigint_blocked
from verify.errors import VerifyError

__all__ = ["run_report", "default_jobs"]


def default_jobs() -> int:
    """Worker processes for the checks: the CPUs this process may use, at most 4."""
    try:
        cpus = len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        cpus = os.cpu_count() or 1
    return max(1, min(4, cpus))


def _check(claim: str, ctx_kwargs: dict) -> tuple[str, Any, Any, str]:
    """In a worker: (claim, result or None, the error, its kind: "" (none), "input" (a
    VerifyError's message), "os" (an OSError's errno, strerror, filename) or "crash" (a traceback))."""
    from verify.claims import Context, run_claim

    try:
        return claim, run_claim(claim, Context(**ctx_kwargs)), None, ""
    except VerifyError as exc:
        return claim, None, str(exc), "input"
    except OSError as exc:
        return claim, None, (exc.errno, exc.strerror, exc.filename), "os"
    except Exception:
        return claim, None, traceback.format_exc(), "crash"


def _derive(claim: str) -> str:
    """In a worker: derive ``claim`` into the on-disk cache (returns whether its steps all checked)."""
    from proofs import derivation

    return "failed" if derivation(claim).failed else "checked"


def _worker_init(parent: int) -> None:
    ignore_sigint_in_worker()     # the parent handles a Ctrl-C and ends the workers (one pending since the fork: gone)
    die_with_parent(parent)
    from verify.numeric import nw

    nw.set_default_threads(1)


def _preload(claims: list[str]) -> None:
    """Import, once in the parent, what every worker would otherwise load after the fork (the claim
    modules, matplotlib and its fonts, the compiled NW kernel); a first run calls it while the
    workers derive, filling numba's and matplotlib's caches."""
    import importlib

    import matplotlib
    import numpy as np

    from verify.numeric import nw

    importlib.import_module("verify.claims")   # every claim module

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


@contextlib.contextmanager
def _pool(workers: int) -> Iterator[ProcessPoolExecutor]:
    """Forked worker processes, shut down after the block; ended at once if it raises (bad input, a
    failed write, SIGINT: the workers end now, not after their claims)."""
    pool = ProcessPoolExecutor(max_workers=workers, mp_context=multiprocessing.get_context("fork"),
                               initializer=_worker_init, initargs=(os.getpid(),))
    try:
        yield pool
    except BaseException:
        stop_pool(pool)
        raise
    pool.shutdown(wait=True)


def run_report(claims: list[str], *, seed: int, quick: bool, out: Path | None,
               progress: bool = True, large: bool = False, rederive: bool = False,
               jobs: int = 1) -> tuple[dict, list[Any]]:
    """Derive and check ``claims`` (writing plots and counterexamples under ``out``); returns the
    report document and the derivations. A derivation step that fails raises DerivationError.
    ``jobs > 1`` runs the checks in worker processes (where ``fork`` exists)."""
    import proofs
    from proofs import cache, derivation
    from verify.claims import Context, by_cost, run_claim
    from verify.outputs.report import Progress, document

    bar = Progress(len(claims), shown=progress)
    missing = [] if rederive or cache.rederive_requested() else [
        c for c in claims if c not in proofs._CACHE and not cache.is_cached(c)]
    jobs = min(int(jobs), len(claims))
    forks = "fork" in multiprocessing.get_all_start_methods()
    if min(jobs, len(missing)) > 1 and forks:
        # a first run: derive in worker processes, slowest first, while this process fills the caches
        # the checks read and loads them for the checks' workers; each worker stores its derivations in
        # the cache, from which they load below (a failing one is not stored: derived again, it raises)
        order = by_cost(missing, "derive")
        bar.show(f"deriving {', '.join(order)} in {min(jobs, len(order))} processes")
        with _pool(min(jobs, len(order))) as pool:
            with _forking_with_sigint_blocked():
                derived = [pool.submit(_derive, c) for c in order]
            _preload(claims)     # meanwhile, here: the checks' workers are forked from this process
            for fut in derived:
                fut.result()
    ders = []
    for claim in claims:
        cached = not rederive and not cache.rederive_requested() and (claim in proofs._CACHE or cache.is_cached(claim))
        bar.show(f"loading {claim} (cached)" if cached else f"deriving {claim}")
        ders.append(derivation(claim, rederive=rederive))
        bar.advance(f"loaded {claim} (cached)" if getattr(ders[-1], "from_cache", False) else f"derived {claim}")
    bar.close()
    for d in ders:
        d.raise_on_failure()
    by_claim: dict[str, Any] = {}
    crashed: dict[str, str] = {}
    bar = Progress(len(claims), shown=progress)
    if jobs > 1 and forks:
        _preload(claims)
        ctx_kwargs = {"seed": seed, "quick": quick, "out": out, "large": large}
        order = by_cost(claims, "check")
        with _pool(jobs) as pool:
            with _forking_with_sigint_blocked():
                pending = {pool.submit(_check, c, ctx_kwargs) for c in order}
            bar.show(f"checking {len(claims)} claims in {jobs} processes")
            while pending:
                done, pending = wait(pending, return_when=FIRST_COMPLETED)
                for fut in done:
                    claim, result, error, kind = fut.result()
                    if kind == "input":
                        raise VerifyError(error)
                    if kind == "os":
                        raise OSError(*error)
                    if result is None:
                        crashed[claim] = error or ""
                    else:
                        by_claim[claim] = result
                    bar.advance(f"checked {claim}")
    else:
        ctx = Context(seed=seed, quick=quick, out=out, large=large)
        for claim in claims:
            bar.show(f"checking {claim}")
            ctx.progress = lambda message, claim=claim: bar.show(f"{claim}: {message}")
            try:
                by_claim[claim] = run_claim(claim, ctx)
            except (VerifyError, OSError):   # bad input, a failed write: the run stops
                raise
            except Exception:  # a crashed check is reported, and the run exits non-zero
                crashed[claim] = traceback.format_exc()
            bar.advance(f"checked {claim}")
    bar.close()
    results = [by_claim[claim] for claim in claims if claim in by_claim]
    crashed = {c: crashed[c] for c in claims if c in crashed}
    return document(results, seed=seed, quick=quick, crashed=crashed), ders
