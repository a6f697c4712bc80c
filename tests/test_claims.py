"""The same structural checks over every registered claim (scikit-learn's ``check_estimator`` is the
model): each claim's parts, thresholds and replays as declared, every replay's example replayed,
every row of bad input its schema implies refused by name, every counterexample of the quick run
named after its part and replayed to the same judgement with the criterion that judged it, and every
replay kind saved as a counterexample file and replayed from it to the judgement of its example.
Nothing here names a claim: a claim added to the package is checked by this file as it is."""

from __future__ import annotations

import copy
import json
import re

import pytest

from proofs import markup
from verify.claims import CLAIMS
from verify.errors import VerifyError
from verify.io import jsonable
from verify.judgment.claim import PART_ID, Cap, Replay, Threshold
from verify.judgment.counterexamples import ReplayOutcome, save
from verify.judgment.verdicts import Role
from verify.replay import lines, record, replay

#: Every replay kind of every claim (a replay several parts share: once per part).
KINDS = [pytest.param(part, rp, id=rp.kind) for claim in CLAIMS.values() for part, rp in claim.replays.items()]
#: A snake_case word: a field name where a reader reads words (tests/test_reader.py's FIELD_NAME).
FIELD_NAME = re.compile(r"\b[a-z][a-z0-9]*_[a-z0-9_]+\b")
#: Every replay function once (a replay several parts share is one function).
REPLAYS = [rp for claim in CLAIMS.values() for rp in {id(r.func): r for r in claim.replays.values()}.values()]
#: Every bad-input row each replay's schema implies.
BAD_ROWS = [pytest.param(rp, params, name, id=f"{rp.claim}-{rp.part}-{label}")
            for rp in REPLAYS for label, params, name in rp.schema.bad_rows(rp.example)]


def part_of(result, pid):
    """The part ``pid`` of a claim's result (the claims' own tests read their parts by it)."""
    return next(p for p in result.parts if p.id == pid)


@pytest.mark.parametrize("claim", list(CLAIMS))
def test_every_part_is_declared_with_an_id_a_label_and_what_its_role_needs(claim):
    c = CLAIMS[claim]
    assert c.parts, f"{claim} declares no part"
    for spec in c.parts:
        assert PART_ID.fullmatch(spec.id), f"{claim} part {spec.id!r}: an id is hyphenated lower-case words"
        assert spec.label, f"{claim} part {spec.id!r} has no label"
        assert spec.role is not Role.DETAIL or spec.stated, f"{claim} part {spec.id!r}: a detail names its stated form"
    assert any(s.role is Role.CORE for s in c.parts), f"{claim} has no core part"


@pytest.mark.parametrize("claim", list(CLAIMS))
def test_thresholds_and_caps_are_named_with_a_one_line_reason(claim):
    values = CLAIMS[claim].values
    for name, v in values.items():
        assert isinstance(v, (Threshold, Cap)) and v.name == name
        assert v.reason.strip() and "\n" not in v.reason and len(v.reason) <= 300, f"{claim}.{name}: {v.reason!r}"


#: Every replay schema that bounds its work.
CAPPED = [pytest.param(rp, id=rp.kind) for rp in REPLAYS if rp.schema.cap is not None]


@pytest.mark.parametrize("rp", CAPPED)
def test_a_replays_work_at_its_cap_is_admitted_and_one_more_is_refused(rp: Replay):
    """Both sides of each work cap, with the work the schema computes replaced by the cap and the cap + 1."""
    schema, cap = copy.copy(rp.schema), rp.schema.cap
    schema.work = lambda p: cap
    assert schema.validate(rp.example) is not None
    schema.work = lambda p: cap + 1
    with pytest.raises(VerifyError, match=f"at most {cap:,}"):
        schema.validate(rp.example)


@pytest.mark.parametrize("part, rp", KINDS)
def test_every_replay_kind_replays_from_its_file_with_the_criterion_that_judged_it(part, rp: Replay, tmp_path):
    """Each kind's example is valid and replays; saved as a counterexample file (whatever its
    outcome) and replayed from the file, it is judged again with the same params, by its own kind, to
    the same outcome and summary as the saved ones."""
    assert rp.kind == f"{rp.claim.lower()}.{part}" and rp.schema.validate(rp.example) is not None
    outcome = rp(rp.example)
    assert isinstance(outcome, ReplayOutcome) and isinstance(outcome.violates, bool) and outcome.summary
    markup.check(outcome.summary, f"{rp.kind} summary")      # printed rendered: well-formed markup
    markup.check(outcome.criterion, f"{rp.kind} criterion")
    json.dumps(outcome.figures, allow_nan=False, default=float)
    statement = next(p.statement for p in CLAIMS[rp.claim].parts if p.id == part)
    path = save(tmp_path, claim=rp.claim, part=part, kind=rp.kind, statement=statement, params=rp.example,
                outcome=outcome)
    doc, again = replay(path)
    assert path.name == f"{rp.claim}-{part}.json" and doc["kind"] == rp.kind and doc["params"] == jsonable(rp.example)
    assert (doc["expected"]["violates"], doc["expected"]["summary"]) == (outcome.violates, outcome.summary)
    assert (again.violates, again.summary) == (outcome.violates, outcome.summary)
    _reads_as_words(lines(doc, again), rp.kind)
    rec = record(doc, again)
    assert json.loads(json.dumps(rec, allow_nan=False)) == rec and rec["replayed"]["summary"] == again.summary


def _reads_as_words(printed: list[str], kind: str) -> None:
    """What ``replay`` prints reads as words: the outcome named, every figure labelled, no JSON,
    no Python value, no field name, on every line (the statement, summary and criterion too)."""
    text = "\n".join(printed)
    assert "\n  replayed: " in text and re.search(r"\n  reproduced: (yes|no), ", text), (kind, text[:400])
    assert re.search(r"\n  replayed: (violates the statement|holds)", text), kind
    bad = re.findall(r"[{}\[\]]|\b(?:True|False|None)\b", text) + FIELD_NAME.findall(text)
    assert not bad, (kind, sorted(set(bad)), text[:2000])


@pytest.mark.parametrize("rp, params, name", BAD_ROWS)
def test_every_bad_input_a_schema_implies_is_refused_by_name(rp: Replay, params, name):
    with pytest.raises(VerifyError) as exc:
        rp(params)
    assert str(exc.value).startswith(f"{name}:"), str(exc.value)


@pytest.mark.parametrize("claim", list(CLAIMS))
def test_every_counterexample_of_the_quick_run_is_its_parts_and_replays_as_judged(claim, quick_run):
    """Each saved file is ``<claim>-<part>.json`` of a declared part, of that part's kind, and its
    replay judges as the run did, with the criterion that judged it (the saved params)."""
    result, out = quick_run(claim)
    owned = {p.id: p for p in result.parts}
    for part in result.parts:
        cx = part.counterexample
        if cx is None or cx.file is None:
            continue
        path = out / cx.file
        assert path.name == f"{claim}-{part.id}.json" and part.id in owned
        doc, outcome = replay(path)
        rp = CLAIMS[claim].replays.get(part.id)
        if rp is not None:
            assert doc["kind"] == rp.kind and doc["params"] == cx.data["params"]
        assert outcome.violates == doc["expected"]["violates"] is True
        assert outcome.summary == doc["expected"]["summary"]
