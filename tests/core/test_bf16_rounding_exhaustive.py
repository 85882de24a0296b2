"""The vector bfloat16 roundings of _simd.h against the scalar one on all
2^32 float32 bit patterns (tests/core/bf16_rounding_exhaustive.c), for every
ISA this CPU runs.  The kernel tests reach the roundings only through
g * (1 - y) * y of 16-bit inputs; this reaches every float32, NaN payloads
included.  Slow (about 20 s); needs a C compiler and the source tree."""
import pathlib
import platform
import shutil
import subprocess
import sys

import pytest

HERE = pathlib.Path(__file__).resolve().parent
SOURCE = HERE / "bf16_rounding_exhaustive.c"
HEADERS = HERE.parents[1] / "src" / "sigmoid_backward" / "_kernel"


@pytest.mark.slow
def test_vector_bfloat16_rounding_on_every_float32(tmp_path):
    if platform.machine().lower() not in ("x86_64", "amd64"):
        pytest.skip("the vector roundings are x86-64 code")
    cc = shutil.which("cc") or shutil.which("gcc") or shutil.which("clang")
    if cc is None or not (HEADERS / "_simd.h").exists():
        pytest.skip("needs a C compiler and the source tree")
    # The dtype table's headers, as the build generates them.
    subprocess.run([sys.executable, str(HEADERS / "_dtype_codegen.py"),
                    str(HEADERS / "_dtype_spec.py"), str(tmp_path)], check=True)
    exe = tmp_path / "bf16x"
    subprocess.run([cc, "-O2", "-std=c11", "-ffp-contract=off", "-fno-fast-math",
                    f"-I{tmp_path}", f"-I{HEADERS}", str(SOURCE), "-o", str(exe)], check=True)
    run = subprocess.run([str(exe)], capture_output=True, text=True)
    lines = run.stdout.split("\n")
    assert run.returncode == 0, run.stdout + run.stderr
    assert any(line.endswith("mismatches=0") for line in lines), run.stdout
