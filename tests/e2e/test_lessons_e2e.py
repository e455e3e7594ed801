"""A lesson's tour in a real browser (attnviz.ui.tour, docs/lessons.md): "Self-attention in 20
minutes" from the Lessons page to its summary by Next, every question answered on the way,
a reload mid-tour resuming at the same stop, the summary's count; on a phone, the bar's
links are touch-sized and nothing is wider than the screen."""

from __future__ import annotations

import re
from urllib.parse import parse_qs, urlparse

import pytest
from e2e_app import BrowserSession
from e2e_helpers import slider_value

from attnviz.classroom import lessons
from attnviz.ui import pages as ui_pages

pytestmark = pytest.mark.e2e
INTRO = next(x for x in lessons.shipped() if x.slug == "intro")
#: The verdict after Check: in the bar (a typed exercise) or under the page's chart.
VERDICT = ", ".join(f".st-key-{k} [data-testid=stAlert]" for k in ("tour_bar", "tour_question"))


def _params(session) -> dict[str, str]:
    return {k: v[0] for k, v in parse_qs(urlparse(session.page.url).query).items()}


def _stop_link(i: int, **extra: object) -> str:
    """Stop ``i``'s link as the bar writes it: its page ("/" for the table's first page),
    its settings, the lesson's parameters and ``extra``."""
    stop = INTRO.stops[i]
    params = {**stop.settings, "lesson": "intro", "stop": i + 1, **extra}
    path = "" if stop.page == ui_pages.PAGES[0].slug else stop.page
    return f"/{path}?" + "&".join(f"{k}={v}" for k, v in params.items())


def _follow(session, testid: str) -> None:
    link = session.page.locator(f'[data-tour="{testid}"]')
    session.rerun_after(link.click)


def _answer(session) -> None:
    """Answer the stop's question with its first choice, then Check."""
    box = session.page.locator(".st-key-tour_choice, .st-key-tour_typed").first
    if box.locator('[data-testid="stRadioOption"]').count():
        session.rerun_after(box.locator('[data-testid="stRadioOption"]').first.click)
    else:  # a typed exercise: a number
        box.locator("input").fill("0.5")
        box.locator("input").press("Tab")
        session.page.wait_for_timeout(300)
    session.rerun_after(session.page.locator(".st-key-tour_check button").click)


def _said(session, text: str) -> None:
    """The document's live region (navlinks.js) comes to say ``text`` (a stop change); a
    wait for the polite region's update, which may follow the rerun by 100 ms."""
    session.page.wait_for_function(
        "t => (document.getElementById('attnviz-lesson-live') || {}).textContent === t",
        arg=text,
        timeout=10000,
    )
    live = session.page.locator("#attnviz-lesson-live")
    assert live.get_attribute("aria-live") == "polite" and live.get_attribute("role") == "status"


# the levels of the main column's headings, in document order
HEADINGS_JS = """() => Array.from(document.querySelectorAll(
  '[data-testid="stMain"] h1, [data-testid="stMain"] h2, [data-testid="stMain"] h3,'
  + ' [data-testid="stMain"] h4')).filter(h => h.offsetParent).map(h => +h.tagName[1])"""


def test_a_student_walks_the_intro_lesson_to_its_summary(browser, app_server):
    session = BrowserSession(browser, app_server, viewport=(1440, 900), fresh=True)
    try:
        session.open("/lessons")
        # the page's headings in order for a screen reader: the h1, then each lesson an h2
        levels = session.page.evaluate(HEADINGS_JS)
        assert levels[0] == 1 and set(levels[1:]) == {2}, levels
        _follow(session, "start-intro")
        for i, stop in enumerate(INTRO.stops):
            params = _params(session)
            assert params["stop"] == str(i + 1) and params["lesson"] == "intro"
            # the first page's address is the app's own: Streamlit shows /playground as /
            path = urlparse(session.page.url).path.strip("/") or ui_pages.PAGES[0].slug
            assert path == stop.page
            if "N" in stop.settings:  # the sidebar took the stop's settings, not the last stop's
                assert slider_value(session, "N") == int(stop.settings["N"]), (i, stop.link)
            bar = session.page.locator(".st-key-tour_bar").inner_text()
            assert f"stop {i + 1} of {len(INTRO)}" in bar and stop.title in bar
            if stop.question:
                _answer(session)
                assert re.search(rf"(^|\.){i + 1}-[01]($|\.)", _params(session)["answered"])
                alert = session.page.locator(VERDICT)
                assert alert.count() == 1  # the verdict, once
            if i == 3:  # a reload resumes at the same stop
                session.open(
                    urlparse(session.page.url).path + "?" + urlparse(session.page.url).query
                )
                assert _params(session)["stop"] == "4"
            _follow(session, "next")
            if i + 1 < len(INTRO):  # the new stop said to a screen reader (navlinks.js)
                _said(session, f"Stop {i + 2} of {len(INTRO)}: {INTRO.stops[i + 1].title}")
        answered = _params(session)["answered"].split(".")
        asked = [k for k, s in enumerate(INTRO.stops) if s.question]
        assert sorted(int(a.split("-")[0]) - 1 for a in answered) == asked
        right = sum(a.endswith("-1") for a in answered)
        summary = session.page.locator(".st-key-tour_bar").inner_text()
        assert f"{right} of {len(asked)}" in summary
        _said(session, f"End of the lesson. Questions answered right: {right} of {len(asked)}.")
        assert not session.exceptions() and not session.errors
    finally:
        session.close()


def test_the_bar_fits_a_phone(browser, app_server):
    session = BrowserSession(browser, app_server, viewport=(390, 844), touch=True)
    try:
        i = next(
            k for k, s in enumerate(INTRO.stops) if s.question and s.question.kind == "top_key"
        )
        session.open(_stop_link(i))
        sizes = session.page.evaluate(
            """() => ({
              width: document.documentElement.clientWidth,
              wide: [...document.querySelectorAll('.st-key-tour_bar *')].filter(
                e => e.getBoundingClientRect().right > document.documentElement.clientWidth + 1
              ).length,
              links: [...document.querySelectorAll('.tour-link')]
                .map(a => a.getBoundingClientRect().height),
            })"""
        )
        assert sizes["wide"] == 0
        assert sizes["links"] and min(sizes["links"]) >= 44
        assert session.page.locator(".st-key-tour_question").count() == 1
    finally:
        session.close()


#: Each inline formula of the bar: its text, and whether its atoms stand left to right in
#: the order KaTeX wrote them (a subscript after its base; no fraction in the bar's text).
FORMULA_ORDER_JS = """() => Array.from(document.querySelectorAll('.st-key-tour_bar .katex-html'))
  .map(k => { const atoms = '.mord, .mrel, .mbin, .mopen, .mclose, .mpunct';
    const xs = Array.from(k.querySelectorAll(atoms)).filter(e => !e.querySelector(atoms))
      .map(e => e.getBoundingClientRect().left);
    return [k.textContent, xs.every((x, i) => i === 0 || x >= xs[i - 1] - 0.5)]; })"""


def test_the_bar_in_arabic_writes_its_words_and_formulas_the_right_way(browser, app_server):
    """In Arabic on a phone: the bar's isolates are not written out ("<U+2068>" stood around
    the lesson's title and the stop's numbers), an inline formula runs left to right inside
    the right-to-left prose ("$D = 8$" read "8D ="), and nothing is wider than the screen."""
    session = BrowserSession(browser, app_server, viewport=(390, 844), touch=True)
    try:
        session.open(_stop_link(0, lang="ar"))
        bar = session.page.locator(".st-key-tour_bar").inner_text()
        assert "U+20" not in bar, bar
        formulas = session.page.evaluate(FORMULA_ORDER_JS)
        assert any("D=8" in f.replace(" ", "") for f, _ in formulas), formulas
        assert all(ok for _, ok in formulas), formulas
        width = session.page.evaluate("() => document.documentElement.scrollWidth")
        assert width <= 390, width
    finally:
        session.close()


#: The slide's scroll (px the page's main box scrolls), once its charts have settled.
SCROLL = "(() => { const m = document.querySelector('[data-testid=stMain]');"
SCROLL += " return m.scrollHeight - m.clientHeight; })()"


def _no_scroll(session, where: str) -> None:
    """The slide comes to fit the screen (its charts fit the room below their top when they
    have drawn; board.js refits when the text above them settles)."""
    try:
        session.page.wait_for_function(f"{SCROLL} <= 1", timeout=8000)
    except Exception:  # noqa: BLE001 - say by how much
        scroll = session.page.evaluate(SCROLL)
        raise AssertionError(f"{where}: the slide scrolls {scroll} px") from None


def test_the_lecture_goes_through_the_lesson_with_the_remote_s_keys(browser, app_server):
    """?present=1 at 1920x1080, from the first stop to the summary with PageDown alone: a
    stop pinned to one of step by step's steps (its link names ``step=``) is that step, its
    PageDown the lesson's Next; a stop that names no step plays its page's steps first; no
    slide scrolls (the bar is one line; a stop's question is one button under the charts,
    which leave room for it); the stop's look drawn; PageUp goes back."""
    session = BrowserSession(browser, app_server, viewport=(1920, 1080), fresh=True)
    try:
        session.open(_stop_link(0, present=1))
        dashed = """() => [...document.querySelectorAll('.shapelayer path')]
          .filter(p => (p.style.strokeDasharray || 'none') !== 'none')
          .map(p => { const r = p.getBoundingClientRect();
                      return r.width > 100 && r.top >= 0 && r.bottom <= innerHeight; })"""
        i, pinned = 0, 0
        while i < len(INTRO):
            stop, params = INTRO.stops[i], _params(session)
            where = f"stop {i + 1} ({stop.page}, step {params.get('step')})"
            assert params["stop"] == str(i + 1) and params["present"] == "1", where
            _no_scroll(session, where)
            if stop.step == 6 and stop.look is not None:
                # the stop's look (row 2 of the weights): a dashed outline on the slide's chart
                assert session.page.evaluate(dashed) == [True], where
            session.rerun_after(lambda: session.page.keyboard.press("PageDown"))
            after = _params(session)
            if after["stop"] == str(i + 1):  # a stop that names no step: its page's next step
                assert stop.step is None, f"{where}: PageDown went to the page's next step"
                assert int(after["step"]) == int(params.get("step", "1")) + 1, where
                continue
            assert after["stop"] == str(i + 2), where
            pinned += stop.step is not None
            i += 1
            if i < len(INTRO):
                assert after.get("step") == INTRO.stops[i].settings.get("step"), where
        assert pinned == sum(s.step is not None for s in INTRO.stops) == 6
        session.rerun_after(lambda: session.page.keyboard.press("PageUp"))  # from the summary
        assert _params(session)["stop"] == str(len(INTRO))
        assert not session.exceptions() and not session.errors
    finally:
        session.close()


def test_the_lessons_page_resumes_where_the_tour_was_left(browser, app_server):
    """The browser kept the tour's progress (navlinks.js, localStorage): the Lessons page
    shows that lesson's Resume link, which opens the same stop with the same answers."""
    session = BrowserSession(browser, app_server, viewport=(1440, 900), fresh=True)
    try:
        i = next(k for k, s in enumerate(INTRO.stops) if s.question and s.question.predicted)
        session.open(_stop_link(i, answered=f"{i + 1}-1"))
        where = _params(session)
        session.page.wait_for_function(
            "() => localStorage.getItem('attnviz-lesson:intro')", timeout=10000
        )
        session.go("/lessons")
        session.page.locator('[data-tour="resume-intro"]').wait_for(state="visible", timeout=10000)
        assert session.page.locator('[data-tour="resume-scaling_masks"]').is_hidden()
        _follow(session, "resume-intro")
        assert _params(session) == where
    finally:
        session.close()


#: Each visible list item of the main column: px between its right edge and its list's
#: (where a right-to-left list draws its number or bullet).
MARKER_ROOM_JS = """() => Array.from(document.querySelectorAll(
    '[data-testid="stMain"] ol > li, [data-testid="stMain"] ul > li'))
  .filter(li => li.getClientRects().length && !li.closest('.attnviz-board'))
  .map(li => Math.round(li.parentElement.getBoundingClientRect().right
    - li.getBoundingClientRect().right))"""


def test_arabic_lists_number_their_items_inside_their_box(browser, app_server):
    """The Lessons page in Arabic: each lesson's stops are a numbered list (st.html), and its
    numbers stand at the right inside the list's box; they stood on its right edge (the
    list's indent was on the left), "10." to "12." past it (board.css)."""
    session = BrowserSession(browser, app_server, viewport=(1440, 900))
    try:
        session.open("/lessons?lang=ar")
        session.page.wait_for_function(f"({MARKER_ROOM_JS})().length > 0", timeout=30000)
        room = session.page.evaluate(MARKER_ROOM_JS)
        assert room and min(room) >= 16, room
    finally:
        session.close()
