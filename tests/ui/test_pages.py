"""The pages table (attnviz.ui.pages.PAGES): it and pages/ agree, its slugs are the URLs
Streamlit derives from the file names, the modules that name pages name table entries, and
every page in it opens in the whole app (AppTest) without an exception, with its title,
its icon and the sidebar controls the table says apply."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest
from streamlit.source_util import page_icon_and_name
from test_app import APP, assert_clean, run_app

from attnviz.ui import code, live, pages, walker
from tests.ui.test_heads import IN_CI

ROOT = Path(__file__).resolve().parents[2]
UI = ROOT / "attnviz" / "ui"


def test_every_page_file_is_in_the_table_and_every_entry_has_its_file():
    files = sorted(str(p.relative_to(ROOT)) for p in (ROOT / "pages").glob("*.py"))
    assert files, "no page files found"
    assert sorted(p.file for p in pages.PAGES) == files


def test_slugs_and_titles_are_unique():
    slugs = [p.slug for p in pages.PAGES]
    titles = [p.title for p in pages.PAGES]
    assert len(set(slugs)) == len(slugs), slugs
    assert len(set(titles)) == len(titles), titles


@pytest.mark.parametrize("entry", pages.PAGES, ids=lambda p: p.slug)
def test_slug_is_the_url_streamlit_derives_from_the_file_name(entry):
    """app.py passes url_path=slug; this keeps every URL what it was without it."""
    assert page_icon_and_name(Path(entry.file)) == ("", entry.slug)


@pytest.mark.parametrize("entry", pages.PAGES, ids=lambda p: p.slug)
def test_entry_fields_are_well_formed(entry):
    assert entry.title.strip() and entry.icon.startswith(":material/"), entry
    assert entry.controls in ("all", "weights", "seed", "none"), entry
    # a page where no control applies runs a trained model, or draws no chart (the sidebar's
    # note says which: ui.walker NOT_APPLYING, NOT_USED)
    assert entry.runs_model or entry.controls != "none" or entry.charts == 0, entry
    assert entry.charts >= 0


def test_the_page_lookup_names_the_slugs_when_one_is_wrong():
    assert pages.page("masking").file == "pages/masking.py"
    with pytest.raises(KeyError, match="no page 'maskng'.*masking"):
        pages.page("maskng")


def test_code_box_extras_and_the_join_link_name_pages_of_the_table():
    assert set(code.PAGE_EXTRAS) <= set(pages.BY_SLUG), set(code.PAGE_EXTRAS)
    assert live.PAGE in pages.BY_SLUG
    with pytest.raises(KeyError, match="no page"):
        code.page_extra("maskng")


def _literal_page_args() -> list[tuple[str, str]]:
    """Every string literal given as the page of an Ask-the-room call in attnviz/ui and
    pages/ (``ask_room("x", ...)``, ``ask_box("x", ...)``, ``model_heads("x", ...)``,
    ``page_extra("x", ...)``, a chart's ``Overlay("x", ...)``): (where, slug)."""
    found = []
    calls = {"ask_room", "ask_box", "model_heads", "page_extra", "outline", "Overlay"}
    for path in [*sorted(UI.glob("*.py")), *sorted((ROOT / "pages").glob("*.py"))]:
        for node in ast.walk(ast.parse(path.read_text())):
            if not isinstance(node, ast.Call) or not node.args:
                continue
            name = getattr(node.func, "attr", getattr(node.func, "id", ""))
            first = node.args[0]
            if name in calls and isinstance(first, ast.Constant) and isinstance(first.value, str):
                found.append((f"{path.relative_to(ROOT)}:{node.lineno}", first.value))
    return found


def test_ask_the_room_and_code_box_calls_name_slugs_of_the_table():
    found = _literal_page_args()
    assert len(found) >= 8, found  # the asks of six pages, the playground's, the code extras
    bad = [(where, slug) for where, slug in found if slug not in pages.BY_SLUG]
    assert not bad, bad


def _hidden_controls(at) -> str:
    """What the sidebar hides: "none" (every control), "seed" (all but the seed), "weights"
    (all but the sizes, seed, weights and scaling: drawn in a hidden box), ""."""
    css = " ".join(h.proto.body for h in at.get("html"))
    if f".st-key-{walker.CONTROLS_BOX} {{display: none;}}" in css:
        return "none"
    if f".st-key-{walker.HIDDEN_BOX} {{display: none;}}" in css:
        return "weights"
    return "seed" if ":not(.st-key-seed)" in css else ""


@pytest.mark.parametrize("entry", pages.PAGES, ids=lambda p: p.slug)
def test_every_page_of_the_table_opens_in_the_app(entry):
    at = run_app({"N": "5"}, entry.file)
    missing = [e.value for e in at.error if "cannot load the model" in e.value]
    if entry.runs_model and missing and not IN_CI:  # ui.model_missing: weights not installed
        pytest.skip(f"{entry.file}: {missing[0]}")
    assert_clean(at)
    assert at.title, f"{entry.file}: no title"
    expected = {"all": "", "weights": "weights", "seed": "seed", "none": "none"}[entry.controls]
    assert _hidden_controls(at) == expected
    notes = [i.value for i in at.sidebar.info] + [c.value for c in at.sidebar.caption]
    assert (walker.NOT_APPLYING in notes) == (entry.controls == "none" and entry.runs_model)
    assert (walker.NOT_USED in notes) == (entry.controls == "none" and not entry.runs_model)
    assert (walker.SEED_ONLY_NOTE in notes) == (entry.controls == "seed")
    assert (walker.WEIGHTS_ONLY_NOTE in notes) == (entry.controls == "weights")


def test_app_builds_its_navigation_from_the_table():
    """app.py names no page itself: every page path in it comes from the table."""
    source = Path(APP).read_text()
    assert not re.search(r"pages/\w+\.py", source), "a page file written in app.py"
    assert "ui.pages.PAGES" in source
