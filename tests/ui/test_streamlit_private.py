"""Streamlit's internals behind one door (:mod:`attnviz.ui.streamlit_private`).

A Streamlit upgrade that moves a private name the app uses, or renames a test id or class
its CSS and the board's JavaScript select, fails here, by name, rather than silently in a
page (a deep link without the sidebar, a dropped click, a crash on ``?seed=1e999``, the
presenter view's type back to 16 px, the head switch redrawing only on its rerun). And
nothing else in the app may reach past the door.
"""

from __future__ import annotations

import ast
import dataclasses
import importlib
import inspect
import re
from functools import cache
from pathlib import Path

import pytest
import streamlit
from streamlit.testing.v1 import AppTest

from attnviz.ui import streamlit_private

ROOT = Path(__file__).resolve().parents[2]
DOOR = ROOT / "attnviz" / "ui" / "streamlit_private.py"
BUNDLE = Path(streamlit.__file__).parent / "static" / "static" / "js"


# --------------------------------------------------------------------------- private names


def test_the_private_modules_and_names_the_door_uses_exist():
    assert streamlit_private.PagesManager is not None, "streamlit.runtime.pages_manager moved"
    assert hasattr(streamlit_private.PagesManager, "uses_pages_directory"), (
        "PagesManager.uses_pages_directory is gone: a deep link may run a page without app.py"
    )
    assert streamlit_private.StopException is not None, "StopException moved"
    assert issubclass(streamlit_private.StopException, BaseException)
    assert streamlit_private.get_script_run_ctx is not None, "get_script_run_ctx moved"
    params = inspect.signature(streamlit_private.get_script_run_ctx).parameters
    assert all(p.default is not p.empty for p in params.values()), params


def test_the_query_param_state_has_what_the_door_reads():
    from streamlit.runtime.scriptrunner_utils.script_run_context import ScriptRunContext
    from streamlit.runtime.state.query_params import QueryParams
    from streamlit.runtime.state.safe_session_state import SafeSessionState

    assert "session_state" in {f.name for f in dataclasses.fields(ScriptRunContext)}
    assert inspect.isgeneratorfunction(inspect.unwrap(SafeSessionState.query_params))
    assert "_initial_query_params" in {f.name for f in dataclasses.fields(QueryParams)}
    assert list(inspect.signature(QueryParams.remove_param).parameters) == ["self", "param_key"]
    assert list(inspect.signature(QueryParams.set_corrected_value).parameters) == [
        "self", "param_key", "value", "value_type"
    ]  # fmt: skip


def test_st_stop_raises_what_end_run_raises():
    """``end_run`` raises what ``st.stop()`` raises (Streamlit ends the run on it)."""
    with pytest.raises(streamlit_private.StopException):
        streamlit_private.end_run()
    at = AppTest.from_string(
        "import streamlit as st\n"
        "from attnviz.ui import streamlit_private\n"
        "st.write('before')\n"
        "streamlit_private.end_run()\n"
        "st.write('after')\n"
    ).run()
    assert not at.exception
    assert [m.value for m in at.markdown] == ["before"]


def _url_app():
    import streamlit as st

    from attnviz.ui import streamlit_private

    got = streamlit_private.first_run_url_values(("seed", "pad", "absent"))
    st.session_state["got"] = got
    st.session_state["forgot"] = streamlit_private.forget_url_value("seed")
    st.session_state["after"] = streamlit_private.first_run_url_values(("seed", "pad"))


def test_the_first_runs_url_values_are_read_and_forgotten_in_a_run():
    at = AppTest.from_function(_url_app)
    at.query_params["seed"] = "1e999"
    at.query_params["pad"] = "3"
    at.run()
    assert not at.exception
    assert at.session_state["got"] == {"seed": "1e999", "pad": "3"}
    assert at.session_state["forgot"] is True
    assert at.session_state["after"] == {"pad": "3"}


def test_outside_a_run_the_url_is_left_alone():
    assert streamlit_private.first_run_url_values(("seed",)) is None
    assert streamlit_private.forget_url_value("seed") is False
    assert streamlit_private.seed_url_value("seed", "2") is False


# --------------------------------------------------------------------------- the front end


@cache
def _bundle() -> str:
    files = sorted(BUNDLE.glob("*.js"))
    assert files, f"expected Streamlit's front-end bundle in {BUNDLE}"
    return "\n".join(f.read_text(errors="replace") for f in files)


def _door_markup() -> dict[str, set[str]]:
    """What the door names of Streamlit's markup: test ids, other attributes' values,
    classes (of Streamlit's widgets) and attributes."""
    src = DOOR.read_text()
    dom = streamlit_private.BOARD_DOM
    css = src + "\n".join(dom.values())
    return {
        "test ids": set(re.findall(r"data-testid=['\"](\w+)['\"]", css)),
        "classes": {*re.findall(r"\.(react-aria-\w+)", css), "st-key-", dom["key_class"]},
        "attributes": {*re.findall(r"\[(data-[\w-]+)", css), dom["combobox_open"]},
    }


def test_the_door_names_markup_it_should():
    found = _door_markup()
    assert {"stMain", "stMarkdownContainer", "stCode", "stElementContainer"} <= found["test ids"]
    assert found["classes"] >= {"react-aria-ComboBox", "st-key-"}


@pytest.mark.parametrize("kind", ["test ids", "classes", "attributes"])
def test_every_selector_of_the_door_is_in_streamlits_front_end(kind):
    """Each test id, class and attribute the door selects is written somewhere in the
    installed Streamlit's JavaScript: a renamed one fails here (then update the door)."""
    missing = sorted(n for n in _door_markup()[kind] if n not in _bundle())
    assert not missing, (
        f"Streamlit {streamlit.__version__}'s front end no longer names these {kind} that "
        f"attnviz/ui/streamlit_private.py selects: {missing}"
    )


def test_the_head_picker_is_a_react_aria_combobox_with_a_combobox_input():
    """headswitch.js reads the picker's value from its ``role="combobox"`` input while its
    ``react-aria-ComboBox`` box has no ``data-open``: the bundle sets those together."""
    b = _bundle()
    assert re.search(r"role:\s*[`'\"]combobox[`'\"]", b)
    assert re.search(r"[`'\"]react-aria-ComboBox[`'\"]", b)
    assert re.search(r"[`'\"]data-open[`'\"]", b)


def test_every_board_carries_the_doors_selectors(monkeypatch):
    """Each kind of board (charts, the preload, the prefetch, the step keys) gets the
    door's selectors as ``dom`` in its data: the JavaScript's only source of them."""
    board = importlib.import_module("attnviz.ui.board")
    sent = []
    monkeypatch.setattr(board, "_mount", lambda key, data, on_change=None: sent.append(data))
    board.board("b", [])
    board.preload_plotly()
    board.prefetch_heads(2, 0, 3, "view")
    board.step_keys("next", "prev")
    assert len(sent) == 4
    assert all(d["dom"] == streamlit_private.BOARD_DOM for d in sent)
    assert all(isinstance(v, str) and v for v in streamlit_private.BOARD_DOM.values())


# --------------------------------------------------------------------------- only the door

PRIVATE = re.compile(
    r"streamlit\.runtime|_initial_query_params|PagesManager|StopException|"
    r"get_script_run_ctx|data-testid|st-key-|react-aria|data-baseweb"
)


def _app_python() -> list[Path]:
    return [
        ROOT / "app.py",
        *sorted((ROOT / "pages").glob("*.py")),
        *sorted((ROOT / "attnviz").rglob("*.py")),
    ]


def test_no_module_but_the_door_touches_streamlits_internals():
    offenders = []
    for path in _app_python():
        if path == DOOR:
            continue
        text = path.read_text()
        for m in PRIVATE.finditer(text):
            line = text.count("\n", 0, m.start()) + 1
            offenders.append(f"{path.relative_to(ROOT)}:{line}: {m.group()}")
        for node in ast.walk(ast.parse(text)):  # no private import written another way
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("streamlit."):
                offenders.append(f"{path.relative_to(ROOT)}:{node.lineno}: from {node.module}")
    assert not offenders, "only attnviz/ui/streamlit_private.py may: " + "; ".join(offenders)


def test_no_board_module_names_streamlits_markup():
    js = ROOT / "attnviz" / "ui" / "board" / "js"
    files = [p for p in sorted(js.glob("*.js"))]
    assert files
    offenders = [
        f"{p.name}: {m.group()}"
        for p in files
        for m in re.finditer(
            r"data-testid|st-key-|react-aria|\bst[A-Z]\w+|data-baseweb", p.read_text()
        )
    ]
    assert not offenders, offenders


def test_session_value_reads_a_runs_state_and_nothing_outside_a_run():
    from streamlit.testing.v1 import AppTest

    assert streamlit_private.session_value("anything") is None  # no run here

    def script():
        import streamlit as st

        from attnviz.ui import streamlit_private as sp

        st.session_state["k"] = 3
        st.text(f"{sp.session_value('k')} {sp.session_value('missing')}")

    at = AppTest.from_function(script).run()
    assert not at.exception
    assert at.text[0].value == "3 None"
