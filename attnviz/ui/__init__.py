"""The Streamlit layer of attnviz: the only package besides ``app.py`` and ``pages/`` that
imports streamlit. Its parts:

- :mod:`~attnviz.ui.controls`: the table of sidebar controls (:data:`CONTROLS`) and the
  frozen :class:`Settings` made from it; :mod:`~attnviz.ui.walker` is the sidebar that walks it.
- :mod:`~attnviz.ui.links`: URL values, presets as links; :mod:`~attnviz.ui.callbacks`:
  the controls' callbacks and the presets' control values; :mod:`~attnviz.ui.sizes`: the
  sizes' rules (largest N and D, divisors); :mod:`~attnviz.ui.text`: user text made literal.
- :mod:`~attnviz.ui.state`: the per-session book, the cached ``compute(settings)`` and
  the :class:`View` that pages read with :func:`current`.
- :mod:`~attnviz.ui.page`: page helpers (title, literal user text, notes, charts).
- :mod:`~attnviz.ui.export`: CSV and NPZ downloads.
- :mod:`~attnviz.ui.code`: the NumPy code box, from templates.
- :mod:`~attnviz.ui.board`: the chart board (plotly redrawn in place, linked views), and
  its one overlay hook: a page's chart named by ``overlay=Overlay(slug, view, ...)`` gets
  a live class's revealed answer outlined (:func:`attnviz.ui.predict.class_overlay`,
  registered here).
- :mod:`~attnviz.ui.present`: the presenter view (``?present=1``) and a page's steps.
- :mod:`~attnviz.ui.cell`: the cell panel (a clicked cell's arithmetic,
:mod:`attnviz.teaching.explain`).
- :mod:`~attnviz.ui.a11y`: the app's focus ring, key hints and reduced motion (WCAG 2.1 AA).
- :mod:`~attnviz.ui.pages`: the pages table (:data:`~attnviz.ui.pages.PAGES`) that ``app.py``
  builds the navigation and the sidebar's flags from.
- :mod:`~attnviz.ui.cross`, :mod:`~attnviz.ui.cross_view`: the Cross-attention page (its
  controls, run, code box, downloads) and its boards from plain arrays (what a real
  encoder-decoder's page calls for one layer's ``cross_attentions``, or the layer × head grid).
- :mod:`~attnviz.ui.learned`: the Learned attention page (its link, pickers, charts, and
  Train it yourself: a run in a thread, one per session).
  :mod:`~attnviz.ui.learned_charts`: its charts of one checkpoint (loss, job scores, heads).
- :mod:`~attnviz.ui.compare`: compare mode, view B's ``b_`` controls, the clicked cell in A
  and B; :mod:`~attnviz.ui.compare_presets`: its classic comparisons in one click.
- :mod:`~attnviz.ui.lang`: the session's language (``?lang=``, the picker, what the board
  needs of it); :mod:`~attnviz.ui.mask_words`: the mask registry's words for the catalogs.
- :mod:`~attnviz.ui.heads`, :mod:`~attnviz.ui.heads_spec`: the Heads section of the model
  pages (probe, score heatmaps, table) and what it works on (no Streamlit).
- :mod:`~attnviz.ui.picker`: the model pages' **Model** picker, a found model's views and
  the bundled model's text box (``bundled_page``);
  :mod:`~attnviz.ui.picker_encdec`: the Cross-attention page's found encoder-decoder;
  :mod:`~attnviz.ui.generate`: generation step by step; :mod:`~attnviz.ui.model_exports`:
  a found model's downloads.
  :mod:`~attnviz.ui.model_words`: a found model's size, parameters and shape in words; by
  kind of model, the page's title and notes.
- :mod:`~attnviz.ui.lesson_look`: a lesson stop's look (the chart, cell or row to
  look at) handed to the boards and said in words on the bar.
- :mod:`~attnviz.ui.live`: a live class on the Exercises page (teacher's view, join box);
  :mod:`~attnviz.ui.live_source`: what a class started there asks (this page's set or a
  lesson's questions); :mod:`~attnviz.ui.live_notices`: a class link it cannot open;
  :mod:`~attnviz.ui.projector`: a live class on the projector; :mod:`~attnviz.ui.quiz`:
  the exercise cards; :mod:`~attnviz.ui.address`: the room's link from what Streamlit knows.
- :mod:`~attnviz.ui.predict`: Ask the room (tally, Reveal, the outline through the board's
  overlay hook); :mod:`~attnviz.ui.asks`: each page's questions, one call per page.
- :mod:`~attnviz.ui.tour`: a lesson played as a tour (the bar above the page);
  :mod:`~attnviz.ui.lesson_links`: what a lesson's link may hold (``check_link``);
  :mod:`~attnviz.ui.navlinks`: in-app links drawn as buttons (the tour's, the Lessons page's);
  :mod:`~attnviz.ui.lesson_build`: the sidebar's "Build a lesson".
- :mod:`~attnviz.ui.streamlit_private`: Streamlit's internals behind one door (the only
  module that imports Streamlit's runtime or names Streamlit's markup).
- :mod:`~attnviz.ui.sockets`: the server's sockets send a small message at once
  (``TCP_NODELAY``, set at startup by ``serve.py``'s lifespan; no Streamlit).

``app.py`` calls :func:`sidebar` once per run (before ``st.navigation(...).run()``);
pages call :func:`current` and the helpers re-exported here. The widget keys, their
values and their link rules are in :data:`CONTROLS` (the README's control table is
generated from it). Page widgets: ``head``, ``query`` and the pages' own controls.
Invalid values in a link (``?N=-3&heads=7&mask=xyz``) are replaced by valid ones and a
``st.warning`` names each parameter that was corrected.
"""

from pathlib import Path

from attnviz.ui import a11y, lang, lesson_build, pages, predict, present, tour
from attnviz.ui.board import (
    Overlay,
    board,
    head_board,
    link_attn,
    link_bars,
    link_tokens,
    overlay_provider,
    prefetch_heads,
    preload_plotly,
)
from attnviz.ui.callbacks import load_preset
from attnviz.ui.cell import cell_data, cell_panel, show_cell
from attnviz.ui.code import code_box, code_lines, page_extra
from attnviz.ui.controls import (
    CONTROLS,
    DEFAULTS,
    INITS,
    KEYS,
    LAYOUTS,
    MASKS,
    SCALES,
    SEED_MAX,
    SOURCES,
    Control,
    Settings,
    markdown_table,
)
from attnviz.ui.export import (
    csv_maker,
    digest,
    export_section,
    latex_section,
    npz_bytes,
    oriented,
    worked_example_download,
)
from attnviz.ui.links import preset_query
from attnviz.ui.page import (
    PICKER_WIDTH,
    SMALL_PICKER_WIDTH,
    chart_row,
    head_picker,
    index_slider,
    intro,
    md_text,
    model_missing,
    model_prompt,
    plot,
    pooled_note,
    row,
    setting_buttons,
    shapes,
    start,
    token_select,
    weights_fixed,
    weights_scale,
)
from attnviz.ui.present import Steps, model_steps, steps
from attnviz.ui.sizes import D_MAX, N_MAX, default_heads, divisors, nearest_divisor
from attnviz.ui.state import (
    View,
    cached,
    compute,
    current,
    end_page,
    experiment,
    page_guard,
    variant,
)
from attnviz.ui.text import md_token, pointing
from attnviz.ui.walker import sidebar

# The one overlay of the charts: a live class's revealed answer, outlined on the page's chart
# that names it (``overlay=Overlay(...)``); pages never import attnviz.ui.predict.
overlay_provider(predict.class_overlay)

#: The browser tab's icon (a causal mask's weights in viridis), served by this server.
ICON = Path(__file__).with_name("icon.png")

__all__ = [
    "ICON",
    "CONTROLS",
    "Overlay",
    "D_MAX",
    "DEFAULTS",
    "INITS",
    "KEYS",
    "LAYOUTS",
    "MASKS",
    "N_MAX",
    "PICKER_WIDTH",
    "SMALL_PICKER_WIDTH",
    "SCALES",
    "SEED_MAX",
    "SOURCES",
    "Control",
    "Settings",
    "Steps",
    "View",
    "board",
    "cached",
    "cell_data",
    "cell_panel",
    "chart_row",
    "code_box",
    "code_lines",
    "compute",
    "csv_maker",
    "current",
    "end_page",
    "experiment",
    "head_board",
    "head_picker",
    "index_slider",
    "token_select",
    "weights_fixed",
    "weights_scale",
    "default_heads",
    "digest",
    "divisors",
    "export_section",
    "intro",
    "latex_section",
    "link_attn",
    "link_bars",
    "link_tokens",
    "load_preset",
    "markdown_table",
    "md_text",
    "md_token",
    "model_missing",
    "model_prompt",
    "nearest_divisor",
    "npz_bytes",
    "pointing",
    "oriented",
    "page_extra",
    "page_guard",
    "plot",
    "pooled_note",
    "row",
    "setting_buttons",
    "prefetch_heads",
    "preload_plotly",
    "preset_query",
    "a11y",
    "lang",
    "pages",
    "present",
    "tour",
    "lesson_build",
    "shapes",
    "show_cell",
    "sidebar",
    "start",
    "steps",
    "model_steps",
    "variant",
    "worked_example_download",
]
