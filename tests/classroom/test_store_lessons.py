"""A live class started from a lesson (issue 48): the store keeps the lesson's questions
(``attnviz_class_plans``) and grades them first; a class and a database made before that
table read and grade as before. The store cases run against SQLite and a real PostgreSQL
(fixtures of tests/classroom/test_store.py)."""

# ruff: noqa: F811 (the store fixtures come from tests/classroom/test_store.py)
from __future__ import annotations

import pytest
import sqlalchemy as sa
from test_store import pg, store, url, wrong  # noqa: F401 (fixtures)

from attnviz import classroom, i18n
from attnviz.classroom import exercises, lessons
from attnviz.classroom.store import ClassStore

SEED = 12
LESSON_ITEMS = ("weight@3", "mask@5")


def test_the_shipped_lessons_give_their_typed_questions_in_order():
    got = {x.slug: lessons.class_items(x) for x in lessons.shipped()}
    for lesson in lessons.shipped():
        typed = [s.question for s in lesson.stops if s.question and not s.question.predicted]
        assert [i.split("@")[0] for i in got[lesson.slug]] == [q.kind for q in typed]
    assert got["intro"] == ("weight@3",) and got["scaling_masks"] == ("mask@5",)
    assert got["learned_heads"] == ()  # only predictions: asked from the projector


def test_a_lesson_item_is_the_exercise_its_tour_shows():
    (e,) = exercises.of_class(SEED, 1, ("weight@3",), "en")
    tour = [x for x in exercises.generated(3, len(exercises.KINDS), "en") if x.kind == "weight"]
    assert e is tour[0]


def test_a_class_from_a_lesson_asks_its_questions_first(store):
    count = len(LESSON_ITEMS) + 3
    code, key = store.create(SEED, count, "scaling_masks", LESSON_ITEMS)
    info = store.info(code)
    assert (info.lesson, info.items, info.count) == ("scaling_masks", LESSON_ITEMS, count)
    items = exercises.of_class(SEED, count, LESSON_ITEMS, "en")
    assert [e.kind for e in items[:2]] == ["weight", "mask"]
    assert items[2:] == exercises.generated(SEED, 3, "en")  # then the generated set's
    # a right and a wrong answer to each: graded by the lesson's question, not the set's
    for i, e in enumerate(items):
        assert store.submit(code, "s1", i, e.answer_text) is True
        assert store.submit(code, "s2", i, wrong(e)) is False
    tally = store.tally(code, key)
    assert [(t["answered"], t["right"], t["wrong"]) for t in tally.values()] == [(2, 1, 1)] * count
    assert store.answers(code, "s1") == {i: (e.answer_text, True) for i, e in enumerate(items)}
    with pytest.raises(ValueError, match="item must be from 0 to 4"):
        store.submit(code, "s1", count, "1")


def test_a_class_of_the_lessons_questions_only(store):
    code, _ = store.create(SEED, 1, "intro", ("weight@3",))
    (e,) = exercises.of_class(SEED, 1, ("weight@3",), "en")
    assert store.submit(code, "s1", 0, e.answer_text) is True
    # the generated set's first question is another one: its answer is not this one's
    other = exercises.generated(SEED, 1, "en")[0]
    assert other.kind != "weight" and store.info(code).items == ("weight@3",)


@pytest.mark.parametrize(
    "lesson, items, count, said",
    [
        ("Intro!", ("weight@3",), 1, "a lesson's name"),
        ("intro", "weight@3", 1, "a list"),
        ("intro", ("weight",), 1, "kind@seed"),
        ("intro", ("weight@3; DROP TABLE x",), 1, "kind@seed"),
        ("intro", ("weight@3", "mask@5"), 1, "1 to 1 lesson questions"),
        ("intro", (), 8, "1 to 8 lesson questions"),
    ],
)
def test_a_bad_plan_is_refused_and_nothing_stored(tmp_path, lesson, items, count, said):
    s = ClassStore(f"sqlite:///{tmp_path / 'c.db'}", grade=exercises.grade)
    try:
        with pytest.raises(ValueError, match=said):
            s.create(SEED, count, lesson, items)
        with s.engine.connect() as conn:
            for table in (classroom.classes_table, classroom.plans_table):
                assert conn.execute(sa.select(sa.func.count()).select_from(table)).scalar() == 0
    finally:
        s.dispose()


def test_an_old_database_and_its_classes_read_and_grade_as_before(url):
    """A database made before the plans table, with a class and an answer in it: the store
    adds the table, the old class is the generated set, its answer and tally stay."""
    eng = sa.create_engine(url)
    classroom.metadata.create_all(
        eng, tables=[t for t in classroom.metadata.sorted_tables if t is not classroom.plans_table]
    )
    items = exercises.generated(SEED, 8, "en")
    with eng.begin() as conn:
        conn.execute(classroom.meta_table.insert().values(name="schema_version", value="1"))
        conn.execute(
            classroom.classes_table.insert().values(
                code="K7QX2M", key_hash=classroom.schema._hash_key("k" * 22), seed=SEED, count=8,
                created=4e9, closed=False,
            )
        )  # fmt: skip
        conn.execute(
            classroom.answers_table.insert().values(
                code="K7QX2M", student="old", item=0, answer=items[0].answer_text, right=True,
                nickname=None, at=4e9,
            )
        )  # fmt: skip
    s = ClassStore(url, clock=lambda: 4e9 + 60, grade=exercises.grade)
    try:
        assert sa.inspect(eng).has_table(classroom.plans_table.name)
        info = s.info("K7QX2M")
        assert (info.seed, info.count, info.lesson, info.items) == (SEED, 8, "", ())
        assert s.answers("K7QX2M", "old") == {0: (items[0].answer_text, True)}
        assert s.submit("K7QX2M", "new", 1, items[1].answer_text) is True
        assert s.submit("K7QX2M", "new", 2, wrong(items[2])) is False
        assert [s.tally("K7QX2M", "k" * 22)[i]["right"] for i in range(3)] == [1, 1, 0]
        code, _ = s.create(SEED, 2, "intro", ("weight@3",))  # a lesson class beside it
        assert s.info(code).items == ("weight@3",)
    finally:
        s.dispose()
        eng.dispose()


def test_the_answer_keys_and_checks_are_the_same_in_every_language():
    count = len(LESSON_ITEMS) + len(exercises.KINDS)
    en = exercises.of_class(SEED, count, LESSON_ITEMS, "en")
    rows = exercises.answer_key_rows(list(en))
    for lang in ("es", "zh_CN", "ar"):
        shown = exercises.of_class(SEED, count, LESSON_ITEMS, lang)
        assert shown is not en and shown[0].prompt != en[0].prompt  # translated texts
        assert exercises.answer_key_rows(list(shown)) == rows
        with i18n.use(lang):  # graded in the student's language: the same verdicts
            for i, e in enumerate(en):
                assert exercises.grade(SEED, count, i, e.answer_text, LESSON_ITEMS)
                assert not exercises.grade(SEED, count, i, wrong(e), LESSON_ITEMS)
