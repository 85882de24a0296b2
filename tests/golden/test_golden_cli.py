"""``python -m sigmoid_backward golden`` with input files
(src/sigmoid_backward/golden/_cli_golden.py): files in, the result file out,
one-line errors, no half-written output.  What ``--out`` may be, and the
signals, are in test_atomic_write.py."""
import os
import re

import numpy as np
import pytest

import sigmoid_backward.golden._cli_golden as golden
from sigmoid_backward import sigmoid_backward as sb
from sigmoid_backward.__main__ import main

from dtypes_catalogue import BFLOAT16, BY_NAME, NPU_NAMES
from golden_support import files, npy_args, one_line_error, run_command, run_golden, tmp_files
from helpers import assert_same

RNG = np.random.default_rng(5)


def _values(shape, dtype):
    real = np.asarray(RNG.uniform(-2, 2, shape))
    if np.dtype(dtype).kind == "c":
        real = real + 1j * RNG.uniform(-2, 2, shape)
    return real.astype(dtype)


# --- results --------------------------------------------------------------

@pytest.mark.parametrize("name", NPU_NAMES)
def test_bin_files_for_every_dtype(tmp_path, capsys, name):
    g, y = _values((2, 3, 4), BY_NAME[name]), _values((2, 3, 4), BY_NAME[name])
    g.tofile(tmp_path / "g.bin")
    y.tofile(tmp_path / "y.bin")
    status, out, err = run_golden(capsys, "--grad-output", tmp_path / "g.bin", "--output",
                               tmp_path / "y.bin", "--out", tmp_path / "r.bin",
                               "--dtype", name, "--shape", "2,3,4")
    assert (status, err) == (0, "")
    assert f"{name}, shape 2,3,4" in out
    expected = sb(g, y)
    assert (tmp_path / "r.bin").read_bytes() == expected.tobytes()


@pytest.mark.parametrize("name", NPU_NAMES)
def test_npy_files_for_every_dtype(tmp_path, capsys, name):
    g, y = _values((3, 1), BY_NAME[name]), _values((4,), BY_NAME[name])  # broadcasting
    np.save(tmp_path / "g.npy", g)
    np.save(tmp_path / "y.npy", y)
    status, _, err = run_golden(capsys, "--grad-output", tmp_path / "g.npy", "--output",
                             tmp_path / "y.npy", "--out", tmp_path / "r.npy")
    assert (status, err) == (0, "")
    result = np.load(tmp_path / "r.npy")
    if name == "bfloat16":  # NumPy writes bfloat16 as |V2
        result = result.view(BFLOAT16)
    assert_same(result, sb(g, y))


def test_bfloat16_npy_round_trips_through_the_cli(tmp_path, capsys):
    g = _values((5,), BFLOAT16)
    np.save(tmp_path / "g.npy", g)
    run_golden(capsys, "--grad-output", tmp_path / "g.npy", "--output", tmp_path / "g.npy",
            "--out", tmp_path / "r.npy")
    status, _, err = run_golden(capsys, "--grad-output", tmp_path / "r.npy", "--output",
                             tmp_path / "g.npy", "--out", tmp_path / "r2.npy")
    assert (status, err) == (0, "")
    assert_same(np.load(tmp_path / "r2.npy").view(BFLOAT16), sb(sb(g, g), g))


def test_npy_inputs_promote_and_dtype_overrides(tmp_path, capsys):
    g, y = _values((4,), np.float16), _values((4,), BFLOAT16)
    np.save(tmp_path / "g.npy", g)
    np.save(tmp_path / "y.npy", y)
    run_golden(capsys, "--grad-output", tmp_path / "g.npy", "--output", tmp_path / "y.npy",
            "--out", tmp_path / "r.npy")
    assert_same(np.load(tmp_path / "r.npy"), sb(g, y))  # float32 by the promotion table
    run_golden(capsys, "--grad-output", tmp_path / "g.npy", "--output", tmp_path / "y.npy",
            "--out", tmp_path / "r64.npy", "--dtype", "fp64")
    assert_same(np.load(tmp_path / "r64.npy"), sb(g, y, dtype=np.float64))


def test_bin_without_shape_is_one_dimensional(tmp_path, capsys):
    g, y = _values((7,), np.float32), _values((7,), np.float32)
    g.tofile(tmp_path / "g.bin")
    y.tofile(tmp_path / "y.bin")
    status, out, _ = run_golden(capsys, "--grad-output", tmp_path / "g.bin", "--output",
                             tmp_path / "y.bin", "--out", tmp_path / "r.bin", "--dtype", "fp32")
    assert status == 0 and "shape 7" in out
    assert (tmp_path / "r.bin").read_bytes() == sb(g, y).tobytes()


def test_mixed_formats_and_output_format_follows_its_name(tmp_path, capsys):
    g, y = _values((2, 3), np.float32), _values((2, 3), np.float32)
    np.save(tmp_path / "g.npy", g)
    y.tofile(tmp_path / "y.bin")
    status, _, err = run_golden(capsys, "--grad-output", tmp_path / "g.npy", "--output",
                             tmp_path / "y.bin", "--out", tmp_path / "r.bin",
                             "--dtype", "float32", "--shape", "2,3")
    assert (status, err) == (0, "")
    assert (tmp_path / "r.bin").read_bytes() == sb(g, y).tobytes()
    run_golden(capsys, "--grad-output", tmp_path / "g.npy", "--output", tmp_path / "g.npy",
            "--out", tmp_path / "r.npy")
    assert_same(np.load(tmp_path / "r.npy"), sb(g, g))


def test_zero_d_and_empty(tmp_path, capsys):
    np.save(tmp_path / "s.npy", np.float64(0.25))
    assert run_golden(capsys, "--grad-output", tmp_path / "s.npy", "--output",
                   tmp_path / "s.npy", "--out", tmp_path / "r.npy")[0] == 0
    assert_same(np.load(tmp_path / "r.npy"), np.array(0.25 * 0.75 * 0.25))
    (tmp_path / "e.bin").write_bytes(b"")
    assert run_golden(capsys, "--grad-output", tmp_path / "e.bin", "--output",
                   tmp_path / "e.bin", "--out", tmp_path / "r.bin", "--dtype", "float16",
                   "--shape", "0,3")[0] == 0
    assert (tmp_path / "r.bin").read_bytes() == b""


def test_output_file_gets_the_usual_permissions(tmp_path, capsys):
    np.save(tmp_path / "g.npy", np.ones(2))
    run_golden(capsys, "--grad-output", tmp_path / "g.npy", "--output", tmp_path / "g.npy",
            "--out", tmp_path / "r.npy")
    umask = os.umask(0)
    os.umask(umask)
    assert (tmp_path / "r.npy").stat().st_mode & 0o777 == 0o666 & ~umask


# --- errors ---------------------------------------------------------------

def _inputs(tmp_path):
    _values((2, 3), np.float32).tofile(tmp_path / "g.bin")
    _values((2, 3), np.float32).tofile(tmp_path / "y.bin")
    np.save(tmp_path / "g.npy", _values((2, 3), np.float32))
    (tmp_path / "r.bin").write_bytes(b"previous result")  # must survive any error


# case -> (arguments, "usage" (argparse's) or "error" (the command's), both
# exiting 2 before anything is written, or None: no error; the message)
ERRORS = {
    "missing file": (["--grad-output", "nope.bin", "--output", "y.bin", "--dtype", "float32"],
                     "error", "--grad-output: nope.bin does not exist, expected a .npy or raw "
                              "data file"),
    "size not a multiple": (["--grad-output", "g.bin", "--output", "y.bin", "--dtype",
                             "complex128"], "error",
                            "holds 24 bytes, not a whole number of complex128"),
    "size not the shape": (["--grad-output", "g.bin", "--output", "y.bin", "--dtype",
                            "float32", "--shape", "2,4"], "error",
                           "holds 6 float32 values \\(24 bytes\\), but --shape 2,4 needs 8"),
    "unknown dtype": (["--grad-output", "g.bin", "--output", "y.bin", "--dtype", "float8"],
                      "usage", "unknown dtype 'float8'; choose one of float16, bfloat16"),
    "raw without dtype": (["--grad-output", "g.bin", "--output", "y.bin"], "error",
                          "g.bin is a raw file: give its dtype with --dtype"),
    "bad shape": (["--grad-output", "g.bin", "--output", "y.bin", "--dtype", "float32",
                   "--shape", "2,three"], "usage", "bad shape '2,three'"),
    "negative shape": (["--grad-output", "g.bin", "--output", "y.bin", "--dtype", "float32",
                        "--shape", "-6"], "usage", "dimensions must be >= 0"),
    "shape with npy": (["--grad-output", "g.npy", "--output", "g.npy", "--shape", "2,3"], "error",
                       "--shape describes raw inputs"),
    "not broadcastable": (["--grad-output", "g.npy", "--output", "y.bin", "--dtype",
                           "float32", "--shape", "3,2"], "error",
                          "could not be broadcast together"),
    "castable (control)": (["--grad-output", "g.npy", "--output", "g.npy", "--dtype",
                            "complex64"], None, None),  # float32 -> complex64 is allowed
    "complex into real": (["--grad-output", "c.npy", "--output", "g.npy", "--dtype",
                           "float32"], "error",
                          "input 0 from dtype.*complex64.* to dtype.*float32"),
    "unsupported npy dtype": (["--grad-output", "u.npy", "--output", "g.npy"], "error",
                              "grad_output's dtype, dtype\\('<U1'\\), is not supported"),
    "object npy": (["--grad-output", "o.npy", "--output", "g.npy"], "error",
                   "o.npy is not a readable .npy file"),
    "garbage npy": (["--grad-output", "g.npy", "--output", "junk.npy"], "error",
                    "junk.npy is not a readable .npy file"),
    "missing argument": (["--grad-output", "g.bin", "--dtype", "float32"], "usage",
                         "the following arguments are required: --output"),
}


@pytest.mark.parametrize("case", ERRORS)
def test_errors_are_one_line_and_leave_the_output_alone(tmp_path, capsys, monkeypatch, case):
    _inputs(tmp_path)
    np.save(tmp_path / "c.npy", np.ones(3, np.complex64))
    np.save(tmp_path / "u.npy", np.array(["a"]))
    np.save(tmp_path / "o.npy", np.array([None]), allow_pickle=True)
    (tmp_path / "junk.npy").write_bytes(b"not an npy file")
    monkeypatch.chdir(tmp_path)
    args, kind, message = ERRORS[case]
    out_name = "r.bin" if kind else "r.npy"
    before = files(tmp_path)
    if kind == "usage":  # argparse's usage errors exit
        with pytest.raises(SystemExit) as exc:
            main(["golden", *args, "--out", out_name])
        got, err = exc.value.code, capsys.readouterr().err
    else:
        got = main(["golden", *args, "--out", out_name])
        err = capsys.readouterr().err
    assert got == (2 if kind else 0)
    if kind:
        assert "Traceback" not in err
        prog = "python -m sigmoid_backward golden"
        # one line; a usage error adds where the help is
        lines = 2 if kind == "usage" else 1
        assert err.startswith(f"{prog}: error: ") and err.count("\n") == lines, err
        assert kind == "error" or err.endswith(f"\nTry '{prog} --help'.\n"), err
        assert re.search(message, err), err
        assert (tmp_path / "r.bin").read_bytes() == b"previous result"
        assert files(tmp_path) == before  # no temporary file left behind
    else:
        assert files(tmp_path) == sorted(before + ["r.npy"])


def test_out_in_a_missing_folder(tmp_path, capsys):
    _inputs(tmp_path)
    status, _, err = run_golden(capsys, "--grad-output", tmp_path / "g.npy", "--output",
                             tmp_path / "g.npy", "--out", tmp_path / "no" / "r.npy")
    one_line_error(status, err, f"--out: cannot write {tmp_path / 'no' / 'r.npy'}: its "
                                f"directory {os.path.realpath(tmp_path)}/no does not exist")


@pytest.mark.parametrize("failure", [OSError(28, "No space left on device"),
                                     KeyboardInterrupt()])
def test_failed_write_keeps_the_previous_file(tmp_path, capsys, monkeypatch, failure):
    _inputs(tmp_path)
    np.save(tmp_path / "r.npy", np.zeros(1))
    previous = (tmp_path / "r.npy").read_bytes()
    before = files(tmp_path)

    def save_half_then_fail(f, arr, **kwargs):
        f.write(b"\x93NUMPY half")
        raise failure

    monkeypatch.setattr(golden.np, "save", save_half_then_fail)
    status, _, err = run_golden(capsys, "--grad-output", tmp_path / "g.npy", "--output",
                             tmp_path / "g.npy", "--out", tmp_path / "r.npy")
    assert status == (3 if isinstance(failure, OSError) else 130)  # 3: a failed write
    assert "No space left on device" in err or "interrupted" in err
    assert (tmp_path / "r.npy").read_bytes() == previous
    assert files(tmp_path) == before


# --- as a command ----------------------------------------------------------

def _run(*args, cwd):
    return run_command("golden", *args, cwd=cwd)


def test_command_line_writes_golden_data(tmp_path):
    g, y = _values((2, 3, 4), BFLOAT16), _values((2, 3, 4), BFLOAT16)
    g.tofile(tmp_path / "g.bin")
    y.tofile(tmp_path / "y.bin")
    proc = _run("--grad-output", "g.bin", "--output", "y.bin", "--out", "r.bin",
                "--dtype", "bf16", "--shape", "2,3,4", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "wrote r.bin: bfloat16, shape 2,3,4\n"
    assert (tmp_path / "r.bin").read_bytes() == sb(g, y).tobytes()


def test_command_line_error_is_one_line_without_traceback(tmp_path):
    (tmp_path / "g.bin").write_bytes(b"\0" * 10)
    proc = _run("--grad-output", "g.bin", "--output", "g.bin", "--out", "r.bin",
                "--dtype", "float32", cwd=tmp_path)
    assert proc.returncode == 2
    assert proc.stderr == ("python -m sigmoid_backward golden: error: --grad-output: g.bin "
                           "holds 10 bytes, not a whole number of float32 values "
                           "(4 bytes each)\n")
    assert not (tmp_path / "r.bin").exists()
    usage = _run("--help", cwd=tmp_path).stdout
    assert usage.startswith("usage: python -m sigmoid_backward golden")


# --- input errors are one line, exit 2 ---------------------------------------

def _npy_with_header(path, shape, descr="<f4", payload=b"\0" * 16):
    with open(path, "wb") as f:
        np.lib.format.write_array_header_1_0(
            f, {"descr": descr, "fortran_order": False, "shape": shape})
        f.write(payload)


def test_an_npz_archive_under_a_npy_name(tmp_path, capsys):
    np.savez(tmp_path / "z", a=np.ones(3))
    os.rename(tmp_path / "z.npz", tmp_path / "z.npy")
    np.save(tmp_path / "g.npy", np.ones(3))
    status, _, err = run_golden(capsys, "--grad-output", tmp_path / "z.npy", "--output",
                             tmp_path / "g.npy", "--out", tmp_path / "r.npy")
    one_line_error(status, err, "z.npy is an .npz archive", "not a .npy file")
    assert not (tmp_path / "r.npy").exists()


@pytest.mark.parametrize("shape", [(2**64,), (0, 2**64), (2**62,), (2**40, 2**40),
                                   (2**31,) * 3])
def test_a_huge_shape_in_a_npy_header(tmp_path, capsys, shape):
    _npy_with_header(tmp_path / "huge.npy", shape)
    np.save(tmp_path / "g.npy", np.ones(3, np.float32))
    status, _, err = run_golden(capsys, "--grad-output", tmp_path / "huge.npy", "--output",
                             tmp_path / "g.npy", "--out", tmp_path / "r.npy")
    one_line_error(status, err, "huge.npy is not a readable .npy file")


@pytest.mark.parametrize("shape", ["0,99999999999999999999", "0,9999999999,9999999999",
                                   "99999999999999999999", ",".join(["1"] * 65),
                                   ",".join(["0"] * 65)])
def test_a_huge_or_65_dim_shape(tmp_path, capsys, shape):
    data = b"" if "0" in shape.split(",")[0] else np.ones(1, np.float32).tobytes()
    (tmp_path / "g.bin").write_bytes(data)
    status, _, err = run_golden(capsys, "--grad-output", tmp_path / "g.bin", "--output",
                             tmp_path / "g.bin", "--out", tmp_path / "r.bin",
                             "--dtype", "float32", "--shape", shape)
    one_line_error(status, err)
    assert not (tmp_path / "r.bin").exists()


@pytest.mark.parametrize("ndim", [32, 33, 64])
def test_many_dims_give_a_result_or_one_line(tmp_path, capsys, ndim):
    """NumPy arrays have up to 64 dims, but some of NumPy's iterators stop at
    32: either way, a correct file or one line and exit 1, no traceback."""
    g = np.full((1,) * (ndim - 1) + (2,), 0.5, np.float32)
    g.tofile(tmp_path / "g.bin")
    shape = ",".join(map(str, g.shape))
    status, _, err = run_golden(capsys, "--grad-output", tmp_path / "g.bin", "--output",
                             tmp_path / "g.bin", "--out", tmp_path / "r.bin",
                             "--dtype", "float32", "--shape", shape)
    if status == 0:
        assert (tmp_path / "r.bin").read_bytes() == np.full(2, 0.125, np.float32).tobytes()
    else:
        one_line_error(status, err)
        assert not (tmp_path / "r.bin").exists()


@pytest.mark.parametrize("error", [RuntimeError("this function only supports up to 32 "
                                                "dimensions but the array has 33."),
                                   OverflowError("too big"),
                                   KeyError("an unforeseen\nmulti-line failure")])
def test_any_failure_of_the_computation_is_one_line(tmp_path, capsys, monkeypatch, error):
    def failing(*args, **kwargs):
        raise error
    monkeypatch.setattr(golden, "sigmoid_backward", failing)
    status, _, err = run_golden(capsys, *npy_args(tmp_path, tmp_path / "r.npy"))
    one_line_error(status, err)
    assert not (tmp_path / "r.npy").exists() and tmp_files(tmp_path) == []
