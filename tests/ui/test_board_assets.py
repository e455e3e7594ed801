"""The board's plotly.js: the vendored bundle (attnviz/ui/board/js/vendor/, built by
scripts/plotly_bundle/) is the plotly.js version the installed plotly package expects, its
recipe builds it byte for byte, and it holds every trace type of every figure the app
builds (its builders, with realistic inputs, and every page as the app draws it).

The browser side (the bundle's own schema, ``Plotly.validate`` against the full plotly.js,
bdata and texttemplate drawn): ``tests/e2e/test_board_bundle_e2e.py``.
"""

from __future__ import annotations

import hashlib
import importlib
import json
import logging
import os
import shutil
import subprocess
from pathlib import Path

import pytest
from board_view import BOARD, board_data
from figure_catalogue import builders, catalogue
from plotly.offline import get_plotlyjs_version
from streamlit.testing.v1 import AppTest

from attnviz.ui import pages as ui_pages
from attnviz.ui.board import PLOTLY, figure_json
from attnviz.ui.board import assets as board_assets

board = importlib.import_module("attnviz.ui.board")
ROOT = Path(__file__).resolve().parents[2]
APP = str(ROOT / "app.py")
#: The file vendor/README.md documents (plotly.js@4.1.1 from npm, built by scripts/plotly_bundle).
BUNDLE_SHA256 = "89687d05241dfd44b042b7420b27195e978edcda4fb920fc1df06d1a371d7d5d"
RECIPE = ROOT / "scripts" / "plotly_bundle"


def trace_types(figure: dict) -> set[str]:
    """The trace types of a figure's JSON (plotly's default type is scatter)."""
    return {t.get("type", "scatter") for t in figure.get("data", [])}


def test_the_bundle_is_the_plotly_js_version_the_plotly_package_expects():
    js = board_assets.bundle()
    assert js.name == f"plotly-attnviz-{get_plotlyjs_version()}.min.js"
    assert board_assets.script_version(js) == get_plotlyjs_version()
    assert board_assets.board_plotly() == js  # so the board loads it, not the full file
    assert {
        "src": f"vendor/{js.name}?v={board_assets.content_digest(js)}",
        "name": js.name,
        "version": get_plotlyjs_version(),
    } == PLOTLY


def test_the_bundle_has_its_licences_and_says_where_it_comes_from():
    js = board_assets.bundle()
    assert hashlib.sha256(js.read_bytes()).hexdigest() == BUNDLE_SHA256
    licence = (js.parent / "LICENSE").read_text()
    assert licence.startswith("MIT License") and "Plotly" in licence
    third = (js.parent / "plotly-attnviz-THIRD-PARTY.txt").read_text()
    assert f"plotly.js@{get_plotlyjs_version()} (MIT)" in third and "@plotly/d3@" in third
    readme = (js.parent / "README.md").read_text()
    assert f"plotly.js@{get_plotlyjs_version()}" in readme and BUNDLE_SHA256 in readme
    assert "scripts/plotly_bundle" in readme and "build.mjs --check" in readme
    lock = json.loads((RECIPE / "package-lock.json").read_text())
    pinned = lock["packages"]["node_modules/plotly.js"]
    assert pinned["version"] == get_plotlyjs_version() and pinned["integrity"].startswith("sha512-")
    # committed and packaged (pyproject's package-data), not git-ignored as the fallback is
    gitignore = (ROOT / ".gitignore").read_text().splitlines()
    assert "attnviz/ui/board/js/vendor/" not in gitignore
    pyproject = (ROOT / "pyproject.toml").read_text()
    assert '"ui/board/js/vendor/plotly-attnviz-*"' in pyproject
    assert '"ui/board/js/vendor/LICENSE"' in pyproject


def test_the_bundle_is_a_quarter_of_the_full_file_and_holds_what_attnviz_draws():
    js, full = board_assets.bundle(), board_assets.plotly_js()
    assert js.stat().st_size * 4 < full.stat().st_size
    have = board_assets.trace_types(js)
    assert have == {"bar", "heatmap", "scatter"}
    assert have < board_assets.trace_types(full)  # the parser reads the full file's too
    assert len(board_assets.trace_types(full)) > 40


def test_every_figure_builder_is_in_the_catalogue():
    """A new builder in a figure module fails here until tests/figure_catalogue.py builds it."""
    built = {name.split("/")[0] for name in catalogue()}
    assert builders() <= built, sorted(builders() - built)
    assert built <= builders(), sorted(built - builders())


def test_every_figure_builder_uses_only_trace_types_the_bundle_holds():
    have = board_assets.trace_types(board_assets.bundle())
    missing = {
        name: sorted(trace_types(figure_json(fig)) - have) for name, fig in catalogue().items()
    }
    assert not any(missing.values()), {k: v for k, v in missing.items() if v}
    # the check can fail: a figure with a 3-D trace is caught
    assert {"scatter3d"} - have == {"scatter3d"}


def _board_figures(at: AppTest) -> dict[str, dict]:
    """Chart key -> figure JSON of every board of the run, the prefetched heads' too."""
    out = {}
    for el in at.get("bidi_component"):
        if el.proto.component_name != BOARD:
            continue
        data = board_data(el)
        for f in data.get("figures", []):
            out[f["key"]] = f["figure"]
        for b in (data.get("prefetch") or {}).get("boards", {}).values():
            for h, v in b["values"].items():
                for f in v["figures"]:
                    out[f"{f['key']}@head{h}"] = f["figure"]
    return out


@pytest.mark.slow
def test_every_page_draws_only_trace_types_the_bundle_holds():
    """Every page of the app (attnviz.ui.pages.PAGES), as drawn: the figures its boards send."""
    pages = [p.file for p in ui_pages.PAGES]
    assert len(pages) >= 11, pages
    have = board_assets.trace_types(board_assets.bundle())
    seen: dict[str, set[str]] = {}
    at = AppTest.from_file(APP, default_timeout=300)
    at.query_params.update({"N": "5"})
    at.run()
    for page in pages:
        if page != pages[0]:
            at.switch_page(page).run()
        assert not at.exception, (page, [e.value for e in at.exception])
        figs = _board_figures(at)
        for key, fig in figs.items():
            seen[f"{page}:{key}"] = trace_types(fig)
    drawn = set().union(*seen.values())
    assert {"heatmap", "bar", "scatter"} <= drawn, drawn  # the pages did draw their charts
    assert len({k.split(":")[0] for k in seen}) >= 9, sorted(seen)
    bad = {k: sorted(v - have) for k, v in seen.items() if v - have}
    assert not bad, bad


def test_a_plotly_package_of_another_version_falls_back_to_its_full_file(
    tmp_path, monkeypatch, caplog
):
    """The board still works (with the full file, and a warning) if plotly is upgraded
    without updating the vendored bundle."""
    vendor = tmp_path / "vendor"
    vendor.mkdir()
    (vendor / board_assets.bundle().name).write_bytes(board_assets.bundle().read_bytes())
    assert board_assets.board_plotly(vendor) == vendor / board_assets.bundle().name
    monkeypatch.setattr(board_assets, "get_plotlyjs_version", lambda: "9.9.9")
    monkeypatch.setattr(board_assets, "script_version", _version_of_full("9.9.9"))
    with caplog.at_level(logging.WARNING, logger="attnviz.ui.board.assets"):
        js = board_assets.board_plotly(vendor)
    assert js == vendor / "plotly-9.9.9.min.js" and js.stat().st_size > 4_000_000
    assert "update attnviz/ui/board/js/vendor/" in caplog.text and "v9.9.9" in caplog.text


def _version_of_full(version: str):
    real = board_assets.script_version

    def fake(path: Path) -> str:
        return real(path) if "attnviz" in path.name else version

    return fake


def test_no_bundle_or_two_give_a_clear_message(tmp_path):
    with pytest.raises(board_assets.BoardAssetError, match="expected one plotly-attnviz-"):
        board_assets.bundle(tmp_path)
    for v in ("4.1.1", "4.2.0"):
        (tmp_path / f"plotly-attnviz-{v}.min.js").write_text("/* plotly.js v1 */")
    with pytest.raises(board_assets.BoardAssetError, match="found .*4.1.1.*4.2.0"):
        board_assets.bundle(tmp_path)
    (tmp_path / "x.js").write_text("alert(1)")
    with pytest.raises(board_assets.BoardAssetError, match="plotly.js header"):
        board_assets.script_version(tmp_path / "x.js")


def test_the_board_modules_name_no_other_plotly_file():
    """The board loads plotly.js only through PLOTLY (ui/board.py), never by a name."""
    for name in (*board.FILES, *board.MODULES):
        text = (board.STATIC / name).read_text()
        assert "plotly-4" not in text and "plotly.min.js" not in text, name


@pytest.mark.slow
def test_the_bundle_is_what_its_recipe_builds():
    """scripts/plotly_bundle: npm ci (the pinned packages, from the npm registry) and
    build.mjs --check (esbuild again; fails unless the committed file comes out)."""
    npm, node = shutil.which("npm"), shutil.which("node")
    if npm is None or node is None:
        if os.environ.get("CI"):
            pytest.fail("node and npm are needed to check the board's plotly.js", False)
        pytest.skip("node or npm is not installed")
    if not (RECIPE / "node_modules" / "plotly.js" / "package.json").exists():
        subprocess.run(
            [npm, "ci", "--ignore-scripts", "--no-audit", "--no-fund"],
            cwd=RECIPE, check=True, capture_output=True, timeout=900,
        )  # fmt: skip
    out = subprocess.run(
        [node, "build.mjs", "--check"], cwd=RECIPE, capture_output=True, text=True, timeout=300
    )
    assert out.returncode == 0, out.stdout + out.stderr
    assert BUNDLE_SHA256 in out.stdout
