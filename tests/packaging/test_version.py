"""One version, written once (meson.build's project()): what the package says
is what its installed distribution says, and the distribution carries its
licence files."""
import importlib.metadata
import re
from pathlib import Path

import sigmoid_backward

ROOT = Path(__file__).resolve().parents[2]


def test_version_is_the_distributions():
    assert sigmoid_backward.__version__ == importlib.metadata.version("sigmoid-backward")


def test_version_is_written_once():
    """pyproject.toml takes its version from meson.build, and __init__.py
    from the file the build generates, so neither can disagree with it."""
    meson = (ROOT / "meson.build").read_text()
    declared = re.search(r"^project\(.*?\bversion:\s*'([^']+)'", meson, re.S | re.M)
    assert declared, "meson.build's project() declares no version"
    assert sigmoid_backward.__version__ == declared.group(1)
    pyproject = (ROOT / "pyproject.toml").read_text()
    assert re.search(r'^dynamic = \[.*"version".*\]', pyproject, re.M)
    assert not re.search(r"^version\s*=", pyproject, re.M)
    init = (ROOT / "src" / "sigmoid_backward" / "__init__.py").read_text()
    assert not re.search(r"^__version__\s*=", init, re.M)


def test_license_files_are_in_the_metadata():
    listed = importlib.metadata.metadata("sigmoid-backward").get_all("License-File") or []
    assert {"LICENSE", "LICENSES/FP16.txt"} <= set(listed), listed
