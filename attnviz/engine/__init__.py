"""The engine: attention in NumPy, the formula first (docs/engine.md).

``from attnviz.engine import ...`` is the contract: this package's names below are the
engine's public face, whichever module of it holds them. Its modules, one line each:

- ``core``: ``attention`` (steps 3-7), ``multi_head_attention`` (steps 1-9, numbered),
  ``cross_attention`` (queries from a target, keys and values from a source;
  ``key_padding_mask``), softmax, the masks' builders, the result, the loop form; the one
  switch between the formula and the fused path (``core.FUSED = True``).
- ``fused``: the fast path the app runs: steps 3-7 fused (``attend``), the same numbers as
  ``core.attention`` to rounding, scores computed when read; imports only ``fast_exp``.
- ``fast_exp``: the fused path's exponentials (``exp_inplace``), one loop numba compiles
  (cached on disk), within 1 ulp of NumPy's; ``np.exp`` without numba; the row softmax
  (``softmax_rows_inplace``); the Q, K, V biases' addition (``add_rows_inplace``,
  NumPy's bits in one compiled pass); ``warm``.
- ``params``: ``AttentionParams``, the projection weights, checked on construction; seeded
  random ones (``normal``, ``uniform``, ``xavier``).
- ``checks``: every shape, dtype and finiteness check of the engine's inputs, each error
  naming what was expected and what came.
- ``views``: other views of a result: the UDL column layout (``to_columns``),
  ``row_entropy``, ``permute_tokens``.
- ``decoder``: the decoder pieces: ``repeat_kv`` (grouped-query attention), ``rope_cos_sin``,
  ``apply_rope`` (RoPE).
- ``masks``: the mask kinds, one table (``KINDS``): each kind's builder, label, URL
  parameters and ranges, NumPy code line, explanation; every reader walks it.
- ``limits``: N's limits, one table (``TABLE``): the largest N and D, and where a chart
  changes how it draws N tokens; every other module reads it, none keeps a copy.

The engine imports nothing else of attnviz (tests/test_layout.py): NumPy only, no Streamlit.
"""

from attnviz.engine.checks import check_finite
from attnviz.engine.core import (
    AttentionResult,
    Scale,
    apply_mask,
    attention,
    attention_from_qkv,
    attention_scores,
    causal_mask,
    cross_attention,
    key_padding_mask,
    loop_attention,
    merge_heads,
    multi_head_attention,
    padding_mask,
    prefix_mask,
    project,
    resolve_scale,
    scaled_dot_product_attention,
    sliding_window_mask,
    softmax,
    split_heads,
)
from attnviz.engine.decoder import apply_rope, repeat_kv, rope_cos_sin
from attnviz.engine.params import AttentionParams, Init
from attnviz.engine.views import ColumnView, permute_tokens, row_entropy, to_columns

__all__ = [
    "AttentionParams",
    "AttentionResult",
    "ColumnView",
    "Init",
    "Scale",
    "apply_mask",
    "apply_rope",
    "attention",
    "attention_from_qkv",
    "attention_scores",
    "causal_mask",
    "check_finite",
    "cross_attention",
    "key_padding_mask",
    "loop_attention",
    "merge_heads",
    "multi_head_attention",
    "padding_mask",
    "permute_tokens",
    "prefix_mask",
    "project",
    "repeat_kv",
    "resolve_scale",
    "rope_cos_sin",
    "row_entropy",
    "scaled_dot_product_attention",
    "sliding_window_mask",
    "softmax",
    "split_heads",
    "to_columns",
]
