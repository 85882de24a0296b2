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
import os
import re

import numpy as np

from .._atomic_write import Signals, WriteError, replace_file
from .._function import sigmoid_backward
from .._paths import check_directory
from .._ufunc import ufunc
from ._bits import inner_bounds, real_part_dtype, rounded
from ._casefile import cases as read_cases
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
    return f"{re.sub(r'[^A-Za-z0-9._-]', '_', case_name)}_{part}.{fmt}"


def _golden_chunks(case, files, chunk):
    """The golden in chunks, from the input files as written."""
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


def _write(path, chunks, dtype, shape, fmt, signals):
    replace_file(path, lambda f: write_chunks(f, chunks, dtype, shape, fmt == "npy"),
                 signals, {}, label="--out-dir")


def generate_case(case, out_dir, fmt="bin", seed=0, signals=None, chunk=CHUNK):
    """Write one case's inputs and golden to ``out_dir``; return its
    manifest entry."""
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
        path = os.path.join(out_dir, name)
        _write(path, input_chunks(inp, cseed, k, chunk), inp.dtype, inp.shape, fmt, signals)
        files.append(ArrayFile(path, inp.name, inp.dtype, inp.shape))
        entry["inputs"].append({"name": inp.name, "file": name, **inp.as_json()})
    _write(os.path.join(out_dir, entry["golden"]), _golden_chunks(case, files, chunk),
           case.dtype, case.shape, fmt, signals)
    return entry


def generate(source, out_dir, *, fmt="bin", seed=0, log=None, signals=None):
    """Generate inputs and goldens for a set of cases, and their manifest.

    Parameters
    ----------
    source : str, os.PathLike or list of Case
        A case file (ATK json, TTK kernel or aclnn csv), or its cases.
    out_dir : str or os.PathLike
        The folder to write to (made if missing); file names in the
        manifest are relative to it.
    fmt : {"bin", "npy"}
        Raw little-endian values, or NumPy's format.
    seed : int
        Mixed with each case's name into the case's seed.
    log : callable, optional
        Called with a line of progress after each case.
    signals : Signals, optional
        The signal handling in force (the command line's); none by default.

    Returns
    -------
    dict
        The manifest, also written to ``out_dir/manifest.json``:
        ``{"cases": [{"name", "dtype", "shape", "inputs": [{"name", "file",
        "dtype", "shape", "range"}], "golden", "format", "seed",
        "tolerance"}]}``.
    """
    if fmt not in FORMATS:
        raise GoldenError(f"--format: {fmt!r} is not one of {', '.join(FORMATS)}")
    found = read_cases(source) if isinstance(source, str | os.PathLike) else list(source)
    out_dir = os.fspath(out_dir)
    if os.path.exists(out_dir):
        check_directory(out_dir, "--out-dir", OUT_DIR, WriteError)
    try:
        os.makedirs(out_dir, exist_ok=True)
    except OSError as exc:  # strerror: the message without the path again
        raise WriteError(f"--out-dir: cannot make {out_dir}: "
                         f"{exc.strerror or exc}") from None
    names = [_file_name(case.name, "golden", fmt) for case in found]
    clash = next((n for n in names if names.count(n) > 1), None)
    if clash is not None:
        raise CaseFileError(f"--cases: two cases would write {clash}: rename one")
    signals = Signals() if signals is None else signals
    manifest: dict[str, list] = {"cases": []}
    for n, case in enumerate(found, 1):
        manifest["cases"].append(generate_case(case, out_dir, fmt, seed, signals))
        if log is not None:
            log(f"{n}/{len(found)} {case.name}: {name_of(case.dtype)} "
                f"[{', '.join(map(str, case.shape))}], {case.size:,} values")
    # A case a line: readable, and diffs well.
    text = '{"cases": [\n' + ",\n".join(json.dumps(c, allow_nan=False)
                                         for c in manifest["cases"]) + "\n]}\n"
    replace_file(os.path.join(out_dir, "manifest.json"), lambda f: f.write(text.encode()),
                 signals, {}, label="--out-dir")
    return manifest
