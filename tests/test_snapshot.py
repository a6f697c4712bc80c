"""Nothing a user reads changes unnoticed: the quick run's report.json, report.md, terminal table
and report.html text against the stored snapshot (regenerated only by ``python -m verify snapshot
--write``), numbers within the stated tolerance; its verdicts, part effects, headlines, findings and
regimes against the verdict snapshot, and the README's verdict table against the same snapshot."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from proofs import CLAIM_IDS
from proofs.markup import render
from verify import snapshot as snap_module
from verify.errors import VerifyError
from verify.io import read_json
from verify.outputs.report import document
from verify.snapshot import (FILES, README, SNAPSHOT, SNAPSHOT_ATOL, SNAPSHOT_RTOL, close, differences, for_run,
                             json_differences, masked, readme_section, snapshot_of, stored_views, text_differences,
                             view_differences, views)

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def quick_doc(quick_run):
    return document([quick_run(c)[0] for c in CLAIM_IDS], seed=0, quick=True)


@pytest.fixture(scope="module")
def current(quick_run, quick_doc, tmp_path_factory):
    """What a user reads of the session's quick run: its plots gathered in one folder, as in the
    folder of ``python -m verify --quick``, for report.html."""
    folder = tmp_path_factory.mktemp("quick-views")
    for c in CLAIM_IDS:
        shutil.copytree(quick_run(c)[1], folder, dirs_exist_ok=True)
    return views(quick_doc, folder)


@pytest.fixture(scope="module")
def stored():
    return stored_views(ROOT)


def test_what_a_user_reads_matches_the_stored_snapshot(stored, current):
    diffs = view_differences(stored, current)
    assert not any(diffs.values()), ("the report changed; review, then run `python -m verify snapshot --write`:\n"
                                     + snap_module.summary(diffs))


def test_the_page_text_has_its_plots_and_no_image_data(current):
    text = current["report.html"]
    assert "not found)" not in text and "data:image" not in text and "<" not in text.split("\n", 1)[0]
    assert '"seconds":' not in json.dumps(current["report.json"])     # the timings, different on every run


def _numbers(x, path=()):
    """(path, value) of every number in a JSON value."""
    if isinstance(x, dict):
        for k, v in x.items():
            yield from _numbers(v, (*path, k))
    elif isinstance(x, list):
        for k, v in enumerate(x):
            yield from _numbers(v, (*path, k))
    elif isinstance(x, (int, float)) and not isinstance(x, bool):
        yield path, x


def _replaced(x, path, value):
    """``x`` with the value at ``path`` replaced (containers along the path copied, ``x`` kept)."""
    if not path:
        return value
    copy = dict(x) if isinstance(x, dict) else list(x)
    copy[path[0]] = _replaced(x[path[0]], path[1:], value)
    return copy


def test_a_number_beyond_the_tolerance_is_a_difference_and_one_within_it_is_not(current):
    doc = current["report.json"]
    path, x = next((p, v) for p, v in _numbers(doc) if isinstance(v, float) and abs(v) > 1)
    beyond = json_differences(doc, _replaced(doc, path, x * (1 + 4 * SNAPSHOT_RTOL)))
    assert len(beyond) == 1 and str(x) in beyond[0], beyond
    assert json_differences(doc, _replaced(doc, path, x * (1 + SNAPSHOT_RTOL / 4))) == []
    # the absolute floor: residuals below it agree, numbers apart by more than it do not
    assert close(0.0, SNAPSHOT_ATOL / 2) and close(SNAPSHOT_ATOL / 4, -SNAPSHOT_ATOL / 4)
    assert not close(0.0, 2 * SNAPSHOT_ATOL)
    assert not close(x, x * (1 + 4 * SNAPSHOT_RTOL)) and close(x, x * (1 + SNAPSHOT_RTOL / 4))


def _plain_numbers(text: str) -> list[re.Match]:
    """The numbers of ``text`` written as plain decimals (``0.25``, ``3``), greater than 1."""
    return [m for m in snap_module._NUMBER.finditer(text)
            if re.fullmatch(r"[\d.]+", m.group(0)) and float(m.group(0)) > 1]


def _with_number_scaled(text: str, factor: float) -> str:
    """``text`` with its first plain number greater than 1 multiplied by ``factor``, written in full."""
    m = _plain_numbers(text)[0]
    return text[:m.start()] + repr(float(m.group(0)) * factor) + text[m.end():]


@pytest.mark.parametrize("name", [n for n in FILES if n != "report.json"])
def test_a_changed_word_is_a_difference(current, name):
    lines = current[name].splitlines()
    k, m = next((k, m) for k, line in enumerate(lines) if (m := re.search(r"[A-Za-z]{5,}", line)))
    lines[k] = lines[k][:m.start()] + "Changed" + lines[k][m.end():]
    diff = text_differences(current[name], "\n".join(lines) + "\n")
    assert len(diff) == 1 and diff[0].startswith(f"line {k + 1}: text"), diff


@pytest.mark.parametrize("name", [n for n in FILES if n != "report.json"])
def test_a_changed_number_in_a_line_is_caught_by_the_numeric_comparison(current, name):
    """The masked text stays the same; the number, beyond the tolerance, is a difference, within it not."""
    lines = current[name].splitlines()
    k = next(k for k, line in enumerate(lines) if _plain_numbers(line))
    beyond = _with_number_scaled(lines[k], 1 + 4 * SNAPSHOT_RTOL)
    assert masked(beyond)[0] == masked(lines[k])[0]
    diff = text_differences(current[name], "\n".join([*lines[:k], beyond, *lines[k + 1:]]) + "\n")
    assert len(diff) == 1 and diff[0].startswith(f"line {k + 1}: number"), diff
    within = _with_number_scaled(lines[k], 1 + SNAPSHOT_RTOL / 4)
    assert text_differences(current[name], "\n".join([*lines[:k], within, *lines[k + 1:]]) + "\n") == []


def test_a_changed_number_in_a_field_of_text_is_a_difference(current):
    doc = current["report.json"]
    k = next(k for k, c in enumerate(doc["claims"]) if _plain_numbers(c["headline"]))
    headline = doc["claims"][k]["headline"]
    changed = _replaced(doc, ("claims", k, "headline"), _with_number_scaled(headline, 1 + 4 * SNAPSHOT_RTOL))
    diff = json_differences(doc, changed)
    assert len(diff) == 1 and diff[0].startswith(f"claims[{doc['claims'][k]['id']}].headline: number"), diff


def test_residuals_in_text_agree_in_every_notation():
    """A rounding residual reads as one number, in LaTeX, Unicode and the page's text, so that the
    absolute floor applies to it."""
    for a, b in ((r"$7 \times 10^{-17}$", r"$3 \times 10^{-16}$"), ("7 × 10⁻¹⁷", "10⁻¹⁶"),
                 ("7×10^−17", "2.2e-16")):
        assert masked(a)[0] == masked(b)[0] and text_differences(a, b) == [], (a, b)
    assert text_differences("0.25", "0.26") != []


def test_write_stores_the_files_and_lists_what_changed(current, tmp_path, monkeypatch):
    """Each file written, and what a later write changed listed by file and line."""
    monkeypatch.chdir(tmp_path)
    current = {name: current[name] if name == "terminal" else {"schema": current["report.json"]["schema"]}
               if name == "report.json" else "text\n" for name in FILES}
    (tmp_path / "tests" / "snapshots").mkdir(parents=True)
    assert "replaced whole" in snap_module._write_views(current)
    assert stored_views(tmp_path) == current
    changed = {**current, "terminal": current["terminal"].replace("verdict", "Verdict", 1)}
    said = snap_module._write_views(changed)
    assert str(FILES["terminal"]) in said and "line " in said and str(FILES["report.md"]) not in said, said
    assert stored_views(tmp_path)["terminal"] == changed["terminal"]
    assert snap_module._write_views(changed) == "the quick run's files are unchanged"
    written = sorted(p.name for p in (tmp_path / "tests" / "snapshots").iterdir())
    assert written == sorted(p.name for p in FILES.values())          # no temporary file left beside them


@pytest.mark.parametrize("name, content, expected", [
    ("report.json", b"{not json", "snapshot"),
    ("report.json", b"[1, 2]", "of another shape"),
    ("report.md", b"ok \xff\xfe", "UTF-8"),
    ("terminal", None, "which is a folder"),
])
def test_a_corrupt_snapshot_file_is_the_packages_error(stored, tmp_path, name, content, expected):
    for n, rel in FILES.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_bytes(json.dumps(stored[n]).encode() if n == "report.json" else stored[n].encode())
    target = tmp_path / FILES[name]
    if content is None:
        target.unlink()
        target.mkdir()
    else:
        target.write_bytes(content)
    with pytest.raises(VerifyError, match=re.escape(expected)):
        stored_views(tmp_path)


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
