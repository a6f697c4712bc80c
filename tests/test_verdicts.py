"""The verdict rule, one row per branch, and the claim's weakest-part aggregation."""

from __future__ import annotations

import pytest

from verify.verdicts import ClaimResult, Counterexample, Numeric, Part, Symbolic, Verdict, claim_verdict

PROVED = Symbolic(claim="CX", status="proved")
PROVED_UNDER = Symbolic(claim="CX", status="proved", model_assumptions=["uniform weights"])
UNCHECKED = Symbolic(claim="CX", status="proved-with-unchecked-steps")
ROUND = Numeric("rounding", "max rel err 1e-16")
STAT = Numeric("statistical", "within 2 SE")
BAD = Numeric("disagree", "off by 30%")
CX = Counterexample("a case", {"x": 1})

RULE = [
    pytest.param(Part("p", "s", PROVED, ROUND), Verdict.EXACT, id="proved+rounding->exact"),
    pytest.param(Part("p", "s", PROVED, STAT), Verdict.HOLDS_UNDER_MODEL, id="proved+statistical->model"),
    pytest.param(Part("p", "s", PROVED_UNDER, ROUND), Verdict.HOLDS_UNDER_MODEL, id="assumptions->model"),
    pytest.param(Part("p", "s", PROVED, ROUND, assumptions=["equal V"]), Verdict.HOLDS_UNDER_MODEL,
                 id="numeric-assumptions->model"),
    pytest.param(Part("p", "s", PROVED, None), Verdict.HOLDS_UNDER_MODEL, id="proof-only->model"),
    pytest.param(Part("p", "s", UNCHECKED, STAT), Verdict.APPROXIMATE, id="unchecked-step->approximate"),
    pytest.param(Part("p", "s", None, STAT), Verdict.APPROXIMATE, id="numeric-only->approximate"),
    pytest.param(Part("p", "s", PROVED, BAD), Verdict.NOT_CHECKABLE, id="disagree->not-checkable"),
    pytest.param(Part("p", "s"), Verdict.NOT_CHECKABLE, id="nothing->not-checkable"),
    pytest.param(Part("p", "s", PROVED, ROUND, counterexample=CX, restored_by="H d_k <= d"), Verdict.REFUTED,
                 id="counterexample->refuted"),
]


@pytest.mark.parametrize("part,expected", RULE)
def test_rule(part, expected):
    assert part.verdict is expected


def test_refuted_part_must_name_what_restores_it():
    with pytest.raises(ValueError, match="restores"):
        Part("p", "s", counterexample=CX)


def test_claim_takes_the_weakest_part():
    exact = Part("a", "s", PROVED, ROUND)
    model = Part("b", "s", PROVED_UNDER, ROUND)
    refuted = Part("c", "s", counterexample=CX, restored_by="x")
    assert claim_verdict([exact]) is Verdict.EXACT
    assert claim_verdict([exact, model]) is Verdict.HOLDS_UNDER_MODEL
    assert claim_verdict([exact, model, refuted]) is Verdict.REFUTED
    assert claim_verdict([]) is Verdict.NOT_CHECKABLE
    res = ClaimResult("CX", "t", "s", [exact, model, refuted])
    doc = res.to_dict()
    assert doc["verdict"] == "refuted as stated"
    assert doc["assumptions"] == ["uniform weights"]
    assert doc["restored_by"] == ["c: x"]
