"""``show_config()`` says how this copy was built and what it runs here, and a
copy built without OpenMP says so at import, where the user sees it."""
import json
import os
import subprocess
import sys

import pytest

import sigmoid_backward as sb
from sigmoid_backward import _build_config
from sigmoid_backward._kernel import _kernels, _threads
from sigmoid_backward._tools import _show_config

from helpers import usable_cpus

SECTIONS = ["sigmoid_backward", "Compiler", "Machine", "Python", "OpenMP", "ISA", "Threads",
            "Thresholds (bytes)", "PyTorch op"]
NO_OPENMP = "sigmoid_backward was built without OpenMP"


def test_dicts_mode_returns_every_section():
    config = sb.show_config(mode="dicts")
    assert list(config) == SECTIONS
    assert config["sigmoid_backward"] == {"version": sb.__version__}
    assert config["Compiler"]["name"] and config["Compiler"]["version"]
    assert config["Threads"] == {"default": _threads.resolve_threads(None),
                                 "requested": sb.get_num_threads(), "CPUs": _kernels.num_procs()}
    assert config["Thresholds (bytes)"] == _kernels.thresholds()


def test_openmp_section_is_the_builds():
    openmp = sb.show_config(mode="dicts")["OpenMP"]
    assert openmp["enabled"] is sb.OPENMP_ENABLED is _build_config.OPENMP["found"]
    assert openmp["build option"] in ("auto", "enabled", "disabled")
    if sb.OPENMP_ENABLED:
        runtimes = {"gcc": "libgomp (GNU)", "clang": "libomp (LLVM)", "msvc": "vcomp (MSVC)"}
        compiler = _build_config.COMPILER["name"]
        assert openmp["runtime"] == runtimes.get(compiler, openmp["runtime"])
        assert openmp["version"].split(".")[0].isdigit()
    else:
        assert "runtime" not in openmp


def test_isa_section_is_what_the_kernels_run():
    isa = sb.show_config(mode="dicts")["ISA"]
    assert isa["compiled"][0] == "portable"
    assert isa["runnable here"] == _kernels.available_isas()
    assert set(isa["runnable here"]) <= set(isa["compiled"])
    # Import selects the best this CPU runs; use_isa(None) selects it again.
    assert isa["selected"] == isa["runnable here"][-1] == _kernels.use_isa(None)
    with _kernels.settings():
        for name in isa["compiled"]:
            if name in isa["runnable here"]:
                assert _kernels.use_isa(name) == name
            else:
                with pytest.raises(ValueError, match="not available here"):
                    _kernels.use_isa(name)


def test_every_isa_the_build_has_is_listed_as_compiled():
    """On x86-64 with GCC or clang the build has every ISA (GCC 10 and
    clang 9 brought AVX512-BF16, after AVX512-VBMI, -VBMI2 and GFNI);
    elsewhere only the portable loops."""
    compiled = _kernels.compiled_isas()
    x86_dispatch = (_build_config.MACHINE["cpu family"] == "x86_64"
                    and _build_config.COMPILER["name"] in ("gcc", "clang"))
    assert compiled == (["portable", "avx2", "avx512", "avx512bf16", "avx512vbmi"] if x86_dispatch
                        else ["portable"])


def test_stdout_mode_prints_every_section(capsys):
    assert sb.show_config() is None
    out = capsys.readouterr().out
    for section in SECTIONS:
        assert f"\n{section}:\n" in f"\n{out}"
    assert f"  selected: {_kernels.available_isas()[-1]}\n" in out
    assert f"  enabled: {sb.OPENMP_ENABLED}\n" in out


def test_an_unknown_mode_is_an_error():
    with pytest.raises(ValueError, match="mode must be 'stdout' or 'dicts', got 'yaml'"):
        sb.show_config(mode="yaml")


def test_the_main_commands_lines():
    openmp, isa = _show_config.openmp_line(), _show_config.isa_line()
    assert isa == (f"ISA: {_kernels.available_isas()[-1]} "
                   f"(compiled: {', '.join(_kernels.compiled_isas())})")
    if sb.OPENMP_ENABLED:
        assert openmp.startswith(f"OpenMP: on, {_build_config.OPENMP['runtime']}, OpenMP ")
    else:
        assert openmp.startswith("OpenMP: off (") and openmp.endswith("): 1 thread")


def test_threads_are_the_count_that_runs_not_the_count_asked():
    """set_num_threads(64) on a 2-CPU machine runs 2 threads, and says so: the
    default is capped at the CPUs this process may use, as the kernels cap
    it.  In a fresh process, where OpenMP's limit is the CPUs (this run's
    environment may have lowered it)."""
    cpus = usable_cpus() if sb.OPENMP_ENABLED else 1
    asked = cpus + 62
    code = ("import json, sigmoid_backward as s\n"
            "from sigmoid_backward._tools import _show_config\n"
            f"s.set_num_threads({asked})\n"
            "print(json.dumps([s.show_config(mode='dicts')['Threads'], "
            "_show_config.openmp_line()]))\n")
    env = {k: v for k, v in os.environ.items() if k != "OMP_NUM_THREADS"}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                         check=True, timeout=300).stdout
    threads, line = json.loads(out)
    if sb.OPENMP_ENABLED:
        assert threads == {"default": cpus, "requested": asked, "CPUs": cpus}
        assert line.endswith(f": {cpus} thread{'s' if cpus != 1 else ''} by default "
                             f"(capped from {asked})")
    else:
        assert threads == {"default": 1, "requested": 1, "CPUs": 1}


@pytest.mark.parametrize("option, says", [
    ("disabled", "(built with -Dopenmp=disabled): its kernels run on one thread.  For "
                 "threads, build it again without -Dopenmp=disabled."),
    ("auto", "had no usable OpenMP at build time): its kernels run on one thread.  For "
             "threads, "),
])
def test_a_build_without_openmp_warns(monkeypatch, option, says):
    monkeypatch.setattr(_kernels, "ENABLED", False)
    monkeypatch.setitem(_build_config.OPENMP, "build option", option)
    with pytest.warns(RuntimeWarning, match=NO_OPENMP) as caught:
        _show_config.warn_if_single_threaded()
    assert len(caught) == 1 and says in str(caught[0].message)
    if option == "auto":
        assert _build_config.OPENMP["hint"] in str(caught[0].message)
        assert "-Csetup-args=-Dopenmp=enabled" in str(caught[0].message)


def test_import_warns_once_exactly_when_built_without_openmp():
    """In a fresh interpreter, with the test suite's filter for this warning
    (conftest.py) lifted: a RuntimeWarning at import, once, pointing at the
    package, in a build without OpenMP (``-Dopenmp=disabled``); nothing in
    a build with it."""
    filters = os.environ.get("PYTHONWARNINGS", "").split(",")
    env = dict(os.environ, PYTHONWARNINGS=",".join(f for f in filters if NO_OPENMP not in f))
    code = ("import warnings\n"
            "with warnings.catch_warnings(record=True) as caught:\n"
            "    warnings.simplefilter('always')\n"
            "    import sigmoid_backward\n"
            "    import sigmoid_backward.aclnn\n"
            "for w in caught:\n"
            "    print(w.category.__name__, w.filename.replace('\\\\', '/'), w.message)\n")
    proc = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                          text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    warned = [line for line in proc.stdout.splitlines() if NO_OPENMP in line]
    if sb.OPENMP_ENABLED:
        assert warned == []
    else:
        assert len(warned) == 1, proc.stdout
        assert warned[0].startswith("RuntimeWarning ")
        assert "sigmoid_backward/__init__.py" in warned[0]


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc/self/maps")
@pytest.mark.skipif(not sb.OPENMP_ENABLED, reason="built without OpenMP")
def test_the_runtime_named_is_the_one_loaded():
    """The OpenMP library a fresh process maps once it has imported the
    package is the one show_config() names (auditwheel renames libgomp to
    libgomp-<hash>, which still starts so)."""
    library = _build_config.OPENMP["runtime"].split()[0]     # "libgomp", "libomp"
    code = ("import sigmoid_backward\n"
            "print(open('/proc/self/maps').read())\n")
    maps = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True, timeout=300).stdout
    loaded = {line.rsplit("/", 1)[-1].split(".so")[0].split("-")[0]
              for line in maps.splitlines() if "/lib" in line and "omp" in line}
    assert library in loaded, loaded
