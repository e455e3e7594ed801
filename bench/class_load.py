"""The live-class browser tests on a busy server (issue 25, item 9): how often they pass.

Starts ``--burners`` CPU-bound processes (``while True: pass``, each ending by itself after
``--burn-s`` s and killed when the runs end), then runs each test ``--runs`` times in its
own pytest process (its own server and browser) and counts the passes. The load the
other processes on the machine add is reported as ``uptime``'s load average before and
after.

    python bench/class_load.py                          # the class e2e test, 10 runs
    python bench/class_load.py --runs 3 --burners 0 --test six     # six students

(``six``: the six-students test, which starts its own two burners, hence ``--burners 0``
for it). Each failed run's last lines are printed.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

import kit
from kit import REPO

CLASS_TEST = "tests/e2e/test_class_e2e.py::test_a_teacher_and_three_phones"
SIX_TEST = "tests/e2e/test_class_clicks_e2e.py::test_six_phones_check_at_once_on_a_busy_server"
SHORT = {"class": CLASS_TEST, "six": SIX_TEST}


def burners(count: int, seconds: float) -> list[subprocess.Popen]:
    code = f"import time\nend = time.monotonic() + {seconds}\nwhile time.monotonic() < end: pass"
    return [subprocess.Popen([sys.executable, "-c", code]) for _ in range(count)]


def run_once(test: str) -> tuple[bool, float, str]:
    t0 = time.monotonic()
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", test, "-q", "-p", "no:cacheprovider"],
        cwd=REPO,
        capture_output=True,
        text=True,
    )
    return proc.returncode == 0, time.monotonic() - t0, proc.stdout[-1500:]


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--test", action="append", help="pytest node id, or class / six (default class)")
    p.add_argument("--runs", type=int, default=10)
    p.add_argument("--burners", type=int, default=2)
    p.add_argument("--burn-s", type=float, default=3600, help="a burner's longest life")
    p.add_argument("--json", type=Path)
    args = p.parse_args(argv)
    report: dict = {"load_before": os.getloadavg(), "burners": args.burners, "tests": {}}
    procs = burners(args.burners, args.burn_s)
    try:
        for test in [SHORT.get(t, t) for t in args.test or ["class"]]:
            results = []
            for i in range(args.runs):
                ok, seconds, tail = run_once(test)
                results.append({"ok": ok, "seconds": round(seconds, 1), "load": os.getloadavg()})
                print(f"{test} run {i + 1}: {'pass' if ok else 'FAIL'} ({seconds:.0f} s)")
                if not ok:
                    print(tail)
            passed = sum(r["ok"] for r in results)
            report["tests"][test] = {"passed": passed, "runs": args.runs, "results": results}
            print(f"{test}: {passed} of {args.runs} passed")
    finally:
        for proc in procs:
            proc.kill()
            proc.wait()
    report["load_after"] = os.getloadavg()
    print(f"load average before {report['load_before']}, after {report['load_after']}")
    kit.write_json(args.json, report, say=False)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
