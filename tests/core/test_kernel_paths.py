"""Every code path of the kernel gives the same bits: each instruction set,
streaming and ordinary stores, one or several threads, sizes around every
threshold and block boundary, starts that are not 16- or 64-byte aligned;
every 16-bit pattern and every pair of complex special values on every
instruction set; and no fused multiply-add anywhere in the built module."""

import re

import ml_dtypes
import numpy as np
import pytest

from sigmoid_backward import reference, sigmoid_backward
from sigmoid_backward._kernel import _kernels

from dtypes_catalogue import ALL_DTYPES, BFLOAT16, COMPLEX_DTYPES, FLOAT16
from helpers import assert_same, finfo, specials

LIMITS = _kernels.thresholds()
STREAM_BLOCK = LIMITS["block_bytes"]
# Two threads run from two shares of output on.
PARALLEL_MIN = 2 * LIMITS["parallel_share_bytes"]


def _values(rng, n, dtype):
    """Random values with zeros, infinities, NaN and subnormals mixed in."""
    real = np.float32 if dtype.itemsize <= 4 or dtype == np.complex64 else np.float64
    tiny = float(finfo(dtype).smallest_subnormal)
    specials = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, tiny, -tiny, 1.0, 0.5], real)

    def part():
        x = rng.standard_normal(n).astype(real) * rng.choice([1e-3, 1.0, 1e3], n).astype(real)
        mask = rng.random(n) < 0.05
        x[mask] = rng.choice(specials, int(mask.sum()))
        return x
    with np.errstate(all="ignore"):
        if dtype.kind == "c":
            return (part() + 1j * part()).astype(dtype)
        return part().astype(dtype)


def _inputs(n, dtype, seed=0):
    rng = np.random.default_rng(seed)
    return _values(rng, n, dtype), _values(rng, n, dtype)


def _expected(g, y):
    with np.errstate(all="ignore"):  # overflow and NaN are values here
        return reference.sigmoid_backward(g, y)


@pytest.fixture
def restore_kernel_settings():
    with _kernels.settings():   # puts back the ISA and thresholds in use
        yield


def _unaligned(a, offset):
    """A copy of ``a`` starting ``offset`` elements past a 64-byte boundary."""
    raw = np.empty((a.size + offset + 64) * a.itemsize + 64, np.uint8)
    start = -raw.ctypes.data % 64 + offset * a.itemsize
    out = raw[start:start + a.nbytes].view(a.dtype)
    out[...] = a
    return out


@pytest.mark.parametrize("isa", _kernels.available_isas())
@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=str)
def test_every_isa_matches_reference(dtype, isa, restore_kernel_settings):
    # Tail lengths 0 to 17 after the widest vector, several thousand values.
    g, y = _inputs(4096 + 17, dtype, seed=1)
    expected = _expected(g, y)
    assert _kernels.use_isa(isa) == isa
    # every length up to two of the widest blocks (32 bfloat16 values), so
    # that each tail length goes through the zero-padded last block
    for n in list(range(66)) + [4096 + 17]:
        assert_same(sigmoid_backward(g[:n], y[:n]), expected[:n], f"{isa} n={n}")
    for n in (31, 33, 4096 + 17):  # in place, through the tail buffers too
        g1 = g[:n].copy()
        sigmoid_backward(g1, y[:n], out=g1)
        assert_same(g1, expected[:n], f"{isa} n={n} out=g")


@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=str)
def test_streaming_stores_match_ordinary_stores(dtype, restore_kernel_settings):
    """Sizes around the L1 staging block and 64-byte lines, with starts
    at every element offset within a 16-byte vector; 1 and 2 threads."""
    block = STREAM_BLOCK // dtype.itemsize
    g, y = _inputs(3 * block + 40, dtype, seed=2)
    expected = _expected(g, y)
    for n in (1, block - 1, block, block + 1, 2 * block + 3, 3 * block + 40):
        for offset in range(max(1, 16 // dtype.itemsize) + 1):
            gu, yu = _unaligned(g[:n], offset), _unaligned(y[:n], offset)
            results = []
            for threshold in (0, 1 << 62):
                _kernels.set_thresholds(nt_min_bytes=threshold)
                for threads in (1, 2):
                    out = _unaligned(np.zeros(n, dtype), offset)
                    sigmoid_backward(gu, yu, out=out, num_threads=threads)
                    results.append(out)
            for r in results:
                assert_same(r, expected[:n], f"n={n} offset={offset}")


@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=str)
def test_inputs_and_out_at_different_offsets(dtype, restore_kernel_settings):
    """The vector loops start where the fewest operands split lines, so the
    others may start anywhere within theirs; each mix, with and without
    streaming, 1 and 2 threads."""
    n = 3 * STREAM_BLOCK // dtype.itemsize + 5
    g, y = _inputs(n, dtype, seed=6)
    expected = _expected(g, y)
    step = max(1, 16 // dtype.itemsize)
    for offsets in [(0, step, 0), (0, 0, step), (step, 0, 3 * step), (1, 2, 3)]:
        gu, yu = _unaligned(g, offsets[0]), _unaligned(y, offsets[1])
        for threshold in (0, 1 << 62):
            _kernels.set_thresholds(nt_min_bytes=threshold)
            for threads in (1, 2):
                out = _unaligned(np.zeros(n, dtype), offsets[2])
                sigmoid_backward(gu, yu, out=out, num_threads=threads)
                assert_same(out, expected, f"offsets={offsets} threads={threads}")


@pytest.mark.parametrize(("offsets", "itemsize", "start"), [
    ((16, 16, 16), 4, 12),   # NumPy's arrays: all three on a line after 12
    ((0, 0, 0), 4, 0),
    ((16, 16, 0), 4, 12),    # the inputs on their lines; a split store costs less
    ((0, 0, 16), 4, 0),
    ((0, 16, 0), 4, 0),      # g and a fresh torch output keep theirs: y alone splits
    ((0, 16, 16), 4, 12),    # y and out on lines, g split
    ((16, 32, 0), 4, 8),     # no start aligns two: y's, the first tried
    ((8, 8, 8), 16, 0),      # complex128 8 bytes off: no start aligns any
    ((48, 48, 48), 16, 1),
])
def test_the_vector_loop_starts_where_the_fewest_lines_split(offsets, itemsize, start):
    """Operands at these byte offsets from a 64-byte line (g, y, out): the
    elements computed before the vector loop.  Inputs weigh 4, out 1 (a
    split input cost a 1e5 float32 call 9-10% in cache, a split out 2.5%)."""
    assert _kernels.vector_start_for(*offsets, itemsize, 1000) == start
    assert _kernels.vector_start_for(*offsets, itemsize, 0) == 0
    with pytest.raises(ValueError, match="itemsize must be positive"):
        _kernels.vector_start_for(*offsets, 0, 1000)


@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=str)
def test_streaming_stores_in_place(dtype, restore_kernel_settings):
    """out may be an input itself; streaming must not change that."""
    _kernels.set_thresholds(nt_min_bytes=0)
    g, y = _inputs(3000, dtype, seed=3)
    expected = _expected(g, y)
    g1, y1 = g.copy(), y.copy()
    assert sigmoid_backward(g1, y1, out=g1, num_threads=2) is g1
    assert_same(g1, expected, "out is grad_output")
    g2, y2 = g.copy(), y.copy()
    assert sigmoid_backward(g2, y2, out=y2, num_threads=2) is y2
    assert_same(y2, expected, "out is output")


def test_streaming_stores_around_the_default_threshold():
    """The default threshold, crossed for real: each thread streams its part
    from nt_min_bytes on; float32 just below and above it, 1 and 2
    threads, an unaligned start."""
    per_thread = LIMITS["nt_min_bytes"] // 4
    g, y = _inputs(2 * per_thread + 200, np.dtype(np.float32), seed=4)
    expected = _expected(g, y)
    for threads in (1, 2):
        for n in (threads * per_thread - 1, threads * per_thread + 130):
            out = _unaligned(np.empty(n, np.float32), 1)
            sigmoid_backward(g[1:n + 1], y[1:n + 1], out=out, num_threads=threads)
            assert_same(out, expected[1:n + 1], f"n={n} threads={threads}")


@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=str)
def test_thread_counts_around_the_parallel_threshold(dtype):
    """Parts of the split start on 64-element boundaries; any count of
    threads, even more than there is work for, gives the same bits."""
    n_min = PARALLEL_MIN // dtype.itemsize
    g, y = _inputs(n_min + 200, dtype, seed=5)
    expected = _expected(g, y)
    for n in (n_min - 1, n_min, n_min + 1, n_min + 129):
        for threads in (1, 2, 3, 7):
            assert_same(sigmoid_backward(g[:n], y[:n], num_threads=threads),
                             expected[:n], f"n={n} threads={threads}")


def test_use_isa_names_and_errors(restore_kernel_settings):
    isas = _kernels.available_isas()
    assert isas[0] == "portable"
    assert _kernels.use_isa(None) == isas[-1]  # the best one by default
    with pytest.raises(ValueError, match="'sse9' is not available"):
        _kernels.use_isa("sse9")
    assert _kernels.use_isa(None) == isas[-1]
    assert _kernels.use_isa("portable") == "portable"
    assert _kernels.use_isa(None) == isas[-1]


@pytest.mark.parametrize("tail", ["\x00junk", "\x00"])
def test_use_isa_refuses_a_nul_character(restore_kernel_settings, tail):
    """C reads a name up to its first NUL: 'portable\\x00junk' must not
    select portable."""
    best = _kernels.use_isa(None)
    for isa in (*_kernels.available_isas(), ""):
        name = isa + tail
        with pytest.raises(ValueError, match=re.escape(f"isa {name!r} holds a NUL character")):
            _kernels.use_isa(name)
        with pytest.raises(ValueError, match="NUL character"):
            with _kernels.settings(isa=name):
                pass
        assert _kernels.current_isa() == best


def test_thresholds_get_set(restore_kernel_settings):
    old = _kernels.thresholds()
    assert old == LIMITS and old["nt_min_bytes"] > 0 and old["parallel_share_bytes"] > 0
    assert _kernels.set_thresholds(nt_min_bytes=123) == old
    assert _kernels.thresholds()["nt_min_bytes"] == 123
    assert _kernels.set_thresholds(parallel_share_bytes=4096)["nt_min_bytes"] == 123
    assert _kernels.thresholds()["parallel_share_bytes"] == 4096
    with pytest.raises(ValueError, match=r"nt_min_bytes must be in \[0, 2\*\*63\), got -1"):
        _kernels.set_thresholds(nt_min_bytes=-1)
    with pytest.raises(ValueError, match=r"parallel_share_bytes must be in \[1, 2\*\*63\)"):
        _kernels.set_thresholds(parallel_share_bytes=0)
    assert _kernels.thresholds()["nt_min_bytes"] == 123


def test_set_thresholds_is_all_or_nothing(restore_kernel_settings):
    before = _kernels.thresholds()
    for bad in [dict(parallel_share_bytes=64, nt_min_bytes=2**70),
                dict(parallel_share_bytes=2**70, nt_min_bytes=0),
                dict(parallel_share_bytes=64, nt_min_bytes=-1)]:
        with pytest.raises(ValueError):
            _kernels.set_thresholds(**bad)
        assert _kernels.thresholds() == before, bad


def test_settings_put_back_the_isa_and_thresholds_whatever_happens():
    before_isa, before = _kernels.current_isa(), _kernels.thresholds()
    with pytest.raises(RuntimeError, match="inside"):
        with _kernels.settings(isa="portable", parallel_share_bytes=64, nt_min_bytes=0):
            assert _kernels.current_isa() == "portable"
            assert _kernels.thresholds()["parallel_share_bytes"] == 64
            raise RuntimeError("inside")
    assert (_kernels.current_isa(), _kernels.thresholds()) == (before_isa, before)
    with pytest.raises(ValueError, match="not available here"):
        with _kernels.settings(isa="no-such-isa"):
            pass
    assert (_kernels.current_isa(), _kernels.thresholds()) == (before_isa, before)


@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=str)
def test_overriding_the_thresholds_changes_no_bits(dtype, restore_kernel_settings):
    """Tiny shares (every call split between threads), no or every output
    non-temporal: the same bits as the derived thresholds give."""
    g, y = _inputs(20_000 + 13, dtype, seed=8)
    expected = _expected(g, y)
    out = np.empty_like(g)
    for share, nt_min in [(1, 0), (64, 1 << 62), (4096, 0), (1 << 40, 1 << 62)]:
        _kernels.set_thresholds(parallel_share_bytes=share, nt_min_bytes=nt_min)
        for threads in (1, 2, 3):
            assert_same(sigmoid_backward(g, y, num_threads=threads), expected,
                             f"share={share} nt_min={nt_min} threads={threads}")
            assert_same(sigmoid_backward(g[::-1], y[::-1], num_threads=threads),
                             expected[::-1].copy(), f"strided share={share}")
            sigmoid_backward(g, y, out=out, num_threads=threads)
            assert_same(out, expected, f"out= share={share} nt_min={nt_min}")


# ---- every 16-bit pattern against special partners ----------------------

def _partners(dtype):
    """Special values of a 16-bit dtype, as partners of every pattern: zeros,
    infinities, NaN, subnormals, the smallest normal, the largest finite,
    values next to 1 (so that 1 - y is tiny or exact) and values whose
    products overflow or underflow."""
    info = finfo(dtype)
    one = np.array([1.0], dtype)
    below_one = np.nextafter(one, np.zeros_like(one))[0]
    above_one = np.nextafter(one, one + one)[0]
    values = [0.0, -0.0, 1.0, -1.0, 0.5, -3.0, 2.0, 0.75, np.inf, -np.inf, np.nan,
              float(info.smallest_subnormal), -float(info.smallest_subnormal),
              float(info.tiny) - float(info.smallest_subnormal),  # largest subnormal
              float(info.tiny), float(info.max), -float(info.max),
              float(below_one), float(above_one), 0.1, 1e3]
    with np.errstate(over="ignore"):
        return np.array(values, np.float64).astype(dtype)


_PATTERN_CASES = {}


def _pattern_case(dtype):
    """(g, y, expected): every bit pattern against every partner, as g and
    as y; the reference result computed once per dtype."""
    if dtype not in _PATTERN_CASES:
        patterns = np.arange(1 << 16, dtype=np.uint16).view(dtype)
        partners = _partners(dtype)
        fills = np.repeat(partners, patterns.size)
        tiled = np.tile(patterns, partners.size)
        g = np.concatenate([tiled, fills])
        y = np.concatenate([fills, tiled])
        _PATTERN_CASES[dtype] = (g, y, _expected(g, y))
    return _PATTERN_CASES[dtype]


def _classes_16bit(bits, dtype):
    """How many results are subnormal, zero, infinite, NaN."""
    exp_mask, mant_mask = (0x7F80, 0x007F) if dtype == ml_dtypes.bfloat16 else (0x7C00, 0x03FF)
    exp, mant = bits & exp_mask, bits & mant_mask
    return {"subnormal": int(((exp == 0) & (mant != 0)).sum()),
            "zero": int(((exp == 0) & (mant == 0)).sum()),
            "inf": int(((exp == exp_mask) & (mant == 0)).sum()),
            "nan": int(((exp == exp_mask) & (mant != 0)).sum())}


@pytest.mark.parametrize("isa", _kernels.available_isas())
@pytest.mark.parametrize("dtype", [FLOAT16, BFLOAT16], ids=str)   # the masks are theirs
def test_16bit_every_pattern_every_isa(dtype, isa, restore_kernel_settings):
    """All 65,536 bit patterns, against each special partner, as grad_output
    and as output, on each ISA: bit for bit the reference's single rounding
    (NaNs by position, and quiet), subnormal results included."""
    g, y, expected = _pattern_case(dtype)
    _kernels.use_isa(isa)
    actual = sigmoid_backward(g, y)
    assert_same(actual, expected, f"{isa} {dtype}")
    bits = actual.view(np.uint16)
    classes = _classes_16bit(bits, dtype)
    assert min(classes.values()) > 1000, classes  # every class is exercised
    quiet = 0x0040 if dtype == ml_dtypes.bfloat16 else 0x0200
    nan = np.isnan(actual.astype(np.float32))
    assert (bits[nan] & quiet).all(), "a NaN result is signalling"


def _random_bf16_pairs(n, seed):
    """bfloat16 (g, y) pairs whose float32 products carry bits below the
    bfloat16 precision: g any finite pattern near 1 or anywhere, y mostly a
    sigmoid output in (0, 1), some anywhere."""
    rng = np.random.default_rng(seed)
    g = rng.integers(0, 1 << 16, n, dtype=np.uint16)
    near_one = rng.random(n) < 0.5   # exponents around 1: ordinary gradients
    g[near_one] = (g[near_one] & 0x807F) | rng.integers(0x3C00, 0x4100, int(near_one.sum()),
                                                        dtype=np.uint16) & 0x7F80
    y = (rng.random(n, dtype=np.float32).view(np.uint32) >> 16).astype(np.uint16)
    wild = rng.random(n) < 0.2
    y[wild] = rng.integers(0, 1 << 16, int(wild.sum()), dtype=np.uint16)
    # a tenth near the top: g in [2^127, 2^128), y in [1.5, 2), so that
    # g (1 - y) stays finite and |g (1 - y) y| crosses the largest bfloat16:
    # some finite float32 products round to infinity
    top = slice(0, n // 10)
    g[top] = (g[top] & 0x807F) | 0x7F00
    y[top] = 0x3FC0 | (y[top] & 0x003F)
    return g.view(ml_dtypes.bfloat16), y.view(ml_dtypes.bfloat16)


def test_bfloat16_rounding_cases_every_isa(restore_kernel_settings):
    """Random pairs, with the rounding's hard cases checked to be present:
    ties to even (both ways), round-ups that carry into the exponent,
    overflow to infinity and subnormal float32 results (which AVX512-BF16's
    instruction alone would flush to zero)."""
    g, y = _random_bf16_pairs(400_000, seed=11)
    expected = _expected(g, y)
    with np.errstate(all="ignore"):
        g32, y32 = g.astype(np.float32), y.astype(np.float32)
        r = (g32 * (np.float32(1) - y32) * y32).view(np.uint32)
    low, high = r & 0xFFFF, r >> 16
    finite = (r & 0x7F800000) != 0x7F800000
    assert ((low == 0x8000) & (high & 1 == 0) & finite).sum() > 50       # tie, stays
    assert ((low == 0x8000) & (high & 1 == 1) & finite).sum() > 50       # tie, rounds up
    assert ((low > 0x8000) & ((high & 0x7F) == 0x7F) & finite).sum() > 50   # carry into exponent
    assert (((r & 0x7F800000) == 0) & ((r & 0x7FFFFF) != 0)).sum() > 50   # subnormal float32
    assert (np.isinf(expected.astype(np.float32)) & finite).sum() > 50      # overflow on rounding
    for isa in _kernels.available_isas():
        _kernels.use_isa(isa)
        assert_same(sigmoid_backward(g, y), expected, isa)


# ---- complex: special values and random values on every ISA --------------

@pytest.mark.parametrize("isa", _kernels.available_isas())
@pytest.mark.parametrize("dtype", COMPLEX_DTYPES, ids=str)
def test_complex_special_values_every_isa(dtype, isa, restore_kernel_settings):
    """Every pair of special (re, im) values as g against every such pair
    as y would be 500,000 elements; instead each special complex value
    meets every other one in both positions through a shifted tiling, plus
    random values over many magnitudes.  Real and imaginary parts compared
    separately, bit for bit (NaNs by position)."""
    values = specials(dtype)                    # every (re, im) pair of specials
    k = values.size
    g = np.concatenate([np.repeat(values, k), np.tile(values, k)])
    y = np.concatenate([np.tile(values, k), np.repeat(values, k)])
    rng = np.random.default_rng(7)
    rand = _values(rng, 30_001, dtype)
    scale = rng.choice([1e-30, 1e-3, 1.0, 1e3, 1e30], rand.size)
    with np.errstate(all="ignore"):
        g = np.concatenate([g, rand, (rand * scale).astype(dtype)])
        y = np.concatenate([y, _values(rng, rand.size, dtype), rand])
    expected = _expected(g, y)
    _kernels.use_isa(isa)
    assert_same(sigmoid_backward(g, y), expected, f"{isa} {dtype}")
    # odd starts, so the blocks meet the specials at every lane
    for start in (1, 3, 5):
        assert_same(sigmoid_backward(g[start:], y[start:]), expected[start:],
                    f"{isa} {dtype} start={start}")


# ---- rows of runs (compute_rows: the frameworks' broadcast walks) -------------

def _rows_expected(g, y, out):
    """What compute_rows must leave in ``out``: each run computed after the
    one before it (runs that overlap see the earlier runs' results)."""
    for r in range(out.shape[0]):
        out[r] = _expected(g[r].copy(), y[r].copy())
    return out


def _row_layouts(rows, n, dtype, rng):
    """(name, g, y, out, expected out): 2-D operands of one shape as the
    walks hand them over, disjoint, broadcast, in place, transposed, and
    overlapping across runs (the run-after-run fallback)."""
    g, y = (_values(rng, rows * n, dtype).reshape(rows, n) for _ in range(2))
    row, col = _values(rng, n, dtype), _values(rng, rows, dtype)[:, None]
    yield "disjoint", g, y, np.empty_like(g), _expected(g, y)
    yield ("y a row broadcast", g, np.broadcast_to(row, (rows, n)), np.empty_like(g),
           _expected(g, row))
    yield ("y a column broadcast", g, np.broadcast_to(col, (rows, n)), np.empty_like(g),
           _expected(g, col))
    yield "in place", g.copy(), y, None, _expected(g, y)
    yield "out transposed", g, y, np.empty((n, rows), dtype).T, _expected(g, y)
    buf = np.concatenate([_values(rng, n, dtype), g.ravel()]).reshape(rows + 1, n)
    chained = buf.copy()
    yield ("g the run before out's", buf[:-1], y, buf[1:],
           _rows_expected(chained[:-1], y, chained[1:]))


@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=str)
@pytest.mark.parametrize("nthreads", [1, 2])
@pytest.mark.parametrize("share", [None, 256], ids=["derived share", "chunks across runs"])
def test_rows_are_the_reference_bit_for_bit_in_every_layout(dtype, nthreads, share,
                                                            restore_kernel_settings):
    # Enough runs for two threads' shares, of a length that is no multiple
    # of a block or of the threads' 64-element alignment; with a tiny share,
    # the threads claim many chunks, which start and stop inside runs.
    n = 37
    rows = PARALLEL_MIN // (n * dtype.itemsize) + 5
    if share is not None:
        _kernels.set_thresholds(parallel_share_bytes=share)
    for name, g, y, out, expected in _row_layouts(rows, n, dtype, np.random.default_rng(5)):
        out = g if out is None else out
        with np.errstate(all="ignore"):
            _kernels.compute_rows_into(g, y, out, nthreads)
        assert_same(out, expected, f"{name}, {nthreads} threads")


def test_rows_refuse_what_they_cannot_walk():
    a = np.zeros((3, 4), np.float32)
    with pytest.raises(TypeError, match="share one dtype"):
        _kernels.compute_rows_into(a, a.astype(np.float64), a, 1)
    with pytest.raises(ValueError, match="one 2-D shape"):
        _kernels.compute_rows_into(a, a[:, :3], a[:, :3], 1)
    with pytest.raises(ValueError, match="read-only"):
        _kernels.compute_rows_into(a, a, np.broadcast_to(a[0], a.shape), 1)
