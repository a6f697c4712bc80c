"""``python -m verify``: every claim checked, one computed verdict each, and the report.

    python -m verify [--quick] [--seed N] [--out DIR] [--only C5[,C6]]
    python -m verify proofs [C1 ...]          print the derivations in full
    python -m verify replay FILE              re-run and re-judge a saved counterexample
    python -m verify snapshot [--write]       compare (or store) the verdict snapshot and README table
    python -m verify sweep c7 [--out DIR] [--scheduler ADDR]   C7's empirical grid on real NW ensembles
    python -m verify latex [-o DIR] [--pdf]   LaTeX export of every claim
    python -m verify hdi PATH [--json FILE] [--plots DIR]
    python -m verify allocate --budget D --n N --dim d [--model NAME]

Exit status: 0 when every check ran (whatever the verdicts); 1 when a check crashed or a
derivation step failed to check; 2 for bad arguments or bad input files.
"""

from __future__ import annotations

import argparse
import atexit
import importlib
import os
import sys
import time
from pathlib import Path
from typing import Any, NoReturn

#: Thread counts of the BLAS libraries numpy may use, unless the user set them: one. The checks'
#: matrices are small and the worker processes share the CPUs (two BLAS threads in each of two
#: workers on 2 cores: the warm run takes 9.2 s instead of 8.1 s), and the numbers then round the
#: same way in every run (the test suite sets the same). Set here, at import, because the imports
#: below load numpy, which reads them once.
ONE_BLAS_THREAD = {"OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
for _var, _value in ONE_BLAS_THREAD.items():
    os.environ.setdefault(_var, _value)

from verify._validate import ArgParser, seed_arg  # noqa: E402  (after the BLAS threads are set)
from verify import _processes  # noqa: E402
from verify._validate import MAX_JOBS, int_arg, received  # noqa: E402
from verify.errors import VerifyError  # noqa: E402
from verify.io import RUN_MARKER  # noqa: E402

__all__ = ["main", "entry", "exit_now", "ArgParser"]

# subcommand -> "module:function" taking argv and returning an exit status
SUBCOMMANDS = {
    "proofs": "verify.cli:cli_proofs",
    "replay": "verify.cli:cli_replay",
    "snapshot": "verify.snapshot:cli_snapshot",
    "sweep": "verify.experiments.sweep:cli_sweep",
    "latex": "verify.outputs.latex:cli_latex",
    "hdi": "verify.experiments.checkpoint:cli_hdi",
    "allocate": "verify.experiments.allocate:cli_allocate",
}

#: The file that marks a folder as a run this package wrote (and may replace): verify.io's marker,
#: with its schema checked.
REPORT_MARKER = RUN_MARKER
#: Exit status after SIGINT (128 + the signal's number, as a shell reports it).
EXIT_INTERRUPTED = _processes.EXIT_INTERRUPTED


def _claims_arg(text: str) -> list[str]:
    from proofs import CLAIM_IDS

    claims = [c.strip().upper() for c in text.split(",") if c.strip()]
    if not claims or any(c not in CLAIM_IDS for c in claims):
        raise argparse.ArgumentTypeError(f"expected claims among {', '.join(CLAIM_IDS)}, got {text!r:.80}")
    return list(dict.fromkeys(claims))


_jobs_arg = int_arg(1, MAX_JOBS, "MAX_JOBS")   # an integer numeral in 1..MAX_JOBS (verify._validate)


def _out_arg(text: str) -> Path:
    if not text.strip():
        raise argparse.ArgumentTypeError(f"expected a folder name, got {received(text)}")
    return Path(text)


def _parser() -> ArgParser:
    p = ArgParser(
        prog="python -m verify",
        description="Check every claim of the paper symbolically and numerically and write the report. "
                    f"Other commands: {', '.join(SUBCOMMANDS)} (python -m verify COMMAND --help).",
    )
    p.add_argument("--quick", action="store_true", help="small sizes, for a first look")
    p.add_argument("--large", action="store_true", help="larger experiments (C9 training runs, C7's empirical grid)")
    p.add_argument("--jobs", type=_jobs_arg, default=None, metavar="N",
                   help="worker processes for the checks (default: the usable CPUs, at most 4); the numbers do "
                        "not depend on it")
    p.add_argument("--rederive", action="store_true", help="rebuild the SymPy derivations instead of loading them "
                                                           "from the cache (keyed by the source of proofs/ and SymPy)")
    p.add_argument("--seed", type=seed_arg, default=0, help="seed of every random draw (default 0)")
    p.add_argument("--out", type=_out_arg, default=Path("verify-report"),
                   help="report folder (default ./verify-report): a new or empty folder, or one a previous run wrote "
                        f"(it holds {REPORT_MARKER}); it is replaced as a whole")
    p.add_argument("--only", type=_claims_arg, default=None, metavar="C5[,C6]", help="check only these claims")
    return p


def _derivation_summary(der: Any) -> str:
    """A derivation's status in one line: its steps checked, and whether it came from the cache (what
    it derived against the statement is in the report, counted as the claim's corrections)."""
    n_ok = sum(s.checked for s in der.steps)
    return (f"{der.claim:<4}{n_ok}/{len(der.steps)} steps checked" + (f", {len(der.unchecked)} unchecked" if
                                                                       der.unchecked else "")
            + (", a step FAILED" if der.failed else "")
            + (" (from the cache)" if getattr(der, "from_cache", False) else f" ({der.seconds:.1f} s)"))


def _unicode_ok(stream: Any) -> bool:
    """Whether ``stream`` can print the terminal's mathematics (Unicode)."""
    try:
        "\u2211\u03b1\u2192\u2264\u221a\u2014".encode(getattr(stream, "encoding", None) or "ascii")
    except (UnicodeEncodeError, LookupError):
        return False
    return True


def run(argv: list[str]) -> int:
    args = _parser().parse_args(argv)
    if args.quick and args.large:
        raise VerifyError("--quick, --large: expected at most one of them (--quick shrinks every experiment, "
                          "--large enlarges some), got both")
    from proofs import CLAIM_IDS, DerivationError
    from verify.io import discard_staging, publish_folder, staging_folder
    from verify.outputs.report import table, write_report
    from verify.run import default_jobs, run_report

    claims = args.only or list(CLAIM_IDS)
    out: Path = args.out
    stage = staging_folder("--out", out, marker=REPORT_MARKER)
    t0 = time.perf_counter()
    try:
        try:
            doc, ders = run_report(claims, seed=args.seed, quick=args.quick, out=stage, large=args.large,
                                   rederive=args.rederive, jobs=args.jobs or default_jobs())
        except DerivationError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 1
        write_report(stage, doc)          # written and in place before anything is printed
        publish_folder(stage, out)
        stage = None
    finally:
        if stage is not None:
            discard_staging(stage)       # its own staging folder only (verify.io, by the marker inside)
    medium = "unicode" if _unicode_ok(sys.stdout) else "ascii"
    print("Symbolic derivations (proofs/):")
    for der in ders:
        print(_derivation_summary(der))
    print("\nVerdicts (python -m verify" + (" --quick" if args.quick else "") + f", seed {args.seed}):")
    print(table(doc, ascii_only=medium == "ascii"))
    for claim, err in doc["crashed"].items():
        print(f"\n{claim} CRASHED:\n{err}", file=sys.stderr)
    n_plots = sum(len(c["evidence"]["plots"]) for c in doc["claims"])
    n_cx = sum(1 for c in doc["claims"] for p in c["evidence"]["parts"] if p["counterexample"]
               and p["counterexample"]["file"])
    print(f"\nwrote {out / 'report.json'}, {out / 'report.md'}, {n_plots} plots and {n_cx} counterexamples under "
          f"{out}/ in {time.perf_counter() - t0:.1f} s")
    return 1 if doc["crashed"] else 0


def _claim_arg(text: str) -> str:
    from proofs import CLAIM_IDS

    claim = text.strip().upper()
    if claim not in CLAIM_IDS:
        raise argparse.ArgumentTypeError(f"expected a claim among {', '.join(CLAIM_IDS)}, got {text!r:.80}")
    return claim


def cli_proofs(argv: list[str]) -> int:
    """Print the derivations in full (``python -m proofs``)."""
    p = ArgParser(prog="python -m verify proofs", description="Print the symbolic derivations of the claims in full.")
    p.add_argument("claims", nargs="*", type=_claim_arg, metavar="CLAIM", help="claims to print (default: all)")
    args = p.parse_args(argv)
    from proofs.__main__ import main as proofs_main

    return proofs_main(list(dict.fromkeys(args.claims)))


def cli_replay(argv: list[str]) -> int:
    p = ArgParser(prog="python -m verify replay",
                  description="Re-run a saved counterexample from its parameters and judge it again.")
    p.add_argument("file", type=Path, metavar="FILE")
    args = p.parse_args(argv)
    from verify.replay import replay

    doc, outcome = replay(args.file)
    expected = doc["expected"]
    print(f"{doc['claim']}/{doc['part']}: {doc.get('statement', '')}")
    print(f"  saved:    {'violates' if expected.get('violates') else 'holds'}: {expected.get('summary', '')}")
    print(f"  replayed: {'violates' if outcome.violates else 'holds'}: {outcome.summary}")
    for key, value in outcome.figures.items():
        print(f"    {key} = {value}")
    same = bool(outcome.violates) == bool(expected.get("violates"))
    print("  reproduced: the statement is still refuted by this case" if outcome.violates and same
          else "  NOT reproduced: the replay judges differently from the saved file")
    return 0 if same else 1


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    for stream in (sys.stdout, sys.stderr):   # a terminal without Unicode gets escapes, never a traceback
        if not _unicode_ok(stream) and hasattr(stream, "reconfigure"):
            stream.reconfigure(errors="backslashreplace")
    from verify._validate import error_line

    try:
        if argv and argv[0] in SUBCOMMANDS:
            module, func = SUBCOMMANDS[argv[0]].split(":")
            return int(getattr(importlib.import_module(module), func)(argv[1:]) or 0)
        return run(argv)
    except VerifyError as exc:
        print(error_line(exc), file=sys.stderr)
        return 2
    except MemoryError:
        print("error: the requested sizes need more memory than this machine has", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return _processes.interrupted("files already written are complete (every write is atomic)")
    except OSError as exc:   # a write failed mid-run (a full disk, a vanished folder): no file half-written
        where = f"{exc.filename}: " if exc.filename else ""
        print(error_line(VerifyError(f"{where}{exc.strerror or exc} (files already written are complete: every "
                                     "write is atomic; a run's folder is replaced only when the run is complete)")),
              file=sys.stderr)
        return 1


def exit_now(code: int) -> NoReturn:
    """End the process with ``code`` once its output is out: run the ``atexit`` handlers, flush
    stdout and stderr, then ``os._exit``. This skips the interpreter's teardown, which after a
    run frees SymPy's caches and numba's compiled code object by object (1-2 s, measured) and has
    nothing left to write: every file is written, atomically, and closed before."""
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        try:
            if stream is not None:
                stream.flush()
        except (OSError, ValueError):   # the reader closed the pipe (``| head``), or the stream is closed
            pass
    os._exit(code)


def entry() -> NoReturn:
    """The command line's entry point (``python -m verify``, ``mha-nw-verify``): :func:`main`,
    then :func:`exit_now` with its status; a Ctrl-C at any moment is one line and exit status 130
    (:func:`verify._processes.call_interruptible`)."""
    exit_now(_processes.call_interruptible(main))


if __name__ == "__main__":
    entry()
