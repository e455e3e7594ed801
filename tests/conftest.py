"""Shared test configuration: hypothesis profiles (derandomized in CI), pytest's own __main__
kept for every test."""

import os
import sys

import pytest
from hypothesis import HealthCheck, settings

settings.register_profile(
    "ci",
    derandomize=True,
    max_examples=60,
    deadline=None,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.register_profile("dev", max_examples=100, deadline=None)
settings.load_profile("ci" if os.environ.get("CI") else os.environ.get("HYPOTHESIS_PROFILE", "dev"))


@pytest.fixture(autouse=True)
def _keep_main_module():
    """Give every test pytest's own ``__main__`` back. Streamlit's AppTest runs a page as
    ``__main__`` and leaves it in ``sys.modules``; a later ``multiprocessing`` spawn (the class
    store's concurrency tests, the live-class bench's replicas) then re-runs that module in
    each child (``app.py``: it fails outside Streamlit), and the children die."""
    main = sys.modules.get("__main__")
    yield
    if main is not None:
        sys.modules["__main__"] = main
