"""What the encoder-decoder families share (attnviz/models/encdec.py), for every case of
tests/encdec_models.py (T5, BART, Marian): greedy generation against transformers'
``generate`` over 20 steps (each step's logits and attention rows too), the KV cache's
steps against the whole pass, eos, sampling by seed, top-k and top-p, bad ids."""

from __future__ import annotations

import numpy as np
import pytest
from encdec_models import (
    CASES,
    TOL,
    assert_same,
    greedy_reference,
    ids_for,
    make,
    ours,
    reference,
    saved,
    torch,
)

from attnviz.models import encdec


@pytest.fixture(scope="module", params=list(CASES))
def case(request, tmp_path_factory):
    return saved(request.param, tmp_path_factory.mktemp(request.param))


def test_greedy_generation_equals_transformers_for_20_steps(case):
    """The new ids token for token, and at each step the logits and the new token's
    attention over the cache (self) and the source (cross), every layer and head."""
    name, model, config, weights = case
    m = ours(config, weights)
    src = ids_for(model, 8, 6)
    ids, logits, self_rows, cross_rows = greedy_reference(model, src, 20)
    steps = list(m.generate_steps(src, 20))
    assert [s.next_id for s in steps] == ids == m.generate(src, 20)
    for s, want_logits, want_self, want_cross in zip(
        steps, logits, self_rows, cross_rows, strict=True
    ):
        np.testing.assert_allclose(s.logits, want_logits, atol=TOL, rtol=0)
        np.testing.assert_allclose(s.self_attentions, want_self, atol=TOL, rtol=0)
        np.testing.assert_allclose(s.cross_attentions, want_cross, atol=TOL, rtol=0)
    assert m.generate(src, 0) == []


def test_generation_stops_at_eos(case):
    """eos is the last new id (transformers keeps it too)."""
    name, model, config, weights = case
    m = ours(config, weights)
    src = ids_for(model, 8, 6)
    first = m.generate(src, 1)[0]
    m.eos_token_ids = frozenset({first})
    assert m.generate(src, 20) == [first]
    assert len(list(m.generate_steps(src, 20))) == 1


def test_each_step_sees_what_the_whole_pass_sees(case):
    """Step by step with the cache: each step's row is the full pass's last row."""
    name, model, config, weights = case
    m = ours(config, weights)
    src = ids_for(model, 8, 7)
    steps = list(m.generate_steps(src, 6, temperature=1.0, seed=2))
    tgt = [m.decoder_start_token_id] + [s.next_id for s in steps]
    for n, step in enumerate(steps, start=1):
        run = m.run_ids(src, tgt[:n])
        assert step.cache_length == n and step.position == n - 1 and step.input_id == tgt[n - 1]
        np.testing.assert_allclose(step.self_attentions, run.attentions[:, :, -1], atol=TOL)
        np.testing.assert_allclose(step.cross_attentions, run.cross_attentions[:, :, -1], atol=TOL)
        np.testing.assert_allclose(step.logits, run.logits, atol=TOL)
    ids, p = steps[0].top(5)
    assert ids.shape == (5,) and np.all(np.diff(p) <= 0) and ids[0] == np.argmax(steps[0].logits)


def test_sampling_is_reproducible_from_its_seed(case):
    name, model, config, weights = case
    m = ours(config, weights)
    src = ids_for(model, 8, 8)
    opts = dict(temperature=1.5, top_k=40, top_p=0.95)
    draws = [tuple(m.generate(src, 12, seed=s, **opts)) for s in (0, 0, 1, 2, 3)]
    assert draws[0] == draws[1]
    assert len(set(draws)) > 2  # other seeds, other text
    assert all(0 <= i < m.tgt_vocab for d in draws for i in d)


def test_next_token_cuts_to_top_k_and_top_p():
    rng = np.random.default_rng(0)
    logits = np.log(np.array([0.5, 0.3, 0.15, 0.05], dtype=np.float32))
    assert encdec.next_token(logits, rng) == 0
    drawn = {encdec.next_token(logits, rng, 1.0, top_k=2) for _ in range(200)}
    assert drawn == {0, 1}
    drawn = {encdec.next_token(logits, rng, 1.0, top_p=0.7) for _ in range(200)}
    assert drawn == {0, 1}  # 0.5 + 0.3 reach 0.7
    assert {encdec.next_token(logits, rng, 1.0, top_p=0.01) for _ in range(50)} == {0}
    bad_args = [
        dict(temperature=-1.0),
        dict(temperature=1.0, top_k=0),
        dict(temperature=1.0, top_p=0),
    ]
    for bad in bad_args:
        with pytest.raises(ValueError):
            encdec.next_token(logits, rng, **bad)


def test_ids_outside_the_vocabulary_and_no_tokenizer(case):
    name, model, config, weights = case
    m = ours(config, weights)
    src = ids_for(model, 5, 9)
    for bad in ([m.src_vocab], [-1], []):
        with pytest.raises(ValueError, match="source ids"):
            m.run_ids(np.array(bad, dtype=np.int64), [m.decoder_start_token_id])
        with pytest.raises(ValueError, match="source ids"):
            m.generate(np.array(bad, dtype=np.int64), 3)
    with pytest.raises(ValueError, match="target ids"):
        m.run_ids(src, [m.tgt_vocab])
    with pytest.raises(ValueError, match="tokenizer.json"):
        m.tokenize("hello")


@pytest.mark.parametrize("case", ["t5", "bart", "marian"])
@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
def test_a_saved_checkpoint_is_found_and_loaded_through_the_catalog(case, dtype, tmp_path):
    """An encoder-decoder folder on the disk (save_pretrained, f32 or bf16 file): listed by
    models.find as an encoder-decoder, loaded by models.load (the loader reads the file,
    widens bf16, dispatches to the family's build) and equal to transformers on the same
    rounded weights."""
    from attnviz import models

    folder = tmp_path / "models" / case
    model = make(case)
    if dtype != "float32":
        model = model.to(getattr(torch, dtype))
    model.save_pretrained(folder)
    # the reference: transformers reading the same file in float32
    model = type(model).from_pretrained(folder, dtype=torch.float32, attn_implementation="eager")
    model.eval()
    (entry,) = models.find([tmp_path / "models"])
    assert (entry.name, entry.family, entry.kind) == (case, case, "encoder-decoder")
    assert not entry.too_large and entry.params > 0 and entry.bytes == 4 * entry.params
    loaded = models.load(entry)
    assert loaded.kind == "encoder-decoder" and loaded.family == case
    src, tgt = ids_for(model, 7, 1), np.concatenate([[0], ids_for(model, 4, 2)])
    assert_same(loaded.run_ids(src, tgt), reference(model, src, tgt))
