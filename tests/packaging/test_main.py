"""``python -m sigmoid_backward`` and the console script ``sigmoid-backward``:
the main job runs and prints what it says, its timing line, the usage lists
the subcommands, ``-V``/``--version`` prints the version, an unknown argument
is a two-line usage error, and every message names the program as it was
run."""
import io
import re
import subprocess
import sys
import sysconfig
from pathlib import Path

import numpy as np
import pytest

import sigmoid_backward
from sigmoid_backward import __main__ as cli
from sigmoid_backward._tools import _cli, _show_config


def test_main_job_prints_document_example_and_timing():
    out = subprocess.run([sys.executable, "-m", "sigmoid_backward"], capture_output=True,
                         text=True, check=True, timeout=300).stdout
    openmp, isa = out.splitlines()[:2]
    # The thread count at the end is the child's default (no set_num_threads there).
    assert openmp.rsplit(": ", 1)[0] == _show_config.openmp_line().rsplit(": ", 1)[0]
    assert isa == _show_config.isa_line()
    assert "grad_input  = [[0.0, -2.0], [-6.0, -12.0]]" in out
    timing = [line for line in out.splitlines() if line.startswith("float32, n=1,000,000")]
    assert len(timing) == 1 and TIMING.fullmatch(timing[0]), timing


# The main job's timing line, whatever the machine measured.
TIMING = re.compile(r"float32, n=1,000,000, \d+ threads?: sigmoid_backward [\d.]+ [mun]?s, "
                    r"NumPy g \* \(1 - y\) \* y [\d.]+ [mun]?s: [\d.]+[×x] "
                    r"(faster|NumPy's time) \(middle half of \d+ runs: [\d.]+[×x] to "
                    r"[\d.]+[×x]\)(; too noisy to trust: .*)?")


# --- the timing line, from crafted timings -----------------------------------

def test_timing_line_when_ours_is_faster():
    ours = [1e-3] * 7
    numpy = [2.4e-3, 2.5e-3, 2.5e-3, 2.5e-3, 2.5e-3, 2.5e-3, 2.6e-3]
    assert cli.timing_line(1_000_000, ours, numpy, 2) == (
        "float32, n=1,000,000, 2 threads: sigmoid_backward 1 ms, NumPy g * (1 - y) * y "
        "2.5 ms: 2.5× faster (middle half of 7 runs: 2.5× to 2.5×)")


def test_timing_line_when_ours_is_slower_says_how_many_times_numpys_time():
    """Not "0.1x faster": ours / NumPy's, as a multiple of NumPy's time."""
    ours = [10e-3, 9.5e-3, 10.5e-3, 10e-3]
    numpy = [1e-3] * 4
    line = cli.timing_line(1_000, ours, numpy, 1)
    assert line.startswith("float32, n=1,000, 1 thread: sigmoid_backward 10 ms, "
                           "NumPy g * (1 - y) * y 1 ms: 10× NumPy's time (middle half of "
                           "4 runs: 9.88× to 10.1×)"), line
    assert "faster" not in line and "noisy" not in line
    # Equal times are not "faster": 1× NumPy's time.
    assert "1× NumPy's time" in cli.timing_line(10, [1e-3] * 3, [1e-3] * 3, 1)


def test_timing_line_ratios_are_of_the_same_round():
    """Each round's NumPy time over ours in the same round: a busy round
    slows both, and its ratio stays."""
    ours = [1e-3, 4e-3, 1e-3, 4e-3, 1e-3]
    numpy = [3e-3, 12e-3, 3e-3, 12e-3, 3e-3]
    assert "3× faster (middle half of 5 runs: 3× to 3×)" in cli.timing_line(5, ours, numpy, 1)


def test_timing_line_says_when_the_runs_are_too_noisy_to_trust():
    numpy = [1e-3] * 8
    steady = [1 / r * 1e-3 for r in (1.9, 1.95, 2.0, 2.0, 2.0, 2.0, 2.05, 2.1)]
    assert "noisy" not in cli.timing_line(8, steady, numpy, 2)
    wide = [1 / r * 1e-3 for r in (1.0, 1.5, 1.6, 2.0, 2.0, 2.4, 2.5, 3.0)]
    low, mid, high = np.percentile([1.0, 1.5, 1.6, 2.0, 2.0, 2.4, 2.5, 3.0], [25, 50, 75])
    assert (high - low) / mid > cli.TOO_NOISY
    line = cli.timing_line(8, wide, numpy, 2)
    assert line.endswith(f"; too noisy to trust: the middle half spans "
                         f"{(high - low) / mid:.0%} of the median (over "
                         f"{cli.TOO_NOISY:.0%}), rerun on a quiet machine"), line


def test_timing_line_sign_where_the_console_cannot_print_it():
    assert cli._times_sign(io.TextIOWrapper(io.BytesIO(), encoding="ascii")) == "x"
    assert cli._times_sign(io.TextIOWrapper(io.BytesIO(), encoding="utf-8")) == "×"
    line = cli.timing_line(10, [1e-3] * 3, [2e-3] * 3, 1, times="x")
    assert "2x faster (middle half of 3 runs: 2x to 2x)" in line and "×" not in line


# --- arguments ------------------------------------------------------------------

def _module(*args):
    return subprocess.run([sys.executable, "-m", "sigmoid_backward", *args],
                          capture_output=True, text=True, timeout=300)


@pytest.mark.parametrize("args, message", [
    (["--nope"], "unrecognized arguments: --nope"),
    (["-V", "--nope", "x"], "unrecognized arguments: --nope x"),
    (["nope"], "unknown subcommand 'nope' (choose from bench, golden, compare)"),
])
def test_unknown_arguments_are_one_line_and_a_pointer_to_the_help(args, message):
    proc = _module(*args)
    assert (proc.returncode, proc.stdout) == (2, "")
    assert proc.stderr == (f"python -m sigmoid_backward: error: {message}\n"
                           f"Try 'python -m sigmoid_backward --help'.\n")


@pytest.mark.parametrize("subcommand", ["bench", "golden", "compare"])
def test_a_subcommands_unknown_option_is_one_line_and_a_pointer(subcommand, capsys):
    with pytest.raises(SystemExit) as exc:
        cli.main([subcommand, "--nope"])
    assert exc.value.code == 2
    prog = f"python -m sigmoid_backward {subcommand}"
    assert capsys.readouterr().err == (f"{prog}: error: unrecognized arguments: --nope\n"
                                       f"Try '{prog} --help'.\n")


def test_help_exits_0_and_names_the_subcommands():
    for flag in ("-h", "--help"):
        proc = subprocess.run([sys.executable, "-m", "sigmoid_backward", flag],
                              capture_output=True, text=True, timeout=300)
        assert (proc.returncode, proc.stderr) == (0, "")
        assert proc.stdout.startswith("usage: python -m sigmoid_backward [-h] [-V] ")
        assert "bench" in proc.stdout and "golden" in proc.stdout
        assert "  -V, --version  print the version and exit\n" in proc.stdout


def test_usage_lists_every_subcommand_with_its_summary(monkeypatch):
    """Whatever SUBCOMMANDS holds, each with its module docstring's first
    sentence (read without importing it)."""
    monkeypatch.setitem(cli.SUBCOMMANDS, "extra", "._kernel._threads")
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


@pytest.mark.parametrize("flag", ["-V", "--version"])
@pytest.mark.parametrize("how", ["python -m", "console script"])
def test_version(how, flag):
    argv = ([sys.executable, "-m", "sigmoid_backward"] if how == "python -m" else [_script()])
    proc = subprocess.run([*argv, flag], capture_output=True, text=True, timeout=300)
    assert (proc.returncode, proc.stdout, proc.stderr) == (
        0, f"sigmoid-backward {sigmoid_backward.__version__}\n", "")


@pytest.mark.parametrize("how, prog", [("python -m", "python -m sigmoid_backward"),
                                       ("console script", "sigmoid-backward")])
def test_messages_name_the_program_as_it_was_run(tmp_path, how, prog):
    """Usage, help and errors, at the top and in each subcommand."""
    argv = ([sys.executable, "-m", "sigmoid_backward"] if how == "python -m" else [_script()])

    def run(*args):
        return subprocess.run([*argv, *args], cwd=tmp_path, capture_output=True, text=True,
                              timeout=300)
    proc = run("--help")
    assert proc.returncode == 0 and proc.stdout.startswith(f"usage: {prog} [-h] [-V]")
    proc = run("--nope")
    assert (proc.returncode, proc.stderr) == (
        2, f"{prog}: error: unrecognized arguments: --nope\nTry '{prog} --help'.\n")
    for sub in ("bench", "golden", "compare"):
        proc = run(sub, "--help")
        assert proc.returncode == 0 and proc.stdout.startswith(f"usage: {prog} {sub} [-h]")
        proc = run(sub, "--nope")
        assert (proc.returncode, proc.stderr) == (
            2, f"{prog} {sub}: error: unrecognized arguments: --nope\n"
               f"Try '{prog} {sub} --help'.\n")
    proc = run("golden", "--grad-output", "nope.npy", "--output", "nope.npy", "--out", "r.npy")
    assert (proc.returncode, proc.stderr) == (  # found before anything is written: 2
        2, f"{prog} golden: error: --grad-output: nope.npy does not exist, expected a .npy "
           f"or raw data file\n")
    proc = run("compare", "nope.npy", "nope.npy")
    assert proc.returncode == 2 and proc.stderr.startswith(f"{prog} compare: error: ")


@pytest.mark.parametrize("argv0, prog", [
    ("/venv/bin/sigmoid-backward", "sigmoid-backward"),
    ("sigmoid-backward", "sigmoid-backward"),
    ("/venv/Scripts/sigmoid-backward.exe", "sigmoid-backward"),   # pip's Windows launcher
    ("/venv/lib/python3.12/site-packages/sigmoid_backward/__main__.py",
     "python -m sigmoid_backward"),
    ("-c", "python -m sigmoid_backward"),
    ("", "python -m sigmoid_backward"),
])
def test_program_name_from_argv0(argv0, prog):
    assert _cli.program(argv0) == prog
