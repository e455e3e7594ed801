"""attnviz.ui.state.compute into the engine: the settings' way through the engine's files
reads straight through (issue 49, "checks at the door"). Each public entry of the engine
checks its arguments in one call at its top; after it the computation runs on, so that a
reader following one request from ``compute`` to the engine's result enters each file of
the engine at most twice.

Measured, not read: ``sys.setprofile`` records every Python call of one ``compute`` (not
cached) and counts, per engine file, the calls into a function of that file from another
file of attnviz (the innermost frame of attnviz/ that called it; a return to a file is not
an entry). A call of a property (``params.d_k``) counts like any other. A compiled numba
loop is not a Python call: numba reports it to the profiler with a frame of its own (no
``f_back``), which is not counted.
"""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from attnviz import engine, ui
from attnviz.ui import state
from attnviz.ui.controls import replace

PACKAGE = Path(engine.__file__).resolve().parent
while PACKAGE.name != "attnviz":  # attnviz/engine.py, or attnviz/engine/__init__.py
    PACKAGE = PACKAGE.parent
#: The engine's files, by name: the attention maths (a package attnviz/engine/ holds them all).
ENGINE_FILES = {"engine", "engine_checks", "engine_views", "fused", "fast_exp", "params"}
ENGINE_FILES |= {"masks", "decoder", "cross", "limits"}
MOST = 2

DEFAULT = ui.Settings(**{c.field: c.default for c in ui.CONTROLS if c.field}, mask_params=())
CASES = {
    "defaults": DEFAULT,
    "causal": replace(DEFAULT, mask_kind="causal"),
    "padding, no scale": replace(DEFAULT, mask_kind="padding", scale_mode="none"),
    "text, 2 heads": replace(DEFAULT, source="text", text="the cat sat on the mat", heads=2),
    "preset with X": replace(DEFAULT, source="preset", preset="udl-multihead"),
    "preset with Q, K, V": replace(DEFAULT, source="preset", preset="numerical-example"),
}


def _in_package(path: str) -> Path | None:
    p = Path(path).resolve()
    return p.relative_to(PACKAGE) if p.is_relative_to(PACKAGE) else None


def is_engine(rel: Path | None) -> bool:
    if rel is None:
        return False
    return rel.parts[0] == "engine" or (len(rel.parts) == 1 and rel.stem in ENGINE_FILES)


def entries(fn) -> list[tuple[str, str]]:
    """(engine file, function) of each call into an engine file from another file of
    attnviz while ``fn`` runs, in order."""
    seen: list[tuple[str, str]] = []
    files: dict[str, Path | None] = {}

    def rel(frame) -> Path | None:
        name = frame.f_code.co_filename
        if name not in files:
            files[name] = _in_package(name)
        return files[name]

    def caller(frame) -> Path | None:  # the innermost frame of attnviz/ above this one
        while frame is not None and (where := rel(frame)) is None:
            frame = frame.f_back
        return None if frame is None else where

    def profile(frame, event, arg) -> None:
        if event != "call" or frame.f_back is None:  # no f_back: numba's event for a
            return  # compiled loop called from its own file (fast_exp), not a Python call
        here = rel(frame)
        if is_engine(here) and caller(frame.f_back) != here:
            seen.append((here.as_posix(), frame.f_code.co_name))

    sys.setprofile(profile)
    try:
        fn()
    finally:
        sys.setprofile(None)
    return seen


@pytest.mark.parametrize("settings", list(CASES.values()), ids=list(CASES))
def test_one_request_enters_each_engine_file_at_most_twice(settings):
    compute = state.compute.__wrapped__  # the function itself, not st.cache_data's copy
    seen = entries(lambda: compute(settings))
    counts = Counter(f for f, _ in seen)
    assert counts, "the tracer saw no engine file"
    assert any(f.endswith("fused.py") or "fused" in f for f in counts)  # the computation too
    over = {f: [name for g, name in seen if g == f] for f, n in counts.items() if n > MOST}
    assert not over, f"engine files entered more than {MOST} times: {over}"


def _file_of(fn) -> str:
    return _in_package(fn.__code__.co_filename).as_posix()


def test_the_tracer_counts_each_entry():
    """The measure can fail: three calls into the checks' file from outside attnviz, beside
    the engine's own call, are four entries; two calls of the engine, two."""
    x = np.ones((2, 2))
    p = engine.AttentionParams.random(2, seed=0)

    def back_and_forth():
        engine.multi_head_attention(x, p)  # the engine's file, then its one door check
        for _ in range(3):
            engine.check_finite("x", x)  # from this test: not a file of attnviz
        engine.split_heads(x, 2)

    counts = Counter(f for f, _ in entries(back_and_forth))
    assert counts[_file_of(engine.multi_head_attention)] == 2
    checks = _file_of(engine.check_finite)
    assert checks != _file_of(engine.multi_head_attention)
    assert counts[checks] == 4  # the door's check, and the three calls from here
    assert counts[checks] > MOST  # what the test above would report
