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

from sigmoid_backward._loops cimport sb_loops, sb_isa_supported, sb_select_isa
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
    int sb_threads_for(int requested)
    int sb_threads_for_call()
    void sb_threads_team_starts()
    int sb_openmp_enabled()
    int sb_num_procs

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

ENABLED = bool(sb_openmp_enabled())
# Whether the build has non-temporal stores (x86-64 with GCC or clang).
NONTEMPORAL = bool(SB_X86_DISPATCH)

cdef int _FLOAT16_NUM = np.dtype(np.float16).num
cdef int _BFLOAT16_NUM = np.dtype(ml_dtypes.bfloat16).num
# Derived from the CPU's caches (_thresholds.py); set_thresholds changes them.
cdef Py_ssize_t _parallel_share
cdef Py_ssize_t _nt_min_bytes
_parallel_share, _nt_min_bytes = _thresholds.derive(_thresholds.cache_sizes(),
                                                    nontemporal=NONTEMPORAL)
sb_threads_init()
sb_select_isa(NULL)


cdef int kind_of(int typenum) noexcept:
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


cdef inline void _loop(const elem_t* g,    # IN
                       const elem_t* y,    # IN
                       elem_t* out,        # OUT (may alias g or y)
                       Py_ssize_t n, bint bf16) noexcept nogil:
    """The dtype's loop of _loops.h over n contiguous elements."""
    if elem_t is float:
        sb_loops.f32(g, y, out, n)
    elif elem_t is double:
        sb_loops.f64(g, y, out, n)
    elif elem_t is complex64_t:
        sb_loops.c64(<const float*>g, <const float*>y, <float*>out, n)
    elif elem_t is complex128_t:
        sb_loops.c128(<const double*>g, <const double*>y, <double*>out, n)
    elif bf16:
        sb_loops.bf16(g, y, out, n)
    else:
        sb_loops.f16(g, y, out, n)


cdef void _contiguous_share(const elem_t* g,    # IN
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
        _loop(g, y, out, start, bf16)
        _loop(g + start, y + start, out + start, n - start, bf16)
        return
    while start < n:
        # End blocks on 64-byte lines of out, so that only the share's first
        # and last lines are written with ordinary stores.
        m = min(<Py_ssize_t>((BLOCK * sizeof(double) - sb_line_misalignment(out + start))
                             // sizeof(elem_t)), n - start)
        _loop(g + start, y + start, <elem_t*>buf, m, bf16)
        sb_loops.nt_copy(out + start, buf, m * sizeof(elem_t))
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
    once per share: ``filled`` remembers it."""
    cdef Py_ssize_t i
    if src_kind != kind:
        if step == 0:
            if not filled[0]:
                _widen(src_kind, src, 0, buf, BLOCK * sizeof(double) // sizeof(elem_t))
                filled[0] = True
        else:
            _widen(src_kind, src, step, buf, m)
        return buf
    if step == <Py_ssize_t>sizeof(elem_t):
        return <const elem_t*>src
    if step == 0:
        if not filled[0]:
            for i in range(<Py_ssize_t>(BLOCK * sizeof(double) // sizeof(elem_t))):
                buf[i] = (<const elem_t*>src)[0]
            filled[0] = True
        return buf
    for i in range(m):
        buf[i] = (<const elem_t*>(src + i * step))[0]
    return buf


cdef void _gathered_share(int kind,
                          int g_kind, const char* g, Py_ssize_t gs,    # IN
                          int y_kind, const char* y, Py_ssize_t ys,    # IN
                          elem_t* out, Py_ssize_t os,                  # OUT
                          Py_ssize_t n) noexcept nogil:
    """One thread's share when some operand is strided (steps in bytes) or
    of another dtype: blocks gathered (and widened), computed by the
    contiguous loop, and scattered."""
    cdef double graw[BLOCK + LINE_DOUBLES]
    cdef double yraw[BLOCK + LINE_DOUBLES]
    cdef double oraw[BLOCK + LINE_DOUBLES]
    cdef double* gbuf = _line_aligned(graw)
    cdef double* ybuf = _line_aligned(yraw)
    cdef double* obuf = _line_aligned(oraw)
    cdef Py_ssize_t block = BLOCK * sizeof(double) // sizeof(elem_t)
    cdef Py_ssize_t start = 0, m, i
    cdef bint g_filled = False, y_filled = False
    cdef bint out_direct = os == <Py_ssize_t>sizeof(elem_t)
    cdef const elem_t* gp
    cdef const elem_t* yp
    cdef elem_t* op
    while start < n:
        m = min(block, n - start)
        gp = _gather(g_kind, g + start * gs, gs, kind, <elem_t*>gbuf, m, &g_filled)
        yp = _gather(y_kind, y + start * ys, ys, kind, <elem_t*>ybuf, m, &y_filled)
        op = (<elem_t*>(<char*>out + start * os)) if out_direct else <elem_t*>obuf
        _loop(gp, yp, op, m, kind == KIND_BF16)
        if not out_direct:
            for i in range(m):
                (<elem_t*>(<char*>out + (start + i) * os))[0] = op[i]
        start += m


cdef void _split(int kind,
                 int g_kind, const char* g, Py_ssize_t gs,
                 int y_kind, const char* y, Py_ssize_t ys,
                 elem_t* out, Py_ssize_t os,
                 Py_ssize_t n, int nthreads) noexcept nogil:
    """Split [0, n) into one contiguous part per thread, each thread's
    share at least _parallel_share bytes of out (_thresholds.py)."""
    cdef Py_ssize_t part, t, start, stop
    cdef Py_ssize_t size = sizeof(elem_t)
    cdef Py_ssize_t nbytes = n * size
    cdef bint contiguous = (g_kind == kind and y_kind == kind
                            and gs == size and ys == size and os == size)
    cdef bint bf16 = kind == KIND_BF16
    nthreads = <int>min(<Py_ssize_t>nthreads, nbytes // _parallel_share)
    if os == 0:
        # Every element lands on one (NumPy allows such an out): the last
        # element's result wins, as in NumPy, only when run serially.
        nthreads = 1
    cdef bint nt = contiguous and nbytes // max(nthreads, 1) >= _nt_min_bytes
    if nthreads <= 1:
        if contiguous:
            _contiguous_share(<const elem_t*>g, <const elem_t*>y, out, n, bf16, nt)
        else:
            _gathered_share(kind, g_kind, g, gs, y_kind, y, ys, out, os, n)
        return
    part = (n + nthreads - 1) // nthreads
    part = (part + PART_ALIGN - 1) // PART_ALIGN * PART_ALIGN
    sb_threads_team_starts()
    for t in prange(nthreads, num_threads=nthreads, schedule='static'):
        start = t * part
        stop = min(n, start + part)
        if start >= stop:
            continue
        if contiguous:
            _contiguous_share(<const elem_t*>g + start, <const elem_t*>y + start,
                              out + start, stop - start, bf16, nt)
        else:
            _gathered_share(kind, g_kind, g + start * gs, gs, y_kind, y + start * ys, ys,
                            <elem_t*>(<char*>out + start * os), os, stop - start)


cdef void compute(Kind kind, Kind g_kind, const char *g, Py_ssize_t gs,
                  Kind y_kind, const char *y, Py_ssize_t ys,
                  char *out, Py_ssize_t os,
                  Py_ssize_t n, int nthreads) noexcept nogil:
    # The thread policy caps counts at the CPUs (_threads.h); this guard
    # keeps any caller from asking OpenMP for thousands of threads.
    nthreads = max(1, min(nthreads, sb_num_procs))
    cdef sb_fpflags_t flags = sb_fpflags_save()
    if kind == KIND_F32:
        _split(kind, g_kind, g, gs, y_kind, y, ys, <float*>out, os, n, nthreads)
    elif kind == KIND_F64:
        _split(kind, g_kind, g, gs, y_kind, y, ys, <double*>out, os, n, nthreads)
    elif kind == KIND_C64:
        _split(kind, g_kind, g, gs, y_kind, y, ys, <complex64_t*>out, os, n, nthreads)
    elif kind == KIND_C128:
        _split(kind, g_kind, g, gs, y_kind, y, ys, <complex128_t*>out, os, n, nthreads)
    else:
        _split(kind, g_kind, g, gs, y_kind, y, ys, <uint16_t*>out, os, n, nthreads)
    sb_fpflags_restore(flags)


cdef int threads_for_call() noexcept nogil:
    return sb_threads_for_call()


cdef void set_call_threads(int n) noexcept nogil:
    sb_threads_set_call(n)


cdef int call_threads() noexcept nogil:
    return sb_threads_call()


cdef int threads_for(int n) noexcept nogil:
    return sb_threads_for(n)


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
    else OpenMP's limit in the calling thread; 1 without OpenMP or in a
    child forked after a parallel call."""
    return sb_threads_default()


def resolve_threads(int requested):
    """The threads a call asking for ``requested`` (0: the default) uses."""
    return sb_threads_for(requested)


def current_call_threads():
    """The calling thread's num_threads= override (0: none); for tests."""
    return sb_threads_call()


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
    return {"parallel_share_bytes": _parallel_share,
            "nt_min_bytes": _nt_min_bytes,
            "block_bytes": BLOCK * sizeof(double)}


def set_thresholds(parallel_share_bytes=None, nt_min_bytes=None):
    """Override the thresholds (None keeps one); returns the old ones as
    ``thresholds()`` does.  For tests and benchmarks: results never depend
    on them.  ``nt_min_bytes=0`` streams every contiguous output."""
    global _parallel_share, _nt_min_bytes
    old = thresholds()
    if parallel_share_bytes is not None and parallel_share_bytes < 1:
        raise ValueError(f"parallel_share_bytes must be >= 1, got {parallel_share_bytes}")
    if nt_min_bytes is not None and nt_min_bytes < 0:
        raise ValueError(f"nt_min_bytes must be >= 0, got {nt_min_bytes}")
    if parallel_share_bytes is not None:
        _parallel_share = parallel_share_bytes
    if nt_min_bytes is not None:
        _nt_min_bytes = nt_min_bytes
    return old
