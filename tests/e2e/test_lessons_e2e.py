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


def test_a_student_walks_the_intro_lesson_to_its_summary(browser, app_server):
    session = BrowserSession(browser, app_server, viewport=(1440, 900), fresh=True)
    try:
        session.open("/lessons")
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
        stop = INTRO.stops[i]
        query = "&".join(
            f"{k}={v}" for k, v in {**stop.settings, "lesson": "intro", "stop": i + 1}.items()
        )
        path = "" if stop.page == ui_pages.PAGES[0].slug else stop.page  # the first page: "/"
        session.open(f"/{path}?{query}")
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


def test_the_lecture_goes_through_a_page_s_steps_then_to_the_next_stop(browser, app_server):
    """?present=1: the bar is one line on the slide (no scrolling), PageDown plays the page's
    own steps first (Streamlit's step buttons), then follows the lesson's Next."""
    session = BrowserSession(browser, app_server, viewport=(1920, 1080), fresh=True)
    try:
        i = next(k for k, s in enumerate(INTRO.stops) if s.step == 6)  # step by step's softmax
        stop = INTRO.stops[i]
        query = "&".join(f"{k}={v}" for k, v in stop.settings.items())
        session.open(f"/{stop.page}?{query}&present=1&lesson=intro&stop={i + 1}")
        main = "(() => { const m = document.querySelector('[data-testid=stMain]');"
        main += " return m.scrollHeight - m.clientHeight; })()"
        assert session.page.evaluate(main) <= 1  # the slide with its lesson bar: no scrolling
        # the stop's look (row 2 of the weights): a dashed outline drawn on the slide's chart
        dashed = """() => [...document.querySelectorAll('.shapelayer path')]
          .filter(p => (p.style.strokeDasharray || 'none') !== 'none')
          .map(p => { const r = p.getBoundingClientRect();
                      return r.width > 100 && r.top >= 0 && r.bottom <= innerHeight; })"""
        assert stop.look and stop.look.chart == "weights"
        assert session.page.evaluate(dashed) == [True]
        session.rerun_after(lambda: session.page.keyboard.press("PageDown"))
        assert (_params(session)["step"], _params(session)["stop"]) == ("7", str(i + 1))
        session.rerun_after(lambda: session.page.keyboard.press("PageDown"))
        assert _params(session)["stop"] == str(i + 2)  # the page's last step: the next stop
        assert _params(session)["present"] == "1"
        assert not session.exceptions() and not session.errors
    finally:
        session.close()


def test_the_lessons_page_resumes_where_the_tour_was_left(browser, app_server):
    """The browser kept the tour's progress (navlinks.js, localStorage): the Lessons page
    shows that lesson's Resume link, which opens the same stop with the same answers."""
    session = BrowserSession(browser, app_server, viewport=(1440, 900), fresh=True)
    try:
        i = next(k for k, s in enumerate(INTRO.stops) if s.question and s.question.predicted)
        stop = INTRO.stops[i]
        query = "&".join(f"{k}={v}" for k, v in stop.settings.items())
        path = "" if stop.page == ui_pages.PAGES[0].slug else stop.page
        session.open(f"/{path}?{query}&lesson=intro&stop={i + 1}&answered={i + 1}-1")
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
