"""C7 measured on real NW ensembles: the empirical optimum d_k*(n) at a fixed budget D = H·d_k.

For every divisor pair (H, d_k) of D with d_k <= d, the ensemble of H softmax-NW heads (independent
Haar-random projections, scale 1/sqrt(d_k), weights 1/H) is scored by its exact fixed-design
integrated MSE (:func:`verify.numeric.engine.decompose`, ``method="exact"``) over R design replicates
at m evaluation points. Per seed and n: the discrete optimum (the divisor of least MSE) and a
continuous one (the vertex of the parabola through log MSE against log d_k at the discrete optimum and
its neighbours; *censored* at an end of the grid). Growth: per seed, least-squares slopes of log
d_k*(n) against log log n (the stated law predicts 2/(4+d)) and log n, then mean and SE over seeds.

Models: each candidate of :data:`verify.experiments.allocate.MODELS` that applies at (D, d) is the
linear model MSE = c_0 + c_b A(d_k) + c_v B(d_k, n), fitted with c >= 0 by least squares on the
relative error, scored by its RMS log error and by how often its optimum is the measured one.

Grids: ``quick`` and ``default`` (a few seconds), ``full`` (``python -m verify sweep c7``: several
DGPs and budgets, n up to 10^6, through :mod:`verify.experiments.sweep`).
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any, Iterable

import mpmath
import numpy as np

from verify._validate import fail, one_of
from verify.errors import VerifyError
from verify.experiments.allocate import MODELS, divisor_pairs
from verify.experiments.sweep import SWEEP_COMMAND, Task, check_scheduler, check_targets, parse_scheduler, run_sweep

__all__ = ["GRIDS", "TASK", "c7_task", "grid_tasks", "analyse", "plot_optimum", "run_c7", "DESCRIBES_RMS_LOG",
           "DESCRIBES_AGREEMENT"]

TASK = "verify.experiments.scaling:c7_task"
#: decompose's working-memory budget per task (two workers: 2 GiB of the machine's 24).
TASK_MAX_MEMORY = 2**30
#: A model describes the measurements when its RMS log error is at most this (MSE within ~10 %
#: on average) ...
DESCRIBES_RMS_LOG = 0.10
#: ... and its optimum over the divisors is the measured one at least this often.
DESCRIBES_AGREEMENT = 0.75

_SMALL_N = (10, 20, 50, 100, 200)
#: name -> configurations; each: DGP, d, sigma, budgets D, n grid, seeds (offsets from the
#: run's seed), design replicates R (per n: a dict n -> R or one int), evaluation points m.
GRIDS: dict[str, list[dict[str, Any]]] = {
    "quick": [dict(dgp="single-index", d=16, sigma=1.0, D=(16,), n=_SMALL_N, seeds=2, R=8, m=32)],
    "default": [dict(dgp="single-index", d=16, sigma=1.0, D=(16,), n=_SMALL_N + (500, 1000), seeds=3, R=16, m=64)],
    "full": [dict(dgp=g, d=16, sigma=1.0, D=(8, 16, 32), n=_SMALL_N + (500, 1000, 10**4), seeds=4,
                  R={**{n: 16 for n in _SMALL_N + (500, 1000)}, 10**4: 4}, m=64)
             for g in ("single-index", "additive")]
            + [dict(dgp="single-index", d=16, sigma=1.0, D=(16,), n=(10**5, 10**6), seeds=3, R=2, m=64)],
}


def c7_task(params: dict) -> dict:
    """The exact integrated MSE terms of one ensemble (module docstring); a sweep task."""
    from verify.numeric.dgp import head_projections, make_dgp
    from verify.numeric.engine import decompose

    dgp = make_dgp(params["dgp"], d=params["d"], sigma=params["sigma"])
    H, d_k, seed = params["H"], params["d_k"], params["seed"]
    # heads: one draw per (seed, D, H, d_k), the same at every n
    rng = np.random.default_rng(np.random.SeedSequence([seed, params["D"], H, d_k, 7]))
    W = head_projections("random", H, params["d"], d_k, rng=rng)
    # the design of n = 10^6 points alone is 128 MB: the engine's default budget (256 MiB) is too
    # small there; its results do not depend on the budget (verify.numeric.engine, "Reproducibility")
    dec = decompose(dgp, W, n=params["n"], R=params["R"], m=params["m"], seed=seed, method="exact",
                    max_memory=TASK_MAX_MEMORY)
    ig = dec.integrated()
    return {"mse": ig["mse"], "bias2": ig["bias2"], "var_term": ig["var_term"], "cov_term": ig["cov_term"],
            "identity_error": dec.identity_error()}   # numbers only: timings go to the sweep's task file


def grid_tasks(name: str, seed: int = 0) -> list[Task]:
    """The tasks of grid ``name`` (GRIDS) for the run's ``seed``."""
    one_of("grid", name, GRIDS)
    tasks = []
    for cfg in GRIDS[name]:
        for D in cfg["D"]:
            for s in range(cfg["seeds"]):
                for n in cfg["n"]:
                    R = cfg["R"][n] if isinstance(cfg["R"], dict) else cfg["R"]
                    for H, d_k in divisor_pairs(D):
                        if d_k <= cfg["d"]:
                            tasks.append(Task(TASK, {"dgp": cfg["dgp"], "d": cfg["d"], "sigma": cfg["sigma"], "D": D,
                                                     "H": H, "d_k": d_k, "n": n, "seed": seed + s, "R": R,
                                                     "m": cfg["m"]}))
    return tasks


def _vertex(dks: list[int], mse: list[float]) -> tuple[float, bool]:
    """Continuous optimum from the discrete one and its neighbours (log-log parabola);
    (value, censored at an end of the grid)."""
    i = int(np.argmin(mse))
    if i == 0 or i == len(dks) - 1:
        return float(dks[i]), True
    x = np.log(np.array(dks[i - 1:i + 2], float))
    y = np.log(np.array(mse[i - 1:i + 2], float))
    a, b, _ = np.polyfit(x, y, 2)
    if a <= 0:
        return float(dks[i]), False
    return float(np.exp(np.clip(-b / (2 * a), x[0], x[2]))), False


def _slope(x: Iterable[float], y: Iterable[float]) -> float | None:
    x, y = np.asarray(list(x), float), np.asarray(list(y), float)
    if len(x) < 2 or np.ptp(x) == 0:
        return None
    return float(np.polyfit(x, y, 1)[0])


def _mean_se(values: list[float | None]) -> dict[str, Any]:
    v = np.array([x for x in values if x is not None], float)
    if len(v) == 0:
        return {"mean": None, "se": None, "per_seed": values}
    se = float(np.std(v, ddof=1) / math.sqrt(len(v))) if len(v) > 1 else None
    return {"mean": float(np.mean(v)), "se": se, "per_seed": values}


def _fit_model(model: str, dks: list[int], ns: list[float], D: int, d: int, Y: np.ndarray,
               best_dk: list[int]) -> dict[str, Any]:
    """Fit MSE = c_0 + c_b A + c_v B with c_0, c_b, c_v >= 0 by least squares on the relative
    error (c_0: an irreducible error, which moves no optimum; the best feasible fit over the
    sets of free constants); RMS log error; agreement of the optima over the divisors."""
    import itertools

    f = MODELS[model].mse_mp
    with mpmath.workdps(30):   # A(d_k) and B(d_k, n) on the grid (n rows, d_k columns)
        A = np.array([[float(f(k, n, D, d, 1, 0)) for k in dks] for n in ns])
        B = np.array([[float(f(k, n, D, d, 0, 1)) for k in dks] for n in ns])
    if not (np.isfinite(A).all() and np.isfinite(B).all()):
        return {"model": model, "fitted": False, "reason": "the model's terms overflow float64 on this grid"}
    cols = np.stack([(1 / Y).ravel(), (A / Y).ravel(), (B / Y).ravel()], 1)
    y = np.ones(Y.size)
    best, best_res = np.zeros(3), float(y @ y)
    for r in (1, 2, 3):
        for free in itertools.combinations(range(3), r):
            coef = np.zeros(3)
            coef[list(free)] = np.linalg.lstsq(cols[:, free], y, rcond=None)[0]
            res = float(np.sum((cols @ coef - y) ** 2))
            if np.all(coef >= 0) and res < best_res:
                best, best_res = coef, res
    pred = best[0] + best[1] * A + best[2] * B
    rms = float(np.sqrt(np.mean(np.log(pred / Y) ** 2))) if np.all(pred > 0) else None
    pred_dk = [dks[int(np.argmin(row))] for row in pred]
    agree = float(np.mean([p == e for p, e in zip(pred_dk, best_dk)]))
    return {"model": model, "fitted": True, "c_0": float(best[0]), "c_b": float(best[1]), "c_v": float(best[2]),
            "rms_log_error": rms, "optimum_agreement": agree, "predicted_d_k": pred_dk,
            "continuous_d_k": [_continuous(model, n, D, d, best[1], best[2]) for n in ns]}


def _continuous(model: str, n: float, D: int, d: int, c_b: float, c_v: float) -> float | None:
    from verify.experiments.allocate import continuous_optimum

    if c_b <= 0 or c_v <= 0:
        return None
    try:
        x = continuous_optimum(model, n, D, d, c_b, c_v)
    except (VerifyError, ValueError, ZeroDivisionError, OverflowError):
        return None
    return None if x is None else float(x)


def analyse(records: list[dict]) -> dict[str, Any]:
    """Optima, growth and model comparison from task records (``{"params", "result"}``), per
    configuration (DGP, d, sigma, D)."""
    groups: dict[tuple, list[dict]] = {}
    for r in records:
        p = r["params"]
        groups.setdefault((p["dgp"], p["d"], p["sigma"], p["D"]), []).append(r)
    configs = []
    for (dgp, d, sigma, D), recs in sorted(groups.items(), key=lambda kv: (kv[0][0], kv[0][3])):
        dks = sorted({r["params"]["d_k"] for r in recs})
        ns = sorted({r["params"]["n"] for r in recs})
        seeds = sorted({r["params"]["seed"] for r in recs})
        mse = {(r["params"]["seed"], r["params"]["n"], r["params"]["d_k"]): r["result"]["mse"] for r in recs}
        # per seed, the n with every d_k measured (grids may give some n fewer seeds)
        seed_ns = {s: [n for n in ns if all((s, n, k) in mse for k in dks)] for s in seeds}
        n_seeds = {n: [s for s in seeds if n in seed_ns[s]] for n in ns}
        if len(dks) < 2 or not all(n_seeds.values()):
            configs.append({"dgp": dgp, "d": d, "sigma": sigma, "D": D, "complete": False})
            continue
        Y = np.array([[np.mean([mse[(s, n, k)] for s in n_seeds[n]]) for k in dks] for n in ns])   # mean over seeds
        per_seed = []
        for s in seeds:
            s_ns = seed_ns[s]
            rows = [[mse[(s, n, k)] for k in dks] for n in s_ns]
            disc = [dks[int(np.argmin(row))] for row in rows]
            cont = [_vertex(dks, row) for row in rows]
            uncensored = [i for i, (_, c) in enumerate(cont) if not c and disc[i] < dks[-1]]
            cut = max(uncensored) + 1 if uncensored else 0
            loglog = [math.log(math.log(n)) for n in s_ns]
            logn = [math.log(n) for n in s_ns]
            logk = [math.log(v) for v, _ in cont]
            per_seed.append({"seed": s, "n": s_ns, "discrete": disc, "continuous": [v for v, _ in cont],
                             "censored": [c for _, c in cont],
                             "slope_loglog": _slope(loglog, logk), "slope_logn": _slope(logn, logk),
                             "slope_loglog_before_cap": _slope(loglog[:cut], logk[:cut]) if cut >= 2 else None,
                             "slope_logn_before_cap": _slope(logn[:cut], logk[:cut]) if cut >= 2 else None})
        best_mean = [dks[int(np.argmin(row))] for row in Y]
        cap = min(D, d)
        first_cap = next((n for n, k in zip(ns, best_mean) if k == cap and all(b == cap for b in
                          best_mean[ns.index(n):])), None)
        models = [_fit_model(m, dks, [float(n) for n in ns], D, d, Y, best_mean) if MODELS[m].applies(D, d)[0]
                  else {"model": m, "fitted": False, "reason": MODELS[m].applies(D, d)[1]} for m in MODELS]
        fitted = [m for m in models if m["fitted"] and m["rms_log_error"] is not None]
        best = min(fitted, key=lambda m: m["rms_log_error"]) if fitted else None
        describes = bool(best and best["rms_log_error"] <= DESCRIBES_RMS_LOG
                         and best["optimum_agreement"] >= DESCRIBES_AGREEMENT)
        configs.append({
            "dgp": dgp, "d": d, "sigma": sigma, "D": D, "complete": True, "d_k_grid": dks, "n": ns, "seeds": seeds,
            "mse_mean": Y.tolist(), "optimum_d_k": best_mean, "optimum_H": [D // k for k in best_mean],
            "cap_d_k": cap, "capped_from_n": first_cap,
            "continuous_mean": [float(np.mean([ps["continuous"][ps["n"].index(n)] for ps in per_seed if n in ps["n"]]))
                                for n in ns],
            "seeds_per_n": [len(n_seeds[n]) for n in ns],
            "per_seed": per_seed,
            "growth": {"vs_log_n": _mean_se([ps["slope_loglog"] for ps in per_seed]),
                       "vs_n": _mean_se([ps["slope_logn"] for ps in per_seed]),
                       "vs_log_n_before_cap": _mean_se([ps["slope_loglog_before_cap"] for ps in per_seed]),
                       "vs_n_before_cap": _mean_se([ps["slope_logn_before_cap"] for ps in per_seed]),
                       "stated_vs_log_n": 2 / (4 + d)},
            "models": models, "best_model": best["model"] if best else None, "best_model_describes": describes,
            "identity_error_max": max(r["result"]["identity_error"] for r in recs),
        })
    return {"configs": configs, "H_vs_D": _h_vs_d(configs)}


def _h_vs_d(configs: list[dict]) -> list[dict]:
    """Per (DGP, d, sigma, n) with several budgets: the exponent of D in H* = D / d_k*."""
    out = []
    keyed: dict[tuple, list[dict]] = {}
    for c in configs:
        if c.get("complete"):
            keyed.setdefault((c["dgp"], c["d"], c["sigma"]), []).append(c)
    for (dgp, d, sigma), cs in keyed.items():
        if len(cs) < 2:
            continue
        for n in sorted(set.intersection(*(set(c["n"]) for c in cs))):
            Ds = [c["D"] for c in cs]
            Hs = [c["optimum_H"][c["n"].index(n)] for c in cs]
            out.append({"dgp": dgp, "d": d, "sigma": sigma, "n": n, "D": Ds, "H_star": Hs,
                        "exponent": _slope(np.log(Ds), np.log(Hs))})
    return out


def plot_optimum(result: dict, path: Path | str, config: int | None = None) -> str:
    """Empirical d_k*(n) (discrete: points; continuous: mean over seeds with the per-seed range)
    against each fitted model's optimum over the divisors, for one complete configuration
    (default: the one with the longest n grid)."""
    from verify.outputs import plots

    cs = [c for c in result["configs"] if c.get("complete")]
    c = max(cs, key=lambda c: len(c["n"])) if config is None else cs[config]
    ns = c["n"]
    fig, ax = plots.new_figure(f"C7 on real NW ensembles: {c['dgp']}, d={c['d']}, D={c['D']}, sigma={c['sigma']}",
                               "n (training points)", "optimal head dimension d_k*")
    lo = [min(ps["continuous"][ps["n"].index(n)] for ps in c["per_seed"] if n in ps["n"]) for n in ns]
    hi = [max(ps["continuous"][ps["n"].index(n)] for ps in c["per_seed"] if n in ps["n"]) for n in ns]
    ax.fill_between(ns, lo, hi, color="0.85", label="continuous d_k*, range over seeds")
    ax.plot(ns, c["continuous_mean"], "k-", lw=1.5, label="continuous d_k*, mean over seeds")
    ax.plot(ns, c["optimum_d_k"], "ko", ms=6, label="best divisor (mean MSE over seeds)")
    styles = ["--", "-.", ":"]
    for i, m in enumerate(x for x in c["models"] if x["fitted"]):
        ax.plot(ns, m["predicted_d_k"], styles[i % 3], lw=1, label=f"{m['model']} (RMS log err {m['rms_log_error']:.2f})")
    ax.set_xscale("log")
    ax.set_yscale("log", base=2)
    ax.set_yticks(c["d_k_grid"])
    ax.set_yticklabels([str(k) for k in c["d_k_grid"]])
    ax.legend(fontsize=6, loc="best")
    return plots.save(fig, Path(path))


def format_result(result: dict) -> str:
    """The sweep's findings as text: per configuration the optima, growth and best model."""
    L = []
    for c in result["configs"]:
        if not c.get("complete"):
            L.append(f"{c['dgp']} d={c['d']} D={c['D']}: incomplete (missing tasks)")
            continue
        g = c["growth"]

        def ms(x: dict) -> str:
            if x["mean"] is None:
                return "n/a"
            return f"{x['mean']:.3f}" + (f" ± {x['se']:.3f}" if x["se"] is not None else "")

        L.append(f"{c['dgp']}, d={c['d']}, sigma={c['sigma']}, D={c['D']} (seeds {len(c['seeds'])}):")
        L.append("  n:        " + " ".join(f"{n:>8g}" for n in c["n"]))
        L.append("  d_k*:     " + " ".join(f"{k:>8d}" for k in c["optimum_d_k"]))
        L.append("  cont d_k*:" + " ".join(f"{k:>8.2f}" for k in c["continuous_mean"]))
        L.append(f"  largest admissible d_k = {c['cap_d_k']}" + (f", reached from n = {c['capped_from_n']:g} on"
                                                                  if c["capped_from_n"] else ", never reached"))
        L.append(f"  growth of d_k*: slope vs log log n {ms(g['vs_log_n'])} (stated law {g['stated_vs_log_n']:.3f}), "
                 f"vs log n {ms(g['vs_n'])}; before the cap: {ms(g['vs_log_n_before_cap'])} and "
                 f"{ms(g['vs_n_before_cap'])}")
        for m in c["models"]:
            if m["fitted"]:
                L.append(f"  model {m['model']:13s} RMS log error {m['rms_log_error']:.3f}, optimum agrees "
                         f"{100 * m['optimum_agreement']:.0f}% (c_0 {m['c_0']:.3g}, c_b {m['c_b']:.3g}, c_v {m['c_v']:.3g})")
        L.append(f"  best model {c['best_model']}: " + ("describes the measurements" if c["best_model_describes"]
                                                       else "does not describe them") +
                 f" (thresholds: RMS log error <= {DESCRIBES_RMS_LOG}, agreement >= {DESCRIBES_AGREEMENT})")
    for h in result["H_vs_D"]:
        L.append(f"H* vs D ({h['dgp']}, n={h['n']:g}): D {h['D']} -> H* {h['H_star']}, exponent {h['exponent']:.2f}")
    return "\n".join(L)


def run_c7(grid: str, seed: int, out: Path, *, workers: int | None = None, scheduler: str | None = None,
           progress: bool = True, plot: Path | None = None) -> int:
    """``python -m verify sweep c7`` (options parsed by :mod:`verify.cli`): run (or resume) the grid
    and print the findings; every target (plot file, folder, scheduler) checked before the work."""
    from verify._validate import writable_file
    from verify.io import output_folder, write_json

    if plot:
        writable_file("--plot", plot)      # before the work, not after it
    tasks = grid_tasks(grid, seed)
    if scheduler is not None:
        parse_scheduler(scheduler)         # a malformed address, then the folder's entries, then the peer,
    check_targets(out, [t.key for t in tasks])
    if scheduler is not None:
        check_scheduler(scheduler)         # all before the folder is taken (run_sweep checks them again)
    with output_folder("--out", out, SWEEP_COMMAND):    # held until analysis.json is written too
        res = run_sweep(tasks, out, workers=workers, scheduler=scheduler, progress=progress, label=f"c7 {grid}")
        if res.summary["missing"]:
            raise fail("sweep", f"{res.summary['missing']} unfinished tasks", "a complete grid")
        found = analyse(res.records)
        write_json(Path(out) / "analysis.json", dict(found, grid=grid, cost=res.summary))
    print(f"C7 sweep, grid {grid}: {len(tasks)} tasks, {res.computed} computed now, {res.reused} stored; "
          f"wall {res.wall_s:.1f} s, CPU of all tasks {res.summary['cpu_s_all']:.1f} s ({res.summary['executor']})")
    print(format_result(found))
    if plot:
        print(f"plot: {plot_optimum(found, plot)}")
    print(f"table: {res.table}; analysis: {Path(out) / 'analysis.json'}")
    return 0
