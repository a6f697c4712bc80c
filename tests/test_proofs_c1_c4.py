"""Derivations C1-C4: they build and check, their results agree with independent computations
(torch attention, statsmodels Gaussian NW, exact enumeration, mpmath, scipy principal angles),
their findings agree with what those computations show, and their checkers reject false steps."""

from __future__ import annotations

import itertools
import random
from fractions import Fraction

import mpmath
import numpy as np
import pytest
import scipy.linalg
import sympy as sp
import torch
from hypothesis import given
from hypothesis import strategies as st

from proofs import derivation
from proofs.c3_decomposition import head_symbols
from proofs.core import Derivation
from proofs.notation import to_latex

#: float64 comparisons of closed forms against torch/statsmodels/scipy: a few dozen roundings.
FLOAT_TOL = 1e-12
#: mpmath runs at 60 digits; the claim is agreement to at least 50.
MP_DIGITS = 60
MP_TOL = mpmath.mpf(10) ** -50
SEED = 20260521

pytestmark = pytest.mark.claim(part="derivation")  # the claim: each test's own mark or claim parameter


def fn(claim: str, name: str, modules="numpy"):
    """The result ``name`` of ``claim`` as a function of its declared args (plain lambdify)."""
    r = derivation(claim).results[name]
    return sp.lambdify(r.args, r.expr, modules=modules)


def exact(claim: str, name: str, values: dict):
    """The result evaluated exactly: every arg replaced by a sympy Rational."""
    r = derivation(claim).results[name]
    return r.expr.xreplace({a: sp.Rational(values[str(a)]) for a in r.args})


def finding(claim: str, name: str):
    return next(c for c in derivation(claim).comparisons if c.name == name)


# -- C1: softmax head = NW -----------------------------------------------------------------------
def _softmax_loop(q, keys, ys, s):
    """mpmath reference: stable softmax (max subtracted) of s q·k_i, then the weighted mean."""
    z = [s * sum(a * b for a, b in zip(q, k)) for k in keys]
    m = max(z)
    e = [mpmath.exp(zi - m) for zi in z]
    return sum(ei * yi for ei, yi in zip(e, ys)) / sum(e)


@pytest.mark.claim("C1", part="derivation")
def test_c1_attention_estimate_matches_mpmath_loop_and_torch():
    rng = random.Random(SEED)
    f_mp = fn("C1", "attention_estimate_n3", "mpmath")
    f_np = fn("C1", "attention_estimate_n3")
    with mpmath.workdps(MP_DIGITS):
        for _ in range(5):
            q = [mpmath.mpf(rng.uniform(-2, 2)) for _ in range(2)]
            keys = [[mpmath.mpf(rng.uniform(-2, 2)) for _ in range(2)] for _ in range(3)]
            ys = [mpmath.mpf(rng.uniform(-1, 1)) for _ in range(3)]
            s = 1 / mpmath.sqrt(2)
            got = f_mp(*q, *[c for k in keys for c in k], *ys, s)
            assert abs(got - _softmax_loop(q, keys, ys, s)) < MP_TOL
            tq = torch.tensor([[[float(x) for x in q]]], dtype=torch.float64)
            tk = torch.tensor([[[float(x) for x in k] for k in keys]], dtype=torch.float64)
            tv = torch.tensor([[[float(y)] for y in ys]], dtype=torch.float64)
            ref = torch.nn.functional.scaled_dot_product_attention(tq, tk, tv).item()
            val = f_np(*[float(x) for x in q], *[float(c) for k in keys for c in k],
                       *[float(y) for y in ys], float(s))
            assert abs(val - ref) < FLOAT_TOL


def _gauss_nw_statsmodels(keys, ys, q, b):
    from statsmodels.nonparametric.kernel_regression import KernelReg

    keys = np.asarray(keys, dtype=float)
    kr = KernelReg(endog=np.asarray(ys, float), exog=keys, var_type="c" * keys.shape[1], reg_type="lc",
                   bw=[b] * keys.shape[1])
    return float(kr.fit(data_predict=np.asarray(q, float)[None, :])[0][0])


@pytest.mark.claim("C1", part="derivation")
@pytest.mark.filterwarnings("ignore::FutureWarning")
def test_c1_gaussian_nw_result_matches_statsmodels():
    rng = np.random.default_rng(SEED)
    f = fn("C1", "gaussian_nw_estimate_n3")
    for _ in range(4):
        keys, ys, q, b = rng.normal(size=(3, 2)), rng.normal(size=3), rng.normal(size=2), rng.uniform(0.5, 2)
        assert abs(f(*q, *keys.ravel(), *ys, b) - _gauss_nw_statsmodels(keys, ys, q, b)) < FLOAT_TOL


@pytest.mark.claim("C1", part="derivation")
@pytest.mark.filterwarnings("ignore::FutureWarning")
@pytest.mark.parametrize("dk", [1, 2, 4, 9])
def test_c1_equal_norm_softmax_is_gaussian_nw_with_bandwidth_dk_quarter(dk):
    """torch softmax attention on equal-norm keys vs statsmodels Gaussian NW, general d_k."""
    rng = np.random.default_rng(SEED + dk)
    n = 7
    keys = rng.normal(size=(n, dk))
    keys *= 1.3 / np.linalg.norm(keys, axis=1, keepdims=True)          # all |k_i| = 1.3
    ys, q = rng.normal(size=n), rng.normal(size=dk)
    att = torch.nn.functional.scaled_dot_product_attention(
        torch.tensor(q[None, None, :]), torch.tensor(keys[None]), torch.tensor(ys[None, :, None])).item()
    b = fn("C1", "gaussian_bandwidth")(dk)
    assert b == pytest.approx(dk**0.25, rel=FLOAT_TOL)
    assert fn("C1", "bandwidth_from_scale")(1 / np.sqrt(dk)) == pytest.approx(b, rel=FLOAT_TOL)
    assert abs(att - _gauss_nw_statsmodels(keys, ys, q, b)) < FLOAT_TOL
    stated = 1 / np.sqrt(dk)
    matches_stated = abs(att - _gauss_nw_statsmodels(keys, ys, q, stated)) < FLOAT_TOL
    # the finding "h = 1/sqrt(d_k) is not the Gaussian bandwidth" is what the numbers show for d_k > 1
    if dk > 1:
        assert matches_stated == finding("C1", "stated_bandwidth").holds


@pytest.mark.claim("C1", part="derivation")
@pytest.mark.filterwarnings("ignore::FutureWarning")
def test_c1_unequal_norms_shifted_scores_and_counterexample():
    rng = np.random.default_rng(SEED)
    keys, ys, q, b = rng.normal(size=(5, 3)), rng.normal(size=5), rng.normal(size=3), 1.1
    score = fn("C1", "gaussian_softmax_score")
    z = np.array([score(q @ k, k @ k, b) for k in keys])
    w = np.exp(z - z.max())
    assert abs((w @ ys) / w.sum() - _gauss_nw_statsmodels(keys, ys, q, b)) < FLOAT_TOL
    # the saved counterexample, recomputed by brute force (d_k = 4, q = e_1, k = (0, 2e_1), y = (0, 1))
    soft, gauss = derivation("C1").results["counterexample"].expr
    qc, kc, yc = np.eye(4)[0], np.array([np.zeros(4), 2 * np.eye(4)[0]]), np.array([0.0, 1.0])
    att = torch.nn.functional.scaled_dot_product_attention(
        torch.tensor(qc[None, None]), torch.tensor(kc[None]), torch.tensor(yc[None, :, None])).item()
    assert abs(float(soft) - att) < FLOAT_TOL
    assert abs(float(gauss) - _gauss_nw_statsmodels(kc, yc, qc, 4**0.25)) < FLOAT_TOL
    assert (abs(att - float(gauss)) < FLOAT_TOL) == finding("C1", "gaussian_needs_equal_key_norms").holds


# -- C2: MHA = ensemble ---------------------------------------------------------------------------
@pytest.mark.claim("C2", part="derivation")
def test_c2_scalar_ensemble_reproduces_torch_multihead_attention():
    """torch MHA (H = 2, d_k = d_v = 2, scalar values) vs Σ_h α_h f̂_h + β built from C1 and C2 results,
    with head estimates from C1's formula (key bias left out: it cancels)."""
    torch.manual_seed(SEED)
    E, Hh, dk = 4, 2, 2
    mha = torch.nn.MultiheadAttention(E, Hh, kdim=3, vdim=1, batch_first=True, dtype=torch.float64)
    with torch.no_grad():
        mha.in_proj_bias.normal_()
        mha.out_proj.bias.normal_()
    x, xs, ys = torch.randn(1, 1, E, dtype=torch.float64), torch.randn(1, 3, 3, dtype=torch.float64), \
        torch.randn(1, 3, 1, dtype=torch.float64)
    with torch.no_grad():
        out, attn = mha(x, xs, ys, need_weights=True, average_attn_weights=False)
    Wq, Wk, Wv = mha.q_proj_weight.detach(), mha.k_proj_weight.detach(), mha.v_proj_weight.detach()
    bias, Wo, bo = mha.in_proj_bias.detach(), mha.out_proj.weight.detach(), mha.out_proj.bias.detach()
    att = fn("C1", "attention_estimate_n3")
    ens = derivation("C2").results["mha_scalar_h2_n3"]
    ens_f = sp.lambdify(ens.args, ens.expr)
    y = ys[0, :, 0].numpy()
    for o in range(E):                                        # each output coordinate is scalar
        vals = {"y_1": y[0], "y_2": y[1], "y_3": y[2], "b_O": bo[o].item()}
        for h in range(Hh):
            blk = slice(h * dk, (h + 1) * dk)
            q = (Wq[blk] @ x[0, 0] + bias[blk]).numpy()
            keys = (xs[0] @ Wk[blk].T).numpy()                # no key bias
            w = attn[0, h, 0].numpy()
            assert np.allclose(w[:2], [att(*q, *keys.ravel(), *np.eye(3)[i], 1 / np.sqrt(dk)) for i in range(2)],
                               atol=FLOAT_TOL, rtol=0)
            vals.update({f"w_{h+1}_1": w[0], f"w_{h+1}_2": w[1]})
            for c in range(dk):
                vals[f"WV{h+1}_1{c+1}"] = Wv[h * dk + c, 0].item()
                vals[f"WO{h+1}_{c+1}1"] = Wo[o, h * dk + c].item()
                vals[f"bV{h+1}_{c+1}"] = bias[2 * E + h * dk + c].item()
        got = ens_f(*[vals[str(a)] for a in ens.args])
        assert abs(got - out[0, 0, o].item()) < FLOAT_TOL


@pytest.mark.claim("C2", part="derivation")
def test_c2_vector_form_equals_concat_then_project_exactly():
    rng = random.Random(SEED)
    r = derivation("C2").results["mha_vector_h2"]
    vals = {s: sp.Rational(rng.randint(-9, 9), rng.randint(1, 9)) for s in r.expr.free_symbols}
    nm = {str(s): Fraction(int(v.p), int(v.q)) for s, v in vals.items()}
    got = [Fraction(int(e.p), int(e.q)) for e in r.expr.xreplace(vals)]
    # brute force: per-head weighted values with bias, concatenate, multiply by stacked W_O, add b_O
    concat = []
    for h in (1, 2):
        w = [nm[f"w_{h}_1"], nm[f"w_{h}_2"], 1 - nm[f"w_{h}_1"] - nm[f"w_{h}_2"]]
        for c in (1, 2):
            concat.append(sum(w[i - 1] * (sum(nm[f"WV{h}_{a}{c}"] * nm[f"v_{i}{a}"] for a in (1, 2))
                                         + nm[f"bV{h}_{c}"]) for i in (1, 2, 3)))
    wo_rows = [(h, c) for h in (1, 2) for c in (1, 2)]
    expect = [sum(nm[f"WO{h}_{c}{o}"] * concat[k] for k, (h, c) in enumerate(wo_rows)) + nm[f"bO_{o}"]
              for o in (1, 2)]
    assert got == expect


# -- C3: decomposition ----------------------------------------------------------------------------
def _enumerated_mse(alpha, mu, L, f):
    """E[(αᵀF - f)²] with F = μ + Lξ, ξ uniform on {-1,1}^H (E ξ = 0, E ξξᵀ = I): exact enumeration."""
    H = len(alpha)
    tot = 0
    for xi in itertools.product((-1, 1), repeat=H):
        F = [mu[h] + sum(L[h][k] * xi[k] for k in range(H)) for h in range(H)]
        tot += (sum(a * x for a, x in zip(alpha, F)) - f) ** 2
    return tot / 2**H


def _cov(L):
    H = len(L)
    return [[sum(L[a][k] * L[b][k] for k in range(H)) for b in range(H)] for a in range(H)]


def _c3_values(alpha, mu, f, C):
    H = len(alpha)
    v = {f"alpha_{h+1}": alpha[h] for h in range(H)} | {f"mu_{h+1}": mu[h] for h in range(H)} | {"f": f}
    v |= {f"C_{a+1}{b+1}": C[a][b] for a in range(H) for b in range(a, H)}
    return v


@pytest.mark.claim("C3", part="derivation")
@pytest.mark.parametrize("H", range(1, 7))
def test_c3_mse_exact_against_enumeration(H):
    rng = random.Random(SEED + H)
    frac = lambda: Fraction(rng.randint(-20, 20), rng.randint(1, 12))  # noqa: E731
    alpha = [frac() for _ in range(H)]                       # any weights, Σα ≠ 1 in general
    mu, f = [frac() for _ in range(H)], frac()
    L = [[frac() if k <= h else Fraction(0) for k in range(H)] for h in range(H)]
    C = _cov(L)
    vals = _c3_values(alpha, mu, f, C)
    assert exact("C3", f"mse_h{H}", vals) == sp.Rational(_enumerated_mse(alpha, mu, L, f))
    assert exact("C3", f"ensemble_bias_h{H}", vals) == sp.Rational(sum(a * m for a, m in zip(alpha, mu)) - f)


@pytest.mark.claim("C3", part="derivation")
@given(st.lists(st.fractions(min_value=-5, max_value=5, max_denominator=20), min_size=13, max_size=13))
def test_c3_h3_any_alpha_property(xs):
    alpha, mu, f = xs[0:3], xs[3:6], xs[6]
    L = [[xs[7], 0, 0], [xs[8], xs[9], 0], [xs[10], xs[11], xs[12]]]
    vals = _c3_values(alpha, mu, f, _cov(L))
    assert exact("C3", "mse_h3", vals) == sp.Rational(_enumerated_mse(alpha, mu, L, f))


@pytest.mark.claim("C3", part="derivation")
@pytest.mark.parametrize("H", [2, 3, 5])
def test_c3_mpmath_50_digits_and_ueda_nakano(H):
    rng = random.Random(SEED * H)
    with mpmath.workdps(MP_DIGITS):
        r = lambda: mpmath.mpf(rng.uniform(-3, 3)) / 7  # noqa: E731
        alpha, mu, f = [r() for _ in range(H)], [r() for _ in range(H)], r()
        L = [[r() if k <= h else mpmath.mpf(0) for k in range(H)] for h in range(H)]
        C = _cov(L)
        vals = _c3_values(alpha, mu, f, C)
        res = derivation("C3").results[f"mse_h{H}"]
        got = sp.lambdify(res.args, res.expr, "mpmath")(*[vals[str(a)] for a in res.args])
        assert abs(got - _enumerated_mse(alpha, mu, L, f)) < MP_TOL
        # uniform weights: Ueda-Nakano from the head moments
        uni = [mpmath.mpf(1) / H] * H
        direct = _enumerated_mse(uni, mu, L, f)
        bias_bar = sum(m - f for m in mu) / H
        var_bar = sum(C[h][h] for h in range(H)) / H
        covar_bar = sum(C[a][b] for a in range(H) for b in range(H) if a != b) / (H * (H - 1))
        # H as an mpf: an int H would make lambdify's 1/H a float division
        un = fn("C3", "ueda_nakano", "mpmath")(bias_bar, var_bar, covar_bar, mpmath.mpf(H))
        assert abs(un - direct) < MP_TOL


@pytest.mark.claim("C3", part="derivation")
def test_c3_matrix_form_result_on_explicit_matrices():
    rng = random.Random(SEED)
    H = 3
    frac = lambda: sp.Rational(rng.randint(-9, 9), rng.randint(1, 9))  # noqa: E731
    alpha, mu, f = [frac() for _ in range(H)], [frac() for _ in range(H)], frac()
    L = [[frac() if k <= h else 0 for k in range(H)] for h in range(H)]
    C = sp.Matrix(_cov(L))
    Hs = sp.Symbol("H", integer=True, positive=True)
    expr = derivation("C3").results["mse_matrix"].expr.subs(Hs, H)
    syms = {s.name: s for s in expr.free_symbols if isinstance(s, sp.MatrixSymbol)}
    sub = {syms["alpha"]: sp.Matrix(alpha), syms["mu"]: sp.Matrix(mu), syms["C"]: C, syms["f"]: sp.Matrix([[f]])}
    got = sp.Matrix(expr.subs(sub).doit())[0, 0]
    assert got == _enumerated_mse(alpha, mu, L, f)


@pytest.mark.claim("C3", part="derivation")
def test_c3_bias_finding_agrees_with_enumeration():
    """Σ α_h b_h is the ensemble bias only when Σα = 1: checked on the enumerated distribution."""
    L = [[Fraction(0)] * 2 for _ in range(2)]
    alpha, mu, f = [Fraction(1), Fraction(1)], [Fraction(1), Fraction(1)], Fraction(1)
    mse = _enumerated_mse(alpha, mu, L, f)
    weighted_head_bias = sum(a * (m - f) for a, m in zip(alpha, mu))
    assert (mse == weighted_head_bias**2) == finding("C3", "ensemble_bias_is_weighted_head_bias").holds
    simplex = [Fraction(3, 4), Fraction(1, 4)]
    assert _enumerated_mse(simplex, [Fraction(2), Fraction(-1)], L, f) == \
        sum(a * (m - f) for a, m in zip(simplex, [Fraction(2), Fraction(-1)])) ** 2


# -- C4: HDI --------------------------------------------------------------------------------------
def _literal(Ws, dk):
    H = len(Ws)
    s = sum(np.linalg.norm(Ws[a].T @ Ws[b] / dk, "fro") ** 2 for a in range(H) for b in range(a + 1, H))
    return 1 - 2 / (H * (H - 1)) * s


def _subspace_scipy(Ws):
    """1 - mean_{h<h'} mean cos² of the principal angles (scipy.linalg.subspace_angles)."""
    H = len(Ws)
    rhos = [np.mean(np.cos(scipy.linalg.subspace_angles(Ws[a], Ws[b])) ** 2)
            for a in range(H) for b in range(a + 1, H)]
    return 1 - np.mean(rhos)


@pytest.mark.claim("C4", part="derivation")
def test_c4_h2_results_against_numpy_and_scipy():
    rng = np.random.default_rng(SEED)
    lit, sub = fn("C4", "literal_hdi_h2_d3dk2"), fn("C4", "subspace_hdi_h2_d3dk2")
    for _ in range(5):
        W1, W2 = rng.normal(size=(3, 2)), rng.normal(size=(3, 2))
        args = [*W1.ravel(), *W2.ravel()]
        assert abs(lit(*args) - _literal([W1, W2], 2)) < FLOAT_TOL
        assert abs(sub(*args) - _subspace_scipy([W1, W2])) < 1e-10  # scipy's angles: arccos/arcsin round-trip
        A = rng.normal(size=(2, 2))
        assert abs(sub(*W1.ravel(), *(W2 @ A).ravel()) - sub(*args)) < 1e-10


@pytest.mark.claim("C4", part="derivation")
@pytest.mark.parametrize("d,dk,H", [(8, 3, 4), (6, 2, 3), (5, 1, 5)])
def test_c4_isotropic_heads_and_matching_scale(d, dk, H):
    rng = np.random.default_rng(SEED + d)
    Us = [np.linalg.qr(rng.normal(size=(d, dk)))[0] for _ in range(H)]
    mean_rho = 1 - _subspace_scipy(Us)
    iso = fn("C4", "literal_isotropic")
    for c in (0.5, 1.0, 2.0, fn("C4", "matching_scale")(dk)):
        Ws = [c * U @ np.linalg.qr(rng.normal(size=(dk, dk)))[0] for U in Us]   # W_hᵀW_h = c²I
        assert abs(_literal(Ws, dk) - iso(mean_rho, c, dk)) < 1e-10
    c = fn("C4", "matching_scale")(dk)
    assert abs(_literal([c * U for U in Us], dk) - _subspace_scipy(Us)) < 1e-10
    if dk > 1:   # the d_k-normalisation W_hᵀW_h = d_k I does not give the subspace form
        agree = abs(_literal([np.sqrt(dk) * U for U in Us], dk) - _subspace_scipy(Us)) < 1e-10
        assert agree == finding("C4", "literal_equals_subspace_when").holds


@pytest.mark.claim("C4", part="derivation")
def test_c4_scale_identical_and_range_findings_against_numpy():
    rng = np.random.default_rng(SEED)
    Ws = [rng.normal(size=(6, 2)) for _ in range(3)]
    base = _literal(Ws, 2)
    for c in (0.3, 1.7, 3.0):
        assert abs(_literal([c * W for W in Ws], 2) - fn("C4", "literal_scaled")(base, c)) < 1e-9
    for dk in range(1, 6):
        U = np.linalg.qr(rng.normal(size=(7, dk)))[0]
        assert abs(_literal([U, U, U], dk) - fn("C4", "literal_identical_orthonormal")(dk)) < FLOAT_TOL
        assert abs(_subspace_scipy([U, U, U])) < 1e-10
    cex = _literal([np.array([[2.0]])] * 2, 1)
    assert cex == -15.0 and derivation("C4").results["counterexample_below_zero"].expr == -15
    samples = [_literal([c * W for W in Ws], 2) for c in (0.3, 1.0, 3.0)] + [cex]
    in_unit = all(0 <= v <= 1 for v in samples)
    assert in_unit == finding("C4", "literal_in_unit_interval").holds
    U = np.linalg.qr(rng.normal(size=(4, 2)))[0]
    assert (abs(_literal([U, U], 2)) < FLOAT_TOL) == finding("C4", "identical_heads_give_zero").holds
    V = np.eye(4)
    assert (abs(_literal([V[:, :2], V[:, 2:]], 2) - 1) < FLOAT_TOL) == finding("C4", "orthogonal_heads_give_one").holds


@pytest.mark.claim("C4", part="derivation")
def test_c4_rho_from_cosines_in_unit_interval():
    rng = np.random.default_rng(SEED)
    rho = fn("C4", "rho_dk2")
    for _ in range(10):
        U1, U2 = (np.linalg.qr(rng.normal(size=(5, 2)))[0] for _ in range(2))
        cos = np.cos(scipy.linalg.subspace_angles(U1, U2))
        r = rho(*cos)
        assert 0 <= r <= 1
        assert abs(r - np.linalg.norm(U1.T @ U2, "fro") ** 2 / 2) < 1e-10


# -- the methods the derivations use decide false and true versions of their steps ----------------
_q, _k1, _k2, _b = sp.symbols("q k1 k2 b", positive=True)
_SY, _E, _F = head_symbols(2), sp.Function("E"), sp.Symbol("f", real=True)
_SQ = (_SY["alpha"][0] * (_SY["mu"][0] + _SY["Z"][0]) + _SY["alpha"][1] * (_SY["mu"][1] + _SY["Z"][1]) - _F) ** 2
_HS = sp.Symbol("H", integer=True, positive=True)
_AL, _MU, _ZM, _CM = (sp.MatrixSymbol("alpha", _HS, 1), sp.MatrixSymbol("mu", _HS, 1), sp.MatrixSymbol("Z", _HS, 1),
                      sp.MatrixSymbol("C", _HS, _HS))
_FM = sp.MatrixSymbol("f", 1, 1)
_ERR = _AL.T * (_MU + _ZM) - _FM


def _gauss(k):
    return sp.exp(-(_q - k) ** 2 / (2 * _b**2))


def _softmax(k):
    return sp.exp(_q * k / _b**2)


def _c3_mse(cov_factor):
    """C3's decomposition at H = 2 with the covariance term counted ``cov_factor`` times."""
    a, m, C = _SY["alpha"], _SY["mu"], _SY["C"]
    bias = a[0] * m[0] + a[1] * m[1] - _F
    return bias**2 + a[0] ** 2 * C[0, 0] + a[1] ** 2 * C[1, 1] + cov_factor * a[0] * a[1] * C[0, 1]


C3_MOMENTS = {"variables": _SY["Z"], "covariance": _SY["C"]}
STEPS = [
    # Gaussian NW is plain softmax only under the equal-norm assumption
    pytest.param(sp.Eq(_gauss(_k1) / (_gauss(_k1) + _gauss(_k2)), _softmax(_k1) / (_softmax(_k1) + _softmax(_k2)),
                       evaluate=False), "identically_zero", {}, False, id="c1-unequal-norms"),
    pytest.param(sp.Eq(_E(_SQ), _c3_mse(1), evaluate=False), "expectation", C3_MOMENTS, False, id="c3-covariance-once"),
    pytest.param(sp.Eq(_E(_SQ), _c3_mse(2), evaluate=False), "expectation", C3_MOMENTS, True, id="c3-covariance-twice"),
    pytest.param(sp.Eq(_E(sp.expand(_ERR * _ERR.T)), (_AL.T * _MU - _FM) * (_AL.T * _MU - _FM).T, evaluate=False),
                 "expectation", {"variables": _ZM, "covariance": _CM}, False, id="c3-matrix-form-without-covariance"),
]


@pytest.mark.claim("C1", "C3", part="derivation")
@pytest.mark.parametrize("relation,method,extra,holds", STEPS)
def test_false_steps_fail_and_true_ones_check(relation, method, extra, holds):
    """False versions of C1 and C3 steps, each checked by the method the derivation uses, and the
    true one (the failures are the mathematics, not the method refusing the input)."""
    d = Derivation("CX", "steps", "nothing")
    st = d.step("s", relation, by=method, **extra)
    assert (st.status == "checked") is holds, st.detail


@pytest.mark.claim("C1", part="derivation")
def test_c1_key_norm_prints_as_a_norm():
    """The equal-key-norm assumption reads ||k_i|| = r in every output (it printed |k_{i|} = r)."""
    a = derivation("C1").assumptions["equal_key_norms"]
    assert to_latex(a.expr) == r"\lVert k_i \rVert = r" and to_latex(a.expr, macros=True) == r"\lVert k_i \rVert = r"
    assert r"$\lVert k_i \rVert = r$" in a.statement


@pytest.mark.claim("C3", part="derivation")
@given(st.integers(1, 6), st.lists(st.fractions(min_value=-5, max_value=5, max_denominator=12), min_size=13,
                                   max_size=13))
def test_c3_correction_term_in_exact_rationals(H, xs):
    """The correction's derived form: the ensemble bias (result ``ensemble_bias_h<H>``) at μ = b + f
    minus Σ α_h b_h is (Σα − 1) f, exactly, for any rational α, b, f."""
    alpha, b, f = xs[:H], xs[6:6 + H], xs[12]
    vals = {f"alpha_{h+1}": alpha[h] for h in range(H)} | {f"mu_{h+1}": b[h] + f for h in range(H)} | {"f": f}
    got = exact("C3", f"ensemble_bias_h{H}", vals) - sp.Rational(sum(a * bb for a, bb in zip(alpha, b)))
    assert got == sp.Rational((sum(alpha) - 1) * f)


@pytest.mark.claim("C4", part="derivation")
def test_c4_restoring_scale_in_exact_arithmetic():
    """The derived c = d_k^{1/4} is W_hᵀW_h = c² I = sqrt(d_k) I, and there the literal form in mean ρ
    is the subspace form 1 − mean ρ, exactly (d_k = 1..9)."""
    r = derivation("C4").results
    for dk in range(1, 10):
        c = r["matching_scale"].expr.subs(sp.Symbol("d_k", positive=True), dk)
        assert sp.simplify(c**2 - sp.sqrt(dk)) == 0
        rho = sp.Rational(3, 7)
        assert sp.simplify(exact_iso(r["literal_isotropic"], rho, c, dk) - (1 - rho)) == 0
        assert exact_iso(r["literal_isotropic"], rho, sp.sqrt(dk), dk) == 1 - dk * rho


def exact_iso(res, mean_rho, c, dk):
    return res.expr.xreplace(dict(zip(res.args, (mean_rho, c, sp.Integer(dk)))))
