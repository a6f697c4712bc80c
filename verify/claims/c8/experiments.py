"""C8's computations (functions of plain parameters returning plain data; the judging is the check's): the
generated closed forms against exact sums and a Monte Carlo, the optimal weights against random ones, who
wins at large H, the decay case in H and the rates in n. Weights and ``W`` are :mod:`.weights`."""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any

import mpmath
import numpy as np

from verify.errors import VerifyError
from verify.numeric import certify, formulas

from .weights import SCHEMES, closed_form, fib_int, mpq, profile_variances, weighted_variance, weights

Q_GRID = (Fraction(1, 2), Fraction(3, 2), Fraction(2), Fraction(3))
R_GRID = (Fraction(1, 4), Fraction(1, 2), Fraction(3, 4))
BETA_GRID = (0.5, 1.5)
MC_PROFILES = (("poly", 0.5), ("exp", 1.5))
#: The condition table's correlated case (C_hh' = ρ sqrt(V_h V_h')).
CORR_RHO = 0.3
#: Local slopes d log M/d log n by a central difference in log n of this half-width (M is a sum of
#: powers of n: the difference is exact to ~1e-12 relative).
SLOPE_H = 1e-4


def exact_sums(H_max: int, V: list[Any], r_grid: tuple[Any, ...]) -> dict[str, list[Any]]:
    """W(H) for H = 1..H_max by direct summation (integer Fibonacci numbers), in the arithmetic of ``V``
    and ``r_grid``: exact rationals (Fractions) or mpmath numbers."""
    out: dict[str, list[Any]] = {"uniform": [], "fib_best": [], "fib_worst": [], "inverse": []}
    out.update({f"geom_{r}": [] for r in r_grid})
    F = [fib_int(k) for k in range(H_max + 3)]
    su = sw = si = 0
    sg = {r: [0, 0] for r in r_grid}
    for H in range(1, H_max + 1):
        v = V[H - 1]
        su += v
        out["uniform"].append(su / H**2)
        sw += F[H] ** 2 * v
        tot = F[H + 2] - 1
        out["fib_worst"].append(sw / tot**2)
        out["fib_best"].append(sum(F[H + 1 - h] ** 2 * V[h - 1] for h in range(1, H + 1)) / tot**2)
        si += 1 / v
        out["inverse"].append(1 / si)
        for r in r_grid:
            w = r ** (H - 1)
            sg[r][0] += w * w * v
            sg[r][1] += w
            out[f"geom_{r}"].append(sg[r][0] / sg[r][1] ** 2)
    return out


def closed_vs_exact(H_max: int, mp_every: int, qs: tuple[Fraction, ...], sum_step: int) -> dict[str, Any]:
    """The generated closed forms (float64, and at 30 digits at every ``mp_every``-th H) against exact
    rational sums, and the generated finite sums against 40-digit direct sums (every ``sum_step``-th H)."""
    worst_f, worst_m, count, n_mp = 0.0, 0.0, 0, 0
    cases: list[tuple[str, Any, list[Fraction]]] = [("exp", q, [q ** (h - 1) for h in range(1, H_max + 1)]) for q in qs]
    cases += [("poly", b, [Fraction(h**b) for h in range(1, H_max + 1)]) for b in (1, 2)]
    with mpmath.workdps(30):
        for profile, param, V in cases:
            for key, vals in exact_sums(H_max, V, R_GRID).items():
                scheme, r = (key.split("_")[0], Fraction(key.split("_")[1])) if key.startswith("geom") else (key, None)
                if profile == "poly" and scheme not in ("uniform", "geom"):
                    continue   # no closed form in H for these (the generated sums are checked below)
                for H, ex in enumerate(vals, start=1):
                    fl = closed_form(scheme, profile, H, 1.0, float(param), float(r or 0.5))
                    worst_f, count = max(worst_f, abs(fl - float(ex)) / float(ex)), count + 1
                    if H % mp_every == 0 or H in (1, H_max):
                        m = closed_form(scheme, profile, H, 1, Fraction(param), r or Fraction(1, 2), mp=True)
                        worst_m, n_mp = max(worst_m, float(abs(m - mpq(ex)) / mpq(ex))), n_mp + 1
    sums_f, sums_m, n_sums = 0.0, 0.0, 0
    with mpmath.workdps(40):
        for beta in BETA_GRID + (1.0, 2.0):
            direct = exact_sums(H_max, [mpmath.mpf(h) ** beta for h in range(1, H_max + 1)], (mpmath.mpf(0.5),))
            for key, vals in direct.items():
                scheme = key.split("_")[0] if key.startswith("geom") else key
                for H in range(1, H_max + 1, sum_step):
                    fl, ref = closed_form(scheme, "poly", H, 1.0, beta, 0.5), vals[H - 1]
                    with mpmath.workdps(30):
                        m = closed_form(scheme, "poly", H, 1, beta, 0.5, mp=True)
                    sums_f = max(sums_f, abs(fl - float(ref)) / float(ref))
                    sums_m = max(sums_m, float(abs(m - ref) / ref))
                    n_sums += 1
    return {"H_max": H_max, "q": [str(q) for q in qs], "r": [str(r) for r in R_GRID], "closed_form_values": count,
            "closed_form_values_mp": n_mp, "max_rel_err_float": worst_f, "max_rel_err_mp": worst_m,
            "generated_sums": n_sums, "sums_max_rel_err_float": sums_f, "sums_max_rel_err_mp": sums_m}


def monte_carlo(rng: np.random.Generator, R: int, Hs: tuple[int, ...]) -> dict[str, Any]:
    """Independent Gaussian head errors e_h ~ N(0, V_h), R replicates: the mean of (Σ α_h e_h)² against
    the closed form, with the standard error of that mean and its z."""
    rows, worst = [], 0.0
    for profile, param in MC_PROFILES:
        for H in Hs:
            V = profile_variances(profile, H, 1.0, param)
            E = rng.standard_normal((R, H)) * np.sqrt(V)
            for scheme in SCHEMES:
                sq = (E @ weights(scheme, H, r=0.5, V=V)) ** 2
                mean, se = float(sq.mean()), float(sq.std(ddof=1) / math.sqrt(R))
                W = closed_form(scheme, profile, H, 1.0, param, 0.5)
                worst = max(worst, abs((mean - W) / se))
                rows.append({"profile": profile, "param": param, "H": H, "scheme": scheme, "closed_form": W,
                             "mc_mean": mean, "mc_se": se, "z": (mean - W) / se})
    return {"R": R, "H": list(Hs), "rows": rows, "max_abs_z": worst}


def random_affine(rng: np.random.Generator, H: int, K: int) -> np.ndarray:
    """K weight vectors summing to one: half Dirichlet (simplex), half unrestricted signs."""
    simplex = rng.dirichlet(np.ones(H), size=K // 2)
    z = rng.standard_normal((K - K // 2, H)) * rng.uniform(0.1, 2.0, size=(K - K // 2, 1))
    signed = 1.0 / H + z - z.mean(axis=1, keepdims=True)
    return np.vstack([simplex, signed])


def optimality(rng: np.random.Generator, profiles: int, K: int) -> dict[str, Any]:
    """Random weight vectors (simplex and signed) against inverse-variance, uniform (equal V) and
    C⁻¹1/(1ᵀC⁻¹1) weights; the certificate identity; the generated two-head optimum on a grid."""
    min_gap_inv = min_gap_unif = min_gap_cov = math.inf
    cert_err = 0.0
    for _ in range(profiles):
        H = int(rng.integers(2, 17))
        V = np.exp(1.5 * rng.standard_normal(H))
        A = random_affine(rng, H, K)
        a_star = weights("inverse", H, V=V)
        W_star = weighted_variance(a_star, V)
        W = np.sum(A * A * V, axis=1)
        min_gap_inv = min(min_gap_inv, float(np.min((W - W_star) / W)))
        cert = np.sum(V * (A - a_star) ** 2, axis=1)       # W(α) − W* = Σ V_h (α_h − α*_h)²
        cert_err = max(cert_err, float(np.max(np.abs(W - W_star - cert) / W)))
        Weq = np.sum(A * A, axis=1) * float(V[0])
        min_gap_unif = min(min_gap_unif, float(np.min((Weq - float(V[0]) / H) / Weq)))
        G = rng.standard_normal((H, H))                    # with covariance: α* = C⁻¹1/(1ᵀC⁻¹1)
        C = G @ G.T + 0.1 * np.eye(H)
        ci1 = np.linalg.solve(C, np.ones(H))
        a_c = ci1 / ci1.sum()
        Wa = np.einsum("ki,ij,kj->k", A, C, A)
        min_gap_cov = min(min_gap_cov, float(np.min((Wa - a_c @ C @ a_c) / Wa)))
    h2_err, h2_gap = 0.0, math.inf                         # two heads: the generated optimum vs a grid over α_1
    for _ in range(profiles):
        V1, V2 = np.exp(rng.standard_normal(2))
        C12 = float(rng.uniform(-0.95, 0.95) * math.sqrt(V1 * V2))
        Wopt = float(formulas.c8_W_opt_cov_H2(V1, V2, C12))
        a1 = float(formulas.c8_alpha1_opt_cov_H2(V1, V2, C12))
        grid = np.linspace(-3, 4, 2001)
        Wg = grid**2 * V1 + (1 - grid) ** 2 * V2 + 2 * grid * (1 - grid) * C12
        h2_err = max(h2_err, abs(a1 * a1 * V1 + (1 - a1) ** 2 * V2 + 2 * a1 * (1 - a1) * C12 - Wopt) / Wopt)
        h2_gap = min(h2_gap, float(np.min((Wg - Wopt) / Wg)))
    return {"profiles": profiles, "weight_vectors_per_profile": K, "min_rel_gap_inverse": min_gap_inv,
            "min_rel_gap_uniform_equal_V": min_gap_unif, "min_rel_gap_covariance": min_gap_cov,
            "certificate_max_rel_err": cert_err, "two_heads_opt_rel_err": h2_err, "two_heads_min_rel_gap": h2_gap}


def winners(H: int) -> list[dict[str, Any]]:
    """Who has the lower W at large H, measured (closed forms): geometric (r = 1/4, 1/2, 3/4) and
    best-first Fibonacci against uniform for β = 1/2, 1, 2; both at q = 1/2, 2 (H = 64); geometric with
    correlated heads (ρ = CORR_RHO, β = 1/2)."""
    rows = []
    for beta in (0.5, 1.0, 2.0):
        wu = closed_form("uniform", "poly", H, 1.0, beta)
        for r in (0.25, 0.5, 0.75):
            wg = closed_form("geom", "poly", H, 1.0, beta, r)
            rows.append({"profile": "poly", "beta": beta, "r": r, "scheme": "geom", "H": H, "W_uniform": wu,
                         "W_scheme": wg, "measured": wg < wu})
        wf = closed_form("fib_best", "poly", H, 1.0, beta)
        rows.append({"profile": "poly", "beta": beta, "scheme": "fib_best", "H": H, "W_uniform": wu, "W_scheme": wf,
                     "measured": wf < wu})
    for q in (0.5, 2.0):
        wu = closed_form("uniform", "exp", 64, 1.0, q)
        wg, wf = closed_form("geom", "exp", 64, 1.0, q, 0.5), closed_form("fib_best", "exp", 64, 1.0, q)
        rows.append({"profile": "exp", "q": q, "scheme": ["geom", "fib_best"], "r": 0.5, "H": 64, "W_uniform": wu,
                     "W_scheme": [wg, wf], "measured": [wg < wu, wf < wu]})
    wu = float(formulas.c8_W_uniform_poly_corr(1.0, 0.5, H, CORR_RHO))
    wg = float(formulas.c8_W_geom_poly_corr(1.0, 0.5, H, 0.5, CORR_RHO))
    rows.append({"profile": "poly", "beta": 0.5, "rho": CORR_RHO, "r": 0.5, "scheme": "geom", "H": H, "W_uniform": wu,
                 "W_scheme": wg, "measured": wg < wu})
    return rows


def threshold_certificates() -> list[dict]:
    """In arb: the β = 1 threshold r* = √2 − 1 (geometric wins iff (1 + r)² > 2), the sign of
    (1 + r)² − 2 at every ratio of the condition table, and at r = 1/φ (best-first Fibonacci)."""
    out = []
    with certify.precision():
        out.append(certify.between("√2 − 1", certify.ball(2).sqrt() - 1, Fraction(41421, 100000),
                                   Fraction(41422, 100000)))
        for r in (Fraction(1, 4), Fraction(1, 2), Fraction(3, 4)):
            v = (1 + certify.ball(r)) ** 2 - 2
            out.append(certify.greater_than(f"(1 + r)² − 2 at r = {r}", v, 0) if r > Fraction(41422, 100000)
                       else certify.greater_than(f"2 − (1 + r)² at r = {r}", -v, 0))
        phi = (1 + certify.ball(5).sqrt()) / 2
        out.append(certify.greater_than("(1 + 1/φ)² − 2 (best-first Fibonacci, β = 1)", (1 + 1 / phi) ** 2 - 2, 0))
    return [c.to_dict() for c in out]


def decay_case(profile: str, param: float, V_1: float, r: float, Hs: list[int], schemes: list[str]) -> dict[str, Any]:
    """W of uniform and each scheme at the H values (generated code), their decay factors
    W(H_min)/W(H_max), final log-log slopes, and the floors (1 − r)² V_1 and V_1/φ⁴; ``finite`` is False
    where float64 overflows or underflows."""
    try:
        with np.errstate(all="ignore"):
            W = {s: [float(closed_form(s, profile, H, V_1, param, r)) for H in Hs] for s in ["uniform", *schemes]}
            decay = {s: v[0] / v[-1] for s, v in W.items()}
            slopes = {s: math.log(v[-1] / v[-2]) / math.log(Hs[-1] / Hs[-2]) for s, v in W.items()}
        finite = all(math.isfinite(x) and x > 0 for v in W.values() for x in v) and \
            all(math.isfinite(x) for x in (*decay.values(), *slopes.values()))
    except (OverflowError, ValueError, ZeroDivisionError) as exc:   # float powers, logs of 0
        if isinstance(exc, VerifyError):
            raise
        return {"finite": False}
    phi = (1 + math.sqrt(5)) / 2
    return {"H": Hs, "W": W, "decay_factor": decay, "final_loglog_slope": slopes, "finite": finite,
            "geom_floor": (1 - r) ** 2 * V_1,
            "fib_floor": V_1 / phi**4}


def rate_mse(scheme: str, n: float, gammas: np.ndarray, c: np.ndarray, r: float) -> float:
    """Ensemble MSE Σ α_h² c_h n^(−γ_h) of ``scheme`` at sample size n; ``inverse`` uses the
    n-dependent optimal weights α_h ∝ n^(γ_h)/c_h, giving 1/Σ_h n^(γ_h)/c_h."""
    mse_h = c * n ** (-gammas)
    if scheme == "inverse":
        return float(1.0 / np.sum(1.0 / mse_h))
    a = weights(scheme, gammas.size, r=r)
    return float(np.sum(a * a * mse_h))


def rates(g: np.ndarray, c: np.ndarray, r: float, ns: list[float]) -> dict[str, Any]:
    """Local decay rates −d log M/d log n of uniform, geometric (ratio r), best-first Fibonacci and
    inverse-MSE weights at each n, and each scheme's asymptotic rate (the smallest γ among heads with a
    non-zero weight; the largest γ for the n-adaptive inverse-MSE weights); the geometric over uniform
    MSE at the largest n and its limit (the worst head's term dominates both)."""
    schemes = ("uniform", "geom", "fib_best", "inverse")
    slopes = {s: [-(math.log(rate_mse(s, n * math.exp(SLOPE_H), g, c, r))
                    - math.log(rate_mse(s, n * math.exp(-SLOPE_H), g, c, r))) / (2 * SLOPE_H) for n in ns]
              for s in schemes}
    mse = {s: [rate_mse(s, n, g, c, r) for n in ns] for s in schemes}
    asym = {s: float(g.max() if s == "inverse" else g[weights(s, g.size, r=r) != 0].min()) for s in schemes}
    worst = int(np.argmin(g))
    limit = float((weights("geom", g.size, r=r)[worst] / weights("uniform", g.size)[worst]) ** 2)
    return {"n": ns, "local_rate": slopes, "mse": mse, "asymptotic_rate": asym,
            "geom_over_uniform_at_largest_n": mse["geom"][-1] / mse["uniform"][-1], "geom_over_uniform_limit": limit}
