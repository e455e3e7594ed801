"""Plotly figure builders: pure functions from NumPy arrays to ``go.Figure`` (no Streamlit).

One module per subject: :mod:`~attnviz.viz.heatmaps` (a matrix as a heatmap),
:mod:`~attnviz.viz.attention` (one query's weights, the heads as small multiples, entropy),
:mod:`~attnviz.viz.charts` (bars, lines, the scaling page's curves),
:mod:`~attnviz.viz.compare` (B − A), :mod:`~attnviz.viz.cross` (cross-attention:
a target over a source), :mod:`~attnviz.viz.classroom` (the room's tallies),
:mod:`~attnviz.viz.models` (the real models' pages), :mod:`~attnviz.viz.heads` (the head
scores), :mod:`~attnviz.viz.learned` (the toy transformers in training),
:mod:`~attnviz.viz.look` (a lesson stop's look outlined on a chart's JSON), on the shared
:mod:`~attnviz.viz.style`. Callers write the subject:
``viz.heatmaps.attention_figure(...)``.

Conventions (every builder follows them, tests read them back from the figure data):

- Matrices arrive in row layout (one token per row, as the engine returns them); the
  ``layout`` argument chooses how they are drawn: ``"rows"`` keeps tokens as rows
  (PyTorch), ``"columns"`` transposes so that tokens are columns (the UDL book). Axis
  titles always say which.
- Heatmap axes are numeric (0..N-1, row 0 at the top) with token labels as tick text,
  so repeated words stay separate cells; with more than ``style.MAX_TICK_LABELS``
  tokens the ticks show indices only.
- Scores and outputs use a diverging scale centred at 0 (``RdBu`` reversed, ``zmid=0``);
  weights use a sequential scale fixed to 0..1 (``Viridis``). Both are colour-blind safe.
- Masked cells are NaN (gaps, drawn on a grey background, never a colour of the scale)
  and, for small N, crossed out by a "×" marker trace named ``"masked"``.
- Values are sent as float32 (plotly encodes them as base64), which keeps the payload
  small at large N; hover templates name the cell, e.g. ``q₂·k₅ / √d_k = 1.234``.
"""

from attnviz.viz import (
    attention,
    charts,
    classroom,
    compare,
    cross,
    heads,
    heatmaps,
    learned,
    models,
    style,
)

__all__ = [
    "attention",
    "charts",
    "classroom",
    "compare",
    "cross",
    "heads",
    "heatmaps",
    "learned",
    "models",
    "style",
]
