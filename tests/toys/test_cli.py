"""attnviz.toys.cli: the command python -m attnviz.toys."""

from __future__ import annotations

import pytest

from attnviz import toys

# --------------------------------------------------------------------------- command


def test_the_command_writes_a_run_and_reports_it(tmp_path, capsys):
    out = tmp_path / "prev.npz"
    assert toys.main(["--task", "previous", "--seed", "2", "--steps", "30", "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert f"wrote {out}" in printed and "previous: 30 steps in" in printed
    assert "fresh samples: loss" in printed and "layer 0 previous-token score" in printed
    assert out.read_bytes() == toys.history_bytes(toys.train("previous", 2, 30))


def test_the_command_says_what_is_wrong(capsys):
    with pytest.raises(SystemExit):
        toys.main(["--task", "previous", "--steps", str(toys.MAX_STEPS + 1)])
    assert f"steps must be in 1..{toys.MAX_STEPS}" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        toys.main(["--task", "copy"])
    assert "invalid choice: 'copy'" in capsys.readouterr().err


def test_the_command_reports_the_shipped_run(capsys):
    assert toys.main(["--task", "reverse", "--report"]) == 0
    printed = capsys.readouterr().out
    assert printed.startswith("reverse: 500 steps, seed 0,") and "accuracy 1.0000" in printed
