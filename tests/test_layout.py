"""The layout of the tree (docs/architecture.md): the house, its layers and the tests that
mirror them.

- **The house.** The top of ``attnviz/`` holds at most :data:`TOP_MAX` Python modules and
  packages besides ``__init__``/``__main__`` (data folders aside), each a concept. The
  packages import downward only (``scripts/layers.py``: :data:`layers.LAYERS`, no import
  climbs back up, no import circle between them), and the drawing of the floors in
  docs/architecture.md is what ``scripts/layers.py`` draws from the code. Code of the
  project imports the real paths, never an old path of ``attnviz.CONTRACT``.
- **Layers.** The library (the engine, the teaching material, the class but its web page,
  ``models/``, ``toys/``, the modules at the top) imports neither streamlit nor plotly: it is
  imported here in a fresh interpreter where both are blocked. Read from the source with
  ``ast`` (every import, top level or inside a function): streamlit only under
  ``attnviz/ui/`` (and ``app.py``, ``pages/``, ``serve.py``), plotly only under
  ``attnviz/viz/`` and ``attnviz/ui/``, starlette (the light routes of a live class) only
  under ``attnviz/classroom/web/`` (and ``serve.py``), which imports neither streamlit nor
  plotly.
- **Tests mirror the package.** ``attnviz/<module>.py`` is tested in
  ``tests/test_<module>.py``, ``attnviz/<sub>/<module>.py`` in ``tests/<sub>/test_<module>.py``
  (``<sub>`` the longest of :data:`SUBPACKAGES` that holds it: ``attnviz/classroom/web/hub.py``
  in ``tests/classroom/web/test_hub.py``; a package of its own below them,
  ``attnviz/ui/board/``, in ``tests/ui/test_board.py``, its ``assets.py`` in
  ``tests/ui/test_board_assets.py``). A second file for one module is
  ``test_<module>_<aspect>.py``. A module counts when it defines a function or a class (a
  package's ``__init__`` that re-exports, a ``__main__`` that calls one function: nothing of
  their own to test). At least :data:`SHARE` of the modules have their own test file, and
  every test file names a module, or is one of :data:`REPO_TESTS`.
"""

from __future__ import annotations

import ast
import importlib.util
import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "attnviz"
TESTS = ROOT / "tests"
SHARE = 0.9
#: Sub-packages of attnviz/ with a test folder of their own.
SUBPACKAGES = ("engine", "teaching", "classroom", "classroom/web", "models", "toys", "viz", "ui")
#: At most this many Python modules and packages at the top of attnviz/ (issue 49).
TOP_MAX = 10
#: Test files about the repository rather than one module, and what they test.
REPO_TESTS = {
    "test_app.py": "app.py and every page through AppTest",
    "test_bench_class_hall.py": "bench/class_hall.py",
    "test_bench_engine.py": "bench/engine.py",
    "test_bench_gestures.py": "bench/gestures.py",
    "test_bench_models.py": "bench/real_models.py qwen2",
    "test_bench_predict.py": "bench/class_hall.py --part predict",
    "test_bench_smoke.py": "bench/'s Streamlit client",
    "test_ci.py": ".ci/",
    "test_contract.py": "the import paths the docs show (attnviz.CONTRACT)",
    "test_class_deploy.py": "deploy/ for a live class",
    "test_deploy.py": "deploy/",
    "test_deploy_k8s.py": "deploy/k8s/",
    "test_function_length.py": "every function of attnviz/",
    "test_imports.py": "the import graph of attnviz/",
    "test_layout.py": "this file: the tree's layers and the tests' layout",
    "test_lost_click.py": "bench/lost_click.py on a real server",
    "test_package.py": "the wheel (pyproject.toml)",
    "test_readme.py": "README.md and docs/",
    "test_recipes.py": "docs/architecture.md's recipes, followed on a scratch copy",
    "test_rerun_race.py": ".streamlit/config.toml's runner.fastReruns on a real server",
    "test_serving.py": ".streamlit/, the Dockerfile, unsafe HTML",
}
#: The library: importable without streamlit and plotly.
LIBRARY_DIRS = ("", "engine", "teaching", "classroom", "classroom/lessons", "models", "toys")


# --- the house -------------------------------------------------------------------------


def load_layers():
    spec = importlib.util.spec_from_file_location("layers", ROOT / "scripts" / "layers.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


layers = load_layers()


def top_level(package: Path = PACKAGE) -> list[str]:
    """The Python modules and packages at the top of ``package`` (not ``__init__``,
    ``__main__``, nor a data folder: one without an ``__init__.py``)."""
    return sorted(
        p.name
        for p in package.iterdir()
        if (p.suffix == ".py" and p.stem not in ("__init__", "__main__"))
        or (p.is_dir() and (p / "__init__.py").exists())
    )


def test_the_top_of_attnviz_holds_few_modules_and_packages():
    top = top_level()
    assert {"engine", "classroom", "teaching", "i18n.py"} <= set(top)
    assert "locale" not in top and "toy_runs" not in top  # data folders
    assert len(top) <= TOP_MAX, f"{len(top)} at the top of attnviz/ (at most {TOP_MAX}): {top}"


def test_the_packages_import_downward_only(tmp_path):
    graph = layers.edges()
    assert set(graph) == {u for layer in layers.LAYERS for u in layer}
    assert {"engine", "i18n"} <= graph["classroom"] and graph["engine"] == set()
    assert layers.climbs(graph) == [], layers.climbs(graph)
    layers.floors(graph)  # raises on an import circle between the packages
    # the reader sees a climb and a circle
    assert layers.climbs({"engine": {"ui"}, "ui": {"engine"}}) == ["engine imports ui"]
    with pytest.raises(ValueError, match="import circle"):
        layers.floors({"a": {"b"}, "b": {"a"}})
    (tmp_path / "attnviz" / "engine").mkdir(parents=True)
    (tmp_path / "attnviz" / "engine" / "x.py").write_text(
        "def f():\n    from attnviz.teaching import latex\n"
    )
    assert layers.edges(tmp_path) == {"engine": {"teaching"}}


DRAWING = "<!-- drawn by: python scripts/layers.py -->"


def drawing_in(doc: str) -> str:
    """The text block after the :data:`DRAWING` marker of ``doc``."""
    after = doc.split(DRAWING, 1)[1].lstrip("\n")
    assert after.startswith("```"), "the drawing is a ``` block right after its marker"
    return after.split("\n", 1)[1].split("```", 1)[0].rstrip("\n")


def test_the_drawing_in_the_doc_is_the_code_s():
    doc = (ROOT / "docs" / "architecture.md").read_text()
    assert drawing_in(doc) == layers.drawing(), (
        "docs/architecture.md's drawing differs from the code's imports: paste the output "
        "of `python scripts/layers.py` under its marker"
    )


#: Files that are the project's code: they import the real paths, never an old one.
PROJECT_FILES = [
    *sorted(PACKAGE.rglob("*.py")),
    ROOT / "app.py",
    ROOT / "serve.py",
    *sorted((ROOT / "pages").glob("*.py")),
    *sorted((ROOT / "bench").rglob("*.py")),
    *sorted((ROOT / "scripts").rglob("*.py")),
    *(
        p
        for p in sorted(TESTS.rglob("*.py"))
        if p.name not in ("test_contract.py", "test_layout.py")
    ),
]


def contract_imports(files: list[Path], old: set[str]) -> list[str]:
    return [
        f"{path.relative_to(ROOT).as_posix() if path.is_relative_to(ROOT) else path.name}:"
        f"{line} imports {name}"
        for path in files
        for line, name in modules_imported(path)
        if name in old or name.startswith(tuple(o + "." for o in old))
    ]


def test_the_project_imports_the_real_paths(tmp_path):
    import attnviz

    old = set(attnviz.CONTRACT)
    assert not contract_imports(PROJECT_FILES, old), contract_imports(PROJECT_FILES, old)
    lines = ["from attnviz import explain", "import attnviz.presets", "from attnviz.latex import x"]
    lines += ["from attnviz.teaching import explain", "from attnviz import engine, toys"]
    for i, line in enumerate(lines):
        (tmp_path / f"m{i}.py").write_text(line + "\n")
    hits = contract_imports(sorted(tmp_path.glob("*.py")), old)
    assert sorted({h.split(":")[0] for h in hits}) == ["m0.py", "m1.py", "m2.py"]


# --- the layers ------------------------------------------------------------------------


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def sources() -> dict[str, Path]:
    """Every module of attnviz/ by name."""
    return {module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def library() -> list[str]:
    """The library's modules (``__main__`` left out: importing it runs the command)."""
    out = []
    for name, path in sources().items():
        folder = path.parent.relative_to(PACKAGE).as_posix().removeprefix(".")
        if folder in LIBRARY_DIRS and path.stem != "__main__":
            out.append(name)
    return out


def third_party(path: Path) -> list[tuple[int, str]]:
    """(line, top-level package) of every absolute import in ``path``, at any depth."""
    out = []
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            out += [(node.lineno, a.name.split(".")[0]) for a in node.names]
        elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
            out.append((node.lineno, node.module.split(".")[0]))
    return out


def allowed(rel: str, package: str) -> bool:
    """Whether the file ``rel`` (relative to the checkout) may import ``package``."""
    if package == "streamlit":
        return rel.startswith(("attnviz/ui/", "pages/")) or rel in ("app.py", "serve.py")
    if package == "plotly":
        return rel.startswith(("attnviz/viz/", "attnviz/ui/"))
    if package == "starlette":
        return rel.startswith("attnviz/classroom/web/") or rel == "serve.py"
    return True


#: The packages whose imports are ruled by :func:`allowed`.
RULED = ("streamlit", "plotly", "starlette")
FILES = [
    *sorted(PACKAGE.rglob("*.py")),
    ROOT / "app.py",
    ROOT / "serve.py",
    *sorted((ROOT / "pages").glob("*.py")),
]


def layer_breaches() -> list[str]:
    out = []
    for path in FILES:
        rel = path.relative_to(ROOT).as_posix()
        for line, package in third_party(path):
            if package in RULED and not allowed(rel, package):
                out.append(f"{rel}:{line} imports {package}")
    return out


def test_the_import_reader_sees_imports_at_every_depth():
    found = dict((p, line) for line, p in third_party(PACKAGE / "ui" / "page.py"))
    assert "streamlit" in found and "plotly" in found
    minilm = {p for _, p in third_party(PACKAGE / "models" / "minilm.py")}
    assert "tokenizers" in minilm  # imported inside a function
    assert not allowed("attnviz/engine/core.py", "plotly") and not allowed(
        "attnviz/viz/x.py", "streamlit"
    )
    assert allowed("pages/scaling.py", "streamlit") and not allowed("pages/scaling.py", "plotly")
    assert allowed("attnviz/classroom/web/student.py", "starlette")
    assert not allowed("attnviz/classroom/web/student.py", "streamlit")
    assert not allowed("attnviz/classroom/store.py", "starlette")
    assert not allowed("attnviz/ui/live.py", "starlette")


def test_each_framework_only_in_its_layer():
    assert not layer_breaches(), "imports across the layers:\n" + "\n".join(layer_breaches())


def modules_imported(path: Path) -> list[tuple[int, str]]:
    """(line, full dotted name) of every module an import of ``path`` may load, at any
    depth: ``import a.b`` gives a.b, ``from a import b`` gives a and a.b (b may be a module
    or a name of a), ``from a.b import c`` gives a.b and a.b.c."""
    out = []
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            out += [(node.lineno, a.name) for a in node.names]
        elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
            out.append((node.lineno, node.module))
            out += [(node.lineno, f"{node.module}.{a.name}") for a in node.names]
    return out


#: What a page reaches only through the board's overlay hook (``overlay=ui.Overlay(...)``),
#: or through ``attnviz.ui.asks`` for its Ask-the-room questions: the classroom's chart
#: side (docs/architecture.md, the layers).
PAGES_NEVER_IMPORT = "attnviz.ui.predict"


def page_predict_imports(pages_dir: Path = ROOT / "pages") -> list[str]:
    return [
        f"{path.relative_to(pages_dir.parent).as_posix()}:{line} imports {name}"
        for path in sorted(pages_dir.glob("*.py"))
        for line, name in modules_imported(path)
        if name == PAGES_NEVER_IMPORT or name.startswith(PAGES_NEVER_IMPORT + ".")
    ]


def test_no_page_imports_the_class_overlay_but_through_the_board(tmp_path):
    assert not page_predict_imports(), page_predict_imports()
    # the reader sees every spelling of the import, and not a name that merely starts alike
    pages = tmp_path / "pages"
    pages.mkdir()
    spellings = [
        "from attnviz.ui import predict",
        "from attnviz.ui import asks, predict as p",
        "import attnviz.ui.predict",
        "from attnviz.ui.predict import outline",
        "def f():\n    from attnviz.ui import predict",
    ]
    for i, line in enumerate(spellings):
        (pages / f"p{i}.py").write_text(line + "\n")
    (pages / "ok.py").write_text(
        "from attnviz.ui import asks, predicted\nimport attnviz.classroom.predict\n"
    )
    assert {hit.split(":")[0] for hit in page_predict_imports(pages)} == {
        f"pages/p{i}.py" for i in range(len(spellings))
    }


#: Run in a fresh interpreter: streamlit and plotly cannot be imported, then each module
#: given on the command line is imported; prints {module: error or ""} as JSON.
BLOCKED = textwrap.dedent(
    """
    import importlib, json, sys

    class Blocked:
        def find_spec(self, name, path=None, target=None):
            if name.split(".")[0] in ("streamlit", "plotly"):
                raise ImportError(f"{name} is blocked (the library must not need it)")
            return None

    sys.meta_path.insert(0, Blocked())
    out = {}
    for name in sys.argv[1:]:
        try:
            importlib.import_module(name)
            out[name] = ""
        except Exception as err:
            out[name] = f"{type(err).__name__}: {err}"
    leaked = sorted(m for m in sys.modules if m.split(".")[0] in ("streamlit", "plotly"))
    print(json.dumps({"errors": out, "leaked": leaked}))
    """
)


def import_blocked(names: list[str]) -> dict:
    return run_fresh([BLOCKED, *names])


def run_fresh(code_and_args: list[str]) -> dict:
    """``python -c CODE ARGS...`` in a fresh interpreter with only the checkout on its path:
    the JSON of its last line (tests/test_contract.py too)."""
    done = subprocess.run(
        [sys.executable, "-c", *code_and_args],
        cwd=ROOT,
        env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        timeout=240,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.splitlines()[-1])


def test_the_library_imports_with_streamlit_and_plotly_blocked():
    names = library()
    assert {"attnviz.engine", "attnviz.classroom.store", "attnviz.models.smollm"} <= set(names)
    assert {"attnviz.teaching.latex", "attnviz.classroom.lessons"} <= set(names)
    assert not any(
        n.startswith(("attnviz.ui", "attnviz.viz", "attnviz.classroom.web")) for n in names
    )
    got = import_blocked(names)
    failed = {n: e for n, e in got["errors"].items() if e}
    assert not failed, f"library modules that need streamlit or plotly: {failed}"
    assert got["leaked"] == []


def test_the_block_holds():
    got = import_blocked(["attnviz.viz.style", "attnviz.ui.state"])
    assert all("is blocked" in e for e in got["errors"].values()), got


# --- tests mirror the package ----------------------------------------------------------


def has_code(path: Path) -> bool:
    tree = ast.parse(path.read_text(), filename=str(path))
    return any(
        isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) for n in ast.walk(tree)
    )


def test_file(path: Path) -> Path:
    """Where the tests of the module at ``path`` live."""
    parts = list(path.relative_to(PACKAGE).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    for depth in range(len(parts) - 1, 0, -1):  # the longest sub-package that holds it
        if "/".join(parts[:depth]) in SUBPACKAGES:
            return TESTS.joinpath(*parts[:depth]) / f"test_{'_'.join(parts[depth:])}.py"
    return TESTS / f"test_{'_'.join(parts)}.py"


test_file.__test__ = False  # a helper, not a test


def counted() -> list[Path]:
    return [p for p in sorted(PACKAGE.rglob("*.py")) if has_code(p)]


def test_the_mirror_rule():
    assert test_file(PACKAGE / "engine" / "core.py") == TESTS / "engine" / "test_core.py"
    assert test_file(PACKAGE / "i18n.py") == TESTS / "test_i18n.py"
    web = PACKAGE / "classroom" / "web"
    assert test_file(web / "hub.py") == TESTS / "classroom" / "web" / "test_hub.py"
    lessons = PACKAGE / "classroom" / "lessons" / "__init__.py"
    assert test_file(lessons) == TESTS / "classroom" / "test_lessons.py"
    assert test_file(PACKAGE / "viz" / "compare.py") == TESTS / "viz" / "test_compare.py"
    assert test_file(PACKAGE / "ui" / "board" / "__init__.py") == TESTS / "ui" / "test_board.py"
    assert (
        test_file(PACKAGE / "ui" / "board" / "assets.py") == TESTS / "ui" / "test_board_assets.py"
    )
    names = {p.relative_to(PACKAGE).as_posix() for p in counted()}
    assert "engine/core.py" in names and "ui/board/__init__.py" in names
    assert "__main__.py" not in names and "viz/__init__.py" not in names


def test_most_modules_have_their_own_test_file():
    modules = counted()
    lacking = [p.relative_to(ROOT).as_posix() for p in modules if not test_file(p).exists()]
    share = 1 - len(lacking) / len(modules)
    assert share >= SHARE, (
        f"{share:.0%} of the {len(modules)} modules have their own test file (at least "
        f"{SHARE:.0%} must); without one: {', '.join(lacking)}"
    )


def stems(folder: Path) -> list[str]:
    """The names a test file in ``folder`` may start with: its modules (test_<stem>)."""
    sub = folder.relative_to(TESTS).as_posix()
    return sorted(
        test_file(p).stem.removeprefix("test_")
        for p in PACKAGE.rglob("*.py")
        if p.stem != "__main__"
        and test_file(p).parent == folder
        and (sub in SUBPACKAGES or folder == TESTS)
    )


@pytest.mark.parametrize("folder", [TESTS, *(TESTS / s for s in SUBPACKAGES)], ids=lambda f: f.name)
def test_every_test_file_names_its_module(folder):
    names = stems(folder)
    stray = [
        f.relative_to(ROOT).as_posix()
        for f in sorted(folder.glob("test_*.py"))
        if not (folder == TESTS and f.name in REPO_TESTS)
        and not any(f.stem == f"test_{m}" or f.stem.startswith(f"test_{m}_") for m in names)
    ]
    assert not stray, (
        f"test files that name no module of {folder.relative_to(ROOT).as_posix()}/ (name a "
        f"file test_<module>.py or test_<module>_<aspect>.py): {stray}"
    )
