"""Bad input at the public boundary: one table of calls, for the API and the CLI subcommands.

Each row ``pytest.param(call, expected, id=...)``: ``call()`` must raise :class:`VerifyError`.
``expected`` is a tuple ``(argument, *substrings)`` (the message starts with ``argument:``) or one
substring naming the argument, the expectation and the value (a message that starts with a
temporary path). CLI rows (``_cli``) run ``verify.cli.main`` in-process: exit status 2 and one line
``error: ...`` on stderr, checked as a message. Replay rows (``rp``) break one parameter of a
replay's example.
"""

from __future__ import annotations

import contextlib
import dataclasses
import io
import json
import os
import struct
import tempfile
import unicodedata
from pathlib import Path
from typing import Any, Callable

import numpy as np
import pytest
import safetensors.numpy
import torch

from gguf_files import HOSTILE as _GGUF_HOSTILE
from gguf_files import model as _gguf_model
from proofs import CLAIM_IDS
from verify.claims import CLAIMS, c1, c4, c5
from verify.cli import main as verify_main
from verify.errors import VerifyError
from verify.outputs.report import REPORT_SHAPE
from verify.outputs.report import SCHEMA_VERSION as REPORT_SCHEMA_VERSION
from verify.experiments import allocate as al
from verify.experiments.checkpoint import (
    SafetensorsFile,
    analyze_checkpoint,
    open_checkpoint,
)
from verify.numeric import nw
from verify.numeric.attention import MultiHeadNW, from_torch
from verify.numeric.dgp import DGP, head_projections, make_dgp
from verify.numeric.diversity import (
    haar_overlap_mean,
    hdi,
    hdi_bound,
    overlap,
    principal_angles,
)
from verify.experiments.pretrained import judge_reading_ii
from verify.experiments.sweep import demo_grid as sweep_demo_grid
from verify.experiments.training import TrainSetting
from verify.numeric.engine import decompose, decompose_mp, noise_simulation_check
from verify.numeric.nw import nw_estimate, nw_weights

Q, K, V = np.ones((4, 3)), np.ones((5, 3)), np.ones((5, 2))
Q32, K32 = np.arange(6, dtype=np.float32).reshape(3, 2), np.ones((4, 2), np.float32)
HUGE = 10**12  # a size far beyond any machine's memory (in elements)


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
FIFO, FOLDER = object(), object()  # file contents that make a FIFO or a folder instead
_DEEP = b'{"a":' + b"[" * 100_000 + b"]" * 100_000 + b"}"  # JSON nested 100,000 deep


def _write(root: Path, files: dict[str, Any]) -> None:
    for name, content in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if content is FIFO:
            os.mkfifo(path)
        elif content is FOLDER:
            path.mkdir()
        else:
            if isinstance(content, (dict, list)):
                content = json.dumps(content)
            path.write_bytes(content if isinstance(content, bytes) else content.encode())


def _in_dir(files: dict[str, Any], call: Callable[[Path], Any]) -> Callable[[], Any]:
    """A zero-argument call that writes ``files`` (bytes, JSON objects or text, FIFO, FOLDER)
    into a fresh directory and runs ``call(dir)``."""

    def run() -> Any:
        with tempfile.TemporaryDirectory() as tmp:
            root = Path(tmp)
            _write(root, files)
            return call(root)

    return run


def _file(data: bytes) -> Callable[[], Any]:
    return _in_dir({"x.safetensors": data}, lambda d: SafetensorsFile(d / "x.safetensors"))


@contextlib.contextmanager
def _working_dir(path: Path):
    old = os.getcwd()
    os.chdir(path)
    try:
        yield
    finally:
        os.chdir(old)


def _cli(argv: list[str], files: dict[str, Any] | None = None, *, chdir: bool = False) -> Callable[[], Any]:
    """``verify.cli.main(argv)`` in a fresh directory (``{d}`` in argv is that directory; with
    ``chdir`` also the working directory) with ``files`` written there first: exit status 2 and
    one line ``error: ...`` on stderr, whose message is re-raised for the table."""

    def run() -> None:
        with tempfile.TemporaryDirectory() as tmp:
            root = Path(tmp)
            _write(root, files or {})
            err, out = io.StringIO(), io.StringIO()
            with contextlib.redirect_stderr(err), contextlib.redirect_stdout(out), \
                    (_working_dir(root) if chdir else contextlib.nullcontext()):
                code = verify_main([a.format(d=root) for a in argv])
            text = err.getvalue()
            assert code == 2, f"exit status {code}, stderr {text!r}"
            assert text.startswith("error: ") and text.endswith("\n") and text.count("\n") == 1, repr(text)
            raise VerifyError(text[len("error: "):-1])

    return run


_F32 = {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]}
_LIB = "x.safetensors: expected a valid .safetensors file, got a file the safetensors library rejects (Error while " \
       "deserializing header: "
_ALLOC = ["allocate", "--budget", "96", "--n", "1e6", "--dim", "8"]
_CKPT = {"model.safetensors": _bert(), "config.json": _CFG}


#: A valid report of one claim: a correction, and a part with a symbolic and a numeric side.
_PART = {"id": "p", "role": "core", "effect": "sets the verdict", "statement": "s",
         "numeric": {"agreement": "rounding", "summary": "ok"}, "symbolic": {"status": "proved", "n_checked": 1,
                                                                            "n_steps": 1}}
_CLAIM = {"id": "C1", "title": "t", "stated": "s", "verdict": "exact", "headline": "exact",
          "corrections": [{"part": "p", "finding": "f", "stated": "s", "derived": "d"}], "premise": [], "limits": [],
          "assumptions": [], "restored_by": [], "evidence": {"parts": [_PART], "plots": {}}}
#: A value of another type for each type of REPORT_SHAPE, and the type's name in the refusal (an
#: integer field refuses a boolean).
_WRONG = {str: (3, "a string"), int: (True, "an integer"), float: ("1", "a number"), dict: (3, "an object")}


def _wrong(shape: Any) -> tuple[Any, str]:
    """A value of another type than ``shape`` asks for, and the type's name in the refusal."""
    if isinstance(shape, list):
        return {}, "a list"
    if isinstance(shape, dict):
        return [], "an object"
    if isinstance(shape, str):     # REPORT_SHAPE's mark of an object of strings
        return {"p": 1}, "an object of strings"
    return _WRONG[shape]


def _shape_rows(shape: dict, doc: dict, path: str = "") -> list[tuple[str, dict, str]]:
    """``(field, doc, expected)``: ``doc`` (valid under the object ``shape``) with each field of another
    type, each required field missing, and so on inside each object and each list's first item."""
    rows = []
    for key, sub in shape.items():
        name = key.rstrip("?")
        field = f"{path}.{name}" if path else name
        wrong, word = _wrong(sub)
        rows.append((field, {**doc, name: wrong}, word))
        if not key.endswith("?"):
            rows.append((field, {k: v for k, v in doc.items() if k != name}, "none in"))
        value, inner = doc.get(name), sub[0] if isinstance(sub, list) else sub
        if isinstance(sub, list) and value and isinstance(inner, dict):
            rows += [(f, {**doc, name: [d, *value[1:]]}, w) for f, d, w in _shape_rows(inner, value[0], f"{field}[0]")]
        elif isinstance(sub, dict) and isinstance(value, dict):
            rows += [(f, {**doc, name: d}, w) for f, d, w in _shape_rows(sub, value, field)]
    return rows


#: Every field of REPORT_SHAPE broken in a valid report: ``(field, doc, expected, row label)`` (the
#: schema's own fields are read first, with their own refusals).
_REPORT_ROWS = [(field, doc, word, f"{field.replace('[0]', '-0')}-{'missing' if word == 'none in' else 'wrong-type'}")
                for field, doc, word in _shape_rows({k: v for k, v in REPORT_SHAPE.items() if "schema" not in k},
                                                    {"claims": [_CLAIM]})]


def _report(doc: Any, *, schema: bool = True) -> Callable[[], Any]:
    """``latex --report`` on ``doc`` (a JSON value, or text); an object gets the schema fields unless
    ``schema=False``."""
    if schema and isinstance(doc, dict):
        doc = {"schema": "mha-nw-verify/report", "schema_version": REPORT_SCHEMA_VERSION, **doc}
    return _cli(["latex", "-o", "{d}/out", "--report", "{d}/report.json"], {"report.json": doc})


_DGP = make_dgp("bump", d=4, sigma=0.5)


_HEADS = head_projections("random", 2, 4, 2, rng=0)


def _changed(func: Callable[..., Any], **base: Any) -> Callable[..., Callable[[], Any]]:
    """A row maker of ``func``: ``maker(*args, **change)`` calls ``func`` with ``base`` and ``change``."""
    return lambda *args, **change: lambda: func(*args, **(base | change))


eng = _changed(decompose, dgp=_DGP, W_Q=_HEADS, W_K=None, alpha=None, m=3, n=8, R=2, seed=0)
noise = _changed(noise_simulation_check, dgp=_DGP, W_Q=_HEADS, N=4, seed=0, n=8, m=3)
alloc = _changed(al.allocate, D=768, n=1e6, d=16)
mse = _changed(al.mse, model="a_corr", d_k=8, n=1e6, D=64, d=8)
setting = _changed(TrainSetting, dgp="bump", d=4, H=2, d_k=2, init="haar", n=8, m=4, sigma=0.5, steps=2, lr=0.01,
                   seeds=2, seed=0)
hp = _changed(head_projections)


def dgp(name: Any = "bump", **kwargs: Any) -> Callable[[], Any]:
    return lambda: make_dgp(name, **kwargs)


# --- python -m verify replay FILE: a valid counterexample of each kind, to be broken one key at a time
_CX = {"format": "mha-nw-verify/counterexample", "version": 1, "part": "p", "statement": "s",
       "expected": {"violates": True, "summary": "", "figures": {}}}
#: Every replay by kind: its example is the valid case a row breaks (tests/test_claims.py replays each).
REPLAYS = {rp.kind: rp for claim in CLAIMS.values() for rp in claim.replays.values()}


def _cx(which: str, /, **change: Any) -> dict:
    """The counterexample document of REPLAYS[which]'s example with ``change`` applied to its params:
    a key ``"a.b"`` or ``"a.0.b"`` sets a nested value, the value DROP removes the key."""
    params = json.loads(json.dumps(REPLAYS[which].example))
    for key, value in change.items():
        *path, last = key.split(".")
        node = params
        for k in path:
            node = node[int(k)] if isinstance(node, list) else node[k]
        last = int(last) if isinstance(node, list) else last
        if value is DROP:
            del node[last]
        else:
            node[last] = value
    return {**_CX, "claim": REPLAYS[which].claim, "kind": which, "params": params}


DROP = object()


def rp(which: str, /, **change: Any) -> Callable[[], Any]:
    """``python -m verify replay`` on REPLAYS[which] with ``change`` (see _cx)."""
    return _cli(["replay", "{d}/cx.json"], {"cx.json": _cx(which, **change)})


def rp_doc(doc: Any) -> Callable[[], Any]:
    """``python -m verify replay`` on a whole document (bytes, text or a JSON value)."""
    return _cli(["replay", "{d}/cx.json"], {"cx.json": doc})


_RUN = ["--quick", "--only", "C2"]
_README_OK = "<!-- verdict table: generated by `python -m verify snapshot --write`; do not edit -->\n<!-- end of verdict table -->"


HUGE_INT = 10**400    # "V_1": 1 followed by 400 zeros, as a JSON integer
_DEMO_KEY = sweep_demo_grid(2, 0.0)[0].key   # the first task of `sweep demo --tasks 2 --sleep 0`


def _gguf(data: bytes, name: str = "m.gguf") -> Callable[[], Any]:
    return _in_dir({name: data}, lambda d: analyze_checkpoint(d / name))


_GGUF_OK = {"m.gguf": _gguf_model()}

_LONG_NUMERAL = "1" * 5000                 # quoted by its first characters and its length, never whole
_SWEEP = ["sweep", "demo", "--tasks", "2", "--sleep", "0", "--no-progress", "-o", "{d}/o"]
_C7 = ["sweep", "c7", "--quick", "--no-progress", "-o", "{d}/o"]
_LATEX_REPORT = ["latex", "--report", "{d}/r.json", "-o", "{d}/o"]
_EMPTY_REPORT = {"schema": "mha-nw-verify/report", "schema_version": REPORT_SCHEMA_VERSION, "claims": []}   # valid, no claim
_SCHEDULER = "tcp://HOST:PORT"
_BAD_ADDRESSES = {
    "words": "not an address", "ipv6-unclosed": "tcp://[::1", "file-url": "file:///etc/passwd", "empty": "",
    "no-port": "tcp://127.0.0.1", "port-0": "tcp://127.0.0.1:0", "port-65536": "tcp://127.0.0.1:65536",
    "port-full-width": "tcp://127.0.0.1:８７８６", "port-underscore": "tcp://127.0.0.1:8_786",
    "port-sign": "tcp://127.0.0.1:+8786", "tls": "tls://127.0.0.1:8786", "inproc": "inproc://127.0.0.1/1/2",
    "no-host": "tcp://:8786", "user-info": "tcp://user@127.0.0.1:8786", "path": "tcp://127.0.0.1:8786/x",
    "query": "tcp://127.0.0.1:8786?x=1", "space": "tcp://127.0.0.1 :8786", "ipv4-out-of-range": "tcp://999.1.1.1:8786",
    "ipv6-bad": "tcp://[::g]:8786", "label-too-long": "tcp://" + "a" * 64 + ".example:8786",
}
#: Every numeric flag: (row id, argv before the numeral, argv after it, files, the argument the refusal
#: names, what it expects). Each value of _BAD_NUMERALS would be in the flag's range if read loosely.
_NUMERAL_FLAGS = [
    ("cli-run-seed", [*_RUN, "--out", "{d}/o", "--seed"], [], {}, "python -m verify",
     "argument --seed: expected a non-negative integer"),
    ("cli-run-jobs", [*_RUN, "--out", "{d}/o", "--jobs"], [], {}, "python -m verify",
     "argument --jobs: expected an integer in 1..64"),
    ("cli-sweep-tasks", ["sweep", "demo", "--tasks"], ["-o", "{d}/o"], {}, "--tasks", "an integer in 1..10,000"),
    ("cli-sweep-sleep", ["sweep", "demo", "--tasks", "1", "--sleep"], ["-o", "{d}/o"], {}, "--sleep", "seconds"),
    ("cli-sweep-jobs", [*_SWEEP, "--jobs"], [], {}, "--jobs", "an integer in 1..64"),
    ("cli-sweep-old-workers", [*_SWEEP, "--workers"], [], {}, "--workers", "an integer in 1..64"),
    ("cli-sweep-c7-seed", [*_C7, "--seed"], [], {}, "--seed", "a non-negative integer"),
    ("cli-alloc-budget", ["allocate", "--budget"], _ALLOC[3:], {}, "D (--budget)", "a positive integer"),
    ("cli-alloc-n", _ALLOC[:4], _ALLOC[5:], {}, "n (--n)", "a number"),
    ("cli-alloc-dim", _ALLOC[:6], [], {}, "d (--dim)", "a positive integer"),
    ("cli-alloc-cb", [*_ALLOC, "--c-b"], [], {}, "c_b (--c-b)", "a number"),
    ("cli-alloc-cv", [*_ALLOC, "--c-v"], [], {}, "c_v (--c-v)", "a number"),
    ("cli-latex-seed", [*_LATEX_REPORT, "--seed"], [], {"r.json": _EMPTY_REPORT}, "python -m verify latex",
     "argument --seed: expected a non-negative integer"),
]
#: Numerals Python's int and float read but the grammar refuses, and how a refusal quotes them.
_BAD_NUMERALS = {"full-width-digit": ("５", "'５'"), "underscore": ("1_0", "'1_0'"),
                 "5000-digits": (_LONG_NUMERAL, "(5,002 characters)")}

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
    pytest.param(lambda: hdi(1e300 * _W, "literal"), ("W_K", "beyond float64"), id="hdi-literal-1e300"),
    # --- nw: the argument that overflows is blamed, values required
    pytest.param(lambda: nw_estimate(Q, K, None), ("values", "None", "real numeric array"), id="nw-estimate-values-none"),
    pytest.param(lambda: nw_weights(Q32, K32, scale=1e39), ("scale", "1e+39", "finite in float32"),
                 id="nw-scale-overflows-float32"),
    pytest.param(lambda: nw_estimate(Q32, K32, np.ones((4, 1), np.float32), scale=1e39), ("scale", "1e+39"),
                 id="nw-estimate-scale-overflows-float32"),
    pytest.param(lambda: nw_weights(Q32, K32, kernel="gaussian", bandwidth=1e-20), ("bandwidth", "1e-20", "float32"),
                 id="nw-bandwidth-overflows-float32"),
    # --- from_torch: modules without data or with complex weights
    pytest.param(lambda: from_torch(torch.nn.MultiheadAttention(4, 2, device="meta")),
                 ("module", "'in_proj_weight' on the meta device"), id="torch-meta-device"),
    pytest.param(lambda: from_torch(torch.nn.MultiheadAttention(4, 2, kdim=3, vdim=5, device="meta")),
                 ("module", "'q_proj_weight' on the meta device"), id="torch-meta-device-kdim"),
    pytest.param(lambda: from_torch(torch.nn.MultiheadAttention(4, 2, dtype=torch.complex64)),
                 ("module", "complex64", "real floating-point"), id="torch-complex"),
    # --- safetensors files: refused by the library, or before it opens them
    pytest.param(_in_dir({}, lambda d: SafetensorsFile(d / "none.safetensors")),
                 "safetensors file: expected an existing readable file, got '", id="st-missing-file"),
    pytest.param(lambda: SafetensorsFile(123), ("safetensors file", "123", "a path"), id="st-path-int"),
    pytest.param(lambda: SafetensorsFile("x\0.safetensors"), ("safetensors file", "NUL"), id="st-path-nul"),
    pytest.param(_file(_raw([1, 2])), _LIB + "invalid JSON in header: invalid type: sequence", id="st-header-list"),
    pytest.param(_file(_raw({"__metadata__": [1]})), _LIB + "invalid JSON in header", id="st-metadata-list"),
    pytest.param(_file(_raw({"t": {"dtype": "F32", "shape": [2]}}, b"\0" * 8)),
                 _LIB + "invalid JSON in header: missing field `data_offsets`", id="st-entry-keys"),
    pytest.param(_file(_raw({"t": {"dtype": "F32", "shape": [-2], "data_offsets": [0, 8]}}, b"\0" * 8)),
                 _LIB + "invalid JSON in header: invalid value: integer `-2`", id="st-negative-shape"),
    pytest.param(_file(_raw({"t": {"dtype": "F32", "shape": [2], "data_offsets": [8, 0]}}, b"\0" * 8)),
                 _LIB + "invalid offset for tensor `t`", id="st-offsets-reversed"),
    pytest.param(_in_dir({"x.safetensors": _raw({"t": {"dtype": "F8_E4M3", "shape": [1], "data_offsets": [0, 1]}}, b"\0")},
                         lambda d: SafetensorsFile(d / "x.safetensors").get("t")),
                 "x.safetensors: tensor 't': expected a dtype numpy can hold, got dtype F8_E4M3", id="st-f8-get"),
    pytest.param(_in_dir({"x.safetensors": _raw({"t": _F32}, b"\0" * 8)}, lambda d: SafetensorsFile(d / "x.safetensors").get("u")),
                 "expected a tensor 'u', got no tensor named 'u' among 1", id="st-unknown-name"),
    # --- checkpoint layout and config ---
    pytest.param(lambda: open_checkpoint(None), ("path (PATH)", "None"), id="ckpt-path-none"),
    pytest.param(lambda: analyze_checkpoint("x\0y"), ("path (PATH)", "NUL"), id="ckpt-path-nul"),
    pytest.param(_in_dir({}, lambda d: open_checkpoint(d / "nope")), ("PATH", "nope'", "an existing .safetensors file"),
                 id="ckpt-missing-path"),
    pytest.param(_in_dir({"config.json": _CFG}, open_checkpoint), ("PATH", "without *.safetensors files"),
                 id="ckpt-dir-without-weights"),
    pytest.param(_in_dir({"model.safetensors": _bert(), "config.json": "{oops"}, open_checkpoint),
                 ("config.json", "expected strict JSON, got Expecting property name"), id="ckpt-config-not-json"),
    pytest.param(_in_dir({"model.safetensors": _bert(), "config.json": '{"hidden_size": NaN}'}, open_checkpoint),
                 ("config.json", "the non-standard literal NaN"), id="ckpt-config-nan"),
    pytest.param(_in_dir({"model.safetensors": _bert(), "config.json": [1]}, open_checkpoint),
                 "config.json: expected a JSON object, got JSON list", id="ckpt-config-list"),
    pytest.param(_in_dir({"model.safetensors": _bert(), "config.json": {"hidden_size": 4}}, open_checkpoint),
                 "expected one of them (a positive integer), got none of the keys num_attention_heads, n_head", id="ckpt-config-no-heads"),
    pytest.param(_in_dir({"model.safetensors": _bert(), "config.json": _CFG | {"num_attention_heads": "2"}}, open_checkpoint),
                 "key 'num_attention_heads': expected an integer >= 1, got '2'", id="ckpt-config-heads-string"),
    pytest.param(_in_dir({"model.safetensors": _bert(), "config.json": _CFG | {"num_hidden_layers": 0}}, open_checkpoint),
                 "key 'num_hidden_layers': expected an integer >= 1, got 0", id="ckpt-config-layers-zero"),
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
    # --- python -m verify hdi
    pytest.param(_cli(["hdi", "{d}/x.safetensors"], {"x.safetensors": FIFO}), ("PATH", "not a regular file (FIFO"),
                 id="cli-hdi-fifo"),
    pytest.param(_cli(["hdi", "{d}"], {"model.safetensors": _raw({"a": _F32, "b": {**_F32, "data_offsets": [4, 12]}},
                                                                 b"\0" * 12), "config.json": _CFG}),
                 "model.safetensors: expected a valid .safetensors file, got a file the safetensors library rejects "
                 "(Error while deserializing header: invalid offset for tensor `b`)", id="cli-hdi-overlapping-ranges"),
    pytest.param(_cli(["hdi", "{d}"], {"model.safetensors": _raw(_DEEP), "config.json": _CFG}),
                 "recursion limit exceeded", id="cli-hdi-header-nested-deep"),
    pytest.param(_cli(["hdi", "{d}"], {"model.safetensors": _raw({"t": _F32}, b"\0" * 5), "config.json": _CFG}),
                 "model.safetensors: expected a valid .safetensors file", id="cli-hdi-truncated"),
    pytest.param(_cli(["hdi", "{d}", "--json", "{d}/config.json/x.json"], _CKPT),
                 ("--json FILE", "config.json/x.json'", "a writable file path"), id="cli-hdi-json-under-a-file"),
    pytest.param(_cli(["hdi", "{d}", "--plots", "{d}/config.json"], _CKPT),
                 ("--out DIR", "config.json', a file"), id="cli-hdi-plots-is-a-file"),
    pytest.param(_cli(["hdi", "{d}", "--json"], _CKPT), ("python -m verify hdi", "argument --json: expected one argument"),
                 id="cli-hdi-json-without-value"),
    pytest.param(_cli(["hdi", "{d}", "--frobnicate"], _CKPT), ("python -m verify hdi", "unrecognized arguments: --frobnicate"),
                 id="cli-hdi-unknown-option"),
    # --- allocate (API)
    pytest.param(mse(d_k=0), ("d_k", "0", "> 0 and <= 64"), id="alloc-mse-dk-zero"),
    pytest.param(mse(d_k=float("nan")), ("d_k", "nan"), id="alloc-mse-dk-nan"),
    pytest.param(mse(d_k=65), ("d_k", "65", "<= 64"), id="alloc-mse-dk-above-D"),
    pytest.param(mse(d_k=True), ("d_k", "True"), id="alloc-mse-dk-bool"),
    pytest.param(mse(n=1), ("n (--n)", "1", "> 1"), id="alloc-mse-n-one"),
    pytest.param(mse(model="c_corr"), ("model (--model)", "'c_corr'"), id="alloc-mse-model-unknown"),
    pytest.param(mse(D=0), ("D (--budget)", "0"), id="alloc-mse-D-zero"),
    pytest.param(alloc(D=0), ("D (--budget)", "0"), id="alloc-D-zero"),
    pytest.param(alloc(D=12.5), ("D (--budget)", "12.5"), id="alloc-D-fraction"),
    pytest.param(alloc(D="768"), ("D (--budget)", "'768'"), id="alloc-D-string"),
    pytest.param(alloc(D=True), ("D (--budget)", "True"), id="alloc-D-bool"),
    pytest.param(alloc(D=10**18), ("D (--budget)", "1000000000000000000", "at most 16,777,216", "MAX_BUDGET"),
                 id="alloc-D-beyond-cap"),
    pytest.param(alloc(n=1), ("n (--n)", "1", "> 1"), id="alloc-n-one"),
    pytest.param(alloc(n=0.5), ("n (--n)", "0.5", "> 1"), id="alloc-n-half"),
    pytest.param(alloc(n=float("nan")), ("n (--n)", "nan"), id="alloc-n-nan"),
    pytest.param(alloc(n=float("inf")), ("n (--n)", "inf"), id="alloc-n-inf"),
    pytest.param(alloc(d=0), ("d (--dim)", "0"), id="alloc-d-zero"),
    pytest.param(alloc(d=2.5), ("d (--dim)", "2.5"), id="alloc-d-fraction"),
    pytest.param(alloc(d=10**13), ("d (--dim)", "10000000000000", "MAX_DIM"), id="alloc-d-beyond-cap"),
    pytest.param(alloc(model="c_corr"), ("model (--model)", "'c_corr'"), id="alloc-model-unknown"),
    pytest.param(alloc(model=3), ("model (--model)", "3"), id="alloc-model-int"),
    pytest.param(alloc(c_b=0.0), ("c_b (--c-b)", "0.0"), id="alloc-cb-zero"),
    pytest.param(alloc(c_v=-1.0), ("c_v (--c-v)", "-1.0"), id="alloc-cv-negative"),
    pytest.param(alloc(c_v=float("inf")), ("c_v (--c-v)", "inf"), id="alloc-cv-inf"),
    pytest.param(lambda: al.divisor_pairs(0), ("D (--budget)", "0"), id="alloc-divisors-zero"),
    pytest.param(lambda: al.continuous_optimum("b_corr", 1, 64, 8), ("n (--n)", "1"), id="alloc-optimum-n-one"),
    pytest.param(lambda: al.continuous_optimum("a_corr", 1e6, 64, 0), ("d (--dim)", "0"), id="alloc-optimum-d-zero"),
    pytest.param(lambda: al.best_pair("a_corr", 1e6, True, 8), ("D (--budget)", "True"), id="alloc-best-pair-D-bool"),
    # --- python -m verify allocate
    pytest.param(_cli([*_ALLOC[:4], "1"] + _ALLOC[5:]), ("n (--n)", "1.0", "> 1"), id="cli-alloc-n-1"),
    pytest.param(_cli([*_ALLOC[:4], "1e400"] + _ALLOC[5:]), ("n (--n)", "inf"), id="cli-alloc-n-overflows"),
    pytest.param(_cli(["allocate", "--budget", "1e18"] + _ALLOC[3:]), ("D (--budget)", "1000000000000000000", "MAX_BUDGET"),
                 id="cli-alloc-budget-1e18"),
    pytest.param(_cli(["allocate", "--budget", "12.5"] + _ALLOC[3:]), ("D (--budget)", "'12.5'"), id="cli-alloc-budget-fraction"),
    pytest.param(_cli(["allocate", "--budget", "96", "--dim", "8"]), ("python -m verify allocate", "required: --n"), id="cli-alloc-missing-n"),
    pytest.param(_cli([*_ALLOC, "--seed", "1"]), ("python -m verify allocate", "unrecognized arguments: --seed 1"),
                 id="cli-alloc-unknown-option"),
    # --- python -m verify latex --report FILE
    pytest.param(_cli(["latex", "--report", "{d}/none.json"]), ("--report FILE", "none.json'", "an existing readable file"),
                 id="cli-latex-report-missing"),
    pytest.param(_cli(["latex", "--report", "{d}/r.json"], {"r.json": FIFO}), ("--report FILE", "not a regular file (FIFO"),
                 id="cli-latex-report-fifo"),
    pytest.param(_report("not json"), ("--report FILE", "expected strict JSON"), id="cli-latex-report-not-json"),
    pytest.param(_report('{"claims": [], "meta": {"seed": NaN}}'), ("--report FILE", "NaN"), id="cli-latex-report-nan"),
    pytest.param(_report([]), ("--report FILE", "a list [] in", "an object"), id="cli-latex-report-list"),
    pytest.param(_report({"claims": []}, schema=False), ("--report FILE", "schema 'mha-nw-verify/report'", "None"),
                 id="cli-latex-report-no-schema"),
    pytest.param(_report({"schema": "mha-nw-verify/report", "schema_version": 1, "claims": []}, schema=False),
                 ("--report FILE", f"schema_version {REPORT_SCHEMA_VERSION}", "got 1"), id="cli-latex-report-old-schema"),
    # every field of REPORT_SHAPE missing (where required) or of another type
    *(pytest.param(_report(doc), (f"--report FILE field {field}", word), id=f"cli-latex-report-{label}")
      for field, doc, word, label in _REPORT_ROWS),
    pytest.param(_cli(["latex", "--report", "{d}/r.json", "--quick"], {"r.json": {"claims": []}}),
                 ("--report FILE", "together with --quick/--large/--seed"), id="cli-latex-report-with-quick"),
    pytest.param(_cli(["latex", "-o", "{d}/f", "--report", "{d}/r.json"], {"f": "x", "r.json": {"claims": []}}),
                 ("-o DIR", "f', which exists and is not a folder"), id="cli-latex-out-is-a-file"),
    # --- engine.decompose / noise_simulation_check / decompose_mp
    pytest.param(eng(dgp=DGP("huge", 4, 0.5, lambda x: np.full(x.shape[:-1], 1e200), _DGP.sample_x)),
                 ("dgp (f and sigma of 'huge')", "overflow to non-finite", "max |f(x_eval)| = 1e+200"),
                 id="eng-f-overflows"),
    pytest.param(eng(dgp=dataclasses.replace(_DGP, sigma=1e200)), ("dgp.sigma", "1e+200", "square fits in float64"),
                 id="eng-sigma-square-overflows"),
    pytest.param(eng(R=HUGE), ("R, m", f"R = {HUGE}", "GiB", "fit in this machine's"), id="eng-R-beyond-memory"),
    pytest.param(eng(m=HUGE), ("R, m", f"m = {HUGE}", "GiB"), id="eng-m-beyond-memory"),
    pytest.param(eng(n=HUGE), ("n", str(HUGE), "GiB for one replicate"), id="eng-n-beyond-memory"),
    pytest.param(eng(seed=-1), ("seed", "-1", "non-negative integer"), id="eng-seed-negative"),
    pytest.param(eng(W_Q=np.ones((2, 5, 2))), ("W_Q", "(2, 5, 2)", "d = 4"), id="eng-WQ-dimension"),
    pytest.param(eng(W_K=np.ones((2, 4, 3))), ("W_K", "(2, 4, 3)"), id="eng-WK-shape"),
    pytest.param(eng(alpha=[1.0, 2.0, 3.0]), ("alpha", "(3,)", "(2,)"), id="eng-alpha-shape"),
    pytest.param(eng(alpha=[1.0, float("nan")]), ("alpha", "NaN/inf"), id="eng-alpha-nan"),
    pytest.param(eng(n=0), ("n", "0"), id="eng-n-zero"),
    pytest.param(eng(R=0), ("R", "0"), id="eng-R-zero"),
    pytest.param(eng(m=0), ("m", "0"), id="eng-m-zero"),
    pytest.param(eng(method="bootstrap"), ("method", "'bootstrap'"), id="eng-method-unknown"),
    pytest.param(eng(kernel="epanechnikov"), ("kernel", "'epanechnikov'"), id="eng-kernel-unknown"),
    pytest.param(eng(scale=0.0), ("scale", "0.0"), id="eng-scale-zero"),
    pytest.param(eng(bandwidth=-1.0), ("bandwidth", "-1.0"), id="eng-bandwidth-negative"),
    pytest.param(eng(bandwidth=1.0), ("bandwidth", "1.0", "softmax"), id="eng-bandwidth-for-softmax"),
    pytest.param(eng(kernel="gaussian"), ("bandwidth, scale", "None"), id="eng-gaussian-without-bandwidth"),
    pytest.param(eng(max_memory=0), ("max_memory", "0"), id="eng-max-memory-zero"),
    pytest.param(eng(x_eval=np.full((3, 4), np.nan), m=None), ("x_eval", "NaN/inf"), id="eng-xeval-nan"),
    pytest.param(eng(x_eval=np.ones((3, 5)), m=None), ("x_eval", "(3, 5)"), id="eng-xeval-dimension"),
    pytest.param(eng(x_eval=np.ones((3, 4)), m=4), ("m", "4", "len(x_eval) = 3"), id="eng-m-vs-xeval"),
    pytest.param(eng(dgp="bump"), ("dgp", "str"), id="eng-dgp-not-a-dgp"),
    pytest.param(noise(N=1), ("N", "1", ">= 2"), id="noise-N-one"),
    pytest.param(noise(N=HUGE), ("N, n", f"N = {HUGE}", "GiB"), id="noise-N-beyond-memory"),
    pytest.param(noise(n=None), ("n", "None"), id="noise-n-missing"),
    pytest.param(noise(seed=-1), ("seed", "-1"), id="noise-seed-negative"),
    pytest.param(noise(design=np.ones((5, 4)), n=8), ("n", "8", "len(design) = 5"), id="noise-n-vs-design"),
    pytest.param(lambda: decompose_mp(_DGP, _HEADS, m=2, n=4, R=2, seed=0, dps=5), ("dps", "5", ">= 16"),
                 id="mp-dps-too-small"),
    # --- dgp.make_dgp / head_projections
    pytest.param(dgp(design=["normal"]), ("design", "['normal']", "'normal', 'uniform'"), id="dgp-design-list"),
    pytest.param(dgp(design="cauchy"), ("design", "'cauchy'"), id="dgp-design-unknown"),
    pytest.param(dgp(["bump"]), ("name", "['bump']"), id="dgp-name-list"),
    pytest.param(dgp(d=0), ("d", "0"), id="dgp-d-zero"),
    pytest.param(dgp(sigma=0.0), ("sigma", "0.0"), id="dgp-sigma-zero"),
    pytest.param(dgp(freq=2.0), ("bump parameter 'freq'", "2.0", "one of ('width',)"), id="dgp-param-unknown"),
    pytest.param(dgp("single-index", freq=-1.0), ("single-index parameter 'freq'", "-1.0"), id="dgp-param-negative"),
    pytest.param(dgp("linear", width=1.0), ("linear parameter 'width'", "1.0", "no extra parameters"),
                 id="dgp-param-for-none"),
    pytest.param(hp("random", 2, 8, 2, rng=-1), ("rng", "-1", "non-negative integer"), id="heads-rng-negative"),
    pytest.param(hp("random", 2, 8, 2, rng=1.5), ("rng", "1.5"), id="heads-rng-fraction"),
    pytest.param(hp("random", 2, 8, 2, rng="0"), ("rng", "'0'"), id="heads-rng-string"),
    pytest.param(hp("random", 2, 8, 2, rng=True), ("rng", "True"), id="heads-rng-bool"),
    pytest.param(hp("random", 2, 8, 2), ("rng", "None", "is random"), id="heads-rng-missing"),
    pytest.param(hp("spread", 2, 8, 2, rng=0), ("kind", "'spread'"), id="heads-kind-unknown"),
    pytest.param(hp(["random"], 2, 8, 2, rng=0), ("kind", "['random']"), id="heads-kind-list"),
    pytest.param(hp("orthogonal", 3, 5, 2, rng=0), ("H, d_k", "H*d_k = 3*2 = 6 > d = 5"), id="heads-orthogonal-too-many"),
    pytest.param(hp("coordinate", 3, 5, 2), ("H, d_k", "6 > d = 5"), id="heads-coordinate-too-many"),
    pytest.param(hp("overlap", 2, 5, 2, rng=0, rho=0.5), ("H, d_k", "(H+1)*d_k = 6 > d = 5"), id="heads-overlap-too-many"),
    pytest.param(hp("overlap", 2, 8, 2, rng=0), ("rho", "None", "[0, 1]"), id="heads-rho-missing"),
    pytest.param(hp("aligned", 2, 8, 2, rho=1.5), ("rho", "1.5"), id="heads-rho-above-one"),
    pytest.param(hp("identical", 2, 8, 2, rng=0, rho=0.5), ("rho", "0.5", "None"), id="heads-rho-for-identical"),
    pytest.param(hp("random", 2, 2, 3, rng=0), ("d_k", "3", "d_k <= d = 2"), id="heads-dk-above-d"),
    pytest.param(hp("random", 0, 4, 2, rng=0), ("H", "0"), id="heads-H-zero"),
    pytest.param(hp("random", 10**5, 10**6, 10, rng=0), ("H, d, d_k", "H = 100000, d = 1000000", "GiB"),
                 id="heads-beyond-memory"),
    # --- python -m verify (the main run): bad arguments stop it before any claim runs
    pytest.param(_cli([*_RUN, "--out", "{d}/f"], {"f": "mine"}), ("--out", "f', which is a file"), id="cli-run-out-is-a-file"),
    pytest.param(_cli([*_RUN, "--out", "{d}/f/report"], {"f": "mine"}), ("--out", "a writable place", "f/report'"),
                 id="cli-run-out-under-a-file"),
    pytest.param(_cli([*_RUN, "--out", "/proc/verify-nowhere/report"]), ("--out", "a writable place", "/proc/verify-nowhere"),
                 id="cli-run-out-unwritable"),
    pytest.param(_cli([*_RUN, "--out", "{d}/mine"], {"mine/notes.txt": "mine"}),
                 ("--out", "a new folder or one this package wrote (with mha-nw-verify-run.json)",
                  "a non-empty folder without it"),
                 id="cli-run-out-foreign-folder"),
    pytest.param(_cli([*_RUN, "--out", "{d}/o", "--seed", "-1"]), "argument --seed: expected a non-negative integer below "
                 "2**63, got '-1'", id="cli-run-seed-negative"),
    pytest.param(_cli(["--quick", "--only", "C99"]), f"argument --only: expected claims among {', '.join(CLAIM_IDS)}, "
                 "got 'C99'", id="cli-run-only-unknown-claim"),
    pytest.param(_cli(["--quick", "--only", ","]), "argument --only: expected claims among", id="cli-run-only-empty"),
    pytest.param(_cli(["--quick", "--only", "C1,,C2x"]), "argument --only: expected claims among", id="cli-run-only-one-bad"),
    pytest.param(_cli([*_RUN, "--out"]), "argument --out: expected one argument", id="cli-run-out-without-value"),
    pytest.param(_cli([*_RUN, "--frobnicate"]), "unrecognized arguments: --frobnicate", id="cli-run-unknown-option"),
    # --- python -m verify proofs / snapshot / bench
    pytest.param(_cli(["proofs", "C99"]), f"argument CLAIM: expected a claim among {', '.join(CLAIM_IDS)}, got 'C99'",
                 id="cli-proofs-unknown-claim"),
    pytest.param(_cli(["proofs", "--frobnicate"]), "unrecognized arguments: --frobnicate", id="cli-proofs-unknown-option"),
    pytest.param(_cli(["snapshot"], chdir=True), ("snapshot", "'tests/snapshots' (run from the repository's root)"),
                 id="cli-snapshot-outside-a-checkout"),
    pytest.param(_cli(["snapshot"], {"tests/snapshots/x": "", "README.md": "x"}, chdir=True),
                 ("snapshot", "verdicts.json' (No such file"), id="cli-snapshot-without-snapshot-file"),
    pytest.param(_cli(["snapshot", "--report", "{d}/none.json"], {"tests/snapshots/verdicts.json": {},
                                                                  "README.md": _README_OK},
                      chdir=True), ("--report", "none.json'", "an existing readable file"), id="cli-snapshot-report-missing"),
    pytest.param(_cli(["snapshot", "--frobnicate"]), "unrecognized arguments: --frobnicate", id="cli-snapshot-unknown-option"),
    pytest.param(_cli(["snapshot"], {"tests/snapshots/verdicts.json": [1, 2], "README.md": "x"}, chdir=True),
                 ("snapshot", "written by `python -m verify snapshot --write`"), id="cli-snapshot-malformed-list"),
    pytest.param(_cli(["snapshot"], {"tests/snapshots/verdicts.json": {"format": "mha-nw-verify/verdict-snapshot",
                                                                      "claims": {"C1": {"verdict": 3}}},
                                     "README.md": "x"}, chdir=True),
                 ("snapshot", "of another shape"), id="cli-snapshot-malformed-claim"),
    # --- python -m verify replay FILE: the file
    pytest.param(_cli(["replay"]), "the following arguments are required: FILE", id="cli-replay-no-file"),
    pytest.param(_cli(["replay", "{d}/a.json", "{d}/b.json"]), "unrecognized arguments:", id="cli-replay-two-files"),
    pytest.param(_cli(["replay", "--json=yes", "{d}/a.json"]), "argument --json: ignored explicit argument 'yes'",
                 id="cli-replay-json-with-a-value"),
    pytest.param(_cli(["replay", "{d}/none.json"]), ("FILE", "none.json'", "an existing readable file"),
                 id="cli-replay-missing-file"),
    pytest.param(rp_doc(FIFO), ("FILE", "cx.json', which is not a regular file (FIFO"), id="cli-replay-fifo"),
    pytest.param(rp_doc(FOLDER), ("FILE", "cx.json', which is a folder"), id="cli-replay-folder"),
    pytest.param(_cli(["replay", "/dev/null"]), ("FILE", "'/dev/null'", "not a regular file"), id="cli-replay-device"),
    pytest.param(rp_doc(b" " * (4 * 2**20 + 1)), ("FILE", "at most 4194304 bytes", "4194305 bytes"), id="cli-replay-too-large"),
    pytest.param(rp_doc(b"\xff\xfe{}"), ("FILE", "UTF-8 JSON", "undecodable bytes"), id="cli-replay-not-utf8"),
    pytest.param(rp_doc("not json"), ("FILE", "expected strict JSON, got Expecting value"), id="cli-replay-not-json"),
    pytest.param(rp_doc(_DEEP), ("FILE", "nested at most 64 levels deep"), id="cli-replay-nested-100000-deep"),
    pytest.param(rp_doc(json.dumps(_cx("c8.mild-heterogeneity")).replace('"V_1": 1.0', '"V_1": NaN')),
                 ("FILE", "the non-standard literal NaN"), id="cli-replay-c8-V1-nan-literal"),
    pytest.param(rp_doc([1, 2]), ("FILE", "format 'mha-nw-verify/counterexample'", "'list'"), id="cli-replay-list"),
    pytest.param(rp_doc({**_cx("c2.free-weights"), "format": "x"}), ("FILE", "format 'mha-nw-verify/counterexample'", "'x'"),
                 id="cli-replay-wrong-format"),
    pytest.param(rp_doc({**_cx("c2.free-weights"), "version": 2}), ("FILE", "format version 1 (an integer), got 2"),
                 id="cli-replay-wrong-version"),
    pytest.param(rp_doc({"format": _CX["format"], "version": 1}), ("FILE", "expected keys claim, part, kind", "lacks"),
                 id="cli-replay-missing-keys"),
    pytest.param(rp_doc({**_cx("c2.free-weights"), "claim": "C99"}), ("FILE", "'claim' among C1", "got 'C99'"),
                 id="cli-replay-claim-unknown"),
    pytest.param(rp_doc({**_cx("c2.free-weights"), "claim": 2}), ("FILE", "'claim' among C1", "got 2"),
                 id="cli-replay-claim-number"),
    pytest.param(rp_doc({**_cx("c2.free-weights"), "kind": ["c2.free-weights"]}),
                 ("FILE", "'kind' to be a non-empty string", "['c2.free-weights']"), id="cli-replay-kind-list"),
    pytest.param(rp_doc({**_cx("c2.free-weights"), "kind": "c2.nope"}), ("FILE", "a counterexample kind of C2",
                                                                          "(c2.free-weights)", "'c2.nope'"),
                 id="cli-replay-kind-unknown"),
    pytest.param(rp_doc({**_cx("c2.free-weights"), "kind": "c1.stated-bandwidth"}),
                 ("FILE", "a counterexample kind of C2", "got 'c1.stated-bandwidth'"), id="cli-replay-kind-of-another-claim"),
    pytest.param(rp_doc({**_cx("c2.free-weights"), "expected": "violates"}),
                 ("FILE", "'expected' to be an object with a boolean 'violates'", "'violates'"), id="cli-replay-expected-string"),
    pytest.param(rp_doc({**_cx("c2.free-weights"), "expected": {"violates": 1}}),
                 ("FILE", "a boolean 'violates'"), id="cli-replay-expected-violates-number"),
    pytest.param(rp_doc({**_cx("c2.free-weights"), "params": [1]}), ("FILE", "'params' to be an object, got list"),
                 id="cli-replay-params-list"),
    # --- replay C1: what its schema does not imply (cross-field shapes, the key norms a part needs, the work cap)
    pytest.param(rp("c1.stated-bandwidth", keys=[[1.0, 0, 0, 0], [1.0]]), ("params.keys", "numpy cannot read"),
                 id="cli-replay-c1-keys-ragged"),
    pytest.param(rp("c1.stated-bandwidth", queries=[[1.0, 0.0, 0.0]]), ("params", "queries (1, 3)", "queries (m, 4)"),
                 id="cli-replay-c1-dk-mismatch"),
    pytest.param(rp("c1.stated-bandwidth", d_k=1, queries=[[0.5]] * 3000, keys=[[1.0]] * 3000, values=[[1.0]] * 3000),
                 ("params", f"at most {c1.MAX_REPLAY_TERMS:,}", "MAX_REPLAY_TERMS", "work 27,000,000"),
                 id="cli-replay-c1-3000x3000-points"),
    pytest.param(rp("c1.stated-bandwidth", keys=[[1.0, 0, 0, 0], [2.0, 0, 0, 0]]), ("params.keys", "keys of one common norm"),
                 id="cli-replay-c1-unequal-norms-for-stated"),
    pytest.param(rp("c1.unequal-norms", keys=[[1.0, 0, 0, 0], [-1.0, 0, 0, 0]]), ("params.keys", "keys of unequal norms"),
                 id="cli-replay-c1-equal-norms-for-unequal"),
    pytest.param(rp("c1.unequal-norms", queries=[[0.1, 0, 0, 0]] * 400, keys=[[0.0] * 4] * 10 + [[1.0, 0, 0, 0]] * 10,
                    values=[[1.0]] * 20), ("params", "work 48,000"), id="cli-replay-c1-unequal-too-large"),
    # --- replay C2
    pytest.param(rp("c2.free-weights", W_V=[[1e200, 1.0], [1.0, 1.0]], W_O=[[1e200, 1.0], [1.0, 1.0]]),
                 ("params.W_V, W_O", "1e+200", "overflow float64", "finite"), id="cli-replay-c2-products-overflow"),
    # --- replay C4: inside a case (the schema's rows stop at the list of cases), shapes, overflow, rank, work
    pytest.param(rp("c4.literal-formula", **{"cases.0.W_K": DROP}), ("params.cases[0]", "without 'W_K'"),
                 id="cli-replay-c4-case-without-WK"),
    pytest.param(rp("c4.literal-formula", **{"cases.0.W_K": [[1.0, 0.0], [0.0, 1.0]]}), ("params.cases[0].W_K[0][0]",
                 "a list of 1 to", "got 1.0"), id="cli-replay-c4-WK-2d"),
    pytest.param(rp("c4.literal-formula", **{"cases.0.W_K": [[[1.0], [0.0]]]}), ("params.cases[0].W_K", "a list of 2 to"),
                 id="cli-replay-c4-one-head"),
    pytest.param(rp("c4.literal-formula", **{"cases.0.W_K": [[[1.0], [0.0]], [[1.0]]]}),
                 ("params.cases[0].W_K", "numpy cannot read"), id="cli-replay-c4-heads-of-two-shapes"),
    pytest.param(rp("c4.literal-formula", **{"cases.0.W_K": [[[1.0, 0.0]], [[0.0, 1.0]]]}),
                 ("params.cases[0].W_K", "(2, 1, 2)", "1 <= d_k <= d"), id="cli-replay-c4-dk-above-d"),
    pytest.param(rp("c4.literal-formula", **{"cases.0.W_K": [[[1.0], [1.0]], [[2.0], [2.0]]], "cases.0.label": 7}),
                 ("params.cases[0].label", "7", "a string"), id="cli-replay-c4-label-number"),
    pytest.param(rp("c4.literal-formula", **{"cases.0.W_K": [[[1e100], [0.0]], [[1e100], [1.0]]]}),
                 ("params.cases[0].W_K", "literal HDI", "fits in float64"), id="cli-replay-c4-literal-overflows"),
    pytest.param(rp("c4.literal-formula", **{"cases.0.W_K": [[[1.0, 2.0], [2.0, 4.0]], [[1.0, 0.0], [0.0, 1.0]]]}),
                 ("params.cases[0].W_K", "full column rank 2", "rank-deficient"), id="cli-replay-c4-rank-deficient"),
    pytest.param(rp("c4.literal-formula", cases=[{"W_K": [[[1.0]] * 100] * 1000}]),
                 ("params", f"at most {c4.MAX_REPLAY_WORK:,}", "MAX_REPLAY_WORK", "110,000,000"),
                 id="cli-replay-c4-too-much-work"),
    pytest.param(rp("c4.literal-formula", cases=[{"W_K": [[[1.0]] * (c4.MAX_REPLAY_DIM + 1)] * 2}]),
                 ("params.cases[0].W_K[0]", f"to {c4.MAX_REPLAY_DIM} items"), id="cli-replay-c4-too-many-rows"),
    pytest.param(rp("c4.literal-formula", cases=[{"W_K": [[[1.0]]] * (c4.MAX_REPLAY_HEADS + 1)}]),
                 ("params.cases[0].W_K", f"to {c4.MAX_REPLAY_HEADS} items"),
                 id="cli-replay-c4-too-many-heads"),
    # --- replay C5: NW-head engine runs (sizes, seeds, the process), exact rationals
    pytest.param(rp("c5.shared-noise", n=10**6), ("params", "at most 100,000,000", "kernel terms"),
                 id="cli-replay-c5-n-1e6"),
    pytest.param(rp("c5.shared-noise", batches=1000), ("params.R", "1000 passes of R = 2"), id="cli-replay-c5-batches-1000"),
    pytest.param(rp("c5.shared-noise", H=5), ("params.H, d_k", "H*d_k = 5*2 = 10 > d = 8"),
                 id="cli-replay-c5-orthogonal-heads-beyond-d"),
    pytest.param(rp("c5.unequal-variance", V=["1", "1", "1" + "0" * 100]), ("params.V[2]", "at most 40 characters"),
                 id="cli-replay-c5-exact-V-too-many-digits"),
    pytest.param(rp("c5.unequal-variance", V=["1", "1", "-1"]), ("params.V, alpha", "min -1", "every variance > 0"),
                 id="cli-replay-c5-exact-V-negative"),
    pytest.param(rp("c5.unequal-variance", V=["1", "1", "2"]), ("params.V", "a pair product 2", "squares of rationals"),
                 id="cli-replay-c5-exact-V-not-square"),
    pytest.param(rp("c5.unequal-variance", alpha=["1/2", "1/2"]), ("params.V, alpha", "3 variances", "2 weights"),
                 id="cli-replay-c5-exact-alpha-length"),
    pytest.param(rp("c5.unequal-variance", **{"configs.A.W_K": [[[1], [0], [0]], [[0], [1]], [[0], [0], [1]]]}),
                 ("params.configs.A.W_K", "H matrices of one shape"), id="cli-replay-c5-exact-WK-ragged"),
    pytest.param(rp("c5.unequal-variance", **{"configs.A.W_K": [[[1], [0], [0]], [[0], [1], [0]]]}),
                 ("params.configs.A.W_K", "H = 3 matrices"), id="cli-replay-c5-exact-WK-two-heads"),
    pytest.param(rp("c5.unequal-variance", **{"configs.A.W_K": [[[1], [0], [0]], [[0], [0], [0]], [[0], [0], [1]]]}),
                 ("params.configs.W_K", "rank-deficient"), id="cli-replay-c5-exact-WK-zero-head"),
    pytest.param(rp("c5.unequal-variance", V=["1"] * 40, alpha=["1/40"] * 40, H=40, d=50,
                    **{"configs.A.W_K": [[[1]] * 50] * 40, "configs.B.W_K": [[[1]] * 50] * 40}),
                 ("params", "at most 100,000", "120,120"), id="cli-replay-c5-exact-too-large"),
    pytest.param(lambda: c5.CLAIM.replays["one-direction-gaussian"]({"n": 16, "R": 1, "m": 4, "seed": 1}),
                 ("params.R", "1"), id="api-replay-c5-gaussian-R-one"),   # a paired SE needs two replicates
    *(pytest.param(rp("c5.unequal-variance", **{key: value}), (f"params.{key}", f"the data describe {key}"),
                   id=f"cli-replay-c5-exact-{key}-disagrees-with-data") for key, value in (("H", 4), ("d", 2), ("d_k", 2))),
    # --- replay C6
    pytest.param(rp("c6.beyond-d", starts=10**7), ("params", "at most 200,000", "eigendecompositions"),
                 id="cli-replay-c6-starts-1e7"),
    pytest.param(rp("c6.beyond-d", d_k=3), ("params.d_k", "3", "d_k <= d = 2"), id="cli-replay-c6-dk-above-d"),
    # --- replay C7 (the schema's own rows are tests/test_claims.py's): cross-field checks, the nested cases, the cap
    pytest.param(rp("c7.stated-law", n2=100.0), ("params.n2", "100.0", "> n1 = 1000.0"), id="cli-replay-c7-n2-below-n1"),
    pytest.param(rp("c7.stated-law", cases=[{"model": "a_corr", "d": 8, "D": 64}] * 129), ("params.cases", "1 to 128 items"),
                 id="cli-replay-c7-too-many-cases"),
    pytest.param(rp("c7.stated-law", **{"cases.0.model": "c_corr"}), ("params.cases[0].model", "'c_corr'", "'a_corr'"),
                 id="cli-replay-c7-model-unknown"),
    pytest.param(rp("c7.stated-law", **{"cases.0.d": 1.5}), ("params.cases[0].d", "1.5"), id="cli-replay-c7-d-fraction"),
    pytest.param(rp("c7.stated-law", **{"cases.0.D": 2**25}), ("params.cases[0].D", "at most 16,777,216"),
                 id="cli-replay-c7-D-beyond-cap"),
    pytest.param(rp("c7.stated-law", **{"cases.0.c_b": 0}), ("params.cases[0].c_b", "0"), id="cli-replay-c7-cb-zero"),
    pytest.param(rp("c7.stated-law", **{"cases.0.model": "gauss_a_orth", "cases.0.d": 4, "cases.0.D": 4}),
                 ("params.cases[0]", "an interior optimum"), id="cli-replay-c7-no-interior-optimum"),
    pytest.param(rp("c7.slow-growth", n1=1.0000001), ("params.n1", "1.0000001", "e^(1e-6)"), id="cli-replay-c7-slow-n1-near-one"),
    # --- replay C8 (the schema's own rows are tests/test_claims.py's): cross-field checks, bounds, overflow, the caps
    pytest.param(rp("c8.mild-heterogeneity", r=1.0), ("params.r", "1.0", "0 < r < 1"), id="cli-replay-c8-r-one"),
    pytest.param(rp("c8.mild-heterogeneity", r=1.5), ("params.r", "1.5", "0 < r < 1"), id="cli-replay-c8-r-above-one"),
    pytest.param(rp("c8.mild-heterogeneity", V_1=0), ("params.V_1", "0", "> 0"), id="cli-replay-c8-V1-zero"),
    pytest.param(rp("c8.mild-heterogeneity", H_values=[1e8, 2e8]), ("params", "at most 16,384", "900,000,000"),
                 id="cli-replay-c8-H-values-1e8"),
    pytest.param(rp("c8.mild-heterogeneity", H_values=[4096, 4097], schemes=["geom"]), ("params", "at most 16,384", "16,386"),
                 id="cli-replay-c8-H-values-one-above-cap"),
    pytest.param(rp("c8.mild-heterogeneity", H_values=[32.5, 64]), ("params.H_values[0]", "32.5", "an integer >= 1"),
                 id="cli-replay-c8-H-values-fraction"),
    pytest.param(rp("c8.mild-heterogeneity", H_values=[64, 64]), ("params.H_values", ">= 2 distinct"),
                 id="cli-replay-c8-H-values-repeated"),
    pytest.param(rp("c8.mild-heterogeneity", profile="exp"), ("params", "without 'q'"), id="cli-replay-c8-exp-without-q"),
    pytest.param(rp("c8.mild-heterogeneity", profile="exp", q=1e10), ("params.V_1, q", "q = 1e+10", "finite and positive"),
                 id="cli-replay-c8-exp-profile-overflows"),
    pytest.param(rp("c8.mild-heterogeneity", V_1=5e-324), ("params.V_1, beta", "V_1 = 4.94066e-324", "finite and positive"),
                 id="cli-replay-c8-V1-underflows"),
    pytest.param(rp("c8.rates-in-n", r=1.5), ("params.r", "1.5", "0 < r < 1"), id="cli-replay-c8-rates-r-above-one"),
    pytest.param(rp("c8.rates-in-n", gammas=[0.4, 0.6, 0.8, 1.0]), ("params.gammas, c", "γ_1 > γ_2"),
                 id="cli-replay-c8-rates-gammas-increasing"),
    pytest.param(rp("c8.rates-in-n", c=[1.0, 1.0]), ("params.gammas, c", "c [1.0, 1.0]"), id="cli-replay-c8-rates-c-length"),
    pytest.param(rp("c8.rates-in-n", n_values=[1e3, 1e2]), ("params.n_values", "increasing"), id="cli-replay-c8-rates-n-decreasing"),
    pytest.param(rp("c8.rates-in-n", gammas=[1e300, 1.0, 0.5, 0.25]), ("params.gammas, c, n_values", "within e^(±600)"),
                 id="cli-replay-c8-rates-mse-underflows"),
    pytest.param(rp("c8.rates-in-n", c=[1e-300, 1.0, 1.0, 1.0]), ("params.gammas, c, n_values", "e^(±"),
                 id="cli-replay-c8-rates-c-tiny"),
    # --- hdi: the pair matrices of too many heads
    pytest.param(lambda: hdi(np.ones((10**6, 1, 1))), ("W_K", "H = 1000000 heads", "GiB"), id="hdi-heads-beyond-memory"),
    pytest.param(lambda: overlap(np.ones((10**6, 1, 1))), ("W_K", "H = 1000000 heads", "GiB"), id="overlap-heads-beyond-memory"),
    # --- hostile inputs: huge integers, unchecked replay fields, caps, odd targets
    # 1. integers range-checked before any float conversion; bounded quotes of what was received
    pytest.param(rp("c8.mild-heterogeneity", V_1=HUGE_INT), ("params.V_1", "(401 characters)", "finite real number"),
                 id="cli-replay-c8-V1-400-digits"),
    pytest.param(rp("c5.shared-noise", d_k=HUGE_INT), ("params.d_k", "(401 characters)"), id="cli-replay-c5-dk-400-digits"),
    pytest.param(dgp(sigma=HUGE_INT), ("sigma", "(401 characters)"), id="dgp-sigma-400-digits"),
    pytest.param(dgp(width=HUGE_INT), ("bump parameter 'width'", "(401 characters)"), id="dgp-width-400-digits"),
    pytest.param(dgp(d=HUGE_INT), ("d", "(401 characters)", "MAX_INTEGER"), id="dgp-d-400-digits"),
    pytest.param(hp("overlap", 2, 8, 2, rho=HUGE_INT, rng=0), ("rho", "(401 characters)"), id="heads-rho-400-digits"),
    pytest.param(setting(seeds=HUGE_INT), ("seeds", "(401 characters)"), id="training-seeds-400-digits"),
    pytest.param(setting(lr=HUGE_INT), ("lr", "(401 characters)"), id="training-lr-400-digits"),
    pytest.param(setting(steps=10**5000), ("steps", "about 5,001 digits"), id="training-steps-5000-digits"),
    pytest.param(setting(seed=2**63), ("seed", "at most"), id="training-seed-2-63"),
    pytest.param(dgp(width=0), ("bump parameter 'width'", "0", "positive"), id="dgp-width-zero"),
    # 2. every replay field through the validators
    pytest.param(rp_doc({**_cx("c1.stated-bandwidth"), "version": True}), "format version 1 (an integer), got True",
                 id="cli-replay-version-true"),
    pytest.param(rp_doc({**_cx("c1.stated-bandwidth"), "version": 1.0}), "format version 1 (an integer), got 1.0",
                 id="cli-replay-version-float"),
    pytest.param(rp_doc({**_cx("c1.stated-bandwidth"), "version": HUGE_INT}), "(401 characters)",
                 id="cli-replay-version-400-digits"),
    pytest.param(rp_doc({**_cx("c1.stated-bandwidth"), "statement": ["\x1b[2J"]}), "expected 'statement' to be a string",
                 id="cli-replay-statement-list"),
    pytest.param(rp_doc({**_cx("c1.stated-bandwidth"), "part": "p" * 201}), "at most 200 characters",
                 id="cli-replay-part-too-long"),
    pytest.param(rp_doc({**_cx("c1.stated-bandwidth"), "kind": "\x1b[31mc1.x"}), "\\x1b[31mc1.x",
                 id="cli-replay-kind-ansi-escaped"),
    pytest.param(rp_doc({**_cx("c1.stated-bandwidth"), "expected": {"violates": True, "summary": 3}}),
                 "a string 'summary'", id="cli-replay-summary-number"),
    pytest.param(rp_doc({**_cx("c1.stated-bandwidth"), "claim": "C1" * 100}), "(202 characters)",
                 id="cli-replay-claim-long-quoted-bounded"),
    # 3. caps where work is taken from a file or an argument
    pytest.param(_cli(["sweep", "demo", "--tasks", "10001", "-o", "{d}/o"]),
                 ("--tasks", "10001", "at most 10,000", "MAX_DEMO_TASKS"),
                 id="cli-sweep-demo-tasks-one-over-cap"),
    pytest.param(_cli(["sweep", "demo", "--jobs", "65", "-o", "{d}/o"]), ("--jobs", "65", "MAX_JOBS"),
                 id="cli-sweep-jobs-65"),
    pytest.param(_file(_raw(b"{}", length=100 * 10**6)), "x.safetensors: expected a .safetensors header of at most 16,777,216 bytes (MAX_HEADER_BYTES), "
                 "got a header of 100,000,000 bytes",
                 id="st-header-100MB"),
    # 4. one parser, one name per meaning, contradictory options refused
    pytest.param(_cli(["sweep", "demo", "--jobs", "2", "--workers", "2", "-o", "{d}/o"]),
                 ("--jobs / --workers", "at most one of --jobs, --workers"), id="cli-sweep-jobs-and-old-workers"),
    pytest.param(_cli(["sweep", "demo", "--workers", "0", "-o", "{d}/o"]), ("--workers", "0"), id="cli-sweep-old-workers-0"),
    pytest.param(_cli(["sweep", "c7", "--quick", "--grid", "full", "-o", "{d}/o"]), ("--quick / --grid", "at most one"),
                 id="cli-sweep-c7-quick-and-grid"),
    pytest.param(_cli(["sweep"]), ("sweep", "no name", "--help"), id="cli-sweep-no-name"),
    pytest.param(_cli(["hdi", "{d}", "-o", "{d}/a", "--plots", "{d}/b"], _CKPT), ("--out / --plots", "at most one"),
                 id="cli-hdi-out-and-old-plots"),
    pytest.param(_cli(["allocate", "--budget", "768", "--n", "1e6", "--dim", "768", "--model", "b_frame"]),
                 ("--model", "'b_frame', n/a at this budget", "D > d", "applies at D = 768, d = 768", "b_orth"),
                 id="cli-alloc-model-not-applicable"),
    pytest.param(_cli(["allocate", "--budget", "64", "--n", "1e6", "--dim", "8", "--model", "a_orth"]),
                 ("--model", "orthogonal heads need D <= d"), id="cli-alloc-orth-model-D-above-d"),
    pytest.param(_cli(["sweep", "demo", "--frobnicate"]), ("python -m verify sweep demo", "unrecognized arguments"),
                 id="cli-sweep-unknown-option"),
    # 5. unwritable or odd targets, refused before the work
    pytest.param(_cli(["sweep", "demo", "--tasks", "2", "-o", "{d}/f"], {"f": "user's file"}), ("--out", "f', a file"),
                 id="cli-sweep-out-a-file"),
    pytest.param(_cli(["sweep", "demo", "--tasks", "2", "-o", "{d}/f/sub"], {"f": "x"}), ("--out", "which is not a folder"),
                 id="cli-sweep-out-below-a-file"),
    pytest.param(_cli(["sweep", "demo", "--tasks", "2", "-o", "/proc/verify-sweep"]), ("--out", "'/proc/verify-sweep'"),
                 id="cli-sweep-out-read-only-proc"),
    pytest.param(_cli(["sweep", "demo", "--tasks", "2", "-o", "{d}/o"], {"o/tasks": "x"}), ("--out", "tasks'", "not a folder"),
                 id="cli-sweep-tasks-a-file"),
    pytest.param(_cli(["sweep", "demo", "--tasks", "2", "--sleep", "0", "-o", "{d}/o"], {f"o/tasks/{_DEMO_KEY}.json": FOLDER}),
                 ("--out", f"{_DEMO_KEY}.json'", "not a regular file"), id="cli-sweep-task-file-a-folder"),
    pytest.param(_cli(["sweep", "demo", "--tasks", "2", "-o", "{d}/o"], {"o/sweep.json": FIFO}),
                 ("--out", "sweep.json'", "not a regular file"), id="cli-sweep-summary-a-fifo"),
    pytest.param(_cli(["sweep", "c7", "--quick", "-o", "{d}/o", "--plot", "/proc/verify-plot.png"]),
                 ("--plot", "'/proc/verify-plot.png'", "a writable file path"), id="cli-sweep-plot-unwritable"),
    pytest.param(_cli(["sweep", "c7", "--quick", "-o", "{d}/o", "--plot", "{d}"]), ("--plot", "a folder"),
                 id="cli-sweep-plot-a-folder"),
    pytest.param(_cli(["snapshot", "--write"], {"tests/snapshots/verdicts.json": {}, "README.md": FOLDER}, chdir=True),
                 ("README", "'README.md', which is a folder"), id="cli-snapshot-readme-a-folder"),
    pytest.param(_cli(["snapshot", "--write"], {"tests/snapshots/verdicts.json": {}, "README.md": b"ok \xff\xfe"},
                      chdir=True), ("README", "UTF-8", "invalid start byte at byte 3"), id="cli-snapshot-readme-not-utf8"),
    pytest.param(_cli(["snapshot", "--write"], {"tests/snapshots/verdicts.json": {}, "README.md": "no table"}, chdir=True),
                 ("README", "verdict-table markers"), id="cli-snapshot-readme-without-markers"),
    pytest.param(_cli(["snapshot", "--report", "{d}/r.json"], {"tests/snapshots/verdicts.json": {}, "README.md": FIFO,
                                                              "r.json": {}}, chdir=True),
                 ("README", "not a regular file"), id="cli-snapshot-readme-a-fifo"),
    pytest.param(_cli(["snapshot", "--write"], {"tests/snapshots/verdicts.json": FOLDER, "README.md": _README_OK},
                      chdir=True), ("snapshot", "verdicts.json', a folder"), id="cli-snapshot-write-target-a-folder"),
    # --- GGUF checkpoints: the GGUF options of `hdi` and its refusals (each hostile file of
    # tests/gguf_files.py is refused, timed, by tests/test_gguf.py)
    pytest.param(_gguf(b"GGUF" + struct.pack("<I", 3)), "m.gguf: expected a whole GGUF file (it is truncated or a count "
                                                         "lies), got a file of 8 bytes that ends inside the tensor count",
                 id="gguf-8-bytes"),
    pytest.param(_gguf(b""), "m.gguf: expected a whole GGUF file (it is truncated or a count lies), got a file of 0 bytes",
                 id="gguf-empty"),
    pytest.param(_in_dir({"m.gguf": FOLDER}, lambda d: analyze_checkpoint(d)), ("PATH", "m.gguf', which is a folder"),
                 id="gguf-folder-named-gguf"),
    pytest.param(_in_dir(_GGUF_OK, lambda d: analyze_checkpoint(d / "m.gguf", band_draws=1)),
                 ("band_draws", "expected an integer >= 2", "got 1"), id="gguf-band-draws-1"),
    pytest.param(_in_dir(_GGUF_OK, lambda d: analyze_checkpoint(d / "m.gguf", band_draws=10**6)),
                 ("band_draws", "at most 256", "1000000"), id="gguf-band-draws-a-million"),
    pytest.param(_in_dir(_GGUF_OK, lambda d: analyze_checkpoint(d / "m.gguf", seed=-1)), ("seed", "-1"),
                 id="gguf-seed-negative"),
    pytest.param(_cli(["hdi", "{d}/m.gguf"], {"m.gguf": _GGUF_HOSTILE["tensor-count-in-the-billions"][0]}),
                 "m.gguf: expected at most 65,536 tensors (MAX_TENSORS), got a header of 1,099,511,627,776 tensors",
                 id="cli-hdi-gguf-tensor-count"),
    pytest.param(_cli(["hdi", "{d}/m.gguf"], {"m.gguf": _GGUF_HOSTILE["key-heads-do-not-divide-the-heads"][0]}),
                 "m.gguf: key 'llama.attention.head_count_kv': expected a divisor of llama.attention.head_count = 4",
                 id="cli-hdi-gguf-key-heads-do-not-divide"),
    pytest.param(_cli(["hdi", "{d}/m.gguf"], {"m.gguf": _GGUF_HOSTILE["architecture-unknown"][0]}),
                 "got 'bert\\x1b[2J'", id="cli-hdi-gguf-architecture-escaped"),
    pytest.param(_cli(["hdi", "{d}/m.gguf", "--band-draws", "1"], _GGUF_OK),
                 ("python -m verify hdi", "--band-draws", "expected an integer >= 2, got '1'"),
                 id="cli-hdi-band-draws-1"),
    pytest.param(_cli(["hdi", "{d}/m.gguf", "--band-draws", "many"], _GGUF_OK),
                 ("python -m verify hdi", "--band-draws", "got 'many'"), id="cli-hdi-band-draws-word"),
    pytest.param(_cli(["hdi", "--reading-ii", "{d}/m.gguf"], _GGUF_OK),
                 ("--reading-ii", "the installed models alone: no PATH and no --out", "with PATH"),
                 id="cli-hdi-reading-ii-with-path"),
    pytest.param(_cli(["hdi", "{d}/m.gguf", "--readme", "{d}/README.md"], _GGUF_OK),
                 ("--readme FILE", "--readme together with --reading-ii"), id="cli-hdi-readme-without-reading-ii"),
    pytest.param(_cli(["hdi", "--reading-ii", "--readme", "{d}/README.md"], {"README.md": "no markers"}),
                 ("--readme FILE", "without the reading-ii markers"), id="cli-hdi-readme-without-markers"),
    pytest.param(_cli(["hdi", "--reading-ii", "--readme", "{d}/README.md"], {"README.md": FIFO}),
                 ("--readme FILE", "not a regular file"), id="cli-hdi-readme-a-fifo"),
    pytest.param(_cli(["hdi", "--reading-ii", "--readme", "{d}/README.md"], {"README.md": b"\xff\xfe"}),
                 ("--readme FILE", "not UTF-8"), id="cli-hdi-readme-not-utf8"),
    pytest.param(lambda: judge_reading_ii([], z_min=float("nan"), delta_min=0.02), ("z_min", "nan"), id="reading-ii-z-min-nan"),
    # --- one numeral grammar for every flag (the grid below), --scheduler addresses parsed before use,
    # output folders that are empty or carry the writing command's own marker
    # one numeral grammar for every numeric flag (_NUMERAL_FLAGS x _BAD_NUMERALS, below); the other numerals:
    pytest.param(_cli([*_RUN, "--out", "{d}/o", "--seed", " 7"]),
                 "argument --seed: expected a non-negative integer, got ' 7'", id="cli-run-seed-space"),
    pytest.param(_cli(["sweep", "demo", "--tasks", "2", "--sleep", "nan", "-o", "{d}/o"]), ("--sleep", "'nan'"),
                 id="cli-sweep-sleep-nan"),
    pytest.param(_cli([*_C7, "--seed", "1" + "0" * 400]), ("--seed", "(403 characters)", "a non-negative integer"),
                 id="cli-sweep-c7-seed-401-digits"),
    pytest.param(_cli([*_C7, "--seed", str(2**63)]), ("--seed", "'9223372036854775808'", "below 2**63"),
                 id="cli-sweep-c7-seed-2-63"),
    # --scheduler: parsed before any work, one line naming it, the address quoted capped and escaped
    *(pytest.param(_cli([*_SWEEP, "--scheduler", address]), ("--scheduler", _SCHEDULER), id=f"cli-sweep-scheduler-{label}")
      for label, address in _BAD_ADDRESSES.items()),
    pytest.param(_cli([*_SWEEP, "--scheduler", "tcp://" + "h" * 100_000 + ":8786"]),
                 ("--scheduler", "(100,013 characters)", _SCHEDULER), id="cli-sweep-scheduler-100k-characters"),
    pytest.param(_cli([*_SWEEP, "--scheduler", "tcp://\x1b[2Jhost:8786"]), ("--scheduler", "\\x1b[2J", _SCHEDULER),
                 id="cli-sweep-scheduler-escape-shown-escaped"),
    # output folders: written only when empty or carrying the command's own marker; refused before any work
    pytest.param(_cli(_SWEEP, {"o/results.csv": "the user's table"}),
                 ("--out", "mha-nw-verify-output.json", "a non-empty folder without it"), id="cli-sweep-out-users-results-csv"),
    pytest.param(_cli(_SWEEP, {"o/mha-nw-verify-run.json": {"schema": "mha-nw-verify/run", "schema_version": 1}}),
                 ("--out", "mha-nw-verify-output.json"), id="cli-sweep-out-a-run-folder"),
    pytest.param(_cli(_SWEEP, {"o/mha-nw-verify-output.json": {"schema": "mha-nw-verify/output", "schema_version": 1,
                                                               "command": "python -m verify hdi"}}),
                 ("--out", "which python -m verify hdi wrote"), id="cli-sweep-out-another-commands-folder"),
    pytest.param(_cli(_SWEEP, {"o/mha-nw-verify-output.json": "not json", "o/x": ""}),
                 ("--out", "a non-empty folder without it"), id="cli-sweep-out-broken-marker"),
    pytest.param(_cli(["hdi", "{d}/m", "-o", "{d}/o"], {f"m/{k}": v for k, v in _CKPT.items()} | {"o/hdi_per_layer.png": "mine"}),
                 ("--out DIR", "mha-nw-verify-output.json", "a non-empty folder without it"), id="cli-hdi-out-users-png"),
    pytest.param(_cli(_LATEX_REPORT, {"r.json": _EMPTY_REPORT, "o/verification.tex": "my paper"}),
                 ("-o DIR", "mha-nw-verify-output.json", "a non-empty folder without it"), id="cli-latex-out-users-tex"),
]
CASES += [pytest.param(_cli([*before, text, *after], files), (name, quoted, want), id=f"{flag}-{label}")
                 for flag, before, after, files, name, want in _NUMERAL_FLAGS
                 for label, (text, quoted) in _BAD_NUMERALS.items()]

@pytest.mark.parametrize("call,expected", CASES)
def test_bad_input_raises_verify_error(call, expected):
    with pytest.raises(VerifyError) as info:
        call()
    assert isinstance(info.value, ValueError)
    message = str(info.value)
    if isinstance(expected, str):  # one substring naming the argument, what was received and expected
        assert expected in message, f"{expected!r} not in {message!r}"
        return
    # "name: ..." or, for a file read by verify.io.read_json, "name (path): ..."
    assert message.startswith((expected[0] + ":", expected[0] + " (")), \
        f"message does not start with the argument {expected[0]!r}: {message}"
    for part in expected[1:]:
        assert part in message, f"{part!r} not in {message!r}"


AT_THE_CAP = [  # the largest case each cap admits replays; one more is refused (the rows above)
    pytest.param("c1.stated-bandwidth", dict(queries=[[c1.MAX_REPLAY_ABS, 0, 0, 0]],
                                             keys=[[c1.MAX_REPLAY_ABS, 0, 0, 0], [-c1.MAX_REPLAY_ABS, 0, 0, 0]]),
                 id="c1-entries-at-MAX_REPLAY_ABS"),
    pytest.param("c2.free-weights", dict(W_V=[[0.5]] * 1024, W_O=[[0.5]] * 1024), id="c2-1024-heads"),
    pytest.param("c4.literal-formula", dict(cases=[{"W_K": [[[1.0], [0.0]]] * 2}] * c4.MAX_REPLAY_CASES),
                 id="c4-MAX_REPLAY_CASES-cases"),
    pytest.param("c4.literal-formula", dict(cases=[{"W_K": [[[1.0]]] * c4.MAX_REPLAY_HEADS}]), id="c4-MAX_REPLAY_HEADS-heads"),
    pytest.param("c4.literal-formula", dict(cases=[{"W_K": [[[1.0]] * c4.MAX_REPLAY_DIM] * 2}]), id="c4-MAX_REPLAY_DIM-rows"),
    pytest.param("c7.stated-law", dict(cases=[{"model": "a_corr", "d": 8, "D": 64}] * 128), id="c7-128-cases"),
    pytest.param("c8.mild-heterogeneity", dict(H_values=[4095, 4097], schemes=["geom"]), id="c8-16384-head-evaluations"),
    pytest.param("c8.rates-in-n", dict(gammas=list(np.linspace(1, 0.1, 700)), c=[1.0] * 700), id="c8-700-heads"),
    pytest.param("c5.shared-noise", dict(batches=1, R=1024, n=2, m=1), id="c5-1024-replicates"),
]


@pytest.mark.parametrize("which,change", AT_THE_CAP)
def test_replay_at_its_cap_runs(which, change):
    with tempfile.TemporaryDirectory() as tmp:
        f = Path(tmp) / "cx.json"
        f.write_text(json.dumps(_cx(which, **change)))
        with contextlib.redirect_stdout(io.StringIO()):
            assert verify_main(["replay", str(f)]) in (0, 1)


def test_proofs_help_prints_the_usage_and_exits_0(capsys):
    """``proofs --help`` (a traceback before) prints the usage and exits 0 like every subcommand."""
    assert verify_main(["proofs", "--help"]) == 0
    assert capsys.readouterr().out.startswith("usage: python -m verify proofs [-h] [CLAIM ...]")


def test_printable_escapes_exactly_the_control_characters():
    """Every character of Unicode's category Cc (C0, DEL and the C1 controls, which drive a
    terminal) is written as an ASCII escape; no other character of the first 0x250 changes."""
    from verify._validate import printable

    for cp in range(0x250):
        ch = chr(cp)
        out = printable(ch)
        assert (out != ch) is (unicodedata.category(ch) == "Cc"), hex(cp)
        assert out == ch or (out.isascii() and out.startswith("\\")), (hex(cp), out)


def test_replay_prints_text_from_the_file_with_control_characters_escaped():
    """A statement, part id or saved summary with an ANSI escape (clear screen, recolour), a BEL or
    a carriage return is printed escaped: nothing from a received file drives the terminal."""
    doc = {**_cx("c1.stated-bandwidth"), "statement": "\x1b[2J\x1b[Hall clear\r", "part": "p\x1b[31m",
           "expected": {"violates": True, "summary": "\x07\x9b31m", "figures": {}}}
    with tempfile.TemporaryDirectory() as tmp:
        f = Path(tmp) / "cx.json"
        f.write_text(json.dumps(doc))
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            verify_main(["replay", str(f)])
    text = out.getvalue()
    assert not any(ch in text for ch in "\x1b\x07\r\x9b"), repr(text)
    assert "\\x1b[2J\\x1b[Hall clear\\r" in text and "p\\x1b[31m" in text and "\\x07\\x9b31m" in text
