"""C4: the Head Diversity Index, the literal formula against the subspace form (SPEC, C4).

The literal formula on raw weights against its stated properties on the smallest identical-head sets, its
closed forms and the restoring scale ``W_hᵀW_h = sqrt(d_k) I``; the subspace form ``1 − mean_{h<h'} ρ_hh'``
against mpmath (:mod:`verify.numeric.subspace_reference`) and the generated forms.
"""

from __future__ import annotations

import math
from typing import Any

import mpmath
import numpy as np

import proofs
from proofs.c4_hdi import RESTORING_GRAM
from proofs.markup import num, sci
from verify._validate import as_array, fail, within
from verify.claims import agreement
from verify.judgment.claim import Cap, Claim, Context, Evidence, Threshold, shared
from verify.judgment.counterexamples import ReplayOutcome
from verify.judgment.verdicts import Numeric, Role
from verify.numeric.dgp import haar_frame, head_projections
from verify.numeric.diversity import hdi, overlap, principal_angles
from verify.numeric.formulas import (
    c4_literal_identical_orthonormal,
    c4_literal_isotropic,
    c4_literal_scaled,
    c4_matching_scale,
    c4_rho_dk2,
    c4_subspace_hdi_h2_d3dk2_mp,
)
from verify.numeric.subspace_reference import MP_DPS, mp_hdi, mp_principal_angles, well_conditioned
from verify.outputs import plots
from verify.schema import Float, List, Obj, Schema, Text

__all__ = ["CLAIM", "HDI_TOL", "ANGLE_TOL", "SCALES", "IDENTICAL_NONZERO", "OUTSIDE_RANGE", "literal_violations",
           "literal_forms_agree", "subspace_agrees", "replay_literal", "literal_search", "literal_figures", "subspace"]

CLAIM = Claim(proofs.c4_hdi, figure="c4_literal_vs_subspace")

HDI_TOL = Threshold(1e-12, r"HDI from Householder QR and Frobenius sums of matrices with $d \le 8$ (heads times "
                           r"matrices of condition at most $e^2$): about $10^{-15}$ measured, far below every "
                           "violation the search calls (at least 0.5)")
ANGLE_TOL = Threshold(1e-12, r"principal angles (radians) of well-conditioned matrices with $d \le 6$, sine and "
                             r"cosine branches: about $10^{-15}$ measured")
MAX_REPLAY_WORK = Cap(10**8, r"flops $\sum H^2 (d d_k^2 + 10)$ of both HDI forms over a replay's cases: at most 1 s "
                             r"at the cap (the check's own cases have $H \le 3$, $d \le 8$)")
MAX_REPLAY_HEADS = Cap(1024, r"heads $H$ of a replayed case (the $H \times H$ overlap matrix)")
MAX_REPLAY_CASES = Cap(256, "cases of a replay: its summary names each violating case; the check saves 4")
MAX_REPLAY_DIM = Cap(4096, r"rows $d$ and columns $d_k$ of a replayed head: a longer list is refused before its "
                           r"entries are read (the check's own heads have $d \le 3$)")
#: Scales of the identical heads the literal search tries, nearest to the orthonormal scale first.
SCALES = (1.0, 2.0, 0.5)

#: the criteria, in words (markup)
_TOL = sci(HDI_TOL, 0)
_LITERAL_CRITERION = (r"a head set violates the stated properties where its heads are identical and its literal HDI "
                      r"is not $0$, or where the HDI lies outside $[0, 1]$, each by more than " + _TOL
                      + " (`HDI_TOL`); a closed form holds where it agrees to " + _TOL)
_SUBSPACE_CRITERION = (r"every HDI in $[0, 1]$, and every extreme, invariance and mpmath or generated value within "
                       + _TOL + " (`HDI_TOL`), the principal angles within " + sci(ANGLE_TOL, 0) + " rad")


# --------------------------------------------------------------------------- the judges
#: The stated properties a literal HDI breaks, as :func:`literal_violations` names them (markup).
IDENTICAL_NONZERO, OUTSIDE_RANGE = r"identical heads, $\mathrm{HDI} \ne 0$", r"outside $0 \le \mathrm{HDI} \le 1$"


def literal_violations(lit: float, identical: bool) -> list[str]:
    """The stated properties a literal HDI value breaks: identical heads whose HDI is not 0, and a
    value outside [0, 1], each beyond HDI_TOL (markup)."""
    bad = []
    if identical and abs(lit) > HDI_TOL:
        bad.append(IDENTICAL_NONZERO)
    if lit < -HDI_TOL or lit > 1 + HDI_TOL:
        bad.append(OUTSIDE_RANGE)
    return bad


def literal_forms_agree(fig: dict[str, Any]) -> bool:
    """The literal formula's generated closed forms and the restoring scale hold to HDI_TOL."""
    return bool(max(fig["identical_orthonormal_vs_c4_literal_identical_orthonormal"],
                    fig["scaled_vs_c4_literal_scaled"], fig["matched_scale_literal_minus_subspace"],
                    fig["dk_identity_gram_vs_c4_literal_isotropic"]) <= HDI_TOL)


def subspace_agrees(fig: dict[str, Any]) -> bool:
    """The subspace form's properties hold to rounding: every HDI in [0, 1] (to HDI_TOL), every
    extreme, invariance and reference value within HDI_TOL, the angles within ANGLE_TOL."""
    return bool(fig["hdi_min"] >= -HDI_TOL and fig["hdi_max"] <= 1 + HDI_TOL
                and max(fig["identical_max_abs_hdi"], fig["orthogonal_max_abs_1_minus_hdi"],
                        fig["invariance_WA_max_change"], fig["permutation_max_change"], fig["rho_vs_mpmath_max_abs"],
                        fig["hdi_vs_mpmath_max_abs"], fig["c4_subspace_hdi_h2_d3dk2_mp_vs_hdi"],
                        fig["c4_rho_dk2_vs_overlap"]) <= HDI_TOL
                and fig["principal_angles_vs_mpmath_max_abs"] <= ANGLE_TOL)


# --------------------------------------------------------------------------- the replay
#: a head set W_K: H >= 2 heads of d rows of d_k entries
_HEADS = List(List(List(Float(), max_len=MAX_REPLAY_DIM), max_len=MAX_REPLAY_DIM), min_len=2,
              max_len=MAX_REPLAY_HEADS)
_CASES = Schema(cases=List(Obj({"label": Text(), "W_K": _HEADS}, frozenset({"label"})), max_len=MAX_REPLAY_CASES),
                work=lambda p: sum(len(c["W_K"]) ** 2 * (len(c["W_K"][0]) * len(c["W_K"][0][0]) ** 2 + 10)
                                   for c in p["cases"]),
                cap=MAX_REPLAY_WORK, work_what="flops Σ H²·(d·d_k² + 10): pair products and a per-pair overhead")


@CLAIM.replay("literal-formula", schema=_CASES,
              example={"cases": [{"label": "identical", "W_K": [[[1.0, 0.0], [0.0, 1.0], [0.0, 0.0]]] * 2}]})
def replay_literal(params: dict) -> ReplayOutcome:
    """Recompute the literal HDI of each saved head set (``W_K`` of shape (H, d, d_k)); a case violates the
    stated properties (:func:`literal_violations`) when its heads are identical and the literal HDI is not
    0, or when it lies outside [0, 1] (each beyond HDI_TOL)."""
    figures, violated = {}, []
    for i, case in enumerate(params["cases"]):
        W = as_array(f"params.cases[{i}].W_K", case["W_K"], ndim=3, keep_float32=False)
        if not 1 <= W.shape[2] <= W.shape[1]:
            raise fail(f"params.cases[{i}].W_K", f"shape {W.shape}", "(H, d, d_k) with 1 <= d_k <= d")
        label = case.get("label", f"case {i}")
        identical = all(np.array_equal(W[0], w) for w in W[1:])
        with within(f"params.cases[{i}]"):
            lit, sub = hdi(W, form="literal"), hdi(W)
        bad = literal_violations(lit, identical)
        figures[label] = {"shape": list(W.shape), "identical_heads": identical, "literal_hdi": lit,
                          "subspace_hdi": sub, "violations": bad}
        if bad:
            violated.append(f"{label}: literal $\\mathrm{{HDI}}$ {num(lit, '.6g')} ({'; '.join(bad)}; subspace form "
                            f"{num(sub, '.3g')})")
    summary = ("; ".join(violated) if violated else "every case satisfies the stated properties") + \
              f" (tolerance {num(HDI_TOL, 'g')})"
    return ReplayOutcome(violates=bool(violated), summary=summary, figures=figures)


# --------------------------------------------------------------------------- part 1
@shared
def literal_search(ctx: Context) -> dict[str, Any]:
    """Smallest identical-head cases (by d, d_k, then scale) violating each stated property."""
    rng = ctx.rng("c4/literal/search")
    table: list[dict[str, Any]] = []
    first: dict[str, tuple[dict, str]] = {}        # key -> (the case, the case described in markup)
    for d in (1, 2, 3):
        for d_k in range(1, d + 1):
            U = haar_frame(rng, d, d_k)
            for c in SCALES:
                W = np.stack([c * U, c * U])
                lit = hdi(W, form="literal")
                table.append({"d": d, "d_k": d_k, "scale": c, "literal_hdi": lit})
                kind = ("identical, orthonormal columns" if c == 1.0 else f"identical, scaled by {c:g}")
                bad = literal_violations(lit, identical=True)
                key = "orthonormal" if c == 1.0 and bad else "outside" if OUTSIDE_RANGE in bad else None
                if key is not None and key not in first:
                    scaled = "" if c == 1.0 else f" scaled by ${c:g}$"
                    first[key] = ({"label": f"{kind}, $d = {d}$, $d_k = {d_k}$", "W_K": W.tolist()},
                                  f"identical heads with orthonormal columns{scaled}, $d = {d}$, $d_k = {d_k}$ "
                                  f"(literal HDI {num(lit, '.3g')})")
    keys = [k for k in ("orthonormal", "outside") if k in first]
    return {"table": table, "params": {"cases": [first[k][0] for k in keys]} if keys else None,
            "found": [first[k][1] for k in keys]}


@shared
def literal_figures(ctx: Context) -> dict[str, Any]:
    """The generated closed forms and the restoring scale, on seeded sets."""
    rng = ctx.rng("c4/literal/forms")
    dks = ctx.size((1, 2, 3, 4), tuple(range(1, 9)))
    ident = max(abs(hdi(np.stack([haar_frame(rng, dk + 1, dk)] * 2), form="literal")
                    - float(c4_literal_identical_orthonormal(dk))) for dk in dks)
    K = ctx.size(6, 24)
    scaled, restored, dk_norm, raw_gap, raw_min, points = 0.0, 0.0, 0.0, 0.0, math.inf, []
    for i in range(K):
        H, d_k = int(rng.integers(2, 5)), int(rng.integers(1, 4))
        d = int(rng.integers(d_k + 1, 9))
        raw = rng.standard_normal((H, d, d_k))
        lit, sub = hdi(raw, form="literal"), hdi(raw)
        points.append((sub, lit, "raw"))
        raw_gap, raw_min = max(raw_gap, abs(lit - sub)), min(raw_min, lit)
        c = float(rng.uniform(0.3, 3.0))
        pred = float(c4_literal_scaled(lit, c))
        scaled = max(scaled, abs(hdi(c * raw, form="literal") - pred) / max(1.0, abs(pred)))
        U = head_projections("random", H, d, d_k, rng=rng)
        Q = [haar_frame(rng, d_k, d_k) for _ in range(H)]
        mean_rho = 1.0 - hdi(U)
        iso = np.stack([float(c4_matching_scale(d_k)) * U[h] @ Q[h] for h in range(H)])
        restored = max(restored, abs(hdi(iso, form="literal") - hdi(iso)))
        points.append((hdi(iso), hdi(iso, form="literal"), "matched"))
        big = np.stack([math.sqrt(d_k) * U[h] @ Q[h] for h in range(H)])
        pred_dk = float(c4_literal_isotropic(mean_rho, math.sqrt(d_k), d_k))
        dk_norm = max(dk_norm, abs(hdi(big, form="literal") - pred_dk) / max(1.0, abs(pred_dk)))
    out = {"identical_orthonormal_vs_c4_literal_identical_orthonormal": ident, "d_k_values": list(dks),
           "scaled_vs_c4_literal_scaled": scaled, "sets": K,
           "matched_scale_literal_minus_subspace": restored,
           "dk_identity_gram_vs_c4_literal_isotropic": dk_norm,
           "raw_gaussian_max_literal_minus_subspace": raw_gap, "raw_gaussian_min_literal": raw_min,
           "points": points}
    return {**out, "ok": literal_forms_agree(out)}


# --------------------------------------------------------------------------- part 2
@shared
def subspace(ctx: Context) -> dict[str, Any]:
    """The subspace form on seeded head sets: range, extremes, invariances, mpmath and generated forms."""
    rng = ctx.rng("c4/subspace")
    K = ctx.size(8, 40)
    lo, hi, ident, orth, inv, perm = math.inf, -math.inf, 0.0, 0.0, 0.0, 0.0
    for _ in range(K):
        H, d_k = int(rng.integers(2, 6)), int(rng.integers(1, 4))
        d = int(rng.integers(d_k + 1, 9))
        W = rng.standard_normal((H, d, d_k))
        v = hdi(W)
        lo, hi = min(lo, v), max(hi, v)
        A = [well_conditioned(rng, d_k) for _ in range(H)]
        inv = max(inv, abs(hdi(np.stack([W[h] @ A[h] for h in range(H)])) - v))
        perm = max(perm, abs(hdi(W[rng.permutation(H)]) - v))
        same = np.stack([W[0] @ A[h] for h in range(H)])                  # one subspace, different bases
        ident = max(ident, abs(hdi(same)))
        if H * d_k <= d:
            frame = head_projections("orthogonal", H, d, d_k, rng=rng)
            orth = max(orth, abs(1.0 - hdi(np.stack([frame[h] @ A[h] for h in range(H)]))))
    ctx.progress("principal angles in mpmath")
    P = ctx.size(4, 12)
    ang, rho_err, hdi_mp = 0.0, 0.0, 0.0
    for i in range(P):
        d, k1, k2 = int(rng.integers(2, 7)), int(rng.integers(1, 4)), int(rng.integers(1, 4))
        k1, k2 = min(k1, d), min(k2, d)
        A, B = rng.standard_normal((d, k1)), rng.standard_normal((d, k2))
        if i == 0:                                                        # tiny angles: arccos would lose them
            B = A[:, :k2] + 1e-9 * rng.standard_normal((d, k2)) if k2 <= k1 else B
        ang = max(ang, float(np.max(np.abs(principal_angles(A, B) - mp_principal_angles(A, B)))))
        if k1 == k2:
            theta = mp_principal_angles(A, B)
            rho_err = max(rho_err, abs(float(overlap(np.stack([A, B]))[0, 1]) - float(np.mean(np.cos(theta) ** 2))))
    for _ in range(ctx.size(2, 6)):
        H, d_k = int(rng.integers(2, 5)), int(rng.integers(1, 3))
        W = rng.standard_normal((H, int(rng.integers(d_k + 1, 7)), d_k))
        hdi_mp = max(hdi_mp, abs(hdi(W) - mp_hdi(W)))
    gen, gen_rho = 0.0, 0.0
    for _ in range(ctx.size(3, 10)):
        W = rng.standard_normal((2, 3, 2))
        with mpmath.workdps(MP_DPS):
            ref = c4_subspace_hdi_h2_d3dk2_mp(*W[0].ravel(), *W[1].ravel())
        gen = max(gen, abs(hdi(W) - float(ref)))
        cos = np.cos(mp_principal_angles(W[0], W[1]))
        gen_rho = max(gen_rho, abs(float(c4_rho_dk2(*cos)) - float(overlap(W)[0, 1])))
    figs = {"random_sets": K, "hdi_min": lo, "hdi_max": hi, "identical_max_abs_hdi": ident,
            "orthogonal_max_abs_1_minus_hdi": orth, "invariance_WA_max_change": inv, "permutation_max_change": perm,
            "angle_pairs": P, "principal_angles_vs_mpmath_max_abs": ang, "rho_vs_mpmath_max_abs": rho_err,
            "hdi_vs_mpmath_max_abs": hdi_mp, "c4_subspace_hdi_h2_d3dk2_mp_vs_hdi": gen,
            "c4_rho_dk2_vs_overlap": gen_rho, "dps": MP_DPS}
    figs["ok"] = subspace_agrees(figs)
    return figs


def _plot(ctx: Context, lit: dict[str, Any]) -> dict[str, Any]:
    path = ctx.plot_path("c4_literal_vs_subspace")
    if path is None:
        return {}
    fig, ax = plots.new_figure("C4: the literal HDI against the subspace HDI on seeded head sets",
                               r"subspace HDI, $1 - \bar{\rho}$", "literal HDI (raw weights)")
    for kind, color, label in (("raw", "C3", plots.label("raw Gaussian $W_K$")),
                               ("matched", "C0", plots.label(r"$W_h^\top W_h = \sqrt{d_k} I$ (the restoring scale)"))):
        pts = [(s, lv) for s, lv, k in lit["points"] if k == kind]
        ax.plot([p[0] for p in pts], [p[1] for p in pts], "o", color=color, ms=4, label=label)
    ax.plot([0, 1], [0, 1], "--", color="gray", lw=0.8, label="equal")
    ax.axhspan(0, 1, color="gray", alpha=0.08)
    ax.legend(fontsize=7)
    return {"c4_literal_vs_subspace": plots.save(fig, path, caption=(
        r"The literal HDI on raw weights strays from the subspace HDI and leaves $[0, 1]$ (shaded); with each head "
        r"scaled to $W_h^\top W_h = \sqrt{d_k} I$ the two agree"))}


def _min_literal(ctx: Context) -> float:
    """The smallest literal HDI of the search and the raw sets (the summary quotes it)."""
    return min(literal_figures(ctx)["raw_gaussian_min_literal"],
               *(r["literal_hdi"] for r in literal_search(ctx)["table"]))


# --------------------------------------------------------------------------- the parts
@CLAIM.part("literal-formula", Role.DETAIL, groups=("literal",), label="literal formula as stated",
            statement=r"$\mathrm{HDI} = 1 - \frac{2}{H (H - 1)} \sum_{h < h'} \lVert G_{hh'} \rVert_F^2$, "
                      r"$G_{hh'} = (W_K^h)^\top W_K^{h'}/d_k$ on the raw weights, is $0$ for identical heads, $1$ for "
                      r"orthogonal ones and lies between $0$ and $1$",
            stated=(r"$\mathrm{HDI} = 1 - \frac{2}{H (H - 1)} \sum_{h < h'} "
                    r"\lVert (W_K^h)^\top W_K^{h'}/d_k \rVert_F^2$ on the raw weights, in $[0, 1]$"),
            instead=(r"Define $\mathrm{HDI} = 1 - \mathrm{mean}_{h < h'} \rho_{hh'}$, with $\rho_{hh'}$ the mean "
                     r"$\cos^2$ of the principal angles between the key subspaces: it lies in $[0, 1]$, and the "
                     "literal formula on raw weights equals it for heads with " + RESTORING_GRAM + ", not in general."))
def literal_formula(ctx: Context) -> Evidence:
    """The literal formula: the smallest identical-head violations, the closed forms, the restoring scale."""
    search, lit = literal_search(ctx), literal_figures(ctx)
    cx = None
    if search["params"] is not None:
        cx = ctx.counterexample(
            statement=r"$\mathrm{HDI} = 1 - \frac{2}{H (H - 1)} \sum_{h < h'} \lVert W_h^\top W_{h'}/d_k \rVert_F^2$ "
                      r"is $0$ for identical heads and lies in $[0, 1]$",
            params=search["params"],
            description="; ".join(search["found"]) + r": the literal formula on raw weights is not $0$ for identical "
                        r"heads and leaves $[0, 1]$")
    figs = {k: v for k, v in lit.items() if k != "points"}
    figs["search"] = search["table"]
    return Evidence(
        numeric=Numeric("measured" if lit["ok"] else "disagree",
                        r"against the derivation's closed forms: identical orthonormal heads give $1 - 1/d_k$ "
                        f"($d_k$ in {lit['d_k_values']}) "
                        f"{agreement(lit['identical_orthonormal_vs_c4_literal_identical_orthonormal'])}, $W \\to c W$ "
                        f"moves $1 - \\mathrm{{HDI}}$ by $c^4$ {agreement(lit['scaled_vs_c4_literal_scaled'])}; "
                        f"{lit['sets']} raw Gaussian sets: literal down to "
                        f"{num(lit['raw_gaussian_min_literal'], '.2f')}, up to "
                        f"{num(lit['raw_gaussian_max_literal_minus_subspace'], '.2f')} from the subspace form; with "
                        f"{RESTORING_GRAM} the forms agree {agreement(lit['matched_scale_literal_minus_subspace'])}; "
                        r"$W_h^\top W_h = d_k I$ gives $1 - d_k \bar{\rho}$ "
                        f"{agreement(lit['dk_identity_gram_vs_c4_literal_isotropic'])} "
                        f"(criterion: {_LITERAL_CRITERION})",
                        figs),
        counterexample=cx,
        derived=r"scale-dependent (identical orthonormal heads give $1 - 1/d_k$, $W \to c W$ moves "
                r"$1 - \mathrm{HDI}$ by the factor $c^4$); equal to the subspace form $1 - \bar{\rho}$ exactly when "
                + RESTORING_GRAM,
        restored_by=(RESTORING_GRAM + r" for every head (columns orthogonal, each of norm $d_k^{1/4}$): then the "
                     r"literal formula equals the subspace form $1 - \bar{\rho}$ exactly; otherwise use the subspace "
                     "form")
        if cx else "",
        finding=r"the literal normalisation is scale-dependent, it equals $1 - \bar{\rho}$ only when " + RESTORING_GRAM,
        plots=_plot(ctx, lit))


@CLAIM.part("subspace-form", Role.CORE, groups=("subspace",), label="subspace form",
            statement=r"$\mathrm{HDI} = 1 - \mathrm{mean}_{h < h'} \rho_{hh'}$ ($\rho$ the mean $\cos^2$ of the "
                      r"principal angles) lies in $[0, 1]$, is $0$ for identical and $1$ for orthogonal heads, and is "
                      r"invariant under $W_K^h \to W_K^h A_h$ and head permutations")
def subspace_form(ctx: Context) -> Evidence:
    """The subspace form's range, extremes and invariances, against mpmath and the generated forms."""
    sub = subspace(ctx)
    return Evidence(
        numeric=Numeric("rounding" if sub["ok"] else "disagree",
                        f"{sub['random_sets']} seeded raw head sets: HDI in [{num(sub['hdi_min'], '.3f')}, "
                        f"{num(sub['hdi_max'], '.3f')}]; identical subspaces (different bases) give $0$ "
                        f"{agreement(sub['identical_max_abs_hdi'])}, orthogonal ones $1$ "
                        f"{agreement(sub['orthogonal_max_abs_1_minus_hdi'])}; invariant under $W_h \\to W_h A_h$ "
                        f"{agreement(sub['invariance_WA_max_change'])} and under permutations "
                        f"{agreement(sub['permutation_max_change'])}; principal angles (radians, tiny angles included) "
                        f"equal mpmath's at {MP_DPS} digits {agreement(sub['principal_angles_vs_mpmath_max_abs'])}, "
                        f"HDI mpmath's {agreement(sub['hdi_vs_mpmath_max_abs'])}, the derivation's closed form "
                        f"($H = 2$, $d = 3$, $d_k = 2$) {agreement(sub['c4_subspace_hdi_h2_d3dk2_mp_vs_hdi'])} "
                        f"(criterion: {_SUBSPACE_CRITERION})", sub),
        finding=r"$\mathrm{HDI} = 1 - \bar{\rho}$ lies in $[0, 1]$, $0$ for identical and $1$ for orthogonal heads, "
                "basis-invariant")


@CLAIM.summary
def summary(ctx: Context, parts: tuple) -> str:
    sub = subspace(ctx)
    worst = max(sub["invariance_WA_max_change"], sub["principal_angles_vs_mpmath_max_abs"])
    return (r"literal formula: identical orthonormal heads $1 - 1/d_k$, values down to "
            f"{num(_min_literal(ctx), '.3g')}, equal to the subspace form only for {RESTORING_GRAM}; subspace form in "
            f"$[0, 1]$, invariances and mpmath angles {agreement(worst)}")

