"""Shared by the model benchmarks (bench/minilm.py, bench/smollm.py): run a timing script
in fresh Python processes and print the medians and maxima of what they measured."""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
from collections.abc import Callable


def run_fresh(
    child: str,
    args: list[str],
    repeat: int,
    env: dict[str, str],
    timeout: float,
    extra: Callable[[dict], str] = lambda run: "",
) -> list[dict] | None:
    """Run ``python -c child *args`` ``repeat`` times, each in a fresh process; each prints
    a JSON object of seconds (keys starting ``n_`` are counts or sizes, not times) as its
    last line. Prints one line per process (``extra`` adds to it); returns the objects, or
    None (with the child's stderr printed) if a process failed."""
    runs = []
    for i in range(repeat):
        p = subprocess.run(
            [sys.executable, "-c", child, *args],
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
            env=env,
        )
        if p.returncode:
            print(p.stderr, file=sys.stderr)
            return None
        runs.append(json.loads(p.stdout.strip().splitlines()[-1]))
        print(
            f"process {i + 1}/{repeat}: "
            + ", ".join(
                f"{k} {v * 1e3:.1f} ms" for k, v in runs[-1].items() if not k.startswith("n_")
            )
            + extra(runs[-1])
        )
    return runs


def print_table(
    rows: list[tuple[str, str, float | None]], runs: list[dict], width: int, inclusive: bool
) -> bool:
    """One line per ``(label, key, target seconds or None)``: the median and the maximum over
    ``runs``, and whether the maximum meets the target (``<=`` when ``inclusive``, else
    ``<``). Returns whether every target was met."""
    op = "<=" if inclusive else "<"
    print(f"\n{'what':{width}} {'median':>10} {'max':>10}  target")
    ok = True
    for label, key, target in rows:
        vals = [r[key] for r in runs]
        med, worst = statistics.median(vals), max(vals)
        verdict = ""
        if target is not None:
            passed = worst <= target if inclusive else worst < target
            ok &= passed
            verdict = f"{op} {target * 1e3:.0f} ms: {'ok' if passed else 'MISSED'}"
        print(f"{label:{width}} {med * 1e3:8.1f}ms {worst * 1e3:8.1f}ms  {verdict}")
    return ok
