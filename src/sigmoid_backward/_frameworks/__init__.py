"""The framework adapters' shared half.

``_tensors.py`` takes PyTorch tensors, JAX and CuPy arrays as NumPy views
and gives the result back in their type; ``_xla_ffi.cc`` is the XLA FFI
handler behind ``sigmoid_backward.jax``.  The public modules themselves,
``sigmoid_backward.torch`` and ``sigmoid_backward.jax``, stay at the top of
the package, where users import them.
"""
