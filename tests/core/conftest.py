"""The kernels and the compiled modules: every code path and instruction
set gives the reference's bits, values and special values, threads and the
thread policy, the thresholds, the function's fast path, floating-point
errors, fork() and Ctrl-C, guard pages, the dtype tables in C and Python,
the exhaustive bfloat16 rounding, the property tests, the Cython API, the
built module's instructions, hardening, and the portable loops on AArch64.
They walk every dtype the package computes (``ALL_DTYPES``)."""
