"""The PyTorch and JAX figures of docs/performance.md, from one run.

    python benchmarks/frameworks.py [--quick] [--threads N]

Needs torch and jax.  Three tables, each ratio the median over rounds of
two calls timed in alternation (``sigmoid_backward.bench.timing.compare``, the
method of ``python -m sigmoid_backward bench``):

1. tensors back for tensors: ``sigmoid_backward(t, t)`` on 1,000-element
   float32 CPU tensors against the same call on NumPy arrays; beside it the
   cost of PyTorch's own steps that any such call needs (two ``.numpy()``
   views and a ``torch.from_numpy``), and PyTorch's own op on the tensors;
2. ``torch.ops.sigmoid_backward.sigmoid_backward`` against
   ``torch.ops.aten.sigmoid_backward``, both returning a new tensor;
3. ``jax.jit(sigmoid_backward.jax.sigmoid_backward)`` against
   ``jax.jit(lambda g, y: g * (1 - y) * y)``, on arrays on the CPU device.

Each row states the target it is measured against and whether this run met
it.  Every contender runs on ``--threads`` threads (by default
``sigmoid_backward.get_num_threads()``; PyTorch: ``torch.set_num_threads``;
XLA's CPU client picks its own count, held to one with ``--threads 1``).
On a machine that other processes load, prefer ``--threads 1``: a parallel
region waits for its slowest thread, and a preempted one costs a time slice.
"""
import argparse
import sys

import numpy as np

import sigmoid_backward as sb
from benchmarks import peers  # benchmarks/benchmarks/peers.py: this folder is on sys.path
from sigmoid_backward._kernel import _dtypes, _kernels
from sigmoid_backward.bench.timing import (
    TARGET_SECONDS,
    compare,
    fmt_size,
    fmt_time,
    machine_line,
    make_inputs,
    parse_threads,
)


def _row(case, ours, peer, ratio, target, met):
    return (f"| {case} | {fmt_time(ours)} | {fmt_time(peer)} | "
            f"{ratio:.2f}x | {target} | {'yes' if met else 'NO'} |")


def tensors_back(torch, seconds):
    """Table 1: the function on tensors against the function on arrays."""
    g, y = make_inputs(1_000, _dtypes.BY_NAME["float32"])
    tg, ty = peers.tensor(torch, g), peers.tensor(torch, y)
    out, tout = np.empty_like(g), torch.empty(1_000)
    rows = []
    cases = {
        "sigmoid_backward(t, t)": (lambda: sb.sigmoid_backward(g, y),
                                   lambda: sb.sigmoid_backward(tg, ty), True),
        "sigmoid_backward(t, t, out=t)": (lambda: sb.sigmoid_backward(g, y, out=out),
                                          lambda: sb.sigmoid_backward(tg, ty, out=tout), True),
        "PyTorch's steps alone: t.numpy() twice, torch.from_numpy":
            (lambda: sb.sigmoid_backward(g, y),
             lambda: (tg.numpy(), ty.numpy(), torch.from_numpy(g)), False),
        "torch.from_numpy alone": (lambda: sb.sigmoid_backward(g, y),
                                   lambda: torch.from_numpy(g), False),
        "torch.ops.aten.sigmoid_backward(t, t)":
            (lambda: sb.sigmoid_backward(g, y),
             lambda: torch.ops.aten.sigmoid_backward(tg, ty), False),
    }
    for case, (arrays, tensors, targeted) in cases.items():
        ours, timed, _ = compare(arrays, {"t": tensors}, seconds)
        peer, ratio = timed["t"]
        rows.append(_row(case, ours, peer, ratio, "<= 2x" if targeted else "-",
                         ratio <= 2.0 if targeted else True))
    return rows


def torch_op(torch, sizes, seconds):
    """Table 2: our op against aten's, ratio aten / ours."""
    import sigmoid_backward.torch  # noqa: F401 (registers the op)
    rows = []
    for name in ("bfloat16", "float16", "float32"):
        dtype = _dtypes.BY_NAME[name]
        for n in sizes:
            g, y = make_inputs(n, dtype)
            tg, ty = peers.tensor(torch, g), peers.tensor(torch, y)
            t_ours, timed, _ = compare(
                lambda: torch.ops.sigmoid_backward.sigmoid_backward(tg, ty),
                {"aten": lambda: torch.ops.aten.sigmoid_backward(tg, ty)}, seconds)
            t_aten, ratio = timed["aten"]
            targeted = name != "float32" and n >= 1_000_000
            rows.append(_row(f"{name}, {fmt_size(n)}", t_ours, t_aten, ratio,
                             ">= 1.1x" if targeted else "-", ratio >= 1.1 or not targeted))
    return rows


def jax_target(jax, sizes, seconds):
    """Table 3: the XLA FFI target against XLA's jitted expression."""
    import jax.numpy as jnp

    import sigmoid_backward.jax as sbj
    ours_fn = jax.jit(sbj.sigmoid_backward)
    xla_fn = jax.jit(lambda g, y: g * (1 - y) * y)
    rows = []
    for name, target in (("bfloat16", 1.5), ("float32", 1.0)):
        dtype = _dtypes.BY_NAME[name]
        for n in sizes:
            g, y = make_inputs(n, dtype)
            jg, jy = jnp.asarray(g), jnp.asarray(y)
            t_ours, timed, _ = compare(
                lambda: ours_fn(jg, jy).block_until_ready(),
                {"xla": lambda: xla_fn(jg, jy).block_until_ready()}, seconds)
            t_xla, ratio = timed["xla"]
            targeted = n >= 100_000
            rows.append(_row(f"{name}, {fmt_size(n)}", t_ours, t_xla, ratio,
                             f">= {target}x" if targeted else "-",
                             ratio >= target or not targeted))
    return rows


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true",
                        help="small sizes and short samples: checks that it runs")
    parser.add_argument("--threads", type=parse_threads, default=None,
                        help="threads for every contender (default: get_num_threads())")
    args = parser.parse_args(argv)
    threads = args.threads or sb.get_num_threads()
    jax = peers.load("jax", threads)   # one thread: XLA_FLAGS set before the import
    torch = peers.load("torch", threads)
    if jax is None or torch is None:
        print("frameworks.py needs torch and jax (pip install torch jax)", file=sys.stderr)
        return 2
    sb.set_num_threads(threads)
    seconds = 0.01 if args.quick else TARGET_SECONDS
    torch_sizes = (1_000, 2_000) if args.quick else (1_000, 1_000_000, 10_000_000)
    jax_sizes = (1_000, 2_000) if args.quick else (1_000, 100_000, 1_000_000)
    print(f"{machine_line()}; {threads} threads; torch {torch.__version__}, "
          f"jax {jax.__version__}, numpy {np.__version__}, kernels "
          f"{_kernels.use_isa()}\n")
    head = "| case | {} | {} | ratio | target | met |\n| --- | --- | --- | --- | --- | --- |"
    print("1. Tensors back for tensors, 1,000 float32 elements "
          "(ratio: time on tensors / time on NumPy arrays)\n")
    print(head.format("NumPy arrays", "tensors"))
    print("\n".join(tensors_back(torch, seconds)) + "\n")
    print("2. torch.ops.sigmoid_backward.sigmoid_backward against "
          "torch.ops.aten.sigmoid_backward (ratio: aten / ours)\n")
    print(head.format("ours", "aten"))
    print("\n".join(torch_op(torch, torch_sizes, seconds)) + "\n")
    print("3. jax.jit(sigmoid_backward.jax.sigmoid_backward) against "
          "jax.jit(lambda g, y: g * (1 - y) * y) (ratio: XLA / ours)\n")
    print(head.format("ours", "XLA"))
    print("\n".join(jax_target(jax, jax_sizes, seconds)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
