"""The found-model pages in a real browser, one walk per family (issue 34): the encoder
page with a tiny BERT, the decoder page with a tiny Llama and a tiny GPT-2, the Cross
page's "A real encoder-decoder" with a tiny T5, all in one ``ATTNVIZ_MODELS`` folder. Each
page is visited once per size, at a laptop's 1440x900, a phone's 390x844 (touch) and a
projector's 1920x1080 (``present=1``): no exception or page error, its charts drawn,
the model named, nothing past the window's edge, no serious axe-core violation. One
server and one browser for the module; one tab per size, its first page opened and the
others reached in the tab, as a student switches pages.

Set ``ATTNVIZ_SHOTS`` to save each page's full-length screenshot (``=1``: into
artifacts/screenshots/picker/; or the folder it names)."""

from __future__ import annotations

import contextlib
import os
import time
from pathlib import Path

import pytest
from axe import blocking, scan
from e2e_app import SCREENSHOTS, BrowserSession, start_app_server, stop_app_server
from test_devices_e2e import LAYOUT_JS, layout_problems

pytestmark = pytest.mark.e2e

TEXT = "w5+w9+w5+w9+w7"
#: name -> (URL, text the page must show, charts at least): grid, head, (next token,
#: newest rows), generation's charts, the Heads section's
PAGES = {
    "bert": (f"/real_model?model=tiny-bert&rm_text={TEXT}", "tiny-bert", 6),
    "llama": (f"/decoder?model=tiny-llama&dec_text={TEXT}", "tiny-llama", 11),
    "gpt2": (f"/decoder?model=tiny-gpt2&dec_text={TEXT}", "tiny-gpt2", 11),
    "t5": ("/cross?cx_model=tiny-t5&cxm_src=w5+w9+w7+w5&cxm_tgt=w4+w6", "tiny-t5", 7),
}
SIZES = {
    "laptop": ((1440, 900), ""),
    "phone": ((390, 844), ""),  # touch
    "projector": ((1920, 1080), "&present=1"),
}


@pytest.fixture(scope="module")
def app_server(tmp_path_factory):
    """The app with a folder of found models (tiny BERT, Llama, GPT-2, T5), no hub cache."""
    from tests.models import test_smollm, tiny

    test_smollm.need("transformers")
    from tests import encdec_models

    root = tmp_path_factory.mktemp("found-models")
    for family in ("bert", "llama", "gpt2"):
        tiny.save(family, root / f"tiny-{family}")
    encdec_models.saved("t5", root / "tiny-t5")
    tiny.tokenizer_json(root / "tiny-t5" / "tokenizer.json", vocab_size=160)
    env = {"ATTNVIZ_MODELS": str(root), "HF_HUB_CACHE": str(root / "no-hub")}
    server = start_app_server(extra_env=env)
    yield server
    stop_app_server(server)
    out = server.output()
    server.log_path.unlink(missing_ok=True)
    assert "Traceback (most recent call last)" not in out, out


def expected(size: str, charts: int) -> int:
    """The charts a page draws at ``size``: on the projector a model page's first slide is
    one view (every head), elsewhere the whole page's ``charts``. The walk waits for as
    many (waiting for 7 on a slide that has 1 cost 30 s a family)."""
    return 1 if size == "projector" else charts


def _charts(session: BrowserSession, want: int) -> int:
    with contextlib.suppress(Exception):  # the caller's assertion says what was found
        session.page.wait_for_function(
            f"() => window.__allPlots().length >= {want}", timeout=30_000, polling=200
        )
    return session.plotly_count()


def _shoot(s: BrowserSession, path: Path) -> None:
    """The whole page (Streamlit scrolls inside its main box: the window is stretched to
    its height, at most 12000 px, then restored)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    size = s.page.viewport_size
    height = s.page.evaluate(
        "() => document.querySelector('[data-testid=\"stMain\"]').scrollHeight"
    )
    s.page.set_viewport_size({"width": size["width"], "height": min(height, 12000)})
    s.page.wait_for_timeout(600)
    s.page.screenshot(path=str(path), animations="disabled")
    s.page.set_viewport_size(size)


class Walk(dict):
    """size -> {family: what its page showed}: the four pages at one size, walked on first
    use (one browser context per size), so that each test's share stays within the
    per-test timeout."""

    def __init__(self, browser, server) -> None:
        super().__init__()
        self.browser, self.server = browser, server

    def __missing__(self, size: str) -> dict[str, dict]:
        (w, h), extra = SIZES[size]
        shots = os.environ.get("ATTNVIZ_SHOTS")
        touch = size == "phone"
        out = self[size] = {}
        s = BrowserSession(self.browser, self.server, (w, h), fresh=True, touch=touch)
        try:
            for family, (url, _, charts) in PAGES.items():
                t0 = time.monotonic()
                s.errors.clear()
                s.visit(url + extra)  # the first page opened, the next ones a page switch
                t1 = time.monotonic()
                out[family] = {
                    "exceptions": s.exceptions(),
                    "errors": list(s.errors),
                    "charts": _charts(s, expected(size, charts)),
                    "main": s.page.locator("main").inner_text(),
                    "layout": s.page.evaluate(LAYOUT_JS),
                    "axe": [str(v) for v in blocking(scan(s.page))],
                }
                took = f"open {t1 - t0:.1f} s, checks {time.monotonic() - t1:.1f} s"
                print(f"{size} {family}: {took}")  # with -s: where the module's time goes
                if shots:
                    folder = SCREENSHOTS / "picker" if shots == "1" else Path(shots)
                    _shoot(s, folder / f"{size}_{family}.png")
        finally:
            s.close()
        return out


@pytest.fixture(scope="module")
def walk(browser, app_server) -> Walk:
    return Walk(browser, app_server)


@pytest.mark.parametrize("family", list(PAGES))
@pytest.mark.parametrize("size", list(SIZES))
def test_each_familys_page_at_each_size(walk, size, family):
    r = walk[size][family]
    _, name, charts = PAGES[family]
    charts = expected(size, charts)
    assert not r["exceptions"] and not r["errors"], r
    assert r["charts"] >= charts, r["charts"]
    if not (size == "projector" and family == "t5"):  # Cross-attention's slides show the
        assert name in r["main"]  # page's own sequences; the found model only in the normal view
    problems = layout_problems(r["layout"])
    if size != "phone":  # a mode bar is there to use with a mouse
        problems = [p for p in problems if "mode bar" not in p]
    assert not problems, problems
    assert not r["axe"], "\n".join(r["axe"])


def test_the_pages_name_the_found_model_and_generate(walk):
    laptop = {f: walk["laptop"][f]["main"] for f in PAGES}
    assert "Real model: tiny-bert" in laptop["bert"] and "a bert encoder" in laptop["bert"]
    assert "2 layers × 4 heads" in laptop["bert"] and "MiniLM-L6:" not in laptop["bert"]
    for f in ("llama", "gpt2"):
        assert f"Real model: a decoder (tiny-{f})" in laptop[f]
        assert "Generation step by step" in laptop[f] and "KV cache" in laptop[f]
    assert "Generation step by step" in laptop["t5"] and "cross-attention keys" in laptop["t5"]


def test_a_decoders_name_on_the_encoder_page_is_warned(browser, app_server):
    """A link that switches pages keeping ``?model=``: the decoder's name on the encoder
    page is said, not silently dropped; the bundled model's page stays."""
    s = BrowserSession(browser, app_server, (1440, 900))
    try:
        s.open("/real_model?model=tiny-llama")
        s.assert_healthy("encoder page, a decoder's name")
        main = s.page.locator("main").inner_text()
        assert "tiny-llama" in main and "not an encoder found" in main
    finally:
        s.close()
