"""docs/golden.md's worked example and Python API run and print what the
page says, in a fresh folder."""
import os
import re
import subprocess
import sys
from pathlib import Path

PAGE = Path(__file__).resolve().parents[2] / "docs" / "golden.md"
MARK = "@@@ command done @@@"


def _section(title):
    return PAGE.read_text().split(f"\n## {title}\n", 1)[1].split("\n## ", 1)[0]


def _commands(block):
    """(command, expected output) pairs of a console block; a here-document
    belongs to its command."""
    pairs, lines = [], block.splitlines()
    while lines:
        line = lines.pop(0)
        assert line.startswith("$ "), line
        command = [line[2:]]
        if line.endswith("<<'EOF'"):
            while command[-1] != "EOF":
                command.append(lines.pop(0))
        output = []
        while lines and not lines[0].startswith("$ "):
            output.append(lines.pop(0))
        pairs.append(("\n".join(command), "".join(f"{o}\n" for o in output)))
    return pairs


def test_the_worked_example_and_the_api_run_as_shown(tmp_path):
    pairs = [p for block in re.findall(r"```console\n(.*?)```", _section("Worked example"),
                                       re.S) for p in _commands(block)]
    # One shell, so that `echo $?` sees the command before; a mark after each
    # command's output, keeping its status.
    script = "".join(f"{command}\n__status=$?; echo '{MARK}'; (exit $__status)\n"
                     for command, _ in pairs)
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    proc = subprocess.run(["bash", "-c", script], cwd=tmp_path, env=env, capture_output=True,
                          text=True, timeout=300)
    assert proc.stderr == ""
    outputs = proc.stdout.split(f"{MARK}\n")[:-1]
    assert len(outputs) == len(pairs)
    for (command, expected), got in zip(pairs, outputs, strict=True):
        assert got == expected, command

    api = _section("Python API")
    code, printed = re.findall(r"```(?:python|text)\n(.*?)```", api, re.S)[:2]
    proc = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True,
                          text=True, timeout=300)
    assert (proc.stderr, proc.stdout) == ("", printed)


def test_the_standards_table_matches_the_code():
    """docs/golden.md's table has one row per standard, in the code's order,
    with its aliases and the source file and commit the code cites."""
    from sigmoid_backward.golden import STANDARDS
    table = _section("Precision standards").split("\n| --- |")[1].split("\n\n")[0]
    rows = [[c.strip() for c in re.split(r"(?<!\\)\|", line)[1:-1]]
            for line in table.strip().splitlines()[1:]]
    assert [re.match(r"`([^`]+)`", r[0]).group(1) for r in rows] == list(STANDARDS)
    for row, standard in zip(rows, STANDARDS.values(), strict=True):
        assert re.findall(r"`([^`]+)`", row[1]) == list(standard.aliases)
        source = row[-1]
        commit = re.search(r"\(([0-9a-f]{8}|\d+\.\d+\.\d+)\)$", standard.source).group(1)
        assert commit in source, (standard.name, source)
        path = re.search(r" ((?:docs|torch_npu|matmul|msprobe)/\S+?)[ ,]", standard.source)
        assert path.group(1).split("/")[-1] in source, (standard.name, source)
