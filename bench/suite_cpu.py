"""The suite's CPU: each test's CPU seconds (its pytest process and everything it starts:
servers, Chromium, PostgreSQL), the two runs of ``scripts/test.sh`` side by side as CI runs
them, each in a cgroup of its own, and how busy the machine was (issue 46, item 5; figures:
docs/benchmarks.md, "The suite's CPU"). Linux, as root (it makes cgroups).

    python bench/suite_cpu.py                       # the whole suite, as scripts/test.sh
    python bench/suite_cpu.py tests/engine -q       # one pytest run with these arguments
"""

from __future__ import annotations

import collections
import contextlib
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent

HOOK_ENV = "ATTNVIZ_SUITE_CPU"  # "<cgroup>:<file>": set for the plugin below, in pytest


#: Where the cgroups are made: cgroup v1's cpuacct hierarchy, else the v2 tree.
CGROUPS = Path("/sys/fs/cgroup/cpuacct")
CGROUPS = CGROUPS if CGROUPS.is_dir() else CGROUPS.parent


def usage(group: str) -> float:
    """CPU seconds the cgroup ``group`` used (v1's ``cpuacct.usage``, else v2's cpu.stat)."""
    if (CGROUPS / group / "cpuacct.usage").exists():
        return int((CGROUPS / group / "cpuacct.usage").read_text()) / 1e9
    stat = (CGROUPS / group / "cpu.stat").read_text()
    return int(re.search(r"usage_usec (\d+)", stat)[1]) / 1e6


def cgroup(group: str) -> Path:
    """The cgroup ``group``'s folder (in :data:`CGROUPS`), made."""
    path = CGROUPS / group
    path.mkdir(exist_ok=True)
    return path


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item, nextitem):  # pragma: no cover - runs inside pytest
    """The plugin (``-p suite_cpu``, bench/ on the path): each test's CPU and wall time."""
    group, out = os.environ[HOOK_ENV].split(":", 1)
    c0, t0 = usage(group), time.monotonic()
    try:
        return (yield)
    finally:
        with open(out, "a") as f:
            f.write(f"{usage(group) - c0:.3f}\t{time.monotonic() - t0:.3f}\t{item.nodeid}\n")


def runs(args: list[str]) -> list[list[str]]:
    """pytest's arguments of each run: ``args``, or scripts/test.sh's two (its SECOND)."""
    if args:
        return [args]
    second = re.search(r"^SECOND=\(([^)]*)\)", (REPO / "scripts/test.sh").read_text(), re.M)
    e2e = sorted((REPO / "tests/e2e").glob("test_*.py"))
    names = second[1].split()
    first = [f"--ignore={f}" for f in e2e if f.name in names]
    return [
        ["tests/e2e", *first],
        ["tests", *(f"--ignore={f}" for f in e2e if f.name not in names)],
    ]


def idle_s() -> float:
    return int(Path("/proc/stat").read_text().split()[4]) / os.sysconf("SC_CLK_TCK")


def main(argv: list[str] | None = None) -> int:  # pragma: no cover - runs the suite
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] in (["-h"], ["--help"]):  # the rest is pytest's
        print(__doc__)
        return 0
    out = Path(os.environ.get("TMPDIR", "/tmp")) / f"suite_cpu_{os.getpid()}"
    env = {**os.environ, "CI": "true", "PYTHONPATH": str(REPO / "bench")}
    procs, i0, t0 = [], idle_s(), time.monotonic()
    for i, args in enumerate(runs(argv)):
        group = f"attnviz_suite_{os.getpid()}_{i}"
        procs_file = cgroup(group) / "cgroup.procs"
        run_env = {**env, HOOK_ENV: f"{group}:{out}.{i}.tsv"}
        cmd = [sys.executable, "-m", "pytest", "-p", "suite_cpu", *args]
        # in the cgroup before pytest starts: everything it starts is counted there
        enter = ["sh", "-c", f'echo $$ > {procs_file} && exec "$@" > {out}.{i}.log 2>&1', "sh"]
        procs.append((group, subprocess.Popen([*enter, *cmd], cwd=REPO, env=run_env)))
    codes = [p.wait() for _, p in procs]
    wall, idle = time.monotonic() - t0, idle_s() - i0
    print(f"wall {wall:.0f} s; the machine idle {idle:.0f} of {wall * os.cpu_count():.0f} CPU-s")
    for i, (group, _) in enumerate(procs):
        rows = [line.split("\t") for line in Path(f"{out}.{i}.tsv").read_text().splitlines()]
        by_file = collections.defaultdict(lambda: [0.0, 0.0, 0])
        for cpu, spent, node in rows:
            f = by_file[node.split("::")[0]]
            f[0], f[1], f[2] = f[0] + float(cpu), f[1] + float(spent), f[2] + 1
        print(f"run {i + 1} (exit {codes[i]}): {len(rows)} tests, {usage(group):.0f} CPU-s; "
              f"log {out}.{i}.log, per test {out}.{i}.tsv")  # fmt: skip
        for name, (cpu, spent, n) in sorted(by_file.items(), key=lambda kv: -kv[1][0])[:15]:
            print(f"  {cpu:7.1f} CPU-s {spent:7.1f} s wall {n:5d} tests  {name}")
        with contextlib.suppress(OSError):  # a process left behind keeps it: say nothing
            cgroup(group).rmdir()
    return max(codes)


if __name__ == "__main__":
    raise SystemExit(main())
