"""``python -m sigmoid_backward golden`` (src/sigmoid_backward/_golden.py):
files in, the result file out, one-line errors, no half-written output."""
import os
import re
import subprocess
import sys

import ml_dtypes
import numpy as np
import pytest

import sigmoid_backward._golden as golden
from sigmoid_backward import sigmoid_backward as sb
from sigmoid_backward.__main__ import main

BF16 = np.dtype(ml_dtypes.bfloat16)
DTYPES = {"float16": np.dtype(np.float16), "bfloat16": BF16,
          "float32": np.dtype(np.float32), "float64": np.dtype(np.float64),
          "complex64": np.dtype(np.complex64), "complex128": np.dtype(np.complex128)}
RNG = np.random.default_rng(5)


def _values(shape, dtype):
    real = np.asarray(RNG.uniform(-2, 2, shape))
    if np.dtype(dtype).kind == "c":
        real = real + 1j * RNG.uniform(-2, 2, shape)
    return real.astype(dtype)


def _same(actual, expected):
    actual, expected = np.asarray(actual), np.asarray(expected)
    assert (actual.dtype, actual.shape) == (expected.dtype, expected.shape)
    assert actual.tobytes() == expected.tobytes()


def _golden(capsys, *args):
    """Run in-process; return (status, stdout, stderr)."""
    status = main(["golden", *map(str, args)])
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def _files(tmp_path):
    return sorted(p.name for p in tmp_path.iterdir())


# --- results --------------------------------------------------------------

@pytest.mark.parametrize("name", DTYPES)
def test_bin_files_for_every_dtype(tmp_path, capsys, name):
    g, y = _values((2, 3, 4), DTYPES[name]), _values((2, 3, 4), DTYPES[name])
    g.tofile(tmp_path / "g.bin")
    y.tofile(tmp_path / "y.bin")
    status, out, err = _golden(capsys, "--grad-output", tmp_path / "g.bin", "--output",
                               tmp_path / "y.bin", "--out", tmp_path / "r.bin",
                               "--dtype", name, "--shape", "2,3,4")
    assert (status, err) == (0, "")
    assert f"{name}, shape 2,3,4" in out
    expected = sb(g, y)
    assert (tmp_path / "r.bin").read_bytes() == expected.tobytes()


@pytest.mark.parametrize("name", DTYPES)
def test_npy_files_for_every_dtype(tmp_path, capsys, name):
    g, y = _values((3, 1), DTYPES[name]), _values((4,), DTYPES[name])  # broadcasting
    np.save(tmp_path / "g.npy", g)
    np.save(tmp_path / "y.npy", y)
    status, _, err = _golden(capsys, "--grad-output", tmp_path / "g.npy", "--output",
                             tmp_path / "y.npy", "--out", tmp_path / "r.npy")
    assert (status, err) == (0, "")
    result = np.load(tmp_path / "r.npy")
    if name == "bfloat16":  # NumPy writes bfloat16 as |V2
        result = result.view(BF16)
    _same(result, sb(g, y))


def test_bfloat16_npy_round_trips_through_the_cli(tmp_path, capsys):
    g = _values((5,), BF16)
    np.save(tmp_path / "g.npy", g)
    _golden(capsys, "--grad-output", tmp_path / "g.npy", "--output", tmp_path / "g.npy",
            "--out", tmp_path / "r.npy")
    status, _, err = _golden(capsys, "--grad-output", tmp_path / "r.npy", "--output",
                             tmp_path / "g.npy", "--out", tmp_path / "r2.npy")
    assert (status, err) == (0, "")
    _same(np.load(tmp_path / "r2.npy").view(BF16), sb(sb(g, g), g))


def test_npy_inputs_promote_and_dtype_overrides(tmp_path, capsys):
    g, y = _values((4,), np.float16), _values((4,), BF16)
    np.save(tmp_path / "g.npy", g)
    np.save(tmp_path / "y.npy", y)
    _golden(capsys, "--grad-output", tmp_path / "g.npy", "--output", tmp_path / "y.npy",
            "--out", tmp_path / "r.npy")
    _same(np.load(tmp_path / "r.npy"), sb(g, y))  # float32 by SPEC.md's table
    _golden(capsys, "--grad-output", tmp_path / "g.npy", "--output", tmp_path / "y.npy",
            "--out", tmp_path / "r64.npy", "--dtype", "fp64")
    _same(np.load(tmp_path / "r64.npy"), sb(g, y, dtype=np.float64))


def test_bin_without_shape_is_one_dimensional(tmp_path, capsys):
    g, y = _values((7,), np.float32), _values((7,), np.float32)
    g.tofile(tmp_path / "g.bin")
    y.tofile(tmp_path / "y.bin")
    status, out, _ = _golden(capsys, "--grad-output", tmp_path / "g.bin", "--output",
                             tmp_path / "y.bin", "--out", tmp_path / "r.bin", "--dtype", "fp32")
    assert status == 0 and "shape 7" in out
    assert (tmp_path / "r.bin").read_bytes() == sb(g, y).tobytes()


def test_mixed_formats_and_output_format_follows_its_name(tmp_path, capsys):
    g, y = _values((2, 3), np.float32), _values((2, 3), np.float32)
    np.save(tmp_path / "g.npy", g)
    y.tofile(tmp_path / "y.bin")
    status, _, err = _golden(capsys, "--grad-output", tmp_path / "g.npy", "--output",
                             tmp_path / "y.bin", "--out", tmp_path / "r.bin",
                             "--dtype", "float32", "--shape", "2,3")
    assert (status, err) == (0, "")
    assert (tmp_path / "r.bin").read_bytes() == sb(g, y).tobytes()
    _golden(capsys, "--grad-output", tmp_path / "g.npy", "--output", tmp_path / "g.npy",
            "--out", tmp_path / "r.npy")
    _same(np.load(tmp_path / "r.npy"), sb(g, g))


def test_zero_d_and_empty(tmp_path, capsys):
    np.save(tmp_path / "s.npy", np.float64(0.25))
    assert _golden(capsys, "--grad-output", tmp_path / "s.npy", "--output",
                   tmp_path / "s.npy", "--out", tmp_path / "r.npy")[0] == 0
    _same(np.load(tmp_path / "r.npy"), np.array(0.25 * 0.75 * 0.25))
    (tmp_path / "e.bin").write_bytes(b"")
    assert _golden(capsys, "--grad-output", tmp_path / "e.bin", "--output",
                   tmp_path / "e.bin", "--out", tmp_path / "r.bin", "--dtype", "float16",
                   "--shape", "0,3")[0] == 0
    assert (tmp_path / "r.bin").read_bytes() == b""


def test_output_file_gets_the_usual_permissions(tmp_path, capsys):
    np.save(tmp_path / "g.npy", np.ones(2))
    _golden(capsys, "--grad-output", tmp_path / "g.npy", "--output", tmp_path / "g.npy",
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


ERRORS = {
    "missing file": (["--grad-output", "nope.bin", "--output", "y.bin", "--dtype", "float32"],
                     1, "--grad-output: no such file: .*nope.bin"),
    "size not a multiple": (["--grad-output", "g.bin", "--output", "y.bin", "--dtype",
                             "complex128"], 1, "holds 24 bytes, not a whole number of complex128"),
    "size not the shape": (["--grad-output", "g.bin", "--output", "y.bin", "--dtype",
                            "float32", "--shape", "2,4"], 1,
                           "holds 6 float32 values \\(24 bytes\\), but --shape 2,4 needs 8"),
    "unknown dtype": (["--grad-output", "g.bin", "--output", "y.bin", "--dtype", "float8"],
                      2, "unknown dtype 'float8'; choose one of float16, bfloat16"),
    "raw without dtype": (["--grad-output", "g.bin", "--output", "y.bin"], 1,
                          "g.bin is a raw file: give its dtype with --dtype"),
    "bad shape": (["--grad-output", "g.bin", "--output", "y.bin", "--dtype", "float32",
                   "--shape", "2,three"], 2, "bad shape '2,three'"),
    "negative shape": (["--grad-output", "g.bin", "--output", "y.bin", "--dtype", "float32",
                        "--shape", "-6"], 2, "dimensions must be >= 0"),
    "shape with npy": (["--grad-output", "g.npy", "--output", "g.npy", "--shape", "2,3"], 1,
                       "--shape describes raw inputs"),
    "not broadcastable": (["--grad-output", "g.npy", "--output", "y.bin", "--dtype",
                           "float32", "--shape", "3,2"], 1, "could not be broadcast together"),
    "castable (control)": (["--grad-output", "g.npy", "--output", "g.npy", "--dtype",
                            "complex64"], 0, None),  # float32 -> complex64 is allowed
    "complex into real": (["--grad-output", "c.npy", "--output", "g.npy", "--dtype",
                           "float32"], 1, "input 0 from dtype.*complex64.* to dtype.*float32"),
    "unsupported npy dtype": (["--grad-output", "u.npy", "--output", "g.npy"], 1,
                              "grad_output has dtype numpy.dtypes.StrDType, which is not supported"),
    "object npy": (["--grad-output", "o.npy", "--output", "g.npy"], 1,
                   "o.npy is not a readable .npy file"),
    "garbage npy": (["--grad-output", "g.npy", "--output", "junk.npy"], 1,
                    "junk.npy is not a readable .npy file"),
    "missing argument": (["--grad-output", "g.bin", "--dtype", "float32"], 2,
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
    args, status, message = ERRORS[case]
    out_name = "r.bin" if status else "r.npy"
    before = _files(tmp_path)
    if status == 2:  # argparse's usage errors exit
        with pytest.raises(SystemExit) as exc:
            main(["golden", *args, "--out", out_name])
        got, err = exc.value.code, capsys.readouterr().err
    else:
        got = main(["golden", *args, "--out", out_name])
        err = capsys.readouterr().err
    assert got == status
    if status:
        assert "Traceback" not in err
        assert err.startswith(("python -m sigmoid_backward golden: error: ", "usage: "))
        assert re.search(message, err), err
        assert (tmp_path / "r.bin").read_bytes() == b"previous result"
        assert _files(tmp_path) == before  # no temporary file left behind
    else:
        assert _files(tmp_path) == sorted(before + ["r.npy"])


def test_out_in_a_missing_folder(tmp_path, capsys):
    _inputs(tmp_path)
    status, _, err = _golden(capsys, "--grad-output", tmp_path / "g.npy", "--output",
                             tmp_path / "g.npy", "--out", tmp_path / "no" / "r.npy")
    assert status == 1 and "--out: cannot write in" in err


@pytest.mark.parametrize("failure", [OSError(28, "No space left on device"),
                                     KeyboardInterrupt()])
def test_failed_write_keeps_the_previous_file(tmp_path, capsys, monkeypatch, failure):
    _inputs(tmp_path)
    np.save(tmp_path / "r.npy", np.zeros(1))
    previous = (tmp_path / "r.npy").read_bytes()
    before = _files(tmp_path)

    def save_half_then_fail(f, arr, **kwargs):
        f.write(b"\x93NUMPY half")
        raise failure

    monkeypatch.setattr(golden.np, "save", save_half_then_fail)
    status, _, err = _golden(capsys, "--grad-output", tmp_path / "g.npy", "--output",
                             tmp_path / "g.npy", "--out", tmp_path / "r.npy")
    assert status == (1 if isinstance(failure, OSError) else 130)
    assert "No space left on device" in err or "interrupted" in err
    assert (tmp_path / "r.npy").read_bytes() == previous
    assert _files(tmp_path) == before


# --- as a command ----------------------------------------------------------

def _run(*args, cwd):
    return subprocess.run([sys.executable, "-m", "sigmoid_backward", "golden", *args],
                          cwd=cwd, capture_output=True, text=True, timeout=120)


def test_command_line_writes_golden_data(tmp_path):
    g, y = _values((2, 3, 4), BF16), _values((2, 3, 4), BF16)
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
    assert proc.returncode == 1
    assert proc.stderr == ("python -m sigmoid_backward golden: error: --grad-output: g.bin "
                           "holds 10 bytes, not a whole number of float32 values "
                           "(4 bytes each)\n")
    assert not (tmp_path / "r.bin").exists()
    assert _run("--help", cwd=tmp_path).stdout.startswith("usage: python -m sigmoid_backward golden")
