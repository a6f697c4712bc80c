"""What a mutant is (imported by the lists in ``tools/mutant_lists/`` and by ``tools/mutants.py``)."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Mutant", "M", "ROWS"]


@dataclass(frozen=True)
class Mutant:
    """A one-line change ``old -> new`` of ``file`` (it must match exactly once) and the tests
    that must fail on it."""

    name: str
    file: str
    old: str
    new: str
    tests: tuple[str, ...]
    why: str = ""


M = Mutant
#: A row of the bad-input table, by id: ``ROWS + "[cli-out-dot]"``.
ROWS = "tests/test_bad_input.py::test_bad_input_raises_verify_error"
