"""Errors of an output against its golden, chunk by chunk.

Errors are computed in float64 from the values' real parts (complex values
as (real, imaginary) pairs, their errors as the modulus of the difference):
exact for float16, bfloat16 and float32, whose differences float64 holds.
inf and NaN must agree in position and sign part by part, NaN matching NaN;
a part where they do not is an inf/NaN mismatch: that element is left out of
the error statistics and counted apart.  Agreeing non-finite parts add no
error, and magnitudes (``|golden|``, ``|actual|``) count finite parts only.
These metrics are reported under every standard; each standard judges inf
and NaN as its source does (``_standards``).  Cosine similarity and the
thousandth / five-thousandth ratios are msprobe's (``compare/algorithm.py``):
the share of values whose ``|a - g| / (|g| + eps)`` is below 0.001 or 0.005.
"""
import heapq
import math

import numpy as np

from ._bits import number_json, parts, ulp_distance
from ._standards import combine
from ._standards_msprobe import cosine

MERE_EPS = 1e-7  # opbase's small value in |golden| + 1e-7


class Chunk:
    """One chunk of actual and golden values (1-d, same dtype), as every
    standard sees it.

    Elements whose bits are equal (or NaN on both sides) have no error and
    pass every standard; only the others, at flat positions ``where``
    (``start`` + ``where`` in the whole array), are measured: per element
    ``err``, ``abs_golden``, ``abs_actual``, ``ulp`` (0 at inf/NaN
    mismatches, ``bad``) and ``regular`` (all parts finite on both sides);
    per part ``diff`` (0 where not both finite) and ``golden_parts``.  In an
    output that is mostly right, that is a small share of the chunk."""

    def __init__(self, actual, golden, start=0):
        self.dtype, self.start, self.size = actual.dtype, start, actual.size
        pa, pg = parts(actual), parts(golden)
        uint = f"u{pa.itemsize}"
        differ = pa.view(uint) != pg.view(uint)   # per part
        self.where = np.flatnonzero(_any(differ))
        if self.where.size < self.size:  # else all differ: no copy
            actual, golden = actual[self.where], golden[self.where]
            pa, pg, differ = pa[self.where], pg[self.where], differ[self.where]
        self.actual, self.golden = actual, golden
        self._relative = {}
        with np.errstate(all="ignore"):  # inf - inf and the like: values, not errors
            self._measure(pa, pg, differ)
        self.exact_count = self.size - self.where.size + int(self.nan_only.sum())

    def _measure(self, pa, pg, differ):
        a, g = pa.astype(np.float64), pg.astype(np.float64)
        fa, fg = np.isfinite(a), np.isfinite(g)
        both = fa & fg
        nan_a, nan_g = np.isnan(a), np.isnan(g)
        agree = (nan_a & nan_g) | (~nan_a & ~nan_g & (a == g))
        # Bits differ only in NaN payloads or signs: equal, as NaN equals NaN.
        self.nan_only = _all(~differ | (nan_a & nan_g))
        self.bad = _any(~both & ~agree)
        self.regular = _all(both)
        self.diff = np.where(both, a - g, 0.0)
        self.golden_parts = np.where(fg, g, 0.0)
        self.err = _modulus(self.diff)
        self.abs_golden = _modulus(self.golden_parts)
        self.abs_actual = _modulus(np.where(fa, a, 0.0))
        self.err[self.bad] = 0.0
        nan_parts = nan_a | nan_g
        pa_ulp, pg_ulp = pa.copy(), pg.copy()
        pa_ulp[nan_parts] = pg_ulp[nan_parts] = 0  # NaN is no place on the line
        self.ulp = _per_element(ulp_distance(pa_ulp, pg_ulp), np.maximum)
        self.ulp[self.bad] = 0

    def relative(self, eps):
        """``err / (|golden| + eps)``, 0 where the error is 0; once per ``eps``
        (the tally and the MERE/MARE standard both ask).  Read-only."""
        rel = self._relative.get(eps)
        if rel is None:
            with np.errstate(divide="ignore", invalid="ignore"):
                rel = self.err / (self.abs_golden + eps)
            rel[self.err == 0] = 0.0
            rel.flags.writeable = False
            self._relative[eps] = rel
        return rel


def _per_element(p, combine):
    """Rows of parts (n, 1) or (n, 2) to one value per element: the part
    itself, or ``combine`` of the two (faster than a reduction along axis 1)."""
    return p[:, 0] if p.shape[1] == 1 else combine(p[:, 0], p[:, 1])


def _any(p):
    return _per_element(p, np.logical_or)


def _all(p):
    return _per_element(p, np.logical_and)


def _modulus(p):
    return np.abs(p[:, 0]) if p.shape[1] == 1 else np.hypot(p[:, 0], p[:, 1])


def _python(value):
    """A NumPy scalar as JSON can carry it: a float, [re, im] for complex,
    and "nan", "inf", "-inf" as strings."""
    if np.iscomplexobj(value):
        return [number_json(float(value.real)), number_json(float(value.imag))]
    return number_json(float(value))


class Worst:
    """The ``k`` elements a standard finds worst, by its own error measure
    (inf for an inf/NaN it does not accept), ties to the lower index, with
    their flat and N-d indices; and, if ``hist``, how many elements fall in
    each log2 bucket of that measure."""

    def __init__(self, shape, k=5, hist=False):
        self.shape, self.k = tuple(shape), k
        self._heap = []  # (score, -flat index, entry)
        self.hist: dict[str, int] | None = {} if hist else None

    def add(self, start, score, actual, golden, err):
        """``score``: the standard's measure of each element of the chunk
        that starts at flat index ``start``; ``err``: the chunk's |a - g|."""
        if self.hist is not None:
            self._count(score)
        if self.k <= 0:
            return
        floor = self._heap[0][0] if len(self._heap) == self.k else 0.0
        take = np.flatnonzero(score > floor)
        if take.size > self.k:  # the k largest, ties to the lowest index
            take = take[np.lexsort((take, -score[take]))[:self.k]]
        for i in take:
            flat = start + int(i)
            index = [int(n) for n in np.unravel_index(flat, self.shape)] if self.shape else []
            entry = {"index": index, "flat_index": flat, "actual": _python(actual[i]),
                     "golden": _python(golden[i]), "error": number_json(float(score[i])),
                     "abs_error": number_json(float(err[i]))}
            item = (float(score[i]), -flat, entry)
            if len(self._heap) < self.k:
                heapq.heappush(self._heap, item)
            elif item[:2] > self._heap[0][:2]:
                heapq.heapreplace(self._heap, item)

    def _count(self, score):
        hist = self.hist
        assert hist is not None
        zero = int(np.count_nonzero(score == 0))
        inf = int(np.count_nonzero(np.isinf(score)))
        finite = score[(score > 0) & np.isfinite(score)]
        if zero:
            hist["0"] = hist.get("0", 0) + zero
        if inf:
            hist["inf"] = hist.get("inf", 0) + inf
        buckets, counts = np.unique(np.floor(np.log2(finite)).astype(np.int64),
                                    return_counts=True)
        for b, c in zip(buckets.tolist(), counts.tolist(), strict=True):
            key = f"2^{b}"
            hist[key] = hist.get(key, 0) + c

    def entries(self):
        return [entry for *_, entry in sorted(self._heap, key=lambda t: t[:2], reverse=True)]

    def histogram(self):
        """Buckets in order: "0", then [2^b, 2^(b+1)) upwards, then "inf"."""
        if self.hist is None:
            return None
        order = sorted((k for k in self.hist if k.startswith("2^")), key=lambda k: int(k[2:]))
        keys = [k for k in ("0",) if k in self.hist] + order + \
            [k for k in ("inf",) if k in self.hist]
        return {k: self.hist[k] for k in keys}


class Tally:
    """The metrics every comparison reports, gathered over chunks."""

    def __init__(self, shape):
        self.shape = tuple(shape)
        self.numel = self.bad = self.exact = 0
        self.max_err = self.sum_sq = self.sum_rel = self.max_rel = 0.0
        self.max_ulp, self.sum_ulp = 0, 0.0
        self.msprobe = {}  # msprobe's cosine sums and relative-error counts

    def add(self, chunk, msprobe_part):
        combine(self.msprobe, msprobe_part)
        self.numel += chunk.size
        good = ~chunk.bad
        self.bad += int(chunk.bad.sum())
        self.exact += chunk.exact_count
        if chunk.where.size:
            rel = chunk.relative(MERE_EPS)
            self.max_err = max(self.max_err, float(chunk.err.max()))
            with np.errstate(over="ignore"):  # errors past 1e154 square to inf: the RMSE is
                self.sum_sq += float(np.dot(chunk.err, chunk.err))
            self.sum_rel += float(rel.sum())
            self.max_rel = max(self.max_rel, float(rel.max()))
            self.max_ulp = max(self.max_ulp, int(chunk.ulp[good].max(initial=0)))
            self.sum_ulp += float(chunk.ulp[good].sum(dtype=np.float64))

    def metrics(self):
        good = self.numel - self.bad
        t = self.msprobe
        values = t.get("values", 0)
        cos = cosine(t)[0] if values else None
        return {
            "numel": self.numel,
            "max_abs_error": self.max_err,
            "mare": self.max_rel,
            "mere": self.sum_rel / good if good else 0.0,
            "rmse": math.sqrt(self.sum_sq / good) if good else 0.0,
            "cosine": None if cos is None else number_json(cos),
            "thousandth_ratio": t["below_thousandth"] / values if values else 1.0,
            "five_thousandth_ratio": t["below_five_thousandth"] / values if values else 1.0,
            "inf_nan_mismatches": self.bad,
            "bit_exact_ratio": self.exact / self.numel if self.numel else 1.0,
            "max_ulp": self.max_ulp,
            "mean_ulp": self.sum_ulp / good if good else 0.0,
        }
