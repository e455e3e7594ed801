"""The layout audit (issue 47, item 1): one walk in one browser over every view of the app,
each measured by tests/e2e/layout_audit.py (the checks are described there).

The views: every page of ``ui.pages.PAGES`` in the presenter view at 1920x1080 (each of
its steps, ``?present=1&step=k``, as far as its Next button goes; Learned attention's
align task too), at a laptop's 1440x900 and on a phone (390x844, a touch screen); a live
class's teacher view (1440x900), the projector's join slide and two question slides (the
first revealed), and the student's phone page (the first question revealed); and, issue
45's "browser walk in the pseudo-language", every page on the phone in ``?lang=xx``
(overlap and width). One tab per size, each view reached by its URL in that tab.

It prints the table views x checks (pass, or the number of breaches), writes it and a
screenshot of each view to ``$ATTNVIZ_AUDIT_SHOTS`` (default: a new temporary folder; the
path is printed), and fails on a breach that :data:`KNOWN` does not list, and on a KNOWN
entry that no longer occurs: the list can only shrink. The deliberate breaches of each
check (a static page, no app) are in ``test_layout_audit_checks_e2e.py``.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import pytest
from class_helpers import Phone, press, start_class
from e2e_app import ROOT, BrowserSession, new_context
from layout_audit import CHECKS, KINDS, audit, table

from attnviz.ui import pages as ui_pages

pytestmark = pytest.mark.e2e


def known(views: str, check: str, reason: str) -> dict[tuple[str, str], str]:
    """KNOWN entries: ``check`` breached on each of ``views`` (names split by commas)."""
    return {(v.strip(), check): reason for v in views.split(",") if v.strip()}


#: (view, check) -> why: the breaches main has today, each to go when it is fixed (issue 47
#: items 2-4; helpers are on them). A breach not listed fails the test, and so does an
#: entry whose breach no longer occurs: delete the entry with the fix.
KNOWN: dict[tuple[str, str], str] = {}

SLIDE, LAPTOP, PHONE = (1920, 1080), (1440, 900), (390, 844)
SIZES = {"slide": SLIDE, "laptop": LAPTOP, "phone": PHONE}
#: page slug -> its URL path (the first page is the home, "/")
PATHS = {p.slug: "/" if i == 0 else f"/{p.slug}" for i, p in enumerate(ui_pages.PAGES)}
#: Views beyond a page's defaults: (name, path) on a slide.
SLIDE_EXTRAS = [("learned align", "/learned?task=align")]
#: The most steps a presenter view is walked through (a page with more is cut there).
MAX_STEPS = 12
CLASS_SEED = 4
PSEUDO = "xx"
#: The pseudo-language walk's checks: its texts are 40% longer (issue 45).
PSEUDO_CHECKS = ("overlap", "width")


def shots_dir() -> Path:
    where = os.environ.get("ATTNVIZ_AUDIT_SHOTS")
    path = Path(where) if where else Path(tempfile.mkdtemp(prefix="attnviz-audit-"))
    path.mkdir(parents=True, exist_ok=True)
    return path


class Walk:
    """The audit's tabs (one per size, made on first use) and what each view measured."""

    def __init__(self, browser, server) -> None:
        self.browser, self.server = browser, server
        self.tabs: dict[str, BrowserSession] = {}
        self.results: dict[str, dict[str, list[str]]] = {}
        self.shots = shots_dir()

    def tab(self, size: str) -> BrowserSession:
        if size not in self.tabs:
            touch = size == "phone"
            self.tabs[size] = BrowserSession(self.browser, self.server, SIZES[size], touch=touch)
        return self.tabs[size]

    def measure(self, view: str, page, kind: str, checks=None) -> dict[str, list[str]]:
        got = audit(page, kind)
        if checks is not None:
            got = {c: v for c, v in got.items() if c in checks}
        self.results[view] = got
        page.screenshot(path=str(self.shots / f"{view.replace(' ', '_')}.png"))
        return got

    def visit(self, view: str, size: str, path: str, kind: str | None = None, checks=None):
        s = self.tab(size)
        s.errors.clear()
        s.visit(path)
        s.assert_healthy(view)
        return self.measure(view, s.page, kind or size, checks)

    def close(self) -> None:
        for s in self.tabs.values():
            s.close()

    def report(self) -> str:
        return (
            f"layout audit: {len(self.results)} views, checks per kind of view "
            f"{ {k: list(v) for k, v in KINDS.items()} }; screenshots and this table in "
            f"{self.shots}\n{table(self.results)}"
        )


@pytest.fixture(scope="module")
def walk(browser, app_server, request):
    w = Walk(browser, app_server)
    yield w
    w.close()
    text = w.report()
    (w.shots / "audit.txt").write_text(text + "\n\n" + details(w.results) + "\n")
    reporter = request.config.pluginmanager.get_plugin("terminalreporter")
    if reporter is not None:
        reporter.write_sep("-", "layout audit (issue 47)")
        reporter.write_line(text)


def details(results: dict[str, dict[str, list[str]]]) -> str:
    lines = []
    for view, got in results.items():
        for check in CHECKS:
            for breach in got.get(check) or []:
                lines.append(f"{view} | {check} | {breach}")
    return "\n".join(lines)


def verdict(walk: Walk, group: str) -> None:
    """Fail on the group's breaches that KNOWN does not list, and on its KNOWN entries
    that no longer occur (the view passes that check, or is no longer walked)."""
    mine = {v: got for v, got in walk.results.items() if v.split(" ")[0] == group}
    found = {(v, c) for v, got in mine.items() for c, breaches in got.items() if breaches}
    new = sorted(found - KNOWN.keys())
    gone = sorted(k for k in KNOWN if k[0].split(" ")[0] == group and k not in found)
    lines = [f"{v} | {c} | {b}" for v, c in new for b in mine[v][c][:6]]
    assert not new and not gone, (
        f"{table(mine)}\n\nbreaches not in KNOWN ({len(new)}):\n"
        + "\n".join(lines)
        + f"\n\nKNOWN entries that no longer occur (delete them): {gone}"
    )


def walk_steps(walk: Walk, slug: str, path: str) -> None:
    """The presenter view of a page, each of its steps while its Next button is enabled."""
    join = "&" if "?" in path else "?"
    for k in range(1, MAX_STEPS + 1):
        walk.visit(f"slide {slug} {k}", "slide", f"{path}{join}present=1&step={k}")
        nxt = walk.tab("slide").page.locator(".st-key-present_next button")
        if nxt.count() == 0 or nxt.first.is_disabled():
            break


def test_slides(walk):
    for page in ui_pages.PAGES:
        walk_steps(walk, page.slug, PATHS[page.slug])
    for name, path in SLIDE_EXTRAS:
        walk_steps(walk, name.replace(" ", "_"), path)
    verdict(walk, "slide")


def test_laptop(walk):
    for page in ui_pages.PAGES:
        walk.visit(f"laptop {page.slug}", "laptop", PATHS[page.slug])
    verdict(walk, "laptop")


def test_phone(walk):
    for page in ui_pages.PAGES:
        walk.visit(f"phone {page.slug}", "phone", PATHS[page.slug])
    verdict(walk, "phone")


def test_class(walk, browser, app_server):
    """The teacher's view, the projector's join slide and two question slides, the
    student's phone page, with the first question revealed."""
    teacher = walk.tab("laptop")
    code, key = start_class(teacher, CLASS_SEED)
    press(teacher, "class_reveal0")
    walk.measure("class teacher", teacher.page, "laptop")
    link = f"/exercises?class={code}&teacher={key}&present=1"
    walk.visit("class projector-join", "slide", link)
    for k in (2, 3):
        walk.visit(f"class projector-q{k - 1}", "slide", f"{link}&step={k}")
    phone = Phone(browser, app_server)
    try:
        phone.open(f"/join?class={code}")
        phone.page.locator("#q0 .verdict").wait_for(state="attached")
        phone.page.wait_for_timeout(1000)  # the class's state: the revealed answer
        walk.measure("class phone", phone.page, "phone")
        assert not phone.errors, phone.errors
    finally:
        phone.close()
    verdict(walk, "class")


def test_pseudo_language_on_a_phone(walk):
    """Issue 45: every page on a phone in the pseudo-language (40% longer texts)."""
    for page in ui_pages.PAGES:
        path = PATHS[page.slug]
        walk.visit(f"xx {page.slug}", "phone", f"{path}?lang={PSEUDO}", "phone", PSEUDO_CHECKS)
    verdict(walk, "xx")


# --------------------------------------------------------------------------- the checks
# Each check seen to fail: a static page (no app; plotly.js from the board's vendored
# copy) made clean, then with one deliberate breach; the breach is reported by its own
# check and by no other.

PLOTLY_JS = ROOT / "attnviz" / "ui" / "board" / "js" / "vendor" / "plotly-attnviz-4.1.1.min.js"
BIG = {"size": 24}  # chart text a slide allows (>= 20 px)


def heatmap(cells: int = 3, text: str = "0.1", width: int = 700, height: int = 600, **layout):
    """A heatmap figure with its values written in the cells, in slide-sized type (one
    cell: no colour bar)."""
    z = [[(i + j) % 3 for j in range(cells)] for i in range(cells)]
    trace = {
        "type": "heatmap",
        "z": z,
        "text": [[text] * cells for _ in z],
        "texttemplate": "%{text}",
        "textfont": BIG,
        "colorbar": {"tickfont": BIG},
        "showscale": cells > 1,
    }
    base = {
        "width": width,
        "height": height,
        "font": BIG,
        "margin": {"t": 80},
        "title": {"text": "weights", "font": {"size": 28}},
        "xaxis": {"title": {"text": "key"}},
        "yaxis": {"title": {"text": "query"}},
    }
    return {"data": [trace], "layout": {**base, **layout}}  # fmt: skip


#: The clean pages, one per kind of view: (body's HTML, {chart id: figure}).
CLEAN = {
    "slide": ('<h1>A slide</h1><div data-key="main" id="c1"></div>', {"c1": heatmap()}),
    "phone": (
        '<p>A phone</p><div class="card" style="overflow-x: auto">'
        '<span style="display: inline-block; width: 500px">Q = [ 0.1 0.2 ... ]</span></div>'
        '<button style="min-width: 48px; min-height: 48px">Check</button>'
        '<div data-key="main" id="c1"></div>',
        {"c1": heatmap(width=350, height=350, margin={"t": 60, "l": 70, "r": 10, "b": 60})},
    ),
}
#: The breaches: (check, kind, what it is, the clean page's body changed to it).
BREACHES = [
    ("fold", "slide", "a chart pushed below the fold",
     lambda b: b.replace('<div data-key', '<div style="height: 700px"></div><div data-key')),
    ("overlap", "slide", "two overlapping titles",
     lambda b: b + '<div data-key="two" id="c2"></div>'),
    ("type", "slide", "a 12-px tick", lambda b: b + '<div data-key="small" id="c3"></div>'),
    ("type", "slide", "14-px body text", lambda b: b + '<p style="font-size: 14px">small</p>'),
    ("cell", "slide", "a value that does not fit its cell",
     lambda b: b + '<div data-key="wide" id="c4"></div>'),
    ("width", "phone", "a 500-px equation on a phone",
     lambda b: b + '<span style="display: block; width: 500px">K = [ 0.3 0.4 ... ]</span>'),
    ("target", "phone", "a 30-px button on a phone",
     lambda b: b + '<button style="width: 30px; height: 30px">?</button>'),
]  # fmt: skip
#: The charts a breach adds (drawn when the body has their div).
EXTRA = {
    "c2": heatmap(annotations=[
        {"text": "first title", "x": 0.5, "y": 1.02, "xref": "paper", "yref": "paper",
         "showarrow": False, "font": BIG},
        {"text": "second title", "x": 0.55, "y": 1.03, "xref": "paper", "yref": "paper",
         "showarrow": False, "font": BIG}]),
    "c3": heatmap(xaxis={"tickfont": {"size": 12}}),
    "c4": heatmap(cells=1, text="attention weight 0.123", width=300, height=300,
                  xaxis={"showticklabels": False}, yaxis={"showticklabels": False}),
}  # fmt: skip


@pytest.fixture(scope="module")
def static_tabs(browser):
    """A tab per kind of view (a phone's: a touch screen), for static pages."""
    tabs = {kind: new_context(browser, SIZES[kind], touch=kind == "phone").new_page()
            for kind in CLEAN}  # fmt: skip
    yield tabs
    for page in tabs.values():
        page.context.close()


def static_audit(page, kind: str, body: str) -> dict[str, list[str]]:
    """``body`` (HTML) as a page, its charts drawn by plotly.js, then audited."""
    page.set_content(
        '<html><head><meta name="viewport" content="width=device-width, initial-scale=1">'
        f'</head><body style="margin: 8px; font-size: 28px">{body}</body></html>'
    )
    page.add_script_tag(path=str(PLOTLY_JS))
    figures = {**CLEAN[kind][1], **EXTRA}
    page.evaluate(
        """async (figs) => { for (const [id, f] of Object.entries(figs)) {
             const div = document.getElementById(id);
             if (div) await Plotly.newPlot(div, f.data, f.layout, {staticPlot: true}); } }""",
        figures,
    )
    return audit(page, kind)


@pytest.mark.parametrize("kind", list(CLEAN))
def test_a_clean_page_passes_every_check(static_tabs, kind):
    got = static_audit(static_tabs[kind], kind, CLEAN[kind][0])
    assert set(got) == set(KINDS[kind]), got
    assert not any(got.values()), got


@pytest.mark.parametrize(
    ("check", "kind", "what", "change"), BREACHES, ids=[b[2] for b in BREACHES]
)
def test_each_check_fails_on_its_deliberate_breach(static_tabs, check, kind, what, change):
    got = static_audit(static_tabs[kind], kind, change(CLEAN[kind][0]))
    assert got[check], f"{check} missed {what}: {got}"
    others = {c: v for c, v in got.items() if c != check and v}
    assert not others, f"{what} breached other checks too: {others}"
