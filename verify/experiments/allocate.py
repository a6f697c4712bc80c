"""Head allocation under the C7 models: the best split of a budget ``D = H·d_k``.

``python -m verify allocate --budget D --n N --dim d [--model NAME] [--c-b X --c-v Y]``

Every candidate MSE model of the C7 derivation (``proofs/c7_scaling.py``) is evaluated with its
generated code only, in mpmath at :data:`DPS` digits (the variance terms of large ``d`` are
astronomically large). The advice is the best of every integer divisor pair ``(H, d_k)`` of D, with
the continuous optimum beside it. ``c_b`` (bias² = c_b h⁴) and ``c_v`` (variance = c_v/(n h^s)) are
model constants, not estimates: the advice is only as good as the model.
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass
from typing import Any, Callable

import mpmath

from verify._validate import fail, finite_number, one_of, positive_int, positive_number
from verify.numeric import formulas

__all__ = ["DPS", "MAX_BUDGET", "MAX_DIM", "Model", "MODELS", "STANDARD_MODELS", "ARCHITECTURES", "NEIGHBOURS",
           "divisor_pairs", "mse", "continuous_optimum", "bracketed_root", "best_pair", "allocate", "format_allocation",
           "run_allocate"]

#: Working precision (digits) of every MSE and optimum: the variance term of model a with
#: d = 768 at d_k = 64 is ~10^693, beyond float64; mpmath keeps it, and its ratio, exact enough.
DPS = 30
#: Largest budget D accepted: every divisor pair costs one mpmath MSE per model (at most 576 pairs
#: below 2^24, 0.3 s); real budgets are ~10^4 (LLaMA-70B: 8192), and 10^18 took 82 s uncapped.
MAX_BUDGET = 2**24
#: Largest input dimension d accepted: mpmath's cost grows with the digits of the exponents
#: d_k^(d/2) (d = 10^300 takes 3.5 s); real models have d < 10^5.
MAX_DIM = 10**12
#: Divisor pairs shown on each side of the best one.
NEIGHBOURS = 2
#: Bracket search: halve/double d_k from 1 at most this many times (2^±200 ≈ 10^±60).
_BRACKET_STEPS = 200
#: Bisection steps before the Illinois solver (keeps it inside a tight bracket).
_BISECT_STEPS = 12
#: A root is accepted when the function changes sign across x(1 ± this), relative.
ROOT_RTOL = mpmath.mpf(10) ** -22


@dataclass(frozen=True)
class Model:
    """One candidate MSE model of C7 (names as in the derivation) and its generated code."""

    name: str
    description: str
    ensemble: str     # corr | orth | frame
    optimum: str      # closed (c7_dk_opt_*) | root (c7_stationarity_*)
    standard: bool = True
    #: the generated MSE in float64 and in mpmath (args d_k, n, D, d, c_b, c_v)
    mse: Callable[..., Any] | None = None
    mse_mp: Callable[..., Any] | None = None
    #: closed models: d_k* in float64 and mpmath (args n, D, d, c_b, c_v); models b: the stationarity
    #: residual in mpmath (args d_k, n, D, d, c_b, c_v) and its asymptotic root (args n, D, d, c_b, c_v)
    opt: Callable[..., Any] | None = None
    opt_mp: Callable[..., Any] | None = None
    asym_mp: Callable[..., Any] | None = None

    def applies(self, D: int, d: int) -> tuple[bool, str]:
        """Whether the model's ensemble assumption is feasible at (D, d), and why."""
        if self.ensemble == "orth":
            return D <= d, f"orthogonal heads need D <= d (D = {D}, d = {d})"
        if self.ensemble == "frame":
            return D > d, f"the fusion-frame model is for D > d (D = {D}, d = {d})"
        return True, ""


_F = formulas
#: Each model's generated code by name (``proofs/c7_scaling.py``; no function name is built at run time).
_CODE = {
    "a_corr": (_F.c7_mse_a_corr, _F.c7_mse_a_corr_mp, _F.c7_dk_opt_a_corr, _F.c7_dk_opt_a_corr_mp),
    "a_orth": (_F.c7_mse_a_orth, _F.c7_mse_a_orth_mp, _F.c7_dk_opt_a_orth, _F.c7_dk_opt_a_orth_mp),
    "a_frame": (_F.c7_mse_a_frame, _F.c7_mse_a_frame_mp, _F.c7_dk_opt_a_frame, _F.c7_dk_opt_a_frame_mp),
    "b_corr": (_F.c7_mse_b_corr, _F.c7_mse_b_corr_mp, None, _F.c7_stationarity_b_corr_mp, _F.c7_dk_asym_b_corr_mp),
    "b_orth": (_F.c7_mse_b_orth, _F.c7_mse_b_orth_mp, None, _F.c7_stationarity_b_orth_mp, _F.c7_dk_asym_b_orth_mp),
    "b_frame": (_F.c7_mse_b_frame, _F.c7_mse_b_frame_mp, None, _F.c7_stationarity_b_frame_mp, _F.c7_dk_asym_b_frame_mp),
    "gauss_a_corr": (_F.c7_mse_gauss_a_corr, _F.c7_mse_gauss_a_corr_mp, _F.c7_dk_opt_gauss_a_corr,
                     _F.c7_dk_opt_gauss_a_corr_mp),
    "gauss_a_orth": (_F.c7_mse_gauss_a_orth, _F.c7_mse_gauss_a_orth_mp, _F.c7_dk_opt_gauss_a_orth,
                     _F.c7_dk_opt_gauss_a_orth_mp),
    "gauss_a_frame": (_F.c7_mse_gauss_a_frame, _F.c7_mse_gauss_a_frame_mp, _F.c7_dk_opt_gauss_a_frame,
                      _F.c7_dk_opt_gauss_a_frame_mp),
    "reverse": (_F.c7_mse_reverse, _F.c7_mse_reverse_mp, _F.c7_dk_opt_reverse, _F.c7_dk_opt_reverse_mp),
}
_ENS_TEXT = {"corr": "fully correlated heads (variance V)", "orth": "orthogonal heads (V/H, D <= d)",
             "frame": "fusion-frame overlap (V d_k/d, D > d)"}
_FAMILY_TEXT = {"a": "h = d_k^-1/2, variance c_v/(n h^d): the kernel smooths in R^d; ",
                "b": "h = d_k^-1/2, variance c_v/(n h^d_k): the kernel smooths in the head's own space; ",
                "gauss_a": "h = d_k^(1/4) (Gaussian bandwidth of the softmax kernel), variance c_v/(n h^d); "}
MODELS: dict[str, Model] = {
    name: Model(name, _FAMILY_TEXT[name.rsplit("_", 1)[0]] + _ENS_TEXT[name.rsplit("_", 1)[1]],
                name.rsplit("_", 1)[1], "root" if name.startswith("b_") else "closed", True, *code)
    for name, code in _CODE.items() if name != "reverse"}
MODELS["reverse"] = Model("reverse", "reverse-engineered to give the stated law: variance c_v d_k^(d/2)/log n "
                          "(effective sample size log n, fully correlated heads); not a standard NW model",
                          "corr", "closed", False, *_CODE["reverse"])

#: The candidate models that follow standard NW rates (all but the reverse-engineered one).
STANDARD_MODELS = tuple(m for m in MODELS if MODELS[m].standard)

#: Common architectures: (name, D, H, d_k), D = H·d_k.
ARCHITECTURES: tuple[tuple[str, int, int, int], ...] = (
    ("BERT-base", 768, 12, 64),
    ("BERT-large", 1024, 16, 64),
    ("GPT-2 small", 768, 12, 64),
    ("GPT-2 XL", 1600, 25, 64),
    ("LLaMA-7B", 4096, 32, 128),
    ("LLaMA-70B", 8192, 64, 128),
)


def _model(model: Any) -> Model:
    return MODELS[one_of("model (--model)", model, MODELS)]


def _budget(D: Any) -> int:
    if isinstance(D, float) and D.is_integer():
        D = int(D)
    if isinstance(D, bool) or not isinstance(D, numbers.Integral):
        raise fail("D (--budget)", repr(D), "a positive integer budget D = H·d_k (only integers have integer "
                   "divisor pairs (H, d_k))")
    return positive_int("D (--budget)", D, maximum=MAX_BUDGET, why="MAX_BUDGET: the divisor pairs are searched by brute force")


def _inputs(D: Any, n: Any, d: Any, c_b: Any, c_v: Any) -> tuple[int, float, int, float, float]:
    # n > 1: the models divide by log n ('reverse') or take logs of it (the asymptotics)
    return (_budget(D), finite_number("n (--n)", n, minimum=1, strict_minimum=True),
            positive_int("d (--dim)", d, maximum=MAX_DIM, why="MAX_DIM: mpmath's cost grows with d"),
            positive_number("c_b (--c-b)", c_b), positive_number("c_v (--c-v)", c_v))


def divisor_pairs(D: int) -> list[tuple[int, int]]:
    """All ``(H, d_k)`` with ``H·d_k = D``, ordered by increasing ``d_k``."""
    D = _budget(D)
    small = [k for k in range(1, math.isqrt(D) + 1) if D % k == 0]
    dks = sorted(set(small + [D // k for k in small]))
    return [(D // k, k) for k in dks]


def mse(model: str, d_k: Any, n: Any, D: Any, d: Any, c_b: Any = 1.0, c_v: Any = 1.0) -> mpmath.mpf:
    """The model's MSE at head dimension ``d_k`` (H = D/d_k), generated code, :data:`DPS` digits.

    ``d_k``: a real number in ``(0, D]`` (the models are continuous in d_k; H = D/d_k >= 1)."""
    m = _model(model)
    D, n, d, c_b, c_v = _inputs(D, n, d, c_b, c_v)
    d_k = finite_number("d_k", d_k, minimum=0, strict_minimum=True, maximum=D)
    with mpmath.workdps(DPS):
        return +m.mse_mp(d_k, n, D, d, c_b, c_v)


def bracketed_root(g: Callable[[Any], Any], *, start: Any = 1) -> mpmath.mpf | None:
    """The root of ``g`` where it changes sign from − to + (searched from ``start`` by halving and
    doubling), to ~:data:`DPS` digits; ``None`` when no sign change is found in 2^±200 · start.
    Bisection, then Illinois; accepted only when ``g`` changes sign across ``x(1 ± ROOT_RTOL)``,
    otherwise bisection to the end."""
    lo = hi = mpmath.mpf(start)
    for _ in range(_BRACKET_STEPS):
        if g(lo) < 0:
            break
        lo /= 2
    else:
        return None
    for _ in range(_BRACKET_STEPS):
        if g(hi) > 0:
            break
        hi *= 2
    else:
        return None
    if lo >= hi:
        lo = hi / 2
    for _ in range(_BISECT_STEPS):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if g(mid) < 0 else (lo, mid)
    x = mpmath.findroot(g, (lo, hi), solver="illinois", verify=False)
    if lo <= x <= hi and g(x * (1 - ROOT_RTOL)) < 0 < g(x * (1 + ROOT_RTOL)):
        return +x
    while hi - lo > ROOT_RTOL * lo / 8:
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if g(mid) < 0 else (lo, mid)
    return (lo + hi) / 2


def continuous_optimum(model: str, n: Any, D: Any, d: Any, c_b: Any = 1.0, c_v: Any = 1.0) -> mpmath.mpf | None:
    """The derived continuous minimiser d_k* of the model's MSE: the generated closed form, or
    for models b the root of the generated stationarity residual (one sign change, − to +).
    ``None`` where the model has no interior optimum (gauss_a_orth/frame with d <= 4: the MSE
    increases in d_k, the smallest d_k is best)."""
    m = _model(model)
    D, n, d, c_b, c_v = _inputs(D, n, d, c_b, c_v)
    with mpmath.workdps(DPS):
        if m.optimum == "root":
            return bracketed_root(lambda x: m.opt_mp(x, n, D, d, c_b, c_v))
        if m.name in ("gauss_a_orth", "gauss_a_frame") and d <= 4:
            return None
        return +m.opt_mp(n, D, d, c_b, c_v)


def best_pair(model: str, n: Any, D: Any, d: Any, c_b: Any = 1.0, c_v: Any = 1.0) -> tuple[int, int, mpmath.mpf]:
    """Brute force over every divisor pair of D: ``(H, d_k, MSE)`` of the smallest model MSE."""
    rows = [(H, k, mse(model, k, n, D, d, c_b, c_v)) for H, k in divisor_pairs(D)]
    return min(rows, key=lambda row: row[2])


def _num(x: mpmath.mpf) -> dict[str, float]:
    """A positive mpf as a float (inf beyond float range) and its always-finite log10."""
    with mpmath.workdps(DPS):
        return {"value": float(x), "log10": float(mpmath.log10(x))}


def _model_advice(m: Model, D: int, n: float, d: int, c_b: float, c_v: float) -> dict[str, Any]:
    pairs = divisor_pairs(D)
    values = [mse(m.name, k, n, D, d, c_b, c_v) for _, k in pairs]
    ib = min(range(len(pairs)), key=lambda i: values[i])
    applies, condition = m.applies(D, d)
    xo = continuous_optimum(m.name, n, D, d, c_b, c_v)
    if xo is None:
        cont = {"d_k": None, "H": None, "note": "no interior optimum (d <= 4): the MSE increases with d_k, "
                                                "the smallest d_k is best"}
    else:
        note = "" if 1 <= xo <= D else ("below 1: the best split is d_k = 1 (H = D)" if xo < 1
                                        else "above D: the best split is one head (H = 1)")
        cont = {"d_k": float(xo), "H": float(D / xo), "note": note}
    with mpmath.workdps(DPS):
        best = values[ib]
        neighbours = []
        for i in range(max(0, ib - NEIGHBOURS), min(len(pairs), ib + NEIGHBOURS + 1)):
            v, ratio = _num(values[i]), _num(values[i] / best)
            neighbours.append({"H": pairs[i][0], "d_k": pairs[i][1], "mse": v["value"], "log10_mse": v["log10"],
                               "ratio": ratio["value"], "log10_ratio": ratio["log10"], "best": i == ib})
        archs = []
        for name, Da, Ha, ka in ARCHITECTURES:
            bH, bk, bm = best_pair(m.name, n, Da, d, c_b, c_v)
            r = _num(mse(m.name, ka, n, Da, d, c_b, c_v) / bm)
            archs.append({"name": name, "D": Da, "H": Ha, "d_k": ka, "applies": m.applies(Da, d)[0],
                          "best_H": bH, "best_d_k": bk, "ratio": r["value"], "log10_ratio": r["log10"]})
    bv = _num(best)
    return {"model": m.name, "description": m.description, "standard": m.standard, "applies": applies,
            "condition": condition, "continuous": cont,
            "best": {"H": pairs[ib][0], "d_k": pairs[ib][1], "mse": bv["value"], "log10_mse": bv["log10"]},
            "neighbours": neighbours, "architectures": archs}


def allocate(D: int, n: float, d: int, model: str | None = None, c_b: float = 1.0, c_v: float = 1.0) -> dict[str, Any]:
    """The best integer split ``(H, d_k)`` of the budget D under each C7 model (or the one named): per
    model its continuous optimum, the best divisor pair, the neighbouring pairs with their MSE ratio to
    the best, and the common architectures' splits (:data:`ARCHITECTURES`) against the model's best at
    their own D. MSE values are floats (inf beyond the range) beside an always-finite ``log10_*``."""
    D, n, d, c_b, c_v = _inputs(D, n, d, c_b, c_v)
    names = list(MODELS) if model is None else [_model(model).name]
    return {
        "D": D, "n": n, "d": d, "c_b": c_b, "c_v": c_v,
        "pairs": [list(p) for p in divisor_pairs(D)],
        "models": [_model_advice(MODELS[name], D, n, d, c_b, c_v) for name in names],
        "notes": [
            "c_b and c_v are model constants (bias^2 = c_b h^4, head variance = c_v/(n h^s)), default 1, not "
            "estimated from data: the advice is only as good as the model.",
            "MSE ratios compare splits of the same budget under the same model; a model marked 'n/a' assumes "
            "an ensemble (orthogonal heads: D <= d; fusion frame: D > d) that is not feasible there.",
        ],
    }


def _fmt_log10(l10: float) -> str:
    """10^l10 in 4 significant digits, in exponent form beyond 1e±5 (never overflows)."""
    if abs(l10) < 5:
        return f"{10 ** l10:.4g}"
    e = math.floor(l10)
    return f"{10 ** (l10 - e):.2f}e{e:+d}"


def _verdict_lines() -> list[str]:
    """What the C7 derivation finds about the stated law (computed, from its comparisons)."""
    import proofs

    comps = {c.name: c for c in proofs.derivation("C7").comparisons}
    giving = [m for m in STANDARD_MODELS if comps.get(f"law_{m}") is not None and comps[f"law_{m}"].holds]
    reverse = comps.get("reverse_engineered_law")
    lines = ["C7 (python -m verify --only C7): the stated law d_k* ~ (log n)^(2/(4+d)) follows from "
             + (f"the models {', '.join(giving)}" if giving else "none of these standard models")
             + ("; the derivation reproduces it only with an effective sample size log n (model 'reverse')"
                if reverse is not None and reverse.holds else "") + "."]
    linear = comps.get("H_nearly_linear")
    if linear is not None:
        lines.append("H* nearly linear in D (derivation comparison H_nearly_linear): "
                     + ("holds" if linear.holds else "does not hold") + " under the models with an interior optimum.")
    return lines


def format_allocation(result: dict[str, Any], *, verdict: bool = True) -> str:
    """The advice as text: per model the best split and its neighbours, then the architectures."""
    out = [f"Head allocation for the budget D = {result['D']} (n = {result['n']:g}, d = {result['d']}, "
           f"c_b = {result['c_b']:g}, c_v = {result['c_v']:g}); {len(result['pairs'])} divisor pairs (H, d_k)", ""]
    for m in result["models"]:
        out.append(f"Model {m['model']}: {m['description']}")
        if not m["applies"]:   # its ensemble cannot be built at this (D, d): no optimum, no ranking
            out += [f"  n/a at this budget: {m['condition']}; not ranked (its ensemble is not feasible here)", ""]
            continue
        c = m["continuous"]
        if c["d_k"] is None:
            out.append(f"  continuous optimum: {c['note']}")
        else:
            out.append(f"  continuous optimum d_k* = {c['d_k']:.4g} (H* = D/d_k* = {c['H']:.4g})"
                       + (f"; {c['note']}" if c["note"] else ""))
        out.append(f"  {'H':>7} {'d_k':>7} {'predicted MSE':>14} {'MSE / best':>12}")
        for row in m["neighbours"]:
            out.append(f"  {row['H']:>7} {row['d_k']:>7} {_fmt_log10(row['log10_mse']):>14} "
                       f"{_fmt_log10(row['log10_ratio']):>12}" + ("  <- best" if row["best"] else ""))
        out.append("")
    out.append("Common architectures: predicted MSE of the actual split / the model's best split at that D "
               f"(same n = {result['n']:g}, d = {result['d']})")
    names = [m["model"] for m in result["models"]]
    width = max(9, *(len(nm) for nm in names))
    out.append(f"  {'architecture':<12} {'D':>5} {'H x d_k':>9}" + "".join(f" {nm:>{width}}" for nm in names))
    for i, (arch, Da, Ha, ka) in enumerate(ARCHITECTURES):
        cells = []
        for m in result["models"]:
            a = m["architectures"][i]
            cells.append(f" {_fmt_log10(a['log10_ratio']) if a['applies'] else 'n/a':>{width}}")
        out.append(f"  {arch:<12} {Da:>5} {f'{Ha} x {ka}':>9}" + "".join(cells))
    best_rows = []
    for m in result["models"]:
        per = ", ".join(f"{a['best_H']}x{a['best_d_k']}" if a["applies"] else "n/a" for a in m["architectures"])
        best_rows.append(f"  {m['model']}: best splits at these D: {per}")
    out += ["", *best_rows, ""]
    out += [f"Note: {line}" for line in result["notes"]]
    if verdict:
        out += [f"Note: {line}" for line in _verdict_lines()]
    return "\n".join(out)


def run_allocate(D: int, n: float, d: int, model: str | None = None, c_b: float = 1.0, c_v: float = 1.0) -> int:
    """``python -m verify allocate`` (numerals parsed by :mod:`verify.cli`): the table of the best
    splits; a model named that does not apply at (D, d) is refused by name."""
    if model is not None:   # its ranking would be advice for an ensemble that cannot be built
        m, D_, d_ = _model(model), _budget(D), positive_int("d (--dim)", d, maximum=MAX_DIM, why="MAX_DIM")
        ok, condition = m.applies(D_, d_)
        if not ok:
            here = [name for name, other in MODELS.items() if other.applies(D_, d_)[0]]
            raise fail("--model", f"{m.name!r}, n/a at this budget: {condition}",
                       f"a model that applies at D = {D_}, d = {d_} ({', '.join(here)})")
    print(format_allocation(allocate(D, n, d, model=model, c_b=c_b, c_v=c_v)))
    return 0
