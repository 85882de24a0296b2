"""sigmoid_backward.torch's op as Python registers it: which route runs,
the schema, the CPU kernel, the fake kernels and their device and dtype
checks.

Importing this module registers nothing: sigmoid_backward.torch calls
:func:`_load_native` and :func:`register` once, at its import.
"""
import importlib
import os

import torch
import torch._prims_common

from .._kernel import _dtypes
from .._numpy._function import sigmoid_backward as _function

# The package's dtypes that this torch has (float8 since 2.1).
_SUPPORTED = tuple(getattr(torch, d.name) for d in _dtypes.TABLE if hasattr(torch, d.name))
_COMPUTED_ON = ("cpu", "meta")   # meta: shapes only, as for every op

_SCHEMA = "(Tensor grad_output, Tensor output) -> Tensor"


def _load_native():
    """The native op's module, or None; and why, for :data:`ROUTE`.  The
    ``.so`` is tied to the torch it was built against (C++ ABI), so it is
    loaded only under that very build of torch."""
    from .._build_config import TORCH
    if not TORCH["version"]:
        return None, "python (the native op was not built: see docs/frameworks.md)"
    if (TORCH["version"], TORCH["git"]) != (torch.__version__, torch.version.git_version):
        return None, (f"python (the native op was built for torch {TORCH['version']}, "
                      f"this is torch {torch.__version__}: build sigmoid_backward again)")
    if os.environ.get("SIGMOID_BACKWARD_TORCH") == "python":
        return None, "python (SIGMOID_BACKWARD_TORCH=python)"
    native = importlib.import_module("sigmoid_backward._frameworks._torch_op")
    return native, f"native (C++, built for torch {TORCH['version']})"


def register(native):
    """Defines the op of the Python route, gives it the CPU kernel and both
    ops the fake kernel.  ``native``: the native op's module, or None.
    Returns the library, which holds every Python registration (as long as
    it lives), the route's op name, the op and the route's op."""
    lib = torch.library.Library("sigmoid_backward", "FRAGMENT")   # holds every Python registration
    if native is None:
        lib.define("sigmoid_backward" + _SCHEMA)
        route_name = "sigmoid_backward"
    else:   # the native op defined sigmoid_backward; the Python route is a second op
        lib.define("_python_route" + _SCHEMA)
        route_name = "_python_route"
    op = torch.ops.sigmoid_backward.sigmoid_backward.default
    route_op = getattr(torch.ops.sigmoid_backward, route_name).default
    torch.library.impl("sigmoid_backward::" + route_name, "cpu", lib=lib)(_cpu)
    for _op in {op, route_op}:
        torch.library.register_fake(_op, _fake, lib=lib)
    return lib, route_name, op, route_op


class _DtypeError(TypeError, NotImplementedError):
    """Inputs that promote to a dtype the op does not compute in: a
    TypeError, as this package raises for a dtype, and a NotImplementedError
    (a RuntimeError), as aten.sigmoid_backward raises for one."""


def _result_dtype(grad_output, output):
    """PyTorch's promotion of the two, as aten.sigmoid_backward computes it,
    restricted to the dtypes of this library."""
    dtype = torch.result_type(grad_output, output)
    if dtype not in _SUPPORTED:
        raise _DtypeError(f"sigmoid_backward: grad_output ({grad_output.dtype}) and output "
                          f"({output.dtype}) promote to {dtype}; the op computes in "
                          f"{', '.join(str(d).removeprefix('torch.') for d in _SUPPORTED)}")
    return dtype


def _result_shape(grad_output, output):
    """The broadcast shape; aten's RuntimeError (not NumPy's ValueError,
    which the kernel would raise) when there is none."""
    try:
        return torch.broadcast_shapes(grad_output.shape, output.shape)
    except RuntimeError:
        raise RuntimeError(f"sigmoid_backward: grad_output of shape {tuple(grad_output.shape)} "
                           f"and output of shape {tuple(output.shape)} do not broadcast "
                           f"together") from None


def _result_device(grad_output, output):
    """The result's device by aten's rule: the inputs', where a 0-d CPU
    tensor (a scalar) goes with any.  The op computes on the CPU; on
    ``meta`` (and fake tensors) it gives shapes only."""
    device = grad_output.device
    if output.device != device:
        if _cpu_scalar(grad_output):
            device = output.device
        elif not _cpu_scalar(output):
            raise RuntimeError(f"sigmoid_backward: expected all tensors on one device, but "
                               f"grad_output is on {grad_output.device} and output on "
                               f"{output.device} (a 0-d CPU tensor may go with any device)")
    if device.type not in _COMPUTED_ON:
        raise NotImplementedError(f"sigmoid_backward: tensors on {device}: the op computes on "
                                  f"the CPU and copies nothing to it; use "
                                  f"torch.ops.aten.sigmoid_backward there")
    return device


def _cpu_scalar(t):
    return t.dim() == 0 and t.device.type == "cpu"


def _cpu(grad_output, output):
    # The dispatcher sends tensors on any other device (meta, CUDA, ...)
    # elsewhere: here both are on the CPU.
    dtype = _result_dtype(grad_output, output)
    if grad_output.shape != output.shape:
        _result_shape(grad_output, output)   # raises as aten does when they do not broadcast
    # Casts to the promoted dtype where needed, then this library's function,
    # which returns a tensor over its NumPy result.
    if grad_output.dtype != dtype:
        grad_output = grad_output.to(dtype)
    if output.dtype != dtype:
        output = output.to(dtype)
    result = _function(grad_output, output)   # C-contiguous
    strides = _result_strides(grad_output, output, result.shape)
    if result.stride() == strides:
        return result
    return torch.empty_strided(result.shape, strides, dtype=dtype).copy_(result)


def _result_strides(grad_output, output, shape):
    """The result's strides as aten's TensorIterator lays it out (the
    native kernel's is that iterator): the memory format of the inputs
    (channels_last, transposed, ...), the first input's where they differ;
    a 0-d input takes no part."""
    operands = [t.expand(shape) for t in (grad_output, output) if t.dim() > 0]
    return tuple(torch._prims_common.compute_elementwise_output_strides(*operands))


def _fake(grad_output, output):
    # Every check first: nothing is allocated for a call that raises.
    device = _result_device(grad_output, output)
    dtype = _result_dtype(grad_output, output)
    shape = _result_shape(grad_output, output)
    return torch.empty_strided(shape, _result_strides(grad_output, output, shape),
                               dtype=dtype, device=device)


def _sigmoid_fake(x):
    """The native route's sigmoid op's fake kernel."""
    if x.dtype not in _SUPPORTED or x.device.type not in _COMPUTED_ON:
        raise NotImplementedError(f"sigmoid_backward.sigmoid: a tensor of {x.dtype} on "
                                  f"{x.device}: it computes in the package's dtypes, "
                                  f"on the CPU")
    return torch.empty_strided(x.shape, _result_strides(x, x, x.shape), dtype=x.dtype,
                               device=x.device)
