"""attnviz as an installable package: the wheel's contents and metadata, and the ``attnviz``
command of a fresh venv, started outside the checkout (``tests/package_build.py``)."""

from __future__ import annotations

import re
import subprocess
import time
import tomllib
import urllib.request
import zipfile
from email.parser import Parser
from pathlib import Path

import pytest
from packaging.requirements import Requirement

from attnviz import toys
from tests.e2e.e2e_app import free_port
from tests.package_build import ROOT, build_wheel, fresh_venv

PAGES = sorted(p.name for p in (ROOT / "pages").glob("*.py"))
BOARD = sorted(p.name for p in (ROOT / "attnviz" / "ui" / "board" / "js").iterdir() if p.is_file())
RUNS = sorted(p.name for p in (ROOT / "attnviz" / "toy_runs").glob("*.npz"))


def pyproject() -> dict:
    with (ROOT / "pyproject.toml").open("rb") as f:
        return tomllib.load(f)


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    return build_wheel(tmp_path_factory.mktemp("wheel"))


@pytest.fixture(scope="module")
def venv_bin(tmp_path_factory, wheel) -> Path:
    return fresh_venv(tmp_path_factory.mktemp("fresh") / "venv", wheel)


# --------------------------------------------------------------------------- the wheel


def test_the_wheel_holds_the_board_the_app_the_pages_and_the_config(wheel):
    names = set(zipfile.ZipFile(wheel).namelist())
    assert BOARD and {f"attnviz/ui/board/js/{b}" for b in BOARD} <= names
    assert len(PAGES) >= 10 and {f"attnviz/app/pages/{p}" for p in PAGES} <= names
    assert {"attnviz/app/app.py", "attnviz/app/serve.py"} <= names
    # the live class's student page: its routes and its own files
    static = ("student.html", "student.js", "student.css")
    assert {f"attnviz/classroom/web/static/{f}" for f in static} <= names
    assert "attnviz/classroom/web/student.py" in names
    assert "attnviz/app/.streamlit/config.toml" in names  # the safe serving settings
    assert {
        "attnviz/cli.py",
        "attnviz/engine/core.py",
        "attnviz/ui/state.py",
        "attnviz/viz/learned.py",
    } <= names
    assert len(RUNS) == 4 and {f"attnviz/toy_runs/{r}" for r in RUNS} <= names  # one a task
    # every module of the checkout (a new package must be in pyproject's list), the lessons
    modules = {p.relative_to(ROOT).as_posix() for p in (ROOT / "attnviz").rglob("*.py")}
    assert not modules - names, f"modules missing from the wheel: {sorted(modules - names)}"
    lessons = {
        p.relative_to(ROOT).as_posix()
        for p in (ROOT / "attnviz" / "classroom" / "lessons").glob("*.toml")
    }
    assert len(lessons) >= 3 and lessons <= names
    # nothing of the checkout but the package and the app
    assert not [n for n in names if n.startswith(("tests/", "bench/", "pages/", "deploy/"))]
    assert not [n for n in names if "__pycache__" in n]


def test_the_wheel_names_the_command_and_the_dependency_ranges(wheel):
    with zipfile.ZipFile(wheel) as z:
        info = next(n for n in z.namelist() if n.endswith(".dist-info/METADATA"))
        meta = Parser().parsestr(z.read(info).decode())
        entry = next(n for n in z.namelist() if n.endswith(".dist-info/entry_points.txt"))
        entry_points = z.read(entry).decode()
    assert meta["Name"] == "attnviz" and meta["Version"] == pyproject()["project"]["version"]
    assert re.search(r"^attnviz = attnviz\.cli:main$", entry_points, re.M), entry_points
    ranges = {Requirement(r).name: Requirement(r) for r in meta.get_all("Requires-Dist")}
    # every pinned runtime requirement is a dependency, and its pin is inside the range
    pins = [
        Requirement(line)
        for line in (ROOT / "requirements.txt").read_text().splitlines()
        if line.strip() and not line.startswith("#")
    ]
    assert pins
    for pin in pins:
        assert pin.name in ranges, f"{pin.name} is pinned in requirements.txt, not a dependency"
        (version,) = [s.version for s in pin.specifier]
        assert ranges[pin.name].specifier.contains(version), (pin, ranges[pin.name])
        assert ranges[pin.name].specifier != pin.specifier, f"{pin.name}: a range, not a pin"


# --------------------------------------------------------------------------- installed


def test_attnviz_version_from_a_fresh_venv(venv_bin, tmp_path):
    out = subprocess.run(
        [str(venv_bin / "attnviz"), "--version"],
        cwd=tmp_path, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == f"attnviz {pyproject()['project']['version']}"


def test_the_installed_command_runs_the_installed_app(venv_bin, tmp_path):
    out = subprocess.run(
        [str(venv_bin / "python"), "-c", "import attnviz.cli as c; print(c.app_dir())"],
        cwd=tmp_path, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    app = Path(out.stdout.strip())
    assert app.is_relative_to(venv_bin.parent), f"the app is not the installed one: {app}"
    assert (app / "app.py").is_file() and sorted(p.name for p in (app / "pages").glob("*.py"))


def test_the_installed_package_loads_its_shipped_toy_runs(venv_bin, tmp_path):
    code = (
        "from attnviz import toys; "
        "print(toys.run_path('induction')); "
        "runs = [toys.load(t) for t in toys.TASKS]; "
        "print(*[f'{r.task}:{len(r.checkpoints)}:{r.done}' for r in runs])"
    )
    out = subprocess.run(
        [str(venv_bin / "python"), "-c", code],
        cwd=tmp_path, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    path, loaded = out.stdout.strip().splitlines()
    assert Path(path).is_relative_to(venv_bin.parent), f"not the installed file: {path}"
    assert [s.split(":")[0] for s in loaded.split()] == list(toys.TASKS)  # align included
    assert all(s.endswith(":True") and int(s.split(":")[1]) > 10 for s in loaded.split())


def _get(url: str) -> tuple[int, str]:
    with urllib.request.urlopen(url, timeout=5) as r:
        return r.status, r.read().decode(errors="replace")


def test_attnviz_starts_the_app_outside_the_checkout(venv_bin, tmp_path):
    port = free_port()
    log = tmp_path / "server.log"
    with log.open("w") as out:
        proc = subprocess.Popen(
            [str(venv_bin / "attnviz"), "--server.port", str(port), "--server.headless", "true",
             "--server.address", "127.0.0.1"],
            cwd=tmp_path, stdout=out, stderr=subprocess.STDOUT,
        )  # fmt: skip
    try:
        deadline = time.monotonic() + 120
        status = None
        while time.monotonic() < deadline and proc.poll() is None:
            try:
                status, body = _get(f"http://127.0.0.1:{port}/_stcore/health")
                break
            except OSError:
                time.sleep(0.5)
        assert status == 200 and body == "ok", log.read_text()
        status, page = _get(f"http://127.0.0.1:{port}/")
        assert status == 200 and "<title>" in page
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    assert "Traceback" not in log.read_text(), log.read_text()
