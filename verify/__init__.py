"""Numeric core, claim checks and report for the verification of
*Multi-Head Attention as Ensemble Nadaraya-Watson Estimation* (Fokoue, 2026).

``VerifyError`` is the user's bad input; ``DefinitionError`` a malformed claim, part, step or
piece of marked-up text (the package's own mistake, raised where it is defined).
"""

from verify.errors import DefinitionError, VerifyError

__all__ = ["VerifyError", "DefinitionError"]
__version__ = "0.1.0"
