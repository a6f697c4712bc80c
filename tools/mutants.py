"""A mutation run anyone can repeat: a named list of mutants, each a one-line change to the code
and the tests that must catch it.

    python tools/mutants.py                 # every mutant
    python tools/mutants.py --changed       # the mutants of files changed since HEAD (or --changed main)
    python tools/mutants.py --only c7-law   # one mutant (names: --list)
    python tools/mutants.py --list

The mutants are listed in ``tools/mutant_lists/`` (one file per claim or area).

The run copies the working tree to a temporary folder once, applies one mutant at a time there
(the edit must match exactly once), runs its tests with ``pytest -x`` and restores the file. The
tests run once without any mutant first, and must pass. A mutant is *killed* when a test fails
(pytest's exit status 1; an error, such as a file that no longer imports, is not a kill). The
summary prints killed / total and every survivor; a survivor that is equivalent (no behaviour
changes) is listed in EQUIVALENT with the reason. Not part of CI's default run: it is a check of
the tests, run by hand after changing them.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Callable

ROOT = Path(__file__).resolve().parent.parent


sys.path.insert(0, str(Path(__file__).resolve().parent))
from mutant import Mutant  # noqa: E402

LISTS = ROOT / "tools" / "mutant_lists"


def all_mutants() -> list[Mutant]:
    """Every mutant of every list in ``tools/mutant_lists/`` (one file per claim or area)."""
    out: list[Mutant] = []
    for path in sorted(LISTS.glob("*.py")):
        spec = importlib.util.spec_from_file_location(f"mutant_lists.{path.stem}", path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        out += module.MUTANTS
    names = [m.name for m in out]
    dup = sorted({n for n in names if names.count(n) > 1})
    if dup:
        raise SystemExit(f"error: mutants named twice: {dup}")
    return out


def changed_files(ref: str) -> set[str]:
    """Files that differ from ``ref`` (committed since, or not yet committed), relative to the root."""
    out = subprocess.run(["git", "diff", "--name-only", ref], cwd=ROOT, capture_output=True, text=True)
    if out.returncode != 0:
        raise SystemExit(f"error: --changed: git diff {ref!r} failed: {out.stderr.strip()}")
    untracked = subprocess.run(["git", "ls-files", "--others", "--exclude-standard"], cwd=ROOT, capture_output=True,
                               text=True, check=True).stdout
    return set(filter(None, out.stdout.split("\n") + untracked.split("\n")))


#: Survivors that change no behaviour, with the reason (checked by hand).
EQUIVALENT: dict[str, str] = {}


def _copy_tree(dest: Path, root: Path = ROOT) -> None:
    files = subprocess.run(["git", "ls-files", "-co", "--exclude-standard"], cwd=root, capture_output=True,
                           text=True, check=True).stdout.split("\n")
    for rel in filter(None, files):
        src = root / rel
        if src.is_file():
            (dest / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dest / rel)


#: pytest's exit status when tests ran and one failed; any other (2 interrupted, 3 internal error,
#: 4 usage error, 5 nothing collected) says nothing of the mutant and is not a kill.
TESTS_FAILED = 1


def _pytest(python: str, tests: list[str], work: Path, env: dict) -> subprocess.CompletedProcess:
    return subprocess.run([python, "-m", "pytest", "-x", "-q", "-p", "no:cacheprovider", "-o",
                           "addopts=-p verify.pytest_plugin", *tests], cwd=work, env=env,
                          capture_output=True, text=True)


def _table(mutants: list[Mutant]) -> Callable[[str, str, str], str]:
    """A row of the printed table: the name and file columns as wide as their longest entry."""
    name_w = max([len("mutant"), *(len(m.name) for m in mutants)])
    file_w = max([len("file"), *(len(m.file) for m in mutants)])
    return lambda name, file, rest: f"{name:<{name_w}}  {file:<{file_w}}  {rest}"


def run(mutants: list[Mutant], python: str, root: Path = ROOT) -> int:
    """Apply each mutant in a copy of ``root`` and run its tests; 0 when every mutant is killed or
    listed in EQUIVALENT. The tests run once without any mutant first: a test that fails there (the
    machine, the way pytest was started) would kill every mutant for no reason, so the run stops."""
    work = Path(tempfile.mkdtemp(prefix="mha-nw-mutants-"))
    try:
        _copy_tree(work, root)
        # one derivation cache for every mutant: it is keyed by the source of proofs/, so a mutant of
        # a derivation misses it and derives afresh; each mutant's pytest computes its own quick runs
        cache = work / ".mutants-cache"
        cache.mkdir()
        env = {**{k: v for k, v in os.environ.items() if not k.startswith("MHA_NW_")}, "PYTHONPATH": str(work),
               "OPENBLAS_NUM_THREADS": "1", "MHA_NW_CACHE_DIR": str(cache)}
        tests = sorted({t for m in mutants for t in m.tests})
        if tests:
            t0 = time.perf_counter()
            base = _pytest(python, tests, work, env)
            if base.returncode != 0:
                print(f"error: the mutants' {len(tests)} tests fail without any mutant (pytest exit {base.returncode}), "
                      f"so a failure would say nothing of a mutant:\n{base.stdout[-3000:]}{base.stderr[-2000:]}")
                return 2
            print(f"the mutants' {len(tests)} tests pass without any mutant ({time.perf_counter() - t0:.0f} s)\n")
        killed, survivors = 0, []
        row = _table(mutants)
        print(row("mutant", "file", f"{'result':<9} seconds"))
        for m in mutants:
            path = work / m.file
            text = path.read_text()
            if text.count(m.old) != 1:
                print(row(m.name, m.file, f"{'STALE':<9} (the edit matches {text.count(m.old)} times)"))
                survivors.append((m, "stale: the code changed, update the mutant"))
                continue
            path.write_text(text.replace(m.old, m.new))
            t0 = time.perf_counter()
            try:
                proc = _pytest(python, list(m.tests), work, env)
            finally:
                path.write_text(text)
            dt = time.perf_counter() - t0
            if proc.returncode == TESTS_FAILED:
                killed += 1
                result = "killed"
            elif proc.returncode == 0:
                survivors.append((m, EQUIVALENT.get(m.name, "SURVIVED: a missing test")))
                result = "SURVIVED"
            else:
                survivors.append((m, f"ERROR: pytest exit {proc.returncode}, no test failed: "
                                     f"{(proc.stdout + proc.stderr).strip().splitlines()[-1:]}"))
                result = "ERROR"
            print(row(m.name, m.file, f"{result:<9} {dt:.0f}"))
        print(f"\nkilled {killed} / {len(mutants)}")
        for m, why in survivors:
            print(f"  {m.name}: {why}")
        return 0 if all(why == EQUIVALENT.get(m.name) for m, why in survivors) else 1   # only listed survivors
    finally:
        shutil.rmtree(work, ignore_errors=True)


def stale(mutants: list[Mutant], root: Path = ROOT) -> list[str]:
    """The mutants that no longer apply: the edit does not match exactly once, or a test file is
    gone (seconds, no test run: for after a refactoring)."""
    out = []
    for m in mutants:
        path = root / m.file
        count = path.read_text().count(m.old) if path.is_file() else -1
        if count != 1:
            out.append(f"{m.name}: {'no file ' + m.file if count < 0 else f'the edit matches {count} times in {m.file}'}")
        out += [f"{m.name}: no test file {t.split('::')[0]}" for t in m.tests if not (root / t.split("::")[0]).is_file()]
    return out


def unknown_tests(mutants: list[Mutant], python: str = sys.executable, root: Path = ROOT,
                  collected: frozenset[str] = frozenset()) -> list[str]:
    """The tests a mutant names that pytest does not collect (a renamed test, a dropped table row):
    such a mutant would stop the whole run. One collection of the named files, both tiers, but for
    the files whose test ids are given in ``collected`` (a pytest session's, before deselection)."""
    files = sorted({t.split("::")[0] for m in mutants for t in m.tests if (root / t.split("::")[0]).is_file()})
    have = {i.split("::")[0] for i in collected}
    ids = {i for i in collected if i.split("::")[0] in files}
    missing = [f for f in files if f not in have]
    if missing:
        proc = subprocess.run([python, "-m", "pytest", "--collect-only", "-q", "-n", "0", "-p", "no:cacheprovider",
                               "-m", "slow or not slow", *missing], cwd=root, capture_output=True, text=True)
        ids |= {line for line in proc.stdout.splitlines() if "::" in line}
    prefixes = {i.split("[")[0] for i in ids} | {i.rsplit("::", 1)[0] for i in ids} | ids
    return [f"{m.name}: pytest collects no {t}" for m in mutants for t in m.tests
            if "::" in t and t not in prefixes and not any(i.startswith(t + "[") for i in ids)]


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--only", default=None, help="comma-separated mutant names")
    p.add_argument("--list", action="store_true", help="list the mutants and exit")
    p.add_argument("--stale", action="store_true", help="list the mutants whose edit no longer applies or whose tests "
                                                        "pytest does not collect, and exit (1 if any)")
    p.add_argument("--changed", nargs="?", const="HEAD", default=None, metavar="REF",
                   help="only the mutants of files (code or tests) that differ from REF (default HEAD)")
    args = p.parse_args(argv)
    mutants = all_mutants()
    chosen = mutants
    if args.only:
        names = set(args.only.split(","))
        unknown = names - {m.name for m in mutants}
        if unknown:
            p.error(f"--only: unknown mutants {sorted(unknown)}")
        chosen = [m for m in mutants if m.name in names]
    if args.changed is not None:
        files = changed_files(args.changed)
        chosen = [m for m in chosen if m.file in files or any(t.split("::")[0] in files for t in m.tests)]
    if args.stale:
        found = stale(chosen)
        found += unknown_tests(chosen) if not found else []
        print("\n".join(found) or f"every one of {len(chosen)} mutants applies")
        return 1 if found else 0
    if args.list:
        row = _table(chosen)
        for m in chosen:
            print(row(m.name, m.file, " ".join(m.tests)))
        return 0
    return run(chosen, sys.executable)


if __name__ == "__main__":
    raise SystemExit(main())
