"""No click of a live class is lost, in a real browser, on the light page (``/join``).

The Streamlit student page lost a Check queued behind a full run (``st.stop()``, issue 25);
the light page has no runs to queue behind: a Check is a POST from an outbox that keeps it
until the server answered (tests/e2e/test_class_e2e.py: offline, then sent). Here the
classroom's case: six phones on a busy server (two CPU burners) type a nickname and at once
press Check, just after a Reveal that every phone's long poll receives: all six verdicts
show, all six answers and nicknames are stored once, every phone shows the revealed answer.
And a phone that presses Check twice quickly, then changes its answer while the first POST
is still unanswered (held here, so the order is not left to the machine's load), ends with
its last answer stored once.
"""

from __future__ import annotations

import re

import pytest
from class_helpers import Phone, app_server, cpu_burners, data_dir  # noqa: F401

from attnviz.classroom import exercises
from attnviz.classroom.store import ClassStore

pytestmark = pytest.mark.e2e

SEED = 7
WAIT_MS = 60_000  # a loaded machine gets room; the test fails on a lost click, not on time
PHONES = 6


def test_six_phones_check_at_once_on_a_busy_server(browser, app_server, data_dir):  # noqa: F811
    items = exercises.generate(seed=SEED, count=8)
    store = ClassStore(f"sqlite:///{data_dir / 'classes.db'}")
    code, key = store.create(SEED, 8)
    phones = [Phone(browser, app_server) for _ in range(PHONES)]
    answers = [items[0].answer_text if n % 2 == 0 else "17" for n in range(PHONES)]
    try:
        for n, phone in enumerate(phones):
            phone.open(f"/join?class={code}")
            phone.page.get_by_role("heading", name=f"Live class {code}").wait_for()
            phone.card(0).get_by_label("Your answer").fill(answers[n])
        with cpu_burners(2):
            store.reveal(code, key, 1)
            for n, phone in enumerate(phones):  # no waiting between the phones
                phone.page.get_by_label("Nickname (optional)").fill(f"student {n}")
                phone.card(0).get_by_role("button", name="Check").click()
            for n, phone in enumerate(phones):
                phone.verdict(0, "Right:" if n % 2 == 0 else "Not quite", timeout=WAIT_MS)
                shown = f"Revealed by the teacher: the answer is {items[1].answer_text}"
                phone.card(1).get_by_text(shown).wait_for(timeout=WAIT_MS)
        assert store.count_rows(code) == PHONES
        assert store.nicknames(code, key) == [f"student {n}" for n in range(PHONES)]
        for phone in phones:
            assert not phone.errors, phone.errors
    finally:
        for phone in phones:
            phone.close()
        store.dispose()


def test_a_changed_answer_ends_stored_once(browser, app_server, data_dir):  # noqa: F811
    store = ClassStore(f"sqlite:///{data_dir / 'classes.db'}")
    code, _ = store.create(SEED, 8)
    phone = Phone(browser, app_server)
    try:
        phone.open(f"/join?class={code}")
        phone.page.get_by_role("heading", name=f"Live class {code}").wait_for()
        held = []  # the first answer's POST, kept unanswered until the last Check is in

        def hold_first(route):
            if held:
                route.continue_()
            else:
                held.append(route)

        phone.page.route(re.compile(r"/answer(\?|$)"), hold_first)
        box = phone.card(3).get_by_label("Your answer")
        check = phone.card(3).get_by_role("button", name="Check")
        box.fill("1")
        check.click()
        phone.page.wait_for_function("() => true")  # pumps the route handler
        check.click()
        box.fill("2")
        check.click()
        assert len(held) == 1, "the first Check's POST was not held"
        held[0].continue_()
        phone.page.wait_for_function(
            "() => JSON.parse(localStorage.getItem(Object.keys(localStorage)"
            ".find(k => k.startsWith('attnviz-outbox-'))) || '[]').length === 0",
            timeout=WAIT_MS,
        )
        assert store.answers(code, phone.student()) == {
            3: ("2", store.answers(code, phone.student())[3][1])
        }
        assert store.count_rows(code) == 1
        assert not phone.errors, phone.errors
    finally:
        phone.close()
        store.dispose()
