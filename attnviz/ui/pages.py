"""The app's pages: one table, :data:`PAGES`, in sidebar order (the first is the default).

``app.py`` builds the navigation and the sidebar from it; the code box
(:data:`attnviz.ui.code.PAGE_EXTRAS`), the Ask-the-room questions (:mod:`attnviz.ui.asks`,
:func:`attnviz.ui.predict.ask_room`) and the class's join link (:mod:`attnviz.ui.live`)
name pages by their slug, which :func:`page` checks against the table; the tests walk it
(every page opens in AppTest and in the browser).

Where to add a page: write ``pages/<slug>.py`` and add one :class:`Page` to :data:`PAGES`
(docs/architecture.md, "Where to add a page").

Nothing here imports Streamlit: tests and the code box read the table as plain data.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from attnviz.i18n import N_, _

#: Which of the sidebar's controls apply on a page (:func:`attnviz.ui.sidebar`): ``"all"``;
#: ``"weights"``, the sizes, seed, weights and scaling only (the page sets its own inputs
#: and mask: Cross-attention; the others are drawn in a hidden box); ``"seed"``, the seed
#: only (the others are drawn but hidden); ``"none"``, a page that runs a trained model
#: with its own input and weights (all drawn but hidden, and the sidebar says why).
#: Hidden controls keep their values and links for the other pages.
Controls = Literal["all", "weights", "seed", "none"]


@dataclass(frozen=True)
class Page:
    """One page of the app."""

    slug: str  # its URL path (/masking) and file (pages/masking.py); ids in the code box, asks
    title: str  # the sidebar's link and the browser tab's title, in English (N_; shown_title)
    icon: str  # a Material Symbol, ":material/<name>:"
    charts: int  # plotly charts drawn at the default controls (tests/e2e/test_pages.py)
    controls: Controls = "all"  # which sidebar controls apply (see Controls)
    runs_model: bool = False  # runs a trained model (its weights are an optional install)
    code_box: bool = False  # draws a NumPy code box (ui.code_box; tests/test_app.py checks)
    export: bool = False  # offers the NPZ download (ui.export_section; tests/test_app.py)

    @property
    def shown_title(self) -> str:
        """The title in the shown language (``app.py`` builds the navigation every run)."""
        return _(self.title)

    @property
    def file(self) -> str:
        """The page's script, relative to the folder of ``app.py``."""
        return f"pages/{self.slug}.py"


def _maths(slug: str, title: str, icon: str, charts: int, **more: Any) -> Page:
    """A page of the attention maths: its code box and its NPZ export."""
    return Page(slug, title, icon, charts, code_box=True, export=True, **more)


def _model(slug: str, title: str, icon: str, charts: int) -> Page:
    """A page that runs a trained model with its own input and weights."""
    return Page(slug, title, icon, charts, controls="none", runs_model=True)


PAGES: tuple[Page, ...] = (
    # scores | weights | output, X, Q, K, V, the query's weights and its weighted sum
    _maths("playground", N_("Playground"), ":material/tune:", 9),
    # X, Q, K, V, QKᵀ, scaled scores, weights, output (the mask step draws none when off)
    _maths("step_by_step", N_("Step by step"), ":material/stairs:", 8),
    # per-head weights, one query in every head and its output in one head, entropy,
    # argmax, concat, W_O, Y
    _maths("multi_head", N_("Multi-head"), ":material/view_module:", 8),
    # variance, factor bars, weights unscaled/scaled, entropy, saturation curve
    _maths("scaling", N_("Why √d_k"), ":material/straighten:", 6),
    # mask, scores with -inf, softmax: for causal and padding
    _maths("masking", N_("Masking"), ":material/visibility_off:", 6),
    # outputs then shuffled, outputs of shuffled, difference
    _maths("permutation", N_("Permutation"), ":material/shuffle:", 3),
    # scores | weights | output (target × source), Q from the target, K, V from the source,
    # every head's weights
    _maths("cross", N_("Cross-attention"), ":material/translate:", 7, controls="weights"),
    # A's weights, B's weights, B − A, the change in entropy per query
    _maths("compare", N_("Compare"), ":material/compare:", 4),
    # tables only
    _maths("notebooks", N_("Notebooks"), ":material/menu_book:", 0),
    # 72-head grid, one head's weights, q/k/v, the query's weights, + tab charts; Heads:
    # the six score heatmaps and the top 3 heads' weights on the probe
    _model("real_model", N_("Real model (MiniLM)"), ":material/smart_toy:", 11),
    # 270-head grid, one head's weights, next-token bars, newest rows, RoPE curve, shifted
    # pair, trained/random pair; Heads: the scores and the top 3 heads
    _model("decoder", N_("Real model (decoder)"), ":material/auto_awesome:", 13),
    # the loss curve, each head's job score over training, every head's weights at the step
    _model("learned", N_("Learned attention"), ":material/school:", 3),
    # questions and answers only
    Page("exercises", N_("Exercises"), ":material/quiz:", charts=0, controls="seed"),
    # the lessons (attnviz/classroom/lessons/, ATTNVIZ_LESSONS): each a tour and a lecture
    Page("lessons", N_("Lessons"), ":material/route:", charts=0, controls="none"),
)

BY_SLUG: dict[str, Page] = {p.slug: p for p in PAGES}


def page(slug: str) -> Page:
    """The page with this slug; a ``KeyError`` that lists the slugs if there is none."""
    try:
        return BY_SLUG[slug]
    except KeyError:
        raise KeyError(
            f"no page {slug!r} in attnviz.ui.pages.PAGES; the slugs are {', '.join(BY_SLUG)}"
        ) from None
