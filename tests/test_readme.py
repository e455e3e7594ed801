"""The README's tables match the code: the control table is made from ui.CONTROLS, and the
layout table names every module (and nothing that does not exist)."""

import re
from pathlib import Path

import pytest

from attnviz import ui

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text()


def _table(header: str) -> str:
    start = README.index(header)
    end = README.find("\n\n", start)
    return README[start : end if end != -1 else None]


def test_control_table_is_the_one_made_from_the_controls():
    assert _table("| key | widget | values |") == ui.markdown_table()


def test_control_table_has_one_row_per_control_in_table_order():
    keys = re.findall(r"^\| `([^`]+)` \|", ui.markdown_table(), flags=re.M)
    assert keys == [c.key for c in ui.CONTROLS]
    assert len(set(keys)) == len(keys)


def _layout_paths() -> list[str]:
    rows = _table("| path | what |").splitlines()[2:]
    paths = []
    for row in rows:
        first_cell = row.split("|")[1]
        paths += re.findall(r"`([^`]+)`", first_cell)
    return paths


@pytest.mark.parametrize("path", _layout_paths())
def test_every_path_in_the_layout_table_exists(path):
    assert (ROOT / path).exists(), f"README layout table names {path}, which does not exist"


@pytest.mark.parametrize(
    "module",
    sorted(
        str(p.relative_to(ROOT))
        for p in (ROOT / "attnviz").rglob("*.py")
        if p.name != "__init__.py" and "__pycache__" not in p.parts
    ),
)
def test_every_module_is_in_the_layout_table(module):
    assert module in _layout_paths(), f"{module} is missing from the README's layout table"
