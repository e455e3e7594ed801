"""Downloads of a found model's run on its page (issue 34): every layer's and head's
weights with the tokens as one long CSV and as an NPZ, and the page's head as a CSV grid."""

from __future__ import annotations

import io
import json
from typing import Any

import numpy as np
import pandas as pd
import streamlit as st

from attnviz import i18n
from attnviz.i18n import _
from attnviz.models.catalog import ModelEntry
from attnviz.ui.code import lazy_box
from attnviz.ui.export import csv_maker, download
from attnviz.ui.text import md_text

#: Above this many weights (L x H x N x N) the long CSV of every head is not offered (the
#: NPZ holds them all in any case): 2 million rows are ~100 MB of text.
CSV_MAX_CELLS = 2_000_000


def long_csv(weights: np.ndarray, tokens: list[str]) -> bytes:
    """Every layer's and head's weights (L, H, N, N), one row per weight: layer, head,
    query, query_token, key, key_token, weight (layers and heads from 0, as on the page;
    tokens by position from 0)."""
    n_layers, n_heads, n, m = weights.shape
    lay, hd, q, k = np.meshgrid(
        np.arange(n_layers), np.arange(n_heads), np.arange(n), np.arange(m), indexing="ij"
    )
    toks = np.asarray(tokens, dtype=object)
    df = pd.DataFrame({
        "layer": lay.ravel(), "head": hd.ravel(),
        "query": q.ravel(), "query_token": toks[q.ravel()],
        "key": k.ravel(), "key_token": toks[k.ravel()],
        "weight": weights.ravel().astype(np.float64),
    })  # fmt: skip
    return df.to_csv(index=False, float_format="%.8g").encode()


def npz(entry: ModelEntry, run: Any) -> bytes:
    """The run as an NPZ: attentions (L, H, N, N), tokens, ids, a decoder's logits, an
    encoder's hidden states, and the model (name, family) as JSON."""
    arrays: dict[str, Any] = {
        "attentions": run.attentions,
        "tokens": np.asarray(run.tokens),
        "ids": np.asarray(run.ids),
        "model_json": np.asarray(
            json.dumps({"name": entry.name, "family": entry.family, "kind": entry.kind})
        ),
    }
    for name in ("logits", "hidden_states"):
        if getattr(run, name, None) is not None:
            arrays[name] = getattr(run, name)
    buf = io.BytesIO()
    np.savez_compressed(buf, **arrays)
    return buf.getvalue()


def _thousands(n: int) -> str:
    """``n`` with the shown language's thousands sign (1,024 in English, 1.024 in Spanish)."""
    return format(n, ",").replace(",", i18n.plotly_separators()[1])


def exports(spec: Any, entry: ModelEntry, run: Any, layer: int, head: int) -> None:
    """Downloads of the run (``spec``: the page's :class:`~attnviz.ui.picker.PageModels`,
    its ``prefix`` and ``kind``): every layer's and head's weights with the tokens, as one long
    CSV (when not too large) and as an NPZ; the page's ``layer``, ``head`` as a CSV grid."""
    box = lazy_box(
        ":material/download: " + _("Export: every layer's and head's weights (CSV, NPZ)"),
        f"{spec.prefix}_export_box",
    )
    if box is None:  # drawn only while open (the files are made only when clicked)
        return
    w, tokens = run.attentions, list(run.tokens)
    slug = "".join(c if c.isalnum() else "_" for c in entry.name).strip("_").lower()
    with box:
        st.caption(
            _(
                "{name} on your text: {n} tokens, weights of shape {shape} (layer, head, "
                "query, key). The long CSV has one row per weight: layer, head (from 0, as on "
                "the page), query and key positions (from 0) with their tokens. The NPZ holds "
                "`attentions`, `tokens`, `ids`{more} and `model_json` (NumPy: "
                "`np.load(f)['attentions']`)."
            ).format(
                name=md_text(entry.name),
                n=len(tokens),
                shape=" × ".join(map(str, w.shape)),
                more=", `logits`" if spec.kind == "decoder" else ", `hidden_states`",
            )
        )
        cols = st.columns(3)
        if w.size <= CSV_MAX_CELLS:
            download(
                cols[0],
                _("Every head, long CSV ({rows} rows)").format(rows=_thousands(w.size)),
                lambda: long_csv(w, tokens),
                f"attnviz_{slug}_attentions.csv",
                key=f"{spec.prefix}_dl_long",
            )
        else:
            cols[0].caption(
                _("{n} weights: too many for one CSV here; the NPZ has them all.").format(
                    n=_thousands(w.size)
                )
            )
        download(
            cols[1],
            _("Layer {layer}, head {head} ({n}×{n}) CSV").format(
                layer=layer, head=head, n=len(tokens)
            ),
            csv_maker(w[layer, head], tokens, tokens),
            f"attnviz_{slug}_layer{layer}_head{head}.csv",
            key=f"{spec.prefix}_dl_head",
        )
        download(
            cols[2],
            _("Every head, tokens, ids (NPZ)"),
            lambda: npz(entry, run),
            f"attnviz_{slug}_attentions.npz",
            key=f"{spec.prefix}_dl_npz",
        )
