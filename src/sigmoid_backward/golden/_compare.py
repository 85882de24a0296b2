"""Compare an output with its golden under a precision standard.

:func:`compare` takes arrays; :func:`compare_chunks` takes the two as
matching C-order chunks, which is how the command line reads files of any
size in bounded memory.  Both return a :class:`CompareResult`: the verdict,
the standard's limits and tallies, and the metrics reported always (see
``_metrics``).
"""
import csv
import io
from dataclasses import asdict, dataclass, field

import numpy as np

from ._bits import number_json
from ._casefile_checks import check_tolerance
from ._dtype_names import DTYPES, as_supported, name_of
from ._errors import GoldenError
from ._metrics import Chunk, Tally, Worst
from ._standards import DEFAULT, STANDARDS, Options, combine, resolve

CHUNK = 1 << 20  # values per chunk: the metrics hold about 20 float64 arrays of it
ALL = "all"      # --standard all: every standard in one pass


def _json_numbers(value):
    """``value`` with every non-finite float as number_json writes it."""
    if isinstance(value, float):
        return number_json(value)
    if isinstance(value, dict):
        return {k: _json_numbers(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_json_numbers(v) for v in value]
    return value


@dataclass
class CompareResult:
    """The outcome of one comparison under one standard.

    ``status`` is the standard's verdict: ``"pass"``, ``"warning"`` (the
    tier msprobe has between) or ``"fail"`` (msprobe's "error"); ``passed`` is ``status ==
    "pass"``.  ``mismatches`` counts the elements wrong under the standard,
    ``limits`` are its numbers for this dtype (``overridden`` lists those the
    user set), ``tallies`` what the rule was applied to, ``notes`` what the
    standard adds (a rule it could not apply, and why).  The metrics are
    those of every standard: ``max_abs_error``, ``mare`` and ``mere``
    (relative errors ``|a - g| / (|g| + 1e-7)``, max and mean), ``rmse``,
    ``cosine``, ``thousandth_ratio`` and ``five_thousandth_ratio``,
    ``inf_nan_mismatches``, ``bit_exact_ratio``, ``max_ulp`` and
    ``mean_ulp`` (distance in representable values), and ``worst``: the
    elements the standard's own error measure ranks worst, with flat and
    N-d index, actual, golden and errors; ``hist`` the log2 buckets of that
    measure when asked for."""
    passed: bool
    status: str
    standard: str
    dtype: str
    shape: list
    numel: int
    mismatches: int
    judged: int
    mismatch_ratio: float
    max_abs_error: float
    mare: float
    mere: float
    rmse: float
    cosine: float | str | None
    thousandth_ratio: float
    five_thousandth_ratio: float
    inf_nan_mismatches: int
    bit_exact_ratio: float
    max_ulp: int
    mean_ulp: float
    worst: list
    limits: dict
    tallies: dict
    notes: list = field(default_factory=list)
    hist: dict | None = None
    name: str | None = None

    def as_dict(self):
        """The result as JSON can carry it: a metric that overflowed (the
        squared error of two float64 values near 1e300 is inf) is "inf"."""
        return _json_numbers(asdict(self))

    def line(self):
        """One line: verdict, case, and the metrics."""
        name = f"{self.name} " if self.name else ""
        cos = "-" if self.cosine is None else (
            self.cosine if isinstance(self.cosine, str) else f"{self.cosine:.6f}")
        return (f"{self.status.upper()} {name}{self.dtype} "
                f"[{', '.join(map(str, self.shape))}] {self.standard}: "
                f"{self.mismatches} of {self.judged}{'' if self.judged == self.numel else ' parts'}"
                f" mismatched ({self.mismatch_ratio:.3%}), "
                f"inf/nan mismatches {self.inf_nan_mismatches}, "
                f"max abs error {self.max_abs_error:.3g}, MARE {self.mare:.3g}, "
                f"MERE {self.mere:.3g}, RMSE {self.rmse:.3g}, cosine {cos}, "
                f"thousandth {self.thousandth_ratio:.4%}, "
                f"five-thousandth {self.five_thousandth_ratio:.4%}, "
                f"bit-exact {self.bit_exact_ratio:.2%}, "
                f"ULP max {self.max_ulp} mean {self.mean_ulp:.3g}")


def standard_named(name):
    """The standard called ``name`` (or an alias of it)."""
    try:
        return STANDARDS[resolve(name)]
    except KeyError:
        raise GoldenError(f"--standard: unknown standard {name!r}; choose one of "
                          f"{', '.join(STANDARDS)}, {ALL}") from None


def standards_named(standard):
    """The standards ``standard`` names: one, a list, or "all"."""
    if isinstance(standard, str):
        return list(STANDARDS.values()) if standard == ALL else [standard_named(standard)]
    return [standard_named(s) for s in standard]


def compare_many(chunks, dtype, shape, standards, options=None, k=5, name=None, hist=False):
    """Judge an output under several standards in one pass over its chunks:
    ``(actual, golden)`` or ``(actual, golden, third_party)`` 1-d chunks
    that follow each other in C order.  One CompareResult per standard."""
    options = options or Options()
    dtype = np.dtype(dtype)
    rules = standards_named(standards)
    limits = [rule.limits(dtype, options) for rule in rules]
    empty = np.empty(0, dtype)
    third0 = empty if options.third_party else None
    totals = [combine({}, rule.tally(empty, empty, third0, lim))
              for rule, lim in zip(rules, limits, strict=True)]
    worst = [Worst(shape, k, hist) for _ in rules]
    tally = Tally(shape)
    ms_limits = STANDARDS["msprobe-tiers"].limits(dtype, Options(benchmark="same"))
    start = 0
    for chunk_arrays in chunks:
        actual, golden = chunk_arrays[0], chunk_arrays[1]
        third = chunk_arrays[2] if len(chunk_arrays) > 2 else None
        chunk = Chunk(actual, golden, start)
        tally.add(chunk, STANDARDS["msprobe-tiers"].tally(actual, golden, None, ms_limits))
        err = None
        for rule, lim, total, w in zip(rules, limits, totals, worst, strict=True):
            combine(total, rule.tally(actual, golden, third, lim))
            if k > 0 or hist:
                if err is None:
                    err = _abs_error(chunk)
                w.add(start, rule.measure(actual, golden, lim), actual, golden, err)
        start += chunk.size
    metrics = tally.metrics()
    numel = metrics["numel"]
    results = []
    for rule, lim, total, w in zip(rules, limits, totals, worst, strict=True):
        status, mismatches, notes = rule.verdict(total, numel, lim)
        judged = total.get("values", numel)  # complex parts, where judged apart
        results.append(CompareResult(
            passed=status == "pass", status=status, standard=rule.name,
            dtype=name_of(dtype), shape=list(shape), mismatches=int(mismatches),
            judged=judged, mismatch_ratio=mismatches / judged if judged else 0.0, limits=lim,
            tallies=_json_numbers(total), notes=notes, worst=w.entries(),
            hist=w.histogram(), name=name, **metrics))
    return results


def _abs_error(chunk):
    """|a - g| per element of the whole chunk (inf where inf/NaN disagree)."""
    err = np.zeros(chunk.size)
    err[chunk.where] = np.where(chunk.bad, np.inf, chunk.err)
    return err


def check_arguments(tolerance, k, overrides=None):
    """Refuse, naming it, a ``tolerance`` or ``overrides`` that is not
    rtol/ptol/atol finite and >= 0 (ptol <= 1), and a ``k`` that is not an
    integer >= 0: a NaN tolerance would judge every element wrong and call
    it a FAIL."""
    if isinstance(k, bool) or not isinstance(k, int | np.integer) or k < 0:
        raise GoldenError(f"k: {k!r} is not an integer >= 0")
    for what, values in (("tolerance", tolerance), ("overrides", overrides)):
        try:
            check_tolerance(values, "compare()", columns=False)
        except GoldenError as exc:
            raise GoldenError(f"{what}: {str(exc).removeprefix('--cases: compare(): ')}") \
                from None


def compare_chunks(pairs, dtype, shape, standard=DEFAULT, tolerance=None, k=5, name=None):
    """Compare an output with its golden given as ``(actual, golden)`` pairs of
    1-d chunks that follow each other in C order; see :func:`compare`."""
    check_arguments(tolerance, k)
    return compare_many(pairs, dtype, shape, [standard], Options(tolerance=tolerance), k,
                        name)[0]


CSV_COLUMNS = ("name", "standard", "status", "dtype", "shape", "numel", "mismatches",
               "mismatch_ratio", "max_abs_error", "mare", "mere", "rmse", "cosine",
               "thousandth_ratio", "five_thousandth_ratio", "inf_nan_mismatches",
               "bit_exact_ratio", "max_ulp", "mean_ulp", "overridden", "notes", "error")


def csv_rows(results):
    """The CSV table of results: a header, then one row per case and
    standard, its status PASS, WARNING (msprobe's middle tier) or FAIL; a
    case that could not be judged (its ``as_dict`` has ``error``) is one
    ERROR row with the reason and no metrics."""
    out = io.StringIO()
    writer = csv.DictWriter(out, CSV_COLUMNS, extrasaction="ignore", restval="",
                            lineterminator="\n")
    writer.writeheader()
    for r in results:
        row = dict(r.as_dict(), status=r.status.upper())
        if isinstance(r, CompareResult):
            row.update(name=r.name or "", shape="x".join(map(str, r.shape)),
                       overridden=" ".join(f"{k}={r.limits[k]}"
                                           for k in r.limits.get("overridden", ())),
                       notes="; ".join(r.notes))
        writer.writerow({k: "" if v is None else v for k, v in row.items()})
    return out.getvalue()


def _checked(arr, what):
    arr = as_supported(np.asarray(arr))
    if arr.dtype.newbyteorder("=") not in DTYPES.values():
        raise GoldenError(f"{what} has dtype {arr.dtype}, not one of {', '.join(DTYPES)}")
    return arr


def compare(actual, golden, standard=DEFAULT, *, tolerance=None, k=5, name=None,
            overrides=None, benchmark=None, third_party=None, hist=False):
    """Compare an output with its golden.

    Parameters
    ----------
    actual, golden : array_like
        The device's output and the expected values: the same dtype (one of
        the six; bfloat16 may come as raw ``|V2`` arrays) and shape.
    standard : str or list of str
        A name of :data:`STANDARDS` (``"ttk-close"``, the default,
        ``"torch-npu-rtol"``, ``"opbase-tolerance"``, ``"opbase-mere-mare"``,
        ``"msprobe-tiers"``, ``"msprobe-threshold"``, ``"msprobe-ulp"``) or
        an alias (``"double-thousandth"``, ``"mixed-tolerance"``,
        ``"mere-mare"``, ``"ulp"``); a list of them, or ``"all"``.
    tolerance : dict, optional
        For ``ttk-close``: ``rtol``, ``ptol`` and ``atol`` as a TTK csv
        gives them (``precision_tolerances``, ``absolute_precision``); the
        dtype's defaults otherwise.
    k : int
        How many of the worst elements to report (>= 0).
    name : str, optional
        The case's name, carried into the result.
    overrides : dict, optional
        ``rtol``, ``atol``, ``ptol`` replacing the numbers of every standard
        that has them; the result's ``limits["overridden"]`` names them.
    benchmark : {"same", "raised"}, optional
        The benchmark precision of the msprobe standards (default theirs:
        raised, float16/bfloat16 to float32, float32 to float64).
    third_party : array_like, optional
        A second device's output, for msprobe's NPU/GPU ratio rule.
    hist : bool
        Also count each standard's error measure in log2 buckets.

    Returns
    -------
    CompareResult, or a list of them for a list of standards or "all"
        ``.passed``, ``.status``, and the metrics.

    Raises
    ------
    ValueError
        Unknown standard, unsupported dtype, the arrays differ in dtype or
        shape, a tolerance or override that is not finite and >= 0
        (ptol <= 1), or a ``k`` that is not an integer >= 0.
    """
    check_arguments(tolerance, k, overrides)
    if benchmark not in (None, "same", "raised"):
        raise GoldenError(f"benchmark must be 'same' or 'raised', got {benchmark!r}")
    arrays = [_checked(actual, "actual"), _checked(golden, "golden")]
    if third_party is not None:
        arrays.append(_checked(third_party, "third_party"))
    g = arrays[1]
    for what, arr in zip(("actual", "golden", "third_party"), arrays, strict=False):
        if arr.dtype.newbyteorder("=") != g.dtype.newbyteorder("="):
            raise GoldenError(f"{what} has dtype {name_of(arr.dtype)}, golden "
                              f"{name_of(g.dtype)}")
        if arr.shape != g.shape:
            raise GoldenError(f"{what} has shape {list(arr.shape)}, golden {list(g.shape)}")
    dtype, shape = g.dtype.newbyteorder("="), g.shape
    flat = [arr.astype(dtype, copy=False).reshape(-1) for arr in arrays]
    chunks = (tuple(arr[i:i + CHUNK] for arr in flat) for i in range(0, g.size, CHUNK))
    options = Options(tolerance=tolerance, overrides=dict(overrides or {}),
                      benchmark=benchmark, third_party=third_party is not None)
    results = compare_many(chunks, dtype, shape, standard, options, int(k), name, hist)
    return results[0] if isinstance(standard, str) and standard != ALL else results
