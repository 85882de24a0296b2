"""A test campaign as an NPU run gives it: the device's outputs are the
goldens, but 3 are missing and 2 truncated.  The 199 others are judged all
the same, and every result is in the JSON and CSV reports, written before
the exit status (3: some cases could not be judged), whatever happened to
stdout."""
import csv
import io
import json
import subprocess
import sys

import pytest

from sigmoid_backward.golden import _cli_compare

from golden_support import ATK, run, tmp_files

MISSING = ["aclnnSigmoidBackward_3", "aclnnSigmoidBackward_100", "aclnnSigmoidBackward_203"]
TRUNCATED = ["aclnnSigmoidBackward_7", "aclnnSigmoidBackward_150"]


@pytest.fixture(scope="module")
def campaign(tmp_path_factory):
    """ops-nn's 204 ATK cases (the 164M-element one cut down), their goldens,
    and a device folder of copies of the goldens, 3 removed and 2 cut short."""
    folder = tmp_path_factory.mktemp("campaign")
    data = json.loads(ATK.read_text())
    for inp in data[-1]["inputs"]:
        inp["shape"] = [8, 2, 3, 5]
    (folder / "atk.json").write_text(json.dumps(data))
    proc = subprocess.run([sys.executable, "-m", "sigmoid_backward", "golden", "--cases",
                           "atk.json", "--out-dir", "golden"], cwd=folder,
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr
    manifest = json.loads((folder / "golden" / "manifest.json").read_text())
    (folder / "device").mkdir()
    for case in manifest["cases"]:
        if case["name"] in MISSING:
            continue
        data = (folder / "golden" / case["golden"]).read_bytes()
        if case["name"] in TRUNCATED:
            data = data[:len(data) // 2 - 1]
        (folder / "device" / case["golden"]).write_bytes(data)
    return folder, manifest


def _args(folder, *more):
    return ["--manifest", folder / "golden" / "manifest.json", "--actual-dir",
            folder / "device", "--json", folder / "r.json", "--csv", folder / "r.csv", *more]


def _check_reports(folder, manifest):
    """Both reports hold every case: ERROR with its reason for the 5, PASS
    with metrics for the others."""
    report = json.loads((folder / "r.json").read_text())
    assert report["counts"] == {"PASS": 199, "WARNING": 0, "FAIL": 0, "ERROR": 5}
    assert report["passed"] is False
    assert [c["name"] for c in report["cases"]] == [c["name"] for c in manifest["cases"]]
    by_name = {c["name"]: c for c in report["cases"]}
    for name in MISSING:
        assert by_name[name]["status"] == "ERROR"
        assert "does not exist" in by_name[name]["error"], by_name[name]
    for name in TRUNCATED:
        assert by_name[name]["status"] == "ERROR"
        assert "holds" in by_name[name]["error"], by_name[name]
    judged = [c for c in report["cases"] if c["name"] not in MISSING + TRUNCATED]
    assert all(c["status"] == "PASS" and c["mismatches"] == 0 for c in judged)
    rows = list(csv.DictReader(io.StringIO((folder / "r.csv").read_text())))
    assert [r["name"] for r in rows] == [c["name"] for c in manifest["cases"]]
    assert {r["name"]: r["status"] for r in rows} == {
        c["name"]: c["status"] for c in report["cases"]}
    assert all(r["error"] == by_name[r["name"]].get("error", "") for r in rows)
    assert all(r["numel"] == str(by_name[r["name"]]["numel"]) for r in rows
               if r["status"] == "PASS")
    assert tmp_files(folder) == []


def test_missing_and_truncated_outputs_are_errors_and_the_rest_are_judged(campaign, capsys):
    folder, manifest = campaign
    status, out, err = run(capsys, "compare", *_args(folder))
    assert (status, err) == (3, "")
    lines = out.splitlines()
    assert len(lines) == 205
    assert sum(line.startswith("PASS ") for line in lines) == 199
    errors = [line for line in lines if line.startswith("ERROR ")]
    assert [line.split()[1] for line in errors] == sorted(
        MISSING + TRUNCATED, key=lambda n: int(n.rsplit("_", 1)[1]))
    # ATK's "standard": {"acc": "single_bm"}, kept in the manifest, judges each case
    assert lines[-1] == "199 of 204 cases passed under opbase-tolerance, 5 ERROR (not judged)"
    _check_reports(folder, manifest)


def test_a_failure_outranks_an_error(campaign, capsys):
    """A case that fails its standard is a verdict: exit 1, even with ERRORs."""
    folder, manifest = campaign
    name = manifest["cases"][0]["golden"]
    good = (folder / "device" / name).read_bytes()
    try:
        (folder / "device" / name).write_bytes(bytes(len(good)))
        status, out, err = run(capsys, "compare", *_args(folder))
    finally:
        (folder / "device" / name).write_bytes(good)
    assert (status, err) == (1, "")
    assert out.startswith("FAIL aclnnSigmoidBackward_0 ")
    report = json.loads((folder / "r.json").read_text())
    assert report["counts"] == {"PASS": 198, "WARNING": 0, "FAIL": 1, "ERROR": 5}


class _ClosedAfter:
    """A stdout that a ``| head -n N`` closed after N lines."""

    def __init__(self, lines):
        self.lines, self.written = lines, []

    def write(self, text):
        if len(self.written) >= self.lines:
            raise BrokenPipeError(32, "Broken pipe")
        self.written.append(text)
        return len(text)

    def flush(self):
        if len(self.written) >= self.lines:
            raise BrokenPipeError(32, "Broken pipe")


def test_a_closed_stdout_loses_nothing(campaign, capsys, monkeypatch):
    folder, manifest = campaign
    for path in (folder / "r.json", folder / "r.csv"):
        path.unlink(missing_ok=True)
    head = _ClosedAfter(1)
    monkeypatch.setattr(sys, "stdout", head)
    status = _cli_compare.main([str(a) for a in _args(folder)])
    monkeypatch.undo()
    assert status == 3 and capsys.readouterr().err == ""
    assert len(head.written) == 1
    _check_reports(folder, manifest)


def test_piped_into_a_reader_that_has_gone(campaign):
    """``compare ... | head``, as a user runs it, with the reader gone before
    the first line (so every print meets a closed pipe): the reports are
    whole, stderr is empty, the status is 3."""
    folder, manifest = campaign
    for path in (folder / "r.json", folder / "r.csv"):
        path.unlink(missing_ok=True)
    proc = subprocess.Popen([sys.executable, "-m", "sigmoid_backward", "compare",
                             *map(str, _args(folder))], cwd=folder, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)
    proc.stdout.close()  # the reader exits at once
    err = proc.stderr.read()
    assert proc.wait(timeout=600) == 3 and err == b""
    _check_reports(folder, manifest)
