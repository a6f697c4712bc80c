"""The derivation framework: each check method confirms true steps and rejects false ones."""

from __future__ import annotations

import pytest
import sympy as sp

from proofs.core import Derivation, DerivationError

x, y = sp.symbols("x y", positive=True)
a = sp.Symbol("a", real=True)


def fresh() -> Derivation:
    d = Derivation(claim="CX", title="test", stated="nothing")
    d.assume("pos", "x, y > 0", kind="setting")
    d.assume("model", "a restriction", kind="model")
    return d


TRUE_STEPS = [
    pytest.param(sp.Eq((x + y) ** 2, x**2 + 2 * x * y + y**2), "expand", {}, id="expand"),
    pytest.param(sp.Eq(sp.sin(x) ** 2 + sp.cos(x) ** 2, 1), "simplify", {}, id="simplify"),
    pytest.param(sp.Eq(sp.sqrt(x**2), x, evaluate=False), "equals", {}, id="equals"),
    pytest.param(sp.Eq((x**3 - y**3) / (x - y), x**2 + x * y + y**2), "rational", {}, id="rational"),
    pytest.param(sp.Ge(x**2 + y**2, 2 * x * y), "certificate", {"certificate": (x - y) ** 2}, id="certificate"),
    pytest.param(sp.Ge(x + y, x, evaluate=False), "nonneg", {}, id="nonneg"),
    pytest.param(sp.Eq(sp.limit(1 / x, x, sp.oo), 0), "custom",
                 {"check": lambda: sp.limit(1 / x, x, sp.oo) == 0}, id="custom"),
]

FALSE_STEPS = [
    pytest.param(sp.Eq((x + y) ** 2, x**2 + y**2), "expand", {}, id="expand"),
    pytest.param(sp.Eq(sp.sin(x) ** 2 + sp.cos(x) ** 2, 2), "simplify", {}, id="simplify"),
    pytest.param(sp.Eq(sp.sqrt(a**2), a), "equals", {}, id="equals-needs-sign"),
    pytest.param(sp.Eq((x**3 - y**3) / (x - y), x**2 + y**2), "rational", {}, id="rational"),
    pytest.param(sp.Ge(x**2 + y**2, 3 * x * y), "certificate", {"certificate": (x - y) ** 2}, id="certificate"),
    pytest.param(sp.Ge(x, x + y, evaluate=False), "nonneg", {}, id="nonneg"),
    pytest.param(sp.true, "custom", {"check": lambda: False}, id="custom"),
    pytest.param(sp.true, "custom", {"check": lambda: 1 / 0}, id="custom-raises"),
]


@pytest.mark.parametrize("relation,method,extra", TRUE_STEPS)
def test_true_steps_check(relation, method, extra):
    d = fresh()
    st = d.step("s", relation, by=method, uses=["pos"], **extra)
    assert st.status == "checked", st.detail
    assert d.status == "proved"
    d.raise_on_failure()


@pytest.mark.parametrize("relation,method,extra", FALSE_STEPS)
def test_false_steps_fail_and_are_named(relation, method, extra):
    d = fresh()
    d.step("good", sp.Eq(x, x, evaluate=False), by="expand")
    d.step("the_bad_step", relation, by=method, **extra)
    assert d.status == "failed"
    with pytest.raises(DerivationError, match="CX/the_bad_step"):
        d.raise_on_failure()


def test_unchecked_steps_are_marked_not_accepted():
    d = fresh()
    d.step("hard", sp.Eq(x, x, evaluate=False), by="unchecked", reason="needs a measure-theoretic argument")
    assert d.status == "proved-with-unchecked-steps"
    assert [s.name for s in d.unchecked] == ["hard"]
    assert d.steps[0].detail == "needs a measure-theoretic argument"


def test_assumptions_must_exist_and_results_cover_their_symbols():
    d = fresh()
    with pytest.raises(ValueError, match="unknown assumptions"):
        d.step("s", sp.Eq(x, x, evaluate=False), by="expand", uses=["nope"])
    with pytest.raises(ValueError, match="miss free symbols"):
        d.result("r", x + y, args=(x,))
    r = d.result("r", x + y, args=(x, y), uses=["model"])
    assert d.model_assumptions(r.uses)[0].name == "model"


def test_comparison_false_is_a_finding_not_a_failure():
    d = fresh()
    d.compare("law", stated="x grows", derived="x is constant", holds=False, method="limit")
    assert d.status == "proved"
    assert d.to_dict()["comparisons"][0]["holds"] is False


def test_a_relation_sympy_already_evaluated_is_rejected():
    """A step must keep its statement: Eq(x, x) evaluates to True and would record only 'True'."""
    d = fresh()
    with pytest.raises(ValueError, match="evaluate=False"):
        d.step("s", sp.Eq(x, x), by="expand")
