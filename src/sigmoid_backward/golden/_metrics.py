"""Errors of an output against its golden, chunk by chunk.

Errors are computed in float64 from the values' real parts (complex values
as (real, imaginary) pairs, their errors as the modulus of the difference):
exact for float16, bfloat16 and float32, whose differences float64 holds.
inf and NaN must agree in position and sign part by part, NaN matching NaN;
a part where they do not is an inf/NaN mismatch: that element is left out of
the error statistics and counted apart.  Agreeing non-finite parts add no
error, and magnitudes (``|golden|``, ``|actual|``) count finite parts only.
"""
import heapq
import math

import numpy as np

from ._bits import number_json, parts, ulp_distance

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


class Tally:
    """The metrics every comparison reports, gathered over chunks, and the
    ``k`` worst elements (inf/NaN mismatches first, then by absolute error)."""

    def __init__(self, shape, k=5):
        self.shape, self.k = tuple(shape), k
        self.numel = self.bad = self.exact = 0
        self.max_err = self.sum_sq = self.sum_rel = self.max_rel = 0.0
        self.max_ulp, self.sum_ulp = 0, 0.0
        self._worst = []  # heap of (score, -flat index, entry)

    def add(self, chunk):
        self.numel += chunk.size
        good = ~chunk.bad
        self.bad += int(chunk.bad.sum())
        self.exact += chunk.exact_count
        if chunk.where.size:
            rel = chunk.relative(MERE_EPS)
            self.max_err = max(self.max_err, float(chunk.err.max()))
            self.sum_sq += float(np.dot(chunk.err, chunk.err))
            self.sum_rel += float(rel.sum())
            self.max_rel = max(self.max_rel, float(rel.max()))
            self.max_ulp = max(self.max_ulp, int(chunk.ulp[good].max(initial=0)))
            self.sum_ulp += float(chunk.ulp[good].sum(dtype=np.float64))
            self._keep_worst(chunk, rel)

    def _keep_worst(self, chunk, rel):
        if self.k <= 0:
            return
        score = np.where(chunk.bad, np.inf, chunk.err)
        score[chunk.nan_only] = -1.0  # equal elements are never "worst"
        # Only elements above the k-th worst so far can enter (ties keep the
        # lower index, which earlier chunks hold).
        floor = self._worst[0][0] if len(self._worst) == self.k else -1.0
        take = np.flatnonzero(score > floor) if floor >= 0 else np.flatnonzero(score >= 0)
        if take.size > self.k:  # the k largest, ties to the lowest index
            kth = -np.partition(-score[take], self.k - 1)[self.k - 1]
            take = take[score[take] >= kth]
            take = take[np.lexsort((take, -score[take]))[:self.k]]
        for i in take:
            flat = chunk.start + int(chunk.where[i])
            index = [int(n) for n in np.unravel_index(flat, self.shape)] if self.shape else []
            entry = {"index": index, "actual": _python(chunk.actual[i]),
                     "golden": _python(chunk.golden[i]),
                     "abs_error": None if chunk.bad[i] else float(chunk.err[i]),
                     "rel_error": None if chunk.bad[i] else float(rel[i]),
                     "ulp": None if chunk.bad[i] else int(chunk.ulp[i])}
            item = (float(score[i]), -flat, entry)
            if len(self._worst) < self.k:
                heapq.heappush(self._worst, item)
            elif item[:2] > self._worst[0][:2]:
                heapq.heapreplace(self._worst, item)

    def metrics(self):
        good = self.numel - self.bad
        return {
            "numel": self.numel,
            "max_abs_error": self.max_err,
            "mare": self.max_rel,
            "mere": self.sum_rel / good if good else 0.0,
            "rmse": math.sqrt(self.sum_sq / good) if good else 0.0,
            "inf_nan_mismatches": self.bad,
            "bit_exact_ratio": self.exact / self.numel if self.numel else 1.0,
            "max_ulp": self.max_ulp,
            "mean_ulp": self.sum_ulp / good if good else 0.0,
            "worst": [entry for *_, entry in sorted(self._worst, key=lambda t: t[:2],
                                                    reverse=True)],
        }
