"""The live class (docs/classroom.md): a lecturer's room answers on phones, the store of
its answers, and what they answer.

``from attnviz.classroom import ClassStore`` (and every public name of ``schema``) is the
contract; the names are looked up when first asked for, so importing one module of the
class (``attnviz.classroom.exercises``) does not load SQLAlchemy. Its modules, one line each:

- ``store``: ``ClassStore``, the store of a class's answers, shared by every server process
  (SQLAlchemy Core over SQLite or PostgreSQL, one code path; no Streamlit).
- ``schema``: what the store stands on: its limits, tables, records (``ClassInfo``,
  ``ViewQuestion``), input checks (``normalize_code``, ``check_answer``) and engine.
- ``roomlink``: the address a lecture room can open: the join link and the presenter link
  (``ATTNVIZ_PUBLIC_URL``, the machine's LAN address).
- ``exercises``: self-checking exercises (nine kinds, seeded), ``generate`` and ``grade``,
  self-attention's seven kinds; ``exercise_kit``: what every exercise is made of
  (``Exercise``, checking, ``TITLES``, the LaTeX helpers); ``exercises_cross``:
  cross-attention's two kinds.
- ``predict``: predict, then reveal: questions about the view on the projector, answered
  from the engine's result (``KINDS``, the right choice, the cells to outline).
- ``lessons/``: a lesson, one path through attnviz as a TOML file (docs/lessons.md):
  ``parse``, ``load``, ``shipped``, ``listed``; its stops may ask the exercises' and the
  predictions' questions (hence here, beside them).
- ``web/``: the student's light page (``/join``, Starlette beside Streamlit's pages, no
  Streamlit session): ``student`` (the routes), ``hub`` (what a class's phones wait for),
  ``guard`` (what a route checks first), ``render`` and ``mathml`` (the exercises' text as
  HTML and MathML), ``words`` (the page's words), ``static/`` (its HTML, CSS and JS).

The class stands on the engine, the teaching material, ``models`` and ``toys``; no module
here imports Streamlit (the teacher's views are ``attnviz.ui.live``, ``ui.predict``).
"""

from __future__ import annotations

import importlib
from typing import Any

#: The public names of the package, and the module that holds each.
_SCHEMA = [
    "ANSWER_MAX",
    "CHOICE_MAX",
    "CHOICES_MAX",
    "CODE_ALPHABET",
    "CODE_LENGTH",
    "COUNT_MAX",
    "DATA_DIR_ENV",
    "DATABASE_URL_ENV",
    "DETAIL_MAX",
    "JOIN_PATH",
    "KEY_BYTES",
    "LESSON_NAME",
    "LINK_MAX",
    "NICKNAME_MAX",
    "PLAN_ITEM",
    "PROMPT_MAX",
    "SCHEMA_VERSION",
    "SEED_MAX",
    "SQLITE_BUSY_SECONDS",
    "STORE_ERRORS",
    "STUDENT_MAX",
    "TTL_SECONDS",
    "VIEW_KINDS",
    "ClassClosed",
    "ClassInfo",
    "ClassNotFound",
    "Grade",
    "ViewQuestion",
    "answers_table",
    "check_answer",
    "check_nickname",
    "check_plan",
    "classes_table",
    "default_url",
    "joined_table",
    "make_engine",
    "meta_table",
    "metadata",
    "normalize_code",
    "plans_table",
    "reveals_table",
    "view_answers_table",
    "view_questions_table",
]
_WHERE = {"ClassStore": "store", **dict.fromkeys(_SCHEMA, "schema")}
__all__ = sorted(_WHERE)


def __getattr__(name: str) -> Any:
    if name not in _WHERE:
        raise AttributeError(f"module 'attnviz.classroom' has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{_WHERE[name]}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
