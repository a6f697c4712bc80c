"""Compiled training steps (numba): the NW-ensemble heads of :mod:`verify.experiments.training`,
one run at a time, with the data drawn inside the loop.

Imported only where :func:`verify.numeric.nw.get_backend` is ``"numba"``; otherwise the numpy code of
:mod:`verify.experiments.training` runs, and it stays the reference: the same formulas, the same Adam,
the same data from the same generators in the same order (numba's ``Generator`` draws are numpy's
algorithms), so the two paths agree to rounding (``tests/test_training.py``). Loops run over a row of
keys (``(d_k, n)``), which LLVM vectorises; the softmax uses the kernel's ``exp``, shifted by the row
maximum only when the Cauchy-Schwarz bound of the scores exceeds 500.

A run's numbers do not depend on whether numba compiled the code in this process or loaded it from
its cache: the helpers with reassociating sums (``dot``, ``axpy``, ``softmax``, the gradient) are
inlined where they are called (``inline="always"``), so each segment is one compiled unit under their
fastmath flags (the learning rate, :func:`rate`, is compiled on its own without them). Called
instead, the numbers depended on whether the caller came from the cache (1e-14 apart after 600
steps; ``tests/test_training.py``).
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from verify.numeric._kernel import exp as _exp

__all__ = ["TARGETS", "DESIGNS", "nw_segment", "target", "draw", "adam", "rate", "softmax", "dot", "axpy", "SUM_FLAGS"]

#: Targets and designs by the code the compiled functions take (verify.numeric.dgp, default parameters).
TARGETS = ("single-index", "additive", "bump", "linear", "block", "sin-block", "zero")
DESIGNS = ("normal", "torus", "uniform")
#: Reassociation (vectorised sums) and FMA, as the NW kernel's sums.
SUM_FLAGS = {"reassoc", "contract", "nsz"}
_SIN_BLOCK_VAR = ((1.0 - math.exp(-2.0)) / 2.0) ** 2
_TORUS_RADIUS = math.sqrt(2.0)
_UNIFORM_HALF = math.sqrt(3.0)


@njit(cache=True, nogil=True)
def target(code, X, i):  # noqa: ANN001, ANN201
    """f at the point ``X[:, i]`` (points as columns) of target ``code`` (:data:`TARGETS`)."""
    d = X.shape[0]
    if code == 0:
        return math.sin(2.0 * X[0, i])
    if code == 1:
        s = 0.0
        for j in range(d):
            s += math.sin(X[j, i])
        return s / math.sqrt(d)
    if code == 2:
        s = 0.0
        for j in range(d):
            s += X[j, i] * X[j, i]
        return math.exp(-s / 2.0)
    if code == 3:
        return X[0, i]
    if code == 4 or code == 5:
        s = 0.0
        for b in range(d // 2):
            s += X[2 * b, i] * X[2 * b + 1, i] if code == 4 else math.sin(X[2 * b, i]) * math.sin(X[2 * b + 1, i])
        return s / math.sqrt(d // 2) if code == 4 else s / math.sqrt(d // 2 * _SIN_BLOCK_VAR)
    return 0.0


@njit(cache=True, nogil=True)
def draw(gx, gy, code, design, sigma, X, y):  # noqa: ANN001, ANN201
    """Design points as the columns of ``X`` (d, n), each drawn from ``gx`` in numpy's order
    (verify.numeric.dgp), then their values ``y`` = f + σ·noise, the noise from ``gy``."""
    d, n = X.shape
    for i in range(n):
        if design == 1:
            for b in range(d // 2):
                t = gx.uniform(0.0, 2.0 * math.pi)
                X[2 * b, i] = _TORUS_RADIUS * math.cos(t)
                X[2 * b + 1, i] = _TORUS_RADIUS * math.sin(t)
        else:
            for j in range(d):
                X[j, i] = gx.uniform(-_UNIFORM_HALF, _UNIFORM_HALF) if design == 2 else gx.standard_normal()
    for i in range(n):
        y[i] = target(code, X, i) + sigma * gy.standard_normal()


@njit(cache=True, nogil=True, fastmath={"contract"})
def adam(p, g, m, v, lr, t):  # noqa: ANN001, ANN201
    """One Adam update of the flat arrays ``p`` in place (β1 0.9, β2 0.999, ε 1e-8, step ``t`` >= 1)."""
    c1, c2 = 1.0 - 0.9**t, 1.0 - 0.999**t
    for i in range(p.shape[0]):
        m[i] = 0.9 * m[i] + (1 - 0.9) * g[i]
        v[i] = 0.999 * v[i] + (1 - 0.999) * g[i] * g[i]
        p[i] -= lr * (m[i] / c1) / (math.sqrt(v[i] / c2) + 1e-8)


@njit(cache=True, nogil=True)
def rate(lr, t, steps, cosine):  # noqa: ANN001, ANN201
    """Step ``t``'s learning rate: ``lr``, or on the cosine schedule ``lr (1 + cos(pi t / steps)) / 2``."""
    return lr * 0.5 * (1.0 + math.cos(math.pi * t / steps)) if cosine else lr


@njit(cache=True, nogil=True, fastmath=SUM_FLAGS, inline="always")
def dot(a, b):  # noqa: ANN001, ANN201
    s = 0.0
    for i in range(a.shape[0]):
        s += a[i] * b[i]
    return s


@njit(cache=True, nogil=True, fastmath=SUM_FLAGS, inline="always")
def axpy(a, x, y):  # noqa: ANN001, ANN201
    """``y += a x``."""
    for i in range(x.shape[0]):
        y[i] += a * x[i]


@njit(cache=True, nogil=True, fastmath=SUM_FLAGS, inline="always")
def softmax(s, w, shifted):  # noqa: ANN001, ANN201
    """``w = softmax(s)`` (``s`` is overwritten); the row maximum is subtracted when ``shifted``."""
    top = 0.0
    if shifted:
        top = -math.inf
        for i in range(s.shape[0]):
            top = max(top, s[i])
    den = 0.0
    for i in range(s.shape[0]):
        e = _exp(s[i] - top)
        w[i] = e
        den += e
    inv = 1.0 / den
    for i in range(s.shape[0]):
        w[i] *= inv


@njit(cache=True, nogil=True, fastmath=SUM_FLAGS, inline="always")
def _nw_grad(WQ, WK, alpha, XT, y, XqT, yq, gQ, gK, ga, KT, Qs, W, s, G, heads, dK):  # noqa: ANN001, ANN201
    """Split-mode loss and gradient of one run (training's module docstring), points as columns
    (``XT`` (d, n), ``XqT`` (d, m)); returns the loss."""
    H, d, k = WQ.shape
    n, m = XT.shape[1], XqT.shape[1]
    c = 1.0 / math.sqrt(k)
    for h in range(H):
        kmax = 0.0
        for a in range(k):
            KT[h, a] = 0.0
            dK[h, a] = 0.0
            for l in range(d):
                axpy(WK[h, l, a], XT[l], KT[h, a])
        for i in range(n):
            t = 0.0
            for a in range(k):
                t += KT[h, a, i] * KT[h, a, i]
            kmax = max(kmax, t)
        for j in range(m):
            qn = 0.0
            s[:] = 0.0
            for a in range(k):
                t = 0.0
                for l in range(d):
                    t += XqT[l, j] * WQ[h, l, a]
                Qs[h, j, a] = c * t
                qn += c * t * c * t
                axpy(c * t, KT[h, a], s)
            softmax(s, W[h, j], math.sqrt(qn * kmax) * (1 + 1e-6) > 500.0)
            heads[h, j] = dot(W[h, j], y)
    gQ[:] = 0.0
    ga[:] = 0.0
    loss = 0.0
    for j in range(m):
        f = 0.0
        for h in range(H):
            f += alpha[h] * heads[h, j]
        r = f - yq[j]
        loss += r * r
        g = 2.0 * r / m
        for h in range(H):
            ga[h] += g * heads[h, j]
            gam, hj, w = g * alpha[h], heads[h, j], W[h, j]
            for i in range(n):
                G[i] = gam * w[i] * (y[i] - hj)
            for a in range(k):
                acc = c * dot(G, KT[h, a])
                axpy(Qs[h, j, a], G, dK[h, a])
                for l in range(d):
                    gQ[h, l, a] += XqT[l, j] * acc
    for h in range(H):
        for l in range(d):
            for a in range(k):
                gK[h, l, a] = dot(XT[l], dK[h, a])
    return loss / m


@njit(cache=True, nogil=True, fastmath=SUM_FLAGS)
def nw_segment(P, M, V, learn, t0, t1, steps, lr, cosine, H, d, k, gens, code, design, sigma, n, m,  # noqa: ANN001
               losses):  # noqa: ANN001, ANN201
    """Steps ``t0 .. t1 - 1`` of one run: draw the step's keys, their noise, queries and their noise
    from ``gens`` (in that order, as ``_Stream``), take the loss and gradient, and (while t < steps)
    one Adam update of the flat parameters ``P`` = (W_Q, W_K, α) (α only when ``learn``).
    ``losses[t - t0]``: the loss of step t before its update."""
    nq, nk = H * d * k, 2 * H * d * k
    WQ, WK, alpha = P[:nq].reshape(H, d, k), P[nq:nk].reshape(H, d, k), P[nk:]
    G = np.zeros_like(P)
    gQ, gK, ga = G[:nq].reshape(H, d, k), G[nq:nk].reshape(H, d, k), G[nk:]
    XT, y, XqT, yq = np.empty((d, n)), np.empty(n), np.empty((d, m)), np.empty(m)
    KT, Qs, W, s, Gs = np.empty((H, k, n)), np.empty((H, m, k)), np.empty((H, m, n)), np.empty(n), np.empty(n)
    heads, dK = np.empty((H, m)), np.empty((H, k, n))
    size = nk + H if learn else nk
    for t in range(t0, t1):
        draw(gens[0], gens[1], code, design, sigma, XT, y)
        draw(gens[2], gens[3], code, design, sigma, XqT, yq)
        losses[t - t0] = _nw_grad(WQ, WK, alpha, XT, y, XqT, yq, gQ, gK, ga, KT, Qs, W, s, Gs, heads, dK)
        if t < steps:
            adam(P[:size], G[:size], M[:size], V[:size], rate(lr, t, steps, cosine), t + 1)
