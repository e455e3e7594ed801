"""N's limits, one table: every number of tokens N (and the width D) past which attnviz
does something else. The library, the figures, the ui and the pages read them here (their
older names, such as ``inputs.MAX_TOKENS`` or ``viz.style.MAX_TICK_LABELS``, are these
values under the name their module has always exported); no other module writes one of
these numbers. Pure Python, imports nothing.

:data:`TABLE` names each limit with what happens above it (docs/architecture.md;
``tests/engine/test_limits.py`` checks that every limit is in it and that no source compares a
token count with a bare copy of one).
"""

from __future__ import annotations

# --- what the app accepts
N_MAX = 512  #: the largest N the app draws (the N slider, typed text, an upload)
D_MAX = 128  #: the largest D (model width) the app accepts
CROSS_N_MAX = 64  #: the largest source or target length of the Cross-attention page
MODEL_N_MAX = 512  #: the most tokens a found model's page runs (the model pages' picker)

# --- how a chart draws N tokens
FULL_HEATMAP_N = 128  #: above: a token axis is drawn in blocks of ceil(N / 128) tokens
SMALL_MULTIPLES_N = 64  #: above: per-head small multiples become a summary
MASK_MARKERS_N = 48  #: above: masked cells are grey without "×" markers
TICK_LABELS_N = 40  #: above: axes show indices instead of token labels
HOVER_BOTH_N = 40  #: above: the Compare page's difference hover shows only B − A
CELL_TEXT_N = 32  #: up to: a heatmap writes each value in its cell

# --- where a clicked cell is worked out
CELL_PANEL_N = 64  #: up to: in the browser (the arithmetic travels with the chart)
CELL_PANEL_ND = 64 * 32  #: up to N × D: in the browser; above either, by the server

#: Each limit: (its value, what happens past it).
TABLE: dict[str, tuple[int, str]] = {
    "N_MAX": (N_MAX, "the largest N the app draws: the N slider, typed text, an upload"),
    "D_MAX": (D_MAX, "the largest D (model width) the app accepts"),
    "CROSS_N_MAX": (CROSS_N_MAX, "the largest source or target of the Cross-attention page"),
    "MODEL_N_MAX": (MODEL_N_MAX, "the most tokens a found model's page runs"),
    "FULL_HEATMAP_N": (FULL_HEATMAP_N, "above it a token axis is drawn in blocks of tokens"),
    "SMALL_MULTIPLES_N": (SMALL_MULTIPLES_N, "above it per-head small multiples are a summary"),
    "MASK_MARKERS_N": (MASK_MARKERS_N, "above it masked cells are grey without × markers"),
    "TICK_LABELS_N": (TICK_LABELS_N, "above it axes show indices, not token labels"),
    "HOVER_BOTH_N": (HOVER_BOTH_N, "above it Compare's difference hover shows only B − A"),
    "CELL_TEXT_N": (CELL_TEXT_N, "up to it a heatmap writes each value in its cell"),
    "CELL_PANEL_N": (CELL_PANEL_N, "up to it a clicked cell is worked out in the browser"),
    "CELL_PANEL_ND": (CELL_PANEL_ND, "up to this N × D a clicked cell is worked out there"),
}
