"""The decoder's shared loop: the KV cache gives the same rows as a full run, a step's
attentions and cache, sampling reproducible from its seed, top-k and top-p."""

from __future__ import annotations

import numpy as np
import pytest

from attnviz.models import causal, checkpoint, families
from tests.models import tiny


@pytest.fixture(scope="module")
def qwen3(tiny_checkpoint):
    return families.build(checkpoint.open_folder(tiny_checkpoint("qwen3")))


def test_causal_rows():
    np.testing.assert_array_equal(causal.causal_rows(0, 3), np.tri(3, dtype=bool))
    rows = causal.causal_rows(4, 2, window=3)  # queries at 4, 5 over keys 0..5
    np.testing.assert_array_equal(rows, [[0, 0, 1, 1, 1, 0], [0, 0, 0, 1, 1, 1]])


@pytest.mark.torch
def test_each_step_is_the_newest_row_of_a_full_run(qwen3):
    ids = tiny.prompt(6)
    steps = list(qwen3.generate_steps(ids, 5))
    new = [s.token for s in steps]
    for k, step in enumerate(steps):
        seen = np.concatenate([ids, new[:k]])  # (6 + k,)
        full = qwen3.run_ids(seen)
        assert step.query == seen[-1] and step.cache_tokens == seen.size
        assert step.attentions.shape == (2, 4, seen.size)  # (L, H, n so far)
        np.testing.assert_allclose(step.attentions, full.attentions[:, :, -1], atol=1e-6)
        np.testing.assert_allclose(step.logits, full.logits, atol=1e-5)
        assert step.cache_bytes == 2 * 2 * seen.size * 2 * 16 * 4  # L, k and v, n, G·d, f32
        top = step.top(5)
        assert top[0][0] == step.token and len(top) == 5  # greedy: the most likely
        assert top[0][1] >= top[1][1] and 0 < sum(p for _, p in top) <= 1


@pytest.mark.torch
def test_sampling_is_reproducible_from_its_seed(qwen3):
    ids = tiny.prompt()
    kw = dict(temperature=1.5, top_k=50, top_p=0.95)
    a = qwen3.generate(ids, 20, seed=3, **kw)
    np.testing.assert_array_equal(a, qwen3.generate(ids, 20, seed=3, **kw))
    assert not np.array_equal(a, qwen3.generate(ids, 20, seed=4, **kw))
    assert not np.array_equal(a, qwen3.generate(ids, 20))  # greedy


def test_top_k_and_top_p_keep_only_the_best():
    logits = np.log([0.5, 0.3, 0.15, 0.05])
    rng = np.random.default_rng(0)
    assert causal.sample(logits, rng) == 0  # greedy
    drawn = {causal.sample(logits, rng, 1.0, top_k=2) for _ in range(200)}
    assert drawn == {0, 1}
    drawn = {causal.sample(logits, rng, 1.0, top_p=0.9) for _ in range(300)}
    assert drawn == {0, 1, 2}  # 0.5 + 0.3 < 0.9: the third is needed, the fourth not
    assert {causal.sample(logits, rng, 1.0, top_p=0.4) for _ in range(50)} == {0}


@pytest.mark.torch
@pytest.mark.parametrize(
    "kwargs, word",
    [({"temperature": -1}, "temperature"), ({"top_k": 0}, "top_k"), ({"top_p": 1.5}, "top_p")],
)
def test_bad_sampling_arguments_are_named(qwen3, kwargs, word):
    with pytest.raises(ValueError, match=word):
        qwen3.generate(tiny.prompt(), 3, **kwargs)


@pytest.mark.torch
def test_generation_stops_after_eos_and_checks_ids(qwen3):
    ids = tiny.prompt()
    first = int(qwen3.generate(ids, 1)[0])
    qwen3.eos_ids = frozenset({first})
    try:
        np.testing.assert_array_equal(qwen3.generate(ids, 10), [first])
    finally:
        qwen3.eos_ids = frozenset()
    with pytest.raises(ValueError, match="0..127"):
        qwen3.run_ids([5, 128])
    with pytest.raises(ValueError, match="tokens, the model has"):
        qwen3.generate(ids, qwen3.max_positions)
