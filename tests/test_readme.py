"""Every snippet of README.md runs as written: each ```python block as a
script of its own (the Dask cluster one re-imports its script, as scripts
do), each ```console block command by command, its output compared line by
line.  A snippet that needs an optional library skips when it is missing (torch
and jax: fails, under SIGMOID_BACKWARD_REQUIRE_FRAMEWORKS=1)."""
import importlib.util
import os
import pathlib
import re
import shlex
import subprocess
import sys

import pytest

from helpers import REQUIRE_FRAMEWORKS, installed_stubs

README = (pathlib.Path(__file__).resolve().parent.parent / "README.md").read_text()
PYTHON = re.findall(r"^```python\n(.*?)^```", README, re.S | re.M)
CONSOLE = re.findall(r"^```console\n(.*?)^```", README, re.S | re.M)
OPTIONAL = ("torch", "jax", "xarray", "pandas", "dask", "distributed")


def _missing(code):
    imported = re.findall(r"^\s*(?:import|from)\s+(\w+)", code, re.M)
    return [m for m in imported if m in OPTIONAL and importlib.util.find_spec(m) is None]


def test_the_readme_has_snippets():
    assert len(PYTHON) >= 5 and len(CONSOLE) >= 1


@pytest.mark.parametrize("code", PYTHON, ids=[f"python-{i}" for i in range(len(PYTHON))])
def test_python_snippet_runs(code, tmp_path):
    missing = _missing(code)
    if missing and REQUIRE_FRAMEWORKS and {"torch", "jax"} & set(missing):
        pytest.fail(f"needs {', '.join(missing)} (SIGMOID_BACKWARD_REQUIRE_FRAMEWORKS=1)")
    if missing:
        pytest.skip(f"needs {', '.join(missing)}")
    script = tmp_path / "snippet.py"
    script.write_text(code)
    proc = subprocess.run([sys.executable, str(script)], cwd=tmp_path, capture_output=True,
                          text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip(), "a snippet prints what it shows"


@pytest.mark.parametrize("session", CONSOLE, ids=[f"console-{i}" for i in range(len(CONSOLE))])
def test_console_snippet_prints_what_it_shows(session, tmp_path):
    commands = []
    for line in session.splitlines():
        if line.startswith("$ "):
            commands.append((line[2:], []))
        else:
            commands[-1][1].append(line)
    for command, expected in commands:
        argv = shlex.split(command)
        if argv[0] == "python":
            argv[0] = sys.executable
        proc = subprocess.run(argv, cwd=tmp_path, capture_output=True, text=True, timeout=300)
        assert (proc.stdout + proc.stderr).splitlines() == expected, command


def test_python_snippets_type_check(tmp_path):
    """mypy --check-untyped-defs over every python snippet, against the
    installed stubs; third-party libraries that ship no types (or are not
    installed) are not ours to check."""
    pytest.importorskip("mypy")
    stubs = installed_stubs(tmp_path)
    names = []
    for i, code in enumerate(PYTHON):
        (tmp_path / f"snippet{i}.py").write_text(code)
        names.append(f"snippet{i}.py")
    proc = subprocess.run(
        [sys.executable, "-m", "mypy", "--check-untyped-defs", "--ignore-missing-imports",
         "--no-incremental", "--cache-dir", os.devnull, *names],
        cwd=tmp_path, env=dict(os.environ, MYPYPATH=str(stubs)), capture_output=True,
        text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
