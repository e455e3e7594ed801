"""attnviz.classroom.exercises_cross: cross-attention's two kinds, made and graded like the others
(in
every set of attnviz.classroom.exercises.generate, checked by exercises.grade), rendered for a
phone."""

from __future__ import annotations

import numpy as np
import pytest

from attnviz.classroom import exercises, exercises_cross
from attnviz.classroom.web.render import text_html


@pytest.mark.parametrize("seed", range(40))
def test_cross_shape_puts_the_target_on_the_rows(seed):
    e = exercises_cross.cross_shape(np.random.default_rng(seed))
    d = e.data
    assert d["n_src"] != d["n_tgt"]
    want = {"weights": (d["heads"], d["n_tgt"], d["n_src"]),
            "K_h": (d["n_src"], d["d"] // d["heads"]), "output": (d["n_tgt"], d["d"])}  # fmt: skip
    assert exercises.parse_shape(e.answer) == want[d["what"]]
    assert e.check("x".join(map(str, want[d["what"]]))) and e.check(list(want[d["what"]]))
    if d["what"] == "weights":  # the transposed shape is the usual mistake: wrong
        assert not e.check(str((d["heads"], d["n_src"], d["n_tgt"])))


@pytest.mark.parametrize("seed", range(40))
def test_cross_argmax_has_one_answer_among_the_source_tokens(seed):
    e = exercises_cross.cross_argmax(np.random.default_rng(seed))
    q, k, i = e.data["Q"], e.data["K"], e.data["i"]
    assert q.shape[0] != k.shape[0] and q.shape[1] == k.shape[1]
    dots = q[i] @ k.T
    assert e.answer == int(np.argmax(dots)) and (dots == dots.max()).sum() == 1
    assert e.check(str(e.answer)) and not e.check(str((e.answer + 1) % k.shape[0]))


def test_both_kinds_are_in_every_set_graded_and_titled():
    for seed in range(5):
        items = exercises.generate(seed=seed, count=len(exercises.KINDS))
        for n, e in enumerate(items):
            if e.kind in exercises_cross.KINDS:
                assert exercises.grade(seed, len(items), n, e.answer_text)
                assert not exercises.grade(seed, len(items), n, "banana")
                assert e.title == exercises.TITLES[e.kind]
    assert {"cross_shape", "cross_argmax"} <= set(exercises.KINDS)


def test_they_render_for_the_phone():
    for seed in range(20):
        for make in exercises_cross.MAKERS.values():
            e = make(np.random.default_rng(seed))
            for text in (e.prompt, e.explanation, e.hint):
                html = text_html(text, strict=True)
                assert "$" not in html and "**" not in html and "\\begin" not in html
    assert "<math" in text_html(exercises_cross.cross_argmax(np.random.default_rng(0)).prompt)
