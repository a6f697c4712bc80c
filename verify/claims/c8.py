"""C8 (Thm 7.1): do geometric or Fibonacci head weights give a faster MSE decay than uniform ones?

The quantity is the variance part of the ensemble MSE (C3), ``W(α) = Σ α_h² V_h`` (zero
covariance) for weights summing to one, with heads ordered best first under two quality
profiles: polynomial ``V_h = V_1 h^β`` and exponential ``V_h = V_1 q^(h−1)``. Parts:

1. closed forms: the generated ``c8_W_*`` (numpy and mpmath) against direct summation in exact
   rationals (integer Fibonacci numbers) for H = 1..64, and a Monte Carlo of independent
   Gaussian head errors with the profile's V_h against the closed forms;
2. optimal weights: random weight vectors never beat inverse-variance weights (nor uniform ones
   for equal V), and ``W(α) − W* = Σ V_h (α_h − α*_h)²`` to rounding; with covariance C,
   ``α* = C⁻¹1/(1ᵀC⁻¹1)``;
3. the statement itself: geometric/Fibonacci weights keep a positive floor while uniform
   weights decay (β < 1), so for large H they are worse; saved as a replayable counterexample,
   beside a table of the derived conditions under which they do win.
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any

import mpmath
import numpy as np

import proofs
from verify._validate import (
    as_array,
    at_most,
    fail,
    fields,
    finite_number,
    integer_valued,
    one_of,
    positive_int,
    positive_number,
)
from verify.errors import VerifyError
from verify.judgment.claim import Context
from verify.judgment.counterexamples import ReplayOutcome, replayer
from verify.judgment.verdicts import ClaimResult, Numeric, Part, Reading, Role, Symbolic
from verify.numeric import certify, formulas
from verify.outputs import plots

__all__ = ["TITLE", "check", "SCHEMES", "RATE_PARAMS", "RATE_TOL", "rate_mse", "judge_rates", "weights", "weighted_variance", "profile_variances", "closed_form",
           "decay_case", "FLOAT_RTOL", "MP_RTOL", "Z_MAX", "GAP_ATOL", "DECAY_MARGIN"]

TITLE = "Structured head weights vs uniform averaging (Thm 7.1)"

SCHEMES = ("uniform", "geom", "fib_best", "fib_worst", "inverse")
# Generated float64 closed forms vs exact rationals, H <= 64: the Binet forms subtract powers of
# phi^2 and q up to ~1e30 of like size; measured <= 5e-15 relative.
FLOAT_RTOL = 1e-12
# The same at 30 digits (mpmath): measured <= 1e-29.
MP_RTOL = 1e-25
# Monte Carlo: |empirical − closed form| <= Z_MAX standard errors for each of <= 60 comparisons
# (two-sided normal tail 7e-6 each, family-wise ~4e-4).
Z_MAX = 4.5
# Optimality in float64: W(α) − W* >= −GAP_ATOL·W(α) (sums of <= 16 products, a few ulps each).
GAP_ATOL = 1e-12
# The identity W(α) − W* = Σ V_h(α_h − α*_h)², float64, relative to W(α) (cancellation of the gap).
CERT_RTOL = 1e-10
# The statement fails at a case when the uniform MSE shrinks over the saved H range by more than
# this factor times the structured one's and ends lower.
DECAY_MARGIN = 2.0
#: Above this H the float64 Binet forms overflow (phi^1475 > 1.8e308): mpmath is used instead.
FLOAT_FIB_MAX_H = 700
Q_GRID = (Fraction(1, 2), Fraction(3, 2), Fraction(2), Fraction(3))
R_GRID = (Fraction(1, 4), Fraction(1, 2), Fraction(3, 4))
BETA_GRID = (0.5, 1.5)
MC_PROFILES = (("poly", 0.5), ("exp", 1.5))
DECAY_PARAMS = {"profile": "poly", "beta": 0.5, "V_1": 1.0, "r": 0.5, "H_values": [32, 64, 128, 256, 512],
                "schemes": ["geom", "fib_best"], "margin": DECAY_MARGIN}


# --------------------------------------------------------------------------- weights and W
def _fib_int(k: int) -> int:
    a, b = 0, 1
    for _ in range(k):
        a, b = b, a + b
    return a


def profile_variances(profile: str, H: int, V_1: float, param: float) -> np.ndarray:
    """V_h for h = 1..H: ``poly`` V_1 h^β (param β > 0) or ``exp`` V_1 q^(h−1) (param q > 0)."""
    H = positive_int("H", H)
    V_1, param = positive_number("V_1", V_1), positive_number("param", param)
    h = np.arange(1, H + 1, dtype=float)
    if profile == "poly":
        return V_1 * h**param
    if profile == "exp":
        return V_1 * param ** (h - 1)
    raise fail("profile", repr(profile), "'poly' or 'exp'")


def weights(scheme: str, H: int, *, r: float = 0.5, V: Any = None) -> np.ndarray:
    """The weight vector of ``scheme`` (sums to one), from the generated ``c8_alpha_*``;
    ``inverse`` needs the variances ``V`` (α_h ∝ 1/V_h)."""
    H = positive_int("H", H)
    h = np.arange(1, H + 1, dtype=float)
    if scheme == "uniform":
        return np.full(H, 1.0 / H)
    if scheme == "geom":
        r = positive_number("r", r)
        if r >= 1:
            raise fail("r", repr(r), "a ratio 0 < r < 1")
        return np.asarray(formulas.c8_alpha_geom(h, H, r), dtype=float)
    if scheme in ("fib_best", "fib_worst"):
        if H <= FLOAT_FIB_MAX_H:
            return np.asarray(getattr(formulas, f"c8_alpha_{scheme}")(h, H), dtype=float)
        f = getattr(formulas, f"c8_alpha_{scheme}_mp")
        with mpmath.workdps(30):
            return np.array([float(f(k, H)) for k in range(1, H + 1)])
    if scheme == "inverse":
        V = as_array("V", V, ndim=1)
        if V.shape != (H,) or np.any(V <= 0):
            raise fail("V", f"shape {V.shape} (min {V.min() if V.size else 'n/a'})", f"{H} positive variances")
        return (1 / V) / np.sum(1 / V)
    raise fail("scheme", repr(scheme), f"one of {', '.join(SCHEMES)}")


def weighted_variance(alpha: Any, V: Any, C: Any = None) -> float:
    """W(α) = αᵀCα with C = diag(V) when no covariance matrix is given."""
    alpha, V = as_array("alpha", alpha, ndim=1), as_array("V", V, ndim=1)
    if alpha.shape != V.shape:
        raise fail("alpha", f"shape {alpha.shape}", f"the shape of V, {V.shape}")
    if C is None:
        return float(np.sum(alpha * alpha * V))
    C = as_array("C", C, ndim=2)
    if C.shape != (V.size, V.size):
        raise fail("C", f"shape {C.shape}", f"({V.size}, {V.size})")
    return float(alpha @ C @ alpha)


def _closed_fn(scheme: str, profile: str, param: float) -> tuple[str, bool]:
    """(generated function name, takes r)."""
    short = {"inverse": "inv"}.get(scheme, scheme)
    if profile == "exp":
        return f"c8_W_{short}_exp", scheme == "geom"
    if scheme in ("uniform", "geom") and param in (1, 2):
        return f"c8_W_{short}_poly{int(param)}", scheme == "geom"
    return f"c8_W_{short}_poly", scheme == "geom"


def closed_form(scheme: str, profile: str, H: int, V_1: float, param: float, r: float = 0.5, *, mp: bool = False) -> Any:
    """W of ``scheme`` for the profile from the generated code: the closed forms (exponential
    profile; β = 1, 2 for uniform/geometric) or the generated finite sums (other β). ``mp=True``
    evaluates the ``_mp`` variant at max(current mpmath precision, 30 digits) (also used for Fibonacci
    weights beyond :data:`FLOAT_FIB_MAX_H`, where float64 Binet powers overflow)."""
    if scheme not in SCHEMES:
        raise fail("scheme", repr(scheme), f"one of {', '.join(SCHEMES)}")
    if profile not in ("poly", "exp"):
        raise fail("profile", repr(profile), "'poly' or 'exp'")
    H = positive_int("H", H)
    name, takes_r = _closed_fn(scheme, profile, param)
    use_mp = mp or (scheme.startswith("fib") and H > FLOAT_FIB_MAX_H)
    f = getattr(formulas, name + ("_mp" if use_mp else ""))
    if profile == "exp":
        args = (V_1, param, H)
    elif name.endswith(("poly1", "poly2")):
        args = (V_1, H)
    else:
        args = (V_1, param, H)
    args = args + ((r,) if takes_r else ())
    if use_mp:
        with mpmath.workdps(max(mpmath.mp.dps, 30)):
            val = f(*[a if isinstance(a, int) else _mpq(a) for a in args])
        return val if mp else float(val)
    return float(f(*args))


def _mpq(x: Any) -> mpmath.mpf:
    """A Fraction, float or mpf as an mpf at the current precision (a Fraction exactly rounded)."""
    return mpmath.mpf(x.numerator) / x.denominator if isinstance(x, Fraction) else mpmath.mpf(x)


# --------------------------------------------------------------------------- part 1: exact sums
def _exact_sums(H_max: int, V: list[Fraction], r_grid: tuple[Fraction, ...]) -> dict[str, list[Fraction]]:
    """W(H) for H = 1..H_max by direct summation in exact rationals (integer Fibonacci numbers)."""
    out: dict[str, list[Fraction]] = {"uniform": [], "fib_best": [], "fib_worst": [], "inverse": []}
    out.update({f"geom_{r}": [] for r in r_grid})
    F = [_fib_int(k) for k in range(H_max + 3)]
    su = sw = si = Fraction(0)
    sg = {r: [Fraction(0), Fraction(0)] for r in r_grid}
    for H in range(1, H_max + 1):
        v = V[H - 1]
        su += v
        out["uniform"].append(su / H**2)
        sw += F[H] ** 2 * v
        tot = F[H + 2] - 1
        out["fib_worst"].append(sw / tot**2)
        out["fib_best"].append(sum((F[H + 1 - h] ** 2 * V[h - 1] for h in range(1, H + 1)), Fraction(0)) / tot**2)
        si += 1 / v
        out["inverse"].append(1 / si)
        for r in r_grid:
            w = r ** (H - 1)
            sg[r][0] += w * w * v
            sg[r][1] += w
            out[f"geom_{r}"].append(sg[r][0] / sg[r][1] ** 2)
    return out


def _closed_vs_exact(ctx: Context) -> dict[str, Any]:
    H_max, mp_every = ctx.size(16, 32, 64), ctx.size(3, 4)   # 30-digit forms at every mp_every-th H
    qs = ctx.size(Q_GRID[1:], Q_GRID)
    worst_f, worst_m, count, n_mp = 0.0, 0.0, 0, 0
    per: dict[str, list[float]] = {}
    cases: list[tuple[str, float, list[Fraction]]] = [("exp", q, [q ** (h - 1) for h in range(1, H_max + 1)]) for q in qs]
    cases += [("poly", b, [Fraction(h**b) for h in range(1, H_max + 1)]) for b in (1, 2)]
    with mpmath.workdps(30):
        for profile, param, V in cases:
            exact = _exact_sums(H_max, V, R_GRID)
            for key, vals in exact.items():
                scheme, r = (key.split("_")[0], Fraction(key.split("_")[1])) if key.startswith("geom") else (key, None)
                if profile == "poly" and scheme not in ("uniform", "geom"):
                    continue   # no closed form in H for these (the generated sums are checked below)
                for H, ex in enumerate(vals, start=1):
                    fl = closed_form(scheme, profile, H, 1.0, float(param), float(r or 0.5))
                    ef, em = abs(fl - float(ex)) / float(ex), 0.0
                    if H % mp_every == 0 or H in (1, H_max):
                        m = closed_form(scheme, profile, H, 1, Fraction(param), r or Fraction(1, 2), mp=True)
                        em = float(abs(m - _mpq(ex)) / _mpq(ex))
                        n_mp += 1
                    worst_f, worst_m, count = max(worst_f, ef), max(worst_m, em), count + 1
                    k = f"{profile}:{scheme}"
                    per[k] = [max(per.get(k, [0.0, 0.0])[0], ef), max(per.get(k, [0.0, 0.0])[1], em)]
    # generated finite sums (non-integer β; Fibonacci and inverse weights) vs direct mpmath sums
    sums_f, sums_m, n_sums = 0.0, 0.0, 0
    with mpmath.workdps(40):
        for beta in BETA_GRID + (1.0, 2.0):
            for H in range(1, H_max + 1, ctx.size(5, 3)):
                Vm = [mpmath.mpf(h) ** beta for h in range(1, H + 1)]
                tot = _fib_int(H + 2) - 1
                direct = {
                    "uniform": mpmath.fsum(Vm) / H**2,
                    "geom": mpmath.fsum(mpmath.mpf(0.5) ** (2 * h - 2) * Vm[h - 1] for h in range(1, H + 1))
                    / mpmath.fsum(mpmath.mpf(0.5) ** (h - 1) for h in range(1, H + 1)) ** 2,
                    "fib_best": mpmath.fsum(_fib_int(H + 1 - h) ** 2 * Vm[h - 1] for h in range(1, H + 1)) / tot**2,
                    "fib_worst": mpmath.fsum(_fib_int(h) ** 2 * Vm[h - 1] for h in range(1, H + 1)) / tot**2,
                    "inverse": 1 / mpmath.fsum(1 / v for v in Vm),
                }
                for scheme, ref in direct.items():
                    fl = closed_form(scheme, "poly", H, 1.0, beta, 0.5)
                    with mpmath.workdps(30):
                        m = closed_form(scheme, "poly", H, 1, beta, 0.5, mp=True)
                    sums_f = max(sums_f, abs(fl - float(ref)) / float(ref))
                    sums_m = max(sums_m, float(abs(m - ref) / ref))
                    n_sums += 1
    ok = max(worst_f, sums_f) <= FLOAT_RTOL and max(worst_m, sums_m) <= MP_RTOL
    return {"H_max": H_max, "q": [str(q) for q in qs], "r": [str(r) for r in R_GRID], "closed_form_values": count,
            "closed_form_values_mp": n_mp,
            "max_rel_err_float": worst_f, "max_rel_err_mp": worst_m, "per_form": per,
            "generated_sums": n_sums, "sums_max_rel_err_float": sums_f, "sums_max_rel_err_mp": sums_m, "ok": ok}


def _monte_carlo(ctx: Context) -> dict[str, Any]:
    """Independent Gaussian head errors e_h ~ N(0, V_h), R replicates: the mean of (Σ α_h e_h)²
    against the closed form, with the standard error of that mean."""
    rng = ctx.rng("c8/monte-carlo")
    R = ctx.size(4000, 10000)
    Hs = ctx.size((2, 8, 32), (2, 4, 8, 16, 32, 64))
    rows, worst = [], 0.0
    for profile, param in MC_PROFILES:
        for H in Hs:
            V = profile_variances(profile, H, 1.0, param)
            E = rng.standard_normal((R, H)) * np.sqrt(V)
            for scheme in SCHEMES:
                a = weights(scheme, H, r=0.5, V=V)
                sq = (E @ a) ** 2
                mean, se = float(sq.mean()), float(sq.std(ddof=1) / math.sqrt(R))
                W = closed_form(scheme, profile, H, 1.0, param, 0.5)
                z = (mean - W) / se
                worst = max(worst, abs(z))
                rows.append({"profile": profile, "param": param, "H": H, "scheme": scheme, "closed_form": W,
                             "mc_mean": mean, "mc_se": se, "z": z})
    return {"R": R, "H": list(Hs), "rows": rows, "max_abs_z": worst, "ok": worst <= Z_MAX}


# --------------------------------------------------------------------------- part 2: optimality
def _random_affine(rng: np.random.Generator, H: int, K: int) -> np.ndarray:
    """K weight vectors summing to one: half Dirichlet (simplex), half unrestricted signs."""
    simplex = rng.dirichlet(np.ones(H), size=K // 2)
    z = rng.standard_normal((K - K // 2, H)) * rng.uniform(0.1, 2.0, size=(K - K // 2, 1))
    signed = 1.0 / H + z - z.mean(axis=1, keepdims=True)
    return np.vstack([simplex, signed])


def _optimality(ctx: Context) -> dict[str, Any]:
    rng = ctx.rng("c8/optimality")
    profiles, K = ctx.size(8, 40), ctx.size(200, 1000)
    min_gap_inv = min_gap_unif = min_gap_cov = math.inf
    cert_err = 0.0
    for _ in range(profiles):
        H = int(rng.integers(2, 17))
        V = np.exp(1.5 * rng.standard_normal(H))
        A = _random_affine(rng, H, K)
        a_star = weights("inverse", H, V=V)
        W_star = weighted_variance(a_star, V)
        W = np.sum(A * A * V, axis=1)
        min_gap_inv = min(min_gap_inv, float(np.min((W - W_star) / W)))
        cert = np.sum(V * (A - a_star) ** 2, axis=1)       # W(α) − W* = Σ V_h (α_h − α*_h)²
        cert_err = max(cert_err, float(np.max(np.abs(W - W_star - cert) / W)))
        Veq = float(V[0])
        Wu = Veq / H
        min_gap_unif = min(min_gap_unif, float(np.min((np.sum(A * A, axis=1) * Veq - Wu) / (np.sum(A * A, axis=1) * Veq))))
        # with covariance: α* = C⁻¹1/(1ᵀC⁻¹1)
        G = rng.standard_normal((H, H))
        C = G @ G.T + 0.1 * np.eye(H)
        ci1 = np.linalg.solve(C, np.ones(H))
        a_c = ci1 / ci1.sum()
        Wc = float(a_c @ C @ a_c)
        Wa = np.einsum("ki,ij,kj->k", A, C, A)
        min_gap_cov = min(min_gap_cov, float(np.min((Wa - Wc) / Wa)))
    # two heads with covariance: generated optimum vs a grid over α_1
    h2_err, h2_gap = 0.0, math.inf
    for _ in range(profiles):
        V1, V2 = np.exp(rng.standard_normal(2))
        C12 = float(rng.uniform(-0.95, 0.95) * math.sqrt(V1 * V2))
        Wopt = float(formulas.c8_W_opt_cov_H2(V1, V2, C12))
        a1 = float(formulas.c8_alpha1_opt_cov_H2(V1, V2, C12))
        W_at = a1 * a1 * V1 + (1 - a1) ** 2 * V2 + 2 * a1 * (1 - a1) * C12
        grid = np.linspace(-3, 4, 2001)
        Wg = grid**2 * V1 + (1 - grid) ** 2 * V2 + 2 * grid * (1 - grid) * C12
        h2_err = max(h2_err, abs(W_at - Wopt) / Wopt)
        h2_gap = min(h2_gap, float(np.min((Wg - Wopt) / Wg)))
    ok = (min(min_gap_inv, min_gap_unif, min_gap_cov, h2_gap) >= -GAP_ATOL and cert_err <= CERT_RTOL
          and h2_err <= CERT_RTOL)
    return {"profiles": profiles, "weight_vectors_per_profile": K, "min_rel_gap_inverse": min_gap_inv,
            "min_rel_gap_uniform_equal_V": min_gap_unif, "min_rel_gap_covariance": min_gap_cov,
            "certificate_max_rel_err": cert_err, "two_heads_opt_rel_err": h2_err, "two_heads_min_rel_gap": h2_gap,
            "ok": bool(ok)}


# --------------------------------------------------------------------------- part 3: the statement
#: A decay replay evaluates W of uniform and each saved scheme at every saved H; beyond
#: FLOAT_FIB_MAX_H the Fibonacci sums run in mpmath, ~0.3 ms per head: at most this many
#: head-evaluations Σ_H H · (1 + schemes), measured ~3 s at the cap; the check's own case needs ~3000.
MAX_DECAY_HEADS = 2**14


def decay_case(params: dict) -> dict[str, Any]:
    """W of uniform and each structured scheme at the saved H values (generated code), their decay
    factors W(H_min)/W(H_max) and whether each scheme fails 'faster decay than uniform'."""
    fields("params", params, ("profile", "V_1", "r", "margin", "H_values", "schemes"))
    profile = one_of("params.profile", params["profile"], ("poly", "exp"))
    key = "beta" if profile == "poly" else "q"
    param = finite_number(f"params.{key}", fields("params", params, (key,))[key], minimum=0.0, strict_minimum=True)
    V_1 = finite_number("params.V_1", params["V_1"], minimum=0.0, strict_minimum=True)
    r = finite_number("params.r", params["r"], minimum=0.0, strict_minimum=True)
    if r >= 1:
        raise fail("params.r", repr(params["r"]), "a ratio 0 < r < 1")
    margin = finite_number("params.margin", params["margin"], minimum=0.0, strict_minimum=True)
    H_raw, schemes = params["H_values"], params["schemes"]
    if not isinstance(H_raw, list) or not isinstance(schemes, list) or not schemes:
        raise fail("params.H_values, schemes", f"{repr(H_raw)[:60]}, {repr(schemes)[:60]}", "two lists")
    Hs = sorted(integer_valued(f"params.H_values[{i}]", h, minimum=1) for i, h in enumerate(H_raw))
    if len(Hs) < 2 or len(set(Hs)) != len(Hs):
        raise fail("params.H_values", repr(H_raw)[:80], ">= 2 distinct head counts")
    for i, sc in enumerate(schemes):
        one_of(f"params.schemes[{i}]", sc, [x for x in SCHEMES if x != "uniform"])
    at_most("params.H_values", sum(Hs) * (1 + len(schemes)), MAX_DECAY_HEADS,
            f"head-evaluations Σ H · (1 + schemes) for {len(Hs)} H values up to {Hs[-1]} and {len(schemes)} "
            "schemes; MAX_DECAY_HEADS: a few seconds at the cap")
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
        finite = False
    if not finite:
        raise fail(f"params.V_1, {key}", f"V_1 = {V_1:g}, {key} = {param:g} up to H = {Hs[-1]}",
                   "a profile whose W and decay factors stay finite and positive in float64")
    fails = {s: bool(W[s][-1] > W["uniform"][-1] and decay["uniform"] > margin * decay[s]) for s in schemes}
    return {"H": Hs, "W": W, "decay_factor": decay, "final_loglog_slope": slopes, "fails": fails,
            "geom_floor": (1 - r) ** 2 * V_1}


@replayer("c8.decay-floor")
def _replay_decay(params: dict) -> ReplayOutcome:
    c = decay_case(params)
    Hs, W = c["H"], c["W"]
    parts = [f"{s}: W {W[s][0]:.4g} -> {W[s][-1]:.4g} (decay x{c['decay_factor'][s]:.3g}, final slope "
             f"{c['final_loglog_slope'][s]:.3f})" for s in W]
    summary = (f"{params['profile']} profile (beta = {params.get('beta')}), H = {Hs[0]}..{Hs[-1]}: " + "; ".join(parts)
               + f"; geometric floor (1-r)^2 V_1 = {c['geom_floor']:.4g} (violation: ends above uniform and uniform "
                 f"decays > x{float(params['margin']):g} more)")
    return ReplayOutcome(violates=all(c["fails"].values()), summary=summary, figures=c)


def _geom_wins_large_H(beta: float, r: float) -> bool:
    """Derived condition (steps uniform_poly_order, geom_poly_series_converges, geom_beats_uniform_beta1):
    geometric beats uniform for large H iff β > 1, or β = 1 and r > √2 − 1."""
    return beta > 1 or (beta == 1 and r > math.sqrt(2) - 1)


def _threshold_certificates() -> list[dict]:
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


def _conditions(ctx: Context) -> dict[str, Any]:
    """Who wins at large H, measured, beside the derived condition."""
    H = ctx.size(256, 512)     # float64 Fibonacci sums stay below FLOAT_FIB_MAX_H
    rows, consistent = [], True
    for beta in (0.5, 1.0, 2.0):
        wu = closed_form("uniform", "poly", H, 1.0, beta)
        for r in (0.25, 0.5, 0.75):
            wg = closed_form("geom", "poly", H, 1.0, beta, r)
            pred = _geom_wins_large_H(beta, r)
            consistent &= (wg < wu) == pred
            rows.append({"profile": "poly", "beta": beta, "r": r, "H": H, "W_uniform": wu, "W_geom": wg,
                         "geom_wins": wg < wu, "derived_geom_wins": pred})
        wf = closed_form("fib_best", "poly", H, 1.0, beta)
        consistent &= (wf < wu) == (beta >= 1)      # fibonacci_lower_mse_poly: iff β >= 1
        rows.append({"profile": "poly", "beta": beta, "scheme": "fib_best", "H": H, "W_uniform": wu, "W_fib_best": wf,
                     "fib_wins": wf < wu, "derived_fib_wins": beta >= 1})
    He = 64
    for q in (0.5, 2.0):
        wu = closed_form("uniform", "exp", He, 1.0, q)
        wg, wf = closed_form("geom", "exp", He, 1.0, q, 0.5), closed_form("fib_best", "exp", He, 1.0, q)
        consistent &= (wg < wu) == (q > 1) and (wf < wu) == (q > 1)   # lower_mse_exp: iff q > 1
        rows.append({"profile": "exp", "q": q, "H": He, "W_uniform": wu, "W_geom": wg, "W_fib_best": wf,
                     "derived_structured_wins": q > 1})
    rho = 0.3
    wu = float(formulas.c8_W_uniform_poly_corr(1.0, 0.5, H, rho))
    wg = float(formulas.c8_W_geom_poly_corr(1.0, 0.5, H, 0.5, rho))
    consistent &= wg < wu                                           # lower_mse_correlated: any β > 0
    rows.append({"profile": "poly", "beta": 0.5, "rho": rho, "r": 0.5, "H": H, "W_uniform": wu, "W_geom": wg,
                 "geom_wins": wg < wu, "derived_geom_wins": True})
    certs = _threshold_certificates()
    return {"rows": rows, "consistent": bool(consistent and all(c["holds"] for c in certs)), "H": H,
            "certificates": certs}


# --------------------------------------------------------------------------- reading (ii): rates in n
#: Reading (ii): H heads ordered best first with MSE_h(n) = c_h n^(−γ_h) and independent errors;
#: the ensemble MSE of fixed weights α is Σ α_h² c_h n^(−γ_h).
RATE_PARAMS = {"gammas": [1.0, 0.8, 0.6, 0.4], "c": [1.0, 1.0, 1.0, 1.0], "r": 0.5,
               "n_values": [1e2, 1e3, 1e4, 1e6, 1e9, 1e12, 1e18]}
#: Two asymptotic rates count as one when they differ by less than this (rates are exponents
#: of n read off exactly as the smallest γ with a non-zero weight; 1e-12 is float rounding).
RATE_TOL = 1e-12
#: Local slopes d log M/d log n by a central difference in log n of this half-width (M is a sum of
#: powers of n: the difference is exact to ~1e-12 relative).
SLOPE_H = 1e-4


#: A rate replay evaluates 4 schemes at 3 points around each saved n; Fibonacci weights beyond
#: FLOAT_FIB_MAX_H heads run in mpmath (~0.5 ms a head per call), so at most that many heads ...
MAX_RATE_HEADS = FLOAT_FIB_MAX_H
#: ... and at most this many n values (~12 weight vectors each, ~0.1 ms apiece): measured ~1 s at
#: the cap (700 heads); the check saves 7.
MAX_RATE_NS = 1024
#: Every head's MSE c_h n^(−γ_h) at the saved n (and n e^(±SLOPE_H)) lies within e^(±this): far
#: inside float64 (e^709), so sums over <= MAX_RATE_HEADS heads and their reciprocals stay finite.
RATE_LOG_RANGE = 600.0


def _rate_inputs(params: dict) -> tuple[np.ndarray, np.ndarray, float, list[float]]:
    fields("params", params, ("gammas", "c", "r", "n_values"))
    g = as_array("params.gammas", params["gammas"], ndim=1, keep_float32=False)
    c = as_array("params.c", params["c"], ndim=1, keep_float32=False)
    r = finite_number("params.r", params["r"], minimum=0.0, strict_minimum=True)
    if r >= 1:
        raise fail("params.r", repr(params["r"]), "a ratio 0 < r < 1")
    ns = as_array("params.n_values", params["n_values"], ndim=1, keep_float32=False)
    if g.size < 2 or c.shape != g.shape or np.any(g <= 0) or np.any(c <= 0) or np.any(np.diff(g) >= 0):
        raise fail("params.gammas, c", f"gammas {g.tolist()[:8]}, c {c.tolist()[:8]}",
                   ">= 2 heads, positive c, rates γ_1 > γ_2 > ... > 0 (best head first)")
    at_most("params.gammas", g.size, MAX_RATE_HEADS, "heads; MAX_RATE_HEADS: Fibonacci weights stay in float64")
    if ns.size < 2 or np.any(ns <= 1) or np.any(np.diff(ns) <= 0):
        raise fail("params.n_values", repr(ns.tolist()[:8]), "increasing n values > 1")
    at_most("params.n_values", ns.size, MAX_RATE_NS, "n values; MAX_RATE_NS")
    log_n = np.log(ns)[:, None] + np.array([-SLOPE_H, 0.0, SLOPE_H])[None, :]
    log_mse = np.log(c)[None, None, :] - g[None, None, :] * log_n[:, :, None]
    if not np.all(np.abs(log_mse) <= RATE_LOG_RANGE):
        worst = float(np.max(np.abs(log_mse)))
        raise fail("params.gammas, c, n_values", f"a head MSE c_h n^(−γ_h) of e^(±{worst:.4g})",
                   f"head MSEs within e^(±{RATE_LOG_RANGE:g}) at every n (finite in float64)")
    return g, c, r, [float(x) for x in ns]


def rate_mse(scheme: str, n: float, gammas: np.ndarray, c: np.ndarray, r: float) -> float:
    """Ensemble MSE Σ α_h² c_h n^(−γ_h) of ``scheme`` at sample size n; ``inverse`` uses the
    n-dependent optimal weights α_h ∝ n^(γ_h)/c_h, giving 1/Σ_h n^(γ_h)/c_h."""
    mse_h = c * n ** (-gammas)
    if scheme == "inverse":
        return float(1.0 / np.sum(1.0 / mse_h))
    a = weights(scheme, gammas.size, r=r)
    return float(np.sum(a * a * mse_h))


def _slope(scheme: str, n: float, g: np.ndarray, c: np.ndarray, r: float) -> float:
    up, dn = rate_mse(scheme, n * math.exp(SLOPE_H), g, c, r), rate_mse(scheme, n * math.exp(-SLOPE_H), g, c, r)
    return -(math.log(up) - math.log(dn)) / (2 * SLOPE_H)


@replayer("c8.rate-in-n")
def judge_rates(params: dict) -> ReplayOutcome:
    """Local decay rates −d log M/d log n of uniform, geometric (ratio r), best-first Fibonacci and
    inverse-MSE weights over the saved n values, and each scheme's asymptotic rate (the smallest γ
    among heads with a non-zero weight; the largest γ for the n-adaptive inverse-MSE weights).
    Violated when neither geometric nor Fibonacci weights have a faster asymptotic rate than uniform."""
    g, c, r, ns = _rate_inputs(params)
    schemes = ("uniform", "geom", "fib_best", "inverse")
    slopes = {s: [_slope(s, n, g, c, r) for n in ns] for s in schemes}
    mse = {s: [rate_mse(s, n, g, c, r) for n in ns] for s in schemes}
    asym = {s: float(g.max() if s == "inverse" else g[weights(s, g.size, r=r) != 0].min()) for s in schemes}
    faster = {s: asym[s] > asym["uniform"] + RATE_TOL for s in ("geom", "fib_best")}
    ratio = mse["geom"][-1] / mse["uniform"][-1]
    summary = (f"γ = {g.tolist()}: asymptotic rates uniform n^-{asym['uniform']:g}, geometric (r = {r:g}) "
               f"n^-{asym['geom']:g}, Fibonacci n^-{asym['fib_best']:g}, inverse-MSE n^-{asym['inverse']:g}; local "
               f"rate at n = {ns[0]:.0e}: uniform {slopes['uniform'][0]:.3f}, geometric {slopes['geom'][0]:.3f}; at "
               f"n = {ns[-1]:.0e}: {slopes['uniform'][-1]:.3f}, {slopes['geom'][-1]:.3f}; geometric/uniform MSE at "
               f"n = {ns[-1]:.0e}: {ratio:.3g} (violation: no structured scheme with a faster asymptotic rate)")
    return ReplayOutcome(violates=not any(faster.values()), summary=summary,
                         figures={"n": ns, "local_rate": slopes, "mse": mse, "asymptotic_rate": asym,
                                  "geom_over_uniform_at_largest_n": ratio})


# --------------------------------------------------------------------------- plot and check
def _plot(ctx: Context, mc: dict[str, Any]) -> dict[str, str]:
    path = ctx.plot_path("weighting_decay")
    if path is None:
        return {}
    beta, r, V_1 = MC_PROFILES[0][1], 0.5, 1.0
    fig, ax = plots.new_figure(f"C8: weighted variance Σ α_h² V_h vs H, V_h = h^{beta:g} (zero covariance)\n"
                               "lines: closed forms; points: Monte Carlo (± 2 SE)", "heads H", "MSE (variance part)")
    Hs = np.unique(np.round(np.geomspace(1, 256, 40)).astype(int))
    labels = {"uniform": "uniform", "geom": "geometric r = 1/2", "fib_best": "Fibonacci, best first",
              "fib_worst": "Fibonacci, worst first", "inverse": "inverse variance"}
    for i, s in enumerate(SCHEMES):
        color = f"C{i}"
        ax.plot(Hs, [closed_form(s, "poly", int(H), V_1, beta, r) for H in Hs], "-", color=color, label=labels[s])
        pts = [row for row in mc["rows"] if row["profile"] == "poly" and row["scheme"] == s]
        ax.errorbar([p["H"] for p in pts], [p["mc_mean"] for p in pts], yerr=[2 * p["mc_se"] for p in pts], fmt="o",
                    color=color, ms=4, capsize=2)
    ax.axhline((1 - r) ** 2 * V_1, color="C1", ls=":", lw=0.8, label="geometric floor (1 − r)² V_1")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.legend(fontsize=7)
    return {"weighting_decay": plots.save(fig, path)}


def check(ctx: Context) -> ClaimResult:
    der = proofs.derivation("C8")
    parts: list[Part] = []

    ctx.progress("closed forms vs exact sums")
    ce = _closed_vs_exact(ctx)
    ctx.progress("Monte Carlo of independent head errors")
    mc = _monte_carlo(ctx)
    cf_steps = ["geom_sum", "binet_recurrence", "binet_square", "fib_sum", "fib_first_values", "unif_exp_sum",
                "geom_exp_sum", "fib_best_exp_sum", "fib_worst_exp_sum", "inv_exp_sum", "inv_exp_closed",
                "unif_poly1_sum", "unif_poly2_sum", "geom_poly1_sum", "geom_poly2_sum", "harmonic_forms"]
    cf_results = ["fibonacci", "alpha_geom", "alpha_fib_best", "alpha_fib_worst",
                  *(r for r in der.results if r.startswith("W_") and r.endswith(("_exp", "_poly", "_poly1", "_poly2")))]
    # role: core, reading (i) - the closed forms the comparison in H rests on
    parts.append(Part(
        id="closed forms", role=Role.CORE, reading="i",
        finding="closed forms for uniform, geometric, Fibonacci and inverse-variance weights",
        statement="Σ α_h² V_h of uniform, geometric, Fibonacci (best/worst first) and inverse-variance weights for "
                  "V_h = V_1 h^β and V_h = V_1 q^(h−1), zero covariance, equals the derived closed forms",
        symbolic=Symbolic.from_derivation(der, steps=cf_steps, results=cf_results),
        numeric=Numeric("statistical" if ce["ok"] and mc["ok"] else "disagree",
                        f"{ce['closed_form_values']} closed-form values ({ce['closed_form_values_mp']} also at 30 digits; H = 1..{ce['H_max']}, q in {ce['q']}, r in "
                        f"{ce['r']}, β = 1, 2) vs exact rational sums: max relative error {ce['max_rel_err_float']:.1e} "
                        f"(float64), {ce['max_rel_err_mp']:.1e} (30 digits); {ce['generated_sums']} generated sums "
                        f"(β = 0.5, 1.5, 1, 2) vs 40-digit direct sums: {ce['sums_max_rel_err_float']:.1e}; Monte Carlo "
                        f"({mc['R']} replicates of independent Gaussian head errors, {len(mc['rows'])} comparisons): "
                        f"max |z| = {mc['max_abs_z']:.2f} (limit {Z_MAX:g})",
                        {"exact": ce, "monte_carlo": mc, "tolerances": {"float": FLOAT_RTOL, "mp": MP_RTOL, "z": Z_MAX}})))

    ctx.progress("optimal weights")
    op = _optimality(ctx)
    opt_steps = ["lagrange_inverse_variance_H3", "lagrange_hessian_H3", "inverse_variance_certificate_term",
                 "inverse_variance_optimal_H2", *(f"uniform_optimal_equal_V_H{k}" for k in (2, 3, 4, 5)),
                 "uniform_optimal_equal_V_general", "lagrange_covariance_H2", "covariance_certificate_H2",
                 "lagrange_covariance_H3", "covariance_certificate_H3", "cov_H2_closed_form"]
    # role: detail - the converse facts: uniform optimal for equal V, inverse-variance optimal
    parts.append(Part(
        id="optimal weights", role=Role.DETAIL,
        stated="(converse) uniform is optimal for equal V_h and zero covariance, inverse-variance optimal among all",
        derived="W(α) − W* = Σ V_h (α_h − α*_h)² ≥ 0, α* ∝ 1/V_h (with covariance C⁻¹1/(1ᵀC⁻¹1))",
        finding="inverse-variance weights are optimal among all, uniform for equal V_h",
        statement="inverse-variance weights are optimal among all weights summing to one (α* = C⁻¹1/(1ᵀC⁻¹1) with "
                  "covariance); uniform weights are optimal for equal V_h and zero covariance",
        symbolic=Symbolic.from_derivation(der, steps=opt_steps, results=["W_opt_cov_H2", "alpha1_opt_cov_H2"],
                                          comparisons=["uniform_optimal_equal_V", "inverse_variance_optimal"]),
        numeric=Numeric("rounding" if op["ok"] else "disagree",
                        f"{op['profiles']} random profiles x {op['weight_vectors_per_profile']} random weight vectors "
                        f"(simplex and signed): min relative gap to inverse-variance {op['min_rel_gap_inverse']:.2e}, "
                        f"to uniform (equal V) {op['min_rel_gap_uniform_equal_V']:.2e}, to C⁻¹1/(1ᵀC⁻¹1) "
                        f"{op['min_rel_gap_covariance']:.2e}; W(α) − W* = Σ V_h(α_h − α*_h)² to "
                        f"{op['certificate_max_rel_err']:.0e}; two heads: generated optimum attained to "
                        f"{op['two_heads_opt_rel_err']:.0e}", op)))

    ctx.progress("the stated decay")
    cond = _conditions(ctx)
    decay_steps = ["stolz_power_sum", "uniform_poly_order", "uniform_poly1_limit", "inverse_poly_order_lt1",
                   "inverse_poly_order_eq1", "inverse_poly_order_gt1", "geom_first_weight_floor",
                   "geom_poly_series_converges", "geom_poly1_limit", "geom_beats_uniform_beta1", "uniform_exp_order",
                   "uniform_exp_q_lt_1", "geom_exp_limit", "inverse_exp_limit", "geom_vs_uniform_exp_ratio",
                   "psi_is_minus_inverse_phi", "fib_weight_limit", "fib_bounds", "fib_weight_domination",
                   "fib_best_poly_limit", "fib_beats_uniform_beta1", "fib_worst_floor", "fib_best_exp_limit",
                   "fib_vs_uniform_exp_ratio", "threshold_roots"]
    wins = [r for r in cond["rows"] if r.get("geom_wins") or r.get("fib_wins")
            or (r["profile"] == "exp" and r["derived_structured_wins"])]
    # role: core, reading (i) - structured weights beat uniform for large H when quality falls fast
    parts.append(Part(
        id="structured beat uniform for large H", role=Role.CORE, reading="i",
        statement="with heads ordered best first and quality falling fast enough along the order, geometric and "
                  "Fibonacci weights give a lower ensemble MSE than uniform averaging for large H",
        symbolic=Symbolic.from_derivation(der, steps=decay_steps,
                                          results=["W_geom_exp_limit", "W_fib_best_exp_limit", "W_inv_exp_limit",
                                                   "threshold_geom_poly", "threshold_fib_poly"],
                                          comparisons=["lower_mse_exp", "lower_mse_correlated"]),
        assumptions=["V_h = V_1 h^β with β > 1 (β = 1: geometric r > √2 − 1, best-first Fibonacci), or "
                     "V_h = V_1 q^(h−1) with q > 1, or C_hh' = ρ sqrt(V_h V_h') with ρ > 0"],
        numeric=Numeric("rounding" if cond["consistent"] else "disagree",
                        f"at H = {cond['H']} the winner over β ∈ {{0.5, 1, 2}}, r ∈ {{1/4, 1/2, 3/4}}, q ∈ {{1/2, 2}} "
                        f"and ρ = 0.3 " + ("matches" if cond["consistent"] else "DOES NOT match")
                        + f" the derived conditions in every one of {len(cond['rows'])} cases "
                        f"({len(wins)} won by structured weights); certified in {certify.PREC}-bit arb: the β = 1 "
                        "threshold r* = √2 − 1 ∈ [0.41421, 0.41422] and the sign of (1 + r)² − 2 at r = 1/4, 1/2, "
                        "3/4 and 1/φ", {"conditions": cond["rows"], "certificates": cond["certificates"]}),
        finding="structured weights win for large H iff β > 1 (or β = 1, r > √2 − 1), q > 1, or positive correlation"))

    dc = decay_case(DECAY_PARAMS)
    Wd = dc["W"]
    # role: detail - the word "decay": geometric weights level off at a floor
    parts.append(Part(
        id="decay", role=Role.DETAIL,
        statement="geometric (or Fibonacci) weights make the ensemble MSE decay in H",
        stated="a faster MSE decay",
        derived="for fixed r, Σ α_h² V_h ≥ (1 − r)² V_1 > 0 for every H (best-first Fibonacci: → V_1/φ⁴): the "
                "structured MSE levels off at a floor, it does not decay to 0",
        symbolic=Symbolic.from_derivation(der, steps=["geom_first_weight_floor", "geom_poly_series_converges",
                                                      "geom_exp_limit", "fib_weight_limit", "fib_worst_floor"],
                                          results=["W_geom_poly_limit", "W_geom_exp_limit", "W_fib_best_exp_limit"],
                                          comparisons=["faster_decay_geometric", "faster_decay_fibonacci"]),
        numeric=Numeric("rounding" if cond["consistent"] else "disagree",
                        f"V_h = h^0.5, H = {dc['H'][0]}..{dc['H'][-1]}: geometric r = 1/2 {Wd['geom'][0]:.4f} -> "
                        f"{Wd['geom'][-1]:.4f} (floor (1−r)²V_1 = {dc['geom_floor']:.2f}), Fibonacci "
                        f"{Wd['fib_best'][0]:.4f} -> {Wd['fib_best'][-1]:.4f}", {"decay": dc}),
        finding="geometric weights level off at (1−r)²V_1 (Fibonacci at V_1/φ⁴), they do not decay to 0"))

    cx = ctx.counterexample(
        claim="C8", part="mild-heterogeneity", kind="c8.decay-floor",
        statement="with heads ordered by quality and heterogeneous V_h, geometric (or Fibonacci) weights give a "
                  "faster MSE decay than uniform averaging", params=DECAY_PARAMS,
        description="V_h = h^(1/2) (heterogeneous, best first): geometric (r = 1/2) and best-first Fibonacci weights "
                    "level off at a positive floor while uniform weights decay like H^(-1/2)")
    dc = cx.data["figures"] if cx else dc
    # role: scope - mild heterogeneity (β < 1) is heterogeneous but below what the win needs: a limit
    parts.append(Part(
        id="mild heterogeneity", role=Role.SCOPE,
        statement="structured weights beat uniform for every heterogeneous quality profile",
        regime="V_h = V_1 h^β with 0 < β < 1 (here β = 1/2, r = 1/2), zero covariance, H = 32..512",
        symbolic=Symbolic.from_derivation(der, steps=["uniform_poly_order", "geom_first_weight_floor"],
                                          comparisons=["geometric_lower_mse_poly", "fibonacci_lower_mse_poly"]),
        numeric=Numeric("rounding",
                        f"V_h = h^0.5, H = {dc['H'][0]}..{dc['H'][-1]}: uniform {Wd['uniform'][0]:.4f} -> "
                        f"{Wd['uniform'][-1]:.4f} (slope {dc['final_loglog_slope']['uniform']:.3f}), geometric "
                        f"{Wd['geom'][0]:.4f} -> {Wd['geom'][-1]:.4f}", {"decay": dc}),
        counterexample=cx,
        restored_by=("β > 1, or β = 1 and r > √2 − 1 (polynomial profile; best-first Fibonacci iff β ≥ 1), q > 1 for "
                     "the exponential profile, or positively correlated heads (C_hh' = ρ sqrt(V_hV_h'), ρ > 0)") if cx else "",
        finding="for mild heterogeneity (V_h ∝ h^β, β < 1) uniform averaging wins, its MSE decays like H^(β−1)"))

    ctx.progress("reading (ii): rates in n")
    cx_r = ctx.counterexample(
        claim="C8", part="rates-in-n", kind="c8.rate-in-n",
        statement="heads ordered by consistency rate: geometric (or Fibonacci) weights give a faster MSE decay in n "
                  "than uniform averaging", params=RATE_PARAMS,
        description="heads with MSE_h = n^(−γ_h), γ = (1, 0.8, 0.6, 0.4): every fixed weighting decays at the worst "
                    "head's rate n^(−0.4)")
    rt = cx_r.data["figures"] if cx_r else judge_rates(RATE_PARAMS).figures
    lr, ar = rt["local_rate"], rt["asymptotic_rate"]
    # role: core, reading (ii) - "faster decay" read as a faster rate in n for heads of different rates
    parts.append(Part(
        id="faster decay in n", role=Role.CORE, reading="ii",
        statement="with heads ordered by consistency rate (MSE_h ∝ n^(−γ_h)), geometric or Fibonacci weights give a "
                  "faster decay of the ensemble MSE in n than uniform averaging",
        symbolic=Symbolic.from_derivation(der, steps=["rate_fixed_weights_H4", "rate_inverse_mse_weights_H4",
                                                      "geometric_constant_H4"],
                                          results=["rates_geom_over_uniform_H4"], comparisons=["faster_rate_in_n"]),
        numeric=Numeric("rounding",
                        f"γ = {RATE_PARAMS['gammas']}: asymptotic rate n^-{ar['uniform']:g} for uniform, geometric and "
                        f"Fibonacci alike (exactly the worst head's), n^-{ar['inverse']:g} only for n-adaptive "
                        f"inverse-MSE weights; local rate at n = {rt['n'][0]:.0e}: uniform {lr['uniform'][0]:.3f}, "
                        f"geometric {lr['geom'][0]:.3f}, at n = {rt['n'][-1]:.0e}: {lr['uniform'][-1]:.3f}, "
                        f"{lr['geom'][-1]:.3f}; geometric/uniform MSE → {rt['geom_over_uniform_at_largest_n']:.3g}",
                        rt),
        counterexample=cx_r,
        restored_by=("weights that adapt with n (inverse-MSE α_h ∝ n^(γ_h)/c_h reach the best head's rate); fixed "
                     "geometric weights decay faster only over a finite range of n and lower the constant "
                     f"(×{rt['geom_over_uniform_at_largest_n']:.3g} at large n), not the rate") if cx_r else "",
        finding="fixed weights all decay at the worst head's rate n^(−min γ), geometric weights only lower the constant"))

    plots_ = _plot(ctx, mc)
    summary = (f"closed forms = exact sums to {max(ce['max_rel_err_float'], ce['sums_max_rel_err_float']):.0e}, MC max "
               f"|z| {mc['max_abs_z']:.1f}; inverse-variance never beaten (min gap {op['min_rel_gap_inverse']:.1e}); "
               f"V_h = h^0.5, H {dc['H'][0]}->{dc['H'][-1]}: uniform {Wd['uniform'][0]:.3f}->{Wd['uniform'][-1]:.3f}, "
               f"geometric {Wd['geom'][0]:.3f}->{Wd['geom'][-1]:.3f} (floor {dc['geom_floor']:.2f}); in n: rate "
               f"n^-{ar['uniform']:g} for every fixed weighting")
    return ClaimResult(id="C8", title=TITLE, stated=der.stated, parts=parts, summary=summary, plots=plots_,
                       readings=[Reading("i", "in H, variances rising along the order"),
                                 Reading("ii", "in n, heads of different consistency rates")])
