"""The README and the docs match the code: the README's control table is made from
ui.CONTROLS, the file table of docs/architecture.md names every module (and nothing that
does not exist), the README stays a first screen (short, a picture near the top) and every
document and picture it links exists."""

import re
from pathlib import Path

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


def test_every_path_in_the_layout_table_exists():
    missing = [path for path in _layout_paths() if not (ROOT / path).exists()]
    assert not missing, f"docs/architecture.md's file table names missing paths: {missing}"


def test_every_module_is_in_the_layout_table():
    named = set(_layout_paths())
    modules = sorted(
        str(p.relative_to(ROOT))
        for p in (ROOT / "attnviz").rglob("*.py")
        if p.name != "__init__.py" and "__pycache__" not in p.parts
    )
    missing = [m for m in modules if m not in named]
    assert not missing, f"missing from docs/architecture.md's file table: {missing}"


def test_readme_is_a_first_screen_with_a_picture_near_the_top():
    lines = README.splitlines()
    assert len(lines) < 250, f"README.md has {len(lines)} lines; the details belong in docs/"
    first = "\n".join(lines[:40])
    picture = r"!\[[^\]]+\]\(docs/img/[^)]+\.png\)"
    assert re.search(picture, first), "no picture in the first 40 lines"


def test_every_file_the_readme_links_exists():
    targets = sorted(set(re.findall(r"\]\(((?:docs|\.)/?[^)#\s]+)", README)))
    missing = [t for t in targets if not (ROOT / t).is_file()]
    assert not missing, f"README links files that do not exist: {missing}"


def test_every_relative_link_in_the_docs_exists():
    broken = [
        f"docs/{doc.name} links {target}"
        for doc in sorted((ROOT / "docs").glob("*.md"))
        for target in re.findall(r"\]\(([^)#\s:]+)(?:#[^)]*)?\)", doc.read_text())
        if not (ROOT / "docs" / target).resolve().exists()
    ]
    assert not broken, broken
