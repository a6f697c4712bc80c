"""Smoke test of the benchmark (benchmarks.bench) at tiny sizes: it runs end to end, its JSON has the
documented structure and every method's estimate agrees with the others' (no timing assertions)."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from benchmarks import bench
from verify.numeric import nw

#: The benchmark is a developer tool (benchmarks/bench.py): its tests run in the slow tier.
pytestmark = pytest.mark.slow

# The same softmax average in another order: n <= 256 terms of 2^-53, x100. Observed: <= 4e-15.
AGREEMENT = 1e-12

TINY = {
    "forward": [("T1", dict(R=2, H=2, m=16, n=64, d=4, p=1), ""),
                ("T2", dict(R=1, H=3, m=8, n=256, d=2, p=2), "tiny second size, p = d_k")],
    "scaling": (dict(R=1, H=1, m=8, n=32, d=2, p=1), (1, 2)),
    "block_sweep": (dict(R=1, H=2, m=16, n=64, d=4, p=3), (1, 64)),
    "memory_series": [(16, 64), (64, 512)],
    "small_cap": 2**18,
    "engine": dict(n=32, m=4, H=2, d=3, d_k=1, N=(40, 80)),
    "training": dict(n=16, q=4, layer_n=8, C=2, runs=2, steps=3),
}


@pytest.fixture(scope="module")
def result(tmp_path_factory):
    path = tmp_path_factory.mktemp("bench") / "bench.json"
    printed = []
    res = bench.run_benchmark(TINY, repeats=2, threads=2, json_path=path, printer=printed.append)
    return res, json.loads(path.read_text()), printed[0]


def test_json_is_what_was_returned_and_has_every_part(result):
    res, saved, _ = result
    assert saved["forward"] == res["forward"] and saved["settings"] == {"repeats": 2, "threads": 2, "blas_threads": 1}
    for key in ("machine", "forward", "isa_off", "compile", "breakdown", "block_sweep", "memory", "scaling", "engine",
                "targets", "elapsed_s", "sizes", "training"):
        assert key in saved
    for tr in (saved["training"], saved["isa_off"]["training"]):
        assert all(tr[k]["compiled_us"] > 0 and tr[k]["numpy_us"] > 0 for k in ("NW heads", "attention layer"))
    assert [b["rows"] for b in saved["block_sweep"]["sizes"]] == [2, 16]   # 1 KiB / (8 B * 64 keys); all m
    assert all(len(b["times_s"]) == 2 for b in saved["block_sweep"]["sizes"])
    mc = saved["machine"]
    assert mc["OPENBLAS_NUM_THREADS"] == "1" and mc["nw_threads"] == 2 and mc["usable_cpus"] >= 1
    assert mc["numpy"] == np.__version__
    assert [f["label"] for f in saved["forward"]] == ["T1", "T2"]


def test_every_method_timed_and_agrees_with_nw_estimate(result):
    _, saved, _ = result
    assert [f["label"] for f in saved["isa_off"]["forward"]] == ["T1", "T2"]
    for fw in saved["forward"] + saved["isa_off"]["forward"]:
        s = fw["shape"]
        assert fw["scores"] == s["R"] * s["H"] * s["m"] * s["n"]
        assert set(fw["methods"]) == set(bench.METHODS)
        off = fw in saved["isa_off"]["forward"]
        for name, r in fw["methods"].items():
            if off and name not in bench.ISA_OFF_METHODS:
                assert r["status"].startswith("not timed here")
                continue
            assert r["status"] == "ok", name          # torch and numba are test dependencies: they must be there
            assert len(r["times_s"]) == 2 and all(t > 0 for t in r["times_s"])
            assert r["median_s"] == pytest.approx(float(np.median(r["times_s"])))
            assert r["max_rel_diff_vs_nw"] <= AGREEMENT, (fw["label"], name)


def test_avx512_off_child_and_compile_times(result):
    """The second timing child ran with numpy's AVX-512 paths off (numpy says so), and the
    compile children compiled into an empty cache, then only loaded from it."""
    _, saved, printed = result
    off = saved["isa_off"]
    assert off["env"]["NPY_DISABLE_CPU_FEATURES"] == "X86_V4" and off["machine"]["avx512f"] is False
    assert off["machine"]["isa_env"]["NPY_DISABLE_CPU_FEATURES"] == "X86_V4"
    assert saved["machine"]["isa_env"]["NPY_DISABLE_CPU_FEATURES"] is None
    cold, warm = saved["compile"]["cold"], saved["compile"]["warm"]
    assert cold["status"] == warm["status"] == "ok"
    assert cold["cache_misses"] >= 2 and cold["cache_hits"] == 0       # estimate and weights kernels
    assert warm["cache_hits"] >= 2 and warm["cache_misses"] == 0
    assert cold["cache_dir"] == warm["cache_dir"]
    settings = {k.split(",")[0] for k in saved["targets"] if "torch" in k or "floor" in k}
    assert "AVX-512 off" in settings and len(settings) == 2
    assert ("has no AVX-512" in printed) != bool(saved["machine"]["cpu_avx512f"])


def test_methods_agree_with_a_loop_written_here():
    """The benchmark's methods against a double loop in Python floats (math.exp, math.fsum)."""
    shape = dict(R=1, H=2, m=3, n=5, d=2, p=2)
    q, k, v = bench._inputs(shape, seed=7)
    ref = np.empty((1, 2, 3, 2))
    for h in range(2):
        for i in range(3):
            e = [math.exp(math.fsum(a * b for a, b in zip(q[0, h, i], k[0, h, j])) / math.sqrt(2)) for j in range(5)]
            tot = math.fsum(e)
            for c in range(2):
                ref[0, h, i, c] = math.fsum(e[j] * v[0, h, j, c] for j in range(5)) / tot
    for name, f in bench._methods(threads=2).items():
        if f is None:
            continue
        out = getattr(f, "finish", lambda a: a)(f(q, k, v))
        assert np.max(np.abs(out - ref)) <= AGREEMENT * np.max(np.abs(ref)), name


def test_memory_figures_stay_under_the_cap(result):
    _, saved, _ = result
    mem = saved["memory"]
    assert set(mem["forward"]) == set(bench.METHODS)
    assert len(mem["series"]) == 2 * len(TINY["memory_series"])
    for r in mem["series"] + [mem["forward"]["nw"], mem["forward"]["nw_1thread"]]:
        assert r["status"] == "ok"
        assert r["tracemalloc_peak_bytes"] - r["result_bytes"] <= r["cap_bytes"]
    assert {r["cap_bytes"] for r in mem["series"]} == {nw.DEFAULT_MAX_MEMORY, TINY["small_cap"]}


def test_scaling_engine_and_report(result):
    _, saved, printed = result
    for axis in ("n", "m", "H", "R"):
        a = saved["scaling"]["axes"][axis]
        assert len(a["values"]) == 2 and math.isfinite(a["slope"])
    en = saved["engine"]
    assert en["exact"]["rel_err_vs_longdouble"] < 1e-13     # float64 rounding of a few dozen terms
    assert [s["N"] for s in en["simulate"]] == [40, 80]
    assert all(s["rel_se_max"] > en["exact"]["rel_err_vs_longdouble"] for s in en["simulate"])
    for name in bench.METHODS:
        assert bench.LABELS[name].format(T=2) in printed
    assert "Targets" in printed and all(isinstance(t["met"], bool) for t in saved["targets"].values())


@pytest.mark.parametrize("argv, message", [
    (["--repeats", "0"], "--repeats: expected an integer >= 1, got 0"),
    (["--repeats", "101"], "--repeats: expected at most 100 (MAX_REPEATS), got 101"),
    (["--jobs", "65"], "--jobs: expected at most 64 (MAX_THREADS), got 65"),
    (["--blas-threads", "0"], "--blas-threads: expected an integer >= 1, got 0"),
    (["--jobs", "2", "--threads", "2"], "--jobs / --threads: expected at most one of --jobs, --threads, got all of them"),
    (["--json", "/proc/verify-bench.json"], "--json: expected a writable file path, got '/proc/verify-bench.json' "
                                            "(No such file or directory)"),
    (["--json", "/"], "--json: expected a writable file path, got '/', a folder"),
], ids=["repeats-zero", "repeats-over-cap", "jobs-over-cap", "blas-threads-zero", "jobs-and-old-threads",
        "json-unwritable", "json-a-folder"])
def test_cli_rejects_bad_arguments_before_any_work(argv, message, capsys, monkeypatch):
    monkeypatch.setattr(bench, "run_benchmark", lambda *a, **k: pytest.fail("the benchmark ran"))
    assert bench.cli_bench(argv) == 2
    assert capsys.readouterr().err.strip() == f"error: {message}"


@pytest.mark.parametrize("argv, message", [
    (["--frobnicate"], "unrecognized arguments: --frobnicate"),
    (["--jobs", "abc"], "argument --jobs/-j: invalid int value: 'abc'"),
], ids=["unknown-option", "jobs-text"])
def test_cli_rejects_bad_usage(argv, message, capsys):
    assert bench.cli_bench(argv) == 2
    assert capsys.readouterr().err.strip().startswith(f"error: python benchmarks/bench.py: {message} (usage: ")


def test_cli_help_is_complete_without_internal_references(capsys):
    with pytest.raises(SystemExit) as info:
        bench.cli_bench(["--help"])
    assert info.value.code == 0
    out = capsys.readouterr().out
    for needle in ("--quick", "--json FILE", "--jobs T", "examples:\n  python benchmarks/bench.py --quick"):
        assert needle in out, needle
    assert "issue" not in out.lower() and "#2" not in out and "--threads" not in out


def test_runs_without_torch(tmp_path, monkeypatch):
    """torch is optional at runtime: with an import of torch that fails in the children, the
    torch rows say so and everything else is measured."""
    shim = tmp_path / "shim" / "torch"
    shim.mkdir(parents=True)
    (shim / "__init__.py").write_text("raise ImportError('torch hidden by tests/test_bench.py')\n")
    monkeypatch.setenv("PYTHONPATH", str(shim.parent))
    small = dict(TINY, forward=TINY["forward"][:1], memory_series=TINY["memory_series"][:1])
    printed = []
    res = bench.run_benchmark(small, repeats=1, threads=1, json_path=None, printer=printed.append)
    assert res["machine"]["torch"] is None
    assert res["forward"][0]["methods"]["torch"] == {"status": "torch not installed"}
    assert res["memory"]["forward"]["torch"] == {"status": "torch not installed"}
    assert all(r["status"] == "ok" for m, r in res["forward"][0]["methods"].items() if m != "torch")
    assert "torch not installed" in printed[0]
