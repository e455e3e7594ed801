"""attnviz.ui.lesson_links: a lesson's links checked against the app's pages and controls,
and every stop of the shipped lessons opening its page with exactly its settings."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from attnviz.classroom import lessons
from attnviz.ui import lesson_links
from attnviz.ui import pages as ui_pages
from attnviz.ui.controls import KEYS

ROOT = Path(__file__).resolve().parents[2]


def test_the_shipped_lessons_pass_the_app_s_checks():
    listed = [x for x in lesson_links.listed({}) if x.shipped]
    assert len(listed) == 3
    assert [str(x.error) for x in listed if x.error] == []


@pytest.mark.parametrize(
    "page, settings, says",
    [
        ("playground", {"N": "0"}, "N='0' is not a number from 1"),
        ("playground", {"D": "8", "heads": "3"}, "heads='3' is not a divisor of D=8"),
        ("playground", {"heads": "5"}, "heads='5' is not a divisor of D="),
        ("masking", {"mask": "sideways"}, "mask='sideways' is not one of"),
        ("playground", {"bias": "maybe"}, "bias='maybe' is not true or false"),
        ("playground", {"n": "4"}, "unknown setting 'n' for page 'playground'"),
        ("real_model", {"N": "4"}, "unknown setting 'N' for page 'real_model'"),  # no sidebar there
        ("playground", {"step": "0"}, "step='0' is not a step number from 1"),
        ("playground", {"preset": "nope"}, "preset='nope' is not one of"),
    ],
)
def test_a_bad_setting_is_said(page, settings, says):
    problems = lesson_links.check_link(page, settings)
    assert len(problems) == 1 and says in problems[0], problems


def test_good_settings_pass():
    good = {"N": "4", "D": "8", "heads": "2", "mask": "causal", "scale": "none", "bias": "false",
            "factor": "2,5", "step": "3", "lang": "es", "head": "1"}  # fmt: skip
    assert lesson_links.check_link("playground", good) == []
    assert lesson_links.check_link("learned", {"task": "induction", "checkpoint": "0"}) == []
    # the training step's old parameter is the presenter's slide there too (from 1)
    assert lesson_links.check_link("learned", {"task": "induction", "step": "2"}) == []
    assert lesson_links.check_link("learned", {"task": "induction", "step": "0"}) != []
    assert lesson_links.check_link("decoder", {"dec_L": "18", "dec_H": "6"}) == []


def _bound_keys() -> list[tuple[str, str]]:
    """(file, key or f-string pattern) of every widget the code binds to the URL."""
    out = []
    files = [*ROOT.glob("pages/*.py"), *ROOT.glob("attnviz/ui/**/*.py")]
    for f in files:
        for node in ast.walk(ast.parse(f.read_text())):
            if not isinstance(node, ast.Call):
                continue
            kw = {k.arg: k.value for k in node.keywords}
            if "bind" not in kw or "key" not in kw:
                continue
            key = kw["key"]
            if isinstance(key, ast.Constant):
                out.append((f.name, re.escape(key.value)))
            elif isinstance(key, ast.JoinedStr):  # f"{prefix}_n": any prefix
                parts = [
                    re.escape(v.value) if isinstance(v, ast.Constant) else "[a-z_]+"
                    for v in key.values
                ]
                out.append((f.name, "".join(parts)))
    return out


def test_every_key_the_code_binds_to_the_url_is_known_to_some_page():
    known = {
        *KEYS,
        *lesson_links.COMMON_KEYS,
        *(k for keys in lesson_links.PAGE_KEYS.values() for k in keys),
    }
    bound = _bound_keys()
    assert len(bound) > 20  # the walk finds the code's bindings
    missing = [
        (f, p) for f, p in bound if p != "key" and not any(re.fullmatch(p, k) for k in known)
    ]
    assert missing == []
    assert set(lesson_links.PAGE_KEYS) == {p.slug for p in ui_pages.PAGES}


def _stops():
    for lesson in lessons.shipped():
        for i, stop in enumerate(lesson.stops):
            yield pytest.param(stop, id=f"{lesson.slug}-{i + 1}")


def _opened(stop: lessons.Stop) -> AppTest:
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=180)
    at.query_params.update(stop.settings)
    at.run()
    entry = ui_pages.page(stop.page)
    if entry is not ui_pages.PAGES[0]:
        at.switch_page(entry.file).run()
    return at


@pytest.mark.parametrize("stop", list(_stops()))
def test_each_shipped_stop_opens_its_page_with_exactly_its_settings(stop):
    at = _opened(stop)
    assert not at.exception, [e.message for e in at.exception]
    assert [e.value for e in at.error] == []
    assert [w.value for w in at.warning if "link" in str(w.value).lower()] == []  # no link notice
    url = dict(at.query_params.items())
    for key, value in stop.settings.items():
        if key == "step" and stop.page != "learned":
            continue  # the presenter view's step: read by ui.steps only when presenting
        if key in at.session_state:  # a widget: its value (the URL drops a default value)
            got = at.session_state[key]
        else:  # a page's own link parameter (the Learned page's task and step)
            got = url.get(key)
            got = got[0] if isinstance(got, list) else got
        assert str(got).lower() == value.lower(), (key, got, value)
