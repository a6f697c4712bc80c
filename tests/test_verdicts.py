"""The verdict rule as tables, expected outcomes written out by hand: every kind of evidence in every
role (its grade, its effect, the claim's verdict); cores -> a reading's verdict; readings -> the
claim's; that no detail, premise or scope part can change a verdict; the headline and report fields."""

from __future__ import annotations

import itertools

import pytest

from verify.errors import DefinitionError
from verify.judgment.verdicts import (HEADLINE_FINDING_MAX, ClaimResult, Counterexample, Effect, Numeric, Part, Reading,
                                      Role, Symbolic, Verdict, claim_verdict)

PROVED = Symbolic(claim="CX", status="proved")
PROVED_UNDER = Symbolic(claim="CX", status="proved", model_assumptions=["uniform weights"])
UNCHECKED = Symbolic(claim="CX", status="proved-with-unchecked-steps")
OFF = Symbolic(claim="CX", status="proved", comparisons=[{"name": "c", "stated": "s", "derived": "d", "holds": False,
                                                          "method": "m", "detail": "", "uses": []}])
ROUND = Numeric("rounding", "max rel err 1e-16")
STAT = Numeric("statistical", "within 2 SE")
MEASURED = Numeric("measured", "an effect of 0.12 with its standard error 0.01")
BAD = Numeric("disagree", "off by 30%")
CX = Counterexample("a case", {"x": 1}, file="counterexamples/CX-p.json")
#: an experiment that could not have decided (why; what would decide it)
OPEN = "the positive control shows no effect; more steps would decide"

# what each role needs besides its evidence
EXTRA = {Role.CORE: {}, Role.DETAIL: {"stated": "s", "derived": "d"}, Role.PREMISE: {"regime": "n = 64"},
         Role.SCOPE: {"regime": "H d_k > d"}}


def part(role=Role.CORE, sym=None, num=None, cx=None, pid="p", reading="", **kw):
    extra = dict(EXTRA[role])
    if cx is not None and role in (Role.CORE, Role.SCOPE):
        extra["restored_by"] = "H d_k <= d"
    extra.update(kw)
    return Part(pid, role, "statement", symbolic=sym, numeric=num, counterexample=cx, reading=reading, **extra)


V, F = Verdict, Effect
HOLDS, FAILS, NONE, OPEN_ = (F.DETAIL_HOLDS, F.PREMISE_HOLDS, F.SCOPE_HOLDS), (F.CORRECTION, F.PREMISE_FAILS, F.LIMIT), \
    (F.NOT_CHECKED,) * 3, (F.UNDECIDED,) * 3
#: kind of evidence -> (the evidence, its grade, its effect as a detail, a premise and a scope probe). As
#: the core it sets the claim's verdict, the grade; beside an exact core it never changes it.
RULE = {
    "exact": (dict(sym=PROVED, num=ROUND), V.EXACT, HOLDS),
    "proved-statistical": (dict(sym=PROVED, num=STAT), V.HOLDS_UNDER_MODEL, HOLDS),
    "model-assumption": (dict(sym=PROVED_UNDER, num=ROUND), V.HOLDS_UNDER_MODEL, HOLDS),
    "numeric-assumption": (dict(sym=PROVED, num=ROUND, assumptions=["equal V"]), V.HOLDS_UNDER_MODEL, HOLDS),
    "under-model": (dict(sym=PROVED_UNDER), V.HOLDS_UNDER_MODEL, HOLDS),
    "proof-only": (dict(sym=PROVED), V.HOLDS_UNDER_MODEL, HOLDS),
    "unchecked-step": (dict(sym=UNCHECKED, num=STAT), V.APPROXIMATE, HOLDS),
    "statistical-only": (dict(num=STAT), V.APPROXIMATE, HOLDS),
    "measured-only": (dict(num=MEASURED), V.APPROXIMATE, HOLDS),
    "refuted": (dict(num=STAT, cx=CX), V.REFUTED, FAILS),
    "refuted-despite-proof": (dict(sym=PROVED, num=ROUND, cx=CX), V.REFUTED, FAILS),
    "derived-differs": (dict(sym=OFF, num=ROUND), V.EXACT, FAILS),      # a core needs a counterexample for it
    "disagree": (dict(sym=PROVED, num=BAD), V.NOT_CHECKABLE, NONE),
    "nothing": (dict(), V.NOT_CHECKABLE, NONE),
    "undecided": (dict(num=STAT, undecided=OPEN), V.UNDECIDED, OPEN_),
    "undecided-despite-proof": (dict(sym=PROVED, num=ROUND, undecided=OPEN), V.UNDECIDED, OPEN_),
    "undecided-despite-disagreement": (dict(num=BAD, undecided=OPEN), V.UNDECIDED, OPEN_),
}
ROLES = (Role.DETAIL, Role.PREMISE, Role.SCOPE)


@pytest.mark.parametrize("role", list(Role), ids=str)
@pytest.mark.parametrize("kind", list(RULE))
def test_every_kind_of_evidence_in_every_role(kind, role):
    evidence, grade, effects = RULE[kind]
    if role is Role.CORE and kind == "derived-differs":
        with pytest.raises(DefinitionError, match="needs a replayable counterexample"):
            part(**evidence)
        return
    p = part(role, **evidence)
    assert p.evidence is grade
    if role is Role.CORE:
        res = ClaimResult("CX", "t", "s", [p])
        assert p.effect is F.SETS_VERDICT and (res.verdict, res.reading) == (grade, "")
        assert res.to_dict()["evidence"]["parts"][0]["outcome"] == grade.value
        return
    effect = effects[ROLES.index(role)]
    res = ClaimResult("CX", "t", "s", [part(pid="core", sym=PROVED, num=ROUND), p])
    assert p.effect is effect and res.verdict is V.EXACT                  # never the verdict
    assert [q.id for q in res.corrections_parts] == (["p"] if effect is F.CORRECTION else [])
    assert [q.id for q in res.limits_parts] == (["p"] if effect is F.LIMIT else [])
    assert [q.id for q in res.premise_parts] == (["p"] if role is Role.PREMISE else [])
    assert [q.id for q in res.undecided_parts] == (["p"] if effect is F.UNDECIDED else [])
    assert res.to_dict()["evidence"]["parts"][1]["outcome"] == effect.value


# -- the claim's verdict from its cores ------------------------------------------------------------
CORE_SETS = [
    pytest.param([dict(sym=PROVED, num=ROUND), dict(num=STAT), dict()], V.APPROXIMATE, id="unchecked-core-ignored"),
    pytest.param([], V.NOT_CHECKABLE, id="no-core"),
    pytest.param([dict(sym=PROVED, num=ROUND), dict(num=STAT, undecided=OPEN)], V.UNDECIDED,
                 id="an-undecided-core-leaves-the-reading-undecided"),
    pytest.param([dict(num=STAT, undecided=OPEN), dict(cx=CX)], V.REFUTED, id="refuted-beats-undecided"),
    pytest.param([dict(num=STAT, undecided=OPEN), dict()], V.UNDECIDED, id="undecided-beats-unchecked"),
]


@pytest.mark.parametrize("cores,verdict", CORE_SETS)
def test_verdict_from_cores(cores, verdict):
    assert claim_verdict([part(pid=f"c{i}", **e) for i, e in enumerate(cores)]) == (verdict, "")


NON_CORE = [(role, RULE[kind][0]) for role in ROLES
            for kind in ("exact", "measured-only", "refuted", "derived-differs", "disagree", "nothing", "undecided")]


@pytest.mark.parametrize("core", [dict(sym=PROVED, num=ROUND), dict(sym=PROVED_UNDER), dict(num=STAT), dict(cx=CX),
                                  dict(num=STAT, undecided=OPEN)],
                         ids=["exact", "model", "approximate", "refuted", "undecided"])
def test_no_detail_premise_or_scope_part_changes_a_verdict(core):
    """Every combination of up to two non-core parts, of any role and outcome, beside the core."""
    base = claim_verdict([part(pid="core", **core)])
    for k in (1, 2):
        for combo in itertools.combinations(range(len(NON_CORE)), k):
            extra = [part(NON_CORE[i][0], pid=f"x{i}", **NON_CORE[i][1]) for i in combo]
            assert claim_verdict([part(pid="core", **core), *extra]) == base, combo


@pytest.mark.parametrize("role,kw,match", [
    (Role.CORE, {"counterexample": CX}, "restores"),
    (Role.DETAIL, {}, "stated and its derived"),
    (Role.PREMISE, {}, "regime"),
    (Role.SCOPE, {}, "regime"),
    (Role.DETAIL, {"stated": "s", "derived": "d", "reading": "i"}, "reading"),
    (Role.CORE, {"finding": "a; b"}, "one phrase"),
    (Role.CORE, {"finding": "x" * (HEADLINE_FINDING_MAX + 1)}, "headline"),
    (Role.SCOPE, {"counterexample": CX, "undecided": OPEN, "regime": "r"}, "undecided part refutes nothing"),
], ids=["refuted-core-restorer", "detail-forms", "premise-regime", "scope-regime", "reading-on-detail",
        "finding-semicolon", "finding-long", "undecided-with-counterexample"])
def test_parts_declare_what_their_role_needs(role, kw, match):
    with pytest.raises(DefinitionError, match=match):
        Part("p", role, "s", **kw)


# -- readings -----------------------------------------------------------------------------------
def test_the_best_reading_sets_the_verdict_and_the_other_is_named():
    parts = [part(pid="i", reading="i", sym=PROVED_UNDER, num=ROUND, finding="holds in H"),
             part(pid="ii", reading="ii", cx=CX, finding="same rate in n")]
    res = ClaimResult("CX", "t", "s", parts, readings=[Reading("i", "in H"), Reading("ii", "in n")])
    assert (res.verdict, res.reading) == (V.HOLDS_UNDER_MODEL, "i")
    assert res.headline == "holds under model (reading i, in H); reading ii, in n: refuted (same rate in n)"
    assert [r["verdict"] for r in res.to_dict()["readings"]] == ["holds under model", "refuted"]


def test_readings_must_be_declared():
    with pytest.raises(DefinitionError, match="readings"):
        ClaimResult("CX", "t", "s", [part(pid="i", reading="i", sym=PROVED)])
    with pytest.raises(DefinitionError, match="unique"):
        ClaimResult("CX", "t", "s", [part(pid="a", sym=PROVED), part(pid="a", sym=PROVED)])


#: a core part of each grade
E, M, A, R, N = (dict(sym=PROVED, num=ROUND), dict(sym=PROVED_UNDER), dict(num=STAT), dict(cx=CX), dict())
_V = {"E": V.EXACT, "M": V.HOLDS_UNDER_MODEL, "A": V.APPROXIMATE, "R": V.REFUTED, "N": V.NOT_CHECKABLE}
_EV = {"E": E, "M": M, "A": A, "R": R, "N": N}

#: two core parts of one reading -> its verdict: a refuted one refutes; else the weakest checkable
#: (exact > holds under model > approximate); a part that is not checkable is left out.
READING_PAIRS = {
    "EE": "E", "EM": "M", "EA": "A", "ER": "R", "EN": "E",
    "MM": "M", "MA": "A", "MR": "R", "MN": "M",
    "AA": "A", "AR": "R", "AN": "A",
    "RR": "R", "RN": "R",
    "NN": "N",
}


@pytest.mark.parametrize("cores,expected", [(a + b, READING_PAIRS.get(a + b) or READING_PAIRS[b + a])
                                            for a, b in itertools.product("EMARN", repeat=2)] +
                         [("EMA", "A"), ("ENN", "E"), ("NAN", "A"), ("EER", "R"), ("NNN", "N"), ("MEM", "M")])
def test_reading_verdict_of_two_cores_either_order_and_of_three(cores, expected):
    assert claim_verdict([part(pid=f"c{i}", **_EV[g]) for i, g in enumerate(cores)]) == (_V[expected], "")


#: the verdicts of readings i and ii (declared in that order) -> (claim verdict, deciding reading):
#: the best reading, exact > holds under model > approximate > refuted > not checkable; a tie goes
#: to the reading declared first.
READING_CHOICE = [
    ("EM", "E", "i"), ("ME", "E", "ii"), ("MA", "M", "i"), ("AM", "M", "ii"), ("AR", "A", "i"), ("RA", "A", "ii"),
    ("RN", "R", "i"), ("NR", "R", "ii"), ("EN", "E", "i"), ("NE", "E", "ii"), ("ER", "E", "i"), ("RE", "E", "ii"),
    ("EE", "E", "i"), ("MM", "M", "i"), ("AA", "A", "i"), ("RR", "R", "i"), ("NN", "N", "i"),
]


@pytest.mark.parametrize("pair,verdict,reading", READING_CHOICE, ids=[p for p, _, _ in READING_CHOICE])
def test_the_best_reading_decides_and_a_tie_goes_to_the_first_declared(pair, verdict, reading):
    parts = [part(pid=f"r{rid}", reading=rid, **_EV[g]) for rid, g in zip(("i", "ii"), pair)]
    assert claim_verdict(parts) == (_V[verdict], reading)
    res = ClaimResult("CX", "t", "s", parts, readings=[Reading("i", "in H"), Reading("ii", "in n")])
    assert (res.verdict, res.reading) == (_V[verdict], reading)
    assert [p.id for p in res.core_parts] == [f"r{reading}"]


def test_a_tie_goes_to_the_first_declared_reading_whatever_its_id():
    parts = [part(pid="b", reading="ii", **M), part(pid="a", reading="i", **M)]
    assert claim_verdict(parts) == (V.HOLDS_UNDER_MODEL, "ii")


def test_three_readings_best_wins_and_each_reading_takes_its_weakest_core():
    parts = [part(pid="a1", reading="a", **E), part(pid="a2", reading="a", **A),       # a: approximate
             part(pid="b1", reading="b", **M), part(pid="b2", reading="b", **N),       # b: holds under model
             part(pid="c1", reading="c", **E), part(pid="c2", reading="c", **R)]       # c: refuted
    assert claim_verdict(parts) == (V.HOLDS_UNDER_MODEL, "b")


def test_an_undecided_reading_ranks_below_evidence_and_above_a_refutation():
    readings = (Reading("i", "one"), Reading("ii", "two"))
    open_, refuted, approx = dict(num=STAT, undecided=OPEN), dict(cx=CX), dict(num=STAT)
    res = ClaimResult("CX", "t", "s", [part(pid="a", reading="i", **open_), part(pid="b", reading="ii", **refuted)],
                      readings=readings)
    assert (res.verdict, res.reading) == (V.UNDECIDED, "i")
    res = ClaimResult("CX", "t", "s", [part(pid="a", reading="i", **open_), part(pid="b", reading="ii", **approx)],
                      readings=readings)
    assert (res.verdict, res.reading) == (V.APPROXIMATE, "ii")
    assert "reading i, one: undecided" in res.headline


# -- the headline and the report fields --------------------------------------------------------------
def test_headline_and_fields_are_computed_from_the_parts():
    parts = [part(pid="core", sym=PROVED, num=ROUND),
             part(Role.DETAIL, pid="bw", sym=PROVED, cx=CX, stated="h = 1/sqrt(d_k)", derived="scale",
                  finding="1/sqrt(d_k) is a scale"),
             part(Role.DETAIL, pid="ok", sym=PROVED, finding="fine"),
             part(Role.PREMISE, pid="prem", num=STAT, cx=CX, finding="shared noise"),
             part(Role.SCOPE, pid="lim1", num=STAT, cx=CX, finding="beyond d"),
             part(Role.SCOPE, pid="lim2", num=STAT, cx=CX, finding="few directions"),
             part(Role.SCOPE, pid="held", num=STAT)]
    res = ClaimResult("CX", "t", "s", parts)
    assert res.headline == ("exact; 1 correction: 1/sqrt(d_k) is a scale; premise fails on NW heads (shared noise); "
                            "2 limits: (1) beyond d, (2) few directions")
    d = res.to_dict()
    assert d["verdict"] == "exact" and d["headline"] == res.headline
    assert [c["part"] for c in d["corrections"]] == ["bw"]
    assert d["corrections"][0]["stated"] == "h = 1/sqrt(d_k)" and d["corrections"][0]["derived"] == "scale"
    assert [p["outcome"] for p in d["premise"]] == ["premise fails on NW heads"]
    assert [x["part"] for x in d["limits"]] == ["lim1", "lim2"] and d["limits"][0]["boundary"] == "H d_k <= d"
    assert d["limits"][0]["counterexample"] == "counterexamples/CX-p.json"


def test_refuted_headline_names_the_failing_core_and_restoring_assumption():
    res = ClaimResult("CX", "t", "s", [part(pid="law", cx=CX, finding="no model gives the law"),
                                       part(pid="opt", sym=PROVED_UNDER)])
    assert res.headline == "refuted: no model gives the law"
    assert res.to_dict()["restored_by"] == ["H d_k <= d"]
    assert res.assumptions == ["uniform weights"]
    twice = ClaimResult("CX", "t", "s", [part(pid="keys", cx=CX), part(pid="queries", cx=CX)])
    assert twice.restored_by == ["H d_k <= d"]              # one assumption restoring two parts: listed once


@pytest.mark.parametrize("cores,expected", [
    ([dict(pid="a", finding="holds", **A), dict(pid="b", finding="unmeasured", **N)],
     "approximate: holds; not checked: unmeasured"),
    ([dict(pid="a", finding="moves by 0.08", **A), dict(pid="b", finding="moves by 0.01", **A)],
     "approximate: (1) moves by 0.08, (2) moves by 0.01"),
    ([dict(pid="a", finding="proved", **E), dict(pid="b", finding="measured", **A)], "approximate: measured"),
    ([dict(pid="a", **A), dict(pid="b", **N), dict(pid="c", **N)], "approximate; not checked: (1) b, (2) c"),
    ([dict(pid="a", finding="fails here", **R), dict(pid="b", finding="unmeasured", **N)], "refuted: fails here"),
    ([dict(pid="a", finding="x", **R), dict(pid="b", finding="y", **R)], "refuted: (1) x, (2) y"),
    ([dict(pid="a", **R)], "refuted: statement"),
], ids=["one-unchecked", "two-measured", "measured-beside-proved", "two-unchecked-by-id", "refuted-hides-unchecked",
        "two-refuted", "refuted-no-finding"])
def test_headline_names_failed_then_unchecked_cores(cores, expected):
    assert ClaimResult("CX", "t", "s", [part(**c) for c in cores]).headline == expected


def test_headline_counts_and_numbers_corrections_and_limits():
    parts = [part(pid="core", **E),
             part(Role.DETAIL, pid="d1", cx=CX, finding="first"), part(Role.DETAIL, pid="d2", sym=OFF, finding="second"),
             part(Role.DETAIL, pid="d3", **E, finding="holds"), part(Role.SCOPE, pid="s1", cx=CX, finding="edge"),
             part(Role.PREMISE, pid="p1", num=STAT, finding="measured"), part(Role.PREMISE, pid="p2", **N)]
    assert ClaimResult("CX", "t", "s", parts).headline == (
        "exact; 2 corrections: (1) first, (2) second; premise holds on NW heads (measured); not checkable; "
        "1 limit: edge")


def test_headline_says_undecided_in_words_apart_from_approximate():
    """An undecided reading names what could not decide; undecided non-core parts are counted by
    label; a premise that could not decide reads "premise undecided"; report.json carries
    ``outcome`` and ``reason`` for each, and the claim's ``undecided`` list."""
    parts = [part(pid="core", finding="the heads do not move", num=STAT, undecided=OPEN),
             part(Role.SCOPE, pid="s1", num=STAT, undecided=OPEN, label="Gaussian design"),
             part(Role.PREMISE, pid="p1", num=STAT, undecided=OPEN, finding="R² near 0")]
    res = ClaimResult("CX", "t", "s", parts)
    assert res.verdict is V.UNDECIDED
    assert res.headline == ("undecided: the heads do not move; premise undecided (R² near 0); "
                            "1 undecided: Gaussian design")
    doc = res.to_dict()
    assert [p["outcome"] for p in doc["evidence"]["parts"]] == ["undecided", "undecided", "undecided"]
    assert {p["reason"] for p in doc["evidence"]["parts"]} == {OPEN}
    assert [u["part"] for u in doc["undecided"]] == ["core", "s1", "p1"] and doc["limits"] == []
    assert doc["premise"][0]["outcome"] == "undecided"
