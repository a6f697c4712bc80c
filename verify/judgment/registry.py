"""The claims the package checks: id -> the module of its check (a leaf module, imported by the
claim registry, the replay and the CLI alike, so that none of them imports another)."""

from __future__ import annotations

__all__ = ["CLAIM_MODULES", "claim_ids", "known_claim"]

#: claim id -> module exposing ``check(ctx) -> ClaimResult`` (and registering its replayers).
CLAIM_MODULES: dict[str, str] = {f"C{i}": f"verify.claims.c{i}" for i in range(1, 10)}


def claim_ids() -> list[str]:
    return list(CLAIM_MODULES)


def known_claim(claim: object) -> str | None:
    """The canonical id of ``claim`` ("c5" -> "C5"), or None if it is not a claim."""
    if not isinstance(claim, str):
        return None
    key = claim.strip().upper()
    return key if key in CLAIM_MODULES else None
