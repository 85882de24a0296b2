"""``python -m sigmoid_backward``: the main job runs and prints what it says."""
import subprocess
import sys


def test_main_job_prints_document_example_and_timing():
    out = subprocess.run([sys.executable, "-m", "sigmoid_backward"], capture_output=True,
                         text=True, check=True, timeout=300).stdout
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
