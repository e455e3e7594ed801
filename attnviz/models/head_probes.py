"""The head-pattern probe run through the real models (SmolLM2-135M and MiniLM-L6).

:func:`smollm_probe` and :func:`minilm_probe` draw the probe ids
(:func:`attnviz.models.head_patterns.probe`), run the model's own NumPy forward pass on
them and score every head (:func:`attnviz.models.head_patterns.scores`):

- SmolLM2 reads the ids as they are (its tokenizer adds no start token): N = 2T;
- MiniLM always reads ``[CLS] ... [SEP]``, so the probe sits between them: N = 2T + 2.
  [CLS] and [SEP] occur once, so they change neither ``duplicate`` nor ``induction``;
  ``first`` is then the weight on [CLS].

The vocabularies the probes draw from leave out control tokens, bytes, single characters
and BERT's unused slots: ordinary words and word pieces.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from attnviz.engine import multi_head_attention
from attnviz.models import head_patterns
from attnviz.models.layers import feed_forward, gelu, layer_norm
from attnviz.models.minilm import MiniLM
from attnviz.models.smollm import SmolLM

__all__ = [
    "DEFAULT_LENGTH",
    "DEFAULT_SEED",
    "LENGTH_MAX",
    "LENGTH_MIN",
    "MINILM_VOCAB",
    "SMOLLM_VOCAB",
    "ProbeRun",
    "any_probe",
    "minilm_attentions",
    "minilm_probe",
    "smollm_probe",
]

#: SmolLM2 ids 0-16 are control tokens, 17-272 single bytes; 1000-20000 are common pieces.
SMOLLM_VOCAB = (1000, 20000)
#: BERT (uncased) ids 1996-29611 are words and ## word pieces (below: [unused], single
#: characters; above: ## single characters).
MINILM_VOCAB = (1996, 29612)
DEFAULT_SEED = 0
DEFAULT_LENGTH = 40
LENGTH_MIN = 4
#: 2 x 128 tokens (+ [CLS], [SEP]) stay well inside both models' 512 positions
LENGTH_MAX = 128


@dataclass(frozen=True, eq=False)
class ProbeRun:
    """A probe through a model. tokens (N texts), ids (N,), attentions (L, H, N, N);
    ``length``: T, the length of one copy; ``start``: the position of the first copy's
    first token (1 after MiniLM's [CLS]); ``scores``: pattern -> (L, H)."""

    tokens: list[str]
    ids: NDArray[np.int64]
    attentions: NDArray[np.floating]
    length: int
    start: int
    scores: dict[str, NDArray[np.float64]]


def smollm_probe(model: SmolLM, seed: int, length: int) -> ProbeRun:
    """The probe (2 x ``length`` ids from :data:`SMOLLM_VOCAB`) through SmolLM2."""
    ids = head_patterns.probe(seed, length, SMOLLM_VOCAB)  # (2T,)
    run = model.run_ids(ids)  # attentions (30, 9, 2T, 2T)
    return ProbeRun(
        tokens=run.tokens,
        ids=ids,
        attentions=run.attentions,
        length=int(length),
        start=0,
        scores=head_patterns.scores(run.attentions, ids),
    )


def minilm_attentions(model: MiniLM, ids: NDArray[np.int64]) -> NDArray[np.floating]:
    """(6, 12, N, N): MiniLM's attentions on token ids (``[CLS]``/``[SEP]`` included, as
    the caller gives them). The same steps as :meth:`MiniLM.run`, which starts from text."""
    ids = np.asarray(ids, dtype=np.int64)
    if ids.ndim != 1 or not 1 <= ids.size <= model.max_tokens:
        raise ValueError(
            f"ids must be a 1-D array of 1 to {model.max_tokens} token ids, got shape {ids.shape}"
        )
    if ids.min() < 0 or ids.max() >= model.config.vocab_size:
        raise ValueError(f"token ids must be in 0..{model.config.vocab_size - 1}")
    eps = model.config.layer_norm_eps
    h = model.embed(ids)  # (N, 384)
    weights = []
    for i, layer in enumerate(model.layers):
        att = multi_head_attention(h, model.attention_params(i), num_heads=model.num_heads)
        weights.append(att.weights)  # (12, N, N)
        h = layer_norm(h + att.output, layer.ln1_w, layer.ln1_b, eps)  # (N, 384)
        f = feed_forward(h, layer.w_1, layer.w_2, gelu, layer.b_1, layer.b_2)  # (N, 384)
        h = layer_norm(h + f, layer.ln2_w, layer.ln2_b, eps)
    return np.stack(weights)  # (6, 12, N, N)


def minilm_probe(model: MiniLM, seed: int, length: int) -> ProbeRun:
    """The probe (2 x ``length`` ids from :data:`MINILM_VOCAB`) between [CLS] and [SEP]
    through MiniLM-L6."""
    body = head_patterns.probe(seed, length, MINILM_VOCAB)  # (2T,)
    tok = model.tokenizer
    cls_id, sep_id = tok.token_to_id(model.cls_token), tok.token_to_id(model.sep_token)
    ids = np.concatenate([[cls_id], body, [sep_id]]).astype(np.int64)  # (2T + 2,)
    attentions = minilm_attentions(model, ids)
    return ProbeRun(
        tokens=[tok.id_to_token(int(i)) for i in ids],
        ids=ids,
        attentions=attentions,
        length=int(length),
        start=1,
        scores=head_patterns.scores(attentions, ids),
    )


def any_probe(model: Any, seed: int, length: int) -> ProbeRun:
    """The probe through a model of the catalog (:func:`attnviz.models.load`): ids from
    its vocabulary's ordinary middle (from min(1000, V / 8) to min(V, 20000)), between the
    special ids its tokenizer puts around a text (an encoder's [CLS] and [SEP], a start
    token). ``length`` is cut to what the model's positions hold."""
    before, after = model.tokenizer.wrap()
    v = int(model.vocab_size)
    room = (int(model.max_positions) - len(before) - len(after)) // 2
    length = max(1, min(int(length), room))
    body = head_patterns.probe(seed, length, (min(1000, v // 8), min(v, 20000)))  # (2T,)
    ids = np.concatenate([before, body, after]).astype(np.int64)  # (2T + specials,)
    run = model.run_ids(ids)  # attentions (L, H, N, N)
    return ProbeRun(
        tokens=list(run.tokens),
        ids=ids,
        attentions=run.attentions,
        length=length,
        start=len(before),
        scores=head_patterns.scores(run.attentions, ids),
    )
