"""What an index page and pip see: the installed distribution's metadata
(Python versions, classifiers, keywords, links, the console script), the
Cython API's .pxd beside the package, a wheel configuration that builds
the Pythons the classifiers promise, an sdist without generated images,
macOS wheels that target their runners' macOS, and a release workflow that
publishes what the wheels workflow built and tested."""
import importlib.metadata
import io
import re
import shutil
import subprocess
import tarfile
from pathlib import Path

import pytest

import sigmoid_backward

ROOT = Path(__file__).resolve().parents[2]
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


# ---- the sdist -------------------------------------------------------------

IMAGES = (".png", ".jpg", ".jpeg", ".gif", ".svg", ".webp")


def _git(*args):
    """git's output in this checkout, as bytes; a skip where there is none
    (a wheel's test folder, an unpacked sdist)."""
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        pytest.skip("not a git checkout")
    return subprocess.run(["git", *args], cwd=ROOT, capture_output=True, check=True,
                          timeout=120).stdout


def _is_image(path):
    return path.lower().endswith(IMAGES)


def test_every_image_is_left_out_of_the_sdist():
    """.gitattributes marks every tracked image export-ignore, and any image
    added later (git answers for paths that do not exist yet)."""
    tracked = _git("ls-files", "-z").decode().split("\0")
    paths = [p for p in tracked if _is_image(p)] + [f"docs/new-plot{ext}" for ext in IMAGES]
    fields = _git("check-attr", "-z", "export-ignore", "--", *paths).decode().split("\0")
    ignored = {path: value for path, _, value in zip(fields[0::3], fields[1::3], fields[2::3],
                                                     strict=False)}
    assert ignored == {path: "set" for path in paths}


def test_the_sdist_is_every_file_of_head_but_the_images():
    """meson-python's sdist is `meson dist`, which copies `git archive HEAD`:
    the files of HEAD, less those export-ignore marks, which are the
    images and nothing else."""
    archive = tarfile.open(fileobj=io.BytesIO(_git("archive", "--format=tar", "HEAD")))
    archived = {m.name for m in archive.getmembers() if m.isfile()}
    head = set(_git("ls-tree", "-r", "-z", "--name-only", "HEAD").decode().split("\0")) - {""}
    assert archived == {path for path in head if not _is_image(path)}


MAX_SOURCE_LINES = 400   # docs/development.md, "Layout"


def test_no_source_file_is_over_400_lines():
    """One job per file: a file under src/ that outgrows 400 lines has taken
    a second job, which gets a file of its own."""
    tracked = _git("ls-files", "-z", "--", "src").decode().split("\0")
    lines = {path: (ROOT / path).read_bytes().count(b"\n") for path in tracked if path}
    assert lines, "git lists no file under src/"
    assert {path: n for path, n in lines.items() if n > MAX_SOURCE_LINES} == {}


# ---- the workflows -----------------------------------------------------------

WORKFLOWS = ROOT / ".github" / "workflows"


def _workflow(name):
    """A workflow file as data.  PyYAML reads the key `on` as True (YAML
    1.1's boolean), so it is put back under its name."""
    yaml = pytest.importorskip("yaml")   # in the test extra
    path = WORKFLOWS / name
    if not path.exists():
        pytest.skip(f"no {path.relative_to(ROOT)} here (a wheel's test folder)")
    workflow = yaml.safe_load(path.read_text())
    if True in workflow:
        workflow["on"] = workflow.pop(True)
    return workflow


def _macos_targets():
    """{architecture: MACOSX_DEPLOYMENT_TARGET} of pyproject.toml's overrides."""
    tomllib = pytest.importorskip("tomllib")   # Python 3.11+
    with open(ROOT / "pyproject.toml", "rb") as f:
        config = tomllib.load(f)["tool"]["cibuildwheel"]
    targets = {}
    for override in config.get("overrides", []):
        if m := re.fullmatch(r"\*-macosx_(\w+)", override["select"]):
            targets[m.group(1)] = override["environment"]["MACOSX_DEPLOYMENT_TARGET"]
    assert "MACOSX_DEPLOYMENT_TARGET" not in config["macos"].get("environment", {})
    assert sorted(targets) == sorted(config["macos"]["archs"])
    return targets


def test_each_macos_wheel_targets_its_runners_macos():
    """Homebrew's libomp, which the macOS wheels bundle, is built for the
    runner's macOS: each architecture's runner image is pinned, and the
    wheel's deployment target is that image's macOS (macos-14 -> 14.0)."""
    targets = _macos_targets()
    matrix = _workflow("wheels.yml")["jobs"]["wheels"]["strategy"]["matrix"]["include"]
    runners = {row["archs"]: row["runner"] for row in matrix if row["runner"].startswith("macos")}
    assert sorted(runners) == sorted(targets)
    for arch, runner in runners.items():
        # Pinned: macos-<major>, or macos-<major>-intel for the x86_64 images.
        m = re.fullmatch(r"macos-(\d+)(-intel)?", runner)
        assert m, f"{arch}: runner {runner} names no macOS version"
        assert bool(m.group(2)) == (arch == "x86_64"), (arch, runner)
        assert targets[arch] == f"{m.group(1)}.0", (arch, runner, targets[arch])


def test_the_release_workflow_publishes_what_the_wheels_workflow_built():
    release = _workflow("release.yml")
    assert release["on"] == {"push": {"tags": ["v*"]}}
    assert release["permissions"] == {"contents": "read"}
    jobs = release["jobs"]
    # The build is the wheels workflow itself, which tests every wheel.
    assert jobs["build"]["uses"] == "./.github/workflows/wheels.yml"
    wheels = _workflow("wheels.yml")
    assert "workflow_call" in wheels["on"] and "push" not in wheels["on"]   # no double build
    assert {"wheels", "sdist"} <= set(wheels["jobs"])
    uploaded = {job["steps"][-1]["with"]["path"] for job in wheels["jobs"].values()}
    assert uploaded == {"wheelhouse/*.whl", "dist/*.tar.gz"}
    # The publish job: after the build, trusted publishing in the pypi
    # environment, the only job that may ask for an OIDC token.
    publish = jobs["publish"]
    assert publish["needs"] == ["build"]
    assert publish["environment"]["name"] == "pypi"
    assert publish["permissions"] == {"id-token": "write"}
    assert all("permissions" not in job for name, job in jobs.items() if name != "publish")
    uses = [step.get("uses", "") for step in publish["steps"]]
    assert uses[0].startswith("actions/download-artifact@")
    assert uses[-1].startswith("pypa/gh-action-pypi-publish@")
    assert not any("password" in step.get("with", {}) for step in publish["steps"])
