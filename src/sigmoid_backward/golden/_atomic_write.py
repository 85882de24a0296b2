"""Replace a file all or nothing: write a temporary file beside it, then
rename it over the target.  The result files of ``python -m sigmoid_backward
golden`` and ``compare`` are written this way.

What a replacement keeps and refuses:

- the target a symlink: the file it points to is replaced (created, if the
  link dangles); the link stays a link.
- the target not a regular file (a FIFO, a device such as ``/dev/null``, a
  directory, a socket): refused.  Such a file cannot be replaced without
  destroying it (as root, replacing ``/dev/null`` breaks the system), and a
  stream cannot take a file atomically; writing into a FIFO would also block
  until a reader comes.
- an existing target keeps its permission bits, and its owner and group
  where this process may set them (root, or a group it belongs to); a new
  one gets what a plain ``open()`` gives: ``0666`` less the umask (or as
  the folder's default ACL says).  A target this process may not write is
  refused, as the shell's ``>`` refuses it.
- the target is a new file (a new inode), as with ``mv``: another hard link
  to the old file keeps the old contents.  Writing in place would break the
  all-or-nothing promise, and would also change every other name of a file
  that a build cache may have hard-linked.
- SIGINT, SIGTERM or SIGHUP during the write remove the temporary file
  (:class:`Signals` turns them into exceptions; the command then reports
  them).
"""
import contextlib
import errno
import os
import signal
import stat
import threading

from .._tools._paths import kind


class WriteError(Exception):
    """The target cannot be written: reported in one line."""


# What --out and --json may name: refusals end with it.
EXPECTED = "a regular file or a new name"


def _reason(exc):
    """Why an OS call failed, without the file names it carries: those are
    the temporary file's here, a name the user never gave.  (An OSError
    has a ``filename`` only if it also has a ``strerror``.)"""
    return exc.strerror or str(exc) or type(exc).__name__


def check_target(path, label="--out"):
    """The file that writing ``path`` replaces, and its stat (None if new).

    A symlink is followed to the file it points to, which is replaced and
    keeps being pointed to; anything but a regular file is refused.
    ``label`` (the option that named the file) starts every error message."""
    if not path or path.endswith(("/", os.sep)):
        raise WriteError(f"{label}: {path!r} names no file, expected {EXPECTED}")
    try:
        st = os.stat(path)  # follows symlinks, to the end of a chain
    except FileNotFoundError:
        st = None  # a new file, or a dangling symlink whose target is created
    except OSError as exc:  # a symlink loop, a file in the path, no access
        raise WriteError(f"{label}: cannot write {path}: {_reason(exc)}") from None
    if st is not None and stat.S_ISDIR(st.st_mode):
        raise WriteError(f"{label}: {path} is a directory, expected {EXPECTED}")
    if st is not None and not stat.S_ISREG(st.st_mode):
        raise WriteError(f"{label}: {path} is {kind(st.st_mode)}, not a regular file, "
                         f"expected {EXPECTED}")
    if st is not None and not os.access(path, os.W_OK):
        raise WriteError(f"{label}: {path} is not writable (permission denied)")
    target = os.path.realpath(path)
    folder = os.path.dirname(target)
    if st is None and not os.path.isdir(folder):
        raise WriteError(f"{label}: cannot write {path}: its directory "
                         f"{folder} does not exist")
    # The new file is made beside the target, then renamed over it: that
    # needs the folder writable, even to replace a file that is.
    if not os.access(folder, os.W_OK | os.X_OK):
        raise WriteError(f"{label}: cannot write {path}: its directory {folder} is not "
                         f"writable (permission denied)")
    return target, st


class Signals:
    """SIGINT, SIGTERM and SIGHUP as exceptions, held back in the few steps
    where an exception would lose track of the temporary file.

    SIGINT raises KeyboardInterrupt as usual; SIGTERM and SIGHUP raise
    :class:`Terminated`.  A signal that is ignored (``nohup``) or handled by
    someone else stays so.  Only the main thread can take signals; elsewhere
    this does nothing."""

    def __init__(self):
        self.held, self.pending, self.previous = 0, None, {}

    def __enter__(self):
        if threading.current_thread() is not threading.main_thread():
            return self
        for name in ("SIGINT", "SIGTERM", "SIGHUP"):
            sig = getattr(signal, name, None)
            if sig is None:
                continue
            current = signal.getsignal(sig)
            expected = signal.default_int_handler if name == "SIGINT" else signal.SIG_DFL
            if current is expected:
                self.previous[sig] = signal.signal(sig, self._handle)
        return self

    def __exit__(self, *exc):
        for sig, handler in self.previous.items():
            signal.signal(sig, handler)
        self.previous = {}

    def _handle(self, signum, frame):
        if self.held:
            self.pending = self.pending or signum
            return
        self._raise(signum)

    @staticmethod
    def _raise(signum):
        if signum == signal.SIGINT:
            raise KeyboardInterrupt
        raise Terminated(signum)

    @contextlib.contextmanager
    def hold(self):
        """Hold signals back inside the block; raise the first one after."""
        self.held += 1
        try:
            yield
        finally:
            self.held -= 1
            if not self.held and self.pending is not None:
                signum, self.pending = self.pending, None
                self._raise(signum)  # takes precedence over an error in the block


class Terminated(BaseException):
    """SIGTERM or SIGHUP arrived (a BaseException, like KeyboardInterrupt,
    so that nothing on the way treats it as an ordinary error)."""

    def __init__(self, signum):
        super().__init__(signum)
        self.signum = signum


def _create_temporary(name, mode, place):
    """A new temporary file for ``name``: (its descriptor, its name), under
    a random name that ``place`` makes a path and keyword arguments of
    (``dir_fd``), created with ``O_EXCL | O_NOFOLLOW``.

    ``mode``: 0o666 for a new target, and the kernel takes off what it takes
    off any new file, the umask or a default ACL's limits, so the file gets
    exactly what a plain ``open()`` gives.  Reading the umask instead
    (``os.umask`` sets it to read it: for the whole process, racing other
    threads' files) would also miss a default ACL.  0o600 for a target that
    exists, whose mode it gets once written (no wider meanwhile)."""
    flags = (os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
             | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0))
    for _ in range(100):
        candidate = f".{name}.{os.urandom(6).hex()}.tmp"
        path, at = place(candidate)
        try:
            return os.open(path, flags, mode, **at), candidate
        except FileExistsError:
            continue
    raise FileExistsError(errno.EEXIST, "no free temporary name")


def _keep_owner_and_mode(fd, tmp, st):
    """Give the new file (open as ``fd``, named ``tmp``) the owner, group and
    permission bits of the file it replaces (``st``), as far as this process
    may.  A new file (``st`` None) keeps the mode it was created with
    (_create_temporary)."""
    if st is None:
        return
    mode = stat.S_IMODE(st.st_mode)
    owner_kept = not hasattr(os, "fchown")
    if hasattr(os, "fchown"):
        try:  # root may; others only their own uid and groups they are in
            os.fchown(fd, st.st_uid, st.st_gid)
            owner_kept = True
        except OSError:
            try:
                os.fchown(fd, -1, st.st_gid)
            except OSError:
                pass
    if not owner_kept:  # no set-id bits on a file of another owner
        mode &= ~(stat.S_ISUID | stat.S_ISGID)
    # After the chown, which clears the set-id bits.
    if hasattr(os, "fchmod"):
        os.fchmod(fd, mode)
    else:  # Windows: chmod by name; only the read-only bit exists there
        os.chmod(tmp, mode)


def replace_file(path, fill, signals, progress, label="--out"):
    """Write a new ``path``: ``fill(f)`` writes the contents to a temporary
    binary file beside the target of ``path``, which is then flushed to disk
    and renamed over the target (see the module's docstring for what is
    kept).  ``progress["written"]`` becomes True once the target is
    replaced; ``signals`` is the :class:`Signals` in force."""
    target, st = check_target(path, label)
    folder = os.path.dirname(target)
    tmp = f = None
    progress["writing"] = True  # from here on, a failure is one of writing
    try:
        with signals.hold():  # no signal between creating the file and knowing its name
            try:
                fd, tmp = _create_temporary(os.path.basename(target),
                                            0o666 if st is None else 0o600,
                                            lambda name: (os.path.join(folder, name), {}))
            except OSError as exc:
                raise WriteError(f"{label}: cannot write {path}: {_reason(exc)}") from None
            tmp = os.path.join(folder, tmp)
            f = os.fdopen(fd, "wb")  # closes fd whatever happens next
        with f:
            fill(f)
            f.flush()
            os.fsync(f.fileno())
            _keep_owner_and_mode(f.fileno(), tmp, st)
        # The target may have changed while we computed and wrote: never
        # replace what has become a symlink, FIFO or device meanwhile.
        try:
            now = os.lstat(target)
        except FileNotFoundError:
            now = None
        if now is not None and not stat.S_ISREG(now.st_mode):
            raise WriteError(f"{label}: {path} changed while the result was written; "
                             f"left as it is") from None
        with signals.hold():  # replaced and recorded as such, or neither
            os.replace(tmp, target)
            tmp = None
            progress["written"] = True
    except OSError as exc:
        raise WriteError(f"{label}: cannot write {path}: {_reason(exc)}") from None
    finally:  # any failure, Ctrl-C, SIGTERM: never leave the temporary behind
        if tmp is not None:
            if f is not None:  # closed already, unless a signal came right after fdopen
                with contextlib.suppress(OSError):
                    f.close()
            with contextlib.suppress(OSError):
                os.unlink(tmp)


class Folder:
    """An output folder, opened once, whose files are replaced by name:

    - a name is one plain file name (no separator, not ``.`` or ``..``);
    - nothing is written through a symlink: a link planted in the folder
      (``out/c_golden.bin -> ../victim``) is refused, not followed, and the
      temporary file is created with ``O_EXCL | O_NOFOLLOW``;
    - where the platform has ``openat`` (``os.supports_dir_fd``), every call
      is relative to the folder's open descriptor, so that renaming the
      folder or swapping a parent for a link meanwhile cannot redirect a
      write elsewhere;
    - :meth:`lock` takes an exclusive ``flock`` on the folder, so that two
      runs never interleave their files in it (two ``--seed``\\ s would leave
      a golden that matches neither run's inputs).

    Use it as a context manager: the descriptor (and the lock) are released
    on exit."""

    def __init__(self, path, label="--out-dir"):
        self.path, self.label, self.fd = os.fspath(path), label, None
        # os.replace takes dir_fd where os.rename does (it is listed as rename).
        at = {os.open, os.stat, os.unlink, os.rename} <= os.supports_dir_fd
        if at and hasattr(os, "O_DIRECTORY"):
            try:
                self.fd = os.open(self.path, os.O_RDONLY | os.O_DIRECTORY
                                  | getattr(os, "O_CLOEXEC", 0))
            except OSError as exc:
                raise WriteError(f"{label}: cannot open {self.path}: {_reason(exc)}") from None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def close(self):
        if self.fd is not None:
            os.close(self.fd)  # releases the flock too
            self.fd = None

    def lock(self):
        """Hold the folder for this run alone, or raise WriteError at once
        (never wait: another run may take hours).  A no-op where ``flock``
        or ``openat`` is missing (Windows)."""
        try:
            import fcntl
        except ImportError:
            return
        if self.fd is None:
            return
        try:
            fcntl.flock(self.fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as exc:
            raise WriteError(f"{self.label}: {self.path} is being written by another run "
                             f"(locked: {_reason(exc)})") from None

    def _at(self, name):
        """(path, keyword arguments) that name ``name`` in the folder."""
        if self.fd is not None:
            return name, {"dir_fd": self.fd}
        return os.path.join(self.path, name), {}

    def _shown(self, name):
        return os.path.join(self.path, name)

    def replace(self, name, fill, signals):
        """Write the file ``name`` of the folder all or nothing, as
        :func:`replace_file` does, but never through a symlink."""
        label, shown = self.label, self._shown(name)
        if not name or name in (".", "..") or "/" in name or os.sep in name \
                or (os.altsep and os.altsep in name):
            raise WriteError(f"{label}: {name!r} is not a plain file name")
        path, at = self._at(name)
        try:
            st = os.stat(path, follow_symlinks=False, **at)
        except FileNotFoundError:
            st = None
        except OSError as exc:
            raise WriteError(f"{label}: cannot write {shown}: {_reason(exc)}") from None
        if st is not None and not stat.S_ISREG(st.st_mode):
            what = "a symlink" if stat.S_ISLNK(st.st_mode) else kind(st.st_mode)
            raise WriteError(f"{label}: {shown} is {what}, refused: files in the folder are "
                             f"replaced only when regular, never written through a link")
        tmp = f = None
        try:
            with signals.hold():  # no signal between creating the file and knowing its name
                fd, tmp = _create_temporary(name, 0o666 if st is None else 0o600, self._at)
                f = os.fdopen(fd, "wb")
            with f:
                fill(f)
                f.flush()
                os.fsync(f.fileno())
                _keep_owner_and_mode(f.fileno(), self._at(tmp)[0], st)
            try:
                now = os.stat(path, follow_symlinks=False, **at)
            except FileNotFoundError:
                now = None
            if now is not None and not stat.S_ISREG(now.st_mode):
                raise WriteError(f"{label}: {shown} changed while it was written; left as "
                                 f"it is")
            with signals.hold():
                if self.fd is not None:
                    os.replace(tmp, name, src_dir_fd=self.fd, dst_dir_fd=self.fd)
                else:
                    os.replace(self._at(tmp)[0], path)
                tmp = None
        except OSError as exc:
            raise WriteError(f"{label}: cannot write {shown}: {_reason(exc)}") from None
        finally:
            if tmp is not None:
                if f is not None:
                    with contextlib.suppress(OSError):
                        f.close()
                with contextlib.suppress(OSError):
                    os.unlink(self._at(tmp)[0], **at)
