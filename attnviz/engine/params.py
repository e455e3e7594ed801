"""The engine's parameters: :class:`AttentionParams`, the projection weights of one
attention layer in row layout, checked on construction, and seeded random ones in the
initialisations of the seed notebooks. ``attnviz.engine`` re-exports it
(``from attnviz.engine import AttentionParams`` works). Plain NumPy.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

import numpy as np
from numpy.typing import NDArray

from attnviz.engine.checks import PARAM_FIELDS, check_params

__all__ = ["AttentionParams", "Init"]

Array = NDArray[np.floating]
Init = Literal["normal", "uniform", "xavier"]
_FIELDS = PARAM_FIELDS  # w_q, w_k, w_v, b_q, b_k, b_v, w_o, b_o


@dataclass(frozen=True, eq=False)
class AttentionParams:
    """Projection weights in row layout: Q = x @ w_q + b_q, and so on.

    Shapes: w_q (D, Dk), w_k (D, Dk), w_v (D, Dv), b_q (Dk,), b_k (Dk,), b_v (Dv,),
    w_o (Dv, Dout), b_o (Dout,). Biases and the output projection are optional;
    without ``w_o`` the output of :func:`multi_head_attention` is the concatenation.
    """

    w_q: Array
    w_k: Array
    w_v: Array
    b_q: Array | None = None
    b_k: Array | None = None
    b_v: Array | None = None
    w_o: Array | None = None
    b_o: Array | None = None

    def __post_init__(self) -> None:
        # the fields as float arrays, finite, their shapes checked together (engine_checks.py)
        for name, a in zip(_FIELDS, check_params(self), strict=True):
            if a is not None:
                a.setflags(write=False)
            object.__setattr__(self, name, a)
        object.__setattr__(self, "_qkv", self._side_by_side())

    def _side_by_side(self) -> tuple[Array, Array | None] | None:
        """[w_q | w_k | w_v] and [b_q | b_k | b_v], copied once (as torch keeps
        ``in_proj_weight``); w_q, w_k, w_v and the biases become read-only views of these
        copies, so that nothing outside can change one without the other. None (nothing
        kept) when the dtypes differ."""
        arrays = (self.w_q, self.w_k, self.w_v, self.b_q, self.b_k, self.b_v)
        if any(a is not None and a.dtype != self.w_q.dtype for a in arrays):
            return None
        w, b = (None if a is None else _frozen(a) for a in _stack(self))
        edges = np.cumsum([0, self.d_k, self.d_k, self.d_v])  # column blocks: Q, K, V
        for i, name in enumerate(("q", "k", "v")):
            block = slice(edges[i], edges[i + 1])
            object.__setattr__(self, f"w_{name}", w[:, block])
            if getattr(self, f"b_{name}") is not None:
                object.__setattr__(self, f"b_{name}", b[block])
        return w, b

    def qkv(self) -> tuple[Array, Array | None]:
        """[w_q | w_k | w_v] (D, 2Dk + Dv) and [b_q | b_k | b_v] (zeros for a missing
        bias; None without any): Q, K and V from one matmul (``engine._project``)."""
        return self._qkv if self._qkv is not None else _stack(self)

    def __reduce__(self) -> tuple:
        """Pickled by its fields and rebuilt by the constructor, so that the views above
        are views again after unpickling (a pickled view is a copy of its own)."""
        return (type(self), tuple(getattr(self, f) for f in _FIELDS))

    @property
    def d_model(self) -> int:
        return int(self.w_q.shape[0])

    @property
    def d_k(self) -> int:
        return int(self.w_q.shape[1])

    @property
    def d_v(self) -> int:
        return int(self.w_v.shape[1])

    @property
    def d_out(self) -> int:
        return int(self.w_o.shape[1]) if self.w_o is not None else self.d_v

    def astype(self, dtype: np.dtype | type) -> AttentionParams:
        """The same parameters in another float dtype (for float32 runs)."""
        return AttentionParams(
            **{
                k: None if getattr(self, k) is None else getattr(self, k).astype(dtype)
                for k in _FIELDS
            }
        )

    @classmethod
    def random(
        cls,
        d_model: int,
        *,
        d_k: int | None = None,
        d_v: int | None = None,
        d_out: int | None = None,
        seed: int = 0,
        init: Init = "normal",
        bias: bool = True,
        out_proj: bool = True,
    ) -> AttentionParams:
        """Seeded random parameters.

        ``init``: "normal" draws N(0, 1) as the UDL notebooks do; "uniform" draws
        U[0, 1) as ``np.random.rand``/``torch.rand`` in the other notebooks; "xavier"
        draws U(-a, a) with a = sqrt(6 / (fan_in + fan_out)), biases
        U(-1/sqrt(fan_in), 1/sqrt(fan_in)) as ``nn.Linear``. Draw order: w_q, w_k, w_v,
        b_q, b_k, b_v, w_o, b_o (from ``np.random.default_rng(seed)``).
        Defaults: d_k = d_v = d_out = d_model.
        """
        if d_model < 1:
            raise ValueError(f"d_model must be >= 1, got {d_model}")
        d_k = d_model if d_k is None else d_k
        d_v = d_model if d_v is None else d_v
        d_out = d_model if d_out is None else d_out
        for name, val in (("d_k", d_k), ("d_v", d_v), ("d_out", d_out)):
            if val < 1:
                raise ValueError(f"{name} must be >= 1, got {val}")
        if init not in ("normal", "uniform", "xavier"):
            raise ValueError(f"init must be 'normal', 'uniform' or 'xavier', got {init!r}")
        rng = np.random.default_rng(seed)

        def weight(fan_in: int, fan_out: int) -> Array:
            if init == "normal":
                return rng.standard_normal((fan_in, fan_out))
            if init == "uniform":
                return rng.random((fan_in, fan_out))
            a = math.sqrt(6.0 / (fan_in + fan_out))
            return rng.uniform(-a, a, (fan_in, fan_out))

        def vec(fan_in: int, n: int) -> Array:
            if init == "normal":
                return rng.standard_normal(n)
            if init == "uniform":
                return rng.random(n)
            a = 1.0 / math.sqrt(fan_in)
            return rng.uniform(-a, a, n)

        w_q, w_k, w_v = weight(d_model, d_k), weight(d_model, d_k), weight(d_model, d_v)
        b_q = b_k = b_v = w_o = b_o = None
        if bias:
            b_q, b_k, b_v = vec(d_model, d_k), vec(d_model, d_k), vec(d_model, d_v)
        if out_proj:
            w_o = weight(d_v, d_out)
            if bias:
                b_o = vec(d_v, d_out)
        return cls(w_q, w_k, w_v, b_q, b_k, b_v, w_o, b_o)


def _stack(p: AttentionParams) -> tuple[Array, Array | None]:
    """p's Q, K, V weights side by side (D, 2Dk + Dv), and their biases (or None)."""
    ws, bs = (p.w_q, p.w_k, p.w_v), (p.b_q, p.b_k, p.b_v)
    w = np.concatenate(ws, axis=1)
    if all(b is None for b in bs):
        return w, None
    zeros = [np.zeros(a.shape[1], w.dtype) for a in ws]  # a missing bias adds zeros
    return w, np.concatenate([z if b is None else b for z, b in zip(zeros, bs, strict=True)])


def _frozen(a: Array) -> Array:
    """A read-only copy of ``a`` over an immutable buffer: neither it nor any view of it
    (nor its ``.base``) can be made writable again, as an array owning its memory could."""
    return np.frombuffer(a.tobytes(), a.dtype).reshape(a.shape)
