"""The pseudo-language walk (issue 45): every page, in the normal and the presenter view, at
``?lang=xx`` shows no text a reader sees that did not pass through the catalogs
(tests/pseudo_walk.py says what is left out: names, numbers, math, code, tokens). The
student's phone page: tests/classroom/web/test_student.py. What this does not cover yet: the
board's JavaScript words (drawn in a browser) and the live class's teacher view."""

from __future__ import annotations

import pytest
from pseudo_walk import unwrapped, unwrapped_texts

from attnviz.ui import pages as ui_pages


@pytest.mark.parametrize("present", [False, True], ids=["normal", "present"])
@pytest.mark.parametrize("slug", [e.slug for e in ui_pages.PAGES])
def test_every_text_of_the_page_comes_from_the_catalogs(slug, present, monkeypatch):
    monkeypatch.setenv("ATTNVIZ_PSEUDO", "1")  # the test language xx (attnviz.i18n)
    assert unwrapped_texts(slug, present) == []


def test_the_walk_sees_english():
    assert unwrapped("⟦Sçõrés·⟧ and the values") == ["and", "the", "values"]
    assert unwrapped("⟦À ⟦nested·⟧ one·⟧ t0 · $QK^T$ · `np.exp` · softmax · 0.84") == []
