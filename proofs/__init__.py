"""Machine-checked SymPy derivations of the claims C1-C9 (one module per claim).

>>> from proofs import derivation
>>> d = derivation("C3")          # built and checked on first use, then cached
>>> d.status
'proved'
"""

from __future__ import annotations

import importlib
import pkgutil
import re
import time
from types import ModuleType

from . import cache
from .core import Assumption, Comparison, Derivation, DerivationError, Result, Step

__all__ = ["DERIVATIONS", "CLAIM_IDS", "claim_number", "derivation", "all_derivations", "Derivation", "DerivationError",
           "Assumption", "Step", "Result", "Comparison"]

#: A derivation module's name: ``c<number>_<words>.py`` in this folder (``c5_hdi_mse``).
MODULE_NAME = re.compile(r"c(\d+)_\w+")
#: A claim id: ``C`` and its number.
CLAIM_ID = re.compile(r"C(\d+)")


def claim_number(claim: str) -> int:
    """The number of a claim id (``"C10"`` -> 10): claims are ordered by it."""
    m = CLAIM_ID.fullmatch(claim)
    if m is None:
        raise KeyError(f"not a claim id: {claim!r}")
    return int(m.group(1))


def _discover() -> dict[str, ModuleType]:
    """Every derivation module of this folder, by claim id in claim order: the one list of claims
    (``verify.claims`` pairs each with its check)."""
    found: dict[str, ModuleType] = {}
    for info in pkgutil.iter_modules(__path__):
        if MODULE_NAME.fullmatch(info.name):
            module = importlib.import_module(f"{__name__}.{info.name}")
            claim = getattr(module, "CLAIM", None)
            if not isinstance(claim, str) or claim_number(claim) != int(MODULE_NAME.fullmatch(info.name).group(1)):
                raise ImportError(f"proofs.{info.name}: its CLAIM must be C<number of the module name>, got {claim!r}")
            found[claim] = module
    return dict(sorted(found.items(), key=lambda kv: claim_number(kv[0])))


#: The claims, in order: id -> the module that builds its derivation (``build() -> Derivation``).
DERIVATIONS: dict[str, ModuleType] = _discover()
CLAIM_IDS: tuple[str, ...] = tuple(DERIVATIONS)

_CACHE: dict[str, Derivation] = {}


def derivation(claim: str | ModuleType, *, rederive: bool = False) -> Derivation:
    """The checked derivation of ``claim`` (an id "C1".."C9", or a derivation module of your own
    with ``CLAIM``, ``TITLE``, ``STATED`` and ``build()``), built once per process. The package's
    own are cached on disk keyed by the source of ``proofs/`` (:mod:`proofs.cache`);
    ``rederive=True`` or ``MHA_NW_REDERIVE=1`` builds it afresh. ``der.from_cache`` says which
    happened."""
    if isinstance(claim, ModuleType):
        return _external(claim)
    key = claim.upper()
    if key not in DERIVATIONS:
        raise KeyError(f"unknown claim {claim!r}; known: {', '.join(CLAIM_IDS)}")
    rederive = rederive or cache.rederive_requested()
    if key not in _CACHE or (rederive and getattr(_CACHE[key], "from_cache", False)):
        source = cache.source_key()
        der = None if rederive else cache.load(key, source)
        if der is None:
            with cache.deriving(key):                # another process may be deriving it: wait, then load
                der = None if rederive else cache.load(key, source)
                if der is None:
                    der = _build(DERIVATIONS[key])
                    if not der.failed:               # a failing derivation is never cached
                        cache.store(key, source, der)
                    _CACHE[key] = der
                    return der
        der.from_cache = True
        _CACHE[key] = der
    return _CACHE[key]


_EXTERNAL: dict[str, Derivation] = {}


def _build(module: ModuleType) -> Derivation:
    """``module.build()``, timed, marked as derived (not loaded)."""
    t0 = time.perf_counter()
    der = module.build()
    der.seconds, der.from_cache = time.perf_counter() - t0, False
    return der


def _external(module: ModuleType) -> Derivation:
    """A derivation module outside this package: built once per process, never cached on disk
    (the disk cache is keyed by this package's source only)."""
    from .errors import DefinitionError

    if module in DERIVATIONS.values():
        return derivation(module.CLAIM)
    if not callable(getattr(module, "build", None)):
        raise DefinitionError(f"{module.__name__}: a derivation module defines build() -> Derivation")
    if module.__name__ not in _EXTERNAL:
        _EXTERNAL[module.__name__] = _build(module)
    return _EXTERNAL[module.__name__]


def all_derivations() -> list[Derivation]:
    """Every claim's derivation, in claim order."""
    return [derivation(c) for c in CLAIM_IDS]
