"""The type stub of sigmoid_backward.aclnn agrees with the module.

The module defines its constants at run time from the enums of
``aclnn/_constants.py``; ``aclnn/__init__.pyi`` declares them for type
checkers.  The stub's constant section is generated from the enums
(``python tests/aclnn/aclnn_stub.py`` rewrites it), and these tests fail when
it, the stub's ``__all__`` or any signature drifts from the module.
"""
import ast
import importlib.resources
import os
import subprocess
import sys

import pytest

from sigmoid_backward import aclnn

from aclnn_stub import generate, section


def installed_stub():
    stub = importlib.resources.files("sigmoid_backward.aclnn") / "__init__.pyi"
    assert stub.is_file(), "aclnn/__init__.pyi is not installed (meson.build)"
    return stub.read_text()


def test_generated_section_matches_the_enums():
    assert section(installed_stub()) == generate(), (
        "aclnn/__init__.pyi is out of date with the enums of _constants.py: "
        "run python tests/aclnn/aclnn_stub.py")


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
