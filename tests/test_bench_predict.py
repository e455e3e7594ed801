"""Smoke test of bench/class_hall.py --part predict (a tiny run, no timing assertions): every
answer is acknowledged and counted."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parent.parent / "bench" / "class_hall.py"


def test_the_bench_counts_every_answer(tmp_path):
    out = tmp_path / "r.json"
    cmd = [sys.executable, str(BENCH), "--part", "predict", "--phones", "20", "--threads", "4"]
    cmd += ["--json", str(out)]
    env = {**os.environ, "PYTHONPATH": str(BENCH.parents[1])}  # this checkout's attnviz
    subprocess.run(cmd, check=True, capture_output=True, timeout=300, env=env)
    r = json.loads(out.read_text())
    assert r["errors"] == 0 and r["acknowledged"] == r["rows"] == 20, r
    assert r["answer_ms_p95"] >= r["answer_ms_p50"] > 0, r
    assert r["question_tally_ms"] > 0 and r["outline_cells_ms"] > 0, r
