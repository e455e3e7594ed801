"""The README and the docs match the code: the README's control table is made from
ui.CONTROLS, each package's docstring names every module of it (and nothing that does not
exist: the per-file map of docs/architecture.md), the README stays a first screen (short, a
picture near the top) and every document and picture it links exists."""

import ast
import re
from pathlib import Path

from attnviz import ui

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text()


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


def packages() -> dict[Path, str]:
    """Each package of attnviz/ (a folder with an ``__init__.py``) and its docstring."""
    return {
        init.parent: ast.get_docstring(ast.parse(init.read_text())) or ""
        for init in sorted((ROOT / "attnviz").rglob("__init__.py"))
    }


def names_a_module(doc: str, name: str) -> bool:
    """Whether a docstring names ``name`` as code: ``name``, ``name/``, :mod:`~pkg.name`."""
    return re.search(rf"[`.~]{re.escape(name)}(\.py|/)?`", doc) is not None


def listed(doc: str) -> list[str]:
    """The modules a docstring's list items begin with (``- ``x``:``, ``- :mod:`~a.b.x```)."""
    heads = re.findall(r"^\s*- ((?:(?:``[^`]+``|:mod:`[^`]+`)(?:, | and )?)+)", doc, flags=re.M)
    names = [a or b for h in heads for a, b in re.findall(r"``([^`]+)``|:mod:`~?([^`]+)`", h)]
    return [n.rsplit(".", 1)[-1].rstrip("/") for n in names]


def test_every_module_a_package_docstring_lists_exists():
    """The per-file map is the packages' docstrings (docs/architecture.md, "The packages"):
    no line names a module that is gone."""
    found = {pkg: listed(doc) for pkg, doc in packages().items()}
    assert "core" in found[ROOT / "attnviz" / "engine"] and "tour" in found[ROOT / "attnviz" / "ui"]
    missing = [
        f"{pkg.relative_to(ROOT)}: {name}"
        for pkg, names in found.items()
        for name in names
        if not ((pkg / f"{name}.py").exists() or (pkg / name).is_dir())
    ]
    assert not missing, f"package docstrings name modules that do not exist: {missing}"


def test_every_module_is_named_in_its_package_docstring():
    assert names_a_module("- ``fused``: the fast path", "fused")
    assert not names_a_module("the fused path", "fused")
    missing = []
    for pkg, doc in packages().items():
        kids = [p.stem for p in pkg.glob("*.py") if p.name != "__init__.py"]
        kids += [d.name for d in pkg.iterdir() if (d / "__init__.py").exists()]
        missing += [
            f"{pkg.relative_to(ROOT)}/{k}" for k in sorted(kids) if not names_a_module(doc, k)
        ]
    assert not missing, f"modules their package's docstring does not name: {missing}"


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
