"""No click of a live class is lost (issue 25, item 9), in a real browser.

A student's **Check** is a fragment rerun. When it reaches the server during a full run of
the page (committing the nickname, the poll after a Reveal or End, a page load),
Streamlit queues it behind that run; the live-class branch of ``pages/exercises.py`` used
to end with ``st.stop()``, which in Streamlit 1.67 replaces the queued rerun with a stop
(``ScriptRequests.request_stop``): the Check never ran, nothing was stored or shown.

The first test holds a student's full run with a test hook (``tests/e2e/held_server.py``:
while a gate file exists, it holds the run at its end and says when a rerun request waits
behind it), so its Check arrives during the full run every time, not by luck. The second
is the classroom's case: six students on a busy server (two CPU burners) commit their
nickname and press Check at once.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import pytest
from class_helpers import app_server, cpu_burners, data_dir  # noqa: F401 (fixtures)
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


def test_a_check_during_a_full_run_is_answered(browser, held_server, data_dir, gate):  # noqa: F811
    """Check pressed while the nickname's full run is held: its verdict shows, its answer is
    stored (before the fix: neither, ever)."""
    items = exercises.generate(seed=SEED, count=8)
    store = ClassStore(f"sqlite:///{data_dir / 'classes.db'}")
    code, key = store.create(SEED, 8)
    s = BrowserSession(browser, held_server)
    try:
        s.open(f"/exercises?class={code}")
        s.page.get_by_text(f"Live class {code}").wait_for()
        # the answer is typed and committed first (a run of its card only)
        box = s.page.locator(".st-key-ex0 input")
        box.fill(items[0].answer_text)
        s.rerun_after(lambda: box.press("Enter"))
        # the nickname's commit reruns the whole page: the hook holds that run ...
        gate.touch()
        nick = s.page.locator(".st-key-class_nickname input")
        nick.fill("ada")
        nick.press("Enter")
        _wait_for(gate.with_suffix(".held"), "a full run is held")
        # ... and Check, pressed meanwhile, waits behind it
        s.page.locator(".st-key-ex0_check button").click()
        _wait_for(gate.with_suffix(".queued"), "the Check waits behind the full run")
        gate.unlink()
        s.page.get_by_text(f"Right: {items[0].answer_text}.").wait_for(timeout=WAIT_S * 1000)
        assert store.count_rows(code) == 1
        assert store.nicknames(code, key) == ["ada"]
        s.assert_healthy("a Check during a full run")
    finally:
        for suffix in ("", ".held", ".queued"):
            gate.with_suffix(suffix).unlink(missing_ok=True)
        s.close()
        store.dispose()


def test_a_check_behind_a_run_that_adds_a_question(browser, held_server, data_dir, gate):  # noqa: F811
    """The teacher asks the room while the student's page is open: the question appears
    above the exercises (the box's own 3 s poll). The next full run draws it above the
    cards: a card's fragment is named by its place on the page, so a Check queued behind
    that run must still find its card."""
    items = exercises.generate(seed=SEED, count=8)
    store = ClassStore(f"sqlite:///{data_dir / 'classes.db'}")
    code, key = store.create(SEED, 8)
    s = BrowserSession(browser, held_server)
    try:
        s.open(f"/exercises?class={code}")
        s.page.get_by_text(f"Live class {code}").wait_for()
        store.ask(
            code, key, page="playground", link="N=4", view="abc", kind="top_key",
            prompt="Which key does query 1 attend to most (head 0)?",
            choices=["key 0", "key 1", "key 2"], answer=2,
            detail={"query": 1, "head": 0, "key": 2},
        )  # fmt: skip
        s.page.get_by_text("On the projector").wait_for(timeout=WAIT_S * 1000)
        box = s.page.locator(".st-key-ex0 input")
        box.fill(items[0].answer_text)
        s.rerun_after(lambda: box.press("Enter"))
        gate.touch()
        nick = s.page.locator(".st-key-class_nickname input")
        nick.fill("bo")
        nick.press("Enter")
        _wait_for(gate.with_suffix(".held"), "a full run is held")
        s.page.locator(".st-key-ex0_check button").click()
        _wait_for(gate.with_suffix(".queued"), "the Check waits behind the full run")
        gate.unlink()
        s.page.get_by_text(f"Right: {items[0].answer_text}.").wait_for(timeout=WAIT_S * 1000)
        assert store.count_rows(code) == 1
        s.assert_healthy("a Check during a full run that adds a question")
    finally:
        for suffix in ("", ".held", ".queued"):
            gate.with_suffix(suffix).unlink(missing_ok=True)
        s.close()
        store.dispose()


STUDENTS = 6


def test_six_students_check_at_once_on_a_busy_server(browser, app_server, data_dir):  # noqa: F811
    """Two CPU burners beside the server; six students each commit a nickname (a full run)
    and at once press Check (a fragment rerun that waits behind it): all six verdicts
    show, all six answers and nicknames are stored."""
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
            for s in students:  # no waiting between the students, nor between the two
                s.page.locator(".st-key-class_nickname input").press("Enter")
                s.page.locator(".st-key-ex0_check button").click()
            for n, s in enumerate(students):
                verdict = f"Right: {items[0].answer_text}." if n % 2 == 0 else "Not quite"
                s.page.get_by_text(verdict).wait_for(timeout=WAIT_S * 1000)
        assert store.count_rows(code) == STUDENTS
        assert store.nicknames(code, key) == [f"student {n}" for n in range(STUDENTS)]
        for s in students:
            s.assert_healthy("six students checking at once")
    finally:
        for s in students:
            s.close()
        store.dispose()
