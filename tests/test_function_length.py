"""No function in attnviz/ longer than a reader can hold at once (measured with ``ast``).

A function of more than :data:`LIMIT` lines (its ``def`` to its last line, docstring and
comments included) is split into named steps. Exempt: a function that only returns a
literal table (a dict, list or tuple written out), and the presets' golden values (the
numbers a notebook printed, copied as they are).
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "attnviz"
LIMIT = 100

#: The presets' golden values: a notebook's inputs and the numbers it printed, by name.
GOLDEN = {
    ("attnviz/presets.py", "_udl_self_attention"),
    ("attnviz/presets.py", "_numerical_example"),
}
#: Files not checked (none: the board, rewritten on its own branch, is checked since its merge).
SKIP: set[str] = set()

#: What a literal table is made of: containers, constants, and signs (-1).
LITERALS = (
    ast.Dict,
    ast.List,
    ast.Tuple,
    ast.Set,
    ast.Constant,
    ast.Load,
    ast.UnaryOp,
    ast.unaryop,
)


def returns_a_literal_table(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """The body (after a docstring) is one ``return`` of a literal with literals inside."""
    body = fn.body
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
        body = body[1:]
    if len(body) != 1 or not isinstance(body[0], ast.Return) or body[0].value is None:
        return False
    return all(isinstance(n, LITERALS) for n in ast.walk(body[0].value))


def long_functions(path: Path, root: Path = ROOT) -> list[tuple[str, int, int]]:
    """(name, first line, length) of each function of ``path`` over :data:`LIMIT` lines."""
    rel = path.relative_to(root).as_posix()
    tree = ast.parse(path.read_text(), filename=str(path))
    out = []
    for fn in ast.walk(tree):
        if not isinstance(fn, ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        length = fn.end_lineno - fn.lineno + 1
        if length <= LIMIT or (rel, fn.name) in GOLDEN or returns_a_literal_table(fn):
            continue
        out.append((fn.name, fn.lineno, length))
    return out


FILES = [p for p in sorted(PACKAGE.rglob("*.py")) if p.relative_to(ROOT).as_posix() not in SKIP]


def test_no_function_over_the_limit():
    """Every file of attnviz/ at once; the message lists every offender."""
    offenders = [
        f"{p.relative_to(ROOT)}:{line} {name} ({length} lines)"
        for p in FILES
        for name, line, length in long_functions(p)
    ]
    assert not offenders, f"functions over {LIMIT} lines (split them into named steps): {offenders}"


def test_the_measure_finds_a_long_function_and_spares_a_table(tmp_path):
    pkg = tmp_path / "attnviz"
    pkg.mkdir()
    long_body = "\n".join(f"    x{i} = {i}" for i in range(LIMIT))
    table = "\n".join(f"        {i}: 'row {i}'," for i in range(LIMIT))
    src = pkg / "m.py"
    src.write_text(
        f"def long():\n{long_body}\n    return x0\n\n\n"
        f'def table():\n    """A literal table."""\n    return {{\n{table}\n    }}\n'
    )
    assert long_functions(src, root=tmp_path) == [("long", 1, LIMIT + 2)]
