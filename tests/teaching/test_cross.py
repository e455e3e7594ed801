"""attnviz.teaching.cross: the Cross-attention page's two sequences and its run, against the engine;
what a user types that cannot be used comes back as a note, never an exception."""

from __future__ import annotations

import numpy as np
import pytest

from attnviz import engine
from attnviz.teaching import cross, inputs


def test_the_default_sentences_give_a_seven_by_four_view():
    seqs = cross.sequences("text", d=8)
    assert seqs.source.labels == ("the", "black", "cat", "sat")
    assert seqs.target.labels == ("le", "chat", "noir", "s", "'", "est", "assis")
    np.testing.assert_array_equal(seqs.source.x, inputs.text_input(cross.SOURCE_TEXT, 8).x)
    res = cross.run(seqs, d=8, heads=2, seed=0)
    assert res.is_cross and res.weights.shape == (2, 7, 4)
    np.testing.assert_allclose(res.weights.sum(-1), 1.0)


def test_run_is_engine_cross_attention_with_the_playgrounds_weights():
    seqs = cross.sequences("random", d=8, seed=3, n_src=5, n_tgt=3)
    assert seqs.source.labels[0] == "s0" and seqs.target.labels[-1] == "t2"
    res = cross.run(seqs, d=8, heads=4, seed=3, init="normal", bias=False, scale=False)
    params = engine.AttentionParams.random(8, seed=4, init="normal", bias=False)
    ref = engine.cross_attention(
        seqs.target.x, seqs.source.x, params, num_heads=4, scale=False, fused=False
    )
    np.testing.assert_allclose(res.weights, ref.weights, atol=1e-12)
    np.testing.assert_allclose(res.output, ref.output, atol=1e-12)


def test_source_padding_hides_the_last_source_tokens_from_every_target_token():
    seqs = cross.sequences("random", d=4, n_src=5, n_tgt=3)
    res = cross.run(seqs, d=4, mask="padding", pad=2)
    assert (res.weights[..., 3:] == 0).all()
    np.testing.assert_allclose(res.weights.sum(-1), 1.0)
    # a padding longer than the source hides it all: rows of 0, not NaN
    assert (cross.run(seqs, d=4, mask="padding", pad=9).weights == 0).all()


def test_a_causal_mask_over_two_lengths_is_refused_saying_why():
    seqs = cross.sequences("random", d=4, n_src=5, n_tgt=3)
    with pytest.raises(ValueError, match="causal orders one sequence against itself"):
        cross.run(seqs, d=4, mask="causal")
    same = cross.sequences("random", d=4, n_src=3, n_tgt=3)
    w = cross.run(same, d=4, mask="causal").weights
    assert (np.triu(w[0], 1) == 0).all()


@pytest.mark.parametrize(
    ("text", "note"),
    [
        ("", "has no tokens"),
        ("   ", "has no tokens"),
        ("x" * 5000, "5,000 characters"),
        (" ".join(["w"] * 100), "100 tokens; only the first 64"),
    ],
)
def test_unusable_text_comes_back_with_a_note(text, note):
    seqs = cross.sequences("text", d=8, text_src=text)
    assert any(note in n for n in seqs.notes), seqs.notes
    assert 1 <= seqs.source.n <= cross.N_MAX
    assert all(len(t) <= cross.LABEL_CHARS for t in seqs.source.labels)


def test_every_pair_runs_and_unknown_inputs_say_what_is_valid():
    for name, (src, tgt) in cross.PAIRS.items():
        seqs = cross.sequences("preset", d=8, pair=name)
        assert seqs.source.labels == tuple(inputs.tokenize(src))
        assert seqs.target.labels == tuple(inputs.tokenize(tgt))
    with pytest.raises(ValueError, match="pair must be one of"):
        cross.sequences("preset", d=8, pair="nope")
    with pytest.raises(ValueError, match="kind must be one of random, text, preset"):
        cross.sequences("upload", d=8)
    with pytest.raises(ValueError, match="N_src must be from 1 to 64"):
        cross.sequences("random", d=8, n_src=65)
    with pytest.raises(ValueError, match="mask must be one of"):
        cross.mask_of("window", 3, 4)
