"""Every asv benchmark runs once at a tiny size, so that none can rot.

No timings are asserted.  Needs neither asv nor the peers (PyTorch,
numexpr): their benchmarks skip themselves, as asv skips a setup that
raises NotImplementedError.
"""
import importlib
import itertools
import pathlib
import sys

import pytest

BENCH_ROOT = pathlib.Path(__file__).resolve().parent.parent / "benchmarks"
TINY = 200  # elements: enough for the broadcast benchmark's rows of 100
KINDS = ("time_", "peakmem_", "mem_", "track_", "timeraw_")


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


@pytest.mark.parametrize("module, cls_name", CASES, ids=[f"{m}.{c}" for m, c in CASES])
def test_benchmark_runs_once(module, cls_name):
    cls = getattr(_module(module), cls_name)
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
    for name in ("torch", "numexpr", "jax"):
        monkeypatch.setitem(sys.modules, name, None)     # import name -> ImportError
    for cls in (peers.Torch, peers.Numexpr, frameworks.TorchOp, frameworks.TorchTensors,
                frameworks.JaxTarget):
        args = [values[0] for values in cls.params]
        args[cls.param_names.index("n")] = TINY
        with pytest.raises(NotImplementedError, match="not installed"):
            cls().setup(*args)
