"""A replay's parameters as declared data: each field's type and bounds, and the replay's work cap.

A counterexample file's ``params`` are checked against its replay's schema before the replay sees
them: every field present, no unknown key, each value of its type and in its bounds, the work under
the declared cap. The same declaration gives the test suite's bad-input rows (:meth:`Schema.bad_rows`).

>>> s = Schema(n=Int(1, 100), seed=Seed())
>>> s.validate({"n": 3, "seed": 0})
{'n': 3, 'seed': 0}
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Callable

from verify._validate import fail, finite_number, integer_valued, one_of, received
from verify._validate import seed as valid_seed
from verify.errors import DefinitionError

__all__ = ["Field", "Int", "Float", "Seed", "Choice", "Text", "List", "Obj", "Custom", "Schema", "MAX_SEED",
           "MAX_SIZE"]

#: A seed the package writes is drawn from 64 bits at most; a longer one is not one of its files.
MAX_SEED = 2**64 - 1
#: The largest size any replay takes unless its field says less: beyond it a size is refused by name,
#: before a replay multiplies it into a work count or converts it to a float.
MAX_SIZE = 2**31 - 1


class Field:
    """One parameter: :meth:`check` returns the value as the replay uses it or raises VerifyError
    naming ``name``; :meth:`bad` lists values it must refuse, each with a label."""

    doc = "a value"

    def check(self, name: str, value: Any) -> Any:
        raise NotImplementedError

    def bad(self, example: Any = None) -> list[tuple[str, Any, str]]:
        """Values to refuse: ``(label, value, path)``, ``path`` the part of the value the refusal
        names (``""`` the field itself, ``"[0]"`` its first item); ``example`` is a valid value."""
        return []


@dataclass(frozen=True)
class Int(Field):
    """An integer in ``[lo, hi]`` (3.0 accepted as JSON may write it; 1.5, true and strings refused)."""

    lo: int = 1
    hi: int = MAX_SIZE

    @property
    def doc(self) -> str:
        return f"an integer in {self.lo}..{self.hi:,}"

    def check(self, name: str, value: Any) -> int:
        return integer_valued(name, value, minimum=self.lo, maximum=self.hi)

    def bad(self, example: Any = None) -> list[tuple[str, Any, str]]:
        return [(label, v, "") for label, v in (("below", self.lo - 1), ("above", self.hi + 1),
                                                 ("fraction", self.lo + 0.5), ("bool", True), ("string", str(self.lo)))]


@dataclass(frozen=True)
class Float(Field):
    """A finite real in ``[lo, hi]``, or ``(lo, hi]`` with ``open_lo``."""

    lo: float | None = None
    hi: float | None = None
    open_lo: bool = False

    def check(self, name: str, value: Any) -> float:
        return finite_number(name, value, minimum=self.lo, maximum=self.hi, strict_minimum=self.open_lo)

    def bad(self, example: Any = None) -> list[tuple[str, Any, str]]:
        out: list[tuple[str, Any, str]] = [("nan", math.nan, ""), ("inf", math.inf, ""), ("string", "1", ""),
                                           ("bool", True, "")]
        if self.lo is not None:
            out.append(("below", self.lo if self.open_lo else math.nextafter(self.lo, -math.inf), ""))
        if self.hi is not None:
            out.append(("above", math.nextafter(self.hi, math.inf), ""))
        return out


@dataclass(frozen=True)
class Seed(Field):
    """A non-negative integer seed below 2^64 (MAX_SEED), as the package writes them."""

    doc = "a non-negative integer seed below 2^64"

    def check(self, name: str, value: Any) -> int:
        v = valid_seed(name, value)
        if v > MAX_SEED:
            raise fail(name, "a seed of more than 64 bits", "a seed below 2^64 (MAX_SEED)")
        return v

    def bad(self, example: Any = None) -> list[tuple[str, Any, str]]:
        return [(label, v, "") for label, v in (("negative", -1), ("fraction", 1.5), ("float", 2.0), ("string", "7"),
                                                 ("over-64-bits", 2**64))]


@dataclass(frozen=True)
class Choice(Field):
    """One of the listed strings, compared exactly."""

    options: tuple[str, ...] = ()

    def check(self, name: str, value: Any) -> str:
        return one_of(name, value, self.options)

    def bad(self, example: Any = None) -> list[tuple[str, Any, str]]:
        return [("unknown", "no-such-" + self.options[0], ""), ("list", list(self.options[:1]), ""), ("number", 1, "")]


@dataclass(frozen=True)
class Text(Field):
    """A string of at most ``max_chars`` characters."""

    max_chars: int = 200

    def check(self, name: str, value: Any) -> str:
        if not isinstance(value, str) or len(value) > self.max_chars:
            raise fail(name, received(value), f"a string of at most {self.max_chars} characters")
        return value

    def bad(self, example: Any = None) -> list[tuple[str, Any, str]]:
        return [("number", 1, ""), ("too-long", "x" * (self.max_chars + 1), "")]


@dataclass(frozen=True)
class List(Field):
    """A list of ``min_len..max_len`` items, each checked by ``item``."""

    item: Field = field(default_factory=Field)
    min_len: int = 1
    max_len: int = 64

    def check(self, name: str, value: Any) -> list:
        if not isinstance(value, list) or not self.min_len <= len(value) <= self.max_len:
            raise fail(name, received(value), f"a list of {self.min_len} to {self.max_len} items")
        return [self.item.check(f"{name}[{k}]", v) for k, v in enumerate(value)]

    def bad(self, example: Any = None) -> list[tuple[str, Any, str]]:
        valid = list(example[:1]) if isinstance(example, list) and example else [None]
        out: list[tuple[str, Any, str]] = [("not-a-list", {}, ""), ("too-long", valid * (self.max_len + 1), "")]
        if self.min_len > 0:
            out.append(("too-short", [], ""))
        out += [(f"item-{label}", [value] * max(self.min_len, 1), f"[0]{path}")
                for label, value, path in self.item.bad(valid[0])]
        return out


@dataclass(frozen=True)
class Obj(Field):
    """An object with exactly these keys (those in ``optional`` may be absent), each checked."""

    fields: dict[str, Field] = field(default_factory=dict)
    optional: frozenset[str] = frozenset()

    def check(self, name: str, value: Any) -> dict:
        if not isinstance(value, dict):
            raise fail(name, f"{type(value).__name__} {received(value)}",
                       f"an object with keys {', '.join(self.fields)}")
        missing = [k for k in self.fields if k not in value and k not in self.optional]
        extra = sorted(map(str, set(value) - set(self.fields)))
        if missing or extra:
            got = (f"an object without {', '.join(map(repr, missing))}" if missing
                   else f"unknown keys {received(extra)}")
            raise fail(name, got, f"an object with keys {', '.join(self.fields)}"
                       + (f" ({', '.join(sorted(self.optional))} optional)" if self.optional else ""))
        return {k: f.check(f"{name}.{k}", value[k]) for k, f in self.fields.items() if k in value}

    def bad(self, example: Any = None) -> list[tuple[str, Any, str]]:
        return [("not-an-object", [], "")]


@dataclass(frozen=True)
class Custom(Field):
    """A value checked by ``func(name, value)`` (the package's validators), described by ``doc``,
    with the ``bad_values`` it must refuse."""

    func: Callable[[str, Any], Any] = lambda name, value: value
    doc: str = "a value"
    bad_values: tuple[tuple[str, Any], ...] = ()

    def check(self, name: str, value: Any) -> Any:
        return self.func(name, value)

    def bad(self, example: Any = None) -> list[tuple[str, Any, str]]:
        return [(label, v, "") for label, v in self.bad_values]


class Schema:
    """The parameters of one replay kind: the fields (an :class:`Obj` at the top) and, optionally,
    its work: ``work(params) -> number`` (on validated params) at most ``cap``, a named value whose
    reason says what the number counts and what it costs."""

    def __init__(self, *, optional: tuple[str, ...] = (), work: Callable[[dict], float] | None = None,
                 cap: float | None = None, work_what: str = "", **fields: Field) -> None:
        for k, f in fields.items():
            if not isinstance(f, Field):
                raise DefinitionError(f"schema field {k!r}: expected a Field, got {type(f).__name__}")
        if (work is None) != (cap is None):
            raise DefinitionError("a schema's work and its cap are declared together")
        self.top = Obj(dict(fields), frozenset(optional))
        self.work, self.cap, self.work_what = work, cap, work_what

    @property
    def fields(self) -> dict[str, Field]:
        return self.top.fields

    def validate(self, params: Any, where: str = "params") -> dict:
        """``params`` checked field by field (VerifyError naming ``where.field``), then its work."""
        out = self.top.check(where, params)
        if self.work is not None:
            work = self.work(out)
            if work > self.cap:
                cap_name = getattr(self.cap, "name", "") or "the cap"
                raise fail(where, f"work {work:,.0f} ({self.work_what})",
                           f"at most {self.cap:,} ({cap_name}: {getattr(self.cap, 'reason', '')})")
        return out

    def bad_rows(self, example: dict) -> list[tuple[str, dict, str]]:
        """``(label, params, name)``: ``example`` with one field missing, unknown or wrong; each must
        be refused with a message that starts with ``name:`` (``params``, ``params.n``,
        ``params.W[0]``)."""
        rows: list[tuple[str, dict, str]] = [("unknown-key", {**example, "no_such_key": 1}, "params")]
        for key, f in self.fields.items():
            if key in example and key not in self.top.optional:
                rows.append((f"{key}-missing", {k: v for k, v in example.items() if k != key}, "params"))
            for label, value, path in f.bad(example.get(key)):
                rows.append((f"{key}-{label}", {**example, key: value}, f"params.{key}{path}"))
        return rows
