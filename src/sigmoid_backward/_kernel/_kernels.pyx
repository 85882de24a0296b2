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
from sigmoid_backward._kernel._fused cimport BLOCK, SB_ANY_ORDER, TIMED_PARTS, Call, run, sb_order

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
        if sb_threads_adaptive():
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


# ---- the load policy (_threads.h), for tests and benchmarks ------------------

def set_adaptive(bint on):
    """Turn the load policy on the default thread count on (the default at
    import) or off (every default call uses the full count, as before
    issue 26); returns whether it was on.  Results never depend on it."""
    cdef bint was = sb_threads_adaptive()
    sb_threads_set_adaptive(on)
    return was


def adaptive():
    """Whether the load policy is on."""
    return bool(sb_threads_adaptive())


def reset_load():
    """Forget the back-off and the callers seen: the next default call uses
    the full count."""
    sb_threads_reset_load()


def free_cpus():
    """The CPU tokens no call in flight holds (below 0 when more calls run
    than there are CPUs, each on its own thread)."""
    return sb_threads_free_cpus()


def claim_threads(int want, bint explicit, now_ns=None):
    """Take threads from the pool as a call does at ``now_ns`` (ns of
    :func:`now_ns`'s clock; default now), for tests of the policy's logic:
    returns the count taken, which :func:`release_threads` gives back."""
    if want < 1:
        raise ValueError(f"want must be >= 1, got {want}")
    return sb_threads_claim(want, explicit, sb_now_ns() if now_ns is None else now_ns)


def release_threads(int taken):
    """Give back threads :func:`claim_threads` took."""
    sb_threads_release(taken)


def load_cap(long long now_ns):
    """The most threads a default call may use at ``now_ns`` (ns of
    :func:`now_ns`'s clock) after the back-off's calls so far."""
    return sb_threads_load_cap(now_ns)


def last_threads():
    """The threads the calling thread's last kernel call ran on (0: none
    yet), as its policy chose them: for tests of the policy's logic."""
    return sb_threads_last()


def now_ns():
    """The clock the back-off reads, in ns (0 without OpenMP)."""
    return sb_now_ns()


def saved(int nthreads, long long elapsed_ns, long long fastest_part_ns):
    """What a call on ``nthreads`` threads that took ``elapsed_ns``, its
    fastest thread ``fastest_part_ns``, saved against one thread, in ns
    (negative: it lost; _threads.h)."""
    return sb_threads_saved(nthreads, elapsed_ns, fastest_part_ns)


def alone_ns(wall_ns, cpu_ns, elements, long long total):
    """What one thread alone would take for ``total`` elements (ns; -1:
    none done), from a team's threads: thread t did ``elements[t]`` in
    ``wall_ns[t]`` of its chunks, with ``cpu_ns[t]`` of CPU time (-1: not
    read), as compute() tells the back-off (_threads.h)."""
    cdef long long wall[TIMED_PARTS]
    cdef long long cpu[TIMED_PARTS]
    cdef long long n[TIMED_PARTS]
    cdef int i, count = len(wall_ns)
    if not 0 < count <= TIMED_PARTS or len(cpu_ns) != count or len(elements) != count:
        raise ValueError(f"alone_ns: 1 to {TIMED_PARTS} threads, each with a wall time, a CPU "
                         f"time and a count")
    for i in range(count):
        wall[i], cpu[i], n[i] = wall_ns[i], cpu_ns[i], elements[i]
    return sb_threads_alone_ns(count, wall, cpu, n, total)


def credit():
    """What the default's teams saved lately against one thread (ns): the
    back-off's credit (_threads.h)."""
    return sb_threads_credit()


def note_call(int nthreads, long long start_ns, long long end_ns, long long fastest_part_ns):
    """Tell the back-off of a timed default call, as compute() does."""
    sb_threads_note_call(nthreads, start_ns, end_ns, fastest_part_ns)


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

def compiled_isas():
    """Names of the ISAs this build has loops for, slowest first."""
    return [sb_isa_name(k).decode() for k in range(sb_num_isas())]


def available_isas():
    """Names of the ISAs this CPU and build can run, slowest first."""
    return [sb_isa_name(k).decode() for k in range(sb_num_isas()) if sb_isa_supported(k)]


def use_isa(isa=None):
    """Run the loops compiled for ``isa`` (one of :func:`available_isas`);
    None (the default at import) picks the best this CPU supports.

    Returns the name now in use.  Raises ValueError when the CPU (or the
    build, off x86-64) cannot run ``isa``, or when its name holds a NUL
    character.  Every ISA gives the same values, bit for bit (a NaN
    result's sign and payload may differ).
    """
    cdef bytes name
    cdef const char* chosen
    if isa is None:
        chosen = sb_select_isa(NULL)
    else:
        name = str(isa).encode()
        # C reads the name up to its first NUL: 'avx2\x00junk' would be avx2.
        if b"\0" in name:
            raise ValueError(f"isa {isa!r} holds a NUL character, which no ISA's name has; "
                             f"choose one of {', '.join(available_isas())}")
        chosen = sb_select_isa(name)
    if chosen == NULL:
        raise ValueError(f"isa {isa!r} is not available here; choose one of "
                         f"{', '.join(available_isas())}")
    return chosen.decode()


def current_isa():
    """The name of the ISA whose loops are in use."""
    return sb_loops_in_use().name.decode()


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
    ``thresholds()`` does.  Results never depend on them.
    ``nt_min_bytes=0`` streams every contiguous output.  Both are checked
    before either changes."""
    old = thresholds()
    share = old["parallel_share_bytes"] if parallel_share_bytes is None else parallel_share_bytes
    nt_min = old["nt_min_bytes"] if nt_min_bytes is None else nt_min_bytes
    if not 1 <= share < 2**63:
        raise ValueError(f"parallel_share_bytes must be in [1, 2**63), got {share}")
    if not 0 <= nt_min < 2**63:
        raise ValueError(f"nt_min_bytes must be in [0, 2**63), got {nt_min}")
    sb_set_thresholds(share, nt_min)
    return old


@contextlib.contextmanager
def settings(isa=None, parallel_share_bytes=None, nt_min_bytes=None):
    """Run the block with these kernel settings (None keeps one), and put
    back the ISA and thresholds in use before it, whatever happens.

    >>> with settings(isa="portable", nt_min_bytes=0):
    ...     pass
    """
    before_isa = current_isa()
    before = set_thresholds(parallel_share_bytes, nt_min_bytes)
    try:
        if isa is not None:
            use_isa(isa)
        yield
    finally:
        sb_set_thresholds(before["parallel_share_bytes"], before["nt_min_bytes"])
        use_isa(before_isa)
