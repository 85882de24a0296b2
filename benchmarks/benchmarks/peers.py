"""Other libraries' ways to compute the sigmoid's gradient, one adapter
each, shared by everything in ``benchmarks/`` that times them: the asv
suite (bench_peers.py), ``compare.py`` (the bench with their columns) and
``ablation.py`` (PyTorch in its bfloat16 section).

- ``torch``: PyTorch's CPU kernel,
  ``torch.ops.aten.sigmoid_backward.grad_input(g, y, grad_input=out)``, on
  tensors that share the arrays' memory;
- ``jax``: ``jax.jit`` of the formula on arrays put on the CPU device once,
  with ``jax_enable_x64`` (otherwise float64 silently becomes float32);
  each call returns a new array, as JAX arrays are immutable;
- ``numba``: a ``numba.vectorize(target='parallel')`` ufunc of the formula,
  computed in the dtype, into ``out`` (no float16 or bfloat16: numba has
  no arithmetic for them);
- ``numexpr``: ``numexpr.evaluate`` of the formula into ``out``.

None of them is a dependency: :func:`load` returns None for a library that
is not installed, and each adapter returns None for a dtype its library
cannot compute.  The package itself imports none of them.
"""
import importlib
import os
import sys
import warnings

import numpy as np

NAMES = ("torch", "jax", "numba", "numexpr")

# XLA's CPU client runs a program on its own threads; this flag holds its
# Eigen operations to one, but not the loops XLA compiles for a fusion,
# which still run on its pool (1.2-1.7 CPU-seconds a second at 1e5-1e7
# elements: benchmarks/NOTES.md, 41); only the process's CPU affinity
# holds those.  XLA reads XLA_FLAGS when jax is imported, never after.
# (The recipe this replaced added TensorFlow's
# "intra_op_parallelism_threads=1": XLA stops reading its flags at a word
# without dashes, so nothing after it applied, and at the start of
# XLA_FLAGS the process aborted.)
XLA_ONE_THREAD = "--xla_cpu_multi_thread_eigen=false"


def load(name, nthreads=None):
    """The library ``name`` (one of NAMES), set up to be timed, or None.

    Parameters
    ----------
    name : str
        "torch", "jax", "numba" or "numexpr".
    nthreads : int, optional
        Threads the library may use; None leaves its own default.  JAX
        takes only 1, and only when nothing imported it before: then this
        adds XLA_ONE_THREAD to the ``XLA_FLAGS`` environment variable.

    Returns
    -------
    module or None
        None when the library is not installed.  JAX comes with
        ``jax_enable_x64`` on.
    """
    if name == "jax" and nthreads == 1 and "jax" not in sys.modules:
        flags = os.environ.get("XLA_FLAGS", "")
        if XLA_ONE_THREAD not in flags:
            os.environ["XLA_FLAGS"] = f"{flags} {XLA_ONE_THREAD}".strip()
    try:
        module = importlib.import_module(name)
    except ImportError:
        return None
    if name == "jax":
        module.config.update("jax_enable_x64", True)
    elif name == "numba" and nthreads is not None:
        module.set_num_threads(min(nthreads, module.config.NUMBA_NUM_THREADS))
    elif nthreads is not None:   # torch, numexpr
        module.set_num_threads(nthreads)
    return module


def tensor(torch, a):
    """A tensor over the ndarray ``a``'s memory (ml_dtypes' types, bfloat16
    and float8, through their bits: torch.from_numpy does not know them)."""
    with warnings.catch_warnings():   # a read-only array: torch warns, and we only read
        warnings.simplefilter("ignore", UserWarning)
        if a.dtype.type.__module__ == "ml_dtypes":
            return torch.from_numpy(a.view(f"i{a.itemsize}")).view(getattr(torch, a.dtype.name))
        return torch.from_numpy(a)


def torch_call(torch, g, y, out):
    """PyTorch's own kernel writing into ``out``'s memory; None where it has
    none for the dtype (torch 2.13 has no float8 arithmetic)."""
    if not hasattr(torch, g.dtype.name):
        return None
    tg, ty, to = tensor(torch, g), tensor(torch, y), tensor(torch, out)
    op = torch.ops.aten.sigmoid_backward.grad_input
    try:
        op(tg[:1], ty[:1], grad_input=to[:1])   # asked, not assumed
    except (RuntimeError, NotImplementedError):
        return None
    return lambda: op(tg, ty, grad_input=to)


def jax_call(jax, g, y):
    """The jitted formula on device copies of ``g`` and ``y``, waiting for
    its result; None if JAX would compute in another dtype (x64 off)."""
    import jax.numpy as jnp
    if g.dtype.kind == "c":
        fn = jax.jit(lambda g, y: g * jnp.conj((1 - y) * y))
    else:
        fn = jax.jit(lambda g, y: g * (1 - y) * y)
    jg, jy = jax.device_put(g), jax.device_put(y)
    if fn(jg, jy).dtype != g.dtype:
        return None
    return lambda: fn(jg, jy).block_until_ready()


_NUMBA_UFUNCS: dict[np.dtype, object] = {}


def numba_ufunc(numba, dtype):
    """A parallel numba ufunc of the formula for ``dtype``, computed in the
    dtype (its own 1, so that ``1 - y`` does not promote), or None where
    numba cannot compile it (float16, bfloat16).  Compiled once per dtype."""
    if dtype not in _NUMBA_UFUNCS:
        one = dtype.type(1)
        if dtype.kind == "c":
            def kernel(g, y):
                return g * np.conj((one - y) * y)
        else:
            def kernel(g, y):
                return g * (one - y) * y
        try:
            t = numba.from_dtype(dtype)
            _NUMBA_UFUNCS[dtype] = numba.vectorize([t(t, t)], target="parallel")(kernel)
        except (NotImplementedError, KeyError, TypeError, numba.core.errors.NumbaError):
            _NUMBA_UFUNCS[dtype] = None
    return _NUMBA_UFUNCS[dtype]


def numba_call(numba, g, y, out):
    """The numba ufunc into ``out``, or None for a dtype numba lacks."""
    fn = numba_ufunc(numba, g.dtype)
    if fn is None:
        return None
    return lambda: fn(g, y, out=out)


def numexpr_call(numexpr, g, y, out):
    """``numexpr.evaluate`` of the formula into ``out``, or None for a dtype
    numexpr refuses (bfloat16)."""
    expr = "g * conj((1 - y) * y)" if g.dtype.kind == "c" else "g * (1 - y) * y"
    env = {"g": g, "y": y}
    try:
        numexpr.evaluate(expr, local_dict=env, out=out)
    except (TypeError, ValueError, NotImplementedError, KeyError):
        return None
    return lambda: numexpr.evaluate(expr, local_dict=env, out=out)


def calls(modules, g, y, out, spare_bytes):
    """``{name: zero-argument call}`` for the libraries of ``modules`` (name
    -> module or None, as :func:`load` gives) that can compute this case.
    JAX copies both inputs and makes a new output, so it runs only where
    those fit in ``spare_bytes``."""
    found = {}
    if modules.get("torch") is not None:
        found["torch"] = torch_call(modules["torch"], g, y, out)
    if modules.get("jax") is not None and 3 * g.nbytes <= spare_bytes:
        found["jax"] = jax_call(modules["jax"], g, y)
    if modules.get("numba") is not None:
        found["numba"] = numba_call(modules["numba"], g, y, out)
    if modules.get("numexpr") is not None:
        found["numexpr"] = numexpr_call(modules["numexpr"], g, y, out)
    return {name: fn for name, fn in found.items() if fn is not None}


def versions(modules):
    """``"torch 2.13.0, jax not installed, ..."`` for the report's header."""
    return ", ".join(f"{name} {module.__version__}" if module is not None
                     else f"{name} not installed" for name, module in modules.items())
