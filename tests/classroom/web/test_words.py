"""attnviz.classroom.web.words: the student page's words in the page's language: the template's
texts, student.js with its messages written in each language, the language links and the
classroom's refusals (English byte for byte as before)."""

from __future__ import annotations

import json
import re

import pytest
from starlette.requests import Request

from attnviz import i18n
from attnviz.classroom.web import student, words


@pytest.fixture
def pseudo(monkeypatch):
    """The test-only language xx (every message ⟦…⟧) is one the page can show."""
    monkeypatch.setenv("ATTNVIZ_PSEUDO", "1")
    words.script_in.cache_clear()
    yield "xx"
    words.script_in.cache_clear()


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


def script(code: str) -> str:
    return words.script_in(code)[0].decode()


def written(text: str, call: str) -> list:
    """The values written into ``text``'s calls of ``call`` (its first argument)."""
    starts = [m.end() for m in re.finditer(rf"\b{call}\((?=[\"{{])", text)]
    return [json.JSONDecoder().raw_decode(text[i:])[0] for i in starts]


def test_every_language_gets_the_script_with_its_messages_written_in(pseudo):
    calls = words._script_calls()
    english, xx = script("en"), script(pseudo)
    assert written(english, "_") == [m for m, plural in calls if plural is None]
    assert written(xx, "_") == [i18n.pseudo(m) for m, plural in calls if plural is None]
    (forms,) = written(xx, "ngettext")
    assert (
        set(forms) == {"one", "other"}
        and forms["other"].startswith("⟦")
        and "{n}" in forms["other"]
    )
    (forms,) = written(english, "ngettext")
    assert forms == dict(zip(("one", "other"), next(c for c in calls if c[1]), strict=True))
    assert "Pick one first." not in xx and "Sending…" not in xx  # each message once, translated
    assert english.replace("_(", "").count("ngettext(") == xx.count("ngettext(")
    assert words.script_in("en")[1] != words.script_in(pseudo)[1]  # a version per language
    assert words.script_of(words.script_in(pseudo)[1], "en") == words.script_in(pseudo)
    assert words.script_of("0" * 12, "en") is None


def test_a_call_the_extractor_reads_and_the_server_does_not_is_an_error(monkeypatch, tmp_path):
    js = tmp_path / "student.js"
    js.write_text("say(_(\"Read by both.\"));\nsay(_('Single quotes, read by Babel only.'));\n")
    monkeypatch.setattr(words, "SCRIPT", js)
    words.script_in.cache_clear()
    try:
        with pytest.raises(RuntimeError, match="Single quotes"):
            words.script_in("en")
    finally:
        words.script_in.cache_clear()


def test_arabic_counts_get_a_form_for_each_of_its_categories(monkeypatch):
    monkeypatch.setattr(i18n, "ngettext", lambda one, many, n: f"{n}")
    words.script_in.cache_clear()
    try:
        (forms,) = written(script("ar"), "ngettext")
    finally:
        words.script_in.cache_clear()
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
