"""What an index page and pip see: the installed distribution's metadata
(Python versions, classifiers, keywords, links, the console script), the
Cython API's .pxd beside the package, and a wheel configuration that builds
the Pythons the classifiers promise."""
import importlib.metadata
import re
from pathlib import Path

import pytest

import sigmoid_backward

ROOT = Path(__file__).resolve().parent.parent
PROJECT_URL = "https://github.com/sigmoid-backward/sigmoid-backward"
META = importlib.metadata.metadata("sigmoid-backward")


def _python_versions():
    """The minor versions of the 'Python :: 3.X' classifiers, as ints."""
    return [int(m.group(1)) for c in META.get_all("Classifier") or []
            if (m := re.fullmatch(r"Programming Language :: Python :: 3\.(\d+)", c))]


def test_classifiers_list_each_python_from_requires_python_on():
    minors = _python_versions()
    assert META["Requires-Python"] == f">=3.{minors[0]}"
    assert minors == list(range(minors[0], minors[-1] + 1)), minors
    assert (minors[0], minors[-1]) == (10, 13)


def test_classifiers_and_keywords_describe_the_package():
    classifiers = set(META.get_all("Classifier") or [])
    for expected in ("Programming Language :: C", "Programming Language :: Cython",
                     "Operating System :: POSIX :: Linux", "Operating System :: MacOS",
                     "Operating System :: Microsoft :: Windows",
                     "Topic :: Scientific/Engineering", "Typing :: Typed"):
        assert expected in classifiers
    keywords = META["Keywords"].split(",")
    assert {"sigmoid", "gradient", "ufunc", "bfloat16", "aclnn"} <= set(keywords)


def test_project_urls_point_at_the_repository():
    urls = dict(u.split(", ", 1) for u in META.get_all("Project-URL") or [])
    assert urls["Homepage"] == PROJECT_URL
    assert all(url.startswith(PROJECT_URL) for url in urls.values()), urls


def test_console_script_is_the_main_command():
    scripts = importlib.metadata.entry_points(group="console_scripts")
    (script,) = [ep for ep in scripts if ep.name == "sigmoid-backward"]
    assert script.value == "sigmoid_backward.__main__:main"


def test_cython_api_pxd_is_installed_beside_the_package():
    folder = Path(sigmoid_backward.__file__).parent
    assert "cdef int sigmoid_backward_double(" in (folder / "cython_api.pxd").read_text()


def test_wheels_build_the_pythons_the_classifiers_promise():
    tomllib = pytest.importorskip("tomllib")   # Python 3.11+
    with open(ROOT / "pyproject.toml", "rb") as f:
        config = tomllib.load(f)["tool"]["cibuildwheel"]
    assert config["build"] == [f"cp3{minor}-*" for minor in _python_versions()]
    for name in config["test-sources"]:
        assert (ROOT / name).exists(), name
