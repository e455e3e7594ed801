"""attnviz.toys.runs: run files (the shipped runs: tests/toys/test_runs_shipped.py)."""

from __future__ import annotations

import io
import zipfile

import numpy as np
import pytest

from attnviz import toys

# --------------------------------------------------------------------------- run files


def test_run_file_round_trip_in_float16():
    run = toys.train("reverse", 0, 30)
    data = toys.history_bytes(run)
    back = toys.read_history(data)
    assert (back.task, back.seed, back.total, back.settings) == (
        run.task, run.seed, run.total, run.settings,
    )  # fmt: skip
    np.testing.assert_array_equal(back.steps, run.steps)
    np.testing.assert_array_equal(back.losses, run.losses.astype(np.float32))
    for got, want in zip(back.checkpoints, run.checkpoints, strict=True):
        for name in toys.SHAPES:
            np.testing.assert_array_equal(
                getattr(got, name), getattr(want, name).astype(np.float16).astype(np.float64)
            )
    assert toys.history_bytes(back) == data  # float16 weights survive a second round


def test_run_file_is_an_npz_with_fixed_dates():
    data = toys.history_bytes(toys.train("reverse", 0, 5))
    with zipfile.ZipFile(io.BytesIO(data)) as z:
        assert {i.date_time for i in z.infolist()} == {(1980, 1, 1, 0, 0, 0)}
        assert sorted(z.namelist()) == sorted(
            f"{n}.npy" for n in ["run", "steps", "losses", *toys.SHAPES]
        )
    npz = np.load(io.BytesIO(data))
    assert npz["w_q"].shape == (len(npz["steps"]), 1, 2, 32, 8)


def test_a_bad_run_file_is_a_value_error():
    with pytest.raises(ValueError, match="not a toys run file"):
        toys.read_history(b"not a zip")
