"""sigmoid_backward for JAX: this library's kernel as an XLA custom call.

:func:`sigmoid_backward` runs through an XLA FFI handler (``_xla_ffi``,
built with the package when a C++17 compiler is found) that calls the
ufunc's own kernel, so its results are the ufunc's, bit for bit, under
``jax.jit``, ``jax.vmap`` (one call on the batch) and both modes of
differentiation.  :func:`sigmoid` is ``jax.nn.sigmoid`` whose derivatives,
forward (``jax.jvp``, ``jacfwd``) and reverse (``jax.grad``, ``vjp``,
``jacrev``), are :func:`sigmoid_backward`, differentiable again.

Importing this module imports jax; ``import sigmoid_backward`` does not.
"""
import jax
import jax.numpy as jnp
from jax.core import ShapedArray
from jax.extend.core import Primitive
from jax.interpreters import ad, batching, mlir

from ._kernel import _dtypes

try:
    from ._frameworks._xla_ffi import handler as _handler
except ImportError as exc:   # built without it: say how to get it
    raise ImportError(
        "sigmoid_backward.jax needs the package's XLA FFI target, which this build of "
        "sigmoid-backward does not have: it is built when a C++17 compiler is found.  "
        "Install one (Debian/Ubuntu: apt-get install g++), then reinstall with "
        "pip install --force-reinstall --no-deps --no-binary sigmoid-backward "
        "sigmoid-backward -Csetup-args=-Djax=enabled (from a source tree: pip install . "
        "-Csetup-args=-Djax=enabled), which fails if it cannot build it"
    ) from exc

__all__ = ["sigmoid_backward", "sigmoid"]

_TARGET = "sigmoid_backward"
jax.ffi.register_ffi_target(_TARGET, _handler(), platform="cpu")

# The package's dtypes that this JAX has.
_SUPPORTED = tuple(jnp.dtype(d.name) for d in _dtypes.TABLE if hasattr(jnp, d.name))

# The kernel's call is a primitive of its own, with a rule for each of JAX's
# transforms.  A custom_jvp function would do for sigmoid_backward itself,
# but sigmoid's tangent is this call on dx, and reverse mode transposes that
# tangent: JAX transposes a primitive that says it is linear in
# grad_output (its transpose is the same call on the cotangent), not a
# custom_jvp function or a custom call.
_kernel = Primitive("sigmoid_backward")


def _shape(g, y):
    """The result's shape: the operands' (of one rank) broadcast together."""
    return jnp.broadcast_shapes(g.shape, y.shape)


def _impl(g, y):
    # One dtype and one rank; the handler reads an operand of extent 1 along
    # an axis with step 0 there, so a broadcast operand is never
    # materialised.  (A Python float stays one through jax.jvp: an array
    # here.)
    g, y = jnp.asarray(g), jnp.asarray(y)
    return jax.ffi.ffi_call(_TARGET, jax.ShapeDtypeStruct(_shape(g, y), g.dtype))(g, y)


_kernel.def_impl(_impl)
_kernel.def_abstract_eval(lambda g, y: ShapedArray(_shape(g, y), g.dtype))
mlir.register_lowering(_kernel, jax.ffi.ffi_lowering(_TARGET), platform="cpu")


def _tangent_of_grad_output(dg, g, y):
    return _kernel.bind(dg, y)   # linear in g: the call itself (dg has g's shape)


def _tangent_of_output(dy, g, y):
    """d(g conj(s(y))) with s(y) = (1 - y) y, for y: g conj((1 - 2 y) dy),
    in JAX's arithmetic (so that it is differentiable and transposable)."""
    return g * jnp.conj((1 - 2 * y) * dy)


ad.defjvp(_kernel, _tangent_of_grad_output, _tangent_of_output)


def _transpose(ct, g, y):
    """The call is linear in grad_output alone: g -> g conj(s(y)) is its own
    transpose (JAX transposes without conjugating)."""
    if ad.is_undefined_primal(y):
        raise NotImplementedError("sigmoid_backward is linear in grad_output, not in output")
    if type(ct) is ad.Zero:
        return [ad.Zero(g.aval), None]
    # g was broadcast along the axes where it has extent 1: its cotangent
    # is the sum over them, as for any broadcast.
    shape = g.aval.shape
    ct_g = _kernel.bind(ct, y)
    axes = tuple(i for i, (n, m) in enumerate(zip(shape, ct_g.shape, strict=True)) if n != m)
    return [jnp.sum(ct_g, axis=axes, keepdims=True) if axes else ct_g, None]


ad.primitive_transposes[_kernel] = _transpose


def _batched(args, dims):
    """vmap's rule: elementwise, so one call on the batch, with its axis
    first; an unbatched operand (its axis None) gets an axis of extent 1
    there, which the handler broadcasts without a copy."""
    g, y = (a.reshape((1, *a.shape)) if d is None else jnp.moveaxis(a, d, 0)
            for a, d in zip(args, dims, strict=True))
    return _kernel.bind(g, y), 0


batching.primitive_batchers[_kernel] = _batched


def sigmoid_backward(grad_output, output):
    """Gradient of the sigmoid, ``grad_output * (1 - output) * output``,
    conjugated for complex, as an XLA custom call on the CPU.

    Works under ``jax.jit``, ``jax.vmap`` and ``jax.jvp``, ``jax.grad`` and
    their compositions (its derivative in ``output`` is computed by XLA, in
    ``grad_output`` by this call); the values are this library's ufunc's,
    bit for bit (float16 and bfloat16 computed in float32 and rounded once).

    Parameters
    ----------
    grad_output, output : jax.Array or array_like
        Broadcast together; their promotion by JAX's rules (Python scalars
        are weak) is the result dtype: float16, bfloat16, float32, float64
        or complex64, complex128 (the 64-bit ones need ``jax_enable_x64``).

    Returns
    -------
    jax.Array
        The result, of the broadcast shape, on the CPU.

    Raises
    ------
    TypeError
        When the inputs promote to another dtype (an integer, say).
    """
    dtype = jnp.result_type(grad_output, output)
    if dtype not in _SUPPORTED:
        raise TypeError(f"sigmoid_backward: grad_output and output promote to {dtype}; "
                        f"it computes in {', '.join(d.name for d in _SUPPORTED)}")
    g = jnp.asarray(grad_output, dtype)
    y = jnp.asarray(output, dtype)
    # One rank (leading axes of extent 1, a free reshape); the broadcast
    # itself is the handler's, reading with step 0, never a copy.
    rank = max(g.ndim, y.ndim)
    return _kernel.bind(g.reshape((1,) * (rank - g.ndim) + g.shape),
                        y.reshape((1,) * (rank - y.ndim) + y.shape))


@jax.custom_jvp
def sigmoid(x):
    """``jax.nn.sigmoid(x)``, whose derivatives are :func:`sigmoid_backward`.

    Parameters
    ----------
    x : jax.Array
        Of a floating or complex dtype.

    Returns
    -------
    jax.Array
        ``jax.nn.sigmoid(x)``.  Its tangent at ``dx`` (``jax.jvp``,
        ``jacfwd``) is ``sigmoid_backward(dx, conj(y))``, and its
        vector-Jacobian product with ``ct`` (``jax.grad``, ``vjp``,
        ``jacrev``) the same call on ``ct``: ``ct * (1 - y) * y``,
        unconjugated, as JAX's convention for complex is.  Both are this
        library's kernel, differentiable again (``jax.hessian``).
    """
    return jax.nn.sigmoid(x)


@sigmoid.defjvp
def _sigmoid_jvp(primals, tangents):
    # f'(x) dx = (1 - y) y dx: the kernel's conj((1 - y) y) at conj(y), and
    # linear in dx, so reverse mode transposes it to the kernel on ct.  conj
    # is exact, and does nothing to reals.
    (x,), (dx,) = primals, tangents
    y = jax.nn.sigmoid(x)
    return y, _kernel.bind(dx, jnp.conj(y))
