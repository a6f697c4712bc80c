"""A pytest plugin that turns the test suite into a theorem ledger (``-p verify.pytest_plugin`` in
the project's ``pyproject.toml``; never auto-loaded elsewhere). It gives:

- the marker ``@pytest.mark.claim("C5", part="premise")``: the claim(s) and the part (a role, or
  ``derivation``) a test checks; a test in a claim module without one fails;
- ``--claims C5,C6``: run only the tests of those claims;
- the session fixture ``quick_run``: each claim's quick check (seed 0), run at most once;
- the ledger at the end: per claim its verdict and headline, per part the tests passed / failed /
  skipped, the failed tests named; JUnit XML properties ``claim`` and ``part``.
"""

from __future__ import annotations

import importlib
import os
import pickle
import re
import textwrap
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest

from proofs.markup import render
from verify.io import locked

__all__ = ["PARTS", "QuickRun", "claim_of"]

#: What a test may say it checks: a role of the claim's reading, or the derivation's steps.
PARTS = ("core", "detail", "premise", "scope", "derivation")
#: Modules whose every test must carry a claim marker.
CLAIM_MODULE = re.compile(r"^test_(claim_c\d+|proofs_c[\d_c]+)\.py$")

_LEDGER = pytest.StashKey[dict]()
_RUN = pytest.StashKey["QuickRun"]()


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--claims", default=None, metavar="C5,C6",
                     help="run only the tests that check these claims (their @pytest.mark.claim)")
    parser.addini("verify_claims", type="linelist", default=[],
                  help="modules of claims of your own (each with CLAIM = verify.judgment.claim.Claim(...)), "
                       "checked and listed in the theorem ledger beside the paper's")


#: Claims of the project's own (the ``verify_claims`` ini option): id -> its Claim.
_EXTRA: dict[str, Any] = {}


def _load_extra(config: pytest.Config) -> None:
    from verify.judgment.claim import Claim

    _EXTRA.clear()
    for name in config.getini("verify_claims"):
        try:
            module = importlib.import_module(name)
        except ImportError as exc:
            raise pytest.UsageError(f"verify_claims: cannot import {name!r} ({exc})") from None
        claim = getattr(module, "CLAIM", None)
        if not isinstance(claim, Claim):
            raise pytest.UsageError(f"verify_claims: {name!r} has no CLAIM = verify.judgment.claim.Claim(...)")
        _EXTRA[claim.id] = claim


def pytest_configure(config: pytest.Config) -> None:
    _load_extra(config)
    config.addinivalue_line("markers", "claim(id, part=None): the claim (C1..) and part "
                                       f"({', '.join(PARTS)}) a test checks; collected into the theorem ledger")
    config.stash[_LEDGER] = defaultdict(lambda: defaultdict(lambda: {"passed": 0, "failed": 0, "skipped": 0,
                                                                     "failures": []}))
    config.pluginmanager.register(_Recorder(config), "verify-theorem-ledger-recorder")


class _Recorder:
    """Counts each marked test's outcome into the ledger (call phase; setup errors too)."""

    def __init__(self, config: pytest.Config) -> None:
        self.config = config

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        props = dict(report.user_properties)
        if "claim" not in props or not (report.when == "call" or (report.when == "setup" and not report.passed)):
            return
        outcome = "skipped" if report.skipped else "failed" if report.failed else "passed"
        for claim in filter(None, props["claim"].split(",")):
            row = self.config.stash[_LEDGER][claim][props["part"]]
            row[outcome] += 1
            if outcome == "failed":
                row["failures"].append(report.nodeid)


def _known_claims() -> list[str]:
    from proofs import CLAIM_IDS

    return [*CLAIM_IDS, *(c for c in _EXTRA if c not in CLAIM_IDS)]


def claim_of(item: pytest.Item) -> tuple[tuple[str, ...], str] | None:
    """(claims, part) of a test from its nearest ``claim`` marker: ``claim("C5", part=...)``, or
    several claims ``claim("C7", "C8", part=...)``, or ``claim(part=...)`` with the claim taken from
    the test's ``claim`` parameter (a test parametrized over claims). Part defaults to "core"."""
    marker = item.get_closest_marker("claim")
    if marker is None:
        return None
    claims = tuple(str(a) for a in marker.args)
    if not claims:
        params = getattr(getattr(item, "callspec", None), "params", {})
        claims = (str(params["claim"]),) if "claim" in params else ()
    return claims, str(marker.kwargs.get("part") or "core")


def _bad_marker(item: pytest.Item) -> str | None:
    got = claim_of(item)
    if got is None:
        return "claim test without @pytest.mark.claim(ID, part=...)" if CLAIM_MODULE.match(item.path.name) else None
    claims, part = got
    unknown = [c for c in claims if c not in _known_claims()]
    if not claims or unknown:
        return (f"@pytest.mark.claim: expected claims among {', '.join(_known_claims())}, got "
                f"{', '.join(map(repr, unknown)) or 'none (no claim argument and no claim parameter)'}")
    if part not in PARTS:
        return f"@pytest.mark.claim: expected part among {', '.join(PARTS)}, got {part!r}"
    return None


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    wanted = config.getoption("--claims")
    if wanted:
        sel = {c.strip().upper() for c in wanted.split(",") if c.strip()}
        unknown = sel - set(_known_claims())
        if unknown:
            raise pytest.UsageError(f"--claims: expected claims among {', '.join(_known_claims())}, "
                                    f"got {', '.join(sorted(unknown))}")
        keep = [it for it in items if sel & set((claim_of(it) or ((), ""))[0])]
        drop = [it for it in items if it not in keep]
        if drop:
            config.hook.pytest_deselected(items=drop)
        items[:] = keep
    for it in items:
        got = claim_of(it)
        if got is not None:
            it.user_properties += [("claim", ",".join(got[0])), ("part", got[1])]


def pytest_runtest_setup(item: pytest.Item) -> None:
    problem = _bad_marker(item)
    if problem:
        pytest.fail(problem, pytrace=False)


#: Set (to a folder private to one test run) by a suite that runs in several processes
#: (pytest-xdist): each claim's quick run is then computed once, under a file lock, by whichever
#: process needs it first, stored there, and loaded by every other process and by the ledger.
ENV_SHARED = "MHA_NW_QUICK_RUN_DIR"


class QuickRun:
    """The quick run (seed 0) of each claim, computed at most once per test run:
    ``quick_run("C5") -> (ClaimResult, output folder)``. With ``shared`` (see :data:`ENV_SHARED`)
    the results are shared by the run's processes through that folder."""

    def __init__(self, factory: pytest.TempPathFactory | None, shared: Path | None = None) -> None:
        self.factory = factory
        self.shared = shared
        self.results: dict[str, tuple[Any, Path]] = {}
        self.errors: dict[str, str] = {}

    def _compute(self, claim: str, out: Path) -> Any:
        from verify.claims import Context, run_claim

        ctx = Context(seed=0, quick=True, out=out)
        return _EXTRA[claim].check(ctx) if claim in _EXTRA else run_claim(claim, ctx)

    def __call__(self, claim: str) -> tuple[Any, Path]:
        claim = claim.upper()
        if claim in self.results:
            return self.results[claim]
        try:
            if self.shared is None:
                out = self.factory.mktemp(claim.lower())
                self.results[claim] = (self._compute(claim, out), out)
            else:
                self.results[claim] = self._shared(claim)
        except Exception as exc:
            self.errors[claim] = f"{type(exc).__name__}: {exc}"
            raise
        return self.results[claim]

    def _shared(self, claim: str) -> tuple[Any, Path]:
        out, done, failed = (self.shared / claim.lower(), self.shared / f"{claim}.pickle",
                             self.shared / f"{claim}.error")
        with locked(self.shared / f"{claim}.lock"):
            if done.is_file():
                return pickle.loads(done.read_bytes()), out
            if failed.is_file():
                raise RuntimeError(f"the quick run of {claim} failed in another test process: {failed.read_text()}")
            out.mkdir(exist_ok=True)
            try:
                result = self._compute(claim, out)
            except Exception as exc:
                failed.write_text(f"{type(exc).__name__}: {exc}")
                raise
            tmp = done.with_suffix(".tmp")
            tmp.write_bytes(pickle.dumps(result))
            tmp.replace(done)
            return result, out

    @classmethod
    def stored(cls, shared: Path) -> "QuickRun":
        """The results the run's processes stored in ``shared`` (for the ledger of the main process)."""
        run = cls(None, shared)
        for claim in _known_claims():
            if (shared / f"{claim}.pickle").is_file():
                run(claim)
            elif (shared / f"{claim}.error").is_file():
                run.errors[claim] = (shared / f"{claim}.error").read_text()
        return run


def _shared_folder() -> Path | None:
    folder = os.environ.get(ENV_SHARED)
    return Path(folder) if folder and os.path.isdir(folder) else None


@pytest.fixture(scope="session")
def quick_run(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> QuickRun:
    run = QuickRun(tmp_path_factory, _shared_folder())
    request.config.stash[_RUN] = run
    return run


def _cell(part: str, row: dict) -> str:
    counts = (("passed", row["passed"]), ("FAILED", row["failed"]), ("skipped", row["skipped"]))
    return f"{part} " + ", ".join(f"{n} {word}" for word, n in counts if n or word == "passed")


def pytest_terminal_summary(terminalreporter: Any, exitstatus: int, config: pytest.Config) -> None:
    ledger = config.stash.get(_LEDGER, None)
    if not ledger:
        return
    run = config.stash.get(_RUN, None)
    if run is None and _shared_folder() is not None:  # pytest-xdist's main process: the workers ran them
        run = QuickRun.stored(_shared_folder())
    tr = terminalreporter
    width = max(60, tr._tw.fullwidth if hasattr(tr, "_tw") else 100)
    tr.write_sep("=", "theorem ledger")
    for claim in _known_claims():
        if claim not in ledger:
            continue
        res = run.results.get(claim) if run else None
        if res is not None:
            verdict, headline = res[0].verdict.value, res[0].headline
        elif run and claim in run.errors:
            verdict, headline = "check crashed", run.errors[claim]
        else:
            verdict, headline = "not computed", "no test of this claim ran its quick check in this session"
        parts = ledger[claim]
        failed = sum(r["failed"] for r in parts.values())
        tr.write_line(f"{claim:<4} {verdict:<18} " + ("TESTS FAILED" if failed else "tests pass"),
                      red=bool(failed), green=not failed, bold=True)
        for line in textwrap.wrap(render(headline, "unicode"), width - 6, break_on_hyphens=False):
            tr.write_line(f"     {line}")
        order = [p for p in PARTS if p in parts] + [p for p in parts if p not in PARTS]
        tr.write_line("     " + " · ".join(_cell(p, parts[p]) for p in order))
        for p in order:
            for nodeid in parts[p]["failures"]:
                tr.write_line(f"     FAILED ({p}): {nodeid}", red=True)
    tr.write_line("verdicts: the quick run (seed 0) of each claim's check; `python -m verify` runs the full sizes")
