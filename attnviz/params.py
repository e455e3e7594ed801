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

from attnviz.engine_checks import as_float, check_params

__all__ = ["AttentionParams", "Init"]

Array = NDArray[np.floating]
Init = Literal["normal", "uniform", "xavier"]


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
        for name in ("w_q", "w_k", "w_v", "b_q", "b_k", "b_v", "w_o", "b_o"):
            a = getattr(self, name)
            if a is None:
                continue
            a = as_float(name, a)
            a.setflags(write=False)
            object.__setattr__(self, name, a)
        check_params(self)  # the shapes against each other (engine_checks.py)

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
                for k in ("w_q", "w_k", "w_v", "b_q", "b_k", "b_v", "w_o", "b_o")
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
