"""What compare --manifest refuses in a manifest, and how it says so: a
manifest of no cases (a campaign that compares nothing must not pass), and
a case's unknown dtype (named as the field, with its value and the accepted
ones).  golden --cases refuses a case set of no cases for the same reason."""
import json

import pytest

from sigmoid_backward.golden import CaseFileError, generate
from sigmoid_backward.golden._dtype_names import choices

from golden_support import one_line_error, passing_campaign, run


def _campaign(tmp_path):
    """golden's manifest of the TTK aclnn cases, and a device folder of
    copies of their goldens."""
    manifest, device, _ = passing_campaign(tmp_path)
    return manifest, device


@pytest.mark.parametrize("text", ['{"cases": []}', '{"cases": []}\n'])
def test_an_empty_manifest_is_refused_not_passed(tmp_path, capsys, text):
    (tmp_path / "device").mkdir()
    (tmp_path / "m.json").write_text(text)
    status, out, err = run(capsys, "compare", "--manifest", tmp_path / "m.json",
                           "--actual-dir", tmp_path / "device", "--json", tmp_path / "r.json",
                           "--csv", tmp_path / "r.csv")
    one_line_error(status, err, f"--manifest: {tmp_path / 'm.json'} has no cases: nothing to "
                                f"compare", command="compare")
    assert out == ""
    assert not (tmp_path / "r.json").exists() and not (tmp_path / "r.csv").exists()


def test_an_empty_case_set_is_refused(tmp_path, capsys):
    (tmp_path / "cases.json").write_text("[]")
    status, out, err = run(capsys, "golden", "--cases", tmp_path / "cases.json", "--out-dir",
                           tmp_path / "out")
    one_line_error(status, err, f"--cases: {tmp_path / 'cases.json'} has no cases")
    assert out == "" and not (tmp_path / "out").exists()
    with pytest.raises(CaseFileError, match="has no cases"):
        generate([], tmp_path / "out")
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("bad", ["float8", "int8", 16, None, ["float32"]])
def test_an_unknown_dtype_names_the_field_the_case_and_the_value(tmp_path, capsys, bad):
    manifest, device = _campaign(tmp_path)
    data = json.loads(manifest.read_text())
    data["cases"][0]["dtype"] = bad
    manifest.write_text(json.dumps(data))
    status, out, err = run(capsys, "compare", "--manifest", manifest, "--actual-dir", device,
                           "--json", tmp_path / "r.json")
    assert (status, err) == (3, "")  # that case is an ERROR, the others are judged
    name = data["cases"][0]["name"]
    reason = (f"--manifest: {name}: field 'dtype': unknown dtype {bad!r}; accepted: "
              f"{choices()}")
    assert f"ERROR {name} ttk-close: {reason}\n" in out
    report = json.loads((tmp_path / "r.json").read_text())
    assert report["cases"][0]["error"] == reason
    assert report["counts"]["PASS"] == len(data["cases"]) - 1


def test_a_missing_dtype_is_named_as_missing(tmp_path, capsys):
    manifest, device = _campaign(tmp_path)
    data = json.loads(manifest.read_text())
    del data["cases"][0]["dtype"]
    manifest.write_text(json.dumps(data))
    status, out, _ = run(capsys, "compare", "--manifest", manifest, "--actual-dir", device)
    assert status == 3
    assert f"ERROR {data['cases'][0]['name']} ttk-close: --manifest: " \
           f"{data['cases'][0]['name']}: missing 'dtype'\n" in out
