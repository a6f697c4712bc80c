"""A mutation run anyone can repeat: a named list of mutants, each a one-line change to the code
and the tests that must catch it.

    python tests/mutants.py                 # every mutant (about 15 minutes on 2 cores)
    python tests/mutants.py --only c7-law   # one mutant (names: --list)
    python tests/mutants.py --list

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
MUTANTS: list[Mutant] = [
    # --- the verdict rule (verify/verdicts.py)
    M("rule-refuted-core-ignored", "verify/verdicts.py", "    if Verdict.REFUTED in grades:\n        return Verdict.REFUTED",
      "    if False:\n        return Verdict.REFUTED", ("tests/test_verdicts.py",)),
    M("rule-strongest-core", "verify/verdicts.py", "return max(checkable, key=_STRENGTH.index) if checkable",
      "return min(checkable, key=_STRENGTH.index) if checkable", ("tests/test_verdicts.py",)),
    M("rule-worst-reading", "verify/verdicts.py", "best = min(graded, key=lambda g: _READING_ORDER.index(g[0]))",
      "best = max(graded, key=lambda g: _READING_ORDER.index(g[0]))", ("tests/test_verdicts.py",)),
    M("rule-detail-sets-verdict", "verify/verdicts.py", "        if p.role is Role.CORE:\n            out.setdefault",
      "        if p.role in (Role.CORE, Role.DETAIL):\n            out.setdefault", ("tests/test_verdicts.py",)),
    M("rule-correction-hidden", "verify/verdicts.py",
      "{Role.DETAIL: Effect.CORRECTION, Role.PREMISE: Effect.PREMISE_FAILS, Role.SCOPE: Effect.LIMIT}",
      "{Role.DETAIL: Effect.DETAIL_HOLDS, Role.PREMISE: Effect.PREMISE_FAILS, Role.SCOPE: Effect.LIMIT}",
      ("tests/test_verdicts.py",)),
    M("rule-exact-without-rounding", "verify/verdicts.py",
      'if proved and not part.model_assumptions and num is not None and num.agreement == "rounding":',
      "if proved and not part.model_assumptions:", ("tests/test_verdicts.py",)),
    M("rule-assumptions-ignored", "verify/verdicts.py", "if proved and not part.model_assumptions and num",
      "if proved and num", ("tests/test_verdicts.py",)),
    M("rule-refuted-without-restorer", "verify/verdicts.py",
      "if self.role in (Role.CORE, Role.SCOPE) and self.counterexample is not None and not self.restored_by:",
      "if False:", ("tests/test_verdicts.py",)),
    # --- the report and the snapshot
    M("snapshot-ignores-parts", "verify/snapshot.py", "            if ep.get(pid) != ap.get(pid):",
      "            if False:", ("tests/test_snapshot.py",)),
    M("report-counts-swapped", "verify/report.py",
      '"corrections": len(c["corrections"]), "premise": len(c["premise"]), "limits": len(c["limits"])}',
      '"corrections": len(c["limits"]), "premise": len(c["premise"]), "limits": len(c["corrections"])}',
      ("tests/test_snapshot.py", "tests/test_cli.py::test_terminal_table_shows_verdict_headline_and_counts")),
    M("report-nan-allowed", "verify/io.py", "indent=indent, allow_nan=False", "indent=indent, allow_nan=True",
      ("tests/test_io.py",)),
    M("publish-in-place", "verify/cli.py", "    stage = staging_folder(\"--out\", out, marker=REPORT_MARKER)",
      "    stage = out\n    out.mkdir(parents=True, exist_ok=True)", ("tests/test_cli.py::test_a_run_killed_while_it_writes_leaves_the_previous_report",)),
    # --- NW core, attention, diversity, engine
    M("nw-default-scale", "verify/nw.py", "1.0 / math.sqrt(d) if s is None else s", "1.0 / d if s is None else s",
      ("tests/test_nw.py", "tests/test_engine.py")),
    M("nw-gaussian-inverse-square", "verify/nw.py", "inv_b2 = float(np.float64(1.0) / np.float64(b) ** 2)",
      "inv_b2 = float(np.float64(1.0) / np.float64(b))", ("tests/test_engine.py::test_mpmath_recomputation_at_50_digits",)),
    M("attention-output-bias-dropped", "verify/attention.py", "+ self.b_O", "+ 0 * self.b_O",
      ("tests/test_attention.py",)),
    M("diversity-rho-not-normalised", "verify/diversity.py", "return _pairwise_sq_frob(U) / W.shape[2]",
      "return _pairwise_sq_frob(U) / (W.shape[2] + 1)", ("tests/test_diversity.py",)),
    M("engine-ddof-1", "verify/engine.py", "C = [[total((est[r][h][j] - mu[h]) * (est[r][g][j] - mu[g]) for r in range(R)) / R",
      "C = [[total((est[r][h][j] - mu[h]) * (est[r][g][j] - mu[g]) for r in range(R)) / (R - 1)",
      ("tests/test_engine.py", "tests/test_certify.py")),
    M("engine-noise-term-dropped", "verify/engine.py", "            mse += total(noise_ens[r][j] for r in range(R)) / R",
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
    M("c4-literal-normalisation", "verify/diversity.py", "d_k**2", "d_k", ("tests/test_diversity.py", "tests/test_claim_c4.py")),
    M("c5-premise-scale", "verify/claims/c5.py", 'scale = float(params.get("scale_factor", 1.0)) / math.sqrt(d_k)',
      'scale = float(params.get("scale_factor", 1.0)) / d_k', ("tests/test_claim_c5.py",)),
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
