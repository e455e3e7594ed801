"""The view questions of the other pages (attnviz.classroom.predict), as tables of cases: top_key
under a mask, previous_head numbered from 1, sharper_row, moved_row; a question without
a single answer (a tie, a masked row, one token, one head, no equal row) is refused with
the reason. The outline of a row answer (viz.classroom.outline_row)."""

from __future__ import annotations

import numpy as np
import pytest

from attnviz import classroom, engine, i18n, viz
from attnviz.classroom import predict


def softmax_rows(scores) -> np.ndarray:
    return engine.softmax(np.asarray(scores, dtype=float))


CAUSAL = engine.causal_mask(4)  # (4, 4) True = may attend
W4 = softmax_rows(np.random.default_rng(3).standard_normal((1, 4, 4)) * 2)  # (1, 4, 4)
W4_CAUSAL = engine.softmax(np.where(CAUSAL, W4 * 9, -np.inf))  # (1, 4, 4) masked


def test_the_kinds_are_the_stores():
    assert predict.KINDS == classroom.VIEW_KINDS
    assert all(len(k) <= 16 for k in predict.KINDS)  # the store's kind column


# --------------------------------------------------------------------------- top_key, masked

TOP_KEY_MASKED = [
    # (weights, mask, query, keys offered, right key)
    (W4_CAUSAL, CAUSAL, 3, [0, 1, 2, 3], int(np.argmax(W4_CAUSAL[0, 3]))),
    (W4_CAUSAL, CAUSAL, 1, [0, 1], int(np.argmax(W4_CAUSAL[0, 1]))),
    (W4, None, 0, [0, 1, 2, 3], int(np.argmax(W4[0, 0]))),
    (  # padding: the last key hidden from everyone
        np.array([[[0.5, 0.2, 0.3, 0.0]] * 4]),
        np.array([[True, True, True, False]] * 4),
        2,
        [0, 1, 2],
        0,
    ),
]


@pytest.mark.parametrize(("w", "mask", "query", "keys", "key"), TOP_KEY_MASKED)
def test_top_key_offers_only_the_visible_keys(w, mask, query, keys, key):
    q = predict.top_key(w, 0, query, mask=mask, where=", causal mask")
    assert q.choices == tuple(f"key {j}" for j in keys)
    assert q.choices[q.answer] == f"key {key}" and q.detail == {
        "query": query,
        "head": 0,
        "key": key,
    }
    assert q.prompt.endswith("(head 0, causal mask)?")


TOP_KEY_REFUSED = [
    # (weights, mask, query, message)
    (W4_CAUSAL, CAUSAL, 0, "may see 1 key under this mask"),  # the first token
    (np.ones((1, 1, 1)), np.ones((1, 1), bool), 0, "may see 1 key"),  # one token
    (np.zeros((1, 3, 3)), np.zeros((3, 3), bool), 1, "every key is masked"),  # padding k = N
    (np.full((1, 3, 3), 1 / 3), None, 0, "no single answer"),  # a tie
    (  # a tie among the visible keys (the hidden one does not break it)
        np.array([[[0.5, 0.5, 0.0]] * 3]),
        np.array([[True, True, False]] * 3),
        0,
        "no single answer",
    ),
    (W4, np.ones((3, 3), bool), 0, r"mask must be \(N, M\)"),
    (W4, None, 4, "query 0..3"),
]


@pytest.mark.parametrize(("w", "mask", "query", "message"), TOP_KEY_REFUSED)
def test_top_key_refuses_a_question_without_one_answer(w, mask, query, message):
    with pytest.raises(ValueError, match=message):
        predict.top_key(w, 0, query, mask=mask)


# --------------------------------------------------------------------------- previous_head


def test_previous_head_numbers_the_heads_as_the_page_does():
    w = np.full((3, 4, 4), 0.25)
    w[1] = np.eye(4, k=-1)  # head 1: one back
    w[1, 0, 0] = 1.0
    q = predict.previous_head(w, where=" of layer 2")
    assert q.choices == ("head 0", "head 1", "head 2") and q.answer == 1
    assert (
        q.detail == {"head": 1}
        and q.prompt == "Which head of layer 2 looks at the previous token most?"
    )


PREVIOUS_REFUSED = [
    (np.full((3, 4, 4), 0.25), "no single answer"),  # every head alike: a tie
    (np.full((1, 4, 4), 0.25), "2 heads"),  # one head
    (np.ones((2, 1, 1)), "N >= 2"),  # one token
]


@pytest.mark.parametrize(("w", "message"), PREVIOUS_REFUSED)
def test_previous_head_refuses(w, message):
    with pytest.raises(ValueError, match=message):
        predict.previous_head(w)


# --------------------------------------------------------------------------- sharper_row

SCORES = np.array([[[2.0, 0.5, -1.0], [0.1, 0.0, 0.2], [1.0, 1.0, 1.0]]])  # (1, 3, 3)

SHARPER = [
    # (unscaled, scaled, query, sharper chart): a larger factor gives a sharper row
    (softmax_rows(SCORES * 8), softmax_rows(SCORES * 8 / np.sqrt(64)), 0, 0),
    (softmax_rows(SCORES * 8), softmax_rows(SCORES * 8 / np.sqrt(64)), 1, 0),
    (softmax_rows(SCORES), softmax_rows(SCORES * 4), 0, 1),  # a custom factor > 1
]


@pytest.mark.parametrize(("un", "sc", "query", "chart"), SHARPER)
def test_sharper_row_is_the_row_of_lower_entropy(un, sc, query, chart):
    q = predict.sharper_row(un, sc, 0, query)
    assert q.answer == chart and q.choices == predict.SHARPER_CHOICES
    assert q.detail == {"query": query, "head": 0, "chart": chart}
    entropies = [predict.entropy(un[0, query]), predict.entropy(sc[0, query])]
    assert entropies[chart] < entropies[1 - chart]


def test_sharper_row_names_another_pair_of_charts():
    q = predict.sharper_row(
        softmax_rows(SCORES), softmax_rows(SCORES * 3), 0, 0, ("A", "B"), "Which?"
    )
    assert (q.choices, q.answer, q.prompt) == (("A", "B"), 1, "Which?")


SHARPER_REFUSED = [
    # a row of equal scores is uniform scaled or not: a tie
    (softmax_rows(SCORES), softmax_rows(SCORES / 8), 2, "no single answer"),
    # d_k = 1: the factor is 1, both rows are the same
    (softmax_rows(SCORES), softmax_rows(SCORES), 0, "no single answer"),
    # under a causal mask query 0 sees one key: one-hot both ways
    (W4_CAUSAL, W4_CAUSAL, 0, "no single answer"),
    (np.zeros((1, 3, 3)), np.zeros((1, 3, 3)), 0, "every key is masked"),
    (softmax_rows(SCORES), softmax_rows(SCORES)[:, :2], 0, "one shape"),
]


@pytest.mark.parametrize(("un", "sc", "query", "message"), SHARPER_REFUSED)
def test_sharper_row_refuses(un, sc, query, message):
    with pytest.raises(ValueError, match=message):
        predict.sharper_row(un, sc, 0, query)


# --------------------------------------------------------------------------- moved_row


def shuffled(n: int = 5, d: int = 3, seed: int = 0):
    """Attention outputs (N, D) and the same rows shuffled by a permutation (new <- old)."""
    out = np.random.default_rng(seed).standard_normal((n, d))
    perm = np.array([2, 0, 4, 1, 3])[:n]
    return out, out[perm] * (1 + 1e-13), perm  # rounding-level noise


@pytest.mark.parametrize("row", range(5))
def test_moved_row_finds_where_the_old_row_went(row):
    out, moved, perm = shuffled()
    q = predict.moved_row(out, moved, row)
    new = int(np.flatnonzero(perm == row)[0])
    assert (q.answer, q.choices[q.answer], q.detail) == (
        new,
        f"row {new}",
        {"query": new, "old": row},
    )


def test_moved_row_refuses():
    out, moved, _ = shuffled()
    broken = moved + np.linspace(0.1, 0.5, 5)[:, None]  # positions added: no row equal
    with pytest.raises(ValueError, match="not equivariant"):
        predict.moved_row(out, broken, 1)
    twins = out.copy()
    twins[3] = twins[1]  # two equal tokens: two rows equal the old one
    with pytest.raises(ValueError, match="no single answer"):
        predict.moved_row(twins, twins, 1)
    with pytest.raises(ValueError, match="N >= 2"):
        predict.moved_row(out[:1], out[:1], 0)  # one token
    with pytest.raises(ValueError, match="row must be"):
        predict.moved_row(out, moved, 5)


# --------------------------------------------------------------------------- outline_row


@pytest.mark.parametrize(
    ("n", "layout", "row", "want"),
    [
        (5, "rows", 2, (-0.5, 4.5, 1.5, 2.5)),
        (5, "columns", 2, (1.5, 2.5, -0.5, 4.5)),
        (200, "rows", 7, (-1.0, 199.0, 5.0, 7.0)),  # pooled 2x2: the row's block
    ],
)
def test_outline_row_frames_the_whole_row(n, layout, row, want):
    fig = viz.heatmaps.attention_figure(np.full((n, n), 1 / n), what="weights", layout=layout)
    b = viz.style.pool_factor(n)
    span = (-b / 2, (n - 1) // b * b + b / 2)
    out = viz.classroom.outline_row(fig, row, span, layout, n)
    added = out.layout.shapes[len(fig.layout.shapes) :]
    assert len(added) == 2 and {(r.x0, r.x1, r.y0, r.y1) for r in added} == {want}
    with pytest.raises(ValueError, match="span"):
        viz.classroom.outline_row(fig, row, (3.0, 3.0), layout, n)


@pytest.mark.parametrize(
    ("kind", "detail", "row"),
    [
        ("sharper_row", {"query": 2, "head": 0, "chart": 1}, 2),
        ("moved_row", {"query": 4, "old": 1}, 4),
    ],
)
def test_answer_row(kind, detail, row):
    assert predict.answer_row(kind, detail) == row
    with pytest.raises(ValueError, match="cells are of"):
        predict.answer_cells(kind, detail, 5)
    with pytest.raises(ValueError, match="row answer"):
        predict.answer_row("top_key", detail)


def test_the_bench_runs_every_question_and_outline():
    """bench/class_hall.py --part predict --pages at a tiny N (no timing assertions): every
    part it times runs."""
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))  # and its kit
    import class_hall as bench

    out = bench.projector_parts(5, 1)
    assert set(out) == {
        "top_key_masked_ms", "sharper_row_ms", "moved_row_ms", "previous_head_9_heads_ms",
        "outline_row_ms", "outline_diagonal_ms",
    }  # fmt: skip
    assert all(v >= 0 for v in out.values())


def test_induction_head_is_the_head_that_looks_after_the_earlier_copy():
    ids = np.array([5, 6, 7, 5, 6, 7])  # a sequence repeated: queries 3..5 have a copy
    w = np.zeros((3, 6, 6))
    w[:, np.arange(6), np.arange(6)] = 1.0  # every head on itself ...
    for i in range(3, 6):  # ... but head 1 on the token after the earlier copy
        w[1, i] = 0.0
        w[1, i, i - 2] = 1.0  # ids[i - 3] == ids[i]: the key after it is i - 2
    q = predict.induction_head(w, ids, where=" at step 9")
    assert (q.kind, q.answer, q.choices) == ("induction_head", 1, ("head 0", "head 1", "head 2"))
    assert q.detail == {"head": 1, "back": 2, "first": 3} and "at step 9" in q.prompt
    assert predict.answer_cells(q.kind, q.detail, 6) == [(3, 1), (4, 2), (5, 3)]


def test_induction_head_refuses_what_the_chart_cannot_settle():
    w = np.full((2, 4, 4), 0.25)
    with pytest.raises(ValueError, match="no token repeats"):
        predict.induction_head(w, [1, 2, 3, 4])
    with pytest.raises(ValueError, match="tie"):
        predict.induction_head(w, [1, 2, 1, 2])
    with pytest.raises(ValueError, match="2 heads"):
        predict.induction_head(w[:1], [1, 2, 1, 2])


def test_induction_cells_of_an_irregular_sequence_are_not_outlined():
    ids = np.array([1, 2, 1, 3, 3])  # two repeats at different offsets
    w = np.zeros((2, 5, 5))
    w[0, 2, 1] = w[0, 4, 4] = 1.0
    q = predict.induction_head(w, ids)
    assert q.detail == {"head": 0} and predict.answer_cells(q.kind, q.detail, 5) == []


def test_a_question_names_whitespace_tokens_visibly():
    """A key that is a newline or a space is named "↵", "␣x", never a blank (issue 47)."""
    w = np.zeros((1, 3, 3))
    w[0, 2] = [0.1, 0.7, 0.2]
    q = predict.top_key(w, 0, 2, ["\n", " x", "\t"])
    assert [c.split("(")[-1] for c in q.choices] == ["↵)", "␣x)", "⇥)"]


def test_each_prediction_explains_its_answer_with_the_views_numbers():
    """Answered in a lesson's tour, a prediction says why (issue 48): the numbers that
    decide it, in the shown language, and the answer they point to."""
    w = np.array([[[0.1, 0.6, 0.3], [0.5, 0.2, 0.3], [0.2, 0.2, 0.6]]])  # (1, 3, 3)
    q = predict.top_key(w, 0, 0)
    assert "key 1: 0.60" in q.why and "0.30" in q.why  # the top and the runner-up
    one = predict.top_key(np.ones((1, 2, 1)), 0, 0)  # one key: no runner-up to name
    assert (one.choices, one.answer, one.why) == (("key 0",), 0, "")
    two = np.stack([np.eye(3), np.roll(np.eye(3), -1, axis=1)])  # head 1 looks back one
    q = predict.previous_head(two)
    assert q.answer == 1 and "head 1: 1.00" in q.why and "head 0: 0.00" in q.why
    q = predict.sharper_row(np.full((1, 2, 2), 0.5), np.array([[[0.9, 0.1], [0.5, 0.5]]]), 0, 0)
    assert q.answer == 1 and "1.00" in q.why and "0.47" in q.why  # bits: 1 and H(0.9, 0.1)
    x = np.random.default_rng(0).normal(size=(4, 3))
    perm = np.array([2, 0, 3, 1])
    q = predict.moved_row(x, x[perm], 0)
    assert q.answer == 1 and "old row 0 is now row 1" in q.why
    with i18n.use("es"):
        assert "0,60" in predict.top_key(w, 0, 0).why  # the decimal comma
