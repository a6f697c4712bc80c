"""A mutation run anyone can repeat: a named list of mutants, each a one-line change to the code
and the tests that must catch it.

    python tools/mutants.py                 # every mutant (about 15 minutes on 2 cores)
    python tools/mutants.py --only c7-law   # one mutant (names: --list)
    python tools/mutants.py --list

The run copies the working tree to a temporary folder once, applies one mutant at a time there
(the edit must match exactly once), runs its tests with ``pytest -x`` and restores the file. A
mutant is *killed* when a test fails. The summary prints killed / total and every survivor; a
survivor that is equivalent (no behaviour changes) is listed in EQUIVALENT with the reason. Not part
of CI's default run: it is a check of the tests, run by hand after changing them.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


@dataclass(frozen=True)
class Mutant:
    name: str
    file: str
    old: str
    new: str
    tests: tuple[str, ...]
    why: str = ""


M = Mutant
_ROWS = "tests/test_bad_input.py::test_bad_input_raises_verify_error"  # a row of the bad-input table, by id
MUTANTS: list[Mutant] = [
    # --- the verdict rule (verify/judgment/verdicts.py)
    M("rule-refuted-core-ignored", "verify/judgment/verdicts.py", "    if Verdict.REFUTED in grades:\n        return Verdict.REFUTED",
      "    if False:\n        return Verdict.REFUTED", ("tests/test_verdicts.py",)),
    M("rule-strongest-core", "verify/judgment/verdicts.py", "return max(checkable, key=_STRENGTH.index) if checkable",
      "return min(checkable, key=_STRENGTH.index) if checkable", ("tests/test_verdicts.py",)),
    M("rule-worst-reading", "verify/judgment/verdicts.py", "best = min(graded, key=lambda g: _READING_ORDER.index(g[0]))",
      "best = max(graded, key=lambda g: _READING_ORDER.index(g[0]))", ("tests/test_verdicts.py",)),
    M("rule-detail-sets-verdict", "verify/judgment/verdicts.py", "        if p.role is Role.CORE:\n            out.setdefault",
      "        if p.role in (Role.CORE, Role.DETAIL):\n            out.setdefault", ("tests/test_verdicts.py",)),
    M("rule-correction-hidden", "verify/judgment/verdicts.py",
      "{Role.DETAIL: Effect.CORRECTION, Role.PREMISE: Effect.PREMISE_FAILS, Role.SCOPE: Effect.LIMIT}",
      "{Role.DETAIL: Effect.DETAIL_HOLDS, Role.PREMISE: Effect.PREMISE_FAILS, Role.SCOPE: Effect.LIMIT}",
      ("tests/test_verdicts.py",)),
    M("rule-exact-without-rounding", "verify/judgment/verdicts.py",
      'if proved and not part.model_assumptions and num is not None and num.agreement == "rounding":',
      "if proved and not part.model_assumptions:", ("tests/test_verdicts.py",)),
    M("rule-assumptions-ignored", "verify/judgment/verdicts.py", "if proved and not part.model_assumptions and num",
      "if proved and num", ("tests/test_verdicts.py",)),
    M("rule-refuted-without-restorer", "verify/judgment/verdicts.py",
      "if self.role in (Role.CORE, Role.SCOPE) and self.counterexample is not None and not self.restored_by:",
      "if False:", ("tests/test_verdicts.py",)),
    # --- the report and the snapshot
    M("snapshot-ignores-parts", "verify/snapshot.py", "            if ep.get(pid) != ap.get(pid):",
      "            if False:", ("tests/test_snapshot.py",)),
    M("report-counts-swapped", "verify/outputs/report.py",
      '"corrections": len(c["corrections"]), "premise": len(c["premise"]), "limits": len(c["limits"])}',
      '"corrections": len(c["limits"]), "premise": len(c["premise"]), "limits": len(c["corrections"])}',
      ("tests/test_snapshot.py", "tests/test_cli.py::test_terminal_table_shows_verdict_headline_and_counts")),
    M("report-nan-allowed", "verify/io.py", "indent=indent, allow_nan=False", "indent=indent, allow_nan=True",
      ("tests/test_io.py",)),
    M("publish-in-place", "verify/cli.py", "    stage = staging_folder(\"--out\", out, marker=REPORT_MARKER)",
      "    stage = out\n    out.mkdir(parents=True, exist_ok=True)", ("tests/test_cli.py::test_a_run_killed_while_it_writes_leaves_the_previous_report",)),
    # --- NW core, attention, diversity, engine
    M("nw-default-scale", "verify/numeric/nw.py", "1.0 / math.sqrt(d) if s is None else s", "1.0 / d if s is None else s",
      ("tests/test_nw.py", "tests/test_engine.py")),
    M("nw-gaussian-inverse-square", "verify/numeric/nw.py", "inv_b2 = float(np.float64(1.0) / np.float64(b) ** 2)",
      "inv_b2 = float(np.float64(1.0) / np.float64(b))", ("tests/test_engine.py::test_mpmath_recomputation_at_50_digits",)),
    M("attention-output-bias-dropped", "verify/numeric/attention.py", "+ self.b_O", "+ 0 * self.b_O",
      ("tests/test_attention.py",)),
    M("diversity-rho-not-normalised", "verify/numeric/diversity.py", "return _pairwise_sq_frob(U) / W.shape[2]",
      "return _pairwise_sq_frob(U) / (W.shape[2] + 1)", ("tests/test_diversity.py",)),
    M("engine-ddof-1", "verify/numeric/engine.py", "C = [[total((est[r][h][j] - mu[h]) * (est[r][g][j] - mu[g]) for r in range(R)) / R",
      "C = [[total((est[r][h][j] - mu[h]) * (est[r][g][j] - mu[g]) for r in range(R)) / (R - 1)",
      ("tests/test_engine.py", "tests/test_certify.py")),
    M("engine-noise-term-dropped", "verify/numeric/engine.py", "            mse += total(noise_ens[r][j] for r in range(R)) / R",
      "            mse += 0 * total(noise_ens[r][j] for r in range(R)) / R", ("tests/test_certify.py",)),
    # --- claim checks
    M("c1-named-case-keys", "verify/claims/c1.py", '"keys": [[1.0, 0.0, 0.0, 0.0], [-1.0, 0.0, 0.0, 0.0]], "values": [[1.0], [0.0]]}',
      '"keys": [[1.0, 0.0, 0.0, 0.0], [-1.0, 0.0, 0.0, 0.0]], "values": [[1.0], [1.0]]}', ("tests/test_claim_c1.py",)),
    M("c1-unequal-bandwidth-grid", "verify/claims/c1.py", "bands = sorted({*UNEQUAL_BANDWIDTHS, float(formulas.c1_gaussian_bandwidth(d_k))})",
      "bands = sorted({*UNEQUAL_BANDWIDTHS})[:1]", ("tests/test_claim_c1.py",)),
    M("c1-bandwidth-role", "verify/claims/c1.py", 'id="bandwidth as stated", role=Role.DETAIL,',
      'id="bandwidth as stated", role=Role.CORE,', ("tests/test_claim_c1.py", "tests/test_snapshot.py")),
    M("c2-simplex-test", "verify/claims/c2.py", "on = bool(np.all(alpha >= 0) and abs(float(alpha.sum()) - 1) <= SIMPLEX_TOL)",
      "on = bool(abs(float(alpha.sum()) - 1) <= SIMPLEX_TOL)", ("tests/test_claim_c2.py",)),
    M("c3-certificate-level", "verify/claims/c3.py", "CERTIFIED_RESIDUAL = 1e-60", "CERTIFIED_RESIDUAL = -1.0",
      ("tests/test_snapshot.py",)),
    M("c4-literal-normalisation", "verify/numeric/diversity.py", "d_k**2", "d_k", ("tests/test_diversity.py", "tests/test_claim_c4.py")),
    M("c5-premise-scale", "verify/claims/c5.py", "scale=factor / math.sqrt(d_k))", "scale=factor / d_k)",
      ("tests/test_claim_c5.py",)),
    M("c5-line-slope", "verify/claims/c5.py", "return float(B * B + alpha @ C @ alpha)", "return float(B * B + alpha @ C @ alpha * 1.01)",
      ("tests/test_claim_c5.py", "tests/test_snapshot.py")),
    M("c6-signal-heads", "verify/claims/c6.py", "cols = [[0, *range(1 + h * (d_k - 1), 1 + (h + 1) * (d_k - 1))] for h in range(H)]",
      "cols = [[1, *range(1 + h * (d_k - 1), 1 + (h + 1) * (d_k - 1))] for h in range(H)]", ("tests/test_claim_c6.py",)),
    M("c6-bound-certificate", "verify/claims/c6.py", "bound = 1 - max(Fraction(0), (Fraction(H * d_k, d) - 1) / (H - 1))",
      "bound = 1 - max(Fraction(0), (Fraction(H * d_k, d) - 1) / H)", ("tests/test_claim_c6.py",)),
    M("c7-stated-law-exponent", "verify/claims/c7.py", "law = (mpmath.log(n2) / mpmath.log(n1)) ** (mpmath.mpf(2) / (4 + d))",
      "law = (mpmath.log(n2) / mpmath.log(n1)) ** (mpmath.mpf(2) / (6 + d))", ("tests/test_claim_c7.py",)),
    M("c7-slow-growth-criterion", "verify/claims/c7.py", "SLOW_SLOPE_DROP = 0.3", "SLOW_SLOPE_DROP = 0.9",
      ("tests/test_claim_c7.py",)),
    M("c8-geometric-floor", "verify/claims/c8.py", '"geom_floor": (1 - r) ** 2 * V_1}', '"geom_floor": (1 - r) * V_1}',
      ("tests/test_claim_c8.py",)),
    M("c8-asymptotic-rate", "verify/claims/c8.py",
      'asym = {s: float(g.max() if s == "inverse" else g[weights(s, g.size, r=r) != 0].min()) for s in schemes}',
      'asym = {s: float(g.max() if s in ("inverse", "geom") else g[weights(s, g.size, r=r) != 0].min()) for s in schemes}',
      ("tests/test_claim_c8.py",)),
    M("c8-threshold", "verify/claims/c8.py", "return beta > 1 or (beta == 1 and r > math.sqrt(2) - 1)",
      "return beta > 1 or (beta == 1 and r > 0.5)", ("tests/test_claim_c8.py",)),
    # --- replay: parameters validated, work bounded (issue 13); rows of tests/test_bad_input.py
    *[M(name, file, old, new, tuple(t if "::" in t else f"{_ROWS}[{t}]" for t in tests))
      for name, file, old, new, tests in (
        ('replay-c1-terms-cap', 'verify/claims/c1.py', 'at_most("params.queries, keys, values", m * n * (d_k + p + 1),',
         'at_most("params.queries, keys, values", m * n,',
         ('cli-replay-c1-unequal-too-large',)),
        ('replay-c1-magnitude-cap', 'verify/claims/c1.py', 'MAX_REPLAY_ABS = 1e100',
         'MAX_REPLAY_ABS = 1e300',
         ('cli-replay-c1-keys-huge',)),
        ('replay-c6-seed-truncated', 'verify/claims/c6.py',
         'seed = valid_seed("params.seed", params["seed"])\n    starts',
         'seed = int(params["seed"])\n    starts',
         ('cli-replay-c6-seed-fraction', 'cli-replay-c6-seed-string',)),
        ('replay-c8-r-bound', 'verify/claims/c8.py',
         '    if r >= 1:\n        raise fail("params.r", repr(params["r"]), "a ratio 0 < r < 1")\n    margin',
         '    if r > 1.5:\n        raise fail("params.r", repr(params["r"]), "a ratio 0 < r < 1")\n    margin',
         ('cli-replay-c8-r-above-one',)),
        ('replay-c8-V1-zero', 'verify/claims/c8.py',
         'V_1 = finite_number("params.V_1", params["V_1"], minimum=0.0, strict_minimum=True)',
         'V_1 = finite_number("params.V_1", params["V_1"], minimum=0.0)',
         ('cli-replay-c8-V1-zero',)),
        ('replay-c8-H-truncated', 'verify/claims/c8.py', 'integer_valued(f"params.H_values[{i}]", h, minimum=1)',
         'positive_int(f"params.H_values[{i}]", int(h))',
         ('cli-replay-c8-H-values-fraction',)),
        ('replay-c8-decay-cap', 'verify/claims/c8.py', 'sum(Hs) * (1 + len(schemes))',
         'sum(Hs) * len(schemes)',
         ('cli-replay-c8-H-values-one-above-cap',)),
        ('replay-c8-rates-range', 'verify/claims/c8.py', 'if not np.all(np.abs(log_mse) <= RATE_LOG_RANGE):',
         'if False:',
         ('cli-replay-c8-rates-mse-underflows',)),
        ('replay-c5-replicate-cap', 'verify/claims/c5.py', 'MAX_REPLAY_REPLICATES = 1024',
         'MAX_REPLAY_REPLICATES = 10**9',
         ('cli-replay-c5-batches-1000', 'cli-replay-c5-n-1e6-R-1e4',)),
        ('replay-c5-nw-passes', 'verify/claims/c5.py', '_nw_inputs(params, 4)',
         '_nw_inputs(params, 1)',
         ('cli-replay-c5-nw-R-too-large',)),
        ('replay-c5-nw-R-one', 'verify/claims/c5.py', 'min_R=2))',
         'min_R=1))',
         ('cli-replay-c5-nw-R-one',)),
        ('replay-c5-rational-length', 'verify/claims/c5.py', 'len(x) <= MAX_RATIONAL_CHARS and',
         '',
         ('cli-replay-c5-exact-V-too-many-digits',)),
        ('replay-c4-error-names-case', 'verify/claims/c4.py', 'with within(f"params.cases[{i}]"):',
         "with __import__('contextlib').nullcontext():",
         ('cli-replay-c4-literal-overflows',)),
        ('replay-c2-overflow', 'verify/claims/c2.py', 'if not (np.all(np.isfinite(alpha)) and math.isfinite(total)):',
         'if False:',
         ('cli-replay-c2-products-overflow',)),
        ('replay-c7-n1-below-n2', 'verify/claims/c7.py', '    if not n1 < n2:\n',
         '    if False:\n',
         ('cli-replay-c7-n2-below-n1',)),
        ('replay-c7-case-cap', 'verify/claims/c7.py', 'MAX_REPLAY_CASES = 128',
         'MAX_REPLAY_CASES = 10**6',
         ('cli-replay-c7-too-many-cases',)),
        ('replay-kind-of-another-claim', 'verify/replay.py', 'if func is None or func.__module__ != module:',
         'if func is None:',
         ('cli-replay-kind-of-another-claim',)),
        ('cli-proofs-claims-unchecked', 'verify/cli.py',
         '    args = p.parse_args(argv)\n    from proofs.__main__ import main as proofs_main\n\n'
         '    return proofs_main(list(dict.fromkeys(args.claims)))',
         '    from proofs.__main__ import main as proofs_main\n\n    return proofs_main(argv)',
         ('cli-proofs-unknown-claim', 'tests/test_bad_input.py::test_proofs_help_prints_the_usage_and_exits_0')),
        ('hdi-memory-guard', 'verify/numeric/diversity.py',
         '    fits_in_memory("W_K", 32 * H * H, f"H = {H} heads: (H, H) overlap matrices and pair indices")\n',
         '',
         ('hdi-heads-beyond-memory',)),
        ('at-most-one-above-cap', 'verify/_validate.py', '    if value > cap:',
         '    if value > cap + 1:',
         ('cli-replay-c8-H-values-one-above-cap', 'cli-replay-c2-too-many-heads', 'cli-replay-c4-too-many-heads',
          'cli-replay-c8-rates-too-many-heads', 'cli-replay-c4-too-many-cases', 'cli-replay-c7-too-many-cases')),
        ('at-most-refuses-cap', 'verify/_validate.py', '    if value > cap:',
         '    if value >= cap:',
         ('tests/test_bad_input.py::test_replay_at_its_cap_runs',)),
    )],
    # --- the proof checker (proofs/core.py), the derivation cache
    M("checker-one-rational-point", "proofs/core.py", "RATIONAL_POINTS = 6", "RATIONAL_POINTS = 1",
      ("tests/test_proofs_core.py",)),
    M("checker-small-integers", "proofs/core.py", "INT_RANGE = 10**9", "INT_RANGE = 9", ("tests/test_proofs_core.py",)),
    M("cache-ignores-bytes", "proofs/cache.py", "        h.update(len(data).to_bytes(8, \"little\") + data)",
      "        h.update(len(data).to_bytes(8, \"little\"))", ("tests/test_derivation_cache.py",)),
    # --- the compiled kernel
    M("kernel-exp-coefficient", "verify/numeric/_kernel.py", "    p = p * r + _C12\n", "    p = p * r + 0 * _C12\n",
      ("tests/test_kernel.py",)),
    # --- C7 on real NW ensembles, the sweep engine
    M("c7-empirical-any-seed", "verify/claims/c7.py",
      "violates=bool(growth) and all(o > LAW_FACTOR for o in off)", "violates=bool(growth) and any(o > 1e9 for o in off)",
      ("tests/test_claim_c7.py",)),
    M("sweep-recomputes-finished-tasks", "verify/experiments/sweep.py", "        doc = _load_done(out, t)\n",
      "        doc = None\n", ("tests/test_sweep.py",)),
    # --- C9: the hand-written gradient, the training judge, the checkpoint judge
    M("c9-gradient-scale", "verify/experiments/training.py", "    c = 1.0 / math.sqrt(k)\n    Xt", "    c = 1.0 / k\n    Xt",
      ("tests/test_training.py",)),
    M("c9-setting-any-run", "verify/claims/c9.py", '"violates": bool(np.all(dk < 0) and mk < -delta_min and t <= -t_min),',
      '"violates": bool(np.any(dk < 0) and mk < -delta_min and t <= -t_min),', ("tests/test_claim_c9.py",)),
    M("c9-checkpoint-any-layer", "verify/claims/c9.py", "    return ReplayOutcome(violates=all(below), summary=summary, figures={\"layers\": rows})",
      "    return ReplayOutcome(violates=any(below), summary=summary, figures={\"layers\": rows})", ("tests/test_claim_c9.py",)),
]

#: Survivors that change no behaviour, with the reason (checked by hand).
EQUIVALENT: dict[str, str] = {}


def _copy_tree(dest: Path) -> None:
    files = subprocess.run(["git", "ls-files", "-co", "--exclude-standard"], cwd=ROOT, capture_output=True,
                           text=True, check=True).stdout.split("\n")
    for rel in filter(None, files):
        src = ROOT / rel
        if src.is_file():
            (dest / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dest / rel)


def run(mutants: list[Mutant], python: str) -> int:
    work = Path(tempfile.mkdtemp(prefix="mha-nw-mutants-"))
    try:
        _copy_tree(work)
        env = {**os.environ, "PYTHONPATH": str(work), "OPENBLAS_NUM_THREADS": "1", "MHA_NW_REDERIVE": "1"}
        killed, survivors = 0, []
        print(f"{'mutant':<34} {'file':<28} {'result':<9} seconds")
        for m in mutants:
            path = work / m.file
            text = path.read_text()
            if text.count(m.old) != 1:
                print(f"{m.name:<34} {m.file:<28} {'STALE':<9} (the edit matches {text.count(m.old)} times)")
                survivors.append((m, "stale: the code changed, update the mutant"))
                continue
            path.write_text(text.replace(m.old, m.new))
            t0 = time.perf_counter()
            try:
                proc = subprocess.run([python, "-m", "pytest", "-x", "-q", "-p", "no:cacheprovider", "-o",
                                       "addopts=-p verify.pytest_plugin", *m.tests], cwd=work, env=env,
                                      capture_output=True, text=True)
            finally:
                path.write_text(text)
            dt = time.perf_counter() - t0
            ok = proc.returncode != 0
            killed += ok
            if not ok:
                survivors.append((m, EQUIVALENT.get(m.name, "SURVIVED: a missing test")))
            print(f"{m.name:<34} {m.file:<28} {'killed' if ok else 'SURVIVED':<9} {dt:.0f}")
        print(f"\nkilled {killed} / {len(mutants)}")
        for m, why in survivors:
            print(f"  {m.name}: {why}")
        return 0 if all(m.name in EQUIVALENT for m, _ in survivors) else 1
    finally:
        shutil.rmtree(work, ignore_errors=True)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--only", default=None, help="comma-separated mutant names")
    p.add_argument("--list", action="store_true", help="list the mutants and exit")
    args = p.parse_args(argv)
    chosen = MUTANTS
    if args.only:
        names = set(args.only.split(","))
        unknown = names - {m.name for m in MUTANTS}
        if unknown:
            p.error(f"--only: unknown mutants {sorted(unknown)}")
        chosen = [m for m in MUTANTS if m.name in names]
    if args.list:
        for m in chosen:
            print(f"{m.name:<34} {m.file:<28} {' '.join(m.tests)}")
        return 0
    return run(chosen, sys.executable)


if __name__ == "__main__":
    raise SystemExit(main())
