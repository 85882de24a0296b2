"""The framework adapters' shared half.

``_tensors.py`` takes PyTorch tensors, JAX and CuPy arrays as NumPy views
and gives the result back in their type; ``_xla_ffi.cc`` is the XLA FFI
handler behind ``sigmoid_backward.jax``, and ``_torch_op.cc`` (with
``_torch_op_module.cc``, its Python side, and ``_torch_op.h``) the native op
behind ``sigmoid_backward.torch`` (when built with ``-Dtorch=enabled``);
``_torch_registration.py``, ``_torch_transforms.py`` and
``_torch_inductor.py`` are that module's Python registration, its autograd
and ``torch.func`` rules, and its Inductor decompositions, which it
registers once, at its import.
The public modules themselves, ``sigmoid_backward.torch`` and
``sigmoid_backward.jax``, stay at the top of the package, where users
import them.
"""
