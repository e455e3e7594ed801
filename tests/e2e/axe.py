"""axe-core in the page: inject the pinned ``axe.min.js`` (tests/e2e/package-lock.json,
installed by ``npm ci --prefix tests/e2e``) into the page and every board frame, run the WCAG
2.0/2.1 A and AA rules, and return the violations with the nodes they were found on."""

from __future__ import annotations

import contextlib
import json
import os
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import pytest
from playwright.sync_api import TimeoutError as PlaywrightTimeout

#: the per-view counts (docs/accessibility.md), written by every module that scans
SUMMARY = Path(__file__).resolve().parents[2] / "artifacts" / "a11y" / "axe.json"
AXE_JS = Path(__file__).resolve().parent / "node_modules" / "axe-core" / "axe.min.js"
WCAG_AA = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"]
BLOCKING = {"serious", "critical"}

RUN_JS = """async (tags) => {
  const r = await axe.run(document, {runOnly: {type: 'tag', values: tags},
                                     resultTypes: ['violations'], iframes: false});
  return r.violations.map(v => ({id: v.id, impact: v.impact, help: v.help,
    nodes: v.nodes.map(n => ({target: n.target.join(' '), html: n.html.slice(0, 300),
                              summary: (n.failureSummary || '').slice(0, 300)}))}));
}"""


# The board's wide.js makes a display equation or a Markdown table wider than its box a
# keyboard stop (tabindex, role region: axe's scrollable-region-focusable), 150 ms after the
# page's last DOM change (a MutationObserver, debounced). A page counts as settled for the
# harness when its boards have drawn; the last board's drawing is itself a DOM change, so a
# scan right after it can find a wide equation not yet marked (CI, a phone's step by step,
# under the suite's load). The scan waits for the marks first; if they never come, axe
# reports the unmarked box.
WIDE_MARKED_JS = """() => Array.from(document.querySelectorAll(
    '.katex-display, [data-testid="stMarkdownContainer"]:has(> table)'))
  .every(e => e.scrollWidth - e.clientWidth <= 12 || e.classList.contains('attnviz-scrolls'))"""
WIDE_WAIT_MS = 5000


@dataclass
class Violation:
    frame: str  # "page", or the frame's name / url
    id: str
    impact: str
    help: str
    target: str
    html: str
    summary: str

    def __str__(self) -> str:
        return f"[{self.impact}] {self.id} in {self.frame}: {self.target} {self.html[:160]}"


def axe_source() -> str:
    if not AXE_JS.is_file():
        msg = f"axe-core is not installed ({AXE_JS}): run npm ci --prefix tests/e2e"
        if os.environ.get("CI"):
            pytest.fail(msg + " (CI is set: the accessibility test must run)", False)
        pytest.skip(msg)
    return AXE_JS.read_text()


def scan(page, frames: bool = True) -> list[Violation]:
    """Every WCAG 2.0/2.1 A/AA violation of the page's document and (``frames``) of each
    same-origin frame (the boards), one entry per node."""
    src = axe_source()
    out: list[Violation] = []
    # playwright's TimeoutError if the marks never come: axe then reports what is unmarked
    with contextlib.suppress(PlaywrightTimeout):
        page.wait_for_function(WIDE_MARKED_JS, timeout=WIDE_WAIT_MS, polling=50)
    targets = [page.main_frame] + (
        [f for f in page.frames if f is not page.main_frame] if frames else []
    )
    for frame in targets:
        if frame.is_detached():
            continue
        if not frame.evaluate("() => typeof axe !== 'undefined'"):
            frame.evaluate(src + "\n;undefined")
        name = "page" if frame is page.main_frame else (frame.name or frame.url[-60:])
        for v in frame.evaluate(RUN_JS, WCAG_AA):
            for n in v["nodes"]:
                out.append(
                    Violation(
                        name,
                        v["id"],
                        v["impact"] or "",
                        v["help"],
                        n["target"],
                        n["html"],
                        n["summary"],
                    )
                )
    return out


def blocking(violations: list[Violation]) -> list[Violation]:
    return [v for v in violations if v.impact in BLOCKING]


def contrast(a, b) -> float:
    """WCAG 2.1 contrast ratio of two sRGB colours given as (r, g, b) in 0..255."""

    def lum(c):
        c = [v / 255 for v in c]
        c = [v / 12.92 if v <= 0.04045 else ((v + 0.055) / 1.055) ** 2.4 for v in c]
        return 0.2126 * c[0] + 0.7152 * c[1] + 0.0722 * c[2]

    hi, lo = sorted([lum(a), lum(b)], reverse=True)
    return (hi + 0.05) / (lo + 0.05)


def in_board(v: Violation) -> bool:
    """A violation in a board: in a board's frame (the iframe board) or its element."""
    return (
        v.frame != "page"
        or any(m in v.html for m in ("attnviz-", "js-plotly-plot", "modebar"))
        or any(m in v.target for m in (".attnviz-", ".js-plotly-plot", ".modebar"))
    )


def assert_no_blocking(violations: list[Violation], where: str) -> None:
    found = blocking(violations)
    assert not found, f"{where}: serious/critical WCAG 2.1 A/AA violations:\n" + "\n".join(
        map(str, found)
    )


def record(view: str, found: list[Violation]) -> None:
    """Add one view's counts (app, boards, minor/moderate) to artifacts/a11y/axe.json."""
    SUMMARY.parent.mkdir(parents=True, exist_ok=True)
    summary = json.loads(SUMMARY.read_text()) if SUMMARY.is_file() else {}
    summary[view] = {
        "app": dict(Counter(v.id for v in blocking(found) if not in_board(v))),
        "boards": dict(Counter(v.id for v in blocking(found) if in_board(v))),
        "minor/moderate": dict(Counter(v.id for v in found if v not in blocking(found))),
    }
    SUMMARY.write_text(json.dumps(summary, indent=1, ensure_ascii=False))
