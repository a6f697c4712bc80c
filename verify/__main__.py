"""``python -m verify``: see :mod:`verify.cli`."""

from verify.cli import entry

entry()
