"""A lesson played as a tour (attnviz.ui.tour) and the Lessons page, through AppTest: the bar,
its links, a question answered in place and carried in the link, the summary's count, an
unknown lesson said, a broken teacher's lesson listed with its error."""

from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

from streamlit.testing.v1 import AppTest

from attnviz.classroom import lessons
from attnviz.ui import pages as ui_pages
from attnviz.ui.controls import DEFAULTS
from attnviz.ui.text import plain_text

ROOT = Path(__file__).resolve().parents[2]
INTRO = next(x for x in lessons.shipped() if x.slug == "intro")


def _open(slug: str, params: dict[str, str]) -> AppTest:
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
    at.query_params.update(params)
    at.run()
    if slug != ui_pages.PAGES[0].slug:
        at.switch_page(ui_pages.page(slug).file).run()
    assert not at.exception, [e.message for e in at.exception]
    return at


def _stop(i: int, **extra: str) -> AppTest:
    stop = INTRO.stops[i]
    return _open(stop.page, {**stop.settings, "lesson": "intro", "stop": str(i + 1), **extra})


def _links(at: AppTest) -> dict[str, str]:
    """The tour's links (data-testid -> href) in the page's HTML elements."""
    html = " ".join(str(h.proto.body) for h in at.get("html"))
    return dict(
        re.findall(r'data-tour="([\w-]+)"[^>]*? href="([^"]+)"', html.replace("&amp;", "&"))
    )


def _target(href: str) -> tuple[str, dict[str, str]]:
    parts = urlsplit(href)
    page = parts.path.strip("./") or ui_pages.PAGES[0].slug  # "./?...": the first page
    return page, {k: v[0] for k, v in parse_qs(parts.query).items()}


def test_the_bar_says_the_stop_and_links_back_and_next_with_their_settings():
    at = _stop(2)
    # one Markdown block: the lesson and the stop's number, its title and its text
    head = [m.value for m in at.markdown if "stop 3 of 12" in m.value]
    assert len(head) == 1
    assert f"**{plain_text(INTRO.stops[2].title)}**" in head[0]
    assert INTRO.stops[2].text.split("\n")[0] in head[0]
    links = _links(at)
    page, params = _target(links["next"])
    assert page == INTRO.stops[3].page
    # the stop's settings but its controls' defaults (D=8, seed=0: a history navigation sets a
    # missing value to its default; Streamlit would take them out of the address one message
    # each, every one a redraw of the browser's app)
    assert INTRO.stops[3].settings == {"N": "4", "D": "8", "heads": "1", "seed": "0", "step": "4"}
    assert (DEFAULTS["D"], DEFAULTS["seed"]) == (8, 0)
    assert params == {"N": "4", "heads": "1", "step": "4", "lesson": "intro", "stop": "4"}
    page, params = _target(links["back"])
    assert (page, params["stop"]) == (INTRO.stops[1].page, "2")
    assert "view" not in links  # nothing moved: no "Back to the lesson's view"


def test_a_moved_control_offers_the_lesson_s_view_back():
    at = _stop(2)
    at.session_state["seed"] = 5
    at.run()
    page, params = _target(_links(at)["view"])
    # seed=0 is the default: the link leaves it out, and its history navigation (navlinks.js)
    # or a new visit sets a missing value to the default; the stop's N stays in it
    assert "seed" not in params and params["N"] == INTRO.stops[2].settings["N"]
    assert params["stop"] == "3" and page == INTRO.stops[2].page


def _answer(i: int, pick) -> tuple[AppTest, str]:
    at = _stop(i)
    box = at.radio(key="tour_choice")
    box.set_value(pick(list(box.options))).run()
    at.button(key="tour_check").click().run()
    answered = at.query_params.get("answered")
    return at, answered[0] if isinstance(answered, list) else answered


def test_a_prediction_is_answered_in_place_and_carried_in_the_link():
    i = next(k for k, s in enumerate(INTRO.stops) if s.question and s.question.kind == "top_key")
    at, answered = _answer(i, lambda options: options[0])
    assert re.fullmatch(rf"{i + 1}-[01]", answered)
    verdict = (at.success or at.error)[0].value
    assert bool(at.success) == answered.endswith("-1")
    right = re.search(r"(?:Right: |the answer is )(.+)\.$", verdict).group(1)
    # the same stop again: the right choice is counted right, another one wrong
    at, answered = _answer(i, lambda options: right)
    assert answered == f"{i + 1}-1" and at.success and not at.error
    at, answered = _answer(i, lambda options: next(o for o in options if o != right))
    assert answered == f"{i + 1}-0" and at.error and not at.success
    # the next stop's link carries the answer
    assert _target(_links(at)["next"])[1]["answered"] == answered


def test_the_summary_counts_the_answers():
    n = len(INTRO)
    asked = [k for k, s in enumerate(INTRO.stops) if s.question]
    answered = f"{asked[0] + 1}-1.{asked[1] + 1}-0"
    at = _stop(n - 1, stop=str(n + 1), answered=answered)
    text = " ".join(m.value for m in at.markdown)
    assert f"1 of {len(asked)}" in text
    html = " ".join(str(h.proto.body) for h in at.get("html"))
    assert html.count("<li>") == n and html.count("✓") == 1 and html.count("✗") == 1


def test_an_unknown_lesson_is_said():
    at = _open("playground", {"lesson": "nope"})
    assert any("nope" in w.value for w in at.warning)


def test_the_lessons_page_lists_the_shipped_and_a_broken_one_with_its_line(tmp_path, monkeypatch):
    (tmp_path / "mine.toml").write_text(
        'title = "Mine"\n\n[[stop]]\ntitle = "x"\nlink = "/nowhere"\n'
    )
    monkeypatch.setenv(lessons.ENV, str(tmp_path))
    at = _open("lessons", {})
    titles = [s.value for s in at.header]
    assert titles[:3] == [x.title for x in lessons.shipped()]
    errors = [e.value for e in at.error]
    assert (
        len(errors) == 1 and "mine" in errors[0] and ":5:" in errors[0] and "'nowhere'" in errors[0]
    )
    # a lesson with typed questions offers a live class of them (tests/ui/test_live.py)
    links = _links(at)
    assert links["class-intro"] == "./exercises?class_lesson=intro"
    assert "class-scaling_masks" in links and "class-learned_heads" not in links


def test_a_view_added_as_a_stop_gives_a_lesson_file_that_opens_it():
    at = _open(
        "masking", {"N": "5", "mask": "causal", "lang": "es", "lesson": "intro", "stop": "2"}
    )
    assert "tour_stop_title" not in [t.key for t in at.text_input]  # closed: not sent
    at.session_state["tour_builder_box"] = True  # opened (an opening reruns the page)
    at.run()
    at.text_input(key="tour_stop_title").set_value("Causal").run()
    at.button(key="tour_add").click().run()
    at.button(key="tour_add").click().run()  # the default title: the page's
    built = at.session_state["tour_built"]
    text = lessons.to_toml("My lesson", built)
    from attnviz.ui import lesson_links

    lesson = lessons.parse(text, pages=lesson_links.slugs(), check_link=lesson_links.check_link)
    first, second = lesson.stops
    assert first.title == "Causal" and first.page == "masking"
    assert {"N": "5", "mask": "causal"}.items() <= first.settings.items()
    assert not {"lang", "lesson", "stop"} & set(first.settings)  # the view, not the tour
    assert second.title == at.session_state["tour_built"][1]["title"] != "Causal"
    assert at.get("download_button")  # the file to download


def test_a_teacher_s_markup_is_written_not_run(tmp_path, monkeypatch):
    (tmp_path / "evil.toml").write_text(
        'title = "<script>alert(1)</script>"\n\n[[stop]]\ntitle = "<img src=x onerror=alert(2)>"\n'
        'link = "/masking?N=4"\n'
    )
    monkeypatch.setenv(lessons.ENV, str(tmp_path))
    at = _open("lessons", {})
    html = " ".join(str(h.proto.body) for h in at.get("html"))
    assert "&lt;img src=x onerror=alert(2)&gt;" in html and "<img" not in html
    at = _open("masking", {"N": "4", "lesson": "evil", "stop": "2"})  # the summary
    html = " ".join(str(h.proto.body) for h in at.get("html"))
    assert "&lt;img" in html and "<img" not in html and "<script" not in html


def _announced(at: AppTest) -> str:
    """What the bar names for a screen reader (navlinks.js says it when it changes)."""
    html = " ".join(str(h.proto.body) for h in at.get("html"))
    return re.search(r'data-attnviz-announce="([^"]*)"', html).group(1)


def test_each_stop_names_itself_for_a_screen_reader():
    assert _announced(_stop(2)) == f"Stop 3 of 12: {INTRO.stops[2].title}"
    assert _announced(_stop(3)) == f"Stop 4 of 12: {INTRO.stops[3].title}"
    n = len(INTRO)
    asked = [k for k, s in enumerate(INTRO.stops) if s.question]
    at = _stop(n - 1, stop=str(n + 1), answered=f"{asked[0] + 1}-1")
    assert _announced(at) == f"End of the lesson. Questions answered right: 1 of {len(asked)}."


def test_a_lesson_s_link_without_its_stop_opens_the_first_stop_s_view():
    """``?lesson=intro`` typed by hand: the first stop's page with its settings, not the
    page the link happened to name with its own controls."""
    at = _open(ui_pages.PAGES[0].slug, {"lesson": "intro", "lang": "es"})
    first = INTRO.stops[0]
    assert first.page != ui_pages.PAGES[0].slug  # the link names another page
    params = {k: str(v) for k, v in at.query_params.items()}
    assert params["stop"] == "1" and params["lang"] == "es"
    assert params["N"] == first.settings["N"] and params["step"] == first.settings["step"]
    assert at.session_state["N"] == int(first.settings["N"])  # the sidebar took the stop's N
    assert "view" not in _links(at)  # the lesson's view is the one shown


def test_on_a_slide_pinned_to_one_step_the_remote_s_keys_go_to_the_lesson():
    """A stop whose link names its step is that step: PageDown / PageUp are the lesson's
    Next / Back (navlinks.js follows them when no button takes the key), not the page's
    step buttons; without a lesson the step buttons keep them."""
    i = next(k for k, s in enumerate(INTRO.stops) if s.step == 2)
    stop = INTRO.stops[i]
    at = _stop(i, present="1")
    keys = [at.button(key=f"present_{b}").proto.shortcut for b in ("next", "prev")]
    assert keys == ["", ""]
    assert 'data-attnviz-key="PageDown"' in " ".join(str(h.proto.body) for h in at.get("html"))
    alone = _open(stop.page, {**stop.settings, "present": "1"})
    keys = [alone.button(key=f"present_{b}").proto.shortcut for b in ("next", "prev")]
    assert keys == ["pagedown", "pageup"]  # as Streamlit writes them


def test_the_slide_bar_s_bold_survives_a_right_to_left_catalog():
    """In Arabic the title is isolated (U+2068 ... U+2069): "**" put inside it, after a
    title's "؟", closed no bold and showed as two asterisks; the bold wraps the whole line."""
    i = next(k for k, s in enumerate(INTRO.stops) if s.title.rstrip().endswith("?"))
    at = _stop(i, present="1", lang="ar")
    line = [m.value for m in at.markdown if f"{i + 1}" in m.value and "12" in m.value]
    assert len(line) == 1, [m.value for m in at.markdown]
    assert line[0].startswith("**") and line[0].endswith("**")
    assert "**\u2069" not in line[0] and "\u2068**" not in line[0]


def test_the_bar_in_arabic_shows_no_control_characters_as_text():
    """The bar's lines are the catalog's words, isolates and all: shown through
    ``plain_text`` they read "<U+2068>" around the lesson's title and the stop's numbers
    on every Arabic stop; now the isolates are kept and nothing is written as a code."""
    for i, extra in ((0, {}), (0, {"present": "1"}), (4, {})):  # stop 1 looks at a chart
        at = _stop(i, lang="ar", **extra)
        said = " ".join(m.value for m in at.markdown) + " ".join(c.value for c in at.caption)
        assert "\u2068" in said and "<U+" not in said.replace("\\", ""), said


def test_a_teacher_s_controls_cannot_close_the_catalog_s_isolate(tmp_path, monkeypatch):
    """A teacher's lesson title is made plain before it goes into the Arabic bar's sentence:
    its stray end of isolate and its unclosed start are shown as codes, not paired with the
    isolate the catalog puts around the title."""
    (tmp_path / "bidi.toml").write_text(
        'title = "abc\u2069 12 / x \u2068"\n\n[[stop]]\ntitle = "One"\nlink = "/masking?N=4"\n'
    )
    monkeypatch.setenv(lessons.ENV, str(tmp_path))
    at = _open("masking", {"N": "4", "lesson": "bidi", "stop": "1", "lang": "ar"})
    head = next(m.value for m in at.markdown if m.value.startswith(":gray["))
    shown = head.replace("\\", "")
    assert "abc<U+2069> 12 / x <U+2068>" in shown, head
    assert shown.count("\u2068") == shown.count("\u2069"), head  # the catalog's own, paired
