"""``sigmoid_backward.golden.compare`` and ``python -m sigmoid_backward
compare``: the verdicts, the metrics, inf/NaN, and the command's files,
report and exit codes.  The standards' boundaries are in
test_golden_standards.py."""
import json
import math
import os

import numpy as np
import pytest

from sigmoid_backward import sigmoid_backward as sb
from sigmoid_backward.golden import STANDARDS, compare, generate
from sigmoid_backward.golden import _compare as compare_module

from dtypes_catalogue import BFLOAT16, NPU_DTYPES
from golden_support import TTK_ACLNN, files, one_line_error, run, run_command, usage_error

RNG = np.random.default_rng(11)


def _golden(dtype, n=4000, special=True):
    """A golden as the operator makes them, with inf and NaN among the values
    if ``special``."""
    g = RNG.uniform(-2, 2, n) + (1j * RNG.uniform(-2, 2, n) if dtype.kind == "c" else 0)
    y = RNG.uniform(0, 1, n) + (1j * RNG.uniform(0, 1, n) if dtype.kind == "c" else 0)
    g, y = g.astype(dtype), y.astype(dtype)
    if special:
        g[:3] = [np.inf, -np.inf, np.nan]
    return np.asarray(sb(g, y))


def _off(golden, share, factor):
    """``golden`` with ``share`` of its finite, non-zero elements times ``factor``."""
    actual = golden.copy()
    finite = np.flatnonzero(np.isfinite(golden) & (golden != 0))
    picked = RNG.choice(finite, int(share * golden.size), replace=False)
    actual[picked] = (golden[picked].astype(np.complex128 if golden.dtype.kind == "c"
                                            else np.float64) * factor).astype(golden.dtype)
    return actual


@pytest.mark.parametrize("standard", STANDARDS)
@pytest.mark.parametrize("dtype", NPU_DTYPES, ids=str)
def test_the_golden_passes_against_itself(standard, dtype):
    # Finite: with inf and NaN, each source judges them its own way
    # (test_golden_standards.py).
    golden = _golden(dtype, special=False)
    result = compare(golden.copy(), golden, standard)
    assert result.passed and result.mismatches == 0
    assert (result.bit_exact_ratio, result.max_abs_error, result.max_ulp) == (1.0, 0.0, 0)
    assert result.worst == []


@pytest.mark.parametrize("standard", STANDARDS)
@pytest.mark.parametrize("dtype", NPU_DTYPES, ids=str)
def test_three_percent_twenty_percent_off_fails(standard, dtype):
    golden = _golden(dtype)
    result = compare(_off(golden, 0.03, 1.2), golden, standard)
    if standard == "msprobe-ulp" and dtype.itemsize >= 4 and dtype != BFLOAT16:
        # msprobe's float32 rule passes when under 5% of elements are over
        # 32 ULP errors, however far off they are.
        assert result.passed and result.mismatches == 120 * (2 if dtype.kind == "c" else 1)
        return
    assert not result.passed, result.line()
    # Most of the 3% count (not all: some small values stay within an atol).
    assert result.mismatches >= 0.03 * golden.size / 2


@pytest.mark.parametrize("standard", STANDARDS)
@pytest.mark.parametrize("actual, golden", [(np.nan, 1.0), (1.0, np.nan), (np.inf, -np.inf),
                                            (-np.inf, np.float32(3e38)), (np.inf, np.nan)])
def test_inf_and_nan_must_agree(standard, actual, golden):
    g = np.ones(100, np.float32)
    a = g.copy()
    g[7], a[7] = golden, actual
    result = compare(a, g, standard)
    # Each standard judges it as its source does (test_golden_standards.py);
    # the metrics count it apart, and every standard's measure ranks it worst.
    assert result.inf_nan_mismatches == 1
    assert result.worst[0]["index"] == [7] and result.worst[0]["abs_error"] == "inf"


@pytest.mark.parametrize("standard", [s for s in STANDARDS if s != "msprobe-tiers"])
def test_nan_equals_nan_whatever_its_bits(standard):
    """(msprobe's tiers count a NaN as a relative error not below any
    threshold, and assertRtolEqual inf - inf as over: both are left out.)"""
    g = np.array([np.nan, 1.0, 2.0, 3.0] if standard == "torch-npu-rtol" else
                 [np.nan, np.inf, -np.inf, 1.0], np.float32)
    a = g.copy()
    a.view(np.uint32)[0] = 0xFFC00001  # a negative NaN with a payload
    result = compare(a, g, standard)
    assert result.passed and result.inf_nan_mismatches == 0 and result.bit_exact_ratio == 1.0


def test_complex_parts_are_compared_apart():
    g = np.array([complex(np.inf, 1.0), complex(np.nan, 2.0), 3 + 4j], np.complex64)
    same = compare(g.copy(), g, "ttk-close")
    assert same.passed and same.bit_exact_ratio == 1.0
    a = g.copy()
    a[0] = complex(np.inf, 1.5)   # inf agrees; the other part is 0.5 off
    a[1] = complex(2.0, 2.0)      # NaN became a number
    result = compare(a, g, "ttk-close")
    assert result.inf_nan_mismatches == 1 and result.max_abs_error == 0.5
    # isclose sees inf - inf as NaN: both are infinitely wrong, the lower index first
    assert [w["index"] for w in result.worst] == [[0], [1]]
    assert result.worst[0]["actual"] == ["inf", 1.5] and result.worst[1]["golden"] == ["nan", 2]


def test_the_metrics_by_hand():
    g = np.array([[1.0, 2.0], [4.0, 0.0]], np.float32)
    a = np.array([[1.0, 2.5], [3.0, -0.0]], np.float32)
    r = compare(a, g, "ttk-close", k=2)
    assert (r.numel, r.shape, r.dtype) == (4, [2, 2], "float32")
    assert r.max_abs_error == 1.0
    assert r.mare == pytest.approx(0.25)                      # 0.5 / 2 and 1 / 4
    assert r.mere == pytest.approx((0.25 + 0.25) / 4)
    assert r.rmse == pytest.approx(math.sqrt((0.25 + 1) / 4))
    assert r.bit_exact_ratio == 0.25                          # -0.0 is not +0.0's bits
    assert r.max_ulp == 2**22                                 # float32's ulp in [2, 4): 2**-22
    assert r.mean_ulp == pytest.approx((2**21 + 2**22) / 4)
    assert r.mismatches == 2 and r.mismatch_ratio == 0.5 and not r.passed
    assert [w["index"] for w in r.worst] == [[1, 0], [0, 1]]
    # ttk-close's own measure: |a - g| / (atol + rtol |g|), atol 1e-8, rtol 1e-4
    assert r.worst[0] == {"index": [1, 0], "flat_index": 2, "actual": 3.0, "golden": 4.0,
                          "abs_error": 1.0, "error": pytest.approx(1 / (1e-8 + 4e-4))}


def test_results_do_not_depend_on_the_chunk_size(monkeypatch):
    golden = _golden(np.dtype(np.float16), 5000)
    actual = _off(golden, 0.1, 1.01)
    whole = compare(actual, golden, "mere-mare", k=7).as_dict()
    monkeypatch.setattr(compare_module, "CHUNK", 13)
    chunked = compare(actual, golden, "mere-mare", k=7).as_dict()
    # Sums of floats may differ in the last bits with the order of addition.
    for key in ("mere", "mean_ulp"):
        assert chunked.pop(key) == pytest.approx(whole.pop(key), rel=1e-12)
    chunked["tallies"]["sum_rel"] = pytest.approx(whole["tallies"]["sum_rel"], rel=1e-12)
    assert chunked == whole


def test_bfloat16_may_come_as_raw_bytes():
    golden = _golden(BFLOAT16)
    raw = golden.view(np.dtype("V2"))
    assert compare(raw, golden).passed and compare(raw, raw).dtype == "bfloat16"


@pytest.mark.parametrize("actual, golden, message", [
    (np.ones(3, np.float32), np.ones(3, np.float16), "dtype float32, golden float16"),
    (np.ones(3, np.float32), np.ones(4, np.float32), "shape [3], golden [4]"),
    (np.ones(3, np.int32), np.ones(3, np.int32), "not one of float16"),
])
def test_api_errors_are_value_errors(actual, golden, message):
    with pytest.raises(ValueError, match=message.replace("[", r"\[").replace("]", r"\]")):
        compare(actual, golden)
    with pytest.raises(ValueError, match="unknown standard 'close'"):
        compare(np.ones(3), np.ones(3), "close")


# --- the command ----------------------------------------------------------------

def _compare(capsys, *args):
    return run(capsys, "compare", *args)


def test_two_files_pass_and_fail(tmp_path, capsys):
    golden = _golden(np.dtype(np.float16))
    golden.tofile(tmp_path / "g.bin")
    golden.tofile(tmp_path / "same.bin")
    _off(golden, 0.03, 1.2).tofile(tmp_path / "off.bin")
    status, out, err = _compare(capsys, tmp_path / "same.bin", tmp_path / "g.bin",
                                "--dtype", "fp16", "--shape", "40,100")
    assert (status, err) == (0, "")
    assert out.startswith("PASS float16 [40, 100] ttk-close: 0 of 4000 mismatched")
    assert out.endswith("1 of 1 cases passed under ttk-close\n")
    status, out, _ = _compare(capsys, tmp_path / "off.bin", tmp_path / "g.bin", "--dtype",
                              "float16", "--standard", "mixed-tolerance",
                              "--json", tmp_path / "r.json")
    assert status == 1 and out.startswith("FAIL float16 [4000] opbase-tolerance: ")
    report = json.loads((tmp_path / "r.json").read_text())
    assert report["passed"] is False and report["standard"] == "mixed-tolerance"
    (case,) = report["cases"]
    assert f"{case['mismatches']} of 4000 mismatched" in out and len(case["worst"]) == 5
    assert case["limits"]["matched_ratio"] == 0.99


def test_a_raw_file_takes_the_dtype_and_shape_of_its_npy_partner(tmp_path, capsys):
    golden = _golden(BFLOAT16).reshape(80, 50)
    np.save(tmp_path / "g.npy", golden)             # written as |V2
    golden.tofile(tmp_path / "a.bin")
    status, out, _ = _compare(capsys, tmp_path / "a.bin", tmp_path / "g.npy")
    assert status == 0 and "PASS bfloat16 [80, 50]" in out


ERRORS = {
    "missing file": (["nope.bin", "g.bin", "--dtype", "float32"],
                     "ACTUAL: nope.bin does not exist, expected a .npy or raw data file"),
    "missing golden": (["g.bin", "nope.npy"], "GOLDEN: nope.npy does not exist"),
    "raw without dtype": (["g.bin", "g.bin"], "raw file: give its dtype with --dtype"),
    "size and shape": (["g.bin", "g.bin", "--dtype", "float32", "--shape", "3,3"],
                       "holds 4 float32 values"),
    "dtype differs": (["g.npy", "h.npy"], "GOLDEN: h.npy has dtype float16, not float32"),
    "raw of another dtype": (["g.bin", "h.npy"],
                             "ACTUAL: g.bin holds 16 bytes, 4 per value for shape 4, but its "
                             "dtype should be float16 (2 bytes): a dtype mismatch"),
    "shape differs": (["g.npy", "l.npy"], "shape 5, not 4"),
    "garbage npy": (["g.npy", "junk.npy"], "junk.npy is not a readable .npy file"),
    "no manifest": (["--manifest", "nope.json", "--actual-dir", "."],
                    "--manifest: nope.json does not exist"),
    "bad manifest": (["--manifest", "junk.npy", "--actual-dir", "."],
                     "is not a manifest of golden --cases"),
}


@pytest.mark.parametrize("case", ERRORS)
def test_unreadable_files_exit_2_in_one_line(tmp_path, capsys, monkeypatch, case):
    monkeypatch.chdir(tmp_path)
    np.ones(4, np.float32).tofile("g.bin")
    np.save("g.npy", np.ones(4, np.float32))
    np.save("h.npy", np.ones(4, np.float16))
    np.save("l.npy", np.ones(5, np.float32))
    (tmp_path / "junk.npy").write_bytes(b"not an npy file")
    args, message = ERRORS[case]
    status, out, err = _compare(capsys, *args)
    one_line_error(status, err, message, command="compare", code=2)


@pytest.mark.parametrize("args", [[], ["a.bin"], ["a", "b", "--manifest", "m"],
                                  ["--manifest", "m.json"], ["a", "b", "--standard", "close"],
                                  ["a", "b", "--dtype", "float8"], ["a", "b", "--worst", "-1"]])
def test_usage_errors_exit_2(capsys, args):
    with pytest.raises(SystemExit) as exc:
        _compare(capsys, *args)
    assert exc.value.code == 2
    usage_error(capsys.readouterr().err, command="compare")


def test_a_manifest_takes_each_cases_tolerance(tmp_path, capsys):
    """sb_fp32_basic's csv gives atol 1e-4: an output 5e-5 off everywhere
    passes under it, and fails under the defaults (atol 1e-8)."""
    manifest = generate(TTK_ACLNN, tmp_path / "golden")
    (tmp_path / "device").mkdir()
    for case in manifest["cases"]:
        (tmp_path / "device" / case["golden"]).write_bytes(
            (tmp_path / "golden" / case["golden"]).read_bytes())
    name = "sb_fp32_basic_golden.bin"
    golden = np.fromfile(tmp_path / "golden" / name, np.float32)
    (golden + np.float32(5e-5)).tofile(tmp_path / "device" / name)
    status, out, err = _compare(capsys, "--manifest", tmp_path / "golden" / "manifest.json",
                                "--actual-dir", tmp_path / "device")
    assert (status, err) == (0, "") and out.count("PASS ") == 10
    status, out, _ = _compare(capsys, tmp_path / "device" / name, tmp_path / "golden" / name,
                              "--dtype", "float32")
    assert status == 1 and out.startswith("FAIL float32 [20] ttk-close: 20 of 20")
    (tmp_path / "device" / "sb_0d_golden.bin").unlink()
    status, out, err = _compare(capsys, "--manifest", tmp_path / "golden" / "manifest.json",
                                "--actual-dir", tmp_path / "device")
    # the case is an ERROR, the others are judged all the same: exit 3
    assert (status, err) == (3, "") and out.count("PASS ") == 9
    assert (f"ERROR sb_0d ttk-close: --manifest: sb_0d: --actual-dir: "
            f"{tmp_path / 'device' / 'sb_0d_golden.bin'} does not exist, expected a .npy or "
            f"raw data file\n") in out


def test_as_a_command(tmp_path):
    golden = _golden(np.dtype(np.complex64))
    np.save(tmp_path / "g.npy", golden)
    np.save(tmp_path / "a.npy", _off(golden, 0.03, 1.2))
    proc = run_command("compare", "a.npy", "g.npy", "--standard", "mere-mare", cwd=tmp_path)
    assert proc.returncode == 1 and proc.stderr == ""
    assert proc.stdout.startswith("FAIL complex64 [4000] opbase-mere-mare: ")
    proc = run_command("compare", "missing.npy", "g.npy", cwd=tmp_path)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert proc.stderr == ("python -m sigmoid_backward compare: error: ACTUAL: missing.npy "
                           "does not exist, expected a .npy or raw data file\n")
    assert files(tmp_path) == ["a.npy", "g.npy"]


def test_metrics_that_overflow_are_written_as_inf_in_the_reports(capsys, tmp_path):
    """float64 goldens near 1e300 (full-range cases have them): the squared
    error overflows, and the reports carry "inf" as JSON can, instead of the
    run losing them to a ValueError."""
    golden = np.full(1000, 1e300)
    actual = golden.copy()
    actual[3], actual[5] = np.nextafter(1e300, np.inf), -1e300
    np.save(tmp_path / "a.npy", actual)
    np.save(tmp_path / "g.npy", golden)
    status, out, err = run(capsys, "compare", tmp_path / "a.npy", tmp_path / "g.npy",
                           "--json", tmp_path / "r.json", "--csv", tmp_path / "r.csv")
    assert (status, err) == (1, "")
    case = json.loads((tmp_path / "r.json").read_text())["cases"][0]
    assert case["rmse"] == "inf" and case["max_abs_error"] == 2e300
    assert ",inf," in (tmp_path / "r.csv").read_text()


def test_a_report_in_an_unwritable_folder_is_refused_before_any_case(capsys, tmp_path,
                                                                     monkeypatch):
    """The report is written beside its path and renamed over it, so its
    folder must be writable: refused with exit 2 before comparing, not after
    a campaign's hours.  (os.access is denied for that folder alone: root
    may write a mode-0500 folder.)"""
    from sigmoid_backward.golden import _atomic_write
    locked = tmp_path / "locked"
    locked.mkdir()
    real_access = os.access
    monkeypatch.setattr(_atomic_write.os, "access",
                        lambda p, mode: False if str(p) == str(locked) else real_access(p, mode))
    np.save(tmp_path / "g.npy", np.ones(4))
    status, out, err = run(capsys, "compare", tmp_path / "g.npy", tmp_path / "g.npy",
                           "--json", locked / "r.json")
    assert out == ""
    one_line_error(status, err, "--json", "is not writable", command="compare")
    assert list(locked.iterdir()) == []
