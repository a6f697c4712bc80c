"""Numeric core, claim checks and report for the verification of
*Multi-Head Attention as Ensemble Nadaraya-Watson Estimation* (Fokoué, 2026).

``VerifyError`` is the user's bad input; ``DefinitionError`` a malformed claim, part, step or
piece of marked-up text (the package's own mistake, raised where it is defined).
"""

from verify import _processes

if _processes.command_line():   # python -m verify: a Ctrl-C while the imports below run is one line
    _processes.exit_on_sigint()

from verify.errors import DefinitionError, VerifyError  # noqa: E402  (after the Ctrl-C handler)

__all__ = ["VerifyError", "DefinitionError"]
__version__ = "0.1.0"
