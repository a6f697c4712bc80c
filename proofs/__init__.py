"""Machine-checked SymPy derivations of the claims C1-C9 (one module per claim).

>>> from proofs import derivation
>>> d = derivation("C3")          # built and checked on first use, then cached
>>> d.status
'proved'
"""

from __future__ import annotations

import time
from types import ModuleType

from . import (
    c1_softmax_nw,
    c2_ensemble,
    c3_decomposition,
    c4_hdi,
    c5_hdi_mse,
    c6_orthogonality,
    c7_scaling,
    c8_weighting,
    c9_training,
    cache,
)
from .core import Assumption, Comparison, Derivation, DerivationError, Result, Step

__all__ = [
    "DERIVATIONS",
    "CLAIM_IDS",
    "derivation",
    "all_derivations",
    "Derivation",
    "DerivationError",
    "Assumption",
    "Step",
    "Result",
    "Comparison",
]

#: The claims, in order: id -> the module that builds its derivation (``build() -> Derivation``).
#: The one list of claim ids; ``verify.claims`` pairs each with its check.
DERIVATIONS: dict[str, ModuleType] = {
    "C1": c1_softmax_nw,
    "C2": c2_ensemble,
    "C3": c3_decomposition,
    "C4": c4_hdi,
    "C5": c5_hdi_mse,
    "C6": c6_orthogonality,
    "C7": c7_scaling,
    "C8": c8_weighting,
    "C9": c9_training,
}
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
            module = DERIVATIONS[key]
            t0 = time.perf_counter()
            der = module.build()
            der.seconds = time.perf_counter() - t0
            der.from_cache = False
            if not der.failed:                       # a failing derivation is never cached
                cache.store(key, source, der)
        else:
            der.from_cache = True
        _CACHE[key] = der
    return _CACHE[key]


_EXTERNAL: dict[str, Derivation] = {}


def _external(module: ModuleType) -> Derivation:
    """A derivation module outside this package: built once per process, never cached on disk
    (the disk cache is keyed by this package's source only)."""
    from .errors import DefinitionError

    if module in DERIVATIONS.values():
        return derivation(module.CLAIM)
    if not callable(getattr(module, "build", None)):
        raise DefinitionError(f"{module.__name__}: a derivation module defines build() -> Derivation")
    if module.__name__ not in _EXTERNAL:
        t0 = time.perf_counter()
        der = module.build()
        der.seconds = time.perf_counter() - t0
        der.from_cache = False
        _EXTERNAL[module.__name__] = der
    return _EXTERNAL[module.__name__]


def all_derivations() -> list[Derivation]:
    """Every claim's derivation, in claim order."""
    return [derivation(c) for c in CLAIM_IDS]
