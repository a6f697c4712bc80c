"""Bad input at the public boundary: one table of calls.

Each row is ``pytest.param(call, (argument, received, *more), id=...)``: calling ``call()``
must raise :class:`VerifyError` (a ``ValueError``) whose message contains every listed
substring: the argument's name, then what was received (shape or value), then anything
else worth pinning.  Other modules append their rows to ``CASES``.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

from verify import nw
from verify.attention import MultiHeadNW, from_torch
from verify.errors import VerifyError
from verify.nw import nw_estimate, nw_weights

Q, K, V = np.ones((4, 3)), np.ones((5, 3)), np.ones((5, 2))


def with_nan(a, value=np.nan):
    a = np.array(a, dtype=float)
    a.flat[0] = value
    return a


def heads(H=2, d=3, kdim=3, vdim=4, d_k=2, d_v=3, d_out=5):
    """Consistent MultiHeadNW parameters, to be broken one at a time."""
    rng = np.random.default_rng(0)
    return dict(W_Q=rng.standard_normal((H, d, d_k)), W_K=rng.standard_normal((H, kdim, d_k)),
                W_V=rng.standard_normal((H, vdim, d_v)), W_O=rng.standard_normal((H, d_v, d_out)))


def mha(**override):
    return MultiHeadNW(**{**heads(), **override})


def torch_mha(**kw):
    return torch.nn.MultiheadAttention(4, 2, dtype=torch.float64, **kw)


CASES = [
    # --- nw_weights / nw_estimate: ranks and shapes
    pytest.param(lambda: nw_weights(np.ones(3), K), ("queries", "(3,)", "at least 2 axes"), id="nw-queries-1d"),
    pytest.param(lambda: nw_weights(Q, np.ones(3)), ("keys", "(3,)"), id="nw-keys-1d"),
    pytest.param(lambda: nw_estimate(Q, K, np.ones(5)), ("values", "(5,)"), id="nw-values-1d"),
    pytest.param(lambda: nw_weights(Q, np.ones((5, 2))), ("keys", "(5, 2)", "d_k == 3"), id="nw-dk-mismatch"),
    pytest.param(lambda: nw_estimate(Q, K, np.ones((6, 2))), ("values", "(6, 2)", "n == 5"), id="nw-n-mismatch"),
    pytest.param(lambda: nw_weights(np.ones((2, 4, 3)), np.ones((3, 5, 3))), ("queries/keys", "(2, 4, 3)", "(3, 5, 3)"),
                 id="nw-batch-not-broadcastable"),
    pytest.param(lambda: nw_estimate(np.ones((3, 4, 3)), K, np.ones((4, 5, 2))), ("queries/keys/values", "(4, 5, 2)"),
                 id="nw-values-batch-not-broadcastable"),
    pytest.param(lambda: nw_weights(Q, np.ones((0, 3))), ("keys", "(0, 3)", "n >= 1"), id="nw-no-keys"),
    pytest.param(lambda: nw_weights(np.ones((4, 0)), np.ones((5, 0))), ("queries", "(4, 0)", "d_k >= 1"), id="nw-dk-zero"),
    # --- non-finite and non-real input
    pytest.param(lambda: nw_weights(with_nan(Q), K), ("queries", "NaN/inf", "(4, 3)"), id="nw-queries-nan"),
    pytest.param(lambda: nw_weights(Q, with_nan(K, np.inf)), ("keys", "NaN/inf", "(5, 3)"), id="nw-keys-inf"),
    pytest.param(lambda: nw_estimate(Q, K, with_nan(V)), ("values", "NaN/inf", "(5, 2)"), id="nw-values-nan"),
    pytest.param(lambda: nw_weights(np.ones((4, 3), dtype=bool), K), ("queries", "bool"), id="nw-queries-bool"),
    pytest.param(lambda: nw_weights("abc", K), ("queries", "'abc'"), id="nw-queries-str"),
    pytest.param(lambda: nw_weights(Q, K + 1j), ("keys", "complex128", "(5, 3)"), id="nw-keys-complex"),
    pytest.param(lambda: nw_estimate(Q, K, V.astype(object)), ("values", "object"), id="nw-values-object"),
    pytest.param(lambda: nw_weights([[1.0, 2.0], [3.0]], K), ("queries", "list"), id="nw-queries-ragged"),
    pytest.param(lambda: nw_weights(np.full((1, 2), 1e200), np.full((2, 2), 1e200)),
                 ("queries/keys", "non-finite scores", "1e+200"), id="nw-scores-overflow"),
    # --- kernel parameters
    pytest.param(lambda: nw_weights(Q, K, scale=0), ("scale", "0"), id="nw-scale-zero"),
    pytest.param(lambda: nw_weights(Q, K, scale=-1.5), ("scale", "-1.5"), id="nw-scale-negative"),
    pytest.param(lambda: nw_weights(Q, K, scale=float("nan")), ("scale", "nan"), id="nw-scale-nan"),
    pytest.param(lambda: nw_weights(Q, K, scale=True), ("scale", "True"), id="nw-scale-bool"),
    pytest.param(lambda: nw_weights(Q, K, kernel="gaussian", bandwidth=0.0), ("bandwidth", "0.0"), id="nw-bandwidth-zero"),
    pytest.param(lambda: nw_estimate(Q, K, V, kernel="gaussian", bandwidth=-2), ("bandwidth", "-2"),
                 id="nw-bandwidth-negative"),
    pytest.param(lambda: nw_weights(Q, K, kernel="gaussian"), ("bandwidth", "None", "gaussian"),
                 id="nw-gaussian-without-bandwidth"),
    pytest.param(lambda: nw_weights(Q, K, kernel="gaussian", bandwidth=1e-200), ("bandwidth", "1e-200"),
                 id="nw-bandwidth-inverse-square-overflows"),
    pytest.param(lambda: nw_weights(Q, K, kernel="gaussian", bandwidth=1.0, scale=0.5), ("scale", "0.5", "gaussian"),
                 id="nw-scale-for-gaussian"),
    pytest.param(lambda: nw_estimate(Q, K, V, bandwidth=1.0), ("bandwidth", "1.0", "softmax"),
                 id="nw-bandwidth-for-softmax"),
    pytest.param(lambda: nw_weights(Q, K, kernel="epanechnikov"), ("kernel", "'epanechnikov'", "'softmax'"),
                 id="nw-unknown-kernel"),
    pytest.param(lambda: nw_weights(Q, K, kernel=None), ("kernel", "None"), id="nw-kernel-none"),
    # --- memory cap
    pytest.param(lambda: nw_weights(Q, K, max_memory=0), ("max_memory", "0"), id="nw-max-memory-zero"),
    pytest.param(lambda: nw_estimate(Q, K, V, max_memory=-5), ("max_memory", "-5"), id="nw-max-memory-negative"),
    pytest.param(lambda: nw_estimate(Q, K, V, max_memory=1.5e6), ("max_memory", "1500000.0"), id="nw-max-memory-float"),
    pytest.param(lambda: nw_estimate(Q, K, V, max_memory=100), ("max_memory", "100 bytes", "at least"),
                 id="nw-max-memory-too-small"),
    pytest.param(lambda: nw.set_default_max_memory(0), ("max_memory", "0"), id="nw-default-max-memory-zero"),
    # --- MultiHeadNW construction
    pytest.param(lambda: mha(W_Q=np.ones((3, 2))), ("W_Q", "(3, 2)", "3 axes"), id="mha-WQ-rank"),
    pytest.param(lambda: mha(W_K=np.ones((3, 3, 2))), ("W_K", "(3, 3, 2)", "(2, any >= 1, 2)"), id="mha-H-mismatch-WK"),
    pytest.param(lambda: mha(W_V=np.ones((3, 4, 3))), ("W_V", "(3, 4, 3)", "(2, any >= 1, any >= 1)"),
                 id="mha-H-mismatch-WV"),
    pytest.param(lambda: mha(W_O=np.ones((1, 3, 5))), ("W_O", "(1, 3, 5)", "(2, 3, any >= 1)"), id="mha-H-mismatch-WO"),
    pytest.param(lambda: mha(W_K=np.ones((2, 3, 4))), ("W_K", "(2, 3, 4)", "d_k"), id="mha-dk-mismatch"),
    pytest.param(lambda: mha(W_O=np.ones((2, 4, 5))), ("W_O", "(2, 4, 5)", "d_v"), id="mha-dv-mismatch"),
    pytest.param(lambda: mha(b_Q=np.ones((2, 3))), ("b_Q", "(2, 3)", "(2, 2)"), id="mha-bQ-shape"),
    pytest.param(lambda: mha(b_V=np.ones(3)), ("b_V", "(3,)", "2 axes"), id="mha-bV-rank"),
    pytest.param(lambda: mha(b_O=np.ones(4)), ("b_O", "(4,)", "(5,)"), id="mha-bO-shape"),
    pytest.param(lambda: mha(W_V=with_nan(heads()["W_V"])), ("W_V", "NaN/inf", "(2, 4, 3)"), id="mha-WV-nan"),
    pytest.param(lambda: mha(b_K=np.full((2, 2), np.inf)), ("b_K", "NaN/inf"), id="mha-bK-inf"),
    pytest.param(lambda: mha(W_Q=np.ones((2, 3, 2), dtype=bool)), ("W_Q", "bool"), id="mha-WQ-bool"),
    pytest.param(lambda: mha(W_O=heads()["W_O"] * 1j), ("W_O", "complex128"), id="mha-WO-complex"),
    pytest.param(lambda: mha(W_Q=np.ones((0, 3, 2))), ("W_Q", "(0, 3, 2)"), id="mha-zero-heads"),
    # --- MultiHeadNW calls
    pytest.param(lambda: mha()(np.ones((4, 5)), np.ones((6, 3)), np.ones((6, 4))), ("query", "(4, 5)", "last axis 3"),
                 id="mha-query-width"),
    pytest.param(lambda: mha()(np.ones((4, 3)), np.ones((6, 2)), np.ones((6, 4))), ("key", "(6, 2)", "kdim"),
                 id="mha-key-width"),
    pytest.param(lambda: mha()(np.ones((4, 3)), np.ones((6, 3)), np.ones((7, 4))), ("value", "(7, 4)", "S == 6"),
                 id="mha-key-value-length"),
    pytest.param(lambda: mha().weights(np.ones(3), np.ones((6, 3))), ("query", "(3,)"), id="mha-query-1d"),
    pytest.param(lambda: mha().heads(np.ones((2, 4, 3)), np.ones((3, 6, 3)), np.ones((3, 6, 4))),
                 ("query/key/value", "(2,)", "(3,)"), id="mha-batch-not-broadcastable"),
    pytest.param(lambda: mha().weights(with_nan(np.ones((4, 3))), np.ones((6, 3))), ("query", "NaN/inf"),
                 id="mha-query-nan"),
    pytest.param(lambda: mha()(np.ones((4, 3)), np.ones((6, 3)), "v"), ("value", "'v'"), id="mha-value-str"),
    # --- from_torch
    pytest.param(lambda: from_torch({"embed_dim": 4}), ("module", "dict", "MultiheadAttention"), id="torch-not-a-module"),
    pytest.param(lambda: from_torch(torch.nn.Linear(4, 4)), ("module", "Linear"), id="torch-linear"),
    pytest.param(lambda: from_torch(torch_mha(add_bias_kv=True)), ("module", "add_bias_kv=True", "unsupported"),
                 id="torch-add-bias-kv"),
    pytest.param(lambda: from_torch(torch_mha(add_zero_attn=True)), ("module", "add_zero_attn=True", "unsupported"),
                 id="torch-add-zero-attn"),
    pytest.param(lambda: from_torch(torch_mha(dropout=0.1)), ("module", "dropout=0.1", "unsupported"),
                 id="torch-dropout"),
]


@pytest.mark.parametrize("call,expected", CASES)
def test_bad_input_raises_verify_error(call, expected):
    with pytest.raises(VerifyError) as info:
        call()
    assert isinstance(info.value, ValueError)
    message = str(info.value)
    assert message.startswith(expected[0] + ":"), f"message does not start with the argument {expected[0]!r}: {message}"
    for part in expected[1:]:
        assert part in message, f"{part!r} not in {message!r}"
