"""The README's pictures (`docs/img/*.png`) are screenshots the browser tests take.

Every run takes them again into `artifacts/screenshots/readme_*.png`; with
`ATTNVIZ_README_IMAGES=1` it also writes them into `docs/img/`, to be committed
(`ATTNVIZ_README_IMAGES=1 bash scripts/test.sh tests/e2e/test_readme_images.py`). The
committed files are checked to be the pictures of the views the README says they are: a PNG
of the window size each view is taken at.
"""

from __future__ import annotations

import os
import shutil
import struct

import pytest
from e2e_app import ROOT, BrowserSession

pytestmark = pytest.mark.e2e

IMG = ROOT / "docs" / "img"
#: name -> (link, window): what each README picture shows.
VIEWS = {
    "playground": ("/", (1280, 800)),
    "presenter": ("/step_by_step?present=1&N=5&step=4", (1280, 720)),
}


def png_size(path) -> tuple[int, int]:
    """(width, height) from a PNG's IHDR chunk."""
    head = path.read_bytes()[:24]
    assert head[:8] == b"\x89PNG\r\n\x1a\n", f"{path} is not a PNG"
    return struct.unpack(">II", head[16:24])


@pytest.mark.parametrize("name", sorted(VIEWS))
def test_readme_picture_is_a_screenshot_of_its_view(browser, app_server, name):
    link, window = VIEWS[name]
    s = BrowserSession(browser, app_server, viewport=window)
    try:
        s.open(link)
        s.assert_healthy(f"README picture {name}")
        assert s.plotly_count() >= 1, f"{link}: no chart drawn"
        shot = s.screenshot(f"readme_{name}", full=False)
    finally:
        s.close()
    assert png_size(shot) == window
    target = IMG / f"{name}.png"
    if os.environ.get("ATTNVIZ_README_IMAGES") == "1":
        IMG.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(shot, target)
    assert target.is_file(), f"{target} is missing: run with ATTNVIZ_README_IMAGES=1"
    assert png_size(target) == window, f"{target} is not a {window} screenshot of {link}"
    assert f"docs/img/{name}.png" in (ROOT / "README.md").read_text()
