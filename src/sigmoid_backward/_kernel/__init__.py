"""The compiled kernel: the loops, their dispatch and their settings.

The one description of the dtypes (``_dtype_spec.py``) and the generator
that turns it into C (``_dtype_codegen.py``); the C headers (the loops, the
vector code, the ISA registry, the thread and threshold state); the Cython
that runs them over buffers (``_fused.pxd``, ``_kernels.pyx``).  Nothing
here knows about NumPy's ufunc machinery or a framework's tensors.
"""
