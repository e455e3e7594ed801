"""Streamlit's websocket client for the benchmarks: ``BackMsg.rerun_script`` with the widget
states, ``ForwardMsg`` read until ``script_finished``; widgets changed by their user key.
"""

from __future__ import annotations

import contextlib
import time
import urllib.parse
from dataclasses import dataclass, field
from typing import Any

import kit
import websocket  # websocket-client
from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
from streamlit.proto.NumberInput_pb2 import NumberInput
from streamlit.proto.WidgetStates_pb2 import WidgetState

# The widgets the benches set (:meth:`Session.state_for`: the WidgetState of their value).
WIDGET_KINDS = ("slider", "selectbox", "radio", "number_input", "checkbox", "text_input", "button")
SUCCESS = {
    ForwardMsg.FINISHED_SUCCESSFULLY,
    ForwardMsg.FINISHED_FRAGMENT_RUN_SUCCESSFULLY,
}


@dataclass
class Widget:
    id: str
    kind: str
    key: str
    proto: Any
    fragment_id: str = ""


@dataclass
class RunResult:
    seconds: float
    status: str
    messages: int = 0
    bytes: int = 0
    texts: list[str] = field(default_factory=list)  # the Markdown elements' bodies
    errors: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.errors


def _user_key(widget_id: str) -> str:
    # Generated ids look like "$$ID-<hash>-<user key or None>".
    parts = widget_id.split("-", 2)
    return parts[2] if len(parts) == 3 else widget_id


class Session(kit.Service):
    """One browser tab's worth of Streamlit session over a websocket."""

    def __init__(
        self, base_url: str, *, page: str = "", query: str = "", timeout: float = 60.0
    ) -> None:
        self.ws_url = base_url.replace("http://", "ws://") + "/_stcore/stream"
        self.page_name = page
        self.page_script_hash = ""
        self.query_string = query
        self.timeout = timeout
        self.widgets: dict[str, Widget] = {}
        # Every value the user set, sent on each rerun (a bound widget's URL rewritten too).
        self.sent: dict[str, WidgetState] = {}
        # The frontend's cache: hashes of the cacheable messages of the last 2 runs, which
        # the server then sends as short references.
        self.cached: dict[str, int] = {}
        self.runs = 0
        self.ws: websocket.WebSocket | None = None

    def connect(self) -> Session:
        self.ws = websocket.create_connection(
            self.ws_url, subprotocols=["streamlit"], timeout=self.timeout
        )
        return self

    def close(self) -> None:
        if self.ws is not None:
            with contextlib.suppress(Exception):
                self.ws.close()
            self.ws = None

    start, stop = connect, close  # kit.Service: a context manager

    # -- widget states
    def widget(self, key: str) -> Widget:
        try:
            return self.widgets[key]
        except KeyError:
            raise KeyError(f"no widget with key {key!r}; seen: {sorted(self.widgets)}") from None

    def state_for(self, key: str, value: Any) -> WidgetState:
        """The WidgetState the frontend would send after the user set ``key`` to ``value``."""
        w = self.widget(key)
        st_ = WidgetState(id=w.id)
        if w.kind == "slider":
            vals = value if isinstance(value, list | tuple) else [value]
            st_.double_array_value.data.extend(float(v) for v in vals)
        elif w.kind == "number_input":
            st_.double_value = int(value) if w.proto.data_type == NumberInput.INT else float(value)
        elif w.kind == "checkbox":
            st_.bool_value = bool(value)
        elif w.kind == "button":
            st_.trigger_value = True
        else:  # selectbox, radio, text_input
            st_.string_value = str(value)
        return st_

    def _set_query_param(self, qkey: str, value: Any) -> None:
        def fmt(v: Any) -> str:
            if isinstance(v, float) and v.is_integer():
                v = int(v)
            return str(v).lower() if isinstance(v, bool) else str(v)

        vals = value if isinstance(value, list | tuple) else [value]
        pairs = [(k, v) for k, v in urllib.parse.parse_qsl(self.query_string) if k != qkey]
        pairs += [(qkey, fmt(v)) for v in vals]
        self.query_string = urllib.parse.urlencode(pairs)

    # -- runs
    def message(self, states: list[WidgetState], fragment_id: str = "", cached: bool = True):
        """A rerun BackMsg of this page with ``states`` (and the hashes of the messages the
        frontend keeps, unless not ``cached``: then every element comes whole), serialized."""
        msg = BackMsg()
        cs = msg.rerun_script
        cs.page_script_hash = self.page_script_hash
        if not self.page_script_hash:
            cs.page_name = self.page_name
        cs.query_string = self.query_string
        cs.widget_states.widgets.extend(states)
        cs.fragment_id = fragment_id
        if cached:
            cs.cached_message_hashes.extend(self.cached)
        return msg.SerializeToString()

    def rerun(self, changes: dict[str, Any] | None = None) -> RunResult:
        """Send a rerun (with the given widget changes) and read until script_finished."""
        assert self.ws is not None, "connect() first"
        fragment_ids = set()
        for key, value in (changes or {}).items():
            self.sent[key] = self.state_for(key, value)
            fragment_ids.add(self.widgets[key].fragment_id)
            qkey = getattr(self.widgets[key].proto, "query_param_key", "")
            if qkey:
                self._set_query_param(qkey, value)
        ids = {key: w.id for key, w in self.widgets.items()}  # a widget's value while it is shown
        states = [state for key, state in self.sent.items() if ids.get(key) == state.id]
        msg = self.message(states, fragment_ids.pop() if len(fragment_ids) == 1 else "")
        t0 = time.perf_counter()
        self.ws.send_binary(msg)
        return self._read_until_finished(t0)

    def _read_until_finished(self, t0: float) -> RunResult:
        res = RunResult(seconds=float("nan"), status="")
        seen: dict[str, Widget] = {}
        while True:
            data = self.ws.recv()
            if isinstance(data, str):  # pragma: no cover - the server only sends binary
                data = data.encode()
            res.messages += 1
            res.bytes += len(data)
            fm = ForwardMsg()
            fm.ParseFromString(data)
            self.noted(data, fm)
            kind = fm.WhichOneof("type")
            if fm.metadata.cacheable and fm.hash:
                self.cached[fm.hash] = self.runs
            if kind == "ref_hash":
                self.cached[fm.ref_hash] = self.runs
            elif kind == "delta":
                self._on_delta(fm, res, seen)
            elif kind == "new_session":
                self.page_script_hash = fm.new_session.page_script_hash or self.page_script_hash
            elif kind == "navigation":
                self.page_script_hash = fm.navigation.page_script_hash or self.page_script_hash
            elif kind == "page_info_changed":
                self.query_string = fm.page_info_changed.query_string
            elif kind == "page_not_found":
                res.errors.append(f"page not found: {fm.page_not_found.page_name!r}")
            elif kind == "script_finished":
                res.seconds = time.perf_counter() - t0
                res.status = ForwardMsg.ScriptFinishedStatus.Name(fm.script_finished)
                if fm.script_finished == ForwardMsg.FINISHED_EARLY_FOR_RERUN:
                    continue  # another rerun follows (a widget callback or st.rerun)
                if fm.script_finished not in SUCCESS:
                    res.errors.append(res.status)
                self.runs += 1
                self.cached = {h: r for h, r in self.cached.items() if self.runs - r <= 2}
                break
        if seen:
            self.widgets.update(seen)
        return res

    def noted(self, data: bytes, fm: ForwardMsg) -> None:
        """Each message of a run as it comes: nothing here (a subclass's hook)."""

    def _on_delta(self, fm: ForwardMsg, res: RunResult, seen: dict) -> None:
        delta = fm.delta
        if delta.WhichOneof("type") != "new_element":
            return
        el = delta.new_element
        et = el.WhichOneof("type")
        if et == "exception":
            e = el.exception
            res.errors.append(f"exception: {e.type}: {e.message}"[:300])
        elif et == "alert" and el.alert.format == el.alert.ERROR:
            res.errors.append(f"st.error: {el.alert.body}"[:300])
        elif et == "markdown":
            res.texts.append(el.markdown.body)
        elif et in WIDGET_KINDS:
            proto = getattr(el, et)
            wid = getattr(proto, "id", "")
            if wid:
                w = Widget(wid, et, _user_key(wid), proto, delta.fragment_id)
                seen[w.key] = w
