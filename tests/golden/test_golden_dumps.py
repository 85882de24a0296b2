"""compare reads device outputs as dump tools write them: bfloat16 in .npy
as float32 values or uint16 bits (--bf16-as), .pt tensors when torch is
installed, and outputs named otherwise than their goldens (--map)."""
import json

import numpy as np
import pytest

from dtypes_catalogue import BFLOAT16
from golden_support import one_line_error, run

GOLDEN = np.linspace(-1, 1, 1000).astype(BFLOAT16)


def _files(tmp_path, actual):
    np.save(tmp_path / "g.npy", GOLDEN)
    np.save(tmp_path / "a.npy", actual)
    return tmp_path / "a.npy", tmp_path / "g.npy"


@pytest.mark.parametrize("bf16_as, stored", [("float32", GOLDEN.astype(np.float32)),
                                              ("uint16", GOLDEN.view(np.uint16))])
def test_bfloat16_stored_otherwise(tmp_path, capsys, bf16_as, stored):
    a, g = _files(tmp_path, stored)
    status, out, _ = run(capsys, "compare", a, g, "--bf16-as", bf16_as)
    assert status == 0 and out.startswith("PASS bfloat16 [1000] ttk-close: 0 of 1000")
    status, _, err = run(capsys, "compare", a, g)  # without the flag: another dtype
    one_line_error(status, err, "bfloat16", bf16_as, command="compare", code=2)


def test_float32_that_is_not_a_bfloat16_value_is_refused(tmp_path, capsys):
    stored = GOLDEN.astype(np.float32)
    stored[7] += np.float32(1e-6)
    a, g = _files(tmp_path, stored)
    status, _, err = run(capsys, "compare", a, g, "--bf16-as", "float32")
    one_line_error(status, err, "a.npy", "not a bfloat16 value", command="compare", code=2)


def test_a_pt_tensor(tmp_path, capsys):
    torch = pytest.importorskip("torch")
    actual = GOLDEN.copy()
    actual[:3] = np.float32(2.0)
    np.save(tmp_path / "g.npy", GOLDEN)
    bits = torch.from_numpy(actual.view(np.int16).copy()).view(torch.bfloat16)
    torch.save(bits, tmp_path / "a.pt")
    status, out, _ = run(capsys, "compare", tmp_path / "a.pt", tmp_path / "g.npy")
    assert status == 1 and "ttk-close: 3 of 1000 mismatched" in out
    torch.save({"not": "a tensor"}, tmp_path / "d.pt")
    status, _, err = run(capsys, "compare", tmp_path / "d.pt", tmp_path / "g.npy")
    one_line_error(status, err, "d.pt", "not a tensor", command="compare", code=2)


def test_map_pairs_outputs_named_otherwise(tmp_path, capsys):
    cases = tmp_path / "c.csv"
    cases.write_text("testcase_name,input_dtypes,input_shapes,input_data_ranges\n"
                     "one,\"('float32', 'float32')\",\"((10,), (10,))\",\"((0, 1),)\"\n")
    assert run(capsys, "golden", "--cases", cases, "--out-dir", tmp_path / "out")[0] == 0
    device = tmp_path / "dev"
    device.mkdir()
    golden = np.fromfile(tmp_path / "out" / "one_golden.bin", np.float32)
    golden.tofile(device / "output_0.bin")
    manifest = tmp_path / "out" / "manifest.json"
    status, out, err = run(capsys, "compare", "--manifest", manifest, "--actual-dir", device)
    assert (status, err) == (3, "") and out.startswith("ERROR one ") and "one_golden.bin" in out
    (tmp_path / "map.json").write_text(json.dumps({"one": "output_0.bin"}))
    status, out, _ = run(capsys, "compare", "--manifest", manifest, "--actual-dir", device,
                         "--map", tmp_path / "map.json")
    assert status == 0 and out.startswith("PASS one float32 [10]")
    (tmp_path / "bad.json").write_text(json.dumps({"one": "../x.bin"}))
    status, _, err = run(capsys, "compare", "--manifest", manifest, "--actual-dir", device,
                         "--map", tmp_path / "bad.json")
    one_line_error(status, err, "--map", "plain file names", command="compare", code=2)
