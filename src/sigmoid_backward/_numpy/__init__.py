"""The NumPy front end: the ufunc, the function, and what they check.

The ufunc's inner loops, type resolution and promoter (``_ufunc.pyx``,
``_promotion.h``), the function's fast path and its argument handling
(``_function.pyx``, ``_arguments.py``, ``_inputs.py``), and the errors that
name the argument at fault (``_named_errors.py``).  They reach the loops
only through ``_kernel/_kernels.pxd``.
"""
