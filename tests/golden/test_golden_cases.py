"""``python -m sigmoid_backward golden --cases``: CANN's case files in, every
case's inputs, golden and the manifest out.  The case files under
tests/golden/data hold the facts of ops-nn's (tests/golden/data/README.md)."""
import collections
import json
import math

import numpy as np
import pytest

from sigmoid_backward import reference
from sigmoid_backward.golden import cases, generate
from sigmoid_backward.golden._bits import real_part_dtype, rounded
from sigmoid_backward.golden._files import ArrayFile

from dtypes_catalogue import BFLOAT16, BY_NAME
from golden_support import (
    ATK,
    TTK_ACLNN,
    TTK_KERNEL,
    files,
    kernel_formula,
    run_command,
    run_golden,
)
from helpers import assert_same

LARGEST = [8, 239, 42, 2048]


def _shrunk_atk(folder):
    """ops-nn's ATK cases, the 164M-element one cut to a few hundred values
    (the full set runs in the slow test)."""
    data = json.loads(ATK.read_text())
    for inp in data[-1]["inputs"]:
        assert inp["shape"] == LARGEST
        inp["shape"] = [8, 2, 3, 5]
    path = folder / "atk.json"
    path.write_text(json.dumps(data))
    return path


def _read(folder, entry):
    return ArrayFile(folder / entry["file"], entry["name"], BY_NAME[entry["dtype"]],
                     tuple(entry["shape"])).read()


def _check_range(values, value_range, what):
    """Every value (both parts for complex) in [lo, hi], or the one value."""
    real = real_part_dtype(values.dtype)
    parts = np.ascontiguousarray(values).reshape(-1).view(real).astype(np.float64)
    if len(value_range) == 2:
        lo, hi = value_range
        assert ((parts >= lo) & (parts <= hi)).all(), what
        return
    value = {"nan": math.nan, "inf": math.inf, "-inf": -math.inf}.get(*value_range * 2)
    if math.isnan(value):
        assert np.isnan(parts).all(), what
    else:
        assert (parts == float(rounded(value, real))).all(), what


def _check_folder(folder, expected_golden):
    """Every case of ``folder/manifest.json``: inputs in range, the golden
    bit-equal (NaN positions included) to ``expected_golden(case, inputs)``."""
    manifest = json.loads((folder / "manifest.json").read_text())
    for case in manifest["cases"]:
        inputs = {}
        for inp in case["inputs"]:
            values = _read(folder, inp)
            _check_range(values, inp["range"], f"{case['name']} {inp['name']}")
            inputs[inp["name"]] = values
        golden = _read(folder, {"file": case["golden"], "name": "golden",
                                "dtype": case["dtype"], "shape": case["shape"]})
        assert_same(golden, expected_golden(case, inputs), case["name"])
    return manifest


def _kernel_golden(case, inputs):
    y = inputs.get("y", inputs.get("output"))
    dy = inputs.get("dy", inputs.get("gradOutput"))
    return kernel_formula(y, dy, golden_dtype(case))


def golden_dtype(case):
    return BY_NAME[case["dtype"]]


# --- the case files ---------------------------------------------------------------

def test_the_atk_file_has_ops_nns_204_cases():
    found = cases(ATK)
    assert [c.name for c in found] == [f"aclnnSigmoidBackward_{i}" for i in range(204)]
    assert collections.Counter(c.dtype.name for c in found) == {
        "bfloat16": 36, "float16": 35, "float32": 35, "complex64": 33, "complex128": 33,
        "float64": 32}
    assert all([i.name for i in c.inputs] == ["gradOutput", "output"] for c in found)
    biggest = max(found, key=lambda c: c.size)
    assert (biggest.dtype, list(biggest.shape), biggest.size) == (BFLOAT16, LARGEST, 164_462_592)
    ranges = collections.Counter(str(i.range) for c in found for i in c.inputs)
    assert ranges == {"(-1, 1)": 327, "(-10, 10)": 50, "(nan,)": 12, "(inf,)": 11,
                      "(-inf,)": 8}


def test_golden_cases_writes_every_atk_case(tmp_path, capsys):
    status, out, err = run_golden(capsys, "--cases", _shrunk_atk(tmp_path), "--out-dir",
                               tmp_path / "out")
    assert (status, err) == (0, "")
    lines = out.splitlines()
    assert len(lines) == 205 and lines[0].startswith("1/204 aclnnSigmoidBackward_0: float16")
    assert lines[-1] == f"wrote 204 cases and their manifest.json to {tmp_path / 'out'}"
    manifest = _check_folder(tmp_path / "out", _kernel_golden)
    assert len(manifest["cases"]) == 204 and len(files(tmp_path / "out")) == 3 * 204 + 1
    first = manifest["cases"][0]
    assert first["inputs"][0]["file"] == "aclnnSigmoidBackward_0_gradOutput.bin"
    assert (first["golden"], first["format"], first["tolerance"]) == (
        "aclnnSigmoidBackward_0_golden.bin", "bin", None)


@pytest.mark.slow
def test_golden_cases_on_the_full_atk_file(tmp_path):
    """The 164M-element bfloat16 case too, as a user runs it (about a minute,
    and some GB of memory for the check, which reads every file whole)."""
    proc = run_command("golden", "--cases", ATK, "--out-dir", tmp_path, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    _check_folder(tmp_path, _kernel_golden)


def test_the_kernel_csv_gives_y_then_dy(tmp_path, capsys):
    status, _, err = run_golden(capsys, "--cases", TTK_KERNEL, "--out-dir", tmp_path)
    assert (status, err) == (0, "")
    manifest = _check_folder(tmp_path, _kernel_golden)
    assert [c["name"] for c in manifest["cases"]][:2] == ["SigmoidGrad_bfloat16_ND_fuzz_67",
                                                          "SigmoidGrad_01_float16_ND_fuzz_1"]
    for case in manifest["cases"]:
        assert [i["name"] for i in case["inputs"]] == ["y", "dy"]
        assert case["inputs"][0]["file"] == f"{case['name']}_y.bin"
        assert case["tolerance"] == {"atol": 1e-08}


def test_the_aclnn_csv(tmp_path, capsys):
    status, _, err = run_golden(capsys, "--cases", TTK_ACLNN, "--out-dir", tmp_path,
                             "--format", "npy")
    assert (status, err) == (0, "")

    def aclnn_golden(case, inputs):
        g, y = inputs["gradOutput"], inputs["output"]
        return reference.sigmoid_backward(g, y).astype(golden_dtype(case))
    by_name = {c["name"]: c for c in _check_folder(tmp_path, aclnn_golden)["cases"]}
    assert by_name["sb_fp16_broadcast"]["shape"] == [1, 4, 4, 4]
    assert by_name["sb_fp16_fp32_promoted"]["dtype"] == "float32"
    assert by_name["sb_fp16_into_fp32"]["dtype"] == "float32"
    assert by_name["sb_0d"]["shape"] == [] and by_name["sb_empty"]["shape"] == [0, 3]
    assert by_name["sb_fp32_basic"]["tolerance"] == {"rtol": 1e-4, "ptol": 1e-4, "atol": 1e-4}
    assert by_name["sb_bf16_one_range"]["inputs"][1]["range"] == [-1, 1]
    assert by_name["sb_nan_grad"]["inputs"][0]["range"] == ["nan"]
    assert np.load(tmp_path / "sb_bf16_one_range_golden.npy").dtype == np.dtype("V2")


# --- the same bits again ------------------------------------------------------------

def test_a_rerun_gives_the_same_bits_and_the_seed_changes_them(tmp_path):
    one = generate(TTK_ACLNN, tmp_path / "one")
    again = generate(cases(TTK_ACLNN), tmp_path / "again")
    other = generate(TTK_ACLNN, tmp_path / "other", seed=1)
    assert one == again and one != other
    for name in files(tmp_path / "one"):
        assert (tmp_path / "one" / name).read_bytes() == (tmp_path / "again" / name).read_bytes()
    golden = "sb_fp32_basic_golden.bin"
    assert (tmp_path / "one" / golden).read_bytes() != (tmp_path / "other" / golden).read_bytes()
    assert len({c["seed"] for c in one["cases"]}) == len(one["cases"])


@pytest.mark.parametrize("fmt", ["bin", "npy"])
def test_chunks_give_the_bits_of_one_piece(tmp_path, fmt):
    from sigmoid_backward.golden import _generate
    case = next(c for c in cases(TTK_KERNEL) if c.dtype == np.float32)
    whole = _generate.generate_case(case, tmp_path, fmt, chunk=1 << 30)
    (tmp_path / "piece").mkdir()
    pieces = _generate.generate_case(case, tmp_path / "piece", fmt, chunk=1000)
    assert whole == pieces
    for name in (pieces["golden"], *(i["file"] for i in pieces["inputs"])):
        assert (tmp_path / name).read_bytes() == (tmp_path / "piece" / name).read_bytes()
    if fmt == "npy":  # the header np.save writes
        arr = np.load(tmp_path / pieces["golden"])
        np.save(tmp_path / "saved.npy", arr)
        assert (tmp_path / "saved.npy").read_bytes() == (tmp_path / pieces["golden"]).read_bytes()
