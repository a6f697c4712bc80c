"""Bad input at the public boundary: one table of calls.

Each row is ``pytest.param(call, (argument, received, *more), id=...)``: calling ``call()``
must raise :class:`VerifyError` (a ``ValueError``) whose message starts with the argument's
name and contains every further listed substring (what was received, shape or value, then
anything else worth pinning). A row may instead give one substring that holds argument,
expectation and received value together (the diversity and checkpoint rows; checkpoint
rows write their files into a fresh temporary directory, ``_in_dir``).
"""

from __future__ import annotations

import contextlib
import io
import json
import struct
import tempfile
from pathlib import Path
from typing import Any, Callable

import numpy as np
import pytest
import safetensors.numpy
import torch

from verify import nw
from verify.attention import MultiHeadNW, from_torch
from verify.checkpoint import SafetensorsFile, analyze_checkpoint, cli_hdi, open_checkpoint
from verify.diversity import haar_overlap_mean, hdi, hdi_bound, overlap, principal_angles
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


_RNG = np.random.default_rng(0)
_A = _RNG.standard_normal((5, 2))
_W = _RNG.standard_normal((3, 6, 2))
_W_DEFICIENT = _W.copy()
_W_DEFICIENT[1, :, 1] = 2 * _W_DEFICIENT[1, :, 0]  # head 1 has rank 1
_W_NAN = _W.copy()
_W_NAN[0, 0, 0] = np.inf


def _raw(header: Any, data: bytes = b"", length: int | None = None) -> bytes:
    """A safetensors file built by hand: 8-byte length, JSON header, data."""
    h = header if isinstance(header, bytes) else json.dumps(header).encode()
    return struct.pack("<Q", len(h) if length is None else length) + h + data


def _bert(d: int = 4, H: int = 2, key_dtype: Any = np.float32, drop: str | None = None) -> bytes:
    t = {f"encoder.layer.0.attention.self.{p}.weight": np.eye(d, dtype=np.float32) for p in ("query", "key")}
    t["encoder.layer.0.attention.self.key.weight"] = np.eye(d).astype(key_dtype)
    t.pop(drop, None)
    return safetensors.numpy.save(t)


_CFG = {"hidden_size": 4, "num_attention_heads": 2, "num_hidden_layers": 1}


def _in_dir(files: dict[str, bytes | dict | str], call: Callable[[Path], Any]) -> Callable[[], Any]:
    """A zero-argument call that writes ``files`` (bytes, JSON objects or text) and runs ``call(dir)``."""

    def run() -> Any:
        with tempfile.TemporaryDirectory() as tmp:
            root = Path(tmp)
            for name, content in files.items():
                if isinstance(content, dict):
                    content = json.dumps(content)
                (root / name).write_bytes(content if isinstance(content, bytes) else content.encode())
            return call(root)

    return run


def _file(data: bytes) -> Callable[[], Any]:
    return _in_dir({"x.safetensors": data}, lambda d: SafetensorsFile(d / "x.safetensors"))


_F32 = {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]}

def _raise_cli(argv: list[str]) -> None:
    """cli_hdi reports errors on stderr with exit 2; re-raise its message for the table."""
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        code = cli_hdi(argv)
    if code == 2:
        raise VerifyError(err.getvalue())



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
    # --- diversity ---
    pytest.param(lambda: principal_angles(np.ones((4, 2)), _A[:4]), "A: expected full column rank 2", id="angles-rank-deficient"),
    pytest.param(lambda: principal_angles(_A, _RNG.standard_normal((4, 2))), "B: expected 5 rows", id="angles-row-mismatch"),
    pytest.param(lambda: principal_angles("x", _A), "A: expected a real numeric array", id="angles-string"),
    pytest.param(lambda: principal_angles(np.ones(5), _A), "A: expected 2 axes, got shape (5,)", id="angles-1d"),
    pytest.param(lambda: principal_angles(np.zeros((5, 0)), _A), "A: expected no empty axis", id="angles-empty"),
    pytest.param(lambda: principal_angles(_A.T, _A.T), "A: expected matrices (..., d, d_k) with d_k <= d", id="angles-wide"),
    pytest.param(lambda: principal_angles(_A * np.nan, _A), "A: expected finite values", id="angles-nan"),
    pytest.param(lambda: principal_angles(_A + 1j, _A), "A: expected a real numeric array", id="angles-complex"),
    pytest.param(lambda: overlap(_W[0]), "W_K: expected 3 axes, got shape (6, 2)", id="overlap-2d"),
    pytest.param(lambda: overlap(_W_DEFICIENT), "W_K: expected full column rank 2, got a rank-deficient projection at index (1,)",
                 id="overlap-rank-deficient"),
    pytest.param(lambda: hdi(_W[:1]), "W_K: expected at least 2 heads", id="hdi-one-head"),
    pytest.param(lambda: hdi(_W, form="Subspace"), "form: expected 'subspace' or 'literal', got 'Subspace'", id="hdi-form"),
    pytest.param(lambda: hdi(_W_NAN, "literal"), "W_K: expected finite values, got 1 NaN/inf", id="hdi-literal-inf"),
    pytest.param(lambda: hdi(_W_DEFICIENT), "W_K: expected full column rank", id="hdi-rank-deficient"),
    pytest.param(lambda: hdi(np.zeros((3, 4, 0)), "literal"), "W_K: expected no empty axis", id="hdi-empty-dk"),
    pytest.param(lambda: hdi(_W.astype(bool)), "W_K: expected a real numeric array", id="hdi-bool"),
    pytest.param(lambda: hdi_bound(1, 2, 4), "H: expected an integer >= 2, got 1", id="bound-H1"),
    pytest.param(lambda: hdi_bound(2.0, 2, 4), "H: expected an integer >= 2, got 2.0", id="bound-H-float"),
    pytest.param(lambda: hdi_bound(True, 2, 4), "H: expected an integer >= 2, got True", id="bound-H-bool"),
    pytest.param(lambda: hdi_bound(2, 5, 4), "d_k: expected d_k <= d = 4 (a d_k-dimensional subspace of R^d), got 5", id="bound-dk-above-d"),
    pytest.param(lambda: hdi_bound(2, 0, 4), "d_k: expected an integer >= 1, got 0", id="bound-dk0"),
    pytest.param(lambda: haar_overlap_mean(5, 4), "d_k: expected d_k <= d = 4 (a d_k-dimensional subspace of R^d), got 5", id="haar-dk-above-d"),
    pytest.param(lambda: haar_overlap_mean(1, -3), "d: expected an integer >= 1, got -3", id="haar-d-negative"),
    # --- safetensors reader ---
    pytest.param(_in_dir({}, lambda d: SafetensorsFile(d / "none.safetensors")), "none.safetensors: expected a readable",
                 id="st-missing-file"),
    pytest.param(_file(b"\x01\x00\x00"), "x.safetensors: expected at least the 8-byte header length", id="st-3-bytes"),
    pytest.param(_file(_raw({}, length=10**12)), "header length: expected a JSON header that fits", id="st-huge-length"),
    pytest.param(_file(_raw(b"\xff\xfe{}")), "header: expected a JSON object, got bytes that are not UTF-8 JSON", id="st-not-utf8"),
    pytest.param(_file(_raw([1, 2])), "header: expected a JSON object, got JSON list", id="st-header-list"),
    pytest.param(_file(_raw({"__metadata__": [1]})), "header '__metadata__': expected a JSON object", id="st-metadata-list"),
    pytest.param(_file(_raw({"t": {"dtype": "F8_E4M3", "shape": [1], "data_offsets": [0, 1]}}, b"\0")),
                 "tensor 't' dtype: expected one of F64, F32", id="st-unknown-dtype"),
    pytest.param(_file(_raw({"t": {"dtype": "F32", "shape": [2]}}, b"\0" * 8)),
                 "tensor 't': expected an object with keys dtype, shape, data_offsets", id="st-entry-keys"),
    pytest.param(_file(_raw({"t": {"dtype": "F32", "shape": [-2], "data_offsets": [0, 8]}}, b"\0" * 8)),
                 "tensor 't' shape: expected a list of non-negative integers, got [-2]", id="st-negative-shape"),
    pytest.param(_file(_raw({"t": {"dtype": "F32", "shape": [3], "data_offsets": [0, 8]}}, b"\0" * 8)),
                 "data_offsets: expected 12 bytes for dtype F32 and shape [3], got [0, 8] (8 bytes)", id="st-size-mismatch"),
    pytest.param(_file(_raw({"t": {"dtype": "F32", "shape": [2], "data_offsets": [8, 0]}}, b"\0" * 8)),
                 "data_offsets: expected [begin, end] with 0 <= begin <= end", id="st-offsets-reversed"),
    pytest.param(_file(_raw({"t": _F32}, b"\0" * 5)), "expected data inside the file (the file is truncated)", id="st-truncated-data"),
    pytest.param(_in_dir({"x.safetensors": _raw({"t": _F32}, b"\0" * 8)}, lambda d: SafetensorsFile(d / "x.safetensors").get("u")),
                 "expected a tensor 'u', got no tensor named 'u' among 1", id="st-unknown-name"),
    # --- checkpoint layout and config ---
    pytest.param(_in_dir({}, lambda d: open_checkpoint(d / "nope")), "PATH: expected an existing .safetensors file or model directory",
                 id="ckpt-missing-path"),
    pytest.param(_in_dir({"config.json": _CFG}, open_checkpoint), "PATH: expected a .safetensors file or a directory holding",
                 id="ckpt-dir-without-weights"),
    pytest.param(_in_dir({"model.safetensors": _bert()}, open_checkpoint), "config.json: expected a config.json",
                 id="ckpt-no-config"),
    pytest.param(_in_dir({"model.safetensors": _bert(), "config.json": "{oops"}, open_checkpoint),
                 "config.json: expected a JSON object, got an unreadable file", id="ckpt-config-not-json"),
    pytest.param(_in_dir({"model.safetensors": _bert(), "config.json": {"hidden_size": 4}}, open_checkpoint),
                 "expected one of them (a positive integer), got none of the keys num_attention_heads, n_head", id="ckpt-config-no-heads"),
    pytest.param(_in_dir({"model.safetensors": _bert(), "config.json": _CFG | {"num_attention_heads": "2"}}, open_checkpoint),
                 "key 'num_attention_heads': expected an integer >= 1, got '2'", id="ckpt-config-heads-string"),
    pytest.param(_in_dir({"model.safetensors": _bert(), "config.json": _CFG | {"num_attention_heads": 3}}, open_checkpoint),
                 "expected a head_dim key, or a hidden size divisible by the number of heads, got hidden size 4 and 3 heads",
                 id="ckpt-config-indivisible"),
    pytest.param(_in_dir({"model.safetensors": _bert(), "config.json": _CFG | {"num_hidden_layers": 2}}, open_checkpoint),
                 "got no tensor 'encoder.layer.1.attention.self.query.weight'", id="ckpt-layer-missing"),
    pytest.param(_in_dir({"model.safetensors": _bert(drop="encoder.layer.0.attention.self.key.weight"), "config.json": _CFG},
                         open_checkpoint), "expected tensor 'encoder.layer.0.attention.self.key.weight' of shape (4, 4)",
                 id="ckpt-key-missing"),
    pytest.param(_in_dir({"model.safetensors": _bert(key_dtype=np.int32), "config.json": _CFG}, open_checkpoint),
                 "tensor 'encoder.layer.0.attention.self.key.weight': expected a float dtype", id="ckpt-int-weights"),
    pytest.param(_in_dir({"model.safetensors": _bert(), "config.json": _CFG | {"hidden_size": 6}}, open_checkpoint),
                 "tensor 'encoder.layer.0.attention.self.query.weight': expected shape (6, 6)", id="ckpt-shape-vs-config"),
    pytest.param(_in_dir({"a.safetensors": _bert(), "b.safetensors": _bert(), "config.json": _CFG}, open_checkpoint),
                 "expected each tensor in one shard only", id="ckpt-duplicate-shards"),
    pytest.param(_in_dir({"model.safetensors": safetensors.numpy.save(
        {"encoder.layer.0.attention.self.key.weight": np.eye(4, dtype=np.float32),
         "h.0.attn.c_attn.weight": np.ones((4, 12), np.float32)}), "config.json": _CFG}, open_checkpoint),
                 "expected exactly one known attention layout", id="ckpt-two-layouts"),
    pytest.param(_in_dir({"model.safetensors": safetensors.numpy.save(
        {"layers.0.self_attn.q_proj.weight": np.eye(4, dtype=np.float32),
         "layers.0.self_attn.k_proj.weight": np.eye(4, dtype=np.float32)}),
        "config.json": _CFG | {"num_attention_heads": 4, "num_key_value_heads": 3}}, open_checkpoint),
                 "key 'num_key_value_heads': expected a divisor of num_attention_heads = 4, got 3", id="ckpt-kv-not-divisor"),
    pytest.param(_in_dir({"model.safetensors": safetensors.numpy.save(
        {"encoder.layer.0.attention.self.query.weight": np.eye(4, dtype=np.float32),
         "encoder.layer.0.attention.self.key.weight": np.diag([1, 1, 1, 0]).astype(np.float32)}), "config.json": _CFG},
        analyze_checkpoint), "tensor 'encoder.layer.0.attention.self.key.weight': W_K: expected full column rank 2, "
                             "got a rank-deficient projection at index (1,)", id="ckpt-rank-deficient-head"),
    pytest.param(_in_dir({"model.safetensors": _bert(), "config.json": _CFG},
                         lambda d: _raise_cli(["--json", str(d / "no" / "such" / "x.json"), str(d)])),
                 "--json FILE: expected a writable file path", id="cli-json-unwritable"),
]


@pytest.mark.parametrize("call,expected", CASES)
def test_bad_input_raises_verify_error(call, expected):
    with pytest.raises(VerifyError) as info:
        call()
    assert isinstance(info.value, ValueError)
    message = str(info.value)
    if isinstance(expected, str):  # one substring naming the argument, what was received and expected
        assert expected in message, f"{expected!r} not in {message!r}"
        return
    assert message.startswith(expected[0] + ":"), f"message does not start with the argument {expected[0]!r}: {message}"
    for part in expected[1:]:
        assert part in message, f"{part!r} not in {message!r}"
