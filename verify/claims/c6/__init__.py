"""C6 (Thm 5.1): is the MSE minimised by mutually orthogonal key subspaces?

Under the C5 covariance model the MSE is ``B² + V/H + V Φ/(H² d_k)`` with the overlap potential
``Φ = d_k Σ_{h≠h'} ρ_hh'``. Parts: the feasible regime ``H d_k <= d`` (core: no Grassmann move around
orthogonal heads lowers the model MSE); beyond ``d`` (scope: the overlap descent reaches the fusion-frame
bound where tight frames exist); a target on one direction on real NW heads (scope, judged with ``α``
refit: fixed weights let orthogonal heads that miss the signal dilute the one that reads it); and, as
premises in scope, circle heads sharing circles and trained heads moved to orthogonal keys (C5's
experiments, judged here).
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any

import numpy as np

import proofs
from proofs.markup import num, sci
from verify._validate import within
from verify.claims import span
from verify.claims.c5 import (A_REFIT, CONV_HDI, CONV_R2, GAUSSIAN_SCHEMA, R2_INFORMATIVE, Z_MIN, gaussian_evidence,
                              heads, path_evidence, rises, torus_evidence, trained, trained_evidence)
from verify.claims.c6 import experiments as E
from verify.claims.c6 import plots
from verify.experiments.regimes import REGIME_PARAMS, timeless
from verify.judgment.claim import Cap, Claim, Context, Evidence, Threshold, shared
from verify.judgment.counterexamples import ReplayOutcome
from verify.judgment.verdicts import Numeric, Role
from verify.numeric import certify, formulas
from verify.numeric.diversity import hdi, overlap
from verify.numeric.grassmann import MAX_SWEEPS, check_sizes, minimise_overlap, overlap_potential, starts
from verify.schema import Int, Schema, Seed

__all__ = ["CLAIM", "MOVE_TOL", "MSE_RTOL", "BELOW_TOL", "BOUND_TOL", "ORTH_EPS", "lowers_mse", "local_agreement",
           "reaches_bound", "below_bound", "beyond_agreement", "infeasible_violated", "beats_orthogonal",
           "trained_violated", "Z_MIN", "R2_INFORMATIVE", "CONV_R2", "CONV_HDI"]

CLAIM = Claim(proofs.c6_orthogonality, figure="overlap_optimisation")

MOVE_TOL = Threshold(1e-14, r"float64 rounding of a model MSE of order $B^2 + V \le 3$; the second-order increase at "
                            r"$t = 10^{-4}$ is about $10^{-9}$, far above")
MSE_RTOL = Threshold(1e-13, "orthogonal heads' model MSE against the generated `c6_min_mse`: a few float64 operations")
BELOW_TOL = Threshold(1e-11, r"rounding of $\Phi = \lVert S \rVert_F^2 - H d_k$, about $10^{-14}$ per entry of a "
                             r"$d \times d$ matrix, $d \le 6$")
BOUND_TOL = Threshold(1e-9, r"the descent converges linearly to a stop at about $10^{-14}$ in $\Phi$; gaps measured "
                            r"below $10^{-12}$, slow starts need the margin")
ORTH_EPS = Threshold(1e-8, r"$\Phi$ of orthogonal heads is about $10^{-31}$; above this the optimum found is not "
                           "orthogonal")
MAX_REPLAY_DIM = Cap(16, r"input dimension of a beyond-$d$ replay: each sweep's eigendecompositions of $d \times d$ "
                         r"matrices cost about 50 microseconds (the check uses $d \le 8$)")
MAX_REPLAY_EIGH = Cap(2 * 10**5, r"eigendecompositions, starts times $H$ times the sweep limit, at worst: 10 s if every "
                                 "descent ran to the limit (they stop after at most 40 sweeps: 0.2 s)")


# --------------------------------------------------------------------------- the judges
def lowers_mse(increase: float) -> bool:
    """A move lowers the model MSE when it decreases it by more than MOVE_TOL (rounding)."""
    return bool(increase < -MOVE_TOL)


def local_agreement(lowering_moves: int, mse_rel_error: float) -> str:
    """``rounding`` when no move lowers the model MSE and the orthogonal heads' MSE meets
    ``c6_min_mse`` to MSE_RTOL, else ``disagree``."""
    return "rounding" if lowering_moves == 0 and mse_rel_error <= MSE_RTOL else "disagree"


def reaches_bound(bound_hdi: float, final_hdi: float) -> bool:
    """A descent reaches the fusion-frame bound when its HDI is within BOUND_TOL below it."""
    return bool(bound_hdi - final_hdi <= BOUND_TOL)


def below_bound(phi: float, phi_lower_bound: float) -> bool:
    """A descent beats the proved bound Φ ≥ H d_k (H d_k/d − 1) when Φ is below it by more than BELOW_TOL."""
    return bool(phi < phi_lower_bound - BELOW_TOL)


def beyond_agreement(below: int, certificates_hold: bool) -> str:
    """``measured`` when no descent beats the bound and every arb certificate holds, else ``disagree``."""
    return "disagree" if below or not certificates_hold else "measured"


def infeasible_violated(infeasible: bool, phi_lower_bound: Fraction, phi_optimum: float) -> bool:
    """Orthogonality is not the minimiser: H d_k > d, the proved lower bound on Φ is positive and the
    optimum found is not orthogonal (Φ above ORTH_EPS)."""
    return bool(infeasible and phi_lower_bound > 0 and phi_optimum > ORTH_EPS)


def beats_orthogonal(steps: list[dict]) -> bool:
    """Some configuration has a lower MSE than the orthogonal heads (``diff`` = orthogonal − it) by
    more than Z_MIN paired standard errors (:func:`verify.claims.c5.rises`)."""
    return any(rises(s["diff"], s["se"]) for s in steps)


def trained_violated(rows: list[dict]) -> bool:
    """Trained heads (HDI < 1) beat every orthogonal move of them (α refit) by more than Z_MIN SE."""
    ups = [r for r in rows if r["direction"] == "up"]
    return bool(ups) and all(rises(r["refit"]["diff"], r["refit"]["diff_se"]) for r in ups)


# --------------------------------------------------------------------------- replays
@CLAIM.replay("beyond-d", schema=Schema(H=Int(2), d_k=Int(1), d=Int(1, MAX_REPLAY_DIM), seed=Seed(), starts=Int(1),
                                        work=lambda p: p["starts"] * p["H"] * MAX_SWEEPS, cap=MAX_REPLAY_EIGH,
                                        work_what="eigendecompositions starts·H·MAX_SWEEPS at worst"),
              example={"H": 3, "d_k": 1, "d": 2, "seed": 1, "starts": 2})
def replay_beyond_d(p: dict) -> ReplayOutcome:
    """Orthogonal heads need H d_k <= d dimensions; the exact bound Φ ≥ H d_k (H d_k − d)/d, and the
    optimum found from seeded starts. Violated when H d_k > d (:func:`infeasible_violated`)."""
    with within("params"):
        H, d_k, d = check_sizes(p["H"], p["d_k"], p["d"])
    bound = Fraction(H * d_k * max(0, H * d_k - d), d)
    best = min((minimise_overlap(H, d_k, d, rng=s) for s in starts(p["seed"], p["starts"])), key=lambda r: r.phi[-1])
    phi, rho = overlap_potential(best.U), overlap(best.U)
    tight = float(np.linalg.norm((best.U @ best.U.transpose(0, 2, 1)).sum(axis=0) - H * d_k / d * np.eye(d)))
    pairs = [float(rho[i, j]) for i in range(H) for j in range(i + 1, H)]
    figures = {"dimensions_needed": H * d_k, "d": d, "phi_lower_bound": str(bound), "phi_optimum": phi,
               "hdi_optimum": hdi(best.U), "hdi_bound": float(formulas.c6_hdi_bound(H, d_k, d)),
               "tight_frame_residual": tight, "rho_min": min(pairs), "rho_max": max(pairs)}
    return ReplayOutcome(violates=infeasible_violated(H * d_k > d, bound, phi), figures=figures, summary=(
        f"$H = {H}$, $d_k = {d_k}$, $d = {d}$: orthogonal heads need $H d_k = {H * d_k}$ dimensions, "
        + ("more than" if H * d_k > d else "no more than") + f" $d = {d}$; $\\min \\Phi \\ge {bound}$, the "
        f"optimum found $\\Phi = {phi:.6g}$ (pair overlaps {span(f'{min(pairs):.4f}', f'{max(pairs):.4f}')})"))


@CLAIM.replay("one-direction-torus", schema=REGIME_PARAMS, example={"size": "quick", "seed": 0})
def replay_one_direction(p: dict) -> ReplayOutcome:
    """The declared pair of :func:`verify.claims.c5.heads.signal_pair`; violated when, with α refit,
    the heads sharing the signal beat the orthogonal ones (:func:`verify.claims.c5.rises`)."""
    reg = heads.signal_pair(p["size"], p["seed"])
    g = reg["gap"]["refit"]
    crit = f"orthogonal heads worse by more than {Z_MIN:g} SE with $\\alpha$ refit"
    return ReplayOutcome(violates=rises(g["diff"], g["se"]), figures=timeless(reg), criterion=crit, summary=(
        f"orthogonal minus sharing (one signal circle), $\\alpha$ refit: ${g['diff']:+.4f} \\pm {g['se']:.4f}$ "
        f"($z = {g['z']:.1f}$); $\\alpha = 1/H$: ${reg['gap']['uniform']['diff']:+.4f}$; violation: {crit}"))


@CLAIM.replay("in-scope-path", schema=REGIME_PARAMS, example={"size": "quick", "seed": 0})
def replay_path(p: dict) -> ReplayOutcome:
    """Circle heads sharing fewer circles (:func:`verify.claims.c5.heads.sharing_path`); violated
    when some configuration beats the orthogonal heads with either weighting."""
    reg = heads.sharing_path(p["size"], p["seed"])
    return ReplayOutcome(violates=any(beats_orthogonal(s) for s in reg["to_orthogonal"].values()),
                         figures=timeless(reg), summary=r"MSE along $\mathrm{HDI}$, " + "; ".join(
                             f"{w}: {heads.path_summary(reg['rows'], w)}" for w in ("uniform", "refit")))


@CLAIM.replay("trained-heads", schema=REGIME_PARAMS, example={"size": "quick", "seed": 0})
def replay_trained(p: dict) -> ReplayOutcome:
    """Trained heads moved up to orthogonal ones; violated by :func:`trained_violated`."""
    exp = trained.trained_experiment(p["size"], p["seed"])
    moves = "; ".join(f"{r['config']} ($\\mathrm{{HDI}}$ {r['hdi']:.2f}) ${r['refit']['diff']:+.3f} \\pm "
                      f"{r['refit']['diff_se']:.3f}$" for r in exp["rows"] if r["direction"] == "up")
    return ReplayOutcome(violates=trained_violated(exp["rows"]), figures=timeless(exp),
                         summary=r"$\alpha$ refit, against the trained heads: " + moves)


# --------------------------------------------------------------------------- shared computations
@shared
def local(ctx: Context) -> dict[str, Any]:
    out = E.local_moves(ctx.rng("c6/local"), ctx.size(6, 24), lowers_mse)
    return {**out, "agreement": local_agreement(out["lowering_moves"], out["orthogonal_vs_c6_min_mse_rel_error"])}


@shared
def descents(ctx: Context) -> dict[str, Any]:
    configs = [*E.BEYOND, E.NOT_ATTAINED] + ctx.size([], [(6, 2, 5), (4, 3, 5)])
    out = E.descents(configs, lambda c: ctx.seed_for(f"c6/opt/{c[0]}-{c[1]}-{c[2]}"), ctx.size(3, 8), reaches_bound,
                     below_bound, BOUND_TOL)
    return {**out, "agreement": beyond_agreement(out["below_bound"], out["certificates_hold"])}


# --------------------------------------------------------------------------- the parts
_BOUND_FORM = r"$\mathrm{HDI} = 1 - (H d_k/d - 1)/(H - 1)$"


def _sizes_list(configs: Any) -> str:
    return ", ".join(f"${tuple(c)}$" for c in configs)


@CLAIM.part("feasible-regime", Role.CORE, groups=("feasible", "fusion_bound"), label=r"feasible regime ($H d_k \le d$)",
            statement=r"for $H d_k \le d$ mutually orthogonal key subspaces minimise the model MSE (stationary, "
                      r"$\Phi = 0$)")
def feasible_regime(ctx: Context) -> Evidence:
    lc = local(ctx)
    return Evidence(
        numeric=Numeric(lc["agreement"], (
            f"{lc['moves']} random Grassmann moves (step $t$ from {sci(E.STEP_SIZES[0], 0)} to "
            f"{sci(E.STEP_SIZES[-1], 0)}, QR retraction) at orthogonal heads, $(H, d_k, d)$ in "
            f"{_sizes_list(E.FEASIBLE)}: {lc['lowering_moves']} lower the model MSE (criterion: a decrease beyond "
            f"{sci(MOVE_TOL, 0)}); the smallest increase over $t^2$ is {num(lc['min_increase_over_t2'], '.3g')} (second "
            f"order; its relative change from $t = 10^{{-3}}$ to $10^{{-4}}$ at most "
            f"{sci(lc['drift_of_increase_over_t2'])}); the MSE at orthogonal heads equals `c6_min_mse` to "
            f"{sci(lc['orthogonal_vs_c6_min_mse_rel_error'], 0)} (criterion: {sci(MSE_RTOL, 0)})"), lc),
        finding=r"for $H d_k \le d$ orthogonal heads minimise the model MSE ($\Phi = 0$, stationary)")


@CLAIM.part("beyond-d", Role.SCOPE, groups=("potential", "beyond_d", "not_attained"), label=r"beyond $d$ ($H d_k > d$)",
            statement=r"the MSE is minimised when $(W_K^h)^\top W_K^{h'} \approx 0$ for $h \ne h'$, also when "
                      r"$H d_k > d$",
            instead=r"Under the covariance model the MSE is minimised by mutually orthogonal key subspaces when "
                    r"$H d_k \le d$, and for $H d_k > d$ by a tight fusion frame, $\sum_h P_h = (H d_k/d) I$ with "
                    r"$\mathrm{HDI} = 1 - (H d_k/d - 1)/(H - 1)$, where one exists.")
def beyond_d(ctx: Context) -> Evidence:
    ds = descents(ctx)
    two, tight = ds["two_planes"], [(r["H"], r["d_k"], r["d"]) for r in ds["tight_rows"]]
    cx = ctx.counterexample(
        params={"H": 3, "d_k": 1, "d": 2, "seed": ctx.seed_for("c6/beyond"), "starts": ctx.size(2, 4)},
        statement=r"the MSE is minimised by mutually orthogonal key subspaces ($(W_K^h)^\top W_K^{h'} \approx 0$)",
        description=r"three heads of dimension 1 in $\mathbb{R}^2$: no orthogonal configuration exists; the model MSE "
                    "is minimised by the Mercedes frame (a tight fusion frame), every pair overlapping by 1/4")
    return Evidence(
        numeric=Numeric(ds["agreement"], (
            f"the overlap descent reaches the fusion-frame bound {_BOUND_FORM} in {ds['reached']} of {ds['starts']} "
            f"starts for {_sizes_list(tight)} (criterion: within {sci(BOUND_TOL, 0)}; the largest gap "
            f"{sci(ds['max_gap'])}, at most {ds['max_sweeps']} sweeps); for $(2, 2, 3)$ $\\Phi = "
            f"{two['final_phi_min']:.6f}$ above the bound {two['bound_phi']:.4f}; {ds['below_bound']} starts below the "
            f"bound (criterion: by more than {sci(BELOW_TOL, 0)}); certified in {certify.PREC}-bit arb with the exact "
            f"projectors of each best optimum"),
            {"configs": ds["rows"], "starts_reaching_bound": ds["reached"], "starts": ds["starts"],
             "below_bound": ds["below_bound"], "two_planes_phi": two["final_phi_min"],
             "two_planes_bound_phi": two["bound_phi"]}),
        counterexample=cx, regime=r"$H d_k > d$, $(H, d_k, d)$ in " + _sizes_list([*tight, E.NOT_ATTAINED]),
        restored_by=(r"$H d_k \le d$ (and the C5 covariance model); beyond it the minimiser is a tight fusion frame "
                     f"with {_BOUND_FORM} where one exists (not always: two planes in $\\mathbb{{R}}^3$ reach only "
                     r"$\Phi = 2 > 4/3$)") if cx else "",
        plots=plots.overlap_optimisation(ctx, ds),
        finding=r"for $H d_k > d$ orthogonal heads do not exist, the optimum is a tight fusion frame with "
                + _BOUND_FORM + " where one exists")


@CLAIM.part("one-direction-torus", Role.SCOPE, experiment=True, controls=True,
            label="real NW heads, a target on one direction (torus)",
            statement=r"on real NW heads with refit weights, orthogonal key subspaces minimise the MSE also when the "
                      "target depends on one direction")
def one_direction_torus(ctx: Context) -> Evidence:
    return torus_evidence(ctx, CLAIM, "refit", {
        "description": r"circle heads on the torus, target $\sin(2 x_1)$: with refit weights, heads that share the "
                       "signal circle beat orthogonal heads of which one reads it",
        "restored": "a target every orthogonal head sees alike (the premise parts); here the gap is the variance at "
                    "finite n, zero in the population"})


@CLAIM.replay("one-direction-gaussian", schema=GAUSSIAN_SCHEMA, example={"n": 16, "R": 2, "m": 4, "seed": 1})
def replay_gaussian(p: dict) -> ReplayOutcome:
    """The declared Gaussian-design pair (:func:`verify.claims.c6.experiments.gaussian_pair`); violated
    when, with α refit, the orthogonal heads are worse (:func:`verify.claims.c5.rises`)."""
    ex = E.gaussian_pair(p)
    g = ex["gap"]
    crit = f"worse by more than {Z_MIN:g} SE with $\\alpha$ refit"
    return ReplayOutcome(violates=rises(g["refit"]["diff"], g["refit"]["se"]), figures=ex, criterion=crit, summary=(
        "orthogonal minus sharing, Gaussian design: MSE " + ", ".join(f"{w} ${g[w]['diff']:+.4f} \\pm {g[w]['se']:.4f}$"
                                                                       for w in ("uniform", "refit"))
        + f"; violation: {crit}"))


@CLAIM.part("one-direction-gaussian", Role.SCOPE, experiment=True,
            label="real NW heads, a target on one direction (Gaussian design)",
            statement=r"on real NW heads with refit weights, orthogonal key subspaces minimise the MSE for a target on "
                      "one direction, on the Gaussian design at the paper's kernel scale")
def one_direction_gaussian(ctx: Context) -> Evidence:
    return gaussian_evidence(ctx, CLAIM, "refit", {
        "description": r"coordinate heads on $\sin(2 x_1)$: with refit weights, heads sharing the signal direction "
                       "beat orthogonal heads", "heads": "heads sharing the signal direction against orthogonal heads",
        "restored": "a target every orthogonal head sees alike"})


@CLAIM.part("in-scope-path", Role.PREMISE, experiment=True, controls=True,
            label=r"real NW heads in scope: heads sharing circles against orthogonal heads",
            statement=r"where every head is needed ($H d_k = d$, a target over every direction) orthogonal heads have "
                      "the least MSE of real NW heads among heads that share circles, with either weighting")
def in_scope_path(ctx: Context) -> Evidence:
    def finding(reg: dict, violated: bool) -> str:
        rows = reg["rows"]
        return ("in scope: heads sharing circles beat orthogonal heads" if violated else
                f"in scope: orthogonal heads have the least MSE, {rows[-1]['refit']['mse']:.2f} against "
                f"{rows[0]['refit']['mse']:.2f} for identical ones ({A_REFIT})")

    return path_evidence(ctx, CLAIM, "c6/path", {
        "description": "circle heads on the block target: a configuration sharing circles beats the orthogonal heads",
        "points": "circles read by the four heads " + ", ".join("".join(map(str, c)) for c in heads.SHARING_PATH),
        "criterion": "a configuration below the orthogonal heads", "judged": "to_orthogonal"}, finding)


@CLAIM.part("trained-heads", Role.PREMISE, experiment=True, controls=True,
            label=r"trained NW heads moved to orthogonal keys",
            statement=r"heads trained to convergence in scope are no better than orthogonal heads: moving their "
                      r"$\mathrm{HDI}$ up to 1 does not raise the MSE of every orthogonal move ($\alpha$ refit)")
def trained_heads(ctx: Context) -> Evidence:
    def finding(rows: dict, violated: bool) -> str:
        ups = " and ".join(num(rows[k]["refit"]["diff"], "+.2f") for k in ("orthogonal keys", "block projection"))
        return (f"trained heads settle at $\\mathrm{{HDI}}$ {rows['trained']['hdi']:.2f}: orthogonal moves change the "
                f"MSE by {ups}" + (", every one worse" if violated else ""))

    return trained_evidence(ctx, CLAIM, {
        "description": r"heads trained in scope settle at $\mathrm{HDI}$ below 1 and beat every orthogonal move of them",
        "criterion": "every orthogonal move raising the MSE"}, ("orthogonal keys", "block projection"), finding)


@CLAIM.summary
def summary(ctx: Context, parts: tuple) -> str:
    lc, ds = local(ctx), descents(ctx)
    return (f"orthogonal heads: {lc['lowering_moves']} of {lc['moves']} moves lower the model MSE; $H d_k > d$: bound "
            f"reached in {ds['reached']} of {ds['starts']} starts; "
            + "; ".join(f"{p.label}: {p.outcome}" for p in parts if p.r2))
