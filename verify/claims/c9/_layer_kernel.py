"""Compiled training of the attention layer of :mod:`verify.claims.c9.layer` (numba): the same formulas,
Adam and draws as the numpy reference there. Tokens are columns (``Z`` (p, T)); the parameters are one
flat array ``P`` = (W_Q, W_K, W_V, u), ``u_h = W_O^h[:, y]`` the only column of W_O the loss reads.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from verify.experiments._train_kernel import SUM_FLAGS, adam, axpy, dot, draw, rate, softmax


@njit(cache=True, nogil=True, fastmath=SUM_FLAGS, inline="always")
def _layer_grad(WQ, WK, WV, u, Z, y, G, s, w, zbar, q, o, ut, zd, tied):  # noqa: ANN001, ANN201
    """Loss and gradient (into the flat ``G``, the layout of P) over the contexts ``Z`` (C, p, T)
    with targets ``y`` (C,). Scores as ``s_t = ũᵀ z_t`` with ``ũ = W_K q / sqrt(d_k)`` and values
    through ``z̄ = Σ_t w_t z_t`` (``o = W_Vᵀ z̄``): p products per token and head, not p (d_k + d_v).
    ``tied`` (heads with one W_Q, W_K): the attention is computed once, and the gradient of the shared
    W_Q, W_K (the sum over heads) goes to every head's copy."""
    H, p, k = WQ.shape
    v = WV.shape[2]
    C, _, T = Z.shape
    c = 1.0 / math.sqrt(k)
    nq, nv = H * p * k, H * p * v
    gQ, gK = G[:nq].reshape(H, p, k), G[nq:2 * nq].reshape(H, p, k)
    gV, gu = G[2 * nq:2 * nq + nv].reshape(H, p, v), G[2 * nq + nv:].reshape(H, v)
    G[:] = 0.0
    loss = 0.0
    for ci in range(C):
        Zc = Z[ci]
        zmax = 0.0
        for t in range(T):
            nz = 0.0
            for l in range(p):
                nz += Zc[l, t] * Zc[l, t]
            zmax = max(zmax, nz)
        yhat = 0.0
        for h in range(H):
            if tied and h > 0:                                  # the attention of head 0
                q[h], w[h], zbar[h] = q[0], w[0], zbar[0]
                for b in range(v):
                    o[h, b] = dot(zbar[h], WV[h, :, b])
                    yhat += o[h, b] * u[h, b]
                continue
            for a in range(k):
                acc = 0.0
                for l in range(p):
                    acc += Zc[l, T - 1] * WQ[h, l, a]
                q[h, a] = c * acc
            un = 0.0
            for l in range(p):
                acc = 0.0
                for a in range(k):
                    acc += WK[h, l, a] * q[h, a]
                ut[l] = acc
                un += acc * acc
            s[:] = 0.0
            for l in range(p):
                axpy(ut[l], Zc[l], s)
            softmax(s, w[h], math.sqrt(un * zmax) * (1 + 1e-6) > 500.0)
            for l in range(p):
                zbar[h, l] = dot(w[h], Zc[l])
            for b in range(v):
                acc = 0.0
                for l in range(p):
                    acc += zbar[h, l] * WV[h, l, b]
                o[h, b] = acc
                yhat += acc * u[h, b]
        r = yhat - y[ci]
        loss += r * r
        g = 2.0 * r / C
        od = 0.0
        ut[:] = 0.0
        for h in range(H):
            if not tied:
                od = 0.0
                ut[:] = 0.0
            for b in range(v):
                gu[h, b] += g * o[h, b]
                od += o[h, b] * (g * u[h, b])
            for l in range(p):
                for b in range(v):
                    gV[h, l, b] += zbar[h, l] * (g * u[h, b])
                    ut[l] += WV[h, l, b] * (g * u[h, b])          # W_V δo (summed over heads when tied)
            if tied and h < H - 1:
                continue
            hh = 0 if tied else h
            s[:] = 0.0
            for l in range(p):
                axpy(ut[l], Zc[l], s)
            for t in range(T):                                  # δs_t = w_t (<v_t, δo> − <o, δo>)
                s[t] = w[hh, t] * (s[t] - od)
            for l in range(p):
                zd[l] = dot(s, Zc[l])                           # Σ_t δs_t z_t
                for a in range(k):
                    gK[hh, l, a] += zd[l] * q[hh, a]
            for a in range(k):
                acc = 0.0
                for l in range(p):
                    acc += WK[hh, l, a] * zd[l]
                for l in range(p):
                    gQ[hh, l, a] += Zc[l, T - 1] * (c * acc)
    if tied:
        for h in range(1, H):
            gQ[h] = gQ[0]
            gK[h] = gK[0]
    return loss / C


@njit(cache=True, nogil=True, fastmath=SUM_FLAGS)
def layer_segment(P, M, V_, tied, t0, t1, steps, lr, cosine, H, p, k, v, gens, code, design, sigma, n,  # noqa: ANN001
                  C, losses):  # noqa: ANN001, ANN201
    """Steps ``t0 .. t1 - 1`` of the runs ``P`` (runs, size) that share one data stream: draw the step's
    C contexts (points from ``gens[0]``, their noise from ``gens[1]``, as ``contexts``), then for
    each run the loss and gradient and (while t < steps) one Adam update; ``losses[r, t - t0]``."""
    nq, nv = H * p * k, H * p * v
    G = np.zeros(P.shape[1])
    T, d = n + 1, p - 1
    Z, y = np.empty((C, p, T)), np.empty(C)
    s, w, zbar, q, o = np.empty(T), np.empty((H, T)), np.empty((H, p)), np.empty((H, k)), np.empty((H, v))
    ut, zd, fx = np.empty(p), np.empty(p), np.empty(T)
    for t in range(t0, t1):
        for ci in range(C):
            draw(gens[0], gens[1], code, design, sigma, Z[ci, :d], fx)
            Z[ci, d] = fx
            y[ci] = fx[T - 1]
            Z[ci, d, T - 1] = 0.0
        for r in range(P.shape[0]):
            Pr = P[r]
            WQ, WK = Pr[:nq].reshape(H, p, k), Pr[nq:2 * nq].reshape(H, p, k)
            WV, u = Pr[2 * nq:2 * nq + nv].reshape(H, p, v), Pr[2 * nq + nv:].reshape(H, v)
            losses[r, t - t0] = _layer_grad(WQ, WK, WV, u, Z, y, G, s, w, zbar, q, o, ut, zd, tied[r])
            if t < steps:
                adam(Pr, G, M[r], V_[r], rate(lr, t, steps, cosine), t + 1)
