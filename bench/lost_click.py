"""Is a fragment's click lost when it reaches the server during a full run of the page?
Issue 25 on Streamlit alone (``bench/fragment_app.py``), scenarios by how the full run ends;
expected count 1. ``--sibling`` (headless Chromium): does the element after the fragment
vanish, without and with the fragment in a slot of its own (docs/benchmarks.md, "No click
lost"; bench/vanishing_sibling.py until issue 49)?

    python bench/lost_click.py                      # every scenario, 3 trials each
    python bench/lost_click.py --scenario stop --trials 5 --json lost_click.json
    python bench/lost_click.py --sibling --trials 5
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import kit
import websocket
from kit import Server
from stclient import Session
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

APP = Path(__file__).resolve().parent / "fragment_app.py"
SCENARIOS = ("stop", "none", "raise", "rerun", "idle", "second-run")
#: How each scenario's full run ends (the page's ``?end=``).
ENDS = {"stop": "stop", "raise": "raise", "rerun": "rerun"}


def _message(s: Session, name: str, click: bool, fragment: bool = False) -> bytes:
    """A rerun BackMsg as the browser sends it: the name, the "+1" click when ``click``."""
    states = [s.state_for("name", name)] + [s.state_for("plus", True)] * click
    frag = s.widget("plus").fragment_id if click or not name or fragment else ""
    return s.message(states, frag, cached=False)


def _drain(s: Session, quiet: float) -> list[str]:
    """Read until the server has said nothing for ``quiet`` s: the markdown texts seen."""
    assert s.ws is not None
    s.ws.settimeout(quiet)
    texts = []
    while True:
        try:
            data = s.ws.recv()
        except websocket.WebSocketTimeoutException:
            return texts
        fm = ForwardMsg()
        fm.ParseFromString(data)
        if fm.WhichOneof("type") == "delta" and fm.delta.new_element.HasField("markdown"):
            texts.append(fm.delta.new_element.markdown.body)


def _clicks(s: Session, name: str) -> int:
    """Rerun the counter fragment alone and read its count."""
    assert s.ws is not None
    s.ws.send_binary(_message(s, name, click=False, fragment=True))
    for text in reversed(_drain(s, 2.0)):
        if text.startswith("clicks: "):
            return int(text.split(": ")[1])
    raise RuntimeError("the counter did not answer")


def trial(url: str, scenario: str, args: argparse.Namespace) -> int:
    query = f"end={ENDS.get(scenario, '')}&slow={args.full_run}"
    with Session(url, query=query) as s:
        first = s.rerun()
        assert first.ok, first.errors
        assert s.ws is not None
        if scenario != "idle":
            s.ws.send_binary(_message(s, "ada", click=False))  # a full run starts
            time.sleep(args.click_after)
        s.ws.send_binary(_message(s, "ada" if scenario != "idle" else "", click=True))
        if scenario == "second-run":
            time.sleep(0.1)
            s.ws.send_binary(_message(s, "grace", click=False))
        _drain(s, args.full_run + 2.0)
        return _clicks(s, "grace" if scenario == "second-run" else "ada")


def run(scenarios: list[str], args: argparse.Namespace, app: Path = APP) -> dict[str, list[int]]:
    """The clicks counted per trial of each scenario (each trial clicks once)."""
    with Server(app, options={"runner.fastReruns": args.fast_reruns}) as srv:
        return {sc: [trial(srv.url, sc, args) for _ in range(args.trials)] for sc in scenarios}


SIBLING = "I come after the fragment"


def sibling_trial(browser, url: str, slow: float) -> dict:
    """Type a name (a slow full run), click "+1" 0.3 s into it: what the page shows then."""
    ctx, page = kit.tab(browser, (1280, 720))  # playwright's default window
    with ctx:
        page.goto(url)
        page.get_by_text(SIBLING).wait_for(timeout=30_000)
        page.get_by_label("name").fill("ada")
        page.get_by_label("name").press("Enter")
        page.wait_for_timeout(300)
        page.get_by_role("button", name="+1").click()  # waits behind the full run
        page.wait_for_timeout(int(slow * 1000) + 3000)
        page.locator('[data-testid=stApp][data-test-script-state="notRunning"]').wait_for()
        body = page.inner_text("body")
        return {"sibling shown": SIBLING in body, "clicks: 1 shown": "clicks: 1" in body}


def sibling(args: argparse.Namespace) -> dict[str, list[dict]]:
    report = {}
    with Server(APP) as srv, kit.browser() as browser:
        for slot in ("0", "1"):
            url = f"{srv.url}/?case=sibling&slow={args.full_run}&slot={slot}"
            rows = [sibling_trial(browser, url, args.full_run) for _ in range(args.trials)]
            report[f"slot={slot}"] = rows
            print(f"slot={slot}: the line after the fragment shown in "
                  f"{sum(r['sibling shown'] for r in rows)} of {len(rows)} trials; the click "
                  f"counted in {sum(r['clicks: 1 shown'] for r in rows)}")  # fmt: skip
    return report


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = kit.parser(__doc__)
    p.add_argument("--scenario", choices=SCENARIOS, action="append")
    p.add_argument("--sibling", action="store_true", help="the vanishing sibling instead")
    p.add_argument("--trials", type=int, default=3)
    p.add_argument("--full-run", type=float, default=1.5, help="seconds of the slow full run")
    p.add_argument("--click-after", type=float, default=0.3, help="seconds into the full run")
    p.add_argument(
        "--fast-reruns", action=argparse.BooleanOptionalAction, default=False,
        help="runner.fastReruns (attnviz's setting: off; Streamlit's default: on)",
    )  # fmt: skip
    return p.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if args.sibling:
        report = sibling(args)
    else:
        report = run(args.scenario or list(SCENARIOS), args)
        for scenario, counts in report.items():
            print(f"{scenario:>10}: clicks counted {counts} (1 click per trial)")
    kit.write_json(args.json, report, say=False)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
