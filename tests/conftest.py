"""Shared test configuration: hypothesis profiles, the quick runs the test processes share.

``default`` keeps the suite inside its time budget; ``pytest --hypothesis-profile=thorough``
runs ten times more examples per property.
"""

import os

# Many small BLAS/LAPACK calls: threads only contend for the cores (the diversity tests: 49 s with
# default threads, 7 s with one). Set before numpy is first imported.
for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")
import shutil  # noqa: E402
import tempfile  # noqa: E402
from pathlib import Path  # noqa: E402

import mpmath  # noqa: E402
import pytest  # noqa: E402
from hypothesis import HealthCheck, settings  # noqa: E402

# Each claim's quick run is computed once per test run by whichever test process needs it first and
# loaded by the others (verify/pytest_plugin.py), through a folder of this run's, inherited by any
# pytest started inside it; a run given a folder that does not exist (tools/mutants.py) makes its own.
_ENV_QUICK = "MHA_NW_QUICK_RUN_DIR"
_OWN = not os.path.isdir(os.environ.get(_ENV_QUICK, ""))
if _OWN:
    _QUICK = Path(tempfile.mkdtemp(prefix="mha-nw-quick-run-"))
    os.environ[_ENV_QUICK] = str(_QUICK)
os.environ.pop("MHA_NW_REDERIVE", None)


def pytest_unconfigure(config: pytest.Config) -> None:
    if _OWN and not hasattr(config, "workerinput"):
        shutil.rmtree(_QUICK, ignore_errors=True)


settings.register_profile(
    "default",
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.register_profile(
    "thorough",
    max_examples=250,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.load_profile("default")


#: The test ids of every file this session collected whole, before ``-m`` or ``-k`` deselect any: the
#: mutant lists are checked against them (tests/test_mutation_tool.py) rather than by collecting again.
_COLLECTED = pytest.StashKey[frozenset]()


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    partly = {(config.invocation_params.dir / a.split("::")[0]).resolve() for a in config.args if "::" in a}
    config.stash[_COLLECTED] = frozenset(item.nodeid for item in items if item.path.resolve() not in partly)


@pytest.fixture
def collected_ids(request) -> frozenset:
    """The test ids of every file this session collected whole (``pytest_collection_modifyitems``)."""
    return request.config.stash[_COLLECTED]


#: mpmath's default working precision in bits, the one a user's run has.
MPMATH_DEFAULT_PREC = 53


@pytest.fixture(autouse=True)
def _mpmath_at_its_default_precision():
    """Every test starts and ends with mpmath at its default precision: one that sets it globally (a
    module at import, a test without ``mpmath.workdps``) changes every later test of its process."""
    assert mpmath.mp.prec == MPMATH_DEFAULT_PREC, f"mpmath at {mpmath.mp.prec} bits before the test"
    yield
    assert mpmath.mp.prec == MPMATH_DEFAULT_PREC, f"the test left mpmath at {mpmath.mp.prec} bits"


@pytest.fixture(scope="module")
def saved(request, quick_run):
    """The quick run (seed 0) of the claim named by the test module's ``CLAIM``, with its output
    folder (plots, counterexamples): ``(ClaimResult, Path)``; ``quick_run`` is the theorem-ledger
    plugin's session cache (verify/pytest_plugin.py)."""
    return quick_run(request.module.CLAIM)


@pytest.fixture(scope="module")
def result(saved):
    return saved[0]
