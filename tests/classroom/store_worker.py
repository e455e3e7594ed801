"""The worker process of test_store.py's concurrent submits from processes, in a module of
its own: a spawned worker imports the module its function lives in, and test_store.py
brings pytest, bench/hall.py (and with it Streamlit) and the generated items, ~2.5
CPU-s per worker at import; this module brings only the store and the grader."""

from __future__ import annotations

from attnviz.classroom import exercises
from attnviz.classroom.store import ClassStore


def submit_all(url: str, code: str, worker: int, per: int, answers: list[str]) -> int:
    """One process: its own store, ``per`` students answering every item (``answers``, one
    per item, in order)."""
    s = ClassStore(url, grade=exercises.grade)
    acked = 0
    for student in range(per):
        for item, answer in enumerate(answers):
            s.submit(code, f"p{worker}-{student}", item, answer)
            acked += 1
    s.dispose()
    return acked
