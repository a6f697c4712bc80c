"""Informative regimes for the real-NW-head parts of C5, C6, C7 and C9: the design record every
empirical part states, Var f in closed form, and the torus design's circle heads with their
population MSE (SPEC, "How an experiment is designed").

Why the torus. On the Gaussian design a softmax head is an exponentially tilted average: weights
``∝ exp(aᵀx_i)`` tilt N(0, I) to N(a, I), so the head tends to ``E f(X + a)`` (f smoothed at unit
bandwidth whatever n): with ``sin(2 x_1)`` every head sits near ``Var f``. On the *torus* design
(:mod:`verify.numeric.dgp`: each coordinate pair on a circle of radius r = √2) a head whose projection
keeps whole circles has keys of equal norm, so ``exp(s q·k) ∝ exp(−s‖q − k‖²/2)``: a Gaussian NW
smoother (C1), i.e. a von Mises kernel of concentration ``κ = s r²`` on each of its circles, local in
the angles. The population head of a circle head (query circles ``q_l`` paired with key circles
``k_l``) is ``Σ_l (P_κ g_{k_l})(θ_{q_l})`` for a target ``f = Σ_b g_b(θ_b)``, with ``P_κ`` the von
Mises smoothing (harmonic m multiplied by ``I_m(κ)/I_0(κ)``): :func:`torus_population_mse`.
"""

from __future__ import annotations

import functools
import math
from typing import Any

import numpy as np

from verify._validate import fail, finite_number, positive_int
from verify.numeric.dgp import TORUS_RADIUS, make_dgp
from verify.numeric.stats import target_variance
from verify.schema import Choice, Schema, Seed

__all__ = ["timeless", "REGIME_PARAMS", "variance_of_f", "design_record", "DESIGN_KEYS", "SIZES", "circle_heads",
           "von_mises_smooth", "torus_population_mse", "QUAD_POINTS"]

#: The design choices every empirical part states, each with a one-line reason.
DESIGN_KEYS = ("head_weights", "kernel_scale", "design_density", "target", "noise", "n", "steps", "convergence",
               "seeds", "diagnostic")
SIZES = ("quick", "default", "large")
#: A regime replay's parameters: a named size (a file cannot ask for unbounded work) and the seed.
REGIME_PARAMS = Schema(size=Choice(SIZES), seed=Seed())
#: Quadrature points on a circle: the trapezoid rule is spectrally accurate for smooth periodic
#: integrands; 512 points resolve harmonics far beyond those of e^{κ cos θ} for κ <= 64 (error
#: below 1e-14, checked against Bessel functions in the tests).
QUAD_POINTS = 512
#: The largest kernel concentration the quadrature is trusted for.
MAX_KAPPA = 64.0


def variance_of_f(name: str, d: int, design: str, **params: Any) -> float:
    """Var f of the named target in closed form (:func:`verify.numeric.stats.target_variance`)."""
    return target_variance(make_dgp(name, d=d, sigma=1.0, design=design, **params), method="closed")[0]


def design_record(**entries: Any) -> dict[str, dict[str, Any]]:
    """The design choices of an experiment as data: each of :data:`DESIGN_KEYS` (and any other)
    given as ``(value, reason)``; returns ``{key: {"value": ..., "reason": ...}}``."""
    missing = [k for k in DESIGN_KEYS if k not in entries]
    if missing:
        raise fail("design", f"no entry for {', '.join(missing)}", f"every one of {', '.join(DESIGN_KEYS)}")
    out = {}
    for k, v in entries.items():
        if not (isinstance(v, tuple) and len(v) == 2 and isinstance(v[1], str) and v[1].strip()):
            raise fail(f"design.{k}", repr(v)[:80], "a (value, reason) pair with a non-empty reason")
        out[k] = {"value": v[0], "reason": v[1]}
    return out


def timeless(reg: dict[str, Any]) -> dict[str, Any]:
    """A regime's record without its CPU time: what a replay must reproduce exactly."""
    return {k: v for k, v in reg.items() if k != "seconds"}


def circle_heads(circles: Any, d: int, query_circles: Any = None, gain: float = 1.0) -> tuple[np.ndarray, np.ndarray]:
    """``(W_Q, W_K)`` (H, d, 2c) of circle heads on the torus design: head h's keys read the
    coordinate pairs of the circles ``circles[h]`` (0-based), its queries those of
    ``query_circles[h]`` (default: the same), paired in order; columns of norm ``gain``."""
    d = positive_int("d", d, minimum=2)
    if d % 2:
        raise fail("d", repr(d), "an even dimension (circles are coordinate pairs)")
    B = d // 2
    qc = circles if query_circles is None else query_circles

    def check(name: str, cs: Any) -> list[list[int]]:
        if not isinstance(cs, (list, tuple)) or not cs:
            raise fail(name, repr(cs)[:80], "a non-empty list of per-head circle lists")
        out = []
        for h, c in enumerate(cs):
            if not isinstance(c, (list, tuple)) or not c or any(isinstance(b, bool) or not isinstance(b, (int, np.integer))
                                                                or not 0 <= b < B for b in c) or len(set(c)) != len(c):
                raise fail(f"{name}[{h}]", repr(c)[:80], f"distinct circle indices in 0..{B - 1}")
            out.append([int(b) for b in c])
        return out

    kc, qc = check("circles", circles), check("query_circles", qc)
    if len(kc) != len(qc) or any(len(a) != len(b) for a, b in zip(kc, qc)):
        raise fail("query_circles", repr(query_circles)[:80], "as many heads and circles per head as circles")
    if len({len(c) for c in kc}) != 1:
        raise fail("circles", repr(circles)[:80], "the same number of circles in every head")
    gain = finite_number("gain", gain, minimum=0.0, strict_minimum=True)
    H, c = len(kc), len(kc[0])
    WQ, WK = np.zeros((H, d, 2 * c)), np.zeros((H, d, 2 * c))
    for h in range(H):
        for j, (bq, bk) in enumerate(zip(qc[h], kc[h])):
            WQ[h, 2 * bq:2 * bq + 2, 2 * j:2 * j + 2] = gain * np.eye(2)
            WK[h, 2 * bk:2 * bk + 2, 2 * j:2 * j + 2] = gain * np.eye(2)
    return WQ, WK


def _grid() -> np.ndarray:
    return 2 * math.pi * np.arange(QUAD_POINTS) / QUAD_POINTS


@functools.lru_cache(maxsize=64)
def _vm_weights(kappa: float) -> np.ndarray:
    t = _grid()
    K = np.exp(kappa * (np.cos(t[:, None] - t[None, :]) - 1.0))    # shifted by e^-κ (cancels in the ratio)
    K /= K.sum(axis=1, keepdims=True)
    K.setflags(write=False)
    return K


def von_mises_smooth(values: Any, kappa: float) -> np.ndarray:
    """``(P_κ g)(θ_j)`` on the quadrature grid from ``g(θ_j)`` (QUAD_POINTS values): the population
    NW head of one circle with the von Mises kernel ``e^{κ cos(θ − φ)}`` (uniform design)."""
    g = np.asarray(values, dtype=float)
    if g.shape != (QUAD_POINTS,) or not np.all(np.isfinite(g)):
        raise fail("values", f"shape {g.shape}", f"{QUAD_POINTS} finite values on the circle grid")
    kappa = finite_number("kappa", kappa, minimum=0.0, maximum=MAX_KAPPA)
    return _vm_weights(kappa) @ g


def _circle_terms(name: str, d: int, params: dict) -> list[np.ndarray]:
    """g_b on the grid for a target f = Σ_b g_b(θ_b) on the torus (x_{2b−1} = r cos θ_b, x_{2b} = r sin θ_b)."""
    B, t, r = d // 2, _grid(), TORUS_RADIUS
    zero = np.zeros(QUAD_POINTS)
    if name == "single-index":
        w = float(params.get("freq", 2.0))
        return [np.sin(w * r * np.cos(t))] + [zero] * (B - 1)
    if name == "linear":
        return [r * np.cos(t)] + [zero] * (B - 1)
    if name == "block":
        return [r * r * np.cos(t) * np.sin(t) / math.sqrt(B)] * B
    if name == "zero":
        return [zero] * B
    raise fail("name", repr(name), "a target that is a sum over circles: single-index, linear, block, zero")


def torus_population_mse(name: str, d: int, heads: Any, alpha: Any, kappa: Any, **params: Any) -> float:
    """Population (n → ∞) MSE of an ensemble of circle heads on the torus design, by quadrature:
    ``heads[h]`` its (query circle, key circle) pairs, ``kappa[h]`` its concentration ``s r² gain²``,
    ``alpha`` the head weights; head h tends to ``Σ_l (P_κ g_{k_l})(θ_{q_l})`` plus the means of the g_b
    it does not read, the circles independent."""
    d = positive_int("d", d, minimum=2)
    make_dgp(name, d=d, sigma=1.0, design="torus", **params)
    g = _circle_terms(name, d, params)
    B = d // 2
    if not isinstance(heads, (list, tuple)) or not heads:
        raise fail("heads", repr(heads)[:80], "a non-empty list of per-head (query, key) circle pairs")
    alpha = np.asarray(alpha, dtype=float)
    kap = np.broadcast_to(np.asarray(kappa, dtype=float), (len(heads),))
    if alpha.shape != (len(heads),) or not np.all(np.isfinite(alpha)):
        raise fail("alpha", repr(alpha)[:80], f"{len(heads)} finite head weights")
    G = [-gb.copy() for gb in g]
    const = 0.0
    means = [float(gb.mean()) for gb in g]
    for h, pairs in enumerate(heads):
        read = set()
        for pair in pairs:
            if not (isinstance(pair, (list, tuple)) and len(pair) == 2 and all(
                    isinstance(b, (int, np.integer)) and not isinstance(b, bool) and 0 <= b < B for b in pair)):
                raise fail(f"heads[{h}]", repr(pairs)[:80], f"(query circle, key circle) pairs in 0..{B - 1}")
            bq, bk = int(pair[0]), int(pair[1])
            G[bq] += alpha[h] * von_mises_smooth(g[bk], float(kap[h]))
            read.add(bk)
        const += alpha[h] * sum(means[b] for b in range(B) if b not in read)
    var = sum(float(np.var(Gb)) for Gb in G)
    mean = sum(float(Gb.mean()) for Gb in G) + const
    return var + mean * mean
