"""``python -m verify replay FILE``: recompute a saved counterexample from its parameters alone and
judge it again (the file checked by :func:`~verify.judgment.counterexamples.load`, its ``params`` by
the replay's schema, before any computation).
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

from proofs import markup
from verify.errors import VerifyError
from verify.io import jsonable
from verify.judgment.counterexamples import ReplayOutcome, load, shown

__all__ = ["replay", "lines", "record", "label"]


def replay(path: Path | str) -> tuple[dict, ReplayOutcome]:
    """Recompute the counterexample in ``path`` and judge it again: ``(saved document, outcome)``, the
    document's texts as they may be printed (:func:`~verify.judgment.counterexamples.shown`)."""
    from verify.claims import CLAIMS

    doc = load(path)
    claim = CLAIMS[doc["claim"].upper()]
    own = {rp.kind: rp for rp in claim.replays.values()}
    func = own.get(doc["kind"])
    if func is None:     # another claim's kind, or none
        raise VerifyError(f"FILE: expected a counterexample kind of {doc['claim']} ({', '.join(sorted(own))}), "
                          f"got {shown(doc['kind'])!r}")
    try:
        outcome = func(doc["params"])
    except MemoryError:
        raise VerifyError(f"FILE: params of {str(path)!r} ask for more memory than this machine has") from None
    except OverflowError as exc:   # a float from the file beyond what a claim's arithmetic holds
        raise VerifyError(f"FILE: params of {shown(str(path))!r} overflow float arithmetic ({exc})") from None
    expected = {**doc["expected"], "summary": shown(doc["expected"].get("summary", ""))}
    shown_doc = {**doc, "part": shown(doc["part"]),
                 "statement": shown(doc.get("statement", "")), "expected": expected}
    return shown_doc, outcome


# --------------------------------------------------------------------------- what the command prints
#: Fields of the replays' figures as a reader names them (markup); any other field reads as its
#: words, each through WORDS. The claims' own display names come first (:func:`_names`).
FIELDS = {
    "d_k": "$d_k$", "var_f": r"$\mathrm{Var}\, f$", "alpha": r"$\alpha$", "V": "$V_h$", "sum": r"$\sum_h \alpha_h$",
    "mismatch_min": "a violation above", "head_mp": "head output, exact",
    "diff_stated_bandwidth_mp": "difference at the stated bandwidth, exact",
    "diff_stated_bandwidth_float64": "difference at the stated bandwidth, in double precision",
    "diff_derived_bandwidth_mp": "difference at the derived bandwidth, exact",
    "derived_bandwidth_rounding_bound": "rounding bound at the derived bandwidth",
    "stated_bandwidth_vs_softmax_with_scale_d_k_mp": "stated bandwidth against a softmax of scale $d_k$, exact",
    "A_rho": r"A: overlaps $\rho_{hh'}$", "B_rho": r"B: overlaps $\rho_{hh'}$", "A_HDI": r"A: $\mathrm{HDI}$",
    "B_HDI": r"B: $\mathrm{HDI}$", "A_mse_minus_bias_sq": r"A: $\mathrm{MSE} - B^2$",
    "B_mse_minus_bias_sq": r"B: $\mathrm{MSE} - B^2$", "matches_saved": "matches the saved case",
    "corr_at_rho0": r"correlation at $\rho = 0$", "max_rho_of_heads": r"largest $\rho$ of the heads",
    "alpha_times_H": r"$\alpha_h H$", "WQ": "$W_Q$", "WK": "$W_K$", "T0": "warm-up steps", "T": "steps $T$",
    "R": "replicates", "m": "query points", "m_conv": "query points of the convergence check",
    "mse_T": r"$\mathrm{MSE}$ at step $T$", "mse_2T": r"$\mathrm{MSE}$ at step $2T$",
    "hdi_T": r"$\mathrm{HDI}$ at step $T$", "hdi_2T": r"$\mathrm{HDI}$ at step $2T$", "r2_2T": "$R^2$ at step $2T$",
    "d_k_n1": "$d_k^*$ at $n_1$", "d_k_n2": "$d_k^*$ at $n_2$", "slope_n1": "slope at $n_1$",
    "slope_n2": "slope at $n_2$", "best_d_k": "$d_k^*$", "dgp": "target", "freq": "frequency",
    "phi_lower_bound": r"lower bound of $\Phi$", "phi_optimum": r"$\Phi$ found", "lr_warm": "warm-up learning rate",
}
#: Words of a field's name (split at its underscores) as a reader reads them (markup).
WORDS = {"hdi": r"$\mathrm{HDI}$", "mse": r"$\mathrm{MSE}$", "se": "SE", "sd": "SD", "r2": "$R^2$", "mp": "(exact)",
         "diff": "difference", "rho": r"$\rho$", "haar": "Haar", "geom": "geometric", "fib": "Fibonacci",
         "loglog": "log-log", "prob": "probability", "lr": "learning rate", "abs": "absolute", "n": "$n$",
         "d": "$d$", "H": "$H$", "D": "$D$", "z": "$z$", "t": "$t$", "kappa": r"$\kappa$", "sigma": r"$\sigma$",
         "W": "$W$", "m": "$m$"}
#: The longest list of numbers shown whole; the rows of a table or list of cases shown; the most
#: numbers of a dict shown on one line.
MAX_VALUES, MAX_ROWS, MAX_INLINE = 10, 12, 8


@functools.cache
def _names() -> dict[str, str]:
    """The claims' own display names of models and schemes (C7, C8, C9), then FIELDS."""
    from proofs.c7_scaling import MODEL_NAMES
    from verify.claims.c8.plots import LABELS as C8
    from verify.claims.c9.plots import LABELS as C9

    return {**MODEL_NAMES, **C8, **C9, **FIELDS}


def _unicode(text: str) -> str:
    """Markup for the terminal (a text that is not markup: escaped, as it is)."""
    return markup.render(text, "unicode")


def label(key: Any) -> str:
    """A field's name for the terminal: its display name, else its words."""
    key = str(key)
    if key in _names():
        return _unicode(_names()[key])
    words = key.replace("d_k", "dk").split("_")
    return _unicode(" ".join(WORDS.get(w, "$d_k$" if w == "dk" else w) for w in words if w))


def _scalar(value: Any) -> str:
    if isinstance(value, bool):
        return "yes" if value else "no"
    if value is None:
        return "–"
    if isinstance(value, int):
        return f"{value:,}" if abs(value) >= 10**5 else str(value)
    if isinstance(value, float):
        return _unicode(markup.num(value))
    return label(value) if str(value) in _names() else _unicode(str(value))


def _depth(value: Any) -> int:
    return 1 + max(map(_depth, value), default=0) if isinstance(value, list) else 0


def _shape(value: list) -> list[int]:
    return [len(value)] + (_shape(value[0]) if value and isinstance(value[0], list) else [])


def _is_scalar(value: Any) -> bool:
    return not isinstance(value, (dict, list)) or (isinstance(value, list) and _depth(value) == 1)


def _values(value: Any) -> str:
    """A scalar, or a list of scalars cut at MAX_VALUES, on one line."""
    if not isinstance(value, list):
        return _scalar(value)
    if not value:
        return "none"
    shown = ", ".join(map(_scalar, value[:MAX_VALUES]))
    return shown if len(value) <= MAX_VALUES else f"{shown}, … ({len(value)} values)"


def _table(rows: list[dict], pad: str) -> list[str] | None:
    """Dicts of scalars as an aligned table (None when a cell is not a scalar)."""
    keys = list(dict.fromkeys(k for row in rows for k in row))
    if not all(_is_scalar(v) and not isinstance(v, list) for row in rows for v in row.values()) or len(keys) > 10:
        return None
    cells = [[label(k) for k in keys]] + [[_scalar(row.get(k)) for k in keys] for row in rows[:MAX_ROWS]]
    width = [max(len(r[j]) for r in cells) for j in range(len(keys))]
    lines = [pad + "  ".join(c.ljust(w) for c, w in zip(r, width)).rstrip() for r in cells]
    return lines + ([f"{pad}… ({len(rows)} rows)"] if len(rows) > MAX_ROWS else [])


def _lines(name: str, value: Any, indent: int) -> list[str]:
    """``name: value`` as indented lines: a dict as its fields, a list of dicts as a table or a
    numbered list, a matrix row by row, a larger array by its shape."""
    pad = " " * indent
    if isinstance(value, dict) and set(value) == {"value", "reason"}:   # a design choice and its reason
        reason = _scalar(value["reason"])
        return [f"{pad}{name}: " + (reason if value["value"] is None else f"{_values(value['value'])} ({reason})")]
    if isinstance(value, dict) and 0 < len(value) <= MAX_INLINE and not any(isinstance(v, (dict, list))
                                                                           for v in value.values()):
        names = [label(k) for k in value]
        sep, eq = ("; ", ": ") if any("=" in n or "," in n for n in names) else (", ", " = ")
        return [f"{pad}{name}: " + sep.join(f"{n}{eq}{_scalar(v)}" for n, v in zip(names, value.values()))]
    if isinstance(value, dict) and value:
        return [f"{pad}{name}:"] + [line for k, v in value.items() for line in _lines(label(k), v, indent + 2)]
    if isinstance(value, list) and value and all(isinstance(v, dict) for v in value):
        table = _table(value, pad + "  ")
        if table:
            return [f"{pad}{name}:"] + table
        out = [f"{pad}{name}:"]
        for i, row in enumerate(value[:MAX_ROWS], 1):
            out += _lines(f"{i}.", row, indent + 2)
        return out + ([f"{pad}  … ({len(value)} in all)"] if len(value) > MAX_ROWS else [])
    if isinstance(value, list) and _depth(value) == 2:
        return [f"{pad}{name}:"] + [f"{pad}  {i}: {_values(row)}" for i, row in enumerate(value[:MAX_ROWS], 1)]
    if isinstance(value, list) and _depth(value) > 2:
        return [f"{pad}{name}: an array of {' × '.join(map(str, _shape(value)))} numbers (shown by --json)"]
    return [f"{pad}{name}: {_values(value) if not isinstance(value, dict) else 'none'}"]


def judgement(violates: bool) -> str:
    return "violates the statement" if violates else "holds (does not refute the statement)"


def lines(doc: dict, outcome: ReplayOutcome) -> list[str]:
    """What ``python -m verify replay FILE`` prints: the part and its statement, the criterion, the
    saved and the replayed judgement, every figure labelled, and whether the replay reproduces it."""
    from verify.claims import CLAIMS

    spec = next((p for p in CLAIMS[doc["claim"].upper()].parts if p.id == doc["part"]), None)
    name = _unicode(spec.label) if spec is not None and spec.label else doc["part"].replace("-", " ")
    saved, summary = doc["expected"], _unicode(outcome.summary)
    test, saved_summary = outcome.criterion, _unicode(saved.get("summary", ""))
    out = [f"{doc['claim'].upper()}, {name}", f"  statement: {_unicode(doc.get('statement', ''))}",
           "  criterion: " + (f"violated when: {_unicode(test)}" if test else "the replay's own test of the statement "
                                                                          "(its summary and figures below)"),
           f"  saved:    {judgement(saved['violates'])}", f"  replayed: {judgement(outcome.violates)}"]
    out += ([f"  summary: {summary}"] if summary == saved_summary else
            [f"  saved summary: {saved_summary}", f"  replayed summary: {summary}"])
    if outcome.figures:
        out += ["  figures:"] + [line for k, v in outcome.figures.items() for line in _lines(label(k), v, 4)]
    same = bool(outcome.violates) == bool(saved["violates"])
    out.append("  reproduced: " + ("no, the replay judges differently from the saved file" if not same else
                                   "yes, the statement is still refuted by this case" if outcome.violates else
                                   "yes, the case holds again, as saved"))
    return out


def record(doc: dict, outcome: ReplayOutcome) -> dict:
    """The recomputed record (``replay --json``): the saved file's fields and the replay's judgement."""
    return {**doc, "replayed": {"violates": bool(outcome.violates), "summary": outcome.summary,
                                "figures": jsonable(outcome.figures)},
            "reproduced": bool(outcome.violates) == bool(doc["expected"]["violates"])}
