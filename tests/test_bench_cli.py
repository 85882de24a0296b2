"""``python -m sigmoid_backward bench``: the table, the plot, the errors, and
the bandwidth-floor loop it compares with; the optional peers (PyTorch,
JAX, numba, numexpr) are dashes when missing.  No timings are asserted."""
import os
import sys

import ml_dtypes
import numpy as np
import pytest

from sigmoid_backward import __main__ as cli
from sigmoid_backward import _bench, reference
from sigmoid_backward._bandwidth_floor import bandwidth_floor

from helpers import assert_same

OPTIONAL_PEERS = ("torch", "jax", "numba", "numexpr")


@pytest.fixture(autouse=True)
def _restore_jax_settings():
    """The bench turns on jax_enable_x64 (and, with --threads 1, sets
    XLA_FLAGS before importing jax) in its own process; put both back, so
    that later tests see JAX's defaults."""
    flags = os.environ.get("XLA_FLAGS")
    jax = sys.modules.get("jax")
    x64 = bool(jax.config.jax_enable_x64) if jax is not None else False
    yield
    if flags is None:
        os.environ.pop("XLA_FLAGS", None)
    else:
        os.environ["XLA_FLAGS"] = flags
    jax = sys.modules.get("jax")
    if jax is not None:
        jax.config.update("jax_enable_x64", x64)


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
    for column in ("ours", "GB/s", "floor", "torch", "jax", "numba", "numexpr", "numpy",
                   "np.add"):
        assert column in header
    rows = [line.split() for line in lines if line.startswith(("float32", "bfloat16"))]
    assert [(r[0], r[1]) for r in rows] == [("float32", "1e3"), ("float32", "2,500"),
                                            ("bfloat16", "1e3"), ("bfloat16", "2,500")]
    assert "2 thread(s) for every contender" in out
    assert any(line.startswith("threads 1 -> 2, float32 n=2,500") for line in lines)


def test_small_calls_table_has_a_ratio_per_case(capsys):
    from sigmoid_backward import _small_calls
    code, out, _ = _run(capsys, "--sizes", "100", "--dtypes", "float32", "--threads", "1")
    assert code == 0
    lines = out.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("small calls, n=1,000"))
    rows = lines[start + 2:start + 2 + len(_small_calls.cases(1))]
    for name, row in zip(_small_calls.cases(1), rows, strict=True):
        assert row.startswith(name), (name, row)
        ratio = float(row[len(name):].split()[4].rstrip("x"))
        assert ratio > 0
        assert row.endswith("np.add(g, y, out=out)" if name in ("ufunc, out=", "fast path, out=")
                            else "the NumPy expression")


def test_missing_peers_are_dashes(monkeypatch, capsys):
    for name in OPTIONAL_PEERS:
        monkeypatch.setitem(sys.modules, name, None)   # import name -> ImportError
    code, out, _ = _run(capsys, "--sizes", "100", "--dtypes", "float64", "--threads", "1")
    assert code == 0
    for name in OPTIONAL_PEERS:
        assert f"{name} not installed" in out
    row = next(line for line in out.splitlines() if line.startswith("float64"))
    assert row.split().count("-") == len(OPTIONAL_PEERS)


def test_a_peer_that_cannot_run_a_dtype_is_a_dash(capsys):
    """numba has no bfloat16: its cell is a dash, the others are timed."""
    pytest.importorskip("numba")
    code, out, _ = _run(capsys, "--sizes", "100", "--dtypes", "bfloat16", "float32",
                        "--threads", "1", "--no-small-calls")
    assert code == 0
    header = next(line for line in out.splitlines() if line.startswith("dtype"))
    column = header.index("numba") + len("numba")   # cells end under their names
    cells = {line.split()[0]: line[column - 17:column].strip()
             for line in out.splitlines() if line.startswith(("bfloat16", "float32"))}
    assert cells["bfloat16"] == "-"
    assert cells["float32"].endswith("x")


@pytest.mark.parametrize("dtype", ["float32", "float64", "complex64", "complex128"])
def test_numba_peer_computes_the_formula_in_the_dtype(dtype):
    """The numba ufunc is g * (1 - y) * y (complex: g * conj((1 - y) * y))
    in the dtype itself: bit for bit the reference, specials included."""
    numba = pytest.importorskip("numba")
    dtype = np.dtype(dtype)
    g, y = _bench.make_inputs(1000, dtype)
    g[:4], y[4:8] = [0, np.inf, np.nan, -1e-30], [1, np.nan, -np.inf, 1e30]
    out = np.empty_like(g)
    ufunc = _bench.numba_ufunc(numba, dtype)
    with np.errstate(all="ignore"):
        ufunc(g, y, out=out)
        assert_same(out, reference.sigmoid_backward(g, y), str(dtype))


@pytest.mark.parametrize("dtype", [np.float16, ml_dtypes.bfloat16])
def test_numba_peer_skips_16_bit_dtypes(dtype):
    numba = pytest.importorskip("numba")
    assert _bench.numba_ufunc(numba, np.dtype(dtype)) is None


def test_jax_peer_keeps_float64():
    """jax_enable_x64 is on: float64 stays float64 (JAX would compute in
    float32 otherwise), and the result is the formula's."""
    jax = _bench._import_jax(2)
    if jax is None:
        pytest.skip("jax is not installed")
    g, y = _bench.make_inputs(1000, np.dtype(np.float64))
    import jax.numpy as jnp
    result = np.asarray(jax.jit(lambda g, y: g * (1 - y) * y)(jnp.asarray(g), jnp.asarray(y)))
    assert result.dtype == np.float64
    np.testing.assert_allclose(result, reference.sigmoid_backward(g, y), rtol=1e-15)
    assert _bench._jax_contender(jax, g, y) is not None


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
