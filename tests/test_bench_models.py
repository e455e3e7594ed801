"""Smoke test of bench/real_models.py qwen2 on its tiny shape (it runs, both sides agree; no
timing is asserted)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("transformers")

ROOT = Path(__file__).resolve().parents[1]


def test_bench_models_runs_the_small_shape(tmp_path):
    out = tmp_path / "figures.json"
    proc = subprocess.run(
        [sys.executable, "bench/real_models.py", "qwen2", "--small", "--folder",
         str(tmp_path / "ckpt"), "--tokens", "16", "--runs", "1", "--blas-threads", "1",
         "--json", str(out)],
        cwd=ROOT, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert "ratio attnviz / transformers" in proc.stdout
    figures = json.loads(out.read_text())
    assert figures["ratio"] > 0 and figures["median"]["attnviz"]["rss"] > 0
    assert figures["logits_diff"] <= 1e-4 and figures["attentions_diff"] <= 1e-4
