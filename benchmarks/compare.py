"""The bench side by side with the other libraries: PyTorch, JAX, numba and
numexpr, each where installed.

    python benchmarks/compare.py [the options of python -m sigmoid_backward bench]

The report of ``python -m sigmoid_backward bench``, with one more column
per library between the floor and the NumPy expression; the adapters are
benchmarks/benchmarks/peers.py.  Every library gets ``--threads`` threads
(JAX: one with ``--threads 1``, else XLA's own count), and a dash where it
cannot compute a dtype or is not installed.
"""
import sys

from benchmarks import peers  # benchmarks/benchmarks/peers.py: this folder is on sys.path
from sigmoid_backward.bench import _report


def with_peers(nthreads):
    """The libraries of peers.NAMES as extra columns of the bench."""
    modules = {name: peers.load(name, nthreads) for name in peers.NAMES}
    return _report.Peers(peers.NAMES, peers.versions(modules),
                        lambda g, y, out, spare_bytes: peers.calls(modules, g, y, out,
                                                                   spare_bytes))


def main(argv):
    return _report.main(argv, peers=with_peers, prog="python benchmarks/compare.py")


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
