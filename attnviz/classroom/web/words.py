"""The student page's words in the page's language (:mod:`attnviz.i18n`).

- :func:`language`: a request's language, its link's ``?lang=`` first (student.js sends it
  with every API call, so the answers speak the page's language), else Accept-Language.
- :func:`page_texts`: the texts of ``static/student.html`` (its ``{{t_*}}``), written here
  so that ``scripts/i18n.py extract`` finds them.
- :func:`script_in`: ``static/student.js`` in a language: each of its messages (its
  ``_("...")`` and ``ngettext("...", "...", n)`` calls) written into the script in that
  language, English too, as per-language bundles do (Angular's ``--localize``): a message
  travels once, in its language, never beside its English key; one file per language and
  version (cached a year).
- :func:`languages_html`: the links that switch the page's language (keeping the class and
  the student).
- :func:`refusal`: a check of the class store refused an answer (its English ValueError):
  the sentence for the student in the page's language.
"""

from __future__ import annotations

import functools
import hashlib
import html
import json
import re
from pathlib import Path
from urllib.parse import urlencode

from starlette.requests import Request

from attnviz import i18n
from attnviz.i18n import N_, _, ngettext

SCRIPT = Path(__file__).parent / "static" / "student.js"


def language(request: Request) -> str:
    """The language of a request's answer: ``?lang=``, else its Accept-Language."""
    return i18n.pick(request.query_params.get("lang"), request.headers.get("accept-language"))


def page_texts(nick_max: int) -> dict[str, str]:
    """The template's texts (``{{t_*}}``) in the shown language, as HTML."""
    esc = html.escape
    return {
        "t_code": esc(_("Class code")),
        "t_code_example": esc(_("e.g. {code}").format(code="K7QX2M")),
        "t_join": esc(_("Join")),
        # TRANSLATORS: "Check" is the button under each question (translated the same way).
        "t_intro": _(
            "Work each question out on paper, type your answer and press <strong>Check"
            "</strong>: your answer is checked and sent to the teacher (no name needed; a "
            "later answer replaces the earlier one). Count rows and columns from 0."
        ),
        "t_nickname": esc(_("Nickname (optional)")),
        "t_nickname_placeholder": esc(_("shown to the teacher")),
        "t_nickname_help": esc(
            ngettext(
                "At most {n} character. Sent with each answer.",
                "At most {n} characters. Sent with each answer.",
                nick_max,
            ).format(n=nick_max)
        ),
        "t_projector": esc(_("On the projector")),
        "t_prediction": esc(_("Your prediction")),
        "t_send": esc(_("Send")),
        "t_open_view": esc(_("Open this view on your device")),
        "t_noscript": esc(_("This page needs JavaScript to send your answers.")),
    }


def _script_calls() -> tuple[tuple[str, str | None], ...]:
    """(message, plural or None) of each message call of student.js, read once by Babel's
    extractor (the one that fills the catalog): :func:`attnviz.i18n.js_message_ids`."""
    return i18n.js_message_ids(SCRIPT)


#: A message call of student.js: ``_(`` or ``ngettext(`` and its message, string literals
#: joined by ``+`` (as Babel's extractor reads them), and a plural's second message.
LITERAL = r'"(?:[^"\\\n]|\\.)*"'
CHAIN = rf"{LITERAL}(?:\s*\+\s*{LITERAL})*"
CALL = re.compile(rf"\b(?P<fn>_|ngettext)\(\s*(?P<one>{CHAIN})(?:\s*,\s*(?P<many>{CHAIN}))?")


def _text(chain: str) -> str:
    return "".join(json.loads(literal) for literal in re.findall(LITERAL, chain))


@functools.lru_cache(maxsize=16)
def script_in(code: str) -> tuple[bytes, str]:
    """student.js in ``code`` and its version: ``_("...")`` becomes ``_("<translation>")``,
    ``ngettext("...", "...", n)`` becomes ``ngettext({<CLDR plural category>: <form>}, n)``
    (English too: one way for every language). A call the catalog's extractor reads and
    this does not (or the other way round) is an error, not a message left in English."""
    seen: dict[tuple[str, str | None], None] = {}

    def written(m: re.Match) -> str:
        one = _text(m["one"])
        if m["fn"] == "_" and m["many"] is None:
            seen[(one, None)] = None
            return "_(" + json.dumps(_(one), ensure_ascii=False)
        many = _text(m["many"] or '""')
        seen[(one, many)] = None
        forms = i18n.plural_forms(code, one, many)
        return "ngettext(" + json.dumps(forms, ensure_ascii=False, separators=(",", ":"))

    with i18n.use(code):
        text = CALL.sub(written, SCRIPT.read_text(encoding="utf-8"))
    if set(seen) != set(_script_calls()):
        raise RuntimeError(
            f"student.js: the calls read here and by the catalog's extractor differ: "
            f"{sorted(set(seen) ^ set(_script_calls()), key=str)}"
        )
    data = text.encode()
    return data, hashlib.sha256(data).hexdigest()[:12]


def script_of(version: str | None, code: str) -> tuple[bytes, str] | None:
    """The script whose version is ``version``, in ``code`` or any language the app has
    (a link is its version: another replica, a page switched since); None if none is."""
    for lang in dict.fromkeys([code, *i18n.available()]):
        got = script_in(lang)
        if got[1] == version:
            return got
    return None


def languages_html(join: str, code: str, student: str) -> str:
    """Links to this page in each language the app has (keeping ``class=`` and
    ``student=``), the shown one marked; nothing when there is only English."""
    have = i18n.available()
    if len(have) < 2:
        return ""
    shown = i18n.current()
    links = []
    for lang in have:
        query = {k: v for k, v in (("class", code), ("student", student)) if v}
        href = html.escape(f"{join}?{urlencode({**query, 'lang': lang})}")
        tag = html.escape(i18n.html_lang(lang))
        current = ' aria-current="page"' if lang == shown else ""
        links.append(
            f'<a href="{href}" hreflang="{tag}" lang="{tag}"{current}>'
            f"{html.escape(i18n.name(lang))}</a>"
        )
    label = html.escape(_("Language"))
    return f'<nav class="langs" aria-label="{label}">{"".join(links)}</nav>'


#: The classroom's refusals of an answer or a prediction (English ValueErrors: the store is
#: language-free) and what the student reads; unmatched ones are said in English.
REFUSALS = (
    (r"an answer is at most (?P<limit>\d+) characters, got (?P<got>\d+)",
     N_("Not sent: An answer is at most {limit} characters, got {got}.")),
    (r"a nickname is at most (?P<limit>\d+) characters, got (?P<got>\d+)",
     N_("Not sent: A nickname is at most {limit} characters, got {got}.")),
    (r"an answer holds control characters \(NUL, escape, \.\.\.\): not stored",
     N_("Not sent: An answer holds control characters (NUL, escape, ...): not stored.")),
    (r"a nickname holds control characters \(NUL, escape, \.\.\.\): not stored",
     N_("Not sent: A nickname holds control characters (NUL, escape, ...): not stored.")),
    (r"item must be from 0 to (?P<last>\d+), got (?P<got>-?\d+)",
     N_("Not sent: Item must be from 0 to {last}, got {got}.")),
    (r"an item is a question's index, got (?P<got>.*)",
     N_("Not sent: An item is a question's index, got {got}.")),
    (r"question (?P<qid>.*) is not the class's current question",
     N_("Not sent: Question {qid} is not the class's current question.")),
    (r"question (?P<qid>.*) was revealed: answers are closed",
     N_("Not sent: Question {qid} was revealed: answers are closed.")),
)  # fmt: skip


def refusal(why: str) -> str:
    """ "Not sent: ..." for a classroom's ValueError ``why``, in the shown language."""
    for pattern, message in REFUSALS:
        m = re.fullmatch(pattern, why)
        if m:
            return _(message).format(**m.groupdict())
    return _("Not sent: {why}.").format(why=why[:1].upper() + why[1:])
