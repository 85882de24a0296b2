"""``python -m sigmoid_backward`` and the console script ``sigmoid-backward``:
the main job runs and prints what it says, the usage lists the subcommands,
and ``--version`` prints the version."""
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

import sigmoid_backward
from sigmoid_backward import __main__ as cli
from sigmoid_backward import _show_config


def test_main_job_prints_document_example_and_timing():
    out = subprocess.run([sys.executable, "-m", "sigmoid_backward"], capture_output=True,
                         text=True, check=True, timeout=300).stdout
    openmp, isa = out.splitlines()[:2]
    # The thread count at the end is the child's default (no set_num_threads there).
    assert openmp.rsplit(": ", 1)[0] == _show_config.openmp_line().rsplit(": ", 1)[0]
    assert isa == _show_config.isa_line()
    assert "grad_input  = [[0.0, -2.0], [-6.0, -12.0]]" in out
    timing = [line for line in out.splitlines() if line.startswith("float32, n=1,000,000")]
    assert len(timing) == 1 and "NumPy g * (1 - y) * y" in timing[0] and "x faster" in timing[0]


def test_unknown_arguments_are_an_error():
    proc = subprocess.run([sys.executable, "-m", "sigmoid_backward", "--nope"],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 2 and "usage" in proc.stderr


def test_help_exits_0_and_names_the_subcommands():
    for flag in ("-h", "--help"):
        proc = subprocess.run([sys.executable, "-m", "sigmoid_backward", flag],
                              capture_output=True, text=True, timeout=300)
        assert (proc.returncode, proc.stderr) == (0, "")
        assert proc.stdout.startswith("usage: python -m sigmoid_backward")
        assert "bench" in proc.stdout and "golden" in proc.stdout


def test_usage_lists_every_subcommand_with_its_summary(monkeypatch):
    """Whatever SUBCOMMANDS holds, each with its module docstring's first
    sentence (read without importing it)."""
    monkeypatch.setitem(cli.SUBCOMMANDS, "extra", "._threads")
    text = cli.usage()
    assert "[{bench,golden,compare,extra} ...]" in text.splitlines()[0]
    assert "  bench     sigmoid_backward side by side with its peers" in text
    assert "  golden    golden data files for kernel tests\n" in text
    assert "  extra     Thread-count policy: how many OpenMP threads a call may use\n" in text


def _script():
    """The console script pip installed beside this interpreter."""
    folder = Path(sysconfig.get_path("scripts"))
    found = [p for p in (folder / "sigmoid-backward", folder / "sigmoid-backward.exe")
             if p.exists()]
    assert found, f"no sigmoid-backward in {folder}: is the package installed?"
    return str(found[0])


@pytest.mark.parametrize("how", ["python -m", "console script"])
def test_version(how):
    argv = ([sys.executable, "-m", "sigmoid_backward"] if how == "python -m" else [_script()])
    proc = subprocess.run([*argv, "--version"], capture_output=True, text=True, timeout=300)
    assert (proc.returncode, proc.stdout, proc.stderr) == (
        0, f"sigmoid-backward {sigmoid_backward.__version__}\n", "")


def test_console_script_names_itself_and_runs_subcommands(tmp_path):
    proc = subprocess.run([_script(), "--help"], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0 and proc.stdout.startswith("usage: sigmoid-backward [-h]")
    proc = subprocess.run([_script(), "golden", "--help"], capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 0 and "--grad-output" in proc.stdout
    proc = subprocess.run([_script(), "--nope"], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 2
    assert proc.stderr.endswith("error: unknown arguments: --nope\n")
