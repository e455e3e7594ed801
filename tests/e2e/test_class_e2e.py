"""A live class in a real browser: a teacher tab (Streamlit) and students' phones on the
class's light page (``/join``, attnviz.classroom.web).

The teacher presses **Start a class**; three phones open the join link the teacher's page
shows and answer the first question (one right, two wrong); the teacher's tally (refreshed
every 2 s) shows 3 answers with their nicknames; the teacher reveals a question and every
phone shows its answer; the class ends and every phone says so. A phone's page: its
requests and bytes, no other host, no sideways scrolling, 44-px targets, axe-core; an answer
made offline is kept, said "Not sent yet", and sent when the network is back.
"""

from __future__ import annotations

import csv
import io
import re
from urllib.parse import urlparse

import pytest
from axe import BLOCKING, scan
from class_helpers import Phone, app_server, data_dir, press, start_class  # noqa: F401
from e2e_app import ROOT, BrowserSession

from attnviz import i18n
from attnviz.classroom import exercises
from attnviz.classroom.store import ClassStore
from attnviz.classroom.web import words
from attnviz.ui import live

pytestmark = pytest.mark.e2e

SEED = 5
LIVE_WAIT_MS = 30_000  # the tally refreshes every 2 s; a loaded machine gets room
#: The light page's budget on a phone (issue 31): the join link opened, everything it loads.
MAX_REQUESTS = 15
MAX_BYTES = 150_000


def join_link(teacher: BrowserSession, code: str) -> str:
    """The join link as the teacher's page shows it (under the QR code)."""
    text = teacher.page.locator(".st-key-class_join").inner_text()
    found = re.findall(rf"https?://\S+/join\?class={code}", text)
    assert len(found) == 1, text
    return found[0]


def test_a_teacher_and_three_phones(browser, app_server, data_dir):  # noqa: F811 (fixtures)
    items = exercises.generate(seed=SEED, count=live.COUNT)
    teacher = BrowserSession(browser, app_server)
    phones = [Phone(browser, app_server) for _ in range(3)]
    try:
        # 1) the teacher starts a class: the join link, its QR code, the answer keys
        code, key = start_class(teacher, SEED)
        teacher.page.get_by_text(f"Live class {code}").wait_for()
        assert "0 students · 0 answers" in teacher.page.inner_text("body")
        link = join_link(teacher, code)
        assert key not in teacher.page.locator(".st-key-class_join").inner_text()
        assert teacher.page.get_by_role("img", name=re.compile("^QR code of the join link")).count()
        with teacher.page.expect_download() as got:
            teacher.page.locator(".st-key-ex_key_csv button").click()
        rows = list(csv.DictReader(io.StringIO(got.value.path().read_text())))
        assert [r["kind"] for r in rows] == [e.kind for e in items]

        # 2) three phones open the join link and answer question 1 (one right, two wrong)
        for n, phone in enumerate(phones):
            phone.open(link)
            phone.page.get_by_role("heading", name=f"Live class {code}").wait_for()
            assert "Answer key" not in phone.page.inner_text("body")
            phone.page.get_by_label("Nickname (optional)").fill(f"student {n}")
            phone.answer(0, items[0].answer_text if n == 0 else "17")
        phones[0].verdict(0, f"Right: {items[0].answer_text}.")
        for phone in phones[1:]:
            assert "Hint:" in phone.verdict(0, "Not quite")
        ids = {phone.student() for phone in phones}
        assert len(ids) == 3 and all(len(i) == 16 for i in ids)  # each kept in its link

        # 3) the teacher's tally shows them (no reload: the fragment refreshes)
        teacher.page.get_by_text("3 students · 3 answers").wait_for(timeout=LIVE_WAIT_MS)
        # the fragment's elements arrive one by one: its first line can be new while the
        # question's row below it (after the bar chart) is still the last run's
        q0 = teacher.page.locator(".st-key-class_q0")
        q0.get_by_text("3 answered").wait_for(timeout=LIVE_WAIT_MS)
        row = q0.inner_text()
        assert "3 answered, 1 right, 2 wrong" in row and "17" in row and "×2" in row
        store = ClassStore(f"sqlite:///{data_dir / 'classes.db'}")
        assert store.count_rows(code) == 3
        assert store.nicknames(code, key) == ["student 0", "student 1", "student 2"]
        store.dispose()
        names = teacher.page.locator(".st-key-class_nicknames p")
        assert "student 0, student 1, student 2" in names.inner_text()
        teacher.screenshot("class_teacher_1280x800")

        # 4) the teacher reveals question 2: every phone shows its answer and explanation
        press(teacher, "class_reveal1")
        teacher.page.locator(".st-key-class_q1").get_by_text("revealed").wait_for()
        shown = f"Revealed by the teacher: the answer is {items[1].answer_text}"
        for phone in phones:
            phone.card(1).get_by_text(shown).wait_for(timeout=LIVE_WAIT_MS)
        phones[1].page.screenshot(path=str(teacher_shots() / "class_phone_390x844.png"))

        # 5) the class ends: the phones are told
        press(teacher, "class_end")
        teacher.page.get_by_text("This class has ended").wait_for()
        for phone in phones:
            phone.page.get_by_text("The teacher has ended this class").wait_for(
                timeout=LIVE_WAIT_MS
            )
            assert not phone.errors, phone.errors
        teacher.assert_healthy("the live class")
    finally:
        teacher.close()
        for phone in phones:
            phone.close()


def teacher_shots():
    from e2e_app import SCREENSHOTS

    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    return SCREENSHOTS


RESOURCES_JS = """() => performance.getEntriesByType('navigation')
  .concat(performance.getEntriesByType('resource'))
  .map(e => [e.name, e.transferSize || e.encodedBodySize || 0])"""

#: The page has shown the class: the state, the student's answers and the hello answered.
SETTLED_JS = """() => ['state', 'mine', 'hello'].every(k => performance
  .getEntriesByType('resource').some(e => e.name.includes(`/${k}?`) && e.responseEnd > 0))"""

#: The docs that may state what the join page costs: the README and docs/ (benchmarks.md
#: aside: its tables are dated records of bench runs, each with its own method).
DOCS = ("README.md", *(f"docs/{p.name}" for p in sorted((ROOT / "docs").glob("*.md"))))
DATED = ("docs/benchmarks.md",)
WORDS = [
    "one",
    "two",
    "three",
    "four",
    "five",
    "six",
    "seven",
    "eight",
    "nine",
    "ten",
    "eleven",
    "twelve",
]
REQUESTS = re.compile(rf"\b(\d+|{'|'.join(WORDS)}) (?:requests|responses)\b", re.I)
KB = re.compile(r"\b(\d+(?:\.\d+)?) ?[kK]B\b")


def stated_join_figures() -> list[tuple[str, str, float, int]]:
    """What the docs say the join page costs: every "N requests" (or responses) and "X KB"
    in a paragraph about it (one that names ``/join?class=``), as (doc, "requests" or
    "KB", value, decimals written)."""
    found = []
    for doc in (d for d in DOCS if d not in DATED):
        for para in re.split(r"\n\s*\n", (ROOT / doc).read_text()):
            if "/join?class=" not in para:
                continue
            for m in REQUESTS.finditer(para):
                n = m.group(1).lower()
                found.append((doc, "requests", WORDS.index(n) + 1 if n in WORDS else int(n), 0))
            for m in KB.finditer(para):
                decimals = len(m.group(1).partition(".")[2])
                found.append((doc, "KB", float(m.group(1)), decimals))
    return found


def assert_the_docs_say(requests: int, received: int) -> None:
    """Every figure the docs state about the join page is what was measured: ``requests``
    (the responses the page had when it showed the class: the page, its style sheet and
    script, the class's state, the student's answers, the hello that counts the phone in;
    the long poll then waiting is not one) and ``received`` bytes as sent (the browser's
    transferSize: headers and compressed bodies; 1 KB = 1000 bytes). A KB figure matches
    to the digits it is written with (half a unit of its last digit), give or take 50
    bytes (a run's student id, class code and state version)."""
    stated = stated_join_figures()
    assert {doc for doc, *_ in stated} >= {"README.md", "docs/classroom.md"}, stated
    for doc, kind, value, decimals in stated:
        if kind == "requests":
            assert value == requests, f"{doc} says {value} requests; the page made {requests}"
        else:
            slack = 0.5 * 10**-decimals + 0.05
            assert abs(received / 1000 - value) <= slack, (
                f"{doc} says {value} KB; the page received {received / 1000:.2f} KB"
            )


TARGETS_JS = """() => Array.from(document.querySelectorAll('button, input, a[href]'))
  .filter(e => e.offsetParent !== null && e.type !== 'radio')
  .map(e => { const r = e.getBoundingClientRect(); return [e.outerHTML.slice(0, 60),
    Math.round(r.width), Math.round(r.height)]; })"""


#: What sticks out past the phone's right edge (390 px): elements, not inside one that
#: scrolls sideways.
WIDE_JS = """() => Array.from(document.querySelectorAll('main *')).filter(e => {
  const r = e.getBoundingClientRect();
  for (let p = e.parentElement; p; p = p.parentElement)
    if (['auto', 'scroll'].includes(getComputedStyle(p).overflowX)) return false;
  return r.width > 0 && r.right > innerWidth + 0.5; })
  .map(e => [e.tagName, e.closest('.card')?.id, Math.round(e.getBoundingClientRect().right)])"""
#: Where a card's verdict is on the screen: [top, bottom, the screen's height].
VERDICT_JS = """(i) => { const r = document.querySelector(`#q${i} .verdict`)
  .getBoundingClientRect(); return [r.top, r.bottom, innerHeight]; }"""
#: How often a revealed card's explanation (its revealed box's text after the headline)
#: shows in the card's visible text.
ONCE_JS = """(i) => { const card = document.getElementById(`q${i}`);
  const text = card.querySelector('.revealed').innerText.split('\\n').slice(1).join('\\n').trim();
  return card.innerText.split(text).length - 1; }"""


def test_a_phone_opens_a_light_page_that_fits(browser, app_server, data_dir):  # noqa: F811
    """The page as it loads, then every question answered right (its verdict, with the
    explanation, on the screen after Check; nothing past the phone's edge), then revealed
    (the explanation shows once in each card)."""
    store = ClassStore(f"sqlite:///{data_dir / 'classes.db'}")
    code, key = store.create(SEED, live.COUNT)
    items = exercises.generate(seed=SEED, count=live.COUNT)
    phone = Phone(browser, app_server)
    try:
        phone.open(f"/join?class={code}")
        phone.page.get_by_role("heading", name=f"Live class {code}").wait_for()
        phone.page.wait_for_function(SETTLED_JS)  # the state, the answers, the hello came
        host = urlparse(app_server.url).netloc
        assert {urlparse(url).netloc for _, url in phone.requests} == {host}
        loaded = phone.page.evaluate(RESOURCES_JS)
        total = sum(size for _, size in loaded)
        assert len(phone.requests) <= MAX_REQUESTS, phone.requests
        assert total <= MAX_BYTES, loaded
        assert_the_docs_say(len(loaded), total)
        # every question, its matrices included, fits the phone's width
        width = phone.page.evaluate("() => document.documentElement.scrollWidth")
        assert width <= 390, width
        wide = phone.page.evaluate(
            "() => Array.from(document.querySelectorAll('math')).filter("
            "m => m.getBoundingClientRect().right > 390).length"
        )
        assert wide == 0
        small = [t for t in phone.page.evaluate(TARGETS_JS) if t[1] < 44 or t[2] < 44]
        assert not small, small
        radios = phone.page.locator("label.choice")
        assert all(
            b["height"] >= 44 for b in (radios.nth(i).bounding_box() for i in range(radios.count()))
        )
        violations = [v for v in scan(phone.page) if v.impact in BLOCKING]
        assert not violations, "\n".join(map(str, violations))
        phone.page.screenshot(path=str(teacher_shots() / "class_phone_join_390x844.png"))
        # with the keyboard alone: Tab reaches the nickname, then an answer box and its Check
        phone.page.keyboard.press("Tab")
        assert phone.page.evaluate("() => document.activeElement.id") == "nickname"
        phone.page.keyboard.press("Tab")
        assert phone.page.evaluate("() => document.activeElement.id") == "a0"
        phone.page.keyboard.type("3")
        phone.page.keyboard.press("Enter")  # submits the question's form: its Check
        phone.card(0).locator(".verdict").get_by_text(re.compile("^(Right|Not quite)")).wait_for()
        # every question answered right: each verdict on the screen, nothing past its edge
        for i, e in enumerate(items):
            phone.answer(i, e.answer_text)
            phone.verdict(i, f"Right: {e.answer_text}.")
            top, bottom, height = phone.page.evaluate(VERDICT_JS, i)
            assert top >= 0 and bottom <= height + 1, (i, e.kind, top, bottom, height)
        assert phone.page.evaluate("() => document.documentElement.scrollWidth") <= 390
        assert not phone.page.evaluate(WIDE_JS)
        # revealed: the explanation once per card (the verdict keeps its headline)
        for i in range(len(items)):
            store.reveal(code, key, i)
        phone.card(len(items) - 1).locator(".revealed").wait_for(timeout=LIVE_WAIT_MS)
        assert [phone.page.evaluate(ONCE_JS, i) for i in range(len(items))] == [1] * len(items)
        assert not phone.page.evaluate(WIDE_JS)
        assert not phone.errors, phone.errors
    finally:
        phone.close()
        store.dispose()


def test_an_answer_made_offline_is_sent_when_the_network_is_back(browser, app_server, data_dir):  # noqa: E501, F811
    """A class started from a lesson (its typed question first, then the set: issue 48):
    the lesson's question is on the phone first; an answer to it made offline is kept and
    sent when the network is back, graded as the lesson's question."""
    store = ClassStore(f"sqlite:///{data_dir / 'classes.db'}")
    lesson = ("weight@3",)
    code, key = store.create(SEED, 1 + live.COUNT, "intro", lesson)
    items = exercises.of_class(SEED, 1 + live.COUNT, lesson, "en")
    assert items[0].kind == "weight" and items[1:] == exercises.generated(SEED, live.COUNT, "en")
    phone = Phone(browser, app_server)
    try:
        phone.open(f"/join?class={code}")
        phone.page.get_by_role("heading", name=f"Live class {code}").wait_for()
        assert phone.card(0).locator("h2").inner_text() == f"1. {items[0].title} (lesson)"
        assert phone.page.locator("li.card").count() == len(items)
        phone.page.get_by_label("Nickname (optional)").fill("offline")
        phone.context.set_offline(True)
        phone.answer(0, items[0].answer_text)
        phone.verdict(0, "Not sent yet")
        assert store.count_rows(code) == 0
        phone.context.set_offline(False)
        phone.verdict(0, f"Right: {items[0].answer_text}.")
        assert store.answers(code, phone.student()) == {0: (items[0].answer_text, True)}
        assert store.nicknames(code, key) == ["offline"]
        # a reload is the same student: the stored answer and its verdict come back
        phone.page.reload()
        phone.verdict(0, f"Right: {items[0].answer_text}.")
        assert phone.card(0).get_by_label("Your answer").input_value() == items[0].answer_text
        assert store.count_rows(code) == 1
        assert not phone.errors, phone.errors
    finally:
        phone.close()
        store.dispose()


#: Whether each formula in pieces of question i's verdict has them left to right on each line.
PIECES_IN_ORDER_JS = """(i) => Array.from(document.querySelectorAll(`#q${i} .verdict .formula`))
  .every(f => { const rs = Array.from(f.children).map(m => m.getBoundingClientRect());
    return rs.every((r, k) => k === 0 || Math.abs(r.top - rs[k - 1].top) > 4
      || r.left >= rs[k - 1].left); })"""


def test_the_phones_script_speaks_the_pages_language(browser, app_server, data_dir):  # noqa: F811
    """In Arabic the script's own messages (written into it by the server) are Arabic, and
    a count takes the form of its CLDR category (25: "many", one of Arabic's six)."""
    store = ClassStore(f"sqlite:///{data_dir / 'classes.db'}")
    code, _ = store.create(SEED, live.COUNT)
    with i18n.use("ar"):
        first = i18n._("Type an answer first.")
        one, many = (m for m in words._script_calls() if m[1]).__next__()
        too_long = i18n.ngettext(one, many, 25).format(n=25, max=24)
    assert too_long != i18n.ngettext(one, many, 3).format(n=3, max=24)  # "few" is another
    phone = Phone(browser, app_server)
    try:
        phone.open(f"/join?class={code}&lang=ar")
        card = phone.page.locator("li.card:has(input[type=text])").first
        card.locator("button[type=submit]").click()
        card.locator(".verdict").get_by_text(first).wait_for()
        phone.page.locator("#nickname").fill("x" * 25)
        assert phone.page.locator("#nickname-help").inner_text() == too_long
        # a formula in pieces (the explanation's sums) runs left to right in Arabic prose
        items = exercises.generate(seed=SEED, count=live.COUNT)
        i = next(k for k, e in enumerate(items) if e.kind == "argmax")
        phone.page.locator("#nickname").fill("")
        phone.card(i).locator("input[type=text]").fill(items[i].answer_text)
        phone.card(i).locator("button[type=submit]").click()
        phone.card(i).locator(".verdict .formula").first.wait_for()
        assert phone.page.evaluate(PIECES_IN_ORDER_JS, i), phone.page.evaluate(
            "i => document.querySelector(`#q${i} .verdict`).innerText", i
        )
        assert not phone.errors, phone.errors
    finally:
        phone.close()
        store.dispose()


def test_a_wrong_code_is_said_on_both_pages(session, browser, app_server):  # noqa: F811
    session.open("/exercises?class=QQQQQQ")
    session.page.get_by_text("There is no class with the code").wait_for()
    assert "QQQQQQ" in session.page.locator('[data-testid="stAlert"]').inner_text()
    press(session, "class_leave")
    session.page.get_by_text("Exercises: predict, then check").wait_for()
    assert "class=" not in session.page.url
    # the Exercises page's join box opens the light page, which says what is wrong
    session.page.get_by_label("Joining a live class? Its code:").fill("QQQQQQ")
    session.page.get_by_role("button", name="Join").click()
    session.page.wait_for_url(re.compile(r"/join\?class=QQQQQQ$"))
    alert = session.page.get_by_role("alert")
    assert "There is no class with the code QQQQQQ" in alert.inner_text()
    assert session.page.get_by_label("Class code").is_visible()
    session.assert_healthy("a wrong class code")


def test_a_stopping_server_answers_a_waiting_phone_instead_of_holding_its_shutdown(tmp_path):
    """SIGTERM (``docker stop``, a redeploy): the phones' long polls are answered (204, the
    page polls again and says it is reconnecting) rather than cut off when the server is
    killed after its grace period; before attnviz.classroom.web.lifespan, uvicorn's graceful
    shutdown
    waited up to 25 s per open poll."""
    import json
    import threading
    import time
    import urllib.request

    from e2e_app import start_app_server, stop_app_server

    from attnviz import classroom
    from attnviz.classroom.web import hub

    store = ClassStore(f"sqlite:///{tmp_path / 'classes.db'}")
    code, _ = store.create(seed=SEED, count=2)
    server = start_app_server(extra_env={classroom.DATA_DIR_ENV: str(tmp_path)})
    got: list[object] = []
    try:
        api = f"{server.url}/join/api/{code}/state"
        with urllib.request.urlopen(api, timeout=30) as r:
            version = json.load(r)["v"]

        def poll() -> None:
            try:
                with urllib.request.urlopen(f"{api}?since={version}", timeout=60) as r:
                    got.append((r.status, time.monotonic() - stopped))
            except Exception as exc:  # noqa: BLE001 - recorded, asserted below
                got.append(repr(exc))

        waiting = threading.Thread(target=poll)
        waiting.start()
        time.sleep(1)  # the poll is waiting on the server
        stopped = time.monotonic()
        server.proc.terminate()  # SIGTERM while the poll waits
        waiting.join(60)
        server.proc.wait(30)  # uvicorn re-raises the SIGTERM it caught: returncode -15
    finally:
        stop_app_server(server)
    # answered (204: no change) by the stopping server, not by its own end after WAIT_S
    ((status, after),) = got
    assert status == 204 and after < hub.WAIT_S - 10, got
