"""Verdicts cannot change unnoticed: the quick run's verdicts and part effects against the stored
snapshot (regenerated only by ``python -m verify snapshot --write``), and the README's verdict
table against the same snapshot."""

from __future__ import annotations

from pathlib import Path

import pytest

from proofs import CLAIM_IDS
from verify.io import read_json
from verify.outputs.report import document
from verify.snapshot import README, SNAPSHOT, differences, readme_section, snapshot_of

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def quick_doc(quick_run):
    return document([quick_run(c)[0] for c in CLAIM_IDS], seed=0, quick=True)


def test_verdicts_match_the_stored_snapshot(quick_doc):
    stored = read_json("snapshot", ROOT / SNAPSHOT)
    diff = differences(stored, snapshot_of(quick_doc))
    assert not diff, "verdicts changed; review, then run `python -m verify snapshot --write`:\n" + "\n".join(diff)


def test_snapshot_catches_a_changed_verdict(quick_doc):
    """The comparison can fail: one part's effect and one verdict changed by hand are both reported."""
    snap = snapshot_of(quick_doc)
    changed = {**snap, "claims": {**snap["claims"]}}
    c1 = dict(changed["claims"]["C1"])
    c1["verdict"] = "refuted"
    c1["parts"] = {**c1["parts"], "bandwidth as stated": ["detail", "detail holds"]}
    changed["claims"]["C1"] = c1
    diff = differences(snap, changed)
    assert any(d.startswith("C1: verdict") for d in diff) and any("bandwidth as stated" in d for d in diff)


def test_readme_table_agrees_with_the_snapshot(quick_doc):
    """The README's generated table (from a full default run) shows the snapshot's verdicts and
    the quick run's counts of corrections, premise findings and limits."""
    rows = [r for r in readme_section((ROOT / README).read_text(encoding="utf-8")).splitlines()[2:] if r.strip()]
    assert len(rows) == len(CLAIM_IDS)
    by_id = {c["id"]: c for c in quick_doc["claims"]}
    for row, claim in zip(rows, CLAIM_IDS):
        cells = [c.strip() for c in row.strip("|").split("|")]
        assert cells[0].split()[0] == claim
        assert cells[1] == f"**{by_id[claim]['verdict']}**"
        c = by_id[claim]
        assert cells[2] == f"{len(c['corrections'])} / {len(c['premise'])} / {len(c['limits'])}"


def test_generated_table_counts_each_claims_fields(quick_doc):
    """readme_table / verdict_rows count each claim's corrections, premise findings and limits."""
    from verify.outputs.report import readme_table

    rows = readme_table(quick_doc).splitlines()[2:]
    for row, c in zip(rows, quick_doc["claims"]):
        cells = [x.strip() for x in row.strip("|").split("|")]
        assert cells[2] == f"{len(c['corrections'])} / {len(c['premise'])} / {len(c['limits'])}", c["id"]
        assert cells[3] == c["headline"].replace("|", "/")
