"""Words, not test output: what a student reads on every page (issue 25).

Every page run of ``tests/test_app.py`` (every page under every configuration) reads
everything the page writes: Markdown, captions, notices, metrics, labels of buttons, tabs and
boxes, table cells, and the charts' titles, trace names, hover templates and cell text
(``tests/page_words.py``). None of it may be written like a test's output: no scientific
notation ("8.41e-01"), no Python booleans ("NaN anywhere: False"), no "1 keys" or
"row(s)". Here: the rules catch the old wording, and :mod:`attnviz.teaching.wording` writes the
numbers.
"""

from __future__ import annotations

import re

import numpy as np
import pytest
from page_words import SCIENTIFIC, offences

from attnviz import engine
from attnviz.teaching import explain, latex
from attnviz.teaching.wording import plural, power_of_ten, readable, rounding


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
    assert len(offences(old)) == len(old)
    fine = ["0.84", "2.2 × 10⁻¹⁶", "1 other key (a=0.082)", "3 other keys", "no NaN anywhere."]
    assert not offences(fine)


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
