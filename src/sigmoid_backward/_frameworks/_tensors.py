"""Tensors back for tensors: the function's PyTorch, JAX and CuPy inputs.

``sigmoid_backward`` computes on NumPy arrays.  When an argument is an
array of an ML framework, the call follows SciPy's array-API principle, the
output has the input's array type:

- PyTorch CPU tensors are read through ``.numpy()`` views (bfloat16 through
  an int16 view), without a copy; the result is ``torch.from_numpy`` of the
  NumPy result, sharing its memory.  ``out=`` may be a tensor, written
  through its view and returned.
- JAX CPU arrays are read without a copy (``np.asarray``) and the result is
  put back on the input's device: one copy, as JAX arrays are immutable.
- Tensors and arrays on another device (CUDA, ROCm, MPS, ...) and CuPy
  arrays are refused with an error that names the device and the
  framework's own op: nothing is silently copied to the host.  So are JAX
  tracers (inside ``jax.jit``, ``grad``, ``vmap``), which hold no values.

Objects are recognised by their class's module, so this module never
imports a framework: it only uses one whose array it was handed.
"""
import sys

import numpy as np

from .._kernel import _dtypes
from .._numpy._inputs import as_array, framework, plain_tensor

# Types no framework owns, that most calls pass.
_PLAIN = frozenset((np.ndarray, float, int, complex, bool, type(None), np.float16, np.float32,
                    np.float64, np.complex64, np.complex128,
                    *(dt.type for dt in _dtypes.FOREIGN)))
# ml_dtypes' types by number, as the integer dtype of their width: NumPy
# reads torch's bfloat16 and float8 tensors as such, viewed.
_FOREIGN_BY_NUM = {d.dtype.num: (d.name, np.dtype(f"i{d.dtype.itemsize}"))
                   for d in _dtypes.TABLE if d.foreign}
_torch_foreign = None   # torch dtype -> (torch's integer dtype of its width, ml_dtypes')


def _foreign_torch_dtypes(torch):
    """The table's ml_dtypes types that torch has, as torch dtypes."""
    global _torch_foreign
    if _torch_foreign is None:
        ints = {1: torch.int8, 2: torch.int16}
        _torch_foreign = {getattr(torch, d.name): (ints[d.dtype.itemsize], d.dtype)
                          for d in _dtypes.TABLE if d.foreign and hasattr(torch, d.name)}
    return _torch_foreign
_FLOAT64_NUM = _dtypes.BY_NAME["float64"].num
_COMPLEX128_NUM = _dtypes.BY_NAME["complex128"].num

# What to use instead, by framework, when its array is not on the CPU.
_OWN_OP = {
    "torch": "use PyTorch's own torch.ops.aten.sigmoid_backward(grad_output, output) there",
    "jax": "use JAX's own jax.vjp(jax.nn.sigmoid, x) or g * (1 - y) * y under jax.jit there",
    "cupy": "use CuPy's own arithmetic, grad_output * (1 - output) * output, there",
}


def call(grad_output, output, out, function, options):
    """The function's call when a framework array is involved, else
    NotImplemented.

    Parameters
    ----------
    grad_output, output : object
        The function's inputs, as the caller passed them.
    out : object
        The function's ``out`` (None, an array, or a tuple of one).
    function : callable
        ``sigmoid_backward`` itself, called again on what this module hands
        it (NumPy arrays for framework arrays, anything else untouched).
    options : tuple
        The caller's other options, ``(where, casting, order, dtype, subok,
        num_threads)``: a tuple, since binding them costs more than a small
        call's share, and most calls involve no framework.

    Returns
    -------
    object
        ``out`` as passed (its one element for a tuple) when it is given;
        otherwise the result in the inputs' array type (a 0-d tensor or
        array for 0-d inputs), or what ``compute`` returned when that is no
        NumPy array (another container won the ufunc's dispatch).
        NotImplemented when no argument is a framework array.

    Raises
    ------
    TypeError
        For an argument on a device other than the CPU, a CuPy array, a JAX
        tracer, inputs of two frameworks, an ``out`` that cannot be written
        in place, or a result dtype the framework cannot hold.
    """
    if type(grad_output) in _PLAIN and type(output) in _PLAIN and type(out) in _PLAIN:
        return NotImplemented   # the commonest calls, without three lookups
    target = out[0] if type(out) is tuple and len(out) == 1 else out
    kinds = (framework(grad_output), framework(output), framework(target))
    if kinds == (None, None, None):
        return NotImplemented
    where, casting, order, dtype, subok, num_threads = options

    def compute(g, y, o):
        return function(g, y, o, where=where, casting=casting, order=order, dtype=dtype,
                        subok=subok, num_threads=num_threads)

    if kinds == ("torch", "torch", None) and out is None:
        result = _plain_tensors(grad_output, output, compute)
        if result is not NotImplemented:
            return result
    kind = kinds[0] or kinds[1]   # the inputs' framework
    if kinds[0] and kinds[1] and kinds[0] != kinds[1]:
        raise TypeError(f"grad_output is a {_describe(grad_output)} and output a "
                        f"{_describe(output)}: convert one to the other's framework")
    g = _input(grad_output, "grad_output", kinds[0])
    y = _input(output, "output", kinds[1])
    if kinds[2] is not None:
        out_view = _out_view(target, kinds[2])
        compute(g, y, (out_view,) if type(out) is tuple else out_view)
        return target
    result = compute(g, y, out)
    if out is not None or kind is None or not isinstance(result, (np.ndarray, np.generic)):
        return result   # out as passed; another container's result
    return _from_numpy(np.asarray(result), kind, grad_output if kinds[0] else output)


def _plain_tensors(g, y, compute):
    """The common case in fewer steps: two CPU tensors of a dtype NumPy has,
    without lazy bits, and no out=, are their ``.numpy()`` views, detached
    first when they require grad outside grad mode (the op's inputs do,
    below autograd).  ``.numpy()`` refuses every other tensor: then
    NotImplemented.  While a forward-mode dual level is open the general
    path reads them, which refuses a tensor with a tangent."""
    torch = sys.modules.get("torch")
    foreign = _foreign_torch_dtypes(torch) if torch is not None else ()
    if torch is None or g.dtype in foreign or y.dtype in foreign \
            or torch.autograd.forward_ad._current_level >= 0:
        return NotImplemented
    try:
        g_view, y_view = g.numpy(), y.numpy()
    except (TypeError, RuntimeError):
        _refuse_untracked(g, "grad_output")
        _refuse_untracked(y, "output")
        try:   # autograd history: the same memory, detached
            g_view, y_view = g.detach().numpy(), y.detach().numpy()
        except (TypeError, RuntimeError):
            return NotImplemented
    result = compute(g_view, y_view, None)
    if type(result) is np.ndarray:
        return torch.from_numpy(result)
    return _from_numpy(np.asarray(result), "torch", g)   # 0-d: a NumPy scalar


def _describe(x):
    return f"{type(x).__module__}.{type(x).__name__}"


def _refuse_device(x, name, kind):
    """Raise for an array that is not in host memory; return otherwise."""
    device = _device(x, kind)
    if device is not None:
        raise TypeError(f"{name}: a {_describe(x)} on {device}: sigmoid_backward computes "
                        f"on the CPU and does not copy device memory to the host; "
                        f"{_OWN_OP[kind]}")


def _device(x, kind):
    """The device of ``x`` when it is not the CPU, as its framework names it."""
    if kind == "torch":
        return None if x.device.type == "cpu" else str(x.device)
    if kind == "jax":
        platforms = {d.platform for d in x.devices()}
        return None if platforms == {"cpu"} else ", ".join(sorted(platforms))
    # CuPy arrays live in device memory: __dlpack_device__ is (type, id).
    device_type, device_id = x.__dlpack_device__()
    return f"{_DLPACK_DEVICES.get(int(device_type), f'DLPack device {int(device_type)}')}:" \
           f"{device_id}"


_DLPACK_DEVICES = {1: "cpu", 2: "cuda", 3: "cuda_host", 10: "rocm", 13: "cuda_managed"}


def _refuse_tracer(x, name):
    jax = sys.modules.get("jax")
    if jax is not None and isinstance(x, jax.core.Tracer):
        raise TypeError(f"{name}: a JAX tracer ({type(x).__name__}) holds no values: "
                        f"inside jax.jit, grad or vmap use sigmoid_backward.jax."
                        f"sigmoid_backward, which runs this kernel as an XLA custom call")


# A result computed on NumPy views carries no derivatives.  Tensors whose
# derivatives would be silently lost with it are refused, pointing at the op
# (sigmoid_backward.torch), which has them.  The op's own kernel gets its
# inputs with autograd off in both modes, so none of these refuse there.
_USE_THE_OP = ("use sigmoid_backward.torch.sigmoid_backward "
               "(torch.ops.sigmoid_backward.sigmoid_backward), which has derivatives")


def _refuse_untracked(t, name):
    """Raise for a torch.func tensor, or one that requires grad under grad mode."""
    torch = sys.modules.get("torch")
    if torch is None:   # a stand-in
        return
    if torch._C._functorch.is_functorch_wrapped_tensor(t):
        raise TypeError(f"{name}: a tensor inside a torch.func transform (grad, vjp, jvp, "
                        f"vmap, ...), whose derivatives and batch a NumPy result cannot "
                        f"carry: {_USE_THE_OP} and batches")
    if t.requires_grad and torch.is_grad_enabled():
        raise TypeError(f"{name}: a tensor that requires grad, under grad mode: the result "
                        f"would have no autograd history, and the gradient through it "
                        f"would be silently lost; {_USE_THE_OP}, or pass {name}.detach() "
                        f"(or call under torch.no_grad()) for the values alone")


def _refuse_tangent(t, name):
    """Raise for a dual tensor (torch.autograd.forward_ad) with a tangent."""
    torch = sys.modules.get("torch")
    if torch is None:
        return
    forward_ad = torch.autograd.forward_ad
    if forward_ad._current_level >= 0 and torch._C._is_fwd_grad_enabled() \
            and forward_ad.unpack_dual(t).tangent is not None:
        raise TypeError(f"{name}: a dual tensor (torch.autograd.forward_ad), whose tangent "
                        f"the result would silently lose; {_USE_THE_OP}, or pass "
                        f"forward_ad.unpack_dual({name}).primal for the values alone")


def _input(x, name, kind):
    """An input as the ufunc takes it: framework arrays as NumPy views."""
    if kind is None:
        return x
    if kind == "torch":
        try:
            view = _torch_view(x)
        except (TypeError, RuntimeError):
            _refuse_device(x, name, kind)
            _refuse_untracked(x, name)
            try:
                # Autograd history, lazy conj/neg bits: resolved, then viewed.
                return _torch_view(plain_tensor(x))
            except (TypeError, RuntimeError):
                return as_array(x, name)   # other dtypes: DLPack, or an error naming x
        _refuse_untracked(x, name)   # bfloat16's int16 view (float8's int8) drops requires_grad
        _refuse_tangent(x, name)
        return view
    if kind == "jax":
        _refuse_tracer(x, name)
    _refuse_device(x, name, kind)
    return as_array(x, name)


def _torch_view(t):
    """A CPU tensor's memory as an ndarray; raises what ``Tensor.numpy()``
    raises for a tensor it cannot view (device, grad, conj/neg bits, dtype)."""
    torch = sys.modules.get("torch")   # None: a stand-in, whose .numpy() raises
    if torch is not None and t.dtype in _foreign_torch_dtypes(torch):
        as_int, dtype = _foreign_torch_dtypes(torch)[t.dtype]
        return t.view(as_int).numpy().view(dtype)
    return t.numpy()


def _out_view(out, kind):
    """``out`` as an ndarray over the same memory, for the ufunc to write."""
    if kind == "jax":
        raise TypeError(f"out: a {_describe(out)} cannot be written: JAX arrays are "
                        f"immutable; leave out=None to get a new JAX array")
    error = None
    if kind == "torch":
        try:
            return _torch_view(out)
        except (TypeError, RuntimeError) as exc:
            error = exc   # .numpy() refused it: say why in the caller's terms
    _refuse_device(out, "out", kind)   # CuPy: always refused here
    if out.requires_grad:
        raise TypeError("out: a tensor that requires grad cannot be written in place; "
                        "pass out=tensor.detach(), which shares its memory, to write it anyway")
    if out.is_conj() or out.is_neg():
        raise TypeError("out: a lazily conjugated or negated tensor view cannot be "
                        "written in place; resolve_conj() or resolve_neg() it first")
    raise TypeError(f"out: cannot write into a {_describe(out)} of dtype {out.dtype}: "
                    f"{error}") from error


def _from_numpy(result, kind, like):
    """The NumPy result in the input's framework."""
    if kind == "torch":
        torch = sys.modules["torch"]
        foreign = _FOREIGN_BY_NUM.get(result.dtype.num)   # (== on dtypes costs 0.5 us)
        if foreign is not None:
            return torch.from_numpy(result.view(foreign[1])).view(getattr(torch, foreign[0]))
        return torch.from_numpy(result)
    jax = sys.modules["jax"]
    if result.dtype.num in (_FLOAT64_NUM, _COMPLEX128_NUM) and not jax.config.jax_enable_x64:
        raise TypeError(f"the result is {result.dtype}, which JAX holds only with "
                        f"jax.config.update('jax_enable_x64', True); enable it, or "
                        f"pass NumPy arrays")
    return jax.device_put(result, next(iter(like.devices())))
