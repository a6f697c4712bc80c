"""Vectorised Nadaraya-Watson (NW) estimation: the numeric core of claims C1 and C2.

For queries ``q_i``, keys ``k_j`` and values ``v_j``::

    w_ij = K(q_i, k_j) / sum_l K(q_i, k_l),      f_hat(q_i) = sum_j w_ij v_j

with the exponential ("softmax") kernel ``K = exp(s <q, k>)``, ``s = 1/sqrt(d_k)`` by default (one
softmax attention head, C1), or the Gaussian kernel ``K = exp(-||q - k||^2 / (2 b^2))``. Shapes:
queries ``(..., m, d_k)``, keys ``(..., n, d_k)``, values ``(..., n, p)``; leading axes broadcast.
The result is float32 when every array argument is float32, float64 otherwise.

Implementations
---------------
Where numba is installed, a fused compiled kernel (:mod:`verify.numeric._kernel`: one pass per query
row, in float64 whatever the inputs) runs the blocks planned below; otherwise the numpy
implementation runs. It is also the reference the tests compare the kernel with, and a kernel that
meets a score or sum beyond the float range hands the call back to it (``kernel_fallbacks`` counts
these), so errors are the same on both paths. :func:`set_backend` (or
``MHA_NW_BACKEND=auto|numba|numpy``) chooses. Both paths are bitwise independent of the thread count.

Numerics
--------
* Where a block's scores are bounded, ``|score| <= B = max ||s q|| max ||k||`` (Cauchy-Schwarz;
  Gaussian: ``+ max ||k - c||^2/(2b^2)``) at most ``FAST_EXP_BOUND`` and ``n e^B max|v - r|`` far
  below the float range, ``exp`` is applied to the scores as they are (saving the row maximum and
  its subtraction); otherwise scores are shifted by their row maximum (log-sum-exp), so no overflow
  and no 0/0 whatever the (finite) scores. The factor ``e^shift`` cancels in the ratio.
* Gaussian scores drop the per-query term (it cancels) and are computed on queries and keys centred
  on the mean key: ``(q_i - c).(k_j - c)/b^2 - ||k_j - c||^2/(2b^2)``, without the cancellation of
  large ``||q||^2`` and ``||k||^2`` far from the origin.
* ``nw_estimate`` never forms the normalised weights: it centres the values on their mid-range
  ``r`` and computes ``sum_j e_ij (v_j - r)`` and ``sum_j e_ij`` in one matmul against
  ``[v - r, 1]``; ``f_hat = r + num/den``, so constant values come back exactly.

Memory
------
Work proceeds in blocks of score rows, each a strided view of the broadcast inputs and a contiguous
slice of the result (nothing is broadcast-copied), aiming at ``CACHE_BLOCK_BYTES`` of scores. The
cap (``max_memory`` bytes per call, default :func:`get_default_max_memory`) bounds the extra arrays
this module allocates at any one time, in all its threads together (scores, scaled queries, row
maxima and sums, matmul outputs, prepared keys and values, numpy's ufunc buffers; not the result,
dtype conversions of the inputs or BLAS's internal buffers); ``tests/test_nw.py`` checks it with
``tracemalloc`` on both paths. A call that cannot fit one query row against one key set raises
:class:`VerifyError`. Blocks also keep BLAS on one thread (``BLAS_SINGLE_THREAD_MNK``).

Threads
-------
A call with at least ``MIN_PARALLEL_SCORES`` scores hands its blocks to :func:`get_default_threads`
worker threads. Blocks are planned without regard to the thread count, computed by the same
operations whichever thread takes them and written to disjoint slices, so the result is bitwise the
same for every thread count; the workers are also limited so that all their blocks fit in the cap.
"""

from __future__ import annotations

import itertools
import math
import os
import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Callable, Iterator

import numpy as np

from verify._validate import as_array, fail, one_of, positive_int, positive_number

__all__ = ["nw_weights", "nw_estimate", "KERNELS", "DEFAULT_MAX_MEMORY", "CACHE_BLOCK_BYTES", "get_default_max_memory",
           "set_default_max_memory", "FAST_EXP_BOUND", "MIN_PARALLEL_SCORES", "BLAS_SINGLE_THREAD_MNK",
           "get_default_threads", "set_default_threads", "BACKENDS", "KERNEL_BLOCK_SCORES", "get_backend", "set_backend",
           "softmax_exp"]

KERNELS = ("softmax", "gaussian")

#: Largest score bound B for which exp is taken without the row-maximum shift: e^-B and
#: n e^B stay normal numbers with room to spare (float64: e^-708..e^709; float32: e^-87..e^88).
FAST_EXP_BOUND = {np.dtype(np.float64): 512.0, np.dtype(np.float32): 64.0}

#: Default cap on the extra working memory of one call, in bytes (see the module docstring).
DEFAULT_MAX_MEMORY = 256 * 2**20

#: Target size of one block of scores: one core's L2 (512 KiB here), so the block is still cached when
#: exp and the second matmul read it. Measured (bench's block sweep, 1024 keys): 8 rows 1.7x slower,
#: 16-32 rows 1.1-1.3x, 64 rows (512 KiB) the fastest or level with 128.
CACHE_BLOCK_BYTES = 512 * 2**10

#: OpenBLAS runs a gemm on one thread while m*n*k < 2**19 (and on up to m*n*k / 2**18 threads
#: above); unless the environment pins BLAS to one thread, every product here stays below: its
#: threads inside ours made cache-sized products 5-10x slower (measured on 2 cores).
BLAS_SINGLE_THREAD_MNK = 2**19


def _blas_may_thread() -> bool:
    """False when the environment pins OpenBLAS to one thread (it reads these variables once, as
    it loads; the first one set wins)."""
    for var in ("OPENBLAS_NUM_THREADS", "GOTO_NUM_THREADS", "OMP_NUM_THREADS"):
        if os.environ.get(var, "").strip():
            return os.environ[var].strip() != "1"
    return True


BLAS_MAY_THREAD = _blas_may_thread()

#: Calls with fewer scores run in the calling thread: a hand-off to the pool costs ~0.1 ms,
#: 2**18 scores take ~2-3 ms (mostly numpy's float64 exp, ~6-10 ns each).
MIN_PARALLEL_SCORES = 2**18

_default_max_memory = DEFAULT_MAX_MEMORY


def _usable_cpus() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


_default_threads = _usable_cpus()


def get_default_max_memory() -> int:
    """The cap (bytes) used when a call passes ``max_memory=None``."""
    return _default_max_memory


def set_default_max_memory(nbytes: int) -> int:
    """Set the default cap (bytes) for later calls; returns the previous value."""
    global _default_max_memory
    previous, _default_max_memory = _default_max_memory, positive_int("max_memory", nbytes)
    return previous


def get_default_threads() -> int:
    """Worker threads a large call may use (see the module docstring, "Threads")."""
    return _default_threads


def set_default_threads(threads: int) -> int:
    """Set the worker threads for later calls (1: the calling thread only); returns the previous value."""
    global _default_threads
    previous, _default_threads = _default_threads, positive_int("threads", threads)
    return previous


def _ufunc_buffer_bytes(dtype: np.dtype) -> int:
    """Bytes numpy may allocate for its iteration buffers in one broadcasting ufunc call
    (``np.getbufsize()`` elements per buffered operand; we allow two operands)."""
    return 2 * np.getbufsize() * dtype.itemsize


class _Problem:
    """Validated inputs: arrays in the working dtype, broadcast views, kernel parameters."""

    def __init__(self, queries: Any, keys: Any, values: Any | None, kernel: Any, scale: Any,
                 bandwidth: Any, max_memory: Any) -> None:
        one_of("kernel", kernel, KERNELS)
        q = as_array("queries", queries, min_ndim=2)
        k = as_array("keys", keys, min_ndim=2)
        arrays = [q, k]
        if values is not None:
            arrays.append(as_array("values", values, min_ndim=2))
        self.dtype = np.dtype(np.float32 if all(a.dtype == np.float32 for a in arrays) else np.float64)
        arrays = [a.astype(self.dtype, copy=False) for a in arrays]
        q, k = arrays[0], arrays[1]
        d = q.shape[-1]
        if d < 1:
            raise fail("queries", f"shape {q.shape}", "shape (..., m, d_k) with d_k >= 1")
        if k.shape[-1] != d:
            raise fail("keys", f"shape {k.shape}",
                       f"shape (..., n, d_k) with d_k == {d} (the queries' last axis, queries shape {q.shape})")
        if k.shape[-2] < 1:
            raise fail("keys", f"shape {k.shape}", "at least one key (n >= 1) to normalise the weights")
        if values is not None:
            v = arrays[2]
            if v.shape[-2] != k.shape[-2]:
                raise fail("values", f"shape {v.shape}",
                           f"shape (..., n, p) with n == {k.shape[-2]} "
                           f"(the keys' second-last axis, keys shape {k.shape})")
        try:
            self.batch = np.broadcast_shapes(*(a.shape[:-2] for a in arrays))
        except ValueError:
            names = "queries/keys" + ("/values" if values is not None else "")
            got = ", ".join(str(a.shape) for a in arrays)
            raise fail(names, f"shapes {got}", "leading (batch) axes that broadcast against each other") from None
        self.m, self.n, self.d = q.shape[-2], k.shape[-2], d
        self.q = np.broadcast_to(q, self.batch + q.shape[-2:])
        self.k = np.broadcast_to(k, self.batch + k.shape[-2:])
        self.v = None if values is None else np.broadcast_to(arrays[2], self.batch + arrays[2].shape[-2:])
        self.k_raw, self.v_raw = k, (None if values is None else arrays[2])
        self.p = 0 if values is None else arrays[2].shape[-1]

        self.kernel = kernel
        if kernel == "softmax":
            if bandwidth is not None:
                raise fail("bandwidth", repr(bandwidth), "None for kernel='softmax' (it takes scale)")
            s = positive_number("scale", scale, allow_none=True)
            factor = 1.0 / math.sqrt(d) if s is None else s
            name, given, want = "scale", scale, "a scale that is finite"
        else:
            if scale is not None:
                raise fail("scale", repr(scale), "None for kernel='gaussian' (it takes bandwidth)")
            if bandwidth is None:
                raise fail("bandwidth", "None", "a positive finite real number (required for kernel='gaussian')")
            b = positive_number("bandwidth", bandwidth)
            with np.errstate(over="ignore", divide="ignore"):
                inv_b2 = float(np.float64(1.0) / np.float64(b) ** 2)
            if not math.isfinite(inv_b2):
                raise fail("bandwidth", repr(bandwidth), "a bandwidth whose 1/b^2 is finite")
            factor, name, given, want = inv_b2, "bandwidth", bandwidth, "a bandwidth whose 1/b^2 is finite"
        with np.errstate(over="ignore"):
            self.factor = self.dtype.type(factor)
        if not np.isfinite(self.factor):
            raise fail(name, repr(given), f"{want} in {self.dtype.name} (the working dtype)")
        self.cap = get_default_max_memory() if max_memory is None else positive_int("max_memory", max_memory)
        self.log_max = math.log(float(np.finfo(self.dtype).max)) - 2   # e^2 below overflow

    def plan(self, row_cost: int, item_cost: int, width: int, reserved: int = 0,
             block_scores: int | None = None) -> tuple[int, int, int]:
        """Split axis ``j`` of ``batch + (m,)``, chunk length ``c`` and the elements one block allocates,
        from the extra elements per score row and per key set, the widest inner dimension of a BLAS
        product, the elements held for the whole call and the scores per block to aim at."""
        A = self.batch + (self.m,)
        nb = len(self.batch)
        self.reserved = reserved
        units = (self.cap - _ufunc_buffer_bytes(self.dtype)) // self.dtype.itemsize - reserved
        if block_scores is None:
            block_scores = CACHE_BLOCK_BYTES // self.dtype.itemsize
        rows_target = max(1, block_scores // self.n)
        rows_blas = max(1, (BLAS_SINGLE_THREAD_MNK - 1) // (self.n * width)) if BLAS_MAY_THREAD else self.m
        c = min(self.m, rows_target, rows_blas, (units - item_cost) // row_cost)
        if c < 1:
            need = (row_cost + item_cost + reserved) * self.dtype.itemsize + _ufunc_buffer_bytes(self.dtype)
            raise fail("max_memory", f"{self.cap} bytes",
                       f"at least {need} bytes (numpy's ufunc buffers plus one query row against n={self.n} keys"
                       + (f" with p={self.p} value columns)" if self.v is not None else ")"))
        if c < self.m or nb == 0:
            return nb, c, c * row_cost + item_cost
        # whole key sets per block: numpy's matmul makes one product per key set (m rows)
        unit_rows, unit_units = self.m, self.m * row_cost + item_cost
        for j in range(nb - 1, -1, -1):
            c = min(A[j], rows_target // unit_rows, units // unit_units)
            if c < A[j] or j == 0:
                c = max(c, 1)
                return j, c, c * unit_units
            unit_rows *= A[j]
            unit_units *= A[j]
        raise AssertionError("unreachable")

    def workers(self, block_units: int) -> int:
        """Threads that may run blocks at once: the default thread count, one when the call
        is small, and no more than the cap holds (each worker: a block and ufunc buffers)."""
        threads = get_default_threads()
        if threads == 1 or math.prod(self.batch) * self.m * self.n < MIN_PARALLEL_SCORES:
            return 1
        per_worker = block_units * self.dtype.itemsize + _ufunc_buffer_bytes(self.dtype)
        return max(1, min(threads, (self.cap - self.reserved * self.dtype.itemsize) // per_worker))

    def key_norms(self) -> np.ndarray | None:
        """Softmax: the largest key norm of every key set, shape ``batch`` (broadcast), from
        the unbroadcast keys, as many key sets at a time as a quarter of the cap holds."""
        if self.kernel != "softmax":
            return None
        raw = self.k_raw
        lead = raw.shape[:-2]
        out = np.empty(lead, dtype=self.dtype)
        t = 0                                           # loop over lead[:t], vectorise the rest
        while t < len(lead) and math.prod(lead[t:]) * self.n * self.dtype.itemsize > self.cap // 4:
            t += 1
        for idx in np.ndindex(*lead[:t]):
            sq = np.einsum("...nd,...nd->...n", raw[idx], raw[idx])
            out[idx] = np.sqrt(np.max(sq, axis=-1))
        return np.broadcast_to(out, self.batch)

    def prepare_keys(self, kidx: tuple, key_norms: np.ndarray | None
                     ) -> tuple[np.ndarray, np.ndarray | None, np.ndarray | None, float, float]:
        """(keys transposed for the matmul, Gaussian centre, Gaussian half-norms / b^2, the
        largest key norm, the largest half-norm) of the key sets ``kidx``: the last two bound
        the scores."""
        k = self.k[kidx]
        if self.kernel == "softmax":
            return k.swapaxes(-1, -2), None, None, float(np.max(key_norms[kidx])), 0.0
        centre = k.mean(axis=-2, keepdims=True)
        kc = k - centre
        half = np.einsum("...nd,...nd->...n", kc, kc)
        knorm = math.sqrt(float(np.max(half)))
        half *= self.factor * self.dtype.type(0.5)
        return kc.swapaxes(-1, -2), centre, half[..., None, :], knorm, float(np.max(half))

    def scores(self, q: np.ndarray, keys: tuple, out: np.ndarray, log_spread: float = 0.0) -> np.ndarray:
        """Kernel values of the block in ``out``: ``exp(score)`` where the scores are bounded
        (module docstring, Numerics), else ``exp(score - row max)``. ``log_spread``: log of
        the largest ``|v - r|`` the kernel values will multiply (0 for the weights)."""
        kT, centre, half, knorm, half_max = keys
        if centre is None:
            qs = q * self.factor                      # s <q, k>
        else:
            qs = q - centre
            qs *= self.factor                         # (q - c).(k - c) / b^2
        np.matmul(qs, kT, out=out)
        if half is not None:
            out -= half                               # - ||k - c||^2 / (2 b^2)
        qnorm = math.sqrt(float(np.max(np.einsum("...d,...d->...", qs, qs))))
        # |score| <= B (Cauchy-Schwarz); a NaN/inf bound fails the test and takes the shift
        B = qnorm * knorm * (1 + 1e-6) + half_max * (1 + 1e-6)  # the factor: rounding of the norms
        if B <= FAST_EXP_BOUND[self.dtype] and B + math.log(self.n) + max(log_spread, 0.0) <= self.log_max:
            np.exp(out, out=out)                      # e_ij = exp(score_ij) in [e^-B, e^B]
            return out
        top = np.max(out, axis=-1, keepdims=True)
        if not np.all(np.isfinite(top)):
            raise fail("queries/keys",
                       f"non-finite scores (max |query| {float(np.max(np.abs(self.q))):.3g}, max |key| "
                       f"{float(np.max(np.abs(self.k))):.3g}, shapes {self.q.shape} and {self.k.shape})",
                       f"inputs whose scores <q, k> (or ||k||^2/b^2) fit in {self.dtype.name}")
        np.subtract(out, top, out=out)
        np.exp(out, out=out)                          # e_ij = exp(score_ij - max_l score_il) in (0, 1]
        return out

    def blocks(self, j: int, c: int) -> Iterator[tuple[tuple, tuple]]:
        """Yield (block index, key-set index) in order."""
        A = self.batch + (self.m,)
        nb = len(self.batch)
        for prefix in np.ndindex(*A[:j]):
            for s0 in range(0, A[j], c):
                idx = prefix + (slice(s0, min(s0 + c, A[j])),)
                yield idx, (idx if j < nb else prefix)

    def run(self, j: int, c: int, block_units: int,
            make_worker: Callable[[], Callable[[tuple, tuple], None]]) -> None:
        """Compute every block; ``make_worker()`` returns a function of (block index, key-set
        index) with its own buffers, called by one thread."""
        workers = self.workers(block_units)
        blocks = self.blocks(j, c)
        # Hand out runs of consecutive blocks (at most one key set's), so that a worker prepares
        # a key set once per run, and at least 16 runs per worker, so that a worker slowed down
        # by other processes delays the end by little.
        A = self.batch + (self.m,)
        n_blocks = math.prod(A[:j]) * -(-A[j] // c)
        per_keys = -(-A[j] // c) if j == len(self.batch) else 1
        take = max(1, min(per_keys, n_blocks // (16 * workers)))
        lock = threading.Lock()
        errors: list[BaseException] = []

        def loop() -> None:
            work = make_worker()
            with np.errstate(over="ignore", invalid="ignore"):  # per thread; overflow is caught in scores()
                while True:
                    with lock:
                        run = [] if errors else list(itertools.islice(blocks, take))
                    if not run:
                        return
                    try:
                        for idx, kidx in run:
                            work(idx, kidx)
                    except BaseException as exc:  # re-raised in the calling thread
                        with lock:
                            errors.append(exc)
                        return

        futures = [_pool(workers - 1).submit(loop) for _ in range(workers - 1)]
        loop()
        for f in futures:
            if not f.cancel():  # not started yet: nothing left for it to do
                f.result()
        if errors:
            raise errors[0]


_POOL: ThreadPoolExecutor | None = None
_POOL_SIZE = 0
_POOL_LOCK = threading.Lock()


def _pool(size: int) -> ThreadPoolExecutor:
    """The module's worker pool, grown to ``size`` threads if needed."""
    global _POOL, _POOL_SIZE
    with _POOL_LOCK:
        if _POOL is None or _POOL_SIZE < size:
            if _POOL is not None:
                _POOL.shutdown(wait=False)
            _POOL, _POOL_SIZE = ThreadPoolExecutor(max_workers=size, thread_name_prefix="verify-nw"), size
        return _POOL


def _forget_pool() -> None:  # a forked child has the pool object but not its threads
    global _POOL, _POOL_SIZE
    _POOL, _POOL_SIZE = None, 0


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_pool)


#: ``auto``: the compiled kernel (:mod:`verify.numeric._kernel`) where numba is installed, else numpy;
#: ``numba``: the kernel, an error without numba; ``numpy``: the reference implementation above.
BACKENDS = ("auto", "numba", "numpy")
#: Scores per block of the kernel path: the kernel keeps no block of scores, so blocks only
#: amortise the Python work per call (~20 us); 2**18 scores take ~0.5 ms. Measured (S1 shape,
#: one thread): 64-row blocks (CACHE_BLOCK_BYTES) 10-25% slower than these.
KERNEL_BLOCK_SCORES = 2**18
_backend = os.environ.get("MHA_NW_BACKEND", "auto").strip().lower() or "auto"
_kernel_module: Any = None


def _check_backend(name: Any, source: str) -> str:
    if not isinstance(name, str) or name.strip().lower() not in BACKENDS:
        raise fail(source, repr(name), f"one of {', '.join(map(repr, BACKENDS))}")
    return name.strip().lower()


def set_backend(name: str) -> str:
    """Choose the implementation of later calls (``BACKENDS``); returns the previous choice.
    The default comes from the environment variable ``MHA_NW_BACKEND`` (else ``auto``)."""
    global _backend
    previous, _backend = _backend, _check_backend(name, "backend")
    return previous


def get_backend() -> str:
    """The implementation later calls use: ``"numba"`` or ``"numpy"`` (``auto`` resolved)."""
    return "numba" if _kernel() is not None else "numpy"


def _kernel() -> Any:
    """The compiled-kernel module, or None for the numpy path (imported on first use: numba
    costs ~0.3 s to import, and the numeric core must not pay it when it is not used)."""
    global _kernel_module
    choice = _check_backend(_backend, "MHA_NW_BACKEND")
    if choice == "numpy":
        return None
    if _kernel_module is None:
        try:
            from verify.numeric import _kernel as module
        except ImportError as exc:
            if choice == "numba":
                raise fail("backend", f"'numba' without numba importable ({exc})",
                           "numba installed (pip install 'mha-nw-verify[fast]') or backend 'auto'/'numpy'") from None
            return None
        _kernel_module = module
    return _kernel_module


def softmax_exp(a: np.ndarray) -> np.ndarray:
    """``e^a``, a new array (the kernel's loop is vectorised only out of place), for the training
    experiments' softmax: the compiled kernel's ``exp`` where that backend runs, numpy's otherwise."""
    K = _kernel()
    if K is None or a.dtype != np.float64:
        return np.exp(a)
    src = np.ascontiguousarray(a)
    out = np.empty_like(src)
    K.exp_array(src.reshape(-1), out.reshape(-1))
    return out


#: Calls that the kernel handed back to the numpy path (a score or sum beyond the float range):
#: the tests read it to tell a kernel result from a redone one.
kernel_fallbacks = 0


class _NotFinite(Exception):
    """A kernel met a score beyond the working dtype (or NaN): the numpy path redoes the call
    and raises its error."""


def _kernel_fast_bound(n: int, log_spread: np.ndarray) -> np.ndarray:
    """Per key set, the largest score bound B with exp taken unshifted (float64 arithmetic):
    B <= FAST_EXP_BOUND and n e^B max|v - r| below the float64 range (e^2 to spare)."""
    log_max = math.log(float(np.finfo(np.float64).max)) - 2
    return np.minimum(_kernel_module.FAST_EXP_BOUND, log_max - math.log(n) - np.maximum(log_spread, 0.0))


def _kernel_keys(P: _Problem, k: np.ndarray) -> tuple[np.ndarray, ...]:
    """Keys of G key sets (G, n, d) prepared in float64: (kT (G, d, n), centre (G, d) or (G, 0),
    half-norms / b^2 (G, n) or (G, 0), largest key norm (G,), largest half-norm (G,))."""
    G = k.shape[0]
    kT = np.empty((G, P.d, P.n))
    if P.kernel == "softmax":
        kT[...] = k.transpose(0, 2, 1)
        norms = np.sqrt(np.max(np.einsum("gdn,gdn->gn", kT, kT), axis=-1))
        empty = np.empty((G, 0))
        return kT, empty, empty, norms, np.zeros(G)
    centre = k.mean(axis=-2, dtype=np.float64)                    # (G, d)
    np.subtract(k.transpose(0, 2, 1), centre[:, :, None], out=kT)  # k - c, transposed
    half = np.einsum("gdn,gdn->gn", kT, kT)
    norms = np.sqrt(np.max(half, axis=-1))
    half *= float(P.factor) * 0.5                                 # ||k - c||^2 / (2 b^2)
    return kT, centre, half, norms, np.max(half, axis=-1)


def _on_kernel(P: _Problem, out: np.ndarray) -> bool:
    """nw_weights (no values) or nw_estimate on the compiled kernel; False (counted in ``kernel_fallbacks``) when
    the numpy path must redo the call: a score beyond the working dtype, or sums past the range (numpy raises)."""
    global kernel_fallbacks
    K = _kernel()
    if K is None:
        return False
    n, d, p = P.n, P.d, P.p
    limit = float(np.finfo(P.dtype).max)
    f64 = P.dtype == np.float64
    weights = P.v is None
    if weights:   # per row: the query copy, the float64 weights when the result is float32; per key set:
        # keys, centre, half-norms and their temporary (norms), scratch
        row_words, item_words = d + (0 if f64 else n), n * d + 2 * n + 2 * d + 4
    else:         # per row: the query copy and the float64 estimate; per key set: keys, centre, half-norms
        # and norms, values minus r (transposed), their range and r, scratch rows
        row_words, item_words = 2 * d + 2 * p + 3, n * d + 3 * n + 2 * d + n * p + 6 * p + 4 + min(n, K.TILE)
    # costs in float64 words (the kernel works in float64 whatever the inputs' dtype), no BLAS product to keep small
    w = 8 // P.dtype.itemsize
    plan = P.plan(w * row_words, w * item_words, 1, block_scores=KERNEL_BLOCK_SCORES)
    rows = plan[1] if plan[0] == len(P.batch) else P.m     # query rows per key set in a block

    def make_worker() -> Callable[[tuple, tuple], None]:
        if weights:
            scratch: tuple = (np.empty(d),)
        else:
            scratch = np.empty((rows, d + 1)), np.empty((rows, p + 1)), np.empty(min(n, K.TILE))
        current: list = [None, None]

        def work(idx: tuple, kidx: tuple) -> None:
            if current[0] != kidx:
                current[:] = None, None
                kT, centre, half, norms, half_max = _kernel_keys(P, P.k[kidx].reshape((-1, n, d)))
                if weights:   # the kernel's arguments before and after the factor
                    current[:] = kidx, ((kT, centre, half), (norms, half_max, _kernel_fast_bound(n, np.zeros(len(kT)))))
                else:
                    vT, ref, log_spread = _kernel_values(P, kidx)
                    bound = _kernel_fast_bound(n, log_spread)
                    current[:] = kidx, ((kT, vT, ref, centre, half), (norms, half_max, bound))
            q = P.q[idx]   # the block's queries (G, c, d) in float64, a contiguous copy; its slice of the result, a view
            q = np.ascontiguousarray(q.reshape((-1,) + q.shape[-2:]), dtype=np.float64).view()
            q.flags.writeable = False   # always read-only (this view only): numba compiles one signature, not two
            o = out[idx].reshape(q.shape[:2] + out.shape[-1:])
            if not np.may_share_memory(o, out):
                raise AssertionError("a block of the result is not a view")
            res = o if f64 else np.empty(o.shape)
            before, after = current[1]
            rows_of = K.weights_rows if weights else K.estimate_rows
            if rows_of(q, *before, float(P.factor), *after, limit, res, *scratch):
                raise _NotFinite
            if not f64:
                o[...] = res
        return work

    try:
        P.run(*plan, make_worker)
        if weights or np.all(np.isfinite(out)):
            return True
    except _NotFinite:
        pass
    kernel_fallbacks += 1
    return False


def _kernel_values(P: _Problem, kidx: tuple) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The values of the key sets ``kidx`` for the kernel in float64: (v - r transposed (G, p, n), the
    mid-range r (G, p), log of the bound on |v - r| (G,), -inf for constant values)."""
    v = P.v[kidx].reshape((-1, P.n, P.p))
    lo = v.min(axis=-2).astype(np.float64)
    hi = v.max(axis=-2).astype(np.float64)
    with np.errstate(over="ignore", invalid="ignore"):
        ref = lo + (hi - lo) * 0.5                   # mid-range: exactly v when v is constant
        ref = np.where(np.isfinite(ref), ref, lo * 0.5 + hi * 0.5)
        dev = np.max(hi - lo, axis=-1) * 0.5 * (1 + 1e-6)   # bounds |v - r|, maybe inf
    vT = np.empty((v.shape[0], P.p, P.n))
    np.subtract(v.transpose(0, 2, 1), ref[:, :, None], out=vT)
    with np.errstate(divide="ignore"):
        return vT, ref, np.log(dev)


def nw_weights(queries: Any, keys: Any, *, kernel: str = "softmax", scale: float | None = None,
               bandwidth: float | None = None, max_memory: int | None = None) -> np.ndarray:
    """NW weights ``w_ij = K(q_i, k_j) / sum_l K(q_i, k_l)``, shape ``(..., m, n)``: ``kernel="softmax"``,
    ``K = exp(scale <q, k>)`` (scale default ``1/sqrt(d_k)``), or ``"gaussian"`` with a ``bandwidth``."""
    P = _Problem(queries, keys, None, kernel, scale, bandwidth, max_memory)
    out = np.empty(P.batch + (P.m, P.n), dtype=P.dtype)
    if out.size == 0:
        return out
    if _on_kernel(P, out):
        return out
    gauss = P.kernel == "gaussian"
    row_cost = P.d * (2 if gauss else 1) + 2
    item_cost = (2 * P.n * P.d + P.n + P.d) if gauss else 0
    j, c, block_units = P.plan(row_cost, item_cost, P.d, reserved=0 if gauss else math.prod(P.k_raw.shape[:-2]))
    key_norms = P.key_norms()

    def make_worker() -> Callable[[tuple, tuple], None]:
        current: list = [None, None]  # key-set index, its prepared keys

        def work(idx: tuple, kidx: tuple) -> None:
            if current[0] != kidx:
                current[:] = None, None
                current[:] = kidx, P.prepare_keys(kidx, key_norms)
            S = P.scores(P.q[idx], current[1], out[idx])
            S /= np.sum(S, axis=-1, keepdims=True)    # a normal number: >= 1 after the shift, >= e^-B without
        return work

    P.run(j, c, block_units, make_worker)
    return out


def nw_estimate(queries: Any, keys: Any, values: Any, *, kernel: str = "softmax",
                scale: float | None = None, bandwidth: float | None = None,
                max_memory: int | None = None) -> np.ndarray:
    """NW estimate ``f_hat(q_i) = sum_j w_ij v_j``, shape ``(..., m, p)``, kernels as :func:`nw_weights`."""
    if values is None:  # _Problem reads None as "weights only"
        raise fail("values", "None", "a real numeric array (..., n, p) (nw_weights gives the weights alone)")
    P = _Problem(queries, keys, values, kernel, scale, bandwidth, max_memory)
    out = np.empty(P.batch + (P.m, P.p), dtype=P.dtype)
    if out.size == 0:
        return out
    if _on_kernel(P, out):
        return out
    gauss = P.kernel == "gaussian"
    n, d, p = P.n, P.d, P.p
    row_cost = n + d * (2 if gauss else 1) + (p + 1) + 1
    item_cost = n * (p + 1) + ((2 * n * d + n + d) if gauss else 0)
    # norms: one per key set; lo, hi, r: p per value set, and two temporaries of that size
    reserved = (0 if gauss else math.prod(P.k_raw.shape[:-2])) + 5 * p * math.prod(P.v_raw.shape[:-2])
    j, c, block_units = P.plan(row_cost, item_cost, max(d, p + 1), reserved)
    rows_max = c * math.prod((P.batch + (P.m,))[j + 1:])
    one, half = P.dtype.type(1), P.dtype.type(0.5)
    key_norms = P.key_norms()
    # per key set and column (unbroadcast, then broadcast views): the values' mid-range r
    lo, hi = P.v_raw.min(axis=-2, keepdims=True), P.v_raw.max(axis=-2, keepdims=True)
    with np.errstate(over="ignore", invalid="ignore"):   # a spread beyond the float range: below
        ref_all = lo + (hi - lo) * half                   # mid-range: exactly v when v is constant
        if not np.all(np.isfinite(ref_all)):
            ref_all = np.where(np.isfinite(ref_all), ref_all, lo * half + hi * half)
        dev_all = np.broadcast_to(np.max(hi - lo, axis=(-2, -1)), P.batch)   # 2 max |v - r|, maybe inf
    ref_all = np.broadcast_to(ref_all, P.batch + (1, p))

    def make_worker() -> Callable[[tuple, tuple], None]:
        buffer = np.empty(rows_max * n, dtype=P.dtype)
        current: list = [None] * 5  # key-set index, prepared keys, [v - r, 1], r, log max |v - r|

        def work(idx: tuple, kidx: tuple) -> None:
            if current[0] != kidx:
                current[:] = [None] * 5                   # the previous key set's arrays go first
                prepared = P.prepare_keys(kidx, key_norms)
                v, ref = P.v[kidx], ref_all[kidx]
                v_aug = np.empty(v.shape[:-1] + (p + 1,), dtype=P.dtype)
                np.subtract(v, ref, out=v_aug[..., :p])
                v_aug[..., p] = one
                dev = float(np.max(dev_all[kidx])) * 0.5 * (1 + 1e-6)  # bounds |v - r| (rounding included)
                current[:] = kidx, prepared, v_aug, ref, (math.log(dev) if dev > 0 else -math.inf)
            _, prepared, v_aug, ref, log_spread = current
            q = P.q[idx]
            S = P.scores(q, prepared, buffer[: math.prod(q.shape[:-1]) * n].reshape(q.shape[:-1] + (n,)), log_spread)
            acc = np.matmul(S, v_aug)                     # [sum_j e_ij (v_j - r), sum_j e_ij]
            o = out[idx]
            np.divide(acc[..., :p], acc[..., p:], out=o)
            o += ref
        return work

    P.run(j, c, block_units, make_worker)                 # overflow is caught in scores() and below
    if not np.all(np.isfinite(out)):
        raise fail("values", f"max |value| = {float(np.max(np.abs(P.v))):.3g}",
                   f"values small enough that n={n} of them sum within the {P.dtype.name} range")
    return out
