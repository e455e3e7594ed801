"""attnviz.classroom.web.render: the exercises' Markdown as HTML with MathML."""

from __future__ import annotations

import re

import pytest

from attnviz.classroom import exercises
from attnviz.classroom.web.render import inline_html, text_html


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


def test_a_long_sum_is_cut_into_formulas_that_wrap_after_its_operators():
    """A browser does not break a line inside a <math>: the explanation's sum "q_i · k_j =
    (−0.1) · 0.0 + ... = 0.01" ran 180 px past a phone's edge as one formula."""
    tex = r"q_i \cdot k_j = (-0.1) \cdot 0.0 + 0.2 \cdot (-0.6) - (-0.9) \cdot (-0.5) = -0.01"
    html = inline_html(f"${tex}$")
    pieces = re.findall(r"<math[^>]*>(.*?)</math>", html)
    assert html.startswith('<span class="formula"><math') and html.endswith("</math></span>")
    assert len(pieces) == 5 and "</math> <math" in html  # a space: where a line may break
    text = [re.sub(r"<[^>]+>", "", p) for p in pieces]
    assert text == ["qi·kj=", "(−0.1)·0.0+", "0.2·(−0.6)−", "(−0.9)·(−0.5)=", "−0.01"]
    assert "<mrow><mo>−</mo><mn>0.01</mn></mrow>" in pieces[-1]  # a sign, with its number


def test_a_formula_is_not_cut_inside_a_group_a_matrix_or_after_a_sign():
    for tex in (r"a_{i,i-1}", r"\mathrm{softmax}(q_0 \cdot k_j / \sqrt{3})", r"-2", r"e^{-1+x}"):
        assert inline_html(f"${tex}$").count("<math") == 1, tex
    matrix = r"Q = \begin{bmatrix} 1 & -2 \end{bmatrix}"  # its name stays beside it
    assert text_html(f"$${matrix}$$").count("<math") == 1


def test_a_long_display_formula_is_cut_too_and_keeps_its_display_style():
    html = text_html(r"$$a_{1,1} = \frac{e^{0.0}}{e^{-1.0} + e^{0.0}} = 0.3315 \approx 0.33$$")
    assert html.startswith('<div class="eqs"><span class="formula"><math display="block">')
    assert html.count('<math display="block">') == 4 and "<mfrac>" in html
