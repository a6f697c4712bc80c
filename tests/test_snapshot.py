"""Verdicts cannot change unnoticed: the quick run's verdicts, part effects, headlines, findings
and regimes against the stored snapshot (regenerated only by ``python -m verify snapshot --write``),
and the README's verdict table against the same snapshot."""

from __future__ import annotations

from pathlib import Path

import pytest

from proofs import CLAIM_IDS
from proofs.markup import render
from verify.io import read_json
from verify.outputs.report import document
from verify.snapshot import README, SNAPSHOT, differences, for_run, readme_section, snapshot_of

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


def _changed_headline(snap: dict, cid: str) -> dict:
    """``snap`` with the first figure of ``cid``'s headline changed by one in its last digit (a
    headline that quotes no figure gets one more word)."""
    import re

    headline = snap["claims"][cid]["headline"]
    m = re.search(r"\d+(?:\.\d+)?", headline)
    if m:
        digits = m.group(0)
        headline = headline[:m.start()] + digits[:-1] + str((int(digits[-1]) + 1) % 10) + headline[m.end():]
    else:
        headline += " changed"
    return {**snap, "claims": {**snap["claims"], cid: {**snap["claims"][cid], "headline": headline}}}


@pytest.mark.parametrize("cid", CLAIM_IDS)
def test_a_changed_headline_figure_is_a_difference(quick_doc, cid):
    """Changing a digit of a claim's headline (or a word, if it quotes no figure) fails the comparison."""
    snap = snapshot_of(quick_doc)
    diff = differences(snap, _changed_headline(snap, cid))
    assert diff == [f"{cid}: headline {snap['claims'][cid]['headline']!r} in the snapshot, "
                    f"{_changed_headline(snap, cid)['claims'][cid]['headline']!r} now"]


def test_a_changed_limit_boundary_is_a_difference(quick_doc):
    snap = snapshot_of(quick_doc)
    cid, pid = next((c, p) for c, v in snap["claims"].items() for p, (role, effect) in v["parts"].items()
                    if effect == "limit")
    texts = snap["claims"][cid]["texts"]
    changed = {**snap, "claims": {**snap["claims"], cid: {**snap["claims"][cid], "texts": {
        **texts, pid: {**texts[pid], "regime": texts[pid]["regime"] + " (changed)"}}}}}
    assert differences(snap, changed) == [f"{cid}/{pid}: regime {texts[pid]['regime']!r} in the snapshot, "
                                          f"{texts[pid]['regime'] + ' (changed)'!r} now"]


def test_texts_are_compared_only_between_runs_of_one_size(quick_doc):
    """A default run's figures differ from the quick run's by design: against the (quick) snapshot
    only its verdicts, deciding readings and part effects are compared; a changed verdict or deciding
    reading still is."""
    snap = snapshot_of(quick_doc)
    default = {**_changed_headline(snap, "C1"), "quick": False}
    assert differences(snap, default) == []
    cid = next(c for c, v in snap["claims"].items() if v["reading"])         # a claim read in several ways
    default["claims"]["C2"] = {**default["claims"]["C2"], "verdict": "refuted"}
    default["claims"][cid] = {**default["claims"][cid], "reading": "other"}
    assert differences(snap, default) == ["C2: verdict 'exact' in the snapshot, 'refuted' now",
                                          f"{cid}: reading {snap['claims'][cid]['reading']!r} in the snapshot, 'other' now"]
    assert differences(snap, {**_changed_headline(snap, "C1"), "seed": 1}) == []


def test_readme_table_agrees_with_the_snapshot():
    """The README's generated table (from a full default run) shows the stored default run's
    verdicts and, counted from its part effects, its corrections, premise findings, limits and
    undecided parts beside the core."""
    stored = read_json("snapshot", ROOT / SNAPSHOT)["default"]["claims"]
    rows = [r for r in readme_section((ROOT / README).read_text(encoding="utf-8")).splitlines()[2:] if r.strip()]
    assert len(rows) == len(CLAIM_IDS)
    for row, claim in zip(rows, CLAIM_IDS):
        cells = [c.strip() for c in row.strip("|").split("|")]
        assert cells[0].split()[0] == claim
        assert cells[1] == f"**{stored[claim]['verdict']}**"
        parts = stored[claim]["parts"].values()
        counts = (sum(e == "correction" for _, e in parts), sum(r == "premise" for r, _ in parts),
                  sum(e == "limit" for _, e in parts), sum(e == "undecided" for _, e in parts))
        assert cells[2] == " / ".join(map(str, counts)), claim


def test_a_default_report_is_compared_with_the_default_run():
    stored = read_json("snapshot", ROOT / SNAPSHOT)
    assert for_run(stored, {"meta": {"quick": False}}) is stored["default"]
    assert for_run(stored, {"meta": {"quick": True}}) is stored


def test_generated_table_counts_each_claims_fields(quick_doc):
    """readme_table / verdict_rows count each claim's corrections, premise findings and limits."""
    from verify.outputs.report import readme_table

    rows = readme_table(quick_doc).splitlines()[2:]
    for row, c in zip(rows, quick_doc["claims"]):
        cells = [x.strip() for x in row.strip("|").split("|")]
        assert cells[2] == (f"{len(c['corrections'])} / {len(c['premise'])} / {len(c['limits'])} / "
                            f"{sum(u['role'] != 'core' for u in c['undecided'])}"), c["id"]
        # the headline as GitHub Markdown: the markup's own Markdown renderer, a table cell's `|` escaped
        assert cells[3] == render(" ".join(c["headline"].split()), "markdown").replace("|", "\\|"), c["id"]
