"""Counterexamples as small JSON files that anyone can re-run and re-judge: :func:`save` writes the
*kind* (the part's replay, ``<claim>.<part>``), the ``params`` that recompute it (seeds included)
and what was found (``expected``); ``python -m verify replay FILE`` recomputes and judges again.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from verify._validate import printable, received
from verify.errors import VerifyError
from verify.io import jsonable, read_json, write_json

__all__ = ["ReplayOutcome", "save", "load", "FORMAT", "VERSION", "MAX_FILE_BYTES", "shown"]

FORMAT = "mha-nw-verify/counterexample"
VERSION = 1
#: The largest counterexample file the package writes is a few kB; anything beyond this is refused.
MAX_FILE_BYTES = 4 * 2**20
#: A part id or kind is a short name (the package's longest is under 40 characters).
MAX_NAME_CHARS = 200
#: The longest statement printed whole (the package's are under 300 characters); longer text is cut.
MAX_SHOWN_CHARS = 1000

@dataclass
class ReplayOutcome:
    """``violates``: the recomputed case contradicts the statement; ``summary`` (markup) words the
    case; ``criterion`` (markup), where the replay has one test, what makes it a violation."""

    violates: bool
    summary: str
    figures: dict[str, Any] = field(default_factory=dict)
    criterion: str = ""


def save(directory: Path | str, *, claim: str, part: str, kind: str, statement: str, params: dict,
         outcome: ReplayOutcome) -> Path:
    """Write ``<directory>/<claim>-<part>.json`` atomically and return its path."""
    from verify import __version__

    doc = {"format": FORMAT, "version": VERSION, "claim": claim, "part": part, "kind": kind, "statement": statement,
           "params": jsonable(params),
           "expected": {"violates": bool(outcome.violates), "summary": outcome.summary,
                        "figures": jsonable(outcome.figures)},
           "package_version": __version__}
    return write_json(Path(directory) / f"{claim}-{part}.json", doc)


def load(path: Path | str) -> dict:
    """Read and validate a counterexample file (VerifyError naming what is wrong)."""
    doc = read_json("FILE", path, max_bytes=MAX_FILE_BYTES)
    where = f"in {str(path)!r}"
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        got = doc.get("format") if isinstance(doc, dict) else type(doc).__name__
        raise VerifyError(f"FILE: expected a counterexample with format {FORMAT!r}, got {got!r} {where}")
    missing = [k for k in ("claim", "part", "kind", "params", "expected") if k not in doc]
    if missing:
        raise VerifyError(f"FILE: expected keys claim, part, kind, params, expected; {str(path)!r} lacks {missing}")
    version = doc.get("version")
    if type(version) is not int or version != VERSION:   # true == 1 and 1.0 == 1 in Python: neither is a version
        raise VerifyError(f"FILE: expected counterexample format version {VERSION} (an integer), "
                          f"got {received(version)} {where}")
    from proofs import CLAIM_IDS

    if not isinstance(doc["claim"], str) or doc["claim"].upper() not in CLAIM_IDS:
        raise VerifyError(f"FILE: expected 'claim' among {', '.join(CLAIM_IDS)}, got {received(doc['claim'])} {where}")
    for key in ("part", "kind"):
        if not isinstance(doc[key], str) or not doc[key] or len(doc[key]) > MAX_NAME_CHARS:
            raise VerifyError(f"FILE: expected {key!r} to be a non-empty string of at most {MAX_NAME_CHARS} "
                              f"characters, got {received(doc[key])} {where}")
    if not isinstance(doc.get("statement", ""), str):
        raise VerifyError(f"FILE: expected 'statement' to be a string, got {received(doc['statement'])} {where}")
    if not isinstance(doc["params"], dict):
        raise VerifyError(f"FILE: expected 'params' to be an object, got {type(doc['params']).__name__} {where}")
    exp = doc["expected"]
    if not isinstance(exp, dict) or not isinstance(exp.get("violates"), bool) \
            or not isinstance(exp.get("summary", ""), str):
        raise VerifyError(f"FILE: expected 'expected' to be an object with a boolean 'violates' (and a string 'summary'), got {received(exp)} {where}")
    return doc


def shown(text: str) -> str:
    """A text of a counterexample file as it may be printed: control characters escaped, cut at
    MAX_SHOWN_CHARS."""
    text = printable(text)
    return text if len(text) <= MAX_SHOWN_CHARS else f"{text[:MAX_SHOWN_CHARS]}... ({len(text):,} characters)"
