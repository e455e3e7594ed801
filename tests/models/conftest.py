"""Tiny checkpoints of every family, each built once per session (tests/models/tiny.py)."""

from __future__ import annotations

import pytest

from tests.models import tiny


@pytest.fixture(scope="session")
def tiny_checkpoint(tmp_path_factory):
    """``make(family, dtype="float32")``: the folder of a tiny random checkpoint."""
    pytest.importorskip("transformers")
    made = {}

    def make(family: str, dtype: str = "float32"):
        if (family, dtype) not in made:
            folder = tmp_path_factory.mktemp(f"{family}-{dtype}")
            made[family, dtype] = tiny.save(family, folder, dtype)
        return made[family, dtype]

    return make
