"""C6 check (verify.claims.c6) against independent computations written here: the model MSE as a
brute-force loop over head pairs with ρ from scipy.linalg.subspace_angles, the fusion-frame
bound written out, and a dimension count by matrix rank."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from scipy.linalg import subspace_angles
from scipy.special import softmax

from verify.claims import Context, c6, run_claim
from verify.errors import VerifyError
from verify.io import loads_json
from verify.judgment.verdicts import Role
from verify.outputs.plots import data_path as plot_data_path
from verify.replay import replay

# Model MSE of order B² + V ≤ 3 from ≤ 15 pair terms, each a mean of cos² from scipy: a few ulps
# each; an orthogonal configuration's cos are ~1e-16, so its ρ are ~1e-32.
MSE_TOL = 1e-12
# The descent stops when a sweep gains < 1e-14 in Φ (c6.PHI_STOP); HDI = 1 − Φ/(d_k H(H−1)) is
# then within ~1e-12 of its limit (measured ≤ 1e-12 over 8 configurations x 8 starts); scipy's
# angles add ~1e-15. The same margin as the check's c6.BOUND_TOL, not looser.
BOUND_TOL = 1e-9
# Orthonormality of a QR factor / a tangent direction: pure float64 rounding.
ORTH_TOL = 1e-12

# sizes with a known tight fusion frame (or orthogonal heads when H d_k <= d)
TIGHT = [(3, 1, 2), (4, 1, 3), (5, 1, 2), (3, 2, 4), (3, 2, 3), (2, 1, 3), (3, 2, 6), (6, 2, 5)]


#: the claim whose quick run the shared fixtures ``saved`` and ``result`` (tests/conftest.py) give
CLAIM = "C6"
pytestmark = pytest.mark.claim(CLAIM, part="core")


def _part(result, pid):
    return next(p for p in result.parts if p.id == pid)


# -- brute-force references --------------------------------------------------------------------
def _rho(a, b):
    return float(np.mean(np.cos(subspace_angles(a, b)) ** 2))


def _model_mse(U, B, V):
    """B² + Σ_h Σ_h' α_hα_h' C_hh' with α = 1/H, C_hh' = ρ_hh' V, C_hh = V (loop over pairs)."""
    H = len(U)
    total = B * B
    for i in range(H):
        for j in range(H):
            total += V / H**2 * (1.0 if i == j else _rho(U[i], U[j]))
    return total


def _hdi(U):
    H = len(U)
    return 1 - sum(_rho(U[i], U[j]) for i in range(H) for j in range(i + 1, H)) / (H * (H - 1) / 2)


def _bound(H, d_k, d):
    """HDI ≤ 1 − max(0, (H d_k/d − 1)/(H − 1))."""
    return 1 - max(0.0, (H * d_k / d - 1) / (H - 1))


# -- structure and verdict -------------------------------------------------------------------
def test_parts_and_roles(saved):
    result, out = saved
    assert result.id == "C6" and result.stated
    assert {p.id: p.role for p in result.parts} == {
        "feasible regime (H·d_k ≤ d)": Role.CORE,
        "beyond d (H·d_k > d)": Role.SCOPE,
        "real NW heads, single-index target": Role.SCOPE}
    beyond = _part(result, "beyond d (H·d_k > d)")
    assert beyond.numeric.agreement == "measured" and beyond.restored_by.startswith("H·d_k ≤ d")
    figs = beyond.numeric.figures
    assert figs["starts_reaching_bound"] == figs["starts"] and figs["below_bound"] == 0
    assert abs(figs["two_planes_phi"] - 2.0) <= BOUND_TOL
    assert (out / result.plots["overlap_optimisation"]).stat().st_size > 0


# Paired MSE replicates: the engine vs softmax + loops here, the same sums rounded differently.
REF_RTOL = 1e-10


def _signal_mse_here(p, config):
    """Per-replicate integrated MSE of the coordinate heads of ``config`` on sin(2 x_1), by
    softmax and loops (the engine's documented draws: x_eval from SeedSequence(s), X from its
    first spawn)."""
    H, d, d_k = p["H"], p["d"], p["d_k"]
    eye = np.eye(d)
    cols = {"identical, on the signal": [list(range(d_k))] * H,
            "sharing the signal direction": [[0, *range(1 + h * (d_k - 1), 1 + (h + 1) * (d_k - 1))] for h in range(H)],
            "orthogonal, one on the signal": [list(range(h * d_k, (h + 1) * d_k)) for h in range(H)]}[config]
    heads = [eye[:, c] for c in cols]
    out = []
    for r in range(p["R"]):
        s = int(np.random.SeedSequence([p["seed"], r]).generate_state(1)[0])
        x_eval = np.random.default_rng(np.random.SeedSequence(s)).standard_normal((p["m"], d))
        X = np.random.default_rng(np.random.SeedSequence(s, spawn_key=(0,))).standard_normal((p["n"], d))
        w = sum(softmax((x_eval @ U) @ (X @ U).T / math.sqrt(d_k), axis=1) for U in heads) / H
        err = (w @ np.sin(2 * X[:, 0]) - np.sin(2 * x_eval[:, 0])) ** 2 + p["sigma"] ** 2 * np.sum(w ** 2, axis=1)
        out.append(err.mean())
    return np.array(out)


@pytest.mark.claim(CLAIM, part="scope")
def test_shared_signal_beats_orthogonal_by_brute_force(saved):
    """The scope probe's counterexample recomputed here: on a single-index target, heads sharing the
    signal direction have a lower MSE than orthogonal heads by more than SIGNAL_Z_MIN paired SE."""
    result, out = saved
    doc, outcome = replay(out / "counterexamples" / "C6-shared-signal.json")
    p = doc["params"]
    a, b = (_signal_mse_here(p, c) for c in p["configs"])
    assert np.allclose([a.mean(), b.mean()], outcome.figures["mse"], rtol=REF_RTOL, atol=0)
    diff = b - a
    assert diff.mean() > c6.SIGNAL_Z_MIN * diff.std(ddof=1) / math.sqrt(diff.size)
    assert p["configs"][1] == "orthogonal, one on the signal"


@pytest.mark.claim(CLAIM, part="scope")
def test_signal_heads_overlaps_match_scipy():
    for config, want in (("identical, on the signal", 0.0), ("sharing the signal direction", 0.5),
                         ("orthogonal, one on the signal", 1.0)):
        W = c6.signal_heads(config, 3, 8, 2)
        assert abs(_hdi(list(W)) - want) <= 1e-12
        assert all(abs(W[h][0, 0]) == 1.0 for h in range(3)) is (config != "orthogonal, one on the signal")


@pytest.mark.claim(CLAIM, part="scope")
def test_refutation_replays_and_holds_independently(saved):
    result, out = saved
    files = sorted((out / "counterexamples").glob("*.json"))
    assert [f.name for f in files] == ["C6-beyond-d.json", "C6-shared-signal.json"]
    doc, outcome = replay(files[0])
    assert outcome.violates is True and doc["expected"]["violates"] is True
    assert outcome.summary == doc["expected"]["summary"]
    p = doc["params"]
    H, d_k, d = p["H"], p["d_k"], p["d"]
    assert H * d_k > d
    # dimension count: any H d_k columns in R^d have rank ≤ d < H d_k, so no H mutually
    # orthogonal d_k-dimensional subspaces (their bases together would be orthonormal)
    runs = [c6.minimise_overlap(H, d_k, d, rng=s) for s in range(3)]
    for run in runs:
        stacked = np.concatenate(list(run.U), axis=1)
        assert np.linalg.matrix_rank(stacked) <= d < H * d_k
        phi = sum(d_k * _rho(run.U[i], run.U[j]) for i in range(H) for j in range(H) if i != j)
        assert abs(phi - H * d_k * (H * d_k / d - 1)) <= 1e-8 and phi > 0
        assert abs(_hdi(run.U) - _bound(H, d_k, d)) <= BOUND_TOL


def test_same_seed_same_figures(result):
    again = run_claim("C6", Context(seed=0, quick=True))
    assert again.headline == result.headline
    for a, b in zip(result.parts, again.parts):
        assert a.numeric.figures == b.numeric.figures, a.id


# -- orthogonal optimality: no perturbation lowers the model MSE ---------------------------------
@given(H=st.integers(2, 4), d_k=st.integers(1, 3), extra=st.integers(0, 2), seed=st.integers(0, 2**32 - 1),
       t=st.floats(1e-4, 1.0), B=st.floats(-1, 1), V=st.floats(0.05, 2), tangent=st.booleans())
def test_no_perturbation_of_orthogonal_heads_lowers_the_model_mse(H, d_k, extra, seed, t, B, V, tangent):
    d = H * d_k + extra
    rng = np.random.default_rng(seed)
    frame = np.linalg.qr(rng.standard_normal((d, H * d_k)))[0]
    U0 = np.stack([frame[:, h * d_k:(h + 1) * d_k] for h in range(H)])
    if tangent:  # the check's own moves
        delta = c6.tangent_move(U0, rng)
        for h in range(H):
            assert np.abs(U0[h].T @ delta[h]).max() <= ORTH_TOL
        U = c6.retract(U0, delta, t)
    else:        # any perturbation
        U = np.stack([np.linalg.qr(u + t * rng.standard_normal(u.shape))[0] for u in U0])
    for u in U:
        assert np.abs(u.T @ u - np.eye(d_k)).max() <= ORTH_TOL
    base, moved = _model_mse(U0, B, V), _model_mse(U, B, V)
    assert abs(base - (B * B + V / H)) <= MSE_TOL            # orthogonal heads: B² + V/H
    assert moved >= base - MSE_TOL
    assert abs(c6.model_mse(U, B, V) - moved) <= MSE_TOL     # the check's model MSE agrees


# -- the optimiser ------------------------------------------------------------------------------
@pytest.mark.claim(CLAIM, part="scope")
@given(cfg=st.sampled_from(TIGHT), seed=st.integers(0, 2**32 - 1))
def test_descent_reaches_the_bound_where_tight_frames_exist(cfg, seed):
    H, d_k, d = cfg
    run = c6.minimise_overlap(H, d_k, d, rng=seed)
    assert all(b <= a + 1e-12 for a, b in zip(run.phi, run.phi[1:]))  # Φ never increases
    assert abs(_hdi(run.U) - _bound(H, d_k, d)) <= BOUND_TOL


@pytest.mark.claim(CLAIM, part="scope")
@given(H=st.integers(2, 5), d_k=st.integers(1, 3), d=st.integers(1, 6), seed=st.integers(0, 2**32 - 1))
def test_no_configuration_beats_the_bound(H, d_k, d, seed):
    if d_k > d:
        d = d_k
    run = c6.minimise_overlap(H, d_k, d, rng=seed)
    assert _hdi(run.U) <= _bound(H, d_k, d) + BOUND_TOL


@pytest.mark.claim(CLAIM, part="scope")
@pytest.mark.parametrize("seed", range(3))
def test_two_planes_in_r3_stop_above_the_bound(seed):
    run = c6.minimise_overlap(2, 2, 3, rng=seed)
    a, b = run.U
    phi = 2 * 2 * _rho(a, b)                       # Φ = 2 ||U_1ᵀU_2||_F² = 2 d_k ρ
    assert abs(phi - 2.0) <= 1e-9                   # the planes share a line, normals orthogonal
    assert phi > 2 * 2 * (2 * 2 / 3 - 1) + 0.5      # far above the fusion-frame value 4/3


def test_bad_input_raises_verify_error():
    with pytest.raises(VerifyError, match="H"):
        c6.minimise_overlap(1, 1, 2, rng=0)
    with pytest.raises(VerifyError, match="d_k"):
        c6.minimise_overlap(2, 3, 2, rng=0)
    with pytest.raises(VerifyError, match="U"):
        c6.model_mse(np.ones((2, 3)), 0.0, 1.0)
    with pytest.raises(VerifyError, match="rng"):
        c6.minimise_overlap(2, 1, 2, rng="seed")
    with pytest.raises(VerifyError, match="delta"):
        c6.retract(np.zeros((2, 3, 1)) + np.eye(3)[:, :1], np.zeros((2, 3, 2)), 0.1)


@pytest.mark.claim(CLAIM, part="scope")
def test_overlap_plot_shows_the_bounds_and_descents_below_them(saved):
    """Every descent curve starts below and ends at (or below) its configuration's fusion-frame
    bound, drawn as a horizontal line at 1 − max(0, (H d_k/d − 1)/(H − 1)) (written here)."""
    result, out = saved
    data = loads_json("plot", (out / plot_data_path(result.plots["overlap_optimisation"])).read_text())
    lines = data["axes"][0]["lines"]
    flat = sorted({round(ln["y"][0], 12) for ln in lines if len(ln["y"]) == 2 and ln["y"][0] == ln["y"][1]})
    rows = _part(result, "beyond d (H·d_k > d)").numeric.figures["configs"]
    assert flat == sorted({round(_bound(r["H"], r["d_k"], r["d"]), 12) for r in rows})
    curves = [ln for ln in lines if len(ln["y"]) > 2]
    assert len(curves) == sum(r["starts"] for r in rows)
    assert all(max(ln["y"]) <= 1 + 1e-12 for ln in curves)


@pytest.mark.claim(CLAIM, part="scope")
def test_bound_certificates_enclose_the_bound_written_here(result):
    """Each arb certificate encloses (bound − HDI of the best optimum) with the bound written here,
    and holds: the optimum found never beats the fusion-frame bound."""
    from flint import arb

    for row in _part(result, "beyond d (H·d_k > d)").numeric.figures["configs"]:
        cert = row["certificate"]
        assert cert["holds"], cert
        mid = float(arb(cert["enclosure"]).mid())
        if (row["H"], row["d_k"], row["d"]) == c6.NOT_ATTAINED:
            assert abs(mid - (2 - 4 / 3)) <= 1e-9                    # Φ = 2 against the bound 4/3
        else:
            assert abs(mid - (_bound(row["H"], row["d_k"], row["d"]) - row["final_hdi_max"])) <= 1e-12
