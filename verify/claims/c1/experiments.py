"""C1's computations: plain parameters and random generators in, figures out (the check judges them).

An NW estimate's error is measured relative to the scale of what is averaged (``max |v|``, or the
output's scale for a head with projections) beside its first-order float64 rounding bound
(:func:`verify.numeric.attention.rounding_bound`).
"""

from __future__ import annotations

import math
from typing import Any

import mpmath
import numpy as np

from verify.claims.c1.reference import abs_score, exp_nw_rows, gauss_abs_score, mp_exp_nw, mp_gaussian_nw
from verify.claims.c2 import mp_mha, random_module, scale_and_bound
from verify.numeric import certify
from verify.numeric.attention import MP_DPS, rounding_bound
from verify.numeric.formulas import (
    c1_attention_estimate_n3,
    c1_attention_estimate_n3_mp,
    c1_bandwidth_from_scale,
    c1_bandwidth_from_scale_mp,
    c1_gaussian_bandwidth,
    c1_gaussian_bandwidth_mp,
    c1_gaussian_nw_estimate_n3_mp,
    c1_softmax_scale,
    c1_softmax_scale_mp,
)
from verify.numeric.nw import nw_estimate

__all__ = ["equal_norm_case", "identity", "gaussian", "named_case", "certificates"]


def equal_norm_case(seed: int, m: int, n: int, d_k: int, p: int, norm: float) -> dict[str, np.ndarray]:
    """Seeded inputs: queries N(0, I), keys uniform on the sphere of radius ``norm``, values N(0, 1)."""
    rng = np.random.default_rng(seed)
    q = rng.standard_normal((m, d_k))
    k = rng.standard_normal((n, d_k))
    k = norm * k / np.linalg.norm(k, axis=1, keepdims=True)
    return {"q": q, "k": k, "v": rng.standard_normal((n, p))}


def identity(shapes: list[tuple[tuple, np.random.Generator]], heads: list[tuple[tuple, np.random.Generator]],
             rng_n3: np.random.Generator) -> dict[str, Any]:
    """``nw_estimate`` on (m, n, d_k, p) cases and single heads with biases, (d, kdim, vdim, d_k, d_v,
    d_out, L, S), against the literal NW estimate in mpmath; the generated n = 3 closed form."""
    rows, worst, worst_ratio = [], 0.0, 0.0
    for (m, n, d_k, p), rng in shapes:
        q, k, v = (rng.standard_normal(sh) * sc for sh, sc in (((m, d_k), 1.5), ((n, d_k), 1.5), ((n, p), 1.0)))
        s = float(c1_softmax_scale(d_k))
        err = float(np.max(np.abs(nw_estimate(q, k, v) - mp_exp_nw(q, k, v))) / np.max(np.abs(v)))
        bound = rounding_bound(abs_score(q, k, s), d_k + n)
        rows.append({"what": "nw_estimate", "m": m, "n": n, "d_k": d_k, "p": p, "rel_error": err, "bound": bound})
        worst, worst_ratio = max(worst, err), max(worst_ratio, err / bound)
    for (d, kdim, vdim, d_k, d_v, d_out, L, S), rng in heads:
        head = random_module(rng, 1, d, kdim, vdim, d_k, d_v, d_out)
        x, xk, xv = (rng.standard_normal(sh) for sh in ((L, d), (S, kdim), (S, vdim)))
        scale, bound = scale_and_bound(head, x, xk, xv)
        err = float(np.max(np.abs(head(x, xk, xv) - mp_mha(head, x, xk, xv))) / scale)
        rows.append({"what": "MultiHeadNW, H = 1", "d": d, "kdim": kdim, "vdim": vdim, "d_k": d_k, "d_v": d_v,
                     "d_out": d_out, "L": L, "S": S, "rel_error": err, "bound": bound})
        worst, worst_ratio = max(worst, err), max(worst_ratio, err / bound)
    # the generated closed form (n = 3, d_k = 2) against nw_estimate and at 50 digits
    q, k, y = rng_n3.standard_normal(2), rng_n3.standard_normal((3, 2)), rng_n3.standard_normal(3)
    s = c1_softmax_scale(2)
    closed = float(c1_attention_estimate_n3(*q, *k.ravel(), *y, s))
    ours = float(nw_estimate(q[None], k, y[:, None])[0, 0])
    with mpmath.workdps(MP_DPS):
        closed_mp = c1_attention_estimate_n3_mp(*q, *k.ravel(), *y, c1_softmax_scale_mp(2))
        lit = exp_nw_rows(q[None], k, y[:, None], c1_softmax_scale_mp(2))[0][0]
        n3_mp_gap = float(abs(closed_mp - lit))
    n3_err = max(abs(closed - ours), abs(ours - float(closed_mp))) / float(np.max(np.abs(y)))
    return {"cases": rows, "max_rel_error": worst, "max_error_over_bound": worst_ratio, "dps": MP_DPS,
            "n3_closed_form_rel_error": n3_err, "n3_bound": rounding_bound(abs_score(q[None], k, s), 5),
            "n3_closed_form_mp_vs_literal_mp": n3_mp_gap}


def gaussian(cases: list[tuple[tuple, int]], rng_n3: np.random.Generator, unequal: dict) -> dict[str, Any]:
    """Softmax on seeded equal-norm keys, cases (m, n, d_k, p) with a seed each, against literal Gaussian
    NW with b = 1/sqrt(s), for s = 1/sqrt(d_k) and a random s; the same keys rescaled to unequal norms;
    the generated n = 3 closed forms on keys exactly on a circle; the ``unequal`` case in mpmath."""
    rows, worst_ratio, worst, unequal_max, formula_gap = [], 0.0, 0.0, 0.0, 0.0
    for (m, n, d_k, p), seed in cases:
        rng = np.random.default_rng(seed + 1)
        for s_kind, s in (("1/sqrt(d_k)", float(c1_softmax_scale(d_k))), ("random", float(rng.uniform(0.1, 2)))):
            norm = float(rng.uniform(0.5, 2.0)) * math.sqrt(d_k)
            c = equal_norm_case(seed, m, n, d_k, p, norm)
            b = float(c1_bandwidth_from_scale(s))
            if s_kind == "1/sqrt(d_k)":  # the two generated formulas give the same b = d_k^(1/4)
                b_dk = float(c1_gaussian_bandwidth(d_k))
                formula_gap = max(formula_gap, abs(b - b_dk) / b_dk)
            soft = nw_estimate(c["q"], c["k"], c["v"], scale=s)
            with mpmath.workdps(MP_DPS):   # b = 1/sqrt(s) at 50 digits, not rounded to 15 first
                gauss_mp = mp_gaussian_nw(c["q"], c["k"], c["v"], c1_bandwidth_from_scale_mp(s))
            gauss_f = nw_estimate(c["q"], c["k"], c["v"], kernel="gaussian", bandwidth=b)
            vs = float(np.max(np.abs(c["v"])))
            err = float(np.max(np.abs(soft - gauss_mp))) / vs
            err_f = float(np.max(np.abs(gauss_f - gauss_mp))) / vs
            bound = rounding_bound(max(abs_score(c["q"], c["k"], s), gauss_abs_score(c["q"], c["k"], s)), d_k + n)
            rows.append({"m": m, "n": n, "d_k": d_k, "scale": s, "scale_kind": s_kind, "bandwidth": b,
                         "key_norm": norm, "softmax_vs_gaussian_mp": err, "gaussian_f64_vs_mp": err_f, "bound": bound})
            worst = max(worst, err, err_f)
            worst_ratio = max(worst_ratio, err / bound, err_f / bound)
            # the same inputs with unequal key norms (each key rescaled by a factor in [0.5, 2])
            k2 = c["k"] * rng.uniform(0.5, 2.0, size=(n, 1))
            d_un = np.abs(nw_estimate(c["q"], k2, c["v"], scale=s) - mp_gaussian_nw(c["q"], k2, c["v"], b))
            unequal_max = max(unequal_max, float(np.max(d_un)) / vs)
    # keys exactly on a circle (rational parametrisation in mpmath): the generated n = 3 closed forms
    t, q, y = rng_n3.uniform(-2, 2, 3), rng_n3.standard_normal(2), rng_n3.standard_normal(3)
    with mpmath.workdps(MP_DPS):
        r = mpmath.mpf(float(rng_n3.uniform(0.5, 2)))
        tt = [mpmath.mpf(float(x)) for x in t]
        keys = [c for x in tt for c in (r * (1 - x**2) / (1 + x**2), r * 2 * x / (1 + x**2))]   # |k| = r exactly
        soft = c1_attention_estimate_n3_mp(*q, *keys, *y, c1_softmax_scale_mp(2))
        gauss = c1_gaussian_nw_estimate_n3_mp(*q, *keys, *y, c1_gaussian_bandwidth_mp(2))
        gap = abs(soft - gauss) / max(abs(v) for v in y)
        n3_digits = float(-mpmath.log10(gap)) if gap > 0 else float(MP_DPS)
        # the derivation's exact counterexample: d_k = 4, q = e_1, k = (0, 2e_1), y = (0, 1)
        qc, kc, yc = (np.array(unequal[x]) for x in ("queries", "keys", "values"))
        cx_soft = float(mp_exp_nw(qc, kc, yc)[0, 0])
        cx_gauss = float(mp_gaussian_nw(qc, kc, yc, c1_gaussian_bandwidth_mp(4))[0, 0])
        e = mpmath.e
        cx_exact_err = float(max(abs(cx_soft - float(e / (1 + e))), abs(cx_gauss - 0.5)))
    return {"cases": rows, "max_rel_error": worst, "max_error_over_bound": worst_ratio,
            "n3_circle_keys_digits_agreed": n3_digits, "unequal_norms_max_discrepancy": unequal_max,
            "derivation_counterexample": {"softmax": cx_soft, "gaussian": cx_gauss, "difference": cx_soft - cx_gauss,
                                          "vs_exact_e_over_1_plus_e_and_half": cx_exact_err},
            "bandwidth_from_scale_vs_gaussian_bandwidth": formula_gap}


def named_case(case: dict) -> dict[str, Any]:
    """The head and Gaussian NW with b = 1/2 at the derivation's named case (d_k = 4, q = e_1, keys ±e_1,
    values (1, 0)) in mpmath, against their closed forms 1/(1 + e^{-1}) and 1/(1 + e^{-8})."""
    q, k, v = (np.array(case[x]) for x in ("queries", "keys", "values"))
    with mpmath.workdps(MP_DPS):
        head_exact, stated_exact = 1 / (1 + mpmath.exp(-1)), 1 / (1 + mpmath.exp(-8))
        head = float(mp_exp_nw(q, k, v)[0, 0])
        stated = float(mp_gaussian_nw(q, k, v, mpmath.mpf(1) / 2)[0, 0])
    return {"head": head, "stated_bandwidth_estimate": stated, "difference": stated - head,
            "closed_form_error": max(abs(head - float(head_exact)), abs(stated - float(stated_exact)))}


def certificates(case: dict, stated: Any, mismatch: float, equal: float) -> list[dict]:
    """arb enclosures at ``case``: Gaussian NW with the ``stated`` bandwidth differs from the head by more
    than ``mismatch`` and the one with b = d_k^(1/4) equals it (|diff| <= ``equal``); with no stated
    bandwidth, b = d_k^(1/4) differs by more than ``mismatch``."""
    q, k, v, d_k = case["queries"], case["keys"], case["values"], case["d_k"]
    with certify.precision():
        head = certify.nw_softmax(q, k, v, certify.ball(1) / certify.ball(d_k).sqrt())[0][0]
        diff = certify.nw_gaussian(q, k, v, certify.ball(d_k).root(4))[0][0] - head
        if stated is None:
            out = [certify.greater_than("|Gaussian NW (b = d_k^(1/4)) − head|", abs(diff), mismatch)]
        else:
            out = [certify.greater_than("|Gaussian NW (stated bandwidth) − head|",
                                        abs(certify.nw_gaussian(q, k, v, stated)[0][0] - head), mismatch),
                   certify.abs_at_most("Gaussian NW (b = d_k^(1/4)) − head", diff, equal)]
    return [c.to_dict() for c in out]
