"""Errors of definition: a malformed step, group, part or piece of marked-up text.

They are the package author's mistakes, raised where the definition is made (when a claim module
is loaded or its derivation built), and kept apart from the user's bad input
(``verify.VerifyError``): a ``DefinitionError`` is never caught as a user error.
"""

from __future__ import annotations

__all__ = ["DefinitionError", "MarkupError"]


class DefinitionError(Exception):
    """A claim, part, derivation step or group is defined wrongly."""


class MarkupError(DefinitionError):
    """Text that the package's markup (:mod:`proofs.markup`) refuses."""
