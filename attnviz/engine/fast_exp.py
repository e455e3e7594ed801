"""exp of a float64 array, in place and vectorised: the fused path's softmax numerators.

NumPy's float64 ``exp`` has a SIMD loop only on AVX-512 machines (:data:`NUMPY_SIMD`);
elsewhere (AVX2 laptops) it calls libm once per entry: 5.6-8.9 ns an entry, against
PyTorch's 2.6-3.0 (docs/engine.md). The exponentials were most of the fused path's time
at N = 512, and the reason it was slower than ``torch.nn.MultiheadAttention``.

Where NumPy's loop is vectorised, it is the faster one on large arrays and runs there
(from :data:`_NUMPY_FROM` entries): 1.1-1.4 ns an entry on this project's AVX-512 machine,
where numba's loop below took up to 4 on 8 x 1024 x 1024 scores (CPU time,
docs/benchmarks.md, issue 46); :func:`softmax_rows_inplace` then runs NumPy's exp, row sums
and division by blocks of rows that stay in the core's cache, on the machine's cores. On
small arrays there, NumPy's exp runs too, then a compiled pass that normalises each row
(:func:`_normalise_row`: the row sum, a product by its reciprocal).

Elsewhere :func:`exp_inplace` runs one loop compiled by numba (cached on disk), which the
compiler turns into AVX2 code. Each entry is computed on its own, the way libm builds exp:

    exp(x) = 2^k · exp(r),   k = round(x / ln 2),   r = x - k ln 2 in [-0.35, 0.35]

with ln 2 in two parts (fdlibm's: k · LN2_HI is exact), exp(r) by its Taylor series to
degree 13 (the truncation is below 5e-18) and 2^k written into the exponent bits, as two
factors 2^(k//2) · 2^(k - k//2) so that results near overflow and in the subnormals come
out as libm's too (x is first clipped to [-746, 710], where exp is 0 and inf; NaN stays
NaN). No branch: the compiler vectorises the loop, and an entry's value depends on that
entry alone. Each multiply and the add after it are one fused multiply-add (numba's
``fastmath={"contract"}`` and no other fast-math flag: one rounding instead of two), which
halves the instructions of Horner's rule: 1.6-1.8 ns an entry on AVX2, against 2.9-3.2
without it and ``np.exp``'s 5.3-5.6. Within 1 ulp of libm's result everywhere, equal to
it for about 94 % of the entries (``tests/engine/test_fast_exp.py``).

Without numba (it is in requirements.txt; the library itself needs only NumPy), for other
dtypes (NumPy's float32 ``exp`` is already vectorised) and for non-contiguous arrays:
``np.exp``. :data:`ACCELERATED` says whether numba's loop can run.
"""

from __future__ import annotations

import importlib.util
import math
import os
import threading
from concurrent.futures import ThreadPoolExecutor

import numpy as np

__all__ = [
    "ACCELERATED",
    "NUMPY_SIMD",
    "add_rows_inplace",
    "exp_inplace",
    "softmax_rows_inplace",
    "warm",
]

LN2_HI = 6.93147180369123816490e-01  # fdlibm: ln 2 to 32 bits, so k · LN2_HI is exact
LN2_LO = 1.90821492927058770002e-10  # fdlibm: the rest of ln 2
LOG2E = 1.0 / math.log(2.0)
LOW, HIGH = -746.0, 710.0  # exp is 0 below LOW (under half the least subnormal), inf above HIGH
#: x · LOG2E + SHIFT rounds to the nearest integer k and holds it in its low bits
SHIFT = 1.5 * 2.0**52
_SHIFT_BITS = int(np.array(SHIFT).view(np.int64))
_HORNER = tuple(1.0 / math.factorial(i) for i in range(13, -1, -1))  # 1/13! .. 1/0!


def _exp_loop(a):  # pragma: no cover - compiled by numba, tested through it
    """exp of the 1-d contiguous float64 array ``a``, in place, entry by entry."""
    bits = a.view(np.int64)  # 2^k is made in the exponent bits, written through this view
    for i in range(a.size):
        x = a[i]
        x = LOW if x < LOW else (HIGH if x > HIGH else x)  # NaN stays NaN
        t = x * LOG2E + SHIFT  # k in the low bits
        kf = t - SHIFT  # k, exactly
        r = (x - kf * LN2_HI) - kf * LN2_LO  # x - k ln 2, in [-0.35, 0.35]
        p = _HORNER[0]
        for c in _HORNER[1:]:  # unrolled by the compiler: the same bits as written out
            p = c + r * p  # exp(r), Horner's rule from 1/13! down to 1/0!
        a[i] = t
        k = bits[i] - _SHIFT_BITS
        half = k >> 1
        bits[i] = (half + 1023) << 52  # 2^(k//2)
        y = p * a[i]  # exact: a normal number times a power of two
        bits[i] = (k - half + 1023) << 52  # 2^(k - k//2)
        a[i] = y * a[i]  # the one rounding (to 0 or inf where exp underflows, overflows)


#: the exp loop as the row loop calls it: replaced by its compiled, inlined form before the
#: row loop is compiled (:func:`_compile_softmax`)
_exp_row = _exp_loop


def _normalise_row(row, lo, hi):  # pragma: no cover - compiled by numba, inlined
    """One row of exponentials, in place: divided by its sum when that sum lies in [lo, hi]
    (returns True), else left as it is (False). The sum runs in eight interleaved partial
    sums (a fixed order: the same bits on every machine, eight adds in flight instead of
    one). Each entry is multiplied by the reciprocal of the sum (a product: the division,
    ~2 cycles a float64 even on AVX-512, was a fifth of the call at N = 64), which differs
    from the division by at most an ulp; an entry equal to the whole sum (a row with one
    key allowed, as a causal mask's first row) is set to 1, what the division gives, since
    x · (1/x) is 1 - 2^-53 for some x."""
    m = row.shape[0]
    s0 = s1 = s2 = s3 = s4 = s5 = s6 = s7 = 0.0
    j = 0
    while j + 8 <= m:
        s0 += row[j]
        s1 += row[j + 1]
        s2 += row[j + 2]
        s3 += row[j + 3]
        s4 += row[j + 4]
        s5 += row[j + 5]
        s6 += row[j + 6]
        s7 += row[j + 7]
        j += 8
    while j < m:
        s0 += row[j]
        j += 1
    s = ((s0 + s4) + (s1 + s5)) + ((s2 + s6) + (s3 + s7))
    if not lo <= s <= hi:  # also NaN
        return False
    r = 1.0 / s
    for k in range(m):
        x = row[k]
        row[k] = 1.0 if x == s else x * r  # a select, not a branch: vectorised
    return True


#: the row normalisation as the row loops call it: replaced by its compiled, inlined form
#: before they are compiled (:func:`_compile_softmax`)
_norm_row = _normalise_row


def _softmax_loop(a, lo, hi, ok, exp_done):  # pragma: no cover - compiled by numba
    """Each row of the 2-d contiguous float64 array ``a``, in place: exp of its entries
    (:func:`_exp_loop`, compiled inline, vectorised; skipped when ``exp_done``, NumPy's
    exp having run), then divided by its sum when that sum lies in [lo, hi]
    (:func:`_normalise_row`, ``ok[i]`` True); a row outside is left as its exponentials
    (``ok[i]`` False, for the caller's shifted softmax); returns the number of those. A
    row's values depend on that row alone (:func:`softmax_rows_inplace` hands blocks of
    rows to the machine's cores)."""
    m = a.shape[1]
    short = m < 256  # short rows: one exp loop over the block (a loop per row costs more)
    if short and not exp_done:
        _exp_row(a.reshape(-1))
    left = 0
    for i in range(a.shape[0]):
        row = a[i]
        if not (short or exp_done):
            _exp_row(row)  # while the row is in cache
        good = _norm_row(row, lo, hi)
        ok[i] = good
        left += not good
    return left


_lock = threading.Lock()
_compiled = None  # the compiled _exp_loop; False once compiling failed
_softmax = None  # the compiled _softmax_loop; False once compiling failed
_bias = None  # the compiled _bias_loop; False once compiling failed


def _compile():
    """numba's compiled loop (from its disk cache after the first time), or None."""
    global _compiled  # noqa: PLW0603 - compiled once per process
    with _lock:
        if _compiled is None:
            try:
                _compiled = _jit()
                _compiled(np.zeros(1))  # compile (or load) now, not in a later call
            except Exception:  # noqa: BLE001 - no numba, or it cannot compile here: NumPy
                _compiled = False
    return _compiled or None


def _jit():
    """The loop compiled: cached on disk where a cache directory is writable."""

    # contract: a multiply and the add that follows become one fused multiply-add (one
    # rounding instead of two): half the instructions of Horner's rule, and closer to libm
    opts = {"nogil": True, "error_model": "numpy", "boundscheck": False, "fastmath": {"contract"}}
    return _cached_njit(_exp_loop, **opts)


def _cached_njit(fn, **opts):
    """``fn`` compiled by numba, cached on disk where a cache directory is writable."""
    import numba

    try:
        return numba.njit(cache=True, **opts)(fn)
    except RuntimeError:  # no writable cache directory: compiled in memory, each process
        return numba.njit(**opts)(fn)


def _compile_softmax():
    global _softmax, _exp_row, _norm_row  # noqa: PLW0603 - compiled once per process
    with _lock:
        if _softmax is None:
            try:
                import numba

                opts = {"nogil": True, "error_model": "numpy", "boundscheck": False,
                        "fastmath": {"contract"}}  # fmt: skip
                # the exp loop and the row normalisation, inlined into the row loop
                _exp_row = numba.njit(inline="always", **opts)(_exp_loop)
                _norm_row = numba.njit(inline="always", **opts)(_normalise_row)
                _softmax = _cached_njit(_softmax_loop, **opts)
                _softmax(np.zeros((1, 1)), 0.0, 2.0, np.zeros(1, np.bool_), False)  # compiled now
            except Exception:  # noqa: BLE001 - no numba, or it cannot compile here
                _softmax = False
    return _softmax or None


def _numpy_rows(rows: np.ndarray, lo: float, hi: float, ok: np.ndarray) -> int:
    """:func:`_softmax_loop` with NumPy's vectorised exp (where :data:`NUMPY_SIMD`): block
    by block of rows (:data:`_BLOCK` bytes, kept in the core's cache between the three
    passes), exp, the row sums (NumPy's pairwise sum: a fixed order per row) and the
    division by them where they lie in [lo, hi]; a row outside is left as its exponentials
    and marked False in ``ok``; returns the number of those. The caller holds the
    floating-point error state."""
    step = max(1, _BLOCK // max(1, rows.shape[1] * rows.itemsize))
    left = 0
    for b in range(0, rows.shape[0], step):
        block = rows[b : b + step]  # (B, M)
        np.exp(block, out=block)
        s = np.add.reduce(block, axis=1, keepdims=True)  # (B, 1)
        if not (lo <= s.min() and s.max() <= hi):  # a NaN fails both
            bad = ~((s >= lo) & (s <= hi))  # (B, 1): left as exponentials
            ok[b : b + step] = ~bad[:, 0]
            s[bad] = 1
            left += int(np.count_nonzero(bad))
        np.divide(block, s, out=block)  # divided: each weight rounded once
    return left


def _numba_rows(rows: np.ndarray, lo: float, hi: float, ok: np.ndarray) -> int:
    """:func:`_softmax_loop` compiled: numba's exp and the row normalisation."""
    return _softmax(rows, lo, hi, ok, False)


def _numpy_exp_rows(rows: np.ndarray, lo: float, hi: float, ok: np.ndarray) -> int:
    """NumPy's vectorised exp (where :data:`NUMPY_SIMD`), then the compiled row
    normalisation (:func:`_normalise_row`): on small arrays, NumPy's row sums and division
    by short rows cost more than its exp saves, numba's pass over rows in cache does not
    (8 heads x 64 x 64: 19.5 + ~8 us against 45.6 for numba's loop; docs/benchmarks.md)."""
    np.exp(rows, out=rows)
    return _softmax(rows, lo, hi, ok, True)


def _quietly(kernel, rows: np.ndarray, lo: float, hi: float, ok: np.ndarray) -> int:
    """``kernel`` on a thread of the pool (NumPy's error state is per thread)."""
    with np.errstate(over="ignore", under="ignore", invalid="ignore", divide="ignore"):
        return kernel(rows, lo, hi, ok)


def _row_kernel(size: int):
    """The row softmax for ``size`` entries, or None where none runs here: NumPy's by
    blocks from :data:`_NUMPY_FROM` entries where its exp is vectorised (:data:`NUMPY_SIMD`),
    below that NumPy's exp and numba's normalisation, elsewhere numba's loop."""
    if NUMPY_SIMD and size >= _NUMPY_FROM:
        return _numpy_rows
    if not ACCELERATED or not (_compile_softmax() if _softmax is None else _softmax):
        return None
    return _numpy_exp_rows if NUMPY_SIMD else _numba_rows


def softmax_rows_inplace(a: np.ndarray, lo: float, hi: float) -> np.ndarray | bool | None:
    """Each row of ``a`` (..., M), float64, contiguous: exp in place and divided by its row
    sum where that sum lies in [lo, hi]. Returns True when every row was done (the usual
    case: no array to read), else a boolean (...) array, True for the rows done; None where
    it cannot run here (no vectorised exp, another dtype or layout): the caller then takes
    NumPy's way. The kernel: :func:`_row_kernel`.
    Floating-point warnings are the caller's (``np.errstate``) on its own thread."""
    if not (a.dtype == np.float64 and a.flags.c_contiguous and a.flags.writeable):
        return None
    kernel = _row_kernel(a.size)
    if kernel is None or a.size == 0:
        return None
    rows = a.reshape(-1, a.shape[-1])
    ok = np.ones(rows.shape[0], np.bool_)
    parts = min(_THREADS, max(1, a.size // _PER_THREAD), rows.shape[0])
    if parts == 1:
        left = kernel(rows, lo, hi, ok)
    else:  # blocks of rows on the machine's cores (the loop releases the GIL; each call
        # has its own rows, so sessions calling at once share nothing)
        cuts = np.linspace(0, rows.shape[0], parts + 1).astype(int)
        jobs = [
            _pool().submit(_quietly, kernel, rows[b:e], lo, hi, ok[b:e])
            for b, e in zip(cuts[:-1], cuts[1:], strict=True)
        ]
        left = sum(job.result() for job in jobs)
    return True if left == 0 else ok.reshape(a.shape[:-1])


#: Threads for the row softmax: the machine's cores (2 here, as BLAS uses), and entries
#: per thread below which one thread is faster than handing rows to another.
_THREADS = max(1, min(8, os.cpu_count() or 1))
_PER_THREAD = 1 << 16
#: Bytes of rows per block of NumPy's row softmax: within a core's L2 cache.
_BLOCK = 1 << 18
#: Entries from which NumPy's row sums and division by blocks (:func:`_numpy_rows`) run
#: where its exp is vectorised (:data:`NUMPY_SIMD`): on fewer (8 heads x 64 x 64: 82 against
#: 135 us with NumPy's exp, row sums and division, CPU time) a compiled pass is faster, from
#: 8 x 512 x 512 NumPy's (12.1-12.6 against 13.4-13.8 ms for numba's loop, 48 against 53 at
#: N = 1024; docs/benchmarks.md, issue 46).
_NUMPY_FROM = 1 << 17
_executor = None


def _pool() -> ThreadPoolExecutor:
    global _executor  # noqa: PLW0603 - one pool per process
    with _lock:
        if _executor is None:
            _executor = ThreadPoolExecutor(_THREADS, thread_name_prefix="attnviz-softmax")
    return _executor


def exp_inplace(a: np.ndarray) -> np.ndarray:
    """``np.exp(a, out=a)``, vectorised for contiguous float64 arrays (numba's loop where
    NumPy's is not vectorised or ``a`` is small, :data:`ACCELERATED`); returns ``a``."""
    if ACCELERATED and a.dtype == np.float64 and not (NUMPY_SIMD and a.size >= _NUMPY_FROM):
        kernel = _compile() if _compiled is None else _compiled  # False: could not compile
        flags = a.flags
        if kernel and flags.c_contiguous and flags.writeable:
            kernel(a.reshape(-1))
            return a
    return np.exp(a, out=a)


def _bias_loop(y, b):  # pragma: no cover - compiled by numba, tested through it
    """y (N, M) += b (M,), in place, entry by entry (the same bits as NumPy's ``y += b``);
    True if every entry of y is finite afterwards (an OR of flags, vectorised)."""
    bad = 0
    for i in range(y.shape[0]):
        for j in range(y.shape[1]):
            x = y[i, j] + b[j]
            y[i, j] = x
            bad |= not abs(x) < math.inf  # NaN and ±inf
    return bad == 0


def _compile_bias():
    global _bias  # noqa: PLW0603 - compiled once per process
    with _lock:
        if _bias is None:
            try:
                opts = {"nogil": True, "error_model": "numpy", "boundscheck": False}
                _bias = _cached_njit(_bias_loop, **opts)
                _bias(np.zeros((1, 1)), np.zeros(1))
            except Exception:  # noqa: BLE001 - no numba, or it cannot compile here
                _bias = False
    return _bias or None


def add_rows_inplace(y: np.ndarray, b: np.ndarray) -> bool:
    """``y += b``: a bias (M,) added to each row of y (N, M), in place; returns True if
    every entry of y is then finite, False if one may not be (NumPy's way: the sum of the
    entries is not finite, which an overflowing sum of finite entries also gives). For
    float64 with numba, one compiled pass (12,288 entries, N = 64: ~2.5 against NumPy's ~6
    us for the addition and the sum, its broadcast loop runs row by row)."""
    if (
        ACCELERATED
        and y.dtype == b.dtype == np.float64
        and y.ndim == 2
        and b.ndim == 1
        and y.flags.c_contiguous
        and y.flags.writeable
    ):
        kernel = _compile_bias() if _bias is None else _bias
        if kernel:
            return bool(kernel(y, b))
    y += b
    return bool(np.isfinite(np.add.reduce(y, axis=None)))


def warm() -> None:
    """Compile the loops now (or load them from numba's cache): the server starts this in
    a thread (``serve.py``), so that no first visitor waits for numba's import."""
    if ACCELERATED:
        _compile()
        _compile_softmax()
        _compile_bias()


def _available() -> bool:
    try:
        return importlib.util.find_spec("numba") is not None
    except (ImportError, ValueError):
        return False


def _numpy_simd() -> bool:
    """NumPy's float64 exp is vectorised on this CPU: NumPy dispatches its SIMD exp where
    the CPU has AVX-512F (``numpy/_core/src/umath/loops_exponent_log``)."""
    features = getattr(np._core._multiarray_umath, "__cpu_features__", {})  # NumPy's own
    return bool(features.get("AVX512F"))


#: True where NumPy's float64 exp has a SIMD loop (AVX-512): on large arrays faster than
#: numba's loop, so NumPy's runs there (:func:`exp_inplace`, :func:`softmax_rows_inplace`).
NUMPY_SIMD = _numpy_simd()
#: True where numba is installed: :func:`exp_inplace` compiles its loop on first use.
#: Tests set it to False to run ``np.exp``.
ACCELERATED = _available()
