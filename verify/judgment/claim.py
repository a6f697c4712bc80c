"""A claim as one declarative unit, and the run's context every check shares.

A claim's check module declares, once each: the claim, its thresholds (values with their
reasons), its replays (a parameter schema each) and its parts::

    CLAIM = Claim(proofs.c2_ensemble)

    #: criterion of the identity, cited by the judge and the texts
    RTOL = Threshold(1e-12, "float64 rounding of sums of a few hundred terms of order 1")

    @CLAIM.replay("free-weights", Schema(H=Int(2, 1024), seed=Seed()), example={"H": 2, "seed": 0})
    def replay_free_weights(p: dict) -> ReplayOutcome: ...

    @CLAIM.part("ensemble-identity", Role.CORE, groups=("ensemble",), label="ensemble identity",
                statement="multi-head attention is the sum over heads of ...")
    def ensemble_identity(ctx: Context) -> Evidence:
        return Evidence(numeric=Numeric(...), finding="...")

The declaration fixes what does not depend on the run (id, **role**, reading, statement, the
derivation groups its symbolic side rests on); the function returns what the run measured
(:class:`Evidence`). Texts are marked up (:mod:`proofs.markup`) and checked when declared or built.
``CLAIM.check(ctx)`` runs the parts in order and returns the :class:`ClaimResult`.
"""

from __future__ import annotations

import functools
import re
import time
import zlib
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any, Callable

import numpy as np

from proofs import markup
from verify.errors import DefinitionError
from verify.io import jsonable
from verify.judgment import counterexamples
from verify.schema import Schema
from verify.judgment.verdicts import ClaimResult, Counterexample, Numeric, Part, Reading, Role, Symbolic

__all__ = ["Context", "Claim", "Evidence", "PartSpec", "Replay", "Threshold", "Cap", "shared", "PART_ID"]

#: A part's id: lower-case words joined by hyphens (it names the part's replay kind and file).
PART_ID = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*")


class _Reasoned:
    """A value with the one-line reason for it, named after its variable (:func:`name_values`)."""

    reason: str
    name: str
    _what = "a value"

    def __new__(cls, value: Any, reason: str) -> Any:
        if not isinstance(reason, str) or not reason.strip() or "\n" in reason:
            raise DefinitionError(f"{cls._what} names its reason in one line, got {reason!r}")
        markup.check(reason, f"{cls._what}'s reason")
        obj = super().__new__(cls, value)
        obj.reason, obj.name = reason, ""
        return obj

    def __reduce__(self) -> tuple:
        return (type(self), (self.real, self.reason), {"name": self.name})


class Threshold(_Reasoned, float):
    """A cut that a judge compares a figure with, declared once at module level in a claim's check
    (``Z_MIN = Threshold(5.0, "...")``): judges compare with it as with a float, texts cite it
    (:meth:`cite`), tests read it from the module."""

    _what = "a threshold"

    def cite(self, spec: str = "g") -> str:
        """The value as a text quotes it, with its name in code type (``5 (`Z_MIN`)``)."""
        return f"{format(float(self), spec)} (`{self.name}`)" if self.name else format(float(self), spec)


class Cap(_Reasoned, int):
    """A bound on work or size (an integer) with the one-line reason for it, as :class:`Threshold`."""

    _what = "a cap"


def name_values(namespace: dict[str, Any]) -> dict[str, Threshold | Cap]:
    """Name the thresholds and caps of a module's ``namespace`` after their variables."""
    out = {}
    for key, value in namespace.items():
        if isinstance(value, (Threshold, Cap)) and not key.startswith("_"):
            value.name = value.name or key
            out[key] = value
    return out


@dataclass
class Context:
    """The settings of one run. ``rng(name)`` gives each check its own stream, a function of
    (seed, name) only, so a claim's numbers do not depend on which other claims ran."""

    seed: int = 0
    quick: bool = False
    out: Path | None = None
    #: larger experiments (C9's training runs, C7's empirical grid) than the default run affords
    large: bool = False
    progress: Callable[[str], None] = field(default=lambda message: None)
    #: results of :func:`shared` computations, per function (one check's parts share them)
    memo: dict = field(default_factory=dict, repr=False, compare=False)
    #: the claim and the part being checked (set by :meth:`Claim.check`): a counterexample is theirs
    current: Any = field(default=None, repr=False, compare=False)

    def seed_sequence(self, name: str) -> np.random.SeedSequence:
        return np.random.SeedSequence([int(self.seed), zlib.crc32(name.encode())])

    def rng(self, name: str) -> np.random.Generator:
        return np.random.default_rng(self.seed_sequence(name))

    def seed_for(self, name: str) -> int:
        """An integer seed for ``name`` (for engines and files that take an int)."""
        return int(self.seed_sequence(name).generate_state(1, np.uint32)[0])

    def size(self, quick: Any, full: Any, large: Any = None) -> Any:
        """``quick`` with --quick, ``large`` with --large (default: ``full``), else ``full``."""
        if self.quick:
            return quick
        return large if self.large and large is not None else full

    def plot_path(self, name: str) -> Path | None:
        return None if self.out is None else Path(self.out) / "plots" / f"{name}.png"

    def relative(self, path: Path | str) -> str:
        """``path`` relative to the output folder, as the report records it."""
        try:
            return Path(path).relative_to(Path(self.out)).as_posix() if self.out is not None else str(path)
        except ValueError:
            return str(path)

    def counterexample(self, *, params: dict, description: str, statement: str = "",
                       outcome: "counterexamples.ReplayOutcome | None" = None) -> Counterexample | None:
        """Run the current part's replay on ``params`` (or take the ``outcome`` the caller computed);
        if it violates the statement, save it (with an output folder) and return the counterexample."""
        owner, spec = self.current
        func = owner.replays.get(spec.id)
        if func is None:
            raise DefinitionError(f"{owner.id} part {spec.id!r}: a counterexample needs the part's replay "
                                  "(CLAIM.replay)")
        if outcome is None:
            outcome = func(params)
        if not outcome.violates:
            return None
        file = None
        if self.out is not None:
            file = self.relative(counterexamples.save(Path(self.out) / "counterexamples", claim=owner.id, part=spec.id,
                                                      kind=func.kind, statement=statement or spec.statement,
                                                      params=params, outcome=outcome))
        data = {"kind": func.kind, "params": params, "summary": outcome.summary, "figures": outcome.figures}
        return Counterexample(description=description, data=jsonable(data), file=file)


def shared(func: Callable[[Context], Any]) -> Callable[[Context], Any]:
    """Compute ``func(ctx)`` once per run context, however many parts ask for it."""

    @functools.wraps(func)
    def once(ctx: Context) -> Any:
        key = (func.__module__, func.__qualname__)
        if key not in ctx.memo:
            ctx.memo[key] = func(ctx)
        return ctx.memo[key]

    return once


@dataclass(frozen=True)
class Evidence:
    """What a part's check measured in this run (the declaration holds the rest)."""

    numeric: Numeric | None = None
    counterexample: Counterexample | None = None
    finding: str = ""
    derived: str = ""
    regime: str = ""
    restored_by: str = ""
    reason: str = ""
    #: the experiment could not have decided: why, and what would decide it (SPEC, "Verdicts")
    undecided: str = ""
    #: the sentence a paper could carry instead (replaces the declared one: a figure in it)
    instead: str = ""
    assumptions: tuple[str, ...] = ()
    #: replaces the declared groups' symbolic summary (a part whose steps depend on the run)
    symbolic: Symbolic | None = None
    plots: dict[str, Any] = field(default_factory=dict)
    r2: dict[str, float] = field(default_factory=dict)
    design: dict[str, Any] = field(default_factory=dict)
    controls: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class PartSpec:
    """One declared part: its fixed data and the function that checks it."""

    id: str
    role: Role
    statement: str
    func: Callable[[Context], Evidence]
    groups: tuple[str, ...] = ()
    reading: str = ""
    stated: str = ""
    regime: str = ""
    #: the part's name as a reader sees it (marked-up text; default: the id's words)
    label: str = ""
    #: a correction, limit or refuted core: the sentence a paper could carry instead
    instead: str = ""
    #: an experiment on real NW heads: it must state R² and its design (SPEC, "How an experiment
    #: is designed"), and its positive control if ``controls`` is set
    experiment: bool = False
    controls: bool = False

    def build(self, ev: Evidence, der: Any) -> Part:
        if not isinstance(ev, Evidence):
            raise DefinitionError(f"part {self.id!r}: its check returned {type(ev).__name__}, not Evidence")
        if self.experiment and not (ev.r2 and ev.design):
            raise DefinitionError(f"part {self.id!r}: an experiment states its R² and its design")
        if self.controls and "positive" not in ev.controls:
            raise DefinitionError(f"part {self.id!r}: an experiment of this kind states its positive control")
        symbolic = ev.symbolic
        if symbolic is None and self.groups:
            symbolic = Symbolic.from_derivation(der, groups=self.groups)
        return Part(id=self.id, role=self.role, statement=self.statement, symbolic=symbolic, numeric=ev.numeric,
                    counterexample=ev.counterexample, assumptions=list(ev.assumptions),
                    restored_by=ev.restored_by, reason=ev.reason, finding=ev.finding, stated=self.stated,
                    derived=ev.derived, regime=ev.regime or self.regime, reading=self.reading, r2=dict(ev.r2),
                    design=dict(ev.design), controls=dict(ev.controls), markup=True,
                    label=self.label or self.id.replace("-", " "),
                    undecided=ev.undecided, instead=ev.instead or self.instead)


@dataclass(frozen=True)
class Replay:
    """A part's replay: calling it validates params by ``schema``, then ``func`` recomputes the case
    (a check and ``python -m verify replay`` take one path). ``example``: valid, cheap params."""

    claim: str
    part: str
    schema: Schema
    func: Callable[[dict], Any]
    example: dict

    @property
    def kind(self) -> str:
        return f"{self.claim.lower()}.{self.part}"

    def __call__(self, params: Any) -> Any:
        return self.func(self.schema.validate(params))


class Claim:
    """A claim: its derivation module (which gives its id, title and statement), its readings, and
    its parts in order. ``check(ctx)`` runs them and returns the :class:`ClaimResult`."""

    def __init__(self, derivation: ModuleType, *, readings: tuple[Reading, ...] = (), figure: str = "") -> None:
        for attr in ("CLAIM", "TITLE", "STATED"):
            if not isinstance(getattr(derivation, attr, None), str):
                raise DefinitionError(f"{derivation.__name__}: a derivation module names its {attr}")
        self.module = derivation
        self.id: str = derivation.CLAIM
        self.title: str = markup.check(derivation.TITLE, f"{self.id}: title")
        self.stated: str = markup.check(derivation.STATED, f"{self.id}: stated")
        self.readings = tuple(readings)
        #: the plot that decides the claim (its name), shown with its caption in the summary
        self.figure = figure
        for r in self.readings:
            markup.check(r.description, f"{self.id}: reading {r.id}")
        self.parts: list[PartSpec] = []
        self.replays: dict[str, Replay] = {}
        #: the check's declared thresholds and caps, by name (filled by :meth:`bind`)
        self.values: dict[str, Threshold | Cap] = {}
        self._summary: Callable[[Context, tuple[Part, ...]], str] | None = None

    def part(self, id: str, role: Role, *, statement: str, groups: tuple[str, ...] = (), reading: str = "",
             stated: str = "", regime: str = "", experiment: bool = False, controls: bool = False,
             label: str = "", instead: str = "") -> Callable[[Callable[[Context], Evidence]], Callable[[Context], Evidence]]:
        """Declare the part checked by the decorated function (its role, once, here); ``label``: its
        name as a reader sees it."""
        role = Role(role)
        where = f"{self.id} part {id!r}"
        if not PART_ID.fullmatch(id):
            raise DefinitionError(f"{where}: a part id is hyphenated lower-case words, e.g. 'premise-nw-heads'")
        if any(p.id == id for p in self.parts):
            raise DefinitionError(f"{where}: declared twice")
        for name, text in (("statement", statement), ("stated", stated), ("regime", regime), ("label", label),
                           ("instead", instead)):
            markup.check(text, f"{where}: {name}")
        if reading and reading not in {r.id for r in self.readings}:
            raise DefinitionError(f"{where}: reading {reading!r} is not declared")
        if role is Role.DETAIL and not stated:
            raise DefinitionError(f"{where}: a detail names the form the paper states")

        def register(func: Callable[[Context], Evidence]) -> Callable[[Context], Evidence]:
            self.parts.append(PartSpec(id, role, statement, func, tuple(groups), reading, stated, regime, label,
                                       instead, experiment, controls))
            return func

        return register

    def replay(self, *parts: str, schema: Schema, example: dict) -> Callable[[Callable[[dict], Any]], Replay]:
        """Declare the decorated ``func(params) -> ReplayOutcome`` as the replay of ``parts``'
        counterexamples, with its ``schema`` and a valid ``example``; returns the :class:`Replay`."""
        if not parts or not all(PART_ID.fullmatch(p) for p in parts):
            raise DefinitionError(f"{self.id}: a replay names the ids of its parts, got {parts}")
        if not isinstance(schema, Schema):
            raise DefinitionError(f"{self.id} replay of {parts}: expected a Schema")

        def register(func: Callable[[dict], Any]) -> Replay:
            for part in parts:
                if part in self.replays:
                    raise DefinitionError(f"{self.id} part {part!r}: its replay is declared twice")
                self.replays[part] = Replay(self.id, part, schema, func, example)
            return self.replays[parts[0]]

        return register

    def bind(self, module: ModuleType) -> "Claim":
        """Name the loaded check module's thresholds and caps; every replay must belong to a part."""
        self.values = name_values(vars(module))
        ids = {p.id for p in self.parts}
        orphans = sorted(set(self.replays) - ids)
        if orphans:
            raise DefinitionError(f"{self.id}: replays of undeclared parts {orphans}")
        return self

    def summary(self, func: Callable[[Context, tuple[Part, ...]], str]) -> Callable:
        """Declare the function that writes the claim's one-line numeric summary."""
        self._summary = func
        return func

    def check(self, ctx: Context) -> ClaimResult:
        from proofs import derivation

        t0 = time.perf_counter()
        der = derivation(self.module)
        parts, plots, captions = [], {}, {}
        for spec in self.parts:
            ctx.progress(spec.id)
            ctx.current = (self, spec)
            ev = spec.func(ctx)
            parts.append(spec.build(ev, der))
            plots.update({k: ctx.relative(v) for k, v in ev.plots.items()})
            captions.update({k: markup.check(v.caption, f"{self.id} plot {k}: caption")
                             for k, v in ev.plots.items() if getattr(v, "caption", "")})
        parts_t = tuple(parts)
        summary = self._summary(ctx, parts_t) if self._summary else ""
        markup.check(summary, f"{self.id}: summary")
        ctx.current = None
        return ClaimResult(id=self.id, title=self.title, stated=self.stated, parts=parts_t, summary=summary,
                           plots=plots, seconds=time.perf_counter() - t0, derivation=der.to_dict(),
                           readings=self.readings,
                           thresholds={k: {"value": v.real, "reason": v.reason} for k, v in self.values.items()},
                           captions=captions, figure=self.figure if self.figure in plots else "")
