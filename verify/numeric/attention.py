"""Multi-head attention as an ensemble of Nadaraya-Watson heads (claim C2).

Head ``h`` projects the inputs, ``q = x W_Q^h + b_Q^h``, ``k = x_k W_K^h + b_K^h``,
``v = x_v W_V^h + b_V^h``, and is the NW estimator with the exponential kernel
``exp(<q, k> / sqrt(d_k))`` (claim C1)::

    head_h(x) = sum_i w_i^h(x) v_i^h
    MHA(x)    = sum_h head_h(x) W_O^h + b_O        (W_O^h: the h-th row block of W_O)

Arrays are batch-leading, ``(..., L, E)``; :func:`from_torch` reads the parameters of a
``torch.nn.MultiheadAttention`` (torch is imported only there).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from verify._validate import as_array, fail
from verify.numeric.nw import nw_estimate, nw_weights

__all__ = ["MultiHeadNW", "from_torch", "rounding_bound", "EPS", "ROUNDING_SAFETY", "MP_DPS"]

#: Digits of the mpmath references of an attention head (C1, C2): far beyond float64's 16, so a
#: reference is exact for our purpose.
MP_DPS = 50
EPS = float(np.finfo(np.float64).eps)
#: Factor on the first-order float64 error bound ``eps · terms · (1 + A)`` of an NW estimate
#: (A = the largest |score| a weight is the exp of, terms = the rounded operations per output);
#: Higham's worst case is ~1, typical errors are far smaller.
ROUNDING_SAFETY = 4.0


def rounding_bound(max_abs_score: float, terms: int) -> float:
    """First-order float64 bound on an NW estimate's error relative to ``max |v|``: each weight is
    ``exp(score)`` with the score off by ~``eps · terms · |score|``, and the sums add ``eps · terms``."""
    return ROUNDING_SAFETY * EPS * terms * (1.0 + max_abs_score)


def _param(name: str, x: Any, shape: tuple, meaning: str) -> np.ndarray:
    """A finite float64 parameter of exactly ``shape`` (``None`` entries: any size >= 1)."""
    arr = as_array(name, x, ndim=len(shape), keep_float32=False)
    if any(s == 0 for s in arr.shape) or any(e is not None and s != e for s, e in zip(arr.shape, shape)):
        want = ", ".join("any >= 1" if e is None else str(e) for e in shape)
        raise fail(name, f"shape {arr.shape}", f"shape {meaning} = ({want}{',' if len(shape) == 1 else ''})")
    return arr


class MultiHeadNW:
    """H softmax NW heads in their own projection subspaces, combined through ``W_O`` blocks: ``W_Q (H, d,
    d_k)``, ``W_K (H, kdim, d_k)``, ``W_V (H, vdim, d_v)``, ``W_O (H, d_v, d_out)``, optional biases
    ``b_Q, b_K (H, d_k)``, ``b_V (H, d_v)``, ``b_O (d_out,)`` (``None`` = zero); float64 copies kept."""

    def __init__(self, W_Q: Any, W_K: Any, W_V: Any, W_O: Any, *, b_Q: Any = None, b_K: Any = None,
                 b_V: Any = None, b_O: Any = None) -> None:
        self.W_Q = _param("W_Q", W_Q, (None, None, None), "(H, d, d_k)")
        H, d, d_k = self.W_Q.shape
        self.W_K = _param("W_K", W_K, (H, None, d_k), f"(H, kdim, d_k) with H, d_k from W_Q {self.W_Q.shape}")
        self.W_V = _param("W_V", W_V, (H, None, None), f"(H, vdim, d_v) with H from W_Q {self.W_Q.shape}")
        d_v = self.W_V.shape[2]
        self.W_O = _param("W_O", W_O, (H, d_v, None),
                          f"(H, d_v, d_out) with H from W_Q {self.W_Q.shape} and d_v from W_V {self.W_V.shape}")
        d_out = self.W_O.shape[2]
        zero = np.zeros
        self.b_Q = zero((H, d_k)) if b_Q is None else _param("b_Q", b_Q, (H, d_k), "(H, d_k)")
        self.b_K = zero((H, d_k)) if b_K is None else _param("b_K", b_K, (H, d_k), "(H, d_k)")
        self.b_V = zero((H, d_v)) if b_V is None else _param("b_V", b_V, (H, d_v), "(H, d_v)")
        self.b_O = zero(d_out) if b_O is None else _param("b_O", b_O, (d_out,), "(d_out,)")
        self.H, self.d, self.d_k, self.d_v, self.d_out = H, d, d_k, d_v, d_out
        self.kdim, self.vdim = self.W_K.shape[1], self.W_V.shape[1]
        self.scale = 1.0 / math.sqrt(d_k)

    def __repr__(self) -> str:
        return (f"MultiHeadNW(H={self.H}, d={self.d}, kdim={self.kdim}, vdim={self.vdim}, "
                f"d_k={self.d_k}, d_v={self.d_v}, d_out={self.d_out})")

    def _input(self, name: str, x: Any, width: int, what: str) -> np.ndarray:
        arr = as_array(name, x, min_ndim=2, keep_float32=False)
        if arr.shape[-1] != width:
            raise fail(name, f"shape {arr.shape}", f"shape (..., {what}) with last axis {width}")
        return arr

    @staticmethod
    def _project(x: np.ndarray, W: np.ndarray, b: np.ndarray) -> np.ndarray:
        """``x W^h + b^h`` for every head: ``(..., L, e) -> (..., H, L, k)``."""
        return np.matmul(x[..., None, :, :], W) + b[:, None, :]

    def _qk(self, query: Any, key: Any, value: Any | None = None):
        query = self._input("query", query, self.d, "L, d")
        key = self._input("key", key, self.kdim, "S, kdim")
        shapes = [query.shape[:-2], key.shape[:-2]]
        if value is not None:
            value = self._input("value", value, self.vdim, "S, vdim")
            if value.shape[-2] != key.shape[-2]:
                raise fail("value", f"shape {value.shape}",
                           f"shape (..., S, vdim) with S == {key.shape[-2]} (key shape {key.shape})")
            shapes.append(value.shape[:-2])
        try:
            np.broadcast_shapes(*shapes)
        except ValueError:
            raise fail("query/key/value", f"leading axes {', '.join(map(str, shapes))}",
                       "leading (batch) axes that broadcast against each other") from None
        q = self._project(query, self.W_Q, self.b_Q)
        k = self._project(key, self.W_K, self.b_K)
        v = None if value is None else self._project(value, self.W_V, self.b_V)
        return q, k, v

    def weights(self, query: Any, key: Any, *, max_memory: int | None = None) -> np.ndarray:
        """Per-head NW (attention) weights, ``(..., H, L, S)``."""
        q, k, _ = self._qk(query, key)
        return nw_weights(q, k, scale=self.scale, max_memory=max_memory)

    def heads(self, query: Any, key: Any, value: Any, *, max_memory: int | None = None) -> np.ndarray:
        """Per-head NW estimates ``head_h = sum_i w_i^h v_i^h``, ``(..., H, L, d_v)``."""
        q, k, v = self._qk(query, key, value)
        return nw_estimate(q, k, v, scale=self.scale, max_memory=max_memory)

    def contributions(self, query: Any, key: Any, value: Any, *, max_memory: int | None = None) -> np.ndarray:
        """Each head's term of the ensemble, ``head_h W_O^h``: ``(..., H, L, d_out)``."""
        return np.matmul(self.heads(query, key, value, max_memory=max_memory), self.W_O)

    def __call__(self, query: Any, key: Any, value: Any, *, max_memory: int | None = None) -> np.ndarray:
        """``MHA = sum_h head_h W_O^h + b_O``, ``(..., L, d_out)``."""
        return self.contributions(query, key, value, max_memory=max_memory).sum(axis=-3) + self.b_O


def from_torch(module: Any) -> MultiHeadNW:
    """The :class:`MultiHeadNW` with the parameters of a ``torch.nn.MultiheadAttention`` (``y = x Wᵀ + b``,
    head h on rows ``h*d_k:(h+1)*d_k`` of ``W_q``, ``W_O^h = out_proj.weight[:, h*d_v:(h+1)*d_v].T``).
    ``add_bias_kv``, ``add_zero_attn`` and ``dropout > 0``, not part of the NW form, are rejected."""
    import torch  # test-only dependency: imported only when converting a torch module

    if not isinstance(module, torch.nn.MultiheadAttention):
        raise fail("module", f"an object of type {type(module).__name__}", "a torch.nn.MultiheadAttention")
    if module.bias_k is not None or module.bias_v is not None:
        raise fail("module", "add_bias_kv=True",
                   "add_bias_kv=False (learned extra key/value rows are unsupported: not part of the NW form)")
    if module.add_zero_attn:
        raise fail("module", "add_zero_attn=True",
                   "add_zero_attn=False (an appended zero key/value row is unsupported: not part of the NW form)")
    if module.dropout > 0:
        raise fail("module", f"dropout={module.dropout}",
                   "dropout=0 (random dropout of attention weights is unsupported: the NW weights are deterministic)")

    for name, t in [*module.named_parameters(), *module.named_buffers()]:
        if t.is_meta:
            raise fail("module", f"parameter {name!r} on the meta device (a shape without data)",
                       "a module whose parameters hold values (materialise it, e.g. module.to_empty(device='cpu'), "
                       "and load its weights first)")
        if t.is_complex() or not t.is_floating_point():
            raise fail("module", f"parameter {name!r} of dtype {t.dtype}", "real floating-point parameters")

    def np64(t: Any) -> np.ndarray | None:
        return None if t is None else t.detach().to(device="cpu", dtype=torch.float64).numpy().copy()

    E, H = module.embed_dim, module.num_heads
    dh = E // H
    if module._qkv_same_embed_dim:
        Wq, Wk, Wv = np.split(np64(module.in_proj_weight), 3, axis=0)
    else:
        Wq, Wk, Wv = (np64(module.q_proj_weight), np64(module.k_proj_weight), np64(module.v_proj_weight))
    bias = np64(module.in_proj_bias)
    bq, bk, bv = (None, None, None) if bias is None else np.split(bias, 3)

    def per_head_in(W: np.ndarray) -> np.ndarray:          # (E, e) torch rows -> (H, e, d_h)
        return W.reshape(H, dh, W.shape[1]).transpose(0, 2, 1)

    def per_head_bias(b: np.ndarray | None) -> np.ndarray | None:
        return None if b is None else b.reshape(H, dh)

    W_O = np64(module.out_proj.weight).T.reshape(H, dh, E)  # row block h of out_proj.weight.T
    return MultiHeadNW(per_head_in(Wq), per_head_in(Wk), per_head_in(Wv), W_O,
                       b_Q=per_head_bias(bq), b_K=per_head_bias(bk), b_V=per_head_bias(bv),
                       b_O=np64(module.out_proj.bias))
