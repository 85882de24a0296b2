"""Before/after ratios of each optimisation, measured in one run.

    python benchmarks/ablation.py [--baseline COMMIT] [--threads N]

Builds the baseline commit's extension in a temporary directory (git
archive + meson, as pip would), loads it beside the installed package under
the name ``sb_before``, and times, in alternation:

1. the whole call, baseline against now, on the issue's target cases;
2. each optimisation alone, switched at run time in the current build:
   the instruction set of the loops (use_isa), streaming stores
   (stream_min_bytes) and the C fast path (a ``dtype=`` argument sends a call
   down the general path).

Times are medians; ratios are medians over rounds of same-round ratios.
The numbers in benchmarks/NOTES.md come from this script.
"""
import argparse
import importlib
import pathlib
import subprocess
import sys
import tempfile

import numpy as np

import sigmoid_backward
from sigmoid_backward import _bench, _kernels

REPO = pathlib.Path(__file__).resolve().parent.parent


def build_baseline(commit, workdir):
    """The baseline's package, built in ``workdir`` and imported as sb_before."""
    src = workdir / "src"
    src.mkdir()
    archive = subprocess.run(["git", "-C", str(REPO), "archive", commit],
                             check=True, capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", str(src)], input=archive, check=True)
    subprocess.run(["meson", "setup", str(workdir / "build"), str(src), "-Dbuildtype=release"],
                   check=True, capture_output=True)
    subprocess.run(["ninja", "-C", str(workdir / "build")], check=True, capture_output=True)
    pkg = workdir / "sb_before"
    pkg.mkdir()
    for f in (src / "src" / "sigmoid_backward").glob("*.py"):
        (pkg / f.name).write_text(f.read_text())
    for f in (workdir / "build" / "src" / "sigmoid_backward").glob("*.so"):
        (pkg / f.name).write_bytes(f.read_bytes())
    # Cython modules also register under their compiled name: the current
    # package is imported first (at the top), so it keeps its own.
    sys.path.insert(0, str(workdir))
    return importlib.import_module("sb_before")


def _case(dtype, n):
    g, y = _bench.make_inputs(n, np.dtype(dtype))
    return g, y, np.empty_like(g)


def _ratio(s, a, b):
    """Median over rounds of a's sample over b's in the same round."""
    return float(np.median(np.array(s[a]) / np.array(s[b])))


def _line(label, s, a, b):
    print(f"  {label:<34} {a:>10} {_bench._fmt_time(np.median(s[a])):>9}   {b:>10} "
          f"{_bench._fmt_time(np.median(s[b])):>9}   {_ratio(s, a, b):5.2f}x", flush=True)


def overall(before, nthreads):
    print(f"1. whole call, out= given, {nthreads} threads: baseline -> now")
    cases = [("float32", 1_000), ("float32", 1_000_000), ("float32", 100_000_000),
             ("float64", 100_000_000), ("float16", 10_000_000), ("bfloat16", 10_000_000),
             ("complex64", 10_000_000), ("complex128", 10_000_000)]
    for name, n in cases:
        dtype = sigmoid_backward._dtypes.BFLOAT16 if name == "bfloat16" else np.dtype(name)
        g, y, out = _case(dtype, n)
        t = _bench.sample_rounds({
            "baseline": lambda: before.sigmoid_backward(g, y, out=out, num_threads=nthreads),
            "now": lambda: sigmoid_backward.sigmoid_backward(g, y, out=out, num_threads=nthreads),
        })
        _line(f"{name} n={_bench._fmt_size(n)}", t, "baseline", "now")
        del g, y, out


def isas():
    names = _kernels.available_isas()
    print(f"2. loops by instruction set, 1 thread, n=2e4 (in L2: compute-bound), "
          f"streaming off: {' / '.join(names)}")
    old = _kernels.stream_min_bytes(1 << 62)
    try:
        for dtype in sigmoid_backward._dtypes.SUPPORTED:
            g, y, out = _case(dtype, 20_000)

            def run(isa):
                _kernels.use_isa(isa)
                sigmoid_backward.sigmoid_backward(g, y, out=out, num_threads=1)
            t = _bench.sample_rounds({isa: (lambda isa=isa: run(isa)) for isa in names})
            print(f"  {str(dtype):<34} " + "   ".join(
                f"{isa} {_bench._fmt_time(np.median(t[isa])):>9} "
                f"({_ratio(t, 'portable', isa):4.2f}x)" for isa in names), flush=True)
    finally:
        _kernels.use_isa(None)
        _kernels.stream_min_bytes(old)


def streaming(nthreads):
    print(f"3. streaming stores, {nthreads} threads: ordinary stores -> streaming")
    old = _kernels.stream_min_bytes()
    try:
        for name, n in [("float32", 1_000_000), ("float32", 10_000_000),
                        ("float32", 100_000_000), ("float16", 10_000_000),
                        ("complex128", 10_000_000)]:
            g, y, out = _case(np.dtype(name), n)

            def run(threshold):
                _kernels.stream_min_bytes(threshold)
                sigmoid_backward.sigmoid_backward(g, y, out=out, num_threads=nthreads)
            t = _bench.sample_rounds({"ordinary": lambda: run(1 << 62),
                                      "streaming": lambda: run(0)})
            _line(f"{name} n={_bench._fmt_size(n)}", t, "ordinary", "streaming")
            del g, y, out
    finally:
        _kernels.stream_min_bytes(old)


def fast_path(before):
    print("4. per-call cost, float32: general path -> C fast path (and the baseline)")
    for n in (1, 1_000):
        g, y, out = _case(np.dtype(np.float32), n)
        t = _bench.sample_rounds({
            "baseline": lambda: before.sigmoid_backward(g, y, out=out),
            "general": lambda: sigmoid_backward.sigmoid_backward(g, y, out=out, dtype=np.float32),
            "fast": lambda: sigmoid_backward.sigmoid_backward(g, y, out=out),
            "np.add": lambda: np.add(g, y, out=out),
        })
        _line(f"n={n} out= (general: dtype= given)", t, "general", "fast")
        _line(f"n={n} out=", t, "baseline", "fast")
        _line(f"n={n} out=, against np.add", t, "fast", "np.add")


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--baseline", default="4972dfe", help="commit to compare with")
    p.add_argument("--threads", type=int, default=2)
    args = p.parse_args(argv)
    print(_bench.machine_line())
    with tempfile.TemporaryDirectory() as tmp:
        before = build_baseline(args.baseline, pathlib.Path(tmp))
        print(f"baseline {args.baseline} against the installed package "
              f"(kernels {_kernels.use_isa()}); medians of alternating calls\n")
        overall(before, args.threads)
        isas()
        streaming(args.threads)
        fast_path(before)


if __name__ == "__main__":
    main()
