"""C7's candidate MSE models computed: their optima against an independent optimiser and brute force, the
growth of d_k* in n and of H* in D (functions of plain parameters returning plain data; the judging is
the check's). The models and their generated code are :data:`verify.experiments.allocate.MODELS`."""

from __future__ import annotations

import math
from typing import Any

import mpmath
import numpy as np

from proofs.c7_scaling import EXPONENT_D, EXPONENT_N, REVERSE_EXPONENT_LOG_N
from proofs.notation import d as d_sym
from verify.experiments.allocate import MODELS, STANDARD_MODELS, bracketed_root, continuous_optimum, divisor_pairs

#: n from 10^3 to 10^12: the range over which the growth of d_k* is read.
N_GRID = tuple(10.0**k for k in range(3, 13))
#: (d, D) per model for the growth in n (orthogonal heads need D <= d; the frame model D > d).
GROWTH_CASES = {m: ((32, 32) if MODELS[m].ensemble == "orth" else (8, 4096)) for m in MODELS}
#: D grids (with d) for the exponent of D in H*, at n = D_GRID_N, c_b = c_v = 1.
D_GRID_N = 1e6
D_GRIDS = {"orth": (32, (2, 4, 8, 16, 32)), "corr": (8, (16, 64, 256, 1024, 4096)),
           "frame": (8, (16, 64, 256, 1024, 4096))}
#: Budgets a random case draws from (many divisors each).
D_CHOICES = (12, 16, 24, 32, 36, 48, 60, 72, 96, 120, 144, 180, 240, 360, 720)


def optimiser_argmin(model: str, n: Any, D: Any, d: Any, c_b: Any = 1.0, c_v: Any = 1.0) -> mpmath.mpf | None:
    """Independent 30-digit minimiser of the generated MSE: the root (− to +) of its central
    difference quotient (f(x+h) − f(x−h))/(2h), h = 1e-25·x, taken at 60 digits (truncation
    ~h² ≈ 1e-50, cancellation ~1e-35 relative); None when it never changes sign."""
    f = MODELS[model].mse_mp

    def slope(x: mpmath.mpf) -> mpmath.mpf:
        with mpmath.workdps(60):
            h = x * mpmath.mpf(10) ** -25
            return (f(x + h, n, D, d, c_b, c_v) - f(x - h, n, D, d, c_b, c_v)) / (2 * h)

    with mpmath.workdps(30):
        return bracketed_root(slope)


def relerr(a: Any, b: Any) -> float:
    """|a − b|/|b| at 30 digits."""
    with mpmath.workdps(30):
        return float(abs(mpmath.mpf(a) - b) / abs(b))


def draw_case(rng: np.random.Generator, model: str, tries: int) -> dict[str, Any]:
    """A random (n, D, d, c_b, c_v) where the model applies and its optimum is interior, 1 < d_k* < D."""
    ens = MODELS[model].ensemble
    for _ in range(tries):
        if ens == "orth":
            D = int(rng.choice([x for x in D_CHOICES if x <= 48]))
            d = D + int(rng.integers(0, 17))
        elif ens == "frame":
            d = int(rng.integers(5, 17))
            D = int(rng.choice([x for x in D_CHOICES if x > d]))
        else:
            d, D = int(rng.integers(1, 17)), int(rng.choice(D_CHOICES))
        n = float(10 ** rng.uniform(1, 12))
        c_b = float(10 ** rng.uniform(-1, 1))
        c_v = float(c_b * 10 ** rng.uniform(-2, 12))
        x = continuous_optimum(model, n, D, d, c_b, c_v)
        if x is not None and 1 < x < D:
            return {"model": model, "n": n, "D": D, "d": d, "c_b": c_b, "c_v": c_v}
    raise RuntimeError(f"no interior case found for model {model} in {tries} draws")


def brute_force(case: dict[str, Any], x: mpmath.mpf) -> dict[str, Any]:
    """The best divisor pair by the generated float64 MSE, the neighbours of the continuous optimum
    ``x``, and the float64 MSE at ``x`` and at the best pair."""
    m, D, args = MODELS[case["model"]], case["D"], (case["n"], case["D"], case["d"], case["c_b"], case["c_v"])
    dks = np.array([k for _, k in divisor_pairs(D)], dtype=float)
    with np.errstate(over="ignore"):   # d_k^(d_k/2) of models b overflows to inf far from the optimum
        vals = np.asarray(m.mse(dks, *args), dtype=float)
        at_opt = float(m.mse(float(x), *args))
    ib = int(np.argmin(vals))
    lower, upper = dks[dks <= float(x)].max(), dks[dks >= float(x)].min()
    return {"best_d_k": int(dks[ib]), "best_H": D // int(dks[ib]), "lower": int(lower), "upper": int(upper),
            "adjacent": bool(dks[ib] in (lower, upper)) and bool(np.isfinite(vals[ib])),
            "mse_at_optimum": at_opt, "mse_best_pair": float(vals[ib])}


def optimum_cases(rng: np.random.Generator, per_model: int, tries: int) -> list[dict[str, Any]]:
    """Random interior cases per standard model: the derived optimum (closed form or root), the
    independent optimiser's, the float64 closed form's, and brute force over the divisor pairs."""
    rows = []
    for model in STANDARD_MODELS:
        for _ in range(per_model):
            case = draw_case(rng, model, tries)
            args = (case["n"], case["D"], case["d"], case["c_b"], case["c_v"])
            x, ref = continuous_optimum(model, *args), optimiser_argmin(model, *args)
            closed = MODELS[model].opt
            rows.append({**case, "d_k_star": float(x), "optimiser": float(ref), "rel_err_mp": relerr(x, ref),
                         "rel_err_float": relerr(float(closed(*args)), ref) if closed else 0.0,
                         **brute_force(case, x)})
    return rows


def _slope(x: list[float], y: list[float]) -> float:
    return float(np.polyfit(np.asarray(x, float), np.asarray(y, float), 1)[0])


def local_slope(model: str, n: float, D: int, d: int) -> float:
    """d log d_k*/d log n at n, by a central difference of the derived optimum at 30 digits."""
    with mpmath.workdps(30):
        h = mpmath.mpf("1e-6")
        up = continuous_optimum(model, n * mpmath.exp(h), D, d)
        dn = continuous_optimum(model, n * mpmath.exp(-h), D, d)
        return float((mpmath.log(up) - mpmath.log(dn)) / (2 * h))


def growth_table(grid: tuple[float, ...]) -> dict[str, Any]:
    """d_k*(n) per model over ``grid``: slopes against log n and log log n beside the derived exponents
    (``proofs.c7_scaling.EXPONENT_N``), and the 30-digit optimiser's error at the ends of the grid."""
    out, endpoint_err = {}, 0.0
    for model in MODELS:
        d, D = GROWTH_CASES[model]
        xs = [continuous_optimum(model, n, D, d) for n in grid]
        logs, ln = [float(mpmath.log(x)) for x in xs], [math.log(n) for n in grid]
        row = {"d": d, "D": D, "d_k_star": [float(x) for x in xs], "slope_vs_log_n": _slope(ln, logs),
               "slope_vs_log_log_n": _slope([math.log(v) for v in ln], logs), "stated_exponent": 2 / (4 + d),
               "H_star_ratio_n_1e12_over_1e3": float(xs[0] / xs[-1]),
               "law_ratio": (math.log(N_GRID[-1]) / math.log(N_GRID[0])) ** (2 / (4 + d))}
        if model in EXPONENT_N:
            row["derived_exponent_n"] = float(EXPONENT_N[model].subs(d_sym, d))
        if model == "reverse":
            row["derived_exponent_log_n"] = float(REVERSE_EXPONENT_LOG_N.subs(d_sym, d))
        asym = MODELS[model].asym_mp
        if asym is not None:
            row["ratio_to_asymptotic_2L_over_logL_at_1e12"] = float(xs[-1] / asym(grid[-1], D, d, 1, 1))
        for i in (0, -1):
            endpoint_err = max(endpoint_err, relerr(xs[i], optimiser_argmin(model, grid[i], D, d)))
        out[model] = row
    return {"models": out, "n_grid": list(grid), "endpoint_rel_err": endpoint_err}


def heads_in_D() -> dict[str, Any]:
    """The log-log slope of H* = D/d_k* in D per standard model over its D grid at n = D_GRID_N (and
    the local slopes), beside the derived exponent (``EXPONENT_D``; models b: 1 − o(1) with orthogonal
    heads, else 1)."""
    out = {}
    for model in STANDARD_MODELS:
        d, grid = D_GRIDS[MODELS[model].ensemble]
        Hs = [D / continuous_optimum(model, D_GRID_N, D, d) for D in grid]
        lg, lH = [math.log(D) for D in grid], [float(mpmath.log(h)) for h in Hs]
        derived = EXPONENT_D.get(model)
        out[model] = {"d": d, "D_grid": list(grid), "H_star": [float(h) for h in Hs], "slope": _slope(lg, lH),
                      "local_slopes": [(lH[i + 1] - lH[i]) / (lg[i + 1] - lg[i]) for i in range(len(grid) - 1)],
                      "derived": str(derived) if derived is not None else ("1 - o(1)" if model == "b_orth" else "1"),
                      "derived_at_d": float(derived.subs(d_sym, d)) if derived is not None else
                      (None if model == "b_orth" else 1.0)}
    return {"models": out, "n": D_GRID_N}
