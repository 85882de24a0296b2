"""Inputs and goldens for a set of cases, written to a folder with a manifest.

For every case:

- **inputs**: input ``k`` is drawn from ``numpy.random.default_rng([seed, k])``,
  where ``seed`` (written to the manifest) is derived from the case's name and
  the run's ``--seed``, so a rerun gives the same bits.  A range ``[lo, hi]``
  gives ``(1 - u) * lo + u * hi`` for ``u = rng.random()`` in float64 (the
  real and imaginary parts one after the other for complex), clipped to the
  dtype's values inside the range, then rounded to the dtype; a single value
  (``nan``, ``inf``, ``-inf``, or ``(v, v)``) fills every value (both parts
  for complex).
- **golden**: computed with this package's kernels from the input files as
  written, and cast to the case's output dtype.

Everything streams in chunks of :data:`CHUNK` values, so memory stays
bounded whatever the case's size; cases whose inputs broadcast against each
other (their shapes differ) are computed whole.
"""
import hashlib
import json
import math
import os
import re
import shutil

import numpy as np

from .._numpy._function import sigmoid_backward
from .._numpy._ufunc import ufunc
from .._tools._paths import check_directory
from ._atomic_write import Folder, Signals, WriteError
from ._bits import inner_bounds, real_part_dtype, rounded
from ._casefile import cases as read_cases
from ._casefile_checks import checked_case
from ._dtype_names import name_of
from ._errors import CaseFileError, GoldenError
from ._files import ArrayFile, write_chunks

CHUNK = 1 << 22  # values per chunk: 32 MiB of float64 scratch
FORMATS = ("bin", "npy")
OUT_DIR = "a directory (made if missing)"


def case_seed(name, seed=0):
    """The seed of a case: 63 bits of SHA-256 of the run's seed and its name."""
    digest = hashlib.sha256(f"{int(seed)}:{name}".encode()).digest()
    return int.from_bytes(digest[:8], "little") >> 1


def input_chunks(inp, seed, index, chunk=CHUNK):
    """The values of input ``index`` of a case, in C-order chunks.  Each
    chunk reuses the previous one's memory: write it before the next."""
    real = real_part_dtype(inp.dtype)
    per_value = 2 if inp.dtype.kind == "c" else 1
    size = int(np.prod(inp.shape, dtype=np.int64))
    rng = np.random.default_rng([seed, index])
    most = min(chunk, size) * per_value
    parts = np.empty(most, real)  # buffers made once: no churn in the allocator
    if len(inp.range) == 1:
        parts[:] = rounded(inp.range[0], real)
    else:
        lo, hi = (float(b) for b in inner_bounds(real, *inp.range))
        u, scaled = np.empty(most), np.empty(most)
    for start in range(0, size, chunk):
        n = min(chunk, size - start) * per_value
        if len(inp.range) == 2:
            rng.random(out=u[:n])
            np.multiply(u[:n], float(inp.range[1]), out=scaled[:n])
            np.subtract(1.0, u[:n], out=u[:n])
            u[:n] *= float(inp.range[0])
            u[:n] += scaled[:n]
            np.clip(u[:n], lo, hi, out=u[:n])
            np.copyto(parts[:n], u[:n], casting="unsafe")  # rounds to the dtype
        yield parts[:n].view(inp.dtype)


def _file_name(case_name, part, fmt):
    """A plain file name in the folder: every character outside
    ``[A-Za-z0-9._-]`` of the case's and the input's names (which the
    Python API takes as given) becomes ``_``, so no name leaves the folder."""
    return re.sub(r"[^A-Za-z0-9._-]", "_", f"{case_name}_{part}") + f".{fmt}"


def _golden_chunks(case, files, chunk):
    """The golden in chunks, from the input files as written (the folder is
    locked meanwhile: no other run can have replaced them)."""
    g, y = (files[case.operand(role)] for role in ("grad_output", "output"))
    if g.shape != y.shape:  # broadcasting: whole arrays
        result = sigmoid_backward(g.read(), y.read())
        yield np.asarray(result).astype(case.dtype, copy=False).reshape(-1)
        return
    # Computed in the inputs' promotion, then cast to the case's dtype, as
    # the operator casts into gradInput.
    computed = ufunc.resolve_dtypes((g.dtype, y.dtype, None))[2]
    out = np.empty(min(chunk, case.size), case.dtype)
    for g_part, y_part in zip(g.chunks(chunk), y.chunks(chunk), strict=True):
        yield sigmoid_backward(g_part, y_part, out=out[:g_part.size], dtype=computed)


def _write(folder, name, chunks, dtype, shape, fmt, signals):
    folder.replace(name, lambda f: write_chunks(f, chunks, dtype, shape, fmt == "npy"),
                   signals)


def generate_case(case, out_dir, fmt="bin", seed=0, signals=None, chunk=CHUNK):
    """Write one case's inputs and golden to ``out_dir`` (a path, or an open
    :class:`Folder`); return its manifest entry."""
    if not isinstance(out_dir, Folder):
        with Folder(out_dir) as folder:
            return generate_case(case, folder, fmt, seed, signals, chunk)
    signals = Signals() if signals is None else signals
    cseed = case_seed(case.name, seed)
    entry = {"name": case.name, "dtype": name_of(case.dtype), "shape": list(case.shape),
             "inputs": [], "golden": _file_name(case.name, "golden", fmt), "format": fmt,
             "seed": cseed, "tolerance": case.tolerance}
    if case.standard is not None:  # an ATK case's "standard": compare --manifest applies it
        entry["standard"] = case.standard
    files = []
    for k, inp in enumerate(case.inputs):
        name = _file_name(case.name, inp.name, fmt)
        _write(out_dir, name, input_chunks(inp, cseed, k, chunk), inp.dtype, inp.shape, fmt,
               signals)
        files.append(ArrayFile(os.path.join(out_dir.path, name), f"--out-dir: {inp.name}",
                               inp.dtype, inp.shape, nofollow=True))
        entry["inputs"].append({"name": inp.name, "file": name, **inp.as_json()})
    _write(out_dir, entry["golden"], _golden_chunks(case, files, chunk), case.dtype,
           case.shape, fmt, signals)
    return entry


def check_file_names(found, fmt):
    """Refuse, before anything is written, two files of the run whose names
    are equal or differ only in letter case ("Case_A" and "case_a"): on a
    case-insensitive file system (macOS, Windows) they are one file, and the
    later case would overwrite the earlier one's.  Compared by
    ``str.casefold()`` over every file the run writes (manifest.json cannot
    clash: every other name ends in ``_<input or golden>.<format>``)."""
    seen: dict[str, tuple[int, str]] = {}  # casefolded name -> (its case's index, name)
    for n, case in enumerate(found):
        for part in (*(inp.name for inp in case.inputs), "golden"):
            name = _file_name(case.name, part, fmt)
            first, first_name = seen.setdefault(name.casefold(), (n, name))
            if first == n:  # (a case's own names differ: its parts' names do)
                continue
            other = found[first].name
            if first_name == name:
                raise CaseFileError(f"--cases: cases {other!r} and {case.name!r} would both "
                                    f"write {name}: rename one")
            raise CaseFileError(f"--cases: cases {other!r} and {case.name!r} would "
                                f"write {first_name} and {name}, one file where letter case "
                                f"does not count (macOS, Windows): rename one")


def case_bytes(case, fmt):
    """The bytes a case's files take (headers aside): its inputs and golden."""
    return sum(math.prod(shape) * np.dtype(dtype).itemsize for dtype, shape in
               ((case.dtype, case.shape), *((i.dtype, i.shape) for i in case.inputs)))


def _free_bytes(path):
    """The free space of the disk ``path`` is (or would be made) on."""
    probe = os.path.abspath(path)
    while not os.path.isdir(probe) and os.path.dirname(probe) != probe:
        probe = os.path.dirname(probe)
    try:
        return shutil.disk_usage(probe).free
    except OSError:
        return None


def check_size(found, out_dir, fmt, max_bytes):
    """Refuse, before anything is written, a case set larger than
    ``max_bytes`` (None: the free space of the disk); name the largest case."""
    limit = _free_bytes(out_dir) if max_bytes is None else max_bytes
    if limit is None or not found:
        return
    sizes = [case_bytes(case, fmt) for case in found]
    total = sum(sizes)
    if total > limit:
        big = max(range(len(found)), key=sizes.__getitem__)
        what = "--max-bytes" if max_bytes is not None else "the free disk space"
        raise CaseFileError(f"--cases: the cases need {total:,} bytes, more than {what} "
                            f"({limit:,}); the largest, {found[big].name}, "
                            f"{sizes[big]:,} bytes")


def generate(source, out_dir, *, fmt="bin", seed=0, log=None, signals=None, max_bytes=None):
    """Generate inputs and goldens for a set of cases, and their manifest.

    Parameters
    ----------
    source : str, os.PathLike or list of Case
        A case file (ATK json, TTK kernel or aclnn csv), or its cases (checked
        as a file's are: input names, dtypes, shapes, ranges, tolerances).
    out_dir : str or os.PathLike
        The folder to write to (made if missing); file names in the
        manifest are relative to it.  It is locked while the cases are
        written: a second run into it is refused.
    fmt : {"bin", "npy"}
        Raw little-endian values, or NumPy's format.
    seed : int
        Mixed with each case's name into the case's seed.
    log : callable, optional
        Called with a line of progress after each case (``ERROR ...`` for
        a case whose files could not be written).
    signals : Signals, optional
        The signal handling in force (the command line's); none by default.
    max_bytes : int, optional
        The most the files may take; by default the disk's free space.

    Returns
    -------
    dict
        The manifest, also written to ``out_dir/manifest.json``:
        ``{"cases": [{"name", "dtype", "shape", "inputs": [{"name", "file",
        "dtype", "shape", "range"}], "golden", "format", "seed",
        "tolerance"}]}``.  A case whose files could not be written (a full
        disk, a symlink in the folder) has ``"error"``: the reason, and the
        others are written all the same.

    Raises
    ------
    CaseFileError, GoldenError
        Before anything is written: a bad argument or case, no cases, two
        cases whose files' names differ only in letter case, a case set too
        large, the folder in use by another run.
    """
    if fmt not in FORMATS:
        raise GoldenError(f"--format: {fmt!r} is not one of {', '.join(FORMATS)}")
    if isinstance(seed, bool) or not isinstance(seed, int | np.integer):
        raise GoldenError(f"--seed: {seed!r} is not an integer")
    if max_bytes is not None and (isinstance(max_bytes, bool)
                                  or not isinstance(max_bytes, int | np.integer)
                                  or max_bytes < 0):
        raise GoldenError(f"--max-bytes: {max_bytes!r} is not an integer >= 0")
    found = read_cases(source) if isinstance(source, str | os.PathLike) \
        else [checked_case(case) for case in source]
    if not found:  # its manifest would compare nothing: compare --manifest refuses it
        what = os.fspath(source) if isinstance(source, str | os.PathLike) else "the list"
        raise CaseFileError(f"--cases: {what} has no cases: nothing to generate")
    out_dir = os.fspath(out_dir)
    check_file_names(found, fmt)
    check_size(found, out_dir, fmt, max_bytes)
    if os.path.exists(out_dir) or os.path.islink(out_dir):
        check_directory(out_dir, "--out-dir", OUT_DIR, WriteError)
    try:
        os.makedirs(out_dir, exist_ok=True)
    except OSError as exc:  # strerror: the message without the path again
        raise WriteError(f"--out-dir: cannot make {out_dir}: "
                         f"{exc.strerror or exc}") from None
    signals = Signals() if signals is None else signals
    with Folder(out_dir) as folder:
        folder.lock()
        manifest: dict[str, list] = {"cases": []}
        for n, case in enumerate(found, 1):
            try:
                entry = generate_case(case, folder, fmt, seed, signals)
                line = (f"{n}/{len(found)} {case.name}: {name_of(case.dtype)} "
                        f"[{', '.join(map(str, case.shape))}], {case.size:,} values")
            except (WriteError, GoldenError, MemoryError) as exc:
                # One case lost, not the campaign: the others go on.
                reason = " ".join((str(exc) or "not enough memory").split())
                entry = {"name": case.name, "dtype": name_of(case.dtype),
                         "shape": list(case.shape), "golden": None, "format": fmt,
                         "error": reason}
                line = f"{n}/{len(found)} ERROR {case.name}: {reason}"
            manifest["cases"].append(entry)
            if log is not None:
                log(line)
        # A case a line: readable, and diffs well.
        text = '{"cases": [\n' + ",\n".join(json.dumps(c, allow_nan=False)
                                             for c in manifest["cases"]) + "\n]}\n"
        folder.replace("manifest.json", lambda f: f.write(text.encode()), signals)
    return manifest
