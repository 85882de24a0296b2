"""Before/after ratios of each optimisation, measured in one run.

    python benchmarks/ablation.py [--baseline COMMIT] [--threads N]
                                  [--sections NAME ...]

Builds the baseline commit's extension in a temporary directory (git
archive + meson, as pip would), loads it beside the installed package under
the name ``sb_before``, and times, in alternation:

1. ``overall``: the whole call, baseline against now, on the target cases
   of the first optimisation round;
2. each optimisation alone, switched at run time in the current build:
   ``isas``, the instruction set of the loops (use_isa); ``streaming``,
   streaming stores (set_thresholds); ``fast_path``, the C fast path (a
   ``dtype=`` argument sends a call down the general path);
3. ``rows``: every dtype at every size of the bench, baseline against now
   (with ``--baseline`` set to the commit before a change: did any row get
   slower?);
4. ``bf16``: bfloat16 against float16 in cache, one thread, per ISA, and
   each against PyTorch when it is installed;
5. ``thresholds``: the thresholds derived from the caches against the
   constants they replaced, around both of them, alone and with a reader
   of the output;
6. ``small``: the small calls off the fast path (``bench/small_calls.py``),
   baseline against now.

Times are medians; ratios are medians over rounds of same-round ratios.
The numbers in benchmarks/NOTES.md come from this script.
"""
import argparse
import importlib
import json
import pathlib
import re
import subprocess
import sys
import tempfile

import numpy as np

import sigmoid_backward
from benchmarks import peers  # benchmarks/benchmarks/peers.py: this folder is on sys.path
from sigmoid_backward._kernel import _kernels
from sigmoid_backward.bench import _report, small_calls
from sigmoid_backward.bench.timing import (
    fmt_size,
    fmt_time,
    machine_line,
    make_inputs,
    sample_rounds,
)

REPO = pathlib.Path(__file__).resolve().parent.parent


# The baseline is built as a package of its own name, so that nothing of it
# resolves to the current package: Cython modules that cimport each other
# (``from sigmoid_backward._kernel._kernels cimport ...``) look the other module up
# by its absolute name at import, and would otherwise run the current loops.
_IMPORT = re.compile(r"^(\s*(?:from|import|cimport)\s+)sigmoid_backward\b", re.MULTILINE)


def _rename_package(root):
    """Move src/sigmoid_backward to src/sb_before and point the build and
    every import of the package at the new name."""
    (root / "src" / "sigmoid_backward").rename(root / "src" / "sb_before")
    for f in root.rglob("meson.build"):
        f.write_text(f.read_text().replace("src/sigmoid_backward", "src/sb_before")
                     .replace("'sigmoid_backward", "'sb_before"))
    for pattern in ("*.py", "*.pyx", "*.pxd"):
        for f in (root / "src" / "sb_before").rglob(pattern):
            f.write_text(_IMPORT.sub(r"\1sb_before", f.read_text()))


def build_baseline(commit, workdir):
    """The baseline's package, built in ``workdir`` under the name sb_before."""
    src = workdir / "src"
    src.mkdir()
    archive = subprocess.run(["git", "-C", str(REPO), "archive", commit],
                             check=True, capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", str(src)], input=archive, check=True)
    _rename_package(src)
    subprocess.run(["meson", "setup", str(workdir / "build"), str(src), "-Dbuildtype=release"],
                   check=True, capture_output=True)
    subprocess.run(["ninja", "-C", str(workdir / "build")], check=True, capture_output=True)
    pkg = workdir / "sb_before"
    pkg.mkdir()
    # Every file the build would install into the package, at its place
    # (meson's own map: the layer folders' modules are built beside their
    # meson.build but installed into _kernel/, _numpy/, ...).
    installed = json.loads(subprocess.run(
        ["meson", "introspect", "--installed", str(workdir / "build")],
        check=True, capture_output=True, text=True).stdout)
    for built_file, dest in installed.items():
        parts = pathlib.PurePath(dest).parts
        if "sb_before" in parts:
            target = pkg.joinpath(*parts[parts.index("sb_before") + 1:])
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(pathlib.Path(built_file).read_bytes())
    sys.path.insert(0, str(workdir))
    before = importlib.import_module("sb_before")
    for name, module in sys.modules.items():   # nothing of it may be the current package's
        if name.startswith("sb_before.") and hasattr(module, "__file__"):
            assert pathlib.Path(module.__file__).is_relative_to(pkg), (name, module.__file__)
    return before


def _case(dtype, n):
    g, y = make_inputs(n, np.dtype(dtype))
    return g, y, np.empty_like(g)


def _ratio(s, a, b):
    """Median over rounds of a's sample over b's in the same round."""
    return float(np.median(np.array(s[a]) / np.array(s[b])))


def _line(label, s, a, b):
    print(f"  {label:<34} {a:>10} {fmt_time(np.median(s[a])):>9}   {b:>10} "
          f"{fmt_time(np.median(s[b])):>9}   {_ratio(s, a, b):5.2f}x", flush=True)


def overall(before, nthreads):
    print(f"1. whole call, out= given, {nthreads} threads: baseline -> now")
    cases = [("float32", 1_000), ("float32", 1_000_000), ("float32", 100_000_000),
             ("float64", 100_000_000), ("float16", 10_000_000), ("bfloat16", 10_000_000),
             ("complex64", 10_000_000), ("complex128", 10_000_000)]
    for name, n in cases:
        dtype = sigmoid_backward._kernel._dtypes.BFLOAT16 if name == "bfloat16" else np.dtype(name)
        g, y, out = _case(dtype, n)
        t = sample_rounds({
            "baseline": lambda: before.sigmoid_backward(g, y, out=out, num_threads=nthreads),
            "now": lambda: sigmoid_backward.sigmoid_backward(g, y, out=out, num_threads=nthreads),
        })
        _line(f"{name} n={fmt_size(n)}", t, "baseline", "now")
        g = y = out = None   # free them before the next case


def isas():
    names = _kernels.available_isas()
    print(f"2. loops by instruction set, 1 thread, n=2e4 (in L2: compute-bound), "
          f"streaming off: {' / '.join(names)}")
    with _kernels.settings(nt_min_bytes=1 << 62):
        for dtype in sigmoid_backward._kernel._dtypes.SUPPORTED:
            g, y, out = _case(dtype, 20_000)

            def run(isa):
                _kernels.use_isa(isa)
                sigmoid_backward.sigmoid_backward(g, y, out=out, num_threads=1)
            t = sample_rounds({isa: (lambda isa=isa: run(isa)) for isa in names})
            print(f"  {str(dtype):<34} " + "   ".join(
                f"{isa} {fmt_time(np.median(t[isa])):>9} "
                f"({_ratio(t, 'portable', isa):4.2f}x)" for isa in names), flush=True)


def streaming(nthreads):
    print(f"3. streaming stores, {nthreads} threads: ordinary stores -> streaming")
    with _kernels.settings():
        for name, n in [("float32", 1_000_000), ("float32", 10_000_000),
                        ("float32", 100_000_000), ("float16", 10_000_000),
                        ("complex128", 10_000_000)]:
            g, y, out = _case(np.dtype(name), n)

            def run(threshold):
                _kernels.set_thresholds(nt_min_bytes=threshold)
                sigmoid_backward.sigmoid_backward(g, y, out=out, num_threads=nthreads)
            t = sample_rounds({"ordinary": lambda: run(1 << 62),
                               "streaming": lambda: run(0)})
            _line(f"{name} n={fmt_size(n)}", t, "ordinary", "streaming")
            g = y = out = None   # free them before the next case


def fast_path(before):
    print("4. per-call cost, float32: general path -> C fast path (and the baseline)")
    for n in (1, 1_000):
        g, y, out = _case(np.dtype(np.float32), n)
        t = sample_rounds({
            "baseline": lambda: before.sigmoid_backward(g, y, out=out),
            "general": lambda: sigmoid_backward.sigmoid_backward(g, y, out=out, dtype=np.float32),
            "fast": lambda: sigmoid_backward.sigmoid_backward(g, y, out=out),
            "np.add": lambda: np.add(g, y, out=out),
        })
        _line(f"n={n} out= (general: dtype= given)", t, "general", "fast")
        _line(f"n={n} out=", t, "baseline", "fast")
        _line(f"n={n} out=, against np.add", t, "fast", "np.add")


def rows(before, nthreads, max_gib):
    print(f"5. every row of the bench, out= given, {nthreads} threads: baseline -> now")
    # The baseline's dtypes, from its kernel module, wherever its layout puts it.
    kernels = importlib.import_module(before.__name__ + (
        "._kernel._kernels" if hasattr(before, "_kernel") else "._kernels"))
    known = {name for name, _ in kernels.DTYPE_TABLE}
    for dtype in sigmoid_backward._kernel._dtypes.SUPPORTED:
        if dtype.name not in known:
            print(f"{dtype}: new since the baseline")
            continue
        for n in _report.DEFAULT_SIZES:
            if 3 * n * dtype.itemsize > max_gib * 2**30:
                continue
            g, y, out = _case(dtype, n)
            t = sample_rounds({
                "baseline": lambda: before.sigmoid_backward(g, y, out=out, num_threads=nthreads),
                "now": lambda: sigmoid_backward.sigmoid_backward(g, y, out=out,
                                                                 num_threads=nthreads),
            })
            _line(f"{dtype} n={fmt_size(n)}", t, "baseline", "now")
            g = y = out = None   # free them before the next case


def small(before, n=1_000):
    """The small calls off the fast path (bench/small_calls.py), baseline -> now:
    the Python layer around the ufunc, where a fast path does not apply."""
    print(f"8. small calls off the fast path, n={n:,} float32: baseline -> now")
    try:
        then_module = importlib.import_module(before.__name__ + ".bench.small_calls")
    except ModuleNotFoundError:   # a baseline from before the bench had its subpackage
        then_module = importlib.import_module(before.__name__ + "._small_calls")
    then = then_module.cases(n)
    for name, (ours, _) in small_calls.cases(n).items():
        if name in then:
            t = sample_rounds({"baseline": then[name][0], "now": ours})
            _line(name, t, "baseline", "now")


def bf16(n=100_000):
    """bfloat16 / float16 time in cache, per ISA; and PyTorch / ours."""
    names = _kernels.available_isas()
    print(f"6. bfloat16 against float16, 1 thread, n={fmt_size(n)} (in cache), "
          "streaming off: time bf16 / time f16 (<= 1.1 is the target)")
    bf, f16 = sigmoid_backward._kernel._dtypes.BFLOAT16, np.dtype(np.float16)
    cases = {"bf16": _case(bf, n), "f16": _case(f16, n)}
    with _kernels.settings(nt_min_bytes=1 << 62):
        for isa in names:
            def run(name, isa=isa):
                g, y, out = cases[name]
                _kernels.use_isa(isa)
                sigmoid_backward.sigmoid_backward(g, y, out=out, num_threads=1)
            t = sample_rounds({"bf16": lambda: run("bf16"), "f16": lambda: run("f16")})
            _line(f"{isa}", t, "bf16", "f16")
    torch = peers.load("torch", nthreads=1)
    if torch is None:
        return
    print(f"   PyTorch, 1 thread, n={fmt_size(n)}: torch time / ours")
    for name, dtype in (("bf16", bf), ("f16", f16)):
        g, y, out = cases[name]
        t = sample_rounds({
            "torch": peers.torch_call(torch, g, y, out),
            "ours": lambda: sigmoid_backward.sigmoid_backward(g, y, out=out, num_threads=1)})
        _line(f"{dtype}", t, "torch", "ours")


def thresholds(nthreads):
    """The thresholds derived from the caches against the constants they
    replaced: all threads from 128 KiB of output, and streaming stores from
    4 MiB per thread.  Alone, and followed by a reader of the output."""
    derived = _kernels.thresholds()
    print(f"7. thresholds derived from the caches (share "
          f"{derived['parallel_share_bytes'] >> 10} KiB, streaming from "
          f"{derived['nt_min_bytes'] / 2**20:g} MiB per thread) against the old constants "
          f"(all threads from 128 KiB, streaming from 4 MiB per thread), float32: "
          f"old time / derived time")
    tmp = np.empty(int(40 * 2**20 / 4), np.float32)
    with _kernels.settings():
        for threads in sorted({1, nthreads}):
            rules = {"old": ((1 << 17) // threads, 4 << 20),
                     "derived": (derived["parallel_share_bytes"], derived["nt_min_bytes"])}
            for mib in (0.0625, 0.125, 0.25, 1, 4, 6, 8, 12, 40):
                g, y, out = _case(np.dtype(np.float32), int(mib * 2**20 / 4))
                for consumer in (False, True):
                    def run(rule, consumer=consumer):
                        share, nt_min = rules[rule]
                        _kernels.set_thresholds(parallel_share_bytes=share, nt_min_bytes=nt_min)
                        sigmoid_backward.sigmoid_backward(g, y, out=out, num_threads=threads)
                        if consumer:
                            np.multiply(out, 2, out=tmp[:out.size])
                    t = sample_rounds({"old": lambda: run("old"),
                                       "derived": lambda: run("derived")})
                    _line(f"{threads} thread(s), {mib:g} MiB{', then read' if consumer else ''}",
                          t, "old", "derived")
                g = y = out = None   # free them before the next case


SECTIONS = ("overall", "isas", "streaming", "fast_path", "rows", "bf16", "thresholds", "small")


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--baseline", default="4972dfe", help="commit to compare with")
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--sections", nargs="+", choices=SECTIONS, default=list(SECTIONS),
                   metavar="NAME", help=f"which to run (default: all of {', '.join(SECTIONS)})")
    p.add_argument("--max-gib", type=float, default=3.0,
                   help="rows: skip sizes whose three arrays need more (default: %(default)s)")
    args = p.parse_args(argv)
    print(machine_line())
    needs_baseline = {"overall", "fast_path", "rows", "small"} & set(args.sections)
    with tempfile.TemporaryDirectory() as tmp:
        before = build_baseline(args.baseline, pathlib.Path(tmp)) if needs_baseline else None
        print(f"baseline {args.baseline} against the installed package "
              f"(kernels {_kernels.use_isa()}); medians of alternating calls\n")
        if "overall" in args.sections:
            overall(before, args.threads)
        if "isas" in args.sections:
            isas()
        if "streaming" in args.sections:
            streaming(args.threads)
        if "fast_path" in args.sections:
            fast_path(before)
        if "rows" in args.sections:
            rows(before, args.threads, args.max_gib)
        if "bf16" in args.sections:
            bf16()
        if "thresholds" in args.sections:
            thresholds(args.threads)
        if "small" in args.sections:
            small(before)


if __name__ == "__main__":
    main()
