"""``python -m sigmoid_backward golden`` (src/sigmoid_backward/_golden.py):
files in, the result file out, one-line errors, no half-written output."""
import os
import re
import stat
import subprocess
import sys

import numpy as np
import pytest

import sigmoid_backward._golden as golden
from sigmoid_backward import sigmoid_backward as sb
from sigmoid_backward.__main__ import main

from helpers import BF16, BY_NAME, assert_same

RNG = np.random.default_rng(5)


def _values(shape, dtype):
    real = np.asarray(RNG.uniform(-2, 2, shape))
    if np.dtype(dtype).kind == "c":
        real = real + 1j * RNG.uniform(-2, 2, shape)
    return real.astype(dtype)


def _golden(capsys, *args):
    """Run in-process; return (status, stdout, stderr)."""
    status = main(["golden", *map(str, args)])
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def _files(tmp_path):
    return sorted(p.name for p in tmp_path.iterdir())


# --- results --------------------------------------------------------------

@pytest.mark.parametrize("name", BY_NAME)
def test_bin_files_for_every_dtype(tmp_path, capsys, name):
    g, y = _values((2, 3, 4), BY_NAME[name]), _values((2, 3, 4), BY_NAME[name])
    g.tofile(tmp_path / "g.bin")
    y.tofile(tmp_path / "y.bin")
    status, out, err = _golden(capsys, "--grad-output", tmp_path / "g.bin", "--output",
                               tmp_path / "y.bin", "--out", tmp_path / "r.bin",
                               "--dtype", name, "--shape", "2,3,4")
    assert (status, err) == (0, "")
    assert f"{name}, shape 2,3,4" in out
    expected = sb(g, y)
    assert (tmp_path / "r.bin").read_bytes() == expected.tobytes()


@pytest.mark.parametrize("name", BY_NAME)
def test_npy_files_for_every_dtype(tmp_path, capsys, name):
    g, y = _values((3, 1), BY_NAME[name]), _values((4,), BY_NAME[name])  # broadcasting
    np.save(tmp_path / "g.npy", g)
    np.save(tmp_path / "y.npy", y)
    status, _, err = _golden(capsys, "--grad-output", tmp_path / "g.npy", "--output",
                             tmp_path / "y.npy", "--out", tmp_path / "r.npy")
    assert (status, err) == (0, "")
    result = np.load(tmp_path / "r.npy")
    if name == "bfloat16":  # NumPy writes bfloat16 as |V2
        result = result.view(BF16)
    assert_same(result, sb(g, y))


def test_bfloat16_npy_round_trips_through_the_cli(tmp_path, capsys):
    g = _values((5,), BF16)
    np.save(tmp_path / "g.npy", g)
    _golden(capsys, "--grad-output", tmp_path / "g.npy", "--output", tmp_path / "g.npy",
            "--out", tmp_path / "r.npy")
    status, _, err = _golden(capsys, "--grad-output", tmp_path / "r.npy", "--output",
                             tmp_path / "g.npy", "--out", tmp_path / "r2.npy")
    assert (status, err) == (0, "")
    assert_same(np.load(tmp_path / "r2.npy").view(BF16), sb(sb(g, g), g))


def test_npy_inputs_promote_and_dtype_overrides(tmp_path, capsys):
    g, y = _values((4,), np.float16), _values((4,), BF16)
    np.save(tmp_path / "g.npy", g)
    np.save(tmp_path / "y.npy", y)
    _golden(capsys, "--grad-output", tmp_path / "g.npy", "--output", tmp_path / "y.npy",
            "--out", tmp_path / "r.npy")
    assert_same(np.load(tmp_path / "r.npy"), sb(g, y))  # float32 by the promotion table
    _golden(capsys, "--grad-output", tmp_path / "g.npy", "--output", tmp_path / "y.npy",
            "--out", tmp_path / "r64.npy", "--dtype", "fp64")
    assert_same(np.load(tmp_path / "r64.npy"), sb(g, y, dtype=np.float64))


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
    assert_same(np.load(tmp_path / "r.npy"), sb(g, g))


def test_zero_d_and_empty(tmp_path, capsys):
    np.save(tmp_path / "s.npy", np.float64(0.25))
    assert _golden(capsys, "--grad-output", tmp_path / "s.npy", "--output",
                   tmp_path / "s.npy", "--out", tmp_path / "r.npy")[0] == 0
    assert_same(np.load(tmp_path / "r.npy"), np.array(0.25 * 0.75 * 0.25))
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
                              "grad_output has dtype numpy.dtypes.StrDType, which is not "
                              "supported"),
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
    usage = _run("--help", cwd=tmp_path).stdout
    assert usage.startswith("usage: python -m sigmoid_backward golden")


# --- what --out may be, and what is kept of it ------------------------------

def _args(tmp_path, out):
    np.save(tmp_path / "g.npy", np.full(3, 0.5))
    return ["--grad-output", tmp_path / "g.npy", "--output", tmp_path / "g.npy", "--out", out]


EXPECTED = np.full(3, 0.125)   # 0.5 * (1 - 0.5) * 0.5


def _one_line_error(status, err, *words):
    assert status == 1
    assert err.count("\n") == 1 and err.startswith("python -m sigmoid_backward golden: error: ")
    assert "Traceback" not in err
    for word in words:
        assert word in err, (word, err)


def _tmp_files(folder):
    return [p.name for p in folder.iterdir() if p.name.endswith(".tmp")]


def test_symlink_out_writes_through_to_its_target(tmp_path, capsys):
    (tmp_path / "data").mkdir()
    target = tmp_path / "data" / "r.npy"
    np.save(target, np.zeros(1))                       # stale data
    (tmp_path / "link.npy").symlink_to(target)
    status, out, err = _golden(capsys, *_args(tmp_path, tmp_path / "link.npy"))
    assert (status, err) == (0, "")
    assert (tmp_path / "link.npy").is_symlink()        # still a link, to the same file
    assert os.readlink(tmp_path / "link.npy") == str(target)
    assert_same(np.load(target), EXPECTED)                   # the target got the new data
    assert _tmp_files(tmp_path) == _tmp_files(tmp_path / "data") == []


def test_dangling_and_chained_symlinks(tmp_path, capsys):
    (tmp_path / "dangling.npy").symlink_to(tmp_path / "new.npy")
    status, _, err = _golden(capsys, *_args(tmp_path, tmp_path / "dangling.npy"))
    assert (status, err) == (0, "")
    assert (tmp_path / "dangling.npy").is_symlink()
    assert_same(np.load(tmp_path / "new.npy"), EXPECTED)
    (tmp_path / "chain.npy").symlink_to(tmp_path / "dangling.npy")
    np.save(tmp_path / "new.npy", np.zeros(1))
    assert _golden(capsys, *_args(tmp_path, tmp_path / "chain.npy"))[0] == 0
    assert (tmp_path / "chain.npy").is_symlink() and (tmp_path / "dangling.npy").is_symlink()
    assert_same(np.load(tmp_path / "new.npy"), EXPECTED)
    (tmp_path / "loop.npy").symlink_to(tmp_path / "loop.npy")
    status, _, err = _golden(capsys, *_args(tmp_path, tmp_path / "loop.npy"))
    _one_line_error(status, err, "--out: cannot use", "loop.npy")
    assert (tmp_path / "loop.npy").is_symlink()


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
def test_a_fifo_out_is_refused_and_left_alone(tmp_path, capsys):
    fifo = tmp_path / "r.bin"
    os.mkfifo(fifo)
    status, _, err = _golden(capsys, *_args(tmp_path, fifo))
    _one_line_error(status, err, "r.bin is a FIFO (named pipe), not a regular file")
    assert stat_mode(fifo, os.stat) == "fifo"
    assert _tmp_files(tmp_path) == []


def stat_mode(path, how=os.lstat):
    mode = how(path).st_mode
    for name in ("fifo", "chr", "blk", "dir", "lnk", "reg", "sock"):
        if getattr(stat, f"S_IS{name.upper()}")(mode):
            return name
    return "?"


def _null_device(tmp_path):
    """A character device to give as --out.  As root, a node of its own
    (1, 3: what /dev/null is) in tmp_path: a regression must never get to
    replace the real /dev/null.  Otherwise the real one, which only root
    could replace."""
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        node = tmp_path / "null"
        os.mknod(node, 0o666 | stat.S_IFCHR, os.makedev(1, 3))
        return str(node)
    if not os.path.exists("/dev/null"):
        pytest.skip("needs /dev/null")
    return "/dev/null"


@pytest.mark.skipif(not hasattr(os, "mknod"), reason="needs device nodes")
def test_a_device_out_is_refused_and_left_alone(tmp_path, capsys):
    """As root, replacing /dev/null with a regular file would break the
    system; the command refuses before it computes anything."""
    device = _null_device(tmp_path)
    before = os.stat(device)
    status, _, err = _golden(capsys, *_args(tmp_path, device))
    _one_line_error(status, err, f"{device} is a character device, not a regular file")
    after = os.lstat(device)
    assert stat.S_ISCHR(after.st_mode) and after.st_rdev == before.st_rdev
    assert after.st_ino == before.st_ino


def test_a_directory_or_a_folder_name_is_refused(tmp_path, capsys):
    (tmp_path / "d.npy").mkdir()
    status, _, err = _golden(capsys, *_args(tmp_path, tmp_path / "d.npy"))
    _one_line_error(status, err, "is a directory, not a regular file")
    status, _, err = _golden(capsys, *_args(tmp_path, str(tmp_path / "new") + os.sep))
    _one_line_error(status, err, "names no file")
    assert not (tmp_path / "new").exists()


@pytest.mark.parametrize("mode", [0o600, 0o640, 0o444 if os.geteuid() == 0 else 0o644, 0o755],
                         ids=oct)
def test_an_existing_file_keeps_its_mode(tmp_path, capsys, mode):
    out = tmp_path / "r.npy"
    np.save(out, np.zeros(1))
    os.chmod(out, mode)
    assert _golden(capsys, *_args(tmp_path, out))[0] == 0
    assert out.stat().st_mode & 0o7777 == mode
    assert_same(np.load(out), EXPECTED)


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0,
                    reason="only root can give a file to another owner")
def test_an_existing_file_keeps_its_owner_and_group(tmp_path, capsys):
    out = tmp_path / "r.npy"
    np.save(out, np.zeros(1))
    os.chown(out, 12345, 23456)
    os.chmod(out, 0o2640)     # set-gid kept too: chown happens before chmod
    assert _golden(capsys, *_args(tmp_path, out))[0] == 0
    st = out.stat()
    assert (st.st_uid, st.st_gid, st.st_mode & 0o7777) == (12345, 23456, 0o2640)


def test_a_file_we_may_not_write_is_refused(tmp_path, capsys, monkeypatch):
    """As the shell's > refuses it.  (Root may write anything, so the check
    is simulated.)"""
    out = tmp_path / "r.npy"
    np.save(out, np.zeros(1))
    previous = out.read_bytes()
    real_access = os.access
    monkeypatch.setattr(golden.os, "access",
                        lambda p, m: False if m == os.W_OK else real_access(p, m))
    status, _, err = _golden(capsys, *_args(tmp_path, out))
    _one_line_error(status, err, "r.npy is not writable")
    assert out.read_bytes() == previous


def test_a_hard_link_keeps_the_old_contents(tmp_path, capsys):
    """--out is replaced by a new file, as mv does: another name of the old
    file (a hard link, as build caches make) keeps the old contents."""
    out, other = tmp_path / "r.npy", tmp_path / "cached.npy"
    np.save(out, np.zeros(1))
    os.link(out, other)
    old = out.read_bytes()
    assert _golden(capsys, *_args(tmp_path, out))[0] == 0
    assert_same(np.load(out), EXPECTED)
    assert other.read_bytes() == old
    assert out.stat().st_nlink == other.stat().st_nlink == 1


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
def test_out_replaced_by_a_fifo_while_writing_is_left_alone(tmp_path, capsys, monkeypatch):
    out = tmp_path / "r.npy"
    np.save(out, np.zeros(1))
    real_save = golden.np.save

    def swap_then_save(f, arr, **kwargs):
        out.unlink()
        os.mkfifo(out)
        real_save(f, arr, **kwargs)
    args = _args(tmp_path, out)
    monkeypatch.setattr(golden.np, "save", swap_then_save)  # numpy's own save
    status, _, err = _golden(capsys, *args)
    _one_line_error(status, err, "changed while the result was written")
    assert stat_mode(out) == "fifo" and _tmp_files(tmp_path) == []


# --- signals: no temporary left behind --------------------------------------

# Runs the command with a save that writes half a file, says so on stdout,
# and then waits to be signalled (as a 200 MB write would be, mid-way).
SLOW_WRITER = """
import sys, time
import sigmoid_backward._golden as golden
def half_then_wait(f, arr, **kwargs):
    f.write(b"\\x93NUMPY half")
    f.flush()
    print("writing", flush=True)
    time.sleep(60)
golden.np.save = half_then_wait
sys.exit(golden.main(sys.argv[1:]))
"""


@pytest.mark.parametrize("signame, status", [("SIGTERM", 143), ("SIGINT", 130),
                                             ("SIGHUP", 129)])
def test_a_signal_mid_write_leaves_no_temporary(tmp_path, signame, status):
    import signal
    if not hasattr(signal, signame):
        pytest.skip(f"no {signame} here")
    np.save(tmp_path / "g.npy", np.full(3, 0.5))
    np.save(tmp_path / "r.npy", np.zeros(1))
    previous = (tmp_path / "r.npy").read_bytes()
    before = _files(tmp_path)
    proc = subprocess.Popen([sys.executable, "-c", SLOW_WRITER, "--grad-output", "g.npy",
                             "--output", "g.npy", "--out", "r.npy"], cwd=tmp_path,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stdout.readline() == "writing\n"
        assert len(_tmp_files(tmp_path)) == 1          # the temporary exists now
        proc.send_signal(getattr(signal, signame))
        out, err = proc.communicate(timeout=60)
    finally:
        proc.kill()
        proc.wait()
    assert proc.returncode == status, err
    assert err == (f"python -m sigmoid_backward golden: "
                   f"{'interrupted' if signame == 'SIGINT' else 'terminated by ' + signame}"
                   f"; r.npy was not written\n")
    assert _files(tmp_path) == before and _tmp_files(tmp_path) == []
    assert (tmp_path / "r.npy").read_bytes() == previous


def test_an_ignored_sigterm_stays_ignored(tmp_path):
    """Under nohup-style SIG_IGN the command does not take the signal over."""
    script = ("import signal, sys\n"
              "signal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
              "import sigmoid_backward._golden as golden\n"
              "signals = golden._Signals()\n"
              "with signals:\n"
              "    assert signal.getsignal(signal.SIGTERM) is signal.SIG_IGN\n"
              "    assert signal.getsignal(signal.SIGINT) == signals._handle\n"
              "assert signal.getsignal(signal.SIGINT) is signal.default_int_handler\n")
    subprocess.run([sys.executable, "-c", script], check=True, timeout=60)


# Signals raised just after the temporary file is made, and just after it is
# renamed over --out.  In a subprocess: a regression would kill pytest.
HELD_BACK = """
import os, signal, sys, tempfile
import sigmoid_backward._golden as golden
where = sys.argv.pop(1)
real = getattr(golden.os, "replace") if where == "replace" else golden.tempfile.mkstemp

def then_signal(*args, **kwargs):
    made = real(*args, **kwargs)
    signal.raise_signal(signal.SIGTERM)   # Python runs the handler before the next line
    return made
if where == "replace":
    golden.os.replace = then_signal
else:
    golden.tempfile.mkstemp = then_signal
status = golden.main(sys.argv[1:])
assert signal.getsignal(signal.SIGTERM) is signal.SIG_DFL   # restored
sys.exit(status)
"""


@pytest.mark.parametrize("where, written", [("mkstemp", False), ("replace", True)])
def test_a_signal_while_creating_or_renaming_is_held_back(tmp_path, where, written):
    """A signal that arrives while the temporary file is created, or while
    it is renamed, is acted on just after: never a file left behind, and
    the message says whether --out was written."""
    np.save(tmp_path / "g.npy", np.full(3, 0.5))
    proc = subprocess.run([sys.executable, "-c", HELD_BACK, where, "--grad-output", "g.npy",
                           "--output", "g.npy", "--out", "r.npy"], cwd=tmp_path,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 143, proc.stderr
    assert proc.stderr == ("python -m sigmoid_backward golden: terminated by SIGTERM; r.npy "
                           f"was {'' if written else 'not '}written\n")
    assert _tmp_files(tmp_path) == []
    if written:
        assert_same(np.load(tmp_path / "r.npy"), EXPECTED)
    else:
        assert not (tmp_path / "r.npy").exists()


# --- input errors are one line, exit 1 ---------------------------------------

def _npy_with_header(path, shape, descr="<f4", payload=b"\0" * 16):
    with open(path, "wb") as f:
        np.lib.format.write_array_header_1_0(
            f, {"descr": descr, "fortran_order": False, "shape": shape})
        f.write(payload)


def test_an_npz_archive_under_a_npy_name(tmp_path, capsys):
    np.savez(tmp_path / "z", a=np.ones(3))
    os.rename(tmp_path / "z.npz", tmp_path / "z.npy")
    np.save(tmp_path / "g.npy", np.ones(3))
    status, _, err = _golden(capsys, "--grad-output", tmp_path / "z.npy", "--output",
                             tmp_path / "g.npy", "--out", tmp_path / "r.npy")
    _one_line_error(status, err, "z.npy is an .npz archive", "not a .npy file")
    assert not (tmp_path / "r.npy").exists()


@pytest.mark.parametrize("shape", [(2**64,), (0, 2**64), (2**62,), (2**40, 2**40),
                                   (2**31,) * 3])
def test_a_huge_shape_in_a_npy_header(tmp_path, capsys, shape):
    _npy_with_header(tmp_path / "huge.npy", shape)
    np.save(tmp_path / "g.npy", np.ones(3, np.float32))
    status, _, err = _golden(capsys, "--grad-output", tmp_path / "huge.npy", "--output",
                             tmp_path / "g.npy", "--out", tmp_path / "r.npy")
    _one_line_error(status, err, "huge.npy is not a readable .npy file")


@pytest.mark.parametrize("shape", ["0,99999999999999999999", "0,9999999999,9999999999",
                                   "99999999999999999999", ",".join(["1"] * 65),
                                   ",".join(["0"] * 65)])
def test_a_huge_or_65_dim_shape(tmp_path, capsys, shape):
    data = b"" if "0" in shape.split(",")[0] else np.ones(1, np.float32).tobytes()
    (tmp_path / "g.bin").write_bytes(data)
    status, _, err = _golden(capsys, "--grad-output", tmp_path / "g.bin", "--output",
                             tmp_path / "g.bin", "--out", tmp_path / "r.bin",
                             "--dtype", "float32", "--shape", shape)
    _one_line_error(status, err)
    assert not (tmp_path / "r.bin").exists()


@pytest.mark.parametrize("ndim", [32, 33, 64])
def test_many_dims_give_a_result_or_one_line(tmp_path, capsys, ndim):
    """NumPy arrays have up to 64 dims, but some of NumPy's iterators stop at
    32: either way, a correct file or one line and exit 1, no traceback."""
    g = np.full((1,) * (ndim - 1) + (2,), 0.5, np.float32)
    g.tofile(tmp_path / "g.bin")
    shape = ",".join(map(str, g.shape))
    status, _, err = _golden(capsys, "--grad-output", tmp_path / "g.bin", "--output",
                             tmp_path / "g.bin", "--out", tmp_path / "r.bin",
                             "--dtype", "float32", "--shape", shape)
    if status == 0:
        assert (tmp_path / "r.bin").read_bytes() == np.full(2, 0.125, np.float32).tobytes()
    else:
        _one_line_error(status, err)
        assert not (tmp_path / "r.bin").exists()


@pytest.mark.parametrize("error", [RuntimeError("this function only supports up to 32 "
                                                "dimensions but the array has 33."),
                                   OverflowError("too big"),
                                   KeyError("an unforeseen\nmulti-line failure")])
def test_any_failure_of_the_computation_is_one_line(tmp_path, capsys, monkeypatch, error):
    def failing(*args, **kwargs):
        raise error
    monkeypatch.setattr(golden, "sigmoid_backward", failing)
    status, _, err = _golden(capsys, *_args(tmp_path, tmp_path / "r.npy"))
    _one_line_error(status, err)
    assert not (tmp_path / "r.npy").exists() and _tmp_files(tmp_path) == []
