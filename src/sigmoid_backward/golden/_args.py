"""What the golden and compare command lines share: argument types (argparse
reports a bad value as a usage error, exit 2), and printing to a stdout that
the reader may have closed."""
import argparse
import os
import sys

from ._dtype_names import choices, lookup


def dtype_arg(text):
    try:
        return lookup(text)
    except KeyError:
        raise argparse.ArgumentTypeError(
            f"unknown dtype {text!r}; choose one of {choices()}") from None


def shape_arg(text):
    """'2,3,4' -> (2, 3, 4); '' -> () for a 0-d value."""
    parts = [p.strip() for p in text.split(",")] if text.strip() else []
    try:
        shape = tuple(int(p) for p in parts)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"bad shape {text!r}: expected comma-separated integers such as 2,3,4") from None
    if any(n < 0 for n in shape):
        raise argparse.ArgumentTypeError(f"bad shape {text!r}: dimensions must be >= 0")
    return shape


def print_line(line):
    """Print a line; a closed stdout (``| head``) is not an error: the run,
    its files and its reports go on, and the exit status says how it went."""
    try:
        print(line, flush=True)
    except BrokenPipeError:
        # Point stdout at /dev/null, so that neither later prints nor
        # Python's flush at exit raise again.
        try:
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
            os.close(devnull)
        except (OSError, ValueError, AttributeError):  # a stdout with no descriptor
            pass
