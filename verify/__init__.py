"""Numeric core, claim checks and report for the verification of
*Multi-Head Attention as Ensemble Nadaraya-Watson Estimation* (Fokoue, 2026)."""

from verify.errors import VerifyError

__all__ = ["VerifyError"]
__version__ = "0.1.0"
