"""The README and the docs match the code: the README's control table is made from
ui.CONTROLS, the file table of docs/architecture.md names every module (and nothing that
does not exist), the README stays a first screen (short, a picture near the top) and every
document and picture it links exists."""

import re
from pathlib import Path

import pytest

from attnviz import ui

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text()
ARCHITECTURE = (ROOT / "docs" / "architecture.md").read_text()


def _table(header: str, text: str = README) -> str:
    start = text.index(header)
    end = text.find("\n\n", start)
    return text[start : end if end != -1 else None]


def test_control_table_is_the_one_made_from_the_controls():
    assert _table("| key | widget | values |") == ui.markdown_table()


def test_control_table_has_one_row_per_control_in_table_order():
    keys = re.findall(r"^\| `([^`]+)` \|", ui.markdown_table(), flags=re.M)
    assert keys == [c.key for c in ui.CONTROLS]
    assert len(set(keys)) == len(keys)


def _layout_paths() -> list[str]:
    rows = _table("| path | what |", ARCHITECTURE).splitlines()[2:]
    paths = []
    for row in rows:
        first_cell = row.split("|")[1]
        paths += re.findall(r"`([^`]+)`", first_cell)
    return paths


@pytest.mark.parametrize("path", _layout_paths())
def test_every_path_in_the_layout_table_exists(path):
    assert (ROOT / path).exists(), f"docs/architecture.md's file table names {path}: missing"


@pytest.mark.parametrize(
    "module",
    sorted(
        str(p.relative_to(ROOT))
        for p in (ROOT / "attnviz").rglob("*.py")
        if p.name != "__init__.py" and "__pycache__" not in p.parts
    ),
)
def test_every_module_is_in_the_layout_table(module):
    assert module in _layout_paths(), f"{module} is missing from docs/architecture.md's file table"


def test_readme_is_a_first_screen_with_a_picture_near_the_top():
    lines = README.splitlines()
    assert len(lines) < 250, f"README.md has {len(lines)} lines; the details belong in docs/"
    first = "\n".join(lines[:40])
    picture = r"!\[[^\]]+\]\(docs/img/[^)]+\.png\)"
    assert re.search(picture, first), "no picture in the first 40 lines"


@pytest.mark.parametrize("target", sorted(set(re.findall(r"\]\(((?:docs|\.)/?[^)#\s]+)", README))))
def test_every_file_the_readme_links_exists(target):
    assert (ROOT / target).is_file(), f"README links {target}, which does not exist"


@pytest.mark.parametrize("doc", sorted(p.name for p in (ROOT / "docs").glob("*.md")))
def test_every_relative_link_in_the_docs_exists(doc):
    text = (ROOT / "docs" / doc).read_text()
    for target in re.findall(r"\]\(([^)#\s:]+)(?:#[^)]*)?\)", text):
        assert (ROOT / "docs" / target).resolve().exists(), f"docs/{doc} links {target}"
