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
import importlib
import importlib.abc
import importlib.util
import os
import sys

import torch
import torch._prims_common
from torch._functorch.pyfunctorch import (
    FunctionalizeInterpreter,
    VmapInterpreter,
    retrieve_current_functorch_interpreter,
)
from torch._subclasses.functional_tensor import FunctorchFunctionalizeAPI
from torch.autograd import forward_ad

from ._kernel import _dtypes
from ._numpy import _function as _function_module
from ._numpy._function import sigmoid_backward as _function

__all__ = ["sigmoid_backward", "sigmoid", "Sigmoid", "replace_sigmoid", "ROUTE"]

# The package's dtypes that this torch has (float8 since 2.1).
_SUPPORTED = tuple(getattr(torch, d.name) for d in _dtypes.TABLE if hasattr(torch, d.name))
_COMPUTED_ON = ("cpu", "meta")   # meta: shapes only, as for every op

_SCHEMA = "(Tensor grad_output, Tensor output) -> Tensor"


def _load_native():
    """The native op's module, or None; and why, for :data:`ROUTE`.  The
    ``.so`` is tied to the torch it was built against (C++ ABI), so it is
    loaded only under that very build of torch."""
    from ._build_config import TORCH
    if not TORCH["version"]:
        return None, "python (the native op was not built: see docs/frameworks.md)"
    if (TORCH["version"], TORCH["git"]) != (torch.__version__, torch.version.git_version):
        return None, (f"python (the native op was built for torch {TORCH['version']}, "
                      f"this is torch {torch.__version__}: build sigmoid_backward again)")
    if os.environ.get("SIGMOID_BACKWARD_TORCH") == "python":
        return None, "python (SIGMOID_BACKWARD_TORCH=python)"
    native = importlib.import_module("sigmoid_backward._frameworks._torch_op")
    return native, f"native (C++, built for torch {TORCH['version']})"


# ROUTE: "native (...)" or "python (why)", the route of this op's eager calls.
_NATIVE, ROUTE = _load_native()

_LIB = torch.library.Library("sigmoid_backward", "FRAGMENT")   # holds every Python registration
if _NATIVE is None:
    _LIB.define("sigmoid_backward" + _SCHEMA)
    _ROUTE_NAME = "sigmoid_backward"
else:   # the native op defined sigmoid_backward; the Python route is a second op
    _LIB.define("_python_route" + _SCHEMA)
    _ROUTE_NAME = "_python_route"
_OP = torch.ops.sigmoid_backward.sigmoid_backward.default
_ROUTE_OP = getattr(torch.ops.sigmoid_backward, _ROUTE_NAME).default
_QUALNAME = "sigmoid_backward::" + _ROUTE_NAME


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


@torch.library.impl(_QUALNAME, "cpu", lib=_LIB)
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


for _op in {_OP, _ROUTE_OP}:
    torch.library.register_fake(_op, _fake, lib=_LIB)


# ---- torch.compile: Inductor gets aten's op, which it fuses. --------------
# Inductor cannot look into a kernel it did not generate: a compiled graph
# would call the op between its fused kernels, a round trip through memory
# for each.  So Inductor's decomposition table, which Inductor alone applies
# (eager calls, torch.export and the other backends keep the op and its
# kernel), maps the op to aten.sigmoid_backward, which Inductor decomposes in
# turn (torch._decomp: g * conj(y * (1 - y)), in float32 for float16 and
# bfloat16): a compiled function gives aten's compiled values.  (A
# decomposition cannot leave the op to its kernel for some dtypes: Inductor
# then wants a lowering of the op, and has none.)

def _as_aten(grad_output, output):
    dtype = torch.result_type(grad_output, output)
    if dtype.itemsize > 1:
        return torch.ops.aten.sigmoid_backward.default(grad_output, output)
    # float8, which aten does not compute in eager mode (nor round once in
    # Inductor): the kernel's formula in float32, rounded once, as it does.
    g, y = grad_output.to(torch.float32), output.to(torch.float32)
    result = g * (1 - y) * y
    if dtype == _E4M3FN:
        # From 464, half a step past e4m3fn's largest value (448), the kernel
        # rounds to NaN (it has no infinity); PyTorch's conversion saturates.
        result = torch.where(result.abs() < 464, result, torch.nan)
    return result.to(dtype)


_E4M3FN = getattr(torch, "float8_e4m3fn", None)


def _sigmoid_as_aten(x):
    return torch.ops.aten.sigmoid.default(x)   # what the native sigmoid's CPU kernel calls


_INDUCTOR_TABLE = "torch._inductor.decomposition"
_inductor_decomposes = False   # whether Inductor's table has the ops' decompositions


def _decompose_under_inductor():
    """Gives Inductor's table, once it is imported, the ops' decompositions."""
    global _inductor_decomposes
    inductor = sys.modules.get(_INDUCTOR_TABLE)
    if _inductor_decomposes or inductor is None:
        return
    _inductor_decomposes = True
    inductor.register_decomposition(list({_OP, _ROUTE_OP}))(_as_aten)
    if _NATIVE is not None:
        inductor.register_decomposition(torch.ops.sigmoid_backward.sigmoid.default)(
            _sigmoid_as_aten)
    # Inductor's select_decomp_table() serves a copy of the table made at
    # its first compile (fast_random_decomps, under functools.cache): a
    # process that compiled before gets it made again, with the ops.
    stale_copy = getattr(inductor, "fast_random_decomps", None)
    if stale_copy is not None and hasattr(stale_copy, "cache_clear"):
        stale_copy.cache_clear()


class _WhenInductorIsImported(importlib.abc.MetaPathFinder):
    """Registers the decompositions as soon as Inductor's table is imported:
    importing it here would cost 1.3 s, as much as torch itself, for every
    user, and registering later (when the op is first traced, say) can come
    after a compile has taken its table, which Inductor refuses."""

    def find_spec(self, name, path, target=None):
        if name != _INDUCTOR_TABLE:
            return None
        sys.meta_path.remove(self)   # once; and now the other finders find it
        spec = importlib.util.find_spec(name)
        if spec is not None and spec.loader is not None:
            exec_module = spec.loader.exec_module

            def exec_then_decompose(module):
                exec_module(module)
                _decompose_under_inductor()
            # This spec's own loader (module.__loader__ stays the one that
            # reads the source, for tracebacks and inspect).
            spec.loader.exec_module = exec_then_decompose   # type: ignore[method-assign]
        return spec


if _INDUCTOR_TABLE in sys.modules:
    _decompose_under_inductor()
else:
    sys.meta_path.insert(0, _WhenInductorIsImported())


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


_LIB.impl(_ROUTE_NAME, _autograd, "Autograd", with_keyset=True)

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


_LIB.impl("sigmoid_backward", _transforms, "FuncTorchDynamicLayerFrontMode", with_keyset=True)


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
    return _OP(grad_output, output)


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
    if torch.compiler.is_compiling():
        # Dynamo stops at an autograd.Function that defines jvp ("Unsupported
        # custom jvp"); without it, it traces forward and backward.
        return _Sigmoid.apply(x)
    if _SIGMOID_OP is not None:
        return _SIGMOID_OP(x)   # native: no Python below this call
    return _SigmoidForwardMode.apply(x)


# The function's calls on two CPU tensors take the native op too.
if _NATIVE is not None:
    # OpOverload.__call__ only calls its _op: the builtin itself, a frame less.
    _function_module._use_tensor_op(torch.Tensor, getattr(_OP, "_op", _OP),
                                    torch._C._are_functorch_transforms_active, forward_ad)

# The native route's sigmoid op (torch.ops.sigmoid_backward.sigmoid): its
# CPU and autograd kernels (forward mode included) are C++; its fake kernel
# and its kernel under torch.func's transforms, the Function above, are here.
_SIGMOID_OP = None
if _NATIVE is not None:
    _NATIVE_SIGMOID = torch.ops.sigmoid_backward.sigmoid.default
    _SIGMOID_OP = _NATIVE_SIGMOID

    def _sigmoid_fake(x):
        if x.dtype not in _SUPPORTED or x.device.type not in _COMPUTED_ON:
            raise NotImplementedError(f"sigmoid_backward.sigmoid: a tensor of {x.dtype} on "
                                      f"{x.device}: it computes in the package's dtypes, "
                                      f"on the CPU")
        return torch.empty_strided(x.shape, _result_strides(x, x, x.shape), dtype=x.dtype,
                                   device=x.device)

    torch.library.register_fake(_NATIVE_SIGMOID, _sigmoid_fake, lib=_LIB)

    def _sigmoid_transforms(keyset, x):
        if not torch._C._are_functorch_transforms_active():
            return _NATIVE_SIGMOID.redispatch(keyset.remove(_FUNCTORCH), x)
        return _SigmoidForwardMode.apply(x)   # its own rules at each level

    _LIB.impl("sigmoid", _sigmoid_transforms, "FuncTorchDynamicLayerFrontMode",
              with_keyset=True)


class Sigmoid(torch.nn.Module):
    """``torch.nn.Sigmoid`` whose derivative is computed by this library's
    kernel (:func:`sigmoid`): the same values forward and backward, bit for
    bit in float32, float64 and bfloat16, so a model trains identically.
    :func:`replace_sigmoid` swaps a model's ``nn.Sigmoid`` modules for it."""

    def forward(self, x):
        return sigmoid(x)


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
