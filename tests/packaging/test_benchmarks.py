"""What benchmarks/ holds: every asv benchmark runs once at a tiny size, so
that none can rot; the other libraries' adapters (benchmarks/benchmarks/
peers.py) compute the formula; benchmarks/compare.py adds their columns to
the bench's table.

No timings are asserted.  Needs neither asv nor the other libraries
(PyTorch, JAX, numba, numexpr): their benchmarks skip themselves, as asv
skips a setup that raises NotImplementedError, and so do their tests.
"""
import importlib
import itertools
import os
import pathlib
import subprocess
import sys

import ml_dtypes
import numpy as np
import pytest

from sigmoid_backward import reference
from sigmoid_backward.bench import contention, timing

from helpers import assert_same, table_cell

BENCH_ROOT = pathlib.Path(__file__).resolve().parents[2] / "benchmarks"
PEERS = ("torch", "jax", "numba", "numexpr")
TINY = 200  # elements: enough for the broadcast benchmark's rows of 100
KINDS = ("time_", "peakmem_", "mem_", "track_", "timeraw_")


@pytest.fixture(autouse=True)
def _restore_jax_settings():
    """peers.load("jax") turns on jax_enable_x64 (and, for one thread, sets
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


def _module(name):
    if str(BENCH_ROOT) not in sys.path:
        sys.path.insert(0, str(BENCH_ROOT))
    return importlib.import_module(f"benchmarks.{name}")


MODULES = sorted(p.stem for p in (BENCH_ROOT / "benchmarks").glob("bench_*.py"))
CASES = [(m, name) for m in MODULES for name, obj in vars(_module(m)).items()
         if isinstance(obj, type) and obj.__module__ == f"benchmarks.{m}"
         and any(attr.startswith(KINDS) for attr in dir(obj))]


def _combinations(cls):
    params = getattr(cls, "params", [])
    names = getattr(cls, "param_names", [])
    if params and not isinstance(params[0], list):  # asv: a single parameter
        params = [params]
    assert len(params) == len(names), f"{cls.__name__}: params and param_names differ"
    return itertools.product(*[[TINY] if name == "n" else values
                               for name, values in zip(names, params, strict=True)])


def test_the_suite_is_found():
    assert {"bench_contiguous", "bench_general", "bench_small", "bench_peers",
            "bench_frameworks"} <= set(MODULES)
    assert len(CASES) >= 8
    assert {("bench_peers", name) for name in ("Torch", "Jax", "Numba", "Numexpr")} <= set(CASES)


# A benchmark's own timing knobs, shrunk: each runs once to show it works,
# and the contention one's 8 cases took 19 s at full length, with busy
# processes stealing CPUs from whatever ran beside the suite.
SHRUNK = {"warm_seconds": 0.01, "sample_seconds": 0.001, "rounds": 2}


@pytest.mark.parametrize("module, cls_name", CASES, ids=[f"{m}.{c}" for m, c in CASES])
def test_benchmark_runs_once(module, cls_name, monkeypatch):
    cls = getattr(_module(module), cls_name)
    for knob, value in SHRUNK.items():
        if hasattr(cls, knob):
            monkeypatch.setattr(cls, knob, value)
    monkeypatch.setattr(contention, "_WARM_SECONDS", 0.01)   # a load's start
    methods = sorted(attr for attr in dir(cls) if attr.startswith(KINDS))
    ran = 0
    for args in _combinations(cls):
        bench = cls()
        try:
            if hasattr(bench, "setup"):
                bench.setup(*args)
        except NotImplementedError:
            continue  # asv skips this combination too
        for method in methods:
            getattr(bench, method)(*args)
            ran += 1
        if hasattr(bench, "teardown"):
            bench.teardown(*args)
    if ran == 0:
        pytest.skip(f"{cls_name}: every combination skipped itself (peer not installed)")


def test_peers_skip_without_their_libraries(monkeypatch):
    peers, frameworks = _module("bench_peers"), _module("bench_frameworks")
    for name in PEERS:
        monkeypatch.setitem(sys.modules, name, None)     # import name -> ImportError
    for cls in (peers.Torch, peers.Jax, peers.Numba, peers.Numexpr, frameworks.TorchOp,
                frameworks.TorchTensors, frameworks.JaxTarget):
        args = [values[0] for values in cls.params]
        args[cls.param_names.index("n")] = TINY
        with pytest.raises(NotImplementedError, match="not installed"):
            cls().setup(*args)


# ---- the other libraries' adapters (peers.py) -------------------------------

def _peer(name):
    module = _module("peers").load(name)
    if module is None:
        pytest.skip(f"{name} is not installed")
    return module


def _inputs(dtype, specials=True):
    g, y = timing.make_inputs(1000, np.dtype(dtype))
    if specials:
        g[:4], y[4:8] = [0, np.inf, np.nan, -1e-30], [1, np.nan, -np.inf, 1e30]
    return g, y


def test_load_is_none_for_a_missing_library(monkeypatch):
    peers = _module("peers")
    for name in PEERS:
        monkeypatch.setitem(sys.modules, name, None)     # import name -> ImportError
        assert peers.load(name, 2) is None
    assert peers.versions({name: None for name in PEERS}) == ", ".join(
        f"{name} not installed" for name in PEERS)


@pytest.mark.parametrize("dtype", ["float32", "float64", "complex64", "complex128"])
def test_numba_computes_the_formula_in_the_dtype(dtype):
    """The numba ufunc is g * (1 - y) * y (complex: g * conj((1 - y) * y))
    in the dtype itself: bit for bit the reference, specials included."""
    numba = _peer("numba")
    g, y = _inputs(dtype)
    out = np.empty_like(g)
    with np.errstate(all="ignore"):
        _module("peers").numba_call(numba, g, y, out)()
        assert_same(out, reference.sigmoid_backward(g, y), dtype)


@pytest.mark.parametrize("dtype", [np.float16, ml_dtypes.bfloat16])
def test_numba_skips_16_bit_dtypes(dtype):
    numba = _peer("numba")
    g, y = _inputs(dtype, specials=False)
    assert _module("peers").numba_ufunc(numba, np.dtype(dtype)) is None
    assert _module("peers").numba_call(numba, g, y, np.empty_like(g)) is None


def test_jax_keeps_float64():
    """jax_enable_x64 is on: float64 stays float64 (JAX would compute in
    float32 otherwise), and the result is the formula's."""
    jax = _peer("jax")
    g, y = _inputs(np.float64, specials=False)
    call = _module("peers").jax_call(jax, g, y)
    assert call is not None
    result = np.asarray(call())
    assert result.dtype == np.float64
    np.testing.assert_allclose(result, reference.sigmoid_backward(g, y), rtol=1e-15)


def test_jax_on_one_thread_sets_xla_flags_before_the_import():
    """XLA reads XLA_FLAGS at import only: load("jax", 1) sets them first (in
    a fresh process, so that this one's jax is left alone)."""
    if importlib.util.find_spec("jax") is None:
        pytest.skip("jax is not installed")
    code = ("import os, sys\n"
            f"sys.path.insert(0, {str(BENCH_ROOT)!r})\n"
            "from benchmarks import peers\n"
            "jax = peers.load('jax', 1)\n"
            "print(os.environ['XLA_FLAGS'])\n"
            "print(jax.config.jax_enable_x64)\n")
    env = {k: v for k, v in os.environ.items() if k != "XLA_FLAGS"}
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env=env, check=True)
    flags, x64 = proc.stdout.splitlines()[-2:]
    assert flags == _module("peers").XLA_ONE_THREAD and x64 == "True"


@pytest.mark.parametrize("dtype", ["float32", "float64", "bfloat16"])
def test_torch_writes_its_result_into_out(dtype):
    """PyTorch's kernel on tensors over the arrays' memory: ``out`` holds
    the formula afterwards (to rounding: its loops are not ours)."""
    torch = _peer("torch")
    g, y = _inputs(ml_dtypes.bfloat16 if dtype == "bfloat16" else dtype, specials=False)
    out = np.zeros_like(g)
    _module("peers").torch_call(torch, g, y, out)()
    expected = reference.sigmoid_backward(g, y)
    np.testing.assert_allclose(out.astype(np.float64), expected.astype(np.float64),
                               rtol=2**-7 if dtype == "bfloat16" else 1e-6)


@pytest.mark.parametrize("dtype", ["float32", "complex128"])
def test_numexpr_writes_its_result_into_out(dtype):
    numexpr = _peer("numexpr")
    g, y = _inputs(dtype, specials=False)
    out = np.zeros_like(g)
    _module("peers").numexpr_call(numexpr, g, y, out)()
    np.testing.assert_allclose(out, reference.sigmoid_backward(g, y), rtol=1e-6)


def test_numexpr_refuses_bfloat16():
    numexpr = _peer("numexpr")
    g, y = _inputs(ml_dtypes.bfloat16, specials=False)
    assert _module("peers").numexpr_call(numexpr, g, y, np.empty_like(g)) is None


# ---- benchmarks/compare.py: the bench with their columns --------------------

def _compare():
    _module("peers")   # compare.py imports benchmarks.peers: BENCH_ROOT must be on sys.path
    spec = importlib.util.spec_from_file_location("bench_compare", BENCH_ROOT / "compare.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _table(capsys, *argv):
    assert _compare().main(list(argv)) == 0
    lines = capsys.readouterr().out.splitlines()
    header = next(line for line in lines if line.startswith("dtype"))
    rows = {line.split()[0]: line for line in lines
            if line.startswith(("float32 ", "float64 ", "bfloat16 "))}
    return lines, header, rows


def test_compare_puts_the_peers_between_the_floor_and_numpy(monkeypatch, capsys):
    """Missing libraries are dashes, and the header says they are missing."""
    for name in PEERS:
        monkeypatch.setitem(sys.modules, name, None)     # import name -> ImportError
    lines, header, rows = _table(capsys, "--sizes", "100", "--dtypes", "float64",
                                 "--threads", "1")
    assert lines[0] == "python benchmarks/compare.py --sizes 100 --dtypes float64 --threads 1"
    assert header.split()[4:] == ["floor", *PEERS, "numpy", "np.add"]
    for name in PEERS:
        assert f"{name} not installed" in lines[2]
        assert table_cell(header, rows["float64"], name) == "-"
    for name in ("floor", "numpy", "np.add"):
        assert table_cell(header, rows["float64"], name).endswith("x")
    assert any(line.startswith("small calls") for line in lines)


def test_compare_times_every_installed_peer(capsys):
    """Each installed library has a ratio where it can compute the dtype:
    float32 for all; bfloat16 for PyTorch and JAX only (numba and numexpr
    have no bfloat16: a dash)."""
    installed = [name for name in PEERS if importlib.util.find_spec(name)]
    if not installed:
        pytest.skip("none of torch, jax, numba, numexpr is installed")
    _, header, rows = _table(capsys, "--sizes", "100", "--dtypes", "float32", "bfloat16",
                             "--threads", "1", "--no-small-calls")
    for name in installed:
        assert table_cell(header, rows["float32"], name).endswith("x"), name
        bf16 = table_cell(header, rows["bfloat16"], name)
        if name in ("numba", "numexpr"):
            assert bf16 == "-", name
        else:
            assert bf16.endswith("x"), name


def test_compare_script_runs_from_anywhere(tmp_path):
    """``python benchmarks/compare.py`` finds benchmarks/benchmarks/peers.py
    through its own folder, whatever the working directory."""
    proc = subprocess.run([sys.executable, str(BENCH_ROOT / "compare.py"), "--help"],
                          capture_output=True, text=True, cwd=tmp_path, check=True)
    assert proc.stdout.startswith("usage: python benchmarks/compare.py")
    text = " ".join(proc.stdout.split())
    assert "--sizes N" in text and "and other libraries where installed" in text
