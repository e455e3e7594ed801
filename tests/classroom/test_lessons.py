"""attnviz.classroom.lessons: lesson files read, checked line by line, listed with their errors."""

from __future__ import annotations

import io

import pytest

from attnviz.classroom import exercises, lessons, predict

GOOD = """\
title = "A lesson"
audience = "anyone"

[[stop]]
title = "First"
link = "/playground?N=4"
text = "Some *Markdown*."

[[stop]]
title = "Second"
link = "/masking?N=4&step=2"
look = { chart = "weights", cell = [1, 0] }
question = { kind = "top_key", query = 1 }
"""
PAGES = ("playground", "masking", "scaling")


def _error(text: str, **kwargs) -> lessons.LessonError:
    with pytest.raises(lessons.LessonError) as info:
        lessons.parse(text, pages=PAGES, **kwargs)
    return info.value


def _line_of(text: str, needle: str) -> int:
    return next(i + 1 for i, s in enumerate(text.splitlines()) if needle in s)


def test_a_good_lesson_reads_with_its_stops_links_looks_and_questions():
    lesson = lessons.parse(GOOD, "good", pages=PAGES)
    assert (lesson.slug, lesson.title, lesson.audience, len(lesson)) == (
        "good",
        "A lesson",
        "anyone",
        2,
    )
    first, second = lesson.stops
    assert (first.page, first.settings, first.text, first.step) == (
        "playground",
        {"N": "4"},
        "Some *Markdown*.",
        None,
    )
    assert (second.page, second.settings, second.step) == ("masking", {"N": "4", "step": "2"}, 2)
    assert second.look == lessons.Look("weights", cell=(1, 0))
    assert second.question == lessons.Question("top_key", query=1) and second.question.predicted
    assert (first.line, second.line) == (_line_of(GOOD, "[[stop]]"), 9)


def test_a_link_without_a_page_opens_the_first_page():
    text = GOOD.replace('link = "/playground?N=4"', 'link = "/?N=5"')
    assert lessons.parse(text, pages=PAGES).stops[0].page == "playground"


@pytest.mark.parametrize(
    "old, new, needle, says",
    [
        ('"/playground?N=4"', '"/nowhere?N=4"', "/nowhere", "'nowhere'"),  # an unknown page
        (
            '"/playground?N=4"',
            '"https://example.com/"',
            "example.com",
            "example.com",
        ),  # another host
        (
            'kind = "top_key"',
            'kind = "guess"',
            "guess",
            "'guess'",
        ),  # a question kind that does not exist
        (
            'question = { kind = "top_key", query = 1 }',
            'question = { kind = "top_key" }',
            "question",
            "query",
        ),
        ('title = "Second"', 'titel = "Second"', "titel", "'titel'"),  # a typo: an unknown key
        ('title = "Second"\n', "", "[[stop]]", "title"),  # a missing title: the stop's line
        ('chart = "weights"', 'chart = "pie"', "pie", "'pie'"),
        ("cell = [1, 0]", "cell = [1, -2]", "cell", "-2"),
        ('text = "Some *Markdown*."', "text = 3", "text = 3", "3"),
    ],
)
def test_a_broken_line_is_named_with_its_value(old, new, needle, says):
    text = GOOD.replace(old, new, 1)
    assert text != GOOD
    error = _error(text)
    want = (
        _line_of(text, needle)
        if needle != "[[stop]]"
        else [i + 1 for i, s in enumerate(text.splitlines()) if s == "[[stop]]"][1]
    )
    assert error.line == want, (error.line, want, str(error))
    assert says in error.message
    assert str(error).startswith(f"{want}: ")


def test_a_bad_setting_is_named_by_the_app_s_check():
    seen = []

    def check(page, settings):
        seen.append((page, dict(settings)))
        return ["N='x' is not a number"] if settings.get("N") == "x" else []

    text = GOOD.replace("N=4&step=2", "N=x")
    error = _error(text, check_link=check)
    assert error.line == _line_of(text, "N=x") and "N='x' is not a number" in error.message
    assert seen[0] == ("playground", {"N": "4"})


def test_not_toml_and_no_stops_say_where():
    assert _error('title = "x"\nstop = [\n').line == 2
    error = _error('title = "x"\n')
    assert "[[stop]]" in error.message


def test_files_are_listed_broken_ones_with_their_error(tmp_path):
    (tmp_path / "mine.toml").write_text(GOOD)
    (tmp_path / "broken.toml").write_text(GOOD.replace('kind = "top_key"', 'kind = "guess"'))
    (tmp_path / "intro.toml").write_text(GOOD)  # a shipped lesson's name
    (tmp_path / "Bad Name.toml").write_text(GOOD)
    env = {lessons.ENV: f"{tmp_path}{lessons.os.pathsep}{tmp_path / 'absent'}"}
    listed = {x.path: x for x in lessons.listed(env, pages=PAGES + ("step_by_step",))}
    mine, broken = listed[str(tmp_path / "mine.toml")], listed[str(tmp_path / "broken.toml")]
    assert mine.lesson is not None and mine.error is None and not mine.shipped
    assert (
        broken.lesson is None
        and "'guess'" in str(broken.error)
        and str(tmp_path) in str(broken.error)
    )
    assert "already listed" in str(listed[str(tmp_path / "intro.toml")].error)
    assert "Bad Name.toml" in str(listed[str(tmp_path / "Bad Name.toml")].error)
    shipped = [x for x in listed.values() if x.shipped]
    assert {x.slug for x in shipped} == {f.stem for f in lessons.files(lessons.HERE)}


def test_the_shipped_lessons_have_the_lengths_the_issue_asks():
    by_slug = {lesson.slug: lesson for lesson in lessons.shipped()}
    assert 10 <= len(by_slug["intro"]) <= 12
    assert 6 <= len(by_slug["scaling_masks"]) <= 8
    assert 6 <= len(by_slug["learned_heads"]) <= 8
    for lesson in by_slug.values():
        assert lesson.title and lesson.audience and lesson.shipped
        for stop in lesson.stops:
            assert stop.title and stop.text, (lesson.slug, stop.title)
            if stop.question:
                assert stop.question.kind in (*predict.KINDS, *exercises.KINDS)


def test_babel_extracts_every_shipped_text():
    lesson = lessons.shipped()[0]
    path = lessons.files(lessons.HERE)[0]
    found = list(lessons.babel_extract(io.BytesIO(path.read_bytes()), ["_"], [], {}))
    texts = {msg for _line, _fn, msg, _c in found}
    assert {lesson.title, lesson.audience} <= texts
    assert {s.title for s in lesson.stops} | {s.text for s in lesson.stops} <= texts
    lines = path.read_text().splitlines()
    for line, _fn, msg, _c in found:  # each message at the line of its key
        assert lines[line - 1].split("=")[0].strip() in ("title", "audience", "text", "question"), (
            line,
            msg,
        )


def test_a_built_lesson_reads_back_the_same():
    stops = [
        {"title": 'A "quoted" title', "link": "/masking?N=4&mask=causal", "text": "Two\nlines\t\\"},
        {"title": "Második", "link": "/?N=5"},
    ]
    text = lessons.to_toml("Mine", stops, audience="a class")
    lesson = lessons.parse(text, "mine", pages=PAGES)
    assert (lesson.title, lesson.audience) == ("Mine", "a class")
    got = [(s.title, s.link, s.text) for s in lesson.stops]
    assert got == [
        ('A "quoted" title', stops[0]["link"], "Two\nlines\t\\"),
        ("Második", "/?N=5", ""),
    ]
    assert lessons.to_toml("x", []).strip() == 'title = "x"'  # no stops: parse says so
