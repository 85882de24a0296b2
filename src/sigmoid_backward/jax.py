"""sigmoid_backward for JAX: this library's kernel as an XLA custom call.

:func:`sigmoid_backward` runs through an XLA FFI handler (``_xla_ffi``,
built with the package when a C++17 compiler is found) that calls the
ufunc's own kernel, so its results are the ufunc's, bit for bit, under
``jax.jit``, ``jax.vmap`` (one call on the batch) and both modes of
differentiation; on sharded arrays each device computes its own shards.
:func:`sigmoid` is ``jax.nn.sigmoid`` whose derivatives, forward
(``jax.jvp``, ``jacfwd``) and reverse (``jax.grad``, ``vjp``, ``jacrev``),
are :func:`sigmoid_backward`, differentiable again.

Importing this module imports jax; ``import sigmoid_backward`` does not.
"""
import jax
import jax.numpy as jnp
from jax._src import dispatch
from jax._src.core import ShardingTypeError
from jax.experimental.custom_partitioning import (
    ArrayMapping,
    SdyShardingRule,
    custom_partitioning,
)
from jax.extend.core import Primitive
from jax.extend.mlir import ir
from jax.interpreters import ad, batching, mlir
from jax.sharding import NamedSharding, PartitionSpec

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


def _call(g, y):
    """The custom call, on whole operands or on one device's shards of them.
    One dtype and one rank; the handler reads an operand of extent 1 along
    an axis with step 0 there, so a broadcast operand is never
    materialised."""
    return jax.ffi.ffi_call(_TARGET, jax.ShapeDtypeStruct(_shape(g, y), g.dtype))(g, y)


def _abstract_eval(g, y):
    """The result's type is an elementwise product's, g * y's: the broadcast
    shape, and the sharding that JAX gives g * y under a mesh of explicit
    axes (refusing, as for g * y, shardings that do not combine) and its
    varying manual axes under jax.shard_map."""
    try:
        out, _ = jax.lax.mul_p.abstract_eval(g, y)
    except ShardingTypeError as exc:   # it names mul: name this call and its arguments
        raise ShardingTypeError(
            f"sigmoid_backward: grad_output {g.str_short()} and output {y.str_short()} "
            "have shardings that do not combine, as for g * y (reshard one with "
            f"jax.sharding.reshard): {exc}") from None
    return out.update(weak_type=False)


# ---- Sharding: each device computes its own shards ---------------------------
# XLA's partitioner cannot see into a custom call: left alone, it gathers
# sharded operands whole onto every device and slices the result.  The call
# is elementwise, so it runs on any shards: custom_partitioning gives Shardy
# (or GSPMD) the propagation rule and the partitioner the per-device program,
# this same call on the device's shards.  On one device, or under a
# shard_map that makes every axis manual, custom_partitioning lowers the
# plain call: the same program as without it.

def _sharding_rule(mesh, operand_types, result_types):
    """Shardy's rule, elementwise: result axis i is the factor ``a{i}``,
    which an operand shares where it has the result's extent; along an axis
    where it is broadcast (extent 1) an operand has a factor of its own, of
    size 1, which Shardy leaves unsharded."""
    (result_type,) = result_types
    extents = ir.RankedTensorType(result_type).shape

    def factors(k, operand_type):
        shape = ir.RankedTensorType(operand_type).shape
        return ArrayMapping(*(f"a{i}" if n == m else f"b{k}_{i}"
                              for i, (n, m) in enumerate(zip(shape, extents, strict=True))))
    return SdyShardingRule(tuple(factors(k, t) for k, t in enumerate(operand_types)),
                           (ArrayMapping(*(f"a{i}" for i in range(len(extents)))),))


def _spec(sharding, ndim):
    """A NamedSharding's partition spec, one entry per axis (None, for an
    operand that GSPMD's propagation has not reached yet: unsharded)."""
    spec = () if sharding is None else tuple(sharding.spec)
    return spec + (None,) * (ndim - len(spec))


def _partition(mesh, arg_shapes, result_shape):
    """The partitioner's callback: the result keeps the sharding that
    propagation chose; each operand is sharded as the result, replicated
    along its broadcast axes (the partitioner reshards an operand sharded
    otherwise), and each device calls the kernel on its shards."""
    spec = _spec(result_shape.sharding, len(result_shape.shape))
    operands = tuple(NamedSharding(mesh, PartitionSpec(*(
        s if n == m else None for s, n, m in zip(spec, a.shape, result_shape.shape, strict=True))))
        for a in arg_shapes)
    return mesh, _call, NamedSharding(mesh, PartitionSpec(*spec)), operands


def _infer_sharding_from_operands(mesh, arg_shapes, result_shape):
    """GSPMD's propagation (Shardy's is _sharding_rule): a result axis is
    sharded as the first operand, grad_output first, that is sharded along
    it and not broadcast there, unless that mesh axis is taken already:
    where the operands disagree, grad_output's sharding wins."""
    spec: list = [None] * len(result_shape.shape)
    taken: set = set()
    for a in arg_shapes:
        entries = _spec(a.sharding, len(a.shape))
        for i, (s, n, m) in enumerate(zip(entries, a.shape, result_shape.shape, strict=True)):
            names = set(s if isinstance(s, tuple) else (s,)) - {None}
            if spec[i] is None and n == m and names and not names & taken:
                spec[i] = s
                taken |= names
    return NamedSharding(mesh, PartitionSpec(*spec))


_partitioned = custom_partitioning(_call)
_partitioned.def_partition(_partition,
                           infer_sharding_from_operands=_infer_sharding_from_operands,
                           sharding_rule=_sharding_rule)

_kernel.def_abstract_eval(_abstract_eval)
mlir.register_lowering(_kernel, mlir.lower_fun(_partitioned, multiple_results=False),
                       platform="cpu")
# custom_partitioning's lowering tells one device from several by the
# program's devices, which JAX gives a lowering only for the primitives in
# this set (as it does for its own primitives lowered through
# custom_partitioning).
dispatch.prim_requires_devices_during_lowering.add(_kernel)

# An eager call is the jitted call, so that sharded arrays take the lowering
# above too.  (A Python float stays one through jax.jvp: an array here.)
_jitted = jax.jit(_kernel.bind)
_kernel.def_impl(lambda g, y: _jitted(jnp.asarray(g), jnp.asarray(y)))


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
