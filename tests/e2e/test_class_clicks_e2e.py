"""No click of a live class is lost (issue 25, item 9), in a real browser.

A student's **Check** is a fragment rerun. When it reaches the server during a full run of
the page (the poll that reruns the page after a Reveal or End, a page load; committing
the nickname did too, before the nickname became a fragment of its own), Streamlit queues
it behind that run; the live-class branch of ``pages/exercises.py`` used to end with
``st.stop()``, which in Streamlit 1.67 replaces the queued rerun with a stop
(``ScriptRequests.request_stop``): the Check never ran, nothing was stored or shown.

The first two tests hold a student's full run with a test hook
(``tests/e2e/held_server.py``: while a gate file exists, it holds the run at its end and
says when a rerun request waits behind it), so the Check arrives during the full run
every time, not by luck. The third is the classroom's case: six students on a busy server
(two CPU burners) commit their nickname and press Check at once, just after a Reveal
whose poll reruns their pages.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import pytest
from class_helpers import app_server, cpu_burners, data_dir, params  # noqa: F401
from e2e_app import BrowserSession, start_app_server, stop_app_server

from attnviz import classroom, exercises
from attnviz.classroom import ClassStore

pytestmark = pytest.mark.e2e

HERE = Path(__file__).resolve().parent
SEED = 7
WAIT_S = 60  # the hook's files appear within a run; a loaded machine gets room


@pytest.fixture(scope="module")
def gate(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("hold") / "gate"


@pytest.fixture(scope="module")
def held_server(data_dir, gate):  # noqa: F811 (fixture)
    """The app started through the hook, with its own SQLite class store."""
    command = [
        sys.executable, str(HERE / "held_server.py"), "run", "app.py",
        "--server.headless", "true", "--browser.gatherUsageStats", "false",
        "--server.fileWatcherType", "none", "--server.address", "127.0.0.1",
        "--logger.enableRich", "false",
    ]  # fmt: skip
    env = {classroom.DATA_DIR_ENV: str(data_dir), "ATTNVIZ_HOLD": str(gate)}
    server = start_app_server(command=command, extra_env=env)
    yield server
    stop_app_server(server)
    out = server.output()
    server.log_path.unlink(missing_ok=True)
    assert "Traceback (most recent call last)" not in out, out


def _wait_for(path: Path, what: str) -> None:
    deadline = time.monotonic() + WAIT_S
    while not path.exists():
        assert time.monotonic() < deadline, f"the hook never said: {what}"
        time.sleep(0.05)


def _check_behind_a_reveal(s: BrowserSession, store, code: str, key: str, gate: Path) -> None:
    """The teacher reveals question 2: the student's poll reruns the whole page, which the
    hook holds; Check on question 1 is pressed meanwhile and waits behind it."""
    gate.touch()
    store.reveal(code, key, 1)
    _wait_for(gate.with_suffix(".held"), "a full run is held (the poll after the Reveal)")
    s.page.locator(".st-key-ex0_check button").click()
    _wait_for(gate.with_suffix(".queued"), "the Check waits behind the full run")
    gate.unlink()


def _answer_first(s: BrowserSession, text: str, nickname: str) -> None:
    """Type and commit the answer to question 1 and a nickname (each reruns its own
    fragment), without pressing Check."""
    for key, value in (("ex0", text), ("class_nickname", nickname)):
        box = s.page.locator(f".st-key-{key} input")
        box.fill(value)
        s.rerun_after(lambda box=box: box.press("Enter"))


@pytest.fixture
def held(browser, held_server, data_dir, gate):  # noqa: F811 (fixtures)
    """A class on the held server, its store, and a student's session on its page."""
    store = ClassStore(f"sqlite:///{data_dir / 'classes.db'}")
    code, key = store.create(SEED, 8)
    s = BrowserSession(browser, held_server)
    s.open(f"/exercises?class={code}")
    s.page.get_by_text(f"Live class {code}").wait_for()
    yield s, store, code, key
    for suffix in ("", ".cards", ".noflush", ".checked", ".held", ".queued"):
        gate.with_suffix(suffix).unlink(missing_ok=True)
    s.close()
    store.dispose()


def test_a_check_during_a_full_run_is_answered_and_stored(held, gate):
    """Before the fix: the verdict never came and nothing was stored."""
    s, store, code, key = held
    items = exercises.generate(seed=SEED, count=8)
    _answer_first(s, items[0].answer_text, "ada")
    _check_behind_a_reveal(s, store, code, key, gate)
    s.page.get_by_text(f"Right: {items[0].answer_text}.").wait_for(timeout=WAIT_S * 1000)
    s.page.get_by_text(f"the answer is {items[1].answer_text}").wait_for()
    assert store.answers(code, params(s)["student"]) == {0: (items[0].answer_text, True)}
    assert store.nicknames(code, key) == ["ada"]
    s.assert_healthy("a Check during a full run")


def test_a_check_behind_a_run_that_adds_a_question_above_is_answered(held, gate):
    """The teacher asks the room while the student's page is open: the question appears
    above the exercises (its box's own poll); the next full run draws it there too. A
    card's fragment is named by its place on the page: the queued Check must still find
    its card."""
    s, store, code, key = held
    store.ask(
        code, key, page="playground", link="N=4", view="abc", kind="top_key",
        prompt="Which key does query 1 attend to most (head 0)?",
        choices=["key 0", "key 1", "key 2"], answer=2, detail={"query": 1, "head": 0, "key": 2},
    )  # fmt: skip
    s.page.get_by_text("On the projector").wait_for(timeout=WAIT_S * 1000)
    _answer_first(s, "17", "bo")
    _check_behind_a_reveal(s, store, code, key, gate)
    s.page.get_by_text("Not quite").wait_for(timeout=WAIT_S * 1000)
    assert store.count_rows(code) == 1
    s.assert_healthy("a Check during a full run that adds a question")


def test_the_card_after_a_card_stays_when_its_check_waits_behind_a_run(held, gate):
    """Card 7's Check waits behind a full run, and the server is too busy to send (the
    hook blocks its event loop) until the Check's fragment run has started: the start of
    that run drops the full run's unsent messages of card 7. Streamlit then put card 7's
    new block in the place of the element after it, card 8, which vanished until the next
    full run (bench/vanishing_sibling.py); each card now sits in a slot of its own
    (quiz.in_slot). Before that slot: cards 1 to 7 shown, card 8 gone."""
    s, store, code, key = held
    items = exercises.generate(seed=SEED, count=8)
    box = s.page.locator(".st-key-ex6 input")
    box.fill(items[6].answer_text)
    s.rerun_after(lambda: box.press("Enter"))
    cards, noflush = gate.with_suffix(".cards"), gate.with_suffix(".noflush")
    cards.touch()
    store.reveal(code, key, 0)  # the poll reruns the page; the hook holds it before the cards
    _wait_for(gate.with_suffix(".held"), "a full run is held before the cards")
    s.page.locator(".st-key-ex6_check button").click()
    _wait_for(gate.with_suffix(".queued"), "the Check waits behind the full run")
    noflush.touch()
    cards.unlink()  # the full run draws the cards and ends; the Check's run starts
    _wait_for(gate.with_suffix(".checked"), "the Check's callback ran")
    noflush.unlink()
    s.page.get_by_text(f"Right: {items[6].answer_text}.").wait_for(timeout=WAIT_S * 1000)
    s.wait_for_run()
    assert [i for i in range(8) if s.page.locator(f".st-key-ex{i}_card").count()] == list(range(8))
    assert s.page.locator(".st-key-class_leave button").count() == 1
    assert store.count_rows(code) == 1
    s.assert_healthy("the card after a card")


STUDENTS = 6


def test_six_students_check_at_once_on_a_busy_server(browser, app_server, data_dir):  # noqa: F811
    """Two CPU burners beside the server; the teacher reveals question 2 (every student's
    poll reruns the whole page within 3 s), and six students each commit a nickname and
    at once press Check: all six verdicts show, all six answers and nicknames are stored,
    every page shows the revealed answer."""
    items = exercises.generate(seed=SEED, count=8)
    store = ClassStore(f"sqlite:///{data_dir / 'classes.db'}")
    code, key = store.create(SEED, 8)
    students = [BrowserSession(browser, app_server) for _ in range(STUDENTS)]
    answers = [items[0].answer_text if n % 2 == 0 else "17" for n in range(STUDENTS)]
    try:
        for n, s in enumerate(students):
            s.open(f"/exercises?class={code}")
            s.page.get_by_text(f"Live class {code}").wait_for()
            box = s.page.locator(".st-key-ex0 input")
            box.fill(answers[n])
            s.rerun_after(lambda box=box: box.press("Enter"))
            s.page.locator(".st-key-class_nickname input").fill(f"student {n}")
        with cpu_burners(2):
            store.reveal(code, key, 1)
            for s in students:  # no waiting between the students, nor between the two
                s.page.locator(".st-key-class_nickname input").press("Enter")
                s.page.locator(".st-key-ex0_check button").click()
            for n, s in enumerate(students):
                verdict = f"Right: {items[0].answer_text}." if n % 2 == 0 else "Not quite"
                try:
                    s.page.get_by_text(verdict).wait_for(timeout=WAIT_S * 1000)
                except Exception as exc:  # say what the page and the server show
                    card = s.page.locator(".st-key-ex0_card")
                    shown = card.inner_text() if card.count() else "(no card 1)"
                    raise AssertionError(
                        f"student {n}: no verdict; stored {store.count_rows(code)} answers; "
                        f"card 1: {shown[-300:]!r}; server log: {app_server.output()[-3000:]}"
                    ) from exc
                s.page.get_by_text(f"the answer is {items[1].answer_text}").wait_for(
                    timeout=WAIT_S * 1000
                )
        assert store.count_rows(code) == STUDENTS
        assert store.nicknames(code, key) == [f"student {n}" for n in range(STUDENTS)]
        for s in students:
            s.assert_healthy("six students checking at once")
    finally:
        for s in students:
            s.close()
        store.dispose()
