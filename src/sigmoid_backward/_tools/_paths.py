"""Checks that a path argument of the command lines names what its option
expects, before anything opens it, for their one-line errors.

A stat first, because opening is not a safe way to find out: opening a FIFO
to read blocks until a writer comes, ``/dev/zero`` reads forever, and a
directory has a size (4096 bytes, say) that reads as data of that length.
Each error names the option, the user's path, and what was expected.
"""
import os
import stat

_KINDS = ((stat.S_ISREG, "a regular file"), (stat.S_ISDIR, "a directory"),
          (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
          (stat.S_ISFIFO, "a FIFO (named pipe)"), (stat.S_ISSOCK, "a socket"))


def kind(mode):
    """What a file of this ``st_mode`` is, as "a directory"."""
    return next((name for test, name in _KINDS if test(mode)), "not a regular file")


def _stat(path, what, expected, error):
    try:
        return os.stat(path)  # follows symlinks, as opening does
    except FileNotFoundError:  # a dangling symlink too
        raise error(f"{what}: {path} does not exist, expected {expected}") from None
    except OSError as exc:  # a file in the path, a symlink loop, no access
        raise error(f"{what}: cannot read {path}: {exc.strerror}") from None


def check_file(path, what, expected, error):
    """Raise ``error`` (a one-line message) unless ``path`` is an existing
    regular file; ``what`` names the argument, ``expected`` the file it wants
    ("a .npy or raw data file")."""
    mode = _stat(path, what, expected, error).st_mode
    if stat.S_ISDIR(mode):
        raise error(f"{what}: {path} is a directory, expected {expected}")
    if not stat.S_ISREG(mode):
        raise error(f"{what}: {path} is {kind(mode)}, not a regular file, "
                    f"expected {expected}")


def check_directory(path, what, expected, error):
    """Raise ``error`` unless ``path`` is an existing directory."""
    mode = _stat(path, what, expected, error).st_mode
    if not stat.S_ISDIR(mode):
        raise error(f"{what}: {path} is {kind(mode)}, expected {expected}")
