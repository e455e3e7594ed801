"""Does the element after a fragment vanish when the fragment's rerun waits behind a full
run? (``bench/fragment_app.py?case=sibling``, with and without ``&slot=1``; docs/benchmarks.md).

    python bench/vanishing_sibling.py                # 5 trials without and with the slot
"""

from __future__ import annotations

import kit

APP = kit.BENCH / "fragment_app.py"
SIBLING = "I come after the fragment"


def trial(browser, url: str, slow: float) -> dict:
    ctx, page = kit.tab(browser, (1280, 720))  # playwright's default window
    try:
        page.goto(url)
        page.get_by_text(SIBLING).wait_for(timeout=30_000)
        box = page.get_by_label("name")
        box.fill("ada")
        box.press("Enter")  # the full run starts and sleeps
        page.wait_for_timeout(300)
        page.get_by_role("button", name="+1").click()  # waits behind it
        page.wait_for_timeout(int(slow * 1000) + 3000)
        page.wait_for_function(
            "document.querySelector('[data-testid=stApp]')"
            ".getAttribute('data-test-script-state') === 'notRunning'",
            timeout=30_000,
        )
        body = page.inner_text("body")
        return {"sibling shown": SIBLING in body, "clicks: 1 shown": "clicks: 1" in body}
    finally:
        ctx.close()


def main(argv: list[str] | None = None) -> int:
    p = kit.parser(__doc__)
    p.add_argument("--trials", type=int, default=5)
    p.add_argument("--slow", type=float, default=1.5)
    args = p.parse_args(argv)
    report: dict[str, list[dict]] = {}
    with kit.Server(APP) as srv, kit.browser() as browser:
        for slot in ("0", "1"):
            url = f"{srv.url}/?case=sibling&slow={args.slow}&slot={slot}"
            report[f"slot={slot}"] = [trial(browser, url, args.slow) for _ in range(args.trials)]
    for name, rows in report.items():
        shown = sum(r["sibling shown"] for r in rows)
        counted = sum(r["clicks: 1 shown"] for r in rows)
        print(f"{name}: the line after the fragment shown in {shown} of {len(rows)} trials; "
              f"the click counted in {counted} of {len(rows)}")  # fmt: skip
    kit.write_json(args.json, report, say=False)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
