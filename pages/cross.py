"""Cross-attention: a target's queries over a source's keys and values (attnviz.cross)."""

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


@st.fragment
def body(view: ui.View) -> None:
    """The page's controls and charts: a change of them reruns only this part."""
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
    st.markdown(cross.who_asks(seqs))
    tgt, src = seqs.target.labels, seqs.source.labels
    c_head, c_info = st.columns([1, 4])
    head = ui.head_picker(res.num_heads, c_head)
    dk = res.queries.shape[-1]
    c_info.markdown(
        _(
            "Head **{head}** of {count}: d_k = D / heads = {d} / {count} = **{dk}**; "
            "scale factor **{scale}**"
        ).format(
            head=head, count=res.num_heads, d=view.settings.d, dk=dk,
            scale=i18n.fmt(res.scale, ".4g"),
        )
        + (
            _("; the source's last **{k}** tokens are padding").format(k=src_pad(res))
            if res.mask is not None
            else ""
        )
        + "."
    )  # fmt: skip
    key = (view.settings, c)  # what the Ask-the-room question is about
    cross_view.attention_board(
        "cx_top", res.weights, head, target_labels=tgt, source_labels=src, scores=res.scores,
        outputs=res.head_outputs, mask=res.mask, scale=res.scale, result=res,
        overlay=ui.Overlay("cross", key, head, "rows", seqs.target.n),
    )  # fmt: skip
    asks.cross(key, res.weights, head, tgt, src, res.mask)
    st.subheader(_("Q from the target, K and V from the source"))
    cross_view.projections_board("cx_qkv", res, head, target_labels=tgt, source_labels=src)
    st.subheader(_("Every head"))
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
    cross.code_box(cross.code(c, view.settings, seqs, res, head))


def src_pad(res) -> int:
    """How many of the source's tokens the padding mask hides."""
    return int((~res.mask[0]).sum())


if view is not None:
    body(view)
    picker_encdec.encdec_section()  # an encoder-decoder found on this machine, if any
