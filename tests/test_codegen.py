"""The generated module: current with the derivations, equal to SymPy's own evaluation, and used.

Every generated function (numpy and mpmath) is compared at points drawn by hypothesis with
``expr.evalf(50)`` of the derived SymPy expression at the same exact input; every one is called by
name somewhere outside this file, and nothing looks one up by a built string.
"""

from __future__ import annotations

import math
import re
from pathlib import Path

import mpmath
import pytest
import sympy as sp
from hypothesis import assume, given, settings
from hypothesis import strategies as st

import proofs.codegen as codegen
import verify.numeric.formulas as generated
from proofs import all_derivations
from proofs.codegen import TARGET, function_name, render, write

# float64 evaluation of a printed expression: a few ulps per operation, with moderate cancellation
# in the longer closed forms (e.g. differences of geometric sums).
NUMPY_RTOL = 1e-9
# mpmath at 50 digits against evalf(50): both carry ~50 digits; allow 10 for cancellation.
MPMATH_RTOL = mpmath.mpf("1e-40")

RESULTS = [(der.claim, r) for der in all_derivations() for r in der.results.values() if r.codegen]


def test_generated_module_is_current():
    assert TARGET.read_text() == render(), "verify/formulas.py is stale: run `python -m proofs codegen`"


def test_codegen_writes_atomically_and_check_compares(tmp_path, monkeypatch, capsys):
    """Both writers go through proofs.cache.atomic_write (no partial file, no temporary left);
    ``--check`` then finds the file current, and stale after an edit."""
    calls = []
    real = codegen.atomic_write
    monkeypatch.setattr(codegen, "atomic_write", lambda path, data: calls.append(path) or real(path, data))
    target = tmp_path / "formulas.py"
    assert write(target) == target and target.read_text() == render()
    monkeypatch.setattr(codegen, "TARGET", tmp_path / "main.py")
    assert codegen.main([]) == 0 and codegen.main(["--check"]) == 0
    assert calls == [target, tmp_path / "main.py"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["formulas.py", "main.py"]
    (tmp_path / "main.py").write_text(render() + "# edited\n")
    assert codegen.main(["--check"]) == 1
    assert "out of date" in capsys.readouterr().err


def test_every_result_is_generated_once_as_declared():
    names = [function_name(c, r.name) + {"numpy": "", "mpmath": "_mp"}[f] for c, r in RESULTS for f in r.codegen]
    assert len(names) == len(set(names)) and sorted(generated.__all__) == sorted(names)
    assert all(r.codegen in (("numpy",), ("mpmath",), ("numpy", "mpmath")) for _, r in RESULTS)


ROOT = Path(__file__).resolve().parent.parent
#: Where generated functions are called: the package, the tests, the notebooks, the tools.
CALLERS = [p for pattern in ("verify/**/*.py", "tests/**/*.py", "notebooks/*.ipynb", "tools/**/*.py")
           for p in sorted(ROOT.glob(pattern))
           if p.name not in ("formulas.py", "test_codegen.py") and "mutant_lists" not in p.parts]


def test_every_generated_function_is_called_by_name():
    """Nothing generated that nothing calls (issue 33): each generated name appears, as a whole
    word, in the package, a test, a notebook or a tool; and no caller builds a name to look up."""
    text = "\n".join(p.read_text(encoding="utf-8") for p in CALLERS)
    unused = [n for n in generated.__all__ if not re.search(rf"\b{n}\b", text)]
    assert unused == [], f"generated but never called: {unused}; drop them from the result's codegen"
    built = re.findall(r"getattr\(\s*(?:formulas|_F|F|generated)\b[^)]*\)|formulas\.__dict__\[", text)
    assert built == []


def _strategy(sym: sp.Symbol, domain: dict):
    if sym in domain:
        lo, hi = (float(v) for v in domain[sym])
        if sym.is_integer:
            return st.integers(math.ceil(lo), math.floor(hi))
        return st.floats(lo, hi, allow_nan=False, allow_infinity=False)
    if sym.is_integer:
        return st.integers(1 if sym.is_positive else 0, 12) if sym.is_nonnegative else st.integers(-12, 12)
    if sym.is_positive:
        return st.floats(0.05, 20.0)
    if sym.is_nonnegative:
        return st.floats(0.0, 20.0)
    return st.floats(-10.0, 10.0)


def _close(a, b, rtol) -> bool:
    return abs(a - b) <= rtol * max(1, abs(b))


@pytest.mark.parametrize("claim,result", RESULTS, ids=[f"{c}.{r.name}" for c, r in RESULTS])
@settings(max_examples=10)
@given(data=st.data())
def test_generated_code_matches_evalf50(claim, result, data):
    values = [data.draw(_strategy(a, result.domain), label=str(a)) for a in result.args]
    # sp.Float(v, 60) holds the binary double exactly; a Rational would make SymPy try to
    # factor 53-bit numerators under fractional powers.
    exact = {a: sp.Integer(v) if isinstance(v, int) else sp.Float(v, 60) for a, v in zip(result.args, values)}
    ref = sp.N(result.expr.xreplace(exact), 50)
    assume(ref.is_real and ref.is_finite)
    name = function_name(claim, result.name)
    functions = vars(generated)
    if "mpmath" in result.codegen:
        with mpmath.workdps(50):
            ref_mp = mpmath.mpf(sp.Float(ref, 50)._mpf_)
            got_mp = functions[name + "_mp"](*[v if isinstance(v, int) else mpmath.mpf(v) for v in values])
            assert _close(got_mp, ref_mp, MPMATH_RTOL), (name, values, got_mp, ref_mp)
    if "numpy" in result.codegen:
        got = float(functions[name](*values))
        assert _close(got, float(ref), NUMPY_RTOL), (name, values, got, float(ref))
