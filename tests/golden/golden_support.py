"""What the tests of ``sigmoid_backward.golden`` share: running the two
commands, listing a folder's files, the one-line error check, the case
files under tests/golden/data, and the operator's own golden formula."""
import subprocess
import sys
from pathlib import Path

import numpy as np

from sigmoid_backward import reference
from sigmoid_backward.__main__ import main
from sigmoid_backward.golden import generate

from dtypes_catalogue import BFLOAT16

DATA = Path(__file__).resolve().parent / "data"
ATK = DATA / "atk_sigmoid_backward.json"           # the 204 ATK cases' facts
TTK_KERNEL = DATA / "ttk_kernel_sigmoid_grad.csv"  # the TTK kernel csv's facts
TTK_ACLNN = DATA / "ttk_aclnn_sigmoid_backward.csv"


def run(capsys, command, *args):
    """``python -m sigmoid_backward COMMAND ARGS`` in-process: (status, out, err)."""
    status = main([command, *map(str, args)])
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def run_golden(capsys, *args):
    """``python -m sigmoid_backward golden ARGS`` in-process."""
    return run(capsys, "golden", *args)


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


def one_line_error(status, err, *words, command="golden", code=2):
    assert status == code, err
    assert err.count("\n") == 1, err
    assert err.startswith(f"python -m sigmoid_backward {command}: error: "), err
    assert "Traceback" not in err
    for word in words:
        assert word in err, (word, err)


def usage_error(err, *words, command="golden"):
    """argparse's usage error as the commands print it: the error on one
    line, then where the help is."""
    prog = f"python -m sigmoid_backward {command}"
    first, pointer = err.split("\n", 1)
    assert first.startswith(f"{prog}: error: "), err
    assert pointer == f"Try '{prog} --help'.\n", err
    for word in words:
        assert word in first, (word, err)


def kernel_formula(y, dy, dtype):
    """The operator's golden: ``(1 - y) * dy * y`` as its kernel test
    computes it (in float32 for 16-bit dtypes, then cast back), for real
    dtypes; the conjugated product of the reference for complex ones."""
    if np.dtype(dtype).kind == "c":
        return reference.sigmoid_backward(dy, y).astype(dtype)
    work = np.float32 if np.dtype(dtype) in (np.dtype(np.float16), BFLOAT16) else dtype
    y, dy = y.astype(work), dy.astype(work)
    with np.errstate(all="ignore"):
        return ((1 - y) * dy * y).astype(dtype)


def passing_campaign(folder):
    """golden's TTK aclnn cases in ``folder``/golden, and a device folder,
    ``folder``/device, of copies of their goldens (every case passes):
    (the manifest's path, the device folder, the manifest)."""
    manifest = generate(TTK_ACLNN, folder / "golden")
    device = folder / "device"
    device.mkdir()
    for case in manifest["cases"]:
        (device / case["golden"]).write_bytes((folder / "golden" / case["golden"]).read_bytes())
    return folder / "golden" / "manifest.json", device, manifest
