"""``python -m sigmoid_backward bench``: the table, the plot, the errors, the
timing core it shares with benchmarks/ (sigmoid_backward/bench/timing.py), and the
bandwidth-floor loop it compares with.  The command imports no other
library; benchmarks/compare.py adds them through ``main``'s ``peers``
(tests/packaging/test_benchmarks.py).  No timings are asserted."""
import os
import random
import subprocess
import sys
import time

import numpy as np
import pytest

from sigmoid_backward import __main__ as cli
from sigmoid_backward.bench import _report, contention, timing
from sigmoid_backward.bench._bandwidth_floor import bandwidth_floor

from helpers import table_cell

PEER_LIBRARIES = ("torch", "jax", "jaxlib", "numba", "numexpr")


def _run(capsys, *argv):
    code = cli.main(["bench", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_table_has_a_row_per_case_and_every_column(capsys):
    code, out, _ = _run(capsys, "--sizes", "1e3", "2500", "--dtypes", "float32", "bfloat16",
                        "--threads", "2", "--no-small-calls")
    assert code == 0
    assert "small calls" not in out
    lines = out.splitlines()
    header = next(line for line in lines if line.startswith("dtype"))
    assert header.split() == ["dtype", "n", "ours", "GB/s", "floor", "numpy", "np.add"]
    rows = [line.split() for line in lines if line.startswith(("float32", "bfloat16"))]
    assert [(r[0], r[1]) for r in rows] == [("float32", "1e3"), ("float32", "2,500"),
                                            ("bfloat16", "1e3"), ("bfloat16", "2,500")]
    assert "2 thread(s) for every contender" in out
    assert any(line.startswith("threads 1 -> 2, float32 n=2,500") for line in lines)


def test_the_command_imports_no_other_library():
    """The shipped bench compares with NumPy and the floor only: a fresh
    process that runs it has imported none of the peers, and XLA_FLAGS is
    as it was."""
    code = ("import os, sys\n"
            "from sigmoid_backward import __main__ as cli\n"
            "cli.main(['bench', '--sizes', '100', '--dtypes', 'float32', '--threads', '1',"
            " '--no-small-calls'])\n"
            f"print([m for m in {PEER_LIBRARIES!r} if m in sys.modules])\n"
            "print(os.environ.get('XLA_FLAGS'))\n")
    env = {k: v for k, v in os.environ.items() if k != "XLA_FLAGS"}
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env=env, check=True)
    assert proc.stdout.splitlines()[-2:] == ["[]", "None"], proc.stdout


def test_peers_hook_adds_columns_after_the_floor(capsys):
    """``main(argv, peers=...)``: the hook gets the thread count, its columns
    sit between the floor and the NumPy expression, its versions join the
    header, and a case it cannot run is a dash."""
    seen = []

    def peers(nthreads):
        seen.append(nthreads)

        def contenders(g, y, out, spare_bytes):
            assert out.shape == g.shape and spare_bytes > 0
            return {"copy": lambda: np.copyto(out, g)} if g.dtype == np.float32 else {}
        return _report.Peers(("copy", "never"), "copy 1.0", contenders)
    code = _report.main(["--sizes", "100", "--dtypes", "float32", "float64", "--threads", "1",
                        "--no-small-calls"], peers=peers, prog="tool")
    out = capsys.readouterr().out
    assert code == 0 and seen == [1]
    lines = out.splitlines()
    assert lines[0] == ("tool --sizes 100 --dtypes float32 float64 --threads 1 "
                        "--no-small-calls")
    assert "OpenMP" in lines[2] and ", copy 1.0; 1 thread(s)" in lines[2]
    header = next(line for line in lines if line.startswith("dtype"))
    assert header.split()[4:] == ["floor", "copy", "never", "numpy", "np.add"]
    rows = {line.split()[0]: line for line in lines if line.startswith(("float32", "float64"))}
    assert table_cell(header, rows["float32"], "copy").endswith("x")
    assert table_cell(header, rows["float32"], "never") == "-"
    assert (table_cell(header, rows["float64"], "copy")
            == table_cell(header, rows["float64"], "never") == "-")


def test_small_calls_table_has_a_ratio_per_case(capsys):
    from sigmoid_backward.bench import small_calls
    code, out, _ = _run(capsys, "--sizes", "100", "--dtypes", "float32", "--threads", "1")
    assert code == 0
    lines = out.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("small calls, n=1,000"))
    rows = lines[start + 2:start + 2 + len(small_calls.cases(1))]
    for name, row in zip(small_calls.cases(1), rows, strict=True):
        assert row.startswith(name), (name, row)
        ratio = float(row[len(name):].split()[4].rstrip("x"))
        assert ratio > 0
        assert row.endswith("np.add(g, y, out=out)" if name in ("ufunc, out=", "fast path, out=")
                            else "the NumPy expression")


def test_memory_budget_skips_cases(capsys):
    code, out, _ = _run(capsys, "--sizes", "1e6", "--dtypes", "complex128",
                        "--max-gib", "0.01")
    assert code == 0
    assert "skipped: needs 0.0 GiB > --max-gib 0.01" in out


def test_plot_is_a_png(tmp_path, capsys):
    pytest.importorskip("matplotlib")
    path = tmp_path / "throughput.png"
    code, out, _ = _run(capsys, "--sizes", "100", "1000", "--dtypes", "float32", "complex64",
                        "--threads", "1", "--plot", str(path))
    assert code == 0 and f"plot: {path}" in out
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_plot_without_matplotlib_is_a_clear_error(monkeypatch, tmp_path, capsys):
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    code, out, err = _run(capsys, "--sizes", "100", "--plot", str(tmp_path / "x.png"))
    assert code == 2 and out == ""
    assert "--plot needs matplotlib, which is not installed" in err
    assert not (tmp_path / "x.png").exists()


@pytest.mark.parametrize("argv, message", [
    (["--sizes", "0"], "sizes are whole numbers >= 1"),
    (["--sizes", "1.5"], "sizes are whole numbers >= 1"),
    (["--sizes", "many"], "not a size"),
    (["--dtypes", "int8"], "unsupported dtype 'int8'"),
    (["--threads", "0"], "--threads must be >= 1"),
    (["--bogus"], "unrecognized arguments"),
    (["--contention", "--loads", "3 spinners"], "invalid choice: '3 spinners'"),
    (["--isa", "avx1024"], "invalid choice: 'avx1024'"),
    (["--contention", "--sample-ms", "0"], "--sample-ms must be in (0, 60000]"),
    (["--contention", "--sample-ms", "nan"], "--sample-ms must be in (0, 60000]"),
    (["--contention", "--sample-ms", "soon"], "not a time in ms"),
])
def test_bad_arguments_exit_2(argv, message, capsys):
    with pytest.raises(SystemExit) as exc:
        cli.main(["bench", *argv])
    assert exc.value.code == 2
    assert message in capsys.readouterr().err


def test_contention_table_runs_the_loads_asked_with_an_a_a_column(monkeypatch, capsys):
    """``bench --contention --loads``: only the loads named (Dask's report
    only when asked), each under both policies, every case a row, and the
    A/A column of two one-thread samples.  Sample and warm-up times are
    shrunk: no timing is asserted."""
    monkeypatch.setattr(contention, "_SAMPLE_SECONDS", 0.001)
    monkeypatch.setattr(contention, "_RAMP_SECONDS", 0.01)
    monkeypatch.setattr(contention, "_WARM_SECONDS", 0.01)
    dask_calls = []
    monkeypatch.setattr(contention, "dask_report", lambda **kw: dask_calls.append(kw))
    code, out, _ = _run(capsys, "--contention", "--loads", "idle", "--sizes", "1e3",
                        "--dtypes", "float32", "--rounds", "2")
    assert code == 0 and dask_calls == []
    lines = out.splitlines()
    header = next(line for line in lines if line.startswith("load"))
    assert "A/A" in header.split()
    rows = [line.split() for line in lines if line.startswith(tuple(contention.LOADS))]
    assert [(r[0], r[1], r[2]) for r in rows] == [
        ("idle", policy, case) for policy in ("adaptive", "fixed")
        for case in ("float32", "cast", "strided")]
    assert all(float(r[-3]) >= 1.0 for r in rows)   # A/A, np/default mean, worst: last
    assert "each sample 1 ms of calls" in out
    code, out, _ = _run(capsys, "--contention", "--loads", "dask", "--rounds", "1")
    assert code == 0 and dask_calls == [{"count": 1}]
    assert not any(line.startswith(tuple(contention.LOADS)) for line in out.splitlines())
    # --sample-ms: each sample's length, as the header says.
    code, out, _ = _run(capsys, "--contention", "--loads", "idle", "--sizes", "1e3",
                        "--dtypes", "float32", "--rounds", "1", "--sample-ms", "2.5")
    assert code == 0 and "each sample 2.5 ms of calls" in out


def test_isa_runs_the_loops_of_another_instruction_set_and_puts_them_back(capsys):
    """``--isa``: the rows of a slower CPU on this one (the portable loops
    run everywhere); the report names the loops that ran, and the best are
    in use again after it."""
    from sigmoid_backward._kernel import _kernels
    best = _kernels.current_isa()
    code, out, _ = _run(capsys, "--isa", "portable", "--sizes", "1e3", "--dtypes", "float32",
                        "--threads", "1", "--no-small-calls")
    assert code == 0
    assert "kernels portable," in out
    assert _kernels.current_isa() == best


def test_the_report_names_the_command_as_a_shell_reruns_it():
    assert _report.command_line("bench", ["--loads", "2 spinners", "dask"]) \
        == "bench --loads '2 spinners' dask"
    assert _report.command_line("bench", []) == "bench"


def test_a_a_worst_is_the_larger_ratio_either_way_up():
    assert contention.aa_worst([1.0, 2.0, 1.0], [1.1, 1.0, 0.5]) == 2.0


def test_dask_report_times_every_block_with_an_a_a_pair():
    """The Dask half of the contention bench, at a tiny size under the
    threaded scheduler (the cluster's start takes seconds; the docs' Dask
    examples and tests/numpy_contract/test_dask.py run one)."""
    pytest.importorskip("dask.array")
    lines = []
    results = contention.dask_report(n=4_000, chunk=1_000, count=2,
                                     print_=lambda line, **kw: lines.append(line),
                                     schedulers=("threaded",))
    assert list(results) == ["threaded"]
    blocks = ["ours adaptive", "ours fixed", "ours 1 thread", "ours 1 thread A/A", "numpy",
              "no-op"]
    assert {k: len(v) for k, v in results["threaded"].items()} == {k: 2 for k in blocks}
    rows = [line for line in lines if line.startswith("  threaded")]
    assert [line[15:32].rstrip() for line in rows] == blocks
    assert "A/A worst" in rows[3] and "/1t worst" in rows[0] and "/1t worst" in rows[1]


def test_worker_threads_reports_what_a_dask_worker_runs_with():
    """What the cluster rows print of each worker: OMP_NUM_THREADS as
    distributed's nanny sets it, and our default, which follows it."""
    code = ("from sigmoid_backward.bench import contention; "
            "print(*contention.worker_threads())")
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                         text=True, check=True, timeout=120).stdout.split()
    assert out == ["1", "1"]


def test_help_names_the_command(capsys):
    with pytest.raises(SystemExit) as exc:
        cli.main(["bench", "--help"])
    assert exc.value.code == 0
    assert "python -m sigmoid_backward bench" in capsys.readouterr().out


def test_sample_rounds_interleaves_every_callable():
    order = []

    def note(name):
        return lambda: order.append(name)
    samples = timing.sample_rounds({"a": note("a"), "b": note("b")}, target_seconds=0.01)
    assert set(samples) == {"a", "b"}
    assert len(samples["a"]) == len(samples["b"]) >= 7
    assert all(t > 0 for s in samples.values() for t in s)
    assert "ab" in "".join(order) and "ba" in "".join(order)  # the order rotates


def test_sample_rounds_shuffles_each_round_when_asked():
    """Three callables rotated always meet in one cyclic order; shuffled,
    in others too (seeded: the same draws every run)."""
    rounds = {}
    for shuffle in (None, random.Random(0)):
        order = []
        # 60 us a call: a sample is one call (timing._SAMPLE_SECONDS)
        fns = {n: (lambda n=n, order=order: order.append(n) or time.sleep(60e-6))
               for n in "abc"}
        samples = timing.sample_rounds(fns, target_seconds=0.01, shuffle=shuffle)
        body = "".join(order)[9:]   # after each one's warm-up and two calibration samples
        rounds[shuffle is None] = {body[i:i + 3] for i in range(0, len(body), 3)}
        assert len(samples["a"]) >= 7
    cyclic = {"abc", "bca", "cab"}
    assert rounds[True] <= cyclic
    assert rounds[False] - cyclic


def test_sample_rounds_repeats_twins_equally_despite_a_cold_call(monkeypatch):
    """Two callables of one cost repeat their call equally often in a
    sample, though one's first timed call ran slow: each sample's first
    call pays for the previous sample's state, and unequal counts weigh
    that unequally (an A/A of 1.03 at 1e4 elements, when the counts came
    from each callable's first call)."""
    used = {"a": [], "b": []}
    sample = timing._sample

    def spy(fn, calls):
        used[fn.__name__].append(calls)
        return sample(fn, calls)

    def spin(seconds):
        end = time.perf_counter() + seconds
        while time.perf_counter() < end:
            pass

    made = []

    def a():   # its second call, the first after its warm-up, runs cold
        made.append(1)
        spin(2e-3 if len(made) == 2 else 4e-6)

    def b():
        spin(4e-6)

    monkeypatch.setattr(timing, "_sample", spy)
    samples = timing.sample_rounds({"a": a, "b": b}, target_seconds=0.01)
    rounds = len(samples["a"])
    assert rounds == len(samples["b"]) >= 7
    assert used["a"][-rounds:] == used["b"][-rounds:]
    assert used["a"][-1] >= 2   # a sample is about 50 us of 4 us calls


@pytest.mark.parametrize("dtype", ["float16", "float32", "complex128"])
def test_make_inputs_are_seeded_and_in_range(dtype):
    g, y = timing.make_inputs(1000, np.dtype(dtype))
    g2, _ = timing.make_inputs(1000, np.dtype(dtype))
    assert g.dtype == dtype and g.shape == (1000,) and g.tobytes() == g2.tobytes()
    assert ((y.real >= 0) & (y.real <= 1)).all()


@pytest.mark.parametrize("offset", [0, 1, 3])
@pytest.mark.parametrize("nbytes", [0, 15, 16, 100, 1 << 18])
def test_bandwidth_floor_xors_the_bytes(nbytes, offset):
    rng = np.random.default_rng(nbytes)
    raw = rng.integers(0, 256, (3, nbytes + offset), dtype=np.uint8)
    g, y, out = raw[0, offset:], raw[1, offset:], raw[2, offset:]
    bandwidth_floor(g, y, out, 2)
    assert (out == g ^ y).all()


def test_bandwidth_floor_checks_its_arguments():
    a = np.zeros(16, np.uint8)
    with pytest.raises(ValueError, match="g has 16 bytes, out 8"):
        bandwidth_floor(a, a, np.zeros(8, np.uint8), 1)
    with pytest.raises(ValueError, match="g must be C-contiguous"):
        bandwidth_floor(np.zeros(32, np.uint8)[::2], a, a, 1)
    ro = np.zeros(16, np.uint8)
    ro.flags.writeable = False
    with pytest.raises(ValueError, match="read-only"):
        bandwidth_floor(a, a, ro, 1)
    with pytest.raises(ValueError, match="nthreads must be >= 1"):
        bandwidth_floor(a, a, a, 0)


def test_compare_pairs_each_peer_with_ours():
    ours_calls = []
    ours, peers, spread = timing.compare(lambda: ours_calls.append(1),
                                          {"a": lambda: None, "b": lambda: None},
                                          target_seconds=0.01)
    assert ours > 0 and spread >= 1.0 and set(peers) == {"a", "b"}
    assert all(t > 0 and ratio > 0 for t, ratio in peers.values())


def test_noisy_rows_are_flagged():
    timed, columns = {"floor": (1e-3, 1.0)}, ("floor",)
    assert "noisy (2.0x)" in _report._row(np.dtype(np.float32), 1000, 1e-3, timed, 2.0, columns)
    assert "noisy" not in _report._row(np.dtype(np.float32), 1000, 1e-3, timed, 1.1, columns)


def test_contention_numpy_twin_computes_what_the_call_computes():
    """The NumPy contender of a casting case computes in the call's dtype,
    into out: the same values as ours, bit for bit, not a cheaper float32
    expression."""
    g, y = timing.make_inputs(1000, np.dtype(np.float32))
    out = np.empty_like(g)
    for kw in ({}, {"dtype": np.float64}):
        fns = contention._contenders(g, y, out, kw, None)
        fns["default"]()
        ours = out.copy()
        out[:] = np.nan
        result = fns["numpy"]()
        assert np.array_equal(ours, out if kw else result)
