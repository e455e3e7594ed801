"""The recipes of docs/architecture.md ("Where to add things"), followed literally on a
scratch copy of the checkout: the files the recipe names are the only ones touched, and the
run command it gives selects and passes the tests of the new thing (issue 49, item 5).

Built so far: the page and chart recipes. The mask recipe is not followed by a test yet.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOC = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")

#: A page written as the page recipe's step 1 says: ``ui.start`` first, its shapes, one
#: board of one chart.
PAGE = '''"""A scratch page made by the page recipe (tests/test_recipes.py)."""

from attnviz import ui, viz
from attnviz.i18n import _

view = ui.start(_("Recipe page"), _("A page made by following the recipe."))
ui.shapes({"X": view.x})
ui.board(
    "recipe_board",
    [
        (
            "recipe_x",
            viz.heatmaps.token_matrix_figure(
                view.x, name="X", labels=view.labels, layout=view.layout, title="X"
            ),
            ui.link_tokens(None, view.layout, "query"),
        )
    ],
)
'''


def section(title: str) -> str:
    """The text of one recipe, from its heading to the next."""
    start = DOC.index(f"### {title}")
    end = DOC.find("\n### ", start + 4)
    return DOC[start : end if end > 0 else len(DOC)]


def scratch(tmp_path: Path) -> Path:
    """The checkout's tracked files copied to a git repository of their own."""
    repo = tmp_path / "repo"
    files = subprocess.run(
        ["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True
    ).stdout.split(b"\0")
    for name in filter(None, files):
        src, dst = ROOT / name.decode(), repo / name.decode()
        if src.is_file():
            dst.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dst)
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run([*git, "init", "-q"], cwd=repo, check=True)
    subprocess.run([*git, "add", "-A"], cwd=repo, check=True)
    subprocess.run([*git, "commit", "-q", "-m", "scratch"], cwd=repo, check=True)
    return repo


def touched(repo: Path) -> set[str]:
    out = subprocess.run(
        ["git", "status", "--porcelain"], cwd=repo, capture_output=True, text=True, check=True
    ).stdout
    return {line[3:] for line in out.splitlines()}


def test_the_page_recipe_holds_literally(tmp_path):
    recipe = section("Where to add a page")
    # the two files the recipe names, as it names them
    assert "`pages/<slug>.py`" in recipe and "`attnviz/ui/pages.py`" in recipe
    command = re.search(r"`\.venv/bin/python -m pytest ([^`]+)`", recipe)
    assert command, "the page recipe gives no run command"
    repo = scratch(tmp_path)
    (repo / "pages" / "recipe.py").write_text(PAGE, encoding="utf-8")
    table = repo / "attnviz" / "ui" / "pages.py"
    text = table.read_text(encoding="utf-8")
    entry = '    Page("recipe", N_("Recipe page"), ":material/science:", charts=1),\n'
    last = text.index("\n)\n", text.index("PAGES: tuple[Page, ...] = ("))
    table.write_text(text[: last + 1] + entry + text[last + 1 :], encoding="utf-8")
    assert touched(repo) == {"pages/recipe.py", "attnviz/ui/pages.py"}

    args = command.group(1).replace("<slug>", "recipe").replace('"', "").split()
    env = {**os.environ, "PYTHONPATH": str(repo)}
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-rA", "-p", "no:cacheprovider", *args],
        cwd=repo,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    tail = done.stdout[-4000:]
    assert done.returncode == 0, tail
    # the new page, in the table's test and in the app under the sidebar's configurations
    assert "test_every_page_of_the_table_opens_in_the_app[recipe]" in done.stdout, tail
    runs = re.findall(r"PASSED tests/test_app.py::\S+\[pages/recipe.py-", done.stdout)
    assert len(runs) >= 10, tail
    assert touched(repo) <= {"pages/recipe.py", "attnviz/ui/pages.py"}


#: The chart recipe's five steps, each as the edit it asks for (file, text to add after).
BUILDER = '''

def recipe_figure(values: ArrayLike) -> go.Figure:
    """A scratch chart made by the chart recipe (tests/test_recipes.py)."""
    v = np.asarray(values, dtype=np.float64)
    return line_figure(np.arange(1, v.size + 1), {"v": v}, title="recipe", x_title="i", y_title="v")
'''
BUILDER_TEST = """

def test_recipe_figure_reads_back():
    fig = viz.charts.recipe_figure([1.0, 2.0, 3.0])
    np.testing.assert_allclose(fig.data[0].y, [1.0, 2.0, 3.0])
"""
PAGE_LINE = """
ui.board("recipe_board", [("recipe_fig", viz.charts.recipe_figure([1.0, 2.0, 3.0]), None)])
"""
CHART_FILES = {
    "attnviz/viz/charts.py",
    "tests/viz/test_charts.py",
    "tests/figure_catalogue.py",
    "pages/permutation.py",
    "attnviz/ui/pages.py",
}


def run_pytest(repo: Path, args: list[str]) -> str:
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-rA", "-p", "no:cacheprovider", *args],
        cwd=repo,
        env={**os.environ, "PYTHONPATH": str(repo)},
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stdout[-4000:]
    return done.stdout


def test_the_chart_recipe_holds_literally(tmp_path):
    recipe = section("Where to add a chart")
    for name in (
        "`attnviz/viz/<module>.py`",
        "`tests/viz/test_<module>.py`",
        "`tests/figure_catalogue.py`",
        "`pages/<slug>.py`",
        "`attnviz/ui/pages.py`",
    ):
        assert name in recipe, name  # fmt: skip
    commands = re.findall(r"`\.venv/bin/python -m pytest ([^`]+)`", recipe)
    assert len(commands) == 2, commands
    repo = scratch(tmp_path)

    def add(rel: str, text: str, after: str | None = None) -> None:
        path = repo / rel
        old = path.read_text(encoding="utf-8")
        at = old.index(after) + len(after) if after else len(old)
        path.write_text(old[:at] + text + old[at:], encoding="utf-8")

    add("attnviz/viz/charts.py", BUILDER)  # 1. the builder
    add("tests/viz/test_charts.py", BUILDER_TEST)  # 2. its data read back
    add(  # 3. the catalogue
        "tests/figure_catalogue.py",
        '\n        "viz.charts.recipe_figure": viz.charts.recipe_figure([1.0, 2.0]),',
        "    out = {",
    )
    add("pages/permutation.py", PAGE_LINE)  # 4. on a board of the page
    table = repo / "attnviz/ui/pages.py"  # 5. one more chart
    old = '_maths("permutation", N_("Permutation"), ":material/shuffle:", 3)'
    assert old in table.read_text(encoding="utf-8")
    table.write_text(table.read_text(encoding="utf-8").replace(old, old[:-2] + "4)"))
    assert touched(repo) == CHART_FILES

    first = commands[0].replace("<module>", "charts").split()
    out = run_pytest(repo, first)
    assert "PASSED tests/viz/test_charts.py::test_recipe_figure_reads_back" in out
    second = commands[1].replace("<slug>", "permutation").replace('"', "").split()
    out = run_pytest(repo, second)
    assert len(re.findall(r"PASSED tests/test_app.py::\S+permutation", out)) >= 10
    assert touched(repo) == CHART_FILES


@pytest.mark.parametrize("title", ["Where to add a mask kind", "Where to add a chart"])
def test_every_recipe_names_a_run_command(title):
    assert re.search(r"`\.venv/bin/python -m pytest [^`]+`", section(title), re.S), title
