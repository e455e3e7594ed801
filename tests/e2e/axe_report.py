"""Per-view axe-core report (docs/accessibility.md): serious/critical WCAG 2.0/2.1 A/AA
violations, nodes per rule, in the app's markup and in its boards, as a Markdown table.

    PYTHONPATH=. .venv/bin/python tests/e2e/axe_report.py [--json out.json]

Starts the app on a free port, opens each view of test_a11y_e2e.VIEWS at 1280x900 in
headless Chromium and runs the pinned axe-core (tests/e2e/axe.py) in the page and every
frame.
"""

from __future__ import annotations

import argparse
import json
from collections import Counter

from axe import blocking, scan
from e2e_app import CHROMIUM_ARGS, BrowserSession, chromium_path, start_app_server, stop_app_server
from test_a11y_e2e import VIEWS, _in_board


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--json")
    args = ap.parse_args()
    from playwright.sync_api import sync_playwright

    server = start_app_server()
    rows = {}
    try:
        with sync_playwright() as pw:
            browser = pw.chromium.launch(
                executable_path=chromium_path(), args=CHROMIUM_ARGS, headless=True
            )
            s = BrowserSession(browser, server, (1280, 900))
            for name, path in VIEWS.items():
                s.open(path)
                found = blocking(scan(s.page))
                rows[name] = {
                    "app": dict(Counter(v.id for v in found if not _in_board(v))),
                    "boards": dict(Counter(v.id for v in found if _in_board(v))),
                }
            browser.close()
    finally:
        stop_app_server(server)
    fmt = lambda c: ", ".join(f"{k} {n}" for k, n in sorted(c.items())) or "0"  # noqa: E731
    print("| view | app's markup | boards |\n| --- | --- | --- |")
    for name, r in rows.items():
        print(f"| {name} | {fmt(r['app'])} | {fmt(r['boards'])} |")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1, ensure_ascii=False)


if __name__ == "__main__":
    main()
