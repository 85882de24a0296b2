# cython: language_level=3
"""The GIL-free kernel: the sigmoid gradient over n elements at any strides.

One fused kernel serves every dtype.  :c:func:`compute` splits the elements
between OpenMP threads, and each thread runs its share through the dtype's
loop of _loops.h (the arithmetic, compiled for the best instruction set this
CPU has):

- contiguous operands go to the loop as they are; a large output is
  computed in small blocks and written with non-temporal stores
  (_nontemporal.h), which saves reading out's old contents from memory;
- strided operands (a broadcast one has stride 0), and inputs of a dtype
  the compute dtype holds exactly (float32 into a float64 computation, say),
  are gathered, and widened, into small contiguous blocks, computed by the
  same loop and scattered to out, so every layout gives the contiguous
  one's values, bit for bit (a NaN result is a NaN; its sign and payload
  may depend on whether a vector body or a scalar tail computed it).

C callers (_kernels.pxd): the ufunc's inner loop and the function's fast
path.  Python callers: :func:`compute_into` (the aclnn plan), and the
switches for tests and benchmarks (:func:`use_isa`, :func:`set_thresholds`).
"""
from libc.stdint cimport uint16_t, uintptr_t
from cython.parallel cimport prange

cimport numpy as cnp

from libc.stdint cimport uint16_t, uintptr_t
from cython.parallel cimport prange

cimport numpy as cnp

from sigmoid_backward._loops cimport sb_loops_t, sb_loops_in_use, sb_isa_supported, sb_select_isa
from sigmoid_backward._nontemporal cimport SB_LINE, sb_nt_fence, sb_line_misalignment

import numpy as np
import ml_dtypes

from sigmoid_backward import _thresholds

cnp.import_array()

cdef extern from "_threads.h" nogil:
    void sb_threads_init()
    void sb_threads_set_default(int n)
    void sb_threads_set_call(int n)
    int sb_threads_call()
    int sb_threads_default()
    int sb_threads_resolve(int requested)
    int sb_threads_procs()
    int sb_threads_must_delegate()
    int sb_threads_delegate(void (*task)(void *) noexcept nogil, void *arg)
    int sb_openmp_enabled()

cdef extern from "_thresholds.h" nogil:
    Py_ssize_t sb_parallel_share()
    Py_ssize_t sb_nt_min()
    void sb_set_thresholds(Py_ssize_t parallel_share, Py_ssize_t nt_min)

cdef extern from "_half.h" nogil:
    float sb_f16_to_f32(uint16_t h)
    float sb_bf16_to_f32(uint16_t h)

cdef extern from "_fpflags.h" nogil:
    ctypedef struct sb_fpflags_t:
        pass
    sb_fpflags_t sb_fpflags_save()
    void sb_fpflags_restore(sb_fpflags_t saved)

ctypedef float complex complex64_t
ctypedef double complex complex128_t

ctypedef fused elem_t:
    float
    double
    complex64_t
    complex128_t
    uint16_t

cdef extern from "_cpu.h":
    int SB_X86_DISPATCH

cdef enum:
    # Each thread's share is a multiple of 64 elements, so shares meet on a
    # cache line of out whenever out starts on one (NumPy's large arrays do).
    PART_ALIGN = 64
    # Doubles (1 KiB) per block: of the non-temporal staging buffer (small
    # enough that loads and non-temporal stores keep overlapping,
    # benchmarks/NOTES.md) and of each gathered strided operand.
    BLOCK = 128
    # Doubles of slack in a block buffer, to start it on a 64-byte line.
    LINE_DOUBLES = 8

# How an input's memory meets out's, and so how a call may run (_order).
cdef enum Order:
    ANY_ORDER       # disjoint, or out itself element for element: any split
    FORWARD         # one thread, blocks in order: out lies behind an input
    ELEMENTWISE     # one element at a time, in order

ENABLED = bool(sb_openmp_enabled())
# Whether the build has non-temporal stores (x86-64 with GCC or clang).
NONTEMPORAL = bool(SB_X86_DISPATCH)

cdef int _FLOAT16_NUM = np.dtype(np.float16).num
cdef int _BFLOAT16_NUM = np.dtype(ml_dtypes.bfloat16).num
_share, _nt_min = _thresholds.derive(_thresholds.cache_sizes(), nontemporal=NONTEMPORAL)
sb_set_thresholds(_share, _nt_min)
sb_threads_init()
sb_select_isa(NULL)


cdef int kind_of(int typenum) noexcept nogil:
    if typenum == cnp.NPY_FLOAT:
        return KIND_F32
    if typenum == cnp.NPY_DOUBLE:
        return KIND_F64
    if typenum == cnp.NPY_CFLOAT:
        return KIND_C64
    if typenum == cnp.NPY_CDOUBLE:
        return KIND_C128
    if typenum == _FLOAT16_NUM:
        return KIND_F16
    if typenum == _BFLOAT16_NUM:
        return KIND_BF16
    return -1


cdef inline Py_ssize_t _size_of(int kind) noexcept nogil:
    if kind == KIND_F32:
        return 4
    if kind == KIND_F64 or kind == KIND_C64:
        return 8
    if kind == KIND_C128:
        return 16
    return 2


cdef inline double* _line_aligned(double* raw) noexcept nogil:
    """The first 64-byte boundary in ``raw`` (BLOCK + LINE_DOUBLES doubles).

    A block buffer on the stack is only 8-byte aligned, and where the stack
    starts varies from process to process.  When such a buffer straddles a
    4 KiB page boundary, the wide loads and stores that cross it split
    across two pages, and the non-temporal path ran 2x slower in about one
    process in five (AMD Zen 4: 5.7 ms instead of 2.9 ms, reproduced by
    placing the buffer 8 bytes off a line just below a page end;
    benchmarks/NOTES.md).  On a 64-byte line no access crosses a page."""
    return <double*>((<uintptr_t>raw + SB_LINE - 1) & ~(<uintptr_t>SB_LINE - 1))


cdef inline void _loop(const sb_loops_t* L,
                       const elem_t* g,    # IN
                       const elem_t* y,    # IN
                       elem_t* out,        # OUT (may alias g or y)
                       Py_ssize_t n, bint bf16) noexcept nogil:
    """The dtype's loop of _loops.h over n contiguous elements."""
    if elem_t is float:
        L.f32(g, y, out, n)
    elif elem_t is double:
        L.f64(g, y, out, n)
    elif elem_t is complex64_t:
        L.c64(<const float*>g, <const float*>y, <float*>out, n)
    elif elem_t is complex128_t:
        L.c128(<const double*>g, <const double*>y, <double*>out, n)
    elif bf16:
        L.bf16(g, y, out, n)
    else:
        L.f16(g, y, out, n)


cdef void _contiguous_share(const sb_loops_t* L,
                            const elem_t* g,    # IN
                            const elem_t* y,    # IN
                            elem_t* out,        # OUT (may alias g or y)
                            Py_ssize_t n, bint bf16, bint nt) noexcept nogil:
    """One thread's share of contiguous operands; ``nt`` writes ``out`` with
    non-temporal stores."""
    cdef double raw[BLOCK + LINE_DOUBLES]
    cdef double* buf = _line_aligned(raw)
    cdef Py_ssize_t start = 0, m
    if not nt:
        # Start the vector loop on a 64-byte line of y, which the loops read
        # twice: wide loads that split lines cost up to 30% in cache, and
        # NumPy's large arrays (all 16 bytes past a line) then align together
        # (benchmarks/NOTES.md).
        start = min(<Py_ssize_t>((SB_LINE - sb_line_misalignment(y)) % SB_LINE
                                 // sizeof(elem_t)), n)
        _loop(L, g, y, out, start, bf16)
        _loop(L, g + start, y + start, out + start, n - start, bf16)
        return
    while start < n:
        # End blocks on 64-byte lines of out, so that only the share's first
        # and last lines are written with ordinary stores.
        m = min(<Py_ssize_t>((BLOCK * sizeof(double) - sb_line_misalignment(out + start))
                             // sizeof(elem_t)), n - start)
        _loop(L, g + start, y + start, <elem_t*>buf, m, bf16)
        L.nt_copy(out + start, buf, m * sizeof(elem_t))
        start += m
    sb_nt_fence()


cdef inline void _put(elem_t* buf, Py_ssize_t i, double x) noexcept nogil:
    """buf[i] = x, a real value the compute dtype holds exactly.  Complex
    elements are written part by part: Cython's real-to-complex conversion
    computes ``x + 0*I``, which turns -0.0 into +0.0."""
    if elem_t is float or elem_t is double:
        buf[i] = <elem_t>x
    elif elem_t is complex64_t:
        (<float*>&buf[i])[0] = <float>x
        (<float*>&buf[i])[1] = 0
    elif elem_t is complex128_t:
        (<double*>&buf[i])[0] = x
        (<double*>&buf[i])[1] = 0


cdef inline void _widen(int src_kind, const char* src, Py_ssize_t step,
                        elem_t* buf, Py_ssize_t m) noexcept nogil:
    """``m`` elements of ``src``, a dtype that ``elem_t`` holds exactly, into
    ``buf``: the mixed-dtype loops convert while they gather, so that NumPy
    need not cast a whole input first (benchmarks/NOTES.md).  A double
    holds every source value exactly on the way."""
    cdef Py_ssize_t i
    if elem_t is uint16_t:
        return   # 16-bit compute dtypes widen nothing
    if src_kind == KIND_F16:
        for i in range(m):
            _put(buf, i, sb_f16_to_f32((<const uint16_t*>(src + i * step))[0]))
    elif src_kind == KIND_BF16:
        for i in range(m):
            _put(buf, i, sb_bf16_to_f32((<const uint16_t*>(src + i * step))[0]))
    elif src_kind == KIND_F32:
        for i in range(m):
            _put(buf, i, (<const float*>(src + i * step))[0])
    elif src_kind == KIND_F64:
        for i in range(m):
            _put(buf, i, (<const double*>(src + i * step))[0])
    elif elem_t is complex128_t:   # complex64 into complex128
        for i in range(m):
            (<double*>&buf[i])[0] = (<const float*>(src + i * step))[0]
            (<double*>&buf[i])[1] = (<const float*>(src + i * step))[1]


cdef inline const elem_t* _gather(int src_kind, const char* src, Py_ssize_t step,
                                  int kind, elem_t* buf, Py_ssize_t m,
                                  bint* filled) noexcept nogil:
    """``m`` elements of ``src`` (of ``src_kind``) as a contiguous block of the
    compute dtype (``kind``): ``src`` itself when it is that already, else
    copied or widened into ``buf``.  A broadcast operand (step 0) is copied
    once per share, which ``filled`` remembers; with ``filled`` NULL it is
    read again for every block (it may be out's element, changing)."""
    cdef Py_ssize_t i
    if step == 0 and filled != NULL:
        if not filled[0]:
            m = BLOCK * sizeof(double) // sizeof(elem_t)
            if src_kind != kind:
                _widen(src_kind, src, 0, buf, m)
            else:
                for i in range(m):
                    buf[i] = (<const elem_t*>src)[0]
            filled[0] = True
        return buf
    if src_kind != kind:
        _widen(src_kind, src, step, buf, m)
        return buf
    if step == <Py_ssize_t>sizeof(elem_t) or m == 1:
        return <const elem_t*>src
    for i in range(m):
        buf[i] = (<const elem_t*>(src + i * step))[0]
    return buf


cdef void _gathered_share(const sb_loops_t* L, int kind,
                          int g_kind, const char* g, Py_ssize_t gs,    # IN
                          int y_kind, const char* y, Py_ssize_t ys,    # IN
                          elem_t* out, Py_ssize_t os,                  # OUT
                          Py_ssize_t n, Order order) noexcept nogil:
    """One thread's share when some operand is strided (steps in bytes) or
    of another dtype, or overlaps out: blocks gathered (and widened),
    computed by the contiguous loop, and scattered, in order.  ELEMENTWISE
    makes every block one element, read after the previous one's result is
    written (a reduction's operand is its own output)."""
    cdef double graw[BLOCK + LINE_DOUBLES]
    cdef double yraw[BLOCK + LINE_DOUBLES]
    cdef double oraw[BLOCK + LINE_DOUBLES]
    cdef double* gbuf = _line_aligned(graw)
    cdef double* ybuf = _line_aligned(yraw)
    cdef double* obuf = _line_aligned(oraw)
    cdef Py_ssize_t block = BLOCK * sizeof(double) // sizeof(elem_t)
    cdef Py_ssize_t start = 0, m, i
    cdef bint g_filled = False, y_filled = False
    cdef bint* g_cache = &g_filled
    cdef bint* y_cache = &y_filled
    cdef bint out_direct = os == <Py_ssize_t>sizeof(elem_t)
    cdef const elem_t* gp
    cdef const elem_t* yp
    cdef elem_t* op
    if order == ELEMENTWISE:
        block = 1
        g_cache = y_cache = NULL
    while start < n:
        m = min(block, n - start)
        gp = _gather(g_kind, g + start * gs, gs, kind, <elem_t*>gbuf, m, g_cache)
        yp = _gather(y_kind, y + start * ys, ys, kind, <elem_t*>ybuf, m, y_cache)
        op = (<elem_t*>(<char*>out + start * os)) if out_direct else <elem_t*>obuf
        _loop(L, gp, yp, op, m, kind == KIND_BF16)
        if not out_direct:
            for i in range(m):
                (<elem_t*>(<char*>out + (start + i) * os))[0] = op[i]
        start += m


cdef inline bint _disjoint(const char* a, Py_ssize_t a_step, Py_ssize_t a_size,
                           const char* b, Py_ssize_t b_step, Py_ssize_t b_size,
                           Py_ssize_t n) noexcept nogil:
    """Do n elements at a (every a_step bytes) and at b share no byte?"""
    cdef const char* a_lo = a + min(0, (n - 1) * a_step)
    cdef const char* a_hi = a + max(0, (n - 1) * a_step) + a_size
    cdef const char* b_lo = b + min(0, (n - 1) * b_step)
    cdef const char* b_hi = b + max(0, (n - 1) * b_step) + b_size
    return a_hi <= b_lo or b_hi <= a_lo


cdef Order _order(int kind, char* out, Py_ssize_t os,
                  int a_kind, const char* a, Py_ssize_t a_step,
                  Py_ssize_t n) noexcept nogil:
    """How a call may run, given one input ``a`` and out (n elements each).

    NumPy's inner-loop contract lets an input overlap out: a ufunc call
    hands over ``out=x[:-1]`` with the input ``x[1:]`` without a copy
    (element i of the input lies at or ahead of element i of out), and a
    reduction or accumulation passes out itself, or out's previous
    element, as the first input.  A loop that goes forward, reading each
    block before writing it, is right in the first case; a thread split is
    not (a thread would read what the next one already wrote).  Anything
    else must go one element at a time."""
    cdef Py_ssize_t size = _size_of(kind), a_size = _size_of(a_kind)
    if n <= 1 or _disjoint(a, a_step, a_size, out, os, size, n):
        return ANY_ORDER
    if a == out and a_step == os and a_kind == kind and os != 0:
        return ANY_ORDER   # in place: element i is read, then written
    # Out's element i starts at or before the input's element i, and out
    # falls behind at least as fast (mirrored for negative steps): every
    # byte an element reads belongs to that element of out or a later one.
    if os >= size and a_step >= os and a >= out:
        return FORWARD
    if os <= -size and a_step <= os and a + a_size <= out + size:
        return FORWARD
    return ELEMENTWISE


cdef struct Call:
    # One kernel call, as compute() received it and decided it.
    const sb_loops_t* loops
    int kind
    int g_kind
    const char* g
    Py_ssize_t gs
    int y_kind
    const char* y
    Py_ssize_t ys
    char* out
    Py_ssize_t os
    Py_ssize_t n
    int nthreads
    Order order


cdef void _split(const Call* c, elem_t* out) noexcept nogil:
    """Split [0, n) into one contiguous part per thread (c.nthreads of them,
    which the order allows and the output's size pays for)."""
    cdef Py_ssize_t part, t, start, stop
    cdef Py_ssize_t size = sizeof(elem_t)
    cdef Py_ssize_t n = c.n, gs = c.gs, ys = c.ys, os = c.os
    cdef int nthreads = c.nthreads
    cdef bint contiguous = (c.g_kind == c.kind and c.y_kind == c.kind
                            and gs == size and ys == size and os == size)
    cdef bint bf16 = c.kind == KIND_BF16
    cdef bint nt = contiguous and n * size // nthreads >= sb_nt_min()
    if nthreads <= 1:
        if contiguous and c.order != ELEMENTWISE:
            _contiguous_share(c.loops, <const elem_t*>c.g, <const elem_t*>c.y, out, n, bf16, nt)
        else:
            _gathered_share(c.loops, c.kind, c.g_kind, c.g, gs, c.y_kind, c.y, ys,
                            out, os, n, c.order)
        return
    part = (n + nthreads - 1) // nthreads
    part = (part + PART_ALIGN - 1) // PART_ALIGN * PART_ALIGN
    for t in prange(nthreads, num_threads=nthreads, schedule='static'):
        start = t * part
        stop = min(n, start + part)
        if start >= stop:
            continue
        if contiguous:
            _contiguous_share(c.loops, <const elem_t*>c.g + start, <const elem_t*>c.y + start,
                              out + start, stop - start, bf16, nt)
        else:
            _gathered_share(c.loops, c.kind, c.g_kind, c.g + start * gs, gs,
                            c.y_kind, c.y + start * ys, ys,
                            <elem_t*>(<char*>out + start * os), os, stop - start, ANY_ORDER)


cdef void _run(void* arg) noexcept nogil:
    """The call, on the calling thread or the fork helper (_threads.h)."""
    cdef const Call* c = <const Call*>arg
    if c.kind == KIND_F32:
        _split(c, <float*>c.out)
    elif c.kind == KIND_F64:
        _split(c, <double*>c.out)
    elif c.kind == KIND_C64:
        _split(c, <complex64_t*>c.out)
    elif c.kind == KIND_C128:
        _split(c, <complex128_t*>c.out)
    else:
        _split(c, <uint16_t*>c.out)


cdef void compute(Kind kind, Kind g_kind, const char *g, Py_ssize_t gs,
                  Kind y_kind, const char *y, Py_ssize_t ys,
                  char *out, Py_ssize_t os,
                  Py_ssize_t n, int nthreads) noexcept nogil:
    cdef Call c
    cdef Py_ssize_t size = _size_of(kind)
    cdef sb_fpflags_t flags
    c.loops = sb_loops_in_use()
    c.kind, c.g_kind, c.g, c.gs = kind, g_kind, g, gs
    c.y_kind, c.y, c.ys = y_kind, y, ys
    c.out, c.os, c.n = out, os, n
    c.order = max(_order(kind, out, os, g_kind, g, gs, n),
                  _order(kind, out, os, y_kind, y, ys, n))
    if n > 1 and -size < os < size and c.order == ANY_ORDER:
        c.order = FORWARD   # out's elements overlap each other: the last write wins
    # The thread policy caps counts at the CPUs (_threads.h); this guard
    # keeps any caller from asking OpenMP for thousands of threads.
    c.nthreads = max(1, min(nthreads, sb_threads_procs()))
    c.nthreads = <int>min(<Py_ssize_t>c.nthreads, n * size // sb_parallel_share())
    if c.order != ANY_ORDER:
        c.nthreads = 1
    c.nthreads = max(c.nthreads, 1)
    flags = sb_fpflags_save()
    if c.nthreads > 1 and sb_threads_must_delegate():
        if sb_threads_delegate(_run, &c) != 0:
            c.nthreads = 1   # no helper thread: this one, alone
            _run(&c)
    else:
        _run(&c)
    sb_fpflags_restore(flags)


cpdef int resolve_threads(int requested) noexcept nogil:
    """The threads a kernel call asking for ``requested`` uses: the count as
    given; with 0, the calling thread's ``num_threads=`` if it set one,
    else the default capped by OpenMP's limit; every count capped at the
    processors (_threads.h)."""
    return sb_threads_resolve(requested)


cpdef void set_call_threads(int n) noexcept nogil:
    """Make the calling thread's kernel calls use n threads (0: none set)."""
    sb_threads_set_call(n)


cpdef int call_threads() noexcept nogil:
    """The calling thread's ``num_threads=`` count (0: none set)."""
    return sb_threads_call()


# ---- Python API -----------------------------------------------------------

def compute_into(cnp.ndarray g not None, cnp.ndarray y not None,
                 cnp.ndarray out not None, int nthreads):
    """Compute ``out[...] = g * (1 - y) * y`` (conjugated for complex).

    All three arrays must have the same supported dtype (native byte order,
    aligned), the same number of elements and the same memory order (all C- or
    all F-contiguous); ``out`` must be writeable.  ``out`` may be ``g`` or
    ``y`` itself, but may not overlap them otherwise.  These are checked: no
    caller can make the kernel touch memory out of bounds.  The GIL is
    released while computing, with ``nthreads`` threads (at most the
    processors available; the policy of _threads.py is the caller's).
    """
    cdef int typenum = cnp.PyArray_TYPE(out)
    cdef int kind = kind_of(typenum)
    cdef Py_ssize_t n = cnp.PyArray_SIZE(out)
    cdef Py_ssize_t size = cnp.PyArray_ITEMSIZE(out)
    cdef bint c_order = cnp.PyArray_IS_C_CONTIGUOUS(out)
    if (cnp.PyArray_TYPE(g) != typenum or cnp.PyArray_TYPE(y) != typenum
            or cnp.PyArray_SIZE(g) != n or cnp.PyArray_SIZE(y) != n):
        raise ValueError(
            f"compute_into: operands differ: {g.dtype}{(<object>g).shape}, "
            f"{y.dtype}{(<object>y).shape}, out {out.dtype}{(<object>out).shape}")
    if not (usable(g, c_order) and usable(y, c_order) and usable(out, c_order)):
        raise ValueError("compute_into: operands must be aligned, native-endian and "
                         "contiguous in one memory order")
    if not cnp.PyArray_ISWRITEABLE(out):
        raise ValueError("compute_into: out is read-only")
    if kind < 0:
        raise TypeError(f"compute_into: unsupported dtype {out.dtype}")
    if not (same_or_disjoint(g, out) and same_or_disjoint(y, out)):
        raise ValueError("compute_into: out partly overlaps an input")
    with nogil:
        compute(<Kind>kind, <Kind>kind, <const char*>cnp.PyArray_DATA(g), size,
                <Kind>kind, <const char*>cnp.PyArray_DATA(y), size,
                <char*>cnp.PyArray_DATA(out), size, n, nthreads)


def set_default_threads(int n):
    """set_num_threads(n) for the kernels; 0 restores the default."""
    sb_threads_set_default(n)


def default_threads():
    """The default thread count (see _threads.h): set_num_threads's value,
    else OpenMP's limit in the calling thread; 1 without OpenMP."""
    return sb_threads_default()


def use_isa(isa=None):
    """Run the loops compiled for ``isa``: "portable", "avx2", "avx512" or
    "avx512bf16";
    None (the default at import) picks the best this CPU supports.

    Returns the name now in use.  Raises ValueError when the CPU (or the
    build, off x86-64) cannot run ``isa``.  For tests and benchmarks: every
    ISA must give the same values, bit for bit (a NaN result's sign and
    payload may differ).
    """
    cdef bytes name
    cdef const char* chosen
    if isa is None:
        chosen = sb_select_isa(NULL)
    else:
        name = str(isa).encode()
        chosen = sb_select_isa(name)
    if chosen == NULL:
        raise ValueError(f"isa {isa!r} is not available here; choose one of "
                         f"{', '.join(available_isas())}")
    return chosen.decode()


def available_isas():
    """Names of the ISAs this CPU and build can run, slowest first."""
    return [name for name in ("portable", "avx2", "avx512", "avx512bf16")
            if sb_isa_supported(name.encode())]


def thresholds():
    """The kernel's size thresholds, in bytes (_thresholds.py): each thread
    gets at least ``parallel_share_bytes`` of the output; a thread whose
    part of the output has ``nt_min_bytes`` writes it with non-temporal
    stores, ``block_bytes`` at a time (also the size of a gathered strided
    block)."""
    return {"parallel_share_bytes": sb_parallel_share(),
            "nt_min_bytes": sb_nt_min(),
            "block_bytes": BLOCK * sizeof(double)}


def set_thresholds(parallel_share_bytes=None, nt_min_bytes=None):
    """Override the thresholds (None keeps one); returns the old ones as
    ``thresholds()`` does.  For tests and benchmarks: results never depend
    on them.  ``nt_min_bytes=0`` streams every contiguous output.  Both are
    checked before either changes."""
    old = thresholds()
    share = old["parallel_share_bytes"] if parallel_share_bytes is None else parallel_share_bytes
    nt_min = old["nt_min_bytes"] if nt_min_bytes is None else nt_min_bytes
    if not 1 <= share < 2**63:
        raise ValueError(f"parallel_share_bytes must be in [1, 2**63), got {share}")
    if not 0 <= nt_min < 2**63:
        raise ValueError(f"nt_min_bytes must be in [0, 2**63), got {nt_min}")
    sb_set_thresholds(share, nt_min)
    return old
