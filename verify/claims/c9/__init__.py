"""C9 (summary, 2, 4 and 3.C): does training pressure drive heads towards orthogonal subspaces?

Three readings, each its own core: (i) NW-ensemble heads trained by Adam with free head weights on the
block targets, whose optimum needs diverse heads (:mod:`.experiments`; fixed weights and targets without
a specialisation reward are scope parts); (ii) the pretrained all-MiniLM-L6-v2 and SmolLM2-135M against
Haar-random subspaces per layer (:mod:`verify.experiments.pretrained`), refuted when every layer lies below
chance; (iii) an attention layer trained from scratch on in-context regression (:mod:`.layer`). A training
part is judged by :func:`judge`.
"""

from __future__ import annotations

import functools
import math
from typing import Any, Callable

import proofs
from proofs.markup import num, pm
from verify.claims.c9 import experiments as E
from verify.claims.c9 import plots
from verify.claims.c9.pretrained import POSITIONS, open_model, weighted_layer0
from verify.experiments import pretrained as P
from verify.errors import VerifyError
from verify.experiments.regimes import REGIME_PARAMS
from verify.judgment.claim import Cap, Claim, Context, Evidence, Threshold, shared
from verify.judgment.counterexamples import ReplayOutcome
from verify.judgment.verdicts import Numeric, Reading, Role
from verify.numeric.stats import z_score
from verify.schema import Choice, Int, Obj, Schema, Seed

CLAIM = Claim(proofs.c9_training, readings=(
    Reading("i", "NW-ensemble heads trained in a controlled experiment"),
    Reading("ii", "pretrained transformers, all-MiniLM-L6-v2 and SmolLM2-135M"),
    Reading("iii", "an attention layer trained from scratch")), figure="training_effects")

T_MIN = Threshold(4.0, r"a change counts only beyond this many standard errors over seeds: one-sided t tail "
                       r"$2.6 \cdot 10^{-3}$ at 7 degrees of freedom")
MOVE_SD = Threshold(0.5, "and only when at least this many Haar SDs of the diagnostic (0.026 in key HDI at $d = 8$, "
                         "$d_k = 2$, $H = 4$): a change of practical size")
ROOM_SD = Threshold(2.0, "a diagnostic can show a move only towards a bound this many Haar SDs from its chance value: "
                         "closer, the bound lies inside the spread of random heads")
R2_MARGIN = Threshold(0.1, r"informative: trained heads beat identical heads by this share of $\mathrm{Var}\, f$ and "
                           "come this close to diverse reference heads (several SEs of an $R^2$ over 8 seeds)")
R2_CONV = Threshold(0.05, "not converged: the $R^2$ moves by more than this between half the steps and the end "
                          "(half the informativeness margin) ...")
Z_CONV = Threshold(2.0, "... and by more than this many standard errors (paired over seeds): beyond the noise of a "
                        "held learning rate")
Z_MIN = Threshold(5.0, "a checkpoint layer is below chance only beyond this many Haar SDs")
CKPT_DELTA_MIN = Threshold(0.02, "and only by more than this in HDI: a practical gap, not only a significant one")
MAX_SAMPLES = Cap(2**20, "embedding samples of a replay: a 384 x 384 covariance from a million rows is a few seconds")
MAX_DRAWS = Cap(4096, "Haar draws of a replay's weighted baseline: 12 QRs of 384 x 32 each, a few seconds")

#: The diagnostics judged; the form-subspace HDI (a function of the key and query ranges) is reported.
JUDGED = ("key_hdi", "query_hdi", "form_diversity")
SHORT = {"key_hdi": "keys", "query_hdi": "queries", "form_diversity": "score forms"}
TENSORS, HEADS = ("keys", "queries"), {"keys": "key", "queries": "query"}
WORDS = {"diversify": "the heads diversify", "converge": "the heads converge", "mixed": "mixed",
         "flat": "the heads do not move"}
SOURCE = Obj({"distribution": Choice(tuple(m.distribution for m in P.MODELS)),
              "path": Choice(tuple(m.path for m in P.MODELS))})
MINILM = {"distribution": P.MODELS[0].distribution, "path": P.MODELS[0].path}
#: Perturbations per layer and tensor of the quantisation band (quick, default, large): each HDI from 4-bit
#: weights carries the spread of its value when every weight moves within its quantisation step.
BAND_DRAWS = (2, 4, 8)


# --------------------------------------------------------------------------- the judges
def room(stats: dict[str, float]) -> tuple[bool, bool]:
    """(can rise, can fall): the diagnostic's bound, and 0, lie at least ROOM_SD Haar SDs from its
    chance value."""
    return (stats["bound"] - stats["haar_mean"] >= ROOM_SD * stats["haar_sd"],
            stats["haar_mean"] >= ROOM_SD * stats["haar_sd"])


def move(mean: float, se: float, haar_sd: float, up: bool = True, down: bool = True) -> int:
    """+1 when a change rises by at least MOVE_SD Haar SDs and T_MIN standard errors (``up``: it can),
    −1 when it falls as far (``down``), 0 otherwise; equality counts as moving."""
    t = z_score(mean, se)
    if up and mean >= MOVE_SD * haar_sd and t >= T_MIN:
        return 1
    if down and mean <= -MOVE_SD * haar_sd and t <= -T_MIN:
        return -1
    return 0


def pooled(effects: list[dict[str, float]]) -> dict[str, float]:
    """The mean change over K targets (independent runs): mean of the means, SE ``sqrt(Σ se²)/K``, t."""
    if not effects:
        raise VerifyError("effects: expected at least one target's effect, got none")
    mean = sum(e["mean"] for e in effects) / len(effects)
    se = math.sqrt(sum(e["se"] ** 2 for e in effects)) / len(effects)
    return {"mean": mean, "se": se, "t": z_score(mean, se)}


def outcome(moves: dict[str, int]) -> str:
    """``diversify`` (some rises, none falls), ``converge`` (the reverse), ``mixed`` or ``flat``."""
    up, down = any(v > 0 for v in moves.values()), any(v < 0 for v in moves.values())
    return "mixed" if up and down else "diversify" if up else "converge" if down else "flat"


def stable(d: dict[str, Any]) -> bool:
    """A diagnostic's verdict survives the doubling of the run: the same verdict at T as at 2T, or a
    move at 2T that the change at T already had the direction of (a trend that became clear)."""
    h, e = d["move_half"], d["move_end"]
    return h == e or (h == 0 and e * d["half"]["mean"] > 0)


def powered(se: float, haar_sd: float) -> bool:
    """A change this precise would have shown a move of the threshold size: T_MIN·SE <= MOVE_SD·SD."""
    return T_MIN * se <= MOVE_SD * haar_sd


def judge(rows: list[dict], refs: list[dict]) -> dict[str, Any]:
    """A part's judgement from its settings' summaries (:func:`verify.claims.c9.experiments.summarise`)
    and, per setting, the references its R² is held against: ``low`` (beaten by R2_MARGIN) and
    ``high`` (reached within R2_MARGIN, or None), each ``{"mean", "se"}``."""
    diag, moves = {}, {}
    for k in (*JUDGED, "form_subspace_hdi"):
        up, down = room(rows[0][k])
        d = {"half": pooled([r[k]["half"] for r in rows]), "end": pooled([r[k]["end"] for r in rows]),
             "can_rise": up, "can_fall": down}
        if k in JUDGED:
            for when in ("half", "end"):
                d[f"move_{when}"] = move(d[when]["mean"], d[when]["se"], rows[0][k]["haar_sd"], up, down)
            moves[k] = d["move_end"]
        diag[k] = d
    r2 = {w: pooled([r["r2"][w] for r in rows]) for w in ("init", "half", "end", "change")}
    low = pooled([f["low"] for f in refs])
    high = pooled([f["high"] for f in refs]) if all(f["high"] for f in refs) else None
    gain = {"mean": r2["end"]["mean"] - low["mean"], "se": math.hypot(r2["end"]["se"], low["se"])}
    res = outcome(moves)
    unstable = [k for k in JUDGED if not stable(diag[k])]
    reasons = []
    if gain["mean"] < R2_MARGIN:
        reasons.append(f"the trained $R^2$ ({num(r2['end']['mean'], '.2f')}) beats its reference "
                       f"({num(low['mean'], '.2f')}) by less than {num(R2_MARGIN, 'g')}: the heads learn too little to "
                       "tell; more steps or a larger n would decide")
    if high is not None and r2["end"]["mean"] < high["mean"] - R2_MARGIN:
        reasons.append(f"the trained $R^2$ ({num(r2['end']['mean'], '.2f')}) stays more than {num(R2_MARGIN, 'g')} "
                       f"below what diverse heads reach ({num(high['mean'], '.2f')}): more steps would decide")
    if abs(r2["change"]["mean"]) > R2_CONV and abs(r2["change"]["t"]) >= Z_CONV:
        reasons.append(f"the fit has not converged ($R^2$ {num(r2['half']['mean'], '.2f')} at half the steps, "
                       f"{num(r2['end']['mean'], '.2f')} at the end): a longer run would decide")
    if unstable:
        reasons.append(f"the verdict on {', '.join(SHORT[k] for k in unstable)} at half the steps does not hold at "
                       "the end: a longer run would decide")
    if res == "flat" and not all(powered(diag[k]["end"]["se"], rows[0][k]["haar_sd"]) for k in JUDGED):
        reasons.append(f"nothing moves beyond its noise, and {rows[0]['seeds']} seeds could not have shown a move of "
                       "the threshold size: more seeds would decide")
    return {"diagnostics": diag, "r2": r2, "reference": low, "diverse_reference": high, "gain": gain, "outcome": res,
            "undecided": "; ".join(reasons)}


def violated(j: dict[str, Any], role: Role) -> bool:
    """A decided core is violated when the heads converge or do not move; a scope part when they do not
    diversify."""
    return not j["undecided"] and (j["outcome"] in ("converge", "flat") if role is Role.CORE
                                   else j["outcome"] != "diversify")


def chance_side(row: dict[str, Any]) -> str:
    """``below`` chance when z < −Z_MIN and HDI − mean < −CKPT_DELTA_MIN (the gap beyond the quantisation
    band), ``above`` when as far above, else ``neither`` (:func:`verify.experiments.pretrained.classify`)."""
    return P.classify(row, Z_MIN, CKPT_DELTA_MIN)


def below_chance(row: dict[str, Any]) -> bool:
    """A layer's heads are less diverse than chance (:func:`chance_side`)."""
    return chance_side(row) == "below"


def every_layer_below(rows: list[dict[str, Any]]) -> bool:
    """A model's reading-ii violation: every layer's heads less diverse than chance."""
    return all(below_chance(r) for r in rows)


def weighted_flips(w: dict[str, Any]) -> list[str]:
    """The tensors (keys, queries) on which the plain and the weighted comparison of layer 0 disagree
    about being below chance (:func:`below_chance`, each against its own baseline)."""
    def row(t: str, kind: str) -> dict[str, Any]:     # MiniLM is stored in float32: no quantisation band
        return {"hdi": w[t][f"{kind}_hdi"], "z": w[t][f"{kind}_z"], "gap": w[t][f"{kind}_gap"], "band": None}
    return [t for t in ("keys", "queries") if below_chance(row(t, "plain")) != below_chance(row(t, "weighted"))]


# --------------------------------------------------------------------------- the training parts
@shared
def nw_run(ctx: Context) -> dict[str, Any]:
    ctx.progress("training NW-ensemble heads")
    return E.nw_heads(ctx.size("quick", "default", "large"), ctx.seed_for("c9/training"))


@shared
def layer_run(ctx: Context) -> dict[str, Any]:
    ctx.progress("training an attention layer from scratch")
    return E.attention_layer(ctx.size("quick", "default", "large"), ctx.seed_for("c9/attention-layer"))


#: part id -> (role, reading, label, statement, experiment, which settings it trains: a test of
#: (target, design, head weights "free", "fixed" or "tied"), what a paper could write where it is a limit).
TRAINING_PARTS: dict[str, tuple[Role, str, str, str, Callable, Callable[[str, str, str], bool], str]] = {
    "nw-heads": (Role.CORE, "i", "(i) NW heads, positive controls",
                 "on targets whose optimum needs diverse heads (the block targets), NW-ensemble heads trained by "
                 "gradient descent with free head weights become more diverse", E.nw_heads,
                 lambda t, d, hw: E.KIND[t, d] == "positive" and hw == "free", ""),
    "nw-fixed-weights": (Role.SCOPE, "", "(i) NW heads, weights fixed at $1/H$",
                         "with head weights fixed at $1/H$ (the C5 model's) as well, training makes the heads more "
                         "diverse on the block targets", E.nw_heads,
                         lambda t, d, hw: E.KIND[t, d] == "positive" and hw == "fixed",
                         "With head weights fixed at $1/H$, training does not make NW heads more diverse on targets "
                         "whose optimum needs diverse heads."),
    **{t: (Role.SCOPE, "", f"(i) {t} target", f"training makes the heads more diverse also on the {t} target, whose "
           f"optimum rewards heads that share {what}", E.nw_heads,
           (lambda name: lambda t, d, hw: t == name and hw == "free")(t),
           f"On the {t} target, whose optimum rewards heads that share {what}, training does not make NW heads "
           "more diverse.")
       for t, what in (("single-index", "its one direction"), ("additive", "the direction of the sum"),
                       ("bump", "every direction alike"))},
    "attention-layer": (Role.CORE, "iii", "(iii) attention layer, positive controls",
                        "an attention layer with per-head query, key, value and output blocks, trained from scratch on "
                        "in-context regression of the block targets, ends with more diverse heads", E.attention_layer,
                        lambda t, d, hw: E.KIND[t, d] == "positive", ""),
}


def _finite(exp: dict[str, Any], row: dict, family: str, hw: str) -> dict[str, float]:
    pc = next(p for p in exp["positive_controls"] if (p["target"], p["design"]) == (row["target"], row["design"]))
    f = next(f for f in pc["finite_n"] if (f["family"], f["head_weights"]) == (family, hw))
    return {"mean": f["r2"], "se": f["se"]}


def part_rows(exp: dict[str, Any], pid: str) -> tuple[list[dict], list[dict]]:
    """The settings of part ``pid`` in an experiment's result and, per setting, its references:
    identical (low) and diverse (high) reference heads at the experiment's n for the block targets
    (for the layer, low is the same layer with tied heads), the R² at initialisation on the others."""
    keep = TRAINING_PARTS[pid][5]
    rows = [r for r in exp["settings"]
            if r["head_weights"] != "tied" and keep(r["target"], r["design"], r["head_weights"])]
    refs = []
    for r in rows:
        if r["kind"] != "positive":
            refs.append({"low": r["r2"]["init"], "high": None})
        elif pid == "attention-layer":
            tied = next(t for t in exp["settings"] if t["head_weights"] == "tied" and t["target"] == r["target"]
                        and t["design"] == r["design"])
            refs.append({"low": tied["r2"]["end"], "high": _finite(exp, r, "diverse", "free")})
        else:
            refs.append({"low": _finite(exp, r, "identical", r["head_weights"]),
                         "high": _finite(exp, r, "diverse", r["head_weights"])})
    return rows, refs


def _chg(e: dict[str, float]) -> str:
    return f"${e['mean']:+.3f} \\pm {e['se']:.3f}$"


def _effects(j: dict[str, Any], when: str = "end") -> str:
    """Each judged diagnostic's pooled change, marked where it moves."""
    mark = {1: " (rise)", -1: " (fall)", 0: ""}
    return ", ".join(f"{SHORT[k]} {_chg(j['diagnostics'][k][when])}{mark[j['diagnostics'][k]['move_' + when]]}"
                     for k in JUDGED)


def _verdict_word(j: dict[str, Any]) -> str:
    return "undecided" if j["undecided"] else WORDS[j["outcome"]]


def _name(r: dict) -> str:
    return f"{r['target']} ({'torus' if r['design'] == 'torus' else 'Gaussian design'})"


def _replay_outcome(pid: str, exp: dict[str, Any]) -> ReplayOutcome:
    rows, refs = part_rows(exp, pid)
    j, role = judge(rows, refs), TRAINING_PARTS[pid][0]
    bad = violated(j, role)
    crit = (WORDS[j["outcome"]] if role is Role.CORE else "the heads do not diversify") if bad else ""
    summary = (f"change over training $\\pm$ 1 SE, {rows[0]['half']} and {rows[0]['steps']} steps: "
               f"{_effects(j, 'half')}, then {_effects(j)}; $R^2$ {num(j['r2']['half']['mean'], '.2f')} then "
               f"{num(j['r2']['end']['mean'], '.2f')} against {num(j['reference']['mean'], '.2f')}: {_verdict_word(j)}"
               + (f" (violation: {crit})" if bad else ""))
    return ReplayOutcome(violates=bad, summary=summary, criterion=crit,
                         figures={"judged": j, "settings": rows, "references": refs})


def _replay(pid: str, params: dict) -> ReplayOutcome:
    """Retrain part ``pid``'s settings at the saved size and seed and judge them again."""
    run, keep = TRAINING_PARTS[pid][4:6]
    return _replay_outcome(pid, run(params["size"], params["seed"], select=keep))


for _pid in TRAINING_PARTS:
    CLAIM.replay(_pid, schema=REGIME_PARAMS, example={"size": "quick", "seed": 0})(functools.partial(_replay, _pid))


def _controls(exp: dict[str, Any], pid: str, j: dict[str, Any]) -> dict[str, Any]:
    if TRAINING_PARTS[pid][0] is not Role.CORE:
        return {}
    what = "; ".join(f"{p['target']} ({p['design']}): population MSE {num(p['configs'][0]['population_mse'], '.1g')} "
                     f"for diverse heads, {num(p['configs'][-1]['population_mse'], '.3f')} for identical heads "
                     f"($\\mathrm{{Var}}\\, f = {p['var_f']:g}$)" for p in exp["positive_controls"])
    out = {"positive": {"what": "the block targets, where diverse heads are needed: " + what,
                        "effect": f"{_effects(j)}: {_verdict_word(j)}", "outcome": j["outcome"]}}
    scope = [(t, judge(*part_rows(exp, t))) for t in ("single-index", "additive", "bump")
             if any(r["target"] == t for r in exp["settings"])]
    if scope:
        out["negative"] = {"what": "targets without a specialisation reward: " + ", ".join(t for t, _ in scope),
                           "effect": "; ".join(f"{t}: {_effects(sj)}" for t, sj in scope)}
    return out


def setting_line(r: dict[str, Any], ref: dict[str, Any]) -> str:
    """A setting's changes at half the steps and at the end, and its R² along training against its references."""
    r2 = {w: num(r["r2"][w]["mean"], ".2f") for w in ("init", "half", "end")}
    return (f"{_name(r)}: " + ", ".join(f"{SHORT[k]} {_chg(r[k]['half'])} then {_chg(r[k]['end'])}" for k in JUDGED)
            + f"; $R^2$ {r2['init']} at the start, {r2['half']} at step {r['half']}, {r2['end']} at step {r['steps']} "
            f"against {num(ref['low']['mean'], '.2f')}" + (f" and {num(ref['high']['mean'], '.2f')}" if ref["high"] else ""))


def _training_part(pid: str) -> None:
    role, reading, label, statement, _, _, instead = TRAINING_PARTS[pid]

    @CLAIM.part(pid, role, reading=reading, label=label, statement=statement, experiment=True,
                controls=role is Role.CORE, instead=instead)
    def check(ctx: Context) -> Evidence:
        exp = (layer_run if pid == "attention-layer" else nw_run)(ctx)
        out = _replay_outcome(pid, exp)
        j, rows, refs = (out.figures[k] for k in ("judged", "settings", "references"))
        cx = ctx.counterexample(params={"size": exp["size"], "seed": exp["seed"]}, outcome=out,
                                description=f"{label}: {_effects(j)}, {WORDS[j['outcome']]}")
        who = {"nw-heads": "NW heads", "attention-layer": "attention layer"}.get(pid, label.split(") ")[-1])
        forms = "" if j["diagnostics"]["form_diversity"]["can_rise"] else " (score forms can show a fall only)"
        r2 = {f"{_name(r)}, {w}": r["r2"][k]["mean"] for r in rows for k, w in (("end", "trained"),
                                                                                ("half", "at half the steps"))}
        r2 |= {f"{_name(r)}, reference": f["low"]["mean"] for r, f in zip(rows, refs)}
        return Evidence(
            numeric=Numeric("measured", "; ".join(map(setting_line, rows, refs)) + ". Pooled, change over training "
                            f"$\\pm$ 1 SE: {_effects(j)}{forms}: {_verdict_word(j)}", out.figures),
            counterexample=cx, undecided=j["undecided"], r2=r2, design=exp["design"],
            controls=_controls(exp, pid, j),
            regime="" if role is Role.CORE else (f"$n = {rows[0]['n']}$, {rows[0]['steps']} Adam steps, "
                                                 f"{rows[0]['seeds']} seeds, the learning rate held"),
            restored_by=(("the C5 covariance model, whose MSE falls with the overlap alone" if role is Role.CORE else
                          "a target whose optimum needs diverse heads, with free head weights") if cx else ""),
            finding=(f"{who}, change over training $\\pm$ 1 SE: " if role is Role.CORE else f"{who}: ")
            + f"{_effects(j)}: {_verdict_word(j)}",
            plots=_plot_effects(ctx) if pid == "attention-layer" else {})

    check.__name__ = check.__qualname__ = f"check_{pid.replace('-', '_')}"


for _pid in TRAINING_PARTS:
    _training_part(_pid)


def _plot_effects(ctx: Context) -> dict[str, str]:
    path = ctx.plot_path("training_effects")
    return {} if path is None else {"training_effects": plots.training_effects(path, nw_run(ctx), layer_run(ctx))}


# --------------------------------------------------------------------------- reading ii
@CLAIM.replay(*(f"{m.short.lower()}-{t}" for m in P.MODELS for t in TENSORS),
              schema=Schema(source=SOURCE, tensor=Choice(TENSORS), seed=Seed(), band_draws=Int(2, 256)),
              example={"source": MINILM, "tensor": "keys", "seed": 0, "band_draws": 2})
def replay_checkpoint(params: dict) -> ReplayOutcome:
    """The per-layer HDI of the saved model's tensor against chance, recomputed from its file (the
    analysis cached per machine) and judged (:func:`layers_outcome`)."""
    src, t = params["source"], params["tensor"]
    doc = P.analyze_checkpoint(P.locate(src["distribution"], src["path"]), seed=params["seed"],
                               band_draws=params["band_draws"], cache=True)
    return layers_outcome(t, [{"layer": r["layer"], **r[t]} for r in P.reading_ii_rows(doc)])


def layers_outcome(tensor: str, rows: list[dict[str, Any]]) -> ReplayOutcome:
    """A tensor's layers against chance: violated when every layer lies below (:func:`every_layer_below`)."""
    band, hdi = max((r["band"] or 0.0) for r in rows), [r["hdi"] for r in rows]
    summary = (f"{tensor}: HDI {num(min(hdi), '.4f')} to {num(max(hdi), '.4f')} over {len(rows)} layers against Haar "
               f"{pm(rows[0]['haar_mean'], rows[0]['haar_sd'], '.4f')}; below in {sum(map(below_chance, rows))} of "
               f"{len(rows)} layers" + (f"; the quantisation band at most {num(band, '.2g')}" if band else ""))
    return ReplayOutcome(violates=every_layer_below(rows), summary=summary, figures={"layers": rows})


@CLAIM.replay("inner-product", schema=Schema(source=SOURCE, samples=Int(16, MAX_SAMPLES), draws=Int(2, MAX_DRAWS),
                                             seed=Seed()),
              example={"source": MINILM, "samples": 64, "draws": 2, "seed": 0})
def replay_weighted(params: dict) -> ReplayOutcome:
    """Layer 0's plain and Σ-weighted comparisons with chance, recomputed: violated when the two
    inner products disagree (for keys or queries) on whether the heads are below chance."""
    src = params["source"]
    w = weighted_layer0(open_model(P.locate(src["distribution"], src["path"])), samples=params["samples"],
                        draws=params["draws"], seed=params["seed"])
    flips = weighted_flips(w)
    k, q = w["keys"], w["queries"]
    summary = (f"layer 0, $\\Sigma$ from {w['samples']} embedding samples (effective rank {w['effective_rank']:.0f} "
               f"of {w['d']}): keys {num(k['plain_hdi'], '.3f')} plain and {num(k['weighted_hdi'], '.3f')} weighted, "
               f"queries {num(q['plain_hdi'], '.3f')} and {num(q['weighted_hdi'], '.3f')}; weighted Haar "
               f"{pm(w['weighted_haar_mean'], w['weighted_haar_sd'], '.4f')} over {w['draws']} draws; the inner "
               "products " + (f"disagree for {', '.join(flips)}" if flips else "agree"))
    return ReplayOutcome(violates=bool(flips), summary=summary, figures=w)


@shared
def checkpoint(ctx: Context) -> dict[str, Any]:
    """Each model's per-layer comparisons (or why it is unavailable) and MiniLM's layer 0 in its
    input geometry."""
    out: dict[str, Any] = {}
    for m in P.MODELS:
        try:
            P.installed_path(m)
        except VerifyError:
            out[m.short] = {"reason": f"{m.name} is not installed; `{m.install}` installs it"}
            continue
        ctx.progress(f"{m.short} against Haar baselines")
        for t in TENSORS:
            params = {"source": {"distribution": m.distribution, "path": m.path}, "tensor": t, "seed": ctx.seed,
                      "band_draws": ctx.size(*BAND_DRAWS)}
            out.setdefault(m.short, {})[t] = (params, replay_checkpoint(params))
    if "reason" not in out[P.MODELS[0].short]:
        wp = {"source": MINILM, "samples": ctx.size(2048, 4096, 32768), "draws": ctx.size(4, 4, 64),
              "seed": ctx.seed_for("c9/weighted")}
        out["weighted"] = (wp, replay_weighted(wp))
    return out


def weaker_statement(ck: dict[str, Any]) -> str:
    """What every refuted model part supports, said once: the HDI range over all of them."""
    hit = {f"{m} {t}": out.figures["layers"] for m, c in ck.items() if m != "weighted" and "reason" not in c
           for t, (_, out) in c.items() if out.violates}
    hdi = [r["hdi"] for rs in hit.values() for r in rs]
    return (f"it is weakened to \"trained heads stay far from identical\" (HDI {num(min(hdi), '.2f')} to "
            f"{num(max(hdi), '.2f')} over {', '.join(hit)}, where identical heads have 0), though every layer is "
            "less diverse than at initialisation")


def _checkpoint_part(model: Any, tensor: str) -> None:
    @CLAIM.part(f"{model.short.lower()}-{tensor}", Role.CORE, reading="ii", label=f"(ii) {model.short} {tensor}",
                statement=f"training leaves the pretrained {model.name} {HEADS[tensor]} "
                          "heads more diverse than Haar-random subspaces of the same sizes (their HDI at a Gaussian "
                          "initialisation): refuted when every layer is below chance, supported when every layer is "
                          "above, undecided in between")
    def check(ctx: Context) -> Evidence:
        ck = checkpoint(ctx)[model.short]
        if "reason" in ck:
            return Evidence(reason=ck["reason"], finding=f"{model.short} not installed")
        params, out = ck[tensor]
        rs = out.figures["layers"]
        sides = [chance_side(r) for r in rs]
        split = f"below chance in {sides.count('below')}, above in {sides.count('above')} of {len(rs)} layers"
        cx = ctx.counterexample(params=params, outcome=out,
                                description=f"{model.name} {tensor}: every layer less diverse than chance")
        return Evidence(
            numeric=Numeric("measured", "per-layer HDI " + ", ".join(num(r["hdi"], ".3f") for r in rs)
                            + f"; {out.summary}", {"layers": rs}),
            counterexample=cx, restored_by=weaker_statement(checkpoint(ctx)) if cx else "",
            undecided="" if cx or sides.count("above") == len(rs) else f"{model.short} {tensor}: {split}",
            finding=(f"{model.short} {tensor}: HDI {num(min(r['hdi'] for r in rs), '.2f')} to "
                     f"{num(max(r['hdi'] for r in rs), '.2f')} against chance "
                     f"{pm(rs[0]['haar_mean'], rs[0]['haar_sd'], '.4f')}, " + ("below in every layer" if cx else split)))

    check.__name__ = check.__qualname__ = f"check_{model.short.lower()}_{tensor}"


for _model in P.MODELS:
    for _tensor in TENSORS:
        _checkpoint_part(_model, _tensor)


@CLAIM.part("inner-product", Role.DETAIL, label="inner product of layer 0",
            statement="the comparison of the layer-0 heads with chance does not depend on the inner product",
            stated=r"orthogonality in the Euclidean inner product of $\mathbb{R}^d$ (HDI on the raw weights, C4)")
def inner_product(ctx: Context) -> Evidence:
    """Layer 0 compared with chance in the inner product of its input covariance."""
    derived = (r"orthogonality in the inner product of the layer-0 input covariance $\Sigma$ (principal angles between "
               r"$\Sigma^{1/2} W_h$, the squared canonical correlations of the heads' features)")
    ck = checkpoint(ctx)
    if "weighted" not in ck:
        return Evidence(reason=ck["MiniLM"]["reason"], derived=derived, finding="MiniLM checkpoint not installed")
    params, out = ck["weighted"]
    w = out.figures
    cx = ctx.counterexample(params=params, outcome=out, description="layer 0: the Euclidean and the input-weighted "
                                                                    "comparisons with chance disagree")
    path = ctx.plot_path("checkpoint_layers")
    return Evidence(
        numeric=Numeric("measured", out.summary + f"; $\\Sigma$: tokens uniform over the vocabulary, positions uniform "
                        f"over 0 to {POSITIONS - 1}, segment 0, through the embedding LayerNorm", w),
        counterexample=cx, derived=derived,
        finding=(f"layer 0 in its input geometry: keys {num(w['keys']['weighted_hdi'], '.3f')}, queries "
                 f"{num(w['queries']['weighted_hdi'], '.3f')} against "
                 f"{pm(w['weighted_haar_mean'], w['weighted_haar_sd'])}"
                 + (", the inner products disagree" if cx else ", the same conclusion as Euclidean")),
        plots={} if path is None else {"checkpoint_layers": plots.checkpoint_layers(
            path, {t: ck["MiniLM"][t][1].figures["layers"] for t in TENSORS}, w)})


@CLAIM.summary
def summary(ctx: Context, parts: tuple) -> str:
    """What training does to keys, queries and score forms, per reading and target kind."""
    bits = []
    for pid, spec in TRAINING_PARTS.items():
        j = judge(*part_rows((layer_run if pid == "attention-layer" else nw_run)(ctx), pid))
        bits.append(f"{spec[2]}: {_effects(j)}, {_verdict_word(j)}")
    for name, ck in checkpoint(ctx).items():
        if name != "weighted" and "reason" not in ck:
            hdi = [r["hdi"] for t in TENSORS for r in ck[t][1].figures["layers"]]
            bits.append(f"{name} HDI {num(min(hdi), '.2f')} to {num(max(hdi), '.2f')} against chance "
                        f"{num(ck['keys'][1].figures['layers'][0]['haar_mean'], '.3f')}")
    return "change over training $\\pm$ 1 SE: " + "; ".join(bits)
