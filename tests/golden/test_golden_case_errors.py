"""``golden --cases`` on files it cannot run: one line, exit 2, nothing
written; usage errors; a run stopped by a signal; and memory that stays
bounded on a large case."""
import json
import os
import signal
import subprocess
import sys

import numpy as np
import pytest

from sigmoid_backward.golden import Case, CaseFileError, Input, generate

from golden_support import files, one_line_error, run, tmp_files, usage_error
from helpers import under_asan


def _atk(**change):
    """A valid one-case ATK file's content, with ``change`` applied to its
    first input (or to the case, for the keys a case has)."""
    inputs = [{"name": "gradOutput", "dtype": "fp16", "shape": [2, 3], "range_values": [-1, 1]},
              {"name": "output", "dtype": "fp16", "shape": [2, 3], "range_values": [0, 1]}]
    case = {"id": 0, "aclnn_name": "aclnnSigmoidBackward", "inputs": inputs}
    for key, value in change.items():
        target = case if key in case else inputs[0]
        if value is None:
            del target[key]
        else:
            target[key] = value
    return json.dumps([case])


KERNEL_HEADER = "testcase_name,op_name,input_dtypes,input_shapes,input_data_ranges\n"
KERNEL_ROW = "k,sigmoid_grad,\"('float16', 'float16')\",\"((4,), (4,))\",\"((0, 1), (-1, 1))\"\n"
ACLNN_HEADER = ("testcase_name,api_name,tensor_view_shapes,tensor_dtypes,"
                "output_tensor_indexes,input_data_ranges\n")


def _aclnn(shapes="((4,),(4,),(4,))", dtypes="('float32','float32','float32')", out="(2,)"):
    return (ACLNN_HEADER +
            f"a,aclnnSigmoidBackward,\"{shapes}\",\"{dtypes}\",\"{out}\",\"((-1,1),)\"\n")


MALFORMED = {
    "unknown dtype": (_atk(dtype="fp8"), "gradOutput: unknown dtype 'fp8'; choose one of"),
    "lo above hi": (_atk(range_values=[1, -1]), "bad range [1, -1]: need lo < hi"),
    "inf above -inf": (_atk(range_values=["inf", "-inf"]), "need lo < hi"),
    "word for a range": (_atk(range_values=["big"]), "bad range ['big']"),
    "three numbers": (_atk(range_values=[0, 1, 2]), "bad range [0, 1, 2]"),
    "range without a value": (_atk(range_values=[1e-9, 2e-9]), "no float16 value lies in it"),
    "9 dims": (_atk(shape=[1] * 9), "has 9 dims; aclnnSigmoidBackward takes at most 8"),
    "negative dim": (_atk(shape=[2, -3]), "bad shape [2, -3]"),
    "missing key": (_atk(range_values=None), "aclnnSigmoidBackward_0: missing 'range_values'"),
    "missing id": (_atk(id=None), "case #0: missing 'id'"),
    "unknown input": (_atk(name="self"), "unknown input 'self'"),
    "other operator": (_atk(aclnn_name="aclnnSigmoid"), "a case of aclnnSigmoid, not"),
    "no broadcast": (_atk(shape=[4]), "input shapes [4] and [2, 3] do not broadcast"),
    "same name twice": ("[" + _atk()[1:-1] + "," + _atk()[1:-1] + "]",
                        "two cases are named aclnnSigmoidBackward_0"),
    "json object": ('{"cases": []}', "an ATK case file is a JSON list of cases"),
    "bad json": ("[{", "is not valid JSON"),
    "missing column": (KERNEL_HEADER.replace(",input_data_ranges", "") +
                       KERNEL_ROW.rsplit(",", 1)[0] + "\n", "missing column input_data_ranges"),
    "csv dtype": (KERNEL_HEADER + KERNEL_ROW.replace("'float16', 'float16'", "'float8', 'float8'"),
                  "k: y: unknown dtype 'float8'"),
    "not a literal": (KERNEL_HEADER + KERNEL_ROW.replace("((0, 1), (-1, 1))", "((0, 1), (-1"),
                      "column input_data_ranges is not a literal"),
    "three inputs": (KERNEL_HEADER + KERNEL_ROW.replace("'float16', 'float16'",
                                                        "'float16', 'float16', 'float16'"),
                     "sigmoid_grad has two inputs (y, dy), but input_dtypes has 3 entries"),
    "other kernel": (KERNEL_HEADER + KERNEL_ROW.replace("sigmoid_grad", "relu"),
                     "a case of relu, not sigmoid_grad"),
    "extended range": (KERNEL_HEADER + KERNEL_ROW.replace("((0, 1), (-1, 1))",
                                                          "((-1, 1, nan, inf),)"),
                       "bad range (-1, 1, nan, inf)"),
    "output index": (_aclnn(out="(0,)"), "the output of aclnnSigmoidBackward is its third"),
    "output shape": (_aclnn(shapes="((4,),(4,),(5,))"), "gradInput has shape [5]"),
    "complex into real": (_aclnn(dtypes="('complex64','complex64','float32')"),
                          "the result, complex64, cannot be cast to float32"),
    "not a case file": ("a,b\n1,2\n", "neither an ATK json nor a TTK csv"),
}


@pytest.mark.parametrize("case", MALFORMED)
def test_a_malformed_case_file_is_one_line_and_exit_2(tmp_path, capsys, case):
    text, message = MALFORMED[case]
    (tmp_path / "cases.txt").write_text(text)
    status, out, err = run(capsys, "golden", "--cases", tmp_path / "cases.txt", "--out-dir",
                           tmp_path / "out")
    one_line_error(status, err, message, code=2)
    assert out == "" and not (tmp_path / "out").exists()


def test_a_missing_case_file(tmp_path, capsys):
    status, _, err = run(capsys, "golden", "--cases", tmp_path / "nope.json", "--out-dir",
                         tmp_path / "out")
    one_line_error(status, err, f"--cases: {tmp_path / 'nope.json'} does not exist, expected "
                                "an ATK json or TTK csv case file", code=2)


def test_an_out_dir_that_is_a_file(tmp_path, capsys):
    (tmp_path / "cases.json").write_text(_atk())
    (tmp_path / "out").write_text("")
    status, _, err = run(capsys, "golden", "--cases", tmp_path / "cases.json", "--out-dir",
                         tmp_path / "out")
    one_line_error(status, err, f"--out-dir: {tmp_path / 'out'} is a regular file, expected "
                                "a directory (made if missing)")


@pytest.mark.parametrize("args, message", [
    (["--cases", "c.json"], "required with --cases: --out-dir"),
    (["--cases", "c.json", "--out-dir", "d", "--out", "r.bin"], "drop --out"),
    (["--grad-output", "g", "--output", "y", "--out", "r", "--seed", "3"], "--seed go with"),
    (["--cases", "c.json", "--out-dir", "d", "--format", "txt"], "invalid choice: 'txt'"),
])
def test_usage_errors(capsys, args, message):
    with pytest.raises(SystemExit) as exc:
        run(capsys, "golden", *args)
    assert exc.value.code == 2
    usage_error(capsys.readouterr().err, message)


# A run that finishes its first case, says so, then waits to be signalled.
# It waits in short sleeps: a signal that lands just before a sleep's system
# call starts (or on another thread) does not cut that call short, and
# CPython runs the Python handler only once it returns.  Real work returns to
# the interpreter often; one 60 s sleep did not, and a loaded CI machine
# once hit that window.
SLOW_CASES = """
import signal, sys, time
signal.signal(signal.SIGTERM, signal.SIG_DFL)
from sigmoid_backward.golden import _generate
from sigmoid_backward.golden._cli_golden import main
real = _generate.generate_case
def first_then_wait(*args, **kwargs):
    entry = real(*args, **kwargs)
    print("one case", flush=True)
    for _ in range(600):
        time.sleep(0.1)
    return entry
_generate.generate_case = first_then_wait
sys.exit(main(sys.argv[1:]))
"""


def test_a_signal_stops_a_case_set_without_a_manifest(tmp_path):
    (tmp_path / "cases.json").write_text(_atk())
    proc = subprocess.Popen([sys.executable, "-c", SLOW_CASES, "--cases", "cases.json",
                             "--out-dir", "out"], cwd=tmp_path, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stdout.readline() == "one case\n"
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=60)
    finally:
        proc.kill()
        proc.wait()
    assert proc.returncode == 143
    assert err == ("python -m sigmoid_backward golden: terminated by SIGTERM; 0 cases were "
                   "written, out/manifest.json was not\n")
    assert "manifest.json" not in files(tmp_path / "out") and tmp_files(tmp_path / "out") == []


# Runs a command in-process and prints the peak resident memory it reached,
# in MiB: VmHWM, this process image's own peak.  (getrusage's ru_maxrss
# would also count the forking parent's, which Linux carries across exec:
# a test run that has imported torch would seem to use its memory.)
PEAK = """
import sys
from sigmoid_backward.__main__ import main
status = main(sys.argv[1:])
with open("/proc/self/status") as f:
    kib = next(int(line.split()[1]) for line in f if line.startswith("VmHWM:"))
print(kib // 1024, file=sys.stderr)
sys.exit(status)
"""


@pytest.mark.skipif(not os.path.exists("/proc/self/status"), reason="needs Linux's /proc")
@pytest.mark.skipif(under_asan(), reason="AddressSanitizer's quarantine of freed memory "
                    "grows the resident memory this test bounds")
def test_a_large_case_runs_in_bounded_memory(tmp_path):
    """64M bfloat16 values: 128 MiB a file, 512 MiB as float64.  Generating
    and comparing in chunks stays well below either: about 110 and 45 MiB,
    with room left for the allocator and transparent huge pages, which can
    make the same run's peak vary."""
    shape = [4, 4096, 4096]
    inputs = [{"name": n, "dtype": "bf16", "shape": shape, "range_values": [-1, 1]}
              for n in ("gradOutput", "output")]
    (tmp_path / "big.json").write_text(json.dumps(
        [{"id": 0, "aclnn_name": "aclnnSigmoidBackward", "inputs": inputs}]))
    for args in (["golden", "--cases", "big.json", "--out-dir", "out"],
                 ["compare", "--manifest", "out/manifest.json", "--actual-dir", "out"]):
        proc = subprocess.run([sys.executable, "-c", PEAK, *args], cwd=tmp_path,
                              capture_output=True, text=True, timeout=300)
        assert proc.returncode == 0, proc.stderr
        peak_mib = int(proc.stderr.split()[-1])
        assert peak_mib < 384, (args[0], peak_mib)


def test_a_tolerance_that_is_no_number_is_a_case_file_error(tmp_path):
    """A precision_tolerances cell holding None (or any non-number) names its
    column and exits 2, as every other malformed cell does."""
    from sigmoid_backward.golden import cases
    from sigmoid_backward.golden._errors import CaseFileError
    path = tmp_path / "kernel.csv"
    path.write_text("testcase_name,op_name,input_dtypes,input_shapes,input_data_ranges,"
                    "precision_tolerances\n"
                    'k,sigmoid_grad,"(\'float32\',\'float32\')","((2,),(2,))","((0,1),)",'
                    '"((None, None),)"\n')
    with pytest.raises(CaseFileError, match="precision_tolerances holds None, not a number"):
        cases(path)


# --- file names that are one file on a case-insensitive file system --------------------

def test_case_names_differing_only_in_letter_case_are_refused(tmp_path, capsys):
    """On macOS and Windows Case_A_golden.bin and case_a_golden.bin are one
    file: the second case would overwrite the first's inputs and golden."""
    text = KERNEL_HEADER + KERNEL_ROW.replace("k,", "Case_A,") + KERNEL_ROW.replace(
        "k,", "case_a,")
    (tmp_path / "cases.csv").write_text(text)
    status, out, err = run(capsys, "golden", "--cases", tmp_path / "cases.csv", "--out-dir",
                           tmp_path / "out", "--format", "npy")
    one_line_error(status, err, "--cases: cases 'Case_A' and 'case_a' would write Case_A_y.npy "
                                "and case_a_y.npy, one file where letter case does not count "
                                "(macOS, Windows): rename one")
    assert out == "" and not (tmp_path / "out").exists()


def test_names_made_equal_by_the_file_name_rule_are_refused(tmp_path):
    """"a/b" and "a_b" both become a_b_...: refused naming both cases, as
    is the same case given twice, before anything is written."""
    inputs = (Input("gradOutput", np.dtype(np.float32), (3,), (-1.0, 1.0)),
              Input("output", np.dtype(np.float32), (3,), (0.0, 1.0)))
    first, second = (Case(name, inputs, np.dtype(np.float32), (3,)) for name in ("a/b", "A_b"))
    with pytest.raises(CaseFileError, match="cases 'a/b' and 'A_b' would write "
                                            "a_b_gradOutput.bin and A_b_gradOutput.bin"):
        generate([first, second], tmp_path / "out")
    with pytest.raises(CaseFileError, match="cases 'a/b' and 'a/b' would both write "
                                            "a_b_gradOutput.bin: rename one"):
        generate([first, first], tmp_path / "out")
    assert not (tmp_path / "out").exists()
