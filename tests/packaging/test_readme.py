"""Every example of README.md and docs/*.md runs as written.

The language tag of a fenced block says whether it is an example:

- ```python: a script of its own, run in a fresh folder (the Dask cluster
  example re-imports its script, as scripts do), which must print what it
  shows; mypy checks every one;
- ```console: the commands after "$ ", run one after another in one bash
  (so here-documents, `&&`, globs and `echo $?` work), each followed by its
  output, stdout then stderr, compared line by line;
- ```sh (set-up commands and recipes: `pip install .`, CI's, asv's),
  ```text (synopses, output, formulas), ```c and ```cython (compiled by
  test_cython_api.py): not run.

A block without a tag, or with another, fails: every block says which it
is.  A page's console blocks make the files its later examples read
(golden.md's Python API reads its worked example's), so every example runs
in a copy of the folder the page's earlier console blocks made (their
output is checked by their own tests).  An example that needs an optional library
skips when it is missing (torch and jax: fails, under
SIGMOID_BACKWARD_REQUIRE_FRAMEWORKS=1)."""
import importlib.util
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path
from typing import NamedTuple

import pytest

from helpers import REQUIRE_FRAMEWORKS, installed_stubs

ROOT = Path(__file__).resolve().parents[2]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
RUN = ("python", "console")
NOT_RUN = ("sh", "text", "c", "cython")
OPTIONAL = ("torch", "jax", "xarray", "pandas", "dask", "distributed")
MARK = "@@@ command done @@@"


class Block(NamedTuple):
    page: str       # relative to the repository: README.md, docs/golden.md
    language: str
    line: int       # of the opening fence
    code: str


def _blocks(path):
    """The fenced blocks of a Markdown page, in order; an indented fence (in
    a list item) loses its indentation."""
    page, blocks, opened = str(path.relative_to(ROOT)), [], None
    for number, line in enumerate(path.read_text().splitlines(), 1):
        if opened is None:
            if fence := re.fullmatch(r"( *)```(.*)", line):
                opened, body = (fence.group(1), fence.group(2).strip(), number), []
        elif line == opened[0] + "```":
            blocks.append(Block(page, opened[1], opened[2], "".join(body)))
            opened = None
        else:
            body.append(line.removeprefix(opened[0]) + "\n")
    assert opened is None, f"{page}:{opened[2]}: a fence is never closed"
    return blocks


BLOCKS = [block for page in PAGES for block in _blocks(page)]


def _named(language):
    """The page's blocks of one language, with test IDs that name the page:
    docs/golden.md:console-1."""
    chosen, ids, seen = [], [], {}
    for block in BLOCKS:
        if block.language == language:
            n = seen[block.page] = seen.get(block.page, -1) + 1
            chosen.append(block)
            ids.append(f"{block.page}:{language}-{n}")
    return chosen, ids


PYTHON, PYTHON_IDS = _named("python")
CONSOLE, CONSOLE_IDS = _named("console")


def _missing(code):
    imported = re.findall(r"^\s*(?:import|from)\s+(\w+)", code, re.M)
    # dict.fromkeys: "import jax" and "import jax.numpy" need jax once.
    return [m for m in dict.fromkeys(imported)
            if m in OPTIONAL and importlib.util.find_spec(m) is None]


def _skip_if_missing(code):
    missing = _missing(code)
    if missing and REQUIRE_FRAMEWORKS and {"torch", "jax"} & set(missing):
        pytest.fail(f"needs {', '.join(missing)} (SIGMOID_BACKWARD_REQUIRE_FRAMEWORKS=1)")
    if missing:
        pytest.skip(f"needs {', '.join(missing)}")


def _commands(session):
    """(command, expected output lines) pairs of a console block; a
    here-document belongs to its command."""
    pairs, lines = [], session.splitlines()
    while lines:
        line = lines.pop(0)
        assert line.startswith("$ "), f"a console block starts with a command: {line!r}"
        command = [line[2:]]
        if heredoc := re.search(r"<<-?'?(\w+)'?$", line):
            while command[-1] != heredoc.group(1):
                command.append(lines.pop(0))
        output = []
        while lines and not lines[0].startswith("$ "):
            output.append(lines.pop(0))
        pairs.append(("\n".join(command), output))
    return pairs


def _run_console(session, folder, io):
    """Run a console block's commands in one bash, in ``folder``; return
    each command's output (stdout, then stderr) as a list of lines."""
    if shutil.which("bash") is None:
        pytest.skip("console examples run in bash, which is not installed")
    out, err = shlex.quote(str(io / "stdout")), shlex.quote(str(io / "stderr"))
    # `python` is this interpreter; after each command, its output and a
    # mark, then its status again, for a following `echo $?`.
    script = [f"python() {{ {shlex.quote(sys.executable)} \"$@\"; }}"]
    for command, _ in _commands(session):
        script.append(f"{{\n{command}\n}} >{out} 2>{err}\n__status=$?\n"
                      f"cat {out} {err}; echo '{MARK}'; (exit $__status)")
    proc = subprocess.run(["bash", "-c", "\n".join(script)], cwd=folder, capture_output=True,
                          text=True, timeout=300)
    assert proc.stderr == "", proc.stderr
    return [chunk.splitlines() for chunk in proc.stdout.split(f"{MARK}\n")[:-1]]


@pytest.fixture(scope="module")
def made_by(tmp_path_factory):
    """made_by(console_block): a folder holding what that block and the
    page's console blocks before it make, each block run once a module."""
    made, root = {}, tmp_path_factory.mktemp("examples")

    def folder(block):
        if block not in made:
            earlier = _earlier_console(block)
            made[block] = root / f"{len(made)}"
            if earlier is None:
                made[block].mkdir()
            else:
                shutil.copytree(folder(earlier), made[block], symlinks=True)
            _run_console(block.code, made[block], root)
        return made[block]
    return folder


def _earlier_console(block):
    """The page's last console block before ``block``, or None."""
    before = [c for c in CONSOLE if c.page == block.page and c.line < block.line]
    return before[-1] if before else None


def _folder_for(block, tmp_path, made_by):
    """A fresh folder holding what the page's earlier console blocks make,
    and one for the commands' output."""
    folder, io = tmp_path / "work", tmp_path / "io"
    io.mkdir()
    earlier = _earlier_console(block)
    if earlier is None:
        folder.mkdir()
    else:
        shutil.copytree(made_by(earlier), folder, symlinks=True)
    return folder, io


def test_the_readme_has_examples():
    readme = [b.language for b in BLOCKS if b.page == "README.md"]
    assert readme.count("python") >= 4 and readme.count("console") >= 1


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_block_says_whether_it_runs(page):
    for block in _blocks(page):
        assert block.language in RUN + NOT_RUN, (
            f"{block.page}:{block.line}: ```{block.language} is none of {RUN + NOT_RUN}")


@pytest.mark.parametrize("block", PYTHON, ids=PYTHON_IDS)
def test_python_example_runs(block, tmp_path, made_by):
    _skip_if_missing(block.code)
    folder, _ = _folder_for(block, tmp_path, made_by)
    script = folder / "snippet.py"
    script.write_text(block.code)
    proc = subprocess.run([sys.executable, str(script)], cwd=folder, capture_output=True,
                          text=True, timeout=300)
    assert proc.returncode == 0, f"{block.page}:{block.line}\n{proc.stderr}"
    assert proc.stdout.strip(), f"{block.page}:{block.line}: an example prints what it shows"


@pytest.mark.parametrize("block", CONSOLE, ids=CONSOLE_IDS)
def test_console_example_prints_what_it_shows(block, tmp_path, made_by):
    folder, io = _folder_for(block, tmp_path, made_by)
    pairs = _commands(block.code)
    outputs = _run_console(block.code, folder, io)
    assert len(outputs) == len(pairs)
    for (command, expected), got in zip(pairs, outputs, strict=True):
        assert got == expected, f"{block.page}:{block.line}: {command}"


def test_python_examples_type_check(tmp_path):
    """mypy --check-untyped-defs over every python example, against the
    installed stubs; third-party libraries that ship no types (or are not
    installed) are not ours to check.  Each example's file is named after
    its page and line: docs_golden_md_283.py."""
    pytest.importorskip("mypy")
    stubs = installed_stubs(tmp_path)
    names = []
    for block in PYTHON:
        name = re.sub(r"\W", "_", block.page) + f"_{block.line}.py"
        (tmp_path / name).write_text(block.code)
        names.append(name)
    proc = subprocess.run(
        [sys.executable, "-m", "mypy", "--check-untyped-defs", "--ignore-missing-imports",
         "--no-incremental", "--cache-dir", os.devnull, *names],
        cwd=tmp_path, env=dict(os.environ, MYPYPATH=str(stubs)), capture_output=True,
        text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
