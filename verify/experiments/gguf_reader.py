"""GGUF checkpoints (llama.cpp's format) read through the ``gguf`` library, with each weight's
quantisation step.

The library parses the file (``gguf.GGUFReader``) and dequantises every block type
(``gguf.quants.dequantize``); nothing here decodes tensor data by hand. Added here:

- **Bounded work.** The library trusts every count and length in the header (one metadata array of
  2,000,000 items took it 18.6 s and 1.4 GB). So before it sees a file, the header's framing is
  walked once with bounded reads, each count and length checked against a cap and the file's size:
  a hostile header is refused after reading at most :data:`MAX_HEADER_BYTES`, before any allocation
  it asks for; the library's reading is then compared with the walk's.
- **Quantisation steps** (:meth:`GGUFFile.step`): per weight, the spacing of the grid its stored
  value lies on, from the block's scale fields or the unit in the last place of F32/F16/BF16 values.
- **Metadata as the package reads it**: one integer or string per key, errors naming the key.
"""

from __future__ import annotations

import math
import os
import struct
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from verify._validate import fail, path_like, printable, received
from verify.io import regular_file

__all__ = ["MAX_HEADER_BYTES", "MAX_TENSORS", "MAX_KV", "MAX_NAME_BYTES", "MAX_STRING_BYTES", "MAX_ARRAY_ITEMS",
           "MAX_ARRAY_DEPTH", "MAX_DIMS", "MAX_ALIGNMENT", "READ_TYPES", "TensorInfo", "GGUFHeader", "check_header",
           "GGUFFile", "is_gguf"]

#: The most header bytes walked (magic to the end of the tensor infos): SmolLM2-135M's is 1.8 MB,
#: a LLaMA-3 vocabulary (128k tokens, 280k merges) about 10 MB.
MAX_HEADER_BYTES = 64 * 2**20
#: The most tensors one file may declare: public checkpoints hold a few hundred to a few thousand.
MAX_TENSORS = 65_536
#: The most metadata keys: real files carry 20 to 60.
MAX_KV = 4_096
#: The longest key or tensor name in bytes (llama.cpp caps tensor names at 63).
MAX_NAME_BYTES = 1_024
#: The longest metadata string (chat templates run to tens of kB).
MAX_STRING_BYTES = 16 * 2**20
#: The most metadata array items in one file, all arrays together: the library spends ~9 µs and
#: ~0.7 kB on each (2,000,000 took 18.6 s and 1.4 GB), so this bounds it near 10 s; SmolLM2 has
#: 147,204, a Gemma-3 vocabulary (three arrays of 262,144) 786,432.
MAX_ARRAY_ITEMS = 2**20
#: Arrays of arrays nest at most this deep (the library recurses once per level).
MAX_ARRAY_DEPTH = 2
#: ggml tensors have at most four dimensions (GGML_MAX_DIMS).
MAX_DIMS = 4
#: The largest ``general.alignment`` accepted (a power of two; llama.cpp writes 32).
MAX_ALIGNMENT = 2**20

_MAGIC = b"GGUF"
_VERSIONS = (2, 3)   # those gguf.GGUFReader reads; version 1 used 32-bit counts
_DEFAULT_ALIGNMENT = 32
_SCALAR_BYTES = {0: 1, 1: 1, 2: 2, 3: 2, 4: 4, 5: 4, 6: 4, 7: 1, 10: 8, 11: 8, 12: 8}
_STRING, _ARRAY = 8, 9
_INTEGER_TYPES = {0, 1, 2, 3, 4, 5, 10, 11}
_VALUE_NAMES = {0: "UINT8", 1: "INT8", 2: "UINT16", 3: "INT16", 4: "UINT32", 5: "INT32", 6: "FLOAT32", 7: "BOOL",
                8: "STRING", 9: "ARRAY", 10: "UINT64", 11: "INT64", 12: "FLOAT64"}
#: Tensor types whose weights are read (dequantised by the library) and whose step is derived here.
READ_TYPES = ("F32", "F16", "BF16", "Q8_0", "Q4_0", "Q4_1", "Q5_0", "Q5_1", "Q4_K", "Q5_K", "Q6_K")


def _gguf() -> Any:
    """The ``gguf`` library, imported on first use (it is needed only for GGUF files)."""
    import gguf

    return gguf


def _type_table() -> dict[int, tuple[str, int, int]]:
    """ggml type id -> (name, elements per block, bytes per block), from the library's table."""
    g = _gguf()
    return {int(t): (t.name, *g.GGML_QUANT_SIZES[t]) for t in g.GGMLQuantizationType}


@dataclass(frozen=True)
class TensorInfo:
    """One tensor as the header declares it: numpy shape (the reverse of ggml's ``ne``), type,
    byte offset from the start of the data section and byte count."""

    name: str
    shape: tuple[int, ...]
    type_id: int
    type_name: str
    offset: int
    nbytes: int


@dataclass(frozen=True)
class GGUFHeader:
    """What the bounded walk of a header established."""

    version: int
    alignment: int
    data_start: int
    keys: tuple[str, ...]
    tensors: tuple[TensorInfo, ...]


class _Cursor:
    """Little-endian reads of a file's first bytes, never beyond MAX_HEADER_BYTES or the file's end;
    the file is read in growing chunks, so a small header costs a small read. Every metadata array
    item walked is counted against MAX_ARRAY_ITEMS."""

    def __init__(self, fh: Any, size: int, where: str) -> None:
        self.fh, self.size, self.where = fh, size, where
        self.limit = min(size, MAX_HEADER_BYTES)
        self.buf = bytearray()
        self.pos = 0
        self.items = 0

    def need(self, n: int, what: str) -> None:
        end = self.pos + n
        if end > self.limit:
            if end > self.size:
                raise fail(self.where, f"a file of {self.size:,} bytes that ends inside {what} (which needs bytes "
                                       f"{self.pos:,} to {end:,})", "a whole GGUF file (it is truncated or a count lies)")
            raise fail(self.where, f"a header that runs past byte {MAX_HEADER_BYTES:,} at {what}",
                       f"a GGUF header of at most {MAX_HEADER_BYTES:,} bytes (MAX_HEADER_BYTES)")
        if end > len(self.buf):
            want = min(self.limit, max(end, 2 * len(self.buf), 2**20))
            self.fh.seek(len(self.buf))
            self.buf += self.fh.read(want - len(self.buf))
            if len(self.buf) < end:
                raise fail(self.where, f"{len(self.buf):,} readable bytes", f"{end:,} (the file shrank while read)")

    def take(self, n: int, what: str) -> bytes:
        self.need(n, what)
        out = bytes(self.buf[self.pos:self.pos + n])
        self.pos += n
        return out

    def skip(self, n: int, what: str) -> None:
        self.need(n, what)
        self.pos += n

    def u32(self, what: str) -> int:
        return struct.unpack("<I", self.take(4, what))[0]

    def u64(self, what: str) -> int:
        return struct.unpack("<Q", self.take(8, what))[0]

    def name(self, what: str) -> str:
        """A key or tensor name: a length of at most MAX_NAME_BYTES and UTF-8 bytes."""
        n = self.u64(f"the length of {what}")
        if n > MAX_NAME_BYTES:
            raise fail(self.where, f"{what} of {n:,} bytes", f"names of at most {MAX_NAME_BYTES:,} bytes (MAX_NAME_BYTES)")
        raw = self.take(n, what)
        try:
            return raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise fail(self.where, f"{what} {received(raw)} that is not UTF-8 ({exc.reason})", "UTF-8 names") from None

    def value(self, vtype: int, key: str, depth: int = 0) -> None:
        """Walk one metadata value of type ``vtype``."""
        if vtype in _SCALAR_BYTES:
            self.skip(_SCALAR_BYTES[vtype], f"the value of key {received(key)}")
        elif vtype == _STRING:
            n = self.u64(f"a string length in key {received(key)}")
            if n > MAX_STRING_BYTES:
                raise fail(self.where, f"a string of {n:,} bytes in key {received(key)}",
                           f"strings of at most {MAX_STRING_BYTES:,} bytes (MAX_STRING_BYTES)")
            self.skip(n, f"a string of key {received(key)}")
        elif vtype == _ARRAY:
            if depth >= MAX_ARRAY_DEPTH:
                raise fail(self.where, f"arrays nested {depth + 1} deep in key {received(key)}",
                           f"arrays nested at most {MAX_ARRAY_DEPTH} deep (MAX_ARRAY_DEPTH)")
            itype = self.u32(f"the item type of key {received(key)}")
            count = self.u64(f"the item count of key {received(key)}")
            if itype not in _VALUE_NAMES:
                raise fail(self.where, f"item type {itype} in key {received(key)}", "a GGUF value type (0 to 12)")
            self.items += count
            if self.items > MAX_ARRAY_ITEMS:
                raise fail(self.where, f"{count:,} array items in key {received(key)} ({self.items:,} in all)",
                           f"at most {MAX_ARRAY_ITEMS:,} metadata array items in one file (MAX_ARRAY_ITEMS)")
            if itype in _SCALAR_BYTES:
                self.skip(count * _SCALAR_BYTES[itype], f"the items of key {received(key)}")
            else:
                for _ in range(count):
                    self.value(itype, key, depth + 1)
        else:
            raise fail(self.where, f"value type {vtype} for key {received(key)}", "a GGUF value type (0 to 12)")


def check_header(path: Path, where: str) -> GGUFHeader:
    """Walk the header of the GGUF file ``path`` with bounded reads (module docstring); the
    package's error naming ``where`` at the first field that breaks the format, a cap or the file's
    size."""
    types = _type_table()
    try:
        size = os.stat(path).st_size
        with open(path, "rb") as fh:
            return _walk(_Cursor(fh, size, where), size, types)
    except OSError as exc:
        raise fail(where, f"an unreadable file ({exc.strerror or exc})", "a readable GGUF file") from None


def _walk(cur: _Cursor, size: int, types: dict[int, tuple[str, int, int]]) -> GGUFHeader:
    where = cur.where
    magic = cur.take(4, "the magic number")
    if magic != _MAGIC:
        raise fail(where, f"the first bytes {received(magic)}", "a GGUF file (starting with b'GGUF')")
    version = cur.u32("the version")
    if version not in _VERSIONS:
        swapped = int.from_bytes(version.to_bytes(4, "little"), "big")
        got = f"a big-endian GGUF file (version {swapped})" if swapped in _VERSIONS else f"version {version}"
        raise fail(where, got, "a little-endian GGUF file of version 2 or 3")
    n_tensors, n_kv = cur.u64("the tensor count"), cur.u64("the key count")
    if n_tensors > MAX_TENSORS:
        raise fail(where, f"a header of {n_tensors:,} tensors", f"at most {MAX_TENSORS:,} tensors (MAX_TENSORS)")
    if n_kv > MAX_KV:
        raise fail(where, f"a header of {n_kv:,} metadata keys", f"at most {MAX_KV:,} keys (MAX_KV)")
    keys, alignment = [], _DEFAULT_ALIGNMENT
    for i in range(n_kv):
        key = cur.name(f"key {i}")
        if key in keys:
            raise fail(where, f"the key {received(key)} twice", "each metadata key once")
        keys.append(key)
        vtype = cur.u32(f"the value type of key {received(key)}")
        if key == "general.alignment":
            if vtype != 4:
                raise fail(f"{where}: key 'general.alignment'", f"type {_VALUE_NAMES.get(vtype, vtype)}", "UINT32")
            alignment = cur.u32("general.alignment")
            if alignment == 0 or alignment & (alignment - 1) or alignment > MAX_ALIGNMENT:
                raise fail(f"{where}: key 'general.alignment'", f"{alignment:,}",
                           f"a power of two of at most {MAX_ALIGNMENT:,} (MAX_ALIGNMENT)")
        else:
            cur.value(vtype, key)
    infos = []
    for i in range(n_tensors):
        name = cur.name(f"the name of tensor {i}")
        n_dims = cur.u32(f"the dimension count of tensor {received(name)}")
        if n_dims > MAX_DIMS:
            raise fail(where, f"tensor {received(name)} of {n_dims:,} dimensions", f"at most {MAX_DIMS} (ggml's limit)")
        ne = [cur.u64(f"the shape of tensor {received(name)}") for _ in range(n_dims)]
        tid = cur.u32(f"the type of tensor {received(name)}")
        offset = cur.u64(f"the offset of tensor {received(name)}")
        if tid not in types:
            raise fail(where, f"tensor {received(name)} of unknown type {tid}",
                       "a ggml tensor type the gguf library knows")
        tname, block, tsize = types[tid]
        if ne and ne[0] % block:
            raise fail(where, f"tensor {received(name)} of type {tname} with rows of {ne[0]:,} elements",
                       f"rows of a multiple of its block size {block}")
        count = math.prod(ne)
        nbytes = count // block * tsize
        if nbytes > size:
            raise fail(where, f"tensor {received(name)} of shape {tuple(reversed(ne))} ({nbytes:,} bytes of {tname})",
                       f"tensors that fit in the file's {size:,} bytes")
        if offset % alignment:
            raise fail(where, f"tensor {received(name)} at offset {offset:,}", f"offsets that are multiples of the "
                                                                                 f"alignment {alignment}")
        infos.append(TensorInfo(name, tuple(reversed(ne)), tid, tname, offset, nbytes))
    names = [t.name for t in infos]
    if len(set(names)) != len(names):
        dup = next(n for n in names if names.count(n) > 1)
        raise fail(where, f"the tensor name {received(dup)} twice", "each tensor name once")
    data_start = -(-cur.pos // alignment) * alignment
    data = size - data_start
    if data < 0:
        raise fail(where, f"a file of {size:,} bytes", f"a data section after the header (from byte {data_start:,})")
    end, last = 0, None
    for t in sorted(infos, key=lambda t: (t.offset, t.nbytes)):
        if t.offset + t.nbytes > data:
            raise fail(where, f"tensor {received(t.name)} at bytes {t.offset:,} to {t.offset + t.nbytes:,} of the data "
                              f"section", f"tensors inside the file's {data:,} data bytes (is the file truncated?)")
        if t.offset < end:
            raise fail(where, f"tensor {received(t.name)} at byte {t.offset:,}, inside tensor {received(last)}",
                       "tensors whose bytes do not overlap")
        end, last = t.offset + t.nbytes, t.name
    return GGUFHeader(version, alignment, data_start, tuple(keys), tuple(infos))


def is_gguf(path: Path) -> bool:
    """Whether ``path`` names a GGUF file: by its suffix, or by its magic number."""
    if path.suffix.lower() == ".gguf":
        return True
    try:
        with open(path, "rb") as fh:
            return fh.read(4) == _MAGIC
    except OSError:
        return False


def _f16(blocks: np.ndarray, at: int) -> np.ndarray:
    """The float16 field at byte ``at`` of each block, as float64 (n_blocks,)."""
    return np.ascontiguousarray(blocks[:, at:at + 2]).view("<f2")[:, 0].astype(np.float64)


def _block_steps(type_name: str, blocks: np.ndarray) -> np.ndarray:
    """Step of each weight (n_blocks, block size) from raw blocks: |d| (the f16 at byte 0) of Q8_0, Q4_0,
    Q5_0, Q4_1, Q5_1; |d·sc_j| per sub-block of Q4_K, Q5_K (32 weights, 6-bit sc_j unpacked by the
    library) and Q6_K (16 weights, int8 sc_j at bytes 192..207, d the f16 at 208)."""
    if type_name in ("Q8_0", "Q4_0", "Q5_0", "Q4_1", "Q5_1"):
        return np.repeat(np.abs(_f16(blocks, 0))[:, None], 32, axis=1)
    if type_name in ("Q4_K", "Q5_K"):
        sc, _ = _gguf().quants.Q4_K.get_scale_min(np.ascontiguousarray(blocks[:, 4:16]))
        return np.repeat(np.abs(_f16(blocks, 0)[:, None] * sc.astype(np.float64)), 32, axis=1)
    if type_name == "Q6_K":
        sc = np.ascontiguousarray(blocks[:, 192:208]).view(np.int8).astype(np.float64)
        return np.repeat(np.abs(_f16(blocks, 208)[:, None] * sc), 16, axis=1)
    raise AssertionError(type_name)   # READ_TYPES and this function name the same types


def float_steps(values: np.ndarray, type_name: str) -> np.ndarray:
    """The unit in the last place of each value in its storage format (F32, F16, BF16, F64): the
    step of the float grid at that value (for a bfloat16, whose 7 fraction bits are the top of a
    float32's 23, the float32 spacing times 2^16)."""
    if type_name == "F16":
        return np.spacing(np.abs(values.astype(np.float16))).astype(np.float64)
    if type_name == "F64":
        return np.spacing(np.abs(values.astype(np.float64)))
    step = np.spacing(np.abs(values.astype(np.float32))).astype(np.float64)
    return step * 2.0**16 if type_name == "BF16" else step


class GGUFFile:
    """One GGUF file: header walked (:func:`check_header`), then read by ``gguf.GGUFReader``; tensors
    dequantised by the library (:meth:`get`) with their steps (:meth:`step`), metadata by key."""

    def __init__(self, path: str | Path, name: str = "GGUF file") -> None:
        path_like(name, path)
        self.path = regular_file(name, path)
        self.where = printable(str(self.path))
        self.header = check_header(self.path, self.where)
        g = _gguf()
        try:
            self._reader = g.GGUFReader(str(self.path), "r")
        except (ValueError, KeyError, IndexError, TypeError, OverflowError, UnicodeDecodeError) as exc:
            raise fail(self.where, f"a file the gguf library rejects ({printable(' '.join(str(exc).split()))[:300]})",
                       "a valid GGUF file") from None
        except OSError as exc:
            raise fail(self.where, f"an unreadable file ({exc.strerror or exc})", "a readable GGUF file") from None
        self._info = {t.name: t for t in self.header.tensors}
        self._tensors = {}
        for t in self._reader.tensors:
            mine = self._info.get(t.name)
            if (mine is None or int(t.tensor_type) != mine.type_id or t.data_offset != self.header.data_start + mine.offset
                    or tuple(int(x) for x in reversed(t.shape.tolist())) != mine.shape):
                raise fail(self.where, f"tensor {received(t.name)} read differently by the gguf library",
                           "an unchanged file (did it change while it was read?)")
            self._tensors[t.name] = t
        if len(self._tensors) != len(self._info):
            raise fail(self.where, f"{len(self._tensors)} tensors read by the gguf library",
                       f"the {len(self._info)} the header declares (did the file change?)")

    @property
    def names(self) -> list[str]:
        return [t.name for t in self.header.tensors]

    def info(self, name: str) -> tuple[str, tuple[int, ...]]:
        """(type name, numpy shape) of tensor ``name``."""
        t = self._lookup(name)
        return t.type_name, t.shape

    def _lookup(self, name: str) -> TensorInfo:
        if name not in self._info:
            raise fail(self.where, f"no tensor named {received(name)} among {len(self._info)}", f"a tensor {received(name)}")
        return self._info[name]

    def readable(self, name: str) -> TensorInfo:
        """The header's entry of tensor ``name`` if its type is one read here (READ_TYPES);
        any other type is refused by name before its data is touched."""
        t = self._lookup(name)
        if t.type_name not in READ_TYPES:
            raise fail(f"{self.where}: tensor {received(name)}", f"type {t.type_name}",
                       f"one of the types read here ({', '.join(READ_TYPES)})")
        return t

    def get(self, name: str) -> np.ndarray:
        """Tensor ``name`` dequantised by ``gguf.quants.dequantize`` (float32, numpy shape);
        non-finite weights (a corrupt scale) are refused."""
        t = self.readable(name)
        g = self._tensors[name]
        try:
            arr = np.array(_gguf().quants.dequantize(g.data, g.tensor_type), dtype=np.float32, copy=True)
        except (ValueError, NotImplementedError, OSError) as exc:
            raise fail(f"{self.where}: tensor {received(name)}", f"data the gguf library cannot dequantise ({exc})",
                       f"a readable {t.type_name} tensor") from None
        if arr.shape != t.shape:
            raise fail(f"{self.where}: tensor {received(name)}", f"dequantised shape {arr.shape}", f"shape {t.shape}")
        bad = int(np.count_nonzero(~np.isfinite(arr)))
        if bad:
            raise fail(f"{self.where}: tensor {received(name)}", f"{bad:,} NaN or infinite weights", "finite weights")
        return arr

    def step(self, name: str) -> np.ndarray:
        """Each weight's quantisation step (float64, the tensor's numpy shape): the spacing of the
        grid its stored value lies on (module docstring); ``w`` rounded to nearest lies within half
        a step of the value it came from."""
        t = self.readable(name)
        if t.type_name in ("F32", "F16", "BF16"):
            return float_steps(self.get(name), t.type_name)
        _, block, tsize = _type_table()[t.type_id]
        raw = np.asarray(self._tensors[name].data).reshape(-1, tsize)
        return _block_steps(t.type_name, raw).reshape(t.shape)

    def _single(self, key: str, required: bool, what: str, types: set[int], want: str) -> Any:
        """The field of metadata ``key`` holding one value of ``types`` (None when absent and not required)."""
        f = self._reader.fields.get(key)
        if f is None and required:
            raise fail(self.where, f"no metadata key {received(key)}", f"the key {received(key)} ({what})")
        kinds = [] if f is None else [int(t) for t in f.types]
        if f is not None and (len(kinds) != 1 or kinds[0] not in types):
            names = "/".join(_VALUE_NAMES.get(k, str(k)) for k in kinds)
            raise fail(f"{self.where}: key {received(key)}", f"type {names}", want)
        return f

    def integer(self, key: str, *, required: bool = True) -> int | None:
        """The integer scalar of metadata ``key`` (None when absent and not required)."""
        f = self._single(key, required, "an integer", _INTEGER_TYPES, "a single integer (per-layer arrays are not read)")
        return None if f is None else int(f.parts[-1][0])

    def string(self, key: str, *, required: bool = True) -> str | None:
        """The string of metadata ``key``, UTF-8 (None when absent and not required)."""
        f = self._single(key, required, "a string", {_STRING}, "a string")
        if f is None:
            return None
        try:
            return bytes(f.parts[-1]).decode("utf-8")
        except UnicodeDecodeError as exc:
            raise fail(f"{self.where}: key {received(key)}", f"bytes that are not UTF-8 ({exc.reason})", "UTF-8") from None
