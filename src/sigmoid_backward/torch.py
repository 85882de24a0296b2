"""sigmoid_backward for PyTorch: a real operator, under autograd, torch.func and torch.compile.

``torch.ops.sigmoid_backward.sigmoid_backward(grad_output, output)`` is
registered with ``torch.library``: a CPU kernel (this library's); a fake
kernel that gives the result's shape, dtype and device without computing
(so that ``torch.compile`` and ``torch.export`` trace it), and checks the
devices as aten does; an autograd kernel with aten's derivative formulas
in both modes (backward, and forward for ``torch.autograd.forward_ad``),
themselves differentiable; and a kernel that takes the op through
``torch.func``'s transforms with the same formulas and a vmap rule.  So
every transform gives the values it gives through
``torch.ops.aten.sigmoid_backward``, computed on this library's kernel.
Under ``torch.compile``, Inductor's decomposition table (Inductor's alone)
maps the op to ``aten.sigmoid_backward``, which Inductor fuses with its
neighbours: compiled code has aten's compiled values, eager calls this kernel.
:func:`sigmoid` is ``torch.sigmoid`` forward with this op as its
derivative, in both modes.

PyTorch's own ``aten::sigmoid_backward`` is left alone: overriding its CPU
kernel would warn, recurse, change float16 results, cost more on small
tensors, and be bypassed by ``torch.compile``, which decomposes it.

Two routes register the op; :data:`ROUTE` says which one runs here.  The
native route (``_torch_op``, C++, built with ``-Dtorch=enabled`` against
this very torch) registers the schema, the CPU kernel and the autograd
kernel in C++, so that an eager call never enters Python; this module then
adds the fake kernel, the torch.func kernel, and the Python route as a
second op, ``sigmoid_backward::_python_route``, to which the native
autograd kernel sends calls with forward-mode tangents and the native CPU
kernel sends the inputs it refuses (for the package's errors).  Without the
native op (not built, built for another torch, or
``SIGMOID_BACKWARD_TORCH=python``), everything is registered from here.

Importing this module imports torch; ``import sigmoid_backward`` does not.
"""
import torch
from torch.autograd import forward_ad

from ._frameworks import _torch_inductor, _torch_registration, _torch_transforms
from ._frameworks._torch_registration import _load_native
from ._numpy import _function as _function_module

__all__ = ["sigmoid_backward", "sigmoid", "Sigmoid", "replace_sigmoid", "ROUTE"]

# ROUTE: "native (...)" or "python (why)", the route of this op's eager calls.
_NATIVE, ROUTE = _load_native()

# The registrations, each job in its module under _frameworks/, in this
# order: the Python route's op with its CPU kernel and the fake kernels
# (_torch_registration); Inductor's decompositions, now or when Inductor is
# imported (_torch_inductor); the kernels under autograd and torch.func
# (_torch_transforms).  _LIB holds every Python registration.
_LIB, _ROUTE_NAME, _OP, _ROUTE_OP = _torch_registration.register(_NATIVE)
_torch_inductor.register(_OP, _ROUTE_OP, _NATIVE)
_torch_transforms.register(_LIB, _ROUTE_NAME, _OP, _ROUTE_OP, _NATIVE)


def sigmoid_backward(grad_output, output):
    """Gradient of the sigmoid, as a PyTorch operator.

    ``torch.ops.sigmoid_backward.sigmoid_backward``: ``grad_output * (1 -
    output) * output``, conjugated for complex, computed by this library's
    CPU kernel (float16 and bfloat16 in float32, rounded once); under
    ``torch.compile``, Inductor fuses ``aten.sigmoid_backward`` in its
    place (aten's compiled values).  It has a
    fake kernel (``torch.compile``, ``torch.export``), aten's derivatives
    in backward and forward mode, differentiable again, and a vmap rule:
    autograd, ``torch.autograd.forward_ad`` and ``torch.func.grad``,
    ``vjp``, ``jacrev``, ``jvp``, ``jacfwd``, ``hessian``, ``vmap`` and
    ``functionalize`` give the values they give through
    ``torch.ops.aten.sigmoid_backward``, computed on this kernel.

    Parameters
    ----------
    grad_output, output : torch.Tensor
        CPU tensors that broadcast together (a 0-d CPU tensor goes with a
        ``meta`` one, as for aten); their promotion (PyTorch's rules) is
        the result dtype, one of float16, bfloat16, float32, float64,
        complex64, complex128.

    Returns
    -------
    torch.Tensor
        A new tensor of the broadcast shape, laid out as aten's result
        (the inputs' memory format: contiguous, channels_last, transposed).

    Raises
    ------
    TypeError
        When the inputs promote to another dtype; it is also a
        NotImplementedError, as aten's error for a dtype is.
    RuntimeError
        When the shapes do not broadcast, or the tensors are on two devices.
    NotImplementedError
        For tensors on a device other than the CPU (or ``meta``), and
        layouts other than strided (sparse, ...): use
        ``torch.ops.aten.sigmoid_backward`` there.
    """
    if _is_compiling():
        return _OP(grad_output, output)   # an op Dynamo traces (_OP_CALL is C)
    return _OP_CALL(grad_output, output)


class _Sigmoid(torch.autograd.Function):
    """torch.sigmoid, whose derivatives are the op's: aten's formulas for
    sigmoid, with the op where aten calls aten.sigmoid_backward."""

    generate_vmap_rule = True   # its methods are PyTorch ops and the op, which vmaps

    @staticmethod
    def forward(x):
        return torch.sigmoid(x)

    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.save_for_backward(output)

    @staticmethod
    def backward(ctx, grad):
        (y,) = ctx.saved_tensors
        return _OP(grad, y)


class _SigmoidForwardMode(_Sigmoid):
    """With forward mode too: the tangent is conj(op(conj(dx), y)), aten's
    elementwise rule from the backward formula."""

    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.save_for_backward(output)
        ctx.save_for_forward(output)

    @staticmethod
    def jvp(ctx, x_t):
        (y,) = ctx.saved_tensors
        return _OP(x_t.conj(), y).conj()


def sigmoid(x):
    """``torch.sigmoid(x)``, whose derivatives are computed by :func:`sigmoid_backward`.

    The forward is ``torch.sigmoid``; the backward is ``sigmoid_backward(grad,
    sigmoid(x))``, and the forward-mode tangent ``sigmoid_backward(dx,
    sigmoid(x))`` (conjugated twice for complex), as PyTorch's own, so
    gradients and ``torch.func`` transforms (``grad``, ``jvp``, ``jacrev``,
    ``jacfwd``, ``hessian``, ``vmap``) are bit-identical to
    ``torch.sigmoid``'s for float32, float64 and bfloat16, and within
    roundings for float16 (rounded once) and complex.  Traceable by
    ``torch.compile(fullgraph=True)``, which gets it without a forward-mode
    rule (Dynamo does not trace one): forward-mode AD inside a compiled
    function, of an input that requires grad, raises PyTorch's error.

    Parameters
    ----------
    x : torch.Tensor
        A CPU tensor of a dtype the op supports.

    Returns
    -------
    torch.Tensor
        ``torch.sigmoid(x)``.
    """
    if _is_compiling():
        # Dynamo stops at an autograd.Function that defines jvp ("Unsupported
        # custom jvp"); without it, it traces forward and backward.
        return _Sigmoid.apply(x)
    if _SIGMOID_OP is not None:
        return _SIGMOID_OP(x)   # native: no Python below this call
    return _SigmoidForwardMode.apply(x)


# Dynamo knows this function by identity (it is True while tracing); a
# module global is one attribute lookup less a call than torch.compiler's.
_is_compiling = torch.compiler.is_compiling


# The op called as torch's own bindings call theirs (_torch_op_module.cc), natively;
# the function's calls on two CPU tensors take it too.
_OP_CALL = _OP
if _NATIVE is not None:
    _OP_CALL = _NATIVE.sigmoid_backward
    _function_module._use_tensor_op(torch.Tensor, _OP_CALL,
                                    torch._C._are_functorch_transforms_active, forward_ad)

# The native route's sigmoid op (torch.ops.sigmoid_backward.sigmoid): its
# CPU and autograd kernels (forward mode included) and its vmap rule are
# C++; its fake kernel (_torch_registration's) and its kernel under
# torch.func's other transforms, the Function above, are Python.
_SIGMOID_OP = None
if _NATIVE is not None:
    _NATIVE_SIGMOID = torch.ops.sigmoid_backward.sigmoid.default
    # The op called as torch.sigmoid's binding calls its own (_torch_op_module.cc).
    _SIGMOID_OP = _NATIVE.sigmoid

    torch.library.register_fake(_NATIVE_SIGMOID, _torch_registration._sigmoid_fake, lib=_LIB)
    # Under grad and jvp, the Function's own rules at each level.  (functionalize
    # of sigmoid raises torch's "NYI: Functionalize rule for custom_function_call",
    # on either route; the op itself functionalizes.)
    _NATIVE.set_transforms(_torch_transforms.transformed, _SigmoidForwardMode.apply)


# Sigmoid's forward: on the native route the C entry itself, as nn.Sigmoid's
# is torch.sigmoid's binding.  Through sigmoid(), its frame and its
# is_compiling() check (two more) cost a training step at widths 64-256
# about 1% (NOTES.md, 40).  What sigmoid() decides in Python happens
# elsewhere: Dynamo traces sigmoid() in its place, and the entry hands what
# it does not take directly (subclasses, modes, and export's fake tensors)
# to _sigmoid_elsewhere; so every trace is sigmoid()'s.
_MODULE_FORWARD = sigmoid
if _SIGMOID_OP is not None:
    def _sigmoid_elsewhere(x):
        # sigmoid()'s own first test: the fallback cannot be sigmoid()
        # itself, whose native branch calls the entry again (a loop).
        if _is_compiling():
            return _Sigmoid.apply(x)
        return _NATIVE_SIGMOID(x)   # runs __torch_function__, as torch.sigmoid does

    _NATIVE.set_sigmoid_fallback(_sigmoid_elsewhere)
    _torch_inductor.trace_in_place(_SIGMOID_OP, sigmoid)
    _MODULE_FORWARD = _SIGMOID_OP


class Sigmoid(torch.nn.Module):
    """``torch.nn.Sigmoid`` whose derivative is computed by this library's
    kernel (:func:`sigmoid`): the same values forward and backward, bit for
    bit in float32, float64 and bfloat16, so a model trains identically.
    :func:`replace_sigmoid` swaps a model's ``nn.Sigmoid`` modules for it."""

    def forward(self, x):
        return _MODULE_FORWARD(x)


def replace_sigmoid(model):
    """Swap every ``torch.nn.Sigmoid`` in ``model`` (itself included, and
    at any depth) for :class:`Sigmoid`, in place.

    Parameters
    ----------
    model : torch.nn.Module
        The model; its submodules are replaced where they are registered,
        so hooks on the model and its other modules, and its parameters and
        state dict, are untouched.

    Returns
    -------
    torch.nn.Module
        ``model``, or a :class:`Sigmoid` when ``model`` is an ``nn.Sigmoid``
        itself (which cannot be replaced in place).
    """
    if not isinstance(model, torch.nn.Module):
        raise TypeError(f"model: expected a torch.nn.Module, got {type(model).__name__}")
    if type(model) is torch.nn.Sigmoid:
        return Sigmoid()
    for module in model.modules():
        for name, child in module.named_children():
            if type(child) is torch.nn.Sigmoid:
                setattr(module, name, Sigmoid())
    return model
