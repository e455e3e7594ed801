"""The recipes of docs/architecture.md ("Where to add things"), followed literally on a
scratch copy of the checkout: the files the recipe names are the only ones touched, and the
run command it gives selects and passes the tests of the new thing (issue 49, item 5).

The three recipes: a page, a chart on a page's board, a mask kind with a parameter.
"""

from __future__ import annotations

import json
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


def add(repo: Path, rel: str, text: str, after: str | None = None) -> None:
    """``text`` written into ``rel`` after the first ``after`` (at the end without one)."""
    path = repo / rel
    old = path.read_text(encoding="utf-8")
    at = old.index(after) + len(after) if after else len(old)
    path.write_text(old[:at] + text + old[at:], encoding="utf-8")


def shell(repo: Path, command: str) -> None:
    done = subprocess.run(
        ["bash", "-c", command], cwd=repo, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, command + "\n" + done.stdout[-2000:] + done.stderr[-2000:]


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

    add(repo, "attnviz/viz/charts.py", BUILDER)  # 1. the builder
    add(repo, "tests/viz/test_charts.py", BUILDER_TEST)  # 2. its data read back
    add(  # 3. the catalogue
        repo,
        "tests/figure_catalogue.py",
        '\n        "viz.charts.recipe_figure": viz.charts.recipe_figure([1.0, 2.0]),',
        "    out = {",
    )
    add(repo, "pages/permutation.py", PAGE_LINE)  # 4. on a board of the page
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


#: The mask recipe's steps, each as the edit it asks for: a chunked mask (Llama 4's chunked
#: local attention), query i sees the keys j <= i of its own chunk of ``chunk`` tokens.
MASK_BUILDER = """

def chunk_mask(n: int, chunk: int) -> NDArray[np.bool_]:
    \"\"\"(n, n) chunked causal mask: query i attends to keys j <= i of its own chunk of
    ``chunk`` tokens (j // chunk == i // chunk). A scratch kind (tests/test_recipes.py).\"\"\"
    if n < 1:
        raise ValueError(f"chunk_mask needs n >= 1, got n={n}")
    if not 1 <= chunk <= n:
        raise ValueError(f"chunk_mask needs 1 <= chunk <= n, got chunk={chunk}, n={n}")
    i, j = np.arange(n)[:, None], np.arange(n)[None, :]  # (n, 1) queries, (1, n) keys
    return (j <= i) & (j // chunk == i // chunk)  # (n, n)
"""
MASK_PARAM = (
    '"chunk", "c — chunk: tokens per block", "chunk c", 2, 1, '
    '"chunked: query i sees keys j ≤ i of its chunk of `chunk` tokens (1..N)", '
    '"Only {n} tokens: a chunk of {value} is more than N; using chunk = {n} (the causal mask)."'
)
MASK_KIND = f"""
    MaskKind("chunk", "chunked (blocks of c tokens)", engine.chunk_mask,
             (Param({MASK_PARAM}),),
             lambda m, n, chunk: (
                 f"{{m}} = np.tri({{n}}, {{n}}, 0, bool) & "
                 f"(np.arange({{n}})[:, None] // {{chunk}} == np.arange({{n}}) // {{chunk}})"
             ),
             "chunk: key j <= query i, both in one block of {{chunk}}",
             "chunk: token i sees the tokens of its block up to itself (Llama 4)"),"""
MASK_WORDS = [
    "chunked (blocks of c tokens)",
    "chunk: token i sees the tokens of its block up to itself (Llama 4)",
    "c — chunk: tokens per block",
    "chunk c",
    "Only {n} tokens: a chunk of {value} is more than N; using chunk = {n} (the causal mask).",
]
MASK_CORE_TEST = """

@pytest.mark.parametrize("n", [1, 2, 5, 8])
def test_chunk_mask_is_its_definition(n):
    for chunk in range(1, n + 1):
        expected = _loop_mask(n, lambda i, j, c=chunk: j <= i and j // c == i // c)
        np.testing.assert_array_equal(chunk_mask(n, chunk), expected)
    np.testing.assert_array_equal(chunk_mask(n, n), causal_mask(n))
"""
MASK_CHECKS = """
    ("chunk-zero", lambda: chunk_mask(5, 0),
     r"chunk_mask needs 1 <= chunk <= n, got chunk=0, n=5"),
    ("chunk-too-long", lambda: chunk_mask(5, 6), r"got chunk=6, n=5"),"""
MASK_FILES = {
    "attnviz/engine/core.py",
    "attnviz/engine/__init__.py",
    "attnviz/engine/masks.py",
    "attnviz/ui/mask_words.py",
    "docs/engine.md",
    "docs/app.md",
    "README.md",
    "tests/engine/test_core.py",
    "tests/engine/test_checks.py",
    "attnviz/locale/attnviz.pot",
    *(f"attnviz/locale/{lang}/LC_MESSAGES/attnviz.po" for lang in ("es", "zh_CN", "ar")),
}


def test_the_mask_recipe_holds_literally(tmp_path):
    recipe = section("Where to add a mask kind")
    for name in sorted(MASK_FILES - {"attnviz/locale/attnviz.pot"}):
        if "/locale/" not in name:
            assert f"`{name}`" in recipe, name
    for field in ("`doc`", "`over_n`"):  # the Param's seven fields, the last two by name
        assert field in recipe, field
    catalogs = re.findall(r"^    (bash scripts/i18n\.sh [^\n]+)$", DOC, re.M)
    assert len(catalogs) == 1, catalogs  # "extract && update", in the recipes' intro
    commands = re.findall(r"`\.venv/bin/python -m pytest ([^`]+)`", recipe)
    assert len(commands) == 1, commands
    repo = scratch(tmp_path)
    (repo / ".venv").symlink_to(Path(sys.executable).parents[1])  # ignored by git

    # 1. the builder, in core's __all__ and in the engine's public face
    add(
        repo,
        "attnviz/engine/core.py",
        MASK_BUILDER,
        "    return (j <= i) | (j < prefix)  # (n, n)\n",
    )
    add(repo, "attnviz/engine/core.py", '\n    "chunk_mask",', '    "causal_mask",')
    add(repo, "attnviz/engine/__init__.py", "\n    chunk_mask,", "    causal_mask,")
    add(repo, "attnviz/engine/__init__.py", '\n    "chunk_mask",', '    "causal_mask",')
    # 2. the registry; 3. its words, then the catalogs
    add(
        repo,
        "attnviz/engine/masks.py",
        MASK_KIND,
        '"prefix: every token sees the first p tokens, then causal (T5, PaLM)"),',
    )
    words = "".join(f"\n    N_({w!r})," for w in MASK_WORDS)
    add(repo, "attnviz/ui/mask_words.py", words, "WORDS = (")
    shell(repo, catalogs[0])
    tr = [
        {"msgid": w, **{lang: f"[{lang}] {w}" for lang in ("es", "zh_CN", "ar")}}
        for w in MASK_WORDS
    ]
    (tmp_path / "chunk.json").write_text(json.dumps(tr), encoding="utf-8")
    shell(repo, f".venv/bin/python scripts/i18n.py merge {tmp_path / 'chunk.json'}")
    shell(repo, "bash scripts/i18n.sh check")
    # 4. docs/engine.md's table of masks; 5. docs/app.md's Masking paragraph
    row = "| `chunk_mask(n, chunk)` | (n, n) bool, query i attends to keys j ≤ i of its chunk |\n"
    add(
        repo,
        "docs/engine.md",
        row,
        "| `causal_mask(n)` | (n, n) bool, True where query i may attend to key j ≤ i |\n",
    )
    add(repo, "docs/app.md", " or `chunk`, chunked attention", "`prefix`, the prefix LM")
    # 6. the README's control table, made by ui.markdown_table()
    made = subprocess.run(
        [".venv/bin/python", "-c", "from attnviz import ui; print(ui.markdown_table(), end='')"],
        cwd=repo,
        env={**os.environ, "PYTHONPATH": str(repo)},
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    readme = (repo / "README.md").read_text(encoding="utf-8")
    first = readme.index("| key | widget | values |")
    last = readme.index("\n\n", first)
    (repo / "README.md").write_text(readme[:first] + made + readme[last:], encoding="utf-8")
    assert "| `chunk` | number |" in made
    # 7. the pattern against a loop; 8. the builder's errors
    add(repo, "tests/engine/test_core.py", "\n    chunk_mask,", "    causal_mask,")
    add(repo, "tests/engine/test_core.py", MASK_CORE_TEST)
    add(repo, "tests/engine/test_checks.py", "\n    chunk_mask,", "    causal_mask,")
    add(repo, "tests/engine/test_checks.py", MASK_CHECKS, "ERROR_CASES = [")
    assert touched(repo) == MASK_FILES

    out = run_pytest(repo, commands[0].split())
    for test in (
        "tests/engine/test_core.py::test_chunk_mask_is_its_definition[5]",
        "tests/engine/test_checks.py::test_bad_input_raises_value_error_naming_shapes[chunk-zero]",
        "tests/engine/test_checks.py::test_bad_input_raises_value_error_naming_shapes[chunk-too-long]",
        "tests/engine/test_masks.py::test_the_code_line_is_the_builders_mask[chunk]",
        "tests/engine/test_masks.py::test_every_kind_round_trips_through_the_link[chunk]",
        "tests/engine/test_masks.py::test_the_docs_name_every_kind",
        "tests/ui/test_mask_words.py::test_every_word_a_reader_sees_of_the_registry_is_marked",
        "tests/test_readme.py::test_control_table_is_the_one_made_from_the_controls",
    ):
        assert f"PASSED {test}" in out, test
    assert touched(repo) == MASK_FILES


@pytest.mark.parametrize("title", ["Where to add a mask kind", "Where to add a chart"])
def test_every_recipe_names_a_run_command(title):
    assert re.search(r"`\.venv/bin/python -m pytest [^`]+`", section(title), re.S), title
