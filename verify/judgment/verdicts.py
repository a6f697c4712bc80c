"""Evidence, roles, and the one rule that turns them into a verdict (SPEC, "How a claim is read").

A claim is checked in *parts*, each with its **role**: ``core`` (the main assertion in its strongest
natural reading: the verdict comes from the core parts alone), ``detail`` (a stated constant or word:
off, it is a **correction**), ``premise`` (whether the model a core rests on holds for real NW heads)
and ``scope`` (a probe outside the stated scope: a failure is a **limit**). Non-core parts never set
the verdict; they are shown beside it.

:func:`evidence_verdict` grades one part's evidence; :func:`claim_verdict` gives, per reading,
refuted if a core part is refuted, else undecided if one is, else the weakest verdict of its
checkable core parts. A claim with several readings (SPEC, C8, C9) takes the one under which it
fares best; undecided ranks below every verdict resting on evidence and above refuted.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from typing import Any

from proofs import markup
from verify.errors import DefinitionError

__all__ = ["Role", "Verdict", "Effect", "Symbolic", "Numeric", "Counterexample", "Part", "Reading", "ClaimResult",
           "evidence_verdict", "part_effect", "reading_verdict", "claim_verdict", "headline", "AGREEMENTS",
           "HEADLINE_FINDING_MAX"]


class _Word(str, Enum):
    """An enum whose members print as their value."""

    def __str__(self) -> str:
        return self.value


class Role(_Word):
    CORE = "core"
    DETAIL = "detail"
    PREMISE = "premise"
    SCOPE = "scope"


class Verdict(_Word):
    EXACT = "exact"
    HOLDS_UNDER_MODEL = "holds under model"
    APPROXIMATE = "approximate"
    REFUTED = "refuted"
    UNDECIDED = "undecided"
    NOT_CHECKABLE = "not checkable"


class Effect(_Word):
    """What a part does to the claim's record, by role and outcome."""

    SETS_VERDICT = "sets the verdict"          # core
    CORRECTION = "correction"                  # detail that is off
    DETAIL_HOLDS = "detail holds"              # detail as stated
    PREMISE_FAILS = "premise fails on NW heads"
    PREMISE_HOLDS = "premise holds on NW heads"
    LIMIT = "limit"                            # scope probe that fails
    SCOPE_HOLDS = "holds beyond the stated scope"
    UNDECIDED = "undecided"                    # its experiment could not have decided
    NOT_CHECKED = "not checkable"              # a non-core part without usable evidence


#: A non-core part's effect by role: (violated, holds).
_EFFECTS = {Role.DETAIL: (Effect.CORRECTION, Effect.DETAIL_HOLDS),
            Role.PREMISE: (Effect.PREMISE_FAILS, Effect.PREMISE_HOLDS), Role.SCOPE: (Effect.LIMIT, Effect.SCOPE_HOLDS)}
# Strongest first; a reading takes the weakest verdict among its checkable core parts.
_STRENGTH = [Verdict.EXACT, Verdict.HOLDS_UNDER_MODEL, Verdict.APPROXIMATE]
# Best first, for choosing among readings: a reading that was checked beats one that was not.
_READING_ORDER = [Verdict.EXACT, Verdict.HOLDS_UNDER_MODEL, Verdict.APPROXIMATE, Verdict.UNDECIDED,
                  Verdict.REFUTED, Verdict.NOT_CHECKABLE]

#: How numeric evidence agrees with what it checks: ``rounding`` (to floating-point rounding: an
#: identity), ``statistical`` (within the Monte Carlo standard error), ``measured`` (an effect with
#: its size, no exactness claim), ``disagree`` (the numbers contradict what they check).
AGREEMENTS = ("rounding", "statistical", "measured", "disagree")

#: A part's ``finding`` goes into the one-line headline; longer text belongs in the evidence.
HEADLINE_FINDING_MAX = 160
#: The short headline's length as the terminal shows it (Unicode): about four lines of its 80-column table.
HEADLINE_MAX = 300


@dataclass(frozen=True)
class Symbolic:
    """What the derivation in ``proofs/`` establishes for a part."""

    claim: str
    status: str                      # proved | proved-with-unchecked-steps | failed
    steps: list[str] = field(default_factory=list)
    results: list[str] = field(default_factory=list)
    model_assumptions: list[str] = field(default_factory=list)
    n_steps: int = 0
    n_checked: int = 0
    #: the derivation's derived-versus-stated findings this part rests on
    comparisons: list[dict[str, Any]] = field(default_factory=list)
    #: the derivation's groups this part rests on
    groups: list[str] = field(default_factory=list)

    @classmethod
    def from_derivation(cls, der: Any, *, uses: list[str] | None = None,
                        groups: tuple[str, ...] | list[str] | None = None) -> "Symbolic":
        """Summarise the steps, results and comparisons of ``der``'s ``groups`` (default: all);
        ``uses``: the assumptions the part rests on (default: those the selection cites)."""
        steps = results = None
        comparisons: list[str] = []
        if groups is not None:
            unknown = [g for g in groups if g not in der.groups]
            if unknown:
                raise DefinitionError(f"{der.claim}: no such groups {unknown}; the derivation has "
                                      f"{', '.join(der.groups) or 'none'}")
            steps = list(dict.fromkeys(s for g in groups for s in der.groups[g].steps))
            results = list(dict.fromkeys(r for g in groups for r in der.groups[g].results))
            decided = [c.name for c in der.comparisons if c.decided_by.split(" ")[-1] in groups]
            comparisons = list(dict.fromkeys([*(c for g in groups for c in der.groups[g].comparisons), *decided]))
        by_name = {c.name: c for c in der.comparisons}
        sel_steps = [s for s in der.steps if steps is None or s.name in steps]
        sel_results = [r for r in der.results.values() if results is None or r.name in results]
        sel_cmp = [by_name[c] for c in comparisons if c in by_name]
        missing = [s for s in (steps or []) if s not in {st.name for st in der.steps}]
        missing += [r for r in (results or []) if r not in der.results]
        missing += [c for c in comparisons if c not in by_name]
        if missing:
            raise DefinitionError(f"{der.claim}: no such steps/results/comparisons {missing}")
        if uses is None:
            uses = list(dict.fromkeys(u for item in [*sel_steps, *sel_results, *sel_cmp] for u in item.uses))
        statuses = {s.status for s in sel_steps}
        status = "failed" if "failed" in statuses else (
            "proved-with-unchecked-steps" if "unchecked" in statuses else "proved")
        return cls(claim=der.claim, status=status, steps=[s.name for s in sel_steps],
                   results=[r.name for r in sel_results],
                   model_assumptions=[a.statement for a in der.model_assumptions(uses)], n_steps=len(sel_steps),
                   n_checked=sum(s.checked for s in sel_steps), comparisons=[c.to_dict() for c in sel_cmp],
                   groups=list(groups or []))

    @property
    def contradicted(self) -> list[dict[str, Any]]:
        """The selected comparisons in which the derived result differs from the statement."""
        return [c for c in self.comparisons if c["holds"] is False]

    def to_dict(self) -> dict:
        return dict(self.__dict__)


@dataclass(frozen=True)
class Numeric:
    """Numbers measured by the engine or the core, and how they agree with what they test."""

    agreement: str
    summary: str
    figures: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.agreement not in AGREEMENTS:
            raise DefinitionError(f"agreement must be one of {AGREEMENTS}, got {self.agreement!r}")

    def to_dict(self) -> dict:
        return {"agreement": self.agreement, "summary": self.summary, "figures": self.figures}


@dataclass(frozen=True)
class Counterexample:
    """A concrete case where the statement fails; ``file`` is its saved, replayable JSON
    (relative to the report folder)."""

    description: str
    data: dict[str, Any] = field(default_factory=dict)
    file: str | None = None

    def to_dict(self) -> dict:
        return {"description": self.description, "file": self.file, "data": self.data}


#: The text fields of a part a reader sees (checked as markup, :mod:`proofs.markup`).
TEXT_FIELDS = ("statement", "finding", "stated", "derived", "regime", "restored_by", "reason", "undecided", "label",
               "instead")


@dataclass(frozen=True)
class Part:
    """One checked part of a claim, with its declared role. ``finding``: its outcome in one phrase;
    ``restored_by``: for a refuted core or a limit, the narrowest assumption under which the statement
    holds. An experiment on NW heads states ``r2`` (configuration -> R²), its ``design`` (each choice
    with its reason) and its ``controls`` (``positive`` / ``negative``)."""

    id: str
    role: Role
    statement: str
    symbolic: Symbolic | None = None
    numeric: Numeric | None = None
    counterexample: Counterexample | None = None
    assumptions: list[str] = field(default_factory=list)  # extra model assumptions of the numeric side
    restored_by: str = ""
    reason: str = ""       # for a part that could not be checked
    finding: str = ""
    stated: str = ""       # detail: the form the paper states
    derived: str = ""      # detail: the form the derivation gives
    regime: str = ""       # premise / scope: where it was measured
    reading: str = ""      # core: which reading of the claim it belongs to ("" if only one)
    r2: dict[str, float] = field(default_factory=dict)
    design: dict[str, Any] = field(default_factory=dict)
    controls: dict[str, Any] = field(default_factory=dict)
    #: the text fields are marked-up text (checked); False only for checks not yet converted
    markup: bool = False
    label: str = ""        # the part's name as a reader sees it
    #: the experiment could not have decided: why, and what would decide it
    undecided: str = ""
    #: a correction, limit or refuted core: the sentence a paper could carry instead (markup)
    instead: str = ""

    def __post_init__(self) -> None:
        object.__setattr__(self, "role", Role(self.role))
        where = f"part {self.id!r}"
        if self.undecided and self.counterexample is not None:
            raise DefinitionError(f"{where}: an undecided part refutes nothing, it carries no counterexample")
        if self.role is Role.CORE and self.violated and self.counterexample is None:
            raise DefinitionError(f"{where}: a core contradicted by the derivation needs a replayable "
                                  "counterexample before it can be refuted")
        if self.role in (Role.CORE, Role.SCOPE) and self.counterexample is not None and not self.restored_by:
            raise DefinitionError(f"{where}: a refuted core or a limit must name the assumption that restores it")
        if self.role is Role.DETAIL and not (self.stated and self.derived):
            raise DefinitionError(f"{where}: a detail must name its stated and its derived form")
        if self.role in (Role.PREMISE, Role.SCOPE) and not self.regime:
            raise DefinitionError(f"{where}: a {self.role} part must name the regime it was measured in")
        if self.role is not Role.CORE and self.reading:
            raise DefinitionError(f"{where}: only core parts belong to a reading")
        if ";" in self.finding:
            raise DefinitionError(f"{where}: a finding is one phrase (no ';'), got {self.finding!r}")
        if len(self.finding) > HEADLINE_FINDING_MAX:
            raise DefinitionError(f"{where}: finding of {len(self.finding)} characters; at most "
                                  f"{HEADLINE_FINDING_MAX} go into a headline")
        if self.controls and set(self.controls) - {"positive", "negative"}:
            raise DefinitionError(f"{where}: controls are 'positive' and 'negative', got {sorted(self.controls)}")
        if not self.markup:
            return
        texts = [(name, getattr(self, name)) for name in TEXT_FIELDS]
        texts += [("numeric summary", self.numeric.summary)] if self.numeric is not None else []
        texts += [("counterexample", self.counterexample.description)] if self.counterexample is not None else []
        for key, entry in self.design.items():
            pairs = entry.items() if isinstance(entry, dict) else [("value", entry)]
            texts += [(f"design {key}.{f}", t) for f, t in pairs if isinstance(t, str)]
        for kind, ctl in self.controls.items():
            texts += [(f"{kind} control {f}", ctl[f]) for f in ("what", "effect")
                      if isinstance(ctl, dict) and isinstance(ctl.get(f), str)]
        for name, text in texts:
            markup.check(text, f"{where}: {name}")

    @property
    def violated(self) -> bool:
        """The statement of this part fails: a counterexample, or a derived form that differs."""
        return self.counterexample is not None or bool(self.symbolic and self.symbolic.contradicted)

    @property
    def model_assumptions(self) -> list[str]:
        out = list(self.symbolic.model_assumptions) if self.symbolic else []
        return out + [a for a in self.assumptions if a not in out]

    @property
    def evidence(self) -> Verdict:
        return evidence_verdict(self)

    @property
    def effect(self) -> Effect:
        return part_effect(self)

    @property
    def outcome(self) -> str:
        """What the part's evidence says, in the words every view prints: a core part its evidence
        verdict, any other part its effect."""
        return self.evidence.value if self.role is Role.CORE else self.effect.value

    def to_dict(self) -> dict:
        return {"id": self.id, "label": self.label or self.id, "role": self.role.value, "reading": self.reading,
                "statement": self.statement, "evidence_verdict": self.evidence.value, "effect": self.effect.value,
                "outcome": self.outcome, "finding": self.finding, "stated": self.stated, "derived": self.derived,
                "regime": self.regime, "r2": dict(self.r2), "design": dict(self.design),
                "controls": dict(self.controls), "assumptions": self.model_assumptions,
                "symbolic": self.symbolic.to_dict() if self.symbolic else None,
                "numeric": self.numeric.to_dict() if self.numeric else None,
                "counterexample": self.counterexample.to_dict() if self.counterexample else None,
                "restored_by": self.restored_by, "instead": self.instead,
                "reason": self.undecided or self.reason or _why_not_checkable(self)}


def evidence_verdict(part: Part) -> Verdict:
    """Step 1 of the rule: grade one part's evidence.

    0. an experiment that could not have decided               -> undecided
    1. a counterexample                                        -> refuted
    2. numbers that contradict the derivation                  -> not checkable (inconsistent)
    3. proved, no model assumption, confirmed to rounding      -> exact
    4. proved (under the listed model assumptions)             -> holds under model
    5. numeric evidence only                                   -> approximate
    6. nothing                                                 -> not checkable
    """
    if part.undecided:
        return Verdict.UNDECIDED
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


def part_effect(part: Part) -> Effect:
    """What the part does to the claim, by its role: only a core part sets the verdict."""
    if part.role is Role.CORE:
        return Effect.SETS_VERDICT
    grade = evidence_verdict(part)
    if grade is Verdict.UNDECIDED:
        return Effect.UNDECIDED
    if part.violated:
        return _EFFECTS[part.role][0]
    if grade is Verdict.NOT_CHECKABLE:
        return Effect.NOT_CHECKED
    return _EFFECTS[part.role][1]


def _why_not_checkable(part: Part) -> str:
    if evidence_verdict(part) is not Verdict.NOT_CHECKABLE:
        return ""
    if part.numeric is not None and part.numeric.agreement == "disagree":
        return f"the numeric evidence contradicts what it checks: {part.numeric.summary}"
    return "no symbolic proof and no numeric evidence"


def reading_verdict(cores: list[Part]) -> Verdict:
    """Step 2a: a refuted core part refutes the reading; otherwise an undecided one leaves it
    undecided; otherwise the weakest checkable one."""
    grades = [evidence_verdict(p) for p in cores]
    if Verdict.REFUTED in grades:
        return Verdict.REFUTED
    if Verdict.UNDECIDED in grades:
        return Verdict.UNDECIDED
    checkable = [g for g in grades if g in _STRENGTH]
    return max(checkable, key=_STRENGTH.index) if checkable else Verdict.NOT_CHECKABLE


def _readings(parts: list[Part]) -> dict[str, list[Part]]:
    out: dict[str, list[Part]] = {}
    for p in parts:
        if p.role is Role.CORE:
            out.setdefault(p.reading, []).append(p)
    return out


def claim_verdict(parts: list[Part]) -> tuple[Verdict, str]:
    """Step 2b: the verdict of the best reading, and that reading's id ("" if only one)."""
    readings = _readings(parts)
    if not readings:
        return Verdict.NOT_CHECKABLE, ""
    graded = [(reading_verdict(ps), rid) for rid, ps in readings.items()]
    return min(graded, key=lambda g: _READING_ORDER.index(g[0]))


@dataclass(frozen=True)
class Reading:
    """One natural reading of a claim (only for claims with more than one)."""

    id: str
    description: str


def _items(texts: list[str]) -> str:
    """One item as is; several numbered, "(1) a, (2) b"."""
    return texts[0] if len(texts) == 1 else ", ".join(f"({i}) {t}" for i, t in enumerate(texts, 1))


def headline(result: "ClaimResult", *, short: bool = False) -> str:
    """The claim's line, computed from its parts: verdict (with the finding of a refuted or measured
    core); corrections; premise findings; limits; undecided parts; the other readings' outcomes.
    ``short``: at most :data:`HEADLINE_MAX` characters as the terminal shows it (what is beside the
    verdict by labels, then by counts; then the other readings by their outcome alone)."""
    if not short:
        return _headline(result, "finding")
    for detail in ("finding", "label", "count", "outcome"):
        text = _headline(result, detail)
        if len(markup.render(text, "unicode")) <= HEADLINE_MAX:
            break
    return text


def _beside(parts: list[Part], word: str, detail: str) -> str:
    """"; 2 limits: (1) ..., (2) ..." with each part's finding or label, or the count alone."""
    if not parts:
        return ""
    head = f"; {len(parts)} {word}{'' if len(parts) == 1 else 's'}"
    if detail == "count":
        return head
    return head + ": " + _items([(p.finding or p.statement) if detail == "finding" else (p.label or p.id)
                                 for p in parts])


def _premise(parts: list[Part], detail: str) -> str:
    """The premise findings: each with its finding or label, or their outcomes counted."""
    def said(p: Part) -> str:
        return "premise undecided" if p.effect is Effect.UNDECIDED else p.effect.value

    if detail == "count" and len(parts) > 1:
        tally = {}
        for p in parts:
            tally[said(p)] = tally.get(said(p), 0) + 1
        return "; " + ", ".join(f"{said_} in {n} of {len(parts)} parts" for said_, n in tally.items())
    return "".join(f"; {said(p)}" + (f" ({p.finding or p.label})" if detail == "finding" and (p.finding or p.label)
                                     else f" ({p.label})" if detail == "label" and p.label else "") for p in parts)


def _headline(result: "ClaimResult", detail: str) -> str:
    verdict, rid = result.verdict, result.reading
    readings = _readings(result.parts)
    text = verdict.value
    if len(readings) > 1:
        text += f" (reading {rid if detail == 'outcome' else result.reading_label(rid)})"
    cores = readings.get(rid, [])
    failed = [p for p in cores if evidence_verdict(p) is Verdict.REFUTED]
    unchecked = [p for p in cores if evidence_verdict(p) is Verdict.NOT_CHECKABLE]
    undecided = [p for p in cores if evidence_verdict(p) is Verdict.UNDECIDED]
    # a core that rests on a measurement (no proof) says what was measured, whatever the outcome
    measured = [p for p in cores if evidence_verdict(p) is Verdict.APPROXIMATE and p.finding]
    if failed:
        text += ": " + _items([p.finding or p.statement for p in failed])
    elif undecided:
        text += ": " + _items([p.finding or p.undecided for p in undecided])
    elif measured:
        text += ": " + _items([p.finding for p in measured])
    if unchecked and not failed:
        text += "; not checked: " + _items([p.finding or p.id for p in unchecked])
    beside = "count" if detail == "outcome" else detail
    text += _beside(result.corrections_parts, "correction", beside)
    text += _premise(result.premise_parts, beside)
    text += _beside(result.limits_parts, "limit", beside)
    open_ = [p for p in result.undecided_parts if p.role not in (Role.CORE, Role.PREMISE)]
    if open_:
        text += f"; {len(open_)} undecided" + ("" if beside == "count" else ": " + _items([p.label or p.id
                                                                                            for p in open_]))
    for other, ps in readings.items():
        if other == rid:
            continue
        v = reading_verdict(ps)
        why = [p.finding for p in ps if p.finding and evidence_verdict(p) is v]
        if detail == "outcome":
            text += f"; reading {other}: {v.value}"
        else:
            text += f"; reading {result.reading_label(other)}: {v.value}" + (f" ({why[0]})" if why else "")
    return text


@dataclass(frozen=True)
class ClaimResult:
    """Everything the report says about one claim (immutable once built)."""

    id: str
    title: str
    stated: str
    parts: tuple[Part, ...]
    summary: str = ""  # the numeric figures in one line
    plots: dict[str, str] = field(default_factory=dict)
    seconds: float = 0.0
    derivation: dict | None = None
    readings: tuple[Reading, ...] = ()
    #: the check's declared thresholds and caps: name -> {"value", "reason"}
    thresholds: dict[str, dict] = field(default_factory=dict)
    #: what each plot shows (markup), and the plot that decides the claim (a name in ``plots``)
    captions: dict[str, str] = field(default_factory=dict)
    figure: str = ""

    def __post_init__(self) -> None:
        object.__setattr__(self, "parts", tuple(self.parts))
        object.__setattr__(self, "readings", tuple(self.readings))
        ids = [p.id for p in self.parts]
        if len(set(ids)) != len(ids):
            raise DefinitionError(f"{self.id}: part ids must be unique, got {ids}")
        declared = {r.id for r in self.readings}
        used = {p.reading for p in self.parts if p.role is Role.CORE}
        if (used - {""}) != declared or (declared and "" in used):
            raise DefinitionError(f"{self.id}: core parts use readings {sorted(used)}, declared {sorted(declared)}")

    def reading_label(self, rid: str) -> str:
        desc = next((r.description for r in self.readings if r.id == rid), "")
        return f"{rid}, {desc}" if desc else rid

    @property
    def verdict(self) -> Verdict:
        return claim_verdict(self.parts)[0]

    @property
    def reading(self) -> str:
        """The reading whose verdict is the claim's ("" when the claim has one reading)."""
        return claim_verdict(self.parts)[1]

    @property
    def headline(self) -> str:
        return headline(self)

    @property
    def short_headline(self) -> str:
        """The headline the terminal shows: at most :data:`HEADLINE_MAX` characters."""
        return headline(self, short=True)

    def _with(self, effect: Effect) -> list[Part]:
        return [p for p in self.parts if p.role is not Role.CORE and part_effect(p) is effect]

    @property
    def corrections_parts(self) -> list[Part]:
        return self._with(Effect.CORRECTION)

    @property
    def premise_parts(self) -> list[Part]:
        return [p for p in self.parts if p.role is Role.PREMISE]

    @property
    def limits_parts(self) -> list[Part]:
        return self._with(Effect.LIMIT)

    @property
    def undecided_parts(self) -> list[Part]:
        """The parts, of any role, whose experiment could not have decided."""
        return [p for p in self.parts if evidence_verdict(p) is Verdict.UNDECIDED]

    @property
    def core_parts(self) -> list[Part]:
        return [p for p in self.parts if p.role is Role.CORE and p.reading == self.reading]

    @property
    def assumptions(self) -> list[str]:
        """The model assumptions the verdict rests on (those of the deciding reading's core parts)."""
        return list(dict.fromkeys(a for p in self.core_parts for a in p.model_assumptions))

    @property
    def restored_by(self) -> list[str]:
        """The narrowest assumptions that restore the refuted core parts, each once."""
        return list(dict.fromkeys(p.restored_by for p in self.parts
                                  if p.role is Role.CORE and evidence_verdict(p) is Verdict.REFUTED and p.restored_by))

    def to_dict(self) -> dict:
        readings = _readings(self.parts)
        return {"id": self.id, "title": self.title, "stated": self.stated, "verdict": self.verdict.value,
                "headline": self.headline, "short_headline": self.short_headline, "reading": self.reading,
                "readings": [{"id": r.id, "description": r.description,
                              "verdict": reading_verdict(readings.get(r.id, [])).value} for r in self.readings],
                "corrections": [_entry(p, "finding", "stated", "derived", "instead", "evidence", "counterexample")
                                for p in self.corrections_parts],
                "premise": [_entry(p, "outcome", "finding", "statement", "regime", "r2", "evidence", "counterexample")
                            for p in self.premise_parts],
                "limits": [_entry(p, "finding", "statement", "boundary", "instead", "regime", "r2", "evidence",
                                  "counterexample") for p in self.limits_parts],
                "undecided": [_entry(p, "role", "finding", "reason", "regime") for p in self.undecided_parts],
                "thresholds": dict(self.thresholds), "assumptions": self.assumptions,
                "restored_by": self.restored_by, "summary": self.summary, "figure": self.figure,
                "evidence": {"parts": [p.to_dict() for p in self.parts], "plots": self.plots,
                             "captions": dict(self.captions), "derivation": self.derivation},
                "seconds": round(self.seconds, 3)}


def _entry(p: Part, *keys: str) -> dict:
    """A part's entry in the claim's corrections, premise, limits or undecided list: its id and
    label, then the fields named, in that order."""
    value = {"outcome": lambda: p.effect.value, "role": lambda: p.role.value, "boundary": lambda: p.restored_by,
             "reason": lambda: p.undecided, "r2": lambda: dict(p.r2), "evidence": lambda: _evidence_line(p),
             "counterexample": lambda: p.counterexample.file if p.counterexample else None}
    return {"part": p.id, "label": p.label or p.id, **{k: value[k]() if k in value else getattr(p, k) for k in keys}}


def _evidence_line(p: Part) -> str:
    bits = []
    if p.symbolic:
        bits.append(f"symbolic: {p.symbolic.status}, {p.symbolic.n_checked}/{p.symbolic.n_steps} steps checked")
        bits += [f"derived: {c['derived']}" for c in p.symbolic.contradicted]
    if p.numeric:
        bits.append(f"numeric ({p.numeric.agreement}): {p.numeric.summary}")
    if p.counterexample:
        bits.append(f"counterexample: {p.counterexample.description}")
    return "; ".join(bits)
