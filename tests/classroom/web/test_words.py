"""attnviz.classroom.web.words: the student page's words in the page's language: the template's
texts, student.js's messages as the JSON the page carries, the language links and the
classroom's refusals (English byte for byte as before)."""

from __future__ import annotations

import json

import pytest
from starlette.requests import Request

from attnviz import i18n
from attnviz.classroom.web import student, words


@pytest.fixture
def pseudo(monkeypatch):
    """The test-only language xx (every message ⟦…⟧) is one the page can show."""
    monkeypatch.setenv("ATTNVIZ_PSEUDO", "1")
    words.script_messages.cache_clear()
    yield "xx"
    words.script_messages.cache_clear()


def request(query: str = "", accept: str | None = None) -> Request:
    headers = [(b"accept-language", accept.encode())] if accept else []
    return Request({"type": "http", "query_string": query.encode(), "headers": headers})


def test_the_language_is_the_links_then_the_browsers():
    assert words.language(request("lang=es", "zh-CN,zh;q=0.9")) == "es"
    assert words.language(request("", "zh-CN,zh;q=0.9")) == "zh_CN"
    assert words.language(request("lang=tlh", "ar-EG")) == "ar"  # not a language of the app
    assert words.language(request()) == "en"


def test_every_text_of_the_template_is_written_here():
    holes = {h for h in student.PLACEHOLDER.findall(student.TEMPLATE) if h.startswith("t_")}
    assert holes == set(words.page_texts(24))
    assert "At most 24 characters. Sent with each answer." in words.page_texts(24).values()


def test_the_scripts_messages_are_read_as_the_catalog_reads_them():
    calls = dict(words._script_calls())
    assert calls["Pick one first."] is None and calls["Sending…"] is None
    one = "Your nickname is {n} character long; at most {max}. Your answers are not sent "
    assert calls[one + "until you change it."].startswith("Your nickname is {n} characters")
    assert len(calls) >= 15


def test_english_carries_no_messages_and_another_language_all_of_them(pseudo):
    assert words.script_messages("en") == "{}"
    text = words.script_messages(pseudo)
    assert "<" not in text and ">" not in text and "&" not in text  # safe inside <script>
    got = json.loads(text)
    assert set(got) == {m for m, _ in words._script_calls()}
    assert got["Pick one first."] == i18n.pseudo("Pick one first.")
    forms = got[next(m for m, plural in words._script_calls() if plural)]
    assert set(forms) == {"one", "other"} and "{n}" in forms["other"]


def test_arabic_counts_get_a_form_for_each_of_its_categories(monkeypatch):
    monkeypatch.setattr(i18n, "ngettext", lambda one, many, n: f"{n}")
    monkeypatch.setattr(words, "ngettext", lambda one, many, n: f"{n}")
    monkeypatch.setattr(words, "_", lambda m: m)
    words.script_messages.cache_clear()
    try:
        forms = next(v for v in json.loads(words.script_messages("ar")).values())
    finally:
        words.script_messages.cache_clear()
    assert set(forms) == {"zero", "one", "two", "few", "many", "other"}
    assert forms["zero"] == "0" and forms["few"] == "3" and forms["many"] == "11"


def test_the_language_links_keep_the_class_and_the_student(pseudo):
    with i18n.use("es"):
        nav = words.languages_html("join", "K7QX2M", "abcdef0123456789")
    assert nav.startswith('<nav class="langs" aria-label="Idioma">')  # the nav's name in Spanish
    assert 'href="join?class=K7QX2M&amp;student=abcdef0123456789&amp;lang=ar"' in nav
    assert 'hreflang="zh-CN" lang="zh-CN">中文</a>' in nav
    assert 'lang="es" aria-current="page">Español</a>' in nav
    assert nav.count("aria-current") == 1 and nav.count("<a ") == len(i18n.available())
    with i18n.use("en"):
        assert 'href="join?lang=es"' in words.languages_html("join", "", "")


@pytest.mark.parametrize(
    "why",
    [
        "an answer is at most 64 characters, got 65",
        "a nickname holds control characters (NUL, escape, ...): not stored",
        "item must be from 0 to 7, got 99",
        "an item is a question's index, got 'x'",
        "question 3 was revealed: answers are closed",
        "question None is not the class's current question",
        "something the map does not know",
    ],
)
def test_a_refusal_reads_as_before_in_english_and_is_translated_otherwise(why, pseudo):
    assert words.refusal(why) == f"Not sent: {why[:1].upper()}{why[1:]}."
    with i18n.use(pseudo):
        said = words.refusal(why)
    assert said.startswith("⟦Ñõt séñt: ") and said != words.refusal(why)
