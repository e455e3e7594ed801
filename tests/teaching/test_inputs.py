"""attnviz.teaching.inputs: random X, typed text -> tokens and embeddings, CSV parsing and
validation."""

import tomllib
from pathlib import Path

import numpy as np
import pytest

from attnviz.teaching import inputs

ROOT = Path(__file__).resolve().parents[2]


def test_random_input_is_seeded_normal():
    a = inputs.random_input(5, 3, seed=7)
    b = inputs.random_input(5, 3, seed=7)
    c = inputs.random_input(5, 3, seed=8)
    assert a.x.shape == (5, 3) and a.labels == ("t0", "t1", "t2", "t3", "t4")
    np.testing.assert_array_equal(a.x, b.x)
    assert not np.allclose(a.x, c.x)
    np.testing.assert_array_equal(a.x, np.random.default_rng(7).standard_normal((5, 3)))


@pytest.mark.parametrize("n,d", [(0, 4), (513, 4), (4, 0), (4, 129), (-3, 8)])
def test_random_input_rejects_bad_sizes(n, d):
    with pytest.raises(ValueError, match="must be an integer"):
        inputs.random_input(n, d)


def test_tokenize_words_and_punctuation():
    assert inputs.tokenize("Hi, you.") == ["Hi", ",", "you", "."]
    assert inputs.tokenize("  ") == []
    assert len(inputs.tokenize("a " * 600)) == inputs.MAX_TOKENS


def test_text_input_same_word_same_row_and_stable():
    ti = inputs.text_input("the cat saw the dog", 6)
    assert ti.labels == ("the", "cat", "saw", "the", "dog")
    assert ti.x.shape == (5, 6)
    np.testing.assert_array_equal(ti.x[0], ti.x[3])  # "the" twice: identical embeddings
    assert not np.allclose(ti.x[0], ti.x[1])
    # deterministic across calls and a prefix when D grows
    np.testing.assert_array_equal(inputs.token_embedding("cat", 6), ti.x[1])
    np.testing.assert_array_equal(inputs.token_embedding("cat", 9)[:6], ti.x[1])


def test_text_input_empty_is_an_error():
    with pytest.raises(ValueError, match="no tokens"):
        inputs.text_input("   ", 4)


def test_parse_csv_plain_numbers():
    ti = inputs.parse_csv(b"1,2,3\n4,5,6\n")
    np.testing.assert_array_equal(ti.x, [[1, 2, 3], [4, 5, 6]])
    assert ti.labels == ("t0", "t1")


def test_parse_csv_header_and_labels_and_semicolons():
    ti = inputs.parse_csv("token;a;b\nthe;1.5;-2\ncat;3e-1;4\n")
    assert ti.labels == ("the", "cat")
    np.testing.assert_allclose(ti.x, [[1.5, -2], [0.3, 4]])


def test_parse_csv_roundtrips_an_exported_matrix():
    x = np.random.default_rng(0).standard_normal((4, 3))
    text = "," + ",".join("abc") + "\n"
    text += "\n".join(f"t{i}," + ",".join(f"{v:.17g}" for v in row) for i, row in enumerate(x))
    ti = inputs.parse_csv(text.encode())
    np.testing.assert_array_equal(ti.x, x)
    assert ti.labels == ("t0", "t1", "t2", "t3")


def test_parse_csv_reads_the_apps_own_export_back():
    """The playground's CSV of X has row names and numeric column names: ",0,1,2" then
    "t0,…". The empty corner cell marks the header; it is not a token labelled ""."""
    from attnviz import ui

    x = np.random.default_rng(1).standard_normal((5, 6))
    labels = ("the", "cat", "sat", "on", "mats")
    exported = ui.csv_maker(x, labels, None)()
    assert exported.startswith(b",0,1,2,3,4,5\n")
    ti = inputs.parse_csv(exported)
    assert ti.labels == labels
    np.testing.assert_allclose(ti.x, x, rtol=1e-7)
    one = inputs.parse_csv(b",1,2\n")  # a single row with an empty label is data
    assert one.labels == ("",) and one.x.shape == (1, 2)


@pytest.mark.parametrize(
    "data,message",
    [
        (b"", "empty"),
        (b"1,2\n3\n", "different numbers of values"),
        (b"1,2\n3,x\n", "not a number"),
        (b"1,nan\n", "not a finite number"),
        (b"1,inf\n", "not a finite number"),
        (b"1,2e9\n", "too large"),
        (b"\xff\xfe\x00bin", "not UTF-8|binary"),
        (b"a,b\n", "header row but no rows"),
        (("1," * 129 + "1\n").encode(), "too many"),
        (("1\n" * 513).encode(), "too many"),
    ],
)
def test_parse_csv_errors_are_clear(data, message):
    with pytest.raises(ValueError, match=message):
        inputs.parse_csv(data)


def test_parse_csv_size_limit():
    with pytest.raises(ValueError, match="limit"):
        inputs.parse_csv(b"1," * 10, max_bytes=5)


def test_upload_limit_agrees_with_the_server_and_the_message_names_it():
    cfg = tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text())
    assert cfg["server"]["maxUploadSize"] * 2**20 == inputs.MAX_UPLOAD_BYTES
    too_big = b"1," * (inputs.MAX_UPLOAD_BYTES // 2 + 1)
    with pytest.raises(ValueError, match=r"the limit is 1 MB"):
        inputs.parse_csv(too_big)
    inputs.parse_csv(b"1,2\n3,4\n")  # small files still parse
