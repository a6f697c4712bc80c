"""C6's computations (functions of plain parameters, returning dicts): random Grassmann moves
around orthogonal heads, the overlap descent beyond d with its arb certificate, and the
Gaussian-design pair (coordinate heads on a target of one direction)."""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any

import numpy as np

from verify.claims.c5.experiments import GAUSSIAN
from verify.claims.c5.heads import compare
from verify.numeric import certify, formulas
from verify.numeric.dgp import head_projections, make_dgp
from verify.numeric.diversity import hdi
from verify.numeric.grassmann import minimise_overlap, model_mse, retract, starts, tangent_move
from verify.numeric.stats import target_variance

__all__ = ["local_moves", "descents", "certificate", "signal_heads", "gaussian_pair", "STEP_SIZES", "FEASIBLE",
           "BEYOND", "NOT_ATTAINED", "GAUSSIAN_PAIR"]

STEP_SIZES = (1e-1, 1e-2, 1e-3, 1e-4)
#: (H, d_k, d) with H d_k <= d for the local moves around orthogonal heads.
FEASIBLE = ((2, 2, 4), (3, 1, 3), (3, 2, 7), (4, 2, 8))
#: (H, d_k, d) with H d_k > d where tight fusion frames exist.
BEYOND = ((3, 1, 2), (4, 1, 3), (5, 1, 2), (3, 2, 4), (3, 2, 3))
#: Two planes in R³: min Φ = 2 > 4/3 (derivation, group ``not_attained``).
NOT_ATTAINED = (2, 2, 3)
#: The Gaussian-design pair, declared before the run (coordinate heads on sin(2 x_1), e_1 the signal).
GAUSSIAN_PAIR = ("sharing the signal direction", "orthogonal, one on the signal")


def local_moves(rng: np.random.Generator, K: int, lowers: Any) -> dict[str, Any]:
    """K random Grassmann moves of every size in STEP_SIZES around orthogonal heads of each FEASIBLE
    size: how many lower the model MSE (``lowers(increase)``), the smallest increase and increase
    over t², its drift from t = 1e-3 to 1e-4, and the orthogonal MSE against ``c6_min_mse``."""
    lowered, min_inc, min_ratio, drift, mse_err, rows = 0, math.inf, math.inf, 0.0, 0.0, []
    for H, d_k, d in FEASIBLE:
        B, V = float(rng.uniform(0.0, 1.0)), float(rng.uniform(0.5, 2.0))
        U0 = head_projections("orthogonal", H, d, d_k, rng=rng)
        m0 = model_mse(U0, B, V)
        mse_err = max(mse_err, abs(m0 - float(formulas.c6_min_mse(B, V, H, d_k, d))) / m0)
        ratios_cfg = []
        for _ in range(K):
            delta = tangent_move(U0, rng)
            inc = [model_mse(retract(U0, delta, t), B, V) - m0 for t in STEP_SIZES]
            lowered += sum(lowers(x) for x in inc)
            min_inc = min(min_inc, *inc)
            ratios = [x / t**2 for x, t in zip(inc, STEP_SIZES)]
            ratios_cfg += ratios
            drift = max(drift, abs(ratios[-2] - ratios[-1]) / ratios[-1])
        min_ratio = min(min_ratio, *ratios_cfg)
        rows.append({"H": H, "d_k": d_k, "d": d, "moves": K, "min_increase_over_t2": min(ratios_cfg)})
    return {"configs": rows, "moves": K * len(FEASIBLE) * len(STEP_SIZES), "lowering_moves": int(lowered),
            "min_increase": min_inc, "min_increase_over_t2": min_ratio, "drift_of_increase_over_t2": drift,
            "orthogonal_vs_c6_min_mse_rel_error": mse_err, "step_sizes": list(STEP_SIZES)}


def certificate(U: np.ndarray, H: int, d_k: int, d: int, *, attained: bool, tol: float) -> dict:
    """In arb, with the exact projectors of the float64 optimum U: its HDI does not beat the
    fusion-frame bound and (where tight frames exist) comes within ``tol`` of it; for the two planes
    in R³ its Φ stays above the bound's 4/3 by more than 1/2."""
    with certify.precision():
        rho = certify.projector_overlap(U)
        pairs = [rho[i][j] for i in range(H) for j in range(i + 1, H)]
        hdi_b = 1 - sum(pairs, certify.ball(0)) / len(pairs)
        bound = 1 - max(Fraction(0), (Fraction(H * d_k, d) - 1) / (H - 1))
        if attained:
            c = certify.between("fusion-frame bound − HDI of the optimum found", certify.ball(bound) - hdi_b, 0, tol)
        else:
            phi = d_k * 2 * sum(pairs, certify.ball(0))
            c = certify.greater_than("Φ of the optimum found − the bound H d_k (H d_k/d − 1) = 4/3",
                                     phi - certify.ball(Fraction(H * d_k * (H * d_k - d), d)), Fraction(1, 2))
    return c.to_dict()


def descents(configs: list[tuple[int, int, int]], seed_of: Any, k: int, reaches: Any, below: Any,
             tol: float) -> dict[str, Any]:
    """``k`` overlap descents per (H, d_k, d) from the seeds ``starts(seed_of(cfg), k)``: the bound,
    how many starts reach it (``reaches``) or beat it (``below``), and each best optimum's certificate."""
    rows, hist, n_below = [], {}, 0
    for H, d_k, d in configs:
        bound, phi_lb = float(formulas.c6_hdi_bound(H, d_k, d)), float(formulas.c6_min_overlap_potential(H, d_k, d))
        runs = [minimise_overlap(H, d_k, d, rng=s) for s in starts(seed_of((H, d_k, d)), k)]
        finals, phis = [hdi(r.U) for r in runs], [r.phi[-1] for r in runs]
        n_below += sum(below(p, phi_lb) for p in phis)
        best = max(runs, key=lambda r: hdi(r.U))
        rows.append({"H": H, "d_k": d_k, "d": d, "bound_hdi": bound, "bound_phi": phi_lb, "final_hdi_min": min(finals),
                     "final_hdi_max": max(finals), "max_gap": bound - min(finals), "final_phi_min": min(phis),
                     "final_phi_max": max(phis), "reached": sum(reaches(bound, f) for f in finals), "starts": k,
                     "max_sweeps": max(r.sweeps for r in runs),
                     "certificate": certificate(best.U, H, d_k, d, attained=(H, d_k, d) != NOT_ATTAINED, tol=tol)})
        hist[(H, d_k, d)] = [r.hdi_history() for r in runs]
    tight = [r for r in rows if (r["H"], r["d_k"], r["d"]) != NOT_ATTAINED]
    return {"rows": rows, "hist": hist, "below_bound": int(n_below), "tight_rows": tight,
            "two_planes": next(r for r in rows if (r["H"], r["d_k"], r["d"]) == NOT_ATTAINED),
            "reached": sum(r["reached"] for r in tight), "starts": sum(r["starts"] for r in tight),
            "max_gap": max(r["max_gap"] for r in tight), "max_sweeps": max(r["max_sweeps"] for r in tight),
            "certificates_hold": all(r["certificate"]["holds"] for r in rows)}


def signal_heads(config: str, H: int, d: int, d_k: int) -> np.ndarray:
    """Coordinate heads ``(H, d, d_k)`` on a target of the direction e_1: "sharing the signal direction"
    (head h spans e_1 and its own d_k − 1 directions) or "orthogonal, one on the signal" (head h spans
    its own block; only head 1 contains e_1)."""
    eye = np.eye(d)
    if config == GAUSSIAN_PAIR[0]:
        cols = [[0, *range(1 + h * (d_k - 1), 1 + (h + 1) * (d_k - 1))] for h in range(H)]
    else:
        cols = [list(range(h * d_k, (h + 1) * d_k)) for h in range(H)]
    return np.stack([eye[:, c] for c in cols])


def gaussian_pair(p: dict) -> dict[str, Any]:
    """GAUSSIAN_PAIR on C5's Gaussian design at the sizes and seed ``p`` with both weightings
    (:func:`verify.claims.c5.heads.compare`)."""
    g = GAUSSIAN
    dgp = make_dgp("single-index", d=g["d"], sigma=g["sigma"], design="normal")
    W = {c: signal_heads(c, g["H"], g["d"], g["d_k"]) for c in GAUSSIAN_PAIR}
    return {"params": p, **compare(dgp, W, 1 / math.sqrt(g["d_k"]), n=p["n"], R=p["R"], m=p["m"], seed=p["seed"],
                                   var_f=target_variance(dgp, method="closed")[0])}
