"""The languages attnviz speaks: gettext catalogs, the shown language, numbers as it writes them.

Every text a person reads is written in English in the code and passes through one of:

* ``_("Scores")``: a message; ``_("{n} heads").format(n=4)``: placeholders are named;
* ``ngettext("{n} head", "{n} heads", n).format(n=n)``: a count;
* ``pgettext("matrix", "Output")``: one English word with two meanings gets a context;
* ``N_("Scores")``: marks a text written where no language is known yet (a table built at
  import); it is translated with ``_()`` where it is shown.

The catalogs are ``attnviz/locale/<lang>/LC_MESSAGES/attnviz.po`` (Babel's formats; the
template ``attnviz/locale/attnviz.pot`` is extracted from the code, the board's JavaScript and
the student page by ``scripts/i18n.sh extract``; docs/translating.md). A ``.po`` dropped in
that folder is a language of the picker; each catalog is read once per process.

The shown language is set once per script run or request (:func:`use`) and read through a
context variable, so a Streamlit session's thread and each request of the light pages carry
their own. Code identifiers, LaTeX, the NumPy code box, tokens and model text are never
translated. ``xx`` is a pseudo-language for the tests (every message ``⟦…⟧``, 40 % longer),
shown only when ``ATTNVIZ_PSEUDO=1``.
"""

from __future__ import annotations

import contextvars
import gettext as _gettext
import io
import os
import re
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import lru_cache
from pathlib import Path

from babel import Locale, UnknownLocaleError
from babel.messages.extract import extract_from_file
from babel.messages.mofile import write_mo
from babel.messages.pofile import read_po

LOCALE_DIR = Path(__file__).resolve().parent / "locale"
DOMAIN = "attnviz"
SOURCE = "en"  #: the language the code is written in
PSEUDO = "xx"  #: the test-only pseudo-language
RTL = frozenset({"ar", "fa", "he", "ur"})
#: The names a language goes by in the picker where Babel's own is not what a reader expects.
NAMES = {"zh_CN": "中文", "xx": "Pseudo (⟦test⟧)"}

#: The language of this thread or task; None where nothing set it (see :func:`current`).
_current: contextvars.ContextVar[str | None] = contextvars.ContextVar("attnviz_lang", default=None)
#: Where :func:`current` asks when nothing set the language here (:func:`set_fallback`).
_fallback: Callable[[], str | None] | None = None
_lock = threading.Lock()


def available() -> list[str]:
    """The languages of the picker: English, then each folder with a catalog, by code."""
    extra = [PSEUDO] if os.environ.get("ATTNVIZ_PSEUDO") == "1" else []
    return [SOURCE, *_catalogs(), *extra]


@lru_cache(maxsize=1)
def _catalogs() -> tuple[str, ...]:
    """The codes of the catalogs in ``LOCALE_DIR``, looked for once per process (every run
    and request asks :func:`available`; a new ``.po`` is a language from the next start)."""
    found = sorted(
        p.parent.parent.name for p in LOCALE_DIR.glob(f"*/LC_MESSAGES/{DOMAIN}.po") if p.is_file()
    )
    return tuple(c for c in found if c != SOURCE)


def name(code: str) -> str:
    """A language's name in itself: "English", "Español", "中文", "العربية"."""
    if code in NAMES:
        return NAMES[code]
    try:
        own = Locale.parse(code).language_name or code
    except (ValueError, UnknownLocaleError):
        return code
    return own[:1].upper() + own[1:]


def direction(code: str | None = None) -> str:
    """ "rtl" for a language written right to left, else "ltr"."""
    return "rtl" if (code or current()).split("_")[0] in RTL else "ltr"


def html_lang(code: str | None = None) -> str:
    """The language as a BCP 47 tag for ``<html lang>``: zh_CN -> zh-CN."""
    return (code or current()).replace("_", "-")


def pick(wanted: str | None, accept: str | None = None) -> str:
    """The language to show: ``wanted`` (a link's ``?lang=``) if attnviz has it, else the
    best of ``accept`` (a browser's locale or Accept-Language header), else English.
    Matches by language when the region differs: es-MX -> es, zh-Hans-CN or zh -> zh_CN."""
    have = available()
    for asked in [wanted, *_accepted(accept or "")]:
        if not asked:
            continue
        asked = asked.strip().replace("-", "_")
        if asked in have:
            return asked
        lang = asked.split("_")[0].lower()
        for code in have:
            if code.split("_")[0].lower() == lang:
                return code
    return SOURCE


def _accepted(header: str) -> list[str]:
    """The tags of an Accept-Language header, most wanted first."""
    tags = []
    for i, part in enumerate(header.split(",")):
        tag, _, q = part.strip().partition(";q=")
        try:
            weight = float(q) if q else 1.0
        except ValueError:
            weight = 0.0
        if tag and tag != "*" and weight > 0:
            tags.append((-weight, i, tag))
    return [t for _, _, t in sorted(tags)]


def current() -> str:
    """The language shown to this session or request: the one set in this thread or task;
    where nothing set it, the fallback's (once, then set here), else English. Streamlit runs
    a fragment's rerun (a head change, a tally's timer) and a widget's callback in a thread
    of its own, before or without the run that sets the language: the app's fallback
    (:mod:`attnviz.ui.lang`) reads the session's language, so those speak it too."""
    code = _current.get()
    if code is None:
        code = _fallback() if _fallback is not None else None
        if code is None:
            return SOURCE
        code = code if code in available() else SOURCE
        _current.set(code)
    return code


def set_fallback(fn: Callable[[], str | None] | None) -> None:
    """``fn()``: the language where nothing set it in a thread (None: unknown, English)."""
    global _fallback  # noqa: PLW0603 - one per process, set by the app
    _fallback = fn


def set_language(code: str) -> None:
    """Show ``code`` from now on in this thread or task (a Streamlit run sets it first)."""
    _current.set(code if code in available() else SOURCE)


@contextmanager
def use(code: str) -> Iterator[str]:
    """Show ``code`` inside the block (a request of the light pages, a test)."""
    token = _current.set(code if code in available() else SOURCE)
    try:
        yield current()
    finally:
        _current.reset(token)


# --- the catalogs --------------------------------------------------------------------------


@lru_cache(maxsize=16)
def translations(code: str) -> _gettext.NullTranslations:
    """The catalog of ``code``, read once per process: its ``.mo`` when it is newer than its
    ``.po`` (``scripts/i18n.sh compile``), else the ``.po`` compiled in memory."""
    if code == SOURCE:
        return _gettext.NullTranslations()
    if code == PSEUDO:
        return _Pseudo()
    po = LOCALE_DIR / code / "LC_MESSAGES" / f"{DOMAIN}.po"
    mo = po.with_suffix(".mo")
    if mo.is_file() and po.is_file() and mo.stat().st_mtime >= po.stat().st_mtime:
        with mo.open("rb") as f:
            return _bidi(code, _gettext.GNUTranslations(f))
    if not po.is_file():
        return _gettext.NullTranslations()
    with _lock, po.open("rb") as f:
        catalog = read_po(f, locale=code)
        buf = io.BytesIO()
        write_mo(buf, catalog, use_fuzzy=False)
    buf.seek(0)
    return _bidi(code, _gettext.GNUTranslations(buf))


# --- right to left: the mathematics inside the prose -----------------------------------------

FSI, PDI = "\u2068", "\u2069"  #: Unicode's first-strong isolate and its end
#: what isolation leaves as it is: LaTeX, code, HTML tags, a Markdown link's address, a
#: list's number at the start of a line, plotly's %{x} and Python's %(x)s, web addresses
_BIDI_SKIP = re.compile(
    r"\$\$.*?\$\$|\$[^$\n]+\$|`[^`]*`|<[^>\n]*>|\]\([^)]*\)|^[ \t]*\d+[.)](?=\s)"
    r"|%\{[^{}]*\}|%\([^)]*\)[sdif]|&#?\w+;|https?://\S+",
    re.S | re.M,
)
_LETTER = "A-Za-z\u0370-\u03ff"
_OPS = "=×·/^_√+−←→≈≠≤≥±⁻\\-"  #: signs that make a run a formula (with a letter or brackets)
#: where a run of left-to-right text starts (a sign only before what it signs) and ends
_FIRST = rf"(?:[−±-](?=[{_LETTER}\d∞√{{]))?[{_LETTER}\d√∞{{(\[]"
_LAST = rf"{_LETTER}\d}}∞ᵀ⊤)\]⁰¹²³⁴⁵⁶⁷⁸⁹'"
_RUN = re.compile(
    rf"{_FIRST}(?:[{_LETTER}\d{{}}√∞ ,.:'()\[\]…⁰¹²³⁴⁵⁶⁷⁸⁹ᵀ⊤{re.escape(_OPS)}]*[{_LAST}])?"
)
_START = re.compile(_FIRST)
_END = re.compile(rf"[^{_LAST}]+$")
_PLACEHOLDER = re.compile(r"\{[^{}]*\}")


def _pieces(run: str) -> Iterator[tuple[int, str]]:
    """The parts of ``run`` between its unmatched brackets (a bracket the prose opened
    or closes around the formula stays in the prose), each with its offset."""
    opened: list[int] = []
    cuts: list[int] = []
    for i, ch in enumerate(run):
        if ch in "([":
            opened.append(i)
        elif ch in ")]":
            (opened.pop() if opened else cuts.append(i))
    start = 0
    for cut in [*sorted(cuts + opened), len(run)]:
        yield start, run[start:cut]
        start = cut + 1


def _isolated(piece: str) -> str:
    """A run of left-to-right text (its brackets matched), as it is written in
    right-to-left prose: a formula in one isolate; a word, a number, or numbers and
    placeholders side by side (a range, which reads right to left like the prose) as it is,
    each placeholder in its own (the value it will hold may be a formula), and so are
    placeholders in the prose's brackets ("{query} ({token})": one isolate read "(t0)" before
    "0" from the right)."""
    bare = _PLACEHOLDER.sub("", piece)
    # "{query} ({token})": values in the prose's own brackets, not a formula
    formula = bare.strip(" ()[]") and (" " in piece.strip() or re.search(r"[^\w\\]", bare))
    if formula and (
        re.search(rf"[{_LETTER}]", bare)
        or re.search(r"[()\[\]]", bare)
        or any(c in _OPS for c in bare)
    ):
        return FSI + piece + PDI
    return _PLACEHOLDER.sub(lambda m: FSI + m.group() + PDI, piece)


def _isolate_text(text: str) -> str:
    out, at = [], 0
    for m in _RUN.finditer(text):
        for offset, piece in _pieces(m.group()):
            start = _START.search(piece)
            if not start:
                continue
            core = _END.sub("", piece[start.start() :])
            if not core:
                continue
            begin = m.start() + offset + start.start()
            out += [text[at:begin], _isolated(core)]
            at = begin + len(core)
    return "".join(out) + text[at:]


def isolate(message: str) -> str:
    """A right-to-left translation with its mathematics kept left to right: each formula,
    shape, number with an operator and placeholder written in the prose ("لماذا √d_k",
    "(4, 2)", "{value}") between Unicode's first-strong isolates, which order it by its own
    first letter (a formula: left to right; an Arabic value: right to left) whatever the
    prose around it. Without them the bidirectional algorithm reorders its neutral signs:
    "√d_k" shows as "d_k√", "6×8" as "8×6", "(4, 2)" as "(2 ,4)". LaTeX, code, tags and
    addresses are left alone (:data:`_BIDI_SKIP`)."""
    out, at = [], 0
    for m in _BIDI_SKIP.finditer(message):
        out += [_isolate_text(message[at : m.start()]), m.group()]
        at = m.end()
    return "".join(out) + _isolate_text(message[at:])


def isolated(text: str) -> str:
    """``text`` put beside translated prose by the code (a list of tokens, a permutation),
    isolated in a right-to-left language as a catalog's placeholder is (:func:`isolate`);
    as it is in the others."""
    return FSI + text + PDI if direction() == "rtl" else text


def _bidi(code: str, t: _gettext.GNUTranslations) -> _gettext.GNUTranslations:
    """The catalog of a right-to-left language with :func:`isolate` applied to each of its
    translations, once, as it is read (the board's and the phone page's messages too)."""
    if direction(code) == "rtl":
        cat = t._catalog  # noqa: SLF001 - gettext's own table of translations
        for k, v in cat.items():
            if k != "" and isinstance(v, str):
                cat[k] = isolate(v)
    return t


def _(message: str) -> str:
    """``message`` in the shown language."""
    code = current()
    return message if code == SOURCE else translations(code).gettext(message)


def ngettext(singular: str, plural: str, n: int) -> str:
    """The form of a count ``n`` in the shown language (its own plural rules)."""
    code = current()
    if code == SOURCE:
        return singular if n == 1 else plural
    return translations(code).ngettext(singular, plural, n)


def pgettext(context: str, message: str) -> str:
    """``message`` in the shown language, where ``context`` tells two meanings apart."""
    code = current()
    return message if code == SOURCE else translations(code).pgettext(context, message)


def npgettext(context: str, singular: str, plural: str, n: int) -> str:
    code = current()
    if code == SOURCE:
        return singular if n == 1 else plural
    return translations(code).npgettext(context, singular, plural, n)


def N_(message: str) -> str:  # noqa: N802 (gettext's name for the marker)
    """Marks ``message`` for the catalog without translating it (translate it where shown)."""
    return message


def gettext_for(code: str, message: str) -> str:
    """``message`` in language ``code`` (a class's language, whoever asks)."""
    with use(code):
        return _(message)


_PLURAL_TAGS = ("zero", "one", "two", "few", "many", "other")  #: gettext's order of forms


@lru_cache(maxsize=16)
def plural_tags(code: str) -> list[str]:
    """The CLDR plural categories of ``code`` in the order of its catalog's forms (what
    ``Intl.PluralRules`` says of a count in the board's JavaScript)."""
    if code in (SOURCE, PSEUDO):
        return ["one", "other"]
    try:
        tags = Locale.parse(code).plural_form.tags | {"other"}
    except (ValueError, UnknownLocaleError):
        return ["one", "other"]
    return [t for t in _PLURAL_TAGS if t in tags]


BOARD_JS = Path(__file__).resolve().parent / "ui" / "board" / "js"


@lru_cache(maxsize=4)
def js_message_ids(*scripts: Path) -> tuple[tuple[str, str | None], ...]:
    """The messages of JavaScript files (default: the board's), as (singular, plural or
    None), read once per process with the extractor that makes the catalog."""
    found: dict[tuple[str, str | None], None] = {}
    for js in scripts or sorted(BOARD_JS.glob("*.js")):
        for _line, msg, _comments, _ctx in extract_from_file(
            "javascript",
            str(js),
            keywords={"_": None, "N_": None, "ngettext": (1, 2)},
            options={"parse_template_string": True},
        ):
            found[(msg, None) if isinstance(msg, str) else (msg[0], msg[1])] = None
    return tuple(found)


@lru_cache(maxsize=16)
def js_messages(code: str) -> dict[str, str | list[str]]:
    """The board's messages in ``code``: msgid -> translation, or its plural forms in the
    order of :func:`plural_tags` (what ``i18n.js`` indexes by ``Intl.PluralRules``)."""
    if code == SOURCE:
        return {}
    t = translations(code)
    out: dict[str, str | list[str]] = {}
    for single, plural in js_message_ids():
        if plural is None:
            out[single] = t.gettext(single)
        else:
            forms = plural_forms(code, single, plural)
            out[single] = [forms[tag] for tag in plural_tags(code)]
    return out


def plural_forms(code: str, singular: str, plural: str) -> dict[str, str]:
    """A count's message in ``code`` by CLDR plural category ({"one": ..., "other": ...}):
    for the counts 0-199 and 10**6, each count's category (Babel's CLDR rules, what
    ``Intl.PluralRules`` says in a browser) with the form the catalog gives that count."""
    try:
        category = Locale.parse(SOURCE if code == PSEUDO else code).plural_form
    except (ValueError, UnknownLocaleError):
        category = Locale.parse(SOURCE).plural_form
    forms: dict[str, str] = {}
    with use(code):
        for n in (*range(200), 10**6):
            forms.setdefault(str(category(n)), ngettext(singular, plural, n))
    return forms


# --- numbers -------------------------------------------------------------------------------


@lru_cache(maxsize=16)
def decimal_sign(code: str) -> str:
    """The decimal sign of ``code``'s numbers ("," in es, "." in en, zh_CN and ar)."""
    if code in (SOURCE, PSEUDO):
        return "."
    try:
        return Locale.parse(code).number_symbols["latn"]["decimal"]
    except (ValueError, UnknownLocaleError, KeyError):
        return "."


def plotly_separators(code: str | None = None) -> str:
    """plotly's ``layout.separators`` for the shown language: the decimal sign, then the
    thousands sign (",." in es: 0,84 and 1.024)."""
    dec = decimal_sign(code or current())
    return dec + ("." if dec == "," else ",")


_NUMBER = re.compile(r"(?<![\w.])(-?\d+)\.(\d+)(?![\w.])")


def number(text: str, code: str | None = None) -> str:
    """``text`` (an English-formatted number, or prose with numbers in it) with the shown
    language's decimal sign: "0.84" -> "0,84" in es. Versions and names are left alone."""
    dec = decimal_sign(code or current())
    if dec == ".":
        return text
    return _NUMBER.sub(lambda m: f"{m.group(1)}{dec}{m.group(2)}", text)


def fmt(value: float, spec: str = ".2f", code: str | None = None) -> str:
    """``format(value, spec)`` with the shown language's decimal sign."""
    out = format(value, spec)
    dec = decimal_sign(code or current())
    return out if dec == "." else out.replace(".", dec)


# --- the pseudo-language -------------------------------------------------------------------

_ACCENTS = str.maketrans("aeiouAEIOUcnyCNY", "àéîõüÀÉÎÕÜçñýÇÑÝ")
#: what a pseudo-translation leaves as it is: placeholders ({n}, %{z:.2f}, %(x)s), tags,
#: character references and LaTeX between dollars
_KEEP = re.compile(r"(\{[^{}]*\}|%\{[^{}]*\}|%\([^)]*\)[sdif]|<[^>]*>|&#?\w+;|\$[^$]*\$)")


def pseudo(message: str) -> str:
    """``message`` as the pseudo-language writes it: accented, 40 % longer, in ⟦…⟧."""
    if not message.strip():
        return message
    parts = _KEEP.split(message)
    out = "".join(p if i % 2 else p.translate(_ACCENTS) for i, p in enumerate(parts))
    pad = "·" * max(1, round(0.4 * len(message)) - 2)  # with the brackets: 40 % longer
    return f"⟦{out}{pad}⟧"


class _Pseudo(_gettext.NullTranslations):
    def gettext(self, message):
        return pseudo(message)

    def ngettext(self, singular, plural, n):
        return pseudo(singular if n == 1 else plural)

    def pgettext(self, context, message):
        return pseudo(message)

    def npgettext(self, context, singular, plural, n):
        return pseudo(singular if n == 1 else plural)
