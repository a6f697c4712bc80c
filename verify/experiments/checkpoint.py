"""Attention heads of a real checkpoint and their diversity (claims C4, C6 on trained weights).

The ``safetensors`` library (numpy, one tensor at a time) feeds the per-head key and query
projections of BERT/MiniLM, GPT-2 and LLaMA/Mistral checkpoints to :mod:`verify.numeric.diversity`.

Two facts keep the measure meaningful on such weights. Biases are left out: HDI is defined on
``W_K`` alone. Rotary position embeddings (LLaMA) multiply each head's d_k coordinates by an
invertible matrix, and Hugging Face's conversion permutes rows inside each head; neither
changes ``Range(W_K^h)``, so HDI, which is invariant under ``W_K^h -> W_K^h A``, is unaffected.
"""

from __future__ import annotations

import argparse
import io
import math
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from safetensors import SafetensorError, safe_open

from verify._validate import (
    ArgParser,
    error_line,
    exclusive,
    fail,
    path_like,
    positive_int,
    writable_file,
    writable_folder,
)
from verify.errors import VerifyError
from verify.io import (
    atomic_write_bytes,
    loads_json,
    read_json,
    regular_file,
    write_json,
)
from verify.numeric.baseline import haar_hdi_moments
from verify.numeric.diversity import haar_overlap_mean, hdi_bound, overlap

__all__ = [
    "MAX_HEADER_BYTES",
    "MAX_TENSORS",
    "SafetensorsFile",
    "read_safetensors",
    "Checkpoint",
    "open_checkpoint",
    "analyze_checkpoint",
    "format_table",
    "plot_overlaps",
    "plot_layers",
    "cli_hdi",
]

# safetensors dtypes of attention weights; BF16, which numpy lacks, is converted to float32 on read
_FLOAT_DTYPES = ("F64", "F32", "F16", "BF16")
#: The largest header read: real checkpoints' headers are a few hundred kB (a 70B-parameter shard's
#: is under 100 kB); the library's own limit, 100 MB, lets a header of 1.35 M empty tensors take
#: minutes and gigabytes before it is refused.
MAX_HEADER_BYTES = 16 * 2**20
#: The most tensors one file may declare: public checkpoints hold a few thousand per file, and
#: the library reads 65,536 header entries in well under a second.
MAX_TENSORS = 65_536


# --- the safetensors reader --------------------------------------------------------------------


def _library_error(where: str, exc: BaseException) -> VerifyError:
    return fail(where, f"a file the safetensors library rejects ({' '.join(str(exc).split())})",
                "a valid .safetensors file")


class SafetensorsFile:
    """One ``.safetensors`` file, read with the ``safetensors`` library (``safe_open``, numpy).

    The library enforces the format when the file is opened: an 8-byte little-endian header
    length, a UTF-8 JSON header of known dtypes and shapes, byte ranges that are ordered,
    contiguous, non-overlapping and cover the data exactly. Two things are added here: the
    path must be a regular file before it is opened (a FIFO would block, a device might
    never end), and a tensor name may appear only once in the header (the library's JSON map keeps
    one of two entries of the same name silently); the header, already validated, is re-read
    with :func:`verify.io.loads_json`, which refuses duplicate keys. Tensors are read one at a
    time, on request.
    """

    def __init__(self, path: str | Path) -> None:
        path_like("safetensors file", path)
        self.path = regular_file("safetensors file", path)
        where = str(self.path)
        self._check_header_size(where)
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
        self._offsets, self._data_start = self._header_offsets(where)

    def _check_header_size(self, where: str) -> None:
        """Refuse, before the library parses it, a header beyond MAX_HEADER_BYTES or one that
        declares more than MAX_TENSORS tensors (each needs a ``"data_offsets"`` key, counted in
        the raw bytes: an escaped name cannot hold that quoted word)."""
        try:
            with open(self.path, "rb") as fh:
                head = fh.read(8)
                n = int.from_bytes(head, "little") if len(head) == 8 else 0
                if n > MAX_HEADER_BYTES:
                    raise fail(where, f"a header of {n:,} bytes",
                               f"a .safetensors header of at most {MAX_HEADER_BYTES:,} bytes (MAX_HEADER_BYTES)")
                count = fh.read(n).count(b'"data_offsets"')
        except OSError as exc:
            raise fail(where, f"an unreadable file ({exc.strerror})", "a readable .safetensors file") from None
        if count > MAX_TENSORS:
            raise fail(where, f"a header of {count:,} tensors",
                       f"at most {MAX_TENSORS:,} tensors in one file (MAX_TENSORS)")

    def _header_offsets(self, where: str) -> tuple[dict[str, int], int]:
        """``{name: begin}`` from the header (the library has validated it: its length fits in
        the file, it is a flat JSON object), refusing duplicate tensor names."""
        try:
            with open(self.path, "rb") as fh:
                n = int.from_bytes(fh.read(8), "little")
                raw = fh.read(n)
        except OSError as exc:
            raise fail(where, f"an unreadable file ({exc.strerror})", "a readable .safetensors file") from None
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as exc:  # the library read it as UTF-8: the file changed meanwhile
            raise fail(f"{where}: header", f"bytes that are not UTF-8 ({exc})", "a JSON object") from None
        header = loads_json(f"{where}: header", text)  # refuses a tensor name that appears twice
        if not isinstance(header, dict) or set(header) - {"__metadata__"} != set(self._info):
            raise fail(f"{where}: header", "entries that differ from the library's reading (did the file change?)",
                       "an unchanged file")
        return {k: int(v["data_offsets"][0]) for k, v in header.items() if k != "__metadata__"}, 8 + n

    @property
    def names(self) -> list[str]:
        return list(self._info)

    def info(self, name: str) -> tuple[str, tuple[int, ...]]:
        """``(dtype, shape)`` of tensor ``name`` as stored."""
        return self._lookup(name)

    def _lookup(self, name: str) -> tuple[str, tuple[int, ...]]:
        if name not in self._info:
            raise fail(f"{self.path}", f"no tensor named {name!r} among {len(self._info)}", f"a tensor {name!r}")
        return self._info[name]

    def get(self, name: str) -> np.ndarray:
        """Tensor ``name`` in native byte order, as the library returns it; BF16 (which numpy
        cannot hold) becomes float32, exactly: a bf16 value is the high half of a float32."""
        dtype, shape = self._lookup(name)
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


def read_safetensors(path: str | Path, names: list[str] | None = None) -> dict[str, np.ndarray]:
    """The tensors of one file (all, or only ``names``) as numpy arrays."""
    f = SafetensorsFile(path)
    return {n: f.get(n) for n in (f.names if names is None else names)}


# --- layouts ----------------------------------------------------------------------------------

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
    """Where the attention projections of a checkpoint are and how they split into heads.

    ``H`` query heads and ``H_kv`` key heads of size ``d_k`` in model width ``d``; with
    grouped-query attention (``H_kv < H``) query head h uses key head ``h // (H // H_kv)``.
    """

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
    _where: dict[str, SafetensorsFile] = field(repr=False, compare=False)

    def tensor_names(self, layer: int) -> tuple[str, str]:
        """(query tensor, key tensor) of ``layer``; the same fused tensor for GPT-2."""
        p, i = self.prefix, layer
        if self.layout == "bert":
            return f"{p}encoder.layer.{i}.attention.self.query.weight", f"{p}encoder.layer.{i}.attention.self.key.weight"
        if self.layout == "gpt2":
            return (f"{p}h.{i}.attn.c_attn.weight",) * 2
        return f"{p}layers.{i}.self_attn.q_proj.weight", f"{p}layers.{i}.self_attn.k_proj.weight"

    def expected_shapes(self) -> tuple[tuple[int, int], tuple[int, int]]:
        """Stored shapes of (query, key) tensors implied by H, H_kv, d, d_k."""
        if self.layout == "gpt2":  # Conv1D (in, out): x @ W = [q | k | v]
            return ((self.d, 3 * self.H * self.d_k),) * 2
        return (self.H * self.d_k, self.d), (self.H_kv * self.d_k, self.d)  # torch Linear (out, in)

    def heads(self, layer: int) -> tuple[np.ndarray, np.ndarray]:
        """``W_Q`` (H, d, d_k) and ``W_K`` (H_kv, d, d_k) of ``layer`` in float64.

        Linear (out, in): ``W^h = weight[h d_k:(h+1) d_k, :]^T``. GPT-2 Conv1D (d, 3 H d_k):
        ``q = W[:, :H d_k]``, ``k = W[:, H d_k:2 H d_k]``, head h = columns ``h d_k:(h+1) d_k``.
        """
        q_name, k_name = self.tensor_names(layer)
        H, H_kv, d, d_k = self.H, self.H_kv, self.d, self.d_k
        if self.layout == "gpt2":
            w = self._where[q_name].get(q_name).astype(np.float64)
            wq, wk = w[:, : H * d_k], w[:, H * d_k: 2 * H * d_k]
            return wq.reshape(d, H, d_k).transpose(1, 0, 2), wk.reshape(d, H, d_k).transpose(1, 0, 2)
        wq = self._where[q_name].get(q_name).astype(np.float64)
        wk = self._where[k_name].get(k_name).astype(np.float64)
        return wq.reshape(H, d_k, d).transpose(0, 2, 1), wk.reshape(H_kv, d_k, d).transpose(0, 2, 1)


def _weight_files(path: Path) -> tuple[tuple[Path, ...], Path | None]:
    if path.exists() and not path.is_dir():
        regular_file("PATH", path)  # a FIFO or device is refused before anything opens it
        cfg = path.parent / "config.json"
        return (path,), (cfg if cfg.exists() else None)
    if path.is_dir():
        single = path / "model.safetensors"
        files = (single,) if single.is_file() else tuple(sorted(path.glob("*.safetensors")))
        if not files:
            raise fail("PATH", f"directory {path} without *.safetensors files",
                       "a .safetensors file or a directory holding model.safetensors (or shards)")
        cfg = path / "config.json"
        return files, (cfg if cfg.exists() else None)
    raise fail("PATH", repr(str(path)), "an existing .safetensors file or model directory")


def _read_config(cfg_path: Path | None, weights: Path) -> dict[str, Any]:
    if cfg_path is None:
        raise fail("config.json", f"none beside {weights}",
                   "a config.json (num_attention_heads / n_head): the number of heads cannot be read "
                   "from the tensors' shapes alone")
    cfg = read_json("config.json", cfg_path)
    if not isinstance(cfg, dict):
        raise fail(str(cfg_path), f"JSON {type(cfg).__name__}", "a JSON object")
    return cfg


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
    """Locate the query/key projections of a checkpoint and check their shapes against config.json.

    ``path``: a ``.safetensors`` file (config.json beside it) or a directory with
    ``model.safetensors`` (or shards ``*.safetensors``) and ``config.json``.
    """
    path = Path(path_like("path (PATH)", path))
    files, cfg_path = _weight_files(path)
    index: dict[str, SafetensorsFile] = {}
    for fp in files:
        sf = SafetensorsFile(fp)
        for name in sf.names:
            if name in index:
                raise fail(str(fp), f"tensor {name!r} also in {index[name].path}", "each tensor in one shard only")
            index[name] = sf
    layout, prefix, layers = _detect_layout(index, files)
    cfg = _read_config(cfg_path, files[0])
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
    why = f"from {cfg_path.name} (heads {H}, key heads {H_kv}, hidden size {d}, head_dim {d_k})"
    for i in range(L):
        for name, shape in zip(ck.tensor_names(i), ck.expected_shapes()):
            if name not in index:
                raise fail(f"{files[0] if len(files) == 1 else path}", f"no tensor {name!r}",
                           f"tensor {name!r} of shape {shape} {why}")
            dtype, got = index[name].info(name)
            if got != shape:
                raise fail(f"tensor {name!r}", f"shape {got}", f"shape {shape} {why}")
            if dtype not in _FLOAT_DTYPES:
                raise fail(f"tensor {name!r}", f"dtype {dtype}", f"a float dtype ({', '.join(_FLOAT_DTYPES)})")
    return ck


# --- analysis ---------------------------------------------------------------------------------


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


def analyze_checkpoint(path: str | Path) -> dict[str, Any]:
    """Per layer, for keys and queries: subspace HDI, fusion-frame bound, mean/max pairwise
    overlap, the Haar-random baseline (mean overlap d_k/d, HDI 1 - d_k/d, its SD over draws of
    as many heads, and z = (HDI - baseline)/SD) and the overlap matrix.

    With grouped-query attention the key figures are over the H_kv distinct key heads.
    """
    ck = open_checkpoint(path)
    g = ck.H // ck.H_kv
    groups = [list(range(j * g, (j + 1) * g)) for j in range(ck.H_kv)]
    notes = []
    if ck.H_kv < ck.H:
        notes.append(f"grouped-query attention: {ck.H_kv} key heads, each shared by {g} query heads "
                     f"(query head h uses key head h // {g}); key HDI is over the {ck.H_kv} distinct key heads")
    layers = []
    for i in range(ck.num_layers):
        wq, wk = ck.heads(i)
        q_name, k_name = ck.tensor_names(i)
        if ck.layout == "gpt2":
            q_name, k_name = f"{q_name} [:, 0:{ck.H * ck.d_k}]", f"{k_name} [:, {ck.H * ck.d_k}:{2 * ck.H * ck.d_k}]"
        layers.append({"layer": i, "keys": _block(wk, k_name, ck.d, ck.d_k),
                       "queries": _block(wq, q_name, ck.d, ck.d_k)})
    return {
        "path": str(ck.path), "files": [str(f) for f in ck.files], "layout": ck.layout,
        "model_type": ck.model_type, "num_layers": ck.num_layers, "H": ck.H, "H_kv": ck.H_kv,
        "d": ck.d, "d_k": ck.d_k, "query_heads_per_key_head": g, "key_head_groups": groups,
        "notes": notes, "layers": layers,
    }


def _fmt(x: float | None) -> str:
    return "     -" if x is None else f"{x:6.4f}"


def _fmt_z(x: float | None) -> str:
    return f"{'-':>7}" if x is None else f"{x:7.1f}"


def format_table(result: dict[str, Any]) -> str:
    """The readable per-layer table printed by ``python -m verify hdi``."""
    r = result
    lines = [
        f"checkpoint: {r['path']}",
        f"layout: {r['layout']} (model_type {r['model_type']}), {r['num_layers']} layers, "
        f"d = {r['d']}, d_k = {r['d_k']}, query heads H = {r['H']}, key heads = {r['H_kv']}",
        f"random baseline: independent Haar-random d_k-subspaces have mean overlap d_k/d = "
        f"{r['d_k'] / r['d']:.4f}, i.e. HDI {1 - r['d_k'] / r['d']:.4f}"
        + (f" ± {sd:.2g} (SD over draws of {r['H']} heads)" if (sd := _first_sd(r)) else ""),
        *[f"note: {n}" for n in r["notes"]],
        "HDI = 1 - mean pairwise overlap rho (subspace form); bound = fusion-frame maximum of HDI; "
        "z = (HDI - random)/SD",
        "",
        f"{'':5} | {'keys':^44} | {'queries':^44}",
        f"{'layer':5} | " + " | ".join([f"{'HDI':>6} {'bound':>6} {'random':>6} {'z':>7} {'mean':>7} {'max':>7}"] * 2),
        f"{'':5} | " + " | ".join([f"{'':>6} {'':>6} {'':>6} {'':>7} {'rho':>7} {'rho':>7}"] * 2),
    ]
    for layer in r["layers"]:
        cells = []
        for part in ("keys", "queries"):
            b = layer[part]
            cells.append(f"{_fmt(b['hdi'])} {_fmt(b['hdi_bound'])} {_fmt(b['random_hdi'])} {_fmt_z(b['z'])} "
                         f"{_fmt(b['mean_overlap']):>7} {_fmt(b['max_overlap']):>7}")
        lines.append(f"{layer['layer']:5d} | " + " | ".join(cells))
    return "\n".join(lines)


def _first_sd(result: dict[str, Any]) -> float | None:
    """The Haar SD of the query heads (H of them; every layer has the same sizes)."""
    layers = result["layers"]
    return layers[0]["queries"].get("random_hdi_sd") if layers else None


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
    from matplotlib.figure import (
        Figure,  # lazy: plotting is optional; Figure needs no pyplot backend
    )

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


def cli_hdi(argv: list[str]) -> int:
    """``python -m verify hdi PATH [--json FILE] [-o DIR]``; 0 on success, 2 on bad input (the
    output targets are checked before the checkpoint is read)."""
    parser = ArgParser(prog="python -m verify hdi",
                       description="Head diversity (HDI) of the key and query heads of a safetensors checkpoint, "
                                   "per layer, against the Haar baseline of random subspaces.",
                       epilog="example:\n  python -m verify hdi path/to/model --json hdi.json -o hdi-plots",
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("path", type=Path, metavar="PATH", help=".safetensors file or model directory with config.json")
    parser.add_argument("--json", type=Path, metavar="FILE", help="write the full result (with overlap matrices)")
    parser.add_argument("-o", "--out", type=Path, metavar="DIR",
                        help="write one overlap heatmap PNG per layer and the HDI per layer against the Haar baseline")
    parser.add_argument("--plots", type=Path, dest="old_plots", help=argparse.SUPPRESS)   # the old name of --out
    import contextlib

    from verify.io import output_folder

    held = contextlib.ExitStack()      # -o DIR: taken (empty, or hdi's own marker) and locked until the end
    try:
        args = parser.parse_args(argv)
        exclusive(("--out", args.out), ("--plots", args.old_plots))
        plots = args.out if args.out is not None else args.old_plots
        if args.json is not None:
            writable_file("--json FILE", args.json)
        if plots is not None:
            writable_folder("--out DIR", plots)
            held.enter_context(output_folder("--out DIR", plots, "python -m verify hdi"))
        result = analyze_checkpoint(args.path)
        print(format_table(result))
        if args.json is not None:
            try:
                write_json(args.json, result, indent=1)
            except OSError as exc:
                raise fail("--json FILE", f"{str(args.json)!r} ({exc.strerror})", "a writable file path") from None
            print(f"wrote {args.json}")
        if plots is not None:
            paths = plot_overlaps(result, plots)
            paths.append(plot_layers(result, plots))
            print(f"wrote {len(paths)} plots to {plots}")
    except VerifyError as exc:
        print(error_line(exc), file=sys.stderr)
        return 2
    except SystemExit as exc:  # --help
        return int(exc.code or 0)
    finally:
        held.close()
    return 0
