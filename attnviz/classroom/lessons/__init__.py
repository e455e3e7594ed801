"""Lessons: one path through attnviz written as a TOML file (docs/lessons.md).

A lesson is a title, an audience line and a list of stops; a stop is an attnviz link (a page
and its URL settings, ``step=`` included), a title, a few sentences of Markdown, and
optionally what to look at and a question::

    title = "Self-attention in 20 minutes"
    audience = "A first lecture on transformers"

    [[stop]]
    title = "Scores"
    link = "/playground?N=4&seed=0"
    text = "Each query's dot products with every key."
    look = { chart = "weights", row = 2 }
    question = { kind = "top_key", query = 2 }

- :func:`parse` reads a lesson's text, :func:`load` a file; each raises :class:`LessonError`
  naming the line and the value that is wrong (a broken lesson is listed with it, not hidden).
- :func:`shipped` gives the lessons in this folder; :func:`folders` the teacher's own
  (``ATTNVIZ_LESSONS``, folders separated by ``os.pathsep``); :func:`listed` both, broken
  files as :class:`Listed` entries with their error.
- What a link may hold depends on the app's pages and controls, which live above the library:
  the caller passes ``pages`` (the page slugs) and ``check_link`` (a link's settings -> the
  problems found) to :func:`parse`; without them only the link's form is checked.
- :func:`babel_extract` gives the shipped lessons' texts to the catalogs (scripts/i18n.py):
  a shipped lesson is shown through ``_()`` like every other text; a teacher's own lesson is
  shown as written.

Pure Python (``tomllib``), no Streamlit: notebooks and tests read lessons as plain data.
"""

from __future__ import annotations

import os
import re
import tomllib
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import parse_qsl, urlsplit

from attnviz.classroom import exercises, predict
from attnviz.i18n import _

#: This folder: the shipped lessons (``<slug>.toml``).
HERE = Path(__file__).resolve().parent
#: The shipped lessons in the order a course meets them (others after them, by name).
ORDER = ("intro", "scaling_masks", "learned_heads")
#: The environment variable naming a teacher's folders of lesson files.
ENV = "ATTNVIZ_LESSONS"
#: A lesson's slug (its file name): what ``?lesson=`` names.
SLUG = re.compile(r"^[a-z0-9][a-z0-9_-]{0,63}$")
#: The question kinds a stop may ask: predictions answered from the view on screen
#: (:mod:`attnviz.classroom.predict`) and typed exercises (:mod:`attnviz.classroom.exercises`).
QUESTION_KINDS = (*predict.KINDS, *exercises.KINDS)
#: What a stop may point at (the board's chart roles an overlay can draw on).
LOOK_CHARTS = ("scores", "weights", "output", "x", "q", "k", "v", "heads")
#: The keys of a lesson, a stop, a look and a question (anything else is a typo, said).
LESSON_KEYS = {"title", "audience", "minutes", "stop"}
STOP_KEYS = {"title", "link", "text", "look", "question"}
LOOK_KEYS = {"chart", "cell", "row"}
QUESTION_KEYS = {"kind", "query", "head", "row", "seed", "prompt"}
#: A question's whole-number fields.
QUESTION_INTS = ("query", "head", "row", "seed")

CheckLink = Callable[[str, Mapping[str, str]], list[str]]


class LessonError(ValueError):
    """A lesson file that cannot be used: ``line`` (from 1; 0 when unknown) and what is wrong,
    the value included."""

    def __init__(self, message: str, line: int = 0, path: str = ""):
        self.line, self.path, self.message = line, path, message
        where = f"{path}:" if path else ""
        super().__init__(f"{where}{line}: {message}" if line else f"{where} {message}".strip())


@dataclass(frozen=True)
class Look:
    """What a stop points at: a chart (a board role), and on it a cell or a row (or neither)."""

    chart: str
    cell: tuple[int, int] | None = None
    row: int | None = None


@dataclass(frozen=True)
class Question:
    """A stop's question: a prediction about the view (``predict.KINDS``, its query/head/row)
    or a typed exercise (``exercises.KINDS``, its seed). ``prompt`` replaces the kind's own."""

    kind: str
    query: int | None = None
    head: int | None = None
    row: int | None = None
    seed: int | None = None
    prompt: str = ""

    @property
    def predicted(self) -> bool:
        """Whether it is answered from the view on screen (else a typed exercise)."""
        return self.kind in predict.KINDS


@dataclass(frozen=True)
class Stop:
    """One stop of a lesson: a link into the app (``page`` and its ``settings``)."""

    title: str
    link: str
    page: str
    settings: dict[str, str]
    text: str = ""
    look: Look | None = None
    question: Question | None = None
    line: int = 0  # the line of its ``[[stop]]`` in the file

    @property
    def step(self) -> int | None:
        """The presenter step the link names (``step=``), if any."""
        value = self.settings.get("step", "")
        return int(value) if value.isdigit() else None


@dataclass(frozen=True)
class Lesson:
    """A lesson: its slug (the file's name), title, audience and stops."""

    slug: str
    title: str
    audience: str
    stops: tuple[Stop, ...]
    minutes: int | None = None
    path: str = ""
    shipped: bool = False

    def __len__(self) -> int:
        return len(self.stops)


@dataclass(frozen=True)
class Listed:
    """A lesson file as a list shows it: the lesson, or the error that keeps it out of use."""

    slug: str
    path: str
    lesson: Lesson | None = None
    error: LessonError | None = None
    shipped: bool = False


# --------------------------------------------------------------------------- reading


@dataclass
class _Lines:
    """Where each stop and each key starts in the file's text (tomllib gives no lines)."""

    text: str
    stops: list[int] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.lines = self.text.splitlines()
        self.stops = [i + 1 for i, s in enumerate(self.lines) if s.strip() == "[[stop]]"]

    def key(self, key: str, stop: int | None = None) -> int:
        """The line of ``key = ...`` in stop ``stop`` (from 0), or at the top; else the stop's."""
        lo = self.stops[stop] if stop is not None and stop < len(self.stops) else 0
        hi = self.stops[stop + 1] - 1 if stop is not None and stop + 1 < len(self.stops) else None
        hi = hi if hi is not None else (len(self.lines) if stop is not None else self._top_end())
        pattern = re.compile(rf"^\s*{re.escape(key)}\s*=")
        for i in range(lo, hi):
            if pattern.match(self.lines[i]):
                return i + 1
        return lo if stop is not None else 0

    def _top_end(self) -> int:
        return self.stops[0] - 1 if self.stops else len(self.lines)


def _text(value: object, what: str, line: int, required: bool = True) -> str:
    if value is None and not required:
        return ""
    if not isinstance(value, str) or (required and not value.strip()):
        shown = _("nothing") if value is None else repr(value)
        raise LessonError(
            _("{what} must be a non-empty text, found {value}").format(what=what, value=shown), line
        )
    return value.strip()


def _int(value: object, what: str, line: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise LessonError(
            _("{what} must be a whole number >= 0, found {value}").format(
                what=what, value=repr(value)
            ),
            line,
        )
    return value


def _unknown(
    keys: Iterable[str], allowed: set[str], what: str, line: int | Callable[[str], int]
) -> None:
    """An unknown key said at its line (``line``: a number, or the key -> its line)."""
    extra = sorted(set(keys) - allowed)
    if extra:
        known = ", ".join(sorted(allowed))
        raise LessonError(
            _("unknown key {key} in {what} (known: {known})").format(
                key=repr(extra[0]), what=what, known=known
            ),
            line(extra[0]) if callable(line) else line,
        )


def _link(link: str, line: int, pages: Iterable[str] | None, check: CheckLink | None):
    parts = urlsplit(link)
    if parts.scheme or parts.netloc:
        raise LessonError(
            _("a link stays inside attnviz: /<page>?..., found {link}").format(link=repr(link)),
            line,
        )
    page = parts.path.strip("/")
    known = tuple(pages) if pages is not None else None
    if known is not None and page and page not in known:
        raise LessonError(
            _("unknown page {page} in link {link} (pages: {pages})").format(
                page=repr(page), link=repr(link), pages=", ".join(known)
            ),
            line,
        )
    if known is not None and not page:
        page = known[0]  # "/" or "?N=4": the first page, as the app opens it
    settings = dict(parse_qsl(parts.query, keep_blank_values=True))
    for bad in check(page, settings) if check else []:
        raise LessonError(_("{problem} in link {link}").format(problem=bad, link=repr(link)), line)
    return page, settings


def _kind_table(raw: object, name: str, keys: set[str], field: str, kinds, line: int):
    """An inline table ``name = { field = "...", ... }``: its keys known, its ``field`` one
    of ``kinds``; returns that value (look's chart, question's kind)."""
    if not isinstance(raw, dict):
        example = f"{{ {field} = '{kinds[0]}' }}"
        raise LessonError(
            _("{name} must be a table like {example}, found {value}").format(
                name=name, example=example, value=repr(raw)
            ),
            line,
        )
    _unknown(raw, keys, name, line)
    value = _text(raw.get(field), f"{name}.{field}", line)
    if value not in kinds:
        raise LessonError(
            _("{name}.{field} {value} is not one of {values}").format(
                name=name, field=field, value=repr(value), values=", ".join(kinds)
            ),
            line,
        )
    return value


def _look(raw: object, line: int) -> Look | None:
    if raw is None:
        return None
    chart = _kind_table(raw, "look", LOOK_KEYS, "chart", LOOK_CHARTS, line)
    cell = raw.get("cell")
    if cell is not None:
        if not isinstance(cell, list) or len(cell) != 2:
            raise LessonError(
                _("look's cell must be [query, key], found {value}").format(value=repr(cell)), line
            )
        cell = (_int(cell[0], "look.cell[0]", line), _int(cell[1], "look.cell[1]", line))
    row = raw.get("row")
    return Look(chart, cell, None if row is None else _int(row, "look.row", line))


def _question(raw: object, line: int) -> Question | None:
    if raw is None:
        return None
    kind = _kind_table(raw, "question", QUESTION_KEYS, "kind", QUESTION_KINDS, line)
    ints = {k: _int(raw[k], f"question.{k}", line) for k in QUESTION_INTS if k in raw}
    if kind == "top_key" and "query" not in ints:
        raise LessonError(
            _("question kind {kind} needs {field}").format(kind="'top_key'", field="query = <i>"),
            line,
        )
    if kind in predict.ROW_KINDS and "row" not in ints:
        raise LessonError(
            _("question kind {kind} needs {field}").format(kind=repr(kind), field="row = <i>"), line
        )
    prompt = _text(raw.get("prompt"), "question.prompt", line, required=False)
    return Question(kind, prompt=prompt, **ints)


def _stop(raw: object, i: int, lines: _Lines, pages, check) -> Stop:
    line = lines.stops[i] if i < len(lines.stops) else 0
    if not isinstance(raw, dict):
        raise LessonError(
            _("stop {i} must be a [[stop]] table, found {value}").format(i=i + 1, value=repr(raw)),
            line,
        )
    _unknown(raw, STOP_KEYS, _("stop {i}").format(i=i + 1), lambda k: lines.key(k, i))
    title = _text(
        raw.get("title"),
        _("stop {i}, {key}").format(i=i + 1, key="title"),
        lines.key("title", i) if "title" in raw else line,
    )
    link_line = lines.key("link", i)
    link = _text(raw.get("link"), _("stop {i}, {key}").format(i=i + 1, key="link"), link_line)
    page, settings = _link(link, link_line, pages, check)
    text = _text(
        raw.get("text"),
        _("stop {i}, {key}").format(i=i + 1, key="text"),
        lines.key("text", i),
        required=False,
    )
    look = _look(raw.get("look"), lines.key("look", i))
    question = _question(raw.get("question"), lines.key("question", i))
    return Stop(title, link, page, settings, text, look, question, line)


def parse(
    text: str,
    slug: str = "lesson",
    *,
    pages: Iterable[str] | None = None,
    check_link: CheckLink | None = None,
    path: str = "",
    shipped: bool = False,
) -> Lesson:
    """A lesson from its TOML text; :class:`LessonError` (the line, the value) if it is broken.

    ``pages``: the app's page slugs (a link's page must be one; "/" is the first);
    ``check_link(page, settings)``: the problems of a link's settings (the app's controls).
    """
    try:
        raw = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:  # its message ends "(at line L, column C)"
        found = re.search(r"at line (\d+)", str(e))  # or "(at end of document)": the last
        line = int(found.group(1)) if found else len(text.splitlines())
        raise LessonError(_("not TOML: {error}").format(error=e), line, path) from None
    lines = _Lines(text)
    try:
        _unknown(raw, LESSON_KEYS, _("the lesson"), lines.key)
        title = _text(raw.get("title"), "title", lines.key("title"))
        audience = _text(raw.get("audience"), "audience", lines.key("audience"), False)
        minutes = raw.get("minutes")
        minutes = None if minutes is None else _int(minutes, "minutes", lines.key("minutes"))
        stops = raw.get("stop")
        if not isinstance(stops, list) or not stops:
            raise LessonError(_("a lesson needs at least one [[stop]]"), len(lines.lines))
        made = tuple(_stop(s, i, lines, pages, check_link) for i, s in enumerate(stops))
    except LessonError as e:
        raise LessonError(e.message, e.line, path) from None
    return Lesson(slug, title, audience, made, minutes, path, shipped)


def load(path: str | os.PathLike, **kwargs) -> Lesson:
    """A lesson file (``<slug>.toml``): :func:`parse` with the file's name as the slug."""
    p = Path(path)
    slug = p.stem
    if not SLUG.match(slug):
        raise LessonError(
            _("a lesson's file name is its name in links: a-z, 0-9, - and _, found {name}").format(
                name=repr(p.name)
            ),
            0,
            str(p),
        )
    try:
        text = p.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        raise LessonError(_("cannot be read: {error}").format(error=e), 0, str(p)) from None
    return parse(text, slug, path=str(p), **kwargs)


def files(folder: str | os.PathLike) -> list[Path]:
    """The lesson files of a folder, by name (none if it does not exist)."""
    p = Path(folder)
    return sorted(p.glob("*.toml")) if p.is_dir() else []


def folders(env: Mapping[str, str] | None = None) -> list[Path]:
    """The teacher's folders of lessons: ``ATTNVIZ_LESSONS``, split at ``os.pathsep``."""
    value = (os.environ if env is None else env).get(ENV, "")
    return [Path(f).expanduser() for f in value.split(os.pathsep) if f.strip()]


def listed(env: Mapping[str, str] | None = None, **kwargs) -> list[Listed]:
    """Every lesson: the shipped ones first, then each folder's; a broken file is listed with
    its error, and a teacher's lesson with a shipped lesson's slug with an error saying so."""
    out: list[Listed] = []
    seen: set[str] = set()
    sources = [(f, True) for f in _shipped_files()]
    sources += [(f, False) for folder in folders(env) for f in files(folder)]
    for f, is_shipped in sources:
        try:
            lesson = load(f, shipped=is_shipped, **kwargs)
            if lesson.slug in seen:
                raise LessonError(
                    _("a lesson named {name} is already listed").format(name=repr(lesson.slug)),
                    0,
                    str(f),
                )
            out.append(Listed(lesson.slug, str(f), lesson, shipped=is_shipped))
        except LessonError as e:
            out.append(Listed(f.stem, str(f), error=e, shipped=is_shipped))
        seen.add(f.stem)
    return out


def shipped(**kwargs) -> list[Lesson]:
    """The lessons attnviz ships (this folder), loaded; a broken one raises."""
    return [load(f, shipped=True, **kwargs) for f in _shipped_files()]


def _shipped_files() -> list[Path]:
    rank = {slug: i for i, slug in enumerate(ORDER)}
    return sorted(files(HERE), key=lambda f: (rank.get(f.stem, len(rank)), f.stem))


def class_items(lesson: Lesson) -> tuple[str, ...]:
    """The lesson's typed questions in its order, as a live class started from it asks them
    (:func:`attnviz.classroom.exercises.lesson_item`: ``"weight@3"``). Its predictions are
    answered from the view on the projector: the lecture asks the room those at their stop."""
    return tuple(
        exercises.lesson_item(s.question.kind, s.question.seed)
        for s in lesson.stops
        if s.question is not None and not s.question.predicted
    )


# --------------------------------------------------------------------------- catalogs


def babel_extract(fileobj, keywords, comment_tags, options):
    """Babel's extraction method for the shipped lessons (scripts/i18n.py ``METHODS``): the
    lesson's title and audience, each stop's title, text and question prompt."""
    text = fileobj.read().decode("utf-8")
    raw = tomllib.loads(text)
    lines = _Lines(text)
    for key in ("title", "audience"):
        if raw.get(key):
            yield lines.key(key), "_", raw[key].strip(), []
    for i, stop in enumerate(raw.get("stop", [])):
        for key in ("title", "text"):
            if stop.get(key):
                yield lines.key(key, i), "_", stop[key].strip(), ["lesson stop"]
        prompt = (stop.get("question") or {}).get("prompt")
        if prompt:
            yield lines.key("question", i), "_", prompt.strip(), ["lesson question"]


# --------------------------------------------------------------------------- writing


def _toml_string(text: str) -> str:
    """A TOML basic string (JSON's escapes are TOML's for these characters)."""
    out = text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n").replace("\t", "\\t")
    return '"' + "".join(c if ord(c) >= 0x20 else f"\\u{ord(c):04x}" for c in out) + '"'


def to_toml(title: str, stops: Iterable[Mapping[str, str]], audience: str = "") -> str:
    """A lesson file from ``stops`` (each a mapping with ``title``, ``link`` and optionally
    ``text``): what "Add this view as a stop" builds for a teacher to download and edit.
    :func:`parse` reads it back."""
    lines = [f"title = {_toml_string(title)}"]
    if audience:
        lines.append(f"audience = {_toml_string(audience)}")
    for stop in stops:
        lines += ["", "[[stop]]", f"title = {_toml_string(stop['title'])}"]
        lines.append(f"link = {_toml_string(stop['link'])}")
        if stop.get("text"):
            lines.append(f"text = {_toml_string(stop['text'])}")
    return "\n".join(lines) + "\n"
