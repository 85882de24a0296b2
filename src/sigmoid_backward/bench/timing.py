"""How the timing tools time: seeded inputs, interleaved samples, same-round
ratios, and the formatting and machine description their reports share.

Used by ``python -m sigmoid_backward bench`` (_report.py) and by the scripts
in ``benchmarks/`` (compare.py, ablation.py, frameworks.py), so that every
figure they print comes from the same method.
"""
import argparse
import math
import os
import platform
import time

import numpy as np

from .._kernel import _threads

# Seconds of samples per contender and case, and the bounds on their count.
TARGET_SECONDS = 0.3
_MIN_SAMPLES = 7
_MAX_SAMPLES = 301
# A sample repeats the call until it lasts this long, so that the clock's
# resolution and the loop do not count.
_SAMPLE_SECONDS = 50e-6
# Contenders up to this many times slower than the fastest repeat their call
# as often as it does (see sample_rounds).
_SAME_CALLS_WITHIN = 8


def _sample(fn, calls):
    start = time.perf_counter()
    for _ in range(calls):
        fn()
    return (time.perf_counter() - start) / calls


def _per_call(fn):
    """Seconds per call of ``fn``: the faster of two samples of at least
    _SAMPLE_SECONDS each (the calls doubled until one lasts that long).  A
    single call, just after another callable's, weighs its cold start in
    full; a second sample of the same calls finds it warm."""
    calls = 1
    while True:
        t = _sample(fn, calls)
        if t * calls >= _SAMPLE_SECONDS or calls >= 1 << 20:
            return min(t, _sample(fn, calls))
        calls *= 2


def sample_rounds(fns, target_seconds=TARGET_SECONDS, shuffle=None):
    """Seconds per call of each callable in ``fns``, one sample per round.

    Each round times every callable once, in an order that rotates from
    round to round, so that drifting machine load and cache state fall on
    all of them alike.  A sample repeats its call until the fastest
    callable's lasts about 50 us, and callables within 8x of the fastest
    repeat theirs as often: the first call of a sample pays for what the
    previous sample left in the caches and predictors, and equal counts
    weigh that alike.  (Counts from each callable's own first call, which
    ran cold, gave one callable 6 calls a sample and its identical twin
    17, and an A/A of 1.03.)  A slower callable's sample so lasts up to 8x
    50 us; one still slower repeats its call for about 400 us.

    Parameters
    ----------
    fns : dict
        ``{name: zero-argument callable}``.
    target_seconds : float
        About how long the samples of each callable last in all.
    shuffle : random.Random, optional
        Each round's order drawn from it instead: with more than two
        callables a rotation gives each one mostly the same predecessor,
        whose state (caches, allocator) then biases its samples.

    Returns
    -------
    dict
        ``{name: [sample of round 0, round 1, ...]}``, at least 7 rounds.
    """
    names = list(fns)
    calls, per_call = {}, {}
    with np.errstate(all="ignore"):
        for name in names:
            fns[name]()  # warm up: first-touch page faults, imports, plans
            per_call[name] = max(_per_call(fns[name]), 1e-9)
        same = math.ceil(_SAMPLE_SECONDS / min(per_call.values()))
        for name in names:
            own = math.ceil(_SAMPLE_SECONDS * _SAME_CALLS_WITHIN / per_call[name])
            calls[name] = max(1, min(same, own))
        round_seconds = sum(per_call[n] * calls[n] for n in names)
        rounds = int(min(_MAX_SAMPLES, max(_MIN_SAMPLES, target_seconds * len(names)
                                           / max(round_seconds, 1e-9))))
        samples: dict[object, list[float]] = {name: [] for name in names}
        for r in range(rounds):
            k = r % len(names)
            order = names[k:] + names[:k]
            if shuffle is not None:
                shuffle.shuffle(order)
            for name in order:
                samples[name].append(_sample(fns[name], calls[name]))
    return samples


def compare(ours, peers, target_seconds=TARGET_SECONDS):
    """Time each peer against ``ours``, in alternation with ours alone.

    A peer's ratio is the median over rounds of its sample divided by ours
    in the same round: neighbouring samples share the machine's state, so a
    memory bus or core that another process takes for a while moves both.

    Parameters
    ----------
    ours : callable
        Zero-argument call of sigmoid_backward.
    peers : dict
        ``{name: zero-argument callable}``.
    target_seconds : float
        As for :func:`sample_rounds`, per pair.

    Returns
    -------
    tuple
        ``(our time, {peer: (peer time, ratio)}, spread)``.  Times are
        medians; ours is the median of our medians over the pairs.
        ``spread`` is the largest median / fastest sample of any set
        (1.0: perfectly steady).
    """
    ours_times, result, worst = [], {}, 1.0
    for name, fn in peers.items():
        s = sample_rounds({"ours": ours, name: fn}, target_seconds)
        mine, theirs = np.array(s["ours"]), np.array(s[name])
        ours_times.append(np.median(mine))
        result[name] = (float(np.median(theirs)), float(np.median(theirs / mine)))
        worst = max(worst, np.median(mine) / mine.min(), np.median(theirs) / theirs.min())
    return float(np.median(ours_times)), result, float(worst)


def make_inputs(n, dtype, seed=0):
    """Seeded inputs of one case.

    Parameters
    ----------
    n : int
        Elements of each array.
    dtype : numpy.dtype
        One of the supported dtypes.
    seed : int
        Seed of NumPy's default generator.

    Returns
    -------
    tuple
        ``(grad_output, output)``: standard normal gradients, sigmoid
        outputs uniform in [0, 1) (complex: both parts).
    """
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


def parse_threads(text):
    """The argparse type of every timing tool's ``--threads``: an int >= 1."""
    try:
        return _threads.check(int(text), "--threads")
    except (TypeError, ValueError) as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def fmt_time(seconds):
    """``seconds`` with three significant digits, in s, ms, us or ns."""
    for unit, scale in (("s", 1), ("ms", 1e-3), ("us", 1e-6)):
        if seconds >= scale:
            return f"{seconds / scale:.3g} {unit}"
    return f"{seconds * 1e9:.3g} ns"


def fmt_size(n):
    """``1e6`` for a power of ten, else ``2,500``."""
    exp = int(math.log10(n))
    return f"1e{exp}" if 10 ** exp == n else f"{n:,}"


def machine_line():
    """The CPU's model name, its count, the OS and Python, on one line."""
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
