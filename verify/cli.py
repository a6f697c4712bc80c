"""``python -m verify``: every claim checked, one computed verdict each, and the report.

    python -m verify [--quick] [--seed N] [--out DIR] [--only C5[,C6]]
    python -m verify proofs [C1 ...]          print the derivations in full
    python -m verify replay FILE              re-run and re-judge a saved counterexample
    python -m verify latex [-o DIR] [--pdf]   LaTeX export of every claim
    python -m verify hdi PATH [--json FILE] [--plots DIR]
    python -m verify allocate --budget D --n N --dim d [--model NAME]
    python -m verify bench [--quick]

Exit status: 0 when every check ran (whatever the verdicts); 1 when a check crashed or a
derivation step failed to check; 2 for bad arguments or bad input files.
"""

from __future__ import annotations

import argparse
import importlib
import sys
import time
import traceback
from pathlib import Path

from .errors import VerifyError

__all__ = ["main"]

# subcommand -> "module:function" taking argv and returning an exit status
SUBCOMMANDS = {
    "proofs": "verify.cli:cli_proofs",
    "replay": "verify.cli:cli_replay",
    "latex": "verify.latex:cli_latex",
    "hdi": "verify.checkpoint:cli_hdi",
    "allocate": "verify.allocate:cli_allocate",
    "bench": "verify.bench:cli_bench",
}


def _claims_arg(text: str) -> list[str]:
    from .claims import CLAIM_CHECKS

    claims = [c.strip().upper() for c in text.split(",") if c.strip()]
    unknown = [c for c in claims if c not in CLAIM_CHECKS]
    if unknown or not claims:
        raise argparse.ArgumentTypeError(f"expected claims among {', '.join(CLAIM_CHECKS)}, got {text!r}")
    return claims


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m verify",
        description="Check every claim of the paper symbolically and numerically and write the report. "
                    f"Other commands: {', '.join(SUBCOMMANDS)} (python -m verify COMMAND --help).",
    )
    p.add_argument("--quick", action="store_true", help="small sizes, for a first look")
    p.add_argument("--seed", type=int, default=0, help="seed of every random draw (default 0)")
    p.add_argument("--out", type=Path, default=Path("verify-report"), help="report folder (default ./verify-report)")
    p.add_argument("--only", type=_claims_arg, default=None, metavar="C5[,C6]", help="check only these claims")
    return p


def _derivation_summary(der) -> str:
    n_ok = sum(s.checked for s in der.steps)
    lines = [f"{der.claim}  {der.status}: {n_ok}/{len(der.steps)} steps checked"
             + (f", {len(der.unchecked)} unchecked" if der.unchecked else "") + f"  ({der.seconds:.1f} s)  {der.title}"]
    model = [a.statement for a in der.assumptions.values() if a.kind == "model"]
    if model:
        lines.append("    assumptions: " + "; ".join(model))
    if der.results:
        lines.append("    results: " + ", ".join(der.results))
    refuted = [c.name for c in der.comparisons if not c.holds]
    if refuted:
        lines.append("    derived result differs from the statement: " + ", ".join(refuted))
    return "\n".join(lines)


def run(argv: list[str]) -> int:
    args = _parser().parse_args(argv)
    from proofs import DerivationError, derivation

    from .claims import CLAIM_CHECKS, Context, run_claim
    from .report import Progress, table, write_json, write_markdown

    claims = args.only or list(CLAIM_CHECKS)
    out: Path = args.out
    out.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()

    print("Symbolic derivations (proofs/):")
    progress = Progress(len(claims))
    ders = {}
    for claim in claims:
        progress.show(f"deriving {claim}")
        ders[claim] = derivation(claim)
        progress.advance(f"derived {claim}")
    progress.close()
    for claim in claims:
        print(_derivation_summary(ders[claim]))
    failed = [d for d in ders.values() if d.failed]
    if failed:
        for d in failed:
            try:
                d.raise_on_failure()
            except DerivationError as exc:
                print(f"error: {exc}", file=sys.stderr)
        return 1

    print("\nNumeric checks and verdicts:")
    ctx = Context(seed=args.seed, quick=args.quick, out=out)
    results, crashed = [], {}
    progress = Progress(len(claims))
    for claim in claims:
        progress.show(f"checking {claim}")
        ctx.progress = lambda message, claim=claim: progress.show(f"{claim}: {message}")
        try:
            result = run_claim(claim, ctx)
            result.derivation = ders[claim].to_dict()
            results.append(result)
        except Exception:  # a crashed check is reported, and the run exits non-zero
            crashed[claim] = traceback.format_exc()
        progress.advance(f"checked {claim}")
    progress.close()

    print(table(results))
    for claim, err in crashed.items():
        print(f"\n{claim} CRASHED:\n{err}", file=sys.stderr)
    write_json(out / "report.json", results, seed=args.seed, quick=args.quick, crashed=crashed)
    write_markdown(out / "report.md", results, seed=args.seed, quick=args.quick, crashed=crashed)
    n_cx = sum(1 for r in results for p in r.parts if p.counterexample and p.counterexample.file)
    print(f"\nwrote {out / 'report.json'}, {out / 'report.md'}, "
          f"{sum(len(r.plots) for r in results)} plots and {n_cx} counterexamples under {out}/ "
          f"in {time.perf_counter() - t0:.1f} s")
    return 1 if crashed else 0


def cli_proofs(argv: list[str]) -> int:
    """Print the derivations in full (``python -m proofs``)."""
    from proofs.__main__ import main as proofs_main

    return proofs_main(argv)


def cli_replay(argv: list[str]) -> int:
    p = argparse.ArgumentParser(prog="python -m verify replay",
                                description="Re-run a saved counterexample from its parameters and judge it again.")
    p.add_argument("file", type=Path, metavar="FILE")
    args = p.parse_args(argv)
    from .counterexamples import replay

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
    try:
        if argv and argv[0] in SUBCOMMANDS:
            module, func = SUBCOMMANDS[argv[0]].split(":")
            return int(getattr(importlib.import_module(module), func)(argv[1:]) or 0)
        return run(argv)
    except VerifyError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    raise SystemExit(main())
