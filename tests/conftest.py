"""Shared test configuration: hypothesis profiles, the run's own derivation cache.

``default`` keeps the suite inside its time budget; ``pytest --hypothesis-profile=thorough``
runs ten times more examples per property.
"""

import os

# Many small BLAS/LAPACK calls: OpenBLAS threads only contend for the machine's two cores
# (measured: the diversity tests take 49 s with default threads, 7 s with one). Set before
# numpy is first imported.
for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")
import shutil  # noqa: E402
import tempfile  # noqa: E402
from pathlib import Path  # noqa: E402

import pytest  # noqa: E402
from hypothesis import HealthCheck, settings  # noqa: E402

# The suite never trusts the user's derivation cache: it derives every claim afresh once per test
# run into a cache of its own (MHA_NW_CACHE_DIR, inherited by every subprocess a test starts), so
# that the CLI, README and notebook tests load what this run derived instead of deriving again.
# The compiled NW kernel's cache is seeded from the user's (numba checks it against the source).
# A pytest that a test starts (the ledger's tests collect this suite) shares the outer run's cache.
_ENV_RUN_CACHE = "MHA_NW_TEST_RUN_CACHE"
_OWN = not os.path.isdir(os.environ.get(_ENV_RUN_CACHE, ""))
_CACHE = Path(tempfile.mkdtemp(prefix="mha-nw-test-cache-")) if _OWN else Path(os.environ[_ENV_RUN_CACHE])
if _OWN:
    _USER_NUMBA = Path(os.environ.get("MHA_NW_CACHE_DIR") or Path(os.environ.get("XDG_CACHE_HOME") or
                                                                  Path.home() / ".cache") / "mha-nw-verify") / "numba"
    if _USER_NUMBA.is_dir():
        shutil.copytree(_USER_NUMBA, _CACHE / "numba", dirs_exist_ok=True)
os.environ["MHA_NW_CACHE_DIR"] = os.environ[_ENV_RUN_CACHE] = str(_CACHE)
os.environ.pop("MHA_NW_REDERIVE", None)
# Each claim's quick run, computed once per test run by whichever test process (pytest-xdist
# worker) needs it first and loaded by the others (verify/pytest_plugin.py); a pytest started inside
# this run inherits the folder. A run given an outer cache without that folder (tools/mutants.py:
# one derivation cache for every mutant, checked against the source of proofs/) computes its own.
if _OWN:
    (_CACHE / "quick-run").mkdir()
    os.environ["MHA_NW_QUICK_RUN_DIR"] = str(_CACHE / "quick-run")


def _derive(claims: list[str]) -> None:
    from proofs import derivation

    for claim in claims:
        derivation(claim)          # the run's cache starts empty: derived here, loaded by everyone else


def pytest_configure(config: pytest.Config) -> None:
    """Derive every claim once, in two processes (the machine's two cores), into the run's cache:
    in the main process, before pytest-xdist starts its workers (they load what it derived)."""
    import multiprocessing

    from proofs import CLAIM_IDS

    if hasattr(config, "workerinput") or not _OWN:
        return

    # two halves that take about as long (seconds measured two at a time on 2 AVX2 cores: C8 12.7,
    # C6 9.4, C7 5.7 (with C5, which it derives), C9 2.9, C4 2.7, C3 2.7, C2 2.7, C1 2.4)
    halves = [["C8", "C7", "C5", "C2"], ["C6", "C9", "C4", "C3", "C1"]]
    assert sorted(sum(halves, [])) == sorted(CLAIM_IDS)
    ctx = multiprocessing.get_context("fork")
    procs = [ctx.Process(target=_derive, args=(h,)) for h in halves]
    for p in procs:
        p.start()
    for p in procs:
        p.join()


def pytest_unconfigure(config: pytest.Config) -> None:
    if _OWN:
        shutil.rmtree(_CACHE, ignore_errors=True)

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


@pytest.fixture(scope="module")
def saved(request, quick_run):
    """The quick run (seed 0) of the claim named by the test module's ``CLAIM``, with its output
    folder (plots, counterexamples): ``(ClaimResult, Path)``; ``quick_run`` is the theorem-ledger
    plugin's session cache (verify/pytest_plugin.py)."""
    return quick_run(request.module.CLAIM)


@pytest.fixture(scope="module")
def result(saved):
    return saved[0]
