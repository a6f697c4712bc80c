"""Shared test configuration: hypothesis profiles.

``default`` keeps the suite inside its time budget; ``pytest --hypothesis-profile=thorough``
runs ten times more examples per property.
"""

import os

# Many small BLAS/LAPACK calls: OpenBLAS threads only contend for the machine's two cores
# (measured: the diversity tests take 49 s with default threads, 7 s with one). Set before
# numpy is first imported.
for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")
# The test suite always re-derives (never trusts the derivation cache of proofs/cache.py).
os.environ.setdefault("MHA_NW_REDERIVE", "1")

import pytest  # noqa: E402
from hypothesis import HealthCheck, settings  # noqa: E402

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
