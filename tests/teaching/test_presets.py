"""Golden tests: every printed value of the seed notebooks that attnviz reproduces."""

from __future__ import annotations

import dataclasses
import re

import numpy as np
import pytest

from attnviz.engine import AttentionResult, causal_mask, masks, merge_heads
from attnviz.teaching import experiments, presets

NAMES = [
    "udl-self-attention",
    "udl-multihead",
    "numpy-multihead",
    "scaling-demo",
    "numerical-example",
]
CASES = [(name, e.label) for name in NAMES for e in presets.get(name).expected]


def test_names_are_the_five_notebooks():
    assert presets.names() == NAMES
    notebooks = {presets.get(n).notebook[:3] for n in NAMES}
    assert notebooks == {"000", "001", "002", "003", "004"}


def test_unknown_name_lists_the_valid_names():
    with pytest.raises(
        ValueError, match=r"unknown preset 'nope'; valid names: udl-self-attention, "
    ):
        presets.get("nope")


@pytest.mark.parametrize(("name", "label"), CASES)
def test_golden_value(name, label):
    p = presets.get(name)
    (check,) = [c for c in p.check() if c.label == label]
    assert check.computed.shape == check.expected.shape
    assert check.passed, (
        f"{name}: {label}: max abs error {check.max_abs_error} > tolerance {check.tolerance}"
    )


@pytest.mark.parametrize("name", NAMES)
def test_preset_basics(name):
    p = presets.get(name)
    assert p.name == name
    assert p.title and 20 < len(p.description) < 600
    assert len(p.tokens) == p.n_tokens
    assert p.expected, "every preset carries printed values"
    r = p.run()
    assert isinstance(r, AttentionResult)
    assert r.weights.shape == (p.num_heads, p.n_tokens, p.n_tokens)
    np.testing.assert_allclose(r.weights.sum(-1), 1.0, rtol=1e-12)
    assert presets.get(name) is p  # cached


@pytest.mark.parametrize("name", NAMES)
def test_run_overrides(name):
    p = presets.get(name)
    causal = p.run(mask="causal")
    np.testing.assert_array_equal(causal.mask, causal_mask(p.n_tokens))
    assert np.all(causal.weights[:, ~causal_mask(p.n_tokens)] == 0)
    assert p.run(scale=False).scale == 1.0
    assert p.run(scale=0.5).scale == 0.5
    assert p.run(mask="none").mask is None


@pytest.mark.parametrize("bad", ["causal ", "padding", "", 3])
def test_run_rejects_unknown_masks(bad):
    # the kinds without parameters, read from the registry (a new kind joins them)
    kinds = tuple(name for name, kind in masks.KINDS.items() if not kind.params)
    with pytest.raises(ValueError, match=re.escape(f"mask must be one of {kinds}")):
        presets.get("udl-multihead").run(mask=bad)


def test_preset_arrays_are_read_only():
    p = presets.get("udl-self-attention")
    with pytest.raises(ValueError, match="read-only"):
        p.x[0, 0] = 1.0
    with pytest.raises(dataclasses.FrozenInstanceError):
        p.scale = True


def test_check_can_fail():
    p = presets.get("numerical-example")
    e = p.expected[-1]
    wrong = dataclasses.replace(e, value=e.value + 1e-7)
    bad = dataclasses.replace(p, expected=(wrong,)).check()[0]
    assert not bad.passed
    assert bad.max_abs_error == pytest.approx(1e-7, rel=0.1)
    shape = dataclasses.replace(e, value=e.value[:2])
    assert not dataclasses.replace(p, expected=(shape,)).check()[0].passed


def test_presets_do_not_touch_numpys_global_rng():
    np.random.seed(7)  # noqa: NPY002 (the global RNG is what this test is about)
    a = np.random.rand()  # noqa: NPY002
    np.random.seed(7)  # noqa: NPY002 (the global RNG is what this test is about)
    presets._build.cache_clear()
    for n in NAMES:
        presets.get(n)
    assert np.random.rand() == a  # noqa: NPY002


# --------------------------------------------------------------------------- per notebook


def test_udl_self_attention_mapping():
    p = presets.get("udl-self-attention")
    assert (p.n_tokens, p.d_model, p.num_heads, p.scale) == (3, 4, 1, False)
    # x_prime_0_true of the notebook: unscaled, token 0
    np.testing.assert_allclose(
        p.run(scale=False).output[0], [0.94744244, -0.24348429, -0.91310441, -0.44522983], atol=5e-9
    )


def test_udl_multihead_settings():
    p = presets.get("udl-multihead")
    assert (p.n_tokens, p.d_model, p.num_heads) == (6, 8, 2)
    assert p.run().scale == pytest.approx(1 / np.sqrt(8 / 2))
    assert p.params.w_o is not None and p.params.b_o is None


def test_numpy_multihead_settings():
    p = presets.get("numpy-multihead")
    assert (p.n_tokens, p.d_model, p.num_heads) == (4, 8, 2)
    for name in ("b_q", "b_k", "b_v", "b_o"):
        assert getattr(p.params, name) is None
    for w in (p.params.w_q, p.params.w_k, p.params.w_v, p.params.w_o):
        assert w.shape == (8, 8) and w.min() >= 0 and w.max() < 1
    assert "queries" in p.description and "keys" in p.description


def test_numpy_multihead_notebook_normalises_over_the_queries():
    """The printed outputs cannot come from weights whose rows sum to 1.

    V = x @ W_V with x and W_V in [0, 1), so 0 <= V[j, c] < sum(x[j]). If every row of
    weights summed to 1 (softmax over the keys), each output row would be a convex
    combination of V rows, so every output entry would be below max_j sum(x[j]).
    """
    x = presets._NB001_X
    bound = x.sum(axis=1).max()
    assert bound == pytest.approx(5.0629, abs=1e-4)
    for out in presets._NB001_ATTENTION_OUTPUTS:
        assert out.max() > bound  # 5.866 and 6.676 in the first run: not a convex combination
    # With weights normalised over the queries (columns sum to 1), the sum of the output
    # rows of a head is the sum of its V rows, which is below the sum of all of x.
    for out in presets._NB001_ATTENTION_OUTPUTS:
        assert (out.sum(axis=1) < x.sum()).all()


def test_numpy_multihead_combined_is_merge_heads():
    for att, comb in zip(presets._NB001_ATTENTION_OUTPUTS, presets._NB001_COMBINED, strict=True):
        np.testing.assert_array_equal(merge_heads(att), comb)


def test_scaling_demo_settings():
    p = presets.get("scaling-demo")
    assert p.tokens == ["Your", "journey", "starts", "with", "one", "step"]
    assert (p.n_tokens, p.d_model, p.params.d_k, p.params.d_v) == (6, 3, 2, 2)
    assert p.params.w_o is None and p.params.b_q is None
    assert p.run().output.shape == (6, 2)
    assert tuple(presets._NB002_LOGITS) == experiments.NOTEBOOK_LOGITS


def test_scaling_demo_weights_are_float32_values():
    p = presets.get("scaling-demo")
    for w in (p.params.w_q, p.params.w_k, p.params.w_v):
        np.testing.assert_array_equal(w.astype(np.float32).astype(np.float64), w)
        assert ((w >= 0) & (w < 1)).all()


def test_numerical_example_settings():
    p = presets.get("numerical-example")
    assert p.x is None and p.params is None
    assert (p.n_tokens, p.d_model, p.num_heads) == (4, 8, 1)
    r = p.run(mask="causal")
    # the last query sees every key: masked and unmasked last rows agree (as printed)
    np.testing.assert_allclose(r.output[-1], p.run(mask="none").output[-1], rtol=1e-14)
    np.testing.assert_array_equal(r.weights[0, 0], [1.0, 0.0, 0.0, 0.0])
