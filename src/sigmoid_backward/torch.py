"""sigmoid_backward for PyTorch: a real operator, under autograd and torch.compile.

``torch.ops.sigmoid_backward.sigmoid_backward(grad_output, output)`` is
registered with ``torch.library``: a CPU kernel (this library's), a fake
kernel that gives the result's shape and dtype without computing (so that
``torch.compile`` and ``torch.export`` trace it), and an autograd formula,
itself differentiable, so the op can be differentiated twice.
:func:`sigmoid` is ``torch.sigmoid`` forward with this op backward.

PyTorch's own ``aten::sigmoid_backward`` is left alone: overriding its CPU
kernel would warn, recurse, change float16 results, cost more on small
tensors, and be bypassed by ``torch.compile``, which decomposes it.

Importing this module imports torch; ``import sigmoid_backward`` does not.
"""
import torch

from . import _dtypes
from ._function import sigmoid_backward as _function

__all__ = ["sigmoid_backward", "sigmoid"]

_SUPPORTED = tuple(getattr(torch, d.name) for d in _dtypes.TABLE)   # the package's dtypes

torch.library.define(
    "sigmoid_backward::sigmoid_backward", "(Tensor grad_output, Tensor output) -> Tensor")


def _result_dtype(grad_output, output):
    """PyTorch's promotion of the two, as aten.sigmoid_backward computes it,
    restricted to the dtypes of this library."""
    dtype = torch.result_type(grad_output, output)
    if dtype not in _SUPPORTED:
        raise TypeError(f"sigmoid_backward: grad_output ({grad_output.dtype}) and output "
                        f"({output.dtype}) promote to {dtype}; the op computes in "
                        f"{', '.join(d.name for d in _dtypes.TABLE)}")
    return dtype


@torch.library.impl("sigmoid_backward::sigmoid_backward", "cpu")
def _cpu(grad_output, output):
    dtype = _result_dtype(grad_output, output)
    # Casts to the promoted dtype where needed, then this library's function,
    # which returns a tensor over its NumPy result.
    if grad_output.dtype != dtype:
        grad_output = grad_output.to(dtype)
    if output.dtype != dtype:
        output = output.to(dtype)
    return _function(grad_output, output).contiguous()   # the tensor itself when it is


@torch.library.register_fake("sigmoid_backward::sigmoid_backward")
def _fake(grad_output, output):
    dtype = _result_dtype(grad_output, output)
    shape = torch.broadcast_shapes(grad_output.shape, output.shape)
    return grad_output.new_empty(shape, dtype=dtype)


def _setup_context(ctx, inputs, output):
    ctx.save_for_backward(*inputs)


def _backward(ctx, grad):
    """grad_input = g * conj((1 - y) * y).  PyTorch's convention passes the
    conjugate Wirtinger derivatives back: for g (holomorphic)
    grad * (1 - y) * y, which is the op at conj(y); for y
    (antiholomorphic) conj(grad) * g * (1 - 2 conj(y)).  The engine sums
    broadcast dimensions and casts to each input's dtype."""
    grad_output, output = ctx.saved_tensors
    grad_g = grad_y = None
    if ctx.needs_input_grad[0]:
        grad_g = sigmoid_backward(grad, output.conj())
    if ctx.needs_input_grad[1]:
        grad_y = grad.conj() * grad_output * (1 - 2 * output.conj())
    return grad_g, grad_y


torch.library.register_autograd("sigmoid_backward::sigmoid_backward", _backward,
                                setup_context=_setup_context)


def sigmoid_backward(grad_output, output):
    """Gradient of the sigmoid, as a PyTorch operator.

    ``torch.ops.sigmoid_backward.sigmoid_backward``: ``grad_output * (1 -
    output) * output``, conjugated for complex, computed by this library's
    CPU kernel (float16 and bfloat16 in float32, rounded once).  It has a
    fake kernel (``torch.compile``, ``torch.export``) and an autograd
    formula, differentiable twice.

    Parameters
    ----------
    grad_output, output : torch.Tensor
        CPU tensors that broadcast together; their promotion (PyTorch's
        rules) is the result dtype, one of float16, bfloat16, float32,
        float64, complex64, complex128.

    Returns
    -------
    torch.Tensor
        A new contiguous tensor of the broadcast shape.

    Raises
    ------
    TypeError
        When the inputs promote to another dtype.
    NotImplementedError
        For tensors on a device other than the CPU (PyTorch's dispatcher);
        use ``torch.ops.aten.sigmoid_backward`` there.
    """
    return torch.ops.sigmoid_backward.sigmoid_backward(grad_output, output)


class _Sigmoid(torch.autograd.Function):
    @staticmethod
    def forward(x):
        return torch.sigmoid(x)

    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.save_for_backward(output)

    @staticmethod
    def backward(ctx, grad):
        (y,) = ctx.saved_tensors
        return sigmoid_backward(grad, y)


def sigmoid(x):
    """``torch.sigmoid(x)``, whose gradient is computed by :func:`sigmoid_backward`.

    The forward is ``torch.sigmoid``; the backward is ``sigmoid_backward(grad,
    sigmoid(x))``, as PyTorch's own, so gradients are bit-identical to
    ``torch.sigmoid``'s for float32, float64, bfloat16 and complex, and
    rounded once for float16.  Differentiable twice; traceable by
    ``torch.compile(fullgraph=True)``.

    Parameters
    ----------
    x : torch.Tensor
        A CPU tensor of a dtype the op supports.

    Returns
    -------
    torch.Tensor
        ``torch.sigmoid(x)``.
    """
    return _Sigmoid.apply(x)
