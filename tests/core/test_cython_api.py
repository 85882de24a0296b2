"""The Cython API: a small extension that cimports ``sigmoid_backward.cython_api``
(the installed .pxd), compiled here with Cython and the C compiler, computes
what the reference computes, bit for bit, without the GIL; and it refuses
None, mismatched lengths, a negative thread count and an overlapping
output, writing nothing.  docs/usage.md's Cython snippet is compiled into the
same extension, and runs as written.  Skips only when Cython (or setuptools, which drives the C
compiler) is missing, or no C compiler works."""
import importlib.resources
import importlib.util
import re
import sys
from pathlib import Path

import numpy as np
import pytest

from sigmoid_backward import reference

from dtypes_catalogue import ALL_DTYPES, BFLOAT16
from helpers import assert_same, random_array, specials

# One wrapper per function of the API, each calling it without the GIL.
FUNCTIONS = {"float32": ("float", "float"), "float64": ("double", "double"),
             "complex64": ("float_complex", "float complex"),
             "complex128": ("double_complex", "double complex"),
             "float16": ("float16", "uint16_t"), "bfloat16": ("bfloat16", "uint16_t")}
WRAPPER = '''
def {name}(const {c}[::1] g, const {c}[::1] y, {c}[::1] out, int num_threads):
    cdef int status
    with nogil:
        status = sigmoid_backward_{name}(g, y, out, num_threads)
    return status
'''
# The API's dtypes, a function each (cython_api.pxd): the table may hold more.
API_DTYPES = [dt for dt in ALL_DTYPES if dt.name in FUNCTIONS]
USAGE = (Path(__file__).resolve().parents[2] / "docs" / "usage.md").read_text()
USAGE_SNIPPETS = re.findall(r"^```cython\n(.*?)^```", USAGE, re.S | re.M)
SOURCE = ("# cython: language_level=3\n"
          "from libc.stdint cimport uint16_t\n"
          "from sigmoid_backward.cython_api cimport (\n"
          + "".join(f"    sigmoid_backward_{name},\n" for name, _ in FUNCTIONS.values())
          + ")\n"
          + "".join(WRAPPER.format(name=name, c=c) for name, c in FUNCTIONS.values())
          + "\n# docs/usage.md\n" + "\n".join(USAGE_SNIPPETS))
C_PROBE = "int probe(void) { return 0; }\n"


def _compiler_or_skip(folder):
    """A configured C compiler, or skip when none works (a trivial file does
    not compile)."""
    from setuptools._distutils.ccompiler import new_compiler
    from setuptools._distutils.errors import DistutilsError
    from setuptools._distutils.sysconfig import customize_compiler
    compiler = new_compiler()
    customize_compiler(compiler)
    (folder / "probe.c").write_text(C_PROBE)
    try:
        compiler.compile([str(folder / "probe.c")], output_dir=str(folder / "probe"))
    except (DistutilsError, OSError) as exc:
        pytest.skip(f"no working C compiler: {exc}")


def _installed_pxd(folder):
    """An include folder holding the package's .pxd as the build installed
    it (an editable install's package folder is not on sys.path)."""
    package = folder / "include" / "sigmoid_backward"
    package.mkdir(parents=True)
    installed = importlib.resources.files("sigmoid_backward") / "cython_api.pxd"
    (package / "cython_api.pxd").write_bytes(installed.read_bytes())
    return str(folder / "include")


@pytest.fixture(scope="module")
def api(tmp_path_factory):
    cython_build = pytest.importorskip("Cython.Build")
    setuptools = pytest.importorskip("setuptools")
    folder = tmp_path_factory.mktemp("cython_api_user")
    _compiler_or_skip(folder)
    (folder / "api_user.pyx").write_text(SOURCE)
    extensions = cython_build.cythonize(
        [setuptools.Extension("api_user", [str(folder / "api_user.pyx")])],
        include_path=[_installed_pxd(folder)], quiet=True)
    dist = setuptools.Distribution({"ext_modules": extensions})
    build = dist.get_command_obj("build_ext")
    build.build_lib, build.build_temp = str(folder), str(folder / "build")
    dist.run_command("build_ext")
    path = build.get_ext_fullpath("api_user")
    spec = importlib.util.spec_from_file_location("api_user", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    sys.modules.pop("api_user", None)
    return module


def _bits(a):
    """What the API takes for ``a``: the array, or its 16-bit patterns."""
    return a.view(np.uint16) if a.dtype in (np.float16, BFLOAT16) else a


def _call(api, g, y, out, num_threads=0):
    return getattr(api, FUNCTIONS[out.dtype.name][0])(_bits(g), _bits(y), _bits(out),
                                                      num_threads)


@pytest.mark.parametrize("dtype", API_DTYPES, ids=str)
@pytest.mark.parametrize("n", [0, 1, 7, 1000, 300_001])
def test_matches_the_reference_bit_for_bit(api, dtype, n):
    rng = np.random.default_rng(n)
    g, y = random_array(rng, n, dtype), random_array(rng, n, dtype)
    extra = specials(dtype)[:n]
    g[:extra.size], y[:extra.size] = extra, extra[::-1]
    out = np.full(n, 7, dtype)
    assert _call(api, g, y, out) == 0
    assert_same(out, reference.sigmoid_backward(g, y), f"{dtype} n={n}")


def test_the_usage_snippet_runs(api):
    assert len(USAGE_SNIPPETS) == 1
    g, y = np.linspace(-3, 3, 101), np.linspace(0, 1, 101)
    out = np.empty(101)
    api.grad(g, y, out)
    assert_same(out, reference.sigmoid_backward(g, y))


@pytest.mark.parametrize("num_threads", [1, 2, 64])
def test_thread_counts_give_the_same_bits(api, num_threads):
    rng = np.random.default_rng(1)
    g, y = random_array(rng, 500_000, np.float32), random_array(rng, 500_000, np.float32)
    out = np.empty_like(g)
    assert _call(api, g, y, out, num_threads) == 0
    assert_same(out, reference.sigmoid_backward(g, y), nan_payloads=True)


@pytest.mark.parametrize("dtype", API_DTYPES, ids=str)
def test_out_may_be_an_input_itself(api, dtype):
    rng = np.random.default_rng(2)
    g, y = random_array(rng, 1000, dtype), random_array(rng, 1000, dtype)
    expected = reference.sigmoid_backward(g, y)
    assert _call(api, g, y, y) == 0
    assert_same(y, expected)


def test_read_only_inputs_are_accepted(api):
    g, y = np.ones(10), np.full(10, 0.5)
    g.flags.writeable = y.flags.writeable = False
    out = np.empty(10)
    assert _call(api, g, y, out) == 0 and (out == 0.25).all()


@pytest.mark.parametrize("sizes, message", [
    ((9, 10, 10), "lengths differ: grad_output 9, output 10, grad_input 10"),
    ((10, 11, 10), "lengths differ: grad_output 10, output 11, grad_input 10"),
    ((10, 10, 9), "lengths differ: grad_output 10, output 10, grad_input 9"),
])
def test_mismatched_lengths_raise_and_write_nothing(api, sizes, message):
    g, y, out = (np.ones(n) for n in sizes)
    with pytest.raises(ValueError, match=message):
        _call(api, g, y, out)
    assert (out == 1).all()


def test_a_negative_thread_count_raises(api):
    out = np.ones(4)
    with pytest.raises(ValueError, match="num_threads must be >= 0, got -1"):
        _call(api, np.ones(4), np.ones(4), out, -1)
    assert (out == 1).all()


def test_an_output_overlapping_an_input_raises_and_writes_nothing(api):
    buffer = np.arange(12, dtype=np.float64)
    before = buffer.copy()
    with pytest.raises(ValueError, match="grad_input overlaps grad_output or output"):
        _call(api, buffer[:8], np.ones(8), buffer[2:10])
    with pytest.raises(ValueError, match="grad_input overlaps"):
        _call(api, np.ones(8), buffer[4:], buffer[:8])
    assert_same(buffer, before)


def test_views_of_another_dtype_or_not_contiguous_are_refused_by_cython(api):
    """Cython itself checks a view's dtype and contiguity, at the call."""
    with pytest.raises(ValueError, match="Buffer dtype mismatch"):
        api.float(np.ones(4), np.ones(4, np.float32), np.ones(4, np.float32), 0)
    with pytest.raises(ValueError, match="contiguous"):
        api.double(np.ones(8)[::2], np.ones(4), np.ones(4), 0)


@pytest.mark.parametrize("which", range(3))
def test_a_none_view_raises(api, which):
    args = [np.ones(4), np.ones(4), np.ones(4)]
    args[which] = None
    name = ("grad_output", "output", "grad_input")[which]
    with pytest.raises(TypeError, match=f"cython_api: {name} is None"):
        api.double(*args, 0)
    assert all((a == 1).all() for a in args if a is not None)
