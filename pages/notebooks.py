"""Notebooks: each seed notebook's printed values next to attnviz's, with pass/fail."""

import numpy as np
import pandas as pd
import streamlit as st

from attnviz import i18n, ui
from attnviz.i18n import _
from attnviz.teaching import presets
from attnviz.teaching.wording import power_of_ten
from attnviz.ui.controls import option_label

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


#: The most rows of checks a slide shows (in slide type; a longer list is split evenly).
SLIDE_ROWS = 9


def card(name: str, part: tuple[int, int] | None = None) -> tuple[int, int]:
    """A preset's card: its title, numbers and Load button, and its checks as a table (a
    slide: rows ``part`` in slide type); returns (checks passed, checks)."""
    p = presets.get(name)
    rows = checks(name, i18n.current())
    ok = sum(r["passed"] for r in rows)
    mark = ":green[:material/check_circle:]" if ok == len(rows) else ":red[:material/cancel:]"
    with st.container(border=True):
        c1, c2 = st.columns([3, 1])
        c1.markdown(f"## {mark} {p.title}")
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
                mask=option_label("mask", p.mask) or p.mask,
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
        if part is not None:
            slide_table(rows[part[0] : part[1]])
            return ok, len(rows)
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
            # (secondary) come last, so a narrow screen cuts them rather than the values.
            # The verdict and the label are as wide as their words in the shown language
            # ("✓ correcto" was cut at 60 px), the label up to a limit
            column_config={
                "": st.column_config.TextColumn(width=column_px(df[""], 60, 120), pinned=True),
                printed: st.column_config.TextColumn(width=column_px(df[printed], 180, 280)),
                notebook: st.column_config.TextColumn(width=192, help=_("printed by the notebook")),
                "attnviz": st.column_config.TextColumn(width=192, help=_("computed by attnviz")),
                largest: st.column_config.TextColumn(width=100),
                tolerance: st.column_config.TextColumn(width=80),
                settings: st.column_config.TextColumn(width="large"),
            },
        )
        return ok, len(rows)


#: The data grid's type: px per character (an average over Latin and Arabic letters at its
#: 14 px) and a cell's padding on both sides.
GRID_CHAR_PX, GRID_PAD_PX = 7.2, 20


def column_px(texts: pd.Series, least: int, most: int) -> int:
    """A data grid column's width in px for its longest text, within ``least``..``most``
    (the grid draws on a canvas and cuts what does not fit)."""
    longest = max((len(str(t)) for t in texts), default=0)
    return int(min(most, max(least, longest * GRID_CHAR_PX + GRID_PAD_PX)))


def slide_table(rows: list[dict]) -> None:
    """Checks as a Markdown table in slide type (the normal page's data grid draws small
    type on a canvas): pass or fail, the printed value, the notebook's and attnviz's."""
    head = (_("printed value"), _("notebook"), "attnviz", _("largest |error|"))
    lines = ["| | " + " | ".join(h.replace("|", "\\|") for h in head) + " |", "|---" * 5 + "|"]
    for r in rows:
        cells = (
            _("✓ pass") if r["passed"] else _("✗ FAIL"),
            r["label"],
            short(r["expected"]),
            short(r["computed"]),
            power_of_ten(r["max_abs_error"], 3),
        )
        lines.append("| " + " | ".join(str(c).replace("|", "\\|") for c in cells) + " |")
    st.markdown("\n".join(lines))


def slide_parts() -> list[tuple[str, tuple[int, int], str]]:
    """The presenter view's slides: (preset, rows, title), each preset's checks at most
    :data:`SLIDE_ROWS` a slide, split evenly."""
    parts = []
    for name in presets.names():
        n, title = len(checks(name, i18n.current())), presets.get(name).title
        k = max(1, -(-n // SLIDE_ROWS))
        cut = [round(j * n / k) for j in range(k + 1)]
        parts += [
            (name, (a, b), title if k == 1 else _("{title} ({i} of {k})").format(
                title=title, i=j + 1, k=k))
            for j, (a, b) in enumerate(zip(cut, cut[1:], strict=False))
        ]  # fmt: skip
    return parts


parts = slide_parts() if ui.present.presenting() else []
step = ui.steps([title for __, __, title in parts])  # a preset (or a part of one) a slide
if step.presenting:
    name, part, __ = parts[step.index]
    card(name, part)
else:
    total = passed = 0
    for name in presets.names():
        ok, count = card(name)
        total += count
        passed += ok
    st.markdown(
        _("**{passed} of {total}** printed values reproduced.").format(passed=passed, total=total)
    )
    st.caption(
        _(
            "Tolerance = half a unit of the last digit the notebook printed. The UDL notebooks "
            "use one token per column (D×N); their values are compared in that layout."
        )
    )
if view is not None and step.rest:
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
