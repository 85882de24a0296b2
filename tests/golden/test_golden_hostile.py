"""golden and compare under hostile input: every refusal is one line naming
the path, case or field; nothing outside the folder is written or read;
no partial file remains.

Each test plants a folder ``outside`` beside the campaign's folders and
checks, after the run, that it is byte for byte, link for link, as it was."""
import csv
import io
import json
import math
import os
import subprocess
import sys
import threading
from pathlib import Path

import numpy as np
import pytest

from sigmoid_backward import sigmoid_backward
from sigmoid_backward.golden import (
    Case,
    CaseFileError,
    GoldenError,
    Input,
    _files,
    compare,
    generate,
)
from sigmoid_backward.golden import cases as read_case_file
from sigmoid_backward.golden._atomic_write import Folder
from sigmoid_backward.golden._bits import real_part_dtype
from sigmoid_backward.golden._dtype_names import lookup
from sigmoid_backward.golden._files import ArrayFile

from golden_support import TTK_ACLNN, files, one_line_error, passing_campaign, run, tmp_files

SECRET = np.array([3.25, -7.5, 1e30], np.float32)


def _snapshot(root):
    """Every entry under ``root``: its kind, and its bytes or link target."""
    found = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            path = Path(dirpath) / name
            if path.is_symlink():
                found[str(path)] = ("link", os.readlink(path))
            elif path.is_file():
                found[str(path)] = ("file", path.read_bytes())
            else:
                found[str(path)] = ("dir", None)
    return found


@pytest.fixture
def outside(tmp_path):
    """A folder of files a hostile case file or manifest aims at."""
    folder = tmp_path / "outside"
    folder.mkdir()
    (folder / "victim").write_bytes(b"precious")
    (folder / "manifest.json").write_text('{"cases": []}\n')
    SECRET.tofile(folder / "secret.bin")
    before = _snapshot(tmp_path / "outside")
    yield folder
    assert _snapshot(tmp_path / "outside") == before, "something outside changed"


def _no_partial(folder):
    assert tmp_files(folder) == [] if Path(folder).exists() else True


def _atk(shape=(4,), dtype="float32", range_values=(-1, 1), n=1):
    return json.dumps([{"id": i, "aclnn_name": "aclnnSigmoidBackward", "inputs": [
        {"name": name, "dtype": dtype, "shape": list(shape), "range_values": list(range_values)}
        for name in ("gradOutput", "output")]} for i in range(n)])


# --- writes escape the output folder --------------------------------------------------

def test_a_symlink_planted_in_out_dir_is_refused_not_followed(tmp_path, capsys, outside):
    (tmp_path / "cases.json").write_text(_atk(n=2))
    out = tmp_path / "out"
    out.mkdir()
    (out / "aclnnSigmoidBackward_0_golden.bin").symlink_to(outside / "victim")
    status, stdout, err = run(capsys, "golden", "--cases", tmp_path / "cases.json",
                              "--out-dir", out)
    assert (status, err) == (3, "")  # one case lost, the other written, the manifest too
    lines = stdout.splitlines()
    assert lines[0] == (f"1/2 ERROR aclnnSigmoidBackward_0: --out-dir: "
                        f"{out / 'aclnnSigmoidBackward_0_golden.bin'} is a symlink, refused: "
                        f"files in the folder are replaced only when regular, never written "
                        f"through a link")
    assert lines[1].startswith("2/2 aclnnSigmoidBackward_1: float32")
    assert lines[2].endswith("ERROR (not written): aclnnSigmoidBackward_0")
    manifest = json.loads((out / "manifest.json").read_text())
    assert "error" in manifest["cases"][0] and "error" not in manifest["cases"][1]
    assert (out / "aclnnSigmoidBackward_0_golden.bin").is_symlink()
    _no_partial(out)
    # compare reports the lost case as ERROR, with golden's reason
    (tmp_path / "device").mkdir()
    status, stdout, err = run(capsys, "compare", "--manifest", out / "manifest.json",
                              "--actual-dir", out)
    assert (status, err) == (3, "")
    assert stdout.startswith("ERROR aclnnSigmoidBackward_0 ttk-close: --manifest: "
                             "aclnnSigmoidBackward_0: golden --cases could not write it: ")


def test_a_planted_manifest_symlink_is_refused(tmp_path, capsys, outside):
    (tmp_path / "cases.json").write_text(_atk())
    out = tmp_path / "out"
    out.mkdir()
    (out / "manifest.json").symlink_to(outside / "manifest.json")
    status, _, err = run(capsys, "golden", "--cases", tmp_path / "cases.json",
                         "--out-dir", out)
    one_line_error(status, err, f"--out-dir: {out / 'manifest.json'} is a symlink, refused",
                   code=3)
    assert (out / "manifest.json").is_symlink()
    _no_partial(out)


def test_names_from_the_python_api_stay_in_the_folder(tmp_path, outside):
    """A case name is made a plain file name; an input name must be one of
    the operator's, else nothing is written at all."""
    inputs = (Input("gradOutput", np.dtype(np.float32), (3,), (-1.0, 1.0)),
              Input("output", np.dtype(np.float32), (3,), (0.0, 1.0)))
    case = Case("/../../outside/victim", inputs, np.dtype(np.float32), (3,))
    manifest = generate([case], tmp_path / "out" / "deeper")
    assert manifest["cases"][0]["golden"] == "_.._.._outside_victim_golden.bin"
    assert files(tmp_path / "out" / "deeper") == [
        "_.._.._outside_victim_golden.bin", "_.._.._outside_victim_gradOutput.bin",
        "_.._.._outside_victim_output.bin", "manifest.json"]
    hostile = Case("c", (inputs[0], Input("/../../ESCAPED", np.dtype(np.float32), (3,),
                                          (0.0, 1.0))), np.dtype(np.float32), (3,))
    with pytest.raises(GoldenError, match="case 'c': unknown input '/../../ESCAPED'"):
        generate([hostile], tmp_path / "new")
    assert not (tmp_path / "new").exists() and not (tmp_path / "ESCAPED_output.bin").exists()
    assert not any(p.name.endswith("ESCAPED.bin") for p in tmp_path.rglob("*"))


# --- a false PASS: wrapped shapes ----------------------------------------------------

def _header_only(path, shape):
    """A .npy whose header claims ``shape`` and that holds no data."""
    header = {"descr": "<f4", "fortran_order": False, "shape": shape}
    with open(path, "wb") as f:
        np.lib.format.write_array_header_1_0(f, header)


@pytest.mark.parametrize("shape", [(2 ** 32, 2 ** 32), (2 ** 62, 3), (2 ** 63 - 1, 2)])
def test_a_header_whose_count_wraps_int64_is_too_large(tmp_path, capsys, outside, shape):
    for name in ("a.npy", "g.npy"):
        _header_only(tmp_path / name, shape)
    status, out, err = run(capsys, "compare", tmp_path / "a.npy", tmp_path / "g.npy",
                           "--json", tmp_path / "r.json")
    one_line_error(status, err, f"ACTUAL: {tmp_path / 'a.npy'} declares shape "
                                f"{','.join(map(str, shape))}: too large", command="compare")
    assert out == "" and not (tmp_path / "r.json").exists()
    _no_partial(tmp_path)


# --- reads outside the manifest's folder -----------------------------------------------

def test_manifest_paths_outside_its_folder_are_refused(tmp_path, capsys, outside):
    generate(TTK_ACLNN, tmp_path / "golden")
    manifest = json.loads((tmp_path / "golden" / "manifest.json").read_text())
    cases = manifest["cases"][:4]
    for case in cases:
        case.update(dtype="float32", shape=[3])
    cases[0]["golden"] = str(outside / "secret.bin")       # absolute
    cases[1]["golden"] = "../outside/secret.bin"           # relative, climbing
    cases[2]["golden"] = "link.bin"                        # a link inside, to outside
    (tmp_path / "golden" / "link.bin").symlink_to(outside / "secret.bin")
    cases[3]["golden"] = "sub/../../outside/secret.bin"
    (tmp_path / "golden" / "manifest.json").write_text(json.dumps({"cases": cases}))
    device = tmp_path / "device"
    device.mkdir()
    for name in ("secret.bin", "link.bin"):
        SECRET.tofile(device / name)
    status, out, err = run(capsys, "compare", "--manifest", tmp_path / "golden" /
                           "manifest.json", "--actual-dir", device, "--json",
                           tmp_path / "r.json")
    assert (status, err) == (3, "")
    report = json.loads((tmp_path / "r.json").read_text())
    assert report["counts"] == {"PASS": 0, "WARNING": 0, "FAIL": 0, "ERROR": 4}
    reasons = [c["error"] for c in report["cases"]]
    for reason, case in zip(reasons[:2] + reasons[3:], cases[:2] + cases[3:], strict=True):
        assert f"golden {case['golden']!r} is outside the manifest's folder, refused" in reason
    assert reasons[2].endswith(f"{tmp_path / 'golden' / 'link.bin'} is a symlink, refused: "
                               f"the file must be in the folder itself")
    assert "3.25" not in (tmp_path / "r.json").read_text()  # no value read from outside
    _no_partial(tmp_path)


# --- partial output: arguments checked before the first write -----------------------------

@pytest.mark.parametrize("cell, words", [
    ('"((nan, -1),)"', "precision_tolerances: rtol nan is not finite and >= 0"),
    ('"((0.001, -1),)"', "precision_tolerances: ptol -1.0 is not in [0, 1]"),
    ('"((0.001, 2),)"', "precision_tolerances: ptol 2.0 is not in [0, 1]"),
    ('"((inf, 0.001),)"', "precision_tolerances: rtol inf is not finite and >= 0"),
])
def test_nan_or_negative_tolerances_are_refused_before_any_write(tmp_path, capsys, outside,
                                                                 cell, words):
    rows = list(csv.reader(io.StringIO(TTK_ACLNN.read_text())))
    column = rows[0].index("precision_tolerances")
    rows[1][column] = json.loads(cell)
    out = io.StringIO()
    csv.writer(out).writerows(rows)
    (tmp_path / "cases.csv").write_text(out.getvalue())
    status, stdout, err = run(capsys, "golden", "--cases", tmp_path / "cases.csv",
                              "--out-dir", tmp_path / "out")
    one_line_error(status, err, f"{tmp_path / 'cases.csv'}: {rows[1][0]}: {words}")
    assert stdout == "" and not (tmp_path / "out").exists()


@pytest.mark.parametrize("kwargs, words", [
    ({"tolerance": {"rtol": math.nan}}, "tolerance: rtol nan is not finite and >= 0"),
    ({"tolerance": {"atol": -1.0}}, "tolerance: atol -1.0 is not finite and >= 0"),
    ({"tolerance": {"ptol": 1.5}}, "ptol 1.5 is not in [0, 1]"),
    ({"tolerance": {"eps": 1.0}}, "unknown tolerance 'eps'"),
    ({"k": -1}, "k: -1 is not an integer >= 0"),
    ({"k": 2.5}, "k: 2.5 is not an integer >= 0"),
])
def test_compare_refuses_bad_tolerances_and_k(kwargs, words):
    a = np.ones(10, np.float32)
    with pytest.raises(GoldenError) as exc:
        compare(a, a, **kwargs)
    assert words in str(exc.value) and "\n" not in str(exc.value), str(exc.value)


# --- concurrent runs into one folder ------------------------------------------------------

def test_a_folder_being_written_is_refused(tmp_path, capsys, outside):
    (tmp_path / "cases.json").write_text(_atk())
    (tmp_path / "out").mkdir()
    with Folder(tmp_path / "out") as held:
        held.lock()
        status, _, err = run(capsys, "golden", "--cases", tmp_path / "cases.json",
                             "--out-dir", tmp_path / "out")
    one_line_error(status, err, f"--out-dir: {tmp_path / 'out'} is being written by another "
                                f"run")
    assert files(tmp_path / "out") == []


def test_concurrent_seeds_never_leave_a_golden_that_does_not_match_its_inputs(tmp_path,
                                                                               outside):
    """Runs into one folder with different seeds: each is written whole, or
    refused at once (exit 2); whatever is left, each golden is its inputs'."""
    procs = [subprocess.Popen([sys.executable, "-m", "sigmoid_backward", "golden", "--cases",
                               str(TTK_ACLNN), "--out-dir", "out", "--seed", str(seed)],
                              cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                              text=True) for seed in range(6)]
    results = [(p.wait(timeout=600), p.stderr.read()) for p in procs]
    for p in procs:
        p.stderr.close()
    assert all(status == 0 or (status == 2 and "is being written by another run" in err)
               for status, err in results), results
    assert any(status == 0 for status, _ in results)
    manifest = json.loads((tmp_path / "out" / "manifest.json").read_text())
    for case in manifest["cases"]:
        arrays = {i["name"]: ArrayFile(tmp_path / "out" / i["file"], i["name"],
                                       lookup(i["dtype"]), tuple(i["shape"])).read()
                  for i in case["inputs"]}
        golden = ArrayFile(tmp_path / "out" / case["golden"], "golden", lookup(case["dtype"]),
                           tuple(case["shape"])).read()
        expected = np.asarray(sigmoid_backward(arrays["gradOutput"], arrays["output"]))
        assert compare(golden, expected.astype(golden.dtype)).bit_exact_ratio == 1.0, \
            case["name"]
    _no_partial(tmp_path / "out")


# --- unbounded: special files, deep and huge text, huge shapes ----------------------------

@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
def test_a_fifo_in_the_campaign_is_an_error_without_blocking(tmp_path, capsys, outside):
    _, device, manifest = passing_campaign(tmp_path)
    first, second = manifest["cases"][0]["golden"], manifest["cases"][1]["golden"]
    (device / first).unlink()
    os.mkfifo(device / first)              # the device's output a FIFO
    (tmp_path / "golden" / second).unlink()
    os.mkfifo(tmp_path / "golden" / second)  # the golden a FIFO
    done = []
    worker = threading.Thread(target=lambda: done.append(run(
        capsys, "compare", "--manifest", tmp_path / "golden" / "manifest.json",
        "--actual-dir", device)), daemon=True)
    worker.start()
    worker.join(120)
    assert done, "compare blocked on a FIFO"
    status, out, err = done[0]
    assert (status, err) == (3, "")
    lines = out.splitlines()
    assert lines[0].startswith("ERROR ") and "is a FIFO (named pipe), not a regular file" \
        in lines[0]
    assert lines[1].startswith("ERROR ") and "is a FIFO (named pipe), not a regular file" \
        in lines[1]
    assert sum(line.startswith("PASS ") for line in lines) == len(manifest["cases"]) - 2


def test_dev_zero_as_an_output_is_refused(tmp_path, capsys, outside):
    np.zeros(4, np.float32).tofile(tmp_path / "g.bin")
    status, out, err = run(capsys, "compare", "/dev/zero", tmp_path / "g.bin", "--dtype",
                           "float32")
    one_line_error(status, err, "ACTUAL: /dev/zero is a character device, not a regular file",
                   command="compare")


def test_deeply_nested_json_is_one_line_exit_2(tmp_path, capsys, outside):
    (tmp_path / "deep.json").write_text("[" * 200_000 + "]" * 200_000)
    status, out, err = run(capsys, "golden", "--cases", tmp_path / "deep.json", "--out-dir",
                           tmp_path / "out")
    one_line_error(status, err, f"--cases: {tmp_path / 'deep.json'}: JSON nested too deeply")
    assert not (tmp_path / "out").exists()
    (tmp_path / "device").mkdir()
    (tmp_path / "m.json").write_text('{"cases": ' + "[" * 200_000 + "]" * 200_000 + "}")
    status, out, err = run(capsys, "compare", "--manifest", tmp_path / "m.json",
                           "--actual-dir", tmp_path / "device", "--json", tmp_path / "r.json")
    one_line_error(status, err, f"--manifest: {tmp_path / 'm.json'}: JSON nested too deeply",
                   command="compare")
    assert not (tmp_path / "r.json").exists()


def test_a_huge_csv_field_is_one_line_exit_2(tmp_path, capsys, outside):
    text = TTK_ACLNN.read_text().splitlines()
    text[1] = text[1] + "," + "x" * (200 * 1024)
    (tmp_path / "cases.csv").write_text("\n".join(text) + "\n")
    status, out, err = run(capsys, "golden", "--cases", tmp_path / "cases.csv", "--out-dir",
                           tmp_path / "out")
    one_line_error(status, err, f"--cases: {tmp_path / 'cases.csv'} is not a readable csv: "
                                f"field larger than field limit")
    assert not (tmp_path / "out").exists()


def test_a_huge_shape_is_too_large_not_unbroadcastable(tmp_path, capsys, outside):
    (tmp_path / "cases.json").write_text(_atk(shape=(2 ** 32, 2 ** 32)))
    status, _, err = run(capsys, "golden", "--cases", tmp_path / "cases.json", "--out-dir",
                         tmp_path / "out")
    one_line_error(status, err, "aclnnSigmoidBackward_0: gradOutput: shape [4294967296, "
                                "4294967296] is too large (18446744073709551616 values)")
    assert not (tmp_path / "out").exists()


def test_a_case_larger_than_the_disk_is_refused_before_any_write(tmp_path, capsys, outside):
    """ops-nn's [1e12] float64 would stream 8 TB per input until the disk is
    full: refused at once against the free space, or --max-bytes."""
    (tmp_path / "cases.json").write_text(_atk(shape=(10 ** 12,), dtype="float64", n=2))
    status, out, err = run(capsys, "golden", "--cases", tmp_path / "cases.json", "--out-dir",
                           tmp_path / "out")
    one_line_error(status, err, "--cases: the cases need 48,000,000,000,000 bytes, more than "
                                "the free disk space", "the largest, aclnnSigmoidBackward_0, "
                                "24,000,000,000,000 bytes")
    assert out == "" and not (tmp_path / "out").exists()
    (tmp_path / "small.json").write_text(_atk(shape=(100,), n=2))
    status, out, err = run(capsys, "golden", "--cases", tmp_path / "small.json", "--out-dir",
                           tmp_path / "out", "--max-bytes", "2399")
    one_line_error(status, err, "--cases: the cases need 2,400 bytes, more than --max-bytes "
                                "(2,399)")
    assert out == "" and not (tmp_path / "out").exists()
    status, out, err = run(capsys, "golden", "--cases", tmp_path / "small.json", "--out-dir",
                           tmp_path / "out", "--max-bytes", "2400")
    assert (status, err) == (0, "")


# --- ranges ---------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32", "float64", "complex64"])
def test_an_infinite_range_spans_the_dtypes_finite_values(tmp_path, capsys, dtype):
    """ATK's ["-inf", "inf"]: values drawn over the dtype's whole finite range."""
    (tmp_path / "cases.json").write_text(_atk(shape=(4000,), dtype=dtype,
                                              range_values=("-inf", "inf")))
    status, _, err = run(capsys, "golden", "--cases", tmp_path / "cases.json", "--out-dir",
                         tmp_path / "out")
    assert (status, err) == (0, "")
    manifest = json.loads((tmp_path / "out" / "manifest.json").read_text())
    real = real_part_dtype(lookup(dtype))
    bits = np.array([np.inf], real).view(f"u{real.itemsize}") - 1  # the value below inf
    largest = float(bits.view(real)[0])
    inp = manifest["cases"][0]["inputs"][0]
    assert inp["range"] == [-largest, largest]
    values = ArrayFile(tmp_path / "out" / inp["file"], "x", lookup(dtype), (4000,)).read()
    parts = np.ascontiguousarray(values).view(real).astype(np.float64)
    assert np.isfinite(parts).all()
    assert parts.min() < -largest / 4 and parts.max() > largest / 4  # the whole range


def test_a_half_infinite_range(tmp_path, capsys):
    (tmp_path / "cases.json").write_text(_atk(shape=(1000,), dtype="float16",
                                              range_values=(0, "inf")))
    status, _, err = run(capsys, "golden", "--cases", tmp_path / "cases.json", "--out-dir",
                         tmp_path / "out")
    assert (status, err) == (0, "")
    manifest = json.loads((tmp_path / "out" / "manifest.json").read_text())
    assert manifest["cases"][0]["inputs"][0]["range"] == [0, 65504.0]


def test_a_fortran_order_golden_swapped_for_a_link_is_not_read(tmp_path):
    """A Fortran-order .npy is read whole when its chunks are asked for, a
    second open: with nofollow (a manifest's golden) that open refuses a
    symlink swapped in since the header was read, as the first did."""
    path = tmp_path / "g.npy"
    np.save(path, np.asfortranarray(np.arange(6.0).reshape(2, 3)))
    golden = ArrayFile(path, "--manifest: c: golden", nofollow=True)
    assert golden.fortran
    (tmp_path / "elsewhere").mkdir()
    secret = tmp_path / "elsewhere" / "secret.npy"
    np.save(secret, np.full((2, 3), 7.0))
    path.unlink()
    path.symlink_to(secret)
    with pytest.raises(GoldenError, match="link"):
        list(golden.chunks(4))


# --- a hostile --map --------------------------------------------------------------------

def _map_campaign(tmp_path):
    generate(TTK_ACLNN, tmp_path / "golden")
    (tmp_path / "device").mkdir()
    return ["--manifest", tmp_path / "golden" / "manifest.json", "--actual-dir",
            tmp_path / "device", "--json", tmp_path / "r.json"]


def _without_blocking(capsys, args, seconds=60):
    done = []
    worker = threading.Thread(target=lambda: done.append(run(capsys, "compare", *args)),
                              daemon=True)
    worker.start()
    worker.join(seconds)
    assert done, "compare blocked on --map"
    return done[0]


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
@pytest.mark.parametrize("how", ["fifo", "symlink to a fifo", "/dev/zero", "directory"])
def test_a_map_that_is_no_regular_file_is_refused_without_blocking(tmp_path, capsys, outside,
                                                                   how):
    args = _map_campaign(tmp_path)
    path = tmp_path / "map.json"
    if how == "fifo":
        os.mkfifo(path)
    elif how == "symlink to a fifo":
        os.mkfifo(tmp_path / "fifo")
        path.symlink_to(tmp_path / "fifo")
    elif how == "directory":
        path.mkdir()
    else:
        path = Path("/dev/zero")
    status, out, err = _without_blocking(capsys, [*args, "--map", path])
    one_line_error(status, err, f"--map: {path} is a", command="compare")
    assert out == "" and not (tmp_path / "r.json").exists()


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
def test_a_map_swapped_for_a_fifo_after_its_check_does_not_block(tmp_path, capsys, outside,
                                                                 monkeypatch):
    """The check sees a regular file; by the open, a FIFO is in its place:
    the open does not wait for a writer, and the open file is checked."""
    from sigmoid_backward._tools import _paths
    args = _map_campaign(tmp_path)
    (tmp_path / "regular.json").write_text("{}")
    os.mkfifo(tmp_path / "map.json")
    real = _paths._stat
    monkeypatch.setattr(_paths, "_stat", lambda path, *rest: real(
        tmp_path / "regular.json" if str(path) == str(tmp_path / "map.json") else path, *rest))
    status, out, err = _without_blocking(capsys, [*args, "--map", tmp_path / "map.json"])
    one_line_error(status, err, f"--map: {tmp_path / 'map.json'} is a FIFO (named pipe), not "
                                f"a regular file", command="compare")
    assert out == "" and not (tmp_path / "r.json").exists()


def test_a_huge_map_is_refused_before_it_is_read(tmp_path, capsys, outside):
    """A map over SMALL_FILE_BYTES (sparse: no disk taken) is refused by its
    size, not read into memory; one at the bound is read."""
    args = _map_campaign(tmp_path)
    limit = _files.SMALL_FILE_BYTES
    with open(tmp_path / "map.json", "wb") as f:
        f.truncate(limit + 1)
    status, out, err = run(capsys, "compare", *args, "--map", tmp_path / "map.json")
    one_line_error(status, err, f"--map: {tmp_path / 'map.json'} holds "
                                f"{limit + 1:,} bytes, more than the "
                                f"{limit:,} allowed", command="compare")
    assert out == "" and not (tmp_path / "r.json").exists()
    (tmp_path / "map.json").write_text(json.dumps({"x": "y" * (100 - 9)}))  # 100 bytes
    assert (tmp_path / "map.json").stat().st_size == 100
    assert _files.read_small(tmp_path / "map.json", "--map", "a map", limit=100) \
        == (tmp_path / "map.json").read_bytes()
    with pytest.raises(GoldenError, match="holds 100 bytes, more than the 99 allowed"):
        _files.read_small(tmp_path / "map.json", "--map", "a map", limit=99)
    status, _, err = run(capsys, "compare", *args, "--map", tmp_path / "map.json")
    assert status == 3 and err == ""  # read; the device folder is empty: every case ERROR


def test_a_huge_manifest_or_case_file_is_refused_before_it_is_read(tmp_path, capsys):
    """--manifest and --cases are read whole, as --map is: over
    SMALL_FILE_BYTES (sparse files: no disk taken) each is refused by its
    size, in one line, with nothing written."""
    limit = _files.SMALL_FILE_BYTES
    (tmp_path / "device").mkdir()
    for name in ("manifest.json", "cases.json"):
        with open(tmp_path / name, "wb") as f:
            f.truncate(limit + 1)
    status, out, err = run(capsys, "compare", "--manifest", tmp_path / "manifest.json",
                           "--actual-dir", tmp_path / "device", "--json", tmp_path / "r.json")
    one_line_error(status, err, f"--manifest: {tmp_path / 'manifest.json'} holds "
                                f"{limit + 1:,} bytes, more than the {limit:,} allowed",
                   command="compare")
    assert out == "" and not (tmp_path / "r.json").exists()
    status, out, err = run(capsys, "golden", "--cases", tmp_path / "cases.json", "--out-dir",
                           tmp_path / "out")
    one_line_error(status, err, f"--cases: {tmp_path / 'cases.json'} holds {limit + 1:,} "
                                f"bytes, more than the {limit:,} allowed")
    assert out == "" and not (tmp_path / "out").exists()
    with pytest.raises(CaseFileError, match="more than the"):
        read_case_file(tmp_path / "cases.json")


def test_a_map_through_a_symlink_is_read_as_the_manifest_is(tmp_path, capsys, outside):
    """--map names a file the user chose, as --manifest does: a symlink to a
    regular file is followed (only a manifest's own files must not be)."""
    args = _map_campaign(tmp_path)
    (outside / "map.json").write_text("{}")
    (tmp_path / "link.json").symlink_to(outside / "map.json")
    status, _, err = run(capsys, "compare", *args, "--map", tmp_path / "link.json")
    assert status == 3 and err == ""
    (outside / "map.json").unlink()  # leave `outside` as it was


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
@pytest.mark.parametrize("reader", ["npy under --bf16-as", "pt"])
def test_a_fifo_swapped_in_after_the_check_is_refused_without_blocking(tmp_path, monkeypatch,
                                                                       reader):
    """A device output that --bf16-as maps (.npy) or torch reads (.pt) is
    opened as the data files are: a FIFO put in its place after the path
    was checked (the check skipped here) is refused on the open file, where
    opening it by name would wait for a writer forever."""
    from sigmoid_backward.golden import _dumps
    if reader == "pt":
        pytest.importorskip("torch")
    fifo = tmp_path / ("out.pt" if reader == "pt" else "out.npy")
    os.mkfifo(fifo)
    monkeypatch.setattr(_dumps, "check_data_file", lambda path, what: None)
    done = []

    def read():
        try:
            _dumps.open_output(fifo, "ACTUAL", lookup("bfloat16"), (3,), bf16_as="uint16")
        except GoldenError as exc:
            done.append(str(exc))

    worker = threading.Thread(target=read, daemon=True)
    worker.start()
    worker.join(30)
    if not done:                     # unblock the reader before failing
        with open(fifo, "wb"):
            pass
    assert done == [f"ACTUAL: {fifo} is a FIFO (named pipe), not a regular file, expected "
                    f"a .npy or raw data file"]
