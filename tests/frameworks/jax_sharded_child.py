"""sigmoid_backward.jax on sharded arrays, run by test_jax_target.py in a
process of its own: the host platform has N devices only when XLA_FLAGS
says so before jax initialises, and the test process's jax has.

    python jax_sharded_child.py N AXIS_TYPE      (AXIS_TYPE: Auto or Explicit)

Prints one JSON record per case: the input's and the output's sharding,
whether the output is bit for bit the single-device call's, the compiled
program's collectives and the shapes the custom call computes.  The test
judges them.
"""
import json
import os
import re
import sys

ndev, axis_type = int(sys.argv[1]), sys.argv[2]
os.environ["XLA_FLAGS"] = (f"{os.environ.get('XLA_FLAGS', '')} "
                           f"--xla_force_host_platform_device_count={ndev}").strip()

import jax  # noqa: E402  (after XLA_FLAGS)
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
from jax.sharding import AxisType, NamedSharding  # noqa: E402
from jax.sharding import PartitionSpec as P  # noqa: E402

import sigmoid_backward.jax as sbj  # noqa: E402

COLLECTIVES = ("all-gather", "all-to-all", "all-reduce", "reduce-scatter", "collective-permute")
CALL = re.compile(r"= \w+\[([\d,]*)\]\S* custom-call\(.*custom_call_target=\"sigmoid_backward\"")

names = ("x",) if ndev == 2 else ("x", "z")
mesh = jax.make_mesh((2,) * len(names), names,
                     axis_types=(getattr(AxisType, axis_type),) * len(names))
one_device = jax.devices()[0]
rng = np.random.default_rng(31)
N, M = 16, 24


def arrays(dtype, *shapes):
    out = [rng.standard_normal(s).astype(dtype) for s in shapes[:-1]]
    return [*out, rng.random(shapes[-1]).astype(dtype)]   # y last, in [0, 1)


def placed(a, spec):
    return jax.device_put(a, NamedSharding(mesh, spec))


def spec_of(sharding, ndim):
    spec = tuple(sharding.spec)
    return [list(s) if isinstance(s, tuple) else s for s in spec + (None,) * (ndim - len(spec))]


def record(case, f, sharded, plain, reference):
    """f on the sharded inputs and on the same values on one device."""
    row = {"case": case, "input": spec_of(reference.sharding, reference.ndim)}
    jitted = jax.jit(f)
    try:
        outs = jitted(*sharded)
    except Exception as exc:   # the test judges the error
        row["error"] = f"{type(exc).__name__}: {exc}"
        return row
    outs = outs if isinstance(outs, tuple) else (outs,)
    expected = jax.jit(f)(*(jax.device_put(a, one_device) for a in plain))
    expected = expected if isinstance(expected, tuple) else (expected,)
    compiled = jitted.lower(*sharded).compile().as_text()
    row.update(
        outputs=[spec_of(o.sharding, o.ndim) for o in outs],
        same_sharding=[o.sharding.is_equivalent_to(reference.sharding, o.ndim) for o in outs],
        bit_equal=[np.asarray(o).dtype == np.asarray(e).dtype
                   and np.asarray(o).tobytes() == np.asarray(e).tobytes()
                   for o, e in zip(outs, expected, strict=True)],
        shard_shapes=[list(o.sharding.shard_shape(o.shape)) for o in outs],
        calls=[[int(n) for n in m.group(1).split(",") if n] for m in CALL.finditer(compiled)],
        collectives=[c for c in COLLECTIVES if c in compiled])
    return row


rows = []
specs = {"rows": P("x", None), "columns": P(None, "x"), "replicated": P()}
if ndev == 4:
    specs.update({"rows and columns": P("x", "z"), "rows on both axes": P(("x", "z"), None)})
for name, spec in specs.items():
    for dtype in (np.float32, jnp.bfloat16):
        g, y = arrays(dtype, (N, M), (N, M))
        rows.append(record(f"{name}, {np.dtype(dtype).name}", sbj.sigmoid_backward,
                           (placed(g, spec), placed(y, spec)), (g, y), placed(g, spec)))

# Broadcast operands: y of shape (m,), replicated or sharded as g's columns;
# a Python float.
g, y = arrays(np.float32, (N, M), (M,))
for name, (gs, ys) in {"y (m,) replicated, g rows": (P("x", None), P()),
                       "y (m,) sharded, g columns": (P(None, "x"), P("x"))}.items():
    rows.append(record(name, sbj.sigmoid_backward, (placed(g, gs), placed(y, ys)), (g, y),
                       placed(g, gs)))
rows.append(record("y a Python float, g rows", lambda g: sbj.sigmoid_backward(g, 0.25),
                   (placed(g, P("x", None)),), (g,), placed(g, P("x", None))))

# Operands sharded differently: grad_output on rows, output on columns.
g, y = arrays(np.float32, (N, M), (N, M))
mixed = record("g rows, y columns", sbj.sigmoid_backward,
               (placed(g, P("x", None)), placed(y, P(None, "x"))), (g, y),
               placed(g, P("x", None)))
mixed["y_sharding"] = spec_of(NamedSharding(mesh, P(None, "x")), 2)
try:
    jax.jit(lambda g, y: g * y)(placed(g, P("x", None)), placed(y, P(None, "x")))
    mixed["jax_product_refused"] = False
except Exception:   # JAX's own elementwise product, asked rather than assumed
    mixed["jax_product_refused"] = True
rows.append(mixed)

# Transforms of a call on row-sharded operands.
g, y, dg, dy = arrays(np.float32, (N, M), (N, M), (N, M), (N, M))
rows_spec = P("x", None)
sharded = tuple(placed(a, rows_spec) for a in (g, y, dg, dy))
rows.append(record("vmap", jax.vmap(sbj.sigmoid_backward), sharded[:2], (g, y), sharded[0]))
rows.append(record("vmap, y unbatched", jax.vmap(sbj.sigmoid_backward, in_axes=(0, None)),
                   (sharded[0], placed(y[0], P())), (g, y[0]), sharded[0]))
rows.append(record("jvp", lambda g, y, dg, dy: jax.jvp(sbj.sigmoid_backward, (g, y), (dg, dy)),
                   sharded, (g, y, dg, dy), sharded[0]))
rows.append(record("vjp of sigmoid", lambda x, ct: jax.vjp(sbj.sigmoid, x)[1](ct)[0],
                   sharded[2:], (dg, dy), sharded[2]))
print(json.dumps(rows))
