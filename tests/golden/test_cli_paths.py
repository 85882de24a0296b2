"""Every path argument of ``golden`` and ``compare`` (src/sigmoid_backward/
_paths.py): a directory, a missing file or a file that is not a regular one
(a FIFO, /dev/zero) where a file is expected, a file where a directory is
expected, get one line naming the argument, the user's path and what was
expected, with the commands' documented exit status, and nothing written.

A FIFO is given under a deadline (SIGALRM): a command that opens it to read
blocks until a writer comes, and must refuse it before that."""
import json
import os
import signal

import numpy as np
import pytest

from golden_support import files, run

DATA = "a .npy or raw data file"
CASE_FILE = "an ATK json or TTK csv case file"
MANIFEST = "a manifest.json written by golden --cases"
ACTUAL_DIR = "a directory of the device's outputs"
OUT_DIR = "a directory (made if missing)"
OUTPUT = "a regular file or a new name"

ATK = [{"id": 0, "aclnn_name": "aclnnSigmoidBackward", "inputs": [
    {"name": "gradOutput", "dtype": "fp16", "shape": [2], "range_values": [-1, 1]},
    {"name": "output", "dtype": "fp16", "shape": [2], "range_values": [0, 1]}]}]

# argument -> (command, exit status on a bad path, what it expects, its
# arguments around the bad path BAD).  Both commands exit 2 on any: found
# before anything is written (docs/golden.md).
FILE_ARGS = {
    "--grad-output": ("golden", 2, DATA, ["--grad-output", "BAD", "--output", "g.bin",
                                          "--out", "r.bin", "--dtype", "float32"]),
    "--output": ("golden", 2, DATA, ["--grad-output", "g.bin", "--output", "BAD",
                                     "--out", "r.bin", "--dtype", "float32"]),
    "--cases": ("golden", 2, CASE_FILE, ["--cases", "BAD", "--out-dir", "cases"]),
    "ACTUAL": ("compare", 2, DATA, ["BAD", "g.bin", "--dtype", "float32"]),
    "GOLDEN": ("compare", 2, DATA, ["g.bin", "BAD", "--dtype", "float32"]),
    "--manifest": ("compare", 2, MANIFEST, ["--manifest", "BAD", "--actual-dir", "."]),
}
DIR_ARGS = {
    "--out-dir": ("golden", 2, OUT_DIR, ["--cases", "atk.json", "--out-dir", "BAD"]),
    "--actual-dir": ("compare", 2, ACTUAL_DIR, ["--manifest", "m.json", "--actual-dir", "BAD"]),
}
OUTPUT_ARGS = {
    "--out": ("golden", 2, ["--grad-output", "g.bin", "--output", "g.bin", "--out", "BAD",
                            "--dtype", "float32"]),
    "--json": ("compare", 2, ["g.bin", "g.bin", "--dtype", "float32", "--json", "BAD"]),
    "--csv": ("compare", 2, ["g.bin", "g.bin", "--dtype", "float32", "--csv", "BAD"]),
}


@pytest.fixture
def folder(tmp_path, monkeypatch):
    """A folder of valid files for the other arguments, as the current one."""
    monkeypatch.chdir(tmp_path)
    np.ones(4, np.float32).tofile("g.bin")
    (tmp_path / "atk.json").write_text(json.dumps(ATK))
    (tmp_path / "m.json").write_text('{"cases": []}')
    return tmp_path


def _argv(args, bad):
    return [bad if a == "BAD" else a for a in args]


def _one_line(status, err, command, code, message):
    assert (status, err) == (code, f"python -m sigmoid_backward {command}: error: "
                                   f"{message}\n")


def _in_process(capsys, command, args, bad):
    return run(capsys, command, *_argv(args, bad))[::2]  # (status, err)


class Blocked(BaseException):
    """The deadline passed (a BaseException: the commands' own handlers of
    unforeseen errors must not take it for one)."""


def _without_blocking(capsys, command, args, bad, seconds=20):
    """The command in-process; one that blocks (on opening a FIFO) fails the test."""
    def expire(signum, frame):
        raise Blocked
    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        return _in_process(capsys, command, args, bad)
    except Blocked:
        pytest.fail(f"{command} {' '.join(_argv(args, bad))} blocked on a FIFO")
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


@pytest.mark.parametrize("suffix", ["", ".npy"])
@pytest.mark.parametrize("name", FILE_ARGS)
def test_a_directory_or_a_missing_file_where_a_file_is_expected(folder, capsys, name,
                                                                 suffix):
    command, code, expected, args = FILE_ARGS[name]
    (folder / f"d{suffix}").mkdir()
    before = files(folder)
    status, err = _in_process(capsys, command, args, f"d{suffix}")
    _one_line(status, err, command, code, f"{name}: d{suffix} is a directory, "
                                          f"expected {expected}")
    status, err = _in_process(capsys, command, args, f"nope{suffix}")
    _one_line(status, err, command, code, f"{name}: nope{suffix} does not exist, "
                                          f"expected {expected}")
    assert files(folder) == before


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs and SIGALRM")
@pytest.mark.parametrize("suffix", ["", ".npy"])
@pytest.mark.parametrize("name", FILE_ARGS)
def test_a_fifo_where_a_file_is_expected_is_refused_without_blocking(folder, capsys, name,
                                                                     suffix):
    command, code, expected, args = FILE_ARGS[name]
    os.mkfifo(folder / f"f{suffix}")
    before = files(folder)
    status, err = _without_blocking(capsys, command, args, f"f{suffix}")
    _one_line(status, err, command, code, f"{name}: f{suffix} is a FIFO (named pipe), "
                                          f"not a regular file, expected {expected}")
    assert files(folder) == before


@pytest.mark.skipif(not os.path.exists("/dev/zero"), reason="needs /dev/zero")
@pytest.mark.parametrize("name", FILE_ARGS)
def test_a_device_where_a_file_is_expected_is_refused(folder, capsys, name):
    """/dev/zero: its size is 0, and reading it never ends."""
    command, code, expected, args = FILE_ARGS[name]
    status, err = _in_process(capsys, command, args, "/dev/zero")
    _one_line(status, err, command, code, f"{name}: /dev/zero is a character device, "
                                          f"not a regular file, expected {expected}")


@pytest.mark.parametrize("name", DIR_ARGS)
def test_a_file_or_a_fifo_where_a_directory_is_expected(folder, capsys, name):
    command, code, expected, args = DIR_ARGS[name]
    before = files(folder)
    status, err = _in_process(capsys, command, args, "g.bin")
    _one_line(status, err, command, code, f"{name}: g.bin is a regular file, "
                                          f"expected {expected}")
    if hasattr(os, "mkfifo"):  # and SIGALRM
        os.mkfifo(folder / "f")
        before = files(folder)
        status, err = _without_blocking(capsys, command, args, "f")
        _one_line(status, err, command, code, f"{name}: f is a FIFO (named pipe), "
                                              f"expected {expected}")
    assert files(folder) == before


def test_a_missing_actual_dir(folder, capsys):
    status, err = _in_process(capsys, "compare", DIR_ARGS["--actual-dir"][3], "nope")
    _one_line(status, err, "compare", 2, f"--actual-dir: nope does not exist, "
                                         f"expected {ACTUAL_DIR}")


def test_a_missing_out_dir_is_made(folder, capsys):
    status, err = _in_process(capsys, "golden", DIR_ARGS["--out-dir"][3], "new/dir")
    assert (status, err) == (0, "")
    assert "manifest.json" in files(folder / "new" / "dir")


@pytest.mark.parametrize("name", OUTPUT_ARGS)
def test_a_directory_or_a_missing_folder_where_an_output_is_expected(folder, capsys, name):
    command, code, args = OUTPUT_ARGS[name]
    (folder / "d").mkdir()
    before = files(folder)
    status, err = _in_process(capsys, command, args, "d")
    _one_line(status, err, command, code, f"{name}: d is a directory, expected {OUTPUT}")
    status, err = _in_process(capsys, command, args, "nope/r.bin")
    _one_line(status, err, command, code, f"{name}: cannot write nope/r.bin: its directory "
                                          f"{os.path.realpath(folder)}/nope does not exist")
    assert files(folder) == before and files(folder / "d") == []


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs and SIGALRM")
@pytest.mark.parametrize("name", OUTPUT_ARGS)
def test_a_fifo_where_an_output_is_expected_is_refused_without_blocking(folder, capsys, name):
    command, code, args = OUTPUT_ARGS[name]
    os.mkfifo(folder / "f")
    before = files(folder)
    status, err = _without_blocking(capsys, command, args, "f")
    _one_line(status, err, command, code, f"{name}: f is a FIFO (named pipe), not a regular "
                                          f"file, expected {OUTPUT}")
    assert files(folder) == before
