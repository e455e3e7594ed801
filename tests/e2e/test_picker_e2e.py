"""The decoder page in a real browser with a tiny Llama in an ``ATTNVIZ_MODELS`` folder:
``?model=tiny-llama`` draws the found model's charts and its generation step by step, an
unknown ``?model=`` is warned about and the bundled model's page stays."""

from __future__ import annotations

import contextlib

import pytest
from e2e_app import start_app_server, stop_app_server

pytestmark = pytest.mark.e2e
#: grid, one head, next token, newest rows; generation: rows, layers, top 5; Heads: the
#: scores and the top 3 heads
CHARTS = 11


@pytest.fixture(scope="module")
def app_server(tmp_path_factory):
    """The app with a folder of found models (a tiny Llama) and an empty hub cache."""
    from tests.models import test_smollm, tiny

    test_smollm.need("transformers")
    root = tmp_path_factory.mktemp("found-models")
    tiny.save("llama", root / "tiny-llama")
    env = {"ATTNVIZ_MODELS": str(root), "HF_HUB_CACHE": str(root / "no-hub")}
    server = start_app_server(extra_env=env)
    yield server
    stop_app_server(server)
    out = server.output()
    server.log_path.unlink(missing_ok=True)
    assert "Traceback (most recent call last)" not in out, out


def _charts(session, want: int) -> int:
    with contextlib.suppress(Exception):  # the caller's assertion says what was found
        session.page.wait_for_function(
            f"() => window.__allPlots().length >= {want}", timeout=30_000, polling=200
        )
    return session.plotly_count()


def test_a_found_decoder_from_the_link(session):
    session.open("/decoder?model=tiny-llama&dec_text=w5+w9+w5+w9")
    session.assert_healthy("decoder page, tiny-llama")
    assert _charts(session, CHARTS) >= CHARTS
    main = session.page.locator("main").inner_text()
    assert "tiny-llama" in main and "Generation step by step" in main
    session.open("/decoder?model=..%2F..%2Fetc")
    session.assert_healthy("decoder page, a path in the link")
    main = session.page.locator("main").inner_text()
    assert "../../etc" in main and "not a decoder found" in main
