"""The plotly board: charts redrawn in place (``Plotly.react``) and linked across the page.

``st.plotly_chart`` hashes the whole figure into its element id, so every changed chart is
a new element that the browser mounts and draws from scratch (~300 ms a page). A board is
one Streamlit component (the static folder ``attnviz/board/``) with a stable ``key``: its
iframe and plot divs stay across reruns and each rerun only sends the new figures, which
plotly.js redraws in place.

The figures travel as plotly JSON (plotly's own encoder, numpy arrays as base64 typed
arrays, ``bdata``). plotly.js is the ``plotly.min.js`` of the installed plotly package
(same version as the Python side): :func:`served_dir` puts it next to the board's files in
a private cache directory at import (Streamlit only serves files inside a component's
folder and the package may be read-only, e.g. in the Docker image). Nothing is fetched at
run time.

Linking (in the browser, no rerun): each chart may carry a ``link`` spec
(:func:`link_attn`, :func:`link_tokens`, :func:`link_bars`). Hovering cell (i, j) of an
attention matrix highlights row i of the query-side matrices (Q, the output), row j of the
key-side ones (K, V), cell (i, j) of the other attention matrices and draws row i of the
weights in the bar chart; every board of the page hears it. A click on an attention cell
returns ``{"query": i, "key": j, "head": h}`` as the board's value; ``select_into`` moves it
into the query (and head) widgets' state before they are drawn, in an ``on_change``
callback.

Session-state key read by every board: ``board_text_scale`` (float, default 1): bigger
chart text, e.g. for a presenter mode.
"""

from __future__ import annotations

import functools
import hashlib
import html
import json
import os
import re
import shutil
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import plotly
import plotly.graph_objects as go
import plotly.io as pio
import streamlit as st
import streamlit.components.v1 as components

STATIC = Path(__file__).resolve().parent.parent / "board"
FILES = ("index.html", "board.js", "board.css")
TEXT_SCALE_KEY = "board_text_scale"


def plotly_js() -> Path:
    """The plotly.min.js shipped in the installed plotly package, checked to be the
    version the Python side was built for."""
    from plotly.offline import get_plotlyjs_version

    path = Path(plotly.__file__).resolve().parent / "package_data" / "plotly.min.js"
    if not path.is_file():
        raise RuntimeError(f"plotly.js is missing from the plotly package: {path}")
    with path.open("rb") as f:
        head = f.read(200).decode("utf-8", "replace")
    want = get_plotlyjs_version()
    if f"plotly.js v{want}" not in head:
        raise RuntimeError(f"{path} is not plotly.js v{want} (header: {head[:60]!r})")
    return path


def _digest(js: Path) -> str:
    h = hashlib.sha256()
    for name in FILES:
        h.update((STATIC / name).read_bytes())
    st_js = js.stat()
    h.update(f"{plotly.__version__}:{st_js.st_size}:{st_js.st_mtime_ns}".encode())
    return h.hexdigest()[:16]


def _complete(d: Path, js: Path) -> bool:
    try:
        if d.stat().st_uid != os.getuid() or d.stat().st_mode & 0o022:
            return False  # not ours, or writable by others: never serve it
        return all((d / n).is_file() for n in FILES) and (
            (d / "plotly.min.js").stat().st_size == js.stat().st_size
        )
    except OSError:
        return False


def _build(base: Path, js: Path) -> Path:
    base.mkdir(parents=True, exist_ok=True)
    uid = os.getuid() if hasattr(os, "getuid") else 0
    target = base / f"attnviz-board-{uid}-{_digest(js)}"
    if _complete(target, js):
        return target
    tmp = Path(tempfile.mkdtemp(prefix=".attnviz-board-", dir=base))  # mode 0700
    for name in FILES:
        shutil.copyfile(STATIC / name, tmp / name)
    try:
        os.link(js, tmp / "plotly.min.js")
    except OSError:
        shutil.copyfile(js, tmp / "plotly.min.js")
    os.chmod(tmp, 0o755)
    try:
        tmp.rename(target)
    except OSError:  # another process built it first, or a foreign directory is in the way
        if _complete(target, js):
            shutil.rmtree(tmp, ignore_errors=True)
        else:
            return tmp  # serve our private copy
    return target


def served_dir(base: Path | None = None) -> Path:
    """The folder the component serves: the board's files plus the installed plotly.js
    (hard link when possible, else a copy), built once per (files, plotly) version in a
    private directory under ``base``, ``$ATTNVIZ_BOARD_DIR``, the temp dir or
    ``~/.cache/attnviz`` (the first that is writable)."""
    js = plotly_js()
    env = os.environ.get("ATTNVIZ_BOARD_DIR")
    bases = [Path(b) for b in (base, env) if b] or [
        Path(tempfile.gettempdir()),
        Path.home() / ".cache" / "attnviz",
    ]
    errors = []
    for b in bases:
        try:
            return _build(b, js)
        except OSError as exc:
            errors.append(f"{b}: {exc}")
    raise RuntimeError(
        "attnviz could not write its chart board's files (set ATTNVIZ_BOARD_DIR to a "
        "writable directory): " + "; ".join(errors)
    )


_component = components.declare_component("attnviz_board", path=str(served_dir()))


# --------------------------------------------------------------------------- links


def link_attn(
    head: int | None,
    layout: str = "rows",
    *,
    weights: bool = False,
    select: bool = True,
    heads: Sequence[int] | None = None,
) -> dict:
    """An attention matrix (scores or weights) of head ``head``: hovering links (i, j),
    a click selects query i (and the head). ``weights=True``: its rows feed the bars.
    ``heads``: a figure with one heatmap per head (small multiples), trace t showing head
    ``heads[t]``."""
    spec = {"kind": "attn", "orient": layout, "head": head, "weights": weights, "select": select}
    if heads is not None:
        spec["heads"] = [int(h) for h in heads]
    return spec


def link_tokens(head: int | None, layout: str = "rows", follow: str = "query") -> dict:
    """A per-token matrix (X, Q, K, V, an output): its token ``follow`` ("query" or
    "key") of a hovered attention cell is highlighted; hovering it highlights that token."""
    return {
        "kind": "tokens",
        "axis": "y" if layout == "rows" else "x",
        "follow": follow,
        "head": head,
    }


def link_bars(head: int | None) -> dict:
    """The weights bar chart of one query: follows the hovered row of the weights."""
    return {"kind": "bars", "head": head}


# --------------------------------------------------------------------------- drawing


def _title(fig: go.Figure) -> str:
    t = re.sub(r"<[^>]*>", " ", (fig.layout.title.text or "").replace("<br>", " · "))
    return " ".join(html.unescape(t).split()) or "chart"


def figure_json(fig: go.Figure) -> dict:
    """The figure as plotly JSON (numpy arrays as base64 typed arrays, ``bdata``)."""
    return json.loads(pio.to_json(fig, validate=False, engine="json"))


def payload(charts: Sequence[tuple[str, go.Figure, dict | None]]) -> list[dict]:
    out = []
    for key, fig, link in charts:
        out.append(
            {
                "key": key,
                "figure": figure_json(fig),
                "link": link,
                "label": f"Chart: {_title(fig)}",
            }
        )
    return out


def revision(figs: list[dict], *parts: Any) -> str:
    """A digest of everything a board draws: Streamlit re-sends a component's arguments
    (e.g. after a frame-height change), and the board skips a render whose revision it has
    already drawn."""
    h = hashlib.blake2b(digest_size=12)
    h.update(json.dumps([figs, parts], sort_keys=True, separators=(",", ":")).encode())
    return h.hexdigest()


def _move_selection(
    board_key: str, query_key: str | None, head_key: str | None, n: int, heads: int
) -> None:
    v = st.session_state.get(board_key)
    if not isinstance(v, dict):
        return
    q, h = v.get("query"), v.get("head")
    if query_key and isinstance(q, (int, float)) and 0 <= int(q) < n:
        st.session_state[query_key] = int(q)
    if head_key and isinstance(h, (int, float)) and 0 <= int(h) < heads:
        st.session_state[head_key] = int(h)


def board(
    key: str,
    charts: Sequence[tuple[str, go.Figure, dict | None]],
    *,
    columns: Sequence[float] | None = None,
    group: str = "page",
    select_into: tuple[str | None, str | None] | None = None,
    n: int = 0,
    heads: int = 1,
) -> Any:
    """Draw ``charts`` (``(chart key, figure, link spec or None)``) side by side in one
    board that keeps its plot divs across reruns.

    ``columns``: relative widths (default: equal, one per chart). ``select_into=(query
    widget key, head widget key)``: a click on a linked attention cell sets those widgets
    (query in 0..n-1, head in 0..heads-1) before they are drawn on the rerun it causes.
    Returns the last selection (or None).
    """
    on_change = None
    if select_into is not None:
        on_change = functools.partial(_move_selection, key, *select_into, n, heads)
    figs = payload(charts)
    cols = list(columns or [1] * len(charts))
    scale = float(st.session_state.get(TEXT_SCALE_KEY, 1.0))
    return _component(
        figures=figs,
        columns=cols,
        group=group,
        text_scale=scale,
        rev=revision(figs, cols, group, scale),
        key=key,
        default=None,
        on_change=on_change,
    )
