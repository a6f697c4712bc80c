"""Counterexamples as small JSON files that anyone can re-run and re-judge.

A claim check that finds a counterexample saves it with :func:`save`: the *kind* names the
replay function (registered with :func:`replayer` next to the check that found it), ``params``
holds everything needed to recompute it (seeds included) and ``expected`` what was found.
``python -m verify replay FILE`` calls :func:`replay`, which recomputes from ``params`` alone
and judges again.
"""

from __future__ import annotations

import importlib
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from .errors import VerifyError

__all__ = ["ReplayOutcome", "replayer", "save", "load", "replay", "FORMAT"]

FORMAT = "mha-nw-verify/counterexample"
VERSION = 1

_REPLAYERS: dict[str, Callable[[dict], "ReplayOutcome"]] = {}


@dataclass
class ReplayOutcome:
    """``violates`` is True when the recomputed case still contradicts the statement."""

    violates: bool
    summary: str
    figures: dict[str, Any] = field(default_factory=dict)


def replayer(kind: str) -> Callable:
    """Register ``func(params) -> ReplayOutcome`` as the replay of counterexamples of ``kind``."""

    def register(func: Callable[[dict], ReplayOutcome]) -> Callable[[dict], ReplayOutcome]:
        _REPLAYERS[kind] = func
        return func

    return register


def _jsonable(x: Any) -> Any:
    import numpy as np

    if isinstance(x, dict):
        return {str(k): _jsonable(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_jsonable(v) for v in x]
    if isinstance(x, np.ndarray):
        return _jsonable(x.tolist())
    if isinstance(x, (np.floating,)):
        return float(x)
    if isinstance(x, (np.integer,)):
        return int(x)
    if isinstance(x, (np.bool_,)):
        return bool(x)
    return x


def save(
    directory: Path | str,
    *,
    claim: str,
    part: str,
    kind: str,
    statement: str,
    params: dict,
    outcome: ReplayOutcome,
) -> Path:
    """Write ``<directory>/<claim>-<part>.json`` and return its path."""
    if kind not in _REPLAYERS:
        raise ValueError(f"no replayer registered for kind {kind!r}")
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    from . import __version__

    doc = {
        "format": FORMAT,
        "version": VERSION,
        "claim": claim,
        "part": part,
        "kind": kind,
        "statement": statement,
        "params": _jsonable(params),
        "expected": {"violates": bool(outcome.violates), "summary": outcome.summary,
                     "figures": _jsonable(outcome.figures)},
        "package_version": __version__,
    }
    path = directory / f"{claim}-{part}.json"
    path.write_text(json.dumps(doc, indent=2, sort_keys=False) + "\n")
    return path


def load(path: Path | str) -> dict:
    """Read and validate a counterexample file (VerifyError naming what is wrong)."""
    path = Path(path)
    if not path.is_file():
        raise VerifyError(f"FILE: expected an existing counterexample JSON file, got {str(path)!r}")
    try:
        doc = json.loads(path.read_text())
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise VerifyError(f"FILE: expected JSON, got unreadable content in {str(path)!r} ({exc})") from None
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        got = doc.get("format") if isinstance(doc, dict) else type(doc).__name__
        raise VerifyError(f"FILE: expected a counterexample with format {FORMAT!r}, got {got!r} in {str(path)!r}")
    missing = [k for k in ("claim", "part", "kind", "params", "expected") if k not in doc]
    if missing:
        raise VerifyError(f"FILE: expected keys claim, part, kind, params, expected; {str(path)!r} lacks {missing}")
    return doc


def _ensure_registered(claim: str) -> None:
    """Import the claim's check module, which registers its replayers."""
    from .claims import CLAIM_CHECKS

    module = CLAIM_CHECKS.get(str(claim).upper())
    if module is None:
        raise VerifyError(f"FILE: expected a claim among {', '.join(CLAIM_CHECKS)}, got {claim!r}")
    importlib.import_module(module)


def replay(path: Path | str) -> tuple[dict, ReplayOutcome]:
    """Recompute the counterexample in ``path`` from its parameters and judge it again."""
    doc = load(path)
    _ensure_registered(doc["claim"])
    func = _REPLAYERS.get(doc["kind"])
    if func is None:
        raise VerifyError(f"FILE: expected a known counterexample kind ({', '.join(sorted(_REPLAYERS))}), "
                          f"got {doc['kind']!r}")
    if not isinstance(doc["params"], dict):
        raise VerifyError(f"FILE: expected 'params' to be an object, got {type(doc['params']).__name__}")
    return doc, func(doc["params"])
