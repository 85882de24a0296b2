"""The ufunc and the function as NumPy users meet them: NumPy's own ufunc
tests re-pointed at ours, result dtypes and promotion, out= buffers and
overlapping operands, reductions, the error messages, and the NumPy-level
protocols (``__array_ufunc__``, ``__array_wrap__``, Dask, xarray, pandas).
They walk every dtype the package computes (``ALL_DTYPES``).

Helper only these tests use: numpy_contract.py (NumPy's test modules, and
the folds reductions must equal)."""
