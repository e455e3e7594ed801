"""The floors of attnviz, drawn from its imports (docs/architecture.md, "The house").

    python scripts/layers.py     # prints the drawing that docs/architecture.md holds

Every module of ``attnviz/`` belongs to one package of the top (``attnviz.engine.core`` to
``engine``, ``attnviz.i18n`` to ``i18n``); ``app.py``, ``serve.py`` and ``pages/`` are the
``app``. The imports are read from the source with ``ast`` (top level and inside functions;
nothing is imported). A package's floor is one above the highest floor it imports from, so
the drawing is what the code does, not what it was meant to do; :data:`LAYERS` is what it is
meant to do, and :func:`climbs` lists the imports that go against it
(``tests/test_layout.py`` keeps both true).
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "attnviz"
#: The intended order, bottom first: a package imports only from the layers below its own.
LAYERS = (
    ("i18n", "cli"),
    ("engine",),
    ("models", "teaching"),
    ("toys",),
    ("classroom",),
    ("viz",),
    ("ui",),
    ("app",),
)
#: What each package is, in a few words (the drawing's legend).
WHAT = {
    "app": "app.py, serve.py, pages/: the routes and the thin pages",
    "ui": "everything that talks to Streamlit",
    "viz": "plotly figures from plain arrays (no Streamlit)",
    "classroom": "the live class: store, exercises, predictions, lessons, web/",
    "teaching": "presets, inputs, explanations, LaTeX, wording",
    "models": "real checkpoints in NumPy",
    "toys": "tiny transformers trained in NumPy",
    "engine": "the attention maths in NumPy",
    "i18n": "the languages",
    "cli": "the attnviz command",
}


def unit(module: str) -> str:
    """The package of the top that a dotted module name belongs to."""
    parts = module.split(".")
    if parts[0] != "attnviz":
        return "app"
    if len(parts) == 1:
        return "attnviz"
    return "cli" if parts[1] == "__main__" else parts[1]


def sources(root: Path = ROOT) -> dict[str, Path]:
    """Every module of attnviz/ and of the app, by dotted name."""
    out = {}
    for path in sorted((root / "attnviz").rglob("*.py")):
        parts = path.relative_to(root).with_suffix("").parts
        out[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    for path in [root / "app.py", root / "serve.py", *sorted((root / "pages").glob("*.py"))]:
        if path.exists():
            out["app:" + path.relative_to(root).as_posix()] = path
    return out


def imported(path: Path) -> set[str]:
    """Every ``attnviz`` module (or name) ``path`` imports, dotted, at any depth."""
    out = set()
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            out |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
            out |= {f"{node.module}.{a.name}" for a in node.names}
    return {m for m in out if m.startswith("attnviz.")}


def edges(root: Path = ROOT) -> dict[str, set[str]]:
    """Package -> the other packages of the top it imports from."""
    out: dict[str, set[str]] = {}
    for name, path in sources(root).items():
        here = unit(name)
        got = out.setdefault(here, set())
        for module in imported(path):
            there = unit(module)
            if there not in (here, "attnviz"):
                got.add(there)
    out.pop("attnviz", None)
    return out


def floors(graph: dict[str, set[str]]) -> dict[str, int]:
    """Each package's floor: 1 for one that imports none, else one above its highest."""
    done: dict[str, int] = {}

    def floor(u: str, path: tuple[str, ...] = ()) -> int:
        if u in path:
            raise ValueError("import circle: " + " -> ".join([*path, u]))
        if u not in done:
            done[u] = 1 + max((floor(d, (*path, u)) for d in graph.get(u, ())), default=0)
        return done[u]

    for u in graph:
        floor(u)
    return done


def climbs(graph: dict[str, set[str]]) -> list[str]:
    """The imports that go up or sideways in :data:`LAYERS` (or from a package it lacks)."""
    rank = {u: i for i, layer in enumerate(LAYERS) for u in layer}
    out = []
    for u, deps in sorted(graph.items()):
        for d in sorted(deps):
            if u not in rank or d not in rank or rank[d] >= rank[u]:
                out.append(f"{u} imports {d}")
    return out


def drawing(root: Path = ROOT) -> str:
    """The floors, top first, each package with what it imports from."""
    graph = edges(root)
    level = floors(graph)
    width = max(map(len, graph))
    lines = []
    for f in range(max(level.values()), 0, -1):
        here = sorted(u for u in level if level[u] == f)
        lines.append(f"floor {f}  " + "   ".join(f"[{u}]" for u in here))
        for u in here:
            deps = sorted(graph[u], key=lambda d: (-level[d], d))
            to = " ".join(deps) if deps else "(nothing of attnviz)"
            lines.append(f"    {u:<{width}}  -> {to}")
    lines.append("")
    lines += [f"{u:<{width}}  {WHAT[u]}" for layer in reversed(LAYERS) for u in layer]
    return "\n".join(lines)


if __name__ == "__main__":
    print(drawing())
