"""Predict, then reveal on the other pages: what a teacher's projector rerun adds (the pure
parts: making the page's question, outlining its answer), at N = 12 and the largest N.

    python bench/predict_pages.py [--json out.json]

Reports the median ms of ``top_key`` under a causal mask, ``sharper_row``, ``moved_row``
(D = N), ``previous_head`` over 9 heads, and ``outline_row`` / ``outline_cells`` (the
previous-token diagonal) on a weights heatmap of N tokens.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

from attnviz import engine, viz
from attnviz.classroom import predict

sys.path.insert(0, str(Path(__file__).resolve().parent))
from predict import timed_ms  # noqa: E402  (bench/predict.py, not attnviz.classroom.predict)


def measure(n: int, repeat: int) -> dict[str, float]:
    """The pure parts of a projector rerun at N = ``n`` tokens."""
    rng = np.random.default_rng(0)
    scores = rng.standard_normal((9, n, n))  # (H, N, N)
    mask = engine.causal_mask(n)
    causal = engine.softmax(np.where(mask, scores, -np.inf))  # (H, N, N)
    un, sc = engine.softmax(scores * 8), engine.softmax(scores)
    out = rng.standard_normal((n, n))  # (N, D)
    moved = out[rng.permutation(n)]
    fig = viz.heatmaps.attention_figure(causal[0], what="weights", mask=mask)
    b = viz.style.pool_factor(n)
    span = (-b / 2, (n - 1) // b * b + b / 2)
    diagonal = predict.answer_cells("previous_head", {"head": 0}, n)
    return {
        "top_key_masked_ms": timed_ms(lambda: predict.top_key(causal, 0, n - 1, mask=mask), repeat),
        "sharper_row_ms": timed_ms(lambda: predict.sharper_row(un, sc, 0, n // 2), repeat),
        "moved_row_ms": timed_ms(lambda: predict.moved_row(out, moved, n // 2), repeat),
        "previous_head_9_heads_ms": timed_ms(lambda: predict.previous_head(causal), repeat),
        "outline_row_ms": timed_ms(
            lambda: viz.classroom.outline_row(fig, n // 2, span, "rows", n), repeat
        ),
        "outline_diagonal_ms": timed_ms(
            lambda: viz.classroom.outline_cells(fig, diagonal, "rows", n), repeat
        ),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", help="also write the figures to this file")
    args = parser.parse_args()
    result = {f"N={n}": measure(n, repeat) for n, repeat in ((12, 200), (512, 20))}
    print(json.dumps(result, indent=2))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(result, f, indent=2)


if __name__ == "__main__":
    main()
