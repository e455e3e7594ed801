"""The toy transformers: their parameters (:class:`ToyParams`, :data:`SHAPES`, decoder-only;
:class:`EncDecParams`, :data:`ENCDEC_SHAPES`, encoder-decoder) and the forward pass
(:func:`forward`), attention-only, in row layout as the engine.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import ClassVar

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

_HEADS = {"q": ("L", "H", "D", "d_h"), "k": ("L", "H", "D", "d_h"),
          "v": ("L", "H", "D", "d_h"), "o": ("L", "H", "d_h", "D")}  # fmt: skip
#: Each weight's shape in symbols, in the order of EncDecParams' fields: the encoder's
#: self-attention (enc_), the decoder's causal self-attention (dec_), its cross-attention
#: (cross_: queries from the decoder, keys and values from the encoder's last stream).
ENCDEC_SHAPES: dict[str, tuple[str, ...]] = {
    "embed": ("V", "D"),
    "pos_src": ("S_max", "D"),
    "pos_tgt": ("T_max", "D"),
    **{f"{part}_{w}": shape for part in ("enc", "dec", "cross") for w, shape in _HEADS.items()},
    "unembed": ("D", "V"),
}


class _Weights:
    """What both kinds of parameters share: the checks on construction, the sizes, copies.
    A subclass is a dataclass whose fields are its ``shapes``' keys, in that order."""

    shapes: ClassVar[dict[str, tuple[str, ...]]]

    def __post_init__(self) -> None:
        kind = type(self).__name__
        sizes: dict[str, tuple[int, str]] = {}  # symbol -> (size, the weight it came from)
        for name, symbols in self.shapes.items():
            arr = np.asarray(getattr(self, name))
            want = f"({', '.join(symbols)})"
            if arr.dtype.kind not in "iuf":
                raise ValueError(f"{kind}.{name} must be numeric, got dtype {arr.dtype}")
            if arr.ndim != len(symbols) or 0 in arr.shape:
                raise ValueError(f"{kind}.{name} must be {want}, got shape {arr.shape}")
            for symbol, size in zip(symbols, arr.shape, strict=True):
                known, where = sizes.setdefault(symbol, (size, name))
                if size != known:
                    raise ValueError(
                        f"{kind}.{name} must be {want}, got shape {arr.shape}: its "
                        f"{symbol} is {size} but {where} has {symbol} = {known}"
                    )
            arr = np.array(arr, dtype=np.float64)  # a float64 copy
            if not np.isfinite(arr).all():
                raise ValueError(f"{kind}.{name} (shape {arr.shape}) contains NaN or inf")
            setattr(self, name, arr)

    @property
    def sizes(self) -> dict[str, int]:
        """Each symbol's size: V, D, T_max, L, H, d_h (and S_max for EncDecParams)."""
        out = {}
        for name, symbols in self.shapes.items():
            out.update(zip(symbols, getattr(self, name).shape, strict=True))
        return out

    def arrays(self) -> dict[str, Array]:
        """name -> array, in the order of the fields."""
        return {name: getattr(self, name) for name in self.shapes}

    def zeros_like(self):
        return type(self)(**{k: np.zeros_like(a) for k, a in self.arrays().items()})

    def copy(self):
        return type(self)(**self.arrays())  # __post_init__ copies

    def heads(self, prefix: str, layer: int) -> tuple[Array, Array, Array, Array]:
        """One layer's (w_q, w_k, w_v, w_o) of the attention whose fields start ``prefix``."""
        return tuple(getattr(self, f"{prefix}{w}")[layer] for w in "qkvo")  # type: ignore[return-value]


def _normal(rng: np.random.Generator, shape: tuple[int, ...], fan_in: int) -> Array:
    return rng.standard_normal(shape) / math.sqrt(fan_in)


@dataclass
class ToyParams(_Weights):
    """The weights of a toy transformer, float64 arrays (row layout: ``Q = x @ w_q``).

    embed (V, D), pos (T_max, D), w_q, w_k, w_v (L, H, D, d_h), w_o (L, H, d_h, D),
    unembed (D, V) (:data:`SHAPES`). On construction the arrays are copied as float64 and
    checked: the right number of axes, every size >= 1, each symbol one size throughout.
    """

    shapes: ClassVar[dict[str, tuple[str, ...]]] = SHAPES
    embed: Array  # (V, D) one row per token
    pos: Array  # (T_max, D) one row per position
    w_q: Array  # (L, H, D, d_h)
    w_k: Array  # (L, H, D, d_h)
    w_v: Array  # (L, H, D, d_h)
    w_o: Array  # (L, H, d_h, D)
    unembed: Array  # (D, V)

    @classmethod
    def init(
        cls, rng: np.random.Generator, *, vocab: int, length: int, d_model: int,
        layers: int, heads: int, d_head: int,
    ) -> ToyParams:  # fmt: skip
        """Random weights: embeddings N(0, 1), projections N(0, 1/fan-in)."""
        v, t, d, n_l, h, d_h = vocab, length, d_model, layers, heads, d_head

        def normal(shape: tuple[int, ...], fan_in: int) -> Array:
            return _normal(rng, shape, fan_in)

        return cls(
            embed=normal((v, d), 1),  # (V, D)
            pos=normal((t, d), 1),  # (T_max, D)
            w_q=normal((n_l, h, d, d_h), d),  # (L, H, D, d_h)
            w_k=normal((n_l, h, d, d_h), d),  # (L, H, D, d_h)
            w_v=normal((n_l, h, d, d_h), d),  # (L, H, D, d_h)
            w_o=normal((n_l, h, d_h, d), h * d_h),  # (L, H, d_h, D)
            unembed=normal((d, v), d),  # (D, V)
        )


@dataclass
class EncDecParams(_Weights):
    """The weights of a toy encoder-decoder, float64 arrays (row layout, as ToyParams).

    embed (V, D) shared by source and target tokens, pos_src (S_max, D), pos_tgt (T_max, D),
    then per attention (``enc_``, ``dec_``, ``cross_``) q, k, v (L, H, D, d_h) and
    o (L, H, d_h, D), unembed (D, V) (:data:`ENCDEC_SHAPES`); L encoder layers and L decoder
    layers. Checked on construction as ToyParams.
    """

    shapes: ClassVar[dict[str, tuple[str, ...]]] = ENCDEC_SHAPES
    embed: Array  # (V, D) one row per token, source and target
    pos_src: Array  # (S_max, D) one row per source position
    pos_tgt: Array  # (T_max, D) one row per target position
    enc_q: Array  # (L, H, D, d_h) the encoder's self-attention
    enc_k: Array  # (L, H, D, d_h)
    enc_v: Array  # (L, H, D, d_h)
    enc_o: Array  # (L, H, d_h, D)
    dec_q: Array  # (L, H, D, d_h) the decoder's causal self-attention
    dec_k: Array  # (L, H, D, d_h)
    dec_v: Array  # (L, H, D, d_h)
    dec_o: Array  # (L, H, d_h, D)
    cross_q: Array  # (L, H, D, d_h) the decoder's cross-attention: queries from the decoder
    cross_k: Array  # (L, H, D, d_h) keys and values from the encoder's last stream
    cross_v: Array  # (L, H, D, d_h)
    cross_o: Array  # (L, H, d_h, D)
    unembed: Array  # (D, V)

    @classmethod
    def init(
        cls, rng: np.random.Generator, *, vocab: int, src_length: int, length: int,
        d_model: int, layers: int, heads: int, d_head: int,
    ) -> EncDecParams:  # fmt: skip
        """Random weights: embeddings N(0, 1), projections N(0, 1/fan-in)."""
        d, n_l, h, d_h = d_model, layers, heads, d_head
        arrays = {
            "embed": _normal(rng, (vocab, d), 1),  # (V, D)
            "pos_src": _normal(rng, (src_length, d), 1),  # (S_max, D)
            "pos_tgt": _normal(rng, (length, d), 1),  # (T_max, D)
        }
        for part in ("enc", "dec", "cross"):
            for w in "qkv":
                arrays[f"{part}_{w}"] = _normal(rng, (n_l, h, d, d_h), d)  # (L, H, D, d_h)
            arrays[f"{part}_o"] = _normal(rng, (n_l, h, d_h, d), h * d_h)  # (L, H, d_h, D)
        arrays["unembed"] = _normal(rng, (d, vocab), d)  # (D, V)
        return cls(**arrays)


# --------------------------------------------------------------------------- the model


@dataclass
class _Layer:
    """What one attention layer's backward pass needs from its forward pass."""

    x: Array  # (B, T, D) the residual stream the queries read
    c: Array  # (B, S, D) the stream the keys and values read (x itself in self-attention)
    q: Array  # (B, H, T, d_h)
    k: Array  # (B, H, S, d_h)
    v: Array  # (B, H, S, d_h)
    a: Array  # (B, H, T, S) the attention weights
    z: Array  # (B, H, T, d_h) the weighted values


def _check_ids(params: ToyParams, ids: ArrayLike) -> NDArray[np.int64]:
    if not isinstance(params, ToyParams):
        raise ValueError(
            f"params must be ToyParams, got {type(params).__name__} (or EncDecParams, with "
            "src and tgt)"
        )
    ids = _tokens("ids", ids, params.embed.shape[0])
    if ids.shape[1] > params.pos.shape[0]:
        raise ValueError(
            f"ids has T = {ids.shape[1]} tokens, more than the model's T_max = "
            f"{params.pos.shape[0]} positions (pos {params.pos.shape})"
        )
    return ids


def _check_pair(
    params: EncDecParams, src: ArrayLike, tgt: ArrayLike
) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
    """``src`` (B, S) and ``tgt`` (B, T) as int64 ids the model can read, or ValueError."""
    vocab = params.embed.shape[0]
    src, tgt = _tokens("src", src, vocab), _tokens("tgt", tgt, vocab)
    if src.shape[0] != tgt.shape[0]:
        raise ValueError(
            f"src and tgt must hold the same B sequences, got src {src.shape}, tgt {tgt.shape}"
        )
    for name, arr, pos, most in (("src", src, params.pos_src, "S_max"),
                                 ("tgt", tgt, params.pos_tgt, "T_max")):  # fmt: skip
        if arr.shape[1] > pos.shape[0]:
            raise ValueError(
                f"{name} has {arr.shape[1]} tokens, more than the model's {most} = "
                f"{pos.shape[0]} positions (shape {arr.shape})"
            )
    return src, tgt


def _attend(
    w: tuple[Array, Array, Array, Array], x: Array, c: Array, causal: bool
) -> tuple[Array, _Layer]:
    """One layer's heads: Σ_h softmax(Q_h K_hᵀ / √d_h) V_h w_o[h], with Q_h = x w_q[h] and
    K_h = c w_k[h], V_h = c w_v[h]: self-attention when ``c`` is ``x`` (``causal``: a query
    sees only itself and the keys before it), cross-attention when ``c`` is the encoder's."""
    w_q, w_k, w_v, w_o = w  # (H, D, d_h) x 3, (H, d_h, D)
    t, d_h = x.shape[1], w_q.shape[-1]
    xh, ch = x[:, None], c[:, None]  # (B, 1, T, D), (B, 1, S, D): the same for every head
    # a) project: one query per head and token of x, one key and value per token of c
    q = xh @ w_q  # (B, H, T, d_h)
    k = ch @ w_k  # (B, H, S, d_h)
    v = ch @ w_v  # (B, H, S, d_h)
    # b) scores, scaled; causal: a query sees only itself and the keys before it
    s = q @ k.swapaxes(-1, -2) / math.sqrt(d_h)  # (B, H, T, S)
    if causal:
        s = np.where(causal_mask(t), s, -np.inf)  # (B, H, T, T)
    # c) softmax over the keys: each row of weights sums to 1
    a = softmax(s, axis=-1)  # (B, H, T, S)
    # d) weighted sum of the values, then each head's output projection, summed over heads
    z = a @ v  # (B, H, T, d_h)
    out = (z @ w_o).sum(axis=1)  # (B, H, T, D) -> (B, T, D)
    return out, _Layer(x=x, c=c, q=q, k=k, v=v, a=a, z=z)


def _forward(params: ToyParams, ids: NDArray[np.int64]) -> tuple[Array, Array, list[_Layer]]:
    """The forward pass: logits, the last residual stream and each layer's saved arrays."""
    t = ids.shape[1]
    # 1) embed: each token's vector plus its position's
    x = params.embed[ids] + params.pos[:t]  # (B, T, D)
    # 2) each layer adds its heads' outputs to the residual stream
    saved = []
    for layer in range(params.w_q.shape[0]):
        out, cache = _attend(params.heads("w_", layer), x, x, causal=True)  # (B, T, D)
        x = x + out  # (B, T, D)
        saved.append(cache)
    # 3) unembed: a score per token of the vocabulary
    logits = x @ params.unembed  # (B, T, V)
    return logits, x, saved


@dataclass
class _EncDec:
    """What the encoder-decoder's backward pass needs from its forward pass."""

    memory: Array  # (B, S, D) the encoder's last stream: the cross-attention's keys, values
    y: Array  # (B, T, D) the decoder's last stream
    encoder: list[_Layer]  # L self-attention layers over the source
    decoder: list[_Layer]  # L causal self-attention layers over the target
    cross: list[_Layer]  # L cross-attention layers, target to source


def _forward_encdec(
    params: EncDecParams, src: NDArray[np.int64], tgt: NDArray[np.int64]
) -> tuple[Array, _EncDec]:
    """The encoder-decoder's forward pass: logits and each layer's saved arrays."""
    s, t, layers = src.shape[1], tgt.shape[1], params.enc_q.shape[0]
    # 1) embed the source: each token's vector plus its position's
    x = params.embed[src] + params.pos_src[:s]  # (B, S, D)
    # 2) each encoder layer: self-attention over the whole source (not causal)
    encoder = []
    for layer in range(layers):
        out, cache = _attend(params.heads("enc_", layer), x, x, causal=False)  # (B, S, D)
        x = x + out  # (B, S, D)
        encoder.append(cache)
    # 3) embed the decoder's input: the target so far (teacher-forced)
    y = params.embed[tgt] + params.pos_tgt[:t]  # (B, T, D)
    # 4) each decoder layer: causal self-attention, then cross-attention to the source
    decoder, cross = [], []
    for layer in range(layers):
        out, cache = _attend(params.heads("dec_", layer), y, y, causal=True)  # (B, T, D)
        y = y + out  # (B, T, D)
        decoder.append(cache)
        out, cache = _attend(params.heads("cross_", layer), y, x, causal=False)  # (B, T, D)
        y = y + out  # (B, T, D)
        cross.append(cache)
    # 5) unembed: a score per token of the vocabulary
    logits = y @ params.unembed  # (B, T, V)
    return logits, _EncDec(memory=x, y=y, encoder=encoder, decoder=decoder, cross=cross)


def _inputs(what: str, params: object, args: tuple, named: dict, names: tuple[str, ...]):
    """``args`` then ``named`` as the arrays ``names``, in order, or ValueError."""
    given = dict(zip(names, args, strict=False))
    unknown = set(named) - set(names[len(args) :])
    if len(args) > len(names) or unknown or len(given) + len(named) != len(names):
        came = f"{len(args)} array(s)" + (f" and {', '.join(sorted(named))}" if named else "")
        raise ValueError(f"{what} of {type(params).__name__} takes {', '.join(names)}, got {came}")
    return tuple({**given, **named}[n] for n in names)


def forward(params: ToyParams | EncDecParams, *tokens: ArrayLike, **named: ArrayLike):
    """The model on its tokens: ``forward(params, ids)`` for ToyParams (decoder-only),
    ``forward(params, src, tgt)`` for EncDecParams (encoder-decoder).

    Decoder-only: ``logits`` (B, T, V) and ``attentions`` (L, B, H, T, T) of the model on
    ``ids`` (B, T); ``attentions[l, b, h, i, j]`` is the weight query i of sequence b puts
    on key j in head h of layer l (0 for j > i; each row sums to 1).

    Encoder-decoder: ``logits`` (B, T, V) of the next target token at each position of
    ``tgt`` (B, T), reading ``src`` (B, S), and ``attentions`` a dict: ``"encoder"``
    (L, B, H, S, S), ``"decoder"`` (L, B, H, T, T) causal, ``"cross"`` (L, B, H, T, S)
    (target position i's weight on source position j).
    """
    if isinstance(params, EncDecParams):
        src, tgt = _check_pair(params, *_inputs("forward", params, tokens, named, ("src", "tgt")))
        logits, saved = _forward_encdec(params, src, tgt)
        return logits, {
            "encoder": np.stack([c.a for c in saved.encoder]),  # (L, B, H, S, S)
            "decoder": np.stack([c.a for c in saved.decoder]),  # (L, B, H, T, T)
            "cross": np.stack([c.a for c in saved.cross]),  # (L, B, H, T, S)
        }
    (ids,) = _inputs("forward", params, tokens, named, ("ids",))
    ids = _check_ids(params, ids)
    logits, _, saved = _forward(params, ids)
    return logits, np.stack([c.a for c in saved])  # (B, T, V), (L, B, H, T, T)
