"""The browser's flags: ``e2e_app.DISABLED_FEATURES`` keeps every feature playwright turns
off (Chromium reads only the last --disable-features switch, ours), and a new browser window
opens no page but the test's own."""

from __future__ import annotations

import re
from pathlib import Path

import playwright
import pytest
from e2e_app import CHROMIUM_ARGS, DISABLED_FEATURES

pytestmark = pytest.mark.e2e


def playwright_disabled_features() -> list[str]:
    """The features the installed playwright disables, read from its driver's bundle."""
    driver = Path(playwright.__file__).parent / "driver" / "package" / "lib"
    for js in sorted(driver.rglob("*.js")):
        text = js.read_text(errors="replace")
        start = text.find("disabledFeatures = [")
        if start >= 0:
            return re.findall(r'^\s*"(\w+)"', text[start : text.index("]", start)], re.M)
    pytest.fail(f"no 'disabledFeatures = [' in playwright's driver under {driver}")


def test_our_disabled_features_keep_playwrights() -> None:
    theirs = playwright_disabled_features()
    assert len(theirs) >= 5, theirs  # the list was found and read
    assert set(theirs) <= set(DISABLED_FEATURES), set(theirs) - set(DISABLED_FEATURES)
    assert sum(a.startswith("--disable-features=") for a in CHROMIUM_ARGS) == 1


def test_a_new_context_opens_no_page_of_the_browsers_own(browser) -> None:
    """The omnibox popups (chrome://omnibox-popup.top-chrome) cost a renderer per window."""
    context = browser.new_context()
    try:
        context.new_page().goto("about:blank")
        cdp = browser.new_browser_cdp_session()
        targets = cdp.send("Target.getTargets")["targetInfos"]
        cdp.detach()
    finally:
        context.close()
    assert [t["url"] for t in targets if t["type"] != "page"] == []
