"""The live class's database: its limits, tables, records, input checks and engine.

The store's operations are :class:`attnviz.classroom.ClassStore`'s; this module is what
they stand on, and what a reader of the database needs (the tables' columns, the limits
of what is stored, the checks that run before anything is). :mod:`attnviz.classroom`
re-exports every name here: ``from attnviz.classroom import JOIN_PATH, ClassInfo, ...``
is the contract. SQLAlchemy Core; no Streamlit, no exercises, no engine.
"""

from __future__ import annotations

import hashlib
import os
import re
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import sqlalchemy as sa

#: The path of a class's student page under the app's address: ``<address>/join?class=CODE``
#: (served by :mod:`attnviz.classroom.web`, no Streamlit session).
JOIN_PATH = "join"
#: A class's set, as :func:`attnviz.classroom.exercises.generate` takes it: its seed and number of
#: questions (tests/classroom/test_store.py checks they are the exercises' own limits).
SEED_MAX = 2**32 - 1
COUNT_MAX = 50
#: ``grade(seed, count, item, answer) -> right``: how a store checks an answer; for a class
#: started from a lesson, its items (``ClassInfo.items``) come as a fifth argument.
Grade = Callable[..., bool]
#: Join codes: 6 characters from an alphabet without look-alikes (no 0/O, 1/I/L).
CODE_ALPHABET = "ABCDEFGHJKMNPQRSTUVWXYZ23456789"
CODE_LENGTH = 6
#: Bytes of the teacher key (128 bits), as URL-safe text.
KEY_BYTES = 16
#: Seconds a class lives after its creation.
TTL_SECONDS = 24 * 3600
ANSWER_MAX = 64
NICKNAME_MAX = 24
STUDENT_MAX = 64
#: The tables' layout; a database made by another version is refused, not misread.
SCHEMA_VERSION = 1
DATABASE_URL_ENV = "ATTNVIZ_DATABASE_URL"
DATA_DIR_ENV = "ATTNVIZ_DATA_DIR"
#: Seconds a SQLite writer waits for another writer's lock before giving up.
SQLITE_BUSY_SECONDS = 30

metadata = sa.MetaData()
meta_table = sa.Table(
    "attnviz_meta",
    metadata,
    sa.Column("name", sa.String(32), primary_key=True),
    sa.Column("value", sa.String(64), nullable=False),
)
classes_table = sa.Table(
    "attnviz_classes",
    metadata,
    sa.Column("code", sa.String(CODE_LENGTH), primary_key=True),
    sa.Column("key_hash", sa.String(64), nullable=False),
    sa.Column("seed", sa.BigInteger, nullable=False),
    sa.Column("count", sa.Integer, nullable=False),
    sa.Column("created", sa.Float, nullable=False),  # Unix time, seconds
    sa.Column("closed", sa.Boolean, nullable=False, default=False),
)
reveals_table = sa.Table(
    "attnviz_reveals",
    metadata,
    sa.Column("code", sa.String(CODE_LENGTH), primary_key=True),
    sa.Column("item", sa.Integer, primary_key=True),
)
answers_table = sa.Table(
    "attnviz_answers",
    metadata,
    sa.Column("code", sa.String(CODE_LENGTH), primary_key=True),
    sa.Column("student", sa.String(STUDENT_MAX), primary_key=True),
    sa.Column("item", sa.Integer, primary_key=True),
    sa.Column("answer", sa.String(ANSWER_MAX), nullable=False),
    sa.Column("right", sa.Boolean, nullable=False),
    sa.Column("nickname", sa.String(NICKNAME_MAX), nullable=True),
    sa.Column("at", sa.Float, nullable=False),
)
#: View questions ("predict, then reveal"): tables of their own, created on first use by
#: ``create_all`` (a database made before them gains them; schema version unchanged).
view_questions_table = sa.Table(
    "attnviz_view_questions",
    metadata,
    sa.Column("code", sa.String(CODE_LENGTH), primary_key=True),
    sa.Column("qid", sa.Integer, primary_key=True),  # 1, 2, ... per class
    sa.Column("page", sa.String(32), nullable=False),
    sa.Column("link", sa.String(2000), nullable=False),
    sa.Column("view", sa.String(64), nullable=False),  # a digest of the view's settings
    sa.Column("kind", sa.String(16), nullable=False),
    sa.Column("prompt", sa.String(200), nullable=False),
    sa.Column("choices", sa.Text, nullable=False),  # one per line
    sa.Column("answer", sa.Integer, nullable=False),  # index into choices
    sa.Column("detail", sa.Text, nullable=False),  # "query=2,head=0,key=3": the cell
    sa.Column("revealed", sa.Boolean, nullable=False, default=False),
    sa.Column("created", sa.Float, nullable=False),
)
view_answers_table = sa.Table(
    "attnviz_view_answers",
    metadata,
    sa.Column("code", sa.String(CODE_LENGTH), primary_key=True),
    sa.Column("qid", sa.Integer, primary_key=True),
    sa.Column("student", sa.String(STUDENT_MAX), primary_key=True),
    sa.Column("choice", sa.Integer, nullable=False),
    sa.Column("at", sa.Float, nullable=False),
)
#: The students who opened the class's page (a phone's first request, ``join``): the
#: teacher's projector counts them before anyone answers. Created on first use.
joined_table = sa.Table(
    "attnviz_joined",
    metadata,
    sa.Column("code", sa.String(CODE_LENGTH), primary_key=True),
    sa.Column("student", sa.String(STUDENT_MAX), primary_key=True),
    sa.Column("at", sa.Float, nullable=False),
)
#: A class started from a lesson: the lesson's name and its typed questions (``kind@seed``,
#: comma-separated, in the lesson's order), asked before the generated set's (if any). A table
#: of its own, created on first use like the view questions' (a database made before it gains
#: it, schema version unchanged); a class without a row here is a generated set, as before.
plans_table = sa.Table(
    "attnviz_class_plans",
    metadata,
    sa.Column("code", sa.String(CODE_LENGTH), primary_key=True),
    sa.Column("lesson", sa.String(64), nullable=False),
    sa.Column("questions", sa.Text, nullable=False),
)
#: A lesson's question in a class's plan: an exercise kind and the seed of its set.
PLAN_ITEM = re.compile(r"[a-z][a-z_]{0,31}@[0-9]{1,10}")
LESSON_NAME = re.compile(r"[a-z0-9][a-z0-9_-]{0,63}")

#: The kinds of view question and their limits.
VIEW_KINDS = (
    "top_key",
    "previous_head",
    "induction_head",
    "sharper_row",
    "moved_row",
)  # = predict.KINDS
CHOICES_MAX = 64
CHOICE_MAX = 40
PROMPT_MAX = 200
LINK_MAX = 2000
DETAIL_MAX = 200


#: What the store raises when its database cannot be used (not the caller's fault).
STORE_ERRORS: tuple[type[Exception], ...] = (OSError, RuntimeError, sa.exc.SQLAlchemyError)


class ClassNotFound(ValueError):
    """No such class: a wrong code, or one that expired (24 h) and was deleted."""


class ClassClosed(ValueError):
    """The teacher ended the class: it takes no more answers."""


@dataclass(frozen=True)
class ClassInfo:
    """What a student's page needs: the set (seed, count), the revealed items, closed; a
    class started from a lesson: ``lesson`` (its name) and ``items``, its questions
    (``kind@seed``) that come first, the generated set's ``count - len(items)`` after them."""

    code: str
    seed: int
    count: int
    created: float
    closed: bool
    revealed: frozenset[int]
    lesson: str = ""
    items: tuple[str, ...] = ()

    @property
    def expires(self) -> float:
        return self.created + TTL_SECONDS


@dataclass(frozen=True)
class ViewQuestion:
    """A question about the view on the projector ("which key does query 2 attend to
    most?"): its page, link and view digest, its choices, the right choice's index and
    ``detail`` (what the chart outlines: ``{"query": 2, "head": 0, "key": 3}``)."""

    code: str
    qid: int
    page: str
    link: str
    view: str
    kind: str
    prompt: str
    choices: tuple[str, ...]
    answer: int
    detail: dict[str, int]
    revealed: bool


def default_url() -> str:
    """``$ATTNVIZ_DATABASE_URL`` if set, else SQLite in ``$ATTNVIZ_DATA_DIR/classes.db``
    (default ``~/.local/share/attnviz/``; the directory is made if missing)."""
    url = os.environ.get(DATABASE_URL_ENV, "").strip()
    if url:
        return url
    base = os.environ.get(DATA_DIR_ENV, "").strip()
    folder = Path(base) if base else Path.home() / ".local" / "share" / "attnviz"
    folder.mkdir(parents=True, exist_ok=True)
    return f"sqlite:///{folder / 'classes.db'}"


# --------------------------------------------------------------------------- checks


def _printable(value: str) -> bool:
    """No control, format, surrogate or unassigned characters (NUL, ESC, U+202E ...)."""
    return all(unicodedata.category(c)[0] != "C" for c in value)


def normalize_code(code: object) -> str:
    """``" k7qx2m "`` -> ``"K7QX2M"``; ValueError naming the expected form otherwise."""
    if not isinstance(code, str):
        raise ValueError(f"a class code must be text, got {type(code).__name__}")
    text = code.strip()
    # ASCII first: "ſ".upper() is "S", a look-alike must not become a valid code
    if text.isascii():
        text = text.upper()
    if len(text) != CODE_LENGTH or any(c not in CODE_ALPHABET for c in text):
        shown = text[:20] + ("…" if len(text) > 20 else "")
        raise ClassNotFound(
            f"a class code is {CODE_LENGTH} letters and digits (no 0, O, 1, I or L), got {shown!r}"
        )
    return text


def _check_text(what: str, value: object, limit: int, allow_empty: bool = False) -> str:
    if not isinstance(value, str):
        raise ValueError(f"{what} must be text, got {type(value).__name__}")
    if not value.strip() and not allow_empty:
        raise ValueError(f"{what} is empty")
    if len(value) > limit:
        raise ValueError(f"{what} is at most {limit} characters, got {len(value)}")
    if not _printable(value):
        raise ValueError(f"{what} holds control characters (NUL, escape, ...): not stored")
    return value


def check_answer(answer: object) -> str:
    """The answer as stored (surrounding blanks dropped); ValueError for non-text, over
    64 characters or control characters."""
    return _check_text("an answer", answer, ANSWER_MAX, allow_empty=True).strip()


def check_nickname(nickname: object) -> str | None:
    """None for no nickname; else at most 24 printable characters."""
    if nickname is None:
        return None
    text = _check_text("a nickname", nickname, NICKNAME_MAX, allow_empty=True).strip()
    return text or None


def _hash_key(key: str) -> str:
    return hashlib.sha256(key.encode("utf-8", "surrogatepass")).hexdigest()


def check_plan(lesson: object, items: object, count: int) -> tuple[str, tuple[str, ...]]:
    """A lesson's name and questions as a class stores them; ValueError naming the value."""
    if not isinstance(lesson, str) or not LESSON_NAME.fullmatch(lesson):
        raise ValueError(f"a lesson's name is a-z, 0-9, - and _ (at most 64), got {lesson!r}")
    if isinstance(items, str) or not isinstance(items, (list, tuple)):
        raise ValueError(f"a lesson's questions are a list, got {type(items).__name__}")
    for item in items:
        if not isinstance(item, str) or not PLAN_ITEM.fullmatch(item):
            raise ValueError(f"a lesson's question is kind@seed (weight@3), got {item!r}")
    if not 1 <= len(items) <= count:
        raise ValueError(f"a class holds 1 to {count} lesson questions, got {len(items)}")
    return lesson, tuple(items)


def _no_grade(seed: int, count: int, item: int, answer: str, items: tuple = ()) -> bool:
    raise TypeError("this ClassStore was made without a grade function: it cannot check")


# --------------------------------------------------------------------------- the store


def _sqlite_pragmas(dbapi_connection, _record) -> None:
    cur = dbapi_connection.cursor()
    cur.execute("PRAGMA journal_mode=WAL")
    cur.execute(f"PRAGMA busy_timeout={SQLITE_BUSY_SECONDS * 1000}")
    cur.execute("PRAGMA synchronous=NORMAL")  # WAL: durable at checkpoints, never corrupt
    cur.close()


def make_engine(url: str) -> sa.Engine:
    """An engine for ``url``: SQLite gets WAL and a busy timeout on every connection."""
    if url.startswith("sqlite"):
        engine = sa.create_engine(
            url, connect_args={"timeout": SQLITE_BUSY_SECONDS, "check_same_thread": False}
        )
        sa.event.listen(engine, "connect", _sqlite_pragmas)
        return engine
    return sa.create_engine(url, pool_pre_ping=True, pool_size=5, max_overflow=10)
