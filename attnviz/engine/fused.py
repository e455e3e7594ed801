"""The engine's fast path: steps 3-7 of ``attnviz/engine/core.py`` fused.

``engine.attention`` computes softmax(Q Kᵀ · scale, masked) V as written; :func:`attend`
computes the same numbers to rounding (``tests/engine/test_fused_properties.py`` bounds the
difference) with fewer passes over N x N arrays: one N x N array per head instead of two
or three, the scores exponentiated in place into the weights, the scale applied to Q
rather than to the scores, the values and a column of ones in one matmul (the weighted
sums and the row sums together), no shift by the row maximum unless a row needs it.
The scores are computed again only when read (:class:`DeferredScores`,
:class:`DeferredField`), so a result that is only drawn does not keep an extra N x N
array per head. This is the path the engine runs by default (``engine.FUSED``);
``fused=False`` runs the formula as written. NumPy, and of attnviz only ``fast_exp`` (the
exponentials, vectorised where numba is installed): the engine imports it.
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import NDArray

from attnviz.engine.fast_exp import exp_inplace, softmax_rows_inplace

__all__ = ["DeferredField", "DeferredScores", "attend"]

Array = NDArray[np.floating]

#: Row sums of the unshifted exp(scores) accepted without a shift by the row maximum, per
#: itemsize: within e^±600 (float64) and e^±60 (float32) nothing overflowed and nothing
#: that matters underflowed, so the unshifted softmax is as accurate as the shifted one.
_EXP_SAFE = {8: 600.0, 4: 60.0}
_SAFE_LO, _SAFE_HI = math.exp(-_EXP_SAFE[8]), math.exp(_EXP_SAFE[8])  # float64's range
#: Scores (entries of Q Kᵀ, every head) up to which Kᵀ is copied contiguous first: OpenBLAS
#: multiplies small heads faster by a contiguous Kᵀ (8 heads of 64 x 8 x 64: 8.8 against
#: 17.0 us, the copy ~2.5; up to N = 128 a gain), large ones as fast by the strided view
#: (docs/benchmarks.md, issue 46).
_KT_COPY_UP_TO = 1 << 17


class DeferredScores:
    """The recipe of the scores, S = (q f) kᵀ, computed on first access (picklable).

    qs (..., N, d_k) the scaled queries; kt (..., d_k, M) the keys transposed (a view).
    """

    __slots__ = ("kt", "qs")

    def __init__(self, qs: Array, kt: Array) -> None:
        self.qs, self.kt = qs, kt

    def compute(self) -> Array:
        return np.matmul(self.qs, self.kt)  # (..., N, M)


class DeferredField:
    """A dataclass field whose value may be a :class:`DeferredScores`, computed (once) on
    first access. The field stays a field: ``dataclasses.fields``, the constructor,
    ``replace``, pickling (``st.cache_data``) and ``repr`` all work as for a plain one."""

    def __set_name__(self, owner: type, name: str) -> None:
        self._key = f"_{name}_value"

    def __get__(self, obj: object, objtype: type | None = None) -> Array:
        if obj is None:  # no class-level default: the field is required
            raise AttributeError(self._key)
        value = obj.__dict__[self._key]
        if isinstance(value, DeferredScores):
            value = value.compute()
            obj.__dict__[self._key] = value
        return value

    def __set__(self, obj: object, value: object) -> None:
        obj.__dict__[self._key] = value


def _values_and_ones(v: Array) -> Array:
    """[v | 1]: the values and a column of ones (for the row sums), laid out for the
    faster matmul orientation of the dtype (measured with OpenBLAS): (..., d_v + 1, M),
    transposed, for float64; (..., M, d_v + 1) otherwise."""
    dv, m = v.shape[-1], v.shape[-2]
    if v.dtype.itemsize == 8:
        v1t = np.empty((*v.shape[:-2], dv + 1, m), v.dtype)  # (..., d_v + 1, M)
        v1t[..., :dv, :] = v.swapaxes(-1, -2)
        v1t[..., dv, :] = 1
        return v1t
    v1 = np.empty((*v.shape[:-2], m, dv + 1), v.dtype)  # (..., M, d_v + 1)
    v1[..., :dv] = v
    v1[..., dv] = 1
    return v1


def _times_values(w: Array, v1: Array) -> Array:
    """w [v | 1]: (..., N, M) -> (..., N, d_v + 1), the last column holding the row sums
    of w. float64 computes it as ([v | 1]ᵀ wᵀ)ᵀ, the orientation BLAS handles faster."""
    if w.dtype.itemsize == 8:
        return np.matmul(v1, w.swapaxes(-1, -2)).swapaxes(-1, -2)  # (..., N, d_v + 1)
    return np.matmul(w, v1)  # (..., N, d_v + 1)


def _rows_at_risk(o1: Array, notmask: NDArray[np.bool_] | None, shape: tuple) -> Array | None:
    """None if every row's unshifted softmax is safe, else a boolean (..., N) of the rows
    whose sum left e^±_EXP_SAFE or whose outputs are not finite (fully masked rows, sum 0,
    are fine)."""
    sums = o1[..., -1]  # (..., N)
    limit = _EXP_SAFE.get(o1.dtype.itemsize, 0.0)
    lo, hi = math.exp(-limit), math.exp(limit)
    # fast: every row fine (three reductions, no temporaries)
    low, high = np.minimum.reduce(sums, axis=None), np.maximum.reduce(sums, axis=None)
    if lo <= low and high <= hi and math.isfinite(np.add.reduce(o1, axis=None)):
        return None
    ok = (sums >= lo) & (sums <= hi) & np.isfinite(o1).all(axis=-1)  # (..., N)
    if notmask is not None:
        ok |= np.broadcast_to(notmask, shape).all(axis=-1)
    return None if ok.all() else ~ok


def _stable_softmax(deferred: DeferredScores, notmask: NDArray[np.bool_] | None) -> Array:
    """softmax(S) over the keys, shifted by the row maximum, masked entries 0: the textbook
    stable softmax (normalised before it meets the values, so huge values cannot overflow
    the weighted sums)."""
    ws = deferred.compute()  # (..., N, M)
    if notmask is not None:
        np.copyto(ws, ws.dtype.type(-np.inf), where=notmask)
    mx = np.max(ws, axis=-1, keepdims=True)  # (..., N, 1)
    mx[np.isneginf(mx)] = 0  # fully masked rows stay -inf and become zeros
    ws -= mx
    exp_inplace(ws)  # as engine.softmax: exp, one reciprocal per row, one product per entry
    s = np.sum(ws, axis=-1, keepdims=True)  # (..., N, 1)
    s[s == 0] = 1  # fully masked rows: all zeros, kept so
    np.reciprocal(s, out=s)
    ws *= s
    return ws  # (..., N, M)


def _attend_rows(
    deferred: DeferredScores, v: Array, notmask: NDArray[np.bool_] | None
) -> tuple[Array, Array] | None:
    """Steps b-d for float64 where a vectorised exp runs
    (:func:`attnviz.engine.fast_exp.softmax_rows_inplace`: NumPy's on AVX-512, else numba's): each
    row of the scores exponentiated, summed and divided by its sum while it is in cache
    (rows in parallel), masked entries -inf first (so exactly 0); the rows whose sum left
    e^±600 (or fully masked) get the shifted softmax, as in :func:`attend`. Then the
    outputs, the normalised weights times the values. None where the kernel cannot run."""
    if deferred.qs.dtype != np.float64:
        return None
    with np.errstate(over="ignore", under="ignore", invalid="ignore", divide="ignore"):
        w = deferred.compute()  # (..., N, M), becomes the weights
        if notmask is not None:
            np.copyto(w, -np.inf, where=notmask)
        ok = softmax_rows_inplace(w, _SAFE_LO, _SAFE_HI)  # True: every row done
        if ok is None:
            return None
        if ok is not True:  # rows at risk: the stable softmax (fully masked rows: zeros)
            bad = ~ok
            w[bad] = _stable_softmax(deferred, notmask)[bad]
        # (vᵀ wᵀ)ᵀ: BLAS's faster order for float64, on the strided views (no copies)
        output = np.matmul(v.swapaxes(-1, -2), w.swapaxes(-1, -2)).swapaxes(-1, -2)
    return w, output  # (..., N, M), (..., N, d_v) a view of (..., d_v, N)


def attend(
    q: Array, k: Array, v: Array, factor: float, mask: NDArray[np.bool_] | None
) -> tuple[DeferredScores, Array, Array]:
    """Steps 3-7 fused: ``engine.attention``'s numbers to rounding, on validated arrays.

    q (..., N, d_k), k (..., M, d_k), v (..., M, d_v) of one float dtype, leading axes
    broadcast; ``factor`` a Python float (so float32 stays float32); mask broadcastable to
    (..., N, M) or None. Returns (the scores as a recipe computed when read, weights
    (..., N, M), output (..., N, d_v)). One full-size (..., N, M) array is allocated: the
    scores are exponentiated in place into the weights (and recomputed on demand).

    The softmax skips the shift by the row maximum and checks afterwards, per row, that
    the row sum stayed within e^±_EXP_SAFE (no overflow, no harmful underflow); rows that
    did not are recomputed with the shift. Each row's path depends on that row alone, so
    a causal row never depends on later tokens, not even by rounding.
    """
    # a. scale the queries, not the N x M scores: (q f) kᵀ = (q kᵀ) f, N*d_k products;
    #    kᵀ a view (BLAS reads a head's block of K's columns as it lies, transposed), but
    #    copied where the scores are few: there the copy costs less than it saves
    qs = np.multiply(q, factor, out=np.empty(q.shape, q.dtype))  # (..., N, d_k)
    kt = k.swapaxes(-1, -2)  # kᵀ (..., d_k, M)
    if qs.size // qs.shape[-1] * kt.shape[-1] <= _KT_COPY_UP_TO:
        kt = np.ascontiguousarray(kt)
    deferred = DeferredScores(qs, kt)
    notmask = None if mask is None else ~np.asarray(mask)  # (..., N, M) broadcastable
    done = _attend_rows(deferred, v, notmask)  # float64 with numba: one pass per row
    if done is not None:
        return (deferred, *done)
    v1 = _values_and_ones(v.astype(qs.dtype, copy=False))  # [v | 1]
    with np.errstate(over="ignore", under="ignore", invalid="ignore"):
        # b. scores S = (q f) kᵀ (one BLAS matmul per head), exp in place: the numerators
        w = deferred.compute()  # (..., N, M), becomes the weights
        exp_inplace(w)  # np.exp, vectorised (attnviz/engine/fast_exp.py)
        if notmask is not None:
            np.copyto(w, 0, where=notmask)  # masked weights exactly 0
        # c. unnormalised outputs and the row sums in one matmul: w [v | 1]
        o1 = _times_values(w, v1)  # (..., N, d_v + 1)
        bad = _rows_at_risk(o1, notmask, w.shape)  # None or (..., N)
    if bad is not None:
        # c'. rows at risk: the stable softmax (row sums 1, so step d keeps them)
        ws = _stable_softmax(deferred, notmask)  # (..., N, M)
        w[bad] = ws[bad]
        o1[bad] = _times_values(ws, v1)[bad]
    sums = o1[..., -1:]  # (..., N, 1)
    sums[sums == 0] = 1  # fully masked rows: weights and outputs stay 0
    # d. normalise: softmax weights (rows sum to 1) and the weighted sums of the values.
    #    Divided, not multiplied by 1/sum: each weight is rounded once, so a row with one
    #    key allowed (a causal mask's first row) gets exactly 1, as the shifted softmax's
    w /= sums  # (..., N, M)
    output = np.divide(o1[..., :-1], sums)  # (..., N, d_v)
    return deferred, w, output
