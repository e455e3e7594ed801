"""Walk every page from the sidebar navigation in a real browser.

One walk per window size collects, for each page: st.exception and JavaScript page errors,
the number of plotly charts, the document title, controls without an accessible label and
the colour scales in use; screenshots go to artifacts/screenshots/ (1280x800 laptop,
1920x1080 projector; `<page>_<size>.png` is the window, `..._full.png` the whole page).
The tests below then check one property each.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest
from e2e_app import BrowserSession
from e2e_helpers import (
    AXIS_TICKS_JS,
    COLORSCALES_JS,
    UNLABELLED_CONTROLS_JS,
    axis_tick_problems,
    click_page,
    colorscale_name,
    nav_titles,
)

pytestmark = pytest.mark.e2e

# Plotly charts each page draws at the default controls (random X, N=6, D=8, heads=2):
EXPECTED_CHARTS = {
    # scores | weights | output, X, Q, K, V, the query's weights and its weighted sum
    "Playground": 9,
    # X, Q, K, V, QKᵀ, scaled scores, weights, output (the mask step draws none when off)
    "Step by step": 8,
    # per-head weights, one query in every head and its output in one head, entropy,
    # argmax, concat, W_O, Y
    "Multi-head": 8,
    # variance, factor bars, weights unscaled/scaled, entropy, saturation curve
    "Why √d_k": 6,
    # mask, scores with -inf, softmax: for causal and padding
    "Masking": 6,
    # outputs then shuffled, outputs of shuffled, difference
    "Permutation": 3,
    # A's weights, B's weights, B − A, the change in entropy per query
    "Compare": 4,
    # tables only
    "Notebooks": 0,
    # 72-head grid, one head's weights, q/k/v, the query's weights, + tab charts; Heads:
    # the six score heatmaps and the top 3 heads' weights on the probe
    "Real model (MiniLM)": 11,
    # 270-head grid, one head's weights, next-token bars, newest rows, RoPE curve, shifted
    # pair, trained/random pair; Heads: the scores and the top 3 heads
    "Real model (decoder)": 13,
    # questions and answers only
    "Exercises": 0,
}


@dataclass
class PageReport:
    title: str
    charts: int = 0
    doc_title: str = ""
    exceptions: list[str] = field(default_factory=list)
    page_errors: list[str] = field(default_factory=list)
    unlabelled: list[str] = field(default_factory=list)
    colorscales: list[dict] = field(default_factory=list)
    axis_ticks: list[dict] = field(default_factory=list)


def _slug(title: str) -> str:
    return "_".join("".join(c if c.isalnum() else " " for c in title.lower()).split())


def walk(session: BrowserSession, size: str, inspect: bool) -> dict[str, PageReport]:
    session.open("/")
    reports = {}
    for title in nav_titles(session):
        click_page(session, title)
        report = PageReport(title)
        report.exceptions = session.exceptions()
        report.page_errors = list(session.errors)
        session.errors.clear()
        report.charts = session.plotly_count()
        report.doc_title = session.page.title()
        if inspect:
            report.unlabelled = session.page.evaluate(UNLABELLED_CONTROLS_JS)
            report.colorscales = session.page.evaluate(COLORSCALES_JS)
            report.axis_ticks = session.page.evaluate(AXIS_TICKS_JS)
        session.screenshot(f"{_slug(title)}_{size}", full=inspect)
        reports[title] = report
    return reports


@pytest.fixture(scope="module")
def laptop_walk(browser, app_server) -> dict[str, PageReport]:
    session = BrowserSession(browser, app_server, (1280, 800))
    try:
        return walk(session, "1280x800", inspect=True)
    finally:
        session.close()


@pytest.fixture(scope="module")
def projector_walk(browser, app_server) -> dict[str, PageReport]:
    session = BrowserSession(browser, app_server, (1920, 1080))
    try:
        return walk(session, "1920x1080", inspect=False)
    finally:
        session.close()


def test_sidebar_lists_every_page(laptop_walk):
    assert list(laptop_walk) == list(EXPECTED_CHARTS)


@pytest.mark.parametrize("size", ["laptop", "projector"])
def test_every_page_runs_without_error(size, laptop_walk, projector_walk):
    reports = laptop_walk if size == "laptop" else projector_walk
    bad = {
        t: (r.exceptions, r.page_errors)
        for t, r in reports.items()
        if r.exceptions or r.page_errors
    }
    assert not bad, f"pages with an exception or a JavaScript error: {bad}"


def test_every_page_draws_its_charts(laptop_walk):
    counts = {t: r.charts for t, r in laptop_walk.items()}
    assert counts == {t: EXPECTED_CHARTS[t] for t in counts}


def test_every_control_has_an_accessible_label(laptop_walk):
    bad = {t: r.unlabelled for t, r in laptop_walk.items() if r.unlabelled}
    assert not bad, f"controls without aria-label/label/title: {bad}"


def test_colour_scales_are_colour_blind_safe(laptop_walk):
    bad = [
        f"{t}: chart {c['chart']} trace {c['trace']} ({c['type']}): {c['scale']}"
        for t, r in laptop_walk.items()
        for c in r.colorscales
        if colorscale_name(c["scale"]) is None
    ]
    used = {colorscale_name(c["scale"]) for r in laptop_walk.values() for c in r.colorscales}
    assert not bad, "colour scales outside the colour-blind-safe list:\n" + "\n".join(bad)
    assert used - {None}, "no colour scale found: the figure JSON was not read"


def test_every_page_has_its_own_document_title(laptop_walk):
    titles = {t: r.doc_title for t, r in laptop_walk.items()}
    assert all(titles.values())
    assert len(set(titles.values())) == len(titles), f"document titles: {titles}"


def test_axis_tick_labels_are_readable(laptop_walk):
    bad = {t: axis_tick_problems(r.axis_ticks) for t, r in laptop_walk.items()}
    bad = {t: p for t, p in bad.items() if p}
    assert not bad, bad
