"""bench/gestures.py's table and record on made-up bench output (no browser, no server, no
timing asserted): the ratios and their rounds, the 15 % flag, the --record round trip on a
copy of the docs' section."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))

import gestures  # noqa: E402


def _latency(label: str, key: str, moves: list[float]) -> dict:
    """A row of bench/browser_latency.py's JSON: the moves' ``key`` and its median."""
    rows = [{"view_ms": m + 5, "charts_ms": m} if key == "charts_ms" else {"view_ms": m}
            for m in moves]  # fmt: skip
    srt = sorted(moves)
    return {"label": label, "rows": rows, f"median_{key}": srt[len(srt) // 2]}


def fake_benches(folder: Path) -> None:
    """Each bench's JSON as it writes it, the figures chosen for round numbers."""
    slider = [
        _latency("attnviz:home:defaults:r1", "view_ms", [100, 100, 100]),
        _latency("attnviz:multi_head:defaults:r1", "view_ms", [200, 200, 200]),
        _latency("attnviz:step_by_step:defaults:r1", "view_ms", [300, 300, 300]),
        _latency("bare:home:defaults:r1", "view_ms", [400, 400, 400]),
        _latency("attnviz:home:defaults:r2", "view_ms", [150, 150, 150]),
        _latency("attnviz:multi_head:defaults:r2", "view_ms", [200, 200, 200]),
        _latency("attnviz:step_by_step:defaults:r2", "view_ms", [300, 300, 300]),
        _latency("bare:home:defaults:r2", "view_ms", [500, 500, 500]),
    ]
    head = [
        _latency("attnviz:home:defaults", "charts_ms", [90, 100, 110]),
        _latency("bare:home:defaults", "view_ms", [400, 400, 400]),
    ]
    switch = {  # two rounds of two pages; the plain app's switches in the same order
        "switch_rows": {"Playground": [{"ms": 400}, {"ms": 500}], "Masking": [{"ms": 600}] * 2},
        "plain_rows": [{"ms": 500}, {"ms": 500}, {"ms": 500}, {"ms": 1000}],
    }
    first = {
        "attnviz": {"visits": [{"drawn": 2000}, {"drawn": 2400}, {"drawn": 2200}]},
        "plain": {"visits": [{"drawn": 3000}, {"drawn": 3000}, {"drawn": 4000}]},
    }
    engine = {
        "sizes": [[64, 64, 8], [512, 256, 8], [1024, 512, 8]],
        "rounds": [
            [{"fused_ms": 1, "torch_ms": 2}, {"fused_ms": 90, "torch_ms": 100},
             {"fused_ms": 200, "torch_ms": 250}],
            [{"fused_ms": 1, "torch_ms": 2}, {"fused_ms": 110, "torch_ms": 100},
             {"fused_ms": 200, "torch_ms": 250}],
        ],
    }  # fmt: skip
    out = {"slider": slider, "head": head, "page_switch": switch, "first_visit": first}
    for step, data in (out | {"engine": engine}).items():
        (folder / gestures.READERS[step][0]).write_text(json.dumps(data))


@pytest.fixture
def benches(tmp_path: Path) -> Path:
    folder = tmp_path / "benches"
    folder.mkdir()
    fake_benches(folder)
    return folder


@pytest.fixture
def docs(tmp_path: Path) -> Path:
    """A copy of docs/benchmarks.md's guard section between two other sections."""
    text = (ROOT / "docs" / "benchmarks.md").read_text()
    start = text.index(f"\n{gestures.SECTION}\n")
    end = text.index("\n## ", start + 2)
    path = tmp_path / "benchmarks.md"
    path.write_text(
        "# b\n\n## Before\n\ntext\n"
        + text[start:end]
        + '\n## After\n\n```json\n{"not": "this"}\n```\n'
    )
    return path


def test_ratios_are_the_runs_medians_with_each_rounds(benches: Path) -> None:
    f = gestures.read_figures(benches, list(gestures.STEPS))
    assert set(f) == {g.id for g in gestures.GESTURES}
    pg = f["slider_playground"]  # rounds 100 / 400 ms and 150 / 500; all moves: 125 / 450
    assert (pg["attnviz_ms"], pg["plain_ms"], pg["ratios"]) == (125, 450, [0.25, 0.3])
    assert pg["ratio"] == 0.275  # the rounds' median (125 / 450 = 0.278 mixes the rounds)
    assert f["slider_step_by_step"]["ratios"] == [0.75, 0.6]
    # the picker's charts_ms over the bare app's slider (view_ms)
    assert f["head_change"] == {"attnviz_ms": 100, "plain_ms": 400, "ratio": 0.25, "ratios": [0.25]}
    # rounds of the page switch: {400, 600} / {500, 500}, then {500, 600} / {500, 1000}
    assert f["page_switch"]["ratios"] == [1.0, 0.733]
    assert f["page_switch"]["ratio"] == 0.867
    assert (f["page_switch"]["attnviz_ms"], f["page_switch"]["plain_ms"]) == (550, 500)
    assert f["first_visit"]["ratios"] == [0.667, 0.8, 0.55]
    assert f["first_visit"]["ratio"] == 0.667
    assert f["engine_512"]["ratios"] == [0.9, 1.1] and f["engine_512"]["ratio"] == 1.0


def test_table_flags_a_ratio_that_moved_more_than_15_percent(benches: Path) -> None:
    figures = gestures.read_figures(benches, list(gestures.STEPS))
    recorded = {"gestures": {
        "slider_playground": {"ratio": 0.229},  # 0.275 now: +20 %
        "slider_multi_head": {"ratio": 0.5},  # 0.45 now: -10 %
        "head_change": {"ratio": 0.294},  # 0.25: -15 %, not more
    }}  # fmt: skip
    text, moved = gestures.table(figures, recorded)
    assert moved == ["slider_playground"]
    rows = {line.split(" | ")[0].lstrip("| "): line for line in text.splitlines()[2:]}
    assert len(rows) == len(gestures.GESTURES)
    playground = rows[gestures.GESTURES[0].title]
    assert "125 / 450 ms: **0.28x** (0.25-0.30x)" in playground
    assert "| 0.23x | moved +20% | met |" in playground
    assert "| 0.50x | -10% | met |" in rows["the same, Multi-head"]
    assert "| moved" not in rows[gestures.GESTURES[3].title]
    assert rows["page switch (attnviz / plain app)"].endswith("| none |  | met |")
    assert rows[gestures.GESTURES[7].title].endswith(
        "**1.00x** (0.90-1.10x) | none |  | **not met** |"
    )
    assert gestures.change(1.16, 1.0) == ("moved +16%", True)
    assert gestures.change(0.84, 1.0) == ("moved -16%", True)


def test_record_round_trip_and_skipped_gestures_keep_theirs(
    benches: Path, docs: Path, tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    before = docs.read_text()
    old = gestures.read_record(docs)  # the section's block (the docs' last run), not the next's
    assert isinstance(old, dict) and old != {"not": "this"}
    m = gestures._block(before)
    head, tail = before[: m.start(1)], before[m.end(1) :]
    assert gestures.main(["--from", str(benches), "--docs", str(docs), "--record"]) == 0
    rec = gestures.read_record(docs)
    assert rec["gestures"] == gestures.read_figures(benches, list(gestures.STEPS))
    assert {"date", "commit", "load_start", "load_end", "wall_s", "commands"} <= set(rec)
    after = docs.read_text()  # only the block changed
    assert after.startswith(head) and after.endswith(tail)
    assert after.count("```json") == 2

    capsys.readouterr()
    out = tmp_path / "guard.json"
    assert gestures.main(["--from", str(benches), "--docs", str(docs), "--json", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "| 0.25x | +0% | met |" in printed and "moved" not in printed
    assert docs.read_text() == after  # read, not rewritten
    assert json.loads(out.read_text())["moved"] == []

    # a run that skips the engine records the rest and keeps the engine's recorded figures
    slider = benches / "slider.json"  # the playground's first round: 200 ms, not 100
    slider.write_text(slider.read_text().replace('view_ms": 100', 'view_ms": 200'))
    argv = ["--from", str(benches), "--docs", str(docs), "--skip", "engine", "--record"]
    assert gestures.main(argv) == 0
    assert "| 0.28x | moved +45% | met |" in capsys.readouterr().out  # rounds 0.5, 0.3
    again = gestures.read_record(docs)
    assert again["gestures"]["slider_playground"]["attnviz_ms"] == 175
    assert again["gestures"]["engine_64"]["ratio"] == rec["gestures"]["engine_64"]["ratio"]
    assert again["gestures"]["engine_64"]["from"] == f"{rec['date']} at {rec['commit']}"


def test_skip_names_a_step_and_record_refuses_a_quick_run() -> None:
    with pytest.raises(SystemExit):
        gestures.parse(["--skip", "engin"])
    with pytest.raises(SystemExit):
        gestures.parse(["--quick", "--record"])
    steps = gestures.parse(["--skip", "engine,first_visit"]).steps
    assert steps == ["slider", "head", "page_switch"]
