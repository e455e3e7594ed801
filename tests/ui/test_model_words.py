"""attnviz.ui.model_words: how a found model is named (size, parameters, shape)."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from attnviz import i18n
from attnviz.ui import model_words


@pytest.mark.parametrize(
    ("n", "text"), [(7, "7"), (4_300, "4.3 k"), (135_000_000, "135.0 M"), (1_240_000_000, "1.2 B")]
)
def test_params_in_thousands_millions_billions(n, text):
    assert model_words.params(n) == text


def test_size_in_mb_then_gb_from_100_mb_and_with_the_languages_decimal_sign():
    assert model_words.size(54_000_000) == "54.0 MB"
    assert model_words.size(540_000_000) == "0.5 GB"
    with i18n.use("es"):
        assert model_words.size(54_000_000) == "54,0 MB"


def test_shape_says_the_shared_key_value_heads_only_when_there_are_fewer():
    plain = SimpleNamespace(num_layers=2, num_heads=4)
    gqa = SimpleNamespace(num_layers=30, num_heads=9, num_kv_heads=3)
    assert model_words.shape(plain) == "2 layers × 4 heads"
    assert model_words.shape(gqa) == "30 layers × 9 heads (sharing 3 key/value heads)"


def test_describe_names_family_parameters_size_and_too_large():
    entry = SimpleNamespace(
        name="tiny-bert", family="BERT", params=4_300, bytes=17_200, too_large=False
    )
    assert model_words.describe(entry) == "tiny-bert — BERT, 4.3 k parameters, 0.0 MB"
    big = SimpleNamespace(**{**vars(entry), "too_large": True})
    assert model_words.describe(big).startswith(model_words.describe(entry) + " (too large: ")


def test_upper_first_keeps_the_rest():
    assert model_words.upper_first("the bundled MiniLM-L6") == "The bundled MiniLM-L6"
