"""verify.experiments.allocate against each C7 model's MSE from its definitions in mpmath, minimised over
every divisor pair of D by a loop; the continuous optimum as a stationary minimum; the architecture
table, bad input and the CLI output."""

from __future__ import annotations

import math

import mpmath as mp
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from verify.cli import main as verify_cli
from verify.cli import main
from verify.errors import VerifyError
from verify.experiments import allocate as al

#: working precision of the references here (digits).
DPS = 40
#: two divisor pairs whose reference MSEs agree to this are a tie (either may be called best).
TIE_RTOL = mp.mpf("1e-25")
#: log10 of MSE ratios: 30-digit mpf values (allocate) vs 40-digit ones (here), both as float64.
LOG10_ATOL = 1e-9
#: stationarity of the continuous optimum: MSE'(d_k*) relative to MSE(d_k*)/d_k*, with the 30-digit
#: optimum and a 40-digit numerical derivative (error ~1e-28 of the location, amplified by MSE'').
STATIONARY_RTOL = mp.mpf("1e-18")

MODELS = list(al.MODELS)


def own_mse(model: str, dk, n, D, d, c_b=1, c_v=1):
    """MSE(d_k) from the model definitions (SPEC C7 and the derivation's assumptions)."""
    dk, n, D, d, c_b, c_v = (mp.mpf(x) for x in (dk, n, D, d, c_b, c_v))
    if model.startswith("gauss_a"):
        h, s = dk ** mp.mpf(0.25), d               # Gaussian bandwidth h = d_k^(1/4), kernel in R^d
    elif model.startswith("b_"):
        h, s = dk ** mp.mpf(-0.5), dk              # h = d_k^(-1/2), kernel in the head's own space
    else:
        h, s = dk ** mp.mpf(-0.5), d               # a_* and reverse: h = d_k^(-1/2), kernel in R^d
    n_eff = mp.log(n) if model == "reverse" else n
    V = c_v / (n_eff * h**s)                        # per-head variance
    ensemble = "corr" if model == "reverse" else model.rsplit("_", 1)[1]
    H = D / dk
    var = {"corr": V, "orth": V / H, "frame": V * dk / d}[ensemble]
    return c_b * h**4 + var


def own_divisors(D: int) -> list[int]:
    return [k for k in range(1, D + 1) if D % k == 0]


def own_best(model, n, D, d, c_b=1, c_v=1):
    """All divisor d_k whose MSE is within TIE_RTOL of the minimum, and that minimum."""
    with mp.workdps(DPS):
        vals = {k: own_mse(model, k, n, D, d, c_b, c_v) for k in own_divisors(D)}
        best = min(vals.values())
        return {k for k, v in vals.items() if v <= best * (1 + TIE_RTOL)}, best, vals


@given(model=st.sampled_from(MODELS), D=st.integers(1, 2000), logn=st.floats(1, 12), d=st.integers(1, 64),
       lcb=st.floats(-1, 1), lcv=st.floats(-2, 6))
def test_best_pair_equals_own_brute_force(model, D, logn, d, lcb, lcv):
    n, c_b, c_v = 10**logn, 10**lcb, 10**lcv
    H, k, m = al.best_pair(model, n, D, d, c_b, c_v)
    ties, best, _ = own_best(model, n, D, d, c_b, c_v)
    assert H * k == D and k in ties
    with mp.workdps(DPS):
        assert abs(m - best) <= best * mp.mpf("1e-25")


@given(model=st.sampled_from(MODELS), D=st.integers(2, 3000), logn=st.floats(2, 12), d=st.integers(1, 24))
def test_advice_rows_match_own_mse(model, D, logn, d):
    n = 10**logn
    res = al.allocate(D, n, d, model=model)
    (entry,) = res["models"]
    ties, best, vals = own_best(model, n, D, d)
    assert entry["best"]["d_k"] in ties and entry["best"]["H"] * entry["best"]["d_k"] == D
    assert sorted(k for _, k in res["pairs"]) == own_divisors(D)
    ks = [row["d_k"] for row in entry["neighbours"]]
    assert ks == sorted(ks) and entry["best"]["d_k"] in ks
    all_ks = own_divisors(D)
    i = all_ks.index(entry["best"]["d_k"])
    assert ks == all_ks[max(0, i - al.NEIGHBOURS): i + al.NEIGHBOURS + 1]
    with mp.workdps(DPS):
        for row in entry["neighbours"]:
            assert abs(row["log10_ratio"] - float(mp.log10(vals[row["d_k"]] / best))) <= LOG10_ATOL
            assert abs(row["log10_mse"] - float(mp.log10(vals[row["d_k"]]))) <= LOG10_ATOL
            assert row["log10_ratio"] >= -LOG10_ATOL


@given(model=st.sampled_from(MODELS), logn=st.floats(1, 12), d=st.integers(1, 40), D=st.integers(1, 512),
       lcb=st.floats(-1, 1), lcv=st.floats(-2, 6))
def test_continuous_optimum_is_a_stationary_minimum_of_own_mse(model, logn, d, D, lcb, lcv):
    n, c_b, c_v = 10**logn, 10**lcb, 10**lcv
    x = al.continuous_optimum(model, n, D, d, c_b, c_v)
    if model in ("gauss_a_orth", "gauss_a_frame") and d <= 4:
        assert x is None
        # no interior optimum: the MSE increases in d_k (derivative > 0 everywhere sampled)
        with mp.workdps(DPS):
            f = lambda t: own_mse(model, t, n, D, d, c_b, c_v)  # noqa: E731
            assert all(mp.diff(f, mp.mpf(t)) > 0 for t in ("0.01", "1", "10", "1000"))
        return
    assume(x is not None and mp.mpf("1e-6") < x < mp.mpf("1e6"))
    with mp.workdps(DPS):
        x = mp.mpf(x)
        f = lambda t: own_mse(model, t, n, D, d, c_b, c_v)  # noqa: E731
        assert abs(mp.diff(f, x)) <= STATIONARY_RTOL * f(x) / x
        assert f(x * (1 + mp.mpf("1e-4"))) > f(x) and f(x * (1 - mp.mpf("1e-4"))) > f(x)


def test_architecture_table_against_own_mse():
    n, d = 1e9, 64
    res = al.allocate(768, n, d)
    assert [(a[0], a[1], a[2] * a[3]) for a in al.ARCHITECTURES] == [
        ("BERT-base", 768, 768), ("BERT-large", 1024, 1024), ("GPT-2 small", 768, 768), ("GPT-2 XL", 1600, 1600),
        ("LLaMA-7B", 4096, 4096), ("LLaMA-70B", 8192, 8192)]
    for entry in res["models"]:
        for row, (name, D, H, k) in zip(entry["architectures"], al.ARCHITECTURES):
            assert (row["name"], row["D"], row["H"], row["d_k"]) == (name, D, H, k)
            ties, best, vals = own_best(entry["model"], n, D, d)
            assert row["best_d_k"] in ties and row["best_H"] * row["best_d_k"] == D
            with mp.workdps(DPS):
                assert abs(row["log10_ratio"] - float(mp.log10(vals[k] / best))) <= LOG10_ATOL
            assert row["applies"] == (D <= d if entry["model"].endswith("_orth")
                                      else D > d if entry["model"].endswith("_frame") else True)
    # the absurd ratios under model a at d = 64 are represented, not overflowed or NaN
    a_corr = next(e for e in res["models"] if e["model"] == "a_corr")
    llama = a_corr["architectures"][4]
    assert math.isfinite(llama["log10_ratio"]) and llama["log10_ratio"] > 50


def test_huge_variance_terms_stay_finite_in_log10():
    res = al.allocate(768, 1e9, 768, model="a_corr")
    row = res["models"][0]["architectures"][0]        # BERT-base 12 x 64 at d = 768: ratio ~ 10^690
    with mp.workdps(DPS):
        ties, best, vals = own_best("a_corr", 1e9, 768, 768)
        expect = float(mp.log10(vals[64] / best))
    assert expect > 300 and abs(row["log10_ratio"] - expect) <= LOG10_ATOL
    assert row["ratio"] == math.inf                   # beyond float range: inf, documented, never NaN


def test_integral_float_budget_is_accepted():
    assert al.allocate(96.0, 1e6, 8, model="a_corr")["D"] == 96


def test_cli_output(capsys):
    assert verify_cli(["allocate", "--budget", "768", "--n", "1e9", "--dim", "64"]) == 0
    out = capsys.readouterr().out
    assert "c_b and c_v are model constants" in out and "only as good as the model" in out
    assert "C7" in out and "(log n)^(2/(4+d))" in out
    for name, D, H, k in al.ARCHITECTURES:
        assert f"{name}" in out and f"{H} x {k}" in out
    for model in MODELS:
        assert f"Model {model}:" in out
    # the best b_corr split, recomputed here, is the one printed
    ties, _, _ = own_best("b_corr", 1e9, 768, 64)
    block = out.split("Model b_corr:")[1].split("Model ")[0]
    best_line = next(line for line in block.splitlines() if "<- best" in line)
    H, k = (int(x) for x in best_line.split()[:2])
    assert k in ties and H * k == 768


def test_cli_one_model_and_main_dispatch(capsys):
    assert main(["allocate", "--budget", "96", "--n", "1e6", "--dim", "8", "--model", "b_frame",
                 "--c-b", "2", "--c-v", "0.5"]) == 0
    out = capsys.readouterr().out
    assert "Model b_frame:" in out and "Model a_corr:" not in out and "c_b = 2, c_v = 0.5" in out


def test_budget_cap_is_the_documented_boundary():
    """D = MAX_BUDGET = 2^24 runs (its divisors are the 25 powers of two, by hand), one more is
    refused naming the cap; before the cap, --budget 1e18 ran 82 s of trial division."""
    assert al.MAX_BUDGET == 2**24
    res = al.allocate(al.MAX_BUDGET, 1e9, 64, model="b_corr")
    assert res["pairs"] == [[2 ** (24 - k), 2**k] for k in range(25)]
    best = res["models"][0]["best"]
    # own_best would loop over 2^24 candidates: the MSE of the 25 divisors, from the model definitions
    with mp.workdps(DPS):
        vals = {2**k: own_mse("b_corr", 2**k, 1e9, 2**24, 64) for k in range(25)}
        assert vals[best["d_k"]] <= min(vals.values()) * (1 + TIE_RTOL)
    with pytest.raises(VerifyError, match=r"^D \(--budget\): expected at most 16,777,216 \(MAX_BUDGET"):
        al.allocate(al.MAX_BUDGET + 1, 1e9, 64)


def test_sample_size_just_above_one_is_accepted():
    """n > 1 is the models' domain (log n > 0); n = 1 + 1e-9 is inside it and gives finite advice."""
    res = al.allocate(96, 1 + 1e-9, 8, model="reverse")
    assert math.isfinite(res["models"][0]["best"]["log10_mse"])


def test_a_model_that_does_not_apply_is_named_not_ranked(capsys):
    """At D = d = 768 the fusion-frame models (D > d) are n/a: the advice names them and why,
    with no optimum, no table and no "<- best"; the models that apply keep theirs."""
    assert main(["allocate", "--budget", "768", "--n", "1e6", "--dim", "768"]) == 0
    out = capsys.readouterr().out
    blocks = {b.split(":", 1)[0].removeprefix("Model "): b for b in out.split("\n\n") if b.startswith("Model ")}
    na = {"a_frame", "b_frame", "gauss_a_frame"}
    assert out.count("<- best") == out.count("continuous optimum") == len(al.MODELS) - len(na)
    assert set(blocks) == set(al.MODELS)
    for name, block in blocks.items():
        if name in na:
            assert "n/a at this budget: the fusion-frame model is for D > d (D = 768, d = 768); not ranked" in block
            assert "<- best" not in block and "optimum" not in block and "predicted MSE" not in block
        else:
            assert block.count("<- best") == 1 and "n/a" not in block, name


def test_a_model_that_applies_at_the_boundary_is_ranked(capsys):
    """D = d is inside the orthogonal models (D <= d) and outside the fusion-frame ones (D > d);
    one more unit of budget swaps them."""
    assert main(["allocate", "--budget", "8", "--n", "1e6", "--dim", "8", "--model", "a_orth"]) == 0
    assert "<- best" in capsys.readouterr().out
    assert main(["allocate", "--budget", "8", "--n", "1e6", "--dim", "8", "--model", "a_frame"]) == 2
    assert main(["allocate", "--budget", "9", "--n", "1e6", "--dim", "8", "--model", "a_frame"]) == 0
    assert main(["allocate", "--budget", "9", "--n", "1e6", "--dim", "8", "--model", "a_orth"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 2 and all(line.startswith("error: --model: ") for line in err.splitlines())
