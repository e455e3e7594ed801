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
    store's concurrency tests) then re-runs that module in
    each child (``app.py``: it fails outside Streamlit), and the children die."""
    main = sys.modules.get("__main__")
    yield
    if main is not None:
        sys.modules["__main__"] = main


@pytest.fixture(scope="session", autouse=True)
def _scan_component_manifests_once():
    """Scan the installed packages for components (v2) once per test process. Streamlit's
    AppTest builds a new component manager for every AppTest and each one scans every
    installed distribution's metadata (about 350 here, with torch and transformers): 0.8 s
    of a 0.85 s run of a page whose numbers are cached. The packages do not change while
    the tests run, so the first scan's result serves every AppTest. The server (one scan
    at its start) is not touched."""
    from streamlit.components.v2 import manifest_scanner

    scan = manifest_scanner.scan_component_manifests
    found = scan()

    def scanned_once(max_workers: int | None = None) -> list:
        return list(found)

    scanned_once.__wrapped__ = scan  # the real scan, for the test that checks it
    manifest_scanner.scan_component_manifests = scanned_once
    yield
    manifest_scanner.scan_component_manifests = scan


@pytest.fixture(scope="session", autouse=True)
def _compile_each_page_once():
    """Compile each page script once per test process. Each AppTest has its own script
    cache, so every test compiled ``app.py`` and its page again, Streamlit's magic included
    (an AST pass): about 8 % of the AppTest tests' time (py-spy). Here the bytecode is kept
    per path and per content (a script that changes is compiled again)."""
    from streamlit import config
    from streamlit.runtime.scriptrunner import magic, script_cache
    from streamlit.source_util import open_python_file

    compiled: dict[tuple[str, str, bool], object] = {}

    def get_bytecode(self, script_path: str):
        path = os.path.abspath(script_path)
        with open_python_file(path) as f:
            body = f.read()
        key = (path, body, bool(config.get_option("runner.magicEnabled")))
        if key not in compiled:
            source = magic.add_magic(body, path) if key[2] else body
            compiled[key] = compile(source, path, mode="exec", flags=0, dont_inherit=1)
        return compiled[key]

    real = script_cache.ScriptCache.get_bytecode
    script_cache.ScriptCache.get_bytecode = get_bytecode
    yield
    script_cache.ScriptCache.get_bytecode = real
