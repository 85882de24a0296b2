"""The default thread count under loads the benchmark starts itself (issue
26): busy processes, and another process looping our own call.  asv times
best-of; contention is judged by the worst round, so these are track_
benchmarks returning the WORST same-round ratio of a few rounds
(sigmoid_backward/bench/contention.py, also ``bench --contention``)."""
from sigmoid_backward._kernel import _kernels
from sigmoid_backward.bench import contention

from .common import inputs


class Contention:
    params = [["1 spinner", "ours looping"], ["float32", "bfloat16"],
              [100_000, 1_000_000, 10_000_000], ["adaptive", "fixed"]]
    param_names = ["load", "dtype", "n", "policy"]
    timeout = 600
    # Seconds of our calls under the load before the rounds, the rounds, and
    # each sample's seconds (tests/packaging/test_benchmarks.py shrinks them).
    warm_seconds = 1.0
    rounds = 3
    sample_seconds = 0.1

    def setup(self, load, dtype, n, policy):
        g, y = inputs(dtype, n)
        self.was = _kernels.set_adaptive(policy == "adaptive")
        _kernels.reset_load()
        self.load = contention.load(contention.LOADS[load], policy == "adaptive")
        self.load.__enter__()
        try:
            out = g.copy()
            contention._warm([("", g, y, out, {})], seconds=self.warm_seconds)
            s = contention.rounds(contention._contenders(g, y, out, {}, None), self.rounds,
                                  sample_seconds=self.sample_seconds)
        except BaseException:
            self.teardown(load, dtype, n, policy)   # stop the load's processes
            raise
        self.default = [d / one for d, one in zip(s["default"], s["1 thread"], strict=True)]
        self.numpy = [np_ / d for np_, d in zip(s["numpy"], s["default"], strict=True)]
        self.aa = contention.aa_worst(s["1 thread"], s["1 thread A/A"])

    def teardown(self, load, dtype, n, policy):
        self.load.__exit__(None, None, None)
        _kernels.set_adaptive(self.was)

    def track_default_over_one_thread_worst(self, load, dtype, n, policy):
        """Target <= 1.3."""
        return max(self.default)

    def track_numpy_over_default_worst(self, load, dtype, n, policy):
        """Target >= 1.0."""
        return min(self.numpy)

    def track_one_thread_a_a_worst(self, load, dtype, n, policy):
        """The load's own noise: two identical one-thread samples' worst
        same-round ratio (no target)."""
        return self.aa

    track_default_over_one_thread_worst.unit = "ratio"
    track_numpy_over_default_worst.unit = "ratio"
    track_one_thread_a_a_worst.unit = "ratio"
