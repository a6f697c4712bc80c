"""C2 check (verify.claims.c2) against independent computations written here: torch's
nn.MultiheadAttention on random modules (biases, kdim/vdim, several heads), for scalar values the
ensemble Σ_h α_h f̂_h + β with f̂_h from scipy.special.softmax and explicit loops, and the figures the
headline and summary quote recomputed from the quick run's seeded modules (mpmath loops, torch). The
judges are tables on both sides of every threshold, equality included."""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st
from scipy.special import softmax
from test_claims import part_of

from proofs.markup import num, sci
from verify.claims import Context, c2
from verify.errors import VerifyError
from verify.judgment.verdicts import Role
from verify.numeric.attention import EPS, from_torch
from verify.replay import replay

# Float64 on both sides, O(10) operations per output on O(1) data: differences are ~1e-15;
# 1e-12 (relative to the largest output) is the bar the spec sets for "equal to rounding".
TORCH_RTOL = 1e-12
# α_h, β: dot products of <= 3 terms, numpy against a Python sum: a few ulps of O(1) numbers.
WEIGHT_TOL = 1e-13
# A figure recomputed here from the same seeded inputs by other code (mpmath loops): both are float64
# roundings of 50-digit values; 1e-6 relative leaves room for the last digits of an error of 1e-16.
FIGURE_RTOL = 1e-6
QUICK = Context(seed=0, quick=True)
C2_HEADLINE = (r"exact; 1 correction: the head weights $\alpha_h = W_V^h W_O^h$ are free reals (any sign and sum), "
               "not a convex combination")
C2_ENSEMBLE = [(2, 4, 3, 5, 2, 3, 4, 1, 3, 4), (3, 6, 6, 6, 2, 2, 6, 2, 2, 3)]   # quick (H, d, kdim, vdim, ...)
C2_SCALAR = [(2, 3, 2, 2, 3, 4), (3, 4, 2, 3, 2, 5)]                            # quick (H, d, d_k, d_v, L, S)
ABOVE_ONE = np.nextafter(1.0, 2.0)
#: Half and twice the declared tolerance (the sums below are off from 1 by these, to rounding).
HALF, TWICE = 0.5 * c2.SIMPLEX_TOL, 2.0 * c2.SIMPLEX_TOL

#: the claim whose quick run the shared fixtures ``saved`` and ``result`` (tests/conftest.py) give
CLAIM = "C2"
pytestmark = pytest.mark.claim(CLAIM, part="core")


def _rel(a, b):
    b = np.asarray(b)
    return float(np.max(np.abs(np.asarray(a) - b)) / np.max(np.abs(b)))


def test_parts_and_roles(result):
    assert result.id == "C2" and result.stated
    assert {p.id: p.role for p in result.parts} == {"ensemble-identity": Role.CORE, "free-weights": Role.DETAIL}
    assert not part_of(result, "ensemble-identity").model_assumptions


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


@pytest.mark.claim(CLAIM, part="detail")
def test_free_weights_replay_refuses_blocks_of_two_shapes():
    with pytest.raises(VerifyError, match="^params: .*W_V and W_O of one shape"):
        c2.replay_free_weights({"W_V": [[1.0]], "W_O": [[1.0, 2.0]]})


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
        a_h = sum(mod.W_V[h][0, c] * mod.W_O[h][c, 0] for c in range(d_v))  # α_h = W_V^h W_O^h
        beta += sum(mod.b_V[h][c] * mod.W_O[h][c, 0] for c in range(d_v))
        alpha.append(a_h)
        ens += a_h * (w @ y)
    ens += beta + mod.b_O[0]
    got_alpha, got_beta = c2.scalar_weights(mod)
    assert np.allclose(got_alpha, alpha, rtol=WEIGHT_TOL, atol=WEIGHT_TOL)
    assert got_beta == pytest.approx(beta + mod.b_O[0], rel=WEIGHT_TOL, abs=WEIGHT_TOL)
    scale = max(1.0, float(np.max(np.abs(ens))))
    assert float(np.max(np.abs(mod(x, xk, y[:, None])[:, 0] - ens))) / scale <= TORCH_RTOL


@pytest.mark.claim(CLAIM, part="detail")
def test_scalar_weights_rejects_vector_modules():
    mod = c2.random_module(np.random.default_rng(0), 2, 3, 3, 2, 1, 1, 1)
    with pytest.raises(VerifyError, match="module"):
        c2.scalar_weights(mod)


# -- the headline and the summary, from the quick run's seeded modules -----------------------------
def _mp_mha_sum_of_heads(mod, x, xk, xv):
    """Σ_h softmax(Q_h K_hᵀ/sqrt(d_k)) V_h W_O^h + b_O by loops in mpmath (one batch element)."""
    def M(a):
        return mpmath.matrix(np.asarray(a).tolist())

    L, S = x.shape[0], xk.shape[0]
    s = 1 / mpmath.sqrt(mod.d_k)
    acc = [[mpmath.mpf(float(b)) for b in mod.b_O] for _ in range(L)]
    for h in range(mod.H):
        Q = M(x) * M(mod.W_Q[h]) + M([mod.b_Q[h].tolist()] * L)
        K = M(xk) * M(mod.W_K[h]) + M([mod.b_K[h].tolist()] * S)
        V = M(xv) * M(mod.W_V[h]) + M([mod.b_V[h].tolist()] * S)
        for i in range(L):
            w = [mpmath.exp(s * mpmath.fsum(Q[i, c] * K[j, c] for c in range(mod.d_k))) for j in range(S)]
            est = [mpmath.fsum(w[j] * V[j, c] for j in range(S)) / mpmath.fsum(w) for c in range(mod.d_v)]
            for o in range(mod.d_out):
                acc[i][o] += mpmath.fsum(est[c] * mpmath.mpf(float(mod.W_O[h][c, o])) for c in range(mod.d_v))
    return np.array([[float(a) for a in row] for row in acc])


def _ensemble_error():
    worst = 0.0
    for i, (H, d, kdim, vdim, d_k, d_v, d_out, N, L, S) in enumerate(C2_ENSEMBLE):
        rng = QUICK.rng(f"c2/ensemble/{i}")
        mod = c2.random_module(rng, H, d, kdim, vdim, d_k, d_v, d_out)
        x, xk, xv = rng.standard_normal((N, L, d)), rng.standard_normal((N, S, kdim)), rng.standard_normal((N, S, vdim))
        va = max(float(np.max(np.abs(xv) @ np.abs(mod.W_V[h]) + np.abs(mod.b_V[h]))) for h in range(H))
        col = max(float(sum(np.abs(mod.W_O[h][:, o]).sum() for h in range(H))) for o in range(d_out))
        scale = va * col + float(np.max(np.abs(mod.b_O)))
        with mpmath.workdps(50):
            ref = np.stack([_mp_mha_sum_of_heads(mod, x[b], xk[b], xv[b]) for b in range(N)])
        worst = max(worst, float(np.max(np.abs(mod(x, xk, xv) - ref))) / scale)
    return worst


def _alphas():
    """α_h = W_V^h W_O^h of the quick scalar modules (torch, float64)."""
    out = []
    for i, (H, d, d_k, d_v, L, S) in enumerate(C2_SCALAR):
        mod = c2.random_module(QUICK.rng(f"c2/scalar/{i}"), H, d, d, 1, d_k, d_v, 1)
        wv = torch.tensor(np.stack([mod.W_V[h][0] for h in range(H)]), dtype=torch.float64)
        wo = torch.tensor(np.stack([mod.W_O[h][:, 0] for h in range(H)]), dtype=torch.float64)
        out.append(torch.einsum("hv,hv->h", wv, wo).tolist())
    return out


def test_c2_headline_summary_and_core_finding_exactly(result):
    assert result.headline == C2_HEADLINE
    err = _ensemble_error()
    core = part_of(result, "ensemble-identity")
    assert err == pytest.approx(core.numeric.figures["max_rel_error"], rel=FIGURE_RTOL)
    sums = [sum(a) for a in _alphas()]
    assert result.summary == (
        rf"$\mathrm{{MHA}} = \sum_h$ NW heads through $W_O^h$ to {sci(err, 0)} (mpmath, $H$ in "
        f"{sorted({c[0] for c in C2_ENSEMBLE})}); scalar case: $\\alpha_h = W_V^h W_O^h$ free reals "
        f"($\\sum_h \\alpha_h$ in {num(min(sums), '.2f')} to {num(max(sums), '.2f')})")
    assert core.finding == rf"$\mathrm{{MHA}} = \sum_h$ NW heads through $W_O^h$ to {sci(err, 0)}"
    assert f"max relative error {sci(err)}" in core.numeric.summary
    assert f"{len(C2_ENSEMBLE)} seeded random modules" in core.numeric.summary


@pytest.mark.claim(CLAIM, part="detail")
def test_c2_correction_quotes_the_weights_as_recomputed(result):
    """The range of Σα, the smallest α_h, how many modules lie on the simplex, and the module the
    counterexample names (the first off the simplex), from α_h = W_V^h W_O^h computed in torch."""
    part = part_of(result, "free-weights")
    alphas = _alphas()
    sums = [sum(a) for a in alphas]
    on = [all(x >= 0 for x in a) and abs(sum(a) - 1) <= 1e-12 for a in alphas]
    smallest = min(x for a in alphas for x in a)
    assert (f"$\\sum_h \\alpha_h$ ranges over {num(min(sums), '.2f')} to {num(max(sums), '.2f')}, the smallest "
            f"$\\alpha_h$ is {num(smallest, '.2f')}; {sum(on)} of {len(alphas)} random modules have their weights on "
            "the simplex") in part.numeric.summary
    assert (num(min(sums), ".2f"), num(max(sums), ".2f"), num(smallest, ".2f"), sum(on)) == \
        ("$-0.63$", "$4.02$", "$-0.70$", 0)
    first_off = next(i for i, o in enumerate(on) if not o)
    assert part.counterexample.description == (
        f"a seeded module with $H = {C2_SCALAR[first_off][0]}$: the weights $\\alpha_h = W_V^h W_O^h$ sum to "
        f"{num(sums[first_off], '.3f')}")
    for row, a in zip(part.numeric.figures["cases"], alphas):
        assert np.allclose(row["alpha"], a, rtol=1e-9, atol=0)


# -- the judges: synthetic inputs on both sides of every threshold -----------------------------
@pytest.mark.claim(CLAIM, part="detail")
@pytest.mark.parametrize("alpha,tol,on", [
    ([0.5, 0.5], None, True),
    ([0.0, 1.0], None, True),                                  # a zero weight is on the simplex
    ([-0.0, 1.0], None, True),
    ([-2.0**-60, 1.0 + 2.0**-60], None, False),                # a negative weight, however small
    ([0.5, 0.5 + HALF], None, True),                           # |Σα − 1| half the tolerance
    ([0.5, 0.5 + TWICE], None, False),                         # twice it
    ([0.5, 0.5 + 2.0**-40], 2.0**-40, True),                   # exactly at the tolerance
    ([0.5, 0.5 + 2.0**-40], 2.0**-41, False),
    ([0.5, 0.5 - 2.0**-40], 2.0**-40, True),                   # below 1 by the tolerance
    ([0.5, 0.5 - 2.0**-39], 2.0**-40, False),
    ([2.0, -1.0], None, False),                                # sums to 1 with a negative weight
    ([1.0, 1.0], None, False),                                 # non-negative, sums to 2
], ids=["average", "zero-weight", "minus-zero", "tiny-negative", "sum-below-tol", "sum-above-tol", "sum-at-tol",
        "sum-above-smaller-tol", "sum-at-tol-below-1", "sum-below-1-beyond-tol", "negative-sum-1", "sum-2"])
def test_simplex_judge(alpha, tol, on, monkeypatch):
    if tol is not None:
        monkeypatch.setattr(c2, "SIMPLEX_TOL", tol)
    assert c2.on_simplex(np.array(alpha)) is on
    # the replayer judges the same: α_h = W_V^h W_O^h with W_O = 1
    out = c2.replay_free_weights({"W_V": [[x] for x in alpha], "W_O": [[1.0] for _ in alpha]})
    assert out.violates is (not on)


@pytest.mark.parametrize("ratio,key_bias,ok", [
    (0.0, 0.0, True), (1.0, 1.0, True), (ABOVE_ONE, 0.0, False), (0.0, ABOVE_ONE, False), (2.0, 2.0, False),
], ids=["zero", "at-bound", "error-over", "key-bias-over", "both-over"])
def test_ensemble_agreement_judge(ratio, key_bias, ok):
    assert c2.ensemble_agrees(ratio, key_bias) is ok


@pytest.mark.claim(CLAIM, part="detail")
@pytest.mark.parametrize("ratio,closed,bound,gap,ok", [
    (1.0, 3e-16, 3e-16, 4 * EPS, True),
    (ABOVE_ONE, 0.0, 3e-16, 0.0, False),
    (0.5, np.nextafter(3e-16, 1.0), 3e-16, 0.0, False),
    (0.5, 0.0, 3e-16, np.nextafter(4 * EPS, 1.0), False),
    (0.0, 0.0, 0.0, 0.0, True),
], ids=["all-at-threshold", "module-over", "closed-form-over", "alpha-gap-over", "all-zero"])
def test_scalar_agreement_judge(ratio, closed, bound, gap, ok):
    assert c2.scalar_agrees(ratio, closed, bound, gap) is ok
