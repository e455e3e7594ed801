"""Downloads: each matrix shown on a page as CSV, the whole state as NPZ, small matrices as
LaTeX, one query's worked example as a LaTeX document."""

from __future__ import annotations

import hashlib
import io
import json
from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd
import streamlit as st

from attnviz.i18n import _, ngettext
from attnviz.teaching import latex
from attnviz.teaching.token_text import visible
from attnviz.ui.code import lazy_box
from attnviz.ui.controls import LABELS
from attnviz.ui.page import shape_text
from attnviz.ui.state import View


def oriented(a: np.ndarray, layout: str) -> np.ndarray:
    """A row-layout matrix as displayed: transposed for the UDL column layout."""
    return a if layout == "rows" else np.swapaxes(a, -1, -2)


def csv_maker(a: np.ndarray, row_labels=None, col_labels=None) -> Callable[[], bytes]:
    """A function that writes ``a`` as CSV (labels as index/header when they fit)."""

    def make() -> bytes:
        df = pd.DataFrame(np.asarray(a, dtype=np.float64))
        if row_labels is not None and len(row_labels) == df.shape[0]:
            df.index = list(row_labels)
        if col_labels is not None and len(col_labels) == df.shape[1]:
            df.columns = list(col_labels)
        buf = io.StringIO()
        df.to_csv(buf, float_format="%.8g", index=row_labels is not None)
        return buf.getvalue().encode()

    return make


def npz_bytes(view: View, extra: dict[str, np.ndarray] | None = None) -> bytes:
    """The whole state as an NPZ: X, every parameter, every intermediate, the settings."""
    r = view.result
    arrays: dict[str, Any] = {
        "x": view.x,
        "labels": np.array(view.labels),
        "queries": r.queries,
        "keys": r.keys,
        "values": r.values,
        "scores": r.scores,
        "masked_scores": r.masked_scores,
        "weights": r.weights,
        "head_outputs": r.head_outputs,
        "concat": r.concat,
        "output": r.output,
        "scale": np.array(r.scale),
        "settings_json": np.array(json.dumps(view.settings.as_dict())),
    }
    if r.mask is not None:
        arrays["mask"] = r.mask
    if view.params is not None:
        for k in ("w_q", "w_k", "w_v", "b_q", "b_k", "b_v", "w_o", "b_o"):
            v = getattr(view.params, k)
            if v is not None:
                arrays[k] = v
    arrays.update(extra or {})
    buf = io.BytesIO()
    np.savez_compressed(buf, **arrays)
    return buf.getvalue()


def _entries(view: View, tokens: dict, squares: dict) -> dict[str, tuple]:
    """Download entries, as displayed, for matrices with one row per token (``tokens``:
    tokens label the rows, or the columns in the column layout) and token × token ones
    (``squares``: scores, weights, masks)."""
    lay, labels = view.layout, view.labels
    out = {
        name: (oriented(a, lay), *((labels, None) if lay == "rows" else (None, labels)))
        for name, a in tokens.items()
    }
    out.update({name: (oriented(a, lay), labels, labels) for name, a in squares.items()})
    return out


def download(where: Any, label: str, data: Any, file_name: str, *, key: str) -> None:
    """A download button in ``where`` (a column, or ``st``) that does not rerun the page
    (``on_click="ignore"``): a CSV, or the primary NPZ of the whole state (by the file's
    suffix). ``data`` may be a callable: the file is generated only when clicked."""
    npz = file_name.endswith(".npz")
    where.download_button(
        label,
        data=data,
        file_name=file_name,
        mime="application/octet-stream" if npz else "text/csv",
        key=key,
        on_click="ignore",
        type="primary" if npz else "secondary",
    )


def downloads(page: str, tables: dict[str, tuple], npz: Callable[[], bytes]) -> None:
    """The Export box's buttons: one CSV per table, four a row (``name`` -> (its label
    shown, the 2-D array, row labels or None, column labels or None)), then the NPZ of
    the whole state, made by ``npz()`` when clicked."""
    cols = st.columns(4)
    for i, (name, (label, a, rl, cl)) in enumerate(tables.items()):
        slug = "".join(c if c.isalnum() else "_" for c in name).strip("_").lower()
        download(
            cols[i % 4],
            _("{name} ({shape}) CSV").format(name=label, shape=shape_text(a)),
            csv_maker(a, rl, cl),
            f"attnviz_{page}_{slug}.csv",
            key=f"dl_{page}_{slug}",
        )
    download(st, _("Whole state (NPZ)"), npz, f"attnviz_{page}_state.npz", key=f"dl_{page}_npz")


def export_section(
    view: View,
    tables: dict[str, tuple[np.ndarray, Any, Any]] | None = None,
    *,
    page: str,
    tokens: dict[str, np.ndarray] | None = None,
    squares: dict[str, np.ndarray] | None = None,
    extra: dict[str, np.ndarray] | None = None,
) -> None:
    """Download buttons: each matrix shown on the page as CSV, the whole state as NPZ.

    A page declares what it shows, in row layout: ``tokens`` (name -> (N, d) array, one row
    per token), ``squares`` (name -> (N, N) array) and ``tables`` (name -> (2-D array,
    row labels or None, column labels or None), written as given). The CSVs follow the
    page's layout; ``extra`` arrays go into the NPZ only. Files are generated only when
    clicked.
    """
    matrices = {**_entries(view, tokens or {}, squares or {}), **(tables or {})}
    box = lazy_box(
        ":material/download: " + _("Export: every matrix as CSV, the whole state as NPZ"),
        f"export_box_{page}",
    )
    if box is not None:
        with box:
            st.caption(
                _(
                    "CSV files hold the matrices as displayed (layout: {layout}). The NPZ holds "
                    "X, the parameters, every intermediate (row layout) and the settings. For a "
                    "picture of a chart, use the PNG or SVG button under it."
                ).format(layout=_(LABELS["layout"][view.layout]))
            )
            tables = {name: (_(name), a, rl, cl) for name, (a, rl, cl) in matrices.items()}
            downloads(page, tables, lambda: npz_bytes(view, extra))
    latex_section(matrices, page=page)


def latex_section(matrices: dict[str, tuple[np.ndarray, Any, Any]], page: str = "") -> None:
    """Every small matrix (no side above ``latex.SMALL``) as a LaTeX ``bmatrix`` with
    the rounding of the cells on screen, each in a code box with a copy button (written
    only while the box is open)."""
    small = {k: a for k, (a, _rl, _cl) in matrices.items() if latex.is_small(a)}
    if not small:
        return
    count = len(small)
    box = st.expander(
        ":material/functions: "
        + ngettext(
            "LaTeX for slides: {n} small matrix as bmatrix",
            "LaTeX for slides: {n} small matrices as bmatrix",
            count,
        ).format(n=count),
        expanded=False,
        key=f"latex_box_{page}" if page else None,
        on_change="rerun" if page else "ignore",
    )
    with box:
        if box.open is False:
            return
        st.caption(
            _(
                "Matrices with N and d ≤ {small}, rounded to {decimals} decimals as in the "
                "heatmap cells; −∞ (masked) is written `-\\infty`. The copy button is at the top "
                "right of each box; `\\begin{{bmatrix}}` needs `amsmath`."
            ).format(small=latex.SMALL, decimals=latex.DECIMALS)
        )
        for name, a in small.items():
            st.markdown(f"**{_(name)}** ({shape_text(a)})")
            whole = np.issubdtype(np.asarray(a).dtype, np.integer)  # indices, a 0/1 mask
            st.code(
                latex.named(
                    latex.text_name(name),
                    np.asarray(a, dtype=np.float64),
                    decimals=0 if whole else latex.DECIMALS,
                ),
                language="latex",
                wrap_lines=True,
            )


def worked_example_download(view: View, head: int, *, page: str) -> None:
    """A query picker and the download of that query's whole computation as LaTeX
    (:func:`attnviz.teaching.latex.worked_example`, numbers of the shown head), in a box
    drawn only while open (an opening reruns the page), as the export and code boxes: its
    picker, button and code changed with every N move (docs/benchmarks.md, issue 46). The
    query picked is kept while the box is closed."""
    box = lazy_box(
        ":material/description: " + _("Worked example for notes: one query, every step, as LaTeX"),
        f"worked_box_{page}",
    )
    if box is not None:
        with box:
            worked_example_body(view, head, page)


def worked_example_body(view: View, head: int, page: str) -> None:
    """The worked example box's picker, download button and the document's first lines."""
    r, labels = view.result, view.labels
    kept = f"{page}_we_query_kept"  # the picker's value, while the box is closed (not drawn)
    query = st.selectbox(
        _("query token"),
        list(range(r.n_tokens)),
        index=min(int(st.session_state.get(kept, 0)), r.n_tokens - 1),
        format_func=lambda i: f"{i}: {visible(labels[i])}" if i < len(labels) else str(i),
        key=f"{page}_we_query",
    )
    st.session_state[kept] = int(query)
    tex = latex.worked_example(
        labels=labels,
        q=r.queries[head],
        k=r.keys[head],
        v=r.values[head],
        query=int(query),
        scale=r.scale,
        mask=r.mask,
        head=head,
    )
    st.download_button(
        _("Worked example for query {query} (head {head}), LaTeX").format(query=query, head=head),
        data=tex.encode(),
        file_name=f"attnviz_{page}_worked_query{query}_head{head}.tex",
        mime="application/x-tex",
        key=f"dl_{page}_worked",
        on_click="ignore",
        icon=":material/download:",
    )
    st.caption(
        _(
            "A standalone document (pdflatex); the numbers are rounded to 3 decimals. "
            "Its first lines:"
        )
    )
    st.code("\n".join(tex.splitlines()[:12]), language="latex", wrap_lines=True)


def digest(a: np.ndarray) -> str:
    return hashlib.sha1(np.ascontiguousarray(a).tobytes()).hexdigest()[:12]
