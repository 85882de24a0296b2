# cython: language_level=3
"""The GIL-free kernel: the sigmoid gradient over n elements at any strides.

One fused kernel (_fused.pxd) serves every dtype.  :c:func:`compute` decides
how the call may run from where its operands lie (_overlap.h) and on how
many threads, and runs it: the elements split between OpenMP threads when
it may, and each thread runs its share
(_fused.pxd) through the dtype's loop of the instruction set in use
(_dispatch.h):

- contiguous operands go to the loop as they are; a large output is
  computed in small blocks and written with non-temporal stores
  (_nontemporal.h), which saves reading out's old contents from memory;
- strided operands (a broadcast one has stride 0), and inputs of a dtype
  the compute dtype holds exactly (float32 into a float64 computation, say),
  are gathered, and widened, into small contiguous blocks, computed by the
  same loop and scattered to out, so every layout gives the contiguous
  one's values, bit for bit (a NaN result is a NaN; its sign and payload
  may depend on whether a vector body or a scalar tail computed it).

C callers (_kernels.pxd): the ufunc's inner loop, the function's fast path
and the Cython API.  Python callers: :func:`compute_into` (the aclnn plan),
:func:`direct`, the thread counts, and the switches for tests and
benchmarks (:func:`use_isa`, :func:`set_thresholds`, :func:`settings`).
"""
cimport numpy as cnp

from sigmoid_backward._kernel._dispatch cimport (sb_dispatch_init, sb_isa_name,
                                                 sb_isa_supported, sb_loop_for,
                                                 sb_loops_in_use, sb_num_isas, sb_select_isa)
from sigmoid_backward._kernel._dtype_table cimport (NUM_KINDS, sb_kind_names, sb_kind_of,
                                                    sb_kind_sizes, sb_set_kind_typenum)
from sigmoid_backward._kernel._fused cimport (BLOCK, SB_ANY_ORDER, TIMED_PARTS, Call, run,
                                              sb_order, sb_vector_start)

import contextlib

from sigmoid_backward._kernel import _dtypes, _thresholds

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
    void sb_threads_set_adaptive(int on)
    int sb_threads_adaptive()
    int sb_threads_default_alone()
    int sb_threads_free_cpus()
    long long sb_now_ns()
    int sb_threads_claim(int want, int is_explicit, long long now)
    void sb_threads_release(int taken)
    int sb_threads_load_cap(long long now)
    long long sb_threads_saved(int nthreads, long long elapsed, long long fastest_part)
    long long sb_threads_alone_ns(int nthreads, const long long *wall, const long long *cpu,
                                  const long long *n, long long total)
    long long sb_threads_credit()
    void sb_threads_note_call(int nthreads, long long start, long long end,
                              long long fastest_part)
    void sb_threads_reset_load()
    void sb_threads_set_last(int n)
    int sb_threads_last()

cdef extern from "_thresholds.h" nogil:
    Py_ssize_t sb_parallel_share()
    Py_ssize_t sb_nt_min()
    void sb_set_thresholds(Py_ssize_t parallel_share, Py_ssize_t nt_min)

cdef extern from "_overlap.h" nogil:
    sb_order sb_call_order(const char *g, Py_ssize_t gs, Py_ssize_t g_size, int g_same,
                           const char *y, Py_ssize_t ys, Py_ssize_t y_size, int y_same,
                           const char *out, Py_ssize_t os, Py_ssize_t size, Py_ssize_t n)
    int sb_rows_apart(const char *g, Py_ssize_t gs, Py_ssize_t g_row, Py_ssize_t g_size,
                      int g_same, const char *y, Py_ssize_t ys, Py_ssize_t y_row,
                      Py_ssize_t y_size, int y_same, const char *out, Py_ssize_t os,
                      Py_ssize_t o_row, Py_ssize_t size, Py_ssize_t n, Py_ssize_t rows)

cdef extern from "_fpflags.h" nogil:
    ctypedef struct sb_fpflags_t:
        pass
    sb_fpflags_t sb_fpflags_save()
    void sb_fpflags_restore(sb_fpflags_t saved)

cdef extern from "_cpu.h":
    int SB_X86_DISPATCH

ENABLED = bool(sb_openmp_enabled())
# Whether the build has non-temporal stores (x86-64 with GCC or clang).
NONTEMPORAL = bool(SB_X86_DISPATCH)
# No thread count beyond this reaches OpenMP (_threads.h).
MAX_THREADS = SB_MAX_THREADS
# The C table's dtypes, in its order (_dtypes.h): (name, itemsize).
DTYPE_TABLE = tuple((sb_kind_names[k].decode(), sb_kind_sizes[k]) for k in range(<int>NUM_KINDS))

for _kind, (_name, _size) in enumerate(DTYPE_TABLE):   # ml_dtypes' numbers come at import
    sb_set_kind_typenum(_kind, _dtypes.BY_NAME[_name].num)
_share, _nt_min = _thresholds.derive(_thresholds.cache_sizes(), nontemporal=NONTEMPORAL)
sb_set_thresholds(_share, _nt_min)
sb_threads_init()
sb_dispatch_init()
sb_select_isa(NULL)


cdef int kind_of(int typenum) noexcept nogil:
    return sb_kind_of(typenum)


cdef void compute(Kind kind, Kind g_kind, const char *g, Py_ssize_t gs,
                  Kind y_kind, const char *y, Py_ssize_t ys,
                  char *out, Py_ssize_t os,
                  Py_ssize_t n, int nthreads) noexcept nogil:
    cdef Call c
    cdef Py_ssize_t size = sb_kind_sizes[<int>kind]
    _describe(&c, kind, g_kind, g, gs, y_kind, y, ys, out, os, n)
    c.order = sb_call_order(g, gs, sb_kind_sizes[<int>g_kind], g_kind == kind,
                            y, ys, sb_kind_sizes[<int>y_kind], y_kind == kind, out, os, size, n)
    _run_call(&c, nthreads)


cdef void compute_rows(Kind kind, Kind g_kind, const char *g, Py_ssize_t gs, Py_ssize_t g_row,
                       Kind y_kind, const char *y, Py_ssize_t ys, Py_ssize_t y_row,
                       char *out, Py_ssize_t os, Py_ssize_t o_row,
                       Py_ssize_t n, Py_ssize_t rows, int nthreads) noexcept nogil:
    cdef Call c
    cdef Py_ssize_t size = sb_kind_sizes[<int>kind], r
    if rows <= 1 or n <= 0:
        if rows == 1:
            compute(kind, g_kind, g, gs, y_kind, y, ys, out, os, n, nthreads)
        return
    if not sb_rows_apart(g, gs, g_row, sb_kind_sizes[<int>g_kind], g_kind == kind,
                         y, ys, y_row, sb_kind_sizes[<int>y_kind], y_kind == kind,
                         out, os, o_row, size, n, rows):
        for r in range(rows):   # run after run, each in the order it allows
            compute(kind, g_kind, g + r * g_row, gs, y_kind, y + r * y_row, ys,
                    out + r * o_row, os, n, nthreads)
        return
    _describe(&c, kind, g_kind, g, gs, y_kind, y, ys, out, os, n)
    c.rows, c.g_row, c.y_row, c.o_row = rows, g_row, y_row, o_row
    c.order = SB_ANY_ORDER
    _run_call(&c, nthreads)


cdef inline void _describe(Call* c, Kind kind, Kind g_kind, const char *g, Py_ssize_t gs,
                           Kind y_kind, const char *y, Py_ssize_t ys,
                           char *out, Py_ssize_t os, Py_ssize_t n) noexcept nogil:
    c.loops = sb_loops_in_use()
    c.loop = sb_loop_for(c.loops, kind)
    c.kind, c.g_kind, c.g, c.gs = kind, g_kind, g, gs
    c.y_kind, c.y, c.ys = y_kind, y, ys
    c.out, c.os, c.n = out, os, n
    c.rows, c.g_row, c.y_row, c.o_row = 1, 0, 0, 0


cdef inline void _run_call(Call* c, int nthreads) noexcept nogil:
    """Run the call ``c`` describes (its order decided): on how many threads,
    then the kernel, in the default floating-point environment."""
    cdef Py_ssize_t size = sb_kind_sizes[<int>c.kind], share, nbytes
    cdef sb_fpflags_t flags
    # Each thread's share must pay for waking it (_thresholds.py): a small
    # call runs on this thread, without asking the thread policy.  0 asks
    # for the calling thread's count (_threads.h); any count is capped at
    # the CPUs, so that no caller asks OpenMP for thousands of threads.
    share, nbytes = sb_parallel_share(), c.rows * c.n * size
    c.nthreads = 1
    c.timed = False
    cdef int taken = 0, i
    cdef bint explicit
    cdef long long start = 0, alone
    if nbytes >= 2 * share and c.order == SB_ANY_ORDER:   # no division for small calls
        explicit = nthreads > 0 or sb_threads_call() > 0
        c.nthreads = <int>min(<Py_ssize_t>SB_MAX_THREADS, nbytes // share)
        c.nthreads = min(c.nthreads, nthreads if nthreads > 0 else sb_threads_resolve(0),
                         sb_threads_procs())
        c.nthreads = max(c.nthreads, 1)
        if sb_threads_adaptive() and (explicit or c.nthreads > 1
                                      or not sb_threads_default_alone()):
            # The load policy (_threads.h): a default call runs on the threads
            # the back-off allows and the other calls in flight left free.
            if not explicit:
                start = sb_now_ns()
                c.nthreads = min(c.nthreads, sb_threads_load_cap(start))
            taken = sb_threads_claim(c.nthreads, explicit, start)
            c.nthreads = taken
            c.timed = not explicit and taken > 1
            for i in range(TIMED_PARTS):
                c.part_ns[i] = 0
                c.part_n[i] = 0
                c.cpu_ns[i] = -1
    flags = sb_fpflags_save()
    if c.nthreads > 1 and sb_threads_must_delegate():
        if sb_threads_delegate(run, c) != 0:
            c.nthreads = 1   # no helper thread: this one, alone
            c.timed = False
            run(c)
    else:
        run(c)
    sb_fpflags_restore(flags)
    sb_threads_set_last(c.nthreads)
    if c.timed:
        alone = sb_threads_alone_ns(min(c.nthreads, <int>TIMED_PARTS), c.part_ns, c.cpu_ns,
                                    c.part_n, c.rows * c.n)
        if alone >= 0:
            sb_threads_note_call(c.nthreads, start, sb_now_ns(), alone // c.nthreads)
    if taken:
        sb_threads_release(taken)


# ---- threads ----------------------------------------------------------------

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


cdef Py_ssize_t parallel_share_bytes() noexcept nogil:
    return sb_parallel_share()


def num_procs():
    """The processors this process may use, read at import (1 without
    OpenMP): every call's thread count is capped at it (_threads.h)."""
    return sb_threads_procs()


def default_threads():
    """The default thread count (_threads.h): set_num_threads's value, else
    OpenMP's limit in the calling thread; 1 without OpenMP."""
    return sb_threads_default()


def set_default_threads(int n):
    """set_num_threads(n) for the kernels; 0 restores the default."""
    sb_threads_set_default(n)


# ---- the one check: can the kernel use an array in place ---------------------

def direct(cnp.ndarray a not None, cnp.ndarray out not None, bint c_order, bint writes):
    """Can the kernel use ``a`` in place, in a call that writes ``out``
    (``a`` may be ``out`` itself, with ``writes``) in the memory order
    ``c_order`` says?  A :class:`Direct` reason: ``Direct.DIRECT``, or why
    not (_kernels.pxd's direct_reason, which the fast path inlines)."""
    return Direct(direct_reason(a, out, c_order, writes))


REASONS = {
    DTYPE: "operands must share one dtype the kernels have",
    SHAPE: "operands must have one shape",
    LAYOUT: "operands must be aligned, native-endian and contiguous in one memory order",
    READONLY: "out is read-only",
    OVERLAP: "out partly overlaps an input",
}


def compute_into(cnp.ndarray g not None, cnp.ndarray y not None,
                 cnp.ndarray out not None, int nthreads):
    """Compute ``out[...] = g * (1 - y) * y`` (conjugated for complex).

    The kernel uses the three arrays in place, so :func:`direct` must allow
    each: one supported dtype, one shape, aligned, native-endian and
    contiguous in one memory order, ``out`` writeable and no input partly
    overlapping it (``out`` may be ``g`` or ``y`` itself).  Otherwise a
    ValueError (a TypeError for the dtype) says why: no caller can make the
    kernel touch memory out of bounds.  The GIL is released while
    computing, with ``nthreads`` threads (the caller's policy).
    """
    cdef bint c_order = cnp.PyArray_IS_C_CONTIGUOUS(out)
    cdef Py_ssize_t size = cnp.PyArray_ITEMSIZE(out)
    cdef Kind kind = <Kind>kind_of(cnp.PyArray_TYPE(out))
    for name, a, writes in (("out", out, True), ("g", g, False), ("y", y, False)):
        reason = direct_reason(a, out, c_order, writes)
        if reason != DIRECT:
            raise (TypeError if reason == DTYPE else ValueError)(
                f"compute_into: {name}: {REASONS[reason]}: g {g.dtype}{(<object>g).shape}, "
                f"y {y.dtype}{(<object>y).shape}, out {out.dtype}{(<object>out).shape}")
    with nogil:
        compute(kind, kind, <const char*>cnp.PyArray_DATA(g), size,
                kind, <const char*>cnp.PyArray_DATA(y), size,
                <char*>cnp.PyArray_DATA(out), size, cnp.PyArray_SIZE(out), nthreads)


def compute_rows_into(cnp.ndarray g not None, cnp.ndarray y not None,
                      cnp.ndarray out not None, int nthreads):
    """Compute ``out[...] = g * (1 - y) * y`` through :c:func:`compute_rows`,
    as the frameworks' broadcast walks call it: three 2-D arrays of one
    shape (rows, n) and one dtype of the kernels', aligned and
    native-endian, at any strides (0 included: a broadcast view), ``out``
    writeable; an input may overlap ``out`` in any way, and the result is
    then a run-after-run computation's.  For tests."""
    cdef Kind kind = <Kind>kind_of(cnp.PyArray_TYPE(out))
    cdef object shape = (<object>out).shape
    if kind_of(cnp.PyArray_TYPE(out)) < 0 or g.dtype != out.dtype or y.dtype != out.dtype:
        raise TypeError(f"compute_rows_into: g, y and out must share one dtype of the "
                        f"kernels', got {g.dtype}, {y.dtype}, {out.dtype}")
    if out.ndim != 2 or (<object>g).shape != shape or (<object>y).shape != shape:
        raise ValueError(f"compute_rows_into: g, y and out must share one 2-D shape, got "
                         f"{(<object>g).shape}, {(<object>y).shape}, {shape}")
    for name, a in (("g", g), ("y", y), ("out", out)):
        if not (cnp.PyArray_ISALIGNED(a) and cnp.PyArray_ISNOTSWAPPED(a)):
            raise ValueError(f"compute_rows_into: {name} must be aligned and native-endian")
    if not cnp.PyArray_ISWRITEABLE(out):
        raise ValueError("compute_rows_into: out is read-only")
    with nogil:
        compute_rows(kind, kind, <const char*>cnp.PyArray_DATA(g), cnp.PyArray_STRIDE(g, 1),
                     cnp.PyArray_STRIDE(g, 0), kind, <const char*>cnp.PyArray_DATA(y),
                     cnp.PyArray_STRIDE(y, 1), cnp.PyArray_STRIDE(y, 0),
                     <char*>cnp.PyArray_DATA(out), cnp.PyArray_STRIDE(out, 1),
                     cnp.PyArray_STRIDE(out, 0), cnp.PyArray_DIM(out, 1),
                     cnp.PyArray_DIM(out, 0), nthreads)


# ---- switches for tests and benchmarks ---------------------------------------

# The load policy's, the instruction set's and the thresholds': textually
# here, in this module, as what they switch is the C headers' statics
# (_threads.h, _dispatch.h, _thresholds.h), which only this module's C sees.
include "_switches.pxi"
