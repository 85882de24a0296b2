"""The type stub of sigmoid_backward.aclnn agrees with the module.

The module defines its constants at run time from the enums of
``aclnn/_constants.py``; ``aclnn/__init__.pyi`` declares them for type
checkers.  The stub's constant section is generated from the enums
(``python tests/test_aclnn_stub.py`` rewrites it), and these tests fail when
it, the stub's ``__all__`` or any signature drifts from the module.
"""
import ast
import importlib.resources
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from sigmoid_backward import aclnn

ROOT = Path(__file__).resolve().parent.parent
SOURCE_STUB = ROOT / "src" / "sigmoid_backward" / "aclnn" / "__init__.pyi"
BEGIN = "# --- generated from the enums of _constants.py: do not edit by hand ----------\n"
END = "# --- end of the generated section ---------------------------------------------\n"
ENUMS = (aclnn.aclnnStatus, aclnn.aclDataType, aclnn.aclFormat)


def generate():
    """The stub's generated section, from the enums as they are."""
    lines = []
    for enum in ENUMS:
        lines.append(f"class {enum.__name__}(enum.IntEnum):")
        lines += [f"    {name} = {int(member)}" for name, member in enum.__members__.items()]
        lines.append("")
    lines.append("# As in C, every constant is also a module-level name.")
    for enum in ENUMS:
        lines += [f"{name}: Final = {enum.__name__}.{name}" for name in enum.__members__]
    lines.append("")
    lines.append("__all__ += [")
    for enum in ENUMS:
        names = [f'"{name}",' for name in enum.__members__]
        line = "   "
        for name in names:
            if len(line) + 1 + len(name) > 88:
                lines.append(line)
                line = "   "
            line += " " + name
        lines.append(line)
    lines.append("]")
    return "\n".join(lines) + "\n"


def installed_stub():
    stub = importlib.resources.files("sigmoid_backward.aclnn") / "__init__.pyi"
    assert stub.is_file(), "aclnn/__init__.pyi is not installed (meson.build)"
    return stub.read_text()


def section(text):
    match = re.search(re.escape(BEGIN) + "(.*?)" + re.escape(END), text, re.S)
    assert match, "the stub has lost its generated-section markers"
    return match.group(1)


def test_generated_section_matches_the_enums():
    assert section(installed_stub()) == generate(), (
        "aclnn/__init__.pyi is out of date with the enums of _constants.py: "
        "run python tests/test_aclnn_stub.py")


def test_stub_all_is_the_modules():
    tree = ast.parse(installed_stub())
    listed = []
    for node in tree.body:
        if isinstance(node, (ast.Assign, ast.AugAssign)):
            target = node.targets[0] if isinstance(node, ast.Assign) else node.target
            if isinstance(target, ast.Name) and target.id == "__all__":
                listed += [ast.literal_eval(elt) for elt in node.value.elts]
    assert listed == list(aclnn.__all__)


def test_every_public_name_is_declared():
    declared = set()
    for node in ast.parse(installed_stub()).body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            declared.add(node.name)
        elif isinstance(node, ast.AnnAssign):
            declared.add(node.target.id)
    assert set(aclnn.__all__) - declared == set()


def test_stubtest_agrees(tmp_path):
    """mypy's stubtest: every name, signature, property and enum value of the
    stub matches the module at run time."""
    pytest.importorskip("mypy")
    package = tmp_path / "sigmoid_backward"
    (package / "aclnn").mkdir(parents=True)
    installed = importlib.resources.files("sigmoid_backward")
    for name in ("py.typed", "__init__.pyi", "reference.pyi", "aclnn/__init__.pyi"):
        (package / name).write_bytes((installed / name).read_bytes())
    # The classes' constructors are internal (aclCreateTensor, phase 1 and
    # aclrtCreateStream make the objects), and example.py is a script.
    allowlist = tmp_path / "allowlist.txt"
    allowlist.write_text("sigmoid_backward.aclnn.aclTensor.__init__\n"
                         "sigmoid_backward.aclnn.aclOpExecutor.__init__\n"
                         "sigmoid_backward.aclnn.example\n")
    config = tmp_path / "mypy.ini"
    config.write_text("[mypy]\n")
    env = dict(os.environ, MYPYPATH=str(tmp_path))
    proc = subprocess.run(
        [sys.executable, "-m", "mypy.stubtest", "sigmoid_backward.aclnn", "--concise",
         "--allowlist", str(allowlist), "--mypy-config-file", str(config)],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr


if __name__ == "__main__":
    # Rewrite the generated section of the source stub from the enums.
    text = SOURCE_STUB.read_text()
    new = re.sub(re.escape(BEGIN) + ".*?" + re.escape(END),
                 lambda _: BEGIN + generate() + END, text, flags=re.S)
    SOURCE_STUB.write_text(new)
    print(f"{SOURCE_STUB}: {'rewritten' if new != text else 'already up to date'}")
