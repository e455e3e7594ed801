"""attnviz.i18n: the shown language, its catalogs, its numbers; the catalogs' own checks."""

from __future__ import annotations

import importlib.util
import threading
from pathlib import Path

import pytest

from attnviz import i18n

ROOT = Path(__file__).resolve().parents[1]


def _script():
    spec = importlib.util.spec_from_file_location("i18n_script", ROOT / "scripts" / "i18n.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_the_languages_at_launch_are_in_the_picker_named_in_themselves():
    codes = i18n.available()
    assert codes[0] == "en" and {"es", "zh_CN", "ar"} <= set(codes)
    assert "xx" not in codes  # the pseudo-language only where the tests ask for it
    names = {c: i18n.name(c) for c in codes}
    assert names["en"] == "English" and names["es"] == "Español"
    assert names["zh_CN"] == "中文" and names["ar"] == "العربية"


@pytest.mark.parametrize(
    ("wanted", "accept", "shown"),
    [
        ("es", None, "es"),
        ("es-MX", None, "es"),  # a region attnviz has no catalog of: its language
        ("zh-Hans-CN", None, "zh_CN"),
        ("zh", None, "zh_CN"),
        (None, "ar-EG,ar;q=0.9,en;q=0.8", "ar"),
        (None, "fr-FR,fr;q=0.9,es;q=0.5", "es"),  # the best one attnviz has
        ("fr", "en-US", "en"),
        (None, None, "en"),
        ("", "de;q=0", "en"),
        ("<script>", "*", "en"),
    ],
)
def test_pick_takes_the_link_then_the_browser_then_english(wanted, accept, shown):
    assert i18n.pick(wanted, accept) == shown


def test_the_language_is_per_thread_and_block():
    seen = {}

    def other():
        seen["other"] = i18n.current()

    with i18n.use("es"):
        assert i18n.current() == "es"
        t = threading.Thread(target=other)
        t.start()
        t.join()
        with i18n.use("nope"):
            assert i18n.current() == "en"  # an unknown code falls back to English
    assert i18n.current() == "en" and seen["other"] == "en"


def test_english_is_the_code_itself():
    with i18n.use("en"):
        assert i18n._("Scores") == "Scores"
        assert i18n.ngettext("{n} head", "{n} heads", 1) == "{n} head"
        assert i18n.ngettext("{n} head", "{n} heads", 3) == "{n} heads"
        assert i18n.pgettext("matrix", "Output") == "Output"
        assert i18n.N_("Scores") == "Scores"


def test_a_message_missing_from_a_catalog_is_its_english():
    with i18n.use("es"):
        assert i18n._("a message no catalog has, 8c1f") == "a message no catalog has, 8c1f"


def test_numbers_as_the_language_writes_them():
    assert i18n.decimal_sign("es") == "," and i18n.decimal_sign("en") == "."
    assert i18n.decimal_sign("zh_CN") == "." and i18n.decimal_sign("ar") == "."
    assert i18n.fmt(0.8412, ".2f", "es") == "0,84"
    assert i18n.fmt(-1.5, ".3f", "en") == "-1.500"
    assert i18n.plotly_separators("es") == ",." and i18n.plotly_separators("en") == ".,"
    # prose: numbers get the decimal comma, a version or a name does not
    assert i18n.number("weights 0.84 and -0.5", "es") == "weights 0,84 and -0,5"
    assert i18n.number("numpy 2.4.6, t0.5", "es") == "numpy 2.4.6, t0.5"
    assert i18n.number("0.84", "en") == "0.84"


def test_rtl_and_the_html_tag():
    assert i18n.direction("ar") == "rtl" and i18n.direction("es") == "ltr"
    assert i18n.html_lang("zh_CN") == "zh-CN" and i18n.html_lang("en") == "en"


def _shown(text: str) -> str:
    return text.replace(i18n.FSI, "⟨").replace(i18n.PDI, "⟩")


@pytest.mark.parametrize(
    ("prose", "isolated"),
    [
        ("لماذا √d_k", "لماذا ⟨√d_k⟩"),  # else "d_k√"
        ("اكتبه هكذا: (4, 2).", "اكتبه هكذا: ⟨(4, 2)⟩."),  # else "(2 ,4)"
        ("الشكل: 6×8", "الشكل: ⟨6×8⟩"),  # else "8×6"
        ("أكبر فرق هو {diff}", "أكبر فرق هو ⟨{diff}⟩"),  # the value may be a formula
        ("(d_k = D / عدد الرؤوس = 8 / 2 = 4)", "(⟨d_k = D⟩ / عدد الرؤوس = ⟨8 / 2 = 4⟩)"),
        ("المواضع {first} … {last}", "المواضع ⟨{first}⟩ … ⟨{last}⟩"),  # a range reads RTL
        ("الأكبر **{j}** و softmax و W_Q", "الأكبر **⟨{j}⟩** و softmax و W_Q"),  # words: as is
        ("درجتها −∞ ووزنها 0.", "درجتها ⟨−∞⟩ ووزنها 0."),
        (
            "$\\sqrt{d_k}$ و `q @ k.T` و [رابط](http://x/{a}?b=1)",
            "$\\sqrt{d_k}$ و `q @ k.T` و [رابط](http://x/{a}?b=1)",
        ),  # LaTeX, code, address
        ("1. Q = X W_Q", "1. ⟨Q = X W_Q⟩"),  # a list's number stays the list's
        ("%{z:.2f}<br>{w}", "%{z:.2f}<br>⟨{w}⟩"),  # plotly's template, a tag
    ],
)
def test_rtl_prose_keeps_its_mathematics_left_to_right(prose, isolated):
    assert _shown(i18n.isolate(prose)) == isolated


def test_an_rtl_catalog_is_isolated_as_it_is_read():
    """Arabic's translations come isolated (the board's and the phone page's too); the other
    languages' as written."""
    msg = "Why √d_k"
    with i18n.use("ar"):
        assert i18n.FSI + "√d_k" + i18n.PDI in i18n._(msg)
    with i18n.use("es"):
        assert i18n.FSI not in i18n._(msg) and "√d_k" in i18n._(msg)
    assert any(i18n.FSI in v for v in i18n.js_messages("ar").values() if isinstance(v, str))


def test_plural_categories_follow_the_catalog_order():
    assert i18n.plural_tags("ar") == ["zero", "one", "two", "few", "many", "other"]
    assert i18n.plural_tags("zh_CN") == ["other"]
    assert i18n.plural_tags("es") == ["one", "many", "other"]
    # a form for each category, from the catalog: Arabic's six, Chinese's one
    heads = ("{n} head of {total}", "{n} heads of {total}")  # not in the catalogs: English
    assert list(i18n.plural_forms("ar", *heads)) == ["zero", "one", "two", "few", "many", "other"]
    assert i18n.plural_forms("ar", *heads)["one"] == heads[0]
    assert i18n.plural_forms("ar", *heads)["few"] == heads[1]
    assert list(i18n.plural_forms("zh_CN", *heads)) == ["other"]


def test_the_board_gets_its_own_messages_with_every_plural_form():
    ids = i18n.js_message_ids()
    assert ids, "the board's JavaScript has messages"
    es = i18n.js_messages("es")
    assert set(es) == {single for single, _plural in ids}
    for single, plural in ids:
        if plural is not None:
            assert isinstance(es[single], list) and len(es[single]) == 3
    assert i18n.js_messages("en") == {}


def test_the_pseudo_language_wraps_and_lengthens_but_keeps_placeholders(monkeypatch):
    message = "Query {i} attends to %{z:.2f} of <b>key</b> $j$ &amp; more"
    out = i18n.pseudo(message)
    assert out.startswith("⟦") and out.endswith("⟧")
    for kept in ("{i}", "%{z:.2f}", "<b>", "</b>", "$j$", "&amp;"):
        assert kept in out
    assert len(out) >= 1.3 * len(message)
    monkeypatch.setenv("ATTNVIZ_PSEUDO", "1")
    assert "xx" in i18n.available()
    with i18n.use("xx"):
        assert i18n._("Scores") == "⟦Sçõrés·⟧"  # "·" pads it to 40 % longer
        assert i18n.ngettext("{n} head", "{n} heads", 2).startswith("⟦{n}")


# --------------------------------------------------------------------------- the catalogs


def test_the_catalogs_are_whole_and_their_placeholders_agree(capsys):
    """scripts/i18n.py check: es, zh_CN and ar translate every message of the template, and
    no translation's placeholders or tags differ from its English."""
    rc = _script().check()
    out = capsys.readouterr().out
    assert rc == 0, out


def test_the_check_finds_a_broken_placeholder():
    script = _script()
    assert script.mismatches("{n} heads", "{n} cabezas") == []
    assert script.mismatches("{n} heads", "{m} cabezas")
    assert script.mismatches("%{z:.2f} of {name}", "{name}: %{z:.3f}")
    assert script.mismatches("<b>key</b>", "clave") and not script.mismatches(
        "<b>a</b>", "<b>b</b>"
    )
    # a plural form may leave the count out ("one head"), nothing else
    assert script.mismatches(("{n} head", "{n} heads"), ("una cabeza", "{n} cabezas")) == []


def test_the_template_holds_every_message_of_the_code(tmp_path, monkeypatch):
    """The committed .pot is what the code says now (run scripts/i18n.sh extract, update)."""
    script = _script()
    monkeypatch.setattr(script, "POT", tmp_path / "attnviz.pot")
    fresh = {
        (m.id if isinstance(m.id, str) else m.id[0], m.context) for m in script.extract() if m.id
    }
    committed = {
        (m.id if isinstance(m.id, str) else m.id[0], m.context)
        for m in script.read(ROOT / "attnviz" / "locale" / "attnviz.pot")
        if m.id
    }
    assert fresh - committed == set(), "messages not in the .pot: run scripts/i18n.sh extract"
    assert committed - fresh == set(), "the .pot has messages the code lost: extract again"


def test_a_thread_where_nothing_set_the_language_asks_the_fallback(monkeypatch):
    """Streamlit runs a fragment's rerun and a callback in a thread of its own: there the
    language comes from the fallback (the app's: the session's), once, then stays set; with
    no fallback, or one that does not know, English."""
    import threading

    asked = []

    def fallback():
        asked.append(1)
        return "es"

    def in_thread(fn):
        out = {}
        t = threading.Thread(target=lambda: out.update(value=fn()))
        t.start()
        t.join()
        return out["value"]

    monkeypatch.setattr(i18n, "_fallback", None)
    assert in_thread(i18n.current) == "en"
    i18n.set_fallback(fallback)
    with i18n.use("es"):
        spanish = i18n._("shape: **{shape}**")
    assert spanish != "shape: **{shape}**"
    assert in_thread(lambda: (i18n.current(), i18n._("shape: **{shape}**"), i18n.current())) == (
        "es",
        spanish,
        "es",
    )
    assert len(asked) == 1  # asked once in that thread, then set there
    with i18n.use("zh_CN"):  # a run that set its language is not overridden
        assert i18n.current() == "zh_CN"
    i18n.set_fallback(lambda: None)
    assert in_thread(i18n.current) == "en"
    i18n.set_fallback(lambda: "tlh")  # no such catalog
    assert in_thread(i18n.current) == "en"


def test_text_the_code_puts_beside_prose_is_isolated_only_right_to_left():
    tokens = "`[CLS]` · `the` · `cat`"
    with i18n.use("ar"):
        assert i18n.isolated(tokens) == i18n.FSI + tokens + i18n.PDI
    with i18n.use("es"):
        assert i18n.isolated(tokens) == tokens


def test_a_formula_with_an_arabic_word_inside_stays_one_left_to_right_isolate():
    """ "d_k = D / heads = 8 / 2 = 4" in Arabic names the heads in words inside the formula:
    first-strong isolates around its pieces laid it out in three pieces from the right
    ("4 = 8 / 2 = عدد الرؤوس / d_k = D"). The catalog puts each such formula in one
    left-to-right isolate (LRI), which the pieces' own isolates do not change."""
    lri = "\u2066"
    messages = [
        "Head **{head}** of {count}: d_k = D / heads = {d} / {count} = **{dk}**; "
        "scale factor **{scale}**",
        "Head **{head}** of {count} uses columns {first}…{last} of Q, K, V (d_k = D / heads "
        "= {d} / {count} = **{dk}**). Scale factor = **{scale}**",
    ]
    with i18n.use("ar"):
        shown = [i18n._(m) for m in messages]
        shown += [
            i18n.ngettext(
                "**{n} head**, each with d_k = {d} / {n} = **{dk}** columns of Q, K and V; "
                "scale factor {scale}.",
                "**{n} heads**, each with d_k = {d} / {n} = **{dk}** columns of Q, K and V; "
                "scale factor {scale}.",
                n,
            )
            for n in (1, 2, 3, 11, 100)
        ]
    for text in shown:
        start, depth = text.index(lri), 0
        for end in range(start, len(text)):  # the PDI that closes the LRI
            depth += text[end] in "\u2066\u2067\u2068"
            depth -= text[end] == i18n.PDI
            if depth == 0:
                break
        formula = text[start + 1 : end]
        assert formula.replace(i18n.FSI, "").replace(i18n.PDI, "").startswith("d_k = "), text
        assert formula.endswith("{dk}" + i18n.PDI + "**"), text


def test_values_in_the_proses_own_brackets_are_isolated_one_by_one():
    """ "Query {query} ({token})": one isolate around "0 (t0)" laid it out left to right, so
    that a reader going from the right met "(t0)" before "0". Each value is its own isolate
    and the brackets are the prose's; a formula with brackets stays whole."""
    shown = i18n.isolate("الاستعلام {query} ({token}): أوزانه ومخرجه")
    assert (
        shown
        == f"الاستعلام {i18n.FSI}{{query}}{i18n.PDI} ({i18n.FSI}{{token}}{i18n.PDI}): أوزانه ومخرجه"
    )
    assert i18n.isolate("حجم (4, 2) و softmax({z})") == (
        f"حجم {i18n.FSI}(4, 2){i18n.PDI} و {i18n.FSI}softmax({{z}}){i18n.PDI}"
    )
