"""Smoke test of bench/engine.py on a tiny size (it runs; no timing is asserted)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

if not os.environ.get("CI"):
    pytest.importorskip("torch")  # in CI torch is installed: a missing torch fails below

ROOT = Path(__file__).resolve().parents[1]


def test_bench_engine_runs_and_prints_a_row_per_size_and_dtype():
    proc = subprocess.run(
        [sys.executable, "bench/engine.py", "--sizes", "8x8x2,6x6x3", "--repeats", "1",
         "--warmup", "0", "--dtype", "both"],
        cwd=ROOT, capture_output=True, text=True, timeout=240,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    rows = [line.split() for line in proc.stdout.splitlines() if line.startswith("float")]
    assert [(r[0], r[1], r[2], r[3]) for r in rows] == [
        ("float64", "8", "8", "2"),
        ("float64", "6", "6", "3"),
        ("float32", "8", "8", "2"),
        ("float32", "6", "6", "3"),
    ]
    assert all(float(r[6]) > 0 for r in rows)  # a ratio was computed
    assert "worst float64 ratio" in proc.stdout


def test_bench_engine_rejects_bad_sizes():
    proc = subprocess.run(
        [sys.executable, "bench/engine.py", "--sizes", "8x9x2"],
        cwd=ROOT, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert proc.returncode == 2
    assert "H dividing D" in proc.stderr
