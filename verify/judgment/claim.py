"""What every claim check shares: the run's context (seed, size, output folder)."""

from __future__ import annotations

import zlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

import numpy as np

from verify.io import jsonable
from verify.judgment import counterexamples
from verify.judgment.verdicts import Counterexample

__all__ = ["Context"]


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
        if self.out is None:
            return None
        return Path(self.out) / "plots" / f"{name}.png"

    def relative(self, path: Path | str) -> str:
        """``path`` relative to the output folder, as the report records it."""
        try:
            return Path(path).relative_to(Path(self.out)).as_posix() if self.out is not None else str(path)
        except ValueError:
            return str(path)

    def counterexample(self, *, claim: str, part: str, kind: str, statement: str, params: dict,
                       description: str, outcome: "counterexamples.ReplayOutcome | None" = None) -> Counterexample | None:
        """Run the registered replay of ``kind`` on ``params`` (or take its ``outcome``, already
        computed by the caller from the same params); if it violates the statement, save it (when
        the run has an output folder) and return the counterexample."""
        func = counterexamples.replayer_for(kind)
        if func is None:
            raise ValueError(f"no replayer registered for kind {kind!r}")
        if outcome is None:
            outcome = func(params)
        if not outcome.violates:
            return None
        file = None
        if self.out is not None:
            path = counterexamples.save(Path(self.out) / "counterexamples", claim=claim, part=part, kind=kind,
                                        statement=statement, params=params, outcome=outcome)
            file = self.relative(path)
        data = {"kind": kind, "params": params, "summary": outcome.summary, "figures": outcome.figures}
        return Counterexample(description=description, data=jsonable(data), file=file)
