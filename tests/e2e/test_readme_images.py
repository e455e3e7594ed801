"""The README's and the docs' pictures (`docs/img/*.png`) are screenshots the browser tests
take.

Every run checks the committed files: each is a PNG of the window size its view is taken
at, named in the document that shows it. With `ATTNVIZ_README_IMAGES=1` the pictures are
taken again in the browser (into `artifacts/screenshots/readme_*.png` and `docs/img/`, to be
committed: `ATTNVIZ_README_IMAGES=1 bash scripts/test.sh tests/e2e/test_readme_images.py`);
without it those tests are not defined, as they test the pictures, not the app, whose
views, taps and classes on phones the other browser tests walk (a suite's worth of CPU:
eleven page visits and a class).

Phones (390x844) are touch screens (no hover); the live class's pictures come from a class
started here, with its own class store (class_helpers), two students answering.
"""

from __future__ import annotations

import os
import shutil
import struct

import pytest
from class_helpers import Phone, app_server, data_dir  # noqa: F401
from e2e_app import ROOT, SCREENSHOTS, BrowserSession

from attnviz.classroom import exercises

pytestmark = pytest.mark.e2e

IMG = ROOT / "docs" / "img"
PHONE = (390, 844)
CLASSROOM = "docs/classroom.md"
#: name -> (link, window, the document that shows it, the element scrolled to the window's
#: top, under Streamlit's 60-px header, or None): what each picture shows.
VIEWS = {
    "playground": ("/", (1280, 800), "README.md", None),
    "presenter": ("/step_by_step?present=1&N=5&step=4", (1280, 720), "README.md", None),
    "presenter_1080p": (
        "/step_by_step?present=1&N=6&step=4",
        (1920, 1080),
        "docs/classroom.md",
        None,
    ),
    "phone_playground": ("/", PHONE, "README.md", ".st-key-head"),
    # issue 35, "Every page a slide"
    "slide_qkv": ("/step_by_step?present=1&N=6&D=8&step=2", (1920, 1080), CLASSROOM, None),
    "slide_multi_head": ("/multi_head?present=1&heads=4", (1920, 1080), CLASSROOM, None),
    "learned_1440": ("/learned?task=induction", (1440, 900), "docs/app.md", ".st-key-lr_step"),
    "phone_learned": ("/learned?task=induction", PHONE, "docs/app.md", ".st-key-lr_step"),
    # issue 45, the students' own language
    "lang_es_playground": ("/?lang=es", (1440, 900), "docs/translating.md", None),
    "lang_zh_playground": ("/?lang=zh_CN", (1440, 900), "docs/translating.md", None),
    "lang_ar_playground": ("/?lang=ar", (1440, 900), "docs/translating.md", None),
    "lang_ar_phone": ("/?lang=ar", PHONE, "docs/translating.md", None),
    "lang_ar_presenter": (
        "/step_by_step?lang=ar&present=1",
        (1920, 1080),
        "docs/translating.md",
        None,
    ),
}
#: pictures of a live class on a phone (test_class_pictures_on_a_phone): name -> document
CLASS_VIEWS = {"phone_student": "docs/classroom.md", "phone_tally": "docs/classroom.md"}
#: every picture: name -> (window, the document that shows it)
PICTURES = {
    **{name: (window, doc) for name, (_, window, doc, _) in VIEWS.items()},
    "phone_tap": (PHONE, "docs/app.md"),
    **{name: (PHONE, doc) for name, doc in CLASS_VIEWS.items()},
}
TAKE = os.environ.get("ATTNVIZ_README_IMAGES") == "1"
SEED = 5


# the element at the window's top, under Streamlit's header (its toolbar covers 60 px)
SCROLL_UNDER_HEADER_JS = """(e) => { const main = document.querySelector('[data-testid="stMain"]');
  main.scrollTop += e.getBoundingClientRect().top - 64; }"""


def png_size(path) -> tuple[int, int]:
    """(width, height) from a PNG's IHDR chunk."""
    head = path.read_bytes()[:24]
    assert head[:8] == b"\x89PNG\r\n\x1a\n", f"{path} is not a PNG"
    return struct.unpack(">II", head[16:24])


def session(browser, server, window) -> BrowserSession:
    """A window of that size; a phone's is a touch screen."""
    return BrowserSession(browser, server, viewport=window, touch=window[0] <= 640)


def committed(name: str, window, doc: str) -> None:
    """The committed picture: a PNG of that window's size, shown in ``doc``."""
    target = IMG / f"{name}.png"
    assert target.is_file(), f"{target} is missing: run with ATTNVIZ_README_IMAGES=1"
    assert png_size(target) == window, f"{target} is not a {window} screenshot"
    assert f"img/{name}.png" in (ROOT / doc).read_text(), f"{doc} does not show {name}.png"


def keep(name: str, shot, window, doc: str) -> None:
    """Check the screenshot, write it into docs/img/ when asked, check the committed one."""
    assert png_size(shot) == window
    if TAKE:
        IMG.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(shot, IMG / f"{name}.png")
    committed(name, window, doc)


def taking(test):
    """A test that takes pictures again: defined only with ``ATTNVIZ_README_IMAGES=1`` (not
    skipped: the suite skips nothing)."""
    return test if TAKE else None


@pytest.mark.parametrize("name", sorted(PICTURES))
def test_committed_picture_has_its_views_size_and_is_shown(name):
    committed(name, *PICTURES[name])


def test_every_picture_in_docs_img_is_one_of_these():
    """A picture of docs/img/ that no test takes again would go stale unseen (the class
    projector's two are taken by test_class_projector_e2e.py)."""
    taken = set(PICTURES) | {"class_projector_join", "class_projector_question"}
    assert {p.stem for p in IMG.glob("*.png")} <= taken


@taking
@pytest.mark.parametrize("name", sorted(VIEWS))
def test_readme_picture_is_a_screenshot_of_its_view(browser, app_server, name):  # noqa: F811
    link, window, doc, top = VIEWS[name]
    s = session(browser, app_server, window)
    try:
        s.open(link)
        s.assert_healthy(f"README picture {name}")
        assert s.plotly_count() >= 1, f"{link}: no chart drawn"
        if top:
            s.page.locator(top).evaluate(SCROLL_UNDER_HEADER_JS)
            s.wait_for_run()  # boards that scrolled into view draw what they deferred
        shot = s.screenshot(f"readme_{name}", full=False, always=True)
    finally:
        s.close()
    keep(name, shot, window, doc)


@taking
def test_phone_tap_picture(browser, app_server):  # noqa: F811
    """A tap on a weights cell on a phone (query t4, key t0): the chart's outline and
    caption on that cell, its row outlined in the linked charts, no hover label over it."""
    s = session(browser, app_server, PHONE)
    try:
        s.open("/")
        weights = s.page.locator('[data-key="pg_weights"]')
        weights.evaluate(SCROLL_UNDER_HEADER_JS)
        s.page.wait_for_timeout(300)
        box = s.page.evaluate(
            """() => { const gd = document.querySelector('[data-key="pg_weights"] .js-plotly-plot');
              const r = gd.getBoundingClientRect(), z = gd._fullLayout._size;
              return {x: r.left + z.l, y: r.top + z.t, w: z.w, h: z.h}; }"""
        )
        s.rerun_after(
            lambda: s.page.touchscreen.tap(
                box["x"] + box["w"] * 0.5 / 6, box["y"] + box["h"] * 4.5 / 6
            )
        )
        live = weights.locator("[aria-live]").first
        s.page.wait_for_function(
            "(e) => e.textContent.startsWith('query t4, key t0')", arg=live.element_handle()
        )
        s.assert_healthy("a tap on a phone")
        shot = s.screenshot("readme_phone_tap", full=False, always=True)
    finally:
        s.close()
    keep("phone_tap", shot, PHONE, "docs/app.md")


def tap(s: BrowserSession, key: str) -> None:
    """Press the visible button of widget ``key`` (a phone's page also holds a hidden copy of
    a button with help) and wait for the rerun."""
    s.rerun_after(s.page.locator(f".st-key-{key} button:visible").first.click)


@taking
def test_class_pictures_on_a_phone(browser, app_server):  # noqa: F811
    """A teacher starts a class; two students on phones (the class's light page) answer the
    first question (one right, one wrong); the pictures: a student's page with its verdict
    and the teacher's tally on a phone."""
    items = exercises.generate(seed=SEED, count=8)
    teacher = session(browser, app_server, PHONE)
    students: list[Phone] = []
    try:
        teacher.open(f"/exercises?seed={SEED}")
        tap(teacher, "class_start")
        teacher.page.wait_for_function("new URLSearchParams(location.search).has('teacher')")
        code = teacher.page.evaluate("new URLSearchParams(location.search).get('class')")
        for n in range(2):
            s = Phone(browser, app_server, PHONE)
            students.append(s)
            s.open(f"/join?class={code}")
            s.page.get_by_label("Nickname (optional)").fill(["Ada", "Alan"][n])
            s.answer(0, items[0].answer_text if n == 0 else "17")
        students[0].verdict(0, f"Right: {items[0].answer_text}.")
        students[0].card(0).locator(".answer").scroll_into_view_if_needed()
        students[0].page.evaluate("window.scrollBy(0, 180)")
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        shot = SCREENSHOTS / "readme_phone_student.png"
        students[0].page.screenshot(path=str(shot))
        shots = {"phone_student": shot}
        teacher.page.bring_to_front()
        teacher.page.get_by_text("2 students · 2 answers").wait_for(timeout=30_000)
        teacher.page.get_by_text("2 students · 2 answers").scroll_into_view_if_needed()
        shots["phone_tally"] = teacher.screenshot("readme_phone_tally", full=False, always=True)
        teacher.assert_healthy("a class on phones")
        assert not [e for s in students for e in s.errors]
    finally:
        teacher.close()
        for s in students:
            s.close()
    for name, doc in CLASS_VIEWS.items():
        keep(name, shots[name], PHONE, doc)
