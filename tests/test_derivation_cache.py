"""The on-disk derivation cache (proofs/cache.py): a cached derivation equals a fresh build,
the key follows every byte of proofs/ and the SymPy version, broken or foreign files are
ignored and rewritten, and the bypass switches work."""

from __future__ import annotations

import io
import json
import os
import pickle
import shutil
import subprocess
import sys
import types
from pathlib import Path

import pytest
import sympy as sp

import proofs
from proofs import cache

ROOT = Path(__file__).resolve().parents[1]
CLAIM = "C5"   # one of the quicker derivations (~1 s)


@pytest.fixture
def tmp_cache(tmp_path, monkeypatch):
    """An empty cache folder, no re-derive switch, an empty in-process cache."""
    monkeypatch.setenv("MHA_NW_CACHE_DIR", str(tmp_path))
    monkeypatch.delenv(cache.ENV_REDERIVE, raising=False)
    monkeypatch.setattr(proofs, "_CACHE", {})
    return tmp_path / "derivations"


def content(der) -> dict:
    """``der.to_dict()`` without the timings (a rebuild takes another time)."""
    def strip(x):
        if isinstance(x, dict):
            return {k: strip(v) for k, v in x.items() if k != "seconds"}
        if isinstance(x, list):
            return [strip(v) for v in x]
        return x
    return strip(der.to_dict())


_FRESH: dict = {}


def fresh(claim: str):
    """The derivation built by its module, bypassing every cache (once per test module)."""

    if claim not in _FRESH:
        _FRESH[claim] = proofs.DERIVATIONS[claim].build()
    return _FRESH[claim]


@pytest.fixture
def rebuilds(monkeypatch) -> list:
    """``CLAIM``'s build replaced by one that returns a new copy of :func:`fresh` (through the
    cache's own pickler: no SymPy re-evaluation) and notes each call: the tests using it check the
    cache's decisions (when it rebuilds, what it rewrites), not the build, which the test below
    and the round trips check. The list it returns grows by one at each rebuild."""
    calls: list = []
    template = cache._dumps(fresh(CLAIM))

    def build():
        calls.append(1)
        return pickle.loads(template)

    monkeypatch.setattr(proofs.DERIVATIONS[CLAIM], "build", build)
    return calls


def test_cached_derivation_equals_a_fresh_build(tmp_cache, monkeypatch):
    first = proofs.derivation(CLAIM)
    assert first.from_cache is False and len(list(tmp_cache.glob(f"{CLAIM}-*.pickle"))) == 1
    monkeypatch.setattr(proofs, "_CACHE", {})
    second = proofs.derivation(CLAIM)
    assert second.from_cache is True
    ref = fresh(CLAIM)
    assert content(second) == content(ref)
    assert type(second).to_dict(second) == second.to_dict()        # the stored dict is the loaded object's
    for a, b in zip(second.steps, ref.steps):
        assert sp.srepr(a.relation) == sp.srepr(b.relation)
    for name, r in ref.results.items():
        assert sp.srepr(second.results[name].expr) == sp.srepr(r.expr)
        assert second.results[name].expr == r.expr and hash(second.results[name].expr) == hash(r.expr)
    # the loaded expressions still compute: numbers substituted give the fresh build's numbers
    for name, r in ref.results.items():
        if isinstance(r.expr, sp.Expr) and r.expr.free_symbols:
            point = {x: sp.Rational(3, 7) + i for i, x in enumerate(sorted(r.expr.free_symbols, key=str))}
            assert sp.nsimplify(second.results[name].expr.subs(point) - r.expr.subs(point)) == 0, name


#: The claims whose round trip the default tier checks: quick to build, between them sums,
#: matrices, Subs, derivatives and unevaluated equations; every claim in the slow tier.
ROUND_TRIP_QUICK = ("C1", "C2", "C5")


@pytest.mark.parametrize("claim", [pytest.param(c, marks=[] if c in ROUND_TRIP_QUICK else [pytest.mark.slow])
                                   for c in proofs.CLAIM_IDS])
def test_every_claim_round_trips_unevaluated(tmp_cache, claim):
    """SymPy's own pickles re-evaluate (Sum(1*f) and re-run Eq truth tests); ours must not: a fresh
    build stored and loaded again is the same to its last printed digit."""
    der = fresh(claim)
    assert cache.store(claim, "k" * 64, der), claim
    back = cache.load(claim, "k" * 64)
    assert back is not None and back.to_dict() == der.to_dict(), claim


def _marked_derivation(where: str):
    """A small derivation with the expression ``x + 7`` in one place only: a step's relation, a
    step's parameter, a result or an assumption (every other SymPy object differs from it)."""
    from proofs.core import Derivation

    x = sp.Symbol("x", real=True)
    marked = sp.Add(x, 7)
    der = Derivation(claim="C3", title="marked", stated="x")
    der.assume("domain", "x is real", kind="setting", expr=sp.Gt(marked, 0, evaluate=False) if where == "assumption" else None)
    if where == "relation":
        der.step("square", sp.Eq(marked**2, x**2 + 14 * x + 49, evaluate=False), by="expand")
    else:
        der.step("square", sp.Eq((x + 1) ** 2, x**2 + 2 * x + 1, evaluate=False), by="expand")
    if where == "parameter":
        der.step("root", sp.Eq(x, 3, evaluate=False), by="solve", equation=sp.Eq(marked, 10, evaluate=False))
    der.result("value", marked if where == "result" else x**2, args=(x,))
    assert not der.failed
    return der


@pytest.mark.parametrize("where", ["relation", "parameter", "result", "assumption"])
def test_a_derivation_that_does_not_read_back_identical_is_not_stored(tmp_cache, monkeypatch, where):
    """A rebuild that changes one expression (``x + 7`` read back as ``x + 8``) wherever the dict
    prints it: the file is not written (the printed dict itself reads back equal: only the check
    of the objects sees it). The same derivation read back faithfully is stored."""
    der = _marked_derivation(where)
    x = sp.Symbol("x", real=True)
    changed = []

    def lossy(cls, args, state):
        obj = cache._rebuild(cls, args, state)
        if obj == sp.Add(x, 7):
            changed.append(obj)
            return sp.Add(x, 8)
        return obj

    def reading_back(faithful: bool):
        """The cache's pickle module, its read-back done by an unpickler that rebuilds with
        ``lossy`` unless ``faithful`` (it writes with the real rebuild)."""
        class Unpickler(pickle.Unpickler):
            def find_class(self, module, name):
                if (module, name) == ("proofs.cache", "_rebuild") and not faithful:
                    return lossy
                return super().find_class(module, name)
        return types.SimpleNamespace(**{**vars(pickle), "loads": lambda data: Unpickler(io.BytesIO(data)).load()})

    monkeypatch.setattr(cache, "pickle", reading_back(faithful=False))
    assert cache.store("C3", "k" * 64, der) is False and len(changed) == 1
    assert not tmp_cache.exists() or not list(tmp_cache.iterdir())
    monkeypatch.setattr(cache, "pickle", reading_back(faithful=True))
    assert cache.store("C3", "k" * 64, der) is True
    monkeypatch.setattr(cache, "pickle", pickle)
    back = cache.load("C3", "k" * 64)
    assert back is not None and type(back).to_dict(back) == der.to_dict()


def test_key_follows_source_bytes_and_sympy_version(tmp_path, monkeypatch):
    copy = tmp_path / "proofs"
    shutil.copytree(ROOT / "proofs", copy, ignore=shutil.ignore_patterns("__pycache__"))
    monkeypatch.setattr(cache, "_PACKAGE", copy)
    base = cache.source_key()
    assert base == cache.source_key()
    target = copy / "c5_hdi_mse.py"
    target.write_bytes(target.read_bytes() + b" ")                # one trailing byte
    changed = cache.source_key()
    assert changed != base
    data = target.read_bytes()                                     # the same length, one byte different
    target.write_bytes(data[:-2] + (b"#" if data[-2:-1] != b"#" else b"%") + data[-1:])
    assert cache.source_key() != changed
    target.write_bytes(data)
    assert cache.source_key() == changed
    (copy / "notes.txt").write_text("x")                          # any file of the package counts
    assert cache.source_key() != changed
    now = cache.source_key()
    monkeypatch.setattr(sp, "__version__", "0.0.1")
    assert cache.source_key() != now


@pytest.mark.parametrize("damage", ["garbage", "truncated", "other-key", "other-claim", "too-large"])
def test_broken_or_foreign_file_is_ignored_and_rewritten(tmp_cache, monkeypatch, rebuilds, damage):
    assert cache.store(CLAIM, cache.source_key(), fresh(CLAIM))
    path = next(tmp_cache.glob(f"{CLAIM}-*.pickle"))
    good = path.read_bytes()
    if damage == "garbage":
        path.write_bytes(b"not a pickle")
    elif damage == "truncated":
        path.write_bytes(good[: len(good) // 2])
    elif damage == "other-key":
        doc = pickle.loads(good)
        path.write_bytes(pickle.dumps(dict(doc, key="0" * 64)))
    elif damage == "other-claim":
        doc = pickle.loads(good)
        path.write_bytes(pickle.dumps(dict(doc, claim="C2")))
    else:
        monkeypatch.setattr(cache, "MAX_BYTES", len(good) - 1)
    monkeypatch.setattr(proofs, "_CACHE", {})
    der = proofs.derivation(CLAIM)
    assert der.from_cache is False and len(rebuilds) == 1         # rebuilt
    assert content(der) == content(fresh(CLAIM))
    monkeypatch.setattr(cache, "MAX_BYTES", 16 * 2**20)
    monkeypatch.setattr(proofs, "_CACHE", {})
    assert proofs.derivation(CLAIM).from_cache is True           # and the file was rewritten
    assert len(rebuilds) == 1
    assert not list(tmp_cache.glob(".*.tmp"))                     # no temporary left behind


def test_rederive_switches_bypass_the_cache(tmp_cache, monkeypatch, rebuilds):
    assert cache.store(CLAIM, cache.source_key(), fresh(CLAIM))
    assert proofs.derivation(CLAIM).from_cache is True and not rebuilds
    assert proofs.derivation(CLAIM, rederive=True).from_cache is False   # also replaces the in-process copy
    assert len(rebuilds) == 1
    monkeypatch.setattr(proofs, "_CACHE", {})
    monkeypatch.setenv(cache.ENV_REDERIVE, "1")
    assert proofs.derivation(CLAIM).from_cache is False and len(rebuilds) == 2


def test_unwritable_cache_folder_falls_back_to_a_private_temporary_one(tmp_path, monkeypatch, rebuilds):
    blocker = tmp_path / "file"
    blocker.write_text("a file where the cache folder would go")
    monkeypatch.setenv("MHA_NW_CACHE_DIR", str(blocker))
    monkeypatch.delenv(cache.ENV_REDERIVE, raising=False)
    monkeypatch.setattr(proofs, "_CACHE", {})
    assert cache.cache_dir() == cache.private_temp_dir("derivations")
    der = proofs.derivation(CLAIM)
    assert der.status == fresh(CLAIM).status and blocker.read_text().startswith("a file")


def test_cache_dir_defaults_and_proofs_never_imports_verify(tmp_path):
    code = ("import json, sys, proofs, proofs.cache as c\n"
            "proofs.derivation('C2')\n"
            "print(json.dumps({'dir': str(c.cache_dir()), 'verify': any(m == 'verify' or m.startswith('verify.') "
            "for m in sys.modules)}))")
    env = {k: v for k, v in os.environ.items() if k not in ("MHA_NW_CACHE_DIR", "XDG_CACHE_HOME")}
    env.update(PYTHONPATH=str(ROOT), HOME=str(tmp_path), MHA_NW_REDERIVE="1")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=ROOT, timeout=300)
    assert out.returncode == 0, out.stderr
    doc = json.loads(out.stdout.strip().splitlines()[-1])
    assert doc == {"dir": str(tmp_path / ".cache" / "mha-nw-verify" / "derivations"), "verify": False}
