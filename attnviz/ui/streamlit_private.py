"""Streamlit's internals behind one door: the only module that uses a private Streamlit API
or names Streamlit's markup (``data-testid`` attributes, ``st-key-`` classes, its widgets'
inner elements).

Everything else in attnviz uses Streamlit's public API and calls the functions here. A
Streamlit upgrade that moves one of these things breaks ``tests/ui/test_streamlit_private.py``
(each private name exists with the signature used here; each selector names something in the
installed front-end bundle), not a page in front of a class. What each is for:

- :func:`use_navigation`: ``PagesManager.uses_pages_directory`` (a legacy-mode deep link,
  :func:`attnviz.ui.state.page_guard`).
- :func:`end_run`: ``StopException``, what ``st.stop()`` raises, without its stop request
  (:func:`attnviz.ui.state.end_page`).
- :func:`session_value`: a session-state value read only inside a run (``get_script_run_ctx``):
  the language of a fragment's run (:mod:`attnviz.ui.lang`).
- :func:`first_run_url_values`, :func:`forget_url_value`, :func:`seed_url_value`: the run's
  query-param state (``get_script_run_ctx``, ``_initial_query_params``): URL values removed
  before the widgets read them (:mod:`attnviz.ui.links`), or replaced (a prompt box that
  becomes a text area, :func:`attnviz.ui.page.model_prompt`).
- the page CSS that styles Streamlit's elements (:func:`hide_box`, :func:`seed_only_controls`,
  :func:`present_css`, :func:`accessibility_css`, :func:`nicknames_css`); each ``st.html``
  takes a literal string (tests/test_serving.py).
- :func:`index_html`: the text of Streamlit's ``static/index.html``, the page every URL of
  the app is (:mod:`attnviz.ui.board.shell` serves it with plotly.js asked for at once).
- :data:`BOARD_DOM`: the selectors the chart board's JavaScript needs for Streamlit's markup,
  sent to it as data (``dom`` in every board's data): no board module names Streamlit's markup.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any, NoReturn

import streamlit as st

try:  # Streamlit's internal pages manager (see use_navigation); None if it moved
    from streamlit.runtime.pages_manager import PagesManager
except ImportError:  # pragma: no cover - internal API moved: the test says so
    PagesManager = None

try:  # what st.stop() raises, and this run's context (the query-param state)
    from streamlit.runtime.scriptrunner import StopException, get_script_run_ctx
except ImportError:  # pragma: no cover - internal API moved: the test says so
    StopException = None
    get_script_run_ctx = None


def use_navigation() -> None:
    """Make Streamlit treat this app as an ``st.navigation`` app from now on (it decides per
    process, on the first session, that an entry script beside a ``pages/`` folder is a
    legacy multipage app, and only changes its mind when ``st.navigation`` runs)."""
    if PagesManager is not None:
        PagesManager.uses_pages_directory = False


def end_run() -> NoReturn:
    """End this run like ``st.stop()`` but without its stop request (which replaces a rerun
    queued behind this run: a dropped click, issue 25)."""
    if StopException is None:  # pragma: no cover - see the import
        st.stop()
    raise StopException()


@contextlib.contextmanager
def _query_params() -> Iterator[Any]:
    """This run's query-param state, locked (None outside a run or if it moved)."""
    ctx = get_script_run_ctx() if get_script_run_ctx is not None else None
    if ctx is None:
        yield None
        return
    with ctx.session_state.query_params() as qp:
        yield qp


def session_value(key: str) -> Any:
    """``st.session_state[key]`` in a script run (a full run, a fragment's, a callback),
    None outside one (a request of the light pages, a server thread): no warning asked."""
    ctx = get_script_run_ctx() if get_script_run_ctx is not None else None
    if ctx is None or key not in ctx.session_state:
        return None
    return ctx.session_state[key]


def first_run_url_values(keys: Iterator[str] | tuple[str, ...]) -> dict[str, str] | None:
    """The link's values of ``keys`` that the widgets will read on this run (the first run
    of a session; the last value of a repeated key): ``{key: raw text}``. None outside a
    run or if Streamlit's internal state moved."""
    try:
        with _query_params() as qp:
            if qp is None:
                return None
            initial = qp._initial_query_params
            out = {}
            for key in keys:
                values = initial.get(key)
                if values:
                    out[key] = str(values[-1] if isinstance(values, list) else values)
            return out
    except Exception:  # pragma: no cover - internal API changed: the test says so
        return None


def forget_url_value(key: str) -> bool:
    """Forget the link's value of ``key`` before its widget reads it (on the first run a
    URL-bound widget takes the link's value even over ``st.session_state``). False if
    there is no run or Streamlit's internal state moved."""
    try:
        with _query_params() as qp:
            if qp is None:
                return False
            qp._initial_query_params.pop(key, None)
            qp.remove_param(key)
        return True
    except Exception:  # pragma: no cover - internal API changed: the test says so
        return False


def seed_url_value(key: str, value: str) -> bool:
    """Make ``value`` the link's value of ``key`` for this run, before a new widget bound
    to it reads it (a bound widget's first run takes the link's value over
    ``st.session_state``), and the browser's link too. False if there is no run or
    Streamlit's internal state moved."""
    try:
        with _query_params() as qp:
            if qp is None:
                return False
            qp._initial_query_params[key] = [value]
            qp.set_corrected_value(key, value, "string_value")
        return True
    except Exception:  # pragma: no cover - internal API changed: the test says so
        return False


# --------------------------------------------------------------------------- page CSS

#: Containers hidden by :func:`hide_box` (their key; Streamlit's class ``st-key-<key>``).
HIDDEN_BOXES = (
    "attnviz_controls",
    "attnviz_hidden_controls",
    "slide_hidden_controls",
)


#: The hidden boards (their element's key, ``attnviz.ui.board``: the preload, the other heads'
#: charts, the presenter view's arrow keys): hidden by :func:`accessibility_css`'s rule,
#: which every run sends first, so that no box and no style element of their own is
#: rendered again on every page switch (issue 46).
HIDDEN_BOARDS = ("board_preload", "board_prefetch", "board_step_keys")


def hide_box(key: str) -> None:
    """Hide the container of key ``key`` (one of :data:`HIDDEN_BOXES`): it draws nothing
    and takes no space, its elements still run (hidden boards, the controls that keep their
    values on a page they do not apply to). The key is one of the literals of
    :data:`HIDDEN_BOXES` (tests/test_serving.py's REVIEWED)."""
    if key not in HIDDEN_BOXES:
        raise ValueError(f"expected one of the hidden boxes {HIDDEN_BOXES}, got {key!r}")
    st.html("<style>.st-key-" + key + " {display: none;}</style>")


def seed_only_controls() -> None:
    """Hide every control in the sidebar's controls box (``attnviz_controls``) but the seed
    (key ``seed``): the exercises page."""
    st.html(
        "<style>.st-key-attnviz_controls [data-testid='stElementContainer']"
        ":not(.st-key-seed) {display: none;}</style>"
    )


def nicknames_css() -> None:
    """The live class's nicknames (container ``class_nicknames``) at the presenter view's
    body type."""
    st.html("<style>.st-key-class_nicknames p { font-size: 1.4rem; line-height: 1.4; }</style>")


def projector_css() -> None:
    """A live class on the projector (:mod:`attnviz.ui.projector`): every text at least
    1.6rem (25.6 px; the presenter view's body type is 1.5rem, 24 px), the
    question and its explanation larger; the QR code as tall as the screen allows, the
    join link, the class code, the count of students and the room's counts in type the back
    row reads; the join screen's warning and address field in body type; a question's
    title (``h2``) at Streamlit's own ``h2`` size, not the smaller one the app's sections
    have (:func:`accessibility_css`). The slides' ``h1`` (the class's name) is read, not drawn,
    and takes no room in the column (its element out of the flow)."""
    st.html(
        """<style>
h1.attnviz-slide-title { position: absolute; width: 1px; height: 1px; padding: 0; margin: -1px;
  overflow: hidden; clip-path: inset(50%); white-space: nowrap; }
[data-testid="stElementContainer"]:has(h1.attnviz-slide-title) { position: absolute; }
[data-testid="stMain"] [data-testid="stMarkdownContainer"] p,
[data-testid="stMain"] [data-testid="stMarkdownContainer"] li,
[data-testid="stMain"] [data-testid="stCaptionContainer"],
[data-testid="stMain"] [data-testid="stWidgetLabel"] p,
[data-testid="stMain"] input, [data-testid="stMain"] button p { font-size: 1.6rem; }
[data-testid="stMain"] [data-testid="stMarkdownContainer"] h2 { font-size: 2.25rem;
  padding: 1rem 0; }
[data-testid="stMain"] .st-key-class_slide_prompt p { font-size: 1.75rem; line-height: 1.45; }
[data-testid="stMain"] .st-key-class_slide_prompt .katex,
[data-testid="stMain"] .st-key-class_answer .katex { font-size: 1.15em; }
[data-testid="stMain"] .st-key-class_answer .katex-display > .katex { font-size: 1.75rem; }
[data-testid="stMain"] .st-key-class_answer .katex-display { padding: 0.6em 0 0.4em; }
[data-testid="stMain"] .st-key-class_big_warning [data-testid="stAlert"] p { line-height: 1.35; }
.st-key-class_big_qr img { height: 62vh !important; width: auto !important; max-width: 100%;
  object-fit: contain; }
[data-testid="stMain"] .st-key-class_big_link p { font-family: monospace; font-size: 2.2rem;
  line-height: 1.45; overflow-wrap: anywhere; }
[data-testid="stMain"] .st-key-class_big_code p { font-size: 7.5rem; font-weight: 700;
  letter-spacing: 0.12em; line-height: 1.1; margin: 0; }
[data-testid="stMain"] .st-key-class_big_count p { font-size: 2.8rem; font-weight: 600; }
[data-testid="stMain"] .st-key-class_big_tally p { font-size: 2.6rem; }
[data-testid="stMain"] .st-key-class_answer [data-testid="stAlert"] p { font-size: 2.6rem; }
</style>"""
    )


def slide_math_css(px: float) -> None:
    """The display formulas of a class's question slide (container ``class_slide_prompt``)
    at ``px`` (:mod:`attnviz.ui.projector` sizes them to the slide)."""
    st.html(
        '<style>[data-testid="stMain"] .st-key-class_slide_prompt .katex-display > .katex '
        f"{{ font-size: {px:.0f}px; }}</style>"
    )


def present_css() -> None:
    """The presenter view: body type 1.5x Streamlit's 16 px (24 px, what the back row of a
    150-seat hall reads: issue 47's layout audit), and the controls' values, a button's key
    hint (Streamlit's 14 px) and the charts' strip of buttons too (a select's value was 12
    px), a select 3rem high; a formula's scripts at least 24 px too (KaTeX draws them at
    0.5-0.7 of the formula's size);
    the page from the top of the screen at its full width; a slider's value lifted above its
    thumb (the larger type put it on the thumb) and kept off its label (a label's second
    line touched the value: in Arabic the label's words and the value at its end both sit
    at the right); a slide's words beside its charts (a
    container keyed ``slide_text...``) at 1.5x, 24 px (1.1x on a screen narrower than 1600
    px, a 1280x720 projector, where that column is narrow); a lesson's one-line bar
    (``tour_bar``) 0.25rem from its border above and below, not 1rem (a slide at its
    limit, multi-head's last step, scrolled 10 px under it); a part of a section (``h3``:
    an exercise) and Step by step's step title (``h2`` in the container keyed
    ``slide_step_title``) at 28 px, 0.4rem above and nothing below; a section (``h2``)
    as off a slide (:func:`accessibility_css`). (The number and text inputs' rule, by a
    Base Web attribute, matched nothing in Streamlit 1.67 (react-aria): dropped,
    tests/ui/test_streamlit_private.py.)"""
    st.html(
        """
<style>
[data-testid="stMain"] { font-size: 1.5rem; }
[data-testid="stMain"] [data-testid="stMarkdownContainer"] p,
[data-testid="stMain"] [data-testid="stMarkdownContainer"] li,
[data-testid="stMain"] [data-testid="stCaptionContainer"],
[data-testid="stMain"] [data-testid="stWidgetLabel"] p,
[data-testid="stMain"] button p { font-size: 1.5rem; line-height: 1.4; }
[data-testid="stMain"] [data-testid="stMarkdownContainer"] th,
[data-testid="stMain"] [data-testid="stMarkdownContainer"] td,
[data-testid="stMain"] button kbd, [data-testid="stMain"] .attnviz-join label {
  font-size: 1.5rem; }
[data-testid="stMain"] [data-testid="stMarkdownContainer"] code,
[data-testid="stMain"] [data-testid="stCaptionContainer"] code { font-size: 1em;
  line-height: 1; }
[data-testid="stMain"] h1 { font-size: 2.2rem; padding: 0 0 0.3rem 0; }
[data-testid="stMain"] [data-testid="stMarkdownContainer"] h3,
[data-testid="stMain"] .st-key-slide_step_title h2 { font-size: 1.75rem;
  padding: 0.4rem 0 0 0; }
[data-testid="stMain"] .katex { font-size: 1.5em; }
[data-testid="stMain"] [data-testid="stMarkdownContainer"] > .katex-display > .katex {
  font-size: 2.25rem; }
[data-testid="stMain"] .katex .sizing.reset-size6.size3 { font-size: max(1.5rem, 0.7em); }
[data-testid="stMain"] .katex .sizing.reset-size6.size1 { font-size: max(1.5rem, 0.5em); }
[data-testid="stMain"] .katex .sizing.reset-size3.size1 {
  font-size: max(1.5rem, 0.71428571em); }
[data-testid="stMain"] input, [data-testid="stMain"] textarea { font-size: 1.5rem; }
[data-testid="stMain"] [data-testid="stSelectbox"] [role="group"] { min-height: 3rem; }
[data-testid="stMain"] .attnviz-bar { font-size: 1.5rem; }
[data-testid="stMain"] [class*="st-key-slide_text"] p,
[data-testid="stMain"] [class*="st-key-slide_text"] [data-testid="stCaptionContainer"] {
  font-size: 1.5rem; }
@media (max-width: 1600px) {
  [data-testid="stMain"] [class*="st-key-slide_text"] p,
  [data-testid="stMain"] [class*="st-key-slide_text"] [data-testid="stCaptionContainer"] {
    font-size: 1.1rem; } }
[data-testid="stMain"] [data-testid="stSliderThumbValue"] { font-size: 1.5rem;
  transform: translateY(-0.2rem); }
[data-testid="stMain"] [data-testid="stSlider"] [data-testid="stWidgetLabel"] {
  margin-bottom: 1.8rem; }
[data-testid="stMainBlockContainer"] { padding-top: 3.6rem; padding-bottom: 1rem;
  max-width: 100%; }
[data-testid="stMain"] .st-key-tour_bar { padding-top: 0.25rem; padding-bottom: 0.25rem; }
</style>
"""
    )


def accessibility_css() -> None:
    """The app's accessibility CSS (:func:`attnviz.ui.a11y.setup`): the focus ring (#1c3f94,
    ``a11y.FOCUS``), code highlighting at >= 4.5:1 on the code boxes' background
    (Streamlit's blue, green and grey tokens are 3-4:1), key hints, reduced motion, the
    Markdown tables that scroll sideways in the main column (the board's ``wide.js`` marks
    them), the words for a mouse or a touch screen (``text.pointing``), and on a touch
    screen (or a window at most 640 px wide) every control of the page at least 44 px both
    ways (WCAG 2.5.5; issue 47's layout audit): buttons, tabs, text and number boxes,
    selects, radio and check box labels, the help icons, the tables' toolbars, the board's
    Table and download buttons, a slider's thumb (44 px, drawn 12 px: the rest is padding).
    And the hidden boards (:data:`HIDDEN_BOARDS`): nothing drawn, no space taken; the text
    of a row (:func:`attnviz.ui.page.row`) beside its pickers while 16rem are left. The
    main column's headings go down one level at a time (a page's sections ``h2`` under its
    ``h1``, what is inside a section ``h3``: a screen reader's list of headings), each drawn
    a size smaller than Streamlit draws its level: a section as a subheader (28 px), a part
    of one at 24 px."""
    st.html(
        """
<style>
.st-key-board_preload, .st-key-board_prefetch, .st-key-board_step_keys { display: none; }
[class*="st-key-row_"] > [data-testid="stElementContainer"]:has([data-testid="stMarkdown"]) {
  flex: 1 1 16rem; }
:focus-visible { outline: 3px solid #1c3f94 !important; outline-offset: 2px !important;
  box-shadow: 0 0 0 5px #ffffff !important; }
:has(> [style*="clip-path: inset(50%)"] > input:focus-visible) {
  outline: 3px solid #1c3f94 !important; outline-offset: 2px !important;
  box-shadow: 0 0 0 5px #ffffff !important; }
[data-testid="stCaptionContainer"] code { color: inherit !important; }
[data-testid="stCode"] .token.keyword, [data-testid="stCode"] .token.function,
[data-testid="stCode"] .token.selector { color: #0b5cad !important; }
[data-testid="stCode"] .token.boolean, [data-testid="stCode"] .token.number {
  color: #12733a !important; }
[data-testid="stCode"] .token.comment { color: #5c5f6b !important; }
[data-testid="stMain"] [data-testid="stMarkdownContainer"]:has(> table) { overflow-x: auto; }
[data-testid="stMain"] [data-testid="stMarkdownContainer"] h2 { font-size: 1.75rem;
  padding: 0.75rem 0 1rem 0; }
[data-testid="stMain"] [data-testid="stMarkdownContainer"] h3 { font-size: 1.5rem;
  padding: 0.5rem 0 1rem 0; letter-spacing: normal; }
button kbd, [role="button"] kbd { opacity: 1 !important; color: inherit !important;
  border-color: currentColor !important; }
.attnviz-tap { display: none; }
@media (hover: none) { .attnviz-tap { display: inline; } .attnviz-hover { display: none; } }
@media (hover: none), (max-width: 640px) {
  [data-testid="stMain"] button, [data-testid="stMain"] [role="tab"],
  [data-testid="stMain"] [data-testid="stElementToolbarButton"] button {
    min-width: 44px; min-height: 44px; }
  [data-testid="stMain"] [role="tab"] { flex-shrink: 0; }
  [data-testid="stMain"] [data-testid="stTooltipHoverTarget"] button {
    display: inline-flex; align-items: center; justify-content: center; }
  [data-testid="stMain"] input:not([type="checkbox"]):not([type="radio"]):not([type="range"]),
  [data-testid="stMain"] textarea { min-height: 44px; }
  [data-testid="stMain"] [data-testid="stRadio"] label,
  [data-testid="stMain"] [data-testid="stCheckbox"] label {
    min-height: 44px; min-width: 44px; align-items: center; }
  [data-testid="stMain"] [data-testid="stSelectbox"] [role="group"] {
    height: auto; min-height: 44px; }
  [data-testid="stMain"] [data-testid="stSlider"] div:has(> div > input[type="range"]) {
    width: 44px; height: 44px; padding: 16px; box-sizing: border-box;
    background-clip: content-box; }
  [data-testid="stMain"] [data-testid="stSliderThumbValue"] { translate: 0 16px; }
}
@media (prefers-reduced-motion: reduce) {
  *, *::before, *::after { animation-duration: 0s !important; animation-delay: 0s !important;
    animation-iteration-count: 1 !important; transition-duration: 0s !important;
    transition-delay: 0s !important; scroll-behavior: auto !important; }
}
</style>
"""
    )


def index_html() -> str:
    """Streamlit's ``index.html`` (its front end's page, in the installed package)."""
    return (Path(st.__file__).parent / "static" / "index.html").read_text(encoding="utf-8")


# --------------------------------------------------------------------------- the board's DOM

#: What the chart board's JavaScript needs of Streamlit's markup, sent as ``dom`` in every
#: board's data (``attnviz.ui.board``): ``key_class`` + a widget key is the class of the
#: widget's element (Streamlit's documented ``st-key-<key>``); ``combobox``: a selectbox's
#: box, with ``combobox_open`` while its list is open; ``combobox_input``: its input, whose
#: value is the shown option (the head picker, ``headswitch.js``); ``table_box``: a Markdown
#: table's box (``wide.js``: marked when it scrolls sideways).
BOARD_DOM = {
    "key_class": "st-key-",
    "combobox": ".react-aria-ComboBox",
    "combobox_open": "data-open",
    "combobox_input": 'input[role="combobox"]',
    "table_box": '[data-testid="stMarkdownContainer"]:has(> table)',
    # an enabled button with a keyboard shortcut (its hint names the key): navlinks.js leaves
    # PageDown / PageUp to it (a page's own steps go first, then a lesson's next stop)
    "shortcut_button": 'button:not([disabled]):has([data-has-shortcut="true"])',
}
