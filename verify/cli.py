"""``python -m verify``: every claim checked and the report; and every other command, its options
parsed here and handed to the function that does the work (a bad argument, a refused file and an
interrupt read the same in every command).

    python -m verify [--quick | --large] [--seed N] [--out DIR] [--only C5[,C6]]
    python -m verify proofs [C1 ...]          print the derivations in full
    python -m verify replay FILE              re-run and re-judge a saved counterexample
    python -m verify snapshot [--write]       compare (or store) the verdict snapshot and README table
    python -m verify sweep c7|demo [...]      a resumable sweep (C7's empirical grid; the engine's self-test)
    python -m verify latex [-o DIR] [--pdf] [--summary]   LaTeX export (the referee's summary alone)
    python -m verify hdi PATH | --reading-ii  head diversity of a checkpoint against chance
    python -m verify allocate --budget D --n N --dim d [--model NAME]

Exit status: 0 when the command did its work (whatever the verdicts); 1 when a check crashed, a
derivation step failed to check or a write failed mid-run; 2 for bad arguments or input files
(one line, ``error: ...``); 130 when interrupted.
"""

from __future__ import annotations

import argparse
import atexit
import os
import sys
import textwrap
import time
from pathlib import Path
from typing import Any, NoReturn

#: The BLAS libraries' thread counts unless the user set them: one (small matrices, workers share the
#: CPUs). Set before the imports below load numpy, which reads them once.
ONE_BLAS_THREAD = {"OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
for _var, _value in ONE_BLAS_THREAD.items():
    os.environ.setdefault(_var, _value)

from verify import _processes  # noqa: E402  (after the BLAS threads are set)
from verify._validate import (MAX_JOBS, ArgParser, exclusive, fail, int_arg, int_numeral,  # noqa: E402
                              real_numeral, received, seed_arg, seed_numeral)
from verify.errors import VerifyError  # noqa: E402
from verify.io import RUN_MARKER  # noqa: E402

__all__ = ["main", "entry", "exit_now", "COMMANDS", "SWEEPS"]


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
                    f"Other commands: {', '.join(COMMANDS)} (python -m verify COMMAND --help).",
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
                        f"(it holds {RUN_MARKER}); it is replaced as a whole")
    p.add_argument("--only", type=_claims_arg, default=None, metavar="C5[,C6]", help="check only these claims")
    return p


def _derivation_summary(der: Any) -> str:
    """A derivation's status in one line: its steps checked, and whether it came from the cache."""
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
    from verify.outputs.report import terminal_verdicts, write_report
    from verify.run import default_jobs, run_report

    claims = args.only or list(CLAIM_IDS)
    out: Path = args.out
    stage = staging_folder("--out", out)
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
    print("\n" + terminal_verdicts(doc, ascii_only=medium == "ascii"))
    for claim, err in doc["crashed"].items():
        print(f"\n{claim} CRASHED:\n{err}", file=sys.stderr)
    n_plots = sum(len(c["evidence"]["plots"]) for c in doc["claims"])
    n_cx = sum(1 for c in doc["claims"] for p in c["evidence"]["parts"] if p["counterexample"]
               and p["counterexample"]["file"])
    print(f"\nwrote {out / 'report.html'} (open it in a browser), report.json, report.md, {n_plots} plots and {n_cx} "
          f"counterexamples under {out}/ in {time.perf_counter() - t0:.1f} s")
    return 1 if doc["crashed"] else 0


def _claim_arg(text: str) -> str:
    from proofs import CLAIM_IDS

    claim = text.strip().upper()
    if claim not in CLAIM_IDS:
        raise argparse.ArgumentTypeError(f"expected a claim among {', '.join(CLAIM_IDS)}, got {text!r:.80}")
    return claim


def _parser_of(prog: str, description: str, example: str = "") -> ArgParser:
    wrap = (textwrap.fill(ln, 79) if len(ln) > 79 and ln[:1] != " " else ln for ln in description.split("\n"))
    description = "\n".join(wrap)   # the raw formatter keeps the examples' lines, and so would not wrap these
    return ArgParser(prog=f"python -m verify {prog}", description=description,
                     epilog=f"examples:\n  {example}" if example else None,
                     formatter_class=argparse.RawDescriptionHelpFormatter)


def cmd_proofs(argv: list[str]) -> int:
    """Print the derivations in full (``python -m proofs``)."""
    p = _parser_of("proofs", "Print the symbolic derivations of the claims in full.")
    p.add_argument("claims", nargs="*", type=_claim_arg, metavar="CLAIM", help="claims to print (default: all)")
    args = p.parse_args(argv)
    from proofs.__main__ import main as proofs_main

    return proofs_main(list(dict.fromkeys(args.claims)))


def cmd_replay(argv: list[str]) -> int:
    """Print the recomputed case for a reader (:func:`verify.replay.lines`), or with ``--json`` the
    recomputed record; exit status 1 when the replay judges differently from the saved file."""
    p = _parser_of("replay", "Re-run a saved counterexample from its parameters and judge it again.",
                   "python -m verify replay verify-report/counterexamples/C5-premise-nw-heads.json")
    p.add_argument("file", type=Path, metavar="FILE")
    p.add_argument("--json", action="store_true", help="print the recomputed record as JSON (every figure whole)")
    args = p.parse_args(argv)
    import json

    from verify.replay import lines, record, replay

    doc, outcome = replay(args.file)
    rec = record(doc, outcome)
    print(json.dumps(rec, indent=2, ensure_ascii=False) if args.json else "\n".join(lines(doc, outcome)))
    return 0 if rec["reproduced"] else 1


def cmd_snapshot(argv: list[str]) -> int:
    p = _parser_of("snapshot", "Compare a report's verdicts with the stored snapshot (default: the quick run, seed "
                   "0), or regenerate the snapshot and the README's verdict table with --write. Run it from the "
                   "repository's root.", "python -m verify snapshot\n  python -m verify snapshot --write --report "
                   "out/report.json")
    p.add_argument("--write", action="store_true", help="store the snapshot (quick run) and the README table "
                                                         "(full run, or --report)")
    p.add_argument("--report", type=Path, default=None, help="a full default run's report.json to use instead of "
                                                             "running it (for the README table and the comparison)")
    args = p.parse_args(argv)
    from verify.snapshot import run_snapshot

    return run_snapshot(args.write, args.report)


def cmd_latex(argv: list[str]) -> int:
    p = _parser_of("latex", "Write every claim's derivation, verdict and evidence as a LaTeX document "
                   "(verification.tex), one snippet per formula (snippets/) and the notation macros (macros.tex); "
                   "--summary: the referee's summary alone (summary.tex).",
                   "python -m verify --quick --out run && python -m verify latex --report run/report.json -o paper "
                   "--pdf\n  python -m verify latex --summary --pdf --report run/report.json -o paper\n\n--report FILE "
                   "reads a report.json written by python -m verify: its plot paths must lie inside its folder and its "
                   "names are checked before anything is written.")
    p.add_argument("-o", "--out", type=Path, default=Path("latex-out"), metavar="DIR",
                   help="output folder (default ./latex-out)")
    p.add_argument("--pdf", action="store_true", help="compile the PDF with pdflatex (twice)")
    p.add_argument("--summary", action="store_true", help="the referee's summary alone (each claim's verdict, what "
                                                          "to write instead, limits, undecided parts, the deciding "
                                                          "plot, the glossary): a short document, no appendices")
    p.add_argument("--report", type=Path, default=None, metavar="FILE",
                   help="take verdicts and figures from this report.json instead of running the checks")
    p.add_argument("--quick", action="store_true", help="small sizes for the claim checks (as python -m verify)")
    p.add_argument("--large", action="store_true", help="larger experiments for the claim checks")
    p.add_argument("--seed", type=seed_arg, default=None, help="seed of the claim checks (default 0)")
    args = p.parse_args(argv)
    from verify.outputs.latex import run_latex

    return run_latex(args.out, args.report, pdf=args.pdf, summary=args.summary, quick=args.quick, large=args.large,
                     seed=args.seed)


def cmd_hdi(argv: list[str]) -> int:
    from verify.experiments.checkpoint import DEFAULT_BAND_DRAWS, MAX_BAND_DRAWS
    from verify.experiments.pretrained import run_hdi

    p = _parser_of("hdi", "Head diversity (HDI) of the key and query heads of a checkpoint (safetensors or GGUF), "
                   "per layer, against the Haar baseline of random subspaces, with the HDI's sensitivity to the "
                   "quantisation for quantised weights; --reading-ii: C9's reading ii over the installed pretrained "
                   "models.", "python -m verify hdi path/to/model --json hdi.json -o hdi-plots\n"
                   "  python -m verify hdi path/to/model.Q4_K_M.gguf --band-draws 16\n  python -m verify hdi --reading-ii")
    p.add_argument("path", type=Path, metavar="PATH", nargs="?",
                   help=".safetensors file or model directory with config.json, or a .gguf file")
    p.add_argument("--json", type=Path, metavar="FILE", help="write the full result (with overlap matrices)")
    p.add_argument("-o", "--out", type=Path, metavar="DIR",
                   help="write one overlap heatmap PNG per layer and the HDI per layer against the Haar baseline")
    p.add_argument("--plots", type=Path, dest="old_plots", help=argparse.SUPPRESS)   # the old name of --out
    p.add_argument("--seed", type=seed_arg, default=0, metavar="N",
                   help="seed of the quantisation band's perturbations (default 0)")
    p.add_argument("--band-draws", type=int_arg(2, MAX_BAND_DRAWS, "MAX_BAND_DRAWS"), default=DEFAULT_BAND_DRAWS,
                   metavar="K", help=f"perturbations per layer and tensor for the quantisation band (default "
                                     f"{DEFAULT_BAND_DRAWS}, 2 to {MAX_BAND_DRAWS})")
    p.add_argument("--reading-ii", action="store_true",
                   help="C9's reading ii: the installed pretrained models (MiniLM, SmolLM2) against chance")
    p.add_argument("--readme", type=Path, metavar="FILE",
                   help="with --reading-ii: rewrite the generated block between FILE's reading-ii markers")
    args = p.parse_args(argv)
    exclusive(("--out", args.out), ("--plots", args.old_plots))
    thresholds = None
    if args.reading_ii:   # the thresholds of C9's reading ii, declared by its check
        from verify.claims import c9

        thresholds = (float(c9.Z_MIN), float(c9.CKPT_DELTA_MIN))
    return run_hdi(args.path, json_file=args.json, out=args.out if args.out is not None else args.old_plots,
                   seed=args.seed, band_draws=args.band_draws, reading_ii=thresholds, readme=args.readme)


def cmd_allocate(argv: list[str]) -> int:
    from verify.experiments.allocate import MODELS, run_allocate

    p = _parser_of("allocate", "Best split of a head budget D = H·d_k under each C7 MSE model (a model whose "
                   "ensemble is not feasible at D and d is named, not ranked; --model refuses it).",
                   "python -m verify allocate --budget 768 --n 1e6 --dim 768 --model b_orth")
    p.add_argument("--budget", required=True, metavar="D", help="budget D = H·d_k (a positive integer)")
    p.add_argument("--n", required=True, metavar="N", help="sample size n (e.g. 1e9)")
    p.add_argument("--dim", required=True, metavar="d", help="input dimension d of the kernel rates")
    p.add_argument("--model", default=None, metavar="NAME", help=f"one of {', '.join(MODELS)} (default: all)")
    p.add_argument("--c-b", default="1", metavar="X", help="bias constant c_b (bias^2 = c_b h^4), default 1")
    p.add_argument("--c-v", default="1", metavar="Y", help="variance constant c_v (V = c_v/(n h^s)), default 1")
    a = p.parse_args(argv)

    def integer(flag: str, text: str) -> int:   # the range is stated by allocate's own validators
        return int_numeral(flag, text, maximum=None, exponent=True, want="a positive integer")

    return run_allocate(integer("D (--budget)", a.budget), real_numeral("n (--n)", a.n), integer("d (--dim)", a.dim),
                        model=a.model, c_b=real_numeral("c_b (--c-b)", a.c_b), c_v=real_numeral("c_v (--c-v)", a.c_v))


def _sweep_options(p: ArgParser, default_out: str) -> None:
    """The options every named sweep takes (``--workers``, the old name of ``--jobs``, is read, not listed)."""
    p.add_argument("-o", "--out", type=Path, default=Path(default_out), metavar="DIR",
                   help=f"results folder (default {default_out})")
    p.add_argument("--scheduler", default=None, metavar="ADDRESS",
                   help="run on this Dask scheduler (e.g. tcp://host:8786) instead of local processes")
    p.add_argument("--jobs", "-j", dest="workers", default=None, metavar="N",
                   help=f"local worker processes, 1..{MAX_JOBS} (default: usable CPUs)")
    p.add_argument("--workers", dest="old_workers", default=None, help=argparse.SUPPRESS)
    p.add_argument("--no-progress", action="store_true", help="no progress bar")


def _workers(a: argparse.Namespace) -> int | None:
    exclusive(("--jobs", a.workers), ("--workers", a.old_workers))
    flag, text = ("--workers", a.old_workers) if a.old_workers is not None else ("--jobs", a.workers)
    return None if text is None else int_numeral(flag, text, minimum=1, maximum=MAX_JOBS, why="MAX_JOBS")


def _sweep_demo(argv: list[str]) -> int:
    from verify.experiments.sweep import MAX_DEMO_SLEEP_S, MAX_DEMO_TASKS, run_demo

    p = _parser_of("sweep demo", "The sweep engine's self-test grid: N tasks that sleep S seconds each and return "
                   "numbers that depend on their parameters only; kill it and run it again to see it resume.",
                   "python -m verify sweep demo --tasks 20 --sleep 0.1 -o sweep-demo --jobs 2")
    p.add_argument("--tasks", default="20", metavar="N", help=f"tasks in the grid, 1..{MAX_DEMO_TASKS:,} (default 20)")
    p.add_argument("--sleep", default="0.1", metavar="S", help=f"seconds each task sleeps, 0..{MAX_DEMO_SLEEP_S} "
                                                               "(default 0.1)")
    _sweep_options(p, "sweep-demo")
    a = p.parse_args(argv)
    tasks = int_numeral("--tasks", a.tasks, minimum=1, maximum=MAX_DEMO_TASKS, why="MAX_DEMO_TASKS: the self-test's size")
    sleep = real_numeral("--sleep", a.sleep, minimum=0, maximum=MAX_DEMO_SLEEP_S,
                         want=f"seconds in [0, {MAX_DEMO_SLEEP_S}] (MAX_DEMO_SLEEP_S)")
    return run_demo(tasks, sleep, a.out, workers=_workers(a), scheduler=a.scheduler, progress=not a.no_progress)


def _sweep_c7(argv: list[str]) -> int:
    from verify.experiments.scaling import GRIDS, run_c7

    p = _parser_of("sweep c7", "C7's empirical scaling law on real NW ensembles.",
                   "python -m verify sweep c7 --quick -o c7-sweep --plot c7-sweep/dk.png")
    p.add_argument("--grid", default=None, choices=list(GRIDS), help="grid (default full; --quick: quick)")
    p.add_argument("--quick", action="store_true", help="the quick grid (about 1 s)")
    p.add_argument("--seed", default="0", metavar="N", help="first seed (default 0)")
    p.add_argument("--plot", default=None, type=Path, metavar="FILE",
                   help="PNG of d_k*(n) against the models (first config)")
    _sweep_options(p, "sweep-c7")
    a = p.parse_args(argv)
    seed = seed_numeral("--seed", a.seed)           # 0..2**63-1, as every --seed
    exclusive(("--quick", a.quick), ("--grid", a.grid))
    return run_c7("quick" if a.quick else a.grid or "full", seed, a.out, workers=_workers(a), scheduler=a.scheduler,
                  progress=not a.no_progress, plot=a.plot)


#: The named sweeps of ``python -m verify sweep NAME``, with what each runs.
SWEEPS = {"c7": (_sweep_c7, "C7's empirical scaling law on real NW ensembles"),
          "demo": (_sweep_demo, "the sweep engine's self-test grid")}


def _sweep_help() -> str:
    """``sweep --help``: the named sweeps and the options they share, from the options' own parser."""
    p = _parser_of("sweep", "Run (or resume) a named, resumable parameter sweep: one stored result per task under "
                   "DIR/tasks/, the table DIR/results.csv; a killed or interrupted sweep resumes where it stopped. "
                   "The options below are every sweep's; NAME --help lists the rest.\n\nsweeps:\n"
                   + "\n".join(f"  {name:<6} {what}" for name, (_, what) in SWEEPS.items()),
                   "python -m verify sweep c7 --quick -o c7-sweep\n"
                   "  python -m verify sweep demo --tasks 20 -o sweep-demo")
    p.add_argument("name", metavar="NAME", help="the sweep")
    _sweep_options(p, "sweep-NAME")
    return p.format_help()


def cmd_sweep(argv: list[str]) -> int:
    """``python -m verify sweep NAME [options]``: a write failing mid-run keeps what is stored (exit 1),
    an interrupt ends the workers and writes the table of the finished tasks (exit 130)."""
    from verify.experiments.sweep import stop_on_sigterm, stopped_by

    if not argv or argv[0] in ("-h", "--help"):
        if not argv:
            raise fail("sweep", "no name", f"one of {', '.join(SWEEPS)} (python -m verify sweep --help)")
        print(_sweep_help(), end="")
        return 0
    if argv[0] not in SWEEPS:
        raise fail("sweep", received(argv[0]), f"one of {', '.join(SWEEPS)}")
    stop_on_sigterm()
    try:
        return SWEEPS[argv[0]][0](argv[1:])
    except OSError as exc:   # a write failed mid-run (disk full, folder removed): what was stored stays
        where = f" ({exc.filename})" if exc.filename else ""
        print(f"error: sweep: a write failed mid-run{where}: {exc.strerror or exc}; the finished tasks are "
              "stored, run the same command again to resume", file=sys.stderr)
        return 1
    except KeyboardInterrupt:      # its workers are ended, the table of the finished tasks written
        return _processes.interrupted("the finished tasks are stored; run the same command again to resume",
                                      signal_name=stopped_by())


#: Every subcommand: name -> function of its arguments returning the exit status.
COMMANDS = {"proofs": cmd_proofs, "replay": cmd_replay, "snapshot": cmd_snapshot, "sweep": cmd_sweep,
            "latex": cmd_latex, "hdi": cmd_hdi, "allocate": cmd_allocate}


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    for stream in (sys.stdout, sys.stderr):   # a terminal without Unicode gets escapes, never a traceback
        if not _unicode_ok(stream) and hasattr(stream, "reconfigure"):
            stream.reconfigure(errors="backslashreplace")
    from verify._validate import error_line

    try:
        if argv and argv[0] in COMMANDS:
            return int(COMMANDS[argv[0]](argv[1:]) or 0)
        return run(argv)
    except SystemExit as exc:   # --help
        return int(exc.code or 0)
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
    """End the process with ``code``: the ``atexit`` handlers, a flush of stdout and stderr, then
    ``os._exit``, skipping the interpreter's teardown (1-2 s freeing SymPy's and numba's caches)."""
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        try:
            if stream is not None:
                stream.flush()
        except (OSError, ValueError):   # the reader closed the pipe (``| head``), or the stream is closed
            pass
    os._exit(code)


def entry() -> NoReturn:
    """The command line's entry point: :func:`main`, then :func:`exit_now` (a Ctrl-C is one line, exit 130)."""
    exit_now(_processes.call_interruptible(main))


if __name__ == "__main__":
    entry()
