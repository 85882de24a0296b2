"""compare's --json and --csv reports: a path naming an input or the other
report is refused before any case runs (exit 2), and a report that cannot
be written neither stops the other nor hides a FAIL: each is tried, the
status is 3, and stderr says how many results failed."""
import json
import os

import numpy as np
import pytest

from sigmoid_backward.golden import _cli_compare
from sigmoid_backward.golden._atomic_write import WriteError

from golden_support import one_line_error, passing_campaign, run


def _snapshot(folder):
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir()) if p.is_file()}


@pytest.fixture
def pair(tmp_path):
    """ACTUAL a.npy and GOLDEN g.npy, a.npy 20% off in every value."""
    np.save(tmp_path / "g.npy", np.linspace(0.1, 1.0, 100, dtype=np.float32))
    np.save(tmp_path / "a.npy", np.linspace(0.1, 1.0, 100, dtype=np.float32) * 1.2)
    return tmp_path / "a.npy", tmp_path / "g.npy"


@pytest.fixture
def campaign(tmp_path):
    """A manifest of the TTK aclnn cases, its device outputs the goldens."""
    manifest, device, cases = passing_campaign(tmp_path)
    return manifest, device, cases["cases"][0]["golden"]


# --- a report path that names an input or the other report -----------------------------

@pytest.mark.parametrize("option", ["--json", "--csv"])
@pytest.mark.parametrize("which", ["ACTUAL", "GOLDEN"])
def test_a_report_naming_an_input_is_refused(tmp_path, capsys, pair, option, which):
    target = pair[0] if which == "ACTUAL" else pair[1]
    before = _snapshot(tmp_path)
    status, out, err = run(capsys, "compare", *pair, option, target)
    one_line_error(status, err, f"{option}: {target} is the same file as {which} {target}: "
                                f"refused", command="compare")
    assert out == "" and _snapshot(tmp_path) == before


@pytest.mark.parametrize("how", ["symlink", "hard link", "dotted path"])
def test_a_report_naming_an_input_by_another_name_is_refused(tmp_path, capsys, pair, how):
    other = tmp_path / "other.npy"
    if how == "symlink":
        other.symlink_to(pair[1])
    elif how == "hard link":
        os.link(pair[1], other)
    else:
        other = tmp_path / "sub" / ".." / "g.npy"
        (tmp_path / "sub").mkdir()
    before = _snapshot(tmp_path)
    status, out, err = run(capsys, "compare", *pair, "--csv", other)
    one_line_error(status, err, f"--csv: {other} is the same file as GOLDEN {pair[1]}",
                   command="compare")
    assert out == "" and _snapshot(tmp_path) == before


def test_the_third_party_file_is_an_input_too(tmp_path, capsys, pair):
    np.save(tmp_path / "t.npy", np.linspace(0.1, 1.0, 100, dtype=np.float32))
    status, _, err = run(capsys, "compare", *pair, "--standard", "msprobe-ulp",
                         "--third-party", tmp_path / "t.npy", "--json", tmp_path / "t.npy")
    one_line_error(status, err, "is the same file as --third-party", command="compare")


@pytest.mark.parametrize("spelling", ["same", "symlink"])
def test_json_and_csv_naming_one_file_are_refused(tmp_path, capsys, pair, spelling):
    """New or existing, one file cannot hold both reports: the second would
    silently replace the first."""
    csv_path = tmp_path / "r.out"
    if spelling == "symlink":
        csv_path = tmp_path / "link.out"
        csv_path.symlink_to(tmp_path / "r.out")  # dangling: both would create r.out
    status, out, err = run(capsys, "compare", *pair, "--json", tmp_path / "r.out",
                           "--csv", csv_path)
    one_line_error(status, err, f"--csv: {csv_path} is the same file as --json "
                                f"{tmp_path / 'r.out'}: refused", command="compare")
    assert out == "" and not (tmp_path / "r.out").exists()


@pytest.mark.parametrize("what", ["--manifest", "golden", "--actual-dir", "--map"])
def test_a_report_naming_a_file_of_the_campaign_is_refused(tmp_path, capsys, campaign, what):
    manifest, device, first = campaign
    (tmp_path / "map.json").write_text(json.dumps({first: first}))
    target = {"--manifest": manifest, "golden": manifest.parent / first,
              "--actual-dir": device / first, "--map": tmp_path / "map.json"}[what]
    before = {folder: _snapshot(folder) for folder in (tmp_path, manifest.parent, device)}
    status, out, err = run(capsys, "compare", "--manifest", manifest, "--actual-dir", device,
                           "--map", tmp_path / "map.json", "--json", target)
    one_line_error(status, err, f"--json: {target} is the same file as ", "refused",
                   command="compare")
    assert what in err
    assert out == ""
    assert {folder: _snapshot(folder) for folder in before} == before


def test_a_device_output_named_by_map_is_an_input(tmp_path, capsys, campaign):
    manifest, device, first = campaign
    (device / first).rename(device / "renamed.bin")
    (tmp_path / "map.json").write_text(json.dumps({first: "renamed.bin"}))
    status, _, err = run(capsys, "compare", "--manifest", manifest, "--actual-dir", device,
                         "--map", tmp_path / "map.json", "--csv", device / "renamed.bin")
    one_line_error(status, err, f"--csv: {device / 'renamed.bin'} is the same file as "
                                f"--manifest: ", command="compare")


# --- a report that cannot be written ---------------------------------------------------

def _failing(label, monkeypatch):
    """replace_file failing for the report named ``label`` only."""
    real = _cli_compare.replace_file

    def replace_file(path, fill, signals, progress, label_=None, **kwargs):
        given = kwargs.get("label", label_)
        if given == label:
            raise WriteError(f"{given}: cannot write {path}: No space left on device")
        return real(path, fill, signals, progress, **kwargs)
    monkeypatch.setattr(_cli_compare, "replace_file", replace_file)


@pytest.mark.parametrize("lost, kept", [("--json", "--csv"), ("--csv", "--json")])
def test_a_report_not_written_does_not_stop_the_other_nor_hide_a_fail(tmp_path, capsys, pair,
                                                                      monkeypatch, lost, kept):
    _failing(lost, monkeypatch)
    paths = {"--json": tmp_path / "r.json", "--csv": tmp_path / "r.csv"}
    status, out, err = run(capsys, "compare", *pair, "--json", paths["--json"], "--csv",
                           paths["--csv"])
    assert out.startswith("FAIL float32 [100] ttk-close: ")
    assert status == 3  # a report is missing: not 1, whose reader would look for it
    assert err == (f"python -m sigmoid_backward compare: error: {lost}: cannot write "
                   f"{paths[lost]}: No space left on device\n"
                   f"python -m sigmoid_backward compare: 1 FAIL and 0 WARNING of 1 results: "
                   f"the exit status is 3, not 1, because a report was not written\n")
    assert paths[kept].exists() and not paths[lost].exists()
    assert "FAIL" in paths[kept].read_text()


def test_both_reports_not_written_are_both_named(tmp_path, capsys, pair, monkeypatch):
    _failing("--json", monkeypatch)
    real = _cli_compare.replace_file

    def also_csv(path, fill, signals, progress, **kwargs):
        if kwargs.get("label") == "--csv":
            raise WriteError(f"--csv: cannot write {path}: Input/output error")
        return real(path, fill, signals, progress, **kwargs)
    monkeypatch.setattr(_cli_compare, "replace_file", also_csv)
    status, _, err = run(capsys, "compare", pair[1], pair[1], "--json", tmp_path / "r.json",
                         "--csv", tmp_path / "r.csv")
    assert status == 3  # every case passed: only the reports are missing
    assert err.splitlines() == [
        f"python -m sigmoid_backward compare: error: --json: cannot write "
        f"{tmp_path / 'r.json'}: No space left on device",
        f"python -m sigmoid_backward compare: error: --csv: cannot write "
        f"{tmp_path / 'r.csv'}: Input/output error"]
