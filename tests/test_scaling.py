"""The empirical C7 measurement (verify.experiments.scaling): one task against a brute-force recomputation
in Python floats, the analysis against synthetic MSE surfaces with a known optimum and model,
reproducibility, the plot and the CLI."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from verify.cli import main as verify_cli
from verify.experiments import scaling
from verify.numeric.dgp import head_projections, make_dgp

# A few dozen float64 operations per term, against math.fsum on the same draws.
TASK_RTOL = 1e-12
# Least squares on exact model values: the fit recovers them to rounding.
FIT_RTOL = 1e-6


def brute_mse(params: dict) -> float:
    """The exact fixed-design integrated MSE of the uniform ensemble, from its definition:
    mean over replicates r and evaluation points x of
    (sum_h a_h sum_i w_hi(x) f(x_i) - f(x))^2 + sigma^2 sum_i (sum_h a_h w_hi(x))^2,
    with w_hi(x) = exp(<W_h'x, W_h'x_i>/sqrt(d_k)) / sum_j (...), draws as documented in
    verify.numeric.engine and verify.experiments.scaling."""
    dgp = make_dgp(params["dgp"], d=params["d"], sigma=params["sigma"])
    H, d_k, n, R, m, seed = (params[k] for k in ("H", "d_k", "n", "R", "m", "seed"))
    rng = np.random.default_rng(np.random.SeedSequence([seed, params["D"], H, d_k, 7]))
    W = head_projections("random", H, params["d"], d_k, rng=rng)
    xe = dgp.sample_x(np.random.default_rng(np.random.SeedSequence(seed)), (m,))
    fe = dgp.f(xe)
    total = []
    for child in np.random.SeedSequence(seed).spawn(R):
        X = dgp.sample_x(np.random.default_rng(child), (n,))
        fX = dgp.f(X)
        for j in range(m):
            wens = [0.0] * n
            for h in range(H):
                q = [math.fsum(xe[j, a] * W[h, a, c] for a in range(params["d"])) for c in range(d_k)]
                s = [math.fsum(q[c] * math.fsum(X[i, a] * W[h, a, c] for a in range(params["d"]))
                               for c in range(d_k)) / math.sqrt(d_k) for i in range(n)]
                top = max(s)
                e = [math.exp(v - top) for v in s]
                z = math.fsum(e)
                for i in range(n):
                    wens[i] += e[i] / z / H
            fit = math.fsum(wens[i] * fX[i] for i in range(n))
            total.append((fit - fe[j]) ** 2 + params["sigma"] ** 2 * math.fsum(w * w for w in wens))
    return math.fsum(total) / len(total)


@pytest.mark.parametrize("H,d_k", [(4, 1), (2, 2), (1, 4)])
def test_task_mse_matches_a_brute_force_recomputation(H, d_k):
    params = dict(dgp="single-index", d=4, sigma=0.7, D=4, H=H, d_k=d_k, n=9, seed=3, R=3, m=4)
    got = scaling.c7_task(params)
    ref = brute_mse(params)
    assert got["mse"] == pytest.approx(ref, rel=TASK_RTOL)
    assert got["identity_error"] < 1e-14
    assert got["mse"] == pytest.approx(got["bias2"] + got["var_term"] + got["cov_term"], rel=1e-13)


def test_grid_covers_every_admissible_divisor_pair():
    tasks = scaling.grid_tasks("quick", seed=0)
    pairs = {(t.params["H"], t.params["d_k"]) for t in tasks}
    assert pairs == {(16, 1), (8, 2), (4, 4), (2, 8), (1, 16)}      # D = 16, d_k <= d = 16
    assert len({t.key for t in tasks}) == len(tasks)
    full = scaling.grid_tasks("full", seed=0)
    assert max(t.params["n"] for t in full) == 10**6
    assert all(t.params["d_k"] <= t.params["d"] and t.params["H"] * t.params["d_k"] == t.params["D"] for t in full)


def test_vertex_recovers_an_exact_log_parabola():
    dks = [1, 2, 4, 8, 16]
    star = 5.3
    mse = [math.exp(0.7 * (math.log(k) - math.log(star)) ** 2) for k in dks]
    v, censored = scaling._vertex(dks, mse)
    assert v == pytest.approx(star, rel=1e-12) and not censored
    assert scaling._vertex(dks, list(range(5, 0, -1))) == (16.0, True)   # decreasing: the last d_k, censored


def synthetic(model_value, ns, dks, seeds=(0, 1), D=16, d=16):
    return [{"params": {"dgp": "synthetic", "d": d, "sigma": 1.0, "D": D, "H": D // k, "d_k": k, "n": n, "seed": s,
                        "R": 1, "m": 1},
             "result": {"mse": model_value(k, n), "bias2": 0.0, "var_term": 0.0, "cov_term": 0.0,
                        "identity_error": 0.0}}
            for s in seeds for n in ns for k in dks]


def test_analysis_finds_the_model_that_generated_the_data():
    """MSE = c_0 + c_b/d_k^2 + c_v d_k^(d/2)/n is model a_corr (plus a constant): the analysis
    must fit it exactly, say it describes the data, and its optimum must be the brute-force
    argmin over the divisors; growth: d_k* ~ n^(2/(d+4)) for this model."""
    d, D = 4, 16
    c0, cb, cv = 0.3, 2.0, 0.05
    f = lambda k, n: c0 + cb / k**2 + cv * k ** (d / 2) / n        # noqa: E731
    ns, dks = [10.0**e for e in range(1, 7)], [1, 2, 4]               # d_k <= d = 4
    out = scaling.analyse(synthetic(f, ns, dks, D=D, d=d))
    c = out["configs"][0]
    assert c["complete"] and c["optimum_d_k"] == [min(dks, key=lambda k: f(k, n)) for n in ns]
    a = next(m for m in c["models"] if m["model"] == "a_corr")
    assert a["c_0"] == pytest.approx(c0, rel=FIT_RTOL) and a["c_b"] == pytest.approx(cb, rel=FIT_RTOL)
    assert a["c_v"] == pytest.approx(cv, rel=FIT_RTOL) and a["rms_log_error"] < 1e-9
    assert c["best_model"] == "a_corr" and c["best_model_describes"]
    assert a["optimum_agreement"] == 1.0


def test_analysis_growth_slopes_of_a_known_power_law():
    """log MSE a parabola in log d_k centred on d_k* = 0.5 n^0.25: the continuous optimum and
    the slopes against log n and log log n are recovered (it stays inside the divisor grid)."""
    dks = [1, 2, 4, 8, 16, 32, 64]
    star = lambda n: 0.5 * n**0.25                                      # noqa: E731
    f = lambda k, n: math.exp((math.log(k) - math.log(star(n))) ** 2)    # noqa: E731
    ns = [10.0**e for e in (2, 3, 4, 5, 6)]
    c = scaling.analyse(synthetic(f, ns, dks, D=64, d=64))["configs"][0]
    assert c["continuous_mean"] == pytest.approx([star(n) for n in ns], rel=1e-9)
    assert c["growth"]["vs_n"]["mean"] == pytest.approx(0.25, rel=1e-9)
    loglog = np.polyfit(np.log(np.log(ns)), np.log([star(n) for n in ns]), 1)[0]
    assert c["growth"]["vs_log_n"]["mean"] == pytest.approx(loglog, rel=1e-9)


def quick_analysis(seed: int) -> dict:
    return scaling.analyse([{"params": t.params, "result": scaling.c7_task(t.params)}
                            for t in scaling.grid_tasks("quick", seed)])


@pytest.mark.slow   # re-runs a claim or a grid end to end (seconds)
def test_quick_grid_is_reproducible_and_plots(tmp_path):
    a, b, other = quick_analysis(0), quick_analysis(0), quick_analysis(1)
    assert a == b and a["configs"][0]["mse_mean"] != other["configs"][0]["mse_mean"]
    c = a["configs"][0]
    assert c["complete"] and c["identity_error_max"] < 1e-12
    assert all(k in c["d_k_grid"] for k in c["optimum_d_k"])
    path = scaling.plot_optimum(a, tmp_path / "c7.png")
    assert open(path, "rb").read(8) == b"\x89PNG\r\n\x1a\n"
    json.dumps(a)                                                       # JSON-ready for the report


@pytest.mark.slow   # re-runs a claim or a grid end to end (seconds)
def test_sweep_c7_cli_quick_and_resume(tmp_path, capsys):
    argv = ["c7", "--quick", "--out", str(tmp_path), "--jobs", "1", "--no-progress", "--plot", str(tmp_path / "p.png")]
    assert verify_cli(["sweep", *argv]) == 0
    first = capsys.readouterr().out
    assert "50 computed now" in first and (tmp_path / "p.png").is_file()
    assert verify_cli(["sweep", *argv]) == 0
    assert "0 computed now, 50 stored" in capsys.readouterr().out
    analysis = json.loads((tmp_path / "analysis.json").read_text())
    assert analysis["configs"] == json.loads(json.dumps(quick_analysis(0)["configs"]))
