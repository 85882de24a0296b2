"""The portable loops, cross-compiled for AArch64 and run under qemu-user,
against the reference twin, bit for bit.

Off x86 the C headers (_loops.h, _half.h, _nontemporal.h, _cpu.h) compile to
their portable loops only.  This test compiles them with
``aarch64-linux-gnu-gcc -std=c11 -ffp-contract=off -fno-fast-math`` (at -O2,
and at -O3 as a release build compiles them, where GCC vectorises them with
NEON) into a small static program, runs it under ``qemu-aarch64``, and
compares what it computes with :func:`sigmoid_backward.reference.sigmoid_backward`:
float16 and bfloat16 over all 65,536 bit patterns of each argument, every
pair of special values (±0, ±inf, NaN, subnormals, the largest finite
values) for every dtype, and random bit patterns.  NaNs are compared by
position: a NaN result must be a NaN; its payload and sign may differ.

The program also checks, in C, that each loop gives the same bytes in place
(out == g, out == y) and through the non-temporal copy (a plain memcpy off
x86).  It skips when the cross compiler or qemu is not installed
(Debian: gcc-aarch64-linux-gnu, libc6-dev-arm64-cross, qemu-user), and
fails instead when SIGMOID_BACKWARD_REQUIRE_AARCH64=1 (as .ci/run sets it).
"""
import os
import pathlib
import shutil
import subprocess
import sys

import ml_dtypes
import numpy as np
import pytest

from sigmoid_backward import reference

from dtypes_catalogue import ALL_DTYPES
from helpers import assert_same

SRC = pathlib.Path(__file__).resolve().parents[2] / "src" / "sigmoid_backward" / "_kernel"
CC = shutil.which("aarch64-linux-gnu-gcc")
QEMU = shutil.which("qemu-aarch64") or shutil.which("qemu-aarch64-static")

# CI sets this, so that missing tools fail the run instead of skipping it.
REQUIRED = os.environ.get("SIGMOID_BACKWARD_REQUIRE_AARCH64") == "1"


def _missing():
    if CC is None or QEMU is None:
        return ("needs aarch64-linux-gnu-gcc and qemu-aarch64 (Debian: "
                "gcc-aarch64-linux-gnu, libc6-dev-arm64-cross, qemu-user)")
    if not (SRC / "_loops.h").exists():
        return f"needs the source tree ({SRC})"
    return None

# The dtypes by the names the program takes (the C table's).
DTYPES = {dt.name: dt for dt in ALL_DTYPES}

PROGRAM = r"""
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "_dispatch.h"

/* usage: prog DTYPE N G Y OUT -- reads N elements of G and Y, writes OUT.
 * Exit 2: bad use; 3: in-place or non-temporal results differ. */
static void *slurp(const char *path, size_t nbytes)
{
    char *buf = malloc(nbytes + 64);
    FILE *f = fopen(path, "rb");
    if (!buf || !f || fread(buf, 1, nbytes, f) != nbytes) { perror(path); exit(2); }
    fclose(f);
    return buf;
}

typedef void (*loop_t)(const void *, const void *, void *, ptrdiff_t);

int main(int argc, char **argv)
{
    if (argc != 6) return 2;
    sb_dispatch_init();
    const char *isa = sb_select_isa(NULL);
    if (isa == NULL || strcmp(isa, "portable") != 0 || sb_num_isas() != 1) {
        fprintf(stderr, "expected the portable loops only, got %s\n", isa ? isa : "NULL");
        return 2;
    }
    /* the dtype by its name in the table (_dtypes.h) */
    int kind = -1;
    for (int k = 0; k < SB_NUM_KINDS; k++)
        if (!strcmp(argv[1], sb_kind_names[k])) kind = k;
    if (kind < 0) return 2;
    const ptrdiff_t n = atol(argv[2]);
    const loop_t loop = sb_loop_for(sb_loops_in_use(), kind);
    const size_t item = (size_t)sb_kind_sizes[kind];
    const ptrdiff_t count = n;
    const size_t nbytes = (size_t)n * item;
    char *g = slurp(argv[3], nbytes), *y = slurp(argv[4], nbytes);
    char *out = malloc(nbytes + 64), *again = malloc(nbytes + 64), *block = malloc(nbytes + 64);
    if (!out || !again || !block) return 2;
    loop(g, y, out, count);
    /* in place: out == g, then out == y */
    memcpy(again, g, nbytes);
    loop(again, y, again, count);
    if (memcmp(again, out, nbytes)) { fprintf(stderr, "out == g differs\n"); return 3; }
    memcpy(again, y, nbytes);
    loop(g, again, again, count);
    if (memcmp(again, out, nbytes)) { fprintf(stderr, "out == y differs\n"); return 3; }
    /* the streaming path: compute into a block, copy it to a misaligned out */
    loop(g, y, block, count);
    sb_loops_in_use()->nt_copy(again + 8, block, nbytes);
    sb_nt_fence();
    if (memcmp(again + 8, out, nbytes)) { fprintf(stderr, "nt_copy differs\n"); return 3; }
    FILE *f = fopen(argv[5], "wb");
    if (!f || fwrite(out, 1, nbytes, f) != nbytes) { perror(argv[5]); return 2; }
    fclose(f);
    return 0;
}
"""


@pytest.fixture(scope="module", params=["-O2", "-O3"])
def program(request, tmp_path_factory):
    missing = _missing()
    if missing and REQUIRED:
        pytest.fail(f"SIGMOID_BACKWARD_REQUIRE_AARCH64=1, but this test {missing}")
    if missing:
        pytest.skip(missing)
    folder = tmp_path_factory.mktemp("aarch64")
    (folder / "prog.c").write_text(PROGRAM)
    # The dtype table's headers, as the build generates them.
    subprocess.run([sys.executable, str(SRC / "_dtype_codegen.py"), str(SRC / "_dtype_spec.py"),
                    str(folder)], check=True, timeout=60)
    exe = folder / "prog"
    cmd = [CC, "-std=c11", request.param, "-ffp-contract=off", "-fno-fast-math", "-static",
           f"-I{folder}", f"-I{SRC}", "-o", str(exe), str(folder / "prog.c"),
           "-lm"]   # fenv.h (_fpflags.h), which glibc keeps in libm
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, f"{' '.join(cmd)}\n{proc.stderr}"
    return folder, exe


def run(program, dtype_name, g, y):
    folder, exe = program
    dt = DTYPES[dtype_name]
    g, y = np.ascontiguousarray(g, dt), np.ascontiguousarray(y, dt)
    assert g.shape == y.shape and g.ndim == 1
    g.tofile(folder / "g.bin")
    y.tofile(folder / "y.bin")
    proc = subprocess.run([QEMU, str(exe), dtype_name, str(g.size), str(folder / "g.bin"),
                           str(folder / "y.bin"), str(folder / "out.bin")],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    return np.fromfile(folder / "out.bin", dt)


def expected(g, y, dtype_name):
    with np.errstate(all="ignore"):
        return np.asarray(reference.sigmoid_backward(np.asarray(g, DTYPES[dtype_name]),
                                                     np.asarray(y, DTYPES[dtype_name])))


def specials(dtype):
    """±0, ±inf, NaN, the smallest and largest subnormals, the smallest
    normal, the largest finite, and values around 0, 1 and 2."""
    real = np.dtype(np.float32 if dtype == np.complex64 else
                    np.float64 if dtype == np.complex128 else dtype)
    info = ml_dtypes.finfo(real) if real.type.__module__ == "ml_dtypes" else np.finfo(real)
    tiny, big = real.type(info.smallest_subnormal), real.type(info.max)
    values = [0.0, -0.0, np.inf, -np.inf, np.nan, tiny, -tiny, info.smallest_normal,
              info.smallest_normal - tiny, -(info.smallest_normal - tiny), big, -big,
              1.0, -1.0, 0.5, 2.0, 3.0, 1 + info.eps, 1 - info.epsneg, 0.25, -0.75, 1e-3]
    with np.errstate(all="ignore"):
        values = np.array([real.type(v) for v in values], real)
    if np.dtype(dtype).kind == "c":
        re, im = np.meshgrid(values[::2], values[1::3])
        return (re + 1j * im).astype(dtype).ravel()
    return values


def pairs(values):
    g, y = np.meshgrid(values, values, indexing="ij")
    return g.ravel(), y.ravel()


def random_bits(rng, n, dtype):
    dt = np.dtype(dtype)
    return rng.integers(0, 256, n * dt.itemsize, dtype=np.uint8).view(dt)


@pytest.mark.parametrize("name", ["float16", "bfloat16"])
def test_16_bit_exhaustive(program, name):
    """Every bit pattern as y against cycled specials and random g, then
    every bit pattern as g against cycled specials and random y."""
    dt = DTYPES[name]
    every = np.arange(65536, dtype=np.uint16).view(dt)
    rng = np.random.default_rng(16)
    partner = np.resize(np.concatenate([specials(dt), random_bits(rng, 4096, dt)]), 65536)
    for g, y in ((partner, every), (every, partner), (every, every[::-1].copy())):
        assert_same(run(program, name, g, y), expected(g, y, name))


@pytest.mark.parametrize("name", list(DTYPES))
def test_special_values_every_pair(program, name):
    g, y = pairs(specials(DTYPES[name]))
    assert_same(run(program, name, g, y), expected(g, y, name))


@pytest.mark.parametrize("name", ["float32", "float64", "complex64", "complex128"])
def test_random_values_and_bit_patterns(program, name):
    dt = DTYPES[name]
    rng = np.random.default_rng(64)
    n = 20_001   # odd: the vector loops' tails run too
    real = np.float32 if dt in (np.float32, np.complex64) else np.float64

    def values():
        v = rng.uniform(-3, 3, n).astype(real)
        return (v + 1j * rng.uniform(-3, 3, n).astype(real)).astype(dt) if dt.kind == "c" \
            else v.astype(dt)
    for g, y in ((values(), values()), (random_bits(rng, n, dt), random_bits(rng, n, dt))):
        assert_same(run(program, name, g, y), expected(g, y, name))
