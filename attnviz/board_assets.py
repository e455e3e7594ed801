"""The chart board's files: its ES modules in ``attnviz/board/`` and the installed plotly.js.

Streamlit (components v2) serves the folder ``attnviz/board/`` of the installed project at
``/_stcore/bidi-components/attnviz.board/`` and serves nothing outside it (symlinks are
resolved and refused), so the ``plotly.min.js`` of the installed plotly package is put in
``attnviz/board/vendor/`` (a hard link when possible, else a copy) under a versioned
name, ``plotly-<version>.min.js``. The board asks for it with ``?v=<content digest>``: a
content-versioned URL, loaded once per browser tab.

Run ``python -m attnviz.board_assets`` at install time (the Dockerfile does, the image
being read-only at run time); a writable checkout also does it at import of the board.
No Streamlit here.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import sys
import tempfile
from pathlib import Path

import plotly
from plotly.offline import get_plotlyjs_version

STATIC = Path(__file__).resolve().parent / "board"
VENDOR = STATIC / "vendor"


class BoardAssetError(RuntimeError):
    """The board's plotly.js is missing, of the wrong version, or cannot be put in place."""


def plotly_js() -> Path:
    """The plotly.min.js shipped in the installed plotly package, checked to be the
    version the Python side was built for."""
    path = Path(plotly.__file__).resolve().parent / "package_data" / "plotly.min.js"
    if not path.is_file():
        raise BoardAssetError(f"plotly.js is missing from the plotly package: {path}")
    with path.open("rb") as f:
        head = f.read(200).decode("utf-8", "replace")
    want = get_plotlyjs_version()
    if f"plotly.js v{want}" not in head:
        raise BoardAssetError(
            f"expected plotly.js v{want} in {path}, found the header {head[:60]!r}"
        )
    return path


def vendor_name() -> str:
    """The served file's name: ``plotly-<version>.min.js``."""
    return f"plotly-{get_plotlyjs_version()}.min.js"


def _same(a: Path, b: Path) -> bool:
    try:
        sa, sb = a.stat(), b.stat()
    except OSError:
        return False
    if (sa.st_dev, sa.st_ino) == (sb.st_dev, sb.st_ino):
        return True
    return sa.st_size == sb.st_size and a.read_bytes() == b.read_bytes()


def ensure_vendor(vendor: Path = VENDOR) -> Path:
    """Put the installed plotly.js in ``vendor`` (once; atomically) and return its path.
    Raises :class:`BoardAssetError` naming the fix when the folder is read-only."""
    js = plotly_js()
    target = vendor / vendor_name()
    if target.is_file() and not target.is_symlink() and _same(target, js):
        return target
    try:
        vendor.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=".plotly-", dir=vendor)
        os.close(fd)
        os.unlink(tmp)
        try:
            os.link(js, tmp)
        except OSError:
            shutil.copyfile(js, tmp)
        os.chmod(tmp, 0o644)
        os.replace(tmp, target)
    except OSError as exc:
        raise BoardAssetError(
            f"the chart board needs plotly.js at {target}, and that folder is not writable "
            f"({exc}); run `python -m attnviz.board_assets` where it is (e.g. at image "
            "build time)"
        ) from exc
    return target


def content_digest(path: Path) -> str:
    """The first 16 hex digits of the file's SHA-256: the ``?v=`` of its URL."""
    h = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()[:16]


if __name__ == "__main__":
    out = ensure_vendor()
    print(f"{out} ({out.stat().st_size} bytes, v={content_digest(out)})", file=sys.stdout)
