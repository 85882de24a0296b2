"""``python -m sigmoid_backward``, or the console script ``sigmoid-backward``:
the build's OpenMP and ISA, the operator document's example through the
function and through the aclnn API, then a one-line timing against the NumPy
expression.  ``-V``/``--version`` prints the version.  The program names
itself as the user ran it (_cli.program).

Subcommands, each in a module of its own, imported only when asked for (the
usage lists whatever SUBCOMMANDS holds, each with its module docstring's
first sentence):

- ``python -m sigmoid_backward bench ...`` times the kernels against the NumPy
  expression and the memory-bandwidth floor (_bench.py; the other
  libraries are benchmarks/compare.py's);
- ``python -m sigmoid_backward golden ...`` writes golden data files, one
  case or a case file's every case, and ``compare ...`` judges a device's
  output against them (golden/).
"""
import ast
import importlib
import importlib.util
import sys
import timeit

import numpy as np

from . import OPENMP_ENABLED, __version__, _show_config, _threads, sigmoid_backward
from ._cli import program, usage_error
from .aclnn import example as aclnn_example

SUBCOMMANDS = {"bench": "._bench", "golden": ".golden._cli_golden",
               "compare": ".golden._cli_compare"}


def _example():
    grad_output = np.ones((2, 2), np.float32)
    output = np.array([[1, 2], [3, 4]], np.float32)
    print("grad_output =", grad_output.tolist())
    print("output      =", output.tolist())
    print("grad_input  =", sigmoid_backward(grad_output, output).tolist())


def _timing(n=1_000_000):
    rng = np.random.default_rng(0)
    g = rng.standard_normal(n, dtype=np.float32)
    y = rng.random(n, dtype=np.float32)
    out = np.empty_like(g)
    ours = min(timeit.repeat(lambda: sigmoid_backward(g, y, out=out), number=20, repeat=5)) / 20
    numpy = min(timeit.repeat(lambda: g * (1 - y) * y, number=20, repeat=5)) / 20
    threads = _threads.resolve_threads(None) if OPENMP_ENABLED else 1
    print(f"float32, n={n:,}: sigmoid_backward {ours * 1e3:.3f} ms, "
          f"NumPy g * (1 - y) * y {numpy * 1e3:.3f} ms: {numpy / ours:.1f}x faster "
          f"({threads} thread{'s' if threads != 1 else ''})")


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
    _timing()
    return 0


if __name__ == "__main__":
    sys.exit(main())
