"""The chart board's files: its ES modules in ``attnviz/ui/board/js/`` and the plotly.js it loads.

Streamlit (components v2) serves the folder ``attnviz/ui/board/js/`` of the installed project at
``/_stcore/bidi-components/attnviz.board/`` and serves nothing outside it (symlinks are
resolved and refused). The board loads plotly.js from ``attnviz/ui/board/js/vendor/``:

* normally the vendored **bundle of what attnviz draws**,
  ``vendor/plotly-attnviz-<version>.min.js``: plotly.js's core (the scatter trace, axes,
  colour bars, shapes, annotations, error bars, the mode bar) with the bar and heatmap
  traces, built reproducibly from the npm package by ``scripts/plotly_bundle/`` and
  committed with its licences (``vendor/README.md``): 1.18 MB against 4.8 MB for the full
  file, and about an eighth of its load and run time in the browser;
* if its version is not the one the installed plotly Python package was built for, the
  package's full ``plotly.min.js``, put in ``vendor/`` (a hard link when possible, else a
  copy) as ``plotly-<version>.min.js``, and a warning.

The board asks for it with ``?v=<content digest>``: a content-versioned URL, loaded once per
browser tab. ``python -m attnviz.ui.board`` (:func:`main`) prints the file the board will load (and
puts the fallback in place, which a read-only image must do at build time). No Streamlit.
"""

from __future__ import annotations

import hashlib
import logging
import os
import re
import shutil
import sys
import tempfile
from pathlib import Path

import plotly
from plotly.offline import get_plotlyjs_version

STATIC = Path(__file__).resolve().parent / "js"
VENDOR = STATIC / "vendor"
BUNDLE_PREFIX = "plotly-attnviz-"  # vendor/plotly-attnviz-<version>.min.js

_LOG = logging.getLogger(__name__)
_HEADER = re.compile(r"plotly\.js(?: \([^)]*\))? v(\d+\.\d+\.\d+[\w.-]*)")
_TRACE = re.compile(rb'moduleType:"trace",name:"(\w+)"')


class BoardAssetError(RuntimeError):
    """The board's plotly.js is missing, of the wrong version, or cannot be put in place."""


def script_version(path: Path) -> str:
    """The plotly.js version written in the header comment of a plotly.js file."""
    with path.open("rb") as f:
        head = f.read(300).decode("utf-8", "replace")
    m = _HEADER.search(head)
    if m is None:
        raise BoardAssetError(f"expected a plotly.js header in {path}, found {head[:60]!r}")
    return m.group(1)


def trace_types(path: Path) -> frozenset[str]:
    """The trace types a plotly.js file registers (its trace modules' ``name``)."""
    return frozenset(m.decode() for m in _TRACE.findall(path.read_bytes()))


def bundle(vendor: Path = VENDOR) -> Path:
    """The vendored bundle (exactly one ``plotly-attnviz-*.min.js``)."""
    found = sorted(vendor.glob(f"{BUNDLE_PREFIX}*.min.js"))
    if len(found) != 1:
        raise BoardAssetError(
            f"expected one {BUNDLE_PREFIX}<version>.min.js in {vendor}, found "
            f"{[p.name for p in found]} (see attnviz/ui/board/js/vendor/README.md)"
        )
    return found[0]


def plotly_js() -> Path:
    """The full plotly.min.js shipped in the installed plotly package, checked to be the
    version the Python side was built for."""
    path = Path(plotly.__file__).resolve().parent / "package_data" / "plotly.min.js"
    if not path.is_file():
        raise BoardAssetError(f"plotly.js is missing from the plotly package: {path}")
    want, have = get_plotlyjs_version(), script_version(path)
    if have != want:
        raise BoardAssetError(f"expected plotly.js v{want} in {path}, found v{have}")
    return path


def vendor_name() -> str:
    """The fallback's served name: ``plotly-<version>.min.js``."""
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
    """Put the installed package's full plotly.js in ``vendor`` (once; atomically) and
    return its path: the fallback of :func:`board_plotly`. Raises
    :class:`BoardAssetError` naming the fix when the folder is read-only."""
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
            f"({exc}); run `python -m attnviz.ui.board` where it is (e.g. at image "
            "build time)"
        ) from exc
    return target


def board_plotly(vendor: Path = VENDOR) -> Path:
    """The plotly.js file the board loads: the vendored bundle when its version is
    the installed plotly package's plotly.js version, else (with a warning) that package's
    full file (:func:`ensure_vendor`)."""
    js = bundle(vendor)
    have, want = script_version(js), get_plotlyjs_version()
    if have == want:
        return js
    _LOG.warning(
        "the vendored plotly.js bundle is v%s, the installed plotly package expects v%s: the "
        "chart board loads the package's full plotly.min.js instead (4x larger; update "
        "attnviz/ui/board/js/vendor/, see its README.md)",
        have,
        want,
    )
    return ensure_vendor(vendor)


def content_digest(path: Path) -> str:
    """The first 16 hex digits of the file's SHA-256: the ``?v=`` of its URL."""
    h = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()[:16]


def main() -> None:
    """``python -m attnviz.ui.board``: the file the board will load (the fallback put in place)."""
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    out = board_plotly()
    print(f"{out} ({out.stat().st_size} bytes, v={content_digest(out)})", file=sys.stdout)
