"""C1 check (verify.claims.c1) against independent computations written here: torch's attention
(torch.nn.MultiheadAttention, scaled_dot_product_attention, softmax) and statsmodels' Gaussian
NW (KernelReg, reg_type='lc', fixed bandwidth)."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from hypothesis import given
from hypothesis import strategies as st
from statsmodels.nonparametric.kernel_regression import KernelReg

from verify.claims import Context, c1, run_claim
from verify.errors import VerifyError
from verify.io import loads_json
from verify.judgment.verdicts import Role
from verify.numeric import formulas
from verify.numeric.attention import from_torch
from verify.outputs.plots import data_path as plot_data_path
from verify.replay import replay

pytestmark = [pytest.mark.filterwarnings("ignore::FutureWarning"),  # statsmodels' internal RNG notice
              pytest.mark.claim("C1", part="core")]

# Float64 on both sides, O(10) operations per output on O(1) data: differences are ~1e-15;
# 1e-12 (relative to the largest output) is the bar the spec sets for "equal to rounding".
TORCH_RTOL = 1e-12
# statsmodels multiplies per-coordinate Gaussian densities (no max shift) for bandwidths >= 0.4
# and |q - k| <= ~6: rounding of ~d_k products and n sums, ~1e-15; same bar.
KERNELREG_RTOL = 1e-12
# Two generated float64 formulas for the same bandwidth (1/sqrt(1/sqrt(d_k)) and d_k^(1/4)): a few ulps.
FORMULA_RTOL = 1e-15

#: the roles of the SPEC's reading of C1 (core: the identity; details: the bandwidth; scope: unequal norms)
ROLES = {
    "exponential-kernel identity": Role.CORE,
    "Gaussian reading under equal key norms": Role.DETAIL,
    "bandwidth as stated": Role.DETAIL,
    "Gaussian reading with unequal key norms": Role.SCOPE,
}


#: the claim whose quick run the shared fixtures ``saved`` and ``result`` (tests/conftest.py) give
CLAIM = "C1"


def _part(result, pid):
    return next(p for p in result.parts if p.id == pid)


def _gaussian_nw_statsmodels(q, k, v, b):
    """Gaussian NW (local constant) with bandwidth b in every coordinate, one column of v at a time."""
    d_k = k.shape[1]
    cols = [KernelReg(endog=v[:, c], exog=k, var_type="c" * d_k, reg_type="lc", bw=[b] * d_k).fit(q)[0]
            for c in range(v.shape[1])]
    return np.stack(cols, axis=1)


def _rel(a, b, scale):
    return float(np.max(np.abs(np.asarray(a) - np.asarray(b)))) / scale


# -- structure -------------------------------------------------------------------------------
def test_parts_and_roles(saved):
    result, out = saved
    assert result.id == "C1" and result.stated
    assert {p.id: p.role for p in result.parts} == ROLES
    gauss = _part(result, "Gaussian reading under equal key norms")
    assert gauss.model_assumptions == ["every key has the same norm: |k_i| = r for all i"]
    assert gauss.numeric.figures["unequal_norms_max_discrepancy"] > 10 * c1.MISMATCH_MIN
    bw = _part(result, "bandwidth as stated")
    assert bw.counterexample is not None and "d_k^{1/4}" in bw.derived
    # the seeded search: d_k = 1 never violates (1/sqrt(1) = 1^(1/4)), every d_k > 1 case does
    table = bw.numeric.figures["cases"]
    assert all(not r["violates"] for r in table if r["d_k"] == 1)
    assert all(r["violates"] for r in table if r["d_k"] > 1)
    assert bw.counterexample.data["params"] == c1.NAMED_BANDWIDTH_CASE
    assert (out / result.plots["c1_bandwidth"]).stat().st_size > 0


@pytest.mark.claim(CLAIM, part="detail")
def test_named_bandwidth_case_against_closed_forms_and_statsmodels():
    """d_k = 4, q = e_1, keys ±e_1, values (1, 0): the head is 1/(1 + e^-1) (torch), Gaussian NW with
    b = 1/2 is 1/(1 + e^-8) and with b = sqrt 2 equals the head (statsmodels)."""
    c = c1.NAMED_BANDWIDTH_CASE
    q, k, v = (np.array(c[x]) for x in ("queries", "keys", "values"))
    head = F.scaled_dot_product_attention(*(torch.from_numpy(a) for a in (q, k, v))).numpy()[0, 0]
    assert abs(head - 1 / (1 + math.exp(-1))) <= TORCH_RTOL
    assert abs(_gaussian_nw_statsmodels(q, k, v, 0.5)[0, 0] - 1 / (1 + math.exp(-8))) <= KERNELREG_RTOL
    assert abs(_gaussian_nw_statsmodels(q, k, v, math.sqrt(2))[0, 0] - head) <= KERNELREG_RTOL
    out = c1.judge_bandwidth(c)
    assert out.violates and abs(out.figures["diff_stated_bandwidth_mp"] - (1 / (1 + math.exp(-8)) - head)) <= TORCH_RTOL


@pytest.mark.claim(CLAIM, part="scope")
def test_unequal_norms_case_no_bandwidth_reproduces_the_head():
    """Keys 0 and 2e_1 are both at distance 1 from q = e_1: Gaussian NW is 1/2 at every bandwidth
    (statsmodels), the head e/(1 + e) (torch)."""
    c = c1.UNEQUAL_NORMS_CASE
    q, k, v = (np.array(c[x]) for x in ("queries", "keys", "values"))
    head = F.scaled_dot_product_attention(*(torch.from_numpy(a) for a in (q, k, v))).numpy()[0, 0]
    assert abs(head - math.e / (1 + math.e)) <= TORCH_RTOL
    for b in (0.3, 1.0, 3.0):
        assert abs(_gaussian_nw_statsmodels(q, k, v, b)[0, 0] - 0.5) <= KERNELREG_RTOL
    out = c1.judge_unequal_norms(c)
    assert out.violates and abs(out.figures["closest"] - (head - 0.5)) <= TORCH_RTOL


@pytest.mark.claim(CLAIM, part="scope")
@given(d_k=st.integers(1, 4), n=st.integers(2, 6), seed=st.integers(0, 2**31 - 1))
def test_unequal_norms_replayer_judges_like_statsmodels(d_k, n, seed):
    """On random unequal-norm keys the replayer's closest bandwidth matches torch vs statsmodels."""
    rng = np.random.default_rng(seed)
    q, k, v = rng.standard_normal((2, d_k)), rng.standard_normal((n, d_k)) * rng.uniform(0.5, 2, (n, 1)), \
        rng.standard_normal((n, 1))
    out = c1.judge_unequal_norms({"d_k": d_k, "queries": q.tolist(), "keys": k.tolist(), "values": v.tolist()})
    # every bandwidth of the documented grid, and the one that works for equal norms, is tried
    assert {float(b) for b in out.figures["diff_by_bandwidth"]} == {*c1.UNEQUAL_BANDWIDTHS, d_k ** 0.25}
    head = F.scaled_dot_product_attention(*(torch.from_numpy(a) for a in (q, k, v))).numpy()
    vs = float(np.max(np.abs(v)))
    for b, diff in out.figures["diff_by_bandwidth"].items():
        assert abs(_rel(head, _gaussian_nw_statsmodels(q, k, v, float(b)), vs) - diff) <= KERNELREG_RTOL
    assert out.violates == (out.figures["closest"] > c1.MISMATCH_MIN)


@pytest.mark.claim(CLAIM, part="detail")
def test_counterexamples_replay_and_hold_independently(saved):
    result, out = saved
    files = sorted((out / "counterexamples").glob("*.json"))
    assert [f.name for f in files] == ["C1-stated-bandwidth.json", "C1-unequal-norms.json"]
    for f in files:
        doc, outcome = replay(f)
        assert outcome.violates is True and doc["expected"]["violates"] is True
        assert outcome.summary == doc["expected"]["summary"]
    doc, outcome = replay(files[0])
    p = doc["params"]
    q, k, v = (np.array(p[key]) for key in ("queries", "keys", "values"))
    d_k, scale = p["d_k"], float(np.max(np.abs(v)))
    norms = np.linalg.norm(k, axis=1)
    assert np.ptp(norms) <= c1.NORM_RTOL * norms.max()               # equal key norms, as the statement needs
    head = F.scaled_dot_product_attention(*(torch.from_numpy(a) for a in (q, k, v))).numpy()
    stated = _gaussian_nw_statsmodels(q, k, v, 1 / math.sqrt(d_k))
    derived = _gaussian_nw_statsmodels(q, k, v, d_k**0.25)
    assert _rel(head, stated, scale) > c1.MISMATCH_MIN                # the stated bandwidth is another estimator
    assert _rel(head, derived, scale) <= KERNELREG_RTOL               # b = d_k^(1/4) is the head
    assert abs(_rel(head, stated, scale) - outcome.figures["diff_stated_bandwidth_mp"]) <= TORCH_RTOL


def test_same_seed_same_figures(result):
    again = run_claim("C1", Context(seed=0, quick=True))
    assert again.headline == result.headline
    for a, b in zip(result.parts, again.parts):
        assert a.numeric.figures == b.numeric.figures, a.id
        assert (a.counterexample.data == b.counterexample.data) if a.counterexample else b.counterexample is None


def test_other_seed_same_effects(result):
    other = run_claim("C1", Context(seed=7, quick=True))
    assert {p.id: p.effect for p in other.parts} == {p.id: p.effect for p in result.parts}
    assert other.verdict is result.verdict


# -- the check's mpmath references against torch and statsmodels -----------------------------
@given(m=st.integers(1, 4), n=st.integers(1, 8), d_k=st.integers(1, 6), p=st.integers(1, 3),
       spread=st.floats(0.1, 3.0), seed=st.integers(0, 2**31 - 1))
def test_mp_exp_nw_is_torch_attention(m, n, d_k, p, spread, seed):
    g = torch.Generator().manual_seed(seed)
    q, k = (spread * torch.randn(s, generator=g, dtype=torch.float64) for s in ((m, d_k), (n, d_k)))
    v = torch.randn((n, p), generator=g, dtype=torch.float64)
    ref = F.scaled_dot_product_attention(q, k, v).numpy()
    ours = c1.mp_exp_nw(q.numpy(), k.numpy(), v.numpy())
    assert _rel(ours, ref, float(v.abs().max())) <= TORCH_RTOL


@st.composite
def single_head(draw):
    E = draw(st.integers(1, 5))
    dims = st.one_of(st.none(), st.integers(1, 4))
    return dict(E=E, kdim=draw(dims), vdim=draw(dims), L=draw(st.integers(1, 3)), S=draw(st.integers(1, 5)),
                seed=draw(st.integers(0, 2**31 - 1)))


@given(single_head())
def test_mp_single_head_and_from_torch_reproduce_torch(cfg):
    """One-head torch.nn.MultiheadAttention (biases, kdim/vdim) = MultiHeadNW.from_torch = the check's
    mpmath head, each to 1e-12 of the largest output."""
    mod = torch.nn.MultiheadAttention(cfg["E"], 1, kdim=cfg["kdim"], vdim=cfg["vdim"], dtype=torch.float64,
                                      batch_first=True)
    g = torch.Generator().manual_seed(cfg["seed"])
    with torch.no_grad():
        for prm in mod.parameters():
            prm.copy_(torch.randn(prm.shape, generator=g, dtype=torch.float64))
    x = torch.randn((1, cfg["L"], cfg["E"]), generator=g, dtype=torch.float64)
    xk = torch.randn((1, cfg["S"], cfg["kdim"] or cfg["E"]), generator=g, dtype=torch.float64)
    xv = torch.randn((1, cfg["S"], cfg["vdim"] or cfg["E"]), generator=g, dtype=torch.float64)
    with torch.no_grad():
        ref = mod.eval()(x, xk, xv, need_weights=False)[0][0].numpy()
    head = from_torch(mod)
    scale = float(np.max(np.abs(ref)))
    assert _rel(head(x[0].numpy(), xk[0].numpy(), xv[0].numpy()), ref, scale) <= TORCH_RTOL
    assert _rel(c1.mp_single_head(head, x[0].numpy(), xk[0].numpy(), xv[0].numpy()), ref, scale) <= TORCH_RTOL


@given(m=st.integers(1, 3), n=st.integers(2, 6), d_k=st.integers(1, 4), r=st.floats(0.2, 2.0),
       s=st.one_of(st.none(), st.floats(0.1, 2.0)), seed=st.integers(0, 2**31 - 1))
@pytest.mark.claim(CLAIM, part="detail")
def test_equal_norms_softmax_is_statsmodels_gaussian_nw(m, n, d_k, r, s, seed):
    """Keys of one norm: torch's softmax with scale s = statsmodels' Gaussian NW with the check's
    b = c1_bandwidth_from_scale(s) (= c1_gaussian_bandwidth(d_k) for s = 1/sqrt(d_k)) = the check's
    mpmath Gaussian NW."""
    c = c1.equal_norm_case(seed, m, n, d_k, 2, r)
    scale = 1 / math.sqrt(d_k) if s is None else s
    b = float(formulas.c1_bandwidth_from_scale(scale))
    if s is None:
        assert b == pytest.approx(float(formulas.c1_gaussian_bandwidth(d_k)), rel=FORMULA_RTOL)
    soft = torch.softmax(torch.from_numpy(c["q"] @ c["k"].T) * scale, dim=-1).numpy() @ c["v"]
    ref = _gaussian_nw_statsmodels(c["q"], c["k"], c["v"], b)
    vs = float(np.max(np.abs(c["v"])))
    assert _rel(soft, ref, vs) <= KERNELREG_RTOL
    assert _rel(c1.mp_gaussian_nw(c["q"], c["k"], c["v"], b), ref, vs) <= KERNELREG_RTOL


@pytest.mark.claim(CLAIM, part="detail")
@given(d_k=st.integers(2, 6), n=st.integers(2, 6), seed=st.integers(0, 2**31 - 1))
def test_replayer_judges_like_statsmodels(d_k, n, seed):
    """The replayer's verdict on any equal-norm case agrees with torch vs statsmodels at b = 1/sqrt(d_k)."""
    c = c1.equal_norm_case(seed, 2, n, d_k, 1, 1.0)
    out = c1.judge_bandwidth({"d_k": d_k, "queries": c["q"].tolist(), "keys": c["k"].tolist(),
                              "values": c["v"].tolist()})
    soft = torch.softmax(torch.from_numpy(c["q"] @ c["k"].T) / math.sqrt(d_k), dim=-1).numpy() @ c["v"]
    stated = _gaussian_nw_statsmodels(c["q"], c["k"], c["v"], 1 / math.sqrt(d_k))
    diff = _rel(soft, stated, float(np.max(np.abs(c["v"]))))
    assert abs(diff - out.figures["diff_stated_bandwidth_mp"]) <= TORCH_RTOL
    assert out.violates == (diff > c1.MISMATCH_MIN)
    assert out.figures["diff_derived_bandwidth_mp"] <= out.figures["derived_bandwidth_rounding_bound"]


@pytest.mark.claim(CLAIM, part="detail")
def test_replayer_rejects_bad_params():
    with pytest.raises(VerifyError, match="params"):
        c1.judge_bandwidth({"d_k": 2})
    with pytest.raises(VerifyError, match="params.keys"):   # unequal norms are outside the statement
        c1.judge_bandwidth({"d_k": 1, "queries": [[1.0]], "keys": [[1.0], [2.0]], "values": [[0.0], [1.0]]})
    with pytest.raises(VerifyError, match="q, k, v"):
        c1.mp_exp_nw(np.ones((2, 3)), np.ones((4, 2)), np.ones((4, 1)))


def test_saved_file_is_strict_json(saved):
    _, out = saved
    for f in (out / "counterexamples").glob("*.json"):
        loads_json(f.name, f.read_text())      # refuses NaN/Infinity, duplicate keys


@pytest.mark.claim(CLAIM, part="detail")
def test_bandwidth_plot_marks_the_two_bandwidths_and_dips_at_the_derived_one(saved):
    """The plot's vertical markers sit at d_k^(1/4) and 1/sqrt(d_k) for d_k = 4, and the equal-norm
    curve reaches rounding level only at the derived bandwidth (as statsmodels' NW would)."""
    result, out = saved
    data = loads_json("plot", (out / plot_data_path(result.plots["c1_bandwidth"])).read_text())
    lines = {ln["label"]: ln for ln in data["axes"][0]["lines"]}
    assert lines["b = d_k^(1/4) (derived)"]["x"] == [math.sqrt(2), math.sqrt(2)]
    assert lines["b = 1/sqrt(d_k) (stated)"]["x"] == [0.5, 0.5]
    eq = lines["keys of equal norm"]
    best = min(range(len(eq["x"])), key=lambda i: eq["y"][i])
    assert abs(eq["x"][best] - math.sqrt(2)) <= 1e-12 and eq["y"][best] <= 1e-12
    assert min(y for x, y in zip(eq["x"], eq["y"]) if abs(x - math.sqrt(2)) > 0.1) > c1.MISMATCH_MIN
