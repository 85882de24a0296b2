"""``python -m sigmoid_backward bench``: sigmoid_backward side by side with
its peers: NumPy and the memory-bandwidth floor.  Same arrays, one process.

Contenders:

- ``floor``: a plain C loop that reads both inputs and writes the output
  with streaming stores and only a bitwise xor (_bandwidth_floor.pyx): the
  memory-bandwidth floor (at small sizes, the cost of draining streaming
  stores instead);
- ``numpy``: the NumPy expression ``g * (1 - y) * y`` (for complex
  ``g * conj((1 - y) * y)``), as users write it;
- ``np.add``: ``np.add(g, y, out=out)``, the cost of the simplest ufunc call
  (the target for small arrays).

It imports no other library to compare with: ``python
benchmarks/compare.py`` runs this report with PyTorch, JAX, numba and
numexpr as extra columns, through :func:`main`'s ``peers``.  The method is
timing.py's; GB/s counts both inputs read and the output written once.
"""
import argparse
import datetime
import math
import shlex
import sys
from collections.abc import Callable
from typing import NamedTuple

import numpy as np

from .. import OPENMP_ENABLED, sigmoid_backward
from .._kernel import _dtypes, _kernels, _threads
from .._tools._cli import ArgumentParser, command
from . import contention, small_calls, timing
from ._bandwidth_floor import bandwidth_floor
from .timing import compare, fmt_size, fmt_time, make_inputs, sample_rounds

DEFAULT_SIZES = (1_000, 100_000, 1_000_000, 10_000_000, 100_000_000)
DEFAULT_DTYPES = tuple(str(d) for d in _dtypes.SUPPORTED)
# Medians this far above the fastest sample mean the machine was busy: the
# row is flagged, since another process held a core or the memory bus for
# part of the run.
_NOISY = 1.5


class Peers(NamedTuple):
    """Extra contenders, from ``main``'s ``peers`` hook: their ``columns``
    in order, their ``versions`` for the header ("torch 2.13.0, jax not
    installed"), and ``contenders(g, y, out, spare_bytes)``, which returns
    ``{column: zero-argument call}`` for those that can run the case (one
    that needs arrays of its own only where they fit in ``spare_bytes``)."""
    columns: tuple[str, ...]
    versions: str
    contenders: Callable[..., dict[str, Callable[[], object]]]


_CONTENTION_LOADS = tuple(contention.LOADS)


def command_line(prog, argv):
    """The report's first line: the command as a shell would run it again
    (``--loads '2 spinners'``, quoted)."""
    return f"{prog} {shlex.join(argv)}".rstrip()
_NO_PEERS = Peers((), "", lambda g, y, out, spare_bytes: {})


def _parse_size(text):
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a size: {text!r}") from None
    if not value.is_integer() or value < 1:
        raise argparse.ArgumentTypeError(f"sizes are whole numbers >= 1, got {text!r}")
    return int(value)


def _parse_sample_ms(text):
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a time in ms: {text!r}") from None
    if not 0 < value <= 60_000:
        raise argparse.ArgumentTypeError(f"--sample-ms must be in (0, 60000], got {text!r}")
    return value


def _parse_dtype(text):
    if text not in _dtypes.BY_NAME:
        raise argparse.ArgumentTypeError(
            f"unsupported dtype {text!r}; choose from {', '.join(_dtypes.BY_NAME)}")
    return _dtypes.BY_NAME[text]


def _parser(prog, description):
    p = ArgumentParser(prog=prog, description=description)
    p.add_argument("--sizes", nargs="+", type=_parse_size, default=None,
                   metavar="N", help="element counts, e.g. 1e3 1e6 (default: "
                   f"{' '.join(fmt_size(n) for n in DEFAULT_SIZES)}; with --contention "
                   "1e5 1e6 1e7)")
    p.add_argument("--dtypes", nargs="+", type=_parse_dtype, default=None,
                   metavar="DTYPE", help=f"default: {' '.join(DEFAULT_DTYPES)}; with "
                   "--contention float32 bfloat16")
    p.add_argument("--threads", type=timing.parse_threads, default=None, metavar="N",
                   help="threads for every contender (default: sigmoid_backward's "
                        "default, get_num_threads())")
    p.add_argument("--max-gib", type=float, default=3.0, metavar="GIB",
                   help="skip cases whose three arrays need more memory than this, and "
                        "contenders whose own arrays would exceed it (default: %(default)s)")
    p.add_argument("--no-small-calls", dest="small_calls", action="store_false",
                   help="skip the table of small calls off the fast path")
    p.add_argument("--contention", action="store_true",
                   help="instead of the table: time the default thread count against one "
                        "thread and the NumPy expression under loads the bench starts "
                        "(busy processes, another process looping this call, Dask), each "
                        "under the load policy and without it, reporting the mean and the "
                        "worst round (bench/contention.py)")
    p.add_argument("--rounds", type=int, default=5, metavar="R",
                   help="rounds of the contention bench (default: %(default)s)")
    p.add_argument("--sample-ms", type=_parse_sample_ms, default=None, metavar="MS",
                   help="the length of each contention sample, in ms (default: 200); "
                        "longer samples average a busy machine's scheduler slices")
    p.add_argument("--loads", nargs="+", default=None, metavar="LOAD",
                   choices=(*_CONTENTION_LOADS, "dask"),
                   help="the contention bench's loads, quoted (default: all: "
                        f"{', '.join(repr(n) for n in (*_CONTENTION_LOADS, 'dask'))})")
    p.add_argument("--isa", choices=_kernels.available_isas(), default=None,
                   help="run our loops for this instruction set, one this CPU has "
                        "(default: the best); a slower CPU's rows on a newer one")
    p.add_argument("--plot", metavar="FILE.png",
                   help="draw throughput against size per dtype (needs matplotlib)")
    return p


def _contenders(g, y, out, nthreads, spare_bytes, peers):
    """Column name -> zero-argument call, for those that can run the case.
    The NumPy expression needs two temporaries of its own."""
    found = {"floor": lambda: bandwidth_floor(g, y, out, nthreads)}
    found.update(peers.contenders(g, y, out, spare_bytes))
    if 2 * g.nbytes <= spare_bytes and g.dtype.kind == "c":
        found["numpy"] = lambda: g * np.conj((1 - y) * y)
    elif 2 * g.nbytes <= spare_bytes:
        found["numpy"] = lambda: g * (1 - y) * y
    found["np.add"] = lambda: np.add(g, y, out=out)
    return found


def _case(dtype, n, nthreads, spare_bytes, peers):
    """Our time, the contenders' and the spread (timing.compare)."""
    g, y = make_inputs(n, dtype)
    out = np.empty_like(g)
    return compare(lambda: sigmoid_backward(g, y, out=out, num_threads=nthreads),
                   _contenders(g, y, out, nthreads, spare_bytes, peers))


def _header(columns):
    return " ".join([f"{'dtype':<10} {'n':>6} {'ours':>9} {'GB/s':>6}"]
                    + [f"{c:>17}" for c in columns])


def _row(dtype, n, ours, timed, spread, columns):
    cells = [f"{str(dtype):<10} {fmt_size(n):>6} {fmt_time(ours):>9} "
             f"{3 * n * dtype.itemsize / ours / 1e9:>6.1f}"]
    for c in columns:
        cells.append(f"{fmt_time(timed[c][0]):>9} {timed[c][1]:>6.2f}x" if c in timed
                     else f"{'-':>17}")
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
        parts.append(f"{name} {fmt_time(np.median(one))} -> {fmt_time(np.median(many))} "
                     f"({np.median(one / many):.2f}x)")
    return f"threads 1 -> {nthreads}, float32 n={fmt_size(n)}: {'; '.join(parts)}"


def _contention(prog, argv, args, peers):
    """The contention bench (bench/contention.py), with the peers' columns
    where ``peers`` gives any; --threads does not apply: the default thread
    count is what it measures."""
    extra = peers(_threads.get_num_threads()) if peers is not None else _NO_PEERS
    print("\n".join([
        command_line(prog, argv),
        f"{datetime.date.today().isoformat()}, {timing.machine_line()}",
        ", ".join(filter(None, (f"numpy {np.__version__}, kernels {_kernels.current_isa()}, "
                                f"default threads {_threads.get_num_threads()}",
                                extra.versions)))]), flush=True)
    loads = args.loads or [*contention.LOADS, "dask"]
    table_loads = [name for name in loads if name != "dask"]
    if table_loads:
        contention.report(
            sizes=args.sizes or contention.SIZES,
            dtypes=[str(d) for d in args.dtypes] if args.dtypes else contention.DTYPES,
            loads=table_loads,
            peers=(lambda g, y, out: extra.contenders(g, y, out, 0)) if extra.columns else None,
            count=args.rounds,
            sample_seconds=None if args.sample_ms is None else args.sample_ms / 1e3)
    if "dask" in loads:
        print()
        contention.dask_report(count=args.rounds)
    return 0


def plot(results, path, nthreads, columns):
    """Throughput (GB/s) against size, one panel per dtype, one line per
    contender of ``columns`` (and ours)."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    dtypes = list(dict.fromkeys(d for d, _, _, _ in results))
    cols = min(3, len(dtypes))
    rows = math.ceil(len(dtypes) / cols)
    fig, axes = plt.subplots(rows, cols, figsize=(5 * cols, 3.6 * rows), squeeze=False)
    for ax, dtype in zip(axes.flat, dtypes, strict=False):
        cases = [(n, {"sigmoid_backward": ours, **{c: t for c, (t, _) in timed.items()}})
                 for d, n, ours, timed in results if d == dtype]
        for name in ("sigmoid_backward", *columns):
            pts = [(n, 3 * n * dtype.itemsize / t[name] / 1e9) for n, t in cases if name in t]
            if pts:
                ax.plot(*zip(*pts, strict=True), marker="o", label=name,
                        linewidth=2.5 if name == "sigmoid_backward" else 1.2)
        ax.set(xscale="log", yscale="log", title=str(dtype), xlabel="elements",
               ylabel="GB/s (2 reads + 1 write)")
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
    call a NumPy user would make on the same inputs (small_calls.py)."""
    lines = [f"small calls, n={n:,} float32 (one thread: below the parallel threshold); "
             "ratio = reference time / ours (above 1: ours is faster; the goal is 1 or "
             "more against the NumPy expression, and 1.25 or more, 0.8x the time, for "
             "the fast path against np.add)",
             f"{'case':<24} {'ours':>9} {'reference':>10} {'ratio':>7}  reference is"]
    for name, (ours, reference) in small_calls.cases(n).items():
        s = sample_rounds({"ours": ours, "reference": reference})
        mine, theirs = np.array(s["ours"]), np.array(s["reference"])
        what = "np.add(g, y, out=out)" if "out=" in name and "float16" not in name \
            else "the NumPy expression"
        lines.append(f"{name:<24} {fmt_time(np.median(mine)):>9} "
                     f"{fmt_time(np.median(theirs)):>10} {np.median(theirs / mine):>6.2f}x  "
                     f"{what}")
    return "\n".join(lines)


def main(argv, peers=None, prog=None):
    """Run the bench on ``argv`` (``--help`` lists them) and print its
    report; return the exit status (2: ``--plot`` without matplotlib).

    ``peers(nthreads)``, when given, returns the :class:`Peers` to add
    after ``floor``; it is called once, after parsing and before any timing
    (JAX must know its thread count before it is imported).  ``prog`` names
    the command in the usage and the report's first line (by default, as the
    user typed it: _cli.command).
    """
    prog = command("bench") if prog is None else prog
    description = "Time sigmoid_backward against the memory-bandwidth floor and NumPy" + (
        ", and other libraries where installed." if peers else ".")
    args = _parser(prog, description).parse_args(argv)
    if args.rounds < 1:
        print(f"{prog}: error: --rounds must be >= 1, got {args.rounds}", file=sys.stderr)
        return 2
    if args.plot is not None:
        try:
            import matplotlib  # noqa: F401
        except ImportError:
            print(f"{prog}: error: --plot needs matplotlib, which is not installed "
                  "(pip install matplotlib)", file=sys.stderr)
            return 2
    with _kernels.settings(isa=args.isa):
        return _run(prog, argv, args, peers)


def _run(prog, argv, args, peers):
    """The report ``main`` asked for, with the loops it chose in use."""
    if args.contention:
        return _contention(prog, argv, args, peers)
    args.sizes = list(DEFAULT_SIZES) if args.sizes is None else args.sizes
    args.dtypes = list(_dtypes.SUPPORTED) if args.dtypes is None else args.dtypes
    nthreads = args.threads or _threads.get_num_threads()
    extra = peers(nthreads) if peers is not None else _NO_PEERS
    columns = ("floor", *extra.columns, "numpy", "np.add")
    budget = args.max_gib * 2**30
    versions = (f"numpy {np.__version__}, kernels {_kernels.current_isa()}, "
                f"OpenMP {'on' if OPENMP_ENABLED else 'OFF'}")
    print("\n".join([
        command_line(prog, argv),
        f"{datetime.date.today().isoformat()}, {timing.machine_line()}",
        f"{', '.join(filter(None, (versions, extra.versions)))}; "
        f"{nthreads} thread(s) for every contender",
        "ours = sigmoid_backward(g, y, out=out), median over its pairs; other columns: "
        "their median time, and the median of their time / ours over rounds "
        "alternating with ours alone (above 1: ours is faster)", "",
        _header(columns), "-" * len(_header(columns))]), flush=True)
    results, noisy = [], False
    for dtype in args.dtypes:
        for n in args.sizes:
            nbytes = 3 * n * dtype.itemsize
            if nbytes > budget:
                print(f"{str(dtype):<10} {fmt_size(n):>6} skipped: needs "
                      f"{nbytes / 2**30:.1f} GiB > --max-gib {args.max_gib}", flush=True)
                continue
            ours, timed, spread = _case(dtype, n, nthreads, budget - nbytes, extra)
            results.append((dtype, n, ours, timed))
            noisy = noisy or spread > _NOISY
            print(_row(dtype, n, ours, timed, spread, columns), flush=True)
    if args.small_calls:
        print("\n" + _small_calls_table(), flush=True)
    tail = []
    big = max(args.sizes)
    if nthreads > 1 and np.dtype(np.float32) in args.dtypes and 3 * 4 * big <= budget:
        tail.append(_scaling(nthreads, big))
    if args.plot is not None and results:
        plot(results, args.plot, nthreads, columns)
        tail.append(f"plot: {args.plot}")
    if noisy:
        tail.append(f"noisy: in the flagged rows some median sample is more than {_NOISY}x "
                    "the fastest, as when another process holds a core or the memory "
                    "bus; run again on a quiet machine")
    if tail:
        print("\n" + "\n".join(tail))
    return 0
