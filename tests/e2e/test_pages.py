"""Walk every page from the sidebar navigation in a real browser.

One walk (a laptop's 1280x800 window) collects, for each page: st.exception and JavaScript
page errors, the number of plotly charts, the document title, its URL and current sidebar
link, every request the browser made, controls without an accessible label, the colour
scales in use, the main column's headings and axe-core's violations (WCAG 2.0/2.1 A and AA;
counts in artifacts/a11y/axe.json); then the window is made a projector's (1920x1080) and the page's
JavaScript errors at that size are collected. With ``ATTNVIZ_SHOTS=1``, screenshots go to
artifacts/screenshots/ (`<page>_<size>.png` is the window, `..._1280x800_full.png` the
whole page).
The tests below then check one property each.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from urllib.parse import urlparse

import plotly.colors
import pytest
from axe import Violation, assert_no_blocking, in_board, record, scan
from class_helpers import app_server, data_dir, press  # noqa: F401
from e2e_app import BrowserSession
from e2e_helpers import (
    AXIS_TICKS_JS,
    COLORSCALES_JS,
    HEADINGS_JS,
    UNLABELLED_CONTROLS_JS,
    axis_tick_problems,
    click_page,
    colorscale_name,
    nav_titles,
    skipped_levels,
)

from attnviz.ui import pages

pytestmark = pytest.mark.e2e

# Plotly charts each page draws at the default controls (random X, N=6, D=8, heads=2), in
# sidebar order: the pages table says (attnviz.ui.pages.PAGES, what each chart is beside it).
EXPECTED_CHARTS = {p.title: p.charts for p in pages.PAGES}


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
    path: str = ""  # the URL's path once the page is open
    current_link: list[str] = field(default_factory=list)  # the marked link's text lines
    requests: list[str] = field(default_factory=list)  # every URL the browser asked for
    axe: list[Violation] = field(default_factory=list)  # at the laptop's size
    headings: list[list] = field(default_factory=list)  # (level, text) in document order
    projector_errors: list[str] = field(default_factory=list)  # once made 1920x1080


def _slug(title: str) -> str:
    return "_".join("".join(c if c.isalnum() else " " for c in title.lower()).split())


CURRENT_LINK = '[data-testid="stSidebarNavLink"][aria-current="page"]'


def current_link(session: BrowserSession) -> list[str]:
    """The marked sidebar link's text: its Material icon's name (a ligature), its title."""
    current = session.page.locator(CURRENT_LINK)
    assert current.count() == 1
    return [t.strip() for t in current.inner_text().strip().splitlines() if t.strip()]


LAPTOP = (1280, 800)
PROJECTOR = (1920, 1080)


class Walk(dict):
    """Page title -> its report, each page visited on first use by its sidebar link at a
    laptop's size, then resized to a projector's (one visit per page: the script's run does
    not depend on the window). Lazy, so that each page's visit counts in the first test that
    reads it (within the per-test timeout), not all of them in one fixture."""

    def __init__(self, session: BrowserSession):
        super().__init__()
        self.session = session
        self.asked: list[str] = []
        session.page.on("request", lambda r: self.asked.append(r.url))
        session.open("/")
        self.nav = nav_titles(session)

    def __missing__(self, title: str) -> PageReport:
        session = self.session
        click_page(session, title)
        report = PageReport(title)
        report.path = urlparse(session.page.url).path
        report.current_link = current_link(session)
        report.requests, self.asked[:] = list(self.asked), []
        report.exceptions = session.exceptions()
        report.page_errors = list(session.errors)
        session.errors.clear()
        report.charts = session.plotly_count()
        report.doc_title = session.page.title()
        report.unlabelled = session.page.evaluate(UNLABELLED_CONTROLS_JS)
        report.colorscales = session.page.evaluate(COLORSCALES_JS)
        report.axis_ticks = session.page.evaluate(AXIS_TICKS_JS)
        report.headings = session.page.evaluate(HEADINGS_JS)
        session.screenshot(f"{_slug(title)}_1280x800")  # the whole page: every board drawn
        report.axe = scan(session.page)
        record(title, report.axe)
        session.page.set_viewport_size({"width": PROJECTOR[0], "height": PROJECTOR[1]})
        session.page.wait_for_timeout(300)  # the boards refit to the new width
        session.screenshot(f"{_slug(title)}_1920x1080", full=False)
        report.projector_errors, session.errors[:] = list(session.errors), []
        session.page.set_viewport_size({"width": LAPTOP[0], "height": LAPTOP[1]})
        self[title] = report
        return report

    def every_page(self) -> dict[str, PageReport]:
        return {t: self[t] for t in self.nav}


@pytest.fixture(scope="module")
def laptop_walk(browser, app_server):  # noqa: F811
    session = BrowserSession(browser, app_server, LAPTOP)
    yield Walk(session)
    session.close()


TITLES = [p.title for p in pages.PAGES]


@pytest.mark.parametrize("page", TITLES)
def test_page_runs_without_error(laptop_walk, page):
    r = laptop_walk[page]
    assert not (r.exceptions or r.page_errors), (r.exceptions, r.page_errors)
    assert not r.projector_errors, f"JavaScript errors at 1920x1080: {r.projector_errors}"


@pytest.mark.parametrize("page", TITLES)
def test_axe_app_markup(laptop_walk, page):
    assert_no_blocking([v for v in laptop_walk[page].axe if not in_board(v)], page)


@pytest.mark.parametrize("page", TITLES)
def test_axe_boards(laptop_walk, page):
    assert_no_blocking([v for v in laptop_walk[page].axe if in_board(v)], page)


@pytest.mark.parametrize("page", TITLES)
def test_headings_go_down_one_level_at_a_time(laptop_walk, page):
    """A screen reader's list of headings: the page's title the one h1, first, and no level
    skipped on the way down (an h3 right under the h1 is axe's heading-order; axe's WCAG
    scan above does not run that best-practice rule)."""
    found = laptop_walk[page].headings
    levels = [level for level, _ in found]
    assert levels[:1] == [1] and levels.count(1) == 1, found
    assert not skipped_levels(found), skipped_levels(found)


def test_sidebar_lists_every_page(laptop_walk):
    """The sidebar's links: every page of the table, its title, in the table's order."""
    assert laptop_walk.nav == TITLES


def test_every_page_of_the_table_opens_at_its_url(laptop_walk, browser, app_server):  # noqa: F811
    """Each page's slug is its URL: the walk's click on its link opens /<slug> (the first
    page at /, and at /<slug> too), titled as the table says, its sidebar link (the table's
    icon and title) marked current. No page, the teacher's class view and a phone's class
    page included, makes the browser ask another host than the server (a page's Material
    icon as the tab's icon made it fetch the icon from Google's font service)."""
    asked = [(t, url) for t, r in laptop_walk.every_page().items() for url in r.requests]
    for i, entry in enumerate(pages.PAGES):
        report = laptop_walk[entry.title]
        assert report.path.rstrip("/").endswith("" if i == 0 else f"/{entry.slug}"), report.path
        assert report.current_link == [entry.icon.removeprefix(":material/").rstrip(":"),
                                       entry.title]  # fmt: skip
        assert entry.title in report.doc_title, (entry.slug, report.doc_title)
    session = BrowserSession(browser, app_server, (1280, 800))
    here = ""
    session.page.on("request", lambda r: asked.append((here, r.url)))
    try:
        first = pages.PAGES[0]
        here = f"/{first.slug}"
        session.open(here)
        session.assert_healthy(here)
        assert current_link(session)[-1] == first.title
        # the teacher's class view (its QR code) and a phone's class page
        here = "the teacher's view"
        session.open("/exercises")
        press(session, "class_start")
        session.page.get_by_text("Live class").first.wait_for()
        code = session.page.evaluate("new URLSearchParams(location.search).get('class')")
        here = "/join"
        session.page.goto(f"{app_server.url}/join?class={code}")
        session.page.get_by_role("heading", name=f"Live class {code}").wait_for()
        session.page.wait_for_timeout(1000)
    finally:
        session.close()
    own = urlparse(app_server.url).netloc
    elsewhere = [
        (page, url)
        for page, url in asked
        if not url.startswith(("data:", "blob:")) and urlparse(url).netloc != own
    ]
    assert not elsewhere, f"requests to another host than the server's: {elsewhere}"
    assert {page for page, _ in asked} >= {pages.PAGES[0].title, "the teacher's view", "/join"}


def test_every_page_draws_its_charts(laptop_walk):
    counts = {t: r.charts for t, r in laptop_walk.every_page().items()}
    assert counts == {t: EXPECTED_CHARTS[t] for t in counts}


def test_every_control_has_an_accessible_label(laptop_walk):
    bad = {t: r.unlabelled for t, r in laptop_walk.every_page().items() if r.unlabelled}
    assert not bad, f"controls without aria-label/label/title: {bad}"


def test_colour_scales_are_colour_blind_safe(laptop_walk):
    bad = [
        f"{t}: chart {c['chart']} trace {c['trace']} ({c['type']}): {c['scale']}"
        for t, r in laptop_walk.every_page().items()
        for c in r.colorscales
        if colorscale_name(c["scale"]) is None
    ]
    used = {
        colorscale_name(c["scale"])
        for r in laptop_walk.every_page().values()
        for c in r.colorscales
    }
    assert not bad, "colour scales outside the colour-blind-safe list:\n" + "\n".join(bad)
    assert used - {None}, "no colour scale found: the figure JSON was not read"


def test_every_page_has_its_own_document_title(laptop_walk):
    titles = {t: r.doc_title for t, r in laptop_walk.every_page().items()}
    assert all(titles.values())
    assert len(set(titles.values())) == len(titles), f"document titles: {titles}"


def test_axis_tick_labels_are_readable(laptop_walk):
    bad = {t: axis_tick_problems(r.axis_ticks) for t, r in laptop_walk.every_page().items()}
    bad = {t: p for t, p in bad.items() if p}
    assert not bad, bad


# The walk's checks themselves can fail: they flag what they should (no server needed).
@pytest.mark.parametrize("name", ["Viridis", "Cividis", "RdBu", "RdBu_r", "PuOr"])
def test_safe_scales_are_recognised_as_names_and_as_colour_lists(name):
    assert colorscale_name(name) is not None
    scale = [list(pair) for pair in plotly.colors.get_colorscale(name)]
    assert colorscale_name(scale) == name


@pytest.mark.parametrize("name", ["Jet", "Rainbow", "Hot", "Picnic", "Portland"])
def test_rainbow_like_scales_are_rejected(name):
    assert colorscale_name(name) is None
    assert colorscale_name(plotly.colors.get_colorscale(name)) is None


def test_a_flat_single_colour_scale_is_accepted():
    assert colorscale_name([[0, "#a6dba0"], [1, "#a6dba0"]]) == "constant"
    assert colorscale_name([[0, "#a6dba0"], [1, "#ff0000"]]) is None


def test_unlabelled_controls_are_found(browser):
    page = browser.new_page()
    try:
        page.set_content(
            """
            <label for="a">N</label><input id="a">
            <label>D <input id="b"></label>
            <input id="c" aria-label="heads">
            <span id="lab">seed</span><input id="d" aria-labelledby="lab">
            <button>Load</button>
            <input id="bad1" placeholder="only a placeholder">
            <div role="slider" id="bad2"></div>
            <button id="bad3"><svg></svg></button>
            """
        )
        found = page.evaluate(UNLABELLED_CONTROLS_JS)
    finally:
        page.close()
    assert len(found) == 3
    assert all(any(f'id="{i}"' in html for html in found) for i in ("bad1", "bad2", "bad3"))


def test_axis_tick_check_flags_log_minor_labels_and_half_cells():
    log_axis = ["1", "2", "5", "10", "2", "5", "100"]
    half = ["\u22120.5", "0", "0.5", "1"]
    charts = [
        {"chart": 0, "title": "var", "heatmap": False, "axes": [log_axis, ["0", "0.5", "1"]]},
        {"chart": 1, "title": "out", "heatmap": True, "axes": [half, ["t0", "t1", "t0"]]},
        {"chart": 2, "title": "ok", "heatmap": True, "axes": [["0", "1", "2"], ["the", "the"]]},
    ]
    problems = axis_tick_problems(charts)
    assert len(problems) == 2
    assert "repeated" in problems[0] and "'var'" in problems[0]
    assert "half-cells" in problems[1] and "'out'" in problems[1]


def test_missing_browser_skips_locally_but_fails_in_ci(monkeypatch):
    from e2e_app import unavailable

    monkeypatch.delenv("CI", raising=False)
    with pytest.raises(pytest.skip.Exception):
        unavailable("chromium is not installed")
    monkeypatch.setenv("CI", "true")
    with pytest.raises(pytest.fail.Exception, match="CI is set"):
        unavailable("chromium is not installed")
