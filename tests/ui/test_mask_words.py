"""The mask registry's words are in the catalogs (attnviz/ui/mask_words.py)."""

from __future__ import annotations

from attnviz import i18n
from attnviz.engine import masks
from attnviz.ui import mask_words


def test_every_word_a_reader_sees_of_the_registry_is_marked():
    shown = []
    for k in masks.KINDS.values():
        shown += [k.label, k.explain]
        for p in k.params:
            shown += [p.label, p.short, p.over_n]
    assert {t for t in shown if t} == set(mask_words.WORDS)


def test_they_are_translated():
    with i18n.use("es"):
        assert i18n._(masks.KINDS["causal"].explain) != masks.KINDS["causal"].explain
        note = i18n._(masks.PARAMS["window"][1].over_n)
        assert "{n}" in note and "{value}" in note
