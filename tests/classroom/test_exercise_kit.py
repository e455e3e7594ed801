"""attnviz.classroom.exercise_kit: what every exercise is made of, importable from
attnviz.classroom.exercises."""

from __future__ import annotations

from attnviz import i18n
from attnviz.classroom import exercise_kit, exercises


def test_the_kit_is_what_attnviz_exercises_exports():
    for name in ("Exercise", "TITLES", "CHOICES", "bmatrix", "parse_number", "parse_shape"):
        assert getattr(exercises, name) is getattr(exercise_kit, name)
    assert set(exercises.KINDS) <= set(exercise_kit.TITLES)


def test_a_shape_kind_takes_a_shape_in_any_spelling():
    e = exercise_kit.Exercise("cross_shape", "p", "(2, 7, 4)", "e", "h")
    assert e.check("2x7x4") and e.check("[2, 7, 4]") and e.check((2, 7, 4))
    assert not e.check("(2, 4, 7)") and not e.check("seven")


def test_numbers_and_shapes_typed_in_other_scripts():
    """A decimal comma ("0,84"), the Arabic decimal separator ("٠٫٨٤", "0٫84") and the
    full-width point; a shape with Arabic or full-width commas; "(4, 2)" stays a shape."""
    for typed in ("0.84", "0,84", "0٫84", "٠٫٨٤", "0．84"):
        assert exercise_kit.parse_number(typed) == 0.84, typed
    for typed in ("(4, 2)", "(4، 2)", "（4，2）", "4 x 2"):
        assert exercise_kit.parse_shape(typed) == (4, 2), typed
    number = exercise_kit.Exercise("weight", "p", 0.84, "e", "h", tolerance=0.01)
    shape = exercise_kit.Exercise("shape", "p", "(4, 2)", "e", "h")
    assert (
        number.check("0٫84")
        and shape.check("(4, 2)")
        and shape.check("4,2")
        and not shape.check("4.2")
    )


def test_choices_are_english_values_shown_in_the_language(monkeypatch):
    monkeypatch.setenv("ATTNVIZ_PSEUDO", "1")
    e = exercise_kit.Exercise("scaling", "p", "rise", "e", "h")
    assert e.choices == ("rise", "fall") and e.choice_labels == ("rise", "fall")
    with i18n.use("xx"):
        assert e.choices == ("rise", "fall")  # the values a student sends
        assert e.choice_labels == tuple(map(i18n.pseudo, ("rise", "fall")))
        assert e.title == i18n.pseudo("Scaling and entropy")
    exercise_kit._labels_to_values.cache_clear()
    # a label typed in any language is the value, whoever grades
    assert e.check("rise") and e.check(i18n.pseudo("rise")) and not e.check("fall")
