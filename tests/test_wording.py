"""Words, not test output: what a student reads on every page (issue 25).

Every page is run (AppTest) at a few settings and everything it writes is read: Markdown,
captions, notices, metrics, labels of buttons, tabs and boxes, table cells, and the charts'
titles, trace names, hover templates and cell text. None of it may be written like a test's
output: no scientific notation ("8.41e-01"), no Python booleans ("NaN anywhere: False"), no
"1 keys" or "row(s)". :mod:`attnviz.wording` writes the numbers, tested here too.
"""

from __future__ import annotations

import json
import re

import numpy as np
import pytest
from board_view import figures_of
from test_app import CONFIGS, PAGES, assert_clean, open_exports, run_app

from attnviz import engine, explain, latex
from attnviz.wording import plural, power_of_ten, readable, rounding

#: "8.41e-01", "2.2e-16", "1E+03": a number in scientific notation.
SCIENTIFIC = re.compile(r"(?<![\w.])[-+]?\d+(\.\d+)?[eE][-+]?\d+\b")
#: A Python boolean shown as a value ("NaN anywhere: False", "scale = True", "(False)"),
#: not the word ("True values" is a notebook's own label).
BOOLEAN = re.compile(r"[:=(]\s*(True|False)\b|\b(True|False)\s*[).,;]|\b(True|False)$")
#: Plurals written for a count of 1, or hedged: "other 1 keys", "1 rows", "row(s)".
BAD_PLURAL = re.compile(r"(?<![\d.])1 (other )?(keys|rows|heads|tokens|values|matrices)\b|\w\(s\)")
#: A plotly number format in scientific notation ("%{z:.2e}").
PLOTLY_SCIENTIFIC = re.compile(r"%\{[^}]*:[^}]*e\}")

WORDING_PAGES = PAGES  # the sidebar's pages, Compare among them
WORDING_CONFIGS = ["defaults", "N=1", "causal", "padding-all", "preset", "scale-none"]


def _texts(at) -> list[str]:
    """Everything the run writes for a reader, as strings."""
    out: list[str] = []
    for kind in ("title", "header", "subheader", "markdown", "caption", "info", "warning",
                 "success", "error", "text"):  # fmt: skip
        out += [el.value for el in at.get(kind)]
    out += [f"{m.label}: {m.value}" for m in at.metric]
    out += [e.label for e in at.expander]
    out += [b.label for b in (*at.button, *at.get("download_button"))]
    out += [t.label for t in at.tabs]
    for df in at.dataframe:
        frame = df.value
        out += [str(c) for c in frame.columns]
        out += [str(v) for v in frame.to_numpy().ravel() if isinstance(v, str | bool)]
    return out


def _figure_texts(at) -> list[str]:
    """The words of every chart: titles, axis and colour-bar titles, trace names, hover
    templates and the values written in cells."""
    out: list[str] = []
    for key, fig in figures_of(at).items():
        layout = fig.get("layout", {})
        out.append(json.dumps(layout.get("title", {}).get("text", "")))
        for name, axis in layout.items():
            if name.startswith(("xaxis", "yaxis")) and isinstance(axis, dict):
                out.append(str(axis.get("title", {}).get("text", "")))
        for trace in fig.get("data", []):
            out += [f"{key}: {trace.get(f, '')}" for f in ("name", "hovertemplate")]
            text = trace.get("text")
            if isinstance(text, list):
                out += [str(t) for row in text for t in (row if isinstance(row, list) else [row])]
    return out


def _offences(texts: list[str]) -> list[str]:
    bad = []
    for t in texts:
        for rule in (SCIENTIFIC, BOOLEAN, BAD_PLURAL, PLOTLY_SCIENTIFIC):
            if rule.search(t):
                bad.append(f"{rule.pattern!r}: {t[:200]}")
    return bad


# the notebooks page does not depend on the sidebar's sizes: its defaults and a preset
WORDING_CASES = [
    (page, config)
    for page in WORDING_PAGES
    for config in WORDING_CONFIGS
    if page != "pages/notebooks.py" or config in ("defaults", "preset")
]


@pytest.mark.parametrize(("page", "config"), WORDING_CASES)
def test_every_page_reads_as_words_not_test_output(page, config):
    at = open_exports(run_app(CONFIGS[config], page))
    assert_clean(at)
    texts = _texts(at) + _figure_texts(at)
    assert len(texts) > 20, "the page was read"
    assert not _offences(texts), _offences(texts)


def test_the_rules_catch_the_old_wording():
    """The checks fail on what the pages wrote before (issue 25)."""
    old = [
        "0.00e+00",
        "8.41e-01",
        "Rows with a visible key sum to 1 (max error 2.2e-16).",
        "(NaN anywhere: False).",
        "other 1 keys (Σa=0.082)",
        "the new token added 1 row(s) per head.",
        "scale = True, mask = none",
        "difference = %{z:.2e}",
    ]
    assert len(_offences(old)) == len(old)
    fine = ["0.84", "2.2 × 10⁻¹⁶", "1 other key (a=0.082)", "3 other keys", "no NaN anywhere."]
    assert not _offences(fine)


# --------------------------------------------------------------------------- the numbers


@pytest.mark.parametrize(
    ("x", "want"),
    [
        (0.0, "0"),
        (-0.0, "0"),
        (0.841, "0.84"),
        (8.41, "8.4"),
        (841.3, "841"),
        (0.5, "0.5"),
        (1.0, "1"),
        (0.001, "0.001"),
        (2.220446049250313e-16, "2.2 × 10⁻¹⁶"),
        (-0.0004, "-4 × 10⁻⁴"),
        (12345678.0, "1.2 × 10⁷"),
        (float("nan"), "NaN"),
        (float("-inf"), "−∞"),
    ],
)
def test_readable_numbers(x, want):
    assert readable(x) == want
    assert not SCIENTIFIC.search(readable(x))


def test_powers_of_ten_and_rounding():
    assert power_of_ten(1e-12) == "1 × 10⁻¹²"
    assert power_of_ten(4.97e-4, 3) == "4.97 × 10⁻⁴"
    assert power_of_ten(5.001e-9, 1) == "5 × 10⁻⁹"
    assert rounding(0.0) == "exactly 0"
    assert rounding(-2.2e-16) == "2.2 × 10⁻¹⁶ (floating-point rounding)"
    assert rounding(0.8412) == "0.841"  # a real difference is a plain number


def test_plurals():
    assert [plural(n, "key") for n in (0, 1, 2)] == ["0 keys", "1 key", "2 keys"]
    assert plural(1, "small matrix", "small matrices") == "1 small matrix"
    assert plural(4, "small matrix", "small matrices") == "4 small matrices"


# --------------------------------------------------------------------------- cell names


def test_cell_names_stay_unambiguous_above_ten_tokens():
    """a_{12,5} and a_{1,25}, not a_{125} for both: every subscript of a cell's LaTeX (its
    steps, its copy box, the worked example) has a comma between query and key."""
    n = 30
    x = np.random.default_rng(0).standard_normal((n, 4))
    params = engine.AttentionParams.random(4, seed=1, init="xavier")
    res = engine.multi_head_attention(x, params, num_heads=1, mask=engine.causal_mask(n))
    q, k, v = res.queries, res.keys, res.values
    texts = []
    for i, j in ((12, 5), (1, 25), (29, 29)):
        c = explain.cell(res, 0, i, j)
        texts += [tex for _, tex, _ in latex.cell_steps(c)] + [latex.cell_latex(c)]
        assert f"a_{{{i},{j}}}" in latex.cell_latex(c)
        assert f"a_{i},{j} = " in latex.cell_text(c)
    # a cell's own steps name no weight, score or exponential by one number (a_{125})
    single = re.compile(r"\b[ase]_\{\d+\}")
    for t in texts:
        assert not single.search(t), single.search(t).group(0)
    # the worked example names rows by their query (a_{12}: the row of query 12) and their
    # entries with a comma (a_{12,j}), never a_{12j}
    example = latex.worked_example(labels=[f"t{t}" for t in range(n)], q=q[0], k=k[0],
                                   v=v[0], query=12, scale=0.5, mask=None, head=0)  # fmt: skip
    assert "a_{12,j}" in example and "s_{12,m}" in example
    glued = re.compile(r"\b[ase]_\{\d+[jm]\}")  # a_{12j}
    for t in [*texts, example]:
        assert not glued.search(t), glued.search(t).group(0)
