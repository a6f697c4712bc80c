"""C9's training experiments, as functions of a size and a seed returning dicts: reading i, NW-ensemble
heads (:mod:`verify.experiments.training`) with free and fixed head weights on the block targets (positive
controls, :func:`verify.claims.c9.population.positive_control`) and on three targets without a
specialisation reward; reading iii, an attention layer (:mod:`verify.claims.c9.layer`) on the block
targets beside the same layer with tied heads. Every run trains 2T steps at a held learning rate and
is recorded at 0, T and 2T: the state at T is the run of half the length (the convergence test).
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from verify._validate import one_of
from verify._validate import seed as valid_seed
from verify.claims.c9.forms import DIAGNOSTICS, diagnostics, haar_baselines
from verify.claims.c9.layer import LayerSetting, train_layers
from verify.claims.c9.population import positive_control
from verify.io import jsonable
from verify.experiments.regimes import SIZES, design_record, variance_of_f
from verify.experiments.training import TrainSetting, effect, train_many
from verify.numeric.stats import mean_se

#: Sizes of every experiment: d = 8 = H·d_k, four heads of two dimensions (one per block).
D, H, DK, SIGMA = 8, 4, 2, 0.1
#: (target, design, kind): positive controls (diverse heads are needed, by a population computation)
#: and targets without a specialisation reward (one direction, nearly linear, radial).
TARGETS = (("block", "normal", "positive"), ("sin-block", "normal", "positive"), ("block", "torus", "positive"),
           ("single-index", "normal", "scope"), ("additive", "normal", "scope"), ("bump", "normal", "scope"))
#: Reading i by size: n keys and q fresh queries per step, 2T steps at the held learning rate lr,
#: seeds per setting, m held-out queries; whether the scope targets are also trained with fixed
#: weights; the targets trained (indices into TARGETS; sin-block at the large size).
NW_SIZES = {"quick": {"n": 64, "q": 8, "steps": 200, "lr": 0.01, "seeds": 8, "m": 128, "scope_fixed": False,
                      "targets": (0, 2, 3, 4, 5)},
            "default": {"n": 128, "q": 8, "steps": 2000, "lr": 0.01, "seeds": 8, "m": 128, "scope_fixed": False,
                        "targets": (0, 2, 3, 4, 5)},
            "large": {"n": 128, "q": 32, "steps": 6000, "lr": 0.01, "seeds": 16, "m": 256, "scope_fixed": True,
                      "targets": (0, 1, 2, 3, 4, 5)}}
#: Reading iii by size: n context points, C contexts per step, 2T steps, lr, seeds, held-out
#: contexts, and the targets trained (indices into TARGETS; each also with tied heads if positive).
LAYER_SIZES = {"quick": {"n": 16, "C": 8, "steps": 200, "lr": 0.01, "seeds": 8, "eval": 64, "targets": (0, 2)},
               "default": {"n": 32, "C": 16, "steps": 4000, "lr": 0.01, "seeds": 8, "eval": 256, "targets": (0,)},
               "large": {"n": 32, "C": 16, "steps": 8000, "lr": 0.01, "seeds": 16, "eval": 512,
                         "targets": (0, 1, 2, 3, 4, 5)}}
KIND = {(g, d): k for g, d, k in TARGETS}
#: head weights by a setting's flag: NW heads' learn_alpha, a layer's tied
HW, LAYER_HW = {True: "free", False: "fixed"}, {True: "tied", False: "free"}


def _seed(seed: int, *path: int) -> int:
    return int(np.random.SeedSequence([seed, *path]).generate_state(1)[0])


def nw_settings(size: str, seed: int) -> list[TrainSetting]:
    """Reading i's grid: every target with free head weights, the positive controls (and, at the
    large size, every target) with fixed ones; Gaussian initialisation, fresh keys and queries."""
    z = NW_SIZES[one_of("size", size, SIZES)]
    return [TrainSetting(dgp=g, d=D, H=H, d_k=DK, init="gaussian", n=z["n"], m=z["m"], sigma=SIGMA, steps=z["steps"],
                         lr=z["lr"], seeds=z["seeds"], seed=_seed(valid_seed("seed", seed), 9, i, j),
                         record_every=z["steps"] // 2, learn_alpha=learn, queries=z["q"], design=ds)
            for i, (g, ds, kind) in enumerate(TARGETS) if i in z["targets"] for j, learn in enumerate((True, False))
            if learn or kind == "positive" or z["scope_fixed"]]


def layer_settings(size: str, seed: int) -> list[LayerSetting]:
    """Reading iii's grid: the layer on each target of the size, and with tied heads on the positive ones."""
    z = LAYER_SIZES[one_of("size", size, SIZES)]
    return [LayerSetting(dgp=g, design=ds, d=D, H=H, d_k=DK, d_v=2, n=z["n"], contexts=z["C"], steps=z["steps"],
                         lr=z["lr"], seeds=z["seeds"], seed=_seed(valid_seed("seed", seed), 93, i),
                         eval_contexts=z["eval"], record_every=z["steps"] // 2, sigma=SIGMA, tied=tied)
            for i, (g, ds, kind) in enumerate(TARGETS) if i in z["targets"]
            for tied in ((False, True) if kind == "positive" else (False,))]


def summarise(tr: Any, head_weights: str, haar: dict[str, dict[str, float]]) -> dict[str, Any]:
    """One setting over its seeds: per diagnostic the paired change from initialisation to T (``half``)
    and to 2T (``end``) with the Haar law and bound, and each run's values at 0, T, 2T (``runs``); R²
    at 0, T, 2T (mean, SE and each run's); the head weights at the end."""
    s = tr.setting
    half = int(np.searchsorted(tr.steps, s.steps // 2))
    cols = (0, half, -1)
    vf = variance_of_f(s.dgp, s.d, s.design)
    row: dict[str, Any] = {"target": s.dgp, "design": s.design, "kind": KIND[(s.dgp, s.design)],
                           "head_weights": head_weights, "seeds": s.seeds, "steps": s.steps,
                           "half": int(tr.steps[half]), "n": s.n, "lr": s.lr, "var_f": vf}
    dg = diagnostics(tr.WQ_path, tr.WK_path)
    for k in DIAGNOSTICS:
        v = dg[k]
        row[k] = {"half": effect(v[:, 0], v[:, half]), "end": effect(v[:, 0], v[:, -1]),
                  "runs": [v[:, c].tolist() for c in cols], **haar[k]}
    r2 = 1.0 - tr.test_mse[:, list(cols)] / vf
    row["r2"] = {name: {"mean": mean_se(r2[:, j])[0], "se": mean_se(r2[:, j])[1], "runs": r2[:, j].tolist()}
                 for j, name in enumerate(("init", "half", "end"))}
    row["r2"]["change"] = effect(r2[:, 1], r2[:, 2])
    a = tr.alpha_path[:, -1]
    row["alpha"] = {"sorted_mean": np.sort(a, axis=-1).mean(axis=0).tolist(),
                    "max_abs_change": float(np.abs(a - tr.alpha_path[:, 0]).max()),
                    "fraction_negative": float(np.mean(a < 0))}
    return row


def _experiment(which: str, size: str, seed: int, select: Any) -> dict[str, Any]:
    """Reading i (``nw``) or iii (``layer``) at ``size``: the settings ``select(target, design, head
    weights)`` keeps, each summarised (:func:`summarise`), the Haar baselines, and the positive controls
    of the block targets trained, with what reference heads reach at the experiment's n."""
    t0 = time.process_time()
    nw = which == "nw"
    settings, flag, train = ((nw_settings, "learn_alpha", train_many) if nw else
                             (layer_settings, "tied", train_layers))
    words = HW if nw else LAYER_HW
    grid = [s for s in settings(size, seed) if select is None or select(s.dgp, s.design, words[getattr(s, flag)])]
    haar = haar_baselines(H, DK, D, seed=_seed(seed, 9 if nw else 93, 99))
    rows = [summarise(tr, words[getattr(tr.setting, flag)], haar) for tr in train(grid)] if grid else []
    pcs = [positive_control(g, ds, n=(NW_SIZES if nw else LAYER_SIZES)[size]["n"], seed=seed) for g, ds, k in TARGETS
           if k == "positive" and any((r["target"], r["design"]) == (g, ds) for r in rows)]
    return jsonable({"size": size, "seed": seed, "haar": haar, "settings": rows, "positive_controls": pcs,
                     "design": _design(size, which), "seconds": time.process_time() - t0}, finite=True)


def nw_heads(size: str, seed: int, select: Any = None) -> dict[str, Any]:
    """Reading i at ``size`` (:func:`_experiment`)."""
    return _experiment("nw", size, seed, select)


def attention_layer(size: str, seed: int, select: Any = None) -> dict[str, Any]:
    """Reading iii at ``size`` (:func:`_experiment`; tied heads as ``head_weights`` "tied")."""
    return _experiment("layer", size, seed, select)


def _design(size: str, which: str) -> dict[str, Any]:
    """The design choices of reading i (``nw``) or iii (``layer``), each with its reason (markup)."""
    nw = which == "nw"
    z = NW_SIZES[size] if nw else LAYER_SIZES[size]
    return design_record(
        head_weights=(("free (trained) and fixed at $1/H$" if nw else
                       r"free ($W_V^h$, $W_O^h$ trained), beside the same layer with tied heads (one $W_Q$, $W_K$)"),
                      r"C2: the head weights $\alpha_h = W_V^h W_O^h$ are free, so free weights are the model the "
                      "claim is about; tied heads are the identical-heads reference, trained with the same data and "
                      "steps"),
        kernel_scale=(r"$1/\sqrt{d_k}$ with learned $W_Q^h$, $W_K^h$", "the paper's head: training sets how sharp "
                      "the attention is"),
        design_density=(r"$N(0, I_8)$ and the torus", "Gaussian: the population head is $E f(X + a)$ in "
                        "closed form, which gives the positive control's optimum; torus: whole-circle heads are local "
                        "smoothers, where heads learn more"),
        target=(", ".join(f"{g} ({'torus' if ds == 'torus' else 'Gaussian design'})"
                          for i, (g, ds, _) in enumerate(TARGETS) if i in z["targets"]),
                "the block targets need four heads on four different blocks (or four query blocks); the others "
                "reward heads that share directions"),
        noise=(rf"$\sigma = {SIGMA:g}$; held-out MSE against the noiseless $f$", "the MSE is the estimation error"),
        n=(z["n"], (f"keys per step and per held-out context ({z['q']} fresh queries per step)" if nw else
                    f"context points per sequence ({z['C']} fresh contexts per step)")),
        steps=(z["steps"], f"Adam at a held learning rate {z['lr']:g}, fresh data every step; the state at half the "
               "steps is the run of half the length"),
        convergence=("the fit and each diagnostic's verdict at half the steps against the end (a run of twice the "
                     "length, the learning rate held)", "a flat tail of an annealed schedule proves nothing"),
        seeds=(z["seeds"], "independent initialisations and data streams per setting; changes paired over seeds"),
        diagnostic=("the key HDI (the paper's), the query HDI and the score-form diversity, each judged on its own "
                    "against its Haar law and bound; the form-subspace HDI beside",
                    "shared keys with orthogonal queries are also optimal on block targets"))
