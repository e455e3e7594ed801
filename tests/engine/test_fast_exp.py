"""attnviz.engine.fast_exp: numba's vectorised exp against NumPy's (libm's), entry by entry;
the row softmax by NumPy's vectorised exp on large arrays where it has one (AVX-512), by
NumPy's exp and numba's normalisation on small ones there, by numba's loop elsewhere.
Numba's loop is tested on every machine (the fixture runs it)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from attnviz.engine import fast_exp, fused


def _ulps(ours: np.ndarray, ref: np.ndarray) -> np.ndarray:
    """|ours - ref| in units of the last place of ref (finite, nonzero ref only)."""
    keep = np.isfinite(ref) & (ref != 0)
    return np.abs(ours[keep] - ref[keep]) / np.spacing(ref[keep])


@pytest.fixture(autouse=True)
def numba_loop(monkeypatch):
    """numba's loop runs in these tests whatever their arrays' size, also where NumPy's exp
    is vectorised (AVX-512) and runs on large arrays (and on small ones before numba's
    normalisation)."""
    monkeypatch.setattr(fast_exp, "_NUMPY_FROM", 1 << 60)
    monkeypatch.setattr(fast_exp, "NUMPY_SIMD", False)


def _exp(x: np.ndarray) -> np.ndarray:
    out = x.copy()
    fast_exp.exp_inplace(out)
    return out


def test_numba_runs_here():
    """CI installs requirements.txt: the vectorised loop, not the fallback, is what runs."""
    assert fast_exp.ACCELERATED
    _exp(np.zeros(3))
    assert fast_exp._compiled, "numba is installed but the loop did not compile"


def test_the_faster_exp_is_the_one_that_runs(monkeypatch):
    """NumPy's exp on large float64 arrays where it is vectorised (AVX-512), numba's loop
    where NumPy's is not; on small ones NumPy's exp there too, then numba's normalisation:
    the softmax numerators of the fused path."""
    monkeypatch.undo()  # the module's own threshold and NUMPY_SIMD, not the fixture's
    assert bool(np._core._multiarray_umath.__cpu_features__["AVX512F"]) == fast_exp.NUMPY_SIMD
    calls = []
    for name in ("_numpy_rows", "_numpy_exp_rows", "_numba_rows"):
        monkeypatch.setattr(fast_exp, name, lambda *a, name=name: calls.append(name) or 0)
    fast_exp.softmax_rows_inplace(np.zeros((2, 8, 8)), 0.5, 2.0)
    assert calls == ["_numpy_exp_rows" if fast_exp.NUMPY_SIMD else "_numba_rows"]  # small
    calls.clear()
    fast_exp.softmax_rows_inplace(np.zeros((2, 512, 512)), 0.5, 2.0)
    if fast_exp.NUMPY_SIMD:
        assert calls == ["_numpy_rows"] * min(2, fast_exp._THREADS)
    else:
        assert set(calls) == {"_numba_rows"}


@pytest.mark.parametrize("simd", [False, True], ids=["numba-exp", "numpy-exp"])
def test_the_row_normalisation_is_the_division_to_an_ulp(monkeypatch, simd):
    """The small arrays' row softmax (numba's exp, or NumPy's where it is vectorised, then
    numba's normalisation): each weight its exponential divided by the row sum to an ulp
    (the sum in eight partial sums, a product by its reciprocal), never above 1, and an
    entry that is its
    row's whole sum (one key allowed, the rest exactly 0 or far too small to count) exactly
    1, as the division gives, whatever the score (x · (1/x) is 1 - 2^-53 for some x)."""
    monkeypatch.setattr(fast_exp, "NUMPY_SIMD", simd)
    rng = np.random.default_rng(12)
    a = rng.uniform(-30, 30, (4, 256, 40))
    a[:, :, 1:][:, ::2] = -np.inf  # every other row: one key allowed (its exp alone)
    a[:, 1::4, 1:] = a[:, 1::4, :1] - 60  # rows whose first entry outweighs the rest by e^60
    exps = np.exp(a) if simd else _exp(a)
    part = [np.cumsum(exps[..., t::8], axis=-1)[..., -1] for t in range(8)]  # in order
    sums = ((part[0] + part[4]) + (part[1] + part[5])) + ((part[2] + part[6]) + (part[3] + part[7]))
    sums = sums[..., None]  # (4, 256, 1): the kernel's eight partial sums, its order
    got = a.copy()
    with np.errstate(over="ignore"):
        ok = fast_exp.softmax_rows_inplace(got, math.exp(-600), math.exp(600))
    assert ok is True  # every row done
    assert np.all(got[:, ::2, 0] == 1.0) and np.all(got[:, ::2, 1:] == 0.0)
    assert np.all(got[:, 1::4, 0] == 1.0) and np.all(got[:, 1::4, 1:] > 0)
    assert got.max() <= 1.0
    np.testing.assert_array_equal(got, np.where(exps == sums, 1.0, exps * (1 / sums)))
    assert _ulps(got, exps / sums).max() <= 1.0
    assert np.all(np.abs(got.sum(-1) - 1) < 1e-14)


@pytest.mark.parametrize("block", [1 << 18, 64 * 8, 8])
def test_numpy_rows_are_the_softmax_and_leave_rows_at_risk(monkeypatch, block):
    """The row softmax by NumPy's exp (where it is vectorised): each row exp'd and divided
    by its sum where the sum is within [lo, hi], a row outside left as exponentials and
    marked; blocks of rows of any size and on several threads give the same bits."""
    monkeypatch.setattr(fast_exp, "NUMPY_SIMD", True)
    monkeypatch.setattr(fast_exp, "_NUMPY_FROM", 1)
    monkeypatch.setattr(fast_exp, "_BLOCK", block)
    rng = np.random.default_rng(8)
    a = rng.standard_normal((3, 70, 64)) * 3
    a[0, 1, 5] = 800.0  # exp overflows: the sum is inf
    a[1, 2] = -np.inf  # every entry 0: the sum is 0
    a[2, 3, 0] = np.nan
    with np.errstate(over="ignore", invalid="ignore"):
        want = np.exp(a)
        want = want / want.sum(-1, keepdims=True)
    got = a.copy()
    with np.errstate(over="ignore", invalid="ignore"):
        ok = fast_exp.softmax_rows_inplace(got, math.exp(-600), math.exp(600))
    assert ok.shape == (3, 70) and ok.sum() == 207
    assert not ok[0, 1] and not ok[1, 2] and not ok[2, 3]
    np.testing.assert_array_equal(got[ok], want[ok])  # NumPy's exp, sum and division
    assert np.all(got[1, 2] == 0) and np.isinf(got[0, 1, 5])  # left as exponentials
    one = a.copy()
    monkeypatch.setattr(fast_exp, "_PER_THREAD", 1 << 40)  # one thread
    with np.errstate(over="ignore", invalid="ignore"):
        fast_exp.softmax_rows_inplace(one, math.exp(-600), math.exp(600))
    np.testing.assert_array_equal(one, got)


@pytest.mark.parametrize(
    "x",
    [
        np.random.default_rng(0).standard_normal(100_000) * 4,  # softmax numerators
        np.random.default_rng(1).uniform(-745.2, 709.78, 100_000),  # the whole range
        np.linspace(-745.2, -707.0, 20_001),  # the subnormal results
        np.linspace(700.0, 709.78, 20_001),  # up to the largest finite result
        np.linspace(-1e-12, 1e-12, 1_001),
    ],
    ids=["normal", "range", "subnormal", "near-overflow", "near-zero"],
)
def test_within_one_ulp_of_numpy(x):
    ulps = _ulps(_exp(x), np.exp(x))
    assert ulps.max() <= 1.0
    # mostly the same bits: 94 % with fused multiply-adds, 90 % without (a CPU with no FMA)
    assert (ulps == 0).mean() > 0.8


def test_special_values_as_numpy():
    x = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 710.0, 709.79, -746.0, -1e308, 1e308])
    with np.errstate(over="ignore"):
        ref = np.exp(x)
    np.testing.assert_array_equal(_exp(x), ref)  # NaN equal to NaN here


def test_an_entry_does_not_depend_on_its_neighbours():
    x = np.random.default_rng(2).standard_normal(4096) * 3
    y = x.copy()
    y[::7], y[1::7], y[2::7] = np.nan, -np.inf, 1e4  # extreme neighbours
    keep = np.ones(x.size, bool)
    keep[::7] = keep[1::7] = keep[2::7] = False
    np.testing.assert_array_equal(_exp(x)[keep], _exp(y)[keep])
    np.testing.assert_array_equal(_exp(x[100:200]), _exp(x)[100:200])  # nor on its position


def test_in_place_and_shapes():
    a = np.random.default_rng(3).standard_normal((2, 3, 5))
    ref = np.exp(a)
    out = fast_exp.exp_inplace(a)
    assert out is a
    np.testing.assert_allclose(a, ref, rtol=3e-16, atol=0)
    empty = np.empty((0, 4))
    assert fast_exp.exp_inplace(empty).shape == (0, 4)


@pytest.mark.parametrize("case", ["float32", "strided", "readonly"])
def test_other_arrays_go_to_numpy(case):
    base = np.random.default_rng(4).standard_normal((6, 8))
    if case == "float32":
        a = base.astype(np.float32)
        ref = np.exp(a)
        fast_exp.exp_inplace(a)
        np.testing.assert_array_equal(a, ref)  # NumPy's own float32 loop, bit for bit
    elif case == "strided":
        a = base.copy()[:, ::2]
        ref = np.exp(a)
        fast_exp.exp_inplace(a)
        np.testing.assert_array_equal(a, ref)
    else:
        a = base.copy()
        a.flags.writeable = False
        with pytest.raises(ValueError, match="read-only"):
            fast_exp.exp_inplace(a)  # NumPy's own message, not a crash in compiled code


def test_without_numba_numpy_runs(monkeypatch):
    monkeypatch.setattr(fast_exp, "ACCELERATED", False)
    a = np.random.default_rng(5).standard_normal(1000)
    ref = np.exp(a)
    fast_exp.exp_inplace(a)
    np.testing.assert_array_equal(a, ref)


def test_the_fused_path_uses_it(monkeypatch):
    """The fused softmax comes from the row kernel where it runs (float64 with numba), and
    its numerators from exp_inplace where it does not (so a numba-less install gives
    NumPy's numbers, and this one the vectorised loop's)."""
    rows, seen = [], []
    real_rows, real_exp = fused.softmax_rows_inplace, fused.exp_inplace
    monkeypatch.setattr(
        fused,
        "softmax_rows_inplace",
        lambda a, lo, hi: rows.append(a.shape) or real_rows(a, lo, hi),
    )
    monkeypatch.setattr(fused, "exp_inplace", lambda a: seen.append(a.shape) or real_exp(a))
    rng = np.random.default_rng(6)
    q, k, v = (rng.standard_normal((2, 5, 4)) for _ in range(3))
    fast = fused.attend(q, k, v, 0.5, None)
    assert rows == [(2, 5, 5)] and seen == ([] if fast_exp.ACCELERATED else [(2, 5, 5)])
    monkeypatch.setattr(fused, "softmax_rows_inplace", lambda a, lo, hi: None)  # cannot run
    rows.clear()
    plain = fused.attend(q, k, v, 0.5, None)
    assert seen[-1] == (2, 5, 5)
    np.testing.assert_allclose(fast[1], plain[1], rtol=1e-14, atol=1e-15)
    np.testing.assert_allclose(fast[2], plain[2], rtol=1e-13, atol=1e-14)


def test_the_row_kernel_is_the_softmax_and_leaves_rows_at_risk():
    """softmax_rows_inplace: each row exp'd and divided by its sum where the sum is within
    [lo, hi]; a row outside (huge scores, a fully masked row) is left as exponentials and
    marked; blocks of rows on several threads give the same bits as one."""
    if not fast_exp.ACCELERATED:
        assert fast_exp.softmax_rows_inplace(np.zeros((2, 3)), 0.0, 1.0) is None
        return
    rng = np.random.default_rng(7)
    a = rng.standard_normal((3, 300, 300))
    a[0, 1] = 800.0  # exp overflows: the sum is inf
    a[1, 2] = -np.inf  # every entry 0: the sum is 0
    with np.errstate(over="ignore", invalid="ignore"):
        want = np.exp(a)
        want = want / want.sum(-1, keepdims=True)
    got = a.copy()
    ok = fast_exp.softmax_rows_inplace(got, math.exp(-600), math.exp(600))
    assert ok.shape == (3, 300) and not ok[0, 1] and not ok[1, 2] and ok.sum() == 898
    np.testing.assert_allclose(got[ok], want[ok], rtol=1e-14, atol=1e-16)
    assert np.all(got[1, 2] == 0) and np.isinf(got[0, 1]).all()
    one = a.copy()
    monkey = fast_exp._PER_THREAD
    try:
        fast_exp._PER_THREAD = 1 << 40  # one thread
        fast_exp.softmax_rows_inplace(one, math.exp(-600), math.exp(600))
    finally:
        fast_exp._PER_THREAD = monkey
    np.testing.assert_array_equal(one, got)


def test_a_loop_that_cannot_compile_leaves_numpy(monkeypatch):
    """numba installed but the compile fails (an unsupported CPU, a broken install): each
    call runs np.exp, the compile is tried once, and nothing raises."""
    tries = []

    def broken():
        tries.append(1)
        raise OSError("no compiler here")

    monkeypatch.setattr(fast_exp, "_compiled", None)
    monkeypatch.setattr(fast_exp, "_jit", broken)
    for seed in range(3):
        a = np.random.default_rng(seed).standard_normal(100)
        ref = np.exp(a)
        assert fast_exp.exp_inplace(a) is a
        np.testing.assert_array_equal(a, ref)
    assert tries == [1] and fast_exp._compiled is False


def test_no_writable_cache_compiles_in_memory(monkeypatch):
    """numba refuses cache=True where no cache directory is writable (RuntimeError): the
    loop is compiled without the disk cache, and gives the same numbers."""
    import numba

    real = numba.njit

    def njit(**opts):
        if opts.get("cache"):
            raise RuntimeError("cannot cache function '_exp_loop': no locator available")
        return real(**opts)

    monkeypatch.setattr(numba, "njit", njit)
    monkeypatch.setattr(fast_exp, "_compiled", None)
    fast_exp.warm()
    assert fast_exp._compiled  # compiled, not the NumPy fallback
    a = np.random.default_rng(7).uniform(-700, 700, 4096)
    b = a.copy()
    fast_exp.exp_inplace(a)
    assert _ulps(a, np.exp(b)).max() <= 1.0


def test_numba_not_found_is_not_accelerated(monkeypatch):
    def missing(name):
        raise ValueError(f"{name}.__spec__ is None")

    monkeypatch.setattr(fast_exp.importlib.util, "find_spec", missing)
    assert fast_exp._available() is False


@pytest.mark.parametrize("accelerated", [True, False], ids=["numba", "numpy"])
def test_add_rows_is_numpys_addition_and_says_whether_finite(monkeypatch, accelerated):
    """add_rows_inplace: y += b row by row, the bits of NumPy's addition, and True exactly
    when every entry is finite afterwards (an overflow, an inf or a NaN gives False)."""
    monkeypatch.setattr(fast_exp, "ACCELERATED", accelerated and fast_exp.ACCELERATED)
    rng = np.random.default_rng(13)
    y, b = rng.standard_normal((37, 19)) * 1e3, rng.standard_normal(19)
    want = y + b
    got = y.copy()
    assert fast_exp.add_rows_inplace(got, b) is True
    np.testing.assert_array_equal(got, want)
    for bad in (np.inf, -np.inf, np.nan):
        z = y.copy()
        z[5, 7] = bad
        assert fast_exp.add_rows_inplace(z, b) is False
    big = np.full((2, 3), 1.7e308)
    with np.errstate(over="ignore"):
        assert fast_exp.add_rows_inplace(big, np.full(3, 1.7e308)) is False  # overflowed
    assert np.isinf(big).all()
    f32 = y.astype(np.float32)  # another dtype: NumPy's own addition
    assert fast_exp.add_rows_inplace(f32, b.astype(np.float32)) is True
    np.testing.assert_array_equal(f32, y.astype(np.float32) + b.astype(np.float32))
    if accelerated and fast_exp.ACCELERATED:
        assert fast_exp._bias, "numba is installed but the bias loop did not compile"
