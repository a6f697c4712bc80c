"""C4: the Head Diversity Index - the literal formula against the subspace form.

Parts (SPEC, C4):

1. ``literal formula as stated``: ``HDI_lit = 1 − 2/(H(H−1)) Σ_{h<h'} ||W_hᵀW_h'/d_k||_F²`` on raw
   weights, judged against its own stated properties (0 for identical heads, values in [0, 1]).
   A search over small seeded cases (identical heads with orthonormal columns, scaled by c)
   finds the smallest violations; the replayer recomputes :func:`verify.numeric.diversity.hdi` with
   ``form="literal"`` from the saved matrices. Measured besides: the generated closed forms
   (``c4_literal_identical_orthonormal``, ``c4_literal_scaled``, ``c4_literal_isotropic``) and the
   restoring condition ``W_hᵀW_h = sqrt(d_k) I`` (``c4_matching_scale``), under which the two forms agree.
2. ``subspace form``: ``HDI = 1 − mean_{h<h'} ρ_hh'``: range, the two extremes, invariance under
   ``W_h → W_h A_h`` and head permutation on seeded random sets, principal angles and ρ against an
   mpmath computation at 50 digits, and the generated ``c4_subspace_hdi_h2_d3dk2`` / ``c4_rho_dk2``.
"""

from __future__ import annotations

import itertools
import math
from typing import Any

import mpmath
import numpy as np

import proofs
from verify._validate import as_array, at_most, fail, fields, within
from verify.judgment.claim import Context
from verify.judgment.counterexamples import ReplayOutcome, replayer
from verify.judgment.verdicts import ClaimResult, Numeric, Part, Role, Symbolic
from verify.numeric import formulas
from verify.numeric.dgp import haar_frame, head_projections
from verify.numeric.diversity import hdi, overlap, principal_angles
from verify.outputs import plots

__all__ = ["TITLE", "HDI_TOL", "ANGLE_TOL", "MP_DPS", "judge_literal", "mp_principal_angles", "mp_hdi",
           "well_conditioned", "check"]

TITLE = "Head Diversity Index: literal formula vs subspace form"

#: HDI from Householder QR and Frobenius sums of d <= 8 matrices, heads multiplied by matrices of
#: condition <= e² ≈ 7.4: ~1e-15 measured; 1e-12 is float64 rounding with a wide margin, and far
#: below every violation the search calls (>= 0.5).
HDI_TOL = 1e-12
#: Principal angles (radians) of well-conditioned d <= 6 matrices, sine/cosine branches:
#: absolute error ~1e-15; 1e-12 is rounding with a margin.
ANGLE_TOL = 1e-12
MP_DPS = 50
#: Scales of the identical heads the literal search tries, nearest to the orthonormal scale first.
SCALES = (1.0, 2.0, 0.5)


# --------------------------------------------------------------------------- references
def well_conditioned(rng: np.random.Generator, k: int) -> np.ndarray:
    """A random invertible k x k matrix ``Q_1 diag(e^u) Q_2``, u ~ U[-1, 1]: condition <= e²."""
    return haar_frame(rng, k, k) @ np.diag(np.exp(rng.uniform(-1, 1, k))) @ haar_frame(rng, k, k)


def _mp_basis(W: np.ndarray) -> Any:
    """Orthonormal basis of Range(W) in mpmath (the first k columns of a full QR)."""
    Q, _ = mpmath.qr(mpmath.matrix(W.tolist()))
    return Q[:, : W.shape[1]]


def mp_principal_angles(A: Any, B: Any, dps: int = MP_DPS) -> np.ndarray:
    """Principal angles between Range(A) and Range(B) at ``dps`` digits: ``acos`` of the singular
    values of ``Q_Aᵀ Q_B`` (exact enough at 50 digits even for tiny angles); ascending, float64."""
    A = as_array("A", A, ndim=2, keep_float32=False)
    B = as_array("B", B, ndim=2, keep_float32=False)
    if A.shape[0] != B.shape[0]:
        raise fail("B", f"shape {B.shape}", f"{A.shape[0]} rows (the ambient dimension of A)")
    with mpmath.workdps(dps):
        M = _mp_basis(A).T * _mp_basis(B)
        sv = mpmath.svd_r(M, compute_uv=False)
        return np.sort([float(mpmath.acos(min(s, mpmath.mpf(1)))) for s in sv])


def mp_hdi(W_K: Any, dps: int = MP_DPS) -> float:
    """Subspace HDI ``1 − mean_{h<h'} ||U_hᵀU_h'||_F² / d_k`` with U_h from an mpmath QR."""
    W = as_array("W_K", W_K, ndim=3, keep_float32=False)
    H, _, d_k = W.shape
    with mpmath.workdps(dps):
        U = [_mp_basis(w) for w in W]
        rho = [mpmath.fsum(x ** 2 for x in (U[a].T * U[b])) / d_k for a, b in itertools.combinations(range(H), 2)]
        return float(1 - mpmath.fsum(rho) / len(rho))


# --------------------------------------------------------------------------- part 1
#: A replay computes both HDI forms of every case: ~H²·(d·d_k² + 10) flops (the pair products
#: and a per-pair overhead), summed over the cases, at most this many: measured <= 1 s at the cap;
#: the check's own cases have H <= 3, d <= 8.
MAX_REPLAY_WORK = 10**8
#: ... at most this many heads per case (the H x H overlap matrix) and cases (the summary names
#: each violating case; the check saves 4).
MAX_REPLAY_HEADS = 1024
MAX_REPLAY_CASES = 256


@replayer("c4.literal-formula")
def judge_literal(params: dict) -> ReplayOutcome:
    """Recompute the literal HDI of each saved head set (``params["cases"]``, each ``W_K`` of shape
    (H, d, d_k)); a case violates the stated properties when its heads are identical and the
    literal HDI is not 0, or when it lies outside [0, 1] (each beyond HDI_TOL)."""
    cases = fields("params", params, ("cases",))["cases"]
    if not isinstance(cases, list) or not cases:
        raise fail("params.cases", repr(cases)[:80], "a non-empty list of {label, W_K}")
    at_most("params.cases", len(cases), MAX_REPLAY_CASES, "cases; MAX_REPLAY_CASES")
    arrays, work = [], 0
    for i, case in enumerate(cases):
        fields(f"params.cases[{i}]", case, ("W_K",))
        W = as_array(f"params.cases[{i}].W_K", case["W_K"], ndim=3, keep_float32=False)
        H, d, d_k = W.shape
        if H < 2 or not 1 <= d_k <= d:
            raise fail(f"params.cases[{i}].W_K", f"shape {W.shape}", "(H, d, d_k) with H >= 2 and 1 <= d_k <= d")
        at_most(f"params.cases[{i}].W_K", H, MAX_REPLAY_HEADS, "heads H; MAX_REPLAY_HEADS")
        label = case.get("label", f"case {i}")
        if not isinstance(label, str):
            raise fail(f"params.cases[{i}].label", repr(label)[:80], "a string")
        arrays.append((label, W))
        work += H * H * (d * d_k * d_k + 10)
    at_most("params.cases", work, MAX_REPLAY_WORK, "flops Σ H²·(d·d_k² + 10) over the cases; MAX_REPLAY_WORK: "
            "a few seconds at the cap")
    figures, violated = {}, []
    for i, (label, W) in enumerate(arrays):
        identical = all(np.array_equal(W[0], w) for w in W[1:])
        with within(f"params.cases[{i}]"):
            lit, sub = hdi(W, form="literal"), hdi(W)
        bad = []
        if identical and abs(lit) > HDI_TOL:
            bad.append("identical heads, HDI != 0")
        if lit < -HDI_TOL or lit > 1 + HDI_TOL:
            bad.append("outside [0, 1]")
        figures[label] = {"shape": list(W.shape), "identical_heads": identical, "literal_hdi": lit,
                          "subspace_hdi": sub, "violations": bad}
        if bad:
            violated.append(f"{label}: literal HDI {lit:.6g} ({'; '.join(bad)}; subspace form {sub:.3g})")
    summary = ("; ".join(violated) if violated else "every case satisfies the stated properties") + \
              f" (tolerance {HDI_TOL:g})"
    return ReplayOutcome(violates=bool(violated), summary=summary, figures=figures)


def _literal_search(ctx: Context) -> dict[str, Any]:
    """Smallest identical-head cases (by d, d_k, then scale) violating each stated property."""
    rng = ctx.rng("c4/literal/search")
    table: list[dict[str, Any]] = []
    first: dict[str, Any] = {}
    for d in (1, 2, 3):
        for d_k in range(1, d + 1):
            U = haar_frame(rng, d, d_k)
            for c in SCALES:
                W = np.stack([c * U, c * U])
                lit = hdi(W, form="literal")
                table.append({"d": d, "d_k": d_k, "scale": c, "literal_hdi": lit})
                kind = ("identical, orthonormal columns" if c == 1.0 else f"identical, scaled by {c:g}")
                if abs(lit) > HDI_TOL and (c == 1.0 or lit < -HDI_TOL or lit > 1 + HDI_TOL):
                    key = "orthonormal" if c == 1.0 else "outside"
                    first.setdefault(key, {"label": f"{kind}, d = {d}, d_k = {d_k}", "W_K": W.tolist()})
    cases = [first[k] for k in ("orthonormal", "outside") if k in first]
    return {"table": table, "params": {"cases": cases} if cases else None}


def _literal_figures(ctx: Context) -> dict[str, Any]:
    """The generated closed forms and the restoring scale, on seeded sets."""
    rng = ctx.rng("c4/literal/forms")
    dks = ctx.size((1, 2, 3, 4), tuple(range(1, 9)))
    ident = max(abs(hdi(np.stack([haar_frame(rng, dk + 1, dk)] * 2), form="literal")
                    - float(formulas.c4_literal_identical_orthonormal(dk))) for dk in dks)
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
        pred = float(formulas.c4_literal_scaled(lit, c))
        scaled = max(scaled, abs(hdi(c * raw, form="literal") - pred) / max(1.0, abs(pred)))
        U = head_projections("random", H, d, d_k, rng=rng)
        Q = [haar_frame(rng, d_k, d_k) for _ in range(H)]
        mean_rho = 1.0 - hdi(U)
        iso = np.stack([float(formulas.c4_matching_scale(d_k)) * U[h] @ Q[h] for h in range(H)])
        restored = max(restored, abs(hdi(iso, form="literal") - hdi(iso)))
        points.append((hdi(iso), hdi(iso, form="literal"), "matched"))
        big = np.stack([math.sqrt(d_k) * U[h] @ Q[h] for h in range(H)])
        pred_dk = float(formulas.c4_literal_isotropic(mean_rho, math.sqrt(d_k), d_k))
        dk_norm = max(dk_norm, abs(hdi(big, form="literal") - pred_dk) / max(1.0, abs(pred_dk)))
    return {"identical_orthonormal_vs_c4_literal_identical_orthonormal": ident, "d_k_values": list(dks),
            "scaled_vs_c4_literal_scaled": scaled, "sets": K,
            "matched_scale_literal_minus_subspace": restored,
            "dk_identity_gram_vs_c4_literal_isotropic": dk_norm,
            "raw_gaussian_max_literal_minus_subspace": raw_gap, "raw_gaussian_min_literal": raw_min,
            "points": points, "ok": max(ident, scaled, restored, dk_norm) <= HDI_TOL}


# --------------------------------------------------------------------------- part 2
def _subspace(ctx: Context) -> dict[str, Any]:
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
            O = head_projections("orthogonal", H, d, d_k, rng=rng)
            orth = max(orth, abs(1.0 - hdi(np.stack([O[h] @ A[h] for h in range(H)]))))
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
            ref = formulas.c4_subspace_hdi_h2_d3dk2_mp(*W[0].ravel(), *W[1].ravel())
        gen = max(gen, abs(hdi(W) - float(ref)))
        cos = np.cos(mp_principal_angles(W[0], W[1]))
        gen_rho = max(gen_rho, abs(float(formulas.c4_rho_dk2(*cos)) - float(overlap(W)[0, 1])))
    figs = {"random_sets": K, "hdi_min": lo, "hdi_max": hi, "identical_max_abs_hdi": ident,
            "orthogonal_max_abs_1_minus_hdi": orth, "invariance_WA_max_change": inv, "permutation_max_change": perm,
            "angle_pairs": P, "principal_angles_vs_mpmath_max_abs": ang, "rho_vs_mpmath_max_abs": rho_err,
            "hdi_vs_mpmath_max_abs": hdi_mp, "c4_subspace_hdi_h2_d3dk2_mp_vs_hdi": gen,
            "c4_rho_dk2_vs_overlap": gen_rho, "dps": MP_DPS}
    figs["ok"] = (lo >= -HDI_TOL and hi <= 1 + HDI_TOL and max(ident, orth, inv, perm, rho_err, hdi_mp, gen, gen_rho)
                  <= HDI_TOL and ang <= ANGLE_TOL)
    return figs


def _plot(ctx: Context, lit: dict[str, Any]) -> dict[str, str]:
    path = ctx.plot_path("c4_literal_vs_subspace")
    if path is None:
        return {}
    fig, ax = plots.new_figure("C4: literal HDI vs subspace HDI on seeded head sets",
                               "subspace HDI = 1 − mean ρ", "literal HDI (raw weights)")
    for kind, color, label in (("raw", "C3", "raw Gaussian W_K"),
                               ("matched", "C0", "W_hᵀW_h = sqrt(d_k) I (restoring scale)")):
        pts = [(s, lv) for s, lv, k in lit["points"] if k == kind]
        ax.plot([p[0] for p in pts], [p[1] for p in pts], "o", color=color, ms=4, label=label)
    ax.plot([0, 1], [0, 1], "--", color="gray", lw=0.8, label="equal")
    ax.axhspan(0, 1, color="gray", alpha=0.08)
    ax.legend(fontsize=7)
    return {"c4_literal_vs_subspace": plots.save(fig, path)}


# --------------------------------------------------------------------------- the check
def check(ctx: Context) -> ClaimResult:
    der = proofs.derivation("C4")
    parts: list[Part] = []

    ctx.progress("the literal formula")
    search = _literal_search(ctx)
    lit = _literal_figures(ctx)
    cx = None
    if search["params"] is not None:
        cx = ctx.counterexample(
            claim="C4", part="literal-formula", kind="c4.literal-formula",
            statement="HDI = 1 − 2/(H(H−1)) Σ_{h<h'} ||W_hᵀW_h'/d_k||_F² is 0 for identical heads and lies in "
                      "[0, 1]",
            params=search["params"],
            description="; ".join(c["label"] for c in search["params"]["cases"])
                        + ": the literal formula on raw weights is not 0 for identical heads and leaves [0, 1]")
    cmp = next(c for c in der.comparisons if c.name == "literal_equals_subspace_when")
    restored = ("(W_K^h)ᵀW_K^h = sqrt(d_k)·I for every head (columns orthogonal, each of norm d_k^{1/4}): then the "
                "literal formula equals the subspace form 1 − mean ρ exactly; otherwise use the subspace form "
                f"(derivation: {cmp.derived})")
    lit_steps = ["literal_invariant_orthogonal", "literal_scales_c4", "literal_at_most_one", "literal_below_zero",
                 "identical_orthonormal_literal", "identical_counterexample", "isotropic_basis",
                 "isotropic_literal_term", "isotropic_literal_vs_subspace", "matching_scale", "literal_equals_subspace",
                 "dk_normalisation_gives_1_minus_dk_rho", "equal_scales_forced", "literal_equals_subspace_explicit"]
    figs1 = {k: v for k, v in lit.items() if k != "points"}
    figs1["search"] = search["table"]
    summary1 = (
        f"identical orthonormal heads: literal = 1 − 1/d_k (c4_literal_identical_orthonormal, d_k in "
        f"{lit['d_k_values']}) to {lit['identical_orthonormal_vs_c4_literal_identical_orthonormal']:.0e}; W → cW "
        f"follows c4_literal_scaled to {lit['scaled_vs_c4_literal_scaled']:.0e}; {lit['sets']} raw Gaussian sets: "
        f"literal down to {lit['raw_gaussian_min_literal']:.2f}, up to "
        f"{lit['raw_gaussian_max_literal_minus_subspace']:.2f} from the subspace form; with W_hᵀW_h = sqrt(d_k) I "
        f"(c4_matching_scale) the forms agree to {lit['matched_scale_literal_minus_subspace']:.0e}; W_hᵀW_h = d_k I "
        f"gives 1 − d_k mean ρ (c4_literal_isotropic) to {lit['dk_identity_gram_vs_c4_literal_isotropic']:.0e}")
    # role: detail - the normalisation of the formula as written (raw weights, 1/d_k)
    parts.append(Part(
        id="literal formula as stated", role=Role.DETAIL,
        stated="HDI = 1 − 2/(H(H−1)) Σ_{h<h'} ||(W_K^h)ᵀW_K^h'/d_k||_F² on the raw weights, in [0, 1]",
        derived="scale-dependent (identical orthonormal heads give 1 − 1/d_k; W → cW moves it by c⁴); equal to the "
                "subspace form 1 − mean ρ exactly when (W_K^h)ᵀW_K^h = sqrt(d_k) I",
        finding="the literal normalisation is scale-dependent, it equals 1 − mean ρ only when W_hᵀW_h = sqrt(d_k) I",
        statement="HDI = 1 − 2/(H(H−1)) Σ_{h<h'} ||G_hh'||_F², G_hh' = (W_K^h)ᵀW_K^h'/d_k on the raw weights, "
                  "is 0 for identical heads, 1 for orthogonal ones and lies in [0, 1]",
        symbolic=Symbolic.from_derivation(der, steps=lit_steps, results=[
            "literal_identical_orthonormal", "literal_scaled", "literal_isotropic", "matching_scale",
            "literal_hdi_h2_d3dk2", "counterexample_below_zero"],
            comparisons=["literal_in_unit_interval", "identical_heads_give_zero", "literal_equals_subspace_when"]),
        numeric=Numeric("measured" if lit["ok"] else "disagree", summary1, figs1),
        counterexample=cx, restored_by=restored if cx else ""))

    ctx.progress("the subspace form")
    sub = _subspace(ctx)
    sub_steps = ["frobenius_orthogonal_invariance", "frobenius_orthogonal_invariance_dk2_rotations",
                 "frobenius_orthogonal_invariance_dk2_reflection", "identical_subspace",
                 "orthogonal_heads_literal_and_subspace", "one_minus_cos2_is_gram", "rho_is_mean_cos2_dk2",
                 "rho_nonnegative", "rho_at_most_one", "rho_is_projector_trace", "inverse_of_product",
                 "projector_invariant", "pair_symmetric"]
    summary2 = (
        f"{sub['random_sets']} seeded raw head sets: HDI in [{sub['hdi_min']:.3f}, {sub['hdi_max']:.3f}]; identical "
        f"subspaces (different bases) |HDI| ≤ {sub['identical_max_abs_hdi']:.0e}; orthogonal |1 − HDI| ≤ "
        f"{sub['orthogonal_max_abs_1_minus_hdi']:.0e}; W_h → W_h A_h changes it by ≤ "
        f"{sub['invariance_WA_max_change']:.0e}, permutations by ≤ {sub['permutation_max_change']:.0e}; principal "
        f"angles vs mpmath at {MP_DPS} digits ≤ {sub['principal_angles_vs_mpmath_max_abs']:.0e} rad (tiny angles "
        f"included), HDI vs mpmath ≤ {sub['hdi_vs_mpmath_max_abs']:.0e}, generated c4_subspace_hdi_h2_d3dk2 ≤ "
        f"{sub['c4_subspace_hdi_h2_d3dk2_mp_vs_hdi']:.0e}")
    # role: core - the index of subspace overlap with the stated extremes and invariances
    parts.append(Part(
        id="subspace form", role=Role.CORE,
        finding="HDI = 1 − mean ρ lies in [0, 1], 0 for identical and 1 for orthogonal heads, basis-invariant",
        statement="HDI = 1 − mean_{h<h'} ρ_hh' (ρ = mean cos² of the principal angles) lies in [0, 1], is 0 for "
                  "identical and 1 for orthogonal heads, and is invariant under W_K^h → W_K^h A_h and head "
                  "permutations",
        symbolic=Symbolic.from_derivation(der, steps=sub_steps, results=["rho_dk2", "subspace_hdi_h2_d3dk2"],
                                          comparisons=["subspace_form_properties", "orthogonal_heads_give_one"]),
        numeric=Numeric("rounding" if sub["ok"] else "disagree", summary2, sub)))

    plots_ = _plot(ctx, lit)
    min_lit = min(lit["raw_gaussian_min_literal"], *(r["literal_hdi"] for r in search["table"]))
    worst = max(sub["invariance_WA_max_change"], sub["principal_angles_vs_mpmath_max_abs"])
    summary = (f"literal formula: identical orthonormal heads 1 − 1/d_k, values down to {min_lit:.3g}, equal to the "
                f"subspace form only for W_hᵀW_h = sqrt(d_k) I; subspace form in [0, 1], invariances and mpmath "
                f"angles to {worst:.0e}")
    return ClaimResult(id="C4", title=TITLE, stated=der.stated, parts=parts, summary=summary, plots=plots_)
