"""Shared test helpers: the one exact comparison, the thread
runner, a Ctrl-C runner, the memory in use, what this process runs on
(CPUs, a sanitizer), the array generators, and the optional frameworks'
import.  Objects whose export raises are in hostile.py; the dtypes, by
name, in dtypes_catalogue.py."""
import ctypes
import importlib
import os
import re
import signal
import subprocess
import sys
import threading

import ml_dtypes
import numpy as np
import pytest

from dtypes_catalogue import BY_NAME

WAIT = 60  # seconds: a bound for a hung thread, never reached when all is well


# ---- optional frameworks -----------------------------------------------------

# CI's framework step sets it: there a missing torch or jax fails the tests
# that need it, instead of skipping them.
REQUIRE_FRAMEWORKS = os.environ.get("SIGMOID_BACKWARD_REQUIRE_FRAMEWORKS") == "1"


def import_framework(name):
    """``import name`` (torch, jax, ...); the test skips when it is missing,
    or fails under SIGMOID_BACKWARD_REQUIRE_FRAMEWORKS=1."""
    if REQUIRE_FRAMEWORKS:
        return importlib.import_module(name)
    return pytest.importorskip(name)


def tensor_values(t):
    """A PyTorch tensor's values as an ndarray over its memory (ml_dtypes'
    types, bfloat16 and float8, through their bits; autograd history
    dropped)."""
    torch = sys.modules["torch"]
    t = t.detach()
    name = str(t.dtype).removeprefix("torch.")
    dtype = BY_NAME.get(name)
    if dtype is not None and dtype.type.__module__ == "ml_dtypes":   # torch's .numpy() refuses
        return t.view(getattr(torch, f"int{8 * dtype.itemsize}")).numpy().view(dtype)
    return t.numpy()


# ---- comparing ---------------------------------------------------------------

_UINT = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}


def _describe(a):
    order = "C" if a.flags.c_contiguous else "F" if a.flags.f_contiguous else "strided"
    return f"dtype={a.dtype} shape={a.shape} order={order} strides={a.strides}"


def _bits_and_nans(a):
    """``a``'s elements in C order as unsigned integers, one row per element
    and one column per real part (two for complex), in native byte order;
    and where those parts are NaN."""
    native = np.array(a, dtype=a.dtype.newbyteorder("="), order="C", copy=True)
    parts = native.reshape(-1, 1)   # 0-d, empty and 64-d arrays too
    if parts.dtype.kind == "c":
        parts = parts.view(np.dtype(f"f{parts.dtype.itemsize // 2}"))
    if parts.dtype.kind in "biu":
        nans = np.zeros(parts.shape, bool)
    else:
        nans = np.isnan(parts.astype(np.float64))   # bfloat16 and float16 included
    return parts.view(_UINT[parts.dtype.itemsize]), nans


def assert_same(actual, expected, context="", *, nan_payloads=False):
    """Same dtype (byte order aside: a byte-swapped ``out`` compares by value)
    and shape, and every element bit-identical; a real or imaginary part that
    is NaN on both sides matches whatever its sign and payload, which are not
    specified (they differ between instruction sets, and between a vector
    loop's body and its tail).  ``nan_payloads=True`` compares NaNs' bits too,
    for the tests whose point is that two calls run the very same code."""
    actual_arr, expected_arr = np.asarray(actual), np.asarray(expected)
    context = f"{context}: " if context else ""
    arrays = f"actual {_describe(actual_arr)}; expected {_describe(expected_arr)}"
    assert actual_arr.dtype.newbyteorder("=") == expected_arr.dtype.newbyteorder("="), \
        f"{context}dtypes differ; {arrays}"
    assert actual_arr.shape == expected_arr.shape, f"{context}shapes differ; {arrays}"
    a_bits, a_nans = _bits_and_nans(actual_arr)
    e_bits, e_nans = _bits_and_nans(expected_arr)
    differ = a_bits != e_bits
    if not nan_payloads:
        differ &= ~(a_nans & e_nans)
    bad = np.flatnonzero(differ.any(axis=-1))
    if bad.size:
        first = np.unravel_index(bad[0], actual_arr.shape)
        width = 2 + 2 * a_bits.itemsize

        def bits(b):
            return " ".join(f"{int(x):#0{width}x}" for x in b[bad[0]])
        raise AssertionError(
            f"{context}{bad.size} of {actual_arr.size} elements differ, the first at index "
            f"{tuple(int(i) for i in first)}: {actual_arr[first]!r} (bits {bits(a_bits)}) "
            f"!= {expected_arr[first]!r} (bits {bits(e_bits)}); {arrays}")


def eps(dtype):
    """The spacing of 1.0 in ``dtype`` (of its parts, for complex)."""
    dtype = np.dtype(dtype)
    if dtype.kind == "c":
        dtype = np.dtype(dtype.type(0).real.dtype)
    return float(finfo(dtype).eps)


def finfo(dtype):
    """ml_dtypes.finfo for its types (np.finfo knows them only from ml_dtypes
    0.7 on), NumPy's for the others."""
    return ml_dtypes.finfo(dtype) if dtype.type.__module__ == "ml_dtypes" else np.finfo(dtype)


def assert_within_roundings(actual, expected, roundings=2, context=""):
    """Same dtype and shape, NaNs where ``expected`` has them, and every other
    element within ``roundings`` times its dtype's eps times the largest
    ``expected`` (normwise: two formulas of one derivative differ by more,
    relatively, where one of them cancels near zero)."""
    actual_arr, expected_arr = np.asarray(actual), np.asarray(expected)
    assert actual_arr.dtype == expected_arr.dtype and actual_arr.shape == expected_arr.shape, \
        f"{context}: {actual_arr.dtype}{actual_arr.shape} != {expected_arr.dtype}" \
        f"{expected_arr.shape}"
    wide = np.complex128 if actual_arr.dtype.kind == "c" else np.float64
    a, e = actual_arr.astype(wide), expected_arr.astype(wide)
    nan = np.isnan(e)
    assert (np.isnan(a) == nan).all(), f"{context}: NaNs differ"
    scale = max(float(np.abs(e[~nan]).max(initial=0.0)), np.finfo(np.float64).tiny)
    error = float(np.abs(a[~nan] - e[~nan]).max(initial=0.0)) / (eps(actual_arr.dtype) * scale)
    assert error <= roundings, \
        f"{context}: off by {error:.2f} roundings of {actual_arr.dtype} (allowed {roundings})"


# ---- threads -----------------------------------------------------------------

def run_threads(target, count, *, barrier=False, timeout=WAIT):
    """Run ``target(i)`` for i in range(count), each in its own thread, all
    released at once by a barrier if ``barrier``; join them (each within
    ``timeout`` seconds, failing if one hangs) and return what they raised,
    as (i, exception) pairs: [] when every call returned."""
    errors = []
    start = threading.Barrier(count) if barrier else None

    def guarded(i):
        try:
            if start is not None:
                start.wait(timeout)
            target(i)
        except BaseException as exc:  # reported by the calling thread
            errors.append((i, exc))

    threads = [threading.Thread(target=guarded, args=(i,)) for i in range(count)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout)
    assert not any(t.is_alive() for t in threads), "a thread hung"
    return errors


# ---- processes and memory -------------------------------------------------------

def interrupted(script, timeout=WAIT):
    """Run ``script`` in a fresh Python; once it prints "ready", let it get
    into its loop (0.3 s) and send it SIGINT, as Ctrl-C does.  Returns
    (returncode, stdout after "ready", stderr)."""
    proc = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stdout.readline() == "ready\n"
        threading.Event().wait(0.3)  # let it get into the loop
        proc.send_signal(signal.SIGINT)
        stdout, stderr = proc.communicate(timeout=timeout)
    finally:
        proc.kill()
        proc.wait()
    return proc.returncode, stdout, stderr


def rss_bytes():
    """This process's resident memory (Linux: /proc/self/statm)."""
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def usable_cpus():
    """The CPUs this process may use, as OpenMP counts them: its affinity
    mask where the OS has one (Linux), else every CPU (macOS, Windows)."""
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


def under_asan():
    """Whether AddressSanitizer's runtime is in this process (CI's sanitizer
    build preloads it): its allocator keeps freed memory in quarantine."""
    try:
        return hasattr(ctypes.CDLL(None), "__asan_init")
    except (OSError, TypeError):   # Windows: no handle to the process's symbols
        return False


# ---- generating --------------------------------------------------------------

SPECIALS = [0.0, -0.0, 1.0, -1.0, 0.5, 2.0, np.inf, -np.inf, np.nan, 1e-45, -1e-45,
            1.17e-38, 5e-324, 1e-310, 3.4028235e38, -3.4028235e38, 1.7976931348623157e308,
            -1.7976931348623157e308, 65504.0, -65504.0, 6e-8, 6.1e-5, 3.3895e38]


def specials(dtype):
    """Special values (+-0, +-inf, NaN, subnormals, largest finite) in dtype;
    for complex, every pair of them as (real, imag)."""
    dtype = np.dtype(dtype)
    info = finfo(dtype)
    extra = [float(info.max), -float(info.max), float(info.smallest_subnormal),
             -float(info.smallest_subnormal), float(info.tiny)]
    values = SPECIALS + extra
    with np.errstate(over="ignore", under="ignore"):
        if dtype.kind == "c":
            return np.array([complex(a, b) for a in values for b in values], dtype)
        return np.array(values, np.float64).astype(dtype)


def random_array(rng, shape, dtype, scale=4.0):
    dtype = np.dtype(dtype)
    if dtype.kind == "c":
        part = dtype.type(0).real.dtype
        return (rng.standard_normal(shape) * scale).astype(part) + \
            1j * (rng.standard_normal(shape) * scale).astype(part)
    return (rng.standard_normal(shape) * scale).astype(dtype)


def layouts(rng, shape, dtype):
    """The same logical array in several memory layouts (bottleneck-style)."""
    base = random_array(rng, shape, dtype)
    yield "C", base
    yield "F", np.asfortranarray(base)
    big = random_array(rng, tuple(2 * s for s in shape), dtype)
    strided = big[tuple(slice(None, None, 2) for _ in shape)]
    yield "strided", strided
    yield "reversed", base[tuple(slice(None, None, -1) for _ in shape)]
    if dtype.type.__module__ != "ml_dtypes":   # ml_dtypes' types have no byte order
        yield "byteswapped", base.astype(base.dtype.newbyteorder())
    ro = base.copy()
    ro.flags.writeable = False
    yield "readonly", ro
    if base.ndim >= 2:
        yield "transposed", np.ascontiguousarray(base.T).T


def zero_strided(shape, writeable=False):
    """A float32 array of ``shape`` over one element: NumPy's way to say huge."""
    return np.lib.stride_tricks.as_strided(np.zeros(1, np.float32), shape=shape,
                                           strides=(0,) * len(shape), writeable=writeable)


# ---- the installed typing files, for mypy (test_typing, test_readme) --------

TYPING_FILES = ("py.typed", "__init__.pyi", "reference.pyi", "aclnn/__init__.pyi")


def installed_stubs(root):
    """A MYPYPATH folder under ``root`` holding the package's typing files as
    the build installed them (not the source tree's), so that mypy checks
    against what users get, also from an editable install."""
    import importlib.resources
    package = root / "stubs" / "sigmoid_backward"
    (package / "aclnn").mkdir(parents=True)
    installed = importlib.resources.files("sigmoid_backward")
    for name in TYPING_FILES:
        assert (installed / name).is_file(), f"{name} is not installed (meson.build)"
        (package / name).write_bytes((installed / name).read_bytes())
    return root / "stubs"


# ---- the bench's tables --------------------------------------------------------

def table_cell(header, row, column):
    """The text of ``column`` in a row of a bench table: cells end under
    their names."""
    end = header.index(f" {column}") + 1 + len(column)
    return row[end - 17:end].strip()


# ---- NumPy's own words ------------------------------------------------------

def numpy_refusal(call):
    """What the installed NumPy raises when ``call(np.multiply)`` is made,
    as (exception type, regex of its message with the ufunc's name made
    ours): a test of a refusal that NumPy itself words asks NumPy at run
    time instead of freezing today's text."""
    try:
        call(np.multiply)
    except Exception as error:   # whichever NumPy raises is the expectation
        message = str(error).replace("'multiply'", "'sigmoid_backward'")
        return type(error), re.escape(message)
    raise AssertionError("np.multiply accepted the call: nothing to compare with")


def huge_page_bytes():
    """The kernel's transparent huge page size when it gives huge pages to
    advised memory only (mode "madvise"); 0 otherwise, or off Linux."""
    root = "/sys/kernel/mm/transparent_hugepage/"
    try:
        with open(root + "enabled") as f:
            mode = f.read()
        with open(root + "hpage_pmd_size") as f:
            size = int(f.read())
    except (OSError, ValueError):
        return 0
    return size if "[madvise]" in mode else 0


def _vm_flags(address):
    """The VmFlags of the mapping that holds the address (/proc/self/smaps)."""
    inside = False
    with open("/proc/self/smaps") as f:
        for line in f:
            head = line.split(maxsplit=1)[0]
            if not head.endswith(":"):   # a mapping's first line: "lo-hi perms ..."
                lo, hi = (int(x, 16) for x in head.split("-"))
                inside = lo <= address < hi
            elif inside and head == "VmFlags:":
                return line.split()[1:]
    raise LookupError(f"no mapping holds {address:#x}")


def advised_huge_pages(data):
    """Is the first huge page wholly inside a buffer that starts at ``data``
    (an address) advised MADV_HUGEPAGE (VmFlags "hg")?"""
    huge = huge_page_bytes()
    return "hg" in _vm_flags(-(-data // huge) * huge)
