"""The layout audit (issue 47, item 1), its slides: every page in the presenter view at
1920x1080, each of its steps (``?present=1&step=k``, as far as its Next button goes;
Learned attention's align task too), and a live class: the teacher's view (1440x900), the
projector's join slide and two question slides, the student's phone page, the first
question revealed. One tab per size, each view reached by its URL; measured by
tests/e2e/layout_audit.py (the checks are described there). The laptop, the phone and
the pseudo-language walk are in test_layout_audit_phone_e2e.py (the other pytest run of
scripts/test.sh).

The table of views x checks is printed after the run and written, with every breach in
words and a screenshot of each view, to ``$ATTNVIZ_AUDIT_SHOTS`` (default: a new
temporary folder, named in the table's heading). A breach that :data:`KNOWN` does not list
fails, and so does a KNOWN entry that no longer occurs: the list only shrinks.

Below the walk, each check seen to fail: a static page (no app; plotly.js from the
board's vendored copy) made clean, then with one deliberate breach, which its own check
reports and no other.
"""

from __future__ import annotations

import pytest
from class_helpers import Phone, press, start_class
from e2e_app import ROOT, new_context
from layout_audit import KINDS, PATHS, SIZES, Walk, audit, verdict

from attnviz.ui import pages as ui_pages

pytestmark = pytest.mark.e2e

#: (view, check) -> why: the breaches main has today (issue 47 items 2-4, helpers are on
#: them; layout_audit.known() writes entries). Delete an entry with its fix: a breach not
#: listed fails, and so does an entry whose breach no longer occurs. Empty: every slide
#: the walk reaches passes every check.
KNOWN: dict[tuple[str, str], str] = {}

#: Views beyond a page's defaults: (name, path) on a slide.
SLIDE_EXTRAS = [("learned_align", "/learned?task=align")]
#: The most steps a presenter view is walked through.
MAX_STEPS = 12
CLASS_SEED = 4


def walk_steps(walk: Walk, name: str, path: str) -> None:
    """The presenter view of a page, each of its steps while its Next button is enabled."""
    join = "&" if "?" in path else "?"
    for k in range(1, MAX_STEPS + 1):
        walk.visit(f"slide {name} {k}", "slide", f"{path}{join}present=1&step={k}")
        nxt = walk.tab("slide").page.locator(".st-key-present_next button")
        if nxt.count() == 0 or nxt.first.is_disabled():
            break


def test_slides(walk):
    with walk.group("slide"):
        for page in ui_pages.PAGES:
            walk_steps(walk, page.slug, PATHS[page.slug])
        for name, path in SLIDE_EXTRAS:
            walk_steps(walk, name, path)
    verdict(walk, "slide", KNOWN)


def test_class(walk, browser, app_server):
    """The teacher's view, the projector's join slide and two question slides, the
    student's phone page, with the first question revealed; the teacher's view in Arabic
    and a question slide in Spanish."""
    with walk.group("class"):
        teacher = walk.tab("laptop")
        code, key = start_class(teacher, CLASS_SEED)
        press(teacher, "class_reveal0")
        walk.measure("class teacher", teacher.page, "laptop")
        link = f"/exercises?class={code}&teacher={key}&present=1"
        walk.visit("class projector-join", "slide", link)
        for k in (2, 3):
            walk.visit(f"class projector-q{k - 1}", "slide", f"{link}&step={k}")
        # the languages whose longer labels were cut short: Arabic's "Reveal the answer"
        # on the teacher's laptop, Spanish's "Next question" on the projector
        walk.visit("class teacher ar", "laptop", f"/exercises?class={code}&teacher={key}&lang=ar")
        walk.visit("class projector-q1 es", "slide", f"{link}&step=2&lang=es")
        phone = Phone(browser, app_server)
        try:
            phone.open(f"/join?class={code}")
            phone.page.locator("#q0 .verdict").wait_for(state="attached")
            phone.page.wait_for_timeout(1000)  # the class's state: the revealed answer
            walk.measure("class phone", phone.page, "phone")
            assert not phone.errors, phone.errors
        finally:
            phone.close()
    verdict(walk, "class", KNOWN)


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
#: q·k = (−1)·(−1) + 1·2 + 2·(−2) = −1 in MathML (tokens: Chromium does not break it).
EQUATION = (
    "<mi>q</mi><mo>·</mo><mi>k</mi><mo>=</mo>"
    + "<mo>+</mo>".join(
        f"<mo>(</mo><mn>{a}</mn><mo>)</mo><mo>·</mo><mo>(</mo><mn>{b}</mn><mo>)</mo>"
        for a, b in (("−1", "−1"), ("1", "2"), ("2", "−2"))
    )
    + "<mo>=</mo><mn>−1</mn>"
)
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
    ("width", "phone", "an equation running off its card on a phone",
     lambda b: b + '<div style="width: 200px; border: 1px solid"><p style="font-size: 14px">'
                   f'<math>{EQUATION}</math></p></div>'),
    ("target", "phone", "a 30-px button on a phone",
     lambda b: b + '<button style="width: 30px; height: 30px">?</button>'),
    ("cut", "slide", "a button's label cut short by an ellipsis",
     lambda b: b + '<button style="font: inherit"><div style="width: 120px; overflow: hidden;'
                   ' white-space: nowrap;'
                   ' text-overflow: ellipsis">Siguiente pregunta</div></button>'),
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
