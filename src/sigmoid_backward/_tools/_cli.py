"""What every command line of the package shares: the program's name as the
user typed it, and usage errors in two short lines.

The name comes from ``sys.argv[0]``: the console script's own name
(``sigmoid-backward``, or however the launcher is called), else ``python -m
sigmoid_backward``, which is how ``-m`` runs us (argv[0] is then the path of
``__main__.py``, which the user never typed; so is it for a caller inside
another program, such as a test runner).

argparse answers a usage error with the whole usage block, several lines
that bury the error; a :class:`ArgumentParser` prints the error on one line
and where the usage is, as GNU tools do.
"""
import argparse
import os
import sys

MODULE_NAME = "python -m sigmoid_backward"
SCRIPT_NAME = "sigmoid-backward"


def program(argv0=None):
    """The command as the user typed it; ``argv0`` defaults to ``sys.argv[0]``."""
    if argv0 is None:
        argv0 = sys.argv[0] if sys.argv else ""
    name = os.path.basename(argv0)
    if name.lower().endswith(".exe"):  # pip's launcher on Windows
        name = name[:-4]
    return name if name.startswith(SCRIPT_NAME) else MODULE_NAME


def command(subcommand):
    """``program() SUBCOMMAND``: how a subcommand names itself."""
    return f"{program()} {subcommand}"


def usage_error(prog, message):
    """The two lines of a usage error: the error, and where the usage is."""
    return f"{prog}: error: {message}\nTry '{prog} --help'.\n"


class ArgumentParser(argparse.ArgumentParser):
    """argparse's parser, with usage errors as :func:`usage_error` prints them."""

    def error(self, message):
        self.exit(2, usage_error(self.prog, message))
