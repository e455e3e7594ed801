"""Notebooks: each seed notebook's printed values next to attnviz's, with pass/fail."""

import numpy as np
import pandas as pd
import streamlit as st

from attnviz import i18n, ui
from attnviz.i18n import _
from attnviz.teaching import presets
from attnviz.teaching.wording import power_of_ten

ui.page_guard()
ui.intro(
    _("The notebooks, checked"),
    _(
        "attnviz started from five notebooks that compute attention by hand. Each one is a "
        "**preset** here: its numbers (X, weights, heads, scaling, mask), and every value it "
        "prints, compared with what attnviz computes. “✓ pass” means equal to the notebook's "
        "printed precision. **Load** puts a preset into the playground (the sidebar then shows "
        "its settings)."
    ),
)
view = ui.current()


@st.cache_data(max_entries=8, show_spinner=False)
def checks(name: str, lang: str) -> list[dict]:
    """The preset's checks; ``lang`` (the shown language) keys the cache: the presets'
    labels and settings are words in it."""
    return [
        {
            "label": c.label,
            "settings": c.settings,
            "expected": np.asarray(c.expected),
            "computed": np.asarray(c.computed),
            "max_abs_error": c.max_abs_error,
            "tolerance": c.tolerance + c.rtol,
            "passed": c.passed,
        }
        for c in presets.get(name).check()
    ]


def short(a: np.ndarray) -> str:
    a = np.asarray(a, dtype=float)
    flat = a.ravel()
    # 3 values at the notebooks' 4 decimals, trailing zeros dropped (1e-13 -> "0"): the
    # column fits a 1280 px wide screen; the exports have every digit
    shown = np.round(flat[:3], 4) + 0.0  # + 0.0 turns -0.0 into 0.0
    body = ", ".join(np.format_float_positional(v, precision=4, trim="-") for v in shown) + (
        " …" if flat.size > 3 else ""
    )
    return f"{'×'.join(map(str, a.shape)) or _('scalar')}: {body}"


total = passed = 0
for name in presets.names():
    p = presets.get(name)
    rows = checks(name, i18n.current())
    ok = sum(r["passed"] for r in rows)
    total += len(rows)
    passed += ok
    mark = ":green[:material/check_circle:]" if ok == len(rows) else ":red[:material/cancel:]"
    with st.container(border=True):
        c1, c2 = st.columns([3, 1])
        c1.markdown(f"### {mark} {p.title}")
        c1.markdown(
            f"`{p.notebook}` · "
            + _(
                "N = {n}, D = {d}, heads = {heads}, {scale}, mask: {mask} · **{ok} of {count}** "
                "printed values match"
            ).format(
                n=p.n_tokens,
                d=p.d_model,
                heads=p.num_heads,
                scale=presets.scale_words(p.scale),
                mask=p.mask,
                ok=ok,
                count=len(rows),
            )
        )
        c1.caption(p.description)
        # st.switch_page cannot be used here: it clears the URL, and Streamlit refuses to
        # clear query parameters bound to widgets. The button loads, a link navigates.
        if c2.button(
            _("Load in the playground"),
            key=f"load_{name}",
            on_click=ui.load_preset,
            args=(name,),
            type="primary",
        ):
            c2.success(_("Loaded: the sidebar now shows this preset."))
            c2.page_link(
                "pages/playground.py",
                label=_("Open the playground"),
                icon=":material/tune:",
                # keys already in the URL are kept by the frontend; add the others
                query_params={
                    k: v for k, v in ui.preset_query(name).items() if k not in st.query_params
                },
            )
        printed, notebook, largest = _("printed value"), _("notebook"), _("largest |error|")
        tolerance, settings = _("tolerance"), _("settings")
        df = pd.DataFrame(
            {
                "": [_("✓ pass") if r["passed"] else _("✗ FAIL") for r in rows],
                printed: [r["label"] for r in rows],
                notebook: [short(r["expected"]) for r in rows],
                "attnviz": [short(r["computed"]) for r in rows],
                largest: [power_of_ten(r["max_abs_error"], 3) for r in rows],
                tolerance: [power_of_ten(r["tolerance"], 1) for r in rows],
                settings: [r["settings"] for r in rows],
            }
        )
        st.dataframe(
            df,
            hide_index=True,
            width="stretch",
            # the values come right after their label and get the width; the settings
            # (secondary) come last, so a narrow screen cuts them rather than the values
            column_config={
                "": st.column_config.TextColumn(width=60, pinned=True),
                printed: st.column_config.TextColumn(width=180),
                notebook: st.column_config.TextColumn(width=192, help=_("printed by the notebook")),
                "attnviz": st.column_config.TextColumn(width=192, help=_("computed by attnviz")),
                largest: st.column_config.TextColumn(width=100),
                tolerance: st.column_config.TextColumn(width=80),
                settings: st.column_config.TextColumn(width="large"),
            },
        )
st.markdown(
    _("**{passed} of {total}** printed values reproduced.").format(passed=passed, total=total)
)
st.caption(
    _(
        "Tolerance = half a unit of the last digit the notebook printed. The UDL notebooks use "
        "one token per column (D×N); their values are compared in that layout."
    )
)
if view is not None:
    ui.shapes({_("X (current)"): view.x, _("weights (current)"): view.result.weights})
    ui.export_section(
        view,
        {
            f"{name} checks": (
                # the CSV's names and columns: machine-readable, English; its row names
                # are the checks' labels
                np.array(
                    [
                        [r["max_abs_error"], r["tolerance"], r["passed"]]
                        for r in checks(name, i18n.current())
                    ]
                ),
                [r["label"] for r in checks(name, i18n.current())],
                ["max_abs_error", "tolerance", "passed"],
            )
            for name in presets.names()
        },
        page="notebooks",
    )
    ui.code_box(view, extra=ui.page_extra("notebooks"))
