"""Self-attention step by step (UDL notebook 12.1): every stage with its equation and shape."""

import functools
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import streamlit as st

from attnviz import engine, i18n, ui, viz
from attnviz.i18n import _
from attnviz.teaching.wording import readable
from attnviz.ui import asks

view = ui.start(
    _("Self-attention, one step at a time"),
    _(
        "The same computation as the playground, cut into its seven steps (as in notebook 12.1 "
        "of *Understanding Deep Learning*). Each step shows its equation, the shape of its "
        "result and a heatmap. At the bottom, the **loop form** (one query at a time, as the "
        "notebook first writes it) is compared with the **matrix form**: same numbers."
    ),
)


#: The "Softmax: weights" step (from 0): where the room is asked which key a query picks.
WEIGHTS_STEP = 5
#: The steps' short titles (the presenter view's step bar).
STEPS = [
    _("The input X"),
    _("Queries, keys and values"),
    _("Dot products QKᵀ"),
    _("Scale"),
    _("Mask"),
    _("Softmax: weights"),
    _("Weighted sum of the values"),
]


@st.fragment
def body(view: ui.View) -> None:
    """The page below the sidebar: a head change reruns only this part."""
    r, n, dk = view.result, view.result.n_tokens, view.result.queries.shape[-1]
    step = ui.steps(STEPS)  # the presenter view: its step bar; otherwise nothing drawn
    if step.presenting:
        slide(view, step)
        return
    head = ui.head_picker(  # narrow: the value reads at once, not far left (no columns:
        r.num_heads,  # three blocks more to render on every page switch, issue 46)
        label=_("head (of {h}; each uses d_k = {dk} columns)").format(h=r.num_heads, dk=dk),
        width=ui.PICKER_WIDTH,
    )
    ui.pooled_note(n, _("the playground's query selector shows one query's full row of weights"))
    a = head_arrays(view, head)
    for i, (title, latex, shape, note, draw) in enumerate(steps_table(view, head, a, step)):
        stage(i + 1, title, latex, shape, note)
        if draw is not None:
            draw()
    loop_vs_matrix(view, a)
    footer(view, head, a)


#: The steps (from 0) whose slide gives its charts the whole width, the equation above
#: them: Q, K and V side by side.
WIDE_STEPS = (1,)


def slide(view: ui.View, step: ui.Steps) -> None:
    """The presenter view's step: its heading, then its chart (filling the screen below it)
    beside its equation, shape, caption and the head picker (Q, K and V: the equation
    above, the three charts across the slide); on the weights step, Ask the room (a
    teacher's open class in the link)."""
    r, n, dk = view.result, view.result.n_tokens, view.result.queries.shape[-1]
    # the step's title comes with this head's table, below; set close above its content as
    # a step's was on a slide (the key: streamlit_private.present_css)
    heading = st.container(key="slide_step_title")
    if step.index in WIDE_STEPS:
        text, pick = st.columns([3, 1], gap="large", vertical_alignment="bottom")
        chart = st.container()
    else:
        chart, text = st.columns([3, 2], gap="large")
        pick = text
    with text:
        words = st.container()  # the equation, above the picker that chooses its head
    with pick:
        head = ui.head_picker(
            r.num_heads, label=_("head (of {h}; d_k = {dk})").format(h=r.num_heads, dk=dk)
        )
    with text:
        ui.pooled_note(n, _("the playground's query selector shows one query's full row"))
    a = head_arrays(view, head)
    title, latex, shape, note, draw = steps_table(view, head, a, step)[step.index]
    heading.markdown(f"## {step.index + 1}. {title}")
    with words:
        st.latex(latex)
        # one line where it fits: a second line would push the slide's charts down
        st.markdown(_("shape: **{shape}**").format(shape=shape) + (f" · {note}" if note else ""))
        # on a slide a chart's caption goes beside it: under it, it would fall off the screen
        if getattr(draw, "caption", None):
            st.caption(draw.caption)
        if getattr(draw, "beside", None):
            draw.beside()
    if draw is not None:
        with chart:
            getattr(draw, "chart", draw)()
    if step.index == WEIGHTS_STEP:
        asks.step_by_step(view.settings, view.result.weights, head, view.labels)


def stage(num: int, title: str, latex: str, shape: str, note: str = "") -> None:
    """A step's heading, its equation and the shape of its result: two Markdown elements
    (they were six, the equation and the shape in two columns: a page switch renders every
    element again, issue 46), the shape under the equation as on a slide. The shape is an
    element of its own: it changes with N, and an N move then leaves the equation's element
    unchanged, so the browser sets no KaTeX again (one element for all three was 1.3x the
    browser's script time a move, docs/benchmarks.md)."""
    st.markdown(f"## {num}. {title}\n\n$$\n{latex}\n$$")
    st.markdown(_("shape: **{shape}**").format(shape=shape) + (f"  \n{note}" if note else ""))


def head_arrays(view: ui.View, head: int) -> dict[str, np.ndarray]:
    """This head's matrices, step by step."""
    r = view.result
    qh, kh = r.queries[head], r.keys[head]
    return {
        "q": qh,  # (N, d_k)
        "k": kh,  # (N, d_k)
        "v": r.values[head],  # (N, d_k)
        "raw": engine.attention_scores(qh, kh, scale=False),  # (N, N) Q Kᵀ, not scaled
        "scaled": r.scores[head],  # (N, N) after the scale factor
        "masked": r.masked_scores[head],  # (N, N) with -inf where masked
        "w": r.weights[head],  # (N, N)
        "out": r.head_outputs[head],  # (N, d_k)
    }


@dataclass(frozen=True)
class StepCharts:
    """What draws the steps' charts of one head (``a``: :func:`head_arrays`), each a
    function called only for the steps shown: ``height`` px a token matrix (an attention
    matrix 40 more), ``zmax`` the shared colour range of the scores of steps 3, 4 and 5
    (so that scaling shows as paler or stronger)."""

    view: ui.View
    head: int
    a: dict[str, np.ndarray]
    height: int
    zmax: float

    def attn(self, key: str, mat, weights: bool = False, **kw) -> Callable[[], None]:
        """Draw one attention matrix of this head (scores or weights), hover-linked; a
        click on a weight works that cell out under the chart (in the browser, no rerun);
        the weights with a revealed answer outlined (the teacher's projector)."""
        v, head = self.view, self.head
        r, labels, lay = v.result, v.labels, v.layout
        cells = ui.cell_data(r, head, labels) if weights else None
        link = ui.link_attn(head, lay, weights=weights, select=False, arithmetic=cells)
        what = "weights" if weights else "scores"
        overlay = ui.Overlay("step_by_step", v.settings, head, lay, r.n_tokens) if weights else None
        fig = functools.partial(
            viz.heatmaps.attention_figure, labels=labels, layout=lay, d_k=r.queries.shape[-1],
            height=self.height + 40, zmax=self.zmax,
        )  # fmt: skip
        return lambda: ui.plot(fig(mat, what=what, **kw), key=key, link=link, overlay=overlay)

    def tokens(self, key: str, mat, name: str, h: int | None) -> Callable[[], None]:
        """Draw one matrix with a row per token, hover-linked as a query-side matrix."""
        v = self.view
        link = ui.link_tokens(h, v.layout, "query")
        fig = functools.partial(
            viz.heatmaps.token_matrix_figure, labels=v.labels, layout=v.layout, height=self.height
        )
        return lambda: ui.plot(fig(mat, name=name), key=key, link=link)

    def qkv(self) -> None:
        """Q, K and V of this head side by side, hover-linked."""
        v, head, a = self.view, self.head, self.a
        tm = functools.partial(
            viz.heatmaps.token_matrix_figure, labels=v.labels, layout=v.layout, height=self.height
        )
        ui.board(
            "sb_qkv",
            [
                (
                    f"sb_{k}",
                    tm(m, name=_("{name} (head {head})").format(name=nm, head=head)),
                    ui.link_tokens(head, v.layout, "query" if k == "q" else "key"),
                )
                for m, nm, k in ((a["q"], "Q", "q"), (a["k"], "K", "k"), (a["v"], "V", "v"))
            ],
        )


def scale_equation(s: ui.Settings, dk: int) -> str:
    """Step 4's equation for the sidebar's scaling."""
    return {
        "1/√d_k": rf"S = \frac{{QK^\top}}{{\sqrt{{d_k}}}} = \frac{{QK^\top}}{{\sqrt{{{dk}}}}}",
        "none": r"S = QK^\top \quad(\text{" + _("no scaling") + "})",
        "custom": rf"S = {s.factor:g}\cdot QK^\top",
    }[s.scale_mode]


def mask_step(c: StepCharts) -> tuple:
    """Step 5: the sidebar's mask, or (none chosen) the page's offer of one (a slide has
    no sidebar open)."""
    s, r, a = c.view.settings, c.view.result, c.a
    n = r.n_tokens
    if r.mask is None:
        return (
            _("Mask (none chosen)"),
            r"S_{ij} \text{ " + _("unchanged") + "}",
            f"{n}×{n}",
            _(
                "No mask: every query sees every key, S stays as in step 4. Pick one here (or "
                "in the sidebar):"
            ),
            mask_buttons(
                c.attn("sb_masked", a["masked"], scale=r.scale, title=_("S, no mask: unchanged"))
            ),
        )
    return (
        _("Mask ({kind}): hidden keys get −∞").format(kind=s.mask_kind),
        r"S_{ij} \leftarrow -\infty \text{ "
        + _("where query")
        + r" } i \text{ "
        + _("may not see key")
        + "} j",
        f"{n}×{n}",
        _("{m} of {total} cells masked (grey ×).").format(m=int((~r.mask).sum()), total=n * n),
        c.attn("sb_masked", a["masked"], mask=r.mask, scale=r.scale, title=_("S with −∞ (grey)")),
    )


def steps_table(view: ui.View, head: int, a: dict[str, np.ndarray], step: ui.Steps) -> list[tuple]:
    """The seven steps: (title, equation, shape of the result, note, what draws its chart
    or None); the charts are drawn only for the steps shown."""
    s, r = view.settings, view.result
    n, dk = r.n_tokens, r.queries.shape[-1]
    zmax = viz.style.shared_range(a["raw"], a["scaled"])
    # the presenter view: one screen of 720 px
    c = StepCharts(view, head, a, 270 if step.presenting else 300, zmax)
    nn = f"{n}×{n}"
    # (title, equation, shape of the result, note, what draws its chart): the seven steps
    return [
        (
            _("The input: one vector per token"),
            r"X \in \mathbb{R}^{N \times D}",
            f"{n}×{s.d}",
            "",
            c.tokens("sb_x", view.x, "X", None),
        ),
        (
            _("Queries, keys and values: three linear maps of X"),
            r"Q = XW_q + b_q,\quad K = XW_k + b_k,\quad V = XW_v + b_v",
            _("{n}×{dk} each (head {head}: columns {first}…{last})").format(
                n=n, dk=dk, head=head, first=head * dk, last=(head + 1) * dk - 1
            ),
            _("W_q, W_k, W_v are D×D; each head takes d_k = D / heads columns."),
            c.qkv,
        ),
        (
            _("Dot products: how well each query matches each key"),
            r"QK^\top,\qquad (QK^\top)_{ij} = q_i \cdot k_j",
            nn,
            "",
            with_caption(
                c.attn("sb_raw", a["raw"], scale=1.0, title=_("QKᵀ (not scaled)")),
                (
                    _("Colour scale ±{z}, the same in step 4 and 5.")
                    if r.mask is not None
                    else _("Colour scale ±{z}, the same in step 4.")
                ).format(z=readable(zmax, 3)),
            ),
        ),
        (
            _("Scale"),
            scale_equation(s, dk),
            nn,
            _("factor = {f}").format(f=i18n.fmt(r.scale, ".4g")),
            with_caption(
                c.attn("sb_scaled", a["scaled"], scale=r.scale),
                shared_scale_note(r.scale, zmax, masked=r.mask is not None),
            ),
        ),
        mask_step(c),
        (
            _("Softmax over the keys: scores become weights"),
            r"A_{ij} = \frac{e^{S_{ij}}}{\sum_{m} e^{S_{im}}},\qquad \sum_j A_{ij} = 1",
            nn,
            _("A row of all −∞ gives weights 0 (not NaN)."),
            c.attn("sb_w", a["w"], weights=True, mask=r.mask),
        ),
        (
            _("Weighted sum of the values"),
            r"\text{out} = AV,\qquad \text{out}_i = \sum_j A_{ij}\, v_j",
            f"{n}×{dk}",
            "",
            c.tokens("sb_out", a["out"], _("out = A V (head {head})").format(head=head), head),
        ),
    ]


def with_caption(draw: Callable[[], None], caption: str) -> Callable[[], None]:
    """``draw``, then a caption line under its chart; a slide reads ``.chart`` and
    ``.caption`` and puts the caption beside the chart."""

    def both() -> None:
        draw()
        st.caption(caption)

    both.chart, both.caption = draw, caption  # type: ignore[attr-defined]
    return both


def mask_buttons(draw: Callable[[], None]) -> Callable[[], None]:
    """The mask step with no mask: the mask buttons (the page shows step 4's chart just
    above); a slide draws the unchanged scores ``draw`` and puts the buttons beside them,
    under the note that offers them."""

    def buttons() -> None:
        ui.setting_buttons(
            "sb_mask",
            {_("Causal mask"): {"mask": "causal"}, _("Padding mask"): {"mask": "padding"}},
        )

    buttons.chart, buttons.beside = draw, buttons  # type: ignore[attr-defined]
    return buttons


def shared_scale_note(scale: float, zmax: float, masked: bool) -> str:
    """Under step 4: steps 3, 4 (and 5, the masked scores) share one colour scale, and what
    that shows."""
    note = (
        _(
            "Steps 3, 4 and 5 colour the scores on one scale, ±{z}: a colour means the same "
            "number in all three"
        )
        if masked
        else _(
            "Steps 3 and 4 colour the scores on one scale, ±{z}: a colour means the same "
            "number in both"
        )
    ).format(z=readable(zmax, 3))
    f = i18n.fmt(scale, ".4g")
    if scale == 1:
        return note + _("; without scaling, step 4 is step 3.")
    if abs(scale) < 1:
        return note + _(
            ", so the scores × {f} look paler than in step 3: they are smaller."
        ).format(f=f)
    return note + _(", so the scores × {f} look stronger than in step 3: they are larger.").format(
        f=f
    )


def loop_vs_matrix(view: ui.View, a: dict[str, np.ndarray]) -> None:
    """Notebook 12.1's loop (one query at a time) against the matrix form: same numbers."""
    r, n = view.result, view.result.n_tokens
    qh, kh, vh, w, out = a["q"], a["k"], a["v"], a["w"], a["out"]
    st.header(_("Loop form vs matrix form"))
    limit = min(n, 64)
    lw, lo = ui.cached(
        "loop_attention",
        qh[:limit],
        kh,
        vh,
        scale=r.scale,
        mask=None if r.mask is None else r.mask[:limit],
    )
    dw = float(np.abs(lw - w[:limit]).max())
    do = float(np.abs(lo - out[:limit]).max())
    c1, c2 = st.columns(2)
    c1.markdown(_("**Loop** (notebook 12.1: one query at a time)"))
    c1.code(
        "for n in range(N):\n"
        "    dots = [k[m] @ q[n] * f for m in range(N)]  # masked: -inf\n"
        "    a = softmax(dots)\n"
        "    out[n] = sum(a[m] * v[m] for m in range(N))",
        language="python",
        wrap_lines=True,  # no horizontal scroll box (a keyboard cannot scroll it)
    )
    c2.markdown(_("**Matrix** (all queries at once)"))
    c2.code("A = softmax(Q @ K.T * f)  # masked: -inf\nout = A @ V", language="python")
    metrics = ui.row("loop_metrics")  # one block, not three
    metrics.metric(_("largest |A_loop − A_matrix|"), readable(dw))
    metrics.metric(_("largest |out_loop − out_matrix|"), readable(do))
    st.caption(
        (
            _(
                "The same numbers: the two forms add the same products in a different order, "
                "so they can differ in the last of their 16 digits (floating-point rounding)."
            )
            if max(dw, do) < 1e-9
            else _("They differ by more than rounding: the loop and the matrix form disagree.")
        )
        + (
            _(" The loop ran for the first {limit} of {n} queries (it is slow on purpose).").format(
                limit=limit, n=n
            )
            if limit < n
            else ""
        )
    )


def footer(view: ui.View, head: int, a: dict[str, np.ndarray]) -> None:
    """Shapes, exports, the worked example and the NumPy code of this view."""
    lay = view.layout
    ui.shapes(
        {
            "X": view.x,
            _("Q, K, V (head)"): a["q"],
            "QKᵀ": a["raw"],
            "S": a["scaled"],
            "A": a["w"],
            "out": a["out"],
        },
        note=(
            _("head {head}; rows = tokens") if lay == "rows" else _("head {head}; shown transposed")
        ).format(head=head),
    )
    ui.export_section(
        view,
        page="step_by_step",
        tokens={"X": view.x, "Q": a["q"], "K": a["k"], "V": a["v"], "out": a["out"]},
        squares={"QKT": a["raw"], "S scaled": a["scaled"], "S masked": a["masked"], "A": a["w"]},
    )
    ui.worked_example_download(view, head, page="step_by_step")
    ui.code_box(view, head=head)


body(view)
