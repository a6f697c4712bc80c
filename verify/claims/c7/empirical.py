"""C7's empirical optimum on real NW ensembles at a fixed budget D = H·d_k, in two regimes declared
before the run (the judging is the check's):

* the **torus** (:data:`TORUS`): circle heads, each a von Mises (Gaussian NW) smoother of the d_k/2
  circles it reads, drawn uniformly and independently per head. The MSE is averaged over the head draws
  exactly, ``E_heads MSE = MSE_1/H + (1 − 1/H) MSE_all`` (``MSE_1`` the mean single-head MSE over every
  circle set, ``MSE_all`` that of the uniform ensemble of every circle set); what stays random is the
  design, R replicates of n_max keys (the estimator at n uses the first n) and m evaluation points;
* the **Gaussian design** (:data:`GAUSSIAN`): Haar-random heads at the paper's scale 1/sqrt(d_k) on
  x ~ N(0, I), the exact fixed-design MSE of :func:`verify.experiments.scaling.c7_task`.
"""

from __future__ import annotations

import itertools
import math
from typing import Any

import numpy as np

from verify.experiments import scaling
from verify.experiments.regimes import DESIGN_KEYS, QUAD_POINTS, design_record, variance_of_f, von_mises_smooth
from verify.numeric.dgp import TORUS_RADIUS
from verify.numeric.stats import bootstrap_argmin, r_squared

#: The torus regime: d = 16 (8 circles), D = 16, the target sin(freq x_1) (circle 0 alone), σ, and
#: κ = kappa2 √(2/d_k) per circle (the paper's scale 1/sqrt(d_k): Gaussian bandwidth ∝ d_k^{1/4}).
TORUS = {"d": 16, "D": 16, "freq": 1.0, "sigma": 0.1, "kappa2": 8.0}
#: n grid, design replicates R and evaluation points m per replicate, by size.
TORUS_RUNS = {"quick": ((32, 64, 128, 256), 8, 16), "default": ((32, 64, 128, 256, 512), 16, 32),
              "large": ((32, 64, 128, 256, 512, 1024, 2048), 32, 32)}
#: The Gaussian-design regime: the grid of :mod:`verify.experiments.scaling` and its configuration.
GAUSSIAN = {"dgp": "single-index", "d": 16, "sigma": 1.0, "D": 16}
#: Bootstrap resamples of the draws for the probability of each argmin (its Monte Carlo SE <= 0.011).
RESAMPLES = 2000


def torus_head_sizes(d: int, D: int) -> list[int]:
    """The even divisors d_k of D with d_k <= d: heads of whole circles."""
    return [k for k in range(2, min(D, d) + 1, 2) if D % k == 0]


def torus_kappa(kappa2: float, d_k: int) -> float:
    """The concentration per circle of a head of size d_k: kappa2 at d_k = 2, ∝ 1/sqrt(d_k)."""
    return kappa2 * math.sqrt(2.0 / d_k)


def torus_values(d: int, D: int, ns: tuple[int, ...], R: int, m: int, seed: int, *, freq: float, sigma: float,
                 kappa2: float) -> np.ndarray:
    """``(R, len(ns), len(d_k))``: per design replicate, n and head size, the integrated MSE against f of
    H = D/d_k random circle heads with α_h = 1/H, averaged exactly over the head draws (module doc).
    Replicate r draws n_max key angles, then m query angles, from ``default_rng(SeedSequence([seed, r]))``.
    A head reading the circle set S has the kernel ``Π_{b∈S} exp(κ (cos(θ_b − θ'_b) − 1))``."""
    B, dks, nmax = d // 2, torus_head_sizes(d, D), ns[-1]
    upto = (np.arange(nmax)[:, None] < np.array(ns)[None, :]).astype(float)    # (n_max, len(ns)): key i < n
    out = np.empty((R, len(ns), len(dks)))
    for r in range(R):
        rng = np.random.default_rng(np.random.SeedSequence([seed, r]))
        tk, tq = rng.uniform(0.0, 2 * math.pi, (nmax, B)), rng.uniform(0.0, 2 * math.pi, (m, B))
        fk, fq = np.sin(freq * TORUS_RADIUS * np.cos(tk[:, 0])), np.sin(freq * TORUS_RADIUS * np.cos(tq[:, 0]))
        uq, uk = np.stack([np.cos(tq.T), np.sin(tq.T)], -1), np.stack([np.cos(tk.T), np.sin(tk.T)], 1)
        cos = (uq @ uk).reshape(B, m * nmax) - 1.0                                # cos(θ_b − θ'_b) − 1 <= 0
        sums = np.concatenate([upto, upto * fk[:, None]], 1)
        for j, k in enumerate(dks):
            E = np.exp(torus_kappa(kappa2, k) * cos)
            sets = list(itertools.combinations(range(B), k // 2))                 # every circle set of a head
            K = np.empty((len(sets), m * nmax))
            for s, S in enumerate(sets):
                K[s] = E[S[0]]
                for b in S[1:]:
                    K[s] *= E[b]
            K = K.reshape(len(sets), m, nmax)
            den, num = np.split(K @ sums, 2, axis=-1)                             # (sets, m, len(ns))
            err = num / den - fq[:, None]
            every = np.mean(np.mean(err, axis=0) ** 2, axis=0)
            inv, Km = np.moveaxis(1.0 / den, 0, -1), np.moveaxis(K, 0, 1)         # (m, len(ns), sets), (m, sets, n)
            for i, n in enumerate(ns):
                wbar = (inv[:, i:i + 1, :] @ Km[:, :, :n])[:, 0] / len(sets)      # Σ_S w_S / |sets|
                every[i] += sigma**2 * np.mean(np.sum(wbar * wbar, axis=-1))
            single = np.mean(err**2 + sigma**2 * (np.square(K, out=K) @ upto) / den**2, axis=(0, 1))
            H = D // k
            out[r, :, j] = single / H + (1 - 1 / H) * every
    return out


def torus_population(d: int, D: int, *, freq: float, kappa2: float) -> dict[str, list[float]]:
    """The population MSE (n → ∞) of each head size, averaged exactly over the head draws: a head that
    reads the signal circle tends to ``P_κ g`` (von Mises smoothing of ``g(θ) = sin(freq r cos θ)``), any
    other to the mean ``ḡ``; with N of the H heads on the signal (binomial, p = d_k/d), ``E ‖(N/H)(P_κ g − ḡ)
    + ḡ − g‖² = ‖p (P_κ g − ḡ) + ḡ − g‖² + p (1 − p)/H ‖P_κ g − ḡ‖²``."""
    t = 2 * math.pi * np.arange(QUAD_POINTS) / QUAD_POINTS
    g = np.sin(freq * TORUS_RADIUS * np.cos(t))
    out = []
    for k in torus_head_sizes(d, D):
        p, H = k / d, D // k
        s = von_mises_smooth(g, torus_kappa(kappa2, k)) - g.mean()
        out.append(float(np.mean((p * s + g.mean() - g) ** 2) + p * (1 - p) / H * np.mean(s**2)))
    return {"d_k": torus_head_sizes(d, D), "population_mse": out}


def torus(size: str, seed: int) -> dict[str, Any]:
    """The torus regime at a named size: the MSE per replicate, n and d_k, Var f, the population MSE per
    d_k (the positive control) and the design with its reasons."""
    p, (ns, R, m) = TORUS, TORUS_RUNS[size]
    values = torus_values(p["d"], p["D"], ns, R, m, seed, freq=p["freq"], sigma=p["sigma"], kappa2=p["kappa2"])
    return {"n": list(ns), "d_k": torus_head_sizes(p["d"], p["D"]), "values": values, "d": p["d"], "D": p["D"],
            "sigma": p["sigma"], "draws": f"{R} designs", "var_f": variance_of_f("single-index", p["d"], "torus",
                                                                               freq=p["freq"]),
            "population": torus_population(p["d"], p["D"], freq=p["freq"], kappa2=p["kappa2"])["population_mse"],
            "design": _torus_design(ns, R, m)}


def gaussian(grid: str, seed: int) -> dict[str, Any]:
    """The Gaussian-design regime on a named grid of :mod:`verify.experiments.scaling`: the exact MSE of
    every (seed, n, d_k) of :data:`GAUSSIAN`, per seed (one head draw and R designs each)."""
    g = GAUSSIAN
    tasks = [t.params for t in scaling.grid_tasks(grid, seed) if all(t.params[k] == v for k, v in g.items())]
    seeds, ns, dks = (sorted({t[k] for t in tasks}) for k in ("seed", "n", "d_k"))
    values = np.empty((len(seeds), len(ns), len(dks)))
    for t in tasks:
        values[seeds.index(t["seed"]), ns.index(t["n"]), dks.index(t["d_k"])] = scaling.c7_task(t)["mse"]
    cfg = next(c for c in scaling.GRIDS[grid] if c["dgp"] == g["dgp"] and g["D"] in c["D"])
    return {"n": ns, "d_k": dks, "values": values, "d": g["d"], "D": g["D"], "sigma": g["sigma"],
            "draws": f"{len(seeds)} seeds", "var_f": variance_of_f(g["dgp"], g["d"], "normal", freq=2.0),
            "design": _gaussian_design(ns, cfg)}


def summarise(reg: dict[str, Any], seed: int) -> dict[str, Any]:
    """What a regime says about the optimum: per n the mean MSE over the draws (and its SE), d_k* (the
    argmin of the mean), the bootstrap probability of each d_k being the argmin (resampling the draws,
    ``default_rng(SeedSequence([seed, 1]))``), R² of the best and of the sample mean of y (the reference:
    ``E (ȳ − f(x))² = Var f (1 + 1/n) + σ²/n``, so R² = −(1 + σ²/Var f)/n); the stated law's growth of d_k*
    over the n grid, ``(log n_max/log n_min)^(2/(4+d))``, and the grid's step (its largest ratio of
    neighbouring d_k) and cap (its largest d_k)."""
    v, dks, ns, var_f = reg["values"], reg["d_k"], reg["n"], reg["var_f"]
    Y = v.mean(axis=0)
    rng = np.random.default_rng(np.random.SeedSequence([seed, 1]))
    prob = np.array([bootstrap_argmin(v[:, i, :], rng, RESAMPLES) for i in range(len(ns))])
    best = np.argmin(Y, axis=1)
    return {"n": ns, "d_k": dks, "D": reg["D"], "d": reg["d"], "draws": reg["draws"], "var_f": var_f,
            "mse": Y.tolist(), "se": (v.std(axis=0, ddof=1) / math.sqrt(len(v))).tolist(),
            "best_d_k": [dks[j] for j in best], "argmin_prob": [float(prob[i, j]) for i, j in enumerate(best)],
            "prob": prob.tolist(), "best_r2": [float(r_squared(Y[i, j], var_f)) for i, j in enumerate(best)],
            "reference_r2": [-(1 + reg["sigma"] ** 2 / var_f) / n for n in ns],
            "law_growth": (math.log(ns[-1]) / math.log(ns[0])) ** (2 / (4 + reg["d"])),
            "grid_step": max(b / a for a, b in zip(dks, dks[1:])), "cap": dks[-1],
            **({"population": reg["population"], "variance_at_smallest_n": (Y[0] - reg["population"]).tolist()}
               if "population" in reg else {})}


#: What both regimes' designs share: the weights of the candidate models, no training, the diagnostic.
_COMMON = {"head_weights": (r"fixed $\alpha_h = 1/H$", "the candidate models of C7 are stated for uniform weights"),
           "steps": (None, "no training"), "convergence": (None, "exact fixed-design MSE, no iteration"),
           "diagnostic": (r"$d_k^*$ per $n$, the bootstrap probability of each $d_k$ being the argmin, $R^2$ of the "
                          "best", "C7 is a statement about the MSE-optimal split of $D$")}


def _design(**entries: Any) -> dict[str, Any]:
    """A regime's design record: its own entries and the shared ones, in the order of DESIGN_KEYS."""
    both = {**_COMMON, **entries}
    return design_record(**{k: both[k] for k in DESIGN_KEYS})


def _torus_design(ns: tuple[int, ...], R: int, m: int) -> dict[str, Any]:
    p = TORUS
    return _design(
        kernel_scale=(rf"$s = 1/\sqrt{{d_k}}$, head columns scaled so that $\kappa = {p['kappa2']:g} \sqrt{{2/d_k}}$ "
                      "per circle, the same for every $n$", r"the paper's dependence on $d_k$ (Gaussian bandwidth "
                      r"$\propto d_k^{1/4}$) with a local kernel at $d_k = 2$"),
        design_density=(rf"torus, $d = {p['d']}$ ({p['d'] // 2} circles)", "whole-circle keys have equal norms: "
                        "the heads are Gaussian NW smoothers, so the MSE can fall with $n$"),
        target=(r"$f(x) = \sin(x_1)$ on circle 0", "smooth on the circle: the bias is the kernel's and the "
                "subspace's, not a floor"),
        noise=(rf"$\sigma = {p['sigma']:g}$, the MSE against the noiseless $f$", "noise averaged exactly per design"),
        n=(list(ns), "nested designs: the estimator at $n$ uses the first $n$ keys"),
        seeds=(f"the exact mean over every head draw; {R} designs of {m} evaluation points",
               "the head draws are averaged exactly, so the designs are the only randomness: the bootstrap "
               "resamples them"))


def _gaussian_design(ns: list[int], cfg: dict) -> dict[str, Any]:
    g = GAUSSIAN
    return _design(
        kernel_scale=(r"$1/\sqrt{d_k}$ fixed in $n$", "the softmax head as the paper defines it"),
        design_density=(rf"$x \sim N(0, I_d)$, $d = {g['d']}$", "the paper's unnormalised Gaussian inputs"),
        target=(r"$f(x) = \sin(2 x_1)$", "the single-index target of the package's regression grid"),
        noise=(rf"$\sigma = {g['sigma']:g}$, the MSE against the noiseless $f$", "noise averaged exactly per design"),
        n=(list(ns), "what the exact MSE affords in the default run (the sweep reaches $10^6$)"),
        seeds=(f"{cfg['seeds']} seeds, each one draw of Haar-random heads per divisor pair and {cfg['R']} designs of "
               f"{cfg['m']} evaluation points", "the grid of `verify.experiments.scaling`: the bootstrap resamples "
               "the seeds"))
