"""Build attnviz's wheel and install it in a fresh virtual environment (the package tests).

The wheel is built from a copy of the files the build reads (so the checkout gets no
``build/`` or ``*.egg-info`` and no stale build output can slip into the wheel), with the
setuptools of the test environment (``--no-build-isolation``: no download). The fresh
venv has no pip and no packages of its own but the wheel; a ``.pth`` file lets it see the
test environment's site-packages for the dependencies (streamlit, numpy, ...), which the
wheel is installed without (``--no-deps``).
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
#: What the build reads: the project table, the readme it names, the package, the app.
SOURCES = ("pyproject.toml", "README.md", "app.py", "serve.py", "pages", "attnviz", ".streamlit")


def build_wheel(where: Path) -> Path:
    """``pip wheel --no-deps`` of a copy of the checkout's sources; the wheel's path."""
    src, dist = where / "src", where / "dist"
    src.mkdir(parents=True)
    for name in SOURCES:
        path = ROOT / name
        if path.is_dir():
            shutil.copytree(path, src / name, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            shutil.copy2(path, src / name)
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q",
         "--disable-pip-version-check", "-w", str(dist), str(src)],
        check=True, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    wheels = sorted(dist.glob("attnviz-*.whl"))
    assert len(wheels) == 1, f"expected one attnviz wheel in {dist}, got {wheels}"
    return wheels[0]


def fresh_venv(where: Path, wheel: Path) -> Path:
    """A new venv at ``where`` with only ``wheel`` installed (its dependencies seen through
    a .pth file); returns its ``bin`` folder (``attnviz``, ``python``)."""
    subprocess.run(
        [sys.executable, "-m", "venv", "--without-pip", str(where)],
        check=True, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    python = where / "bin" / "python"
    site = Path(
        subprocess.run(
            [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
            check=True, capture_output=True, text=True, timeout=60,
        ).stdout.strip()
    )  # fmt: skip
    deps = Path(sysconfig.get_paths()["purelib"]).resolve()
    (site / "attnviz-test-deps.pth").write_text(f"{deps}\n")
    subprocess.run(
        [sys.executable, "-m", "pip", "--python", str(python), "install", "--no-deps", "-q",
         "--disable-pip-version-check", str(wheel)],
        check=True, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    return where / "bin"
