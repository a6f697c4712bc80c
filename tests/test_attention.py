"""C1 and C2 against PyTorch: with equal key norms a softmax head is Gaussian NW at b = s^(-1/2), not at
the stated bandwidth (C1; the exponential-kernel identity is tests/test_kernel.py's comparison with
torch), and multi-head attention is the sum of H NW heads through the W_O blocks (C2)."""

from __future__ import annotations

import copy
import math
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from hypothesis import given
from hypothesis import strategies as st

from verify.numeric.attention import MultiHeadNW, from_torch
from verify.numeric.nw import nw_weights

# Float64 on both sides (~1e-15); 1e-12 relative is the spec's bar for "equal to rounding".
TORCH_RTOL = 1e-12
# Kernel identities on scores of size <= ~20 in float64: pure rounding (~1e-14); same bar.
C1_TOL = 1e-12
# "Not equal" must mean a modelling difference, not rounding: at least this much weight moves.
C1_MISMATCH = 0.05

ROOT = Path(__file__).resolve().parents[1]


def rel_err(ours: np.ndarray, ref: torch.Tensor) -> float:
    ref = ref.detach().numpy()
    assert ours.shape == ref.shape
    return float(np.max(np.abs(ours - ref)) / max(np.max(np.abs(ref)), np.finfo(float).tiny))


def random_module(seed: int, E: int, H: int, *, bias: bool, batch_first: bool, kdim=None, vdim=None):
    """A float64 MultiheadAttention whose every parameter (biases included) is N(0, 1)."""
    mod = torch.nn.MultiheadAttention(E, H, bias=bias, batch_first=batch_first, kdim=kdim, vdim=vdim,
                                      dtype=torch.float64)
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for p in mod.parameters():
            p.copy_(torch.randn(p.shape, generator=g, dtype=torch.float64))
    return mod.eval()


def torch_forward(mod, x, kk, vv, need_weights=True):
    """Feed batch-leading (N, L, E) inputs to torch in its own layout; return batch-leading."""
    if mod.batch_first or x.dim() == 2:
        out, w = mod(x, kk, vv, need_weights=need_weights, average_attn_weights=False)
    else:
        out, w = mod(x.transpose(0, 1), kk.transpose(0, 1), vv.transpose(0, 1), need_weights=need_weights,
                     average_attn_weights=False)
        out = out.transpose(0, 1)
    return out, w


@st.composite
def configs(draw):
    H, dh = draw(st.integers(1, 3)), draw(st.integers(1, 3))
    return dict(
        H=H, E=H * dh, bias=draw(st.booleans()), batch_first=draw(st.booleans()),
        kdim=draw(st.one_of(st.none(), st.integers(1, 5))), vdim=draw(st.one_of(st.none(), st.integers(1, 5))),
        N=draw(st.integers(1, 3)), L=draw(st.integers(1, 4)), S=draw(st.integers(1, 5)),
        seed=draw(st.integers(0, 2**31 - 1)),
    )


def inputs(cfg, unbatched=False):
    g = torch.Generator().manual_seed(cfg["seed"] + 1)
    lead = () if unbatched else (cfg["N"],)
    x = torch.randn(lead + (cfg["L"], cfg["E"]), generator=g, dtype=torch.float64)
    kk = torch.randn(lead + (cfg["S"], cfg["kdim"] or cfg["E"]), generator=g, dtype=torch.float64)
    vv = torch.randn(lead + (cfg["S"], cfg["vdim"] or cfg["E"]), generator=g, dtype=torch.float64)
    return x, kk, vv


def build(cfg):
    return random_module(cfg["seed"], cfg["E"], cfg["H"], bias=cfg["bias"], batch_first=cfg["batch_first"],
                         kdim=cfg["kdim"], vdim=cfg["vdim"])


@given(configs(), st.booleans())
def test_mha_equals_torch(cfg, unbatched):
    mod = build(cfg)
    x, kk, vv = inputs(cfg, unbatched)
    with torch.no_grad():
        out, w = torch_forward(mod, x, kk, vv)
        out_fast, _ = torch_forward(mod, x, kk, vv, need_weights=False)
    mha = from_torch(mod)
    ours = mha(x.numpy(), kk.numpy(), vv.numpy())
    assert rel_err(ours, out) <= TORCH_RTOL
    assert rel_err(ours, out_fast) <= TORCH_RTOL
    W = mha.weights(x.numpy(), kk.numpy())
    assert W.shape == tuple(w.shape)                     # (N, H, L, S) or (H, L, S)
    assert np.max(np.abs(W - w.numpy())) <= TORCH_RTOL


@given(configs())
def test_each_head_is_its_own_nw_term(cfg):
    """C2 term by term: torch with out_proj restricted to head h's column block (and no output
    bias) gives exactly head_h W_O^h; in torch alone the H terms plus b_O give the output."""
    mod = build(cfg)
    x, kk, vv = inputs(cfg)
    mha = from_torch(mod)
    terms = mha.contributions(x.numpy(), kk.numpy(), vv.numpy())          # (N, H, L, E)
    dh = cfg["E"] // cfg["H"]
    total = torch.zeros(())
    with torch.no_grad():
        full, _ = torch_forward(mod, x, kk, vv)
        for h in range(cfg["H"]):
            one = copy.deepcopy(mod)
            mask = torch.zeros_like(one.out_proj.weight)
            mask[:, h * dh:(h + 1) * dh] = 1
            one.out_proj.weight.mul_(mask)
            if one.out_proj.bias is not None:
                one.out_proj.bias.zero_()
            term, _ = torch_forward(one, x, kk, vv)
            assert rel_err(terms[:, h], term) <= TORCH_RTOL
            total = total + term
        b_O = mod.out_proj.bias if mod.out_proj.bias is not None else 0.0
        assert rel_err((total + b_O).numpy(), full) <= TORCH_RTOL


@given(configs())
def test_heads_equal_torch_sdpa_on_projected_inputs(cfg):
    """head_h = NW(q_h, k_h, v_h) with q_h = x W_q[h rows]^T + b_q[h] computed by torch."""
    mod = build(cfg)
    x, kk, vv = inputs(cfg)
    E, H = cfg["E"], cfg["H"]
    dh = E // H
    if mod._qkv_same_embed_dim:
        Wq, Wk, Wv = mod.in_proj_weight.split(E)
    else:
        Wq, Wk, Wv = mod.q_proj_weight, mod.k_proj_weight, mod.v_proj_weight
    b = mod.in_proj_bias.split(E) if mod.in_proj_bias is not None else (None, None, None)
    heads = from_torch(mod).heads(x.numpy(), kk.numpy(), vv.numpy())           # (N, H, L, dh)
    with torch.no_grad():
        for h in range(H):
            rows = slice(h * dh, (h + 1) * dh)
            q, k, v = (F.linear(t, W[rows], None if bb is None else bb[rows]) for t, W, bb in
                       ((x, Wq, b[0]), (kk, Wk, b[1]), (vv, Wv, b[2])))
            assert rel_err(heads[:, h], F.scaled_dot_product_attention(q, k, v)) <= TORCH_RTOL


def test_direct_construction_and_no_bias_defaults():
    rng = np.random.default_rng(0)
    H, d, d_k, d_v, d_out = 2, 3, 2, 4, 5
    mha = MultiHeadNW(rng.standard_normal((H, d, d_k)), rng.standard_normal((H, 6, d_k)),
                      rng.standard_normal((H, 7, d_v)), rng.standard_normal((H, d_v, d_out)))
    x, kx, vx = rng.standard_normal((2, 4, d)), rng.standard_normal((2, 5, 6)), rng.standard_normal((2, 5, 7))
    out = mha(x, kx, vx)
    assert out.shape == (2, 4, d_out)
    # written out head by head with torch's SDPA and plain sums
    ref = sum(F.scaled_dot_product_attention(*(torch.from_numpy(a @ W) for a, W in
                                                ((x, mha.W_Q[h]), (kx, mha.W_K[h]), (vx, mha.W_V[h])))).numpy()
              @ mha.W_O[h] for h in range(H))
    assert np.max(np.abs(out - ref)) <= TORCH_RTOL * np.max(np.abs(ref))


def test_torch_is_imported_lazily():
    code = "import sys, verify.numeric.attention, verify.numeric.nw; assert 'torch' not in sys.modules, 'torch imported'"
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    res = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True)
    assert res.returncode == 0, res.stderr


def naive_gaussian_weights(q, k, b):
    W = np.empty((q.shape[0], k.shape[0]))
    for i in range(q.shape[0]):
        K = [math.exp(-math.fsum((a - c) ** 2 for a, c in zip(q[i], kj)) / (2 * b * b)) for kj in k]
        W[i] = [Kj / math.fsum(K) for Kj in K]
    return W


def equal_norm_keys(rng, n, d, r):
    k = rng.standard_normal((n, d))
    return r * k / np.linalg.norm(k, axis=1, keepdims=True)


@given(st.integers(1, 5), st.integers(2, 6), st.integers(1, 6), st.floats(0.2, 3.0),
       st.one_of(st.none(), st.floats(0.1, 2.0)), st.integers(0, 2**31 - 1))
def test_c1_equal_key_norms_gaussian_with_b_equal_one_over_sqrt_scale(m, n, d, r, s, seed):
    """(b) With ||k_j|| = r for all j, softmax(s <q,k>) == Gaussian NW with b = 1/sqrt(s)
    (b = d_k^(1/4) for the default s = 1/sqrt(d_k)): exp(-||q-k||^2 s/2) = exp(s<q,k>) times
    factors exp(-s||q||^2/2) exp(-s r^2/2) that do not depend on j and cancel."""
    rng = np.random.default_rng(seed)
    q, k = rng.standard_normal((m, d)), equal_norm_keys(rng, n, d, r)
    scale = 1 / math.sqrt(d) if s is None else s
    b = 1 / math.sqrt(scale)
    if s is None:
        assert b == pytest.approx(d**0.25, rel=1e-15)
    softmax_ref = torch.softmax(torch.from_numpy(q @ k.T) * scale, dim=-1).numpy()   # torch's softmax
    gauss_ref = naive_gaussian_weights(q, k, b)                                     # loop in this file
    assert np.max(np.abs(softmax_ref - gauss_ref)) <= C1_TOL
    assert np.max(np.abs(nw_weights(q, k, kernel="gaussian", bandwidth=b) - softmax_ref)) <= C1_TOL
    assert np.max(np.abs(nw_weights(q, k, scale=scale) - gauss_ref)) <= C1_TOL


def test_c1_fails_for_unequal_key_norms():
    """(c1) Unequal key norms: the Gaussian weights are the softmax weights reweighted by
    exp(-s ||k_j||^2 / 2) (checked exactly), so they differ by far more than rounding."""
    d = 4
    s = 1 / math.sqrt(d)
    q = np.array([[1.0, 0.5, -0.5, 0.0], [0.0, 1.0, 0.0, 1.0]])
    k = np.array([[0.5, 0.0, 0.0, 0.0], [2.0, 1.0, 0.0, 0.0], [0.0, 0.0, 3.0, 0.0], [0.0, 1.0, 0.0, 1.0]])
    assert len(set(np.round(np.linalg.norm(k, axis=1), 12))) > 1
    soft = torch.softmax(torch.from_numpy(q @ k.T) * s, dim=-1).numpy()
    gauss = naive_gaussian_weights(q, k, 1 / math.sqrt(s))
    assert np.max(np.abs(soft - gauss)) > C1_MISMATCH
    reweighted = soft * np.exp(-s * np.sum(k**2, axis=1) / 2)
    assert np.max(np.abs(reweighted / reweighted.sum(1, keepdims=True) - gauss)) <= C1_TOL
    assert np.max(np.abs(nw_weights(q, k, kernel="gaussian", bandwidth=1 / math.sqrt(s)) - gauss)) <= C1_TOL


@pytest.mark.parametrize("d", [2, 4, 16])
def test_c1_bandwidth_one_over_sqrt_dk_is_not_softmax(d):
    """(c2) The summary's 'bandwidth 1/sqrt(d_k)' used as a Gaussian bandwidth does not give
    softmax attention even with equal key norms: b = 1/sqrt(d_k) is softmax with scale d_k
    (1/b^2), not 1/sqrt(d_k); only b = d_k^(1/4) is.  (For d_k = 1 the two coincide.)"""
    rng = np.random.default_rng(d)
    q, k = rng.standard_normal((3, d)), equal_norm_keys(rng, 6, d, 1.5)
    soft = torch.softmax(torch.from_numpy(q @ k.T) / math.sqrt(d), dim=-1).numpy()
    literal = naive_gaussian_weights(q, k, 1 / math.sqrt(d))
    assert np.max(np.abs(literal - soft)) > C1_MISMATCH
    assert np.max(np.abs(nw_weights(q, k, kernel="gaussian", bandwidth=1 / math.sqrt(d)) - soft)) > C1_MISMATCH
    as_scale_dk = torch.softmax(torch.from_numpy(q @ k.T) * d, dim=-1).numpy()
    assert np.max(np.abs(literal - as_scale_dk)) <= C1_TOL
    assert np.max(np.abs(naive_gaussian_weights(q, k, d**0.25) - soft)) <= C1_TOL
