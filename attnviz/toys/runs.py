"""The run files: a run as a byte-identical zip of ``.npy`` arrays (:func:`history_bytes`,
:func:`read_history`), and the runs shipped in ``attnviz/toy_runs/`` (:func:`run_path`,
:func:`load`).
"""

from __future__ import annotations

import io
import zipfile
from importlib import resources
from pathlib import Path

import numpy as np
from numpy.typing import NDArray

from attnviz.toys.model import EncDecParams, ToyParams
from attnviz.toys.tasks import Task, get_task
from attnviz.toys.training import History

Array = NDArray[np.float64]

#: Where the shipped runs are (package data): ``attnviz/toy_runs/<task>.npz``.
RUNS_DIR = "toy_runs"
#: The fixed date of every entry of a run file (a zip), so that a re-run is byte-identical.
ZIP_DATE = (1980, 1, 1, 0, 0, 0)


#: How a run file stores the weights (float16 halves the size; see docs/engine.md).
STORE_DTYPE = np.float16
_FORMAT = 1


def _npy(a: NDArray) -> bytes:
    buf = io.BytesIO()
    np.lib.format.write_array(buf, np.ascontiguousarray(a), allow_pickle=False)
    return buf.getvalue()


def history_bytes(history: History) -> bytes:
    """A run as a file: a zip of ``.npy`` arrays (``numpy.load`` reads it as an npz) whose
    entries all carry the date :data:`ZIP_DATE`, so the same run gives the same bytes.

    ``steps`` (C,) int32, ``losses`` (S,) float32, one (C, ...) array per ``ToyParams``
    (or ``EncDecParams``) field in :data:`STORE_DTYPE`, and ``run`` the task, seed, total
    steps and settings.
    """
    run = {"format": _FORMAT, "task": history.task, "seed": history.seed,
           "total": history.total, **history.settings}  # fmt: skip
    entries = {
        "run": np.array(sorted(run.items()), dtype=str),  # (k, 2) text pairs
        "steps": history.steps.astype(np.int32),  # (C,)
        "losses": history.losses.astype(np.float32),  # (S,)
    }
    for name in history.checkpoints[0].shapes:  # SHAPES, or ENCDEC_SHAPES
        stacked = np.stack([getattr(p, name) for p in history.checkpoints])  # (C, ...)
        entries[name] = stacked.astype(STORE_DTYPE)
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_STORED) as z:
        for name, arr in entries.items():
            info = zipfile.ZipInfo(f"{name}.npy", date_time=ZIP_DATE)
            info.external_attr = 0o644 << 16
            z.writestr(info, _npy(arr))
    return buf.getvalue()


def read_history(data: bytes) -> History:
    """The run written by :func:`history_bytes` (weights back in float64)."""
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as z:
            arrays = {
                n.removesuffix(".npy"): np.lib.format.read_array(
                    io.BytesIO(z.read(n)), allow_pickle=False
                )
                for n in z.namelist()
            }
        run = dict(arrays.pop("run").tolist())
        steps, losses = arrays.pop("steps"), arrays.pop("losses")
        kind = EncDecParams if "pos_src" in arrays else ToyParams  # by its weights' names
        checkpoints = [kind(**{k: a[c] for k, a in arrays.items()}) for c in range(len(steps))]
    except (zipfile.BadZipFile, KeyError, ValueError, TypeError) as e:
        raise ValueError(f"not a toys run file (expected a zip of .npy arrays): {e}") from e
    return History(
        task=run["task"], seed=int(run["seed"]), steps=steps.astype(np.int64),
        checkpoints=checkpoints, losses=losses.astype(np.float64), total=int(run["total"]),
        settings={"lr": float(run["lr"]), "batch": int(run["batch"]),
                  "every": int(run["every"]), "drop": float(run["drop"])},
    )  # fmt: skip


def run_path(task: str | Task) -> Path:
    """The shipped run file of a task, in the installed package."""
    return Path(str(resources.files("attnviz") / RUNS_DIR / f"{get_task(task).name}.npz"))


def load(task: str | Task) -> History:
    """The run shipped with the package for ``task`` (made by ``python -m attnviz.toys
    --task <task> --seed <seed>``)."""
    path = run_path(task)
    if not path.is_file():
        raise ValueError(f"no shipped run for task {get_task(task).name!r}: {path} is missing")
    return read_history(path.read_bytes())
