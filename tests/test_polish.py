"""UI polish: upload limit agreement, init help wording."""

import tomllib
from pathlib import Path

import pytest

from attnviz import inputs

ROOT = Path(__file__).resolve().parents[1]


def test_upload_limit_agrees_with_the_server_and_the_message_names_it():
    cfg = tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text())
    assert cfg["server"]["maxUploadSize"] * 2**20 == inputs.MAX_UPLOAD_BYTES
    too_big = b"1," * (inputs.MAX_UPLOAD_BYTES // 2 + 1)
    with pytest.raises(ValueError, match=r"the limit is 1 MB"):
        inputs.parse_csv(too_big)
    inputs.parse_csv(b"1,2\n3,4\n")  # small files still parse


def test_real_model_init_help_describes_nn_linear_correctly():
    src = (ROOT / "pages" / "real_model.py").read_text()
    assert "like a fresh nn.Linear" not in src
    assert "kaiming" in src.lower() and "1/√fan_in" in src
