"""The built kernel module: no fused multiply-add anywhere in it (the exact
results depend on it), and the instruction sets it offers are the ones the
CPU's flags allow."""
import os
import platform
import re
import shutil
import subprocess

import pytest

from sigmoid_backward._kernel import _kernels

# ---- the built module --------------------------------------------------------

def _kernels_disassembly():
    if platform.machine().lower() not in ("x86_64", "amd64"):
        pytest.skip("the FMA check reads x86-64 code")
    objdump = shutil.which("objdump")
    if objdump is None:
        pytest.skip("objdump is not installed")
    return subprocess.run([objdump, "-d", "--no-show-raw-insn", _kernels.__file__],
                          check=True, capture_output=True, text=True).stdout


def test_module_has_no_fused_multiply_add():
    """Every loop uses separate multiplies and adds, as the reference does:
    a fused multiply-add rounds once where the reference rounds twice, so
    not one vfmadd/vfmsub/vfmaddsub/vfmsubadd/vfnmadd/vfnmsub instruction
    may appear in the kernels, on any ISA."""
    code = _kernels_disassembly()
    fused = re.findall(r"^\s*[0-9a-f]+:\s+(v?fn?m(?:add|sub)\w*)", code, re.MULTILINE)
    assert fused == [], f"{len(fused)} fused multiply-adds, e.g. {sorted(set(fused))[:5]}"
    assert re.search(r"\bvmulps\b", code)  # the disassembly is of real loops


def test_isas_match_the_cpu_flags():
    """What cpuid reports (_cpu.h) agrees with the kernel's view in
    /proc/cpuinfo, which also hides what the OS does not save."""
    if not os.path.exists("/proc/cpuinfo") or platform.machine() != "x86_64":
        pytest.skip("needs Linux on x86-64")
    with open("/proc/cpuinfo") as f:
        flags = set(next(line for line in f if line.startswith("flags")).split(":")[1].split())
    avx2 = {"avx2", "f16c"} <= flags
    avx512 = avx2 and {"avx512f", "avx512bw", "avx512vl", "avx512dq"} <= flags
    expected = ["portable"] + ["avx2"] * avx2 + ["avx512"] * avx512
    if avx512 and "avx512_bf16" in flags:
        expected.append("avx512bf16")
        if {"avx512vbmi", "avx512_vbmi2", "gfni"} <= flags:
            expected.append("avx512vbmi")
    assert _kernels.available_isas() == expected
