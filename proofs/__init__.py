"""Machine-checked SymPy derivations of the claims C1-C8 (one module per claim).

>>> from proofs import derivation
>>> d = derivation("C3")          # built and checked on first use, then cached
>>> d.status
'proved'
"""

from __future__ import annotations

import importlib
import time

from . import cache
from .core import Assumption, Comparison, Derivation, DerivationError, Result, Step

__all__ = [
    "CLAIM_MODULES",
    "derivation",
    "all_derivations",
    "Derivation",
    "DerivationError",
    "Assumption",
    "Step",
    "Result",
    "Comparison",
]

#: claim id -> module that builds its derivation (each exposes ``build() -> Derivation``).
CLAIM_MODULES: dict[str, str] = {
    "C1": "proofs.c1_softmax_nw",
    "C2": "proofs.c2_ensemble",
    "C3": "proofs.c3_decomposition",
    "C4": "proofs.c4_hdi",
    "C5": "proofs.c5_hdi_mse",
    "C6": "proofs.c6_orthogonality",
    "C7": "proofs.c7_scaling",
    "C8": "proofs.c8_weighting",
    "C9": "proofs.c9_training",
}

_CACHE: dict[str, Derivation] = {}


def derivation(claim: str, *, rederive: bool = False) -> Derivation:
    """The checked derivation of ``claim`` ("C1".."C8"), built once per process and cached on
    disk keyed by the source of ``proofs/`` (:mod:`proofs.cache`); ``rederive=True`` or
    ``MHA_NW_REDERIVE=1`` builds it afresh. ``der.from_cache`` says which happened."""
    key = claim.upper()
    if key not in CLAIM_MODULES:
        raise KeyError(f"unknown claim {claim!r}; known: {', '.join(CLAIM_MODULES)}")
    rederive = rederive or cache.rederive_requested()
    if key not in _CACHE or (rederive and getattr(_CACHE[key], "from_cache", False)):
        source = cache.source_key()
        der = None if rederive else cache.load(key, source)
        if der is None:
            module = importlib.import_module(CLAIM_MODULES[key])
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


def all_derivations() -> list[Derivation]:
    """Every claim's derivation, in claim order."""
    return [derivation(c) for c in CLAIM_MODULES]
