"""Does the element after a fragment vanish when the fragment's rerun waits behind a full
run? (Streamlit 1.67; found with six students checking at once in a live class.)

``bench/fragment_app.py`` (``?case=sibling``): a text input whose commit reruns the whole page, a
slow full run (``?slow=``, 1.5 s) that draws a fragment (a "+1" button and its count) at
its end, then a markdown line, "I come after the fragment". In headless Chromium, each
trial opens the page, commits a name, clicks "+1" while the full run sleeps (the click's
fragment rerun waits behind it), waits until the page is idle and reads the page.

What happens (AppSession and the browser, as read in Streamlit 1.67's source):

1. the full run ends; the queued fragment run starts at once, and its SCRIPT_STARTED
   clears the session's outgoing queue of that fragment's deltas
   (``ForwardMsgQueue.clear(fragment_ids_this_run=...)``), including those the full run
   had just written and not yet sent;
2. so the browser gets the full run without the fragment's block, and at its end removes
   the old block as stale: the later elements move up one place;
3. the fragment run's block then lands at the fragment's delta path, now the place of
   the line after it, and replaces it. The click is counted, but the line is gone until
   the next full run.

``?slot=1`` calls the fragment inside a container of its own (attnviz's ``quiz.in_slot``):
the stale block is removed inside that container, no sibling moves, nothing vanishes.

    python bench/vanishing_sibling.py                # 5 trials without and with the slot
    python bench/vanishing_sibling.py --trials 10 --json vanish.json
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
