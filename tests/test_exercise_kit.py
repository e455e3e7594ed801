"""attnviz.exercise_kit: what every exercise is made of, importable from attnviz.exercises."""

from __future__ import annotations

from attnviz import exercise_kit, exercises


def test_the_kit_is_what_attnviz_exercises_exports():
    for name in ("Exercise", "TITLES", "CHOICES", "bmatrix", "parse_number", "parse_shape"):
        assert getattr(exercises, name) is getattr(exercise_kit, name)
    assert set(exercises.KINDS) <= set(exercise_kit.TITLES)


def test_a_shape_kind_takes_a_shape_in_any_spelling():
    e = exercise_kit.Exercise("cross_shape", "p", "(2, 7, 4)", "e", "h")
    assert e.check("2x7x4") and e.check("[2, 7, 4]") and e.check((2, 7, 4))
    assert not e.check("(2, 4, 7)") and not e.check("seven")
