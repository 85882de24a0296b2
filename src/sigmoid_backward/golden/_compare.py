"""Compare an output with its golden under a precision standard.

:func:`compare` takes arrays; :func:`compare_chunks` takes the two as
matching C-order chunks, which is how the command line reads files of any
size in bounded memory.  Both return a :class:`CompareResult`: the verdict,
the standard's limits and tallies, and the metrics reported always (see
``_metrics``).
"""
from dataclasses import asdict, dataclass

import numpy as np

from ._casefile import check_tolerance
from ._dtype_names import DTYPES, as_supported, name_of
from ._errors import GoldenError
from ._metrics import Chunk, Tally
from ._standards import DEFAULT, STANDARDS, combine

CHUNK = 1 << 20  # values per chunk: the metrics hold about 20 float64 arrays of it


@dataclass
class CompareResult:
    """The outcome of one comparison.

    ``passed`` is the verdict: the standard's rule holds and inf/NaN agree.
    ``mismatches`` counts the elements wrong under the standard (inf/NaN
    mismatches included), ``limits`` are the standard's numbers for this
    dtype, ``tallies`` what the rule was applied to.  The metrics are those
    of every standard: ``max_abs_error``, ``mare`` and ``mere`` (relative
    errors ``|a - g| / (|g| + 1e-7)``, max and mean), ``rmse``,
    ``inf_nan_mismatches``, ``bit_exact_ratio``, ``max_ulp`` and
    ``mean_ulp`` (distance in representable values), and ``worst``: the
    elements that differ most, with index, actual, golden and errors."""
    passed: bool
    standard: str
    dtype: str
    shape: list
    numel: int
    mismatches: int
    mismatch_ratio: float
    max_abs_error: float
    mare: float
    mere: float
    rmse: float
    inf_nan_mismatches: int
    bit_exact_ratio: float
    max_ulp: int
    mean_ulp: float
    worst: list
    limits: dict
    tallies: dict
    name: str | None = None

    def as_dict(self):
        """The result as JSON can carry it."""
        return asdict(self)

    def line(self):
        """One line: verdict, case, and the metrics."""
        name = f"{self.name} " if self.name else ""
        return (f"{'PASS' if self.passed else 'FAIL'} {name}{self.dtype} "
                f"[{', '.join(map(str, self.shape))}] {self.standard}: "
                f"{self.mismatches} of {self.numel} mismatched ({self.mismatch_ratio:.3%}), "
                f"inf/nan mismatches {self.inf_nan_mismatches}, "
                f"max abs error {self.max_abs_error:.3g}, MARE {self.mare:.3g}, "
                f"MERE {self.mere:.3g}, RMSE {self.rmse:.3g}, "
                f"bit-exact {self.bit_exact_ratio:.2%}, "
                f"ULP max {self.max_ulp} mean {self.mean_ulp:.3g}")


def standard_named(name):
    try:
        return STANDARDS[name]
    except KeyError:
        raise GoldenError(f"--standard: unknown standard {name!r}; choose one of "
                          f"{', '.join(STANDARDS)}") from None


def check_arguments(tolerance, k):
    """Refuse, naming it, a ``tolerance`` that is not rtol/ptol/atol finite
    and >= 0 (ptol <= 1), and a ``k`` that is not an integer >= 0: a NaN
    tolerance would judge every element wrong and call it a FAIL."""
    if isinstance(k, bool) or not isinstance(k, int | np.integer) or k < 0:
        raise GoldenError(f"k: {k!r} is not an integer >= 0")
    try:
        check_tolerance(tolerance, "compare()", columns=False)
    except GoldenError as exc:
        raise GoldenError(f"tolerance: {str(exc).removeprefix('--cases: compare(): ')}") \
            from None


def compare_chunks(pairs, dtype, shape, standard=DEFAULT, tolerance=None, k=5, name=None):
    """Compare an output with its golden given as ``(actual, golden)`` pairs of
    1-d chunks that follow each other in C order; see :func:`compare`."""
    check_arguments(tolerance, k)
    rule = standard_named(standard)
    limits = rule.limits(np.dtype(dtype), tolerance)
    tally = Tally(shape, k)
    empty = np.empty(0, dtype)  # every tally's keys, at zero: an empty output has them too
    totals = combine({}, rule.tally(Chunk(empty, empty), limits))
    start = 0
    for actual, golden in pairs:
        chunk = Chunk(actual, golden, start)
        tally.add(chunk)
        combine(totals, rule.tally(chunk, limits))
        start += chunk.size
    metrics = tally.metrics()
    numel = metrics["numel"]
    passed, wrong = rule.verdict(totals, numel, limits)
    mismatches = wrong + metrics["inf_nan_mismatches"]
    return CompareResult(passed=bool(passed) and metrics["inf_nan_mismatches"] == 0,
                         standard=rule.name, dtype=name_of(dtype), shape=list(shape),
                         mismatches=mismatches,
                         mismatch_ratio=mismatches / numel if numel else 0.0,
                         limits=limits, tallies=totals, name=name, **metrics)


def _checked(arr, what):
    arr = as_supported(np.asarray(arr))
    if arr.dtype.newbyteorder("=") not in DTYPES.values():
        raise GoldenError(f"{what} has dtype {arr.dtype}, not one of {', '.join(DTYPES)}")
    return arr


def compare(actual, golden, standard=DEFAULT, *, tolerance=None, k=5, name=None):
    """Compare an output with its golden.

    Parameters
    ----------
    actual, golden : array_like
        The device's output and the expected values: the same dtype (one of
        the six; bfloat16 may come as raw ``|V2`` arrays) and shape.
    standard : str
        ``"ttk-close"`` (default), ``"double-thousandth"``, ``"mere-mare"``,
        ``"mixed-tolerance"``, ``"msprobe-threshold"`` or ``"ulp"``.
    tolerance : dict, optional
        For ``ttk-close``: ``rtol``, ``ptol`` and ``atol`` as a TTK csv
        gives them (``precision_tolerances``, ``absolute_precision``); the
        dtype's defaults otherwise.
    k : int
        How many of the worst elements to report.
    name : str, optional
        The case's name, carried into the result.

    Returns
    -------
    CompareResult
        ``.passed``, and the metrics.

    Raises
    ------
    ValueError
        Unknown standard, unsupported dtype, the two differ in dtype or
        shape, a tolerance that is not finite and >= 0 (ptol <= 1), or a
        ``k`` that is not an integer >= 0.
    """
    check_arguments(tolerance, k)
    a, g = _checked(actual, "actual"), _checked(golden, "golden")
    if a.dtype.newbyteorder("=") != g.dtype.newbyteorder("="):
        raise GoldenError(f"actual has dtype {name_of(a.dtype)}, golden {name_of(g.dtype)}")
    if a.shape != g.shape:
        raise GoldenError(f"actual has shape {list(a.shape)}, golden {list(g.shape)}")
    dtype, shape = a.dtype.newbyteorder("="), g.shape
    a, g = a.astype(dtype, copy=False).reshape(-1), g.astype(dtype, copy=False).reshape(-1)
    pairs = ((a[i:i + CHUNK], g[i:i + CHUNK]) for i in range(0, a.size, CHUNK))
    return compare_chunks(pairs, dtype, shape, standard, tolerance, k, name)
