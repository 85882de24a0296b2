"""``python -m sigmoid_backward bench``: the table, the plot, the errors, and
the bandwidth-floor loop it compares with.  No timings are asserted."""
import sys

import numpy as np
import pytest

from sigmoid_backward import __main__ as cli
from sigmoid_backward import _bench
from sigmoid_backward._bandwidth_floor import bandwidth_floor


def _run(capsys, *argv):
    code = cli.main(["bench", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_table_has_a_row_per_case_and_every_column(capsys):
    code, out, _ = _run(capsys, "--sizes", "1e3", "2500", "--dtypes", "float32", "bfloat16",
                        "--threads", "2")
    assert code == 0
    lines = out.splitlines()
    header = next(line for line in lines if line.startswith("dtype"))
    for column in ("ours", "GB/s", "floor", "torch", "numexpr", "numpy", "np.add"):
        assert column in header
    rows = [line.split() for line in lines if line.startswith(("float32", "bfloat16"))]
    assert [(r[0], r[1]) for r in rows] == [("float32", "1e3"), ("float32", "2,500"),
                                            ("bfloat16", "1e3"), ("bfloat16", "2,500")]
    assert "2 thread(s) for every contender" in out
    assert any(line.startswith("threads 1 -> 2, float32 n=2,500") for line in lines)


def test_missing_peers_are_dashes(monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "torch", None)
    monkeypatch.setitem(sys.modules, "numexpr", None)
    code, out, _ = _run(capsys, "--sizes", "100", "--dtypes", "float64", "--threads", "1")
    assert code == 0
    assert "torch not installed" in out and "numexpr not installed" in out
    row = next(line for line in out.splitlines() if line.startswith("float64"))
    assert row.split().count("-") == 2


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
])
def test_bad_arguments_exit_2(argv, message, capsys):
    with pytest.raises(SystemExit) as exc:
        cli.main(["bench", *argv])
    assert exc.value.code == 2
    assert message in capsys.readouterr().err


def test_help_names_the_command(capsys):
    with pytest.raises(SystemExit) as exc:
        cli.main(["bench", "--help"])
    assert exc.value.code == 0
    assert "python -m sigmoid_backward bench" in capsys.readouterr().out


def test_sample_rounds_interleaves_every_callable():
    order = []

    def note(name):
        return lambda: order.append(name)
    samples = _bench.sample_rounds({"a": note("a"), "b": note("b")}, target_seconds=0.01)
    assert set(samples) == {"a", "b"}
    assert len(samples["a"]) == len(samples["b"]) >= 7
    assert all(t > 0 for s in samples.values() for t in s)
    assert "ab" in "".join(order) and "ba" in "".join(order)  # the order rotates


@pytest.mark.parametrize("dtype", ["float16", "float32", "complex128"])
def test_make_inputs_are_seeded_and_in_range(dtype):
    g, y = _bench.make_inputs(1000, np.dtype(dtype))
    g2, _ = _bench.make_inputs(1000, np.dtype(dtype))
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
    ours, peers, spread = _bench.compare(lambda: ours_calls.append(1),
                                         {"a": lambda: None, "b": lambda: None},
                                         target_seconds=0.01)
    assert ours > 0 and spread >= 1.0 and set(peers) == {"a", "b"}
    assert all(t > 0 and ratio > 0 for t, ratio in peers.values())


def test_noisy_rows_are_flagged():
    peers = {"floor": (1e-3, 1.0)}
    assert "noisy (2.0x)" in _bench._row(np.dtype(np.float32), 1000, 1e-3, peers, 2.0)
    assert "noisy" not in _bench._row(np.dtype(np.float32), 1000, 1e-3, peers, 1.1)
