"""Benchmark of the NW ensemble forward and of the decomposition engine (a developer tool).

    python benchmarks/bench.py [--quick] [--json FILE] [--repeats N] [--jobs T] [--blas-threads B]

Everything runs in child processes started with ``OPENBLAS_NUM_THREADS`` (and OMP/MKL) set to
``--blas-threads`` (default 1), because numpy reads it once, at import: one child for all the
timings, one for the forward timings with AVX-512 switched off, two for the kernel's compile
time (cold and warm cache), one per method for the memory figures (a process's peak resident
set is its own).

* **forward**: ``nw_estimate`` batched over replicates and heads, with one value column
  (p = 1) and with p = d_k (standard attention, where torch takes its fused path), on the
  compiled kernel and on its numpy reference path, against torch's
  ``scaled_dot_product_attention`` (same float64 tensors, ``torch.set_num_threads(T)``), a
  straightforward numpy version (batched matmul, softmax, matmul, nothing chunked), a Python
  loop over replicates and heads, and two *floors* on T threads: ``exp`` over the same number
  of scores plus the two products (BLAS), in cache-sized blocks, with numpy's ``exp`` and with
  the kernel's vectorised one (the least work any implementation with that ``exp`` does).
  Methods run interleaved in rounds (order rotated); medians and ratios of the same run are
  reported, and every method's estimate is compared with nw_estimate's.
* **instruction sets**: the forward timings again in a child with AVX-512 switched off
  (``NPY_DISABLE_CPU_FEATURES=X86_V4`` for numpy, ``ATEN_CPU_CAPABILITY=avx2`` for torch and,
  on an AVX-512 CPU, ``NUMBA_CPU_NAME=haswell`` for the kernel): what an AVX2-only CPU runs.
  On a CPU without AVX-512 both children run the same instructions (the report says so).
* **compile**: the kernel's first call in a fresh process with an empty compile cache (cold:
  numba compiles) and again with that cache (warm: it loads), against a second call.
* **profile**: nw_estimate's arithmetic stage by stage (one thread), and float64 vs float32
  ``exp`` per element: the float64 one is scalar libm code unless the CPU has AVX512F.
* **memory**: peak resident set (``VmHWM`` reset through ``/proc/self/clear_refs`` after the
  inputs exist) minus the resident set before the call, per method; for numpy methods also the
  ``tracemalloc`` peak (numpy's allocations only; torch's allocator is invisible to it). A
  series of growing ``m n`` shows nw_estimate's peak staying under its cap.
* **scaling**: log-log slopes of nw_estimate's time in n, m, H and R (each x1, x2, x4).
* **training**: C9's training per run and step, at the default run's sizes (NW heads: n keys, q
  queries; the attention layer: C contexts of n points), the compiled path against the numpy path
  (the reference, and what training cost before the kernels), interleaved rounds, medians of the
  CPU time and of the paired ratio; in both children (AVX-512 on and off).
* **engine**: one fixed design; the exact conditional head covariance ``sigma^2 W W^T``
  (``decompose(method="exact", R=1)``) against ``noise_simulation_check`` with N noise draws:
  errors against a long-double recomputation, the simulation's standard error and time as
  functions of N, and what each reaches per second.
"""

from __future__ import annotations

import importlib.metadata
import json
import math
import os
import platform
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, Callable

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:      # run as a script from a checkout
    sys.path.insert(0, str(ROOT))

from verify.io import write_json  # noqa: E402

__all__ = ["cli_bench", "run_benchmark", "PROFILES", "TARGETS"]

# Shapes: R replicates x H heads, m queries, n keys, d = d_k, p = d_v value columns.
S1 = dict(R=64, H=8, m=256, n=1024, d=8, p=8)
PROFILES: dict[str, dict[str, Any]] = {
    "full": {
        "forward": [("S1 p=1", dict(S1, p=1), ""), ("S1 p=d_k", S1, "")],
        "scaling": (dict(R=8, H=4, m=128, n=1024, d=8, p=8), (1, 2, 4)),
        "block_sweep": (dict(S1, R=8), (64, 128, 256, 512, 1024)),
        "memory_series": [(1024, 4096), (2048, 16384), (4096, 32768)],
        "small_cap": 4 * 2**20,
        "engine": dict(n=1024, m=64, H=4, d=8, d_k=2, N=(500, 2000, 8000), R=64),
        "training": dict(n=128, q=8, layer_n=32, C=16, runs=8, steps=200),
    },
    "quick": {
        "forward": [("S1q p=1", dict(S1, R=4, p=1), "R reduced from 64 to 4 (--quick)"),
                    ("S1q p=d_k", dict(S1, R=4), "R reduced from 64 to 4 (--quick)")],
        "scaling": (dict(R=2, H=2, m=64, n=512, d=8, p=8), (1, 2, 4)),
        "block_sweep": (dict(S1, R=2), (64, 256, 1024)),
        "memory_series": [(512, 2048), (2048, 8192)],
        "small_cap": 2**20,
        "engine": dict(n=512, m=32, H=4, d=8, d_k=2, N=(250, 1000), R=16),
        "training": dict(n=128, q=8, layer_n=32, C=16, runs=4, steps=50),
    },
}
METHODS = ("nw", "nw_1thread", "nw_numpy", "torch", "naive", "loop", "floor", "floor_kernel")
LABELS = {"nw": "nw_estimate ({T} thr)", "nw_1thread": "nw_estimate (1 thr)",
          "nw_numpy": "nw_estimate numpy path ({T} thr)", "torch": "torch SDPA ({T} thr)",
          "naive": "numpy naive (unchunked)", "loop": "python loop over (r, h)",
          "floor": "floor: numpy exp + 2 matmuls ({T} thr)", "floor_kernel": "floor: kernel exp + 2 matmuls ({T} thr)"}
# The performance targets, as ratios of medians measured in the same run: torch / nw at p = 1 and at
# p = d_k on both instruction sets, nw / the faster floor.
TARGETS = {"torch_over_nw_p1": 5.0, "torch_over_nw_pdk": 1.0, "nw_over_floor": 1.3, "budget_s": 240.0}
#: The environment of the child that runs without AVX-512 (numba's only on an AVX-512 CPU: its
#: compile cache is per CPU name, so an AVX2 CPU would recompile for nothing).
ISA_OFF_ENV = {"NPY_DISABLE_CPU_FEATURES": "X86_V4", "ATEN_CPU_CAPABILITY": "avx2"}
CACHE_ROWS_BYTES = 1024 * 2**10  # the floor's score block: its fastest measured (64 KiB-1 MiB tried)


# --------------------------------------------------------------------------- methods (child side)


def _inputs(shape: dict, seed: int = 0):
    import numpy as np

    rng = np.random.default_rng(seed)
    R, H, m, n, d, p = (shape[k] for k in ("R", "H", "m", "n", "d", "p"))
    return (rng.standard_normal((R, H, m, d)), rng.standard_normal((R, H, n, d)),
            rng.standard_normal((R, H, n, p)))


def _methods(threads: int, torch_too: bool = True) -> dict[str, Callable | None]:
    """name -> f(q, k, v) returning the estimate (R, H, m, p); None where unavailable (torch not
    installed, or not wanted: importing it costs a second and memory)."""
    import numpy as np

    from verify.numeric import nw

    def nw_t(q, k, v):
        nw.set_default_threads(threads)
        return nw.nw_estimate(q, k, v)

    def nw_1(q, k, v):
        previous = nw.set_default_threads(1)
        try:
            return nw.nw_estimate(q, k, v)
        finally:
            nw.set_default_threads(previous)

    def nw_np(q, k, v):
        nw.set_default_threads(threads)
        previous = nw.set_backend("numpy")
        try:
            return nw.nw_estimate(q, k, v)
        finally:
            nw.set_backend(previous)

    def naive(q, k, v):
        s = q @ k.swapaxes(-1, -2) / math.sqrt(q.shape[-1])
        w = np.exp(s - s.max(axis=-1, keepdims=True))
        return (w / w.sum(axis=-1, keepdims=True)) @ v

    def loop(q, k, v):
        out = np.empty(q.shape[:-1] + (v.shape[-1],))
        for r in range(q.shape[0]):
            for h in range(q.shape[1]):
                s = q[r, h] @ k[r, h].T / math.sqrt(q.shape[-1])
                w = np.exp(s - s.max(axis=-1, keepdims=True))
                out[r, h] = (w / w.sum(axis=-1, keepdims=True)) @ v[r, h]
        return out

    def make_floor(exp: Callable[[Any], None]) -> Callable:
        def floor(q, k, v):
            # exp over every score and the two products, in cache-sized blocks, nothing else
            # (no shift, no division), the (r, h) pairs shared by T threads (numpy, BLAS and the
            # kernel release the GIL): returns [sum_j e_ij v_j, sum_j e_ij], divided untimed.
            n = k.shape[-2]
            c = max(1, min(q.shape[-2], CACHE_ROWS_BYTES // (8 * n)))
            if nw.BLAS_MAY_THREAD:  # keep each BLAS call on one thread, as nw does
                c = max(1, min(c, (nw.BLAS_SINGLE_THREAD_MNK - 1) // (n * max(q.shape[-1], v.shape[-1] + 1))))
            qs = q / math.sqrt(q.shape[-1])
            v1 = np.concatenate([v, np.ones(v.shape[:-1] + (1,))], axis=-1)
            acc = np.empty(q.shape[:-1] + (v1.shape[-1],))
            pairs = [(r, h) for r in range(q.shape[0]) for h in range(q.shape[1])]

            def part(t: int) -> None:
                S = np.empty((c, n))
                for r, h in pairs[t::threads]:
                    kT = k[r, h].T
                    for s0 in range(0, q.shape[-2], c):
                        blk = S[: min(c, q.shape[-2] - s0)]
                        np.matmul(qs[r, h, s0:s0 + c], kT, out=blk)
                        exp(blk)
                        np.matmul(blk, v1[r, h], out=acc[r, h, s0:s0 + c])

            if threads == 1:
                part(0)
            else:
                with ThreadPoolExecutor(threads) as pool:
                    list(pool.map(part, range(threads)))
            return acc

        floor.finish = lambda acc: acc[..., :-1] / acc[..., -1:]  # type: ignore[attr-defined]
        return floor

    floor = make_floor(lambda blk: np.exp(blk, out=blk))
    K = nw._kernel()
    floor_kernel = None if K is None else make_floor(lambda blk: K.exp_array(blk.reshape(-1), blk.reshape(-1)))
    try:
        if not torch_too:
            raise ImportError
        import torch
    except ImportError:
        sdpa = None
    else:
        def sdpa(q, k, v):
            torch.set_num_threads(threads)
            return torch.nn.functional.scaled_dot_product_attention(*map(torch.from_numpy, (q, k, v))).numpy()
    return {"nw": nw_t, "nw_1thread": nw_1, "nw_numpy": nw_np, "torch": sdpa, "naive": naive, "loop": loop,
            "floor": floor, "floor_kernel": floor_kernel}


def _log(msg: str) -> None:
    print(f"[bench] {msg}", file=sys.stderr, flush=True)


#: What the AVX-512-off child times: the methods of the targets (the numpy references run once).
ISA_OFF_METHODS = ("nw", "nw_1thread", "nw_numpy", "torch", "floor", "floor_kernel")


def _time_forward(shape: dict, repeats: int, threads: int, only: tuple | None = None) -> dict:
    import numpy as np

    methods = _methods(threads)
    if only is not None:
        methods = {m: (f if m in only else None) for m, f in methods.items()}
    q, k, v = _inputs(shape)
    tiny = _inputs(dict(shape, R=1, H=2, m=8, n=64))
    for f in methods.values():  # first-call costs (imports, thread pool, kernels) off the clock
        if f is not None:
            f(*tiny)
    names = [m for m in METHODS if methods[m] is not None]
    times: dict[str, list[float]] = {m: [] for m in names}
    outs: dict[str, Any] = {}
    ref = None
    for rnd in range(repeats):
        order = names[rnd % len(names):] + names[: rnd % len(names)]
        for name in order:
            t0 = time.perf_counter()
            out = methods[name](q, k, v)
            times[name].append(time.perf_counter() - t0)
            if rnd == 0:
                out = getattr(methods[name], "finish", lambda a: a)(out)
                if name == "nw":
                    ref = out
                outs[name] = out
        _log(f"{shape} round {rnd + 1}/{repeats}: " + ", ".join(f"{m} {times[m][-1]:.2f}s" for m in names))
    scale = float(np.max(np.abs(ref)))
    res: dict[str, Any] = {}
    for name in METHODS:
        if methods[name] is None:
            res[name] = {"status": "not timed here (see the first table)" if only is not None and name not in only
                         else "torch not installed" if name == "torch" else "numba not installed"}
            continue
        med = float(np.median(times[name]))
        res[name] = {"status": "ok", "times_s": times[name], "median_s": med,
                     "ns_per_score": med / _scores(shape) * 1e9,
                     "max_rel_diff_vs_nw": float(np.max(np.abs(outs[name] - ref))) / scale,
                     # this method's time / nw's in the same round (back to back: similar load)
                     "paired_ratio_to_nw": float(np.median(np.array(times[name]) / np.array(times["nw"])))}
    return res


def _scores(shape: dict) -> int:
    return shape["R"] * shape["H"] * shape["m"] * shape["n"]


def _profile(shape: dict) -> dict:
    """nw_estimate's per-block arithmetic (softmax kernel, bounded scores: no shift), one
    thread, stage by stage; then, apart, what the row-maximum shift would add."""
    import numpy as np

    from verify.numeric import nw

    q, k, v = _inputs(shape)
    n, p = shape["n"], shape["p"]
    c = max(1, min(shape["m"], nw.CACHE_BLOCK_BYTES // (8 * n),
                   (nw.BLAS_SINGLE_THREAD_MNK - 1) // (n * max(shape["d"], p + 1)) if nw.BLAS_MAY_THREAD else n))
    names = ("scale queries", "scores matmul", "score bound", "exp", "values matmul", "divide, + r",
             "shift: row max", "shift: subtract")
    stages = dict.fromkeys(names, 0.0)
    S, spare = np.empty((c, n)), np.empty((c, n))
    v1 = np.concatenate([v, np.ones(v.shape[:-1] + (1,))], axis=-1)
    out = np.empty(q.shape[:-1] + (p,))
    factor = 1 / math.sqrt(shape["d"])
    t_all = time.perf_counter()
    for r in range(shape["R"]):
        for h in range(shape["H"]):
            kT = k[r, h].T
            for s0 in range(0, shape["m"], c):
                blk, sp = S[: min(c, shape["m"] - s0)], spare[: min(c, shape["m"] - s0)]
                t = [time.perf_counter()]
                qs = q[r, h, s0:s0 + c] * factor; t.append(time.perf_counter())
                np.matmul(qs, kT, out=blk); t.append(time.perf_counter())
                math.sqrt(float(np.max(np.einsum("...d,...d->...", qs, qs)))); t.append(time.perf_counter())
                top = np.max(blk, axis=-1, keepdims=True); t.append(time.perf_counter())   # shift only
                np.subtract(blk, top, out=sp); t.append(time.perf_counter())               # shift only
                np.exp(blk, out=blk); t.append(time.perf_counter())
                acc = blk @ v1[r, h]; t.append(time.perf_counter())
                o = out[r, h, s0:s0 + c]
                np.divide(acc[:, :p], acc[:, p:], out=o)
                o += 0.5; t.append(time.perf_counter())
                order = ("scale queries", "scores matmul", "score bound", "shift: row max", "shift: subtract", "exp",
                         "values matmul", "divide, + r")
                for name, a, b in zip(order, t, t[1:]):
                    stages[name] += b - a
    total = time.perf_counter() - t_all
    x = -np.random.default_rng(1).random(32768) * 30
    per = {}
    for dt in (np.float64, np.float32):
        xs, reps = x.astype(dt), 200
        o = np.empty_like(xs)
        t0 = time.perf_counter()
        for _ in range(reps):
            np.exp(xs, out=o)
        per[np.dtype(dt).name] = (time.perf_counter() - t0) / (reps * x.size) * 1e9
    shift = stages["shift: row max"] + stages["shift: subtract"]
    return {"shape": shape, "rows_per_block": c, "stages_s": stages, "total_s": total - shift,
            "other_s": total - sum(stages.values()), "exp_ns_per_element": per}


def _block_sweep(shape: dict, kib: tuple, repeats: int, threads: int) -> dict:
    """nw_estimate's time for several score-block sizes (CACHE_BLOCK_BYTES), interleaved."""
    import numpy as np

    from verify.numeric import nw

    q, k, v = _inputs(shape)
    saved = nw.CACHE_BLOCK_BYTES, nw.set_default_threads(threads), nw.set_backend("numpy")  # the kernel keeps no blocks
    times: dict[int, list[float]] = {b: [] for b in kib}
    try:
        for rnd in range(repeats):
            for b in kib[rnd % len(kib):] + kib[: rnd % len(kib)]:
                nw.CACHE_BLOCK_BYTES = b * 2**10
                t0 = time.perf_counter()
                nw.nw_estimate(q, k, v)
                times[b].append(time.perf_counter() - t0)
    finally:
        nw.CACHE_BLOCK_BYTES = saved[0]
        nw.set_default_threads(saved[1])
        nw.set_backend(saved[2])
    n, width = shape["n"], max(shape["d"], shape["p"] + 1)
    guard = (nw.BLAS_SINGLE_THREAD_MNK - 1) // (n * width) if nw.BLAS_MAY_THREAD else n
    rows = {b: max(1, min(shape["m"], b * 2**10 // (8 * n), guard)) for b in kib}
    _log("block sizes: " + ", ".join(f"{b} KiB {np.median(times[b]):.2f}s" for b in kib))
    return {"shape": shape, "default_kib": saved[0] // 2**10,
            "sizes": [{"kib": b, "rows": rows[b], "times_s": times[b], "median_s": float(np.median(times[b]))}
                      for b in kib]}


def _scaling(base: dict, factors: tuple, repeats: int, threads: int) -> dict:
    import numpy as np

    from verify.numeric import nw

    nw.set_default_threads(threads)
    out = {}
    for axis in ("n", "m", "H", "R"):
        sizes, meds = [], []
        for f in factors:
            shape = dict(base, **{axis: base[axis] * f})
            q, k, v = _inputs(shape)
            nw.nw_estimate(q[:1, :1], k[:1, :1], v[:1, :1])
            ts = []
            for _ in range(repeats):
                t0 = time.perf_counter()
                nw.nw_estimate(q, k, v)
                ts.append(time.perf_counter() - t0)
            sizes.append(shape[axis])
            meds.append(float(np.median(ts)))
        slope = float(np.polyfit(np.log(sizes), np.log(meds), 1)[0])
        out[axis] = {"values": sizes, "median_s": meds, "slope": slope}
    _log("scaling: " + ", ".join(f"{a} {out[a]['slope']:.2f}" for a in out))
    return {"base": base, "axes": out}


def _engine(cfg: dict) -> dict:
    """Exact conditional covariance vs noise simulation on one fixed design."""
    import numpy as np

    from verify.numeric.dgp import head_projections, make_dgp
    from verify.numeric.engine import decompose, noise_simulation_check

    n, m, H, d, d_k, seed = cfg["n"], cfg["m"], cfg["H"], cfg["d"], cfg["d_k"], 0
    dgp = make_dgp("single-index", d=d, sigma=0.5)
    W = head_projections("random", H, d, d_k, rng=1)
    decompose(dgp, W, n=16, R=1, m=4, seed=seed)  # warm-up
    ts = []
    for _ in range(3):
        t0 = time.perf_counter()
        dec = decompose(dgp, W, n=n, R=1, m=m, seed=seed, method="exact")
        ts.append(time.perf_counter() - t0)
    t_exact = float(np.median(ts))
    # long-double reference from the same design (replicate 0's, as documented in verify.numeric.engine)
    L = np.longdouble
    X = dgp.sample_x(np.random.default_rng(np.random.SeedSequence(seed).spawn(1)[0]), (n,)).astype(L)
    Wl = W.astype(L)
    w = []
    for h in range(H):
        s = (dec.x_eval.astype(L) @ Wl[h]) @ (X @ Wl[h]).T / np.sqrt(L(d_k))
        e = np.exp(s - s.max(axis=1, keepdims=True))
        w.append(e / e.sum(axis=1, keepdims=True))
    w = np.stack(w)
    C_ref = L(dgp.sigma) ** 2 * np.einsum("hmi,gmi->hgm", w, w)
    cscale = float(np.max(np.abs(C_ref)))
    err_exact = float(np.max(np.abs(dec.head_cov.astype(L) - C_ref))) / cscale
    sims = []
    for N in cfg["N"]:
        t0 = time.perf_counter()
        chk = noise_simulation_check(dgp, W, n=n, m=m, N=N, seed=seed)
        dt = time.perf_counter() - t0
        if not np.array_equal(chk.design, X.astype(np.float64)):
            raise AssertionError("noise_simulation_check used another design than decompose's replicate 0")
        sims.append({"N": N, "time_s": dt, "rel_se_median": float(np.median(chk.cov_se)) / cscale,
                     "rel_se_max": float(np.max(chk.cov_se)) / cscale,
                     "rel_err_max": float(np.max(np.abs(chk.cov.astype(L) - C_ref))) / cscale})
    # the whole engine at equal replicates: exact (no noise drawn) vs simulate (noise drawn)
    R = cfg.get("R", 16)
    eng = {}
    for method in ("exact", "simulate", "exact", "simulate"):
        t0 = time.perf_counter()
        decompose(dgp, W, n=n, R=R, m=m, seed=seed, method=method)
        eng.setdefault(method, []).append(time.perf_counter() - t0)
    Ns = np.array([s["N"] for s in sims], float)
    tt = np.array([s["time_s"] for s in sims])
    b, t0 = np.polyfit(Ns, tt, 1) if len(Ns) > 1 else (tt[0] / Ns[0], 0.0)
    b, t0 = max(float(b), 1e-12), max(float(t0), 0.0)
    a = float(np.median([s["rel_se_max"] * math.sqrt(s["N"]) for s in sims]))  # rel SE ~ a / sqrt(N)
    N_match = (a / max(err_exact, 1e-300)) ** 2
    N_1s = max(1.0, (1.0 - t0) / b)
    _log(f"engine: exact {t_exact:.3f}s err {err_exact:.1e}; simulation SE {a:.2f}/sqrt(N)")
    return {"config": cfg, "exact": {"time_s": t_exact, "rel_err_vs_longdouble": err_exact},
            "simulate": sims, "fit": {"rel_se_max_times_sqrtN": a, "seconds_per_draw": b, "fixed_s": t0},
            "decompose": {"R": R, "exact_s": min(eng["exact"]), "simulate_s": min(eng["simulate"])},
            "simulation_draws_to_match_exact": N_match, "simulation_seconds_to_match_exact": t0 + b * N_match,
            "simulation_rel_se_in_1s": a / math.sqrt(N_1s),
            "simulation_seconds_for_rel_se_1e-3": t0 + b * (a / 1e-3) ** 2}


def _nw_blas_cap() -> int | None:
    from verify.numeric import nw

    return nw.BLAS_SINGLE_THREAD_MNK if nw.BLAS_MAY_THREAD else None


def _machine(threads: int, blas_threads: int) -> dict:
    import numpy as np

    try:
        import torch
        tv = torch.__version__
    except ImportError:
        tv = None
    try:
        blas = np.show_config(mode="dicts")["Build Dependencies"]["blas"]
        blas = f"{blas.get('name')} {blas.get('version')}"
    except Exception:  # noqa: BLE001 - informational only
        blas = "unknown"
    model = ""
    try:
        model = next(l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name"))
    except (OSError, StopIteration):
        pass
    try:
        from numpy._core._multiarray_umath import __cpu_features__ as feats
        # numpy reports the CPU's features even where NPY_DISABLE_CPU_FEATURES switched its
        # AVX-512 (X86_V4) dispatch off; the paths numpy takes need both.
        disabled = set(os.environ.get("NPY_DISABLE_CPU_FEATURES", "").replace(",", " ").split())
        avx512f = bool(feats.get("AVX512F")) and not disabled & {"X86_V4", "AVX512F"}
    except ImportError:
        avx512f = None
    from verify.numeric import nw
    from verify.numeric.nw import _usable_cpus

    try:
        import torch
        torch_isa = torch.backends.cpu.get_cpu_capability()
    except (ImportError, AttributeError):
        torch_isa = None
    K = nw._kernel()
    return {"cpu_count": os.cpu_count(), "usable_cpus": _usable_cpus(), "cpu_model": model,
            "avx512f": avx512f, "cpu_avx512f": _cpu_has_avx512f(), "torch_cpu_capability": torch_isa,
            "nw_backend": nw.get_backend(), "numba": None if K is None else importlib.metadata.version("numba"),
            "isa_env": {k: os.environ.get(k) for k in (*ISA_OFF_ENV, "NUMBA_CPU_NAME")},
            "python": platform.python_version(), "platform": platform.platform(), "numpy": np.__version__,
            "torch": tv, "blas": blas, "OPENBLAS_NUM_THREADS": os.environ.get("OPENBLAS_NUM_THREADS"),
            "blas_threads": blas_threads, "nw_threads": threads, "torch_threads": threads,
            "nw_blas_product_cap": _nw_blas_cap(),
            "loadavg_start": list(os.getloadavg())}


def _cpu_has_avx512f() -> bool | None:
    """Whether the CPU itself has AVX512F (/proc/cpuinfo), whatever numpy is told to use."""
    try:
        flags = next(l for l in open("/proc/cpuinfo") if l.startswith("flags"))
    except (OSError, StopIteration):
        return None
    return "avx512f" in flags.split()


def _child_timing(cfg: dict) -> dict:
    prof = cfg["profile"]
    res = {"machine": _machine(cfg["threads"], cfg["blas_threads"]), "forward": []}
    for label, shape, note in prof["forward"]:
        _log(f"forward {label} {shape}" + (" (AVX-512 off)" if cfg.get("forward_only") else ""))
        res["forward"].append({"label": label, "shape": shape, "scores": _scores(shape), "note": note,
                               "methods": _time_forward(shape, cfg["repeats"], cfg["threads"],
                                                        ISA_OFF_METHODS if cfg.get("forward_only") else None)})
    res["training"] = _training(prof["training"], cfg["repeats"])
    if cfg.get("forward_only"):
        res["machine"]["loadavg_end"] = list(os.getloadavg())
        return res
    res["breakdown"] = _profile(prof["forward"][0][1])
    res["block_sweep"] = _block_sweep(prof["block_sweep"][0], tuple(prof["block_sweep"][1]), cfg["repeats"],
                                      cfg["threads"])
    base, factors = prof["scaling"]
    res["scaling"] = _scaling(base, tuple(factors), cfg["repeats"], cfg["threads"])
    res["engine"] = _engine(prof["engine"])
    res["machine"]["loadavg_end"] = list(os.getloadavg())
    return res


def _training(spec: dict, repeats: int) -> dict:
    """CPU seconds per run and step of C9's training (a block target, free weights), the compiled
    path and the numpy one in interleaved rounds: medians, and the median of the paired ratios."""
    from verify.claims.c9.layer import LayerSetting, train_layers
    from verify.experiments.training import TrainSetting, train_many
    from verify.numeric import nw

    def nw_heads(steps: int) -> None:
        train_many([TrainSetting(dgp="block", d=8, H=4, d_k=2, init="gaussian", n=spec["n"], m=2, sigma=0.1,
                                 steps=steps, lr=0.01, seeds=spec["runs"], seed=0, record_every=steps,
                                 queries=spec["q"], learn_alpha=True)])

    def layer(steps: int) -> None:
        train_layers([LayerSetting(dgp="block", design="normal", d=8, H=4, d_k=2, d_v=2, n=spec["layer_n"],
                                   contexts=spec["C"], steps=steps, lr=0.01, seeds=spec["runs"], seed=0,
                                   eval_contexts=2, record_every=steps)])

    out = {"spec": spec, "backend": nw.get_backend()}
    for name, run in (("NW heads", nw_heads), ("attention layer", layer)):
        _log(f"training: {name}")
        times: dict[str, list[float]] = {"numba": [], "numpy": []}
        for backend in times:                          # warm: compile or load the kernels
            nw.set_backend(backend)
            run(2)
        for _ in range(repeats):
            for backend in times:
                nw.set_backend(backend)
                t0 = time.process_time()
                run(spec["steps"])
                times[backend].append((time.process_time() - t0) / (spec["runs"] * spec["steps"]))
        nw.set_backend("auto")
        ratios = sorted(b / a for a, b in zip(times["numba"], times["numpy"]))
        out[name] = {"compiled_us": 1e6 * sorted(times["numba"])[repeats // 2],
                     "numpy_us": 1e6 * sorted(times["numpy"])[repeats // 2], "ratio": ratios[repeats // 2]}
    return out


def _training_lines(tr: dict, setting: str) -> list[str]:
    s = tr["spec"]
    return [f"C9 training per run and step, {setting} (NW heads: n = {s['n']}, q = {s['q']}; layer: {s['C']} "
            f"contexts of n = {s['layer_n']}; {s['runs']} runs x {s['steps']} steps, CPU time):"] + [
        f"  {name:16s} compiled {tr[name]['compiled_us']:7.1f} us, numpy path {tr[name]['numpy_us']:7.1f} us: "
        f"{tr[name]['ratio']:.1f}x" for name in ("NW heads", "attention layer")]


def _child_compile(cfg: dict) -> dict:
    """The kernel's first calls in this process (numba's import, then compiling or loading each
    kernel) against second calls of the same size."""

    t0 = time.perf_counter()
    from verify.numeric import nw

    K = nw._kernel()
    if K is None:
        return {"status": "numba not installed"}
    t_import = time.perf_counter() - t0
    q, k, v = (a[0, 0] for a in _inputs(dict(R=1, H=1, m=16, n=256, d=8, p=4)))
    out = {"status": "ok", "import_s": t_import, "cache_dir": str(K.cache_dir())}
    for name, call in (("estimate", lambda: nw.nw_estimate(q, k, v)),
                       ("weights", lambda: nw.nw_weights(q, k, kernel="gaussian", bandwidth=1.0))):
        t0 = time.perf_counter()
        call()
        first = time.perf_counter() - t0
        t0 = time.perf_counter()
        call()
        out[name] = {"first_s": first, "second_s": time.perf_counter() - t0}
    disp = (K.estimate_rows, K.weights_rows)
    out["cache_hits"] = int(sum(sum(f.stats.cache_hits.values()) for f in disp))
    out["cache_misses"] = int(sum(sum(f.stats.cache_misses.values()) for f in disp))
    out["first_calls_s"] = t_import + out["estimate"]["first_s"] + out["weights"]["first_s"]
    return out


def _vm(field: str) -> int:
    for line in open("/proc/self/status"):
        if line.startswith(field + ":"):
            return int(line.split()[1]) * 1024
    raise OSError(f"{field} not in /proc/self/status")


def _child_memory(cfg: dict) -> dict:
    """One method once: peak resident set and tracemalloc peak beyond the inputs."""
    import tracemalloc

    import numpy as np

    from verify.numeric import nw

    shape, method = cfg["shape"], cfg["method"]
    f = _methods(cfg["threads"], torch_too=method == "torch")[method]
    if f is None:
        return {"status": "torch not installed" if method == "torch" else "numba not installed"}
    q, k, v = _inputs(shape)
    f(*_inputs(dict(shape, R=1, H=2, m=8, n=64)))  # libraries and thread pool loaded first
    if cfg.get("max_memory"):
        f = lambda q, k, v: nw.nw_estimate(q, k, v, max_memory=cfg["max_memory"])  # noqa: E731
    try:
        with open("/proc/self/clear_refs", "w") as fh:
            fh.write("5")  # reset the peak resident set (VmHWM) to the current one
        rss_how = "VmHWM after reset"
    except OSError:
        rss_how = "ru_maxrss (not reset: may include earlier peaks)"
    before = _vm("VmRSS")
    traced = method != "torch"  # torch's allocator bypasses tracemalloc
    if traced:
        tracemalloc.start()
    out = f(q, k, v)
    peak_traced = tracemalloc.get_traced_memory()[1] if traced else None
    if traced:
        tracemalloc.stop()
    try:
        peak = _vm("VmHWM")
    except OSError:
        import resource
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    return {"status": "ok", "rss_method": rss_how, "extra_rss_bytes": max(0, peak - before),
            "tracemalloc_peak_bytes": peak_traced, "result_bytes": int(np.asarray(out).nbytes),
            "cap_bytes": cfg.get("max_memory") or nw.get_default_max_memory(),
            "score_matrix_bytes": 8 * _scores(shape)}


# --------------------------------------------------------------------------- parent side


def _child_env(blas_threads: int, extra: dict | None = None) -> tuple[str, dict]:
    root = str(Path(__file__).resolve().parents[1])
    threads = str(blas_threads)
    env = dict(os.environ, OPENBLAS_NUM_THREADS=threads, OMP_NUM_THREADS=threads, MKL_NUM_THREADS=threads,
               PYTHONPATH=os.pathsep.join(filter(None, [root, os.environ.get("PYTHONPATH")])), **(extra or {}))
    return root, env


def _isa_off_env() -> dict:
    env = dict(ISA_OFF_ENV)
    if _cpu_has_avx512f():
        env["NUMBA_CPU_NAME"] = "haswell"   # AVX2 and FMA, no AVX-512
    return env


def _children(kind: str, cfgs: list[dict], blas_threads: int, parallel: int = 1,
              env_extra: dict | None = None) -> list[dict]:
    """Run ``python benchmarks/bench.py --child KIND`` once per config, ``parallel`` at a time."""
    root, env = _child_env(blas_threads, env_extra)
    results: list[dict | None] = [None] * len(cfgs)
    running: list[tuple[int, subprocess.Popen]] = []
    todo = list(enumerate(cfgs))
    while todo or running:
        while todo and len(running) < parallel:
            i, cfg = todo.pop(0)
            proc = subprocess.Popen([sys.executable, str(Path(__file__).resolve()), "--child", kind], stdin=subprocess.PIPE,
                                    stdout=subprocess.PIPE, stderr=None, text=True, env=env, cwd=root)
            proc.stdin.write(json.dumps(cfg))
            proc.stdin.close()
            running.append((i, proc))
        i, proc = running.pop(0)
        out = proc.stdout.read()
        if proc.wait() != 0:
            for _, other in running:
                other.kill()
            raise RuntimeError(f"benchmark child {kind!r} failed with exit status {proc.returncode}")
        results[i] = json.loads(out)
    return results  # type: ignore[return-value]


def run_benchmark(profile: dict | str = "full", *, repeats: int = 3, threads: int | None = None,
                  blas_threads: int = 1, json_path: str | os.PathLike | None = "bench.json",
                  printer: Callable[[str], None] | None = print) -> dict:
    """Run every part of the benchmark (sizes from ``profile``: a name in PROFILES or a dict of
    the same form), print the tables and write the JSON (unless ``json_path`` is None)."""
    from verify.numeric.nw import _usable_cpus

    t_start = time.perf_counter()
    name = profile if isinstance(profile, str) else "custom"
    prof = PROFILES[profile] if isinstance(profile, str) else profile
    threads = threads or _usable_cpus()
    cfg = {"profile": prof, "repeats": repeats, "threads": threads, "blas_threads": blas_threads}
    res = {"schema": 1, "sizes": dict(prof, name=name), "started": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
           "settings": {"repeats": repeats, "threads": threads, "blas_threads": blas_threads}}
    res.update(_children("timing", [cfg], blas_threads)[0])
    _log("forward timings again with AVX-512 off: " + " ".join(f"{k}={v}" for k, v in _isa_off_env().items()))
    off = _children("timing", [dict(cfg, forward_only=True)], blas_threads, env_extra=_isa_off_env())[0]
    res["isa_off"] = {"env": _isa_off_env(), **off}
    _log("compile time: a fresh cache, then the same cache")
    import tempfile

    with tempfile.TemporaryDirectory(prefix="mha-nw-bench-cache-") as cache:
        cold, warm = (_children("compile", [{}], blas_threads, env_extra={"MHA_NW_CACHE_DIR": cache})[0]
                      for _ in range(2))
    res["compile"] = {"cold": cold, "warm": warm}
    shape1 = prof["forward"][0][1]
    mem: dict[str, Any] = {
        "how": "extra_rss_bytes: peak resident set (VmHWM, reset after the inputs exist) minus the resident set "
               "before the call, one process per method (two processes at a time: each has its own peak); "
               "tracemalloc_peak_bytes: numpy's traced allocations (not torch's)",
        "forward_shape": shape1}
    _log("memory: one process per method and size")
    jobs = [{"shape": shape1, "method": m, "threads": threads} for m in METHODS]
    series = [(m, n, cap) for m, n in prof["memory_series"] for cap in (None, prof["small_cap"])]
    jobs += [{"shape": dict(R=1, H=1, m=m, n=n, d=shape1["d"], p=shape1["p"]), "method": "nw", "threads": threads,
              "max_memory": cap} for m, n, cap in series]
    got = _children("memory", jobs, blas_threads, parallel=2)
    mem["forward"] = dict(zip(METHODS, got[:len(METHODS)]))
    mem["series"] = [dict(r, m=m, n=n) for r, (m, n, _) in zip(got[len(METHODS):], series)]
    res["memory"] = mem
    res["elapsed_s"] = time.perf_counter() - t_start
    res["targets"] = _targets(res)
    if json_path is not None:
        write_json(json_path, res, indent=1)
        res["json_path"] = str(json_path)
    if printer is not None:
        printer(format_report(res))
    return res


def _isa_name(res: dict) -> str:
    return "AVX-512 on" if res["machine"]["avx512f"] else "AVX-512 absent"


def _forward_targets(forward: list[dict], setting: str) -> dict:
    """torch/nw and nw/floor for each forward shape of one instruction-set setting."""
    out = {}
    for fw in forward:
        mt = fw["methods"]
        p1 = fw["shape"]["p"] == 1
        goal = TARGETS["torch_over_nw_p1" if p1 else "torch_over_nw_pdk"]
        if mt["torch"]["status"] == "ok":
            r = mt["torch"]["paired_ratio_to_nw"]
            out[f"{setting}, {fw['label']}: torch SDPA time / nw time >= {goal:g}"] = {"value": r, "met": r >= goal}
        floors = [mt[f]["paired_ratio_to_nw"] for f in ("floor", "floor_kernel") if mt[f]["status"] == "ok"]
        r = 1 / min(floors)
        out[f"{setting}, {fw['label']}: nw time / faster floor time <= {TARGETS['nw_over_floor']}"] = {
            "value": r, "met": r <= TARGETS["nw_over_floor"]}
    return out


def _targets(res: dict) -> dict:
    """Each target with its value: speed ratios from the rounds' back-to-back pairs (median)."""
    out = _forward_targets(res["forward"], _isa_name(res))
    if "isa_off" in res:
        out.update(_forward_targets(res["isa_off"]["forward"], "AVX-512 off"))
    series = [s for s in res["memory"]["series"] if s["status"] == "ok"] + [res["memory"]["forward"]["nw"]]
    worst = max(max(s["extra_rss_bytes"], s["tracemalloc_peak_bytes"]) - s["result_bytes"] for s in series)
    worst_frac = max((max(s["extra_rss_bytes"], s["tracemalloc_peak_bytes"]) - s["result_bytes"]) / s["cap_bytes"]
                     for s in series)
    out["nw peak extra memory (RSS and traced, less the result) / cap <= 1, every size"] = {
        "value": worst_frac, "met": worst_frac <= 1, "worst_bytes": worst}
    out[f"whole benchmark under {TARGETS['budget_s']:.0f} s"] = {
        "value": res["elapsed_s"], "met": res["elapsed_s"] <= TARGETS["budget_s"]}
    return out


def _mib(b: float | None) -> str:
    return "n/a" if b is None else f"{b / 2**20:9.1f}"


def _forward_tables(forward: list[dict], T: int, setting: str) -> list[str]:
    L = []
    for fw in forward:
        s = fw["shape"]
        L.append("")
        L.append(f"[{setting}] {fw['label']}: R x H x m x n x d_k x p = "
                 f"{' x '.join(str(s[a]) for a in ('R', 'H', 'm', 'n', 'd', 'p'))} "
                 f"({fw['scores'] / 1e6:.1f}M scores)" + (f"  [{fw['note']}]" if fw["note"] else ""))
        L.append(f"  {'method':28s} {'median s':>9s} {'ns/score':>9s} {'x nw time':>9s} {'paired':>7s} "
                 f"{'max rel diff':>13s}")
        nw_t = fw["methods"]["nw"]["median_s"]
        for m in METHODS:
            r = fw["methods"][m]
            label = LABELS[m].format(T=T)
            if r["status"] != "ok":
                L.append(f"  {label:28s} {r['status']}")
                continue
            L.append(f"  {label:28s} {r['median_s']:9.3f} {r['ns_per_score']:9.2f} {r['median_s'] / nw_t:9.2f} "
                     f"{r['paired_ratio_to_nw']:7.2f} {r['max_rel_diff_vs_nw']:13.1e}")
    return L


def format_report(res: dict) -> str:
    mc, st = res["machine"], res["settings"]
    T = st["threads"]
    cpu = ("has AVX-512F" if mc["cpu_avx512f"] else "has no AVX-512 (AVX2 only)") if mc["cpu_avx512f"] is not None \
        else "AVX-512 unknown"
    L = [f"NW ensemble benchmark ({res['sizes']['name']}), float64. Machine: {mc['cpu_model']}, "
         f"{mc['usable_cpus']} usable CPUs; the CPU {cpu}; numpy {mc['numpy']} ({mc['blas']}) AVX512F in use "
         f"{mc['avx512f']}, torch {mc['torch'] or 'not installed'} (CPU capability {mc['torch_cpu_capability']}), "
         f"nw backend {mc['nw_backend']} (numba {mc['numba'] or 'not installed'})",
         f"threads: nw {T}, torch {T}, BLAS {st['blas_threads']} (OPENBLAS_NUM_THREADS={mc['OPENBLAS_NUM_THREADS']}); "
         f"load average {mc['loadavg_start'][0]:.2f} at start, {mc['loadavg_end'][0]:.2f} at end; "
         f"medians of {st['repeats']} interleaved rounds"]
    L += _forward_tables(res["forward"], T, _isa_name(res))
    if "isa_off" in res:
        off = res["isa_off"]
        L.append("")
        L.append("Again with AVX-512 switched off (" + ", ".join(f"{k}={v}" for k, v in off["env"].items()) + "): "
                 + ("the CPU has no AVX-512, so both settings run the same instructions (the two tables differ "
                    "by load and noise only)" if not mc["cpu_avx512f"] else "what an AVX2-only CPU runs")
                 + f"; numpy AVX512F in use {off['machine']['avx512f']}, torch capability "
                   f"{off['machine']['torch_cpu_capability']}")
        L += _forward_tables(off["forward"], T, "AVX-512 off")
    if "compile" in res:
        L.append("")
        parts = []
        for name in ("cold", "warm"):
            c = res["compile"][name]
            if c["status"] != "ok":
                parts.append(f"{name}: {c['status']}")
                continue
            parts.append(f"{name} ({c['cache_misses']} compiled, {c['cache_hits']} loaded): import numba "
                         f"{c['import_s']:.2f} s, first nw_estimate {c['estimate']['first_s']:.2f} s, first "
                         f"nw_weights {c['weights']['first_s']:.2f} s (second calls {c['estimate']['second_s'] * 1e3:.1f}"
                         f" and {c['weights']['second_s'] * 1e3:.1f} ms)")
        L.append("Kernel compile time (fresh process; cache " + (res["compile"]["cold"].get("cache_dir") or "-")
                 + " emptied first): " + "; ".join(parts))
    L.append("")
    L += _training_lines(res["training"], _isa_name(res))
    if "isa_off" in res:
        L += _training_lines(res["isa_off"]["training"], "AVX-512 off")
    p = res["breakdown"]
    tot = p["total_s"]
    L.append("")
    L.append(f"Profile of the numpy path's arithmetic on {res['forward'][0]['label']}, one thread, "
             f"{p['rows_per_block']} rows per block ({tot:.2f} s without the shift):")
    L.append("  " + ", ".join(f"{k} {v:.3f} s ({100 * v / tot:.0f}%)" for k, v in p["stages_s"].items()
                              if not k.startswith("shift")) + f", Python/loop {p['other_s']:.3f} s")
    L.append("  the row-maximum shift, used only for scores beyond FAST_EXP_BOUND, would add: "
             + ", ".join(f"{k[7:]} {v:.3f} s" for k, v in p["stages_s"].items() if k.startswith("shift")))
    e = p["exp_ns_per_element"]
    L.append(f"  numpy exp: float64 {e['float64']:.2f} ns/element, float32 {e['float32']:.2f} ns/element "
             f"(float64 exp is SIMD only with AVX512F: {mc['avx512f']})")
    for fw in res["forward"]:
        tr = fw["methods"]["torch"]
        if tr["status"] == "ok":
            goal = TARGETS["torch_over_nw_p1" if fw["shape"]["p"] == 1 else "torch_over_nw_pdk"]
            need = tr["ns_per_score"] / goal
            L.append(f"  {fw['label']}: {goal:g}x torch means {need:.2f} ns/score; numpy's float64 exp alone, split "
                     f"perfectly over {T} threads, costs {e['float64'] / T:.2f} ns/score ({e['float64'] / T / need:.1f}x "
                     "that): the numpy path cannot reach it where numpy's exp is scalar")
    bs = res["block_sweep"]
    L.append("")
    L.append(f"Numpy path's score-block size (CACHE_BLOCK_BYTES, default {bs['default_kib']} KiB) on "
             f"{'x'.join(str(bs['shape'][k]) for k in ('R', 'H', 'm', 'n'))}: "
             + ", ".join(f"{b['kib']} KiB ({b['rows']} rows) {b['median_s']:.3f} s" for b in bs["sizes"]))
    mem = res["memory"]
    L.append("")
    L.append("Peak memory beyond the inputs (MiB): " + mem["how"])
    L.append(f"  {'method':28s} {'RSS':>9s} {'traced':>9s}  "
             f"(scores alone would be {_mib(8 * res['forward'][0]['scores']).strip()})")
    for m in METHODS:
        r = mem["forward"][m]
        if r["status"] != "ok":
            L.append(f"  {LABELS[m].format(T=T):28s} {r['status']}")
            continue
        L.append(f"  {LABELS[m].format(T=T):28s} {_mib(r['extra_rss_bytes'])} {_mib(r['tracemalloc_peak_bytes'])}")
    L.append("  nw_estimate as m*n grows (R = H = 1): m, n, m*n*8 MiB, cap MiB, RSS, traced, result MiB")
    for r in mem["series"]:
        L.append(f"    {r['m']:6d} {r['n']:6d} {_mib(r['score_matrix_bytes'])} {_mib(r['cap_bytes'])} "
                 f"{_mib(r['extra_rss_bytes'])} {_mib(r['tracemalloc_peak_bytes'])} {_mib(r['result_bytes'])}")
    sc = res["scaling"]
    L.append("")
    L.append(f"Scaling of nw_estimate from {sc['base']} (x1, x2, x4): log-log slopes "
             + ", ".join(f"{a} {v['slope']:.2f}" for a, v in sc["axes"].items()))
    en = res["engine"]
    c = en["config"]
    L.append("")
    L.append(f"Engine, one fixed design (n={c['n']}, m={c['m']}, H={c['H']}, d={c['d']}, d_k={c['d_k']}): "
             "head covariances")
    L.append(f"  exact (decompose R=1): {en['exact']['time_s']:.3f} s, max rel error vs long double "
             f"{en['exact']['rel_err_vs_longdouble']:.1e}")
    for s in en["simulate"]:
        L.append(f"  simulation N={s['N']:6d}: {s['time_s']:.3f} s, rel SE max {s['rel_se_max']:.1e} "
                 f"(median {s['rel_se_median']:.1e}), max rel error {s['rel_err_max']:.1e}")
    de = en["decompose"]
    L.append(f"  decompose with R={de['R']} designs: exact {de['exact_s']:.3f} s, simulate {de['simulate_s']:.3f} s "
             "(min of 2; exact also removes the noise's sampling error)")
    L.append(f"  simulation reaches rel SE {en['simulation_rel_se_in_1s']:.1e} in 1 s; 1e-3 needs "
             f"{en['simulation_seconds_for_rel_se_1e-3']:.3g} s; the exact path's error needs "
             f"{en['simulation_draws_to_match_exact']:.2g} draws = {en['simulation_seconds_to_match_exact']:.2g} s")
    L.append("")
    L.append("Targets (speed: median over the rounds of the back-to-back time ratio, this run):")
    for k, v in res["targets"].items():
        L.append(f"  {'met   ' if v['met'] else 'MISSED'} {k}: {v['value']:.3g}")
    if any(not v["met"] for k, v in res["targets"].items() if "torch" in k):
        L.append("  A torch target missed: see the profile (numpy's float64 exp is scalar libm code without "
                 "AVX512F) and, with the kernel, the floors (what exp and the products alone cost).")
    L.append(f"Total {res['elapsed_s']:.0f} s" + (f"; JSON: {res['json_path']}" if "json_path" in res else ""))
    return "\n".join(L)


def cli_bench(argv: list[str]) -> int:
    """The benchmark's command line: exit 0, or 2 with one ``error: ...`` line for bad arguments."""
    from verify._validate import error_line
    from verify.errors import VerifyError

    try:
        return _cli_bench(argv)
    except VerifyError as exc:
        print(error_line(exc), file=sys.stderr)
        return 2


#: The most interleaved rounds (``--repeats``): each round times every method once; 3 are the
#: default, 100 already take hours at the full sizes.
MAX_REPEATS = 100
#: The most threads (``--jobs``, ``--blas-threads``), as ``python -m verify --jobs`` allows.
MAX_THREADS = 64


def _cli_bench(argv: list[str]) -> int:
    import argparse

    from verify._validate import ArgParser, exclusive, positive_int, writable_file

    p = ArgParser(prog="python benchmarks/bench.py", description=__doc__.split("\n\n")[0] + " Every method runs in "
                  "child processes; the figures are printed as tables and written to --json FILE.",
                  epilog="examples:\n  python benchmarks/bench.py --quick --json bench-quick.json\n"
                         "  python benchmarks/bench.py --repeats 5 --jobs 2",
                  formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--quick", action="store_true", help="smaller sizes, ~20-30 s (default: the full sizes, ~3 min)")
    p.add_argument("--json", default="bench.json", metavar="FILE",
                   help="where to write the figures (default bench.json)")
    p.add_argument("--repeats", type=int, default=3, metavar="N",
                   help=f"interleaved rounds per method, 1..{MAX_REPEATS} (default 3)")
    p.add_argument("--jobs", "-j", type=int, default=None, metavar="T",
                   help=f"nw_estimate and torch threads, 1..{MAX_THREADS} (default: usable CPUs)")
    p.add_argument("--threads", type=int, default=None, dest="old_threads", help=argparse.SUPPRESS)  # old --jobs
    p.add_argument("--blas-threads", type=int, default=1, metavar="B",
                   help=f"OPENBLAS/OMP/MKL_NUM_THREADS of the children, 1..{MAX_THREADS} (default 1)")
    a = p.parse_args(argv)
    exclusive(("--jobs", a.jobs), ("--threads", a.old_threads))
    threads = a.jobs if a.jobs is not None else a.old_threads
    flag = "--jobs" if a.jobs is not None else "--threads"
    positive_int("--repeats", a.repeats, maximum=MAX_REPEATS, why="MAX_REPEATS")
    if threads is not None:
        positive_int(flag, threads, maximum=MAX_THREADS, why="MAX_THREADS")
    positive_int("--blas-threads", a.blas_threads, maximum=MAX_THREADS, why="MAX_THREADS")
    writable_file("--json", a.json)   # before minutes of work, not after
    run_benchmark("quick" if a.quick else "full", repeats=a.repeats, threads=threads, blas_threads=a.blas_threads,
                  json_path=a.json)
    return 0


def _child_main(argv: list[str]) -> int:
    kind = argv[argv.index("--child") + 1]
    cfg = json.loads(sys.stdin.read())
    result = {"timing": _child_timing, "memory": _child_memory, "compile": _child_compile}[kind](cfg)
    sys.stdout.write(json.dumps(result))
    return 0


if __name__ == "__main__":
    raise SystemExit(_child_main(sys.argv) if "--child" in sys.argv else cli_bench(sys.argv[1:]))
