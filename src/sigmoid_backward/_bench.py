"""``python -m sigmoid_backward bench``: sigmoid_backward side by side with
its peers, in one process, on the same arrays.

Contenders, each only when installed:

- ``floor``: a plain C loop that reads both inputs and writes the output
  with streaming stores and only a bitwise xor (_bandwidth_floor.pyx): the
  memory-bandwidth floor (at small sizes, the cost of draining streaming
  stores instead);
- ``torch``: ``torch.ops.aten.sigmoid_backward.grad_input(g, y,
  grad_input=out)`` on tensors that share the arrays' memory;
- ``jax``: ``jax.jit`` of the formula on arrays put on the CPU device once,
  with ``jax_enable_x64`` (otherwise float64 silently becomes float32);
  each call returns a new array, as JAX arrays are immutable;
- ``numba``: a ``numba.vectorize(target='parallel')`` ufunc of the formula,
  computed in the dtype, into ``out`` (float32, float64 and complex only:
  numba has no float16 or bfloat16 arithmetic);
- ``numexpr``: ``numexpr.evaluate`` of the formula into ``out``;
- ``numpy``: the NumPy expression ``g * (1 - y) * y`` (for complex
  ``g * conj((1 - y) * y)``), as users write it;
- ``np.add``: ``np.add(g, y, out=out)``, the cost of the simplest ufunc call
  (the target for small arrays).

Method: outputs are allocated once per case; every contender gets the same
thread count (``torch.set_num_threads``, ``numba.set_num_threads``,
``numexpr.set_num_threads``; NumPy has one thread; JAX's CPU client picks
its own, and is held to one with ``--threads 1`` when the bench imports it).
Each peer is timed against sigmoid_backward alone:
calls of the two alternate, so that no third library's caches or spinning
threads fall on one side only, and the peer's ratio is the median over
rounds of its time over ours in the same round, so that a shared machine's
changing state falls on both.  A sample times enough back-to-back calls to
last about 50 µs.  GB/s counts the bytes a call must move: both inputs read
and the output written once.  Ratios are the peer's time divided by ours:
above 1 means sigmoid_backward is faster.
"""
import argparse
import datetime
import math
import os
import platform
import sys
import time

import numpy as np

from . import OPENMP_ENABLED, _dtypes, _kernels, _small_calls, _threads, sigmoid_backward
from ._bandwidth_floor import bandwidth_floor

DEFAULT_SIZES = (1_000, 100_000, 1_000_000, 10_000_000, 100_000_000)
DEFAULT_DTYPES = tuple(str(d) for d in _dtypes.SUPPORTED)
PEERS = ("floor", "torch", "jax", "numba", "numexpr", "numpy", "np.add")

# Seconds of samples per contender and case, and the bounds on their count.
_TARGET_SECONDS = 0.3
_MIN_SAMPLES = 7
_MAX_SAMPLES = 301
# A sample repeats the call until it lasts this long, so that the clock's
# resolution and the loop do not count.
_SAMPLE_SECONDS = 50e-6


def _parse_size(text):
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a size: {text!r}") from None
    if not value.is_integer() or value < 1:
        raise argparse.ArgumentTypeError(f"sizes are whole numbers >= 1, got {text!r}")
    return int(value)


def _parse_dtype(text):
    names = {str(d): d for d in _dtypes.SUPPORTED}
    if text not in names:
        raise argparse.ArgumentTypeError(
            f"unsupported dtype {text!r}; choose from {', '.join(names)}")
    return names[text]


def _parse_threads(text):
    try:
        return _threads.check(int(text), "--threads")
    except (TypeError, ValueError) as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _parser():
    p = argparse.ArgumentParser(
        prog="python -m sigmoid_backward bench",
        description="Time sigmoid_backward against the memory-bandwidth floor, "
                    "PyTorch, JAX, numba, numexpr and NumPy (each when installed).")
    p.add_argument("--sizes", nargs="+", type=_parse_size, default=list(DEFAULT_SIZES),
                   metavar="N", help="element counts, e.g. 1e3 1e6 (default: %(default)s)")
    p.add_argument("--dtypes", nargs="+", type=_parse_dtype, default=list(_dtypes.SUPPORTED),
                   metavar="DTYPE", help=f"default: {' '.join(DEFAULT_DTYPES)}")
    p.add_argument("--threads", type=_parse_threads, default=None, metavar="N",
                   help="threads for every contender (default: sigmoid_backward's "
                        "default, get_num_threads())")
    p.add_argument("--max-gib", type=float, default=3.0, metavar="GIB",
                   help="skip cases whose three arrays need more memory than this, and "
                        "the NumPy expression and JAX where their own arrays would "
                        "exceed it (default: %(default)s)")
    p.add_argument("--no-small-calls", dest="small_calls", action="store_false",
                   help="skip the table of small calls off the fast path")
    p.add_argument("--plot", metavar="FILE.png",
                   help="draw throughput against size per dtype (needs matplotlib)")
    return p


# ---- the contenders ---------------------------------------------------------

def _import(name):
    try:
        return __import__(name)
    except ImportError:
        return None


# XLA's CPU client runs a program on its own threads; these flags hold it to
# one (they must be set before jax is imported).
_XLA_ONE_THREAD = "--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1"


def _import_jax(nthreads):
    """jax with 64-bit types enabled, or None."""
    if nthreads == 1 and "jax" not in sys.modules:
        flags = os.environ.get("XLA_FLAGS", "")
        if _XLA_ONE_THREAD not in flags:
            os.environ["XLA_FLAGS"] = f"{flags} {_XLA_ONE_THREAD}".strip()
    jax = _import("jax")
    if jax is not None:
        jax.config.update("jax_enable_x64", True)
    return jax


def _import_numba(nthreads):
    numba = _import("numba")
    if numba is not None:
        numba.set_num_threads(min(nthreads, numba.config.NUMBA_NUM_THREADS))
    return numba


def _torch_contender(torch, g, y, out):
    def tensor(a):
        if a.dtype == _dtypes.BFLOAT16:  # torch.from_numpy does not know ml_dtypes
            return torch.from_numpy(a.view(np.int16)).view(torch.bfloat16)
        return torch.from_numpy(a)
    tg, ty, to = tensor(g), tensor(y), tensor(out)
    op = torch.ops.aten.sigmoid_backward.grad_input
    return lambda: op(tg, ty, grad_input=to)


def _jax_contender(jax, g, y):
    import jax.numpy as jnp
    if g.dtype.kind == "c":
        fn = jax.jit(lambda g, y: g * jnp.conj((1 - y) * y))
    else:
        fn = jax.jit(lambda g, y: g * (1 - y) * y)
    jg, jy = jax.device_put(g), jax.device_put(y)
    if fn(jg, jy).dtype != g.dtype:  # jax_enable_x64 did not take
        return None
    return lambda: fn(jg, jy).block_until_ready()


_NUMBA_UFUNCS: dict[np.dtype, object] = {}


def numba_ufunc(numba, dtype):
    """A parallel numba ufunc of the formula for ``dtype``, computed in the
    dtype (its own 1, so that ``1 - y`` does not promote), or None where
    numba cannot compile it (float16, bfloat16)."""
    if dtype not in _NUMBA_UFUNCS:
        one = dtype.type(1)
        if dtype.kind == "c":
            def kernel(g, y):
                return g * np.conj((one - y) * y)
        else:
            def kernel(g, y):
                return g * (one - y) * y
        try:
            t = numba.from_dtype(dtype)
            _NUMBA_UFUNCS[dtype] = numba.vectorize([t(t, t)], target="parallel")(kernel)
        except (NotImplementedError, KeyError, TypeError, numba.core.errors.NumbaError):
            _NUMBA_UFUNCS[dtype] = None
    return _NUMBA_UFUNCS[dtype]


def _numba_contender(numba, g, y, out):
    fn = numba_ufunc(numba, g.dtype)
    if fn is None:
        return None
    return lambda: fn(g, y, out=out)


def _numexpr_contender(numexpr, g, y, out):
    expr = "g * conj((1 - y) * y)" if g.dtype.kind == "c" else "g * (1 - y) * y"
    env = {"g": g, "y": y}
    try:  # numexpr cannot take ml_dtypes' bfloat16
        numexpr.evaluate(expr, local_dict=env, out=out)
    except (TypeError, ValueError, NotImplementedError, KeyError):
        return None
    return lambda: numexpr.evaluate(expr, local_dict=env, out=out)


def _numpy_contender(g, y):
    if g.dtype.kind == "c":
        return lambda: g * np.conj((1 - y) * y)
    return lambda: g * (1 - y) * y


def _peers(g, y, out, nthreads, modules, spare_bytes):
    """name -> zero-argument callable, for the peers that can run.  Those
    that need arrays of their own run only where they fit in
    ``spare_bytes``: the NumPy expression two temporaries, JAX copies of
    both inputs and a new output."""
    found = {"floor": lambda: bandwidth_floor(g, y, out, nthreads)}
    if modules.get("torch") is not None:
        found["torch"] = _torch_contender(modules["torch"], g, y, out)
    if modules.get("jax") is not None and 3 * g.nbytes <= spare_bytes:
        fn = _jax_contender(modules["jax"], g, y)
        if fn is not None:
            found["jax"] = fn
    if modules.get("numba") is not None:
        fn = _numba_contender(modules["numba"], g, y, out)
        if fn is not None:
            found["numba"] = fn
    if modules.get("numexpr") is not None:
        fn = _numexpr_contender(modules["numexpr"], g, y, out)
        if fn is not None:
            found["numexpr"] = fn
    if 2 * g.nbytes <= spare_bytes:
        found["numpy"] = _numpy_contender(g, y)
    found["np.add"] = lambda: np.add(g, y, out=out)
    return found


# ---- timing -----------------------------------------------------------------

def _sample(fn, calls):
    start = time.perf_counter()
    for _ in range(calls):
        fn()
    return (time.perf_counter() - start) / calls


def sample_rounds(fns, target_seconds=_TARGET_SECONDS):
    """Seconds per call of each callable in ``fns`` (a dict), one sample per
    round: ``{name: [sample of round 0, round 1, ...]}``.

    Each round times every callable once, in an order that rotates from
    round to round, so that drifting machine load and cache state fall on
    all of them alike.
    """
    names = list(fns)
    calls, per_call = {}, {}
    with np.errstate(all="ignore"):
        for name in names:
            fns[name]()  # warm up: first-touch page faults, imports, plans
            first = _sample(fns[name], 1)
            calls[name] = max(1, math.ceil(_SAMPLE_SECONDS / max(first, 1e-9)))
            per_call[name] = _sample(fns[name], calls[name])
        round_seconds = sum(per_call[n] * calls[n] for n in names)
        rounds = int(min(_MAX_SAMPLES, max(_MIN_SAMPLES, target_seconds * len(names)
                                           / max(round_seconds, 1e-9))))
        samples: dict[object, list[float]] = {name: [] for name in names}
        for r in range(rounds):
            k = r % len(names)
            for name in names[k:] + names[:k]:
                samples[name].append(_sample(fns[name], calls[name]))
    return samples


def compare(ours, peers, target_seconds=_TARGET_SECONDS):
    """``(our time, {peer: (peer time, ratio)}, spread)``.

    Each peer is sampled in alternation with ``ours`` alone.  Its ratio is
    the median over rounds of its sample divided by ours in the same round:
    neighbouring samples share the machine's state, so a memory bus or core
    that another process takes for a while moves both.  Times are medians;
    ours is the median of our medians over the pairs.  ``spread`` is the
    largest median / fastest sample of any set (1.0: perfectly steady).
    """
    ours_times, result, worst = [], {}, 1.0
    for name, fn in peers.items():
        s = sample_rounds({"ours": ours, name: fn}, target_seconds)
        mine, theirs = np.array(s["ours"]), np.array(s[name])
        ours_times.append(np.median(mine))
        result[name] = (float(np.median(theirs)), float(np.median(theirs / mine)))
        worst = max(worst, np.median(mine) / mine.min(), np.median(theirs) / theirs.min())
    return float(np.median(ours_times)), result, float(worst)


# ---- data -------------------------------------------------------------------

def make_inputs(n, dtype, seed=0):
    """Seeded ``(grad_output, output)``: standard normal gradients, sigmoid
    outputs uniform in [0, 1) (complex: both parts)."""
    rng = np.random.default_rng(seed)
    if dtype.kind == "c":
        part = np.float32 if dtype == np.complex64 else np.float64
        g = np.empty(n, dtype)
        g.real = rng.standard_normal(n, dtype=part)
        g.imag = rng.standard_normal(n, dtype=part)
        y = np.empty(n, dtype)
        y.real = rng.random(n, dtype=part)
        y.imag = rng.random(n, dtype=part)
        return g, y
    work = np.float64 if dtype == np.float64 else np.float32
    return (np.asarray(rng.standard_normal(n, dtype=work)).astype(dtype, copy=False),
            np.asarray(rng.random(n, dtype=work)).astype(dtype, copy=False))


# ---- report -----------------------------------------------------------------

def _fmt_time(seconds):
    for unit, scale in (("s", 1), ("ms", 1e-3), ("us", 1e-6)):
        if seconds >= scale:
            return f"{seconds / scale:.3g} {unit}"
    return f"{seconds * 1e9:.3g} ns"


def _fmt_size(n):
    exp = int(math.log10(n))
    return f"1e{exp}" if 10 ** exp == n else f"{n:,}"


def machine_line():
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    return (f"{cpu}, {os.cpu_count()} CPUs, {platform.system()} {platform.release()}, "
            f"Python {platform.python_version()}")


def _versions(modules):
    parts = [f"numpy {np.__version__}", f"kernels {_kernels.use_isa()}",
             f"OpenMP {'on' if OPENMP_ENABLED else 'OFF'}"]
    for name, mod in modules.items():
        parts.append(f"{name} {mod.__version__}" if mod is not None else f"{name} not installed")
    return ", ".join(parts)


def _header():
    cols = [f"{'dtype':<10} {'n':>6} {'ours':>9} {'GB/s':>6}"]
    cols += [f"{p:>17}" for p in PEERS]
    return " ".join(cols)


# Medians this far above the fastest sample mean the machine was busy: the
# row is flagged, since another process held a core or the memory bus for
# part of the run.
_NOISY = 1.5


def _row(dtype, n, ours, peers, spread):
    nbytes = 3 * n * dtype.itemsize
    cells = [f"{str(dtype):<10} {_fmt_size(n):>6} {_fmt_time(ours):>9} "
             f"{nbytes / ours / 1e9:>6.1f}"]
    for p in PEERS:
        if p in peers:
            cells.append(f"{_fmt_time(peers[p][0]):>9} {peers[p][1]:>6.2f}x")
        else:
            cells.append(f"{'-':>17}")
    if spread > _NOISY:
        cells.append(f" noisy ({spread:.1f}x)")
    return " ".join(cells)


def _scaling(nthreads, n):
    """float32 at ``n``: 1 thread against ``nthreads``, ours and the floor's
    (times are medians, speed-ups medians of same-round ratios)."""
    g, y = make_inputs(n, np.dtype(np.float32))
    out = np.empty_like(g)
    parts = []
    for name, run in (("sigmoid_backward",
                       lambda k: sigmoid_backward(g, y, out=out, num_threads=k)),
                      ("floor", lambda k: bandwidth_floor(g, y, out, k))):
        s = sample_rounds({1: lambda: run(1), nthreads: lambda: run(nthreads)})
        one, many = np.array(s[1]), np.array(s[nthreads])
        parts.append(f"{name} {_fmt_time(np.median(one))} -> {_fmt_time(np.median(many))} "
                     f"({np.median(one / many):.2f}x)")
    return f"threads 1 -> {nthreads}, float32 n={_fmt_size(n)}: {'; '.join(parts)}"


def plot(results, path, nthreads):
    """Throughput (GB/s) against size, one panel per dtype."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    dtypes = list(dict.fromkeys(d for d, _, _, _ in results))
    cols = min(3, len(dtypes))
    rows = math.ceil(len(dtypes) / cols)
    fig, axes = plt.subplots(rows, cols, figsize=(5 * cols, 3.6 * rows), squeeze=False)
    for ax, dtype in zip(axes.flat, dtypes, strict=False):
        cases = [(n, {"sigmoid_backward": ours, **{p: t for p, (t, _) in peers.items()}})
                 for d, n, ours, peers in results if d == dtype]
        for name in ("sigmoid_backward",) + PEERS:
            pts = [(n, 3 * n * dtype.itemsize / t[name] / 1e9) for n, t in cases if name in t]
            if pts:
                ax.plot(*zip(*pts, strict=True), marker="o", label=name,
                        linewidth=2.5 if name == "sigmoid_backward" else 1.2)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_title(str(dtype))
        ax.set_xlabel("elements")
        ax.set_ylabel("GB/s (2 reads + 1 write)")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize="small")
    for ax in list(axes.flat)[len(dtypes):]:
        ax.set_visible(False)
    fig.suptitle(f"sigmoid_backward vs peers, {nthreads} thread(s)")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def _small_calls_table(n=1_000):
    """Calls the ufunc machinery serves, and the fast path, each against the
    call a NumPy user would make on the same inputs (_small_calls.py)."""
    lines = [f"small calls, n={n:,} float32 (one thread: below the parallel threshold); "
             "ratio = reference time / ours (above 1: ours is faster; the goal is 1 or "
             "more against the NumPy expression, and 1.25 or more, 0.8x the time, for "
             "the fast path against np.add)",
             f"{'case':<24} {'ours':>9} {'reference':>10} {'ratio':>7}  reference is"]
    for name, (ours, reference) in _small_calls.cases(n).items():
        s = sample_rounds({"ours": ours, "reference": reference})
        mine, theirs = np.array(s["ours"]), np.array(s["reference"])
        what = "np.add(g, y, out=out)" if "out=" in name and "float16" not in name \
            else "the NumPy expression"
        lines.append(f"{name:<24} {_fmt_time(np.median(mine)):>9} "
                     f"{_fmt_time(np.median(theirs)):>10} {np.median(theirs / mine):>6.2f}x  "
                     f"{what}")
    return "\n".join(lines)


def main(argv):
    args = _parser().parse_args(argv)
    if args.plot is not None and _import("matplotlib") is None:
        print("bench: --plot needs matplotlib, which is not installed "
              "(pip install matplotlib)", file=sys.stderr)
        return 2
    nthreads = args.threads or _threads.get_num_threads()
    modules = {"torch": _import("torch"), "jax": _import_jax(nthreads),
               "numba": _import_numba(nthreads), "numexpr": _import("numexpr")}
    if modules["torch"] is not None:
        modules["torch"].set_num_threads(nthreads)
    if modules["numexpr"] is not None:
        modules["numexpr"].set_num_threads(nthreads)
    budget = args.max_gib * 2**30
    lines = [f"python -m sigmoid_backward bench {' '.join(argv)}".rstrip(),
             f"{datetime.date.today().isoformat()}, {machine_line()}",
             f"{_versions(modules)}; {nthreads} thread(s) for every contender",
             "ours = sigmoid_backward(g, y, out=out), median over its pairs; peer columns: "
             "the peer's median time, and the median of peer time / ours over rounds "
             "alternating with ours alone (above 1: ours is faster)", ""]
    print("\n".join(lines), flush=True)
    header = _header()
    print(header)
    print("-" * len(header), flush=True)
    results, noisy = [], False
    for dtype in args.dtypes:
        for n in args.sizes:
            nbytes = n * dtype.itemsize
            if 3 * nbytes > budget:
                print(f"{str(dtype):<10} {_fmt_size(n):>6} skipped: needs "
                      f"{3 * nbytes / 2**30:.1f} GiB > --max-gib {args.max_gib}", flush=True)
                continue
            g, y = make_inputs(n, dtype)
            out = np.empty_like(g)
            ours, peers, spread = compare(
                lambda: sigmoid_backward(g, y, out=out, num_threads=nthreads),
                _peers(g, y, out, nthreads, modules, spare_bytes=budget - 3 * nbytes))
            results.append((dtype, n, ours, peers))
            noisy = noisy or spread > _NOISY
            print(_row(dtype, n, ours, peers, spread), flush=True)
            g = y = out = None   # free them before the next case
    if args.small_calls:
        print("\n" + _small_calls_table(), flush=True)
    tail = []
    big = max(args.sizes)
    if nthreads > 1 and np.dtype(np.float32) in args.dtypes and 3 * 4 * big <= budget:
        tail.append(_scaling(nthreads, big))
    if args.plot is not None and results:
        plot(results, args.plot, nthreads)
        tail.append(f"plot: {args.plot}")
    if noisy:
        tail.append(f"noisy: in the flagged rows some median sample is more than {_NOISY}x "
                    "the fastest, as when another process holds a core or the memory "
                    "bus; run again on a quiet machine")
    if tail:
        print("\n" + "\n".join(tail))
    return 0
