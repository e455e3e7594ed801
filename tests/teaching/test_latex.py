"""LaTeX for slides: bmatrix parsed back into the same numbers, escaping, the worked example
recomputed independently with plain NumPy."""

from __future__ import annotations

import math
import re

import numpy as np
import pytest

from attnviz import engine
from attnviz.teaching import latex


@pytest.mark.parametrize("shape", [(1, 1), (3, 4), (8, 8), (5,)])
@pytest.mark.parametrize("decimals", [2, 3])
def test_bmatrix_parses_back_within_the_rounding(shape, decimals):
    a = np.random.default_rng(sum(shape) + decimals).normal(scale=3, size=shape)
    tex = latex.bmatrix(a, decimals)
    assert tex.startswith("\\begin{bmatrix}") and tex.endswith("\\end{bmatrix}")
    (back,) = latex.parse_bmatrix(tex)
    assert back.shape == np.atleast_2d(a).shape
    assert np.abs(back - np.atleast_2d(a)).max() <= 0.5 * 10**-decimals + 1e-12
    # exactly the numbers shown, rounded as on screen
    assert re.findall(r"-?\d+\.\d+", tex)[0] == f"{np.ravel(a)[0]:.{decimals}f}".replace(
        "-0.00", "0.00"
    )


def test_bmatrix_masked_cells_and_negative_zero():
    a = np.array([[0.0, -np.inf], [-0.001, 1.239]])
    tex = latex.bmatrix(a)
    assert r"-\infty" in tex and "-0.00" not in tex
    (back,) = latex.parse_bmatrix(tex)
    assert back[0, 1] == -math.inf and back[1, 1] == pytest.approx(1.24)


def test_parse_rejects_ragged_and_junk():
    with pytest.raises(ValueError):
        latex.parse_bmatrix("\\begin{bmatrix}1 & 2 \\\\ 3\\end{bmatrix}")
    with pytest.raises(ValueError):
        latex.parse_bmatrix("\\begin{bmatrix}1 & x\\end{bmatrix}")


def test_is_small():
    assert latex.is_small(np.zeros((8, 8)))
    assert not latex.is_small(np.zeros((9, 2)))
    assert not latex.is_small(np.zeros((2, 2, 2)))
    assert not latex.is_small(np.zeros((0, 3)))


@pytest.mark.parametrize(
    ("label", "expected"),
    [
        ("a_b", r"a\_b"),
        ("50%", r"50\%"),
        ("$x$", r"\$x\$"),
        ("{#&}", r"\{\#\&\}"),
        ("\\end{document}", r"\textbackslash{}end\{document\}"),
        ("~^", r"\textasciitilde{}\textasciicircum{}"),
        ("two\nlines", "two lines"),
        ("plain", "plain"),
    ],
)
def test_escape(label, expected):
    assert latex.escape(label) == expected


def test_text_name_is_escaped():
    assert latex.text_name("S_masked") == r"\text{S\_masked}"


@pytest.mark.parametrize("masked", [False, True])
def test_worked_example_numbers_parse_back(masked):
    rng = np.random.default_rng(7)
    n, dk, query = 5, 3, 3
    q, k, v = (rng.normal(size=(n, dk)) for _ in range(3))
    mask = np.tril(np.ones((n, n), bool)) if masked else None
    labels = ["the", "c_a_t", "50%", "\\evil{", "}"]
    scale = 1 / math.sqrt(dk)
    tex = latex.worked_example(
        labels=labels, q=q, k=k, v=v, query=query, scale=scale, mask=mask, head=1
    )
    # independent recomputation, plain NumPy
    s = (q @ k.T)[query] * scale
    if masked:
        s = np.where(np.arange(n) <= query, s, -np.inf)
    w = np.exp(s - s.max())
    w /= w.sum()
    out = w @ v
    mats = latex.parse_bmatrix(tex)
    expected = [q[query], k, v, (q @ k.T)[query], (q @ k.T)[query] * scale]
    expected += [s] if masked else []
    expected += [w, out]
    assert len(mats) == len(expected)
    for got, want in zip(mats, expected, strict=True):
        want = np.atleast_2d(want)
        assert got.shape == want.shape
        fin = np.isfinite(want)
        assert np.array_equal(np.isfinite(got), fin)
        assert np.abs(got[fin] - want[fin]).max() <= 0.0005 + 1e-12
    # the engine agrees with the recomputation
    ew, _ = engine.scaled_dot_product_attention(q, k, v, mask=mask, scale=scale)
    assert np.allclose(ew[query], w)
    # labels are escaped: no raw special characters from them
    assert r"\texttt{\textbackslash{}evil\{}" in tex and r"c\_a\_t" in tex
    assert tex.count("\\begin{document}") == 1 and tex.rstrip().endswith("\\end{document}")


def test_worked_example_rejects_bad_query():
    z = np.zeros((2, 2))
    with pytest.raises(ValueError, match="query"):
        latex.worked_example(labels=["a", "b"], q=z, k=z, v=z, query=2, scale=1.0)


# --------------------------------------------------------------------------- a cell's arithmetic


def _result(n: int = 5, d: int = 8, heads: int = 2, mask=None):
    params = engine.AttentionParams.random(d, seed=4, init="xavier")
    x = np.random.default_rng(1).standard_normal((n, d))
    return engine.multi_head_attention(x, params, num_heads=heads, mask=mask)


def _numbers(text: str) -> list[float]:
    return [float(v) for v in re.findall(r"-?\d+\.\d+", text)]


def test_cell_latex_shows_the_views_numbers():
    from attnviz.teaching import explain

    res = _result(mask=engine.causal_mask(5))
    c = explain.cell(res, 1, 3, 2)
    tex = latex.cell_latex(c, ["a", "b", "c_d", "e", "f"])
    q, k, exps, *values = latex.parse_bmatrix(tex)
    np.testing.assert_allclose(q[0], res.queries[1, 3], atol=5e-5)
    np.testing.assert_allclose(k[0], res.keys[1, 2], atol=5e-5)
    np.testing.assert_allclose(exps[0], c.row_exps, atol=5e-5)
    assert exps[0][4] == 0  # causal: key 4 masked for query 3
    out = values[-1][0]  # the sum of the weighted values, the head's output row
    np.testing.assert_allclose(out, res.head_outputs[1, 3], atol=5e-5)
    assert len(values) == 1 + 5  # one value vector per key, then the output
    for t in range(4):  # the products term by term, then their sum
        assert f"{c.products[t]:.4f}".lstrip("-") in tex
    assert f"= {c.dot:.4f}" in tex and f"{c.weight:.4f}" in tex
    assert rf"\frac{{{c.row_exps[2]:.4f}}}{{{c.exp_sum:.4f}}} = {c.weight:.4f}" in tex
    assert "c\\_d" in tex.splitlines()[0]  # labels escaped, in the comment only
    assert tex.count(r"\begin{gathered}") == 1 and tex.rstrip().endswith(r"\end{gathered}")


def test_cell_text_reads_the_same_numbers():
    from attnviz.teaching import explain

    res = _result()
    c = explain.cell(res, 0, 1, 4)
    text = latex.cell_text(c)
    lines = text.splitlines()
    assert len(lines) == 6 and [ln[:2] for ln in lines] == ["1.", "2.", "3.", "4.", "5.", "6."]
    assert "\\" not in text and "{" not in text  # no LaTeX in the text
    assert _numbers(lines[4])[-1] == pytest.approx(c.weight, abs=5e-5)
    assert f"= {c.dot:.4f}." in lines[0]
    assert _numbers(lines[1])[-1] == pytest.approx(c.dot * c.scale, abs=5e-5)
    np.testing.assert_allclose(_numbers(lines[5])[-4:], c.output, atol=5e-5)


def test_masked_and_fully_masked_cells():
    from attnviz.teaching import explain

    res = _result(mask=engine.padding_mask(5, 2))
    c = explain.cell(res, 0, 1, 4)
    assert r"s_{1,4} = -\infty" in latex.cell_latex(c)
    assert "is −∞ and the weight is 0" in latex.cell_text(c)
    res = _result(n=3, mask=engine.padding_mask(3, 3))
    c = explain.cell(res, 1, 0, 0)
    text = latex.cell_text(c)
    assert "every exponential is 0" in text and "no key to attend to" in text
    assert "nan" not in text.lower() and "nan" not in latex.cell_latex(c).lower()


def test_long_rows_are_shortened():
    from attnviz.teaching import explain

    res = _result(n=20, d=32, heads=1)
    c = explain.cell(res, 0, 7, 19)
    tex = latex.cell_latex(c)
    _, _, exps, *_ = latex.parse_bmatrix(tex.replace(r"\cdots", "0"))
    assert exps.shape == (1, latex.CELL_TERMS + 1)  # 10 first, "…", the last 2
    assert exps[0][-1] == pytest.approx(c.row_exps[19], abs=5e-5)
    assert r"\cdots" in tex and "…" in latex.cell_text(c)


def test_display_extent_grows_with_a_matrix_rows_columns_and_neighbours():
    """The em size a slide sizes the question's matrices by (attnviz.ui.projector)."""
    one = latex.display_extent("Q:\n$$\nQ = \\begin{bmatrix} 1 & 2 \\\\ 3 & 4 \\end{bmatrix}\n$$")
    taller = latex.display_extent(
        "$$Q = \\begin{bmatrix} 1 & 2 \\\\ 3 & 4 \\\\ 5 & 6 \\end{bmatrix}$$"
    )
    wider = latex.display_extent(
        "$$Q = \\begin{bmatrix} 1 & -2 & 3 \\\\ 3 & 4 & 5 \\end{bmatrix}$$"
    )
    two = latex.display_extent(
        "$$Q = \\begin{bmatrix} 1 & 2 \\\\ 3 & 4 \\end{bmatrix} \\qquad "
        "K = \\begin{bmatrix} 1 & 2 \\\\ 3 & 4 \\end{bmatrix}$$"
    )
    assert taller[1] > one[1] and taller[0] == one[0]
    assert wider[0] > one[0] and wider[1] == one[1]
    assert two[0] > 2 * one[0] and two[1] == one[1]
    assert latex.display_extent("No formula, only $x$ inline.") == (0.0, 0.0)
