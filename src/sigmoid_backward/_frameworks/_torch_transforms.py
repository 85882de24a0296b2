"""sigmoid_backward.torch's op under autograd and torch.func: its derivatives
in both modes (aten's), its vmap rule, and the kernels that apply them
where the dispatcher meets the transforms.

Importing this module registers nothing: sigmoid_backward.torch calls
:func:`register` once, at its import.
"""
from typing import Any

import torch
from torch._functorch.pyfunctorch import (
    FunctionalizeInterpreter,
    VmapInterpreter,
    retrieve_current_functorch_interpreter,
)
from torch._subclasses.functional_tensor import FunctorchFunctionalizeAPI
from torch.autograd import forward_ad

# The op and the Python route's op, as register() is given them.
_OP: Any = None
_ROUTE_OP: Any = None


def register(lib, route_name, op, route_op, native):
    """Registers the autograd kernel of the route's op in ``lib``, and the
    op's kernel under torch.func's transforms: in ``lib`` on the Python
    route; on the native one (``native``, the native op's module), C++'s
    kernel has it, and runs vmap's usual calls itself
    (_torch_op_transforms.cc): :func:`transformed` has the rest."""
    global _OP, _ROUTE_OP
    _OP, _ROUTE_OP = op, route_op
    lib.impl(route_name, _autograd, "Autograd", with_keyset=True)
    if native is None:
        lib.impl("sigmoid_backward", _transforms, "FuncTorchDynamicLayerFrontMode",
                 with_keyset=True)


def _batched(info, in_dims, grad_output, output):
    """The op under ``torch.vmap``: elementwise, so one call on the batch.
    Each batched input gets its batch dimension first and its example
    dimensions padded to the examples' broadcast rank; an unbatched one
    broadcasts against every example as it is.  Both are cast first to the
    dtype the examples promote to: a 0-d example is a scalar to PyTorch's
    promotion, which its batch of them is not."""
    g_dim, y_dim = in_dims
    if g_dim == y_dim == 0 and grad_output.dim() == output.dim() and (
            grad_output.dtype == output.dtype):
        return _OP(grad_output, output), 0   # vmap's usual call: as it is
    dtype = torch.result_type(_example(grad_output, g_dim), _example(output, y_dim))
    rank = max(grad_output.dim() - (g_dim is not None), output.dim() - (y_dim is not None))
    g = _batch_first(grad_output, g_dim, rank).to(dtype)
    y = _batch_first(output, y_dim, rank).to(dtype)
    return _OP(g, y), 0


def _example(t, dim):
    return t if dim is None else t.select(dim, 0)


def _batch_first(t, dim, rank):
    if dim is None:
        return t
    t = t.movedim(dim, 0)
    return t[(slice(None),) + (None,) * (rank + 1 - t.dim())]


def _backward(ctx, grad):
    """PyTorch passes the conjugate Wirtinger derivatives back: for g
    (holomorphic) grad * (1 - y) * y, which is the op at conj(y); for y
    (antiholomorphic) conj(grad) * g * (1 - 2 conj(y)).  The engine sums
    broadcast dimensions and casts to each input's dtype."""
    grad_output, output = ctx.saved_tensors
    grad_g = grad_y = None
    if ctx.needs_input_grad[0]:
        grad_g = _OP(grad, output.conj())
    if ctx.needs_input_grad[1]:
        grad_y = grad.conj() * grad_output * (-2 * output.conj() + 1)
    return grad_g, grad_y


def _jvp(ctx, grad_output_t, output_t):
    """d(g conj(s(y))) with s(y) = (1 - y) y: dg conj(s(y)), the op on the
    tangent, plus conj(dy) g (1 - 2 conj(y)).  An input without a tangent
    (None) adds nothing, as aten's zero tensor does."""
    grad_output, output = ctx.saved_tensors
    tangent = None
    if grad_output_t is not None:
        tangent = _OP(grad_output_t, output)
    if output_t is not None:
        term = output_t.conj() * grad_output * (-2 * output.conj() + 1)
        tangent = term if tangent is None else tangent + term
    return tangent


# The op's derivatives are aten's for sigmoid_backward (derivatives.yaml),
# term for term, so that each transform gives aten's values.  Two Functions
# apply them: one for autograd (both modes), one for torch.func.


class _Recorded(torch.autograd.Function):
    """The op as autograd records it.  Its forward takes ctx: without a
    setup_context, Function.apply does not bind the arguments to forward's
    signature first (10 float32 values: 79 -> 35 us a call)."""

    @staticmethod
    def forward(ctx, grad_output, output):
        ctx.save_for_backward(grad_output, output)
        ctx.save_for_forward(grad_output, output)
        return _OP(grad_output, output)   # autograd is off here: the kernel

    backward = staticmethod(_backward)
    jvp = staticmethod(_jvp)


class _Transformed(torch.autograd.Function):
    """The op under torch.func, which wants setup_context and a vmap rule."""

    @staticmethod
    def forward(grad_output, output):
        return _OP(grad_output, output)

    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.save_for_backward(*inputs)
        ctx.save_for_forward(*inputs)

    backward = staticmethod(_backward)
    jvp = staticmethod(_jvp)
    vmap = staticmethod(_batched)


def _records_derivatives(grad_output, output):
    """Whether autograd records this call: backward mode when an input
    requires grad under grad mode, forward mode while a dual level of
    ``torch.autograd.forward_ad`` is open (a tensor without a tangent then
    costs a Function, not a wrong result)."""
    if torch.is_grad_enabled() and (grad_output.requires_grad or output.requires_grad):
        return True
    return forward_ad._current_level >= 0 and torch._C._is_fwd_grad_enabled()


def _autograd(keyset, grad_output, output):
    if _records_derivatives(grad_output, output):
        return _Recorded.apply(grad_output, output)
    # The plain call: straight to the kernel below, without a Function.
    with torch._C._AutoDispatchBelowAutograd():
        return _ROUTE_OP.redispatch(keyset & torch._C._after_autograd_keyset, grad_output,
                                    output)


_FUNCTORCH = torch._C.DispatchKey.FuncTorchDynamicLayerFrontMode


def _transforms(keyset, grad_output, output):
    """The op under torch.func's transforms, which meet it here, before
    autograd.  grad, vjp and jvp (and jacrev, jacfwd, hessian, made of
    them and vmap) get the Function as if the caller had applied it: each
    uses its rule (backward, jvp) at its level.  (An autograd kernel cannot
    apply a Function under them, and register_vmap's batching kernel is
    never reached past this one.)  vmap gets the Function's vmap rule
    applied directly (_vmapped).  functionalize has no rule for Functions,
    and needs none for this op, which neither mutates nor views: it gets
    the op on its tensors' values, one level down."""
    if not torch._C._are_functorch_transforms_active():
        return _OP.redispatch(keyset.remove(_FUNCTORCH), grad_output, output)
    return transformed(grad_output, output)


def transformed(grad_output, output):
    """:func:`_transforms` while a transform is active.  An input whose
    transform has ended (a "dead" wrapper: what a vjp saved, when vmap runs
    its backward later, as jacrev does) is unwrapped first, as torch's own
    kernel at this key does: kept, it would reach a level that is gone."""
    grad_output = torch._C._functorch.unwrap_if_dead(grad_output)
    output = torch._C._functorch.unwrap_if_dead(output)
    interpreter = retrieve_current_functorch_interpreter()
    if isinstance(interpreter, VmapInterpreter):
        return _vmapped(interpreter, grad_output, output)
    if not isinstance(interpreter, FunctionalizeInterpreter):
        return _Transformed.apply(grad_output, output)
    functionalize = FunctorchFunctionalizeAPI(interpreter)
    grad_output, output = functionalize.unwrap_tensors((grad_output, output))
    with functionalize.redispatch_to_next():
        result = _OP(grad_output, output)
    return functionalize.wrap_tensors(result)


def _vmapped(interpreter, grad_output, output):
    """The op at a vmap level: its vmap rule, applied here rather than
    through the Function (whose vmap path, pytrees and argument binding,
    cost 300 us a call, 5x the kernel's time on 64 x 4096 float32 values).
    At the levels below, the op's call meets their transforms (derivatives
    included) as any call does."""
    level = interpreter.level()
    g, g_dim = torch._C._functorch._unwrap_batched(grad_output, level)
    y, y_dim = torch._C._functorch._unwrap_batched(output, level)
    with interpreter.lower():
        if g_dim is None and y_dim is None:   # nothing batched at this level
            return _OP(g, y)
        result, dim = _batched(None, (g_dim, y_dim), g, y)
    return torch._C._functorch._add_batch_dim(result, dim, level)
