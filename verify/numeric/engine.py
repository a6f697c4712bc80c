"""Monte Carlo decomposition of the ensemble MSE (C3, Thm 3.1) for NW attention heads.

Setting: ``n`` training points ``x_i ~ p``, ``y_i = f(x_i) + eps_i``; head ``h`` predicts
``fhat_h(x) = sum_i w_i^h(x) y_i`` with NW weights from queries ``W_Q^h^T x`` and keys
``W_K^h^T x_i``; the ensemble is ``fhat = sum_h alpha_h fhat_h`` for any real ``alpha``. At each
evaluation point::

    MSE = (sum_h alpha_h mu_h - f)^2 + sum_h alpha_h^2 V_h + sum_{h != h'} alpha_h alpha_h' C_hh'
          [bias2]                      [var_term]            [cov_term]

with ``mu_h = E fhat_h``, ``C = Cov(fhat_h, fhat_h')``, ``V_h = C_hh``. The moments are those of
the *empirical measure* of ``R`` replicates, on which the identity is exact, so it holds to
rounding (``identity_error``) and, recomputed in mpmath, to the working precision (``mp_check``).

Draws: replicate ``r`` uses ``default_rng(SeedSequence(seed, spawn_key=(r,)))`` and draws the design
``X = dgp.sample_x(rng, (n,))``, then (``method="simulate"``) the noise ``dgp.sigma *
rng.standard_normal(n)``: it depends on ``(seed, r)`` only. ``x_eval``, when not given, is
``dgp.sample_x(default_rng(SeedSequence(seed)), (m,))``.

Methods: ``simulate``: per-replicate head estimates ``F (R, H, m)``, ``mu = mean_r F``,
``C = mean_r (F - mu)(F - mu)^T`` (ddof=0), ``MSE = mean_r (alpha^T F_r - f)^2``. ``exact``: no noise
is simulated; given the design, ``m_h(x|X) = sum_i w_i^h f(x_i)`` and ``Cov(fhat_h, fhat_h'|X) =
sigma^2 sum_i w_i^h w_i^h'``, so ``mu = mean_r m_r``, ``C = mean_r sigma^2 W_r W_r^T + Cov_r(m_r)`` and
``MSE = mean_r (alpha^T m_r - f)^2 + sigma^2 mean_r ||sum_h alpha_h w_r^h||^2``.

Memory (``max_memory``, default 256 MiB): replicates are processed in blocks of ``B``, evaluation
points in chunks of ``M_c = min(m, EVAL_CHUNK)`` (fewer only if one replicate does not fit;
``Decomposition.blocks = (B, M_c)``); the budget counts the float64 words of a block (designs, keys,
weights, estimates; :func:`_block_sizes`) beside numpy's ufunc buffers, not the output-sized arrays of
the final moments. The numbers are bitwise the same for every budget that fits one replicate at
``M_c`` points: per-replicate quantities never mix replicates, every BLAS call sees the same shapes
(hence the fixed ``EVAL_CHUNK``, and einsum for the sums over training points), and sums over
replicates run in replicate order.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator

import mpmath
import numpy as np

from verify._validate import as_array, fail, fits_in_memory, memory_error_as, physical_memory, positive_int
from verify._validate import one_of, positive_number
from verify._validate import seed as valid_seed
from verify.errors import VerifyError
from verify.numeric.certify import precision
from verify.numeric.dgp import DGP
from verify.numeric.nw import KERNELS, _ufunc_buffer_bytes, nw_weights

__all__ = ["Decomposition", "MpCheck", "ArbCheck", "NoiseCheck", "decompose", "decompose_mp", "noise_simulation_check",
           "DEFAULT_M", "DEFAULT_MAX_MEMORY", "MP_MAX_OPS"]

DEFAULT_M = 64
DEFAULT_MAX_MEMORY = 256 * 2**20
# Evaluation points per nw_weights call: fixed, so that the float64 results do not depend on the
# memory budget (see "Reproducibility"); 64 rows keep a call's overhead small against its work.
EVAL_CHUNK = 64
# mpmath (pure-Python backend) does ~1e5-1e6 multiply-adds per second at 50 digits: cap the
# high-precision recomputation at a few seconds.
MP_MAX_OPS = 2_000_000
METHODS = ("exact", "simulate")


@dataclass(frozen=True)
class _Setup:
    dgp: DGP
    W_Q: np.ndarray  # (H, d, d_k)
    W_K: np.ndarray  # (H, d, d_k)
    alpha: np.ndarray  # (H,)
    x_eval: np.ndarray  # (m, d)
    f_eval: np.ndarray  # (m,)
    n: int
    R: int
    seed: int
    method: str
    kernel: str
    scale: float | None
    bandwidth: float | None
    max_memory: int

    @property
    def H(self) -> int:
        return self.W_Q.shape[0]

    @property
    def m(self) -> int:
        return self.x_eval.shape[0]


def _projections(name: str, W: Any, d: int) -> np.ndarray:
    W = as_array(name, W, keep_float32=False)
    if W.ndim == 2:
        W = W[None]
    if W.ndim != 3 or W.shape[1] != d or W.shape[0] < 1 or W.shape[2] < 1:
        raise fail(name, f"shape {W.shape}", f"(H, d, d_k) or (d, d_k) with d = {d} (the DGP's dimension)")
    return W


def _results_guard(R: int, H: int, m: int, d: int, d_k: int) -> str:
    """Refuse sizes whose result arrays (estimates, noise terms, moments, evaluation points and queries)
    exceed the machine's memory before any is allocated; returns the size, for a MemoryError later."""
    words = 2 * R * H * m + 3 * R * m + 4 * m * H * H + m * (d + H * d_k)
    size = f"R = {R}, m = {m} (H = {H}): {words} float64 values of results"
    fits_in_memory("R, m", 8 * words, size)
    return size


def _checked_design(dgp: DGP, x: Any, rows: int, name: str) -> np.ndarray:
    x = as_array(name, x, keep_float32=False)
    if x.shape != (rows, dgp.d):
        raise fail(name, f"shape {x.shape}", f"({rows}, {dgp.d})")
    return x


def _checked_f(dgp: DGP, x: np.ndarray) -> np.ndarray:
    fx = as_array(f"dgp.f (of {dgp.name!r})", dgp.f(x), keep_float32=False)
    if fx.shape != x.shape[:-1]:
        raise fail(f"dgp.f (of {dgp.name!r})", f"output shape {fx.shape} for input {x.shape}", f"{x.shape[:-1]}")
    return fx


def _prepare(dgp: Any, W_Q: Any, W_K: Any, *, alpha: Any, x_eval: Any, m: Any, n: Any, R: Any, seed: Any,
             method: Any, kernel: Any, scale: Any, bandwidth: Any, max_memory: Any) -> _Setup:
    if not isinstance(dgp, DGP):
        raise fail("dgp", type(dgp).__name__, "a verify.numeric.dgp.DGP (see make_dgp)")
    WQ = _projections("W_Q", W_Q, dgp.d)
    WK = WQ if W_K is None else _projections("W_K", W_K, dgp.d)
    if WK.shape != WQ.shape:
        raise fail("W_K", f"shape {WK.shape}", f"the shape of W_Q, {WQ.shape}")
    H = WQ.shape[0]
    if alpha is None:
        alpha = np.full(H, 1.0 / H)
    alpha = as_array("alpha", alpha, keep_float32=False)
    if alpha.shape != (H,):
        raise fail("alpha", f"shape {alpha.shape}", f"({H},), one weight per head")
    one_of("method", method, METHODS)
    one_of("kernel", kernel, KERNELS)
    scale = positive_number("scale", scale, allow_none=True)
    bandwidth = positive_number("bandwidth", bandwidth, allow_none=True)
    if kernel == "softmax" and bandwidth is not None:
        raise fail("bandwidth", repr(bandwidth), "None for kernel='softmax' (it takes scale)")
    if kernel == "gaussian" and (bandwidth is None or scale is not None):
        raise fail("bandwidth, scale", f"{bandwidth!r}, {scale!r}",
                   "a positive bandwidth and scale=None for kernel='gaussian'")
    max_memory = DEFAULT_MAX_MEMORY if max_memory is None else positive_int("max_memory", max_memory)
    n = positive_int("n", n)
    R = positive_int("R", R)
    seed = valid_seed("seed", seed)
    if dgp.sigma * dgp.sigma > np.finfo(np.float64).max:  # the noise variance
        raise fail("dgp.sigma", repr(dgp.sigma), "a noise standard deviation whose square fits in float64")
    if x_eval is None:
        m = positive_int("m", DEFAULT_M if m is None else m)
        size = _results_guard(R, H, m, dgp.d, WQ.shape[2])
        with memory_error_as("m", f"{size}; x_eval of {m} x {dgp.d}"):
            x_eval = dgp.sample_x(np.random.default_rng(np.random.SeedSequence(seed)), (m,))
            x_eval = _checked_design(dgp, x_eval, m, "x_eval drawn by dgp.sample_x")
    else:
        x_eval = as_array("x_eval", x_eval, ndim=2, keep_float32=False)
        if x_eval.shape[1] != dgp.d or x_eval.shape[0] < 1:
            raise fail("x_eval", f"shape {x_eval.shape}", f"(m, {dgp.d}) with m >= 1")
        if m is not None and positive_int("m", m) != x_eval.shape[0]:
            raise fail("m", repr(m), f"None or len(x_eval) = {x_eval.shape[0]}")
    _results_guard(R, H, x_eval.shape[0], dgp.d, WQ.shape[2])
    f_eval = _checked_f(dgp, x_eval)
    return _Setup(dgp, WQ, WK, alpha, x_eval, f_eval, n, R, seed, method, kernel, scale, bandwidth, max_memory)


def _block_sizes(s: _Setup) -> tuple[int, int]:
    """(replicates per block, evaluation points per chunk) within ``s.max_memory``."""
    H, n, d, d_k = s.H, s.n, s.dgp.d, s.W_Q.shape[2]
    fixed = 2 * n * d + 3 * n + H * n * d_k + (H * (2 * n * d_k + n + d_k) if s.kernel == "gaussian" else 0)
    per_point = H * n + H * (d_k + 3) + (2 * n + H * H if s.method == "exact" else 0)
    words = (s.max_memory - _ufunc_buffer_bytes(np.dtype(np.float64))) // 8
    if fixed + per_point > words:
        need = 8 * (fixed + per_point) + _ufunc_buffer_bytes(np.dtype(np.float64))
        total = physical_memory()
        if total is not None and need > total:  # no max_memory would do: the design is too large
            raise fail("n", f"{n} ({need / 2**30:.4g} GiB for one replicate at one evaluation point, H={H}, d={d})",
                       f"a design size whose one replicate fits in this machine's {total / 2**30:.4g} GiB")
        raise fail("max_memory", f"{s.max_memory} bytes",
                   f"at least {need} bytes (numpy's ufunc buffers plus one replicate at one evaluation point, "
                   f"n={n}, H={H})")
    Mc = min(s.m, EVAL_CHUNK)
    if fixed + Mc * per_point <= words:
        return min(s.R, words // (fixed + Mc * per_point)), Mc
    return 1, (words - fixed) // per_point


def _iter_blocks(s: _Setup) -> Iterator[tuple[slice, slice, np.ndarray, np.ndarray, np.ndarray | None]]:
    """Yield ``(replicates, eval points, weights (B, H, M_c, n), f(X) (B, n), y (B, n) or None)``."""
    B, Mc = _block_sizes(s)
    # replicate r: SeedSequence(seed).spawn(R)[r], made per block (R of them could fill memory)
    queries = np.matmul(s.x_eval[None], s.W_Q)  # (H, m, d_k)
    for r0 in range(0, s.R, B):
        rs = slice(r0, min(s.R, r0 + B))
        X, noise = [], []
        for r in range(rs.start, rs.stop):
            rng = np.random.default_rng(np.random.SeedSequence(s.seed, spawn_key=(r,)))
            X.append(_checked_design(s.dgp, s.dgp.sample_x(rng, (s.n,)), s.n, "design drawn by dgp.sample_x"))
            if s.method == "simulate":
                noise.append(s.dgp.sigma * rng.standard_normal(s.n))
        X = np.stack(X)  # (B, n, d)
        fX = _checked_f(s.dgp, X)  # (B, n)
        y = fX + np.stack(noise) if s.method == "simulate" else None
        keys = np.matmul(X[:, None], s.W_K[None])  # (B, H, n, d_k)
        for e0 in range(0, s.m, Mc):
            es = slice(e0, min(s.m, e0 + Mc))
            W = nw_weights(queries[:, es], keys, kernel=s.kernel, scale=s.scale, bandwidth=s.bandwidth,
                           max_memory=s.max_memory)
            yield rs, es, W, fX, y
            del W  # before the next block's weights exist (the consumer drops its reference too)


@dataclass(frozen=True)
class Decomposition:
    """Pointwise terms of the ensemble MSE decomposition; see the module docstring."""

    alpha: np.ndarray  # (H,)
    x_eval: np.ndarray  # (m, d)
    f_eval: np.ndarray  # (m,)
    head_mean: np.ndarray  # (H, m)   mu_h
    head_bias: np.ndarray  # (H, m)   b_h = mu_h - f
    head_cov: np.ndarray  # (H, H, m) C_hh'
    bias2: np.ndarray  # (m,)  (alpha^T mu - f)^2
    var_term: np.ndarray  # (m,)  sum_h alpha_h^2 V_h
    cov_term: np.ndarray  # (m,)  sum_{h != h'} alpha_h alpha_h' C_hh'
    mse: np.ndarray  # (m,)  measured directly
    n: int
    R: int
    method: str
    seed: int
    kernel: str
    blocks: tuple[int, int] = (0, 0)  # (replicates per block, evaluation points per chunk) used
    _setup: _Setup | None = field(default=None, repr=False, compare=False)

    @property
    def H(self) -> int:
        return self.alpha.shape[0]

    @property
    def head_var(self) -> np.ndarray:
        """``V_h`` (H, m)."""
        return np.einsum("hhm->hm", self.head_cov).copy()

    @property
    def head_corr(self) -> np.ndarray:
        """``C_hh' / sqrt(V_h V_h')`` (H, H, m); VerifyError where a head variance is 0."""
        v = self.head_var
        if np.any(v <= 0):
            raise fail("head_corr", f"{int(np.sum(v <= 0))} zero head variances (R={self.R}, method={self.method!r})",
                       "positive head variances (method='simulate' needs R >= 2)")
        sd = np.sqrt(v)
        return self.head_cov / (sd[:, None] * sd[None, :])

    def integrated(self) -> dict[str, Any]:
        """The terms averaged over the evaluation points, the integrated covariance ``Cbar`` (H, H), its
        correlation and the mean pointwise correlation (both None where a variance is 0)."""
        cbar = self.head_cov.mean(axis=-1)
        sd = np.sqrt(np.diag(cbar))
        out = {k: float(getattr(self, k).mean()) for k in ("bias2", "var_term", "cov_term", "mse")}
        out["head_cov"] = cbar
        out["head_corr"] = cbar / np.outer(sd, sd) if np.all(sd > 0) else None  # None: a variance is 0
        try:
            out["mean_pointwise_corr"] = self.head_corr.mean(axis=-1)
        except VerifyError:  # undefined where a variance is 0
            out["mean_pointwise_corr"] = None
        return out

    def identity_error(self) -> float:
        """``max_x |mse - (bias2 + var + cov)| / (|mse| + bias2 + |var| + |cov|)``: rounding is
        relative to the terms' magnitudes (var and cov may cancel for alpha of mixed sign)."""
        resid = np.abs(self.mse - (self.bias2 + self.var_term + self.cov_term))
        scale = np.abs(self.mse) + self.bias2 + np.abs(self.var_term) + np.abs(self.cov_term)
        return float(np.max(np.divide(resid, scale, out=np.zeros_like(resid), where=scale > 0)))

    def mp_check(self, dps: int = 50) -> "MpCheck":
        """Recompute this decomposition in mpmath at ``dps`` digits (see :func:`decompose_mp`)."""
        if self._setup is None:
            raise fail("mp_check", "a Decomposition without its inputs", "one returned by decompose()")
        return _mp_compare(self._setup, self, dps)

    def arb_check(self, prec: int = 256) -> "ArbCheck":
        """Certify the identity in ball arithmetic (python-flint's arb at ``prec`` bits) from the
        same per-replicate float64 quantities: a rigorous bound on the relative residual."""
        if self._setup is None:
            raise fail("arb_check", "a Decomposition without its inputs", "one returned by decompose()")
        return _arb_certify(self._setup, prec)


def _finite(s: _Setup, terms: dict[str, np.ndarray]) -> None:
    """Refuse non-finite moments (an overflow), naming the input responsible: ``alpha`` when its
    weights are the largest magnitude in play, else the DGP's responses (f and sigma)."""
    bad = [k for k, v in terms.items() if not np.all(np.isfinite(v))]
    if not bad:
        return
    a, f, sigma = float(np.max(np.abs(s.alpha))), float(np.max(np.abs(s.f_eval))), s.dgp.sigma
    name = "alpha" if a > 1 and a >= max(f, sigma) else f"dgp (f and sigma of {s.dgp.name!r})"
    raise fail(name, f"overflow to non-finite {', '.join(bad)} (max |alpha| = {a:.3g}, max |f(x_eval)| = {f:.3g}, "
                     f"sigma = {sigma:.3g})",
               "weights and responses whose squared ensemble error (sum_h alpha_h fhat_h - f)^2 fits in float64")


def _run(s: _Setup) -> Decomposition:
    H, m, R = s.H, s.m, s.R
    sigma2 = s.dgp.sigma * s.dgp.sigma
    est = np.empty((R, H, m))  # F (simulate) or m_h(x|X_r) (exact)
    if s.method == "exact":
        noise_ens = np.empty((R, m))  # sigma^2 ||sum_h alpha_h w_r^h(x)||^2
        S_acc = np.zeros((m, H, H))  # sum_r sum_i w_i^h w_i^h'
    for block in _iter_blocks(s):
        rs, es, W, fX, y = block
        del block
        if s.method == "simulate":
            # einsum, not BLAS: gemv rounds a row differently with the number of rows
            est[rs, :, es] = np.einsum("bhmn,bn->bhm", W, y)  # sum_i w_i^h y_i
        else:
            est[rs, :, es] = np.einsum("bhmn,bn->bhm", W, fX)  # sum_i w_i^h f(x_i)
            Wt = W.transpose(0, 2, 1, 3)  # (B, M_c, H, n)
            # (B, M_c, H, H): sum_i w_i^h w_i^h'; one BLAS call (syrk) per (replicate, point), each
            # of the same shape (H, n) whatever B, so the blocking still cannot change the rounding
            S = np.matmul(Wt, Wt.swapaxes(-1, -2))
            w_ens = np.einsum("h,bhmi->bmi", s.alpha, W)  # (B, M_c, n): sum_h alpha_h w_i^h
            noise_ens[rs, es] = sigma2 * np.sum(w_ens * w_ens, axis=-1)
            for b in range(S.shape[0]):  # replicate order, independent of the blocking
                S_acc[es] += S[b]
        del W  # so that at most one block of weights is alive
    mu = est.mean(axis=0)
    D = est - mu
    C = np.matmul(D.transpose(2, 1, 0), D.transpose(2, 0, 1)) / R  # (m, H, H): Cov_r, ddof=0
    ens_err = np.tensordot(s.alpha, est, axes=(0, 1)) - s.f_eval  # (R, m): alpha^T est_r - f
    mse = np.mean(ens_err**2, axis=0)
    if s.method == "exact":
        C = C + S_acc * (sigma2 / R)
        mse = mse + noise_ens.mean(axis=0)
    C = np.ascontiguousarray(C.transpose(1, 2, 0))
    bias2 = (s.alpha @ mu - s.f_eval) ** 2  # (sum_h alpha_h mu_h - f)^2
    var_term = (s.alpha**2) @ np.einsum("hhm->hm", C)  # sum_h alpha_h^2 V_h
    off = C.copy()
    off[np.arange(H), np.arange(H)] = 0.0
    cov_term = np.einsum("h,g,hgm->m", s.alpha, s.alpha, off)  # sum_{h != g} alpha_h alpha_g C_hg
    _finite(s, {"head_mean": mu, "head_cov": C, "bias2": bias2, "var_term": var_term, "cov_term": cov_term,
                "mse": mse})
    return Decomposition(alpha=s.alpha, x_eval=s.x_eval, f_eval=s.f_eval, head_mean=mu, head_bias=mu - s.f_eval,
                         head_cov=C, bias2=bias2, var_term=var_term, cov_term=cov_term, mse=mse, n=s.n, R=R,
                         method=s.method, seed=s.seed, kernel=s.kernel, blocks=_block_sizes(s), _setup=s)


def decompose(dgp: DGP, W_Q: Any, W_K: Any = None, *, alpha: Any = None, x_eval: Any = None, m: int | None = None,
              n: int, R: int, seed: int, method: str = "exact", kernel: str = "softmax", scale: float | None = None,
              bandwidth: float | None = None, max_memory: int | None = None) -> Decomposition:
    """Bias/variance/covariance decomposition of the ensemble MSE at ``x_eval`` (module docstring):
    ``W_Q``, ``W_K`` ``(H, d, d_k)`` (``W_K=None``: ``W_Q``), ``alpha`` any real ``(H,)`` (default 1/H),
    ``x_eval`` ``(m, d)`` (default m points of the design); the kernel as in ``nw_weights``."""
    s = _prepare(dgp, W_Q, W_K, alpha=alpha, x_eval=x_eval, m=m, n=n, R=R, seed=seed, method=method,
                 kernel=kernel, scale=scale, bandwidth=bandwidth, max_memory=max_memory)
    # an overflow is not warned about but refused, naming its cause, by _finite
    with memory_error_as("R, m", f"R = {s.R}, m = {s.m} (H = {s.H}): the result arrays"), \
            np.errstate(over="ignore", invalid="ignore"):
        return _run(s)


@dataclass(frozen=True)
class MpCheck:
    """High-precision recomputation: ``residual`` = max relative identity residual at ``dps``
    digits; ``agreement[k]`` = max relative |float64 - mp| of term ``k`` (relative to
    ``|mse| + bias2 + |var| + |cov|`` for the four terms, to ``max|f|, max|mu|`` for head_mean,
    to the largest head variance for head_cov); ``digits`` = -log10 of the worst agreement."""

    dps: int
    residual: float
    agreement: dict[str, float]
    digits: float


def _recompute(s: _Setup, num: Callable[[float], Any], dot: Callable, total: Callable) -> Iterator[dict[str, Any]]:
    """The decomposition recomputed from the per-replicate float64 quantities (weights, f(X),
    responses), each converted exactly by ``num``, in the arithmetic of ``num``'s numbers (mpmath
    at a precision, or arb balls); yields per evaluation point mu, C, bias2, var, cov, mse."""
    H, m, R = s.H, s.m, s.R
    alpha = [num(float(a)) for a in s.alpha]
    f = [num(float(v)) for v in s.f_eval]
    sigma2 = num(float(s.dgp.sigma)) ** 2
    zero = num(0.0)
    est = [[[zero] * m for _ in range(H)] for _ in range(R)]
    noise_ens = [[zero] * m for _ in range(R)]
    S_sum = [[[zero] * m for _ in range(H)] for _ in range(H)]
    for rs, es, W, fX, y in _iter_blocks(s):
        for b, r in enumerate(range(rs.start, rs.stop)):
            resp = [num(float(v)) for v in (y[b] if s.method == "simulate" else fX[b])]
            for jj, j in enumerate(range(es.start, es.stop)):
                w = [[num(float(v)) for v in W[b, h, jj]] for h in range(H)]
                for h in range(H):
                    est[r][h][j] = dot(w[h], resp)
                if s.method == "exact":
                    for h in range(H):
                        for g in range(H):
                            S_sum[h][g][j] += dot(w[h], w[g])
                    w_ens = [dot(alpha, col) for col in zip(*w)]
                    noise_ens[r][j] = sigma2 * dot(w_ens, w_ens)
    for j in range(m):
        mu = [total(est[r][h][j] for r in range(R)) / R for h in range(H)]
        C = [[total((est[r][h][j] - mu[h]) * (est[r][g][j] - mu[g]) for r in range(R)) / R
              for g in range(H)] for h in range(H)]
        if s.method == "exact":
            C = [[C[h][g] + sigma2 * S_sum[h][g][j] / R for g in range(H)] for h in range(H)]
        bias2 = (dot(alpha, mu) - f[j]) ** 2
        var = total(alpha[h] ** 2 * C[h][h] for h in range(H))
        cov = total(alpha[h] * alpha[g] * C[h][g] for h in range(H) for g in range(H) if g != h)
        mse = total((dot(alpha, [est[r][h][j] for h in range(H)]) - f[j]) ** 2 for r in range(R)) / R
        if s.method == "exact":
            mse += total(noise_ens[r][j] for r in range(R)) / R
        yield {"j": j, "f": f[j], "mu": mu, "C": C, "bias2": bias2, "var": var, "cov": cov, "mse": mse}


def _check_ops(s: _Setup, what: str) -> None:
    ops = s.R * s.m * s.n * s.H * (s.H + 2)
    if ops > MP_MAX_OPS:
        raise fail(f"sizes for {what}", f"R*m*n*H*(H+2) = {ops} multiply-adds",
                   f"at most {MP_MAX_OPS} (MP_MAX_OPS; the pure-Python recomputation runs ~1e5-1e6/s)")


def _mp_compare(s: _Setup, dec: Decomposition, dps: int) -> MpCheck:
    dps = positive_int("dps", dps, minimum=16)
    _check_ops(s, "mp_check")
    with mpmath.workdps(dps):
        mpf = mpmath.mpf  # float64 -> mpf is exact
        terms = ("bias2", "var_term", "cov_term", "mse", "head_mean", "head_cov")
        resid, agree = mpf(0), {k: mpf(0) for k in terms}
        for p in _recompute(s, mpf, mpmath.fdot, mpmath.fsum):
            j, mu, C, H = p["j"], p["mu"], p["C"], s.H
            bias2, var, cov, mse = p["bias2"], p["var"], p["cov"], p["mse"]
            scale = abs(mse) + bias2 + abs(var) + abs(cov)
            if scale > 0:
                resid = max(resid, abs(mse - (bias2 + var + cov)) / scale)
                for k, v in (("bias2", bias2), ("var_term", var), ("cov_term", cov), ("mse", mse)):
                    agree[k] = max(agree[k], abs(mpf(float(getattr(dec, k)[j])) - v) / scale)
            mscale = max([abs(p["f"])] + [abs(v) for v in mu])
            vscale = max(C[h][h] for h in range(H))
            for h in range(H):
                if mscale > 0:
                    agree["head_mean"] = max(agree["head_mean"], abs(mpf(float(dec.head_mean[h, j])) - mu[h]) / mscale)
                for g in range(H):
                    if vscale > 0:
                        agree["head_cov"] = max(agree["head_cov"],
                                                abs(mpf(float(dec.head_cov[h, g, j])) - C[h][g]) / vscale)
        agreement = {k: float(v) for k, v in agree.items()}
        worst = max(agreement.values())
        digits = math.inf if worst == 0 else -math.log10(worst)
        return MpCheck(dps=dps, residual=float(resid), agreement=agreement, digits=digits)


@dataclass(frozen=True)
class ArbCheck:
    """Ball-arithmetic certificate of the identity: at every evaluation point the enclosure of
    ``|MSE − (bias² + Σα²V + ΣααC)|`` divided by a lower bound of the point's scale
    ``|MSE| + bias² + |var| + |cov|`` is at most ``bound`` (arb at ``prec`` bits)."""

    prec: int
    bound: float
    points: int


def _arb_certify(s: _Setup, prec: int) -> ArbCheck:
    from flint import arb

    prec = positive_int("prec", prec, minimum=64)
    _check_ops(s, "arb_check")
    with precision(prec):
        worst, points = 0.0, 0
        for p in _recompute(s, arb, lambda a, b: sum((x * y for x, y in zip(a, b)), arb(0)),
                            lambda it: sum(it, arb(0))):
            scale = abs(p["mse"]) + p["bias2"] + abs(p["var"]) + abs(p["cov"])
            lo = float(scale.lower())
            if lo > 0:
                worst = max(worst, float(abs(p["mse"] - (p["bias2"] + p["var"] + p["cov"])).upper()) / lo)
                points += 1
        return ArbCheck(prec=prec, bound=worst, points=points)


def decompose_mp(dgp: DGP, W_Q: Any, W_K: Any = None, *, alpha: Any = None, x_eval: Any = None,
                 m: int | None = None, n: int, R: int, seed: int, method: str = "exact", kernel: str = "softmax",
                 scale: float | None = None, bandwidth: float | None = None, max_memory: int | None = None,
                 dps: int = 50) -> tuple[Decomposition, MpCheck]:
    """The float64 :func:`decompose` and its recomputation at ``dps`` digits from the same per-replicate
    float64 quantities: ``R m n H (H+2)`` mpf multiply-adds, capped at ``MP_MAX_OPS``."""
    dec = decompose(dgp, W_Q, W_K, alpha=alpha, x_eval=x_eval, m=m, n=n, R=R, seed=seed, method=method,
                    kernel=kernel, scale=scale, bandwidth=bandwidth, max_memory=max_memory)
    return dec, dec.mp_check(dps)


@dataclass(frozen=True)
class NoiseCheck:
    """For one fixed design: the exact conditional moments of the head estimates and their
    brute-force estimates from ``N`` noise draws, with standard errors."""

    design: np.ndarray  # (n, d)
    x_eval: np.ndarray  # (m, d)
    N: int
    cond_mean: np.ndarray  # (H, m)     sum_i w_i^h f(x_i)
    cond_cov: np.ndarray  # (H, H, m)   sigma^2 sum_i w_i^h w_i^h'
    mean: np.ndarray  # (H, m)          brute-force mean over the N draws
    mean_se: np.ndarray  # (H, m)
    cov: np.ndarray  # (H, H, m)        brute-force covariance (ddof=0)
    cov_se: np.ndarray  # (H, H, m)

def noise_simulation_check(dgp: DGP, W_Q: Any, W_K: Any = None, *, N: int, seed: int, n: int | None = None,
                           design: Any = None, x_eval: Any = None, m: int | None = None, kernel: str = "softmax",
                           scale: float | None = None, bandwidth: float | None = None,
                           max_memory: int | None = None) -> NoiseCheck:
    """The exact conditional moments of the head estimates on one fixed design (``design`` (n, d), or
    replicate 0 of :func:`decompose`) and their estimates from ``N`` simulated noise vectors, drawn from
    ``SeedSequence(seed, spawn_key=(0, 0))`` (used by nothing else)."""
    N = positive_int("N", N, minimum=2)
    seed_ = valid_seed("seed", seed)
    if design is None:
        if n is None:
            raise fail("n", "None", "the design size when no design is given")
        n_ = positive_int("n", n)
    else:
        design = as_array("design", design, ndim=2, keep_float32=False)
        n_ = design.shape[0]
        if n is not None and positive_int("n", n) != n_:
            raise fail("n", repr(n), f"None or len(design) = {n_}")
    s = _prepare(dgp, W_Q, W_K, alpha=None, x_eval=x_eval, m=m, n=n_, R=1, seed=seed_, method="exact",
                 kernel=kernel, scale=scale, bandwidth=bandwidth, max_memory=max_memory)
    # the weights (H, m, n), the noise (N, n), the estimates (H, m, N) with a centred copy, and
    # two (m, N) temporaries
    words = s.H * s.m * n_ + N * n_ + 2 * s.H * s.m * N + 2 * s.m * N
    size = f"N = {N} noise draws of n = {n_} (H = {s.H}, m = {s.m}): {words} float64 values"
    fits_in_memory("N, n", 8 * words, size)
    with memory_error_as("N, n", size):
        return _noise_check(s, dgp, design, n_, N, seed_)


def _noise_check(s: _Setup, dgp: DGP, design: Any, n_: int, N: int, seed_: int) -> NoiseCheck:
    if design is None:
        rng = np.random.default_rng(np.random.SeedSequence(seed_).spawn(1)[0])
        design = dgp.sample_x(rng, (n_,))
    design = _checked_design(dgp, design, n_, "design")
    fX = _checked_f(dgp, design)
    W = nw_weights(np.matmul(s.x_eval[None], s.W_Q), np.matmul(design[None], s.W_K), kernel=s.kernel,
                   scale=s.scale, bandwidth=s.bandwidth, max_memory=s.max_memory)  # (H, m, n)
    sigma = dgp.sigma
    cond_mean = W @ fX
    cond_cov = sigma * sigma * np.einsum("hmi,gmi->hgm", W, W)
    noise_rng = np.random.default_rng(np.random.SeedSequence(seed_, spawn_key=(0, 0)))
    eps = sigma * noise_rng.standard_normal((N, n_))
    F = np.matmul(W, (fX + eps).T)  # (H, m, N)
    mean = F.mean(axis=-1)
    mean_se = F.std(axis=-1, ddof=1) / math.sqrt(N)
    D = F - mean[..., None]
    H = W.shape[0]
    cov = np.empty((H, H, s.m))
    cov_se = np.empty((H, H, s.m))
    for h in range(H):
        for g in range(H):
            z = D[h] * D[g]  # (m, N): sample covariance = mean of z; its SE from z's spread
            cov[h, g] = z.mean(axis=-1)
            cov_se[h, g] = z.std(axis=-1, ddof=1) / math.sqrt(N)
    for name, v in (("cond_cov", cond_cov), ("mean", mean), ("cov", cov), ("cov_se", cov_se)):
        if not np.all(np.isfinite(v)):
            raise fail(f"dgp (f and sigma of {dgp.name!r})", f"overflow to non-finite {name} (sigma = {sigma:.3g}, "
                       f"max |f(design)| = {float(np.max(np.abs(fX))):.3g})",
                       "responses whose squared spread fits in float64")
    return NoiseCheck(design=design, x_eval=s.x_eval, N=N, cond_mean=cond_mean, cond_cov=cond_cov, mean=mean,
                      mean_se=mean_se, cov=cov, cov_se=cov_se)
