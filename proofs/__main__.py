"""``python -m proofs [C1 C3 ...]``: run the derivations and print each one;
``python -m proofs codegen [--check]``: (re)generate ``verify/formulas.py``.

Exit status 1 if a step fails to check (naming the step), 2 for a bad command line.
"""

from __future__ import annotations

import sys

from . import CLAIM_IDS, DerivationError, derivation
from .core import Derivation

USAGE = f"""usage: python -m proofs [CLAIM ...]
       python -m proofs codegen [--check]

Build and check the SymPy derivations of the claims and print each one: its assumptions, every
step (status, check method, the relation with its premise, what the method computed), the
results and the comparisons with the paper's statements.

  CLAIM            {', '.join(CLAIM_IDS)} (default: all)
  codegen          rewrite verify/formulas.py from the derived results
  codegen --check  exit 1 if verify/formulas.py differs from what codegen would write
  -h, --help       show this text

Exit status: 0 all steps checked, 1 a step failed to check, 2 bad arguments."""


def describe(der: Derivation, *, width: int = 100) -> str:
    """A plain-text account of a derivation: assumptions, steps with their status, check method
    and what it computed, results, and the comparisons with the paper's statement."""

    def clip(text: str) -> str:
        text = " ".join(str(text).split())
        return text if len(text) <= width else text[: width - 3] + "..."

    n_ok = sum(s.checked for s in der.steps)
    lines = [
        f"{der.claim}: {der.title}  [{der.status}; {n_ok}/{len(der.steps)} steps checked; {der.seconds:.2f} s]",
        f"  stated: {clip(der.stated)}",
        "  assumptions:",
    ]
    lines += [f"    - [{a.kind}] {a.name}: {clip(a.statement)}" for a in der.assumptions.values()]
    lines.append("  steps:")
    for s in der.steps:
        mark = {"checked": "ok", "failed": "FAILED", "unchecked": "UNCHECKED"}[s.status]
        lines.append(f"    {mark:>9}  {s.name}  (by {s.method})  {clip(s.relation)}")
        if s.computed:
            lines.append(f"               computed: {clip(s.computed)}")
        if s.status != "checked" and s.detail:
            lines.append(f"               {clip(s.detail)}")
    lines.append("  results:")
    lines += [f"    {r.name} = {clip(r.expr)}" for r in der.results.values()]
    if der.comparisons:
        lines.append("  derived vs stated:")
        for c in der.comparisons:
            lines.append(f"    {'holds' if c.holds else 'DOES NOT HOLD':>13}  {c.name}: {clip(c.derived)}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if any(a in ("-h", "--help") for a in argv):
        print(USAGE)
        return 0
    if argv[:1] == ["codegen"]:
        extra = [a for a in argv[1:] if a != "--check"]
        if extra:
            print(f"error: codegen takes only --check, got {' '.join(extra)}", file=sys.stderr)
            return 2
        from .codegen import main as codegen_main

        return codegen_main(argv[1:])
    options = [a for a in argv if a.startswith("-")]
    if options:
        print(f"error: unknown option {options[0]!r} (see python -m proofs --help)", file=sys.stderr)
        return 2
    claims = [a.upper() for a in argv] or list(CLAIM_IDS)
    unknown = [c for c in claims if c not in CLAIM_IDS]
    if unknown:
        print(f"error: unknown claim {unknown[0]!r}; known: {', '.join(CLAIM_IDS)}", file=sys.stderr)
        return 2
    status = 0
    for claim in claims:
        der = derivation(claim)
        print(describe(der))
        print()
        try:
            der.raise_on_failure()
        except DerivationError as exc:
            print(f"error: {exc}", file=sys.stderr)
            status = 1
    return status


if __name__ == "__main__":
    raise SystemExit(main())
