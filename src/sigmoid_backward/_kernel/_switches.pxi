# Switches for tests and benchmarks, a part of _kernels.pyx, which includes it
# after the C declarations they use.

# ---- the load policy (_threads.h) ---------------------------------------------

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


# ---- the instruction set and the thresholds (_dispatch.h, _thresholds.h) -----

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


def vector_start_for(Py_ssize_t g_offset, Py_ssize_t y_offset, Py_ssize_t out_offset,
                     Py_ssize_t itemsize, Py_ssize_t n):
    """The elements a contiguous share computes before its vector loop, for
    operands at these byte offsets from a 64-byte line (_vector_start.h).
    For tests."""
    if itemsize <= 0 or n < 0:
        raise ValueError(f"vector_start_for: itemsize must be positive and n not negative, "
                         f"got itemsize {itemsize}, n {n}")
    return sb_vector_start(<const void*>g_offset, <const void*>y_offset,
                           <const void*>out_offset, itemsize, n)
