"""Every page counts layers and heads the same way: from 0, as the engine, the code box and
``?head=`` links do (issue 35). Read from what each page renders in AppTest: its text,
its widgets' labels and ranges, its charts' titles, panel titles, tick labels, hover
templates and the board's tables' numbers; a page that says "head 1" for the first head,
starts a Head slider at 1 or ticks its grid "H1 … H9" fails here."""

from __future__ import annotations

import re

import pytest
from board_view import figures_of
from page_words import figure_texts, texts_of
from test_app import assert_clean, run_app

from attnviz.ui import pages
from tests.ui.test_heads import IN_CI

#: "layer 3", "Head 0", "head 2 (layer 1)", "L12" / "H4" (a grid's ticks), "3/5" is not read
NAMED = re.compile(r"\b(layer|head)\s+(\d+)\b", re.IGNORECASE)
TICK = re.compile(r"^([LH])(\d+)$")
INDEX_WIDGETS = re.compile(r"^(layer|head)\b", re.IGNORECASE)


def _figure_words(at) -> list[str]:
    """Besides page_words.figure_texts: panel titles and notes (annotations), colour-bar
    titles."""
    out: list[str] = []
    for fig in figures_of(at).values():
        layout = fig.get("layout", {})
        out += [str(a.get("text", "")) for a in layout.get("annotations", []) or []]
    return out


def _ticks(at) -> dict[str, list[int]]:
    """Every run of "L<n>" / "H<n>" tick labels of the page's charts, by letter."""
    out: dict[str, list[int]] = {"L": [], "H": []}
    for fig in figures_of(at).values():
        layout = fig.get("layout", {})
        for name, axis in layout.items():
            if not (name.startswith(("xaxis", "yaxis")) and isinstance(axis, dict)):
                continue
            for t in axis.get("ticktext") or []:
                m = TICK.match(str(t))
                if m:
                    out[m.group(1)].append(int(m.group(2)))
        for trace in fig.get("data", []):
            for axis in ("x", "y"):
                labels = trace.get(axis)
                if isinstance(labels, list):
                    for t in labels:
                        m = TICK.match(str(t))
                        if m:
                            out[m.group(1)].append(int(m.group(2)))
    return out


def counted(at) -> dict[str, set[int]]:
    """The numbers the page gives layers and heads: {"layer": {...}, "head": {...}}."""
    named: dict[str, set[int]] = {"layer": set(), "head": set()}
    for text in texts_of(at) + figure_texts(at) + _figure_words(at):
        for word, n in NAMED.findall(text):
            named[word.lower()].add(int(n))
    ticks = _ticks(at)
    named["layer"] |= set(ticks["L"])
    named["head"] |= set(ticks["H"])
    return named


def index_widgets(at) -> list[tuple[str, str, int]]:
    """(kind, label, first value) of every slider or select box of a layer or a head."""
    out = []
    for s in at.slider:
        if INDEX_WIDGETS.match(s.label):
            out.append(("slider", s.label, int(s.min)))
    for s in at.selectbox:
        if INDEX_WIDGETS.match(s.label) and s.options:
            out.append(("selectbox", s.label, int(s.options[0])))
    return out


def _run(page: pages.Page, query: dict | None = None):
    at = run_app({"N": "5", **(query or {})}, page.file)
    missing = [e.value for e in at.error if "cannot load the model" in e.value]
    if page.runs_model and missing and not IN_CI:
        pytest.skip(f"{page.file}: {missing[0]}")
    assert_clean(at)
    return at


@pytest.mark.parametrize("page", pages.PAGES, ids=lambda p: p.slug)
def test_every_page_counts_layers_and_heads_from_0(page):
    """At a page's defaults the first layer and head are on screen (the head view, the
    grid's ticks, the picker): a page that names a layer or a head names 0 among them, and
    every layer or head slider and select box starts at 0."""
    at = _run(page)
    named = counted(at)
    for kind in ("layer", "head"):
        if named[kind]:
            assert 0 in named[kind], f"{page.slug}: {kind}s named {sorted(named[kind])}, no 0"
    for widget, label, first in index_widgets(at):
        assert first == 0, f"{page.slug}: the {widget} {label!r} starts at {first}"


#: The model pages at their last layer and head (by the link): nothing may say a number
#: past it, as "layer 30" or "H9" of a 30 x 9 model counted from 1 would.
LAST = [
    ("decoder", {"dec_L": "29", "dec_H": "8"}, 30, 9),
    ("real_model", {"rm_L": "5", "rm_H": "11"}, 6, 12),
]


@pytest.mark.parametrize(("slug", "query", "layers", "heads"), LAST, ids=[c[0] for c in LAST])
def test_model_pages_name_their_last_head_as_count_minus_1(slug, query, layers, heads):
    at = _run(pages.page(slug), query)
    named = counted(at)
    assert layers - 1 in named["layer"] and heads - 1 in named["head"], named
    assert max(named["layer"]) == layers - 1, sorted(named["layer"])
    assert max(named["head"]) == heads - 1, sorted(named["head"])
    assert {(w[1], w[2]) for w in index_widgets(at)} >= {("Layer", 0), ("Head", 0)}


@pytest.mark.parametrize("slug", ["decoder", "real_model"])
def test_a_link_that_counted_from_1_opens_the_same_head_with_a_note(slug):
    """Links shared before the count changed (``?dec_layer=5&dec_head=9``, 1-based) open
    the same layer and head, under the new keys; a bad value is warned about, no crash."""
    prefix, top = {"decoder": ("dec", 9), "real_model": ("rm", 12)}[slug]
    at = _run(pages.page(slug), {f"{prefix}_layer": "5", f"{prefix}_head": str(top)})
    assert at.slider(f"{prefix}_L").value == 4
    assert at.slider(f"{prefix}_H").value == top - 1
    notes = " ".join(i.value for i in at.info)
    assert f"`{prefix}_L=4`" in notes and f"`{prefix}_H={top - 1}`" in notes
    at = _run(pages.page(slug), {f"{prefix}_L": "99", f"{prefix}_head": "x"})
    assert at.slider(f"{prefix}_L").value == 0 and at.slider(f"{prefix}_H").value == 0
    warned = " ".join(w.value for w in at.warning)
    assert f"{prefix}_L=99" in warned and f"{prefix}_head=x" in warned
