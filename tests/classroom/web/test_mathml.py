"""attnviz.classroom.web.mathml: the exercises' LaTeX as MathML, every command of every kind."""

from __future__ import annotations

import re
import xml.dom.minidom

import pytest

from attnviz.classroom import exercises
from attnviz.classroom.web.mathml import UnknownLatex, to_mathml


def parse(markup: str):
    """The markup as XML (MathML is XML: an unclosed element fails here)."""
    return xml.dom.minidom.parseString(markup).documentElement


def test_a_matrix_has_its_rows_and_cells():
    m = parse(to_mathml(r"Q = \begin{bmatrix} -2 & 1 \\ 0.5 & 3 \end{bmatrix}", display=True))
    assert m.getAttribute("display") == "block"
    (table,) = m.getElementsByTagName("mtable")
    assert table.getAttribute("class") == "bmatrix"
    rows = table.getElementsByTagName("mtr")
    cells = [[td.toxml() for td in r.getElementsByTagName("mtd")] for r in rows]
    assert len(rows) == 2 and [len(r) for r in cells] == [2, 2]
    assert "<mo>−</mo><mn>2</mn>" in cells[0][0] and "<mn>0.5</mn>" in cells[1][0]


def test_fractions_roots_scripts_and_words():
    m = to_mathml(
        r"a_{3,3} = \frac{e^{0.5}}{\sum_j e^{s_j}} \approx \mathrm{softmax}(x) / \sqrt{2}"
    )
    assert "<msub><mi>a</mi><mrow><mn>3</mn><mo>,</mo><mn>3</mn></mrow></msub>" in m
    assert "<mfrac><msup><mi>e</mi><mn>0.5</mn></msup>" in m
    assert '<mi mathvariant="normal">softmax</mi>' in m and "<msqrt><mn>2</mn></msqrt>" in m
    assert "<mo>≈</mo>" in m
    parse(m)
    both = to_mathml(r"x_i^2")
    assert "<msubsup><mi>x</mi><mi>i</mi><mn>2</mn></msubsup>" in both


def test_text_keeps_its_spaces_and_is_escaped():
    m = to_mathml(r"\text{if <b>masked</b> & more}")
    assert "<mtext>if &lt;b&gt;masked&lt;/b&gt; &amp; more</mtext>" in m
    assert "<b>" not in m


@pytest.mark.parametrize(
    "tex", [r"\unknowncommand x", r"\begin{align} x \end{align}", "{x", "x}", "\\"]
)
def test_what_it_cannot_read_raises(tex):
    with pytest.raises(UnknownLatex):
        to_mathml(tex)


FORMULA = re.compile(r"\$\$(.+?)\$\$|\$([^$]+)\$", re.S)


def test_every_formula_of_every_kind_converts():
    """Every formula the exercise generator writes (200 sets: every kind many times)."""
    seen = 0
    kinds = set()
    for seed in range(200):
        for e in exercises.generate(seed=seed, count=len(exercises.KINDS)):
            kinds.add(e.kind)
            for text in (e.prompt, e.explanation, e.hint):
                for display, inline in FORMULA.findall(text):
                    parse(to_mathml(display or inline, display=bool(display)))
                    seen += 1
    assert kinds == set(exercises.KINDS)
    assert seen > 5000


def test_a_sign_stays_with_its_number():
    """The sign of "(−1)" and "+ −2" is the first of its own row (a prefix, no spaces around
    it), a minus between two terms is not."""
    m = to_mathml(r"1 \cdot (-1) + -2 - 3")
    assert "<mo>(</mo><mrow><mo>−</mo><mn>1</mn></mrow><mo>)</mo>" in m
    assert "<mo>+</mo><mrow><mo>−</mo><mn>2</mn></mrow><mo>−</mo><mn>3</mn>" in m


def test_a_minus_after_a_closing_bracket_subtracts_and_a_trailing_one_is_kept():
    """ "(−0.6) − (−0.9)": the middle minus is between two terms (it was read as the sign
    of "(−0.9)"); "x −" (a formula the student page cut after its minus) ends with it."""
    m = to_mathml(r"(-0.6) - (-0.9)")
    assert "<mo>)</mo><mo>−</mo><mo>(</mo><mrow><mo>−</mo><mn>0.9</mn></mrow>" in m
    assert to_mathml("x -").endswith("<mi>x</mi><mo>−</mo></mrow></math>")
    assert "<mrow><mo>−</mo><mn>2</mn></mrow>" in to_mathml("= -2")


def test_a_braced_decimal_comma_is_one_number():
    """A Spanish exercise writes "0{,}35" (exercise_kit.tex): one <mn>0,35</mn>, as "0.35"
    is one <mn>0.35</mn>, not 0, a comma and 35."""
    m = to_mathml(r"\begin{bmatrix} -0{,}5 & 1{,}25 \end{bmatrix} \approx 0{,}35")
    assert re.findall(r"<mn>([^<]*)</mn>", m) == ["0,5", "1,25", "0,35"], m
    parse(m)
