"""The contention bench (``bench --contention``): our default thread count
against ours on one thread, the NumPy expression and any peers, while the
CPUs are taken by loads the bench starts itself (issue 26).

A round times every contender once, in rotating order, each sample lasting
about ``_SAMPLE_SECONDS`` (at least one call); ratios are taken within a round, and the report
gives the mean and the WORST round, never the best: on a loaded machine a
parallel call's cost depends on how the processes' time slices interleave,
and one bad round in a few is the failure this bench exists to see.

Each load runs under each thread policy: ``adaptive`` (the default, the load
policy of _threads.h) and ``fixed`` (every default call on all CPUs, the
policy before it), so both come from one run.  A load that runs our own call
in another process runs it under the same policy as the measured one, as two
processes of one program would.

Also here: Dask, with an array of many chunks under the threaded scheduler
and a ``LocalCluster`` of single-threaded worker processes (when Dask is
installed), and with a no-op block function, which says how much of the
time is Dask's own.
"""
import contextlib
import importlib.util
import os
import subprocess
import sys
import time

import numpy as np

from .. import sigmoid_backward
from .._kernel import _kernels, _threads
from .timing import fmt_size, fmt_time, make_inputs

ROUNDS = 5
_SAMPLE_SECONDS = 0.2
# Seconds a load runs before the first round, so that it has started and
# the back-off has seen it.
_WARM_SECONDS = 0.5
_RAMP_SECONDS = 3.0
SIZES = (100_000, 1_000_000, 10_000_000)
DTYPES = ("float32", "bfloat16")

# Loads: name -> the Python code each of its processes runs (None: no load).
# {adaptive} is the policy the measured process runs under.
# Every load stops when the bench's process is gone, however it ended.
_SPIN = "import os\nparent = os.getppid()\nwhile os.getppid() == parent: pass"
_OURS = ("import numpy as np, sigmoid_backward as sb\n"
         "from sigmoid_backward._kernel import _kernels\n"
         "_kernels.set_adaptive({adaptive})\n"
         "g = np.full(1_000_000, 0.5, np.float32)\n"
         "y = np.full_like(g, 0.25); o = np.empty_like(g)\n"
         "import os\nparent = os.getppid()\n"
         "while os.getppid() == parent: sb.sigmoid_backward(g, y, out=o)")
_TORCH = ("import torch\n"
          "g = torch.full((1_000_000,), 0.5); y = torch.full_like(g, 0.25)\n"
          "import os\nparent = os.getppid()\n"
          "while os.getppid() == parent: torch.ops.aten.sigmoid_backward(g, y)")
LOADS = {
    "idle": [],
    "1 spinner": [_SPIN],
    "2 spinners": [_SPIN, _SPIN],
    "ours looping": [_OURS],
    "torch looping": [_TORCH],
}


@contextlib.contextmanager
def load(codes, adaptive):
    """Run each of ``codes`` in a process of its own for the block, and
    stop them after it (only these processes, by their handles)."""
    procs = [subprocess.Popen([sys.executable, "-c", code.format(adaptive=adaptive)],
                              stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL) for code in codes]
    try:
        time.sleep(_WARM_SECONDS if procs else 0)
        yield
    finally:
        for p in procs:
            p.kill()
        for p in procs:
            p.wait()


def _sample(fn, seconds):
    """Seconds per call of ``fn``, over calls lasting about ``seconds``."""
    calls, start = 0, time.perf_counter()
    while True:
        fn()
        calls += 1
        elapsed = time.perf_counter() - start
        if elapsed >= seconds:
            return elapsed / calls


def rounds(fns, count=ROUNDS, sample_seconds=_SAMPLE_SECONDS):
    """``{name: [seconds per call in round 0, 1, ...]}``: every round times
    each of ``fns`` once, for about ``sample_seconds``, in an order rotating
    from round to round."""
    names = list(fns)
    out: dict[str, list[float]] = {n: [] for n in names}
    with np.errstate(all="ignore"):
        for fn in fns.values():
            fn()   # first touch
        for r in range(count):
            k = r % len(names)
            for name in names[k:] + names[:k]:
                out[name].append(_sample(fns[name], sample_seconds))
    return out


def cases(sizes, dtypes):
    """``(label, g, y, out, call kwargs)`` of each case: contiguous calls
    at each size and dtype, and the buffered path at the largest float32
    size, a casting call (float32 operands, float64 computation) and a
    strided one."""
    for dtype in dtypes:
        for n in sizes:
            g, y = make_inputs(n, np.dtype(dtype) if dtype != "bfloat16" else _bf16())
            yield f"{dtype} {fmt_size(n)}", g, y, np.empty_like(g), {}
    if "float32" in dtypes:
        n = max(sizes)
        g, y = make_inputs(n, np.dtype(np.float32))
        yield f"cast {fmt_size(n)}", g, y, np.empty_like(g), {"dtype": np.float64}
        g2, y2 = make_inputs(2 * n, np.dtype(np.float32))
        yield f"strided {fmt_size(n)}", g2[::2], y2[::2], np.empty(n, np.float32), {}


def _bf16():
    from .._kernel import _dtypes
    return _dtypes.BY_NAME["bfloat16"]


def _contenders(g, y, out, kw, peers):
    # "1 thread" twice: the A/A pair, whose worst same-round ratio is what
    # the load alone does to two identical samples (the noise floor of the
    # worst-round target: with more runnable threads than CPUs, the
    # scheduler may leave one sample alone on a CPU and halve the next).
    found = {"default": lambda: sigmoid_backward(g, y, out=out, **kw),
             "1 thread": lambda: sigmoid_backward(g, y, out=out, num_threads=1, **kw)}
    found["1 thread A/A"] = found["1 thread"]
    found.update(peers(g, y, out) if peers and not kw else {})
    # NumPy's twin computes what the call computes: in the call's dtype (a
    # casting call's float64; g * (1 - y) * y in float32 was less work and
    # another result), into out.
    dt = kw.get("dtype")
    if dt is None:
        found["numpy"] = lambda: g * (1 - y) * y
    else:
        found["numpy"] = lambda: np.multiply(
            np.multiply(g, np.subtract(1, y, dtype=dt), dtype=dt), y, dtype=dt, out=out,
            casting="same_kind")
    return found


def report(sizes=SIZES, dtypes=DTYPES, loads=None, peers=None, count=ROUNDS,
           print_=print, sample_seconds=None):
    """Print the contention table: for each load and policy, each case's
    default time (mean and worst round), and per round its time over ours
    on one thread (target <= 1.3), the worst A/A ratio of two one-thread
    samples, and the NumPy expression's time over the default (target >=
    1.0), mean and worst; each sample ``sample_seconds`` long (default
    ``_SAMPLE_SECONDS``).  Returns ``{(load, policy, case): {contender:
    [round times]}}``."""
    loads = list(LOADS) if loads is None else list(loads)
    if "torch looping" in loads and importlib.util.find_spec("torch") is None:
        print_("torch looping: torch is not installed, skipped")
        loads.remove("torch looping")
    table = list(cases(sizes, dtypes))
    sample_seconds = _SAMPLE_SECONDS if sample_seconds is None else sample_seconds
    print_(f"{count} rounds, each sample {sample_seconds * 1e3:g} ms of calls; "
           "default/1t: our default time over ours on 1 thread in the same round (target "
           "<= 1.3); A/A: the worst round's ratio of two one-thread samples, either way up "
           "(the load's own noise); np/default: the NumPy expression's time over ours "
           "(target >= 1.0); mean and worst round")
    head = (f"{'load':<14} {'policy':<8} {'case':<15} {'default mean':>12} {'worst':>9} "
            f"{'1t mean':>9} {'default/1t mean':>15} {'worst':>6} {'A/A':>5} "
            f"{'np/default mean':>15} {'worst':>6}  peers/default mean, worst")
    print_(head)
    print_("-" * len(head))
    results = {}
    for name in loads:
        for adaptive in (True, False):
            policy = "adaptive" if adaptive else "fixed"
            was = _kernels.set_adaptive(adaptive)
            _kernels.reset_load()
            try:
                with load(LOADS[name], adaptive):
                    _warm(table)
                    for label, g, y, out, kw in table:
                        s = rounds(_contenders(g, y, out, kw, peers), count, sample_seconds)
                        results[(name, policy, label)] = s
                        print_(_row(name, policy, label, s), flush=True)
            finally:
                _kernels.set_adaptive(was)
    return results


def _warm(table, seconds=None):
    """Call the largest contiguous case for _RAMP_SECONDS first: the back-off
    learns of a new load from a few lost calls, each costing a time slice or
    more (measured on its own: the first 3e7 casting call after a busy
    process started took 1.4 s against 0.32 s on one thread; the next ones
    0.99-1.21x), and this bench measures the steady state."""
    label, g, y, out, kw = max((c for c in table if not c[4]), key=lambda c: c[1].size)
    start = time.perf_counter()
    while time.perf_counter() - start < (_RAMP_SECONDS if seconds is None else seconds):
        sigmoid_backward(g, y, out=out)


def aa_worst(one, again):
    """The worst round's ratio of two samples of the same call (round
    times), the larger over the smaller: what the load alone does to a
    worst-round ratio."""
    one, again = np.asarray(one), np.asarray(again)
    return float(np.max(np.maximum(one / again, again / one)))


def _row(load_name, policy, label, s):
    d, one, np_ = (np.array(s[k]) for k in ("default", "1 thread", "numpy"))
    vs1, vsnp, aa = d / one, np_ / d, aa_worst(one, s["1 thread A/A"])
    peers = [f"{k} {np.mean(np.array(v) / d):.2f}x {np.min(np.array(v) / d):.2f}x"
             for k, v in s.items() if k not in ("default", "1 thread", "1 thread A/A", "numpy")]
    return (f"{load_name:<14} {policy:<8} {label:<15} {fmt_time(d.mean()):>12} "
            f"{fmt_time(d.max()):>9} {fmt_time(one.mean()):>9} {vs1.mean():>15.2f} "
            f"{vs1.max():>6.2f} {aa:>5.2f} {vsnp.mean():>15.2f} {vsnp.min():>6.2f}  "
            f"{'; '.join(peers)}").rstrip()


# ---- Dask -------------------------------------------------------------------

def worker_threads():
    """A process's OMP_NUM_THREADS (None: unset) and our default thread
    count there: distributed's nanny sets OMP_NUM_THREADS=1 in its workers
    (its ``distributed.nanny.pre-spawn-environ``), which our default
    follows."""
    return os.environ.get("OMP_NUM_THREADS"), _threads.get_num_threads()


def _block_ours(g, y, adaptive=True, num_threads=None):
    _kernels.set_adaptive(adaptive)   # in a worker process too
    return sigmoid_backward(g, y, num_threads=num_threads)


def _block_numpy(g, y):
    return g * (1 - y) * y


def _block_noop(g, y):
    return g


def dask_report(n=100_000_000, chunk=1_000_000, count=ROUNDS, print_=print,
                schedulers=("threaded", "distributed")):
    """Print, for Dask's threaded scheduler (as many workers as CPUs) and a
    distributed LocalCluster (one single-threaded worker process per CPU),
    the time of ``map_blocks(f, g, y).sum()`` over ``n`` float32 in
    ``chunk``-element chunks, for f = ours (each policy), ours on one
    thread (twice: the A/A pair), the NumPy expression, and a no-op
    (Dask's own share); mean and worst of ``count`` rounds, under each of
    ``schedulers``.  Skipped when Dask is not installed."""
    try:
        import dask
        import dask.array as da
    except ImportError:
        print_("dask: not installed, skipped")
        return {}
    import functools
    cpus = os.cpu_count() or 1
    g = da.full(n, 0.5, chunks=chunk, dtype=np.float32)
    y = da.full(n, 0.25, chunks=chunk, dtype=np.float32)
    blocks = {"ours adaptive": functools.partial(_block_ours, adaptive=True),
              "ours fixed": functools.partial(_block_ours, adaptive=False),
              "ours 1 thread": functools.partial(_block_ours, num_threads=1),
              "ours 1 thread A/A": functools.partial(_block_ours, num_threads=1),
              "numpy": _block_numpy, "no-op": _block_noop}
    results = {}

    def run(scheduler_kw):
        graphs = {k: da.map_blocks(f, g, y, dtype=np.float32).sum() for k, f in blocks.items()}
        times: dict[str, list[float]] = {k: [] for k in graphs}
        # Two warm-up passes: after one, a cluster's first timed round was
        # still slow for whichever graphs it ran first (412 and 411 ms, the
        # others 330-388), and the rotation always starts with ours.
        for _ in range(2):
            for k in graphs:
                graphs[k].compute(**scheduler_kw)
        names = list(graphs)
        for r in range(count):
            j = r % len(names)
            for k in names[j:] + names[:j]:
                start = time.perf_counter()
                graphs[k].compute(**scheduler_kw)
                times[k].append(time.perf_counter() - start)
        return times

    print_(f"dask: map_blocks(f, g, y).sum(), {fmt_size(n)} float32 in {fmt_size(chunk)} "
           f"chunks, {count} rounds; time mean / worst; ratio to 'ours 1 thread' "
           f"(target <= 1.1) and numpy / ours (target >= 1.0), worst round; A/A: the "
           f"two one-thread graphs' worst round ratio, either way up (Dask's own noise)")
    if "threaded" in schedulers:
        with dask.config.set(scheduler="threads", num_workers=cpus):
            results["threaded"] = run({})
    if "distributed" in schedulers:
        try:
            from distributed import Client, LocalCluster
        except ImportError:
            print_("dask distributed: not installed, skipped")
        else:
            with LocalCluster(n_workers=cpus, threads_per_worker=1, processes=True,
                              dashboard_address=None) as cluster, Client(cluster) as client:
                results["distributed"] = run({})
                seen = sorted(set(client.run(worker_threads).values()))
            print_(f"  distributed: the workers' (OMP_NUM_THREADS, default threads): "
                   f"{', '.join(map(str, seen))}"
                   + ("; on one thread by default, every 'ours' row runs the same calls, "
                      "and their spread is Dask's" if all(t == 1 for _, t in seen) else ""))
    for sched, times in results.items():
        one = np.array(times["ours 1 thread"])
        for k, v in times.items():
            v = np.array(v)
            extra = ""
            if k == "ours 1 thread A/A":
                extra = f"  A/A worst {aa_worst(v, one):.2f}"
            elif k.startswith("ours") and k != "ours 1 thread":
                extra = (f"  /1t worst {np.max(v / one):.2f}  numpy/ours worst "
                         f"{np.min(np.array(times['numpy']) / v):.2f}")
            print_(f"  {sched:<12} {k:<17} {fmt_time(v.mean()):>9} {fmt_time(v.max()):>9}"
                   + extra, flush=True)
    return results
