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
def saved(request, tmp_path_factory):
    """The quick run (seed 0) of the claim named by the test module's ``CLAIM``, with its output
    folder (plots, counterexamples): ``(ClaimResult, Path)``, computed once per module."""
    from verify.claims import Context, run_claim

    claim = request.module.CLAIM
    out = tmp_path_factory.mktemp(claim.lower())
    return run_claim(claim, Context(seed=0, quick=True, out=out)), out


@pytest.fixture(scope="module")
def result(saved):
    return saved[0]
