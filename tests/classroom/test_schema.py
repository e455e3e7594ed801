"""The class store's schema module (attnviz.classroom.schema): the contract that every
public name of it is importable from attnviz.classroom, the tables' keys, and the SQLite
engine's settings."""

from __future__ import annotations

import ast
from pathlib import Path

import sqlalchemy as sa

from attnviz import classroom
from attnviz.classroom import schema as classroom_schema


def defined_here(module) -> set[str]:
    """The public names a module defines at its top level (read with ``ast``)."""
    tree = ast.parse(Path(module.__file__).read_text())
    out = set()
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.ClassDef):
            out.add(node.name)
        elif isinstance(node, ast.Assign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            out |= {t.id for t in targets if isinstance(t, ast.Name)}
    return {n for n in out if not n.startswith("_")}


def test_every_public_name_is_importable_from_the_classroom_as_the_same_object():
    own = defined_here(classroom_schema)
    assert {"JOIN_PATH", "ClassInfo", "ViewQuestion", "make_engine", "answers_table"} <= own
    lost = sorted(n for n in own if getattr(classroom, n, None) is not getattr(classroom_schema, n))
    assert not lost, f"attnviz.classroom lost names of its contract: {lost}"


def test_each_table_is_keyed_by_the_class_code_first():
    for table in classroom_schema.metadata.sorted_tables:
        keys = [c.name for c in table.primary_key.columns]
        assert keys[0] == ("name" if table is classroom_schema.meta_table else "code"), table.name


def test_a_sqlite_engine_runs_in_wal_mode_with_a_busy_timeout(tmp_path):
    engine = classroom_schema.make_engine(f"sqlite:///{tmp_path / 'c.db'}")
    try:
        with engine.connect() as conn:
            mode = conn.execute(sa.text("PRAGMA journal_mode")).scalar_one()
            busy = conn.execute(sa.text("PRAGMA busy_timeout")).scalar_one()
    finally:
        engine.dispose()
    assert mode == "wal" and busy == classroom_schema.SQLITE_BUSY_SECONDS * 1000
