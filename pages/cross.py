"""Cross-attention: a target's queries over a source's keys and values (attnviz.teaching.cross)."""

import streamlit as st

from attnviz import i18n, ui
from attnviz.i18n import _
from attnviz.ui import asks, cross, cross_view, picker_encdec

view = ui.start(
    _("Cross-attention: one sequence asks, another answers"),
    _(
        "In an encoder-decoder (a translation model) the decoder's tokens, the **target**, ask "
        "with their **queries**, and the encoder's tokens, the **source**, answer with their "
        "**keys** and **values**. The formula is the same softmax(QKᵀ/√d_k)V, but the matrices "
        "are no longer square: one row per target token, one column per source token. Choose "
        "two sentences below to see a translation pair; the sidebar sets D, heads, the seed, "
        "the weights and the scaling."
    ),
)


#: The steps (the presenter view's slides), in the order of the computation.
STEPS = [
    _("Q from the target, K and V from the source"),
    _("Scores: each target query · each source key"),
    _("Weights: a softmax over the source, row by row"),
    _("The output: each target token's mix of the source's values"),
    _("Every head"),
]
#: The weights' step (from 0): Ask the room's question.
WEIGHTS_STEP = 2


@st.fragment
def body(view: ui.View) -> None:
    """The page's controls and charts: a change of them reruns only this part."""
    step = ui.steps(STEPS)  # the presenter view's step bar (nothing in the normal view)
    c, notices = cross.controls()
    for msg in notices:
        st.warning(msg, icon=":material/warning:")
    try:
        seqs, res, problem = cross.compute(c, view.settings)
    except ValueError as e:
        st.error(
            _("Cannot compute cross-attention with these settings: {error}").format(
                error=ui.md_text(e)
            )
        )
        return
    for msg in (*seqs.notes, *([problem] if problem else [])):
        st.warning(ui.md_text(msg), icon=":material/warning:")
    if step.presenting:
        slide(view, step, c, seqs, res)
        return
    st.markdown(cross.who_asks(seqs))
    tgt, src = seqs.target.labels, seqs.source.labels
    c_head, c_info = st.columns([1, 4])
    head = ui.head_picker(res.num_heads, c_head)
    c_info.markdown(head_words(view, res, head))
    key = (view.settings, c)  # what the Ask-the-room question is about
    cross_view.attention_board(
        "cx_top", res.weights, head, target_labels=tgt, source_labels=src, scores=res.scores,
        outputs=res.head_outputs, mask=res.mask, scale=res.scale, result=res,
        overlay=ui.Overlay("cross", key, head, "rows", seqs.target.n),
    )  # fmt: skip
    asks.cross(key, res.weights, head, tgt, src, res.mask)
    st.header(STEPS[0])
    cross_view.projections_board("cx_qkv", res, head, target_labels=tgt, source_labels=src)
    st.header(STEPS[4])
    cross_view.grid_board("cx_heads", res.weights, target_labels=tgt, source_labels=src)
    ui.shapes(
        {
            "X_src": seqs.source.x,
            "X_tgt": seqs.target.x,
            "Q": res.queries.transpose(1, 0, 2).reshape(seqs.target.n, -1),
            f"Q_{head}": res.queries[head],
            f"K_{head}, V_{head}": res.keys[head],
            _("S, A (weights)"): res.weights[head],
            _("out (head)"): res.head_outputs[head],
            _("Y (output)"): res.output,
        },
        note=_("rows = target tokens; the columns of S and A = source tokens"),
    )
    cross.export_section(c, view.settings, seqs, res, head)
    cross.code_box(c, view.settings, seqs, res, head)


def head_words(view: ui.View, res, head: int) -> str:
    """Which head, its d_k and the scale factor (and the source's padding)."""
    return (
        _(
            "Head **{head}** of {count}: d_k = D / heads = {d} / {count} = **{dk}**; "
            "scale factor **{scale}**"
        ).format(
            head=head, count=res.num_heads, d=view.settings.d, dk=res.queries.shape[-1],
            scale=i18n.fmt(res.scale, ".4g"),
        )
        + (
            _("; the source's last **{k}** tokens are padding").format(k=src_pad(res))
            if res.mask is not None
            else ""
        )
        + "."
    )  # fmt: skip


def slide(view: ui.View, step: ui.Steps, c, seqs, res) -> None:
    """One step on the screen: its chart (or Q, K and V; or every head) filling the
    screen beside a column of words in slide type (the head, what the chart shows); the
    head picker only where one head is shown."""
    tgt, src, i = seqs.target.labels, seqs.source.labels, step.index
    if i == 4:  # every head abreast, the screen's whole width (its title says what it is)
        ui.head_picker(res.num_heads, ui.present.hidden_box())
        cross_view.grid_board("cx_heads", res.weights, target_labels=tgt, source_labels=src)
        return
    charts, side = st.columns([4.6, 1.4] if i == 0 else [3, 1.3], gap="medium")
    words = side.container(key="slide_text_cx")
    head = ui.head_picker(res.num_heads, words)
    key = (view.settings, c)  # what the Ask-the-room question is about
    with charts:
        if i == 0:
            cross_view.projections_board("cx_qkv", res, head, target_labels=tgt, source_labels=src)
        else:
            cross_view.slide_board(
                "cx_top", ("scores", "weights", "out")[i - 1], res.weights, head,
                target_labels=tgt, source_labels=src, scores=res.scores, outputs=res.head_outputs,
                mask=res.mask, scale=res.scale, result=res,
                overlay=ui.Overlay("cross", key, head, "rows", seqs.target.n),
            )  # fmt: skip
    if i == 0:
        words.markdown(cross.who_asks(seqs))
    words.markdown(head_words(view, res, head))
    words.markdown(cross_view.slide_words(i))
    if i == WEIGHTS_STEP:  # a teacher's open class in the link: Ask the room
        asks.cross(key, res.weights, head, tgt, src, res.mask)


def src_pad(res) -> int:
    """How many of the source's tokens the padding mask hides."""
    return int((~res.mask[0]).sum())


if view is not None:
    body(view)
    if not ui.present.presenting():  # a slide is one step of the page above
        picker_encdec.encdec_section()  # an encoder-decoder found on this machine, if any
