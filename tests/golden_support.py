"""What the tests of ``sigmoid_backward.golden`` share: running the
command, listing a folder's files, the one-line error check."""
import subprocess
import sys
from pathlib import Path

import numpy as np

from sigmoid_backward.__main__ import main


def run(capsys, command, *args):
    """``python -m sigmoid_backward COMMAND ARGS`` in-process: (status, out, err)."""
    status = main([command, *map(str, args)])
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def run_command(command, *args, cwd):
    """The same in a new interpreter, as a user runs it."""
    return subprocess.run([sys.executable, "-m", "sigmoid_backward", command,
                           *map(str, args)], cwd=cwd, capture_output=True, text=True,
                          timeout=300)


def files(folder):
    return sorted(p.name for p in Path(folder).iterdir())


def tmp_files(folder):
    return [p.name for p in Path(folder).iterdir() if p.name.endswith(".tmp")]


def npy_args(folder, out):
    """Arguments of golden with a 3-value .npy input of 0.5, whose result is
    :data:`HALF_RESULT`, written to ``out``."""
    np.save(Path(folder) / "g.npy", np.full(3, 0.5))
    g = Path(folder) / "g.npy"
    return ["--grad-output", g, "--output", g, "--out", out]


HALF_RESULT = np.full(3, 0.125)   # 0.5 * (1 - 0.5) * 0.5


def one_line_error(status, err, *words, command="golden", code=1):
    assert status == code, err
    assert err.count("\n") == 1, err
    assert err.startswith(f"python -m sigmoid_backward {command}: error: "), err
    assert "Traceback" not in err
    for word in words:
        assert word in err, (word, err)
