"""Checks of the C7 (scaling law) and C8 (structured weights) derivations against independent
computations: brute force over divisor pairs, mpmath root finding on derivatives written here,
exact rational sums (fractions.Fraction, integer Fibonacci numbers), high-precision large-H
sums (mpmath, Hurwitz zeta) and random weight vectors (numpy, seeded).

The model formulas below are written from the model definitions (SPEC C7/C8), not taken from
the proofs modules; the modules' results are only evaluated, never reused as references.
"""

from __future__ import annotations

import itertools
from fractions import Fraction

import mpmath as mp
import numpy as np
import pytest
import sympy as sp

from proofs import derivation

#: working precision of the mpmath references (digits).
DPS = 30
#: optimum location: findroot on the derivative at 30 digits converges to ~1e-28; leave 3 digits.
OPT_RTOL = mp.mpf("1e-25")
#: stationarity residual relative to its constant term at the reference root (30-digit root).
RESID_RTOL = mp.mpf("1e-22")
#: closed forms with sqrt(5) evaluated at 50 digits against exact rationals (cancellation ~1e-10).
FIB_RTOL = mp.mpf("1e-35")
#: geometric/Fibonacci tails beyond H = 400/300 are below r^(2H) H^beta, far under this bound.
TAIL_RTOL = mp.mpf("1e-25")
#: random-weight optimality checks in float64: allow rounding of sums of ~10 terms.
OPT_ATOL = 1e-12
#: the finite-H thresholds are stored with 30 digits and bracketed to 25.
THRESHOLD_TOL = mp.mpf("1e-22")


@pytest.fixture(scope="module")
def c7():
    return derivation("C7")


@pytest.fixture(scope="module")
def c8():
    return derivation("C8")


pytestmark = pytest.mark.claim(part="derivation")  # the claim: each test's own mark or claim parameter


def _mp_fn(der, name):
    """The result as an mpmath function; numeric arguments are converted to mpf first (an int
    argument would make the printed ``2/(d + 4)`` a float division), except the summation bound H."""
    r = der.results[name]
    f = sp.lambdify(r.args, r.expr, modules="mpmath")
    keep_int = [a.name == "H" and isinstance(r.expr, sp.Basic) and r.expr.has(sp.Sum) for a in r.args]

    def g(*vals):
        return f(*[v if k else mp.mpf(v) if isinstance(v, (int, float)) else v for v, k in zip(vals, keep_int)])
    return g


# ---------------------------------------------------------------------------------------------
# C7: the model MSE written from the definitions


def mse_model(model: str, dk, n, D, d, cb, cv):
    """bias^2 = cb h^4, V = cv/(n h^s), ensemble variance V * {1, 1/H, dk/d}, H = D/dk."""
    fam, ens = model.rsplit("_", 1)
    h = dk ** mp.mpf("0.25") if fam.startswith("gauss") else 1 / mp.sqrt(dk)
    s = dk if fam == "b" else d
    V = cv / (n * h**s)
    Hh = D / dk
    factor = {"corr": 1, "orth": 1 / Hh, "frame": dk / d}[ens]
    return cb * h**4 + V * factor


def _argmin_continuous(f, lo, hi):
    """Golden-section bracket, then findroot on the numerical derivative (mp.diff)."""
    phi = (mp.sqrt(5) - 1) / 2
    a, b = mp.mpf(lo), mp.mpf(hi)
    for _ in range(60):
        c1, c2 = b - phi * (b - a), a + phi * (b - a)
        if f(c1) < f(c2):
            b = c2
        else:
            a = c1
    return mp.findroot(lambda x: mp.diff(f, x), (a + b) / 2)


def _divisors(D):
    return [k for k in range(1, D + 1) if D % k == 0]


C7_PARAMS = {
    # model: list of (n, D, d, cb, cv); orth needs D <= d, frame D > d, gauss_a_* orth/frame d > 4
    "a_corr": [(1e5, 720, 2, 1, 1), (1e7, 720, 4, 1, 1), (1e4, 5040, 2, 3, 1), (1e9, 360, 8, 1, 2)],
    "a_orth": [(1e6, 60, 64, 1e6, 1), (1e8, 48, 64, 1e9, 1), (1e6, 64, 64, 1e12, 1)],
    "a_frame": [(1e6, 720, 2, 1, 1), (1e8, 5040, 4, 1, 1), (1e5, 360, 3, 5, 1)],
    "b_corr": [(1e7, 720, 2, 1, 1), (1e20, 5040, 4, 1, 1), (1e50, 720, 2, 1, 3)],
    "b_orth": [(1e7, 48, 64, 1, 1), (1e30, 60, 64, 1, 1), (1e12, 64, 64, 2, 1)],
    "b_frame": [(1e7, 720, 2, 1, 1), (1e25, 5040, 8, 1, 1), (1e40, 360, 3, 1, 1)],
    "gauss_a_corr": [(1e2, 720, 2, 1, 1e6), (1e3, 5040, 4, 1, 1e9), (10, 360, 8, 1, 1e5)],
    "gauss_a_orth": [(1e3, 60, 64, 1, 1e9), (1e2, 48, 64, 1, 1e12), (10, 16, 16, 1, 1e4)],
    "gauss_a_frame": [(1e3, 720, 8, 1, 1e9), (1e2, 5040, 16, 1, 1e12), (10, 360, 6, 1, 1e5)],
}


def _reference_optimum(model, n, D, d, cb, cv):
    with mp.workdps(DPS):
        f = lambda x: mse_model(model, x, mp.mpf(n), D, d, mp.mpf(cb), mp.mpf(cv))  # noqa: E731
        return _argmin_continuous(f, mp.mpf("0.05"), mp.mpf(10 * D))


@pytest.mark.claim("C7", part="derivation")
@pytest.mark.parametrize("model", sorted(C7_PARAMS))
def test_c7_optimum_matches_mpmath_and_divisor_brute_force(c7, model):
    interior = 0
    for n, D, d, cb, cv in C7_PARAMS[model]:
        with mp.workdps(DPS):
            x_ref = _reference_optimum(model, n, D, d, cb, cv)
            if model.startswith("b_"):
                R = _mp_fn(c7, f"stationarity_{model}")
                resid = lambda x: R(x, mp.mpf(n), D, d, mp.mpf(cb), mp.mpf(cv))  # noqa: E731
                N = {"corr": 1, "orth": D, "frame": d}[model.rsplit("_", 1)[1]]
                scale = 4 * mp.mpf(cb) * n * N / cv
                assert abs(resid(x_ref)) <= RESID_RTOL * scale, (model, x_ref)
                assert resid(x_ref * (1 - mp.mpf("1e-8"))) < 0 < resid(x_ref * (1 + mp.mpf("1e-8")))
                x_star = x_ref          # the module's residual vanishes and changes sign there
            else:
                x_star = _mp_fn(c7, f"dk_opt_{model}")(mp.mpf(n), D, d, mp.mpf(cb), mp.mpf(cv))
                H_star = _mp_fn(c7, f"H_opt_{model}")(mp.mpf(n), D, d, mp.mpf(cb), mp.mpf(cv))
                assert abs(H_star * x_star - D) <= OPT_RTOL * D
            assert abs(x_star - x_ref) <= OPT_RTOL * x_ref, (model, n, D, d, x_star, x_ref)
            if not 1 < x_star < D:
                continue
            interior += 1
            divs = _divisors(D)
            best = min(divs, key=lambda k: mse_model(model, mp.mpf(k), mp.mpf(n), D, d, mp.mpf(cb), mp.mpf(cv)))
            below = max(k for k in divs if k <= x_star)
            above = min(k for k in divs if k >= x_star)
            assert best in (below, above), (model, n, D, d, best, below, above, x_star)
    assert interior >= 2, f"{model}: too few parameter sets with an interior optimum"


@pytest.mark.claim("C7", part="derivation")
def test_c7_closed_form_exponents_brute_force(c7):
    """d_k* of a_corr grows like n^(2/(d+4)); a_frame does not depend on D; a_orth like D^(2/(d+6))."""
    with mp.workdps(DPS):
        for d in (2, 5):
            x1 = _reference_optimum("a_corr", 1e6, 720, d, 1, 1)
            x2 = _reference_optimum("a_corr", 1e8, 720, d, 1, 1)
            assert abs(mp.log(x2 / x1) / mp.log(100) - mp.mpf(2) / (d + 4)) < OPT_RTOL * 10
        y1 = _reference_optimum("a_frame", 1e6, 360, 3, 1, 1)
        y2 = _reference_optimum("a_frame", 1e6, 5040, 3, 1, 1)
        assert abs(y1 - y2) < OPT_RTOL * y1
        z1 = _reference_optimum("a_orth", 1e6, 16, 64, 1e6, 1)
        z2 = _reference_optimum("a_orth", 1e6, 64, 64, 1e6, 1)
        assert abs(mp.log(z2 / z1) / mp.log(4) - mp.mpf(2) / 70) < OPT_RTOL * 10


@pytest.mark.claim("C7", part="derivation")
def test_c7_model_b_asymptotics():
    """d_k* log d_k* / (2 log(4 c_b n/c_v)) -> 1 (the root of model b_corr), error shrinking."""
    errs = []
    with mp.workdps(DPS):
        for k in (100, 1000, 10000):
            n = mp.mpf(10) ** k
            L = mp.log(4 * n)
            g = lambda x: (x / 2 + 3) * mp.log(x) + mp.log(mp.log(x) + 1) - L  # noqa: E731
            x = mp.findroot(g, 2 * L / mp.log(L))
            x_ref = _argmin_continuous(lambda y: mse_model("b_corr", y, n, 1, 2, 1, 1), 1, 10 * x)
            assert abs(x - x_ref) < OPT_RTOL * x
            errs.append(abs(x * mp.log(x) / (2 * L) - 1))
    assert errs[0] > errs[1] > errs[2] and errs[2] < 0.01


@pytest.mark.claim("C7", part="derivation")
def test_c7_reverse_engineered_law(c7):
    f = _mp_fn(c7, "dk_opt_reverse")
    with mp.workdps(DPS):
        for d in (1, 3, 6):
            n1, n2 = mp.mpf(10) ** 10, mp.mpf(10) ** 40
            ratio = f(n2, 100, d, 1, 1) / f(n1, 100, d, 1, 1)
            assert abs(mp.log(ratio) / mp.log(mp.log(n2) / mp.log(n1)) - mp.mpf(2) / (4 + d)) < OPT_RTOL
            mse = lambda x: 1 / x**2 + x ** (mp.mpf(d) / 2) / mp.log(n1)  # noqa: E731
            assert abs(_argmin_continuous(mse, mp.mpf("0.1"), 100) - f(n1, 100, d, 1, 1)) < OPT_RTOL * 10


# ---------------------------------------------------------------------------------------------
# C8: exact references


def fib_int(k: int) -> int:
    a, b = 0, 1
    for _ in range(k):
        a, b = b, a + b
    return a


def weights(kind: str, H: int, r: Fraction | None = None) -> list[Fraction]:
    if kind == "uniform":
        return [Fraction(1, H)] * H
    if kind == "geom":
        raw = [r**i for i in range(H)]
    elif kind == "fib_best":
        raw = [Fraction(fib_int(H + 1 - h)) for h in range(1, H + 1)]
    elif kind == "fib_worst":
        raw = [Fraction(fib_int(h)) for h in range(1, H + 1)]
    else:
        raise ValueError(kind)
    s = sum(raw)
    return [x / s for x in raw]


def W_exact(alpha, V):
    return sum(a * a * v for a, v in zip(alpha, V))


def _as_fraction(x) -> Fraction:
    x = sp.nsimplify(x) if not isinstance(x, sp.Rational) else x
    assert isinstance(x, sp.Rational), x
    return Fraction(int(x.p), int(x.q))


def _exact(der, name, **vals):
    r = der.results[name]
    return _as_fraction(r.expr.subs({a: sp.Rational(vals[a.name]) for a in r.args}))


R_VALUES = (Fraction(1, 2), Fraction(1, 3), Fraction(3, 4))
Q_VALUES = (Fraction(1, 2), Fraction(2), Fraction(3), Fraction(5, 2))
V1 = Fraction(7, 3)


@pytest.mark.claim("C8", part="derivation")
def test_c8_exponential_closed_forms_exact(c8):
    for H in range(1, 31):
        for q in Q_VALUES:
            V = [V1 * q**h for h in range(H)]
            assert _exact(c8, "W_uniform_exp", V_1=V1, q=q, H=H) == W_exact(weights("uniform", H), V)
            inv = 1 / sum(1 / v for v in V)
            assert _exact(c8, "W_inv_exp", V_1=V1, q=q, H=H) == inv
            for r in R_VALUES:
                assert _exact(c8, "W_geom_exp", V_1=V1, q=q, H=H, r=r) == W_exact(weights("geom", H, r), V)


@pytest.mark.claim("C8", part="derivation")
def test_c8_fibonacci_closed_forms_against_integers(c8):
    f_best, f_worst = _mp_fn(c8, "W_fib_best_exp"), _mp_fn(c8, "W_fib_worst_exp")
    fibo = _mp_fn(c8, "fibonacci")
    with mp.workdps(50):
        for k in range(1, 61):
            assert abs(fibo(k) - fib_int(k)) <= FIB_RTOL * fib_int(k)
        for H in range(1, 31):
            for q in Q_VALUES:
                V = [V1 * q**h for h in range(H)]
                for kind, f in (("fib_best", f_best), ("fib_worst", f_worst)):
                    ref = W_exact(weights(kind, H), V)
                    got = f(mp.mpf(V1.numerator) / V1.denominator, mp.mpf(q.numerator) / q.denominator, H)
                    assert abs(got - mp.mpf(ref.numerator) / ref.denominator) <= FIB_RTOL * abs(got), (kind, H, q)


@pytest.mark.claim("C8", part="derivation")
def test_c8_polynomial_closed_forms_exact(c8):
    for H in range(1, 31):
        for b in (1, 2):
            V = [V1 * h**b for h in range(1, H + 1)]
            assert _exact(c8, f"W_uniform_poly{b}", V_1=V1, H=H) == W_exact(weights("uniform", H), V)
            for r in R_VALUES:
                assert _exact(c8, f"W_geom_poly{b}", V_1=V1, H=H, r=r) == W_exact(weights("geom", H, r), V)


@pytest.mark.claim("C8", part="derivation")
def test_c8_finite_sum_results_exact(c8):
    names = {"W_uniform_poly": "uniform", "W_geom_poly": "geom", "W_fib_best_poly": "fib_best",
             "W_fib_worst_poly": "fib_worst"}
    funcs = {k: _mp_fn(c8, k) for k in list(names) + ["W_inv_poly"]}
    with mp.workdps(50):
        for H in (1, 2, 3, 7, 13, 30):
            for b in (0, 1, 2, 3):
                V = [V1 * h**b for h in range(1, H + 1)]
                v1 = mp.mpf(V1.numerator) / V1.denominator
                for name, kind in names.items():
                    for r in (R_VALUES if kind == "geom" else (None,)):
                        ref = W_exact(weights(kind, H, r), V)
                        args = (v1, b, H) + ((mp.mpf(r.numerator) / r.denominator,) if r else ())
                        got = funcs[name](*args)
                        assert abs(got - mp.mpf(ref.numerator) / ref.denominator) <= FIB_RTOL * abs(got), (name, H, b)
                inv = 1 / sum(1 / v for v in V)
                assert abs(funcs["W_inv_poly"](v1, b, H) - mp.mpf(inv.numerator) / inv.denominator) <= FIB_RTOL


@pytest.mark.claim("C8", part="derivation")
def test_c8_weight_vectors(c8):
    ag, afb, afw = _mp_fn(c8, "alpha_geom"), _mp_fn(c8, "alpha_fib_best"), _mp_fn(c8, "alpha_fib_worst")
    ainv = _mp_fn(c8, "alpha_inv_exp")
    with mp.workdps(50):
        for H in range(1, 31):
            for kind, f, extra in (("fib_best", afb, ()), ("fib_worst", afw, ())):
                for h, w in enumerate(weights(kind, H), start=1):
                    assert abs(f(h, H, *extra) - mp.mpf(w.numerator) / w.denominator) <= FIB_RTOL
            for r in R_VALUES:
                for h, w in enumerate(weights("geom", H, r), start=1):
                    assert abs(ag(h, H, mp.mpf(r.numerator) / r.denominator) - mp.mpf(w.numerator) / w.denominator) \
                        <= FIB_RTOL
            for q in (Fraction(2), Fraction(1, 3)):
                raw = [1 / q**h for h in range(H)]
                for h, w in enumerate(raw, start=1):
                    ref = w / sum(raw)
                    assert abs(ainv(h, H, mp.mpf(q.numerator) / q.denominator)
                               - mp.mpf(ref.numerator) / ref.denominator) <= FIB_RTOL


# ---------------------------------------------------------------------------------------------
# C8: asymptotics against large-H sums


def _power_sum(s, H):
    """sum_{h=1}^H h^s by Hurwitz zeta (analytic continuation), exact for s != -1."""
    return mp.zeta(-s) - mp.zeta(-s, H + 1)


@pytest.mark.claim("C8", part="derivation")
def test_c8_hurwitz_power_sum_matches_direct():
    with mp.workdps(DPS):
        for s in (mp.mpf("0.5"), mp.mpf(2), mp.mpf("-0.5"), mp.mpf(-2)):
            for H in (1, 5, 40):
                direct = mp.fsum(mp.power(h, s) for h in range(1, H + 1))
                assert abs(_power_sum(s, H) - direct) <= mp.mpf("1e-25") * direct


@pytest.mark.claim("C8", part="derivation")
def test_c8_uniform_and_inverse_orders():
    with mp.workdps(DPS):
        Hu = 10**4    # direct sums (mpmath's Hurwitz zeta is slow for s < 0 and large a)
        for beta in (mp.mpf("0.5"), mp.mpf("1.5"), mp.mpf(3)):
            # sum h^beta = H^(beta+1)/(beta+1) + H^beta/2 + ...: relative error ~ (beta+1)/(2H)
            w_unif = mp.fsum(mp.power(h, beta) for h in range(1, Hu + 1)) / Hu**2
            assert abs(w_unif * mp.mpf(Hu) ** (1 - beta) * (beta + 1) - 1) <= (beta + 1) / Hu
        H = mp.mpf(10) ** 8
        beta = mp.mpf("0.5")
        # sum h^-beta = H^(1-beta)/(1-beta) + zeta(beta) + ...: relative error ~ |zeta(beta)| (1-beta) H^(beta-1)
        w_inv = 1 / _power_sum(-beta, H)
        assert abs(w_inv * H ** (1 - beta) / (1 - beta) - 1) <= 2 * abs(mp.zeta(beta)) * (1 - beta) * H ** (beta - 1)
        w_inv1 = 1 / mp.harmonic(H)
        assert abs(w_inv1 * mp.log(H) - 1) <= 1 / mp.log(H)   # harmonic(H) = log H + gamma + O(1/H)
        w_inv2 = 1 / _power_sum(-2, H)
        assert abs(w_inv2 - 1 / mp.zeta(2)) <= 2 / H


@pytest.mark.claim("C8", part="derivation")
def test_c8_geometric_and_fibonacci_limits(c8):
    lim_geom = sp.lambdify(c8.results["W_geom_poly_limit"].args, c8.results["W_geom_poly_limit"].expr, "mpmath")
    with mp.workdps(DPS):
        phi = (1 + mp.sqrt(5)) / 2
        for beta in (mp.mpf("0.5"), mp.mpf(1), mp.mpf("2.5")):
            for r in (mp.mpf("0.5"), mp.mpf("0.75")):
                H = 400
                norm = (1 - r) / (1 - r**H)
                direct = mp.fsum((norm * r ** (h - 1)) ** 2 * mp.power(h, beta) for h in range(1, H + 1))
                assert abs(direct - lim_geom(1, beta, r)) <= TAIL_RTOL * direct
                assert direct >= (1 - r) ** 2   # the floor: no decay to 0
            H = 300
            tot = fib_int(H + 2) - 1
            fib_direct = mp.fsum((mp.mpf(fib_int(H + 1 - h)) / tot) ** 2 * mp.power(h, beta) for h in range(1, H + 1))
            fib_limit = phi**-2 * mp.polylog(-beta, phi**-2)
            assert abs(fib_direct - fib_limit) <= TAIL_RTOL * fib_limit
        # beta = 1: uniform -> 1/2, geometric -> 1/(1+r)^2: geometric wins iff r > sqrt(2) - 1
        H = 10**4
        w_unif = mp.mpf(H + 1) / (2 * H)
        for r, wins in ((mp.mpf("0.42"), True), (mp.mpf("0.41"), False)):
            norm = (1 - r) / (1 - r**H)
            w_geom = mp.fsum((norm * r ** (h - 1)) ** 2 * h for h in range(1, 200))
            assert (w_geom < w_unif) == wins


@pytest.mark.claim("C8", part="derivation")
def test_c8_exponential_limits(c8):
    f_geom, f_unif = _mp_fn(c8, "W_geom_exp"), _mp_fn(c8, "W_uniform_exp")
    with mp.workdps(DPS):
        for r, q in ((mp.mpf("0.5"), mp.mpf(2)), (mp.mpf("0.6"), mp.mpf("1.5"))):   # r^2 q < 1
            H = 400
            direct = mp.fsum(((1 - r) / (1 - r**H) * r ** (h - 1)) ** 2 * q ** (h - 1) for h in range(1, H + 1))
            assert abs(direct - _mp_fn(c8, "W_geom_exp_limit")(1, q, r)) <= TAIL_RTOL * direct
        q = mp.mpf(2)
        direct_fib = mp.fsum((mp.mpf(fib_int(301 - h)) / (fib_int(302) - 1)) ** 2 * q ** (h - 1) for h in range(1, 301))
        assert abs(direct_fib - _mp_fn(c8, "W_fib_best_exp_limit")(1, q)) <= TAIL_RTOL * direct_fib
        H = 400
        direct_inv = 1 / mp.fsum(q ** (1 - h) for h in range(1, H + 1))
        assert abs(direct_inv - _mp_fn(c8, "W_inv_exp_limit")(1, q)) <= TAIL_RTOL
        # q > 1 and r^2 q >= 1: geometric still wins, the ratio tends to 0
        r, q = mp.mpf("0.75"), mp.mpf(2)
        ratios = [f_geom(1, q, H, r) / f_unif(1, q, H) for H in (25, 50, 100, 200)]
        assert all(a > b for a, b in zip(ratios, ratios[1:])) and ratios[-1] < mp.mpf("1e-15")


# ---------------------------------------------------------------------------------------------
# C8: optimality against random weights


@pytest.mark.claim("C8", part="derivation")
def test_c8_inverse_variance_never_beaten():
    rng = np.random.default_rng(20260521)
    for _ in range(200):
        H = int(rng.integers(2, 12))
        V = rng.uniform(0.1, 10.0, H)
        best = 1.0 / np.sum(1.0 / V)
        alpha = rng.normal(size=H)
        alpha += (1.0 - alpha.sum()) / H
        assert np.sum(alpha**2 * V) >= best - OPT_ATOL
        # with a random positive definite covariance: alpha* = C^-1 1 / (1^T C^-1 1)
        A = rng.normal(size=(H, H))
        C = A @ A.T + 0.1 * np.eye(H)
        x = np.linalg.solve(C, np.ones(H))
        W_star = 1.0 / x.sum()
        assert alpha @ C @ alpha >= W_star - OPT_ATOL * max(1.0, W_star)
        a_star = x / x.sum()
        assert abs(a_star @ C @ a_star - W_star) <= OPT_ATOL * max(1.0, W_star)


@pytest.mark.claim("C8", part="derivation")
def test_c8_two_head_covariance_optimum(c8):
    f_W, f_a = _mp_fn(c8, "W_opt_cov_H2"), _mp_fn(c8, "alpha1_opt_cov_H2")
    rng = np.random.default_rng(5)
    for _ in range(50):
        v1, v2 = rng.uniform(0.5, 4.0, 2)
        c12 = rng.uniform(-0.9, 0.9) * np.sqrt(v1 * v2)
        grid = np.linspace(-3, 4, 70001)
        Wg = grid**2 * v1 + (1 - grid) ** 2 * v2 + 2 * grid * (1 - grid) * c12
        i = int(np.argmin(Wg))
        assert abs(float(f_a(v1, v2, c12)) - grid[i]) <= 2e-4      # grid step 1e-4
        assert float(f_W(v1, v2, c12)) <= Wg[i] + OPT_ATOL
        assert Wg[i] - float(f_W(v1, v2, c12)) <= 1e-7             # quadratic: (step)^2 * curvature


@pytest.mark.claim("C8", part="derivation")
def test_c8_uniform_optimal_for_equal_variance():
    rng = np.random.default_rng(11)
    for _ in range(200):
        H = int(rng.integers(1, 15))
        V = rng.uniform(0.1, 5.0)
        alpha = rng.normal(size=H)
        alpha += (1.0 - alpha.sum()) / H
        assert np.sum(alpha**2) * V >= V / H - OPT_ATOL


# ---------------------------------------------------------------------------------------------
# C8: finite-H thresholds


def _threshold_reference(alpha):
    H = len(alpha)
    c = [mp.mpf(a.numerator) ** 2 / mp.mpf(a.denominator) ** 2 - mp.mpf(1) / H**2 for a in alpha]
    g = lambda b: mp.fsum(c[i] * mp.power(i + 1, b) for i in range(H))  # noqa: E731
    lo, hi = mp.mpf(0), mp.mpf(1)
    while g(hi) > 0:
        hi *= 2
    for _ in range(110):                   # bisection: 2^-110 ~ 1e-33
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if g(mid) > 0 else (lo, mid)
    return (lo + hi) / 2


@pytest.mark.claim("C8", part="derivation")
def test_c8_threshold_tables(c8):
    tab_g = c8.results["beta_star_geom_table"].expr
    tab_f = c8.results["beta_star_fib_table"].expr
    resid = _mp_fn(c8, "threshold_geom_poly")
    with mp.workdps(DPS + 5):
        for i in range(tab_g.rows):
            H, r, b_star = int(tab_g[i, 0]), tab_g[i, 1], mp.mpf(str(tab_g[i, 2]))
            ref = _threshold_reference(weights("geom", H, Fraction(int(r.p), int(r.q))))
            assert abs(b_star - ref) <= THRESHOLD_TOL, (H, r, b_star, ref)
            assert abs(resid(ref, H, mp.mpf(r.p) / r.q)) <= mp.mpf("1e-20")
        for i in range(tab_f.rows):
            H, b_star = int(tab_f[i, 0]), mp.mpf(str(tab_f[i, 1]))
            ref = _threshold_reference(weights("fib_best", H))
            assert abs(b_star - ref) <= THRESHOLD_TOL, (H, b_star, ref)
    # the direct comparison on both sides of a threshold (exact rationals, integer beta near it)
    rows = {(int(tab_g[i, 0]), tab_g[i, 1]): float(tab_g[i, 2]) for i in range(tab_g.rows)}
    for H, r in itertools.product((4, 16), (Fraction(1, 4), Fraction(1, 2), Fraction(3, 4))):
        alpha = weights("geom", H, r)
        for b in (0, 1, 3):
            V = [Fraction(h) ** b for h in range(1, H + 1)]
            geom_wins = W_exact(alpha, V) < W_exact(weights("uniform", H), V)
            assert geom_wins == (b > rows[(H, sp.Rational(r.numerator, r.denominator))]), (H, r, b)


C8_DECISIONS = {
    "faster_rate_in_n": (False, "refuted_by rates_in_n"),
    "faster_decay_geometric": (False, "refuted_by geometric_floor"),
    "faster_decay_fibonacci": (False, "refuted_by fibonacci_floor"),
    "geometric_lower_mse_poly": (False, "refuted_by uniform_wins_mild"),
    "fibonacci_lower_mse_poly": (False, "refuted_by uniform_wins_mild"),
    "lower_mse_exp": (True, "supported_by exp_profile"),
    "lower_mse_correlated": (True, "supported_by correlated"),
    "uniform_optimal_equal_V": (True, "supported_by uniform_equal_V"),
    "inverse_variance_optimal": (True, "supported_by inverse_variance"),
}


@pytest.mark.claim("C8", part="derivation")
def test_c8_comparisons_decided_by_their_groups(c8):
    """Each finding is decided by a group whose steps prove the fact: the floors' positivity
    certificates sit in the groups that refute "decay", uniform's decay for β < 1 in the one that
    refutes "lower MSE" for mild heterogeneity."""
    assert {c.name: (c.holds, c.decided_by) for c in c8.comparisons} == C8_DECISIONS
    g = c8.groups
    assert {"geom_first_weight_floor", "geom_floor_positive"} <= set(g["geometric_floor"].steps)
    assert {"fib_weight_limit", "fib_best_poly_limit", "fib_floor_positive"} <= set(g["fibonacci_floor"].steps)
    assert set(g["uniform_orders"].steps) | set(g["geometric_floor"].steps) | set(g["fibonacci_floor"].steps) \
        == set(g["uniform_wins_mild"].steps)
    assert "uniform_poly_decays_mild" in g["uniform_orders"].steps
    steps = {s.name: s for s in c8.steps}
    # the floors, as proved: (1 − r)² V_1 with r = 1/(1+t), and V_1/φ⁴
    r_, t_, V1_ = sp.Symbol("r", positive=True), sp.Symbol("t", positive=True), sp.Symbol("V_1", positive=True)
    floor = steps["geom_floor_positive"].relation.lhs
    assert sp.simplify(floor - ((1 - r_) ** 2 * V1_).subs(r_, 1 / (1 + t_))) == 0
    phi = (1 + sp.sqrt(5)) / 2
    assert sp.simplify(steps["fib_floor_positive"].relation.lhs - V1_ / phi**4) == 0


@pytest.mark.claim("C8", part="derivation")
def test_c8_reading_ii_rate_and_constant(c8):
    """Reading ii: the derived rate of fixed weights is the worst head's, n^(−min γ), the n-adaptive
    one the best head's, and the geometric/uniform constant is 16/225, from fractions here."""
    steps = {s.name: s for s in c8.steps}
    gammas = [Fraction(1), Fraction(4, 5), Fraction(3, 5), Fraction(2, 5)]
    assert _as_fraction(steps["rate_fixed_weights_H4"].relation.rhs) == -min(gammas)
    assert _as_fraction(steps["rate_inverse_mse_weights_H4"].relation.rhs) == -max(gammas)
    same = steps["rates_geometric_uniform_same_H4"].relation.rhs
    assert [_as_fraction(x) for x in same] == [-min(gammas)] * 2
    geom = weights("geom", 4, Fraction(1, 2))
    const = (geom[-1] / Fraction(1, 4)) ** 2              # the worst head dominates both sums
    assert const == Fraction(16, 225)
    assert _as_fraction(c8.results["rates_geom_over_uniform_H4"].expr) == const
    assert _as_fraction(steps["geometric_constant_H4"].relation.rhs) == const
    # the check's counterexample uses the derivation's rates
    from verify.claims import c8 as check8

    assert check8.RATE_PARAMS["gammas"] == [float(g) for g in gammas]


@pytest.mark.claim("C8", part="derivation")
def test_c8_beta_1_threshold_is_sqrt2_minus_1(c8):
    """β = 1: the derived threshold r* solves (1 + r)² = 2 (computed here), and W_geom → V_1/(1 + r)²
    against W_unif → V_1/2 gives geometric wins exactly above it."""
    steps = {s.name: s for s in c8.steps}
    r_star = steps["geom_beats_uniform_beta1"].relation.rhs
    assert sp.simplify(r_star - (sp.sqrt(2) - 1)) == 0
    with mp.workdps(40):
        rs = mp.sqrt(2) - 1
        assert abs((1 + rs) ** 2 - 2) <= mp.mpf(10) ** -38
        for r, wins in ((rs - mp.mpf(10) ** -6, False), (rs + mp.mpf(10) ** -6, True)):
            assert (1 / (1 + r) ** 2 < mp.mpf(1) / 2) is wins


C7_DECISIONS = {
    "bandwidth_convention": (False, "refuted_by bandwidth"),
    **{f"law_{m}": (False, f"refuted_by law_{m}") for m in ("a_corr", "a_orth", "a_frame", "b_corr", "b_orth",
                                                           "b_frame", "gauss_a_corr", "gauss_a_orth", "gauss_a_frame")},
    "H_nearly_linear": (True, "supported_by H_nearly_linear"),
    "reverse_engineered_law": (True, "supported_by law_reverse"),
    "more_heads_for_large_n": (False, "refuted_by dk_grows_in_n"),
}


@pytest.mark.claim("C7", part="derivation")
def test_c7_comparisons_decided_by_their_groups(c7):
    """Each finding is decided by the group whose steps prove it: a positive (models (a)) or negative
    (Gaussian models) exponent of n with its log-log limit, the limit 1 > 2/(4+d) (models (b)), the
    exponents of D below 1 and tending to 1, the two bandwidths at d_k = 16."""
    assert {c.name: (c.holds, c.decided_by) for c in c7.comparisons} == C7_DECISIONS
    g = c7.groups
    for m in ("a_corr", "a_orth", "a_frame"):
        assert set(g[f"law_{m}"].steps) == {f"{m}_exponent_n", f"{m}_exponent_positive", f"{m}_beats_loglog"}
    for m in ("b_corr", "b_orth", "b_frame"):
        assert set(g[f"law_{m}"].steps) == {"b_asymptotic_root", "b_growth_loglog", "b_loglog_exponent_not_stated"}
    for m in ("gauss_a_corr", "gauss_a_orth", "gauss_a_frame"):
        assert set(g[f"law_{m}"].steps) == {f"{m}_exponent_n", f"{m}_exponent_negative"}
    assert {"a_orth_H_exponent_below_1", "a_orth_H_exponent_to_1", "b_optimum_free_of_D"} <= set(
        g["H_nearly_linear"].steps)
    steps = {s.name: s for s in c7.steps}
    d = sp.Symbol("d", integer=True, positive=True)
    assert sp.simplify(steps["b_loglog_exponent_not_stated"].relation.rhs - 2 / (4 + d)) == 0   # the stated one
    assert steps["a_corr_beats_loglog"].relation.rhs == sp.oo


@pytest.mark.claim("C7", part="derivation")
def test_c7_exponent_tables_against_own_optima(c7):
    """EXPONENT_N, EXPONENT_D (which the check quotes) are the checked steps' right-hand sides, and
    equal the slopes of optima of the MSE written here (golden section and findroot, 30 digits)."""
    from proofs import c7_scaling as mod

    steps = {s.name: s for s in c7.steps}
    dsym = sp.Symbol("d", integer=True, positive=True)
    for m, e in mod.EXPONENT_N.items():
        assert sp.simplify(steps[f"{m}_exponent_n"].relation.rhs - e) == 0
    for m, e in mod.EXPONENT_D.items():
        assert sp.simplify(steps[f"{m}_H_exponent_D"].relation.rhs - e) == 0
    assert sp.simplify(steps["reverse_exponent_logn"].relation.rhs - mod.REVERSE_EXPONENT_LOG_N) == 0
    with mp.workdps(DPS):
        for m in mod.EXPONENT_N:
            d = 10
            D = {"corr": 720, "orth": 10, "frame": 60}[m.rsplit("_", 1)[1]]
            cv = 1e9 if m.startswith("gauss") else 10          # an interior optimum inside the search bracket
            x1, x2 = (_reference_optimum(m, n, D, d, 1, cv) for n in (1e6, 1e8))
            slope = mp.log(x2 / x1) / mp.log(100)
            e_n, e_D = (sp.Rational(t[m].subs(dsym, d)) for t in (mod.EXPONENT_N, mod.EXPONENT_D))
            assert abs(slope - mp.mpf(e_n.p) / e_n.q) <= 1e-20, m
            D1, D2 = {"corr": (360, 720), "orth": (5, 10), "frame": (30, 60)}[m.rsplit("_", 1)[1]]
            H1, H2 = D1 / _reference_optimum(m, 1e6, D1, d, 1, cv), D2 / _reference_optimum(m, 1e6, D2, d, 1, cv)
            assert abs(mp.log(H2 / H1) / mp.log(2) - mp.mpf(e_D.p) / e_D.q) <= 1e-20, m


@pytest.mark.claim("C7", part="derivation")
def test_c7_model_names_are_defined_once():
    from proofs import c7_scaling as mod
    from verify.experiments.allocate import MODELS

    assert set(mod.MODEL_NAMES) == set(MODELS) and set(mod.STANDARD_MODELS) == set(MODELS) - {"reverse"}


@pytest.mark.claim("C7", part="derivation")
def test_c7_each_candidate_model_takes_one_option_of_each_alternative(c7):
    """The alternatives C7 declares (an assumption's ``choice``) are options, not joint conditions:
    every model's MSE rests on exactly one option of each group, and every option is some model's."""
    groups: dict[str, set[str]] = {}
    for name, a in c7.assumptions.items():
        if a.choice:
            groups.setdefault(a.choice, set()).add(name)
    assert groups and all(len(options) > 1 for options in groups.values())
    used: set[str] = set()
    for name, r in c7.results.items():
        if name.startswith("mse_"):
            assert all(len(options & set(r.uses)) == 1 for options in groups.values()), name
            used |= set(r.uses)
    assert set().union(*groups.values()) <= used
