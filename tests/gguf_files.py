"""Checkpoint helpers of tests/test_checkpoint.py and tests/test_gguf.py (not a test module): heads
sliced by hand, overlaps from scipy's principal angles, and GGUF files written byte by byte from the
specification (ggml/docs/gguf.md), not from the package: a valid tiny LLaMA-layout model, which
``gguf.GGUFReader`` reads, and hostile variants, each breaking one field of it."""

from __future__ import annotations

import struct
from typing import Any

import numpy as np
import scipy.linalg

from verify.experiments.gguf_reader import MAX_ARRAY_ITEMS

U8, U32, F32T, STR, ARR, U64 = 0, 4, 6, 8, 9, 10
T_F32, T_Q8_0, T_Q2_K, T_I32 = 0, 8, 10, 26


def rows_heads(weight: np.ndarray, n_heads: int, d_k: int) -> list[np.ndarray]:
    """Linear (out, in) weight: head h = rows h*d_k .. (h+1)*d_k, transposed to (d, d_k), float64."""
    return [weight[h * d_k:(h + 1) * d_k].T.astype(np.float64) for h in range(n_heads)]


def rho_scipy(heads: list[np.ndarray]) -> np.ndarray:
    """rho_hh' = mean cos^2 of scipy's principal angles, for every pair; rho_hh = 1."""
    n, d_k = len(heads), heads[0].shape[1]
    rho = np.eye(n)
    for h in range(n):
        for g in range(h + 1, n):
            rho[h, g] = rho[g, h] = np.sum(np.cos(scipy.linalg.subspace_angles(heads[h], heads[g])) ** 2) / d_k
    return rho


def s(text: str | bytes) -> bytes:
    raw = text.encode() if isinstance(text, str) else text
    return struct.pack("<Q", len(raw)) + raw


def kv(key: str | bytes, vtype: int, payload: bytes) -> bytes:
    return s(key) + struct.pack("<I", vtype) + payload


def u32(key: str, value: int) -> bytes:
    return kv(key, U32, struct.pack("<I", value))


def string(key: str, value: str | bytes) -> bytes:
    return kv(key, STR, s(value))


def tinfo(name: str | bytes, ne: tuple[int, ...], ttype: int, offset: int) -> bytes:
    return s(name) + struct.pack("<I", len(ne)) + b"".join(struct.pack("<Q", n) for n in ne) + struct.pack("<IQ", ttype, offset)


def weights(rows: int, cols: int, seed: int) -> np.ndarray:
    """A (rows, cols) float32 weight of full rank."""
    return np.random.default_rng(seed).standard_normal((rows, cols)).astype(np.float32)


def q8_0(w: np.ndarray, scale: float | None = None) -> bytes:
    """Q8_0 blocks of ``w`` (rows of a multiple of 32): f16 d then 32 int8, per block; ``scale``
    overrides every d (a NaN scale makes a corrupt block)."""
    out = []
    for block in w.reshape(-1, 32):
        d = float(np.abs(block).max()) / 127 or 1.0
        q = np.clip(np.round(block / d), -127, 127).astype(np.int8)
        out.append(np.float16(d if scale is None else scale).tobytes() + q.tobytes())
    return b"".join(out)


def model(*, d: int = 8, H: int = 2, H_kv: int = 1, d_k: int | None = None, L: int = 1, arch: str | bytes = "llama",
          keys: list[bytes] | None = None, extra_keys: tuple[bytes, ...] = (), drop: tuple[str, ...] = (),
          tensors: list[tuple[Any, ...]] | None = None, version: int = 3, magic: bytes = b"GGUF",
          n_tensors: int | None = None, n_kv: int | None = None, alignment: int = 32,
          k_type: int = T_F32, k_scale: float | None = None) -> bytes:
    """A GGUF file: by default a valid LLaMA-layout model (F32 attention weights, width ``d``,
    ``H`` query and ``H_kv`` key heads of size d/H); every argument breaks or changes one thing.
    ``tensors``: (name, ne, type, offset, data[, declared offset]) tuples replacing the attention
    tensors (data placed at ``offset``; the header may declare another)."""
    d_k = d // H if d_k is None else d_k
    arch_s = arch.decode(errors="replace") if isinstance(arch, bytes) else arch
    if keys is None:
        keys = [string("general.architecture", arch), u32(f"{arch_s}.block_count", L),
                u32(f"{arch_s}.embedding_length", d), u32(f"{arch_s}.attention.head_count", H),
                u32(f"{arch_s}.attention.head_count_kv", H_kv)]
        keys = [k for k in keys if not any(k[8:].startswith(name.encode()) for name in drop)]
    keys = keys + list(extra_keys)
    if tensors is None:
        tensors, offset = [], 0
        for i in range(L):
            q = weights(H * d_k, d, 10 + i).tobytes()
            k_w = weights(H_kv * d_k, d, 20 + i)
            k = q8_0(k_w, k_scale) if k_type == T_Q8_0 else k_w.tobytes()
            for name, ne, ttype, data in ((f"blk.{i}.attn_q.weight", (d, H * d_k), T_F32, q),
                                          (f"blk.{i}.attn_k.weight", (d, H_kv * d_k), k_type, k)):
                if name.split(".")[-2] not in drop:
                    tensors.append((name, ne, ttype, offset, data))
                    offset += -(-len(data) // alignment) * alignment
    head = magic + struct.pack("<I", version) + struct.pack("<QQ", len(tensors) if n_tensors is None else n_tensors,
                                                             len(keys) if n_kv is None else n_kv)
    head += b"".join(keys) + b"".join(tinfo(t[0], t[1], t[2], t[5] if len(t) > 5 else t[3]) for t in tensors)
    head += b"\0" * (-len(head) % alignment)
    data = b""
    for _, _, _, off, raw, *_ in sorted(tensors, key=lambda t: t[3]):
        if off > len(data):
            data += b"\0" * (off - len(data))
        data = data[:off] + raw + data[off + len(raw):]
    return head + data + b"\0" * (-len(data) % alignment)


def _big_array(count: int, itype: int = U8, items: bytes | None = None) -> bytes:
    """A key holding an array of ``count`` items (``items`` its bytes; only the count for a lie)."""
    return kv("tokenizer.ggml.token_type", ARR, struct.pack("<IQ", itype, count) + (items or b""))


_VALID_Q = weights(8, 8, 10).tobytes()
_VALID_K = weights(4, 8, 20).tobytes()

#: name -> (file bytes, the start of the error after the file's path and ": ", stage): "header"
#: cases are refused by the bounded walk before the gguf library reads the file, "model" cases after.
HOSTILE: dict[str, tuple[bytes, str, str]] = {
    "magic": (model(magic=b"GGUG"), "expected a GGUF file (starting with b'GGUF'), got the first bytes b'GGUG'", "header"),
    "version-1": (model(version=1), "expected a little-endian GGUF file of version 2 or 3, got version 1", "header"),
    "big-endian": (model(version=int.from_bytes((3).to_bytes(4, "big"), "little")),
                   "expected a little-endian GGUF file of version 2 or 3, got a big-endian GGUF file (version 3)",
                   "header"),
    "truncated-in-the-keys": (model()[:60], "expected a whole GGUF file (it is truncated or a count lies), got a file "
                                            "of 60 bytes that ends inside", "header"),
    "truncated-in-the-data": (model()[:-40], "expected tensors inside the file's", "header"),
    "tensor-count-in-the-billions": (model(n_tensors=2**40), "expected at most 65,536 tensors (MAX_TENSORS), got a "
                                                             "header of 1,099,511,627,776 tensors", "header"),
    "key-count-in-the-billions": (model(n_kv=3 * 10**9), "expected at most 4,096 keys (MAX_KV), got a header of "
                                                         "3,000,000,000 metadata keys", "header"),
    "string-length-in-the-billions": (model(extra_keys=(kv("general.name", STR, struct.pack("<Q", 5 * 10**9)),)),
                                      "expected strings of at most 16,777,216 bytes (MAX_STRING_BYTES), got a string "
                                      "of 5,000,000,000 bytes in key 'general.name'", "header"),
    "key-length-in-the-billions": (model(extra_keys=(struct.pack("<Q", 2**33),)),
                                   "expected names of at most 1,024 bytes (MAX_NAME_BYTES), got key 5 of "
                                   "8,589,934,592 bytes", "header"),
    "tensor-name-length-in-the-billions": (model().replace(s("blk.0.attn_q.weight"), struct.pack("<Q", 4 * 10**9), 1),
                                           "expected names of at most 1,024 bytes (MAX_NAME_BYTES), got the name of "
                                           "tensor 0 of 4,000,000,000 bytes", "header"),
    "array-count-in-the-billions": (model(extra_keys=(_big_array(10**10),)),
                                    "expected at most 1,048,576 metadata array items in one file (MAX_ARRAY_ITEMS), "
                                    "got 10,000,000,000 array items in key 'tokenizer.ggml.token_type'", "header"),
    "array-items-beyond-the-cap": (model(extra_keys=(_big_array(MAX_ARRAY_ITEMS + 1, items=bytes(MAX_ARRAY_ITEMS + 1)),)),
                                   "expected at most 1,048,576 metadata array items in one file (MAX_ARRAY_ITEMS)",
                                   "header"),
    "arrays-nested-3-deep": (model(extra_keys=(kv("x", ARR, struct.pack("<IQ", ARR, 1) + struct.pack("<IQ", ARR, 1)
                                                  + struct.pack("<IQ", U8, 1) + b"\0"),)),
                             "expected arrays nested at most 2 deep (MAX_ARRAY_DEPTH), got arrays nested 3 deep", "header"),
    "value-type-unknown": (model(extra_keys=(kv("x", 13, b"\0" * 8),)), "expected a GGUF value type (0 to 12), got value "
                                                                         "type 13 for key 'x'", "header"),
    "key-name-not-utf8": (model(extra_keys=(kv(b"x\xff", U32, struct.pack("<I", 1)),)),
                          "expected UTF-8 names, got key 5 b'x\\xff' that is not UTF-8", "header"),
    "key-twice": (model(extra_keys=(u32("llama.block_count", 1),)), "expected each metadata key once, got the key "
                                                                    "'llama.block_count' twice", "header"),
    "alignment-not-a-power-of-two": (model(extra_keys=(u32("general.alignment", 48),)),
                                     "key 'general.alignment': expected a power of two of at most 1,048,576 "
                                     "(MAX_ALIGNMENT), got 48", "header"),
    "alignment-of-another-type": (model(extra_keys=(kv("general.alignment", U64, struct.pack("<Q", 32)),)),
                                  "key 'general.alignment': expected UINT32, got type UINT64", "header"),
    "tensor-type-unknown": (model(tensors=[("blk.0.attn_q.weight", (8, 8), 99, 0, _VALID_Q)]),
                            "expected a ggml tensor type the gguf library knows, got tensor 'blk.0.attn_q.weight' of "
                            "unknown type 99", "header"),
    "tensor-of-5-dimensions": (model(tensors=[("blk.0.attn_q.weight", (8, 8, 1, 1, 1), T_F32, 0, _VALID_Q)]),
                               "expected at most 4 (ggml's limit), got tensor 'blk.0.attn_q.weight' of 5 dimensions",
                               "header"),
    "tensor-rows-not-whole-blocks": (model(tensors=[("blk.0.attn_q.weight", (8, 8), T_Q8_0, 0, b"\0" * 68)]),
                                     "expected rows of a multiple of its block size 32, got tensor "
                                     "'blk.0.attn_q.weight' of type Q8_0 with rows of 8 elements", "header"),
    "tensor-shape-larger-than-the-file": (model(tensors=[("blk.0.attn_q.weight", (2**31, 2**31), T_F32, 0, _VALID_Q)]),
                                          "expected tensors that fit in the file's", "header"),
    "tensor-shape-beyond-its-data": (model(tensors=[("blk.0.attn_q.weight", (8, 8), T_F32, 0, _VALID_Q),
                                                    ("blk.0.attn_k.weight", (8, 12), T_F32, 256, _VALID_K)]),
                                     "expected tensors inside the file's 384 data bytes (is the file truncated?), got "
                                     "tensor 'blk.0.attn_k.weight' at bytes 256 to 640", "header"),
    "tensor-offset-beyond-the-file": (model(tensors=[("blk.0.attn_q.weight", (8, 8), T_F32, 0, _VALID_Q, 2**40)]),
                                      "expected tensors inside the file's 256 data bytes (is the file truncated?), got "
                                      "tensor 'blk.0.attn_q.weight' at bytes 1,099,511,627,776 to", "header"),
    "tensor-offsets-overlap": (model(tensors=[("blk.0.attn_q.weight", (8, 8), T_F32, 0, _VALID_Q),
                                              ("blk.0.attn_k.weight", (8, 4), T_F32, 128, _VALID_K)]),
                               "expected tensors whose bytes do not overlap, got tensor 'blk.0.attn_k.weight' at byte "
                               "128, inside tensor 'blk.0.attn_q.weight'", "header"),
    "tensor-offset-misaligned": (model(tensors=[("blk.0.attn_q.weight", (8, 8), T_F32, 0, _VALID_Q),
                                                ("blk.0.attn_k.weight", (8, 4), T_F32, 260, _VALID_K)]),
                                 "expected offsets that are multiples of the alignment 32, got tensor "
                                 "'blk.0.attn_k.weight' at offset 260", "header"),
    "tensor-name-twice": (model(tensors=[("blk.0.attn_q.weight", (8, 8), T_F32, 0, _VALID_Q),
                                         ("blk.0.attn_q.weight", (8, 4), T_F32, 256, _VALID_K)]),
                          "expected each tensor name once, got the tensor name 'blk.0.attn_q.weight' twice", "header"),
    "architecture-unknown": (model(arch="bert\x1b[2J"), "key 'general.architecture': expected one of llama, mistral, "
                                                        "mistral3, qwen2, qwen3, granite, gpt2 (their attention tensors "
                                                        "are read), got 'bert\\x1b[2J'", "model"),
    "head-count-missing": (model(drop=("llama.attention.head_count",)),
                           "expected the key 'llama.attention.head_count' (an integer), got no metadata key", "model"),
    "head-count-an-array": (model(keys=[string("general.architecture", "llama"), u32("llama.block_count", 1),
                                        u32("llama.embedding_length", 8),
                                        kv("llama.attention.head_count", ARR, struct.pack("<IQ", U32, 1)
                                           + struct.pack("<I", 2))]),
                            "key 'llama.attention.head_count': expected a single integer (per-layer arrays are not "
                            "read), got type ARRAY/UINT32", "model"),
    "head-count-zero": (model(H=0, d_k=4), "key 'llama.attention.head_count': expected an integer from 1 to 8", "model"),
    "heads-do-not-divide-the-width": (model(H=3, H_kv=1, d_k=4),
                                      "key 'llama.attention.head_count': expected a divisor of llama.embedding_length = 8 "
                                      "(or a key_length key giving the head size), got 3", "model"),
    "key-heads-do-not-divide-the-heads": (model(d=12, H=4, H_kv=3),
                                          "key 'llama.attention.head_count_kv': expected a divisor of "
                                          "llama.attention.head_count = 4 (each key head serves as many query heads), "
                                          "got 3", "model"),
    "block-count-beyond-the-tensors": (model(L=1, keys=[string("general.architecture", "llama"),
                                                        u32("llama.block_count", 10**9), u32("llama.embedding_length", 8),
                                                        u32("llama.attention.head_count", 2),
                                                        u32("llama.attention.head_count_kv", 1)]),
                                       "key 'llama.block_count': expected an integer from 1 to 2 (each layer holds "
                                       "tensors of the file), got 1,000,000,000", "model"),
    "shape-disagrees-with-the-metadata": (model(keys=[string("general.architecture", "llama"), u32("llama.block_count", 1),
                                                      u32("llama.embedding_length", 16),
                                                      u32("llama.attention.head_count", 2),
                                                      u32("llama.attention.head_count_kv", 1)]),
                                          "tensor 'blk.0.attn_q.weight': expected shape (16, 16) from the file's metadata "
                                          "(heads 2, key heads 1, width 16, head size 8), got shape (8, 8)", "model"),
    "key-tensor-missing": (model(drop=("attn_k",)), "expected tensor 'blk.0.attn_k.weight' of shape (4, 8)", "model"),
    "key-tensor-of-a-type-not-read": (model(tensors=[("blk.0.attn_q.weight", (8, 8), T_F32, 0, _VALID_Q),
                                                     ("blk.0.attn_k.weight", (8, 4), T_I32, 256, _VALID_K)]),
                                      "tensor 'blk.0.attn_k.weight': expected one of the types read here (F32, F16, "
                                      "BF16, Q8_0, Q4_0, Q4_1, Q5_0, Q5_1, Q4_K, Q5_K, Q6_K), got type I32", "model"),
    "scale-not-a-number": (model(d=32, H=2, H_kv=1, k_type=T_Q8_0, k_scale=float("nan")),
                           "tensor 'blk.0.attn_k.weight': expected finite weights, got 512 NaN or infinite weights",
                           "model"),
}
