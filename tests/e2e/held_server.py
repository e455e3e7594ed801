"""``streamlit run`` with a test hook that holds a student's full run of a live class.

    python tests/e2e/held_server.py run app.py --server.port ...   (as ``streamlit``)

While the file named by ``$ATTNVIZ_HOLD`` exists, each full run of a student's class page
waits at its end, after :func:`attnviz.ui.live.student_view` has drawn the page (where the
page used to call ``st.stop()``); while ``<gate>.cards`` exists, it waits before the
question cards are drawn (:func:`attnviz.ui.quiz.cards`), so that the run ends right after
drawing them; if ``<gate>.noflush`` exists when the cards are drawn, the server's event
loop is blocked until it is removed (as on a server too busy to send: the session's
messages and events wait, then are handled in one go), and a Check's callback says
``<gate>.checked``. The hook says where it is with files beside the gate:
``<gate>.held`` once a run waits, ``<gate>.queued`` once a rerun request (a Check's
fragment rerun) waits behind that run in the session's ScriptRequests. A test then
removes the gate and watches what becomes of the queued click (issue 25: ``st.stop()``
replaced it with a stop).

Only this process is patched (the app's code is not); a page imports ``live`` from the
modules this process already loaded, so it gets the wrapped function.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

from streamlit.runtime.app_session import AppSession
from streamlit.runtime.scriptrunner import get_script_run_ctx
from streamlit.runtime.scriptrunner_utils.script_requests import ScriptRequestType
from streamlit.web import cli

from attnviz.ui import live, quiz

GATE_ENV = "ATTNVIZ_HOLD"
_student_view = live.student_view
_cards = quiz.cards
_check = quiz._check
_call_soon = AppSession._call_soon_on_event_loop
LOOPS: list = []  # the session event loop (the first one seen)


def _queued() -> bool:
    """Whether a rerun request waits behind this run (Streamlit's private state: a test
    hook only)."""
    ctx = get_script_run_ctx()
    requests = getattr(ctx, "script_requests", None)
    return getattr(requests, "_state", None) is ScriptRequestType.RERUN


def _hold(gate: Path, marker: Path) -> None:
    """Wait while ``gate`` exists, saying so (``marker``.held, .queued)."""
    if not gate.exists():
        return
    marker.with_suffix(".held").touch()
    while gate.exists():
        if _queued():
            marker.with_suffix(".queued").touch()
        time.sleep(0.02)


def held_student_view(*args, **kwargs):
    _student_view(*args, **kwargs)
    gate = Path(os.environ[GATE_ENV])
    _hold(gate, gate)


def _block_while(path: Path) -> None:
    while path.exists():
        time.sleep(0.02)


def held_cards(items, **kwargs):
    if kwargs.get("fragments"):  # a student's cards in a live class
        gate = Path(os.environ[GATE_ENV])
        _hold(gate.with_suffix(".cards"), gate)
        noflush = gate.with_suffix(".noflush")
        if noflush.exists() and LOOPS:
            LOOPS[0].call_soon_threadsafe(_block_while, noflush)
    _cards(items, **kwargs)


def checked(*args, **kwargs):
    _check(*args, **kwargs)
    Path(os.environ[GATE_ENV]).with_suffix(".checked").touch()


def call_soon(self, callback):
    if not LOOPS:
        LOOPS.append(self._event_loop)
    _call_soon(self, callback)


live.student_view = held_student_view
quiz.cards = held_cards
quiz._check = checked
AppSession._call_soon_on_event_loop = call_soon

if __name__ == "__main__":
    sys.exit(cli.main())
