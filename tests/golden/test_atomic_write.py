"""What ``python -m sigmoid_backward golden --out`` may be, what it keeps,
and the signals (src/sigmoid_backward/golden/_atomic_write.py): a result is
written all or nothing, and no temporary file is ever left behind."""
import errno
import os
import signal
import stat
import subprocess
import sys

import numpy as np
import pytest

import sigmoid_backward.golden._atomic_write as atomic

from golden_support import HALF_RESULT, files, npy_args, one_line_error, run_golden, tmp_files
from helpers import assert_same

# --- what --out may be, and what is kept of it ------------------------------

def test_symlink_out_writes_through_to_its_target(tmp_path, capsys):
    (tmp_path / "data").mkdir()
    target = tmp_path / "data" / "r.npy"
    np.save(target, np.zeros(1))                       # stale data
    (tmp_path / "link.npy").symlink_to(target)
    status, out, err = run_golden(capsys, *npy_args(tmp_path, tmp_path / "link.npy"))
    assert (status, err) == (0, "")
    assert (tmp_path / "link.npy").is_symlink()        # still a link, to the same file
    assert os.readlink(tmp_path / "link.npy") == str(target)
    assert_same(np.load(target), HALF_RESULT)                   # the target got the new data
    assert tmp_files(tmp_path) == tmp_files(tmp_path / "data") == []


def test_dangling_and_chained_symlinks(tmp_path, capsys):
    (tmp_path / "dangling.npy").symlink_to(tmp_path / "new.npy")
    status, _, err = run_golden(capsys, *npy_args(tmp_path, tmp_path / "dangling.npy"))
    assert (status, err) == (0, "")
    assert (tmp_path / "dangling.npy").is_symlink()
    assert_same(np.load(tmp_path / "new.npy"), HALF_RESULT)
    (tmp_path / "chain.npy").symlink_to(tmp_path / "dangling.npy")
    np.save(tmp_path / "new.npy", np.zeros(1))
    assert run_golden(capsys, *npy_args(tmp_path, tmp_path / "chain.npy"))[0] == 0
    assert (tmp_path / "chain.npy").is_symlink() and (tmp_path / "dangling.npy").is_symlink()
    assert_same(np.load(tmp_path / "new.npy"), HALF_RESULT)
    (tmp_path / "loop.npy").symlink_to(tmp_path / "loop.npy")
    status, _, err = run_golden(capsys, *npy_args(tmp_path, tmp_path / "loop.npy"))
    one_line_error(status, err, f"--out: cannot write {tmp_path / 'loop.npy'}: Too many levels "
                                "of symbolic links")
    assert (tmp_path / "loop.npy").is_symlink()


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
def test_a_fifo_out_is_refused_and_left_alone(tmp_path, capsys):
    fifo = tmp_path / "r.bin"
    os.mkfifo(fifo)
    status, _, err = run_golden(capsys, *npy_args(tmp_path, fifo))
    one_line_error(status, err, "r.bin is a FIFO (named pipe), not a regular file")
    assert stat_mode(fifo, os.stat) == "fifo"
    assert tmp_files(tmp_path) == []


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
    status, _, err = run_golden(capsys, *npy_args(tmp_path, device))
    one_line_error(status, err, f"{device} is a character device, not a regular file")
    after = os.lstat(device)
    assert stat.S_ISCHR(after.st_mode) and after.st_rdev == before.st_rdev
    assert after.st_ino == before.st_ino


def test_a_directory_or_a_folder_name_is_refused(tmp_path, capsys):
    (tmp_path / "d.npy").mkdir()
    status, _, err = run_golden(capsys, *npy_args(tmp_path, tmp_path / "d.npy"))
    one_line_error(status, err, f"--out: {tmp_path / 'd.npy'} is a directory, expected a "
                                "regular file or a new name")
    status, _, err = run_golden(capsys, *npy_args(tmp_path, str(tmp_path / "new") + os.sep))
    one_line_error(status, err, "names no file")
    assert not (tmp_path / "new").exists()


@pytest.mark.parametrize("mode", [0o600, 0o640, 0o444 if os.geteuid() == 0 else 0o644, 0o755],
                         ids=oct)
def test_an_existing_file_keeps_its_mode(tmp_path, capsys, mode):
    out = tmp_path / "r.npy"
    np.save(out, np.zeros(1))
    os.chmod(out, mode)
    assert run_golden(capsys, *npy_args(tmp_path, out))[0] == 0
    assert out.stat().st_mode & 0o7777 == mode
    assert_same(np.load(out), HALF_RESULT)


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0,
                    reason="only root can give a file to another owner")
def test_an_existing_file_keeps_its_owner_and_group(tmp_path, capsys):
    out = tmp_path / "r.npy"
    np.save(out, np.zeros(1))
    os.chown(out, 12345, 23456)
    os.chmod(out, 0o2640)     # set-gid kept too: chown happens before chmod
    assert run_golden(capsys, *npy_args(tmp_path, out))[0] == 0
    st = out.stat()
    assert (st.st_uid, st.st_gid, st.st_mode & 0o7777) == (12345, 23456, 0o2640)


def test_a_file_we_may_not_write_is_refused(tmp_path, capsys, monkeypatch):
    """As the shell's > refuses it.  (Root may write anything, so the check
    is simulated.)"""
    out = tmp_path / "r.npy"
    np.save(out, np.zeros(1))
    previous = out.read_bytes()
    real_access = os.access
    monkeypatch.setattr(atomic.os, "access",
                        lambda p, m: False if m == os.W_OK else real_access(p, m))
    status, _, err = run_golden(capsys, *npy_args(tmp_path, out))
    one_line_error(status, err, "r.npy is not writable")
    assert out.read_bytes() == previous


def test_a_hard_link_keeps_the_old_contents(tmp_path, capsys):
    """--out is replaced by a new file, as mv does: another name of the old
    file (a hard link, as build caches make) keeps the old contents."""
    out, other = tmp_path / "r.npy", tmp_path / "cached.npy"
    np.save(out, np.zeros(1))
    os.link(out, other)
    old = out.read_bytes()
    assert run_golden(capsys, *npy_args(tmp_path, out))[0] == 0
    assert_same(np.load(out), HALF_RESULT)
    assert other.read_bytes() == old
    assert out.stat().st_nlink == other.stat().st_nlink == 1


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
def test_out_replaced_by_a_fifo_while_writing_is_left_alone(tmp_path, capsys, monkeypatch):
    out = tmp_path / "r.npy"
    np.save(out, np.zeros(1))
    real_save = np.save

    def swap_then_save(f, arr, **kwargs):
        out.unlink()
        os.mkfifo(out)
        real_save(f, arr, **kwargs)
    args = npy_args(tmp_path, out)
    monkeypatch.setattr(np, "save", swap_then_save)  # numpy's own save
    status, _, err = run_golden(capsys, *args)
    one_line_error(status, err, "changed while the result was written", code=3)
    assert stat_mode(out) == "fifo" and tmp_files(tmp_path) == []


# --- errors name the user's path, never the temporary file's -----------------

def _no_temporary_name(err, out):
    assert f"--out: cannot write {out}: " in err, err
    assert ".tmp" not in err and ".r.npy." not in err, err


def test_out_in_a_missing_folder_names_it(tmp_path, capsys):
    out = tmp_path / "no" / "r.npy"
    status, _, err = run_golden(capsys, *npy_args(tmp_path, out))
    one_line_error(status, err)
    _no_temporary_name(err, out)
    assert not (tmp_path / "no").exists()


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() == 0,
                    reason="root may write in a read-only folder (simulated below)")
def test_out_in_a_read_only_folder_names_it(tmp_path, capsys):
    (tmp_path / "ro").mkdir()
    os.chmod(tmp_path / "ro", 0o555)
    out = tmp_path / "ro" / "r.npy"
    try:
        status, _, err = run_golden(capsys, *npy_args(tmp_path, out))
    finally:
        os.chmod(tmp_path / "ro", 0o755)
    one_line_error(status, err, "Permission denied", code=3)  # a failed write: 3
    _no_temporary_name(err, out)
    assert files(tmp_path / "ro") == []


def _fails(code, names):
    """A call that fails as the OS fails it, naming the files it was given
    (the temporary file, here)."""
    def call(*args, **kwargs):
        paths = [a for a in args if isinstance(a, str)] or [kwargs.get("dir", "?")]
        raise OSError(code, os.strerror(code), *names(paths))
    return call


# Each step of replace_file that may fail, with what the OS says and the
# file names an OSError carries: the temporary file's, and the target's.
FAILURES = {
    "creating the temporary": ("atomic", "_create_temporary", errno.EACCES,
                               lambda p: [f".{p[0]}.abc123.tmp"]),
    "flushing it to disk": ("os", "fsync", errno.EIO, lambda p: []),
    "giving it the mode": ("atomic", "_keep_owner_and_mode", errno.EPERM, lambda p: p[:1]),
    "renaming it": ("os", "replace", errno.EXDEV, lambda p: [p[0], None, p[1]]),
}


@pytest.mark.parametrize("step", FAILURES)
def test_a_failed_step_names_the_users_path_not_the_temporary(tmp_path, capsys, monkeypatch,
                                                              step):
    """Wherever the write fails (as root, a read-only folder cannot make it
    fail), the one line names --out as the user gave it."""
    module, name, code, names = FAILURES[step]
    target = {"os": atomic.os, "atomic": atomic}[module]
    monkeypatch.setattr(target, name, _fails(code, names))
    out = tmp_path / "r.npy"
    np.save(out, np.zeros(1))
    previous = out.read_bytes()
    status, _, err = run_golden(capsys, *npy_args(tmp_path, out))
    monkeypatch.undo()
    one_line_error(status, err, os.strerror(code), code=3)  # a failed write: 3
    _no_temporary_name(err, out)
    assert out.read_bytes() == previous and tmp_files(tmp_path) == []


# --- signals: no temporary left behind --------------------------------------

# The children start with the dispositions a terminal gives, whatever they
# inherit: under nohup SIGHUP comes in ignored, in a shell's background job
# SIGINT does, and the command rightly leaves an ignored signal ignored.
DEFAULT_SIGNALS = """
import signal
signal.signal(signal.SIGINT, signal.default_int_handler)
for name in ("SIGTERM", "SIGHUP"):
    if hasattr(signal, name):
        signal.signal(getattr(signal, name), signal.SIG_DFL)
"""

# Runs the command with a save that writes half a file, says so on stdout,
# and then waits to be signalled (as a 200 MB write would be, mid-way), in
# short sleeps: a signal that lands just before a sleep's system call starts
# (or on another thread) waits for that call to return before CPython runs
# its Python handler.
SLOW_WRITER = DEFAULT_SIGNALS + """
import sys, time
import numpy as np
from sigmoid_backward.golden import _cli_golden
def half_then_wait(f, arr, **kwargs):
    f.write(b"\\x93NUMPY half")
    f.flush()
    print("writing", flush=True)
    for _ in range(600):
        time.sleep(0.1)
np.save = half_then_wait
sys.exit(_cli_golden.main(sys.argv[1:]))
"""


def _ignore_all():
    """As nohup and a background job leave a child: these signals ignored."""
    for name in ("SIGINT", "SIGTERM", "SIGHUP"):
        if hasattr(signal, name):
            signal.signal(getattr(signal, name), signal.SIG_IGN)


@pytest.mark.parametrize("inherited", ["default", "ignored"])
@pytest.mark.parametrize("signame, status", [("SIGTERM", 143), ("SIGINT", 130),
                                             ("SIGHUP", 129)])
def test_a_signal_mid_write_leaves_no_temporary(tmp_path, signame, status, inherited):
    if not hasattr(signal, signame):
        pytest.skip(f"no {signame} here")
    np.save(tmp_path / "g.npy", np.full(3, 0.5))
    np.save(tmp_path / "r.npy", np.zeros(1))
    previous = (tmp_path / "r.npy").read_bytes()
    before = files(tmp_path)
    proc = subprocess.Popen([sys.executable, "-c", SLOW_WRITER, "--grad-output", "g.npy",
                             "--output", "g.npy", "--out", "r.npy"], cwd=tmp_path,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            preexec_fn=_ignore_all if inherited == "ignored" else None)
    try:
        assert proc.stdout.readline() == "writing\n"
        assert len(tmp_files(tmp_path)) == 1          # the temporary exists now
        proc.send_signal(getattr(signal, signame))
        out, err = proc.communicate(timeout=60)
    finally:
        proc.kill()
        proc.wait()
    assert proc.returncode == status, err
    assert err == (f"python -m sigmoid_backward golden: "
                   f"{'interrupted' if signame == 'SIGINT' else 'terminated by ' + signame}"
                   f"; r.npy was not written\n")
    assert files(tmp_path) == before and tmp_files(tmp_path) == []
    assert (tmp_path / "r.npy").read_bytes() == previous


def test_an_ignored_sigterm_stays_ignored(tmp_path):
    """Under nohup-style SIG_IGN the command does not take the signal over."""
    script = (DEFAULT_SIGNALS +
              "signal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
              "from sigmoid_backward.golden._atomic_write import Signals\n"
              "signals = Signals()\n"
              "with signals:\n"
              "    assert signal.getsignal(signal.SIGTERM) is signal.SIG_IGN\n"
              "    assert signal.getsignal(signal.SIGINT) == signals._handle\n"
              "assert signal.getsignal(signal.SIGINT) is signal.default_int_handler\n")
    subprocess.run([sys.executable, "-c", script], check=True, timeout=60)


# Signals raised just after the temporary file is made, and just after it is
# renamed over --out.  In a subprocess: a regression would kill pytest.
HELD_BACK = DEFAULT_SIGNALS + """
import os, signal, sys
from sigmoid_backward.golden import _atomic_write
from sigmoid_backward.golden import _cli_golden
where = sys.argv.pop(1)
real = os.replace if where == "replace" else _atomic_write._create_temporary

def then_signal(*args, **kwargs):
    made = real(*args, **kwargs)
    signal.raise_signal(signal.SIGTERM)   # Python runs the handler before the next line
    return made
if where == "replace":
    _atomic_write.os.replace = then_signal
else:
    _atomic_write._create_temporary = then_signal
status = _cli_golden.main(sys.argv[1:])
assert signal.getsignal(signal.SIGTERM) is signal.SIG_DFL   # restored
sys.exit(status)
"""


@pytest.mark.parametrize("where, written", [("create", False), ("replace", True)])
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
    assert tmp_files(tmp_path) == []
    if written:
        assert_same(np.load(tmp_path / "r.npy"), HALF_RESULT)
    else:
        assert not (tmp_path / "r.npy").exists()


# --- a new file's mode: what a plain open() gives, the umask never set --------------

def _plain_open_mode(folder):
    """The permission bits a plain open() gives a new file in ``folder``."""
    with open(folder / "plain", "wb"):
        pass
    mode = stat.S_IMODE((folder / "plain").stat().st_mode)
    (folder / "plain").unlink()
    return mode


def _default_acl(folder, other):
    """Give ``folder`` a default ACL (user rw, group r, others ``other``),
    which the kernel applies to a new file instead of the umask; False where
    the file system has no ACLs."""
    import struct
    entries = ((0x01, 6), (0x04, 4), (0x20, other))  # USER_OBJ, GROUP_OBJ, OTHER
    value = struct.pack("<I", 2) + b"".join(struct.pack("<HHI", tag, perm, 0xFFFFFFFF)
                                           for tag, perm in entries)
    try:
        os.setxattr(folder, "system.posix_acl_default", value)
    except (OSError, AttributeError):
        return False
    return True


def _umask_forbidden():
    raise AssertionError("os.umask called: it sets the umask of the whole process, "
                         "which other threads' new files get meanwhile")


@pytest.mark.parametrize("umask, acl", [(0o022, None), (0o077, None), (0o002, None),
                                        (0o027, None), (0, None), (0o077, 4), (0o022, 6)],
                         ids=lambda v: "no ACL" if v is None else oct(v))
def test_a_new_file_gets_the_mode_a_plain_open_gives(tmp_path, monkeypatch, umask, acl):
    """Both ways of writing (--out, and a --cases folder's files) create the
    file with 0666 and let the kernel apply the umask, or a default ACL
    (where one is, the umask does not count): os.umask is never called."""
    if acl is not None and not _default_acl(tmp_path, acl):
        pytest.skip("no POSIX ACLs on this file system")
    previous = os.umask(umask)
    try:
        expected = _plain_open_mode(tmp_path)
        monkeypatch.setattr(atomic.os, "umask", lambda *a: _umask_forbidden())
        atomic.replace_file(str(tmp_path / "r.bin"), lambda f: f.write(b"x"),
                            atomic.Signals(), {})
        with atomic.Folder(tmp_path) as folder:
            folder.replace("f.bin", lambda f: f.write(b"x"), atomic.Signals())
    finally:
        monkeypatch.undo()
        os.umask(previous)
    if acl is not None:
        assert expected == 0o640 | acl, oct(expected)  # the ACL's, not the umask's
    assert stat.S_IMODE((tmp_path / "r.bin").stat().st_mode) == expected
    assert stat.S_IMODE((tmp_path / "f.bin").stat().st_mode) == expected
    assert tmp_files(tmp_path) == []


def test_an_existing_file_is_never_wider_while_written(tmp_path, monkeypatch):
    """Replacing a 0600 file: the new file is 0600 from its creation, never
    0666 less the umask while the data is written into it."""
    (tmp_path / "r.bin").write_bytes(b"old")
    os.chmod(tmp_path / "r.bin", 0o600)
    seen = []

    def fill(f):
        seen.append(stat.S_IMODE(os.fstat(f.fileno()).st_mode))
        f.write(b"new")
    previous = os.umask(0)
    try:
        atomic.replace_file(str(tmp_path / "r.bin"), fill, atomic.Signals(), {})
    finally:
        os.umask(previous)
    assert seen == [0o600] and stat.S_IMODE((tmp_path / "r.bin").stat().st_mode) == 0o600
