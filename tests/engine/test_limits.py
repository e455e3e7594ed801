"""N's limits, one table (attnviz.engine.limits): every limit is in the table, every older name
reads it, and no source compares a token count with a bare copy of one (read with ``ast``:
the playground's "above 40 tokens" once copied viz.style.MAX_TICK_LABELS)."""

from __future__ import annotations

import ast
from pathlib import Path

from attnviz import viz
from attnviz.engine import limits
from attnviz.teaching import cross, inputs
from attnviz.ui import cell, picker, sizes

ROOT = Path(__file__).resolve().parents[2]
SOURCES = [
    *sorted((ROOT / "attnviz").rglob("*.py")),
    *sorted((ROOT / "pages").glob("*.py")),
    ROOT / "app.py",
]
#: Names that count tokens (N) in a comparison.
TOKEN_COUNTS = {"n", "N", "n_tokens", "nx", "ny", "n_rows", "n_cols"}
#: Comparisons with a number of the table that are not about N, and why.
NOT_N = {
    ("attnviz/ui/cross.py", "len(shown) <= 40"): "characters of a sentence shown in a warning",
    ("attnviz/ui/live_notices.py", "8 <= len(student) <= 32"): "the length of a student's id",
    ("attnviz/engine/limits.py", ""): "the table itself",
}


def test_every_limit_of_the_module_is_in_the_table_with_its_value():
    constants = {k: v for k, v in vars(limits).items() if k.isupper() and isinstance(v, int)}
    assert constants and set(constants) == set(limits.TABLE)
    assert all(limits.TABLE[k][0] == v and limits.TABLE[k][1] for k, v in constants.items())


def test_the_older_names_read_the_table():
    assert (inputs.MAX_TOKENS, sizes.N_MAX) == (limits.N_MAX, limits.N_MAX)
    assert (inputs.MAX_WIDTH, sizes.D_MAX) == (limits.D_MAX, limits.D_MAX)
    assert cross.N_MAX == limits.CROSS_N_MAX and picker.MAX_TOKENS == limits.MODEL_N_MAX
    s = viz.style
    assert (s.MAX_TICK_LABELS, s.MAX_MASK_MARKERS) == (limits.TICK_LABELS_N, limits.MASK_MARKERS_N)
    assert (s.MAX_SMALL_MULTIPLES_N, s.MAX_CELL_TEXT_N, s.MAX_FULL_HEATMAP_N) == (
        limits.SMALL_MULTIPLES_N,
        limits.CELL_TEXT_N,
        limits.FULL_HEATMAP_N,
    )
    assert viz.compare.HOVER_BOTH_N == limits.HOVER_BOTH_N
    assert (cell.CLIENT_MAX_N, cell.CLIENT_MAX_ND) == (limits.CELL_PANEL_N, limits.CELL_PANEL_ND)


def _mentions_a_count(node: ast.AST) -> bool:
    for x in ast.walk(node):
        if isinstance(x, ast.Name) and x.id in TOKEN_COUNTS:
            return True
        if isinstance(x, ast.Attribute) and x.attr in TOKEN_COUNTS:
            return True
        if isinstance(x, ast.Call) and getattr(x.func, "id", "") in ("len", "max", "min"):
            return True
    return False


def bare_copies(path: Path, root: Path = ROOT) -> list[str]:
    """``file: comparison`` of each comparison of a token count with an integer literal
    that is one of the table's values (a copy that would not follow the table)."""
    values = {v for v, _ in limits.TABLE.values()}
    rel = path.relative_to(root).as_posix()
    out = []
    for node in ast.walk(ast.parse(path.read_text())):
        if not isinstance(node, ast.Compare):
            continue
        parts = [node.left, *node.comparators]
        bare = [
            p for p in parts if isinstance(p, ast.Constant) and type(p.value) is int
            and p.value in values
        ]  # fmt: skip
        if bare and any(_mentions_a_count(p) for p in parts if p not in bare):
            out.append(f"{rel}: {ast.unparse(node)}")
    return out


def test_no_source_compares_a_token_count_with_a_bare_copy():
    found = [
        hit
        for path in SOURCES
        if (path.relative_to(ROOT).as_posix(), "") not in NOT_N
        for hit in bare_copies(path)
        if tuple(hit.split(": ", 1)) not in NOT_N
    ]
    assert not found, f"compare with attnviz.engine.limits' names, not their numbers: {found}"


def test_the_reader_finds_a_bare_copy(tmp_path):
    src = tmp_path / "pages" / "p.py"
    src.parent.mkdir()
    src.write_text("if n > 40:\n    pass\nif len(tokens) <= 64:\n    pass\nif d <= 40:\n    pass\n")
    assert bare_copies(src, root=tmp_path) == [
        "pages/p.py: n > 40",
        "pages/p.py: len(tokens) <= 64",
    ]
