# The fused-type kernel, for _kernels.pyx, which decides a call and runs it
# here: the split of a call between OpenMP threads, and each thread's share.
# Inline functions, compiled into the kernel's module.  elem_t is the storage
# of the compute dtype, as the dtype table says it is carried (narrow values
# as the unsigned integer of their width; a dtype of a new width adds its
# storage here, to run() and to _dtype_codegen.py's STORAGES); the arithmetic
# is the loop of _loops.h the call carries.
from libc.stdint cimport uint8_t, uint16_t, uintptr_t
from cython.parallel cimport prange

from sigmoid_backward._kernel._dispatch cimport sb_loop_fn, sb_loops_t, sb_nt_copy_fn
from sigmoid_backward._kernel._dtype_table cimport (STORE_C64, STORE_C128, STORE_F32,
                                                    STORE_F64, STORE_U16, sb_kind_is_narrow,
                                                    sb_kind_storage)
from sigmoid_backward._kernel._nontemporal cimport SB_LINE, sb_line_misalignment, sb_nt_fence

cdef extern from "_loops.h" nogil:
    float sb_narrow_to_f32(int kind, const void *p)
    void sb_narrow_from_f32(int kind, float f, void *p)

cdef extern from "_overlap.h" nogil:
    ctypedef enum sb_order:
        SB_ANY_ORDER
        SB_ELEMENTWISE

cdef extern from "_thresholds.h" nogil:
    Py_ssize_t sb_nt_min()
    Py_ssize_t sb_parallel_share()

cdef extern from "_threads.h" nogil:
    long long sb_now_ns()
    long long sb_thread_cpu_ns()

cdef extern from "_vector_start.h" nogil:
    Py_ssize_t sb_vector_start(const void* g, const void* y, const void* out, size_t size,
                               Py_ssize_t n)

cdef extern from "_atomic.h" nogil:
    long long sb_add_ll(long long *p, long long v)

ctypedef float complex complex64_t
ctypedef double complex complex128_t

ctypedef fused elem_t:
    float
    double
    complex64_t
    complex128_t
    uint16_t
    uint8_t

cdef enum:
    # Doubles (1 KiB) per block: of the non-temporal staging buffer (small
    # enough that loads and non-temporal stores keep overlapping,
    # benchmarks/NOTES.md) and of each gathered strided operand.
    BLOCK = 128
    # Doubles of slack in a block buffer, to start it on a 64-byte line.
    LINE_DOUBLES = 8
    # Each chunk of the split is a multiple of 64 elements, so chunks meet on
    # a cache line of out whenever out starts on one (NumPy's large arrays do).
    PART_ALIGN = 64
    # Threads whose time a timed call keeps (the thread policy's back-off,
    # _threads.h): the fastest of these few is enough.
    TIMED_PARTS = 8
    # Chunks a thread's part of a call is cut into, to be claimed (_split):
    # enough that a thread the scheduler runs leaves little to a preempted
    # one.
    CHUNKS_PER_PART = 8
    # ...but each chunk at least this many times the share that pays for
    # waking a thread (_thresholds.py): shorter calls, which a preempted
    # thread delays by a time slice whatever their chunks, keep one chunk
    # per part (1e5 float32 took 15% longer in 2 chunks a part).
    CHUNK_SHARES = 4
    # Parts, each with its own claim counter: threads beyond this many
    # share the parts (thread t's own part is t % CLAIM_PARTS).
    CLAIM_PARTS = 64
    # long longs from one counter to the next: one 64-byte line each, so
    # that a thread's claims on its own part do not move a line another
    # thread is claiming on.
    CLAIM_STRIDE = 8


cdef inline double* line_aligned(double* raw) noexcept nogil:
    """The first 64-byte boundary in ``raw`` (BLOCK + LINE_DOUBLES doubles).

    A block buffer on the stack is only 8-byte aligned, and where the stack
    starts varies from process to process.  When such a buffer straddles a
    4 KiB page boundary, the wide loads and stores that cross it split
    across two pages, and the non-temporal path ran 2x slower in about one
    process in five (AMD Zen 4: 5.7 ms instead of 2.9 ms, reproduced by
    placing the buffer 8 bytes off a line just below a page end;
    benchmarks/NOTES.md).  On a 64-byte line no access crosses a page."""
    return <double*>((<uintptr_t>raw + SB_LINE - 1) & ~(<uintptr_t>SB_LINE - 1))


cdef inline void contiguous_share(sb_loop_fn loop, sb_nt_copy_fn nt_copy,
                                  const elem_t* g,    # IN
                                  const elem_t* y,    # IN
                                  elem_t* out,        # OUT (may alias g or y)
                                  Py_ssize_t n, bint nt) noexcept nogil:
    """One thread's share of contiguous operands; ``nt`` writes ``out`` with
    non-temporal stores."""
    cdef double raw[BLOCK + LINE_DOUBLES]
    cdef double* buf = line_aligned(raw)
    cdef Py_ssize_t start = 0, m
    if not nt:
        start = sb_vector_start(g, y, out, sizeof(elem_t), n)
        loop(g, y, out, start)
        loop(g + start, y + start, out + start, n - start)
        return
    while start < n:
        # End blocks on 64-byte lines of out, so that only the share's first
        # and last lines are written with ordinary stores.
        m = min(<Py_ssize_t>((BLOCK * sizeof(double) - sb_line_misalignment(out + start))
                             // sizeof(elem_t)), n - start)
        loop(g + start, y + start, <elem_t*>buf, m)
        nt_copy(out + start, buf, m * sizeof(elem_t))
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


cdef inline void _widen(int src_kind, const char* src, Py_ssize_t step, int kind,
                        elem_t* buf, Py_ssize_t m) noexcept nogil:
    """``m`` elements of ``src``, a dtype that the compute dtype ``kind`` (of
    storage ``elem_t``) holds exactly, into ``buf``: the mixed-dtype loops
    convert while they gather, so that NumPy need not cast a whole input
    first (benchmarks/NOTES.md).  A double holds every source value
    exactly on the way, and float32 every narrow one."""
    cdef Py_ssize_t i
    cdef int src_storage = sb_kind_storage[src_kind]
    if elem_t is uint16_t or elem_t is uint8_t:
        # A narrower narrow dtype into a narrow computation (float8 into
        # bfloat16): exact through float32.
        for i in range(m):
            sb_narrow_from_f32(kind, sb_narrow_to_f32(src_kind, src + i * step), &buf[i])
    elif sb_kind_is_narrow(src_kind):
        for i in range(m):
            _put(buf, i, sb_narrow_to_f32(src_kind, src + i * step))
    elif src_storage == STORE_F32:
        for i in range(m):
            _put(buf, i, (<const float*>(src + i * step))[0])
    elif src_storage == STORE_F64:
        for i in range(m):
            _put(buf, i, (<const double*>(src + i * step))[0])
    elif elem_t is complex128_t and src_storage == STORE_C64:
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
                _widen(src_kind, src, 0, kind, buf, m)
            else:
                for i in range(m):
                    buf[i] = (<const elem_t*>src)[0]
            filled[0] = True
        return buf
    if src_kind != kind:
        _widen(src_kind, src, step, kind, buf, m)
        return buf
    if step == <Py_ssize_t>sizeof(elem_t) or m == 1:
        return <const elem_t*>src
    for i in range(m):
        buf[i] = (<const elem_t*>(src + i * step))[0]
    return buf


cdef inline void gathered_share(sb_loop_fn loop, int kind,
                                int g_kind, const char* g, Py_ssize_t gs,    # IN
                                int y_kind, const char* y, Py_ssize_t ys,    # IN
                                elem_t* out, Py_ssize_t os,                  # OUT
                                Py_ssize_t n, bint elementwise) noexcept nogil:
    """One thread's share when some operand is strided (steps in bytes) or
    of another dtype, or overlaps out: blocks gathered (and widened),
    computed by the contiguous loop, and scattered, in order.
    ``elementwise`` makes every block one element, read after the previous
    one's result is written (a reduction's operand is its own output)."""
    cdef double graw[BLOCK + LINE_DOUBLES]
    cdef double yraw[BLOCK + LINE_DOUBLES]
    cdef double oraw[BLOCK + LINE_DOUBLES]
    cdef double* gbuf = line_aligned(graw)
    cdef double* ybuf = line_aligned(yraw)
    cdef double* obuf = line_aligned(oraw)
    cdef Py_ssize_t block = BLOCK * sizeof(double) // sizeof(elem_t)
    cdef Py_ssize_t start = 0, m, i
    cdef bint g_filled = False, y_filled = False
    cdef bint* g_cache = &g_filled
    cdef bint* y_cache = &y_filled
    cdef bint out_direct = os == <Py_ssize_t>sizeof(elem_t)
    cdef const elem_t* gp
    cdef const elem_t* yp
    cdef elem_t* op
    if elementwise:
        block = 1
        g_cache = y_cache = NULL
    while start < n:
        m = min(block, n - start)
        gp = _gather(g_kind, g + start * gs, gs, kind, <elem_t*>gbuf, m, g_cache)
        yp = _gather(y_kind, y + start * ys, ys, kind, <elem_t*>ybuf, m, y_cache)
        op = (<elem_t*>(<char*>out + start * os)) if out_direct else <elem_t*>obuf
        loop(gp, yp, op, m)
        if not out_direct:
            for i in range(m):
                (<elem_t*>(<char*>out + (start + i) * os))[0] = op[i]
        start += m


cdef struct Call:
    # One kernel call, as compute() received it and decided it.
    sb_loop_fn loop          # the compute dtype's
    const sb_loops_t *loops  # its instruction set (nt_copy)
    int kind
    int g_kind
    const char *g
    Py_ssize_t gs
    int y_kind
    const char *y
    Py_ssize_t ys
    char *out
    Py_ssize_t os
    Py_ssize_t n
    # rows runs of n elements, each operand's next run *_row bytes on (1 for
    # a plain call; more for the frameworks' broadcast walks, _kernels.pyx's
    # compute_rows, whose rows split between threads like one run)
    Py_ssize_t rows
    Py_ssize_t g_row
    Py_ssize_t y_row
    Py_ssize_t o_row
    int nthreads
    sb_order order
    # Whether each thread times its chunks: part_ns[t] is thread t's time in
    # them (ns), part_n[t] their elements (0: it ran none), and cpu_ns[t]
    # its CPU time over them all (-1: not read; _split reads it when the
    # parts are long).
    bint timed
    long long part_ns[TIMED_PARTS]
    long long part_n[TIMED_PARTS]
    long long cpu_ns[TIMED_PARTS]


cdef inline void _piece(const Call* c, const char* g, const char* y, elem_t* o, Py_ssize_t m,
                        bint contiguous, bint nt) noexcept nogil:
    """m elements of one run, from g, y to o: by the contiguous loop where
    every operand is the compute dtype's and packed (``nt``: with streaming
    stores), else gathered."""
    if contiguous:
        contiguous_share(c.loop, c.loops.nt_copy, <const elem_t*>g, <const elem_t*>y,
                         o, m, nt)
    else:
        gathered_share(c.loop, c.kind, c.g_kind, g, c.gs, c.y_kind, y, c.ys,
                       o, c.os, m, c.order == SB_ELEMENTWISE)


cdef inline void _part(const Call* c, elem_t* out, Py_ssize_t start, Py_ssize_t stop,
                       bint nt) noexcept nogil:
    """Elements [start, stop) of the call, numbered run after run (c.rows
    runs of c.n; one for a plain call): the piece of each run they cover."""
    cdef Py_ssize_t n = c.n, size = sizeof(elem_t), m, r, col
    cdef bint elementwise = c.order == SB_ELEMENTWISE
    cdef bint contiguous = (c.g_kind == c.kind and c.y_kind == c.kind
                            and c.gs == size and c.ys == size and c.os == size
                            and not elementwise)
    if c.rows == 1:   # a plain call: one piece, no division (a small call's cost)
        _piece(c, c.g + start * c.gs, c.y + start * c.ys,
               <elem_t*>(<char*>out + start * c.os), stop - start, contiguous, nt)
        return
    r = start // n
    col = start - r * n
    while start < stop:
        m = min(n - col, stop - start)
        _piece(c, c.g + r * c.g_row + col * c.gs, c.y + r * c.y_row + col * c.ys,
               <elem_t*>(<char*>out + r * c.o_row + col * c.os), m, contiguous, nt)
        start += m
        r += 1
        col = 0


cdef inline void _split(const Call* c, elem_t* out) noexcept nogil:
    """Split the call's c.rows x c.n elements, numbered run after run, between
    c.nthreads threads (which the order allows and the output's size pays
    for), so that a thousand short broadcast rows (_kernels.pyx's
    compute_rows) share the threads as one long run would.

    Each thread has its own contiguous part, as a static split gives, but
    cut into chunks that are claimed: a thread claims its own part's chunks
    in order, then whatever chunks of the others' are still unclaimed.  On
    a busy machine a thread the scheduler preempts then holds up the call
    for its current chunk only, as the running ones take the rest of its
    part (with one busy process on 2 CPUs, a strided 1e7 call on 2 fixed
    parts took 1.06-1.38x its one-thread time; benchmarks/NOTES.md, 35).
    On an idle machine each thread keeps its own part, call after call, so
    a call whose operands fit the cores' caches finds its part in its own
    core's: OpenMP's dynamic schedule, which hands out chunks in the order
    threads ask, lost that, and a 1e5 float32 call took 1.2-1.4x its
    one-thread time instead of 0.65x.  A chunk is at least CHUNK_SHARES times the share
    that pays for waking a thread (_thresholds.py), so a claim (an atomic
    add, and two clock reads when timed) costs well under 1% of it."""
    cdef Py_ssize_t total = c.rows * c.n, part, chunk, start, stop, p_start, p_stop
    cdef long long began
    cdef long long claimed[CLAIM_PARTS * CLAIM_STRIDE + CLAIM_STRIDE]
    # the counters, from the first 64-byte line in the buffer
    cdef long long* claims = <long long*>((<uintptr_t>claimed + 63) & ~(<uintptr_t>63))
    cdef long long* part_ns = (<Call*>c).part_ns
    cdef long long* part_n = (<Call*>c).part_n
    cdef long long* cpu_ns = (<Call*>c).cpu_ns
    cdef long long cpu_began
    cdef bint timed = c.timed, cpu_timed
    cdef int nthreads = c.nthreads, parts, t, i, p
    # Streaming stores when each thread's part has nt_min bytes (one
    # thread: no division); a plain call's only, where the parts are long.
    cdef bint nt = c.rows == 1 and (total * sizeof(elem_t) if nthreads <= 1
                                    else total * sizeof(elem_t) // nthreads) >= sb_nt_min()
    if nthreads <= 1:
        _part(c, out, 0, total, nt)
        return
    parts = min(nthreads, <int>CLAIM_PARTS)
    part = (total + parts - 1) // parts
    part = (part + PART_ALIGN - 1) // PART_ALIGN * PART_ALIGN
    chunk = max(part // CHUNKS_PER_PART,
                CHUNK_SHARES * sb_parallel_share() // <Py_ssize_t>sizeof(elem_t))
    chunk = (min(chunk, part) + PART_ALIGN - 1) // PART_ALIGN * PART_ALIGN
    for i in range(parts):
        claims[i * CLAIM_STRIDE] = 0
    # CPU time too, where a thread's part is several chunks: its two reads
    # (system calls) then cost under 1% of the part.
    cpu_timed = timed and part > chunk
    for t in prange(nthreads, num_threads=nthreads, schedule='static'):
        cpu_began = sb_thread_cpu_ns() if cpu_timed else -1
        for i in range(parts):
            p = (t + i) % parts          # its own part first, then the others'
            p_start = p * part
            p_stop = min(total, p_start + part)
            while True:
                start = p_start + (sb_add_ll(claims + p * CLAIM_STRIDE, 1) - 1) * chunk
                if start >= p_stop:
                    break
                stop = min(p_stop, start + chunk)
                began = sb_now_ns() if timed else 0
                _part(c, out, start, stop, nt)
                if timed and t < TIMED_PARTS:
                    part_ns[t] = part_ns[t] + (sb_now_ns() - began)
                    part_n[t] = part_n[t] + (stop - start)
        if cpu_began >= 0 and t < TIMED_PARTS:
            cpu_ns[t] = sb_thread_cpu_ns() - cpu_began


cdef inline void run(void* arg) noexcept nogil:
    """The call, on the calling thread or the fork helper (_threads_fork.h): the
    fused kernel for the compute dtype's storage."""
    cdef const Call* c = <const Call*>arg
    cdef int storage = sb_kind_storage[c.kind]
    if storage == STORE_F32:
        _split(c, <float*>c.out)
    elif storage == STORE_F64:
        _split(c, <double*>c.out)
    elif storage == STORE_C64:
        _split(c, <complex64_t*>c.out)
    elif storage == STORE_C128:
        _split(c, <complex128_t*>c.out)
    elif storage == STORE_U16:
        _split(c, <uint16_t*>c.out)
    else:
        _split(c, <uint8_t*>c.out)
