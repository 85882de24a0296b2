"""``python -m sigmoid_backward``, or the console script ``sigmoid-backward``:
the build's OpenMP and ISA, the operator document's example through the
function and through the aclnn API, then a one-line timing against the NumPy
expression.  ``-V``/``--version`` prints the version.  The program names
itself as the user ran it (_cli.program).

Subcommands, each in a module of its own, imported only when asked for (the
usage lists whatever SUBCOMMANDS holds, each with its module docstring's
first sentence):

- ``python -m sigmoid_backward bench ...`` times the kernels against the NumPy
  expression and the memory-bandwidth floor (bench/_report.py; the other
  libraries are benchmarks/compare.py's);
- ``python -m sigmoid_backward golden ...`` writes golden data files, one
  case or a case file's every case, and ``compare ...`` judges a device's
  output against them (golden/).
"""
import ast
import importlib
import importlib.util
import sys

import numpy as np

from . import OPENMP_ENABLED, __version__, sigmoid_backward
from ._kernel import _threads
from ._tools import _show_config
from ._tools._cli import program, usage_error
from .aclnn import example as aclnn_example
from .bench.timing import fmt_time, make_inputs, sample_rounds

SUBCOMMANDS = {"bench": ".bench._report", "golden": ".golden._cli_golden",
               "compare": ".golden._cli_compare"}


def _example():
    grad_output = np.ones((2, 2), np.float32)
    output = np.array([[1, 2], [3, 4]], np.float32)
    print("grad_output =", grad_output.tolist())
    print("output      =", output.tolist())
    print("grad_input  =", sigmoid_backward(grad_output, output).tolist())


# The runs' ratios are too spread to trust when their middle half spans more
# than this fraction of the median.  A quarter of the runs then lie over 10%
# from the median on one side, and the median itself is uncertain by about
# 0.93 * spread / sqrt(runs) (the standard error of a median, normal noise):
# 7% with the fewest runs (7), far past the three digits printed.  A spread
# that wide means another process held a core or the memory bus meanwhile.
TOO_NOISY = 0.2


def _ratio_text(r):
    return f"{r:.3g}" if r < 1000 else f"{r:.0f}"


def timing_line(n, ours, numpy, threads, times="×"):
    """The main job's timing line, from the per-call seconds of our runs and
    of the NumPy expression's, ``ours[k]`` and ``numpy[k]`` timed back to back.

    The ratio is the median over the runs of NumPy's time / ours: "N×
    faster" above 1, else "N× NumPy's time" (ours / NumPy's).  The spread is
    the middle half of the runs' ratios; :data:`TOO_NOISY` says when it is
    too wide to trust.  ``times`` is the sign, "x" where the console cannot
    print "×"."""
    ours, numpy = np.asarray(ours, float), np.asarray(numpy, float)
    speedup = numpy / ours
    faster = np.median(speedup) > 1
    ratios = speedup if faster else 1 / speedup
    low, mid, high = np.percentile(ratios, [25, 50, 75])
    verdict = f"{_ratio_text(mid)}{times} " + ("faster" if faster else "NumPy's time")
    line = (f"float32, n={n:,}, {threads} thread{'s' if threads != 1 else ''}: "
            f"sigmoid_backward {fmt_time(np.median(ours))}, NumPy g * (1 - y) * y "
            f"{fmt_time(np.median(numpy))}: {verdict} (middle half of {ratios.size} runs: "
            f"{_ratio_text(low)}{times} to {_ratio_text(high)}{times})")
    spread = (high - low) / mid
    if spread > TOO_NOISY:
        line += (f"; too noisy to trust: the middle half spans {spread:.0%} of the median "
                 f"(over {TOO_NOISY:.0%}), rerun on a quiet machine")
    return line


def _times_sign(stream):
    """The sign "×", or "x" where ``stream``'s encoding has no such character."""
    try:
        "×".encode(getattr(stream, "encoding", None) or "ascii")
    except (UnicodeEncodeError, LookupError):
        return "x"
    return "×"


def _time_against_numpy(n=1_000_000):
    """Print how long float32 calls take against the NumPy expression, in
    rounds that alternate the two (bench.timing.sample_rounds), so that a busy
    moment of the machine falls on both."""
    g, y = make_inputs(n, np.dtype(np.float32))
    out = np.empty_like(g)
    runs = sample_rounds({"ours": lambda: sigmoid_backward(g, y, out=out),
                          "numpy": lambda: g * (1 - y) * y})
    threads = _threads.resolve_threads(None) if OPENMP_ENABLED else 1
    print(timing_line(n, runs["ours"], runs["numpy"], threads, _times_sign(sys.stdout)))


def _summary(module):
    """The first sentence of a subcommand module's docstring, read from its
    source without importing it (importing golden or the bench costs more
    than the usage is worth)."""
    spec = importlib.util.find_spec(module, __package__)
    if spec is None or spec.origin is None:
        return ""
    try:
        with open(spec.origin, encoding="utf-8") as f:
            doc = ast.get_docstring(ast.parse(f.read())) or ""
    except (OSError, SyntaxError, UnicodeDecodeError):   # no Python source
        return ""
    doc = " ".join(doc.split("\n\n")[0].split())
    doc = doc.split("``: ", 1)[-1]          # drop "``python -m ... NAME``: "
    return doc.split(". ")[0].rstrip(".")


HELP = ("-h", "--help")
VERSION = ("-V", "--version")


def usage(prog="python -m sigmoid_backward"):
    rows = "".join(f"  {name:<9} {_summary(module)}\n" for name, module in SUBCOMMANDS.items())
    return (f"usage: {prog} [-h] [-V] [{{{','.join(SUBCOMMANDS)}}} ...]\n\n"
            "Without arguments: the build's OpenMP and ISA, the operator document's\n"
            "example through the function and through the aclnn API, then a timing\n"
            "against the NumPy expression.\n\n"
            "options:\n"
            "  -h, --help     show this help and exit\n"
            "  -V, --version  print the version and exit\n\n"
            f"subcommands (each takes --help):\n{rows}")


def _refusal(argv):
    """The usage error of arguments that are neither a subcommand nor a flag
    of ours, or None."""
    unknown = [a for a in argv if a not in HELP + VERSION]
    if not unknown:
        return None
    if unknown[0] == argv[0] and not argv[0].startswith("-"):
        return f"unknown subcommand {argv[0]!r} (choose from {', '.join(SUBCOMMANDS)})"
    return f"unrecognized arguments: {' '.join(unknown)}"


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if argv and argv[0] in SUBCOMMANDS:
        return importlib.import_module(SUBCOMMANDS[argv[0]], __package__).main(argv[1:])
    prog = program()
    refusal = _refusal(argv)
    if refusal is not None:
        print(usage_error(prog, refusal), end="", file=sys.stderr)
        return 2
    if any(a in HELP for a in argv):
        print(usage(prog), end="")
        return 0
    if argv:  # -V or --version
        print(f"sigmoid-backward {__version__}")
        return 0
    print(_show_config.openmp_line())
    print(_show_config.isa_line())
    _example()
    aclnn_example.main()
    _time_against_numpy()
    return 0


if __name__ == "__main__":
    sys.exit(main())
