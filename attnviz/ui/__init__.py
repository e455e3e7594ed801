"""The shared Streamlit layer: sidebar controls, URL binding, cached engine runs, export.

The only module besides ``app.py`` and ``pages/`` that imports streamlit. ``app.py``
calls :func:`sidebar` once per run (before ``st.navigation(...).run()``); pages call
:func:`current` to get the :class:`View` (settings, X, parameters and the cached
:class:`~attnviz.engine.AttentionResult`) and use the helpers below for the parts that
every page has (explanation, shapes, export, code box).

Widget keys (tests drive the widgets by these keys). All are bound to the URL with
``bind="query-params"`` (so a link reproduces the view) except ``upload``:

============  =================  ==========================================================
key           widget             values
============  =================  ==========================================================
``source``    radio              "random" | "text" | "preset" | "upload" (input of X)
``text``      text_input         the sentence (source "text"); tokens become the labels
``preset``    selectbox          a name from :func:`attnviz.presets.names` (source "preset")
``upload``    file_uploader      a CSV of X (source "upload"; not in the URL)
``N``         slider             tokens, 1..512 (set by the input for text/preset/upload)
``D``         slider             model width, 1..128 (set by the input for preset/upload)
``heads``     selectbox          a divisor of D (changing D picks the nearest divisor)
``seed``      number_input       integer 0..2**31-1: X ~ N(0,1) from default_rng(seed),
                                 the parameters from seed + 1
``init``      radio              "normal" | "uniform" | "xavier" (parameter init; default xavier)
``bias``      toggle             biases on/off
``scale``     radio              "none" | "1/√d_k" | "custom"
``factor``    number_input       the custom factor multiplying QKᵀ (temperature = 1/factor)
``mask``      radio              "none" | "causal" | "padding"
``pad``       number_input       padding: the last ``pad`` tokens are padding (0..N)
``layout``    radio              "rows" (tokens as rows, PyTorch) | "columns" (UDL book)
============  =================  ==========================================================

Page widgets: ``head`` (selectbox, which head), ``query`` (selectbox, which query token)
on the playground, step-by-step and masking pages; ``perm_seed`` and ``positions`` on the
permutation page; ``factors`` on the scaling page. All bound to the URL.

Invalid values in the URL (``?N=-3&heads=7&mask=xyz``) are replaced by valid ones
(Streamlit drops them; a divisor of D is chosen for ``heads``) and a ``st.warning``
names each parameter that was corrected.
"""

from __future__ import annotations

import hashlib
import io
import json
import math
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from attnviz import engine, figures, inputs

try:  # presets are optional at import time (the app works without them)
    from attnviz import presets as _presets
except ImportError:  # pragma: no cover
    _presets = None

from attnviz.ui.board import board, link_attn, link_bars, link_tokens  # noqa: E402

__all__ = [
    "DEFAULTS",
    "KEYS",
    "View",
    "board",
    "code_box",
    "compute",
    "current",
    "divisors",
    "export_section",
    "intro",
    "link_attn",
    "link_bars",
    "link_tokens",
    "md_text",
    "plot",
    "shapes",
    "sidebar",
]

N_MAX = inputs.MAX_TOKENS
D_MAX = inputs.MAX_WIDTH
SEED_MAX = 2**31 - 1
SOURCES = ("random", "text", "preset", "upload")
SCALES = ("none", "1/√d_k", "custom")
MASKS = ("none", "causal", "padding")
INITS = ("normal", "uniform", "xavier")
LAYOUTS = ("rows", "columns")

DEFAULTS: dict[str, Any] = {
    "source": "random",
    "text": "the cat sat on the mat because it was tired",
    "N": 6,
    "D": 8,
    "heads": 2,
    "seed": 0,
    # xavier, not the notebooks' N(0,1): with N(0,1) weights the scores are ~±10 even at
    # N=6, D=8 and the softmax is nearly one-hot, so the first view shows no soft attention.
    "init": "xavier",
    "bias": True,
    "scale": "1/√d_k",
    "factor": 8.0,
    "mask": "none",
    "pad": 1,
    "layout": "rows",
}
#: The sidebar keys bound to the URL.
KEYS = tuple(k for k in DEFAULTS) + ("preset",)

_LABELS = {
    "source": {
        "random": "random",
        "text": "typed text",
        "preset": "notebook preset",
        "upload": "CSV upload",
    },
    "scale": {"none": "none (× 1)", "1/√d_k": "1/√d_k", "custom": "custom factor"},
    "mask": {"none": "none", "causal": "causal", "padding": "padding (last k tokens)"},
    "init": {"normal": "normal N(0,1)", "uniform": "uniform [0,1)", "xavier": "xavier"},
    "layout": {"rows": "tokens as rows (PyTorch)", "columns": "tokens as columns (UDL book)"},
}
_RULES = {
    "source": "one of " + ", ".join(SOURCES),
    "text": "some text",
    "preset": "the name of a notebook preset",
    "N": f"an integer from 1 to {N_MAX}",
    "D": f"an integer from 1 to {D_MAX}",
    "heads": "a divisor of D",
    "seed": f"an integer from 0 to {SEED_MAX}",
    "init": "one of " + ", ".join(INITS),
    "bias": "true or false",
    "scale": "one of " + ", ".join(SCALES),
    "factor": "a number from -100 to 100",
    "mask": "one of " + ", ".join(MASKS),
    "pad": f"an integer from 0 to {N_MAX}",
    "layout": "one of " + ", ".join(LAYOUTS),
}

_STATE = "_attnviz"  # session_state key of the per-session bookkeeping dict
_BIND = "query-params"


def _use_navigation() -> None:
    """Make Streamlit treat this app as an ``st.navigation`` app from the first run on.

    Streamlit decides per process, on the first session, that an entry script with a
    ``pages/`` folder next to it is a legacy (v1) multipage app, and only changes its mind
    when ``st.navigation`` runs. Until then a deep link (``/masking``) runs the page file
    alone, without ``app.py`` and its sidebar. :func:`page_guard` calls this and reruns.
    """
    try:
        from streamlit.runtime.pages_manager import PagesManager

        PagesManager.uses_pages_directory = False
    except Exception:  # pragma: no cover - internal API moved: nothing to fix then
        pass


def page_guard() -> None:
    """First line of every page: if ``app.py`` did not run this time (a legacy-mode deep
    link, see :func:`_use_navigation`), switch Streamlit to navigation mode and rerun once.
    """
    book = _book()
    if book.pop("app_ran", False):
        book["guard_reruns"] = 0
        return
    if book.get("guard_reruns", 0) < 2:
        book["guard_reruns"] = book.get("guard_reruns", 0) + 1
        _use_navigation()
        st.rerun()


def md_text(label: object) -> str:
    """``label`` as Markdown that Streamlit shows literally: a code span.

    Streamlit renders Markdown in st.markdown, st.caption, st.subheader, alerts, metric
    and widget labels: ``[visit](https://…)`` would become a link, ``**x**`` bold,
    ``:smile:`` an emoji, ``$x$`` maths. Inside a code span none of that applies, so
    every text that comes from a user (token labels, file names, URL values) goes
    through this function before it reaches Markdown. The fence is one backtick longer
    than the longest run of backticks in the text; line breaks become spaces.
    """
    text = " ".join(str(label).splitlines()) or " "
    longest = max(len(run) for run in re.findall("`*", text))
    fence = "`" * (longest + 1)
    # CommonMark strips one space from each end of a code span that has a space at both
    # ends (and is not all spaces); a backtick at an end would join the fence: pad both.
    edge = text[0] == "`" or text[-1] == "`" or (text[0] == text[-1] == " " and text.strip())
    pad = " " if edge else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def divisors(d: int) -> list[int]:
    """The divisors of ``d`` in increasing order: the valid head counts for width D."""
    return [h for h in range(1, d + 1) if d % h == 0]


def nearest_divisor(d: int, heads: int) -> int:
    """The divisor of ``d`` closest to ``heads`` (the smaller one on a tie)."""
    return min(divisors(d), key=lambda h: (abs(h - heads), h))


def default_heads(d: int) -> int:
    return nearest_divisor(d, DEFAULTS["heads"])


def _book() -> dict:
    return st.session_state.setdefault(_STATE, {"first": True})


# --------------------------------------------------------------------------- the view


@dataclass(frozen=True)
class Settings:
    source: str
    text: str
    preset: str | None
    n: int
    d: int
    heads: int
    seed: int
    init: str
    bias: bool
    scale_mode: str
    factor: float
    mask_kind: str
    pad: int
    layout: str
    upload_name: str | None = None

    @property
    def scale(self) -> engine.Scale:
        """The engine's ``scale`` argument: True (1/√d_k), False (none) or the factor."""
        return {"none": False, "1/√d_k": True}.get(self.scale_mode, float(self.factor))

    @property
    def d_head(self) -> int:
        return self.d // self.heads

    def mask(self) -> np.ndarray | None:
        if self.mask_kind == "causal":
            return engine.causal_mask(self.n)
        if self.mask_kind == "padding":
            return engine.padding_mask(self.n, min(self.pad, self.n))
        return None

    def as_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


@dataclass(frozen=True, eq=False)
class View:
    """What every page draws: the settings, X with its labels, the parameters, the result."""

    settings: Settings
    x: np.ndarray  # (N, D), for the QKV preset this is Q
    labels: tuple[str, ...]
    params: engine.AttentionParams | None  # None for presets given Q, K, V
    result: engine.AttentionResult
    notes: tuple[str, ...] = field(default=())

    @property
    def layout(self) -> str:
        return self.settings.layout


@st.cache_data(max_entries=32, show_spinner=False)
def compute(
    source: str,
    n: int,
    d: int,
    heads: int,
    seed: int,
    init: str,
    bias: bool,
    scale: engine.Scale,
    mask_kind: str,
    pad: int,
    text: str = "",
    preset: str | None = None,
    upload_x: np.ndarray | None = None,
    upload_labels: tuple[str, ...] | None = None,
) -> tuple[np.ndarray, tuple[str, ...], engine.AttentionParams | None, engine.AttentionResult]:
    """X, labels, parameters and the engine's result for these inputs (cached, bounded).

    Raises ``ValueError`` (from the engine or the inputs) for inconsistent inputs.
    """
    mask = None
    if mask_kind == "causal":
        mask = engine.causal_mask(n)
    elif mask_kind == "padding":
        mask = engine.padding_mask(n, min(pad, n))
    if source == "preset":
        if _presets is None:
            raise ValueError("attnviz.presets is not available")
        p = _presets.get(preset)
        labels = tuple(p.tokens)
        if p.x is not None:
            res = engine.multi_head_attention(
                p.x, p.params, num_heads=p.num_heads, scale=scale, mask=mask
            )
            return p.x, labels, p.params, res
        res = engine.attention_from_qkv(
            p.q, p.k, p.v, num_heads=p.num_heads, scale=scale, mask=mask, x=None
        )
        return p.q, labels, None, res
    if source == "text":
        ti = inputs.text_input(text, d)
    elif source == "upload":
        if upload_x is None:
            raise ValueError("no CSV uploaded yet")
        ti = inputs.TokenInput(np.asarray(upload_x, dtype=np.float64), tuple(upload_labels or ()))
    else:
        ti = inputs.random_input(n, d, seed)
    params = engine.AttentionParams.random(d, seed=seed + 1, init=init, bias=bias)
    res = engine.multi_head_attention(ti.x, params, num_heads=heads, scale=scale, mask=mask)
    return ti.x, ti.labels, params, res


# --------------------------------------------------------------------------- sidebar


def _preset_names() -> list[str]:
    return list(_presets.names()) if _presets is not None else []


def _preset_values(name: str) -> dict[str, Any]:
    """The control values of a preset (what "load preset" sets)."""
    p = _presets.get(name)
    out: dict[str, Any] = {"N": p.n_tokens, "D": p.d_model, "heads": p.num_heads}
    if p.scale is True:
        out["scale"] = "1/√d_k"
    elif p.scale is False:
        out["scale"] = "none"
    else:
        out["scale"], out["factor"] = "custom", float(p.scale)
    out["mask"] = p.mask
    return out


def preset_query(name: str) -> dict[str, str]:
    """The URL query of a preset's view (values equal to the defaults left out)."""
    vals = {"source": "preset", "preset": name, **_preset_values(name)}
    first = _preset_names()[0] if _preset_names() else None
    out = {}
    for k, v in vals.items():
        default = first if k == "preset" else DEFAULTS.get(k)
        if k == "heads":
            default = default_heads(vals["D"])
        if v != default:
            out[k] = str(v).lower() if isinstance(v, bool) else str(v)
    return out


def load_preset(name: str) -> None:
    """Set the controls to a preset's values (use as a button callback)."""
    st.session_state["source"] = "preset"
    st.session_state["preset"] = name
    st.session_state.update(_preset_values(name))


def _on_source_change() -> None:
    src = st.session_state.get("source")
    if src == "preset":
        names = _preset_names()
        name = st.session_state.get("preset") or (names[0] if names else None)
        if name in names:
            st.session_state.update(_preset_values(name))


def _on_preset_change() -> None:
    name = st.session_state.get("preset")
    if name in _preset_names():
        st.session_state.update(_preset_values(name))


def _on_d_change() -> None:
    d = st.session_state.get("D", DEFAULTS["D"])
    h = st.session_state.get("heads", DEFAULTS["heads"])
    if isinstance(d, int) and d >= 1 and (not isinstance(h, int) or d % h):
        st.session_state["heads"] = nearest_divisor(d, h if isinstance(h, int) else 1)


#: Integer number inputs bound to the URL (sidebar and pages).
_INT_URL_KEYS = ("seed", "pad", "mk_pad", "perm_seed")


def _drop_overflowing_url_values() -> list[tuple[str, str]]:
    """Remove integer URL values such as ``seed=1e999`` before the widgets read them.

    Streamlit parses them as float("inf") and then calls int() on it, an OverflowError
    it does not catch (it does catch ValueError), so the page would crash. Only on the
    first run of a session (the only run that reads the URL). Uses Streamlit's internal
    query-param state; if that moves, nothing is removed.
    """
    dropped: list[tuple[str, str]] = []
    try:
        from streamlit.runtime.scriptrunner import get_script_run_ctx

        ctx = get_script_run_ctx()
        if ctx is None:
            return dropped
        with ctx.session_state.query_params() as qp:
            initial = qp._initial_query_params
            for key in _INT_URL_KEYS:
                values = initial.get(key)
                if not values:
                    continue
                raw = values[-1] if isinstance(values, list) else values
                try:
                    f = float(raw)
                except ValueError:
                    continue  # Streamlit drops non-numbers itself
                if not math.isfinite(f) or abs(f) >= 2**63:
                    initial.pop(key, None)
                    qp.remove_param(key)
                    dropped.append((key, str(raw)))
    except Exception:  # pragma: no cover - internal API changed
        pass
    return dropped


def _drop_url_value(key: str) -> bool:
    """Forget the link's value of ``key`` before its widget reads it (first run only).

    On the first run a URL-bound widget takes the link's value even over
    ``st.session_state``, so a derived control (N set by the text, a preset or an upload)
    can only be set before the widget exists if the link's value is gone. Uses
    Streamlit's internal query-param state, as :func:`_drop_overflowing_url_values`;
    returns False if that moved (the caller then overrides the value itself).
    """
    try:
        from streamlit.runtime.scriptrunner import get_script_run_ctx

        ctx = get_script_run_ctx()
        if ctx is None:
            return False
        with ctx.session_state.query_params() as qp:
            qp._initial_query_params.pop(key, None)
            qp.remove_param(key)
        return True
    except Exception:  # pragma: no cover - internal API changed
        return False


def _force(key: str, value: Any) -> None:
    """Before the widget exists this run: make its value ``value`` (derived controls)."""
    if st.session_state.get(key) != value:
        st.session_state[key] = value


def _same(raw: Any, value: Any) -> bool:
    """Does the raw URL string ``raw`` stand for the widget value ``value``?"""
    if isinstance(raw, list):
        raw = raw[-1] if raw else ""
    raw = str(raw)
    if isinstance(value, bool):
        return raw.strip().lower() == str(value).lower()
    if isinstance(value, int | float):
        try:
            return float(raw) == float(value)
        except ValueError:
            return False
    return raw == str(value)


def _upload_state() -> tuple[np.ndarray | None, tuple[str, ...] | None, str | None]:
    """Read the uploaded CSV; on error show it and keep the previous good upload."""
    book = _book()
    f = st.session_state.get("upload")
    if f is not None:
        sig = (f.name, f.size, getattr(f, "file_id", None))
        if book.get("upload_sig") != sig:
            book["upload_sig"] = sig
            try:
                ti = inputs.parse_csv(f.getvalue(), max_cols=D_MAX)
            except ValueError as e:
                book["upload_error"] = f"Could not use {md_text(f.name)}: {md_text(e)}"
            else:
                book["upload_error"] = None
                book["upload"] = (ti.x, ti.labels, f.name)
    good = book.get("upload")
    if good is None:
        return None, None, None
    return good


def sidebar() -> View | None:
    """Draw the shared controls, validate them, compute (cached) and remember the view.

    Returns the :class:`View` (also available to pages through :func:`current`), or
    None if nothing could be computed (an error is shown).
    """
    book = _book()
    book["app_ran"] = True
    first = book.get("first", True)
    raw = {}
    notices: list[str] = []
    if first:
        qp = st.query_params
        raw = {k: qp.get_all(k) for k in KEYS if k in qp}
        for key, value in _drop_overflowing_url_values():
            if key not in KEYS:  # page widgets: the sidebar notices cover the others
                notices.append(
                    f"The link set {md_text(f'{key}={value}')}, which is not a usable number; "
                    "using the default."
                )

    sb = st.sidebar
    sb.markdown("### Input X")
    names = _preset_names()
    sources = [s for s in SOURCES if s != "preset" or names]
    source = sb.radio(
        "Where X comes from: random · text · preset · upload (CSV)",
        sources,
        index=0,
        key="source",
        bind=_BIND,
        on_change=_on_source_change,
        help="random: X ~ N(0,1) with the seed · typed text: each word is a token with a "
        "fixed embedding · preset: a seed notebook's numbers · CSV: your own X",
    )
    text = DEFAULTS["text"]
    preset = None
    upload_x = upload_labels = upload_name = None
    forced: dict[str, Any] = {}
    if source == "text":
        text = sb.text_input(
            "Text (words and punctuation become tokens)",
            value=DEFAULTS["text"],
            key="text",
            bind=_BIND,
            max_chars=4000,
        )
        toks = inputs.tokenize(text)
        if not toks:
            notices.append("The text has no tokens; using the default sentence.")
            text = DEFAULTS["text"]
            toks = inputs.tokenize(text)
        if len(inputs.tokenize(text, max_tokens=10**6)) > N_MAX:
            notices.append(
                f"The text has more than {N_MAX} tokens; only the first {N_MAX} are used."
            )
        forced["N"] = len(toks)
    elif source == "preset":
        preset = sb.selectbox(
            "Notebook preset",
            names,
            index=0,
            key="preset",
            bind=_BIND,
            on_change=_on_preset_change,
        )
        sb.caption(_presets.get(preset).title)
        pv = _preset_values(preset)
        forced.update({k: pv[k] for k in ("N", "D", "heads")})
    elif source == "upload":
        sb.file_uploader(
            "CSV of X: one row per token, one column per feature (optional header row and "
            "first column of token labels)",
            type=["csv", "txt"],
            key="upload",
            max_upload_size=inputs.MAX_UPLOAD_BYTES // 2**20,
            help=f"Up to {inputs.MAX_UPLOAD_BYTES // 2**20} MB (a 512 × 128 X is about 0.7 MB).",
        )
        upload_x, upload_labels, upload_name = _upload_state()
        if book.get("upload_error"):
            st.error(
                book["upload_error"]
                + (
                    " — the previous upload is still shown."
                    if upload_x is not None
                    else " — showing random numbers until a valid CSV is uploaded."
                )
            )
        if upload_x is not None:
            forced["N"], forced["D"] = upload_x.shape
            sb.caption(f"Using {md_text(upload_name)}: {upload_x.shape[0]}×{upload_x.shape[1]}")
        elif not book.get("upload_error"):
            st.info(
                "No CSV uploaded yet: X is random (seeded) with N and D from the sidebar until "
                "you upload one; then N and D are set by the file.",
                icon=":material/upload_file:",
            )

    # Settle the derived controls before their widgets exist in this run (setting
    # st.session_state for a widget key after the widget is created raises
    # StreamlitWidgetAlreadyInstantiatedError). A link value that contradicts the input
    # (?N=30&source=preset) is dropped so that the widget takes the derived value.
    what = {"text": "the typed text", "preset": f"the preset {md_text(preset)}"}.get(
        source, "the uploaded CSV"
    )
    for k, v in forced.items():
        if first and k in raw and not _same(raw[k], v):
            shown = raw[k][-1] if raw[k] else ""
            notices.append(
                f"**{k}** is set by {what}: the link's {md_text(f'{k}={shown}')} was "
                f"replaced by {md_text(f'{k}={v}')}."
            )
            _drop_url_value(k)
        _force(k, v)

    sb.markdown("### Sizes")
    n = sb.slider(
        "N — number of tokens",
        1,
        N_MAX,
        DEFAULTS["N"],
        key="N",
        bind=_BIND,
        disabled="N" in forced,
        help="Set by the input for typed text, presets and CSV uploads.",
    )
    d = sb.slider(
        "D — model width (features per token)",
        1,
        D_MAX,
        DEFAULTS["D"],
        key="D",
        bind=_BIND,
        disabled="D" in forced,
        on_change=_on_d_change,
    )
    opts = divisors(d)
    cur_h = st.session_state.get("heads")
    if "heads" not in forced and isinstance(cur_h, int) and cur_h not in opts and not first:
        _force("heads", nearest_divisor(d, cur_h))
    heads = sb.selectbox(
        "heads (divisors of D)",
        opts,
        index=opts.index(default_heads(d)),
        key="heads",
        bind=_BIND,
        disabled="heads" in forced,
        help="Each head gets D / heads columns of Q, K and V; only divisors of D are offered.",
    )
    fixed_params = source == "preset"
    seed = sb.number_input(
        "seed",
        0,
        SEED_MAX,
        DEFAULTS["seed"],
        step=1,
        key="seed",
        bind=_BIND,
        disabled=fixed_params,
        help="X ~ N(0,1) from numpy.random.default_rng(seed); the weights from seed + 1.",
    )
    init = sb.radio(
        "parameter initialisation",
        INITS,
        index=INITS.index(DEFAULTS["init"]),
        key="init",
        bind=_BIND,
        horizontal=True,
        disabled=fixed_params,
        help="How W_q, W_k, W_v, W_O (and the biases) are drawn from seed + 1. "
        "**normal**: N(0, 1), as in the UDL notebooks; each Q, K entry then has variance "
        "≈ D, so the scores are large and the softmax is almost one-hot. "
        "**uniform**: U[0, 1), as np.random.rand / torch.rand in the other notebooks "
        "(all positive weights). "
        "**xavier** (default): Glorot uniform U(±√(6 / (D + D))), a usual choice for "
        "attention projections: Q and K entries keep variance ≈ 1 and the weights show "
        "graded, soft attention. "
        "Presets use their notebook's own weights.",
    )
    bias = sb.toggle(
        "biases b_q, b_k, b_v, b_o", value=True, key="bias", bind=_BIND, disabled=fixed_params
    )

    sb.markdown("### Attention")
    scale_mode = sb.radio(
        "scale the scores QKᵀ by",
        SCALES,
        index=1,
        key="scale",
        bind=_BIND,
        horizontal=True,
    )
    factor = DEFAULTS["factor"]
    if scale_mode == "custom":
        factor = sb.number_input(
            "factor (temperature T = 1 / factor)",
            -100.0,
            100.0,
            DEFAULTS["factor"],
            step=0.5,
            key="factor",
            bind=_BIND,
        )
        if not math.isfinite(factor):
            notices.append("The factor must be a finite number; using 1.")
            factor = 1.0
    mask_kind = sb.radio(
        "mask",
        MASKS,
        index=0,
        key="mask",
        bind=_BIND,
        horizontal=True,
        help="causal: token i sees tokens 0..i · padding: nobody attends to the last k tokens",
    )
    pad = DEFAULTS["pad"]
    if mask_kind == "padding":
        pad = sb.number_input(
            "k — padding tokens at the end",
            0,
            N_MAX,
            DEFAULTS["pad"],
            step=1,
            key="pad",
            bind=_BIND,
        )
        if pad > n:
            notices.append(f"Only {n} tokens: all of them are padding (k = {pad} is more than N).")
    layout = sb.radio(
        "layout: tokens as rows (PyTorch) or as columns (UDL book)",
        LAYOUTS,
        index=0,
        key="layout",
        bind=_BIND,
        help="PyTorch stores one token per row (X is N×D); the UDL book one token per "
        "column (X is D×N). Same numbers, transposed.",
    )

    if first:
        book["first"] = False
        values = {
            "source": source,
            "N": n,
            "D": d,
            "heads": heads,
            "seed": seed,
            "init": init,
            "bias": bias,
            "scale": scale_mode,
            "factor": factor,
            "mask": mask_kind,
            "pad": pad,
            "layout": layout,
            "text": text,
            "preset": preset,
        }
        for k, r in raw.items():
            if (
                k in forced
                or (k == "text" and source != "text")
                or (k == "preset" and preset is None)
            ):
                continue
            if k == "factor" and scale_mode != "custom" or k == "pad" and mask_kind != "padding":
                continue
            if not _same(r, values[k]):
                shown = r[-1] if isinstance(r, list) and r else r
                why = _RULES[k] + (f" = {d}" if k == "heads" else "")
                if k == "heads":
                    why = f"a divisor of D={d} ({', '.join(map(str, divisors(d)))})"
                notices.append(
                    f"The link set {md_text(f'{k}={shown!s}')}, which is not valid ({k} must "
                    f"be {why}); using {md_text(f'{k}={values[k]}')}."
                )
    # Safety net if the link's value could not be dropped before the widget read it: use
    # the derived values anyway (never write a widget's key after it was created).
    n, d, heads = (forced.get(k, v) for k, v in (("N", n), ("D", d), ("heads", heads)))

    settings = Settings(
        source=source if source != "upload" or upload_x is not None else "random",
        text=text,
        preset=preset,
        n=n,
        d=d,
        heads=heads,
        seed=int(seed),
        init=init,
        bias=bool(bias),
        scale_mode=scale_mode,
        factor=float(factor),
        mask_kind=mask_kind,
        pad=int(pad),
        layout=layout,
        upload_name=upload_name,
    )
    for msg in notices:
        st.warning(msg, icon=":material/warning:")
    try:
        x, labels, params, result = compute(
            settings.source,
            n,
            d,
            heads,
            settings.seed,
            init,
            settings.bias,
            settings.scale,
            mask_kind,
            settings.pad,
            text,
            preset,
            upload_x,
            upload_labels,
        )
    except ValueError as e:
        st.error(f"Cannot compute attention with these settings: {e}")
        prev = book.get("view")
        if prev is not None:
            st.info("Showing the previous view.")
        return prev
    view = View(settings, x, labels, params, result, tuple(notices))
    book["view"] = view
    return view


def variant(view: View, **changes: Any) -> engine.AttentionResult:
    """The current inputs with other attention settings (``scale_mode``, ``factor``,
    ``mask_kind``, ``pad``, ``heads``), through the same bounded cache."""
    s = Settings(**{**view.settings.as_dict(), **changes})
    up = _book().get("upload") if s.source == "upload" else None
    return compute(
        s.source,
        s.n,
        s.d,
        s.heads,
        s.seed,
        s.init,
        s.bias,
        s.scale,
        s.mask_kind,
        s.pad,
        s.text,
        s.preset,
        None if up is None else up[0],
        None if up is None else up[1],
    )[3]


@st.cache_data(max_entries=16, show_spinner=False)
def cached(fn_name: str, *args: Any, **kwargs: Any) -> Any:
    """A bounded cache around a pure function of :mod:`attnviz.experiments` or the engine."""
    from attnviz import experiments

    fn = getattr(experiments, fn_name, None) or getattr(engine, fn_name)
    return fn(*args, **kwargs)


def current() -> View | None:
    """The view computed by :func:`sidebar` in this run (None if it failed)."""
    return _book().get("view")


# --------------------------------------------------------------------------- page helpers


def intro(title: str, text: str) -> None:
    """Page title and its short plain-language explanation."""
    st.title(title)
    st.markdown(text)


def pooled_note(
    n: int, hint: str = "pick a query token to see its full row", exports: bool = True
) -> bool:
    """Say so when the N×N heatmaps of this page are drawn in blocks (N above
    ``figures.MAX_FULL_HEATMAP_N``); returns whether they are."""
    b = figures.pool_factor(n)
    if b == 1:
        return False
    nb = math.ceil(n / b)
    st.info(
        f"N={n} is drawn as {nb}×{nb} blocks of {b}×{b} tokens (matrices with one row per "
        f"token: {nb} blocks of {b} tokens): each cell is the mean of its block's unmasked "
        f"values, a block with every cell masked is grey (above "
        f"N = {figures.MAX_FULL_HEATMAP_N}, one cell per token would be smaller than a "
        f"pixel). {hint[:1].upper() + hint[1:]}; hover a block for its first token."
        + (" The CSV and NPZ exports are full size." if exports else ""),
        icon=":material/grid_view:",
    )
    return True


def plot(fig: go.Figure, key: str | None = None, link: dict | None = None) -> None:
    """Draw one plotly figure the same way on every page: a :func:`board` of one chart
    (redrawn in place on reruns; PNG at 2x and SVG downloads in its toolbar)."""
    key = key or f"chart_{hashlib.sha1(str(fig.layout.title.text).encode()).hexdigest()[:8]}"
    board(f"board_{key}", [(key, fig, link)])


def _shape(a: np.ndarray) -> str:
    return "×".join(str(s) for s in np.shape(a))


def shapes(items: dict[str, np.ndarray], note: str = "") -> None:
    """One line with the shape of every matrix on the page."""
    parts = [f"**{k}** {_shape(v)}" for k, v in items.items()]
    st.caption("Shapes: " + " · ".join(parts) + (f" — {note}" if note else ""))


def oriented(a: np.ndarray, layout: str) -> np.ndarray:
    """A row-layout matrix as displayed: transposed for the UDL column layout."""
    return a if layout == "rows" else np.swapaxes(a, -1, -2)


def _csv(a: np.ndarray, row_labels=None, col_labels=None) -> Callable[[], bytes]:
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


def export_section(
    view: View,
    matrices: dict[str, tuple[np.ndarray, Any, Any]],
    *,
    page: str,
    extra: dict[str, np.ndarray] | None = None,
) -> None:
    """Download buttons: each matrix shown on the page as CSV, the whole state as NPZ.

    ``matrices``: name -> (2-D array as displayed, row labels or None, column labels or None).
    Files are generated only when clicked.
    """
    with st.expander(
        ":material/download: Export: every matrix as CSV, the whole state as NPZ", expanded=False
    ):
        st.caption(
            "CSV files hold the matrices as displayed (layout: "
            f"{_LABELS['layout'][view.layout]}). The NPZ holds X, the parameters, every "
            "intermediate (row layout) and the settings. For a PNG, use the camera icon "
            "of each plot."
        )
        cols = st.columns(4)
        for i, (name, (a, rl, cl)) in enumerate(matrices.items()):
            slug = "".join(c if c.isalnum() else "_" for c in name).strip("_").lower()
            cols[i % 4].download_button(
                f"{name} ({_shape(a)}) CSV",
                data=_csv(a, rl, cl),
                file_name=f"attnviz_{page}_{slug}.csv",
                mime="text/csv",
                key=f"dl_{page}_{slug}",
                on_click="ignore",
            )
        st.download_button(
            "Whole state (NPZ)",
            data=lambda: npz_bytes(view, extra),
            file_name=f"attnviz_{page}_state.npz",
            mime="application/octet-stream",
            key=f"dl_{page}_npz",
            on_click="ignore",
            type="primary",
        )


def _array_literal(a: np.ndarray) -> str:
    return np.array2string(
        np.asarray(a, dtype=np.float64), separator=", ", precision=17, threshold=10**9
    )


def code_lines(view: View, head: int = 0) -> str:
    """NumPy lines that recompute the current view (X, Q, K, V, one head's S, A, output).

    The code only needs NumPy (plus attnviz for typed text and presets) and ends with
    ``S``, ``A`` and ``out`` of head ``head`` and the layer's ``Y``; tests execute it.
    """
    s = view.settings
    lines = [
        "import numpy as np",
        "",
        "",
        "def softmax_rows(S):",
        "    m = S.max(axis=1, keepdims=True)",
        "    m[np.isinf(m)] = 0  # a fully masked row (all -inf) gives weights 0, not NaN",
        "    E = np.exp(S - m)",
        "    s = E.sum(axis=1, keepdims=True)",
        "    return E / np.where(s == 0, 1, s)",
        "",
        "",
    ]
    if s.source == "preset":
        lines += [
            "from attnviz import presets",
            f'p = presets.get("{s.preset}")',
        ]
        if view.params is None:
            lines += ["Q, K, V = p.q, p.k, p.v  # this notebook gives Q, K and V directly"]
        else:
            lines += [
                "X, P = p.x, p.params  # the notebook's X (N, D) and weights",
                "W_q, W_k, W_v, W_o = P.w_q, P.w_k, P.w_v, P.w_o",
                "b_q, b_k, b_v, b_o = (0.0 if b is None else b"
                " for b in (P.b_q, P.b_k, P.b_v, P.b_o))",
            ]
    else:
        if s.source == "text":
            lines += [
                "from attnviz.inputs import text_input  # fixed embedding per token",
                f"X = text_input({s.text!r}, {s.d}).x  # (N, D) = ({s.n}, {s.d})",
            ]
        elif s.source == "upload":
            lines += [
                f"X = np.loadtxt({s.upload_name!r}, delimiter=',')  # your CSV: (N, D) = "
                f"({s.n}, {s.d}) (drop header/label columns if it has them)",
            ]
        else:
            lines += [
                f"X = np.random.default_rng({s.seed}).standard_normal(({s.n}, {s.d}))  # (N, D)"
            ]
        draw = {
            "normal": ("rng.standard_normal(({a}, {b}))", "rng.standard_normal({b})"),
            "uniform": ("rng.random(({a}, {b}))", "rng.random({b})"),
            "xavier": (
                "rng.uniform(-np.sqrt(6 / ({a} + {b})), np.sqrt(6 / ({a} + {b})), ({a}, {b}))",
                "rng.uniform(-1 / np.sqrt({a}), 1 / np.sqrt({a}), {b})",
            ),
        }[s.init]
        D = s.d
        lines += [
            f"rng = np.random.default_rng({s.seed + 1})  # the weights: {s.init} init",
            f"W_q, W_k, W_v = ({draw[0].format(a=D, b=D)} for _ in range(3))  # (D, D) each",
        ]
        if s.bias:
            lines += [f"b_q, b_k, b_v = ({draw[1].format(a=D, b=D)} for _ in range(3))"]
            lines += [f"W_o = {draw[0].format(a=D, b=D)}", f"b_o = {draw[1].format(a=D, b=D)}"]
        else:
            lines += ["b_q = b_k = b_v = b_o = 0.0", f"W_o = {draw[0].format(a=D, b=D)}"]
    if s.source != "preset" or view.params is not None:
        lines += [
            "",
            "Q, K, V = X @ W_q + b_q, X @ W_k + b_k, X @ W_v + b_v  # (N, D) each",
        ]
    h = view.result.num_heads
    dk = view.result.queries.shape[-1]
    if s.scale_mode == "1/√d_k":
        scale_line = f"S = Qh @ Kh.T / np.sqrt({dk})  # scores (N, N), d_k = D / heads = {dk}"
    elif s.scale_mode == "none":
        scale_line = "S = Qh @ Kh.T  # scores (N, N), not scaled"
    else:
        scale_line = f"S = Qh @ Kh.T * {s.factor!r}  # scores (N, N), custom factor"
    lines += [
        "",
        f"h, d_k = {head}, {dk}  # head {head} of {h}: columns h*d_k .. (h+1)*d_k",
        "Qh, Kh, Vh = (M[:, h * d_k:(h + 1) * d_k] for M in (Q, K, V))",
        scale_line,
    ]
    n = view.result.n_tokens
    if s.mask_kind == "causal":
        lines += [f"mask = np.tril(np.ones(({n}, {n}), bool))  # causal: key j <= query i"]
    elif s.mask_kind == "padding":
        k = min(s.pad, n)
        lines += [
            f"mask = np.ones(({n}, {n}), bool); mask[:, {n - k}:] = False  # last {k} = padding"
        ]
    if s.mask_kind != "none":
        lines += ["S = np.where(mask, S, -np.inf)  # masked scores are -inf"]
    lines += [
        "A = softmax_rows(S)  # weights (N, N), each row sums to 1",
        "out = A @ Vh  # this head's output (N, d_k)",
        "",
        "# every head, concatenated, then the output projection:",
        f"heads = []\nfor h in range({h}):",
        "    Qh, Kh, Vh = (M[:, h * d_k:(h + 1) * d_k] for M in (Q, K, V))",
        "    " + scale_line.split("  #")[0],
    ]
    if s.mask_kind != "none":
        lines += ["    S = np.where(mask, S, -np.inf)"]
    lines += [
        "    heads.append(softmax_rows(S) @ Vh)",
        "concat = np.concatenate(heads, axis=1)  # (N, D)",
    ]
    if s.source == "preset" and view.params is None:
        lines += ["Y = concat  # this notebook has no output projection"]
    elif s.source == "preset":
        lines += ["Y = concat if W_o is None else concat @ W_o + b_o  # the layer's output"]
    else:
        lines += ["Y = concat @ W_o + b_o  # the layer's output (N, D)"]
    if s.layout == "columns":
        lines += ["", "# UDL book layout (tokens as columns): X.T, Q.T, A.T (keys x queries), Y.T"]
    return "\n".join(lines)


def code_box(view: View, head: int = 0, extra: str = "") -> None:
    """The NumPy lines that reproduce the current view, in an expander."""
    with st.expander(":material/code: NumPy code that reproduces this view", expanded=False):
        st.code(code_lines(view, head) + (("\n\n" + extra) if extra else ""), language="python")


def digest(a: np.ndarray) -> str:
    return hashlib.sha1(np.ascontiguousarray(a).tobytes()).hexdigest()[:12]
