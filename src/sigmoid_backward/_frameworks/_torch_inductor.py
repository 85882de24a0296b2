"""sigmoid_backward.torch under torch.compile: Inductor gets aten's op, which it fuses.

Inductor cannot look into a kernel it did not generate: a compiled graph
would call the op between its fused kernels, a round trip through memory
for each.  So Inductor's decomposition table, which Inductor alone applies
(eager calls, torch.export and the other backends keep the op and its
kernel), maps the op to aten.sigmoid_backward, which Inductor decomposes in
turn (torch._decomp: g * conj(y * (1 - y)), in float32 for float16 and
bfloat16): a compiled function gives aten's compiled values.  (A
decomposition cannot leave the op to its kernel for some dtypes: Inductor
then wants a lowering of the op, and has none.)

Dynamo, for its part, cannot trace a C function: :func:`trace_in_place`
tells it which Python function to trace where code calls one.

Importing this module registers nothing: sigmoid_backward.torch calls
:func:`register` and :func:`trace_in_place` once, at its import; each
registers with Inductor or Dynamo when that is imported, as importing
either here would cost every user about a second.
"""
import importlib.abc
import importlib.util
import sys

import torch

# The ops, and the native op's module or None, as register() is given them.
_OP = _ROUTE_OP = _NATIVE = None


def register(op, route_op, native):
    """Gives Inductor's table the decompositions now if it is imported,
    else as soon as it is."""
    global _OP, _ROUTE_OP, _NATIVE
    _OP, _ROUTE_OP, _NATIVE = op, route_op, native
    _when_imported(_INDUCTOR_TABLE, _decompose_under_inductor)


def trace_in_place(c_function, traced):
    """Dynamo traces the Python function ``traced`` where code calls
    ``c_function`` (torch.compiler.substitute_in_graph): now if Dynamo is
    imported, else as soon as it is (torch.compile and export import it
    before they trace)."""
    def substitute():
        torch.compiler.substitute_in_graph(c_function, skip_signature_check=True)(traced)
    _when_imported("torch._dynamo", substitute)


def _when_imported(name, then):
    """Calls ``then()`` now if the module ``name`` is imported, else just
    after it is."""
    if name in sys.modules:
        then()
    else:
        sys.meta_path.insert(0, _WhenImported(name, then))


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


class _WhenImported(importlib.abc.MetaPathFinder):
    """Calls ``then()`` as soon as the module ``name`` has been imported.
    Importing Inductor's table here would cost 1.3 s, as much as torch
    itself, and Dynamo 0.9 s, for every user; and registering later (when
    the op is first traced, say) can come after a compile has taken its
    table, which Inductor refuses, or after Dynamo has met the C function."""

    def __init__(self, name, then):
        self.name, self.then = name, then

    def find_spec(self, name, path, target=None):
        if name != self.name:
            return None
        sys.meta_path.remove(self)   # once; and now the other finders find it
        spec = importlib.util.find_spec(name)
        if spec is not None and spec.loader is not None:
            exec_module = spec.loader.exec_module

            def exec_then(module):
                exec_module(module)
                self.then()
            # This spec's own loader (module.__loader__ stays the one that
            # reads the source, for tracebacks and inspect).
            spec.loader.exec_module = exec_then   # type: ignore[method-assign]
        return spec
