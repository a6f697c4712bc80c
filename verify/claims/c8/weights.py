"""C8's weight schemes and ``W(α) = Σ α_h² V_h``, from the generated code: ``uniform`` (1/H), ``geom``
(``∝ r^(h−1)``), ``fib_best`` (``∝ F_{H+1−h}``, largest weight on the best head), ``fib_worst`` (``∝ F_h``) and
``inverse`` (``∝ 1/V_h``), heads ordered best first under ``V_h = V_1 h^β`` (``poly``) or ``V_1 q^(h−1)``
(``exp``). :func:`closed_form` evaluates the derived ``c8_W_*`` (closed forms or generated finite sums).
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any

import mpmath
import numpy as np

from verify._validate import as_array, fail, one_of, positive_int, positive_number
from verify.numeric import formulas

SCHEMES = ("uniform", "geom", "fib_best", "fib_worst", "inverse")
#: Above this H the float64 Binet forms overflow (phi^1475 > 1.8e308): mpmath is used instead.
FLOAT_FIB_MAX_H = 700
#: Digits of the mpmath evaluations (``mp=True`` and Fibonacci weights beyond FLOAT_FIB_MAX_H).
MP_DPS = 30


_F = formulas
#: The generated best-first and worst-first Fibonacci weights (float64, mpmath).
_FIB = {"fib_best": (_F.c8_alpha_fib_best, _F.c8_alpha_fib_best_mp),
        "fib_worst": (_F.c8_alpha_fib_worst, _F.c8_alpha_fib_worst_mp)}
#: The generated W per (scheme, form) in float64 and mpmath: ``exp`` (args V_1, q, H), ``poly`` (V_1, β, H),
#: ``poly1``/``poly2`` (V_1, H: the closed forms at β = 1, 2); geometric forms take r last.
_W = {
    ("uniform", "exp"): (_F.c8_W_uniform_exp, _F.c8_W_uniform_exp_mp),
    ("geom", "exp"): (_F.c8_W_geom_exp, _F.c8_W_geom_exp_mp),
    ("fib_best", "exp"): (_F.c8_W_fib_best_exp, _F.c8_W_fib_best_exp_mp),
    ("fib_worst", "exp"): (_F.c8_W_fib_worst_exp, _F.c8_W_fib_worst_exp_mp),
    ("inverse", "exp"): (_F.c8_W_inv_exp, _F.c8_W_inv_exp_mp),
    ("uniform", "poly"): (_F.c8_W_uniform_poly, _F.c8_W_uniform_poly_mp),
    ("geom", "poly"): (_F.c8_W_geom_poly, _F.c8_W_geom_poly_mp),
    ("fib_best", "poly"): (_F.c8_W_fib_best_poly, _F.c8_W_fib_best_poly_mp),
    ("fib_worst", "poly"): (_F.c8_W_fib_worst_poly, _F.c8_W_fib_worst_poly_mp),
    ("inverse", "poly"): (_F.c8_W_inv_poly, _F.c8_W_inv_poly_mp),
    ("uniform", "poly1"): (_F.c8_W_uniform_poly1, _F.c8_W_uniform_poly1_mp),
    ("uniform", "poly2"): (_F.c8_W_uniform_poly2, _F.c8_W_uniform_poly2_mp),
    ("geom", "poly1"): (_F.c8_W_geom_poly1, _F.c8_W_geom_poly1_mp),
    ("geom", "poly2"): (_F.c8_W_geom_poly2, _F.c8_W_geom_poly2_mp),
}


def fib_int(k: int) -> int:
    """The Fibonacci number F_k in integers (F_0 = 0, F_1 = F_2 = 1)."""
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
    one_of("scheme", scheme, SCHEMES)
    h = np.arange(1, H + 1, dtype=float)
    if scheme == "uniform":
        return np.full(H, 1.0 / H)
    if scheme == "geom":
        r = positive_number("r", r)
        if r >= 1:
            raise fail("r", repr(r), "a ratio 0 < r < 1")
        return np.asarray(formulas.c8_alpha_geom(h, H, r), dtype=float)
    if scheme in ("fib_best", "fib_worst"):
        f, f_mp = _FIB[scheme]
        if H <= FLOAT_FIB_MAX_H:
            return np.asarray(f(h, H), dtype=float)
        with mpmath.workdps(MP_DPS):
            return np.array([float(f_mp(k, H)) for k in range(1, H + 1)])
    if scheme == "inverse":
        V = as_array("V", V, ndim=1)
        if V.shape != (H,) or np.any(V <= 0):
            raise fail("V", f"shape {V.shape} (min {V.min() if V.size else 'n/a'})", f"{H} positive variances")
        return (1 / V) / np.sum(1 / V)
    raise AssertionError(scheme)  # pragma: no cover - every scheme is handled above


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


def _form(scheme: str, profile: str, param: float) -> str:
    """Which generated form gives W: the exponential profile's, the closed forms at β = 1, 2 (uniform and
    geometric weights), else the generated finite sum."""
    if profile == "exp":
        return "exp"
    return f"poly{int(param)}" if scheme in ("uniform", "geom") and param in (1, 2) else "poly"


def closed_form(scheme: str, profile: str, H: int, V_1: float, param: float, r: float = 0.5, *,
                mp: bool = False) -> Any:
    """W of ``scheme`` for the profile from the generated code: the closed forms (exponential
    profile; β = 1, 2 for uniform/geometric) or the generated finite sums (other β). ``mp=True``
    evaluates the ``_mp`` variant at max(current mpmath precision, MP_DPS digits) (also used for
    Fibonacci weights beyond :data:`FLOAT_FIB_MAX_H`, where float64 Binet powers overflow)."""
    one_of("scheme", scheme, SCHEMES)
    if profile not in ("poly", "exp"):
        raise fail("profile", repr(profile), "'poly' or 'exp'")
    H = positive_int("H", H)
    form = _form(scheme, profile, param)
    use_mp = mp or (scheme.startswith("fib") and H > FLOAT_FIB_MAX_H)
    f = _W[scheme, form][use_mp]
    args = ((V_1, H) if form in ("poly1", "poly2") else (V_1, param, H)) + ((r,) if scheme == "geom" else ())
    if use_mp:
        with mpmath.workdps(max(mpmath.mp.dps, MP_DPS)):
            val = f(*[a if isinstance(a, int) else mpq(a) for a in args])
        return val if mp else float(val)
    return float(f(*args))


def mpq(x: Any) -> mpmath.mpf:
    """A Fraction, float or mpf as an mpf at the current precision (a Fraction exactly rounded)."""
    return mpmath.mpf(x.numerator) / x.denominator if isinstance(x, Fraction) else mpmath.mpf(x)
