"""The toy transformer: its parameters (:class:`ToyParams`, :data:`SHAPES`) and its forward
pass (:func:`forward`), attention-only, causal, in row layout as the engine.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

from attnviz.engine import causal_mask, softmax

Array = NDArray[np.float64]


def _int(name: str, value: object, lo: int, hi: int | None = None) -> int:
    """``value`` as an int in lo..hi (hi included), or ValueError saying what came."""
    if isinstance(value, bool) or not isinstance(value, int | np.integer):
        raise ValueError(f"{name} must be an integer, got {value!r}")
    if value < lo or (hi is not None and value > hi):
        want = f">= {lo}" if hi is None else f"in {lo}..{hi}"
        raise ValueError(f"{name} must be {want}, got {value}")
    return int(value)


def _tokens(name: str, a: ArrayLike, vocab: int, shape: tuple[int, ...] | None = None):
    """``a`` as an int64 (B, T) array of ids in 0..vocab-1, or ValueError."""
    arr = np.asarray(a)
    if arr.dtype.kind not in "iu":
        raise ValueError(f"{name} must be integer token ids, got dtype {arr.dtype}")
    if arr.ndim != 2 or arr.size == 0:
        raise ValueError(f"{name} must be (B, T) with B, T >= 1, got shape {arr.shape}")
    if shape is not None and arr.shape != shape:
        raise ValueError(f"{name} must have the shape of ids {shape}, got {arr.shape}")
    if arr.min() < 0 or arr.max() >= vocab:
        raise ValueError(
            f"{name} must be in 0..{vocab - 1} (V = {vocab}), got values "
            f"{int(arr.min())}..{int(arr.max())}"
        )
    return arr.astype(np.int64, copy=False)


# --------------------------------------------------------------------------- parameters


#: Each weight's shape in symbols, in the order of ToyParams' fields.
SHAPES: dict[str, tuple[str, ...]] = {
    "embed": ("V", "D"),
    "pos": ("T_max", "D"),
    "w_q": ("L", "H", "D", "d_h"),
    "w_k": ("L", "H", "D", "d_h"),
    "w_v": ("L", "H", "D", "d_h"),
    "w_o": ("L", "H", "d_h", "D"),
    "unembed": ("D", "V"),
}


@dataclass
class ToyParams:
    """The weights of a toy transformer, float64 arrays (row layout: ``Q = x @ w_q``).

    embed (V, D), pos (T_max, D), w_q, w_k, w_v (L, H, D, d_h), w_o (L, H, d_h, D),
    unembed (D, V) (:data:`SHAPES`). On construction the arrays are copied as float64 and
    checked: the right number of axes, every size >= 1, each symbol one size throughout.
    """

    embed: Array  # (V, D) one row per token
    pos: Array  # (T_max, D) one row per position
    w_q: Array  # (L, H, D, d_h)
    w_k: Array  # (L, H, D, d_h)
    w_v: Array  # (L, H, D, d_h)
    w_o: Array  # (L, H, d_h, D)
    unembed: Array  # (D, V)

    def __post_init__(self) -> None:
        sizes: dict[str, tuple[int, str]] = {}  # symbol -> (size, the weight it came from)
        for name, symbols in SHAPES.items():
            arr = np.asarray(getattr(self, name))
            want = f"({', '.join(symbols)})"
            if arr.dtype.kind not in "iuf":
                raise ValueError(f"ToyParams.{name} must be numeric, got dtype {arr.dtype}")
            if arr.ndim != len(symbols) or 0 in arr.shape:
                raise ValueError(f"ToyParams.{name} must be {want}, got shape {arr.shape}")
            for symbol, size in zip(symbols, arr.shape, strict=True):
                known, where = sizes.setdefault(symbol, (size, name))
                if size != known:
                    raise ValueError(
                        f"ToyParams.{name} must be {want}, got shape {arr.shape}: its "
                        f"{symbol} is {size} but {where} has {symbol} = {known}"
                    )
            arr = np.array(arr, dtype=np.float64)  # a float64 copy
            if not np.isfinite(arr).all():
                raise ValueError(f"ToyParams.{name} (shape {arr.shape}) contains NaN or inf")
            setattr(self, name, arr)

    @property
    def sizes(self) -> dict[str, int]:
        """V, D, T_max, L, H, d_h."""
        out = {}
        for name, symbols in SHAPES.items():
            out.update(zip(symbols, getattr(self, name).shape, strict=True))
        return out

    def arrays(self) -> dict[str, Array]:
        """name -> array, in the order of the fields."""
        return {name: getattr(self, name) for name in SHAPES}

    def zeros_like(self) -> ToyParams:
        return ToyParams(**{k: np.zeros_like(a) for k, a in self.arrays().items()})

    def copy(self) -> ToyParams:
        return ToyParams(**self.arrays())  # __post_init__ copies

    @classmethod
    def init(
        cls, rng: np.random.Generator, *, vocab: int, length: int, d_model: int,
        layers: int, heads: int, d_head: int,
    ) -> ToyParams:  # fmt: skip
        """Random weights: embeddings N(0, 1), projections N(0, 1/fan-in)."""
        v, t, d, n_l, h, d_h = vocab, length, d_model, layers, heads, d_head

        def normal(shape: tuple[int, ...], fan_in: int) -> Array:
            return rng.standard_normal(shape) / math.sqrt(fan_in)

        return cls(
            embed=normal((v, d), 1),  # (V, D)
            pos=normal((t, d), 1),  # (T_max, D)
            w_q=normal((n_l, h, d, d_h), d),  # (L, H, D, d_h)
            w_k=normal((n_l, h, d, d_h), d),  # (L, H, D, d_h)
            w_v=normal((n_l, h, d, d_h), d),  # (L, H, D, d_h)
            w_o=normal((n_l, h, d_h, d), h * d_h),  # (L, H, d_h, D)
            unembed=normal((d, v), d),  # (D, V)
        )


# --------------------------------------------------------------------------- the model


@dataclass
class _Layer:
    """What one attention layer's backward pass needs from its forward pass."""

    x: Array  # (B, T, D) the residual stream the layer reads
    q: Array  # (B, H, T, d_h)
    k: Array  # (B, H, T, d_h)
    v: Array  # (B, H, T, d_h)
    a: Array  # (B, H, T, T) the attention weights
    z: Array  # (B, H, T, d_h) the weighted values


def _check_ids(params: ToyParams, ids: ArrayLike) -> NDArray[np.int64]:
    if not isinstance(params, ToyParams):
        raise ValueError(f"params must be ToyParams, got {type(params).__name__}")
    ids = _tokens("ids", ids, params.embed.shape[0])
    if ids.shape[1] > params.pos.shape[0]:
        raise ValueError(
            f"ids has T = {ids.shape[1]} tokens, more than the model's T_max = "
            f"{params.pos.shape[0]} positions (pos {params.pos.shape})"
        )
    return ids


def _attention_layer(params: ToyParams, layer: int, x: Array) -> tuple[Array, _Layer]:
    """One layer's heads: Σ_h softmax(causal(Q_h K_hᵀ / √d_h)) V_h w_o[l, h]."""
    t, d_h = x.shape[1], params.w_q.shape[-1]
    xh = x[:, None]  # (B, 1, T, D): the same stream for every head
    # a) project: one query, key and value per head and token
    q = xh @ params.w_q[layer]  # (B, H, T, d_h)
    k = xh @ params.w_k[layer]  # (B, H, T, d_h)
    v = xh @ params.w_v[layer]  # (B, H, T, d_h)
    # b) scores, scaled; a query sees only itself and the keys before it
    s = q @ k.swapaxes(-1, -2) / math.sqrt(d_h)  # (B, H, T, T)
    s = np.where(causal_mask(t), s, -np.inf)  # (B, H, T, T)
    # c) softmax over the keys: each row of weights sums to 1
    a = softmax(s, axis=-1)  # (B, H, T, T)
    # d) weighted sum of the values, then each head's output projection, summed over heads
    z = a @ v  # (B, H, T, d_h)
    out = (z @ params.w_o[layer]).sum(axis=1)  # (B, H, T, D) -> (B, T, D)
    return out, _Layer(x=x, q=q, k=k, v=v, a=a, z=z)


def _forward(params: ToyParams, ids: NDArray[np.int64]) -> tuple[Array, Array, list[_Layer]]:
    """The forward pass: logits, the last residual stream and each layer's saved arrays."""
    t = ids.shape[1]
    # 1) embed: each token's vector plus its position's
    x = params.embed[ids] + params.pos[:t]  # (B, T, D)
    # 2) each layer adds its heads' outputs to the residual stream
    saved = []
    for layer in range(params.w_q.shape[0]):
        out, cache = _attention_layer(params, layer, x)  # (B, T, D)
        x = x + out  # (B, T, D)
        saved.append(cache)
    # 3) unembed: a score per token of the vocabulary
    logits = x @ params.unembed  # (B, T, V)
    return logits, x, saved


def forward(params: ToyParams, ids: ArrayLike) -> tuple[Array, Array]:
    """``logits`` (B, T, V) and ``attentions`` (L, B, H, T, T) of the model on ``ids`` (B, T).

    ``attentions[l, b, h, i, j]`` is the weight query i of sequence b puts on key j in head
    h of layer l (0 for j > i; each row sums to 1).
    """
    ids = _check_ids(params, ids)
    logits, _, saved = _forward(params, ids)
    return logits, np.stack([c.a for c in saved])  # (B, T, V), (L, B, H, T, T)
