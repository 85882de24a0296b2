"""The installed type stubs (py.typed, *.pyi): mypy accepts typed use of the
public API and rejects misuse.  Skipped when mypy is not installed."""
import importlib.resources
import os
import re
import subprocess
import sys

import pytest

pytest.importorskip("mypy")

TYPING_FILES = ("py.typed", "__init__.pyi", "reference.pyi")

GOOD = """\
from typing import Any

import numpy as np
import numpy.typing as npt

import sigmoid_backward
from sigmoid_backward import (OPENMP_ENABLED, __version__, get_num_threads, reference,
                              set_num_threads, sigmoid_backward as sb)

g: npt.NDArray[np.float32] = np.ones(3, np.float32)
out: npt.NDArray[np.float32] = np.empty(3, np.float32)
same: npt.NDArray[np.float32] = sb(g, g, out=out)
same_tuple: npt.NDArray[np.float32] = sb(g, 0.5, (out,))
anything: Any = sb([1.0, 2.0], 0.5, dtype="float32", num_threads=2)
from_scalars: Any = sigmoid_backward.sigmoid_backward(1.0, 0.5, dtype=np.float64)
ref: npt.NDArray[Any] = reference.sigmoid_backward(g, [0.5, 0.25, 1.0], dtype=np.float32)
threads: int = get_num_threads()
set_num_threads(2)
set_num_threads(None)
has_openmp: bool = OPENMP_ENABLED
version: str = __version__
names: list[str] = sigmoid_backward.__all__


class Producer:  # any DLPack producer is accepted
    def __dlpack__(self, *, stream: int | None = None) -> object:
        return object()

    def __dlpack_device__(self) -> tuple[int, int]:
        return (1, 0)


from_dlpack: Any = sb(Producer(), g)
"""

# Each line must be reported, and nothing else.
BAD = {
    "sb(g)": "Too few arguments|No overload variant",
    "sb(g, g, num_threads='2')": "No overload variant",
    "sb(g, g, out=[0.0])": "No overload variant",
    "sb(grad_output=g, output=g)": "No overload variant|Unexpected keyword",
    "wrong: str = get_num_threads()": "Incompatible types in assignment",
    "set_num_threads('4')": "incompatible type",
    "flag: int = sigmoid_backward.OPENMP_ENABLED + ''": "Unsupported operand",
    "reference.sigmoid_backward(g, g, out=g)": "Unexpected keyword argument",
    "sigmoid_backward.does_not_exist": "has no attribute",
}


@pytest.fixture(scope="module")
def mypy_run(tmp_path_factory):
    """Run mypy once on both snippets against the installed typing files."""
    root = tmp_path_factory.mktemp("typing")
    package = root / "stubs" / "sigmoid_backward"
    package.mkdir(parents=True)
    installed = importlib.resources.files("sigmoid_backward")
    for name in TYPING_FILES:  # what the build installed, not the source tree
        assert (installed / name).is_file(), f"{name} is not installed (meson.build)"
        (package / name).write_bytes((installed / name).read_bytes())
    (root / "good.py").write_text(GOOD)
    bad = GOOD.split("\n\nclass Producer")[0] + "\n" + "\n".join(BAD) + "\n"
    (root / "bad.py").write_text(bad)
    env = dict(os.environ, MYPYPATH=str(root / "stubs"))
    proc = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--no-incremental",
         "--cache-dir", os.devnull, "--hide-error-context", "--no-error-summary",
         "--show-error-codes", "good.py", "bad.py"],
        cwd=root, env=env, capture_output=True, text=True, timeout=300)
    lines = [ln for ln in proc.stdout.splitlines() if ": error:" in ln]
    return root, bad.splitlines(), lines, proc


def test_typed_use_is_clean(mypy_run):
    _, _, lines, proc = mypy_run
    good = [ln for ln in lines if not ln.startswith("bad.py")]
    assert good == [], proc.stdout + proc.stderr


def test_misuse_is_reported_line_by_line(mypy_run):
    _, bad_lines, lines, proc = mypy_run
    errors = {}
    for ln in lines:
        if ln.startswith("bad.py:"):
            number = int(ln.split(":")[1])
            errors.setdefault(bad_lines[number - 1], []).append(ln)
    assert set(errors) == set(BAD), proc.stdout
    for code, pattern in BAD.items():
        assert any(re.search(pattern, ln) for ln in errors[code]), (code, errors[code])


def test_stubs_cover_the_public_api():
    import sigmoid_backward

    stub = (importlib.resources.files("sigmoid_backward") / "__init__.pyi").read_text()
    for name in sigmoid_backward.__all__:
        assert re.search(rf"^(def |from \. import ){name}\b|^{name}:|\b{name} as {name}\b",
                         stub, re.M), f"{name} missing from __init__.pyi"
    # The stub's __all__ is the module's.
    listed = re.search(r"__all__ = \[(.*?)\]", stub, re.S).group(1)
    assert re.findall(r'"(\w+)"', listed) == sigmoid_backward.__all__
