"""ATK's per-case standard, and the compare command's options for
standards: --standard all, --csv rows per case and standard, --rtol /
--atol / --ptol (and the report saying so), --benchmark-precision,
--third-party, --hist."""
import csv
import json

import numpy as np
import pytest

from sigmoid_backward.golden import STANDARDS, CaseFileError, cases

from golden_support import ATK, run, usage_error


def _atk(tmp_path, **changes):
    """The first three ATK cases, case #1 changed by ``changes``."""
    data = json.loads(ATK.read_text())[:3]
    data[1].update(changes)
    path = tmp_path / "atk.json"
    path.write_text(json.dumps(data))
    return path


def _campaign(tmp_path, capsys, **changes):
    """golden --cases of the three cases, and device outputs equal to the
    goldens but for case #1, 1% of whose values are 1% off."""
    status, _, err = run(capsys, "golden", "--cases", _atk(tmp_path, **changes),
                         "--out-dir", tmp_path / "out")
    assert status == 0, err
    manifest = json.loads((tmp_path / "out" / "manifest.json").read_text())
    device = tmp_path / "dev"
    device.mkdir()
    for case in manifest["cases"]:
        golden = np.fromfile(tmp_path / "out" / case["golden"], case["dtype"])
        if case["name"].endswith("_1"):
            golden[: max(1, golden.size // 100)] *= np.float16(1.01)
        golden.tofile(device / case["golden"])
    return tmp_path / "out" / "manifest.json", device


def test_atk_cases_keep_their_standard():
    found = cases(ATK)
    assert {c.standard for c in found} == {"single_bm"}


def test_the_manifest_case_standard_is_applied_unless_standard_overrides(tmp_path, capsys):
    manifest, device = _campaign(tmp_path, capsys, standard={"acc": "msprobe-ulp"})
    entries = json.loads(manifest.read_text())["cases"]
    assert [e["standard"] for e in entries] == ["single_bm", "msprobe-ulp", "single_bm"]
    _, out, _ = run(capsys, "compare", "--manifest", manifest, "--actual-dir", device)
    lines = out.splitlines()
    assert " opbase-tolerance: " in lines[0] and " msprobe-ulp: " in lines[1]
    _, out, _ = run(capsys, "compare", "--manifest", manifest, "--actual-dir", device,
                    "--standard", "ttk-close")
    assert all(" ttk-close: " in line for line in out.splitlines()[:3])


@pytest.mark.parametrize("changes, words", [
    ({"standard": {"acc": "high_precision"}}, ["aclnnSigmoidBackward_1", "unknown standard",
                                               "'high_precision'"]),
    ({"standard": "single_bm"}, ["aclnnSigmoidBackward_1", "standard"]),
    ({"attributes": {"alpha": 1}}, ["aclnnSigmoidBackward_1", "attributes", "has none"]),
    ({"output_shapes": [[3]]}, ["aclnnSigmoidBackward_1", "output_shapes"]),
    ({"tiling": 1}, ["aclnnSigmoidBackward_1", "'tiling'", "not supported"]),
])
def test_what_an_atk_case_asks_is_honoured_or_refused(tmp_path, changes, words):
    with pytest.raises(CaseFileError) as info:
        cases(_atk(tmp_path, **changes))
    for word in words:
        assert word in str(info.value), str(info.value)


@pytest.mark.parametrize("field, value, ok", [("format", "ND", True), ("format", "NCHW", True),
                                              ("format", "NC1HWC0", False),
                                              ("value", [1, 2], False)])
def test_input_layouts_and_values(tmp_path, field, value, ok):
    data = json.loads(ATK.read_text())[:1]
    data[0]["inputs"][0][field] = value
    path = tmp_path / "atk.json"
    path.write_text(json.dumps(data))
    if ok:
        assert cases(path)[0].name == "aclnnSigmoidBackward_0"
    else:
        with pytest.raises(CaseFileError, match=f"aclnnSigmoidBackward_0.*{field}|"
                                                f"aclnnSigmoidBackward_0.*'value'"):
            cases(path)


def test_standard_all_with_csv_rows_per_case_and_standard(tmp_path, capsys):
    manifest, device = _campaign(tmp_path, capsys)
    table, report = tmp_path / "r.csv", tmp_path / "r.json"
    status, out, err = run(capsys, "compare", "--manifest", manifest, "--actual-dir", device,
                           "--standard", "all", "--csv", table, "--json", report)
    assert err == ""
    rows = list(csv.DictReader(table.open()))
    assert len(rows) == 3 * len(STANDARDS)
    assert [r["standard"] for r in rows[:len(STANDARDS)]] == list(STANDARDS)
    assert {r["status"] for r in rows} <= {"PASS", "WARNING", "FAIL"}
    failed = {r["standard"] for r in rows if r["status"] != "PASS"}
    assert failed and status == 1
    assert {r["status"] for r in rows if r["name"] == "aclnnSigmoidBackward_0"} == {"PASS"}
    assert "FAIL" in {r["status"] for r in rows if r["name"] == "aclnnSigmoidBackward_1"}
    assert len(json.loads(report.read_text())["cases"]) == 3 * len(STANDARDS)


def test_standard_all_gives_a_case_not_judged_one_error_row(tmp_path, capsys):
    """A case whose output is missing is one ERROR row, whatever the
    standards asked; the others are judged under each, and the exit status
    is the verdicts' (1: case #1 fails), else 3 (not judged)."""
    manifest, device = _campaign(tmp_path, capsys)
    cases_ = json.loads(manifest.read_text())["cases"]
    (device / cases_[2]["golden"]).unlink()
    table, report = tmp_path / "r.csv", tmp_path / "r.json"
    status, out, err = run(capsys, "compare", "--manifest", manifest, "--actual-dir", device,
                           "--standard", "all", "--csv", table, "--json", report)
    assert (status, err) == (1, "")
    rows = list(csv.DictReader(table.open()))
    assert len(rows) == 2 * len(STANDARDS) + 1
    error = [r for r in rows if r["status"] == "ERROR"]
    assert [(r["name"], r["standard"]) for r in error] == [(cases_[2]["name"], "all")]
    assert "does not exist" in error[0]["error"] and error[0]["numel"] == ""
    assert json.loads(report.read_text())["counts"]["ERROR"] == 1
    (device / cases_[1]["golden"]).unlink()
    status, out, err = run(capsys, "compare", "--manifest", manifest, "--actual-dir", device,
                           "--standard", "all")
    assert (status, err) == (3, "") and out.count("\nERROR ") == 2


def test_overrides_are_applied_and_reported(tmp_path, capsys):
    golden = np.ones(1000, np.float32)
    actual = golden.copy()
    actual[:5] = 1.001
    np.save(tmp_path / "a.npy", actual)
    np.save(tmp_path / "g.npy", golden)
    status, out, _ = run(capsys, "compare", tmp_path / "a.npy", tmp_path / "g.npy")
    assert status == 1
    status, out, _ = run(capsys, "compare", tmp_path / "a.npy", tmp_path / "g.npy",
                         "--rtol", "0.002", "--csv", tmp_path / "t.csv")
    assert status == 0 and "  overridden: rtol = 0.002" in out
    assert next(csv.DictReader((tmp_path / "t.csv").open()))["overridden"] == "rtol=0.002"
    with pytest.raises(SystemExit) as exit_info:
        run(capsys, "compare", tmp_path / "a.npy", tmp_path / "g.npy", "--ptol", "nan")
    assert exit_info.value.code == 2
    usage_error(capsys.readouterr().err, "--ptol", "'nan'", command="compare")


def test_third_party_and_benchmark_precision_and_hist(tmp_path, capsys):
    golden = np.ones(2000, np.float16)
    actual, gpu = golden.copy(), golden.copy()
    actual[:4] = gpu[:6] = np.float16(1 + 2**-9)
    for name, arr in (("a", actual), ("g", golden), ("t", gpu)):
        np.save(tmp_path / f"{name}.npy", arr)
    files = [tmp_path / "a.npy", tmp_path / "g.npy"]
    status, out, _ = run(capsys, "compare", *files, "--standard", "ulp")
    assert status == 1 and "not applied: no --third-party" in out
    status, out, _ = run(capsys, "compare", *files, "--standard", "ulp",
                         "--third-party", tmp_path / "t.npy", "--hist")
    assert status == 0 and "ratio 0.666667" in out
    assert "         0: 1996\n" in out and "       2^1: 4\n" in out
    status, out, _ = run(capsys, "compare", *files, "--standard", "msprobe-threshold",
                         "--benchmark-precision", "same", "--json", tmp_path / "r.json")
    assert json.loads((tmp_path / "r.json").read_text())["cases"][0]["limits"]["raised"] \
        is False
