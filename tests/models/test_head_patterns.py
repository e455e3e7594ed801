"""Head pattern scores on synthetic attention with known answers (attnviz.models.head_patterns)."""

from __future__ import annotations

import numpy as np
import pytest

from attnviz.models import head_patterns as hp

T = 6  # probe length in the synthetic cases
IDS = np.array([11, 12, 13, 14, 15, 16] * 2)  # a probe of length 6: 12 ids, no repeat inside
N = IDS.size


def _one(m: np.ndarray) -> np.ndarray:
    """(N, N) -> (1, 1, N, N)."""
    return np.asarray(m, dtype=np.float64)[None, None]


def cyclic_previous(n: int) -> np.ndarray:
    """Row i puts all its weight on key i-1; row 0 on the last key (no self weight)."""
    return np.roll(np.eye(n), -1, axis=1)


def causal_previous(n: int) -> np.ndarray:
    """Row i on key i-1; row 0 (no earlier key) on itself."""
    m = np.eye(n, k=-1)
    m[0, 0] = 1.0
    return m


def all_to_first(n: int) -> np.ndarray:
    m = np.zeros((n, n))
    m[:, 0] = 1.0
    return m


def induction_matrix(ids: np.ndarray, t: int) -> np.ndarray:
    """First copy: each row on itself; second copy: row i on key i-t+1 (after its earlier copy)."""
    n = ids.size
    m = np.eye(n)
    for i in range(t, n):
        m[i] = 0.0
        m[i, i - t + 1] = 1.0
    return m


def uniform_causal(n: int) -> np.ndarray:
    return np.tril(np.ones((n, n))) / np.arange(1, n + 1)[:, None]


def harmonic(lo: int, hi: int) -> float:
    """sum of 1/k for k = lo .. hi."""
    return float(sum(1.0 / k for k in range(lo, hi + 1)))


# (name, matrix, expected scores): each expected value derived by hand in the comment
CASES = [
    (
        "cyclic shifted identity",
        cyclic_previous(N),
        # every row i >= 1 on i-1; nothing on the diagonal; row 0's key N-1 is outside its
        # local window and not an earlier copy; in the second copy the key i-1 is the
        # earlier copy's successor only when i-1 == i-T+1, never for T = 6
        {
            "previous": 1.0,
            "self": 0.0,
            "first": 1 / (N - 1),
            "local": (N - 1) / N,
            "duplicate": 0.0,
            "induction": 0.0,
        },
    ),
    (
        "causal shifted identity",
        causal_previous(N),
        {
            "previous": 1.0,
            "self": 1 / N,
            "first": 1 / (N - 1),
            "local": (N - 1) / N,
            "duplicate": 0.0,
            "induction": 0.0,
        },
    ),
    (
        "all to first",
        all_to_first(N),
        # row 1's first key is also its previous key; rows 1..3 have key 0 in their window;
        # key 0 is the earlier copy of query T's token and nothing else's
        {
            "first": 1.0,
            "previous": 1 / (N - 1),
            "self": 1 / N,
            "local": 3 / N,
            "duplicate": 1 / T,
            "induction": 0.0,
        },
    ),
    (
        "induction",
        induction_matrix(IDS, T),
        # first copy on itself; second copy on key i-T+1, which is the previous key only
        # for T = 2 and in the window i-3..i-1 only for T <= 4
        {
            "induction": 1.0,
            "duplicate": 0.0,
            "self": T / N,
            "previous": 0.0,
            "first": 0.0,  # the second copy starts at key T-T+1 = 1; row 0 is left out
            "local": 0.0,
        },
    ),
    (
        "uniform causal",
        uniform_causal(N),
        # A[i, j] = 1 / (i + 1) for j <= i
        {
            "previous": harmonic(2, N) / (N - 1),
            "first": harmonic(2, N) / (N - 1),
            "self": harmonic(1, N) / N,
            "local": sum(min(i, 3) / (i + 1) for i in range(N)) / N,
            "duplicate": harmonic(T + 1, N) / T,
            "induction": harmonic(T + 1, N) / T,
        },
    ),
]


@pytest.mark.parametrize(("name", "matrix", "expected"), CASES, ids=[c[0] for c in CASES])
def test_synthetic_heads_score_their_closed_form(name, matrix, expected):
    assert np.allclose(matrix.sum(axis=1), 1.0), "a test matrix must have rows of weights"
    got = hp.scores(_one(matrix), IDS)
    assert set(got) == set(hp.PATTERNS)
    for pattern, value in expected.items():
        assert got[pattern].shape == (1, 1)
        assert got[pattern][0, 0] == pytest.approx(value, abs=1e-12), (name, pattern)


@pytest.mark.parametrize("n_tokens", [1, 2, 3, 5, 17, 64])
def test_uniform_causal_closed_form_for_any_probe_length(n_tokens):
    t = n_tokens
    ids = hp.probe(seed=3, length=t, vocab=(10**6, 10**6 + 10**5))
    n = 2 * t
    if np.unique(ids[:t]).size < t:
        pytest.skip("the random probe repeated a token inside one copy")
    got = hp.scores(_one(uniform_causal(n)), ids)
    assert got["self"][0, 0] == pytest.approx(harmonic(1, n) / n)
    assert got["previous"][0, 0] == pytest.approx(harmonic(2, n) / (n - 1))
    assert got["first"][0, 0] == pytest.approx(harmonic(2, n) / (n - 1))
    assert got["induction"][0, 0] == pytest.approx(harmonic(t + 1, n) / t)
    assert got["duplicate"][0, 0] == pytest.approx(harmonic(t + 1, n) / t)


def test_every_head_scored_at_once_and_heads_kept_apart():
    stack = np.stack(
        [
            np.stack([cyclic_previous(N), all_to_first(N), induction_matrix(IDS, T)]),
            np.stack([np.eye(N), uniform_causal(N), causal_previous(N)]),
        ]
    )  # (2 layers, 3 heads, N, N)
    got = hp.scores(stack.astype(np.float32), IDS)
    assert got["previous"].shape == (2, 3)
    assert got["previous"][0, 0] == pytest.approx(1.0)
    assert got["first"][0, 1] == pytest.approx(1.0)
    assert got["induction"][0, 2] == pytest.approx(1.0)
    assert got["self"][1, 0] == pytest.approx(1.0)
    assert got["previous"][1, 2] == pytest.approx(1.0)
    assert hp.top_heads(got["induction"], 1) == [(0, 2, pytest.approx(1.0))]


def test_several_earlier_copies_all_count():
    ids = np.array([7, 8, 7, 8, 7])
    # query 4 (token 7) has earlier copies at 0 and 2, their successors at 1 and 3
    m = np.zeros((5, 5))
    m[0, 0] = 1
    m[1, 0] = 1
    m[2, 1] = 1  # query 2: copy at 0, successor 1 -> induction 1
    m[3, 2] = 1  # query 3 (token 8): copy at 1, successor 2 -> induction 1
    m[4, [1, 3]] = 0.25  # 0.5 on successors ...
    m[4, [0, 2]] = 0.25  # ... 0.5 on earlier copies
    got = hp.scores(_one(m), ids)
    assert got["induction"][0, 0] == pytest.approx((1 + 1 + 0.5) / 3)
    assert got["duplicate"][0, 0] == pytest.approx((0 + 0 + 0.5) / 3)


def test_no_repeated_token_gives_nan_for_the_token_patterns():
    ids = np.arange(5)
    got = hp.scores(_one(uniform_causal(5)), ids)
    assert np.isnan(got["duplicate"]).all() and np.isnan(got["induction"]).all()
    assert np.isfinite(got["previous"]).all()
    one = hp.scores(_one(np.ones((1, 1))), np.array([3]))
    assert np.isnan(one["previous"]).all() and np.isnan(one["first"]).all()
    assert one["self"][0, 0] == 1.0 and one["local"][0, 0] == 0.0


def test_cell_masks_mark_the_defined_cells():
    ids = np.array([4, 5, 4, 6])
    m = hp.cell_masks(ids)
    assert np.argwhere(m["duplicate"]).tolist() == [[2, 0]]
    assert np.argwhere(m["induction"]).tolist() == [[2, 1]]
    assert np.argwhere(m["first"]).tolist() == [[1, 0], [2, 0], [3, 0]]
    assert np.argwhere(m["local"][3]).ravel().tolist() == [0, 1, 2]


def test_probe_is_a_seeded_sequence_repeated_twice():
    a = hp.probe(5, 40, (100, 200))
    assert a.shape == (80,) and a.dtype == np.int64
    assert np.array_equal(a[:40], a[40:])
    assert a.min() >= 100 and a.max() < 200
    assert np.array_equal(a, hp.probe(5, 40, (100, 200)))
    assert not np.array_equal(a, hp.probe(6, 40, (100, 200)))


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"seed": -1, "length": 4, "vocab": (0, 9)}, "seed must be an integer >= 0, got -1"),
        ({"seed": 1.5, "length": 4, "vocab": (0, 9)}, "seed must be an integer"),
        ({"seed": 0, "length": 0, "vocab": (0, 9)}, "length must be an integer >= 1, got 0"),
        ({"seed": 0, "length": True, "vocab": (0, 9)}, "length must be an integer"),
        ({"seed": 0, "length": 4, "vocab": (9, 9)}, r"0 <= lo < hi, got \(9, 9\)"),
        ({"seed": 0, "length": 4, "vocab": 9}, "two integers"),
    ],
)
def test_probe_refuses_bad_arguments(kwargs, message):
    with pytest.raises(ValueError, match=message):
        hp.probe(**kwargs)


@pytest.mark.parametrize(
    ("attentions", "ids", "message"),
    [
        (np.ones((2, 3, 3)), np.arange(3), r"\(layers, heads, N, N\).*got shape \(2, 3, 3\)"),
        (np.ones((1, 1, 3, 4)), np.arange(3), r"got shape \(1, 1, 3, 4\)"),
        (np.ones((1, 1, 3, 3)), np.arange(4), r"same N: attentions \(1, 1, 3, 3\), ids \(4,\)"),
        (np.ones((1, 1, 2, 2)), np.array([0.5, 1.0]), "ids must be integers, got dtype float64"),
        (np.ones((1, 1, 2, 2)), np.arange(4).reshape(2, 2), r"1-D.*got shape \(2, 2\)"),
        (np.ones((1, 1, 2, 2), dtype=int), np.arange(2), "floating-point weights"),
    ],
)
def test_scores_refuse_bad_input_with_what_was_expected(attentions, ids, message):
    with pytest.raises(ValueError, match=message):
        hp.scores(attentions, ids)


def test_top_heads_sorted_skip_nan_and_refuse_bad_k():
    v = np.array([[0.1, np.nan, 0.9], [0.9, 0.5, 0.2]])
    assert hp.top_heads(v, 3) == [(0, 2, 0.9), (1, 0, 0.9), (1, 1, 0.5)]
    assert len(hp.top_heads(v, 10)) == 5
    assert hp.top_heads(np.full((2, 2), np.nan), 3) == []
    with pytest.raises(ValueError, match="k must be an integer >= 0"):
        hp.top_heads(v, -1)
