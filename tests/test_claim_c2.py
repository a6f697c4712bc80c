"""C2 check (verify.claims.c2) against independent computations written here: torch's
nn.MultiheadAttention on random modules (biases, kdim/vdim, several heads), and for scalar values
the ensemble Σ_h α_h f̂_h + β with f̂_h from scipy.special.softmax and explicit loops."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st
from scipy.special import softmax

from verify.claims import Context, c2, run_claim
from verify.errors import VerifyError
from verify.judgment.verdicts import Role
from verify.numeric.attention import from_torch
from verify.replay import replay

# Float64 on both sides, O(10) operations per output on O(1) data: differences are ~1e-15;
# 1e-12 (relative to the largest output) is the bar the spec sets for "equal to rounding".
TORCH_RTOL = 1e-12
# α_h, β: dot products of <= 3 terms, numpy against a Python sum: a few ulps of O(1) numbers.
WEIGHT_TOL = 1e-13


#: the claim whose quick run the shared fixtures ``saved`` and ``result`` (tests/conftest.py) give
CLAIM = "C2"
pytestmark = pytest.mark.claim(CLAIM, part="core")


def _part(result, pid):
    return next(p for p in result.parts if p.id == pid)


def _rel(a, b):
    b = np.asarray(b)
    return float(np.max(np.abs(np.asarray(a) - b)) / np.max(np.abs(b)))


# -- structure -------------------------------------------------------------------------------
def test_parts_and_roles(result):
    assert result.id == "C2" and result.stated
    assert {p.id: p.role for p in result.parts} == {"ensemble-identity": Role.CORE, "free-weights": Role.DETAIL}
    assert not _part(result, "ensemble-identity").model_assumptions
    sc = _part(result, "free-weights").numeric.figures
    # the finding: random modules' weights are free reals, not a convex combination
    assert sc["modules_on_simplex"] == 0 and sc["min_alpha"] < 0


@pytest.mark.claim(CLAIM, part="detail")
def test_free_weights_counterexample_replays_against_torch(saved):
    """The saved blocks' α_h = W_V^h W_O^h, recomputed with torch, are off the simplex."""
    result, out = saved
    doc, outcome = replay(out / "counterexamples" / "C2-free-weights.json")
    assert outcome.violates and doc["expected"]["violates"]
    wv, wo = (torch.tensor(doc["params"][k], dtype=torch.float64) for k in ("W_V", "W_O"))
    alpha = (wv * wo).sum(dim=1).numpy()
    assert np.allclose(alpha, outcome.figures["alpha"], rtol=0, atol=WEIGHT_TOL)
    assert alpha.min() < 0 or abs(alpha.sum() - 1) > c2.SIMPLEX_TOL


@pytest.mark.parametrize("wv,wo,violates", [
    ([[0.5], [0.5]], [[1.0], [1.0]], False),          # α = (1/2, 1/2): an average
    ([[1.0, 0.0], [0.0, 1.0]], [[0.3, 9.0], [9.0, 0.7]], False),   # α = (0.3, 0.7)
    ([[1.0], [1.0]], [[1.0], [1.0]], True),           # Σα = 2
    ([[2.0], [-1.0]], [[1.0], [1.0]], True),          # a negative weight
], ids=["average", "convex-dv2", "sum-2", "negative"])
@pytest.mark.claim(CLAIM, part="detail")
def test_free_weights_judge(wv, wo, violates):
    assert c2.replay_free_weights({"W_V": wv, "W_O": wo}).violates is violates


@pytest.mark.claim(CLAIM, part="detail")
def test_free_weights_replay_refuses_blocks_of_two_shapes():
    with pytest.raises(VerifyError, match="^params: .*W_V and W_O of one shape"):
        c2.replay_free_weights({"W_V": [[1.0]], "W_O": [[1.0, 2.0]]})


def test_same_seed_same_figures(result):
    again = run_claim("C2", Context(seed=0, quick=True))
    assert again.headline == result.headline
    for a, b in zip(result.parts, again.parts):
        assert a.numeric.figures == b.numeric.figures, a.id


# -- torch ----------------------------------------------------------------------------------------
@st.composite
def modules(draw):
    H, dh = draw(st.integers(1, 4), label="H"), draw(st.integers(1, 3), label="head dim")
    return dict(H=H, E=H * dh, bias=draw(st.booleans()), kdim=draw(st.one_of(st.none(), st.integers(1, 5))),
                vdim=draw(st.one_of(st.none(), st.integers(1, 5))), N=draw(st.integers(1, 2)),
                L=draw(st.integers(1, 3)), S=draw(st.integers(1, 4)), seed=draw(st.integers(0, 2**31 - 1)))


@given(modules())
def test_from_torch_and_the_check_reference_reproduce_torch(cfg):
    """Random float64 torch modules (every parameter N(0, 1)): MultiHeadNW.from_torch and the check's
    concatenate-then-project mpmath loop both give torch's output to 1e-12."""
    mod = torch.nn.MultiheadAttention(cfg["E"], cfg["H"], bias=cfg["bias"], kdim=cfg["kdim"], vdim=cfg["vdim"],
                                      batch_first=True, dtype=torch.float64)
    g = torch.Generator().manual_seed(cfg["seed"])
    with torch.no_grad():
        for prm in mod.parameters():
            prm.copy_(torch.randn(prm.shape, generator=g, dtype=torch.float64))
    x = torch.randn((cfg["N"], cfg["L"], cfg["E"]), generator=g, dtype=torch.float64)
    xk = torch.randn((cfg["N"], cfg["S"], cfg["kdim"] or cfg["E"]), generator=g, dtype=torch.float64)
    xv = torch.randn((cfg["N"], cfg["S"], cfg["vdim"] or cfg["E"]), generator=g, dtype=torch.float64)
    with torch.no_grad():
        ref = mod.eval()(x, xk, xv, need_weights=False)[0].numpy()
    ours = from_torch(mod)
    assert _rel(ours(x.numpy(), xk.numpy(), xv.numpy()), ref) <= TORCH_RTOL
    assert _rel(c2.mp_mha(ours, x.numpy(), xk.numpy(), xv.numpy()), ref) <= TORCH_RTOL


# -- scalar values: the ensemble written out here ------------------------------------------------
@given(H=st.integers(1, 5), d=st.integers(1, 4), d_k=st.integers(1, 3), d_v=st.integers(1, 3), L=st.integers(1, 3),
       S=st.integers(1, 5), seed=st.integers(0, 2**31 - 1))
@pytest.mark.claim(CLAIM, part="detail")
def test_scalar_mha_is_free_weighted_sum_of_nw_heads(H, d, d_k, d_v, L, S, seed):
    rng = np.random.default_rng(seed)
    mod = c2.random_module(rng, H, d, d, 1, d_k, d_v, 1)
    x, xk, y = rng.standard_normal((L, d)), rng.standard_normal((S, d)), rng.standard_normal(S)
    ens = np.zeros(L)
    alpha, beta = [], 0.0
    for h in range(H):
        q = x @ mod.W_Q[h] + mod.b_Q[h]
        k = xk @ mod.W_K[h] + mod.b_K[h]
        w = softmax(q @ k.T / math.sqrt(d_k), axis=1)                      # head h's NW weights
        f_hat = w @ y
        a_h = sum(mod.W_V[h][0, c] * mod.W_O[h][c, 0] for c in range(d_v))  # α_h = W_V^h W_O^h
        beta += sum(mod.b_V[h][c] * mod.W_O[h][c, 0] for c in range(d_v))
        alpha.append(a_h)
        ens += a_h * f_hat
    ens += beta + mod.b_O[0]
    got_alpha, got_beta = c2.scalar_weights(mod)
    assert np.allclose(got_alpha, alpha, rtol=WEIGHT_TOL, atol=WEIGHT_TOL)
    assert got_beta == pytest.approx(beta + mod.b_O[0], rel=WEIGHT_TOL, abs=WEIGHT_TOL)
    out = mod(x, xk, y[:, None])[:, 0]
    scale = max(1.0, float(np.max(np.abs(ens))))
    assert float(np.max(np.abs(out - ens))) / scale <= TORCH_RTOL


@pytest.mark.claim(CLAIM, part="detail")
def test_scalar_weights_rejects_vector_modules():
    mod = c2.random_module(np.random.default_rng(0), 2, 3, 3, 2, 1, 1, 1)
    with pytest.raises(VerifyError, match="module"):
        c2.scalar_weights(mod)
