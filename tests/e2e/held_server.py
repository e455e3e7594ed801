"""``streamlit run`` with a test hook that holds a student's full run of a live class.

    python tests/e2e/held_server.py run app.py --server.port ...   (as ``streamlit``)

While the file named by ``$ATTNVIZ_HOLD`` exists, each full run of a student's class page
waits at its end, after :func:`attnviz.ui.live.student_view` has drawn the page (where the
page used to call ``st.stop()``). The hook says where it is with files beside the gate:
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

from streamlit.runtime.scriptrunner import get_script_run_ctx
from streamlit.runtime.scriptrunner_utils.script_requests import ScriptRequestType
from streamlit.web import cli

from attnviz.ui import live

GATE_ENV = "ATTNVIZ_HOLD"
_student_view = live.student_view


def _queued() -> bool:
    """Whether a rerun request waits behind this run (Streamlit's private state: a test
    hook only)."""
    ctx = get_script_run_ctx()
    requests = getattr(ctx, "script_requests", None)
    return getattr(requests, "_state", None) is ScriptRequestType.RERUN


def held_student_view(*args, **kwargs):
    _student_view(*args, **kwargs)
    gate = Path(os.environ[GATE_ENV])
    if not gate.exists():
        return
    gate.with_suffix(".held").touch()
    while gate.exists():
        if _queued():
            gate.with_suffix(".queued").touch()
        time.sleep(0.02)


live.student_view = held_student_view

if __name__ == "__main__":
    sys.exit(cli.main())
