"""What a lesson's link may hold (:func:`check_link`, given to
:func:`attnviz.classroom.lessons.parse`).

A stop's link names a page of :data:`attnviz.ui.pages.PAGES` and its URL settings: the
sidebar's controls (:data:`attnviz.ui.controls.CONTROLS`: each value checked against its
options or range, as a link to the app is), the presenter view's ``present`` and ``step``,
``lang``, and the page's own settings (:data:`PAGE_KEYS`, the keys its widgets keep in the
URL; ``tests/ui/test_lesson_links.py`` checks the list against the code). A key nobody reads
is a typo (``n=4`` for ``N=4``), said with the keys the page knows.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

from attnviz.classroom import lessons
from attnviz.i18n import _
from attnviz.teaching import presets
from attnviz.ui.controls import BY_KEY, DEFAULTS, KEYS, Control
from attnviz.ui.pages import PAGES
from attnviz.ui.sizes import divisors

#: Settings every page reads: the presenter view, its step, the language, the lesson.
COMMON_KEYS = ("present", "step", "lang", "lesson")
#: The link parameters of a generation section (:mod:`attnviz.ui.generate`) under a prefix.
_GENERATION = ("n", "temp", "topk", "topp", "seed", "step")


def _model_keys(prefix: str, gen: str) -> tuple[str, ...]:
    """A model page's link parameters: its text, layer, head, probe and generation."""
    own = (
        f"{prefix}_text",
        f"{prefix}_L",
        f"{prefix}_H",
        f"{prefix}_probe_seed",
        f"{prefix}_probe_len",
    )
    return (*own, *(f"{gen}_{k}" for k in _GENERATION))


#: Each page's own URL settings (its widgets bound to the URL), beyond the sidebar's.
PAGE_KEYS: dict[str, tuple[str, ...]] = {
    "playground": ("head", "query"),
    "step_by_step": ("head", "query"),
    "multi_head": ("head", "query"),
    "scaling": ("head", "query", "sc_factor"),
    "masking": ("head", "query", "mk_pad"),
    "permutation": ("head", "query", "perm_seed", "positions"),
    "cross": (
        "head",
        "query",
        "input",
        "N_src",
        "N_tgt",
        "text_src",
        "text_tgt",
        "pair",
        "cross_mask",
        "pad_src",
    ),  # fmt: skip
    "compare": ("head", "query", "b_head", *(f"b_{k}" for k in KEYS)),
    "notebooks": (),
    # MiniLM's page also runs a found encoder-decoder (ui.picker_encdec: cxm_*)
    "real_model": (
        *_model_keys("rm", "rm_gen"),
        "cxm_src",
        "cxm_tgt",
        *(f"cxm_gen_{k}" for k in _GENERATION),
    ),  # fmt: skip
    "decoder": _model_keys("dec", "dec_gen"),
    "learned": ("task", "checkpoint"),
    "exercises": (),
    "lessons": (),
}
#: The pages that read the sidebar's controls from the link.
SIDEBAR_PAGES = {p.slug for p in PAGES if p.controls != "none"}


def slugs() -> list[str]:
    """The pages a link may name, in the sidebar's order (the first is "/")."""
    return [p.slug for p in PAGES]


def _int(raw: str) -> int | None:
    try:
        return int(raw)
    except ValueError:
        return None


def _number(raw: str) -> float | None:
    try:
        value = float(raw.replace(",", "."))
    except ValueError:
        return None
    return value if math.isfinite(value) else None


def _control_problem(c: Control, raw: str, settings: Mapping[str, str]) -> str | None:
    """Why ``raw`` cannot be control ``c``'s value in a link (None: it can)."""
    if c.key == "heads":
        d = _int(settings.get("D", str(DEFAULTS["D"])))
        h = _int(raw)
        ok = d is not None and d >= 1 and h in divisors(d)
        return (
            None
            if ok
            else _("{setting} is not a divisor of D={d}").format(setting=f"heads={raw!r}", d=d)
        )
    if c.key == "preset":
        names = presets.names()
        return (
            None
            if raw in names
            else _("{setting} is not one of {values}").format(
                setting=f"preset={raw!r}", values=", ".join(names)
            )
        )
    if isinstance(c.options, tuple):
        return (
            None
            if raw in c.options
            else _("{setting} is not one of {values}").format(
                setting=f"{c.key}={raw!r}", values=", ".join(c.options)
            )
        )
    if c.type is bool:
        ok = raw.lower() in ("true", "false")
        return (
            None if ok else _("{setting} is not true or false").format(setting=f"{c.key}={raw!r}")
        )
    if c.lo is not None:
        value = _int(raw) if c.type is int else _number(raw)
        if value is None or not c.lo <= value <= c.hi:
            return _("{setting} is not a number from {lo} to {hi}").format(
                setting=f"{c.key}={raw!r}", lo=c.lo, hi=c.hi
            )
    return None


def check_link(page: str, settings: Mapping[str, str]) -> list[str]:
    """The problems of a lesson link's settings on ``page`` (empty: the link is good)."""
    own = PAGE_KEYS.get(page, ())
    sidebar = KEYS if page in SIDEBAR_PAGES else ()
    problems = []
    for key, raw in settings.items():
        if key in sidebar:
            problem = _control_problem(BY_KEY[key], raw, settings)
        elif key in COMMON_KEYS or key in own:
            problem = None
            if key == "step" and (_int(raw) is None or _int(raw) < 1):
                problem = _("{setting} is not a step number from 1").format(setting=f"step={raw!r}")
        else:
            known = ", ".join((*sidebar, *own, *COMMON_KEYS))
            problem = _("unknown setting {key} for page {page} (known: {known})").format(
                key=repr(key), page=repr(page), known=known
            )
        if problem:
            problems.append(problem)
    return problems


def listed(env: Mapping[str, str] | None = None) -> list[lessons.Listed]:
    """Every lesson, checked against the app's pages and controls."""
    return lessons.listed(env, pages=slugs(), check_link=check_link)
