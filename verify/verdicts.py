"""Evidence and the one rule that turns it into a verdict (SPEC, "Verdicts").

A claim is checked in *parts* (e.g. C5: the in-model line, the model's premise on real NW
heads, a search outside the model). Each part carries its symbolic evidence (a derivation's
status and the model assumptions its results rest on), its numeric evidence (figures and how
well they agree) and possibly a counterexample. :func:`part_verdict` is the rule; a claim's
verdict is the weakest of its parts' verdicts, so a refuted part is never hidden by the others.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from typing import Any

__all__ = [
    "Verdict",
    "Symbolic",
    "Numeric",
    "Counterexample",
    "Part",
    "ClaimResult",
    "part_verdict",
    "claim_verdict",
    "AGREEMENTS",
]


class Verdict(str, Enum):
    EXACT = "exact"
    HOLDS_UNDER_MODEL = "holds under model"
    APPROXIMATE = "approximate"
    NOT_CHECKABLE = "not checkable"
    REFUTED = "refuted as stated"

    def __str__(self) -> str:
        return self.value


# Strongest first; a claim takes the weakest verdict among its parts.
_ORDER = [Verdict.EXACT, Verdict.HOLDS_UNDER_MODEL, Verdict.APPROXIMATE, Verdict.NOT_CHECKABLE, Verdict.REFUTED]

#: How numeric evidence agrees with what it checks:
#: ``rounding``: to floating-point rounding of the computation (an identity);
#: ``statistical``: within the Monte Carlo standard error;
#: ``measured``: a measurement with an error/effect size but no exactness claim;
#: ``disagree``: the numbers contradict what they check.
AGREEMENTS = ("rounding", "statistical", "measured", "disagree")


@dataclass
class Symbolic:
    """What the derivation in ``proofs/`` establishes for a part."""

    claim: str
    status: str                      # proved | proved-with-unchecked-steps | failed
    steps: list[str] = field(default_factory=list)
    results: list[str] = field(default_factory=list)
    model_assumptions: list[str] = field(default_factory=list)
    n_steps: int = 0
    n_checked: int = 0

    @classmethod
    def from_derivation(cls, der: Any, *, uses: list[str] | None = None,
                        steps: list[str] | None = None, results: list[str] | None = None) -> "Symbolic":
        """Summarise ``der`` (a :class:`proofs.Derivation`). ``uses`` selects the assumptions
        this part rests on (default: those cited by the selected steps and results)."""
        sel_steps = [s for s in der.steps if steps is None or s.name in steps]
        sel_results = [r for r in der.results.values() if results is None or r.name in results]
        if uses is None:
            cited: list[str] = []
            for item in [*sel_steps, *sel_results]:
                cited += [u for u in item.uses if u not in cited]
            uses = cited
        missing = [s for s in (steps or []) if s not in {st.name for st in der.steps}]
        missing += [r for r in (results or []) if r not in der.results]
        if missing:
            raise KeyError(f"{der.claim}: no such steps/results {missing}")
        statuses = {s.status for s in sel_steps}
        status = "failed" if "failed" in statuses else (
            "proved-with-unchecked-steps" if "unchecked" in statuses else "proved")
        return cls(
            claim=der.claim,
            status=status,
            steps=[s.name for s in sel_steps],
            results=[r.name for r in sel_results],
            model_assumptions=[a.statement for a in der.model_assumptions(uses)],
            n_steps=len(sel_steps),
            n_checked=sum(s.checked for s in sel_steps),
        )

    def to_dict(self) -> dict:
        return dict(self.__dict__)


@dataclass
class Numeric:
    """Numbers measured by the engine or the core, and how they agree with what they test."""

    agreement: str
    summary: str
    figures: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.agreement not in AGREEMENTS:
            raise ValueError(f"agreement must be one of {AGREEMENTS}, got {self.agreement!r}")

    def to_dict(self) -> dict:
        return {"agreement": self.agreement, "summary": self.summary, "figures": self.figures}


@dataclass
class Counterexample:
    """A concrete case where the statement fails; ``file`` is its saved, replayable JSON."""

    description: str
    data: dict[str, Any] = field(default_factory=dict)
    file: str | None = None

    def to_dict(self) -> dict:
        return {"description": self.description, "file": self.file, "data": self.data}


@dataclass
class Part:
    """One checked part of a claim."""

    id: str
    statement: str
    symbolic: Symbolic | None = None
    numeric: Numeric | None = None
    counterexample: Counterexample | None = None
    assumptions: list[str] = field(default_factory=list)  # extra model assumptions of the numeric side
    restored_by: str = ""  # for a refuted part: the narrowest assumption under which it holds
    reason: str = ""       # for a part that could not be checked

    def __post_init__(self) -> None:
        if self.counterexample is not None and not self.restored_by:
            raise ValueError(f"part {self.id!r}: a refuted part must name the assumption that restores it")

    @property
    def model_assumptions(self) -> list[str]:
        out = list(self.symbolic.model_assumptions) if self.symbolic else []
        return out + [a for a in self.assumptions if a not in out]

    @property
    def verdict(self) -> Verdict:
        return part_verdict(self)

    def to_dict(self) -> dict:
        return {
            "id": self.id,
            "statement": self.statement,
            "verdict": self.verdict.value,
            "assumptions": self.model_assumptions,
            "symbolic": self.symbolic.to_dict() if self.symbolic else None,
            "numeric": self.numeric.to_dict() if self.numeric else None,
            "counterexample": self.counterexample.to_dict() if self.counterexample else None,
            "restored_by": self.restored_by,
            "reason": self.reason or _why_not_checkable(self),
        }


def part_verdict(part: Part) -> Verdict:
    """The rule.

    1. a counterexample                                        -> refuted as stated
    2. numbers that contradict the derivation                  -> not checkable (inconsistent)
    3. proved, no model assumption, confirmed to rounding      -> exact
    4. proved (under the listed model assumptions)             -> holds under model
    5. numeric evidence only                                   -> approximate
    6. nothing                                                 -> not checkable
    """
    if part.counterexample is not None:
        return Verdict.REFUTED
    num, sym = part.numeric, part.symbolic
    if num is not None and num.agreement == "disagree":
        return Verdict.NOT_CHECKABLE
    proved = sym is not None and sym.status == "proved"
    if proved and not part.model_assumptions and num is not None and num.agreement == "rounding":
        return Verdict.EXACT
    if proved:
        return Verdict.HOLDS_UNDER_MODEL
    if num is not None:
        return Verdict.APPROXIMATE
    return Verdict.NOT_CHECKABLE


def _why_not_checkable(part: Part) -> str:
    if part.verdict is not Verdict.NOT_CHECKABLE:
        return ""
    if part.numeric is not None and part.numeric.agreement == "disagree":
        return f"the numeric evidence contradicts what it checks: {part.numeric.summary}"
    return "no symbolic proof and no numeric evidence"


def claim_verdict(parts: list[Part]) -> Verdict:
    """The weakest part verdict (not checkable when there are no parts)."""
    if not parts:
        return Verdict.NOT_CHECKABLE
    return max((p.verdict for p in parts), key=_ORDER.index)


@dataclass
class ClaimResult:
    """Everything the report says about one claim."""

    id: str
    title: str
    stated: str
    parts: list[Part]
    headline: str = ""  # the numeric figures in one line, for the report's table
    plots: dict[str, str] = field(default_factory=dict)
    seconds: float = 0.0
    derivation: dict | None = None

    @property
    def verdict(self) -> Verdict:
        return claim_verdict(self.parts)

    @property
    def assumptions(self) -> list[str]:
        out: list[str] = []
        for p in self.parts:
            out += [a for a in p.model_assumptions if a not in out]
        return out

    @property
    def restored_by(self) -> list[str]:
        return [f"{p.id}: {p.restored_by}" for p in self.parts if p.verdict is Verdict.REFUTED and p.restored_by]

    def to_dict(self) -> dict:
        return {
            "id": self.id,
            "title": self.title,
            "stated": self.stated,
            "verdict": self.verdict.value,
            "headline": self.headline,
            "assumptions": self.assumptions,
            "restored_by": self.restored_by,
            "evidence": {
                "parts": [p.to_dict() for p in self.parts],
                "plots": self.plots,
                "derivation": self.derivation,
            },
            "seconds": round(self.seconds, 3),
        }
