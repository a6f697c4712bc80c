"""The report: the table on the terminal, ``report.json`` and ``report.md``."""

from __future__ import annotations

import json
import platform
import sys
import textwrap
from pathlib import Path
from typing import Iterable, TextIO

from .verdicts import ClaimResult

__all__ = ["table", "write_json", "write_markdown", "Progress"]


class Progress:
    """A one-line progress bar on stderr (plain lines when stderr is not a terminal)."""

    def __init__(self, total: int, stream: TextIO | None = None, width: int = 24) -> None:
        self.total, self.done, self.width = total, 0, width
        self.stream = stream or sys.stderr
        self.tty = hasattr(self.stream, "isatty") and self.stream.isatty()

    def show(self, label: str) -> None:
        filled = int(self.width * self.done / max(self.total, 1))
        bar = "#" * filled + "-" * (self.width - filled)
        line = f"[{bar}] {self.done}/{self.total} {label}"
        if self.tty:
            self.stream.write("\r" + line[:100].ljust(100))
        else:
            self.stream.write(line + "\n")
        self.stream.flush()

    def advance(self, label: str = "") -> None:
        self.done += 1
        self.show(label)

    def close(self) -> None:
        if self.tty:
            self.stream.write("\n")
            self.stream.flush()


def _symbolic_cell(result: ClaimResult) -> str:
    der = result.derivation
    if not der:
        return "-"
    steps = der.get("steps", [])
    ok = sum(s["status"] == "checked" for s in steps)
    unchecked = sum(s["status"] == "unchecked" for s in steps)
    cell = f"{der['status'].split('-')[0]} {ok}/{len(steps)}"
    return cell + (f" ({unchecked} unchecked)" if unchecked else "")


def table(results: Iterable[ClaimResult], *, width: int = 118) -> str:
    """Claim | symbolic status | numeric figures | verdict, wrapped to ``width`` columns."""
    results = list(results)
    head = ("claim", "symbolic", "numeric figures", "verdict")
    w_claim, w_sym, w_verdict = 5, 22, 18
    w_num = max(30, width - w_claim - w_sym - w_verdict - 9)
    rule = "-" * (w_claim + w_sym + w_num + w_verdict + 9)
    lines = [rule, f"{head[0]:<{w_claim}} | {head[1]:<{w_sym}} | {head[2]:<{w_num}} | {head[3]}", rule]
    for r in results:
        num = textwrap.wrap(r.headline or "-", w_num) or ["-"]
        for i, chunk in enumerate(num):
            if i == 0:
                lines.append(f"{r.id:<{w_claim}} | {_symbolic_cell(r):<{w_sym}} | {chunk:<{w_num}} | {r.verdict.value}")
            else:
                lines.append(f"{'':<{w_claim}} | {'':<{w_sym}} | {chunk:<{w_num}} |")
    lines.append(rule)
    return "\n".join(lines)


def _meta(seed: int, quick: bool) -> dict:
    import mpmath
    import numpy
    import sympy

    from . import __version__

    return {
        "package_version": __version__,
        "seed": seed,
        "quick": quick,
        "python": platform.python_version(),
        "numpy": numpy.__version__,
        "sympy": sympy.__version__,
        "mpmath": mpmath.__version__,
    }


def write_json(path: Path, results: list[ClaimResult], *, seed: int, quick: bool, crashed: dict[str, str]) -> Path:
    """``{"claims": [{"id", "verdict", "assumptions", "evidence", ...}], "meta": {...}}``."""
    doc = {
        "claims": [r.to_dict() for r in results],
        "crashed": crashed,
        "meta": _meta(seed, quick),
    }
    path.write_text(json.dumps(doc, indent=2, default=_default) + "\n")
    return path


def _default(x: object) -> object:
    import numpy as np

    if isinstance(x, np.generic):
        return x.item()
    if isinstance(x, np.ndarray):
        return x.tolist()
    return str(x)


def _fmt(value: object) -> str:
    if isinstance(value, float):
        return f"{value:.6g}"
    if isinstance(value, (list, tuple)) and value and all(isinstance(v, dict) for v in value):
        return f"{len(value)} records (in report.json)"
    if isinstance(value, (list, tuple)) and len(value) > 8:
        return f"[{', '.join(_fmt(v) for v in value[:8])}, ...] ({len(value)} values)"
    return str(value)


def write_markdown(path: Path, results: list[ClaimResult], *, seed: int, quick: bool,
                   crashed: dict[str, str]) -> Path:
    """A readable report with every part's evidence, the derivation steps and the plots."""
    out = ["# Verification report", "",
           f"Paper: *Multi-Head Attention as Ensemble Nadaraya-Watson Estimation* (Fokoue, 2026). "
           f"Seed {seed}{', quick sizes' if quick else ''}. Replay any counterexample with "
           "`python -m verify replay FILE`.", "",
           "| claim | verdict | numeric figures |", "|---|---|---|"]
    for r in results:
        out.append(f"| {r.id} | **{r.verdict.value}** | {r.headline.replace('|', '/')} |")
    for claim, err in crashed.items():
        out.append(f"| {claim} | **crashed** | {err.splitlines()[-1] if err else ''} |")
    for r in results:
        out += ["", f"## {r.id}: {r.title}", "", f"**Stated:** {r.stated}", "",
                f"**Verdict:** {r.verdict.value}"]
        if r.restored_by:
            out += ["", "**Restored by:**", *[f"- {x}" for x in r.restored_by]]
        if r.assumptions:
            out += ["", "**Assumptions the verdict rests on:**", *[f"- {a}" for a in r.assumptions]]
        for p in r.parts:
            out += ["", f"### {r.id}/{p.id}: {p.verdict.value}", "", p.statement]
            if p.symbolic:
                s = p.symbolic
                out.append(f"- symbolic: {s.status}, {s.n_checked}/{s.n_steps} steps checked"
                           + (f"; results {', '.join(s.results)}" if s.results else ""))
            if p.numeric:
                out.append(f"- numeric ({p.numeric.agreement}): {p.numeric.summary}")
                out += [f"  - `{k}` = {_fmt(v)}" for k, v in p.numeric.figures.items()]
            if p.counterexample:
                cx = p.counterexample
                out.append(f"- counterexample: {cx.description}" + (f" (`{cx.file}`)" if cx.file else ""))
            if p.restored_by:
                out.append(f"- restored by: {p.restored_by}")
            if p.model_assumptions:
                out.append("- assumptions: " + "; ".join(p.model_assumptions))
            if p.to_dict()["reason"]:
                out.append(f"- not checkable: {p.to_dict()['reason']}")
        for name, plot in r.plots.items():
            rel = Path(plot)
            try:
                rel = rel.relative_to(path.parent)
            except ValueError:
                pass
            out += ["", f"![{name}]({rel.as_posix()})"]
        if r.derivation:
            der = r.derivation
            out += ["", "<details><summary>Derivation steps</summary>", ""]
            out += [f"- [{s['status']}] `{s['name']}` ({s['method']}): `{s['relation'][:300]}`" for s in der["steps"]]
            if der.get("comparisons"):
                out += ["", "Derived vs stated:"]
                out += [f"- {'holds' if c['holds'] else '**does not hold**'}: {c['name']}: {c['derived']}"
                        for c in der["comparisons"]]
            out += ["", "</details>"]
    path.write_text("\n".join(out) + "\n")
    return path
