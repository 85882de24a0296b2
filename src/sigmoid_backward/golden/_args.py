"""Argument types the golden and compare command lines share: argparse
reports a bad value as a usage error (exit 2)."""
import argparse

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
