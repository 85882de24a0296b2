"""sigmoid_backward for JAX: this library's kernel as an XLA custom call.

:func:`sigmoid_backward` runs under ``jax.jit`` and ``jax.vmap`` through an
XLA FFI handler (``_xla_ffi``, built with the package when a C++17 compiler
is found) that calls the ufunc's own kernel, so its results are the
ufunc's, bit for bit.  :func:`sigmoid` is ``jax.nn.sigmoid`` with a
``custom_vjp`` whose backward is :func:`sigmoid_backward`.

Importing this module imports jax; ``import sigmoid_backward`` does not.
"""
import jax
import jax.numpy as jnp

from . import _dtypes

try:
    from ._xla_ffi import handler as _handler
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

_SUPPORTED = tuple(jnp.dtype(d.name) for d in _dtypes.TABLE)   # the package's dtypes


@jax.custom_jvp
def _call(g, y):
    # One dtype and one shape: the handler computes element for element.
    # Under vmap every operand gets the batch axis ("broadcast_all").
    result = jax.ShapeDtypeStruct(g.shape, g.dtype)
    return jax.ffi.ffi_call(_TARGET, result, vmap_method="broadcast_all")(g, y)


@_call.defjvp
def _call_jvp(primals, tangents):
    """The derivative, in JAX's arithmetic (linear in the tangents, so JAX
    can transpose it for ``grad``): d(g * conj(s(y))) with s(y) = (1 - y) y
    is dg * conj(s(y)) + g * conj((1 - 2 y) dy)."""
    g, y = primals
    dg, dy = tangents
    result = _call(g, y)
    s = (1 - y) * y
    d = dg * jnp.conj(s) + g * jnp.conj((1 - 2 * y) * dy)
    return result, d


def sigmoid_backward(grad_output, output):
    """Gradient of the sigmoid, ``grad_output * (1 - output) * output``,
    conjugated for complex, as an XLA custom call on the CPU.

    Works under ``jax.jit``, ``jax.vmap`` and ``jax.grad`` (its derivative
    is computed by XLA); the values are this library's ufunc's, bit for bit
    (float16 and bfloat16 computed in float32 and rounded once).

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
                        f"it computes in {', '.join(d.name for d in _dtypes.TABLE)}")
    g = jnp.asarray(grad_output, dtype)
    y = jnp.asarray(output, dtype)
    shape = jnp.broadcast_shapes(g.shape, y.shape)
    return _call(jnp.broadcast_to(g, shape), jnp.broadcast_to(y, shape))


@jax.custom_vjp
def sigmoid(x):
    """``jax.nn.sigmoid(x)``, whose gradient is :func:`sigmoid_backward`.

    Parameters
    ----------
    x : jax.Array
        Of a floating or complex dtype.

    Returns
    -------
    jax.Array
        ``jax.nn.sigmoid(x)``; its vector-Jacobian product with ``ct`` is
        ``sigmoid_backward(ct, conj(sigmoid(x)))``: ``ct * (1 - y) * y``,
        unconjugated, as JAX's convention for complex is.
    """
    return jax.nn.sigmoid(x)


def _sigmoid_fwd(x):
    y = jax.nn.sigmoid(x)
    return y, y


def _sigmoid_bwd(y, ct):
    # JAX's vector-Jacobian product of a holomorphic function is ct * f'(x),
    # unconjugated (PyTorch conjugates): the kernel's conj((1 - y) y) at
    # conj(y) is (1 - y) y.  conj is exact, and does nothing to reals.
    return (sigmoid_backward(ct, jnp.conj(y)),)


sigmoid.defvjp(_sigmoid_fwd, _sigmoid_bwd)
