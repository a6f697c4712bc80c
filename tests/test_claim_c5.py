"""C5 check (verify.claims.c5) against independent computations written here: the C3 quadratic
form as a double loop with ρ from scipy.linalg.subspace_angles, exact projectors in SymPy
rationals, NW weights by scipy.special.softmax with the engine's documented draws re-derived
from SeedSequence, and the law of total covariance as explicit loops."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
import sympy as sp
from hypothesis import given
from hypothesis import strategies as st
from scipy.linalg import subspace_angles
from scipy.special import softmax

from verify.claims import Context, c5, run_claim
from verify.errors import VerifyError
from verify.io import loads_json
from verify.judgment.counterexamples import replayer_for
from verify.judgment.verdicts import Role
from verify.numeric import formulas
from verify.numeric.dgp import head_projections
from verify.outputs.plots import data_path as plot_data_path
from verify.replay import replay

# Quadratic form over <= 5 heads (double loop) vs the generated line, both float64 with entries
# <= 2: a few ulps of ~H² terms; scipy's angles add ~1e-15 to each ρ.
LINE_TOL = 1e-12
# Two head sets whose HDIs are this close are not ordered by the monotonicity test (the cos²
# of scipy's angles carries ~1e-15 rounding).
HDI_TIE = 1e-12
# The engine (vectorised, max-shifted softmax, einsum) vs softmax + loops here: the same sums
# of <= 256 products rounded differently; measured ~1e-16 relative.
REF_RTOL = 1e-10

#: the SPEC's reading of C5: the in-model line is the core, the premise and the probes outside the model are
#: reported beside the verdict
ROLES = {
    "in-model line": Role.CORE,
    "a straight line": Role.DETAIL,
    "premise on real NW heads": Role.PREMISE,
    "outside the model: unequal V_h": Role.SCOPE,
    "outside the model: non-uniform α": Role.SCOPE,
    "outside the model: real NW heads": Role.SCOPE,
}


#: the claim whose quick run the shared fixtures ``saved`` and ``result`` (tests/conftest.py) give
CLAIM = "C5"
pytestmark = pytest.mark.claim(CLAIM, part="core")


def _part(result, pid):
    return next(p for p in result.parts if p.id == pid)


# -- structure and verdict -------------------------------------------------------------------
def test_parts_and_roles(saved):
    result, out = saved
    assert result.id == "C5" and result.stated
    assert {p.id: p.role for p in result.parts} == ROLES
    line = _part(result, "in-model line")
    assert len(line.model_assumptions) == 4  # covariance model, equal V, uniform α, subspace-free bias
    for p in result.parts:
        if p.counterexample is not None:
            assert p.restored_by
    assert set(result.plots) == {"mse_vs_hdi", "corr_vs_overlap", "premise_regimes"}
    assert all((out / f).stat().st_size > 0 for f in result.plots.values())


@pytest.mark.claim(CLAIM, part="scope")
def test_saved_counterexamples_replay_to_the_same_judgement(saved):
    result, out = saved
    files = sorted((out / "counterexamples").glob("*.json"))
    assert len(files) == 4
    for f in files:
        doc, outcome = replay(f)
        assert outcome.violates is True and doc["expected"]["violates"] is True
        assert outcome.summary == doc["expected"]["summary"]
    assert {Path(p.counterexample.file).name for p in result.parts if p.counterexample} == {f.name for f in files}
    assert all(not Path(p.counterexample.file).is_absolute() for p in result.parts if p.counterexample)


def test_same_seed_same_figures(result):
    again = run_claim("C5", Context(seed=0, quick=True))
    assert again.headline == result.headline
    for a, b in zip(result.parts, again.parts):
        assert a.numeric.figures == b.numeric.figures, a.id
        assert a.counterexample.data == b.counterexample.data if a.counterexample else b.counterexample is None


# -- in-model line: property against a quadratic form written here --------------------------
def _bases(rng, H, d, d_k):
    return [np.linalg.qr(rng.standard_normal((d, d_k)))[0] for _ in range(H)]


def _rho_scipy(bases):
    """ρ_hh' = mean cos² of the principal angles (scipy), as a full matrix."""
    H = len(bases)
    return [[1.0 if i == j else float(np.mean(np.cos(subspace_angles(bases[i], bases[j])) ** 2))
             for j in range(H)] for i in range(H)]


def _quadratic_mse(B, V, rho):
    """B² + Σ_h Σ_h' α_hα_h' C_hh', α = 1/H, C_hh' = ρ_hh' V (double loop)."""
    H = len(rho)
    total = B * B
    for i in range(H):
        for j in range(H):
            total += (1 / H) * (1 / H) * rho[i][j] * V
    return total


def _hdi(rho):
    H = len(rho)
    pairs = [rho[i][j] for i in range(H) for j in range(i + 1, H)]
    return 1 - sum(pairs) / len(pairs)


@given(H=st.integers(2, 5), d=st.integers(2, 8), seed=st.integers(0, 2**32 - 1),
       B=st.floats(-1, 1), V=st.floats(0.05, 2), mix=st.floats(0, 1))
def test_in_model_mse_is_the_line_and_non_increasing(H, d, seed, B, V, mix):
    rng = np.random.default_rng(seed)
    d_k = int(rng.integers(1, d + 1))
    first = _bases(rng, H, d, d_k)
    # second set: shrink every head toward a common one, so HDIs spread over [0, 1]
    common = first[0]
    second = [np.linalg.qr(mix * common + (1 - mix) * b + 1e-3 * rng.standard_normal(b.shape))[0] for b in first]
    sets = []
    for bases in (first, second):
        rho = _rho_scipy(bases)
        h, mse = _hdi(rho), _quadratic_mse(B, V, rho)
        assert abs(mse - float(formulas.c5_mse_line(B, V, H, h))) <= LINE_TOL * (B * B + V)
        sets.append((h, mse))
    (h1, m1), (h2, m2) = sorted(sets)
    if h2 - h1 > HDI_TIE:
        assert m2 <= m1 + LINE_TOL * (B * B + V)


# -- exact counterexamples, recomputed in SymPy ------------------------------------------------
def _sympy_case(params, alpha=None):
    V = [sp.Rational(v) for v in params["V"]]
    a = [sp.Rational(x) for x in (alpha or params["alpha"])]
    out = {}
    for name, cfg in params["configs"].items():
        P = []
        for w in cfg["W_K"]:
            W = sp.Matrix(w)
            P.append(W * (W.T * W).inv() * W.T)
        H = len(P)
        rho = {(i, j): (P[i] * P[j]).trace() / P[i].rank() for i in range(H) for j in range(H)}
        hdi = 1 - sum(rho[i, j] for i in range(H) for j in range(i + 1, H)) / sp.binomial(H, 2)
        mse = sum(a[i] * a[j] * (V[i] if i == j else rho[i, j] * sp.sqrt(V[i] * V[j]))
                  for i in range(H) for j in range(H))
        out[name] = (sp.nsimplify(hdi), sp.nsimplify(mse))
    return out


@pytest.mark.claim(CLAIM, part="scope")
@pytest.mark.parametrize("name", ["unequal_variance", "nonuniform_weights"])
def test_exact_counterexamples_violate_and_match_sympy(result, name):
    pid = {"unequal_variance": "outside the model: unequal V_h",
           "nonuniform_weights": "outside the model: non-uniform α"}[name]
    cx = _part(result, pid).counterexample
    params = cx.data["params"]
    ref = _sympy_case(params)
    (ha, ma), (hb, mb) = ref["A"], ref["B"]
    assert hb > ha and mb > ma  # higher HDI, higher MSE: the counterexample holds independently
    figs = cx.data["figures"]
    assert (figs["A_HDI"], figs["B_HDI"]) == (str(ha), str(hb))
    assert (figs["A_mse_minus_bias_sq"], figs["B_mse_minus_bias_sq"]) == (str(ma), str(mb))
    # the restoring assumption α_h sqrt(V_h) = const: the same configurations then order by HDI
    inv = [1 / sp.sqrt(sp.Rational(v)) for v in params["V"]]
    alpha = [str(x / sum(inv)) for x in inv]
    (_, ra), (_, rb) = _sympy_case(params, alpha).values()
    assert rb < ra
    assert replayer_for("c5.exact-outside-model")({**params, "alpha": alpha}).violates is False


# -- the premise: correlation of orthogonal heads, by the law of total covariance -------------
def _corr_at_rho0_brute_force(p, batch=0):
    """Integrated head-output correlation of the orthogonal heads of batch ``batch`` (the engine's
    documented draws, re-derived from SeedSequence), by softmax + loops and the law of total covariance."""
    head_seed, engine_seed = np.random.SeedSequence([p["seed"], batch]).generate_state(2)
    W = head_projections("orthogonal", p["H"], p["d"], p["d_k"], rng=np.random.default_rng(int(head_seed)))
    for i in range(p["H"]):
        for j in range(i + 1, p["H"]):
            assert np.allclose(np.cos(subspace_angles(W[i], W[j])), 0.0, atol=1e-7)
    f = lambda x: np.exp(-np.sum(x * x, axis=-1) / 2)  # noqa: E731  (bump, width 1)
    scale = p.get("scale_factor", 1.0) / math.sqrt(p["d_k"])
    root = np.random.SeedSequence(int(engine_seed))
    x_eval = np.random.default_rng(root).standard_normal((p["m"], p["d"]))
    H, R, s2 = p["H"], p["R"], p["sigma"] ** 2
    means = np.empty((R, H, p["m"]))
    cond = np.zeros((H, H, p["m"]))
    for r, child in enumerate(np.random.SeedSequence(int(engine_seed)).spawn(R)):
        X = np.random.default_rng(child).standard_normal((p["n"], p["d"]))
        w = [softmax(scale * (x_eval @ W[h]) @ (X @ W[h]).T, axis=1) for h in range(H)]
        for h in range(H):
            means[r, h] = w[h] @ f(X)
            for g in range(H):
                cond[h, g] += s2 * np.sum(w[h] * w[g], axis=1) / R
    dev = means - means.mean(axis=0)
    C = cond + np.einsum("rhm,rgm->hgm", dev, dev) / R       # total covariance, ddof = 0
    Cbar = C.mean(axis=-1)
    return float(np.mean([Cbar[i, j] / math.sqrt(Cbar[i, i] * Cbar[j, j]) for i in range(H) for j in range(i + 1, H)]))


@pytest.mark.claim(CLAIM, part="premise")
def test_premise_correlation_at_rho0_by_brute_force(result):
    part = _part(result, "premise on real NW heads")
    p = part.counterexample.data["params"]
    assert p["dgp"] == "bump" and p["design"] == "normal"
    corr = _corr_at_rho0_brute_force(p)
    assert abs(corr - part.counterexample.data["figures"]["batch_values"][0]) <= REF_RTOL
    assert corr > c5.CORR_EXCESS_MIN


@pytest.mark.claim(CLAIM, part="premise")
def test_premise_regimes_by_brute_force(result):
    """Two cells of the regime table (flattest and sharpest attention) recomputed here; the
    correlation falls as the attention sharpens, as the shared-weight argument predicts."""
    rows = _part(result, "premise on real NW heads").numeric.figures["regimes"]["rows"]
    assert {(r["scale_factor"], r["n"], r["sigma"]) for r in rows} == {
        (c, n, s) for c in c5.REGIME_SCALES for n in c5.REGIME_NS for s in c5.REGIME_SIGMAS}
    flat, sharp = (min(rows, key=lambda r: (r["scale_factor"], -r["corr_at_rho0"])),
                   max(rows, key=lambda r: (r["scale_factor"], r["n"])))
    for row in (flat, sharp):
        assert abs(_corr_at_rho0_brute_force(row["params"]) - row["batch_values"][0]) <= REF_RTOL
    assert flat["corr_at_rho0"] > sharp["corr_at_rho0"] + 5 * (flat["se"] + sharp["se"])


# -- real NW heads: the per-replicate MSE recomputed here --------------------------------------
def _aligned(H, d, d_k, rho):
    c = rho ** 0.25
    s = math.sqrt(max(0.0, 1 - c * c))
    eye = np.eye(d)
    return [c * eye[:, :d_k] + s * eye[:, (h + 1) * d_k:(h + 2) * d_k] for h in range(H)]


def _replicate_mse_here(p, rho):
    heads = _aligned(p["H"], p["d"], p["d_k"], rho)
    freq = p.get("dgp_params", {}).get("freq", 2.0)
    f = lambda x: np.sin(freq * x[..., 0])  # noqa: E731  (single-index)
    out = []
    for r in range(p["R"]):
        s = int(np.random.SeedSequence([p["seed"], r]).generate_state(1)[0])
        x_eval = np.random.default_rng(np.random.SeedSequence(s)).standard_normal((p["m"], p["d"]))
        X = np.random.default_rng(np.random.SeedSequence(s, spawn_key=(0,))).standard_normal((p["n"], p["d"]))
        w = [softmax((x_eval @ U) @ (X @ U).T / math.sqrt(p["d_k"]), axis=1) for U in heads]
        w_ens = sum(w) / p["H"]
        err = (w_ens @ f(X) - f(x_eval)) ** 2 + p["sigma"] ** 2 * np.sum(w_ens ** 2, axis=1)
        out.append(err.mean())
    return np.array(out)


@pytest.mark.claim(CLAIM, part="scope")
def test_nw_search_finds_a_significant_violation(result):
    cx = _part(result, "outside the model: real NW heads").counterexample
    p, figs = cx.data["params"], cx.data["figures"]
    assert p["dgp"] == "single-index" and p["kind"] == "aligned"
    a, b = _replicate_mse_here(p, p["rho_A"]), _replicate_mse_here(p, p["rho_B"])
    assert abs(a.mean() - figs["MSE_A"]) <= REF_RTOL * a.mean()
    assert abs(b.mean() - figs["MSE_B"]) <= REF_RTOL * b.mean()
    diff = b - a
    se = diff.std(ddof=1) / math.sqrt(diff.size)
    assert figs["HDI_A"] < figs["HDI_B"]
    assert diff.mean() > c5.Z_MIN * se


@pytest.mark.claim(CLAIM, part="scope")
def test_replayers_reject_malformed_params():
    with pytest.raises(VerifyError, match="params"):
        replayer_for("c5.nw-heads-bias")({"dgp": "single-index"})
    with pytest.raises(VerifyError, match="params"):
        replayer_for("c5.exact-outside-model")({"V": ["1", "1"]})


@pytest.mark.claim(CLAIM, part="scope")
def test_saved_file_is_strict_json(saved):
    _, out = saved
    for f in (out / "counterexamples").glob("*.json"):
        loads_json(f.name, f.read_text())      # refuses NaN/Infinity, duplicate keys


def test_mse_plot_shows_the_derived_line(saved):
    """The plotted model line is B² + V − V(H−1)/H · HDI (written here) with the premise's B², V."""
    result, out = saved
    data = loads_json("plot", (out / plot_data_path(result.plots["mse_vs_hdi"])).read_text())
    prem = _part(result, "premise on real NW heads").numeric.figures
    H, B2, V = prem["params"]["H"], prem["B2"], prem["V"]
    line = next(ln for ln in data["axes"][0]["lines"] if ln["label"].startswith("model line"))
    assert len(line["x"]) > 50
    for x, y in zip(line["x"], line["y"]):
        assert abs(y - (B2 + V - V * (H - 1) / H * x)) <= 1e-12 * (B2 + V)
