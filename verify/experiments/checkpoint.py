"""Attention heads of a real checkpoint and their diversity (claims C4, C6 on trained weights; C9 reading ii).

Two source formats behind one :class:`Checkpoint`: safetensors files (the ``safetensors`` library,
one tensor at a time; BERT/MiniLM, GPT-2 and LLaMA/Mistral layouts with ``config.json``) and GGUF
files (:mod:`verify.experiments.gguf_reader`; the LLaMA family and GPT-2, quantised or not, sizes from
the file's metadata). Both feed the per-head key and query projections to :mod:`verify.numeric.diversity`.

Biases are left out: HDI is defined on ``W_K`` alone. Rotary positions (LLaMA) multiply each head's
d_k coordinates by an invertible matrix, and the conversions' row permutations (Hugging Face's, and
llama.cpp's ``LlamaModel.permute``) stay inside each head: neither changes ``Range(W_K^h)``, so the HDI
is unaffected (tests/test_gguf.py checks the permutation). Weights stored below float32 precision
carry a band, the HDI's change when every weight moves by up to half its step (:func:`quantisation_band`).
"""

from __future__ import annotations

import io
import math
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from safetensors import SafetensorError, safe_open

from verify._validate import fail, path_like, positive_int, printable, received
from verify._validate import seed as valid_seed
from verify.errors import VerifyError
from verify.io import atomic_write_bytes, dump_json, loads_json, read_json, regular_file, write_json
from verify.experiments.gguf_reader import GGUFFile, float_steps, is_gguf
from verify.numeric.baseline import haar_hdi_moments
from verify.numeric.diversity import haar_overlap_mean, hdi_bound, overlap

__all__ = ["MAX_HEADER_BYTES", "MAX_TENSORS", "SafetensorsFile", "MAX_WIDTH", "MAX_HEAD_DIM", "GGUF_ARCHITECTURES",
           "DEFAULT_BAND_DRAWS", "MAX_BAND_DRAWS", "BAND_SDS", "Checkpoint", "open_checkpoint", "quantisation_band",
           "analyze_checkpoint", "format_table", "plot_overlaps", "plot_layers"]

# safetensors dtypes of attention weights; BF16, which numpy lacks, is converted to float32 on read
_FLOAT_DTYPES = ("F64", "F32", "F16", "BF16")
#: The largest header read: real checkpoints' are a few hundred kB; the library's own limit, 100 MB,
#: lets a header of 1.35 M empty tensors take minutes and gigabytes before it is refused.
MAX_HEADER_BYTES = 16 * 2**20
#: The most tensors one file may declare: public checkpoints hold a few thousand per file.
MAX_TENSORS = 65_536
#: The widest model analysed (d): the largest public models have d = 16,384 (LLaMA-3 405B).
MAX_WIDTH = 32_768
#: The largest head size analysed (d_k): real heads have 32 to 256; the QR of a head costs d·d_k².
MAX_HEAD_DIM = 1_024
#: GGUF architectures read (general.architecture) and their attention layout: "llama" (separate
#: ``blk.{i}.attn_q.weight`` / ``attn_k.weight``, rotary positions) or "gpt2" (fused ``attn_qkv``).
GGUF_ARCHITECTURES = {"llama": "llama", "mistral": "llama", "mistral3": "llama", "qwen2": "llama", "qwen3": "llama",
                      "granite": "llama", "gpt2": "gpt2"}
#: Storage types with no band: float32/float64 weights are kept at the precision models are trained in.
FULL_PRECISION = ("F32", "F64")
#: Perturbations per block for the quantisation band (dominated by the mean shift, which 8 draws
#: estimate to a few per cent).
DEFAULT_BAND_DRAWS = 8
#: The most perturbations per block (each costs one HDI of the block: bounded work from the command line).
MAX_BAND_DRAWS = 256
#: Standard deviations of the perturbed HDI added to its mean shift in the band (normal tail 1.3e-3).
BAND_SDS = 3.0


def _library_error(where: str, exc: BaseException) -> VerifyError:
    return fail(where, f"a file the safetensors library rejects ({' '.join(str(exc).split())})",
                "a valid .safetensors file")


class SafetensorsFile:
    """One ``.safetensors`` file, read with the ``safetensors`` library (``safe_open``, numpy), which
    enforces the format. Added here: the path must be a regular file before it is opened (a FIFO
    would block), and a tensor name may appear only once in the header (the library keeps one of
    two silently; :func:`verify.io.loads_json` refuses duplicate keys). Tensors are read on request."""

    def __init__(self, path: str | Path) -> None:
        path_like("safetensors file", path)
        self.path = regular_file("safetensors file", path)
        where = str(self.path)
        raw = self._header(where)
        try:
            with safe_open(str(self.path), framework="np") as f:
                names = list(f.keys())
                meta = f.metadata()
                info = {}
                for name in names:
                    sl = f.get_slice(name)
                    info[name] = (str(sl.get_dtype()), tuple(int(x) for x in sl.get_shape()))
        except SafetensorError as exc:
            raise _library_error(where, exc) from None
        except OSError as exc:
            raise fail(where, f"an unreadable file ({exc})", "a readable .safetensors file") from None
        self.metadata: dict[str, Any] = dict(meta or {})
        self._info = info
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as exc:  # the library read it as UTF-8: the file changed meanwhile
            raise fail(f"{where}: header", f"bytes that are not UTF-8 ({exc})", "a JSON object") from None
        header = loads_json(f"{where}: header", text)  # refuses a tensor name that appears twice
        if not isinstance(header, dict) or set(header) - {"__metadata__"} != set(info):
            raise fail(f"{where}: header", "entries that differ from the library's reading (did the file change?)",
                       "an unchanged file")
        self._offsets = {k: int(v["data_offsets"][0]) for k, v in header.items() if k != "__metadata__"}
        self._data_start = 8 + len(raw)

    def _header(self, where: str) -> bytes:
        """The raw header, refused before the library parses it when beyond MAX_HEADER_BYTES or
        declaring more than MAX_TENSORS tensors (each needs a ``"data_offsets"`` key, counted in the
        raw bytes: an escaped name cannot hold that quoted word)."""
        try:
            with open(self.path, "rb") as fh:
                head = fh.read(8)
                n = int.from_bytes(head, "little") if len(head) == 8 else 0
                if n > MAX_HEADER_BYTES:
                    raise fail(where, f"a header of {n:,} bytes",
                               f"a .safetensors header of at most {MAX_HEADER_BYTES:,} bytes (MAX_HEADER_BYTES)")
                raw = fh.read(n)
        except OSError as exc:
            raise fail(where, f"an unreadable file ({exc.strerror})", "a readable .safetensors file") from None
        count = raw.count(b'"data_offsets"')
        if count > MAX_TENSORS:
            raise fail(where, f"a header of {count:,} tensors",
                       f"at most {MAX_TENSORS:,} tensors in one file (MAX_TENSORS)")
        return raw

    @property
    def names(self) -> list[str]:
        return list(self._info)

    def info(self, name: str) -> tuple[str, tuple[int, ...]]:
        """``(dtype, shape)`` of tensor ``name`` as stored."""
        if name not in self._info:
            raise fail(f"{self.path}", f"no tensor named {name!r} among {len(self._info)}", f"a tensor {name!r}")
        return self._info[name]

    def readable(self, name: str) -> None:
        """Refuse tensor ``name`` unless its dtype is a float one (``_FLOAT_DTYPES``)."""
        dtype = self.info(name)[0]
        if dtype not in _FLOAT_DTYPES:
            raise fail(f"tensor {name!r}", f"dtype {dtype}", f"a float dtype ({', '.join(_FLOAT_DTYPES)})")

    def get(self, name: str) -> np.ndarray:
        """Tensor ``name`` in native byte order, as the library returns it; BF16 (which numpy
        cannot hold) becomes float32, exactly: a bf16 value is the high half of a float32."""
        dtype, shape = self.info(name)
        where = str(self.path)
        if dtype == "BF16":
            count = math.prod(shape)
            try:
                raw = np.fromfile(self.path, dtype="<u2", count=count, offset=self._data_start + self._offsets[name])
            except OSError as exc:
                raise fail(where, f"an unreadable file ({exc})", "a readable .safetensors file") from None
            if raw.size != count:
                raise fail(f"{where}: tensor {name!r}", f"{raw.size} of {count} values",
                           "the whole tensor (the file was truncated after it was opened)")
            return (raw.astype("<u4") << 16).view("<f4").astype(np.float32).reshape(shape)
        try:
            with safe_open(str(self.path), framework="np") as f:
                arr = f.get_tensor(name)
        except SafetensorError as exc:
            raise _library_error(where, exc) from None
        except OSError as exc:
            raise fail(where, f"an unreadable file ({exc})", "a readable .safetensors file") from None
        except (TypeError, AttributeError) as exc:  # a dtype numpy lacks (F8_*, F4, ...)
            raise fail(f"{where}: tensor {name!r}", f"dtype {dtype} ({exc})", "a dtype numpy can hold") from None
        arr = np.array(arr, copy=True)
        return arr.astype(arr.dtype.newbyteorder("="), copy=False).reshape(shape)


_PATTERNS = {
    "bert": re.compile(r"^(?P<prefix>(?:.+\.)?)encoder\.layer\.(?P<layer>\d+)\.attention\.self\.(?:query|key)\.weight$"),
    "gpt2": re.compile(r"^(?P<prefix>(?:.+\.)?)h\.(?P<layer>\d+)\.attn\.c_attn\.weight$"),
    "llama": re.compile(r"^(?P<prefix>(?:.+\.)?)layers\.(?P<layer>\d+)\.self_attn\.(?:q_proj|k_proj)\.weight$"),
}
_EXAMPLES = {
    "bert": "encoder.layer.{i}.attention.self.query.weight / key.weight",
    "gpt2": "h.{i}.attn.c_attn.weight",
    "llama": "model.layers.{i}.self_attn.q_proj.weight / k_proj.weight",
}


@dataclass(frozen=True)
class Checkpoint:
    """Where the attention projections of a checkpoint are and how they split into heads: ``H`` query
    and ``H_kv`` key heads of size ``d_k`` in width ``d`` (grouped-query attention: query head h uses
    key head ``h // (H // H_kv)``); ``format`` "safetensors" or "gguf"; ``rotary`` positions (LLaMA)."""

    path: Path
    files: tuple[Path, ...]
    layout: str
    model_type: str | None
    num_layers: int
    H: int
    H_kv: int
    d: int
    d_k: int
    prefix: str
    _where: dict[str, Any] = field(repr=False, compare=False)
    format: str = "safetensors"
    rotary: bool = False
    name: str | None = None
    version: int | None = None

    def tensor_names(self, layer: int) -> tuple[str, str]:
        """(query tensor, key tensor) of ``layer``; the same fused tensor for GPT-2."""
        p, i = self.prefix, layer
        if self.format == "gguf":
            if self.layout == "gpt2":
                return (f"blk.{i}.attn_qkv.weight",) * 2
            return f"blk.{i}.attn_q.weight", f"blk.{i}.attn_k.weight"
        if self.layout == "bert":
            return f"{p}encoder.layer.{i}.attention.self.query.weight", f"{p}encoder.layer.{i}.attention.self.key.weight"
        if self.layout == "gpt2":
            return (f"{p}h.{i}.attn.c_attn.weight",) * 2
        return f"{p}layers.{i}.self_attn.q_proj.weight", f"{p}layers.{i}.self_attn.k_proj.weight"

    def expected_shapes(self) -> tuple[tuple[int, int], tuple[int, int]]:
        """Stored (numpy) shapes of (query, key) tensors implied by H, H_kv, d, d_k."""
        if self.layout == "gpt2":
            if self.format == "gguf":  # llama.cpp transposes the Conv1D weight: rows [q | k | v]
                return ((3 * self.H * self.d_k, self.d),) * 2
            return ((self.d, 3 * self.H * self.d_k),) * 2   # Conv1D (in, out): x @ W = [q | k | v]
        return (self.H * self.d_k, self.d), (self.H_kv * self.d_k, self.d)  # torch Linear (out, in)

    def storage(self, layer: int) -> tuple[str, str]:
        """Storage types (safetensors dtype or GGUF tensor type) of the (query, key) tensors."""
        return tuple(self._where[n].info(n)[0] for n in self.tensor_names(layer))  # type: ignore[return-value]

    def _split(self, q: np.ndarray, k: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(H, d, d_k) and (H_kv, d, d_k) from the stored arrays (weights or their steps)."""
        H, H_kv, d, d_k = self.H, self.H_kv, self.d, self.d_k
        if self.layout == "gpt2" and self.format == "safetensors":
            wq, wk = q[:, : H * d_k], q[:, H * d_k: 2 * H * d_k]
            return wq.reshape(d, H, d_k).transpose(1, 0, 2), wk.reshape(d, H, d_k).transpose(1, 0, 2)
        if self.layout == "gpt2":
            q, k = q[: H * d_k], q[H * d_k: 2 * H * d_k]
        return q.reshape(H, d_k, d).transpose(0, 2, 1), k.reshape(H_kv, d_k, d).transpose(0, 2, 1)

    def heads(self, layer: int) -> tuple[np.ndarray, np.ndarray]:
        """``W_Q`` (H, d, d_k) and ``W_K`` (H_kv, d, d_k) of ``layer`` in float64: Linear (out, in)
        ``W^h = weight[h d_k:(h+1) d_k, :]^T``; GPT-2's Conv1D (d, 3 H d_k) ``[q | k | v]`` by columns
        (by rows in GGUF)."""
        q_name, k_name = self.tensor_names(layer)
        wq = self._where[q_name].get(q_name).astype(np.float64)
        wk = wq if k_name == q_name else self._where[k_name].get(k_name).astype(np.float64)
        return self._split(wq, wk)

    def steps(self, layer: int) -> tuple[np.ndarray, np.ndarray] | None:
        """Each weight's storage step, split like :meth:`heads`; None when both tensors are stored
        at full precision (F32, F64)."""
        if all(t in FULL_PRECISION for t in self.storage(layer)):
            return None
        out = []
        for name in dict.fromkeys(self.tensor_names(layer)):
            src = self._where[name]
            out.append(src.step(name) if self.format == "gguf" else float_steps(src.get(name), src.info(name)[0]))
        return self._split(out[0], out[-1])


def _gguf_in(folder: Path) -> Path | None:
    """The one ``*.gguf`` file of a model folder, None when it has none. Several (split GGUF
    models, or two quantisations) are refused, and so is a symlink that leads out of the folder:
    a folder names what it holds (pass the file itself to read a linked file)."""
    found = sorted(folder.glob("*.gguf"))
    if not found:
        return None
    if len(found) > 1:
        names = ", ".join(printable(f.name) for f in found[:4]) + (" ..." if len(found) > 4 else "")
        raise fail("PATH", f"folder {printable(str(folder))!r} with {len(found)} .gguf files ({names})",
                   "one .gguf file per folder (split GGUF models are not read; pass one file)")
    item = found[0]
    if item.is_symlink() and not item.resolve().is_relative_to(folder.resolve()):
        raise fail("PATH", f"{printable(str(item))!r}, a symlink to {printable(os.path.realpath(item))!r} outside "
                           "the folder", "files inside the model folder (pass the file itself to read a linked file)")
    return item


def _weight_files(path: Path) -> tuple[tuple[Path, ...], Path | None]:
    if path.is_dir():
        single = path / "model.safetensors"
        files = (single,) if single.is_file() else tuple(sorted(path.glob("*.safetensors")))
        if not files:
            raise fail("PATH", f"directory {path} without *.safetensors files or a .gguf file",
                       "a .safetensors or .gguf file or a directory holding model.safetensors (or shards)")
    elif path.exists():
        files = (regular_file("PATH", path),)  # a FIFO or device is refused before anything opens it
    else:
        raise fail("PATH", repr(str(path)), "an existing .safetensors file, .gguf file or model directory")
    cfg = files[0].parent / "config.json"
    return files, (cfg if cfg.exists() else None)


def _gguf_int(f: GGUFFile, key: str, required: bool, cap: int, why: str) -> int | None:
    """A positive integer from the GGUF metadata, at most ``cap``."""
    v = f.integer(key, required=required)
    if v is None:
        return None
    if not 1 <= v <= cap:
        raise fail(f"{f.where}: key {key!r}", f"{v:,}", f"an integer from 1 to {cap:,} ({why})")
    return v


def _open_gguf(path: Path, file: Path) -> Checkpoint:
    """A GGUF checkpoint, sizes from the file's metadata (head size ``key_length``, else d / H); every
    attention tensor's shape and type checked before any is read."""
    f = GGUFFile(file, "PATH")
    arch = f.string("general.architecture")
    if arch not in GGUF_ARCHITECTURES:
        raise fail(f"{f.where}: key 'general.architecture'", received(arch),
                   f"one of {', '.join(GGUF_ARCHITECTURES)} (their attention tensors are read)")
    layout = GGUF_ARCHITECTURES[arch]
    n_tensors = len(f.names)
    L = _gguf_int(f, f"{arch}.block_count", True, max(n_tensors, 1), "each layer holds tensors of the file")
    d = _gguf_int(f, f"{arch}.embedding_length", True, MAX_WIDTH, "MAX_WIDTH")
    H = _gguf_int(f, f"{arch}.attention.head_count", True, d, "at most one head per dimension")
    H_kv = _gguf_int(f, f"{arch}.attention.head_count_kv", False, H, "at most the query heads")
    H_kv = H if H_kv is None else H_kv
    if H % H_kv:
        raise fail(f"{f.where}: key '{arch}.attention.head_count_kv'", H_kv,
                   f"a divisor of {arch}.attention.head_count = {H} (each key head serves as many query heads)")
    if layout == "gpt2" and H_kv != H:
        raise fail(f"{f.where}: key '{arch}.attention.head_count_kv'", H_kv, f"{H}: GPT-2 has one key head per query head")
    d_k = _gguf_int(f, f"{arch}.attention.key_length", False, min(d, MAX_HEAD_DIM), "d_k <= d and MAX_HEAD_DIM")
    if d_k is None:
        if d % H:
            raise fail(f"{f.where}: key '{arch}.attention.head_count'", H,
                       f"a divisor of {arch}.embedding_length = {d} (or a key_length key giving the head size)")
        d_k = d // H
        if d_k > MAX_HEAD_DIM:
            raise fail(f"{f.where}: key '{arch}.attention.head_count'", H, f"heads of at most {MAX_HEAD_DIM} dimensions "
                                                                            "(MAX_HEAD_DIM)")
    ck = Checkpoint(path, (file,), layout, arch, L, H, H_kv, d, d_k, "", dict.fromkeys(f.names, f), format="gguf",
                    rotary=layout == "llama", name=f.string("general.name", required=False), version=f.header.version)
    return _checked(ck, f.where, f"{f.where}: ",
                    f"from the file's metadata (heads {H}, key heads {H_kv}, width {d}, head size {d_k})")


def _checked(ck: Checkpoint, where: str, prefix: str, why: str) -> Checkpoint:
    """``ck`` once every attention tensor is present, of the shape ``why`` gives and of a type read here."""
    for i in range(ck.num_layers):
        for name, shape in zip(ck.tensor_names(i), ck.expected_shapes()):
            if name not in ck._where:
                raise fail(where, f"no tensor {name!r}", f"tensor {name!r} of shape {shape} {why}")
            _, got = ck._where[name].info(name)
            if got != shape:
                raise fail(f"{prefix}tensor {name!r}", f"shape {got}", f"shape {shape} {why}")
            ck._where[name].readable(name)   # a type read here, refused by name otherwise
    return ck


def _cfg_int(cfg: dict, cfg_path: Path | None, keys: tuple[str, ...], required: bool) -> int | None:
    for k in keys:
        if cfg.get(k) is not None:
            return positive_int(f"{cfg_path} key {k!r}", cfg[k])
    if required:
        raise fail(str(cfg_path), f"none of the keys {', '.join(keys)}", "one of them (a positive integer)")
    return None


def _detect_layout(index: dict[str, SafetensorsFile], files: tuple[Path, ...]) -> tuple[str, str, set[int]]:
    found: dict[str, list[re.Match]] = {}
    for name in index:
        for layout, pat in _PATTERNS.items():
            m = pat.match(name)
            if m:
                found.setdefault(layout, []).append(m)
    if len(found) != 1:
        names = sorted(index)[:8]
        got = f"layouts {sorted(found)} together" if found else f"tensors {names}{' ...' if len(index) > 8 else ''}"
        raise fail(f"{', '.join(map(str, files))}", got,
                   "exactly one known attention layout: " + "; ".join(f"{k}: {v}" for k, v in _EXAMPLES.items()))
    layout, matches = next(iter(found.items()))
    prefixes = {m["prefix"] for m in matches}
    if len(prefixes) > 1:
        raise fail(f"{files[0]}", f"{layout} tensors under several prefixes {sorted(prefixes)}", "one model per checkpoint")
    return layout, prefixes.pop(), {int(m["layer"]) for m in matches}


def open_checkpoint(path: str | Path) -> Checkpoint:
    """The query/key projections of a checkpoint, their shapes checked against config.json: ``path`` a
    ``.safetensors`` file (config.json beside it), a folder with ``model.safetensors`` (or shards) and
    ``config.json``, a ``.gguf`` file or a folder holding one (sizes from its metadata)."""
    path = Path(path_like("path (PATH)", path))
    if path.is_dir() and not any(path.glob("*.safetensors")):
        found = _gguf_in(path)
        if found is not None:
            return _open_gguf(path, found)
    elif path.exists() and not path.is_dir():
        regular_file("PATH", path)   # a FIFO is refused before it is opened to look for the magic number
        if is_gguf(path):
            return _open_gguf(path, path)
    files, cfg_path = _weight_files(path)
    index: dict[str, SafetensorsFile] = {}
    for fp in files:
        sf = SafetensorsFile(fp)
        for name in sf.names:
            if name in index:
                raise fail(str(fp), f"tensor {name!r} also in {index[name].path}", "each tensor in one shard only")
            index[name] = sf
    layout, prefix, layers = _detect_layout(index, files)
    if cfg_path is None:
        raise fail("config.json", f"none beside {files[0]}",
                   "a config.json (num_attention_heads / n_head): the number of heads cannot be read "
                   "from the tensors' shapes alone")
    cfg = read_json("config.json", cfg_path)
    if not isinstance(cfg, dict):
        raise fail(str(cfg_path), f"JSON {type(cfg).__name__}", "a JSON object")
    H = _cfg_int(cfg, cfg_path, ("num_attention_heads", "n_head"), True)
    H_kv = _cfg_int(cfg, cfg_path, ("num_key_value_heads",), False) if layout == "llama" else None
    H_kv = H if H_kv is None else H_kv
    if H % H_kv:
        raise fail(f"{cfg_path} key 'num_key_value_heads'", H_kv, f"a divisor of num_attention_heads = {H}")
    d = _cfg_int(cfg, cfg_path, ("hidden_size", "n_embd"), True)
    d_k = _cfg_int(cfg, cfg_path, ("head_dim",), False)
    if d_k is None:
        if d % H:
            raise fail(str(cfg_path), f"hidden size {d} and {H} heads",
                       "a head_dim key, or a hidden size divisible by the number of heads")
        d_k = d // H
    L = _cfg_int(cfg, cfg_path, ("num_hidden_layers", "n_layer"), False)
    L = max(layers) + 1 if L is None else L
    extra = sorted(i for i in layers if i >= L)
    if extra:
        raise fail(f"{files[0]}", f"attention tensors for layer {extra[0]}", f"layers 0..{L - 1} (config {L} layers)")
    mt = cfg.get("model_type")
    ck = Checkpoint(path, files, layout, mt if isinstance(mt, str) else None, L, H, H_kv, d, d_k, prefix, index)
    return _checked(ck, f"{files[0] if len(files) == 1 else path}", "",
                    f"from {cfg_path.name} (heads {H}, key heads {H_kv}, hidden size {d}, head_dim {d_k})")


def _hdi_by_cholesky(W: np.ndarray) -> float:
    """Subspace HDI of heads ``W`` (H, d, d_k) whose rank is checked: with ``W_hᵀ W_h = L_h L_hᵀ``,
    ``U_hᵀ U_g = L_h^{-1} (W_hᵀ W_g) L_g^{-T}``, half the work of H QR factorisations (the band's draws)."""
    H, d, k = W.shape
    flat = W.transpose(1, 0, 2).reshape(d, H * k)
    G = (flat.T @ flat).reshape(H, k, H, k).transpose(0, 2, 1, 3)          # (H, H, k, k) blocks W_hᵀ W_g
    Linv = np.linalg.inv(np.linalg.cholesky(G[np.arange(H), np.arange(H)]))
    B = Linv[:, None] @ G @ np.swapaxes(Linv, -1, -2)[None]              # U_hᵀ U_g
    sq = (B**2).sum(axis=(-1, -2))
    return float(1.0 - (sq.sum() - np.trace(sq)) / (k * H * (H - 1)))


def quantisation_band(W: np.ndarray, steps: np.ndarray, *, draws: int, rng: np.random.Generator) -> dict[str, Any]:
    """How much the HDI of heads ``W`` (H, d, d_k) moves when every weight moves by as much as its
    storage rounds: the HDI of ``W + E`` for ``draws`` independent E uniform on ``[-step/2, step/2]``
    (``steps`` W's shape). Returns the mean change ``shift``, its SE ``shift_se``, the SD ``sd`` and the
    band ``|shift| + BAND_SDS·sd``: digits of the HDI finer than the band are not determined by the
    stored weights (on MiniLM quantised, tests/test_gguf.py, it covers the change from float32)."""
    draws = positive_int("band draws", draws, minimum=2, maximum=MAX_BAND_DRAWS)
    h0 = _hdi_by_cholesky(W)
    dev = np.empty(draws)
    for k in range(draws):   # one draw at a time: memory of one set of heads
        dev[k] = _hdi_by_cholesky(W + (rng.random(W.shape) - 0.5) * steps) - h0
    shift, sd = float(dev.mean()), float(dev.std(ddof=1))
    return {"band": abs(shift) + BAND_SDS * sd, "shift": shift, "shift_se": sd / math.sqrt(draws), "sd": sd,
            "draws": draws}


def _block(W: np.ndarray, tensor: str, d: int, d_k: int) -> dict[str, Any]:
    """Diversity figures of one set of heads (keys or queries of one layer)."""
    n = W.shape[0]
    try:
        rho = overlap(W)
    except VerifyError as exc:
        raise VerifyError(f"tensor {tensor!r}: {exc}") from None
    random_rho = haar_overlap_mean(d_k, d)
    out: dict[str, Any] = {"tensor": tensor, "heads": n, "d_k": d_k, "d": d}
    if n >= 2:
        pairs = rho[np.triu_indices(n, 1)]
        # subspace-form HDI, 1 - mean_{h<h'} rho_hh', from the same overlaps as diversity.hdi
        h = float(1.0 - pairs.mean())
        # Haar baseline of n heads of these sizes: mean 1 - d_k/d, SD from the overlap's variance (C9)
        sd = haar_hdi_moments(n, d_k, d)[1] if d >= 2 else 0.0
        out.update(hdi=h, hdi_bound=hdi_bound(n, d_k, d),
                   mean_overlap=float(pairs.mean()), max_overlap=float(pairs.max()), random_hdi_sd=sd,
                   z=(h - (1.0 - random_rho)) / sd if sd > 0 else None)
    else:
        out.update(hdi=None, hdi_bound=None, mean_overlap=None, max_overlap=None, random_hdi_sd=None, z=None,
                   note="a single head: HDI needs at least two")
    out.update(random_mean_overlap=random_rho, random_hdi=1.0 - random_rho, overlap=rho.tolist())
    return out


#: Why score forms are not compared for rotary models (printed with the table).
ROTARY_NOTE = ("score forms W_Q^h (W_K^h)^T are not compared: with rotary positions the score of a query at "
               "position m and a key at n is x_m^T W_Q^h R(n - m) (W_K^h)^T x_n, R a rotation of the head's d_k "
               "coordinates, so a head's score form changes with the relative position; the key and query ranges, "
               "which R leaves unchanged, are compared")


#: The files whose code makes a checkpoint's analysis: a cached analysis is current while they and the
#: checkpoint's file are unchanged.
_ANALYSIS_CODE = ("checkpoint.py", "gguf_reader.py", "../numeric/baseline.py", "../numeric/diversity.py")


def _cached_analysis(path: Path, seed: int, band_draws: int) -> tuple[Path, dict | None]:
    """Where the analysis of ``path`` at (seed, band_draws) is cached (keyed by its files' names, sizes and
    times, the analysis code and the parameters), and the cached document if it reads back (else None)."""
    import hashlib

    from proofs.cache import cache_dir

    h = hashlib.sha256(f"{seed}\0{band_draws}\0".encode())
    files = sorted(p for p in ([path] if path.is_file() else path.iterdir()) if p.is_file())
    for f in files:
        st = f.stat()
        h.update(f"{f.resolve()}\0{st.st_size}\0{st.st_mtime_ns}\0".encode())
    here = Path(__file__).resolve().parent
    for rel in _ANALYSIS_CODE:
        h.update((here / rel).read_bytes())
    target = cache_dir().parent / "checkpoints" / f"{h.hexdigest()[:40]}.json"
    try:
        doc = read_json("checkpoint cache", target) if target.is_file() else None
    except VerifyError:
        doc = None
    return target, doc if isinstance(doc, dict) and "layers" in doc else None


def analyze_checkpoint(path: str | Path, *, seed: int = 0, band_draws: int = DEFAULT_BAND_DRAWS,
                       cache: bool = False) -> dict[str, Any]:
    """Per layer, for keys (the H_kv distinct key heads) and queries: subspace HDI, fusion-frame bound,
    mean/max pairwise overlap, the Haar baseline of as many heads (HDI 1 - d_k/d, its SD, z) and the
    overlap matrix; below float32 precision, the quantisation band (:func:`quantisation_band`,
    ``band_draws`` draws from ``SeedSequence([seed, layer, 0 keys / 1 queries])``)."""
    seed = valid_seed("seed", seed)
    band_draws = positive_int("band_draws", band_draws, minimum=2, maximum=MAX_BAND_DRAWS)
    if cache:   # a fixed file: analysed once per machine (C9's reading ii), the result kept as JSON
        target, doc = _cached_analysis(Path(path_like("path", path)), seed, band_draws)
        if doc is None:   # as JSON reads it back (lists, no numpy): the same values whether cached or not
            doc = loads_json("analysis", dump_json(analyze_checkpoint(path, seed=seed, band_draws=band_draws)))
            try:
                write_json(target, doc, indent=None)
            except OSError:
                pass                          # an unwritable cache: the run goes on uncached
        return doc
    ck = open_checkpoint(path)
    g = ck.H // ck.H_kv
    groups = [list(range(j * g, (j + 1) * g)) for j in range(ck.H_kv)]
    notes = []
    if ck.H_kv < ck.H:
        notes.append(f"grouped-query attention: {ck.H_kv} key heads, each shared by {g} query heads "
                     f"(query head h uses key head h // {g}); key HDI is over the {ck.H_kv} distinct key heads")
    if ck.rotary:
        notes.append(ROTARY_NOTE)
    layers, types, banded = [], set(), False
    for i in range(ck.num_layers):
        wq, wk = ck.heads(i)
        q_name, k_name = ck.tensor_names(i)
        types.update(ck.storage(i))
        if ck.layout == "gpt2":
            rows = "[:, {}:{}]" if ck.format == "safetensors" else "[{}:{}, :]"
            q_name = f"{q_name} {rows.format(0, ck.H * ck.d_k)}"
            k_name = f"{k_name} {rows.format(ck.H * ck.d_k, 2 * ck.H * ck.d_k)}"
        entry = {"layer": i, "keys": _block(wk, k_name, ck.d, ck.d_k), "queries": _block(wq, q_name, ck.d, ck.d_k)}
        steps = ck.steps(i)
        for j, part, W in ((0, "keys", wk), (1, "queries", wq)):
            if steps is None or W.shape[0] < 2:
                entry[part]["band"] = None
                continue
            banded = True
            rng = np.random.default_rng(np.random.SeedSequence([seed, i, j]))
            entry[part]["band"] = quantisation_band(W, steps[1 - j], draws=band_draws, rng=rng)
        layers.append(entry)
    band = None
    if banded:
        band = {"draws": band_draws, "seed": seed, "sds": BAND_SDS,
                "what": f"|mean change| + {BAND_SDS:g} SD of the HDI over {band_draws} perturbations of every weight "
                        f"by uniform noise of +-half its quantisation step (seed {seed})"}
        notes.append(f"band: the HDI's change when every weight moves by up to half its quantisation step "
                     f"(|mean| + {BAND_SDS:g} SD over {band_draws} draws, seed {seed}); finer digits are not "
                     f"determined by the stored weights")
    return {
        "path": str(ck.path), "files": [str(f) for f in ck.files], "format": ck.format, "version": ck.version,
        "layout": ck.layout,
        "model_type": ck.model_type, "name": ck.name, "rotary": ck.rotary, "tensor_types": sorted(types),
        "num_layers": ck.num_layers, "H": ck.H, "H_kv": ck.H_kv,
        "d": ck.d, "d_k": ck.d_k, "query_heads_per_key_head": g, "key_head_groups": groups,
        "score_forms": ({"compared": False, "reason": ROTARY_NOTE} if ck.rotary else
                        {"compared": False, "reason": "not computed by this command (C9's training parts compare the "
                                                      "score forms of trained heads)"}),
        "band": band, "notes": notes, "layers": layers,
    }


def _fmt(x: float | None) -> str:
    return "     -" if x is None else f"{x:6.4f}"


def _fmt_z(x: float | None) -> str:
    return f"{'-':>7}" if x is None else f"{x:7.1f}"


def _fmt_band(b: dict[str, Any]) -> str:
    band = b.get("band")
    return f"{'-':>8}" if band is None else f"{'±' + format(band['band'], '.2g'):>8}"


def format_table(result: dict[str, Any]) -> str:
    """The readable per-layer table printed by ``python -m verify hdi``; text from the file (its
    path, architecture and name) is printed with control characters escaped."""
    r = result
    banded = r.get("band") is not None
    lines = [f"checkpoint: {printable(r['path'])}"]
    if r.get("format") == "gguf":
        name = f", name {printable(repr(r['name']))}" if r.get("name") else ""
        lines.append(f"format: GGUF v{r.get('version')}, architecture {printable(repr(r['model_type']))}{name}, "
                     f"attention weights stored as {', '.join(r['tensor_types'])}")
    sd = r["layers"][0]["queries"].get("random_hdi_sd") if r["layers"] else None    # of the H query heads
    sd_keys = next((layer["keys"]["random_hdi_sd"] for layer in r["layers"]), None) if r["H_kv"] < r["H"] else None
    lines += [
        f"layout: {r['layout']} (model_type {printable(str(r['model_type']))}), {r['num_layers']} layers, "
        f"d = {r['d']}, d_k = {r['d_k']}, query heads H = {r['H']}, key heads = {r['H_kv']}",
        f"random baseline: independent Haar-random d_k-subspaces have mean overlap d_k/d = "
        f"{r['d_k'] / r['d']:.4f}, i.e. HDI {1 - r['d_k'] / r['d']:.4f}"
        + (f" ± {sd:.2g} (SD over draws of {r['H']} heads)" if sd else "")
        + (f", ± {sd_keys:.2g} over draws of {r['H_kv']} key heads" if sd_keys else ""),
    ]
    if r["H_kv"] < r["H"]:
        g = r["H"] // r["H_kv"]   # query heads 0-2 -> key head 0, 3-5 -> 1, ... (at most eight groups spelled out)
        groups = ", ".join(f"{j * g}-{(j + 1) * g - 1} -> {j}" for j in range(min(r["H_kv"], 8)))
        lines.append(f"groups: query heads {groups}{', ...' if r['H_kv'] > 8 else ''} "
                     f"(query head h uses key head h // {g})")
    lines += [
        *[f"note: {n}" for n in r["notes"]],
        "HDI = 1 - mean pairwise overlap rho (subspace form); bound = fusion-frame maximum of HDI; "
        "z = (HDI - random)/SD" + ("; band = the HDI's sensitivity to the quantisation" if banded else ""),
        "",
    ]
    width = 44 + (9 if banded else 0)
    head = f"{'HDI':>6} {'bound':>6} {'random':>6} {'z':>7} {'mean':>7} {'max':>7}" + (f" {'band':>8}" if banded else "")
    sub = f"{'':>6} {'':>6} {'':>6} {'':>7} {'rho':>7} {'rho':>7}" + (f" {'':>8}" if banded else "")
    lines += [f"{'':5} | {'keys':^{width}} | {'queries':^{width}}", f"{'layer':5} | " + " | ".join([head] * 2),
              f"{'':5} | " + " | ".join([sub] * 2)]
    for layer in r["layers"]:
        cells = []
        for part in ("keys", "queries"):
            b = layer[part]
            cells.append(f"{_fmt(b['hdi'])} {_fmt(b['hdi_bound'])} {_fmt(b['random_hdi'])} {_fmt_z(b['z'])} "
                         f"{_fmt(b['mean_overlap']):>7} {_fmt(b['max_overlap']):>7}" + (f" {_fmt_band(b)}" if banded else ""))
        lines.append(f"{layer['layer']:5d} | " + " | ".join(cells))
    return "\n".join(lines)


def _save_png(fig: Any, path: Path) -> Path:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=100)
    try:
        atomic_write_bytes(path, buf.getvalue())
    except OSError as exc:
        raise fail("--plots DIR", f"{str(path)!r} ({exc.strerror})", "a writable directory") from None
    return path


def plot_layers(result: dict[str, Any], out_dir: str | Path) -> Path:
    """``hdi_per_layer.png``: key and query HDI per layer against the Haar-random baseline
    (mean ± 2 SD) and the fusion-frame bound."""
    from matplotlib.figure import Figure

    fig = Figure(figsize=(7, 4.2), layout="constrained")
    ax = fig.subplots()
    layers = [layer["layer"] for layer in result["layers"]]
    for part, color in (("keys", "C0"), ("queries", "C1")):
        blocks = [layer[part] for layer in result["layers"]]
        ys = [np.nan if b["hdi"] is None else b["hdi"] for b in blocks]
        ax.plot(layers, ys, "o-", color=color, label=f"{part} (H = {blocks[0]['heads'] if blocks else 0})")
        mu = np.array([b["random_hdi"] for b in blocks])
        sd = np.array([np.nan if b["random_hdi_sd"] is None else b["random_hdi_sd"] for b in blocks])
        ax.fill_between(layers, mu - 2 * sd, mu + 2 * sd, color=color, alpha=0.15, lw=0)
        ax.plot(layers, mu, ":", color=color, lw=1, label=f"Haar-random {part}, mean ± 2 SD")
    bounds = [layer["queries"]["hdi_bound"] for layer in result["layers"]]
    ax.plot(layers, bounds, "--", color="gray", lw=1, label="fusion-frame bound")
    ax.set_xlabel("layer")
    ax.set_ylabel("HDI")
    ax.set_title(f"head diversity per layer ({result['layout']}, d = {result['d']}, d_k = {result['d_k']}): "
                 f"{'/'.join(Path(result['path']).parts[-2:])}", fontsize=10)
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=7)
    return _save_png(fig, Path(out_dir) / "hdi_per_layer.png")


def plot_overlaps(result: dict[str, Any], out_dir: str | Path) -> list[Path]:
    """One PNG per layer: the key and query overlap matrices as heatmaps on [0, 1]."""
    from matplotlib.figure import Figure   # lazy: plotting is optional; Figure needs no pyplot backend

    out = Path(out_dir)
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise fail("--out DIR", f"{str(out)!r} ({exc.strerror})", "a directory that can be created") from None
    paths = []
    for layer in result["layers"]:
        fig = Figure(figsize=(9, 4), layout="constrained")
        axes = fig.subplots(1, 2)
        for ax, part in zip(axes, ("keys", "queries")):
            b = layer[part]
            im = ax.imshow(np.array(b["overlap"]), vmin=0.0, vmax=1.0, cmap="viridis")
            hdi_txt = "n/a" if b["hdi"] is None else f"{b['hdi']:.3f}"
            ax.set_title(f"{part}: HDI {hdi_txt} (random {b['random_hdi']:.3f})", fontsize=10)
            ax.set_xlabel("head")
            ax.set_ylabel("head")
        fig.suptitle(f"layer {layer['layer']}: pairwise subspace overlap rho", fontsize=11)
        fig.colorbar(im, ax=axes, shrink=0.8, label="overlap rho")
        paths.append(_save_png(fig, out / f"layer_{layer['layer']:02d}_overlap.png"))
    return paths
