"""The ``attnviz`` command: starts the app, ``streamlit run`` on the packaged ``app.py``.

    attnviz                                  # http://localhost:8501
    attnviz --server.port 8600               # any ``streamlit run`` option passes through
    attnviz --version

The app's files are found in two layouts: an installed package (the wheel maps ``app.py``,
``pages/`` and ``.streamlit/config.toml`` of the checkout into ``attnviz/app/``) and a
checkout (``app.py`` beside the ``attnviz`` folder). The app's safe serving settings
(``.streamlit/config.toml``) are passed as command-line options, because Streamlit reads
that file only from the folder it is started in; options given to ``attnviz`` come after
them and win. This module does not import Streamlit (it runs ``python -m streamlit``).
"""

from __future__ import annotations

import os
import subprocess
import sys
import tomllib
from importlib import metadata
from pathlib import Path

__all__ = ["app_dir", "config_options", "main", "streamlit_command", "version"]

PACKAGE_DIR = Path(__file__).resolve().parent
USAGE = """\
usage: attnviz [--version] [STREAMLIT RUN OPTIONS ...]

Starts the attnviz app (streamlit run on its app.py), by default on http://localhost:8501.
Options are passed to `streamlit run`, e.g. --server.port 8600 --server.address 0.0.0.0;
`python -m streamlit run --help` lists them.
"""


def app_dir() -> Path:
    """The folder with ``app.py`` and ``pages/``: ``attnviz/app`` when installed, else the
    checkout's root. ``FileNotFoundError`` naming both places if neither has it."""
    for folder in (PACKAGE_DIR / "app", PACKAGE_DIR.parent):
        if (
            all((folder / f).is_file() for f in ("app.py", "serve.py"))
            and (folder / "pages").is_dir()
        ):
            return folder
    raise FileNotFoundError(
        f"attnviz's app.py and pages/ are neither in {PACKAGE_DIR / 'app'} (an installed "
        f"package) nor in {PACKAGE_DIR.parent} (a checkout); reinstall attnviz"
    )


def version() -> str:
    """The installed distribution's version, else the checkout's ``pyproject.toml``'s."""
    try:
        return metadata.version("attnviz")
    except metadata.PackageNotFoundError:
        pyproject = PACKAGE_DIR.parent / "pyproject.toml"
        with pyproject.open("rb") as f:
            return str(tomllib.load(f)["project"]["version"])


def _option_value(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def config_options(config: Path) -> list[str]:
    """``--section.key=value`` for every setting of a Streamlit ``config.toml``."""
    if not config.is_file():
        return []
    with config.open("rb") as f:
        table = tomllib.load(f)
    return [
        f"--{section}.{key}={_option_value(value)}"
        for section, settings in table.items()
        for key, value in settings.items()
    ]


def streamlit_command(args: list[str]) -> list[str]:
    """``python -m streamlit run <serve.py> <the app's settings> <args>`` (``serve.py``:
    ``app.py``'s pages and the live class's student page in one server)."""
    folder = app_dir()
    settings = config_options(folder / ".streamlit" / "config.toml")
    return [sys.executable, "-m", "streamlit", "run", str(folder / "serve.py"), *settings, *args]


def main(argv: list[str] | None = None) -> int:
    """The console script: ``--version``, ``--help``, or start the app with ``argv``."""
    args = list(sys.argv[1:] if argv is None else argv)
    if args[:1] in (["--version"], ["-V"]):
        print(f"attnviz {version()}")
        return 0
    if args[:1] in (["--help"], ["-h"]):
        print(USAGE, end="")
        return 0
    try:
        cmd = streamlit_command(args)
    except FileNotFoundError as err:
        print(f"attnviz: {err}", file=sys.stderr)
        return 2
    if os.name == "posix":  # the server takes this process's place (signals, exit code)
        os.execv(cmd[0], cmd)
    return subprocess.call(cmd)  # pragma: no cover - Windows


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
