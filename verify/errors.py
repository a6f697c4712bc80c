"""The package's exceptions: the user's bad input apart from the package's own definition errors."""

from __future__ import annotations

from proofs.errors import DefinitionError, MarkupError

__all__ = ["VerifyError", "DefinitionError", "MarkupError"]


class VerifyError(ValueError):
    """Bad input at a public boundary of the package.

    The message names the argument, what was received and what was expected, e.g.
    ``keys: expected shape (..., n, d_k) with d_k == 8 (the queries' last axis), got (4, 10, 7)``.
    """
