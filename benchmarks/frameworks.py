"""The PyTorch and JAX figures of docs/performance.md, from one run.

    python benchmarks/frameworks.py [--quick] [--threads N]

Needs torch and jax.  Five tables, each ratio the median over rounds of
two calls timed in alternation (``sigmoid_backward.bench.timing.compare``, the
method of ``python -m sigmoid_backward bench``):

1. tensors back for tensors: ``sigmoid_backward(t, t)`` on 1,000-element
   float32 CPU tensors against the same call on NumPy arrays; beside it the
   cost of PyTorch's own steps that any such call needs (two ``.numpy()``
   views and a ``torch.from_numpy``), and PyTorch's own op on the tensors;
2. ``torch.ops.sigmoid_backward.sigmoid_backward`` against
   ``torch.ops.aten.sigmoid_backward``, both returning a new tensor;
3. ``jax.jit(sigmoid_backward.jax.sigmoid_backward)`` against
   ``jax.jit(lambda g, y: g * (1 - y) * y)``, on arrays on the CPU device
   and on a g of (n, m) with a y of (m,) (in a child process held to
   ``--threads`` CPUs), and on arrays sharded over 2 host devices (in
   another: XLA_FLAGS makes the devices before jax starts), each device's
   call on its shard running on ``--threads``;
4. an MLP's training step with ``sigmoid_backward.torch.Sigmoid`` against
   ``nn.Sigmoid``, eager, each side twice (the A/A: each against itself):
   each contender is several copies of the model, timed in rounds of a
   shuffled order (one model's step leaves the caches and the allocator to
   the next, so a fixed order biases a copy by a few percent; and a side
   that ran less often than the other found its code colder);
5. the op under ``torch.func.vmap`` against the plain call on the same
   batch (with vmap of aten's op and of a function that computes nothing,
   all four in one set of rounds), ours against torch's under ``vmap``,
   and table 4's step with the model under ``torch.compile``.

Each row states the target it is measured against and whether this run met
it.  Every contender runs on ``--threads`` threads (by default
``sigmoid_backward.get_num_threads()``; PyTorch: ``torch.set_num_threads``;
XLA's CPU client runs its loops on a pool of its own, so table 3 runs in
child processes held to ``--threads`` CPUs, per device for the sharded rows).
On a machine that other processes load, prefer ``--threads 1``: a parallel
region waits for its slowest thread, and a preempted one costs a time slice.
"""
import argparse
import contextlib
import os
import random
import subprocess
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
    sample_rounds,
)


def _row(case, ours, peer, ratio, target, met):
    """A table row; ``met`` None for a row that has no target (a reference)."""
    verdict = "-" if met is None else "yes" if met else "NO"
    return (f"| {case} | {fmt_time(ours)} | {fmt_time(peer)} | "
            f"{ratio:.2f}x | {target} | {verdict} |")


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
    # Against PyTorch's own op (its time in the first column): the function
    # on two CPU tensors takes the native op where it is built.
    for name in ("float32", "bfloat16"):
        g, y = make_inputs(1_000, _dtypes.BY_NAME[name])
        tg, ty = peers.tensor(torch, g), peers.tensor(torch, y)
        sb.sigmoid_backward(tg, ty)   # the first call on tensors loads the native op
        aten, timed, _ = compare(lambda: torch.ops.aten.sigmoid_backward(tg, ty),
                                 {"t": lambda: sb.sigmoid_backward(tg, ty)}, seconds)
        peer, ratio = timed["t"]
        rows.append(_row(f"sigmoid_backward(t, t) against aten, {name} (aten first)", aten,
                         peer, ratio, "<= 1.3x", ratio <= 1.3))
    return rows


# The modes of table 2: (the mode the timing runs in, the call timed given
# the op, its inputs g and y, and g requiring grad).  The mode is entered
# once around the timing, not per call, so that its Python cost (a few us)
# does not dilute the ratio.
TORCH_MODES = {
    "no grad": (lambda torch: torch.no_grad(), lambda op, g, y, gr: lambda: op(g, y)),
    "inference_mode": (lambda torch: torch.inference_mode(),
                       lambda op, g, y, gr: lambda: op(g, y)),
    # y as the incoming gradient: backward calls the op again, for grad_output
    "forward + backward": (lambda torch: contextlib.nullcontext(),
                           lambda op, g, y, gr: lambda: op(gr, y).backward(y)),
    "forward, requires grad": (lambda torch: contextlib.nullcontext(),
                               lambda op, g, y, gr: lambda: op(gr, y)),
}
_STRETCH_MODES = ("forward, requires grad",)


def torch_op(torch, sizes, seconds, dtypes=("float32", "bfloat16")):
    """Table 2: our op against aten's in each mode, ratio aten / ours.
    Hard targets: time <= 1.2x aten's (ratio >= 0.83) below 1e5 elements,
    and ratio >= 1.0 from 1e5; stretch: a forward requiring grad <= 1.35x,
    and >= 1.1x for bfloat16 and float16 from 1e6."""
    import sigmoid_backward.torch as sbt
    ours_op, aten_op = torch.ops.sigmoid_backward.sigmoid_backward, torch.ops.aten.sigmoid_backward
    rows = []
    for name in dtypes:
        dtype = _dtypes.BY_NAME[name]
        for mode, (context, timed_call) in TORCH_MODES.items():
            for n in sizes:
                g, y = make_inputs(n, dtype)
                tg, ty = peers.tensor(torch, g), peers.tensor(torch, y)
                tgr = tg.clone().requires_grad_()
                with context(torch):
                    t_ours, timed, _ = compare(timed_call(ours_op, tg, ty, tgr),
                                               {"aten": timed_call(aten_op, tg, ty, tgr)},
                                               seconds)
                t_aten, ratio = timed["aten"]
                stretch = mode in _STRETCH_MODES
                target = (1 / 1.35 if stretch else 1 / 1.2) if n < 100_000 else 1.0
                if n >= 1_000_000 and name != "float32":
                    target, stretch = 1.1, True
                label = f"{'(stretch) ' if stretch else ''}>= {target:.2f}x"
                rows.append(_row(f"{name}, {mode}, {fmt_size(n)}", t_ours, t_aten, ratio,
                                 label, ratio >= target))
    rows.append(f"\n(route: {sbt.ROUTE})")
    return rows


def _mlp_step(torch, width, dtype, sigmoid, batch=64, compiled=False):
    """One training step (zero_grad, forward, MSE loss, backward, SGD) of
    Linear-Sigmoid-Linear-Sigmoid-Linear at ``width``; seeded, so that two
    copies have the same weights.  ``compiled``: the model under
    ``torch.compile`` (Inductor, whole graph, static shapes), compiled by a
    first step here."""
    nn = torch.nn
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(width, width), sigmoid(), nn.Linear(width, width),
                          sigmoid(), nn.Linear(width, 1)).to(dtype)
    if compiled:
        model = torch.compile(model, fullgraph=True, dynamic=False)
    gen = torch.Generator().manual_seed(1)
    x = torch.randn(batch, width, generator=gen).to(dtype)
    target = torch.randn(batch, 1, generator=gen).to(dtype)
    optimizer = torch.optim.SGD(model.parameters(), lr=1e-3)

    def step():
        optimizer.zero_grad()
        torch.nn.functional.mse_loss(model(x), target).backward()
        optimizer.step()
    if compiled:
        step()   # compiles the forward and the backward
    return step


# Table 4's copies of each contender's model, and its rounds' seeded order.
STEP_COPIES = 4
STEP_ORDER_SEED = 0


def _step_ratios(torch, width, dtype, seconds, compiled=False):
    """Tables 4 and 5's timing of the training step at one width: copies of
    the model with ours, with ours again, with nn.Sigmoid and with
    nn.Sigmoid again, made in turn, timed in shuffled rounds; a contender's
    sample in a round is its copies' mean.  ``STEP_COPIES`` copies each in
    eager mode; compiled (``compiled``), one each, as each copy is a
    compilation.

    Each side runs as often as the other: with ours once and nn.Sigmoid
    twice (it and its A/A), nn.Sigmoid's code ran two steps in three and
    stayed the warmer in the caches and predictors, and ours read
    0.977-0.994x at width 64 where this design reads 0.981-1.014x
    (benchmarks/NOTES.md, 40).

    Returns (our time, nn.Sigmoid's time, ratio, A/A): times are medians
    over rounds of a side's two contenders' mean; the ratio the median of
    each round's nn.Sigmoid / ours, both sides summed; the A/A the two
    sides' own (again / first), the one further from 1."""
    import sigmoid_backward.torch as sbt
    copies = 1 if compiled else STEP_COPIES
    if compiled:
        torch._dynamo.reset()   # each model compiled for its own shapes
    modules = {"ours": sbt.Sigmoid, "ours again": sbt.Sigmoid,
               "nn": torch.nn.Sigmoid, "nn again": torch.nn.Sigmoid}
    steps = {(who, i): _mlp_step(torch, width, dtype, module, compiled=compiled)
             for i in range(copies) for who, module in modules.items()}
    samples = sample_rounds(steps, seconds * copies, shuffle=random.Random(STEP_ORDER_SEED))
    t = {who: np.mean([samples[(who, i)] for i in range(copies)], axis=0)
         for who in modules}
    ours, theirs = t["ours"] + t["ours again"], t["nn"] + t["nn again"]
    aa = max((float(np.median(t[f"{side} again"] / t[side])) for side in ("ours", "nn")),
             key=lambda r: abs(r - 1))
    return (float(np.median(ours / 2)), float(np.median(theirs / 2)),
            float(np.median(theirs / ours)), aa)


def training_step(torch, widths, seconds):
    """Table 4: an MLP's training step with sigmoid_backward.torch.Sigmoid
    against the same with nn.Sigmoid, eager, ratio nn.Sigmoid's time / ours;
    beside it the A/A ratio of the same rounds (each side against itself,
    the one further from 1).  Met: the ratio is at least 1.0, or short of
    it by no more than the A/A's distance from 1."""
    rows = []
    for name in ("float32", "bfloat16"):
        dtype = getattr(torch, name)
        for width in widths:
            t_ours, t_theirs, ratio, aa = _step_ratios(torch, width, dtype, seconds)
            rows.append(_row(f"{name}, width {width} (A/A {aa:.3f}x)", t_ours, t_theirs, ratio,
                             ">= 1.00x (within A/A)", ratio >= 1 - abs(aa - 1)))
    return rows


def vmap_and_compile(torch, widths, seconds):
    """Table 5: the op under torch.func.vmap against the plain call on the
    same (64, 4096) float32 batch, ratio plain / vmap; beside it, what
    limits that ratio (vmap of a function that computes nothing, and of
    aten's op, each against the same plain call) and ours against aten's
    under vmap, the op's and sigmoid's; and the training step of table 4
    with the model under torch.compile, where Inductor fuses aten's op in
    place of ours, ratio nn.Sigmoid / ours."""
    import sigmoid_backward.torch as sbt
    op = torch.ops.sigmoid_backward.sigmoid_backward
    aten = torch.ops.aten.sigmoid_backward
    vmap = torch.func.vmap
    g, y = make_inputs(64 * 4096, _dtypes.BY_NAME["float32"])
    tg, ty = peers.tensor(torch, g).reshape(64, 4096), peers.tensor(torch, y).reshape(64, 4096)
    batched, nothing, aten_batched = vmap(op), vmap(lambda g, y: g), vmap(aten)
    # One set of rounds for the four, so that each row's times and ratio agree.
    s = {k: np.array(v) for k, v in sample_rounds({
        "vmap": lambda: batched(tg, ty), "plain": lambda: op(tg, ty),
        "nothing": lambda: nothing(tg, ty), "aten": lambda: aten_batched(tg, ty)},
        2 * seconds).items()}
    t = {k: float(np.median(v)) for k, v in s.items()}

    def ratio(a, b):   # median of the rounds' a / b
        return float(np.median(s[a] / s[b]))
    rows = [_row("vmap over (64, 4096) float32, against the plain call", t["vmap"], t["plain"],
                 ratio("plain", "vmap"), ">= 0.83x (<= 1.2x the time)",
                 ratio("plain", "vmap") >= 1 / 1.2)]
    # What any op could reach: its plain time plus vmap's own, which a
    # function that computes nothing costs.
    bound = s["plain"] + s["nothing"]
    rows.append(_row("(reference) a free op's best: plain / (plain + vmap of a function that "
                     "computes nothing)", float(np.median(bound)), t["plain"],
                     float(np.median(s["plain"] / bound)), "-", None))
    rows.append(_row("(reference) vmap of aten's op, against our plain call", t["aten"],
                     t["plain"], ratio("plain", "aten"), "-", None))
    rows.append(_row("vmap: ours against aten's op, both under vmap", t["vmap"], t["aten"],
                     ratio("aten", "vmap"), "(ours) >= 0.97x", ratio("aten", "vmap") >= 0.97))
    x = tg * 8 - 4
    ours_sigmoid, torch_sigmoid = vmap(sbt.sigmoid), vmap(torch.sigmoid)
    t_ours, timed, _ = compare(lambda: ours_sigmoid(x), {"torch": lambda: torch_sigmoid(x)},
                               seconds)
    rows.append(_row("vmap: sigmoid against torch.sigmoid, both under vmap", t_ours,
                     timed["torch"][0], timed["torch"][1], "(ours) >= 0.97x",
                     timed["torch"][1] >= 0.97))
    for name in ("float32", "bfloat16"):
        dtype = getattr(torch, name)
        for width in widths:
            t_ours, t_theirs, ratio, aa = _step_ratios(torch, width, dtype, seconds,
                                                       compiled=True)
            rows.append(_row(f"torch.compile, {name}, width {width} (A/A {aa:.3f}x)",
                             t_ours, t_theirs, ratio, "(stretch) >= 0.97x", ratio >= 0.97))
    return rows


# Table 3's contenders: ours, and XLA's expression, which broadcasts too.
# Targets from 1e5 elements: bfloat16 >= 1.5x XLA's speed at every size;
# float32 >= 1.0x to 1e6, and beyond 1e6 a stretch target.
_TARGETS = (("bfloat16", 1.5), ("float32", 1.0))
_STRETCH_ABOVE = {"float32": 1_000_000}
SHARDED_DEVICES = 2   # the host devices of the sharded rows' process


def _jax_row(case, ours_fn, xla_fn, args, n, target, seconds, stretch=False):
    t_ours, timed, _ = compare(lambda: ours_fn(*args).block_until_ready(),
                               {"xla": lambda: xla_fn(*args).block_until_ready()}, seconds)
    t_xla, ratio = timed["xla"]
    targeted = n >= 100_000
    label = ("(stretch) " if stretch else "") + f">= {target}x"
    return _row(case, t_ours, t_xla, ratio, label if targeted else "-",
                ratio >= target or not targeted)


def _jax_contenders(jax):
    import sigmoid_backward.jax as sbj
    return jax.jit(sbj.sigmoid_backward), jax.jit(lambda g, y: g * (1 - y) * y)


def jax_target(jax, sizes, widths, seconds):
    """Table 3: the XLA FFI target against XLA's jitted expression, on
    arrays of ``sizes`` elements, then on g of (n, m) = ``widths`` with y
    of (m,) (the handler reads y with step 0, XLA broadcasts it)."""
    import jax.numpy as jnp
    ours_fn, xla_fn = _jax_contenders(jax)
    rows = []
    for name, target in _TARGETS:
        dtype = _dtypes.BY_NAME[name]
        for n in sizes:
            g, y = (jnp.asarray(a) for a in make_inputs(n, dtype))
            rows.append(_jax_row(f"{name}, {fmt_size(n)}", ours_fn, xla_fn, (g, y), n,
                                 target, seconds, n > _STRETCH_ABOVE.get(name, n)))
        for n_rows, m in widths:
            g, y = make_inputs(n_rows * m, dtype)
            args = (jnp.asarray(g.reshape(n_rows, m)), jnp.asarray(y[:m]))
            rows.append(_jax_row(f"{name}, g ({n_rows:,}, {m:,}), y ({m:,},)", ours_fn,
                                 xla_fn, args, n_rows * m, target, seconds))
    return rows


def jax_sharded(jax, sizes, seconds):
    """Table 3's sharded rows, in a process with SHARDED_DEVICES host
    devices: both operands sharded over them (a mesh axis of their size),
    each device computing its own shard, ours and XLA's alike."""
    from jax.sharding import NamedSharding, PartitionSpec
    ours_fn, xla_fn = _jax_contenders(jax)
    sharding = NamedSharding(jax.make_mesh((SHARDED_DEVICES,), ("x",)), PartitionSpec("x"))
    rows = []
    for name, target in _TARGETS:
        for n in sizes:
            args = tuple(jax.device_put(a, sharding)
                         for a in make_inputs(n, _dtypes.BY_NAME[name]))
            rows.append(_jax_row(f"{name}, {fmt_size(n)}, sharded on {SHARDED_DEVICES} "
                                 "devices", ours_fn, xla_fn, args, n, target, seconds))
    return rows


def _held_cpus(count):
    """The first ``count`` CPUs this process may run on, or None where it
    may run on no more than that (or cannot tell: not Linux)."""
    if not hasattr(os, "sched_getaffinity"):
        return None
    cpus = sorted(os.sched_getaffinity(0))
    return cpus[:count] if count < len(cpus) else None


def _rows_in_a_child(argv, flag, threads, env=None):
    """Table rows from this script run again with ``flag``, in a process
    that runs on at most ``threads`` CPUs.  XLA's CPU client runs its fused
    loops on a pool of its own whatever XLA_FLAGS say: with
    --xla_cpu_multi_thread_eigen=false its process used 1.2-1.7 CPU-seconds
    a second at 1e5-1e7 elements (benchmarks/NOTES.md, 41), so only the
    affinity, which every thread made after inherits, holds it to
    ``--threads`` as every other contender is held.  The child sets it
    itself (``--cpus``), first thing: set between fork and exec, in a
    parent that runs threads, it could deadlock."""
    cpus = _held_cpus(threads)
    held = [] if cpus is None else ["--cpus", ",".join(map(str, cpus))]
    proc = subprocess.run([sys.executable, __file__, flag, *held, *argv], capture_output=True,
                          text=True, check=True, env=env)
    return [line for line in proc.stdout.splitlines() if line.startswith("| ")]


def _sharded_in_a_child(argv, threads):
    """jax_sharded's rows from this script run again with --sharded: the
    host platform has several devices only when XLA_FLAGS says so before
    jax initialises, and this process's jax has.  Each device's call runs
    on ``threads`` threads, so the child runs on as many CPUs as the
    devices' threads."""
    # First: XLA stops reading flags at a word without "--".
    flags = (f"--xla_force_host_platform_device_count={SHARDED_DEVICES} "
             f"{os.environ.get('XLA_FLAGS', '')}").strip()
    return _rows_in_a_child(argv, "--sharded", threads * SHARDED_DEVICES,
                            env=dict(os.environ, XLA_FLAGS=flags))


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true",
                        help="small sizes and short samples: checks that it runs")
    parser.add_argument("--threads", type=parse_threads, default=None,
                        help="threads for every contender (default: get_num_threads())")
    parser.add_argument("--sharded", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--unsharded", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--cpus", default=None, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.cpus:   # a child of _rows_in_a_child, before jax makes its threads
        os.sched_setaffinity(0, {int(cpu) for cpu in args.cpus.split(",")})
    threads = args.threads or sb.get_num_threads()
    jax = peers.load("jax", threads)   # one thread: XLA_FLAGS set before the import
    seconds = 0.01 if args.quick else TARGET_SECONDS
    jax_sizes = (1_000, 2_000) if args.quick else (1_000, 100_000, 1_000_000, 10_000_000)
    jax_widths = ((2, 500),) if args.quick else ((100, 1_000), (1_000, 1_000))
    if args.sharded or args.unsharded:   # a child of _rows_in_a_child: its rows alone
        sb.set_num_threads(threads)
        # The sharded rows stop at 1e6: both sides there carry XLA's
        # per-device dispatch, which larger arrays only dilute.
        print("\n".join(jax_sharded(jax, jax_sizes[:3], seconds) if args.sharded
                        else jax_target(jax, jax_sizes, jax_widths, seconds)))
        return 0
    torch = peers.load("torch", threads)
    if jax is None or torch is None:
        print("frameworks.py needs torch and jax (pip install torch jax)", file=sys.stderr)
        return 2
    sb.set_num_threads(threads)
    torch_sizes = (100, 1_000) if args.quick else (100, 1_000, 10_000, 100_000, 1_000_000,
                                                    10_000_000)
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
    print("4. An MLP's training step, batch 64, eager: sigmoid_backward.torch.Sigmoid "
          "against nn.Sigmoid (ratio: nn.Sigmoid / ours)\n")
    print(head.format("ours", "nn.Sigmoid"))
    widths = (64, 256) if args.quick else (64, 256, 1024, 4096)
    print("\n".join(training_step(torch, widths, seconds)) + "\n")
    print("5. torch.func.vmap and torch.compile: the op under vmap against the plain call "
          "(ratio: plain / vmap); ours against torch's, both under vmap (ratio: torch's / "
          "ours); the training step of table 4, model compiled (ratio: nn.Sigmoid / ours)\n")
    print(head.format("ours", "peer"))
    print("\n".join(vmap_and_compile(torch, widths, seconds)) + "\n")
    print("3. jax.jit(sigmoid_backward.jax.sigmoid_backward) against "
          "jax.jit(lambda g, y: g * (1 - y) * y) (ratio: XLA / ours)\n")
    print(head.format("ours", "XLA"))
    child_argv = [a for a in argv if a not in ("--sharded", "--unsharded")]
    print("\n".join(_rows_in_a_child(child_argv, "--unsharded", threads)))
    print("\n".join(_sharded_in_a_child(child_argv, threads)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
