"""``compare --manifest``: the manifest's cases, each opened (its golden and
the device's output) or refused in one line."""
import json
import os

from .._tools._paths import check_directory
from ._casefile_checks import check_tolerance
from ._dtype_names import choices, lookup
from ._dumps import open_output
from ._errors import GoldenError
from ._files import ArrayFile, read_small
from ._standards import ATK_ACC, STANDARDS, resolve

MANIFEST_FILE = "a manifest.json written by golden --cases"


def _load_manifest(manifest, actual_dir):
    """The manifest's list of cases, or a GoldenError (exit 2, nothing
    written) when the manifest itself cannot be read."""
    try:
        data = read_small(manifest, "--manifest", MANIFEST_FILE)
        check_directory(actual_dir, "--actual-dir", "a directory of the device's outputs",
                        GoldenError)
        cases = json.loads(data.decode("utf-8"))["cases"]
        if not isinstance(cases, list):
            raise TypeError("'cases' is not a list")
    except RecursionError:
        raise GoldenError(f"--manifest: {manifest}: JSON nested too deeply to be a "
                          f"manifest") from None
    except OSError as exc:
        raise GoldenError(f"--manifest: cannot read {manifest}: {exc}") from None
    except (ValueError, KeyError, TypeError) as exc:  # UnicodeDecodeError too
        if isinstance(exc, GoldenError):
            raise
        raise GoldenError(f"--manifest: {manifest} is not a manifest of golden --cases "
                          f"({type(exc).__name__}: {exc})") from None
    if not cases:  # a campaign that compares nothing must not pass
        raise GoldenError(f"--manifest: {manifest} has no cases: nothing to compare")
    return cases


def _case_name(case, n):
    name = case.get("name") if isinstance(case, dict) else None
    return name if isinstance(name, str) and name else f"case #{n}"


def _plain_name(value, where):
    """A file name of the manifest: one plain name inside its folder.  An
    absolute path, a ``..`` or a separator would read a file elsewhere."""
    if not isinstance(value, str) or not value or value in (".", "..") \
            or os.path.basename(value) != value or (os.altsep or "/") in value \
            or "\0" in value:
        raise GoldenError(f"{where}: golden {value!r} is outside the manifest's folder, "
                          f"refused: it must be a plain file name")
    return value


def _case_standard(case, where):
    """The standard a manifest case asks for (ATK's ``"standard": {"acc":
    ...}``, kept by golden --cases), or None."""
    acc = case.get("standard")
    if acc is None:
        return None
    try:
        return ATK_ACC.get(acc, None) or resolve(acc)
    except (KeyError, TypeError):
        raise GoldenError(f"{where}: unknown standard {acc!r}; known: "
                          f"{', '.join([*ATK_ACC, *STANDARDS])}") from None


def _open_case(case, n, folder, actual_dir, names, bf16_as):
    """(name, [actual, golden], tolerance) of a case of the
    manifest, or a GoldenError saying, in one line, why the case cannot be
    judged.  ``names``: --map's device file names; ``bf16_as``: how the
    device stored a bfloat16 output."""
    name = _case_name(case, n)
    where = f"--manifest: {name}"
    if not isinstance(case, dict):
        raise GoldenError(f"{where}: not a case object")
    if "error" in case:
        raise GoldenError(f"{where}: golden --cases could not write it: {case['error']}")
    missing = [key for key in ("dtype", "shape", "golden") if key not in case]
    if missing:
        raise GoldenError(f"{where}: missing {', '.join(map(repr, missing))}")
    try:
        dtype = lookup(case["dtype"])
    except KeyError:
        raise GoldenError(f"{where}: field 'dtype': unknown dtype {case['dtype']!r}; "
                          f"accepted: {choices()}") from None
    try:
        shape = case["shape"]
        if not isinstance(shape, list) or not all(
                isinstance(d, int) and not isinstance(d, bool) and d >= 0 for d in shape):
            raise GoldenError(f"{where}: shape {shape!r} is not a list of integers >= 0")
        golden = _plain_name(case["golden"], where)
    except TypeError as exc:
        raise GoldenError(f"{where}: {exc}") from None
    tolerance = case.get("tolerance")
    try:
        check_tolerance(tolerance, f"{name}")
    except GoldenError as exc:
        raise GoldenError(f"--manifest: {str(exc).removeprefix('--cases: ')}") from None
    golden_file = ArrayFile(os.path.join(folder, golden), f"{where}: golden", dtype,
                            tuple(shape), nofollow=True)
    own = names.get(name, names.get(golden, golden))  # read_map's are plain names too
    actual = open_output(os.path.join(actual_dir, own), f"{where}: --actual-dir", dtype,
                         tuple(shape), bf16_as)
    return name, [actual, golden_file], tolerance


def _manifest_files(cases, folder, actual_dir, names):
    """(what, path) of every golden and device output a manifest's cases
    name, as _open_case will read them (names it will refuse are left out)."""
    for n, case in enumerate(cases):
        if not isinstance(case, dict) or "error" in case:
            continue
        where = f"--manifest: {_case_name(case, n)}"
        try:
            golden = _plain_name(case.get("golden"), where)
        except GoldenError:
            continue
        yield f"{where}: golden", os.path.join(folder, golden)
        own = names.get(_case_name(case, n), names.get(golden, golden))
        yield f"{where}: --actual-dir", os.path.join(actual_dir, own)
