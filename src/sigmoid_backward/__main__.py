"""``python -m sigmoid_backward``: the operator document's example, through
the function and through the aclnn API, then a one-line timing against the
NumPy expression.

Subcommands, each in a module of its own, imported only when asked for:

- ``python -m sigmoid_backward bench ...`` compares with PyTorch, numexpr and
  NumPy side by side (_bench.py; it imports PyTorch when installed);
- ``python -m sigmoid_backward golden ...`` writes golden data files, one
  case or a case file's every case, and ``compare ...`` judges a device's
  output against them (golden/).
"""
import importlib
import sys
import timeit

import numpy as np

from . import OPENMP_ENABLED, _threads, sigmoid_backward
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
    threads = _threads.resolve(None) if OPENMP_ENABLED else 1
    print(f"float32, n={n:,}: sigmoid_backward {ours * 1e3:.3f} ms, "
          f"NumPy g * (1 - y) * y {numpy * 1e3:.3f} ms: {numpy / ours:.1f}x faster "
          f"({threads} thread{'s' if threads != 1 else ''})")


USAGE = """\
usage: python -m sigmoid_backward [-h] [{bench,golden,compare} ...]

Without arguments: the operator document's example, through the function and
through the aclnn API, then a timing against the NumPy expression.

subcommands:
  bench     sigmoid_backward side by side with its peers (bench --help)
  golden    golden data files for NPU kernel tests (golden --help)
  compare   a device's output against its golden, under NPU tests'
            precision standards (compare --help)
"""


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if argv and argv[0] in SUBCOMMANDS:
        return importlib.import_module(SUBCOMMANDS[argv[0]], __package__).main(argv[1:])
    if argv in (["-h"], ["--help"]):
        print(USAGE, end="")
        return 0
    if argv:
        print(USAGE + f"error: unknown arguments: {' '.join(argv)}", file=sys.stderr)
        return 2
    _example()
    aclnn_example.main()
    _timing()
    return 0


if __name__ == "__main__":
    sys.exit(main())
