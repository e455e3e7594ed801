"""attnviz.viz.classroom: the tally's bars hold the counts of ClassStore.tally."""

import pytest

from attnviz import i18n, viz
from tests.ui.test_board_js import _dump


def tally(*pairs):
    return {
        i: {"answered": r + w, "right": r, "wrong": w, "wrong_answers": []}
        for i, (r, w) in enumerate(pairs)
    }


def test_right_and_wrong_are_stacked_per_question_in_order():
    fig = viz.classroom.tally_figure(tally((1, 2), (0, 0), (3, 0)), ["1. a", "2. b", "3. c"])
    right, wrong = fig.data
    assert (right.name, wrong.name) == ("Right", "Wrong")
    assert list(right.x) == [1, 0, 3] and list(wrong.x) == [2, 0, 0]
    assert list(right.y) == ["1. a", "2. b", "3. c"]
    assert list(right.text) == ["1", "", "3"]  # counts as text: colour is not the only cue
    assert fig.layout.barmode == "stack" and fig.layout.yaxis.autorange == "reversed"
    assert right.marker.color != wrong.marker.color


def test_the_axis_reaches_the_number_of_students():
    fig = viz.classroom.tally_figure(tally((1, 0)), ["1. a"], students=30)
    assert fig.layout.xaxis.range[1] >= 30
    empty = viz.classroom.tally_figure(tally((0, 0)), ["1. a"])
    assert empty.layout.xaxis.range[1] > 0


def test_labels_are_plotly_text_and_must_match():
    fig = viz.classroom.tally_figure(tally((1, 0)), ["<b>x</b>"])
    assert "<b>" not in fig.data[0].y[0]
    with pytest.raises(ValueError, match="2 items, 1 labels"):
        viz.classroom.tally_figure(tally((1, 0), (0, 1)), ["1. a"])


def test_the_tallys_table_holds_the_counts_per_question():
    """The chart's Table (attnviz/ui/board/js/table.js, in Node): a row per question named by
    its label, Right and Wrong as counts (issue 25: it showed "students 0 | masked")."""
    labels = ["1. argmax", "2. weight <b>", "3. score"]
    fig = viz.classroom.tally_figure(tally((1, 2), (0, 0), (3, 1)), labels, students=4)
    (table,) = _dump(fig)["tables"]
    assert table["caption"] == "The room's answers" and table["digits"] == 0
    assert table["colNames"] == ["Right", "Wrong"]
    assert [r["name"] for r in table["rows"]] == labels  # plotly's escaping undone
    assert [[c["value"] for c in r["cells"]] for r in table["rows"]] == [[1, 2], [0, 0], [3, 1]]
    choices = viz.classroom.choice_tally_figure(["t0", "t1", "t2"], [4, 0, 1], answer=0)
    (table,) = _dump(choices)["tables"]
    assert [r["name"] for r in table["rows"]] == ["t0 ✓", "t1", "t2"]
    assert [r["cells"][0]["value"] for r in table["rows"]] == [4, 0, 1]
    assert table["colNames"] == ["students"] and table["digits"] == 0


def test_in_arabic_each_bar_name_is_one_isolate_and_the_legend_reads_from_the_right():
    """The tally's names ("1. argmax") on the axis: one first-strong isolate each in a
    right-to-left language, so that the number stands right of the words, not after them
    on the left; the data, the hover and the Table keep the names as they are. The legend
    reversed there (Right, then Wrong, read from the right). A gap between the names and
    the axis line in every language (they touched)."""
    labels = ["1. أي مفتاح يفوز", "2. وزن انتباه واحد"]
    for fig in (
        viz.classroom.tally_figure(tally((1, 0), (0, 1)), labels),
        viz.classroom.choice_tally_figure(labels, [1, 0]),
    ):
        assert fig.layout.yaxis.ticklabelstandoff > 0
        assert list(fig.layout.yaxis.ticktext) == labels  # English: as they are
    with i18n.use("ar"):
        fig = viz.classroom.tally_figure(tally((1, 0), (0, 1)), labels)
        choices = viz.classroom.choice_tally_figure(labels, [1, 0])
    for f in (fig, choices):
        assert list(f.layout.yaxis.ticktext) == [i18n.FSI + s + i18n.PDI for s in labels]
        assert list(f.layout.yaxis.tickvals) == labels == list(f.data[0].y)
    assert fig.layout.legend.traceorder == "reversed"
    # the title starts the line at the right, the legend ends it at the left (they met)
    assert (fig.layout.title.xanchor, fig.layout.legend.xanchor) == ("right", "left")
    with i18n.use("es"):
        spanish = viz.classroom.tally_figure(tally((1, 0), (0, 1)), labels)
    assert list(spanish.layout.yaxis.ticktext) == labels
    assert spanish.layout.legend.traceorder == "normal"
    assert (spanish.layout.title.xanchor, spanish.layout.legend.xanchor) == ("left", "right")
