"""The Cross-attention page's own controls, their link checks, the cached run, the code box
and the downloads (the charts: :mod:`attnviz.ui.cross_view`).

The sidebar sets D, heads, the seed, the weights and the scaling (the page's entry has
``controls="weights"``); the page sets what only cross-attention has, each control bound
to the link with the playground's conventions (a value equal to the default stays out of
it; an invalid one is replaced by a valid one with a warning):

| key | widget | values |
| --- | --- | --- |
| ``input`` | radio | ``random``, ``text``, ``preset`` (both sequences) |
| ``N_src``, ``N_tgt`` | slider | source and target tokens, 1..64 (``input=random``) |
| ``text_src``, ``text_tgt`` | text input | the two sentences (``input=text``) |
| ``pair`` | selectbox | a name of :data:`attnviz.teaching.cross.PAIRS` (``input=preset``) |
| ``cross_mask`` | radio | ``none``, ``padding`` (the source's last ``pad_src``), ``causal`` |
| ``pad_src`` | number | source padding tokens, 0..64 |
"""

from __future__ import annotations

import io
import json
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
import streamlit as st

from attnviz import engine, i18n
from attnviz.i18n import N_, _
from attnviz.teaching import cross
from attnviz.teaching.token_text import visible_all
from attnviz.ui import links, state
from attnviz.ui.code import lazy_box, lazy_code_box
from attnviz.ui.controls import BIND, LABELS, Settings, filled, option_captions, translated
from attnviz.ui.export import downloads
from attnviz.ui.present import presenting
from attnviz.ui.text import md_text
from attnviz.ui.walker import invalid_notice

#: The page's controls: URL key -> (default, the rule a link's value must satisfy, in
#: English: ``controls.translated(rule)`` says it in the shown language).
CONTROLS: dict[str, tuple[Any, str]] = {
    "input": ("random", filled(N_("one of {values}"), values=", ".join(cross.INPUTS))),
    "N_src": (6, filled(N_("an integer from {lo} to {hi}"), lo=1, hi=cross.N_MAX)),
    "N_tgt": (4, filled(N_("an integer from {lo} to {hi}"), lo=1, hi=cross.N_MAX)),
    "text_src": (cross.SOURCE_TEXT, N_("some text")),
    "text_tgt": (cross.TARGET_TEXT, N_("some text")),
    "pair": (
        next(iter(cross.PAIRS)),
        filled(N_("the name of a pair: {values}"), values=", ".join(cross.PAIRS)),
    ),
    "cross_mask": ("none", filled(N_("one of {values}"), values=", ".join(cross.MASKS))),
    "pad_src": (1, filled(N_("an integer from {lo} to {hi}"), lo=0, hi=cross.N_MAX)),
}
_CHECKED = "cross_links_checked"  # book key: the page's first run checked the link


@dataclass(frozen=True)
class CrossSettings:
    """The page's control values (hashable: the cache's key, with the sidebar's)."""

    input: str
    n_src: int
    n_tgt: int
    text_src: str
    text_tgt: str
    pair: str
    mask: str
    pad: int
    #: the shown language: part of the cache's key (the run's problem and the sequences'
    #: notes are words); not a control, not in the link or the NPZ
    lang: str = i18n.SOURCE


def controls() -> tuple[CrossSettings, list[str]]:
    """Draw the page's controls (in two rows of columns) and return their values and the
    warnings for link values they did not take (the page's first run in a session)."""
    d = {k: v for k, (v, __) in CONTROLS.items()}
    # the link's raw values, read before the widgets (which drop an invalid one)
    raw = {k: st.query_params.get_all(k) for k in CONTROLS if k in st.query_params}
    # on a slide the controls fold away: the charts get the screen's height
    box = st.expander(_("The two sequences and the mask")) if presenting() else st.container()
    with box:
        values = _widgets(d)
    full = {**d, **values}
    s = CrossSettings(
        full["input"], int(full["N_src"]), int(full["N_tgt"]), str(full["text_src"]),
        str(full["text_tgt"]), str(full["pair"]), full["cross_mask"], int(full["pad_src"]),
        i18n.current(),
    )  # fmt: skip
    return s, _link_notices(values, raw)


#: The input radio's options in words (captions under the link's values outside English).
INPUT_WORDS = {"random": N_("random"), "text": N_("typed text"), "preset": N_("preset pair")}


def _widgets(d: dict[str, Any]) -> dict[str, Any]:
    """The page's widgets, each bound to the link: their values by URL key."""
    c_in, c_a, c_b = st.columns([1.2, 1.4, 1.4])
    kind = c_in.radio(
        _("source and target"), cross.INPUTS, key="input", bind=BIND, horizontal=True,
        captions=option_captions(INPUT_WORDS, list(cross.INPUTS)),
        help=_("random: N(0, 1) rows from the seed · text: two sentences, each word a token "
               "with a fixed embedding · preset: a named pair of sentences"),
    )  # fmt: skip
    values: dict[str, Any] = {"input": kind}
    if kind == "random":
        values["N_src"] = c_a.slider(_("N_src — source tokens (K, V)"), 1, cross.N_MAX,
                                     d["N_src"], key="N_src", bind=BIND)  # fmt: skip
        values["N_tgt"] = c_b.slider(_("N_tgt — target tokens (Q)"), 1, cross.N_MAX,
                                     d["N_tgt"], key="N_tgt", bind=BIND)  # fmt: skip
    elif kind == "text":
        values["text_src"] = c_a.text_input(
            _("source sentence (gives K and V)"), d["text_src"], key="text_src", bind=BIND
        )
        values["text_tgt"] = c_b.text_input(
            _("target sentence (gives Q)"), d["text_tgt"], key="text_tgt", bind=BIND
        )
    else:
        values["pair"] = c_a.selectbox(_("pair (source → target)"), list(cross.PAIRS),
                                       key="pair", bind=BIND)  # fmt: skip
    c_m, c_p, __ = st.columns([1.2, 1.4, 1.4])
    values["cross_mask"] = c_m.radio(
        _("mask"), cross.MASKS, key="cross_mask", bind=BIND, horizontal=True,
        captions=option_captions(LABELS["mask"], list(cross.MASKS)),
        help=_("padding: no target token sees the source's last pad_src tokens · causal: "
               "only for two sequences of the same length"),
    )  # fmt: skip
    if values["cross_mask"] == "padding":
        values["pad_src"] = c_p.number_input(
            _("pad_src — padding tokens at the end of the source"), 0, cross.N_MAX, d["pad_src"],
            step=1, key="pad_src", bind=BIND,
        )  # fmt: skip
    return values


def _link_notices(values: dict[str, Any], raw: dict[str, list[str]]) -> list[str]:
    """First run of the page in a session: a warning for each link value of a control
    drawn now that the widget did not take (Streamlit drops an invalid one)."""
    book = state.book()
    if book.get(_CHECKED):
        return []
    book[_CHECKED] = True
    out = []
    for key, value in values.items():
        if key in raw and not links.same(raw[key], value):
            shown = raw[key][-1] if raw[key] else ""
            shown = shown if len(shown) <= 40 else shown[:40] + "…"
            rule = translated(CONTROLS[key][1])
            out.append(invalid_notice(_("The link"), key, shown, rule, value))
    return out


Run = tuple[cross.Sequences, engine.AttentionResult, str]


@st.cache_data(max_entries=32, show_spinner=False)
def compute(c: CrossSettings, s: Settings) -> Run:
    """The two sequences and the cross-attention of the target over the source with the
    sidebar's D, heads, seed, weights and scaling (cached, bounded), and a problem to show
    ("" if none): a causal mask over two lengths is the engine's ``ValueError``, said in
    words, and the view is drawn without the mask. Raises ``ValueError`` for inputs no
    fallback fixes."""
    seqs = cross.sequences(
        c.input, d=s.d, seed=s.seed, n_src=c.n_src, n_tgt=c.n_tgt, text_src=c.text_src,
        text_tgt=c.text_tgt, pair=c.pair,
    )  # fmt: skip
    kw = dict(d=s.d, heads=s.heads, seed=s.seed, init=s.init, bias=s.bias, scale=s.scale)
    problem = ""
    if c.mask == "padding" and c.pad > seqs.source.n:
        problem = _(
            "The source has {n} tokens: padding {pad} of them hides all {n} (every weight is 0)."
        ).format(n=seqs.source.n, pad=c.pad)
    try:
        res = cross.run(seqs, **kw, mask=c.mask, pad=c.pad)
    except ValueError as e:
        if c.mask != "causal":
            raise
        problem = _("No causal mask here: {error}. Showing the weights without a mask.").format(
            error=e
        )
        res = cross.run(seqs, **kw, mask="none")
    return seqs, res, problem


# --------------------------------------------------------------------------- code box


CODE = """\
import numpy as np
$inputs
from attnviz.engine import AttentionParams  # the weights: $init init, from seed + 1
P = AttentionParams.random($d, seed=$seed1, init=$init_r, bias=$bias)
Q = X_tgt @ P.w_q + (0 if P.b_q is None else P.b_q)  # (T, D): queries from the TARGET
K = X_src @ P.w_k + (0 if P.b_k is None else P.b_k)  # (S, D): keys from the SOURCE
V = X_src @ P.w_v + (0 if P.b_v is None else P.b_v)  # (S, D): values from the SOURCE
h, dk = $head, $d // $heads  # head h uses columns h*dk .. (h+1)*dk - 1
Qh, Kh, Vh = (M[:, h * dk:(h + 1) * dk] for M in (Q, K, V))
S = Qh @ Kh.T * $scale  # scores (T, S): target tokens as rows, source tokens as columns
$mask
E = np.exp(S - S.max(axis=1, keepdims=True))
E[~np.isfinite(S)] = 0
A = E / np.where(E.sum(axis=1, keepdims=True) == 0, 1, E.sum(axis=1, keepdims=True))
out = A @ Vh  # (T, d_k): one row per target token, a mix of the source's values
"""


def code(c: CrossSettings, s: Settings, seqs: cross.Sequences, res: engine.AttentionResult,
         head: int) -> str:  # fmt: skip
    """NumPy lines that recompute head ``head``'s S, A and out of this view (tests run
    them)."""
    if c.input == "random":
        inputs = (
            f"X_src = np.random.default_rng([{s.seed}, 0]).standard_normal(({seqs.source.n}, "
            f"{s.d}))  # (S, D) the source\nX_tgt = np.random.default_rng([{s.seed}, 1])"
            f".standard_normal(({seqs.target.n}, {s.d}))  # (T, D) the target"
        )
    else:
        what = (
            f"pair={c.pair!r}"
            if c.input == "preset"
            else f"text_src={c.text_src[: cross.MAX_CHARS]!r}, "
            f"text_tgt={c.text_tgt[: cross.MAX_CHARS]!r}"
        )
        inputs = (
            "from attnviz.teaching import cross  # a fixed embedding per token (teaching.inputs)\n"
            f"seqs = cross.sequences({c.input!r}, d={s.d}, {what})\n"
            f"X_src, X_tgt = seqs.source.x, seqs.target.x  # (S, D) = ({seqs.source.n}, "
            f"{s.d}), (T, D) = ({seqs.target.n}, {s.d})"
        )
    mask = "# no mask"
    if res.mask is not None:
        keep = int(res.mask[0].sum())
        mask = f"S[:, {keep}:] = -np.inf  # the source's last {seqs.source.n - keep} are padding"
    return (
        CODE.replace("$inputs", inputs).replace("$seed1", str(s.seed + 1))
        .replace("$init_r", repr(s.init)).replace("$init", s.init).replace("$d", str(s.d))
        .replace("$bias", str(s.bias)).replace("$heads", str(s.heads))
        .replace("$head", str(head)).replace("$scale", repr(float(res.scale)))
        .replace("$mask", mask)
    )  # fmt: skip


def code_box(
    c: CrossSettings, s: Settings, seqs: cross.Sequences, res: engine.AttentionResult, head: int
) -> None:
    """The code box (its own key: the shared one keeps its state across the other pages);
    the code is built only while it is open."""
    lazy_code_box(
        _("NumPy code that reproduces this view"),
        "code_box_cross",
        lambda: code(c, s, seqs, res, head),
    )


# --------------------------------------------------------------------------- downloads


def npz_bytes(c: CrossSettings, s: Settings, seqs: cross.Sequences,
              res: engine.AttentionResult) -> bytes:  # fmt: skip
    """The whole state: both inputs and their tokens, every intermediate, the settings."""
    arrays: dict[str, Any] = {
        "x_src": seqs.source.x, "x_tgt": seqs.target.x,
        "labels_src": np.array(seqs.source.labels), "labels_tgt": np.array(seqs.target.labels),
        "queries": res.queries, "keys": res.keys, "values": res.values, "scores": res.scores,
        "masked_scores": res.masked_scores, "weights": res.weights,
        "head_outputs": res.head_outputs, "concat": res.concat, "output": res.output,
        "scale": np.array(res.scale),
        "settings_json": np.array(json.dumps({"sidebar": s.as_dict(), "page": _page(c)})),
    }  # fmt: skip
    if res.mask is not None:
        arrays["mask"] = res.mask
    buf = io.BytesIO()
    np.savez_compressed(buf, **arrays)
    return buf.getvalue()


def _page(c: CrossSettings) -> dict[str, Any]:
    """The page's settings as the NPZ keeps them (the shown language is not one)."""
    return {k: v for k, v in asdict(c).items() if k != "lang"}


def export_section(c: CrossSettings, s: Settings, seqs: cross.Sequences,
                   res: engine.AttentionResult, head: int) -> None:  # fmt: skip
    """CSV of each matrix of head ``head`` (target tokens as rows, source tokens as the
    columns of S and A) and the NPZ of the whole state, drawn only while open."""
    box = lazy_box(
        ":material/download: " + _("Export: every matrix as CSV, the whole state as NPZ"),
        "export_box_cross",
    )
    if box is None:
        return
    tgt, src = seqs.target.labels, seqs.source.labels
    of = _("{matrix} head {head}")  # the buttons' words; the files' names stay English
    tables = {
        f"S head {head}": (of.format(matrix="S", head=head), res.masked_scores[head], tgt, src),
        f"A head {head}": (of.format(matrix="A", head=head), res.weights[head], tgt, src),
        f"Q head {head}": (of.format(matrix="Q", head=head), res.queries[head], tgt, None),
        f"K head {head}": (of.format(matrix="K", head=head), res.keys[head], src, None),
        f"V head {head}": (of.format(matrix="V", head=head), res.values[head], src, None),
        f"out head {head}": (of.format(matrix="out", head=head), res.head_outputs[head], tgt,
                             None),
        "X source": (_("X source"), seqs.source.x, src, None),
        "X target": (_("X target"), seqs.target.x, tgt, None),
    }  # fmt: skip
    with box:
        st.caption(
            _(
                "CSV files hold the matrices as displayed: target tokens as rows; the scores' "
                "and weights' columns are the source's tokens. The NPZ holds both inputs, "
                "every intermediate and the settings."
            )
        )
        downloads("cross", tables, lambda: npz_bytes(c, s, seqs, res))


def who_asks(seqs: cross.Sequences) -> str:
    """The sentence that says which sequence gives Q and which gives K and V."""

    def few(labels: tuple[str, ...]) -> str:
        shown = " ".join(visible_all(labels[:8])) + (" …" if len(labels) > 8 else "")
        return md_text(shown)

    t, s = seqs.target, seqs.source
    return _(
        "**Q** comes from the **target** ({t} tokens: *{target}*), one query per row; **K** "
        "and **V** come from the **source** ({s} tokens: *{source}*), one key and one value "
        "per column. Each target token's row of weights is a softmax over the {s} source "
        "tokens, so the weights are T × S = {t} × {s}."
    ).format(t=t.n, s=s.n, target=few(t.labels), source=few(s.labels))
