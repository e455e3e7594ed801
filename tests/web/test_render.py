"""attnviz.web.render: the exercises' Markdown as HTML with MathML."""

from __future__ import annotations

import pytest

from attnviz import exercises
from attnviz.web.render import inline_html, text_html


def test_matrices_side_by_side_become_one_math_each_in_a_wrapping_row():
    html = text_html(
        "Two:\n$$\nQ = \\begin{bmatrix} 1 & 2 \\end{bmatrix} \\qquad "
        "K = \\begin{bmatrix} 3 \\\\ 4 \\end{bmatrix}\n$$\nWhich?"
    )
    assert html.startswith('<p>Two:</p><div class="eqs">')
    assert html.count('<math display="block">') == 2 and "mspace" not in html
    assert html.endswith("<p>Which?</p>")


def test_a_qquad_inside_braces_stays_in_its_formula():
    html = text_html("$$\\frac{a \\qquad b}{c}$$")
    assert html.count("<math") == 1 and "mspace" in html


def test_bold_code_lists_and_paragraphs():
    html = text_html("The **largest** is `k`:\n\n- one $x_1$\n- two\nAfter the list.")
    assert "<p>The <strong>largest</strong> is <code>k</code>:</p>" in html
    assert "<ul><li>one <math" in html and "<li>two</li></ul><p>After the list.</p>" in html


def test_every_text_is_escaped():
    html = inline_html("<script>alert(1)</script> & **<b>x</b>**")
    assert "<script>" not in html and "&lt;script&gt;" in html and "&amp;" in html
    assert "<strong>&lt;b&gt;x&lt;/b&gt;</strong>" in html


def test_an_unreadable_formula_is_shown_as_its_source_not_dropped():
    html = text_html("Look: $\\weird{x} < 1$.")
    assert "<code>\\weird{x} &lt; 1</code>" in html
    with pytest.raises(ValueError):
        text_html("Look: $\\weird{x}$.", strict=True)


def test_every_exercise_renders_strictly_without_leftover_markup():
    for seed in range(60):
        for e in exercises.generate(seed=seed, count=len(exercises.KINDS)):
            for text in (e.prompt, e.explanation, e.hint):
                html = text_html(text, strict=True)
                assert "$" not in html and "**" not in html and "\\begin" not in html, html
