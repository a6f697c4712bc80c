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


def _formula(expr: object, ascii_only: bool) -> str:
    """A SymPy object on one line, from the LaTeX SymPy prints, through the markup's renderer."""
    from .markup import MarkupError, math_to_ascii, math_to_unicode, parse_math
    from .notation import to_latex

    try:
        nodes = parse_math(" ".join(to_latex(expr).split()), "formula")
    except MarkupError:
        return str(expr)
    return math_to_ascii(nodes) if ascii_only else math_to_unicode(nodes)


def _symbols(der: Derivation) -> list[str]:
    """The names of the free symbols of every step and result, in order of first use."""
    import sympy as sp

    names: list[str] = []
    for item in [*(s.relation for s in der.steps), *(r.expr for r in der.results.values())]:
        syms = getattr(item, "free_symbols", set())
        for s in sorted(syms, key=str):
            if isinstance(s, (sp.Symbol, sp.MatrixSymbol, sp.Indexed, sp.IndexedBase)):
                name = str(s.base.label if isinstance(s, sp.Indexed) else s)
                if name not in names:
                    names.append(name)
    return names


def describe(der: Derivation, *, width: int = 100, ascii_only: bool = False) -> str:
    """The derivation in full, for a reader at a terminal: the statement, the assumptions, every
    step (grouped, whole and wrapped) with its check method, why it holds and what the method
    computed, the results, the comparisons with the paper and what decided them, and what every
    symbol means."""
    import textwrap

    from .markup import render

    medium = "ascii" if ascii_only else "unicode"

    def text(value: object) -> str:
        return render(" ".join(str(value).split()), medium)

    def wrap(body: str, indent: str, first: str = "") -> list[str]:
        return textwrap.wrap(body, width, initial_indent=indent + first, subsequent_indent=indent + " " * len(first),
                             break_long_words=True, break_on_hyphens=False) or [indent + first]

    n_ok = sum(s.checked for s in der.steps)
    lines = [f"{der.claim}: {text(der.title)}  [{der.status}; {n_ok}/{len(der.steps)} steps checked; "
             f"{der.seconds:.2f} s]"]
    lines += wrap(text(der.stated), "", "Stated: ")
    lines += ["", "Assumptions:"]
    for a in der.assumptions.values():
        lines += wrap(text(a.statement), "  ", f"[{a.kind}] {a.name}: ")
    # each step under the smallest group that holds it; steps in no group last
    home: dict[str, str] = {}
    for g in sorted(der.groups.values(), key=lambda g: -len(g.steps)):
        for name in g.steps:
            home[name] = g.name
    lines += ["", "Steps:"]
    shown: set[str] = set()
    current = None
    for k, s in enumerate(der.steps, 1):
        gname = home.get(s.name, "")
        if gname != current:
            current = gname
            if not gname:
                lines.append("  (outside a group):")
            else:
                g = der.groups[gname]
                label = f"{gname} (continued): " if gname in shown else f"{gname}: "
                lines += wrap(text(g.description) if g.description and gname not in shown else "", "  ", label)
                shown.add(gname)
        mark = {"checked": "ok", "failed": "FAILED", "unchecked": "UNCHECKED"}[s.status]
        lines += wrap(f"[{mark}; by {s.method}: {s.method_summary}]", "       ", f"{k:>3}. {s.name}  ")
        lines += wrap(_formula(s.relation, ascii_only), "       ")
        if s.why:
            lines += wrap(text(s.why), "       ", "why: ")
        if s.computed:
            lines += wrap(" ".join(s.computed.split()), "       ", "computed: ")
        if s.status != "checked" and s.detail:
            lines += wrap(" ".join(s.detail.split()), "       ", "detail: ")
    lines += ["", "Results:"]
    for r in der.results.values():
        lines += wrap(_formula(r.expr, ascii_only), "  ", f"{r.name} = ")
        if r.description:
            lines += wrap(text(r.description), "    ")
    if der.comparisons:
        lines += ["", "Derived against stated:"]
        for c in der.comparisons:
            verdict = {True: "holds", False: "DOES NOT HOLD", None: "UNDECIDED"}[c.holds]
            lines.append(f"  {c.name}: {verdict}")
            lines += wrap(text(c.stated), "    ", "stated: ")
            lines += wrap(text(c.derived), "    ", "derived: ")
            how = f"{c.decided_by} (steps {', '.join(c.steps)})" if c.decided_by else c.method
            lines += wrap(" ".join(how.split()), "    ", "decided by: ")
    entries: dict[str, str | None] = {}
    for name in _symbols(der):
        entry = der.glossary_entry(name)
        entries.setdefault(entry[0] if entry else name, entry[1] if entry else None)
    if entries:
        lines += ["", "Symbols:"]
        for key, meaning in entries.items():
            lines += wrap(text(meaning) if meaning else "(not defined)", "  ", f"{key}: ")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    try:
        return _main(argv)
    except BrokenPipeError:          # the reader closed the pipe (``| head``): stop quietly
        sys.stdout = None
        return 0


def _main(argv: list[str] | None = None) -> int:
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
