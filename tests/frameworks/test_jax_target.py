"""sigmoid_backward.jax: the XLA FFI target under jit, vmap and grad, bit
for bit the ufunc's, and on sharded arrays shard by shard.  Skipped without
jax (a failure under SIGMOID_BACKWARD_REQUIRE_FRAMEWORKS=1, where the target
must be built too)."""
import importlib
import json
import os
import pathlib
import subprocess
import sys

import numpy as np
import pytest

import sigmoid_backward

from dtypes_catalogue import ALL_DTYPES
from helpers import (
    advised_huge_pages,
    assert_same,
    assert_within_roundings,
    huge_page_bytes,
    import_framework,
    random_array,
    specials,
)

jax = import_framework("jax")
jnp = jax.numpy
check_grads = importlib.import_module("jax.test_util").check_grads
sbj = importlib.import_module("sigmoid_backward.jax")


@pytest.fixture(autouse=True, scope="module")
def x64():
    """float64 and complex128 exist in JAX only with x64 (else silently 32-bit)."""
    before = jax.config.jax_enable_x64
    jax.config.update("jax_enable_x64", True)
    yield
    jax.config.update("jax_enable_x64", before)


def _pair(dtype, shape=(6, 70)):
    rng = np.random.default_rng(19)
    g = random_array(rng, shape, dtype)
    y = random_array(rng, shape, dtype, scale=1.0)
    return g, y


def _ufunc(g, y):
    return sigmoid_backward.ufunc(np.asarray(g), np.asarray(y))


@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=str)
def test_jit_is_the_ufunc_bit_for_bit(dtype):
    g, y = _pair(dtype)
    result = jax.jit(sbj.sigmoid_backward)(jnp.asarray(g), jnp.asarray(y))
    assert result.dtype == dtype
    assert_same(np.asarray(result), _ufunc(g, y))
    # Large enough to run on several threads and the non-temporal path.
    g, y = _pair(dtype, shape=(1 << 20,))
    assert_same(np.asarray(jax.jit(sbj.sigmoid_backward)(g, y)), _ufunc(g, y))


@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=str)
def test_vmap_is_the_ufunc_bit_for_bit(dtype):
    g, y = _pair(dtype)
    batched = jax.vmap(sbj.sigmoid_backward)(jnp.asarray(g), jnp.asarray(y))
    assert_same(np.asarray(batched), _ufunc(g, y))
    # One operand batched, the other shared: broadcast to the batch.
    shared = jax.jit(jax.vmap(sbj.sigmoid_backward, in_axes=(0, None)))(g, y[0])
    assert_same(np.asarray(shared), _ufunc(g, y[0]))


@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=str)
def test_special_values_are_the_ufuncs(dtype):
    values = specials(dtype)
    g, y = np.meshgrid(values, values)
    assert_same(np.asarray(jax.jit(sbj.sigmoid_backward)(g, y)), _ufunc(g, y))


@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=str)
def test_grad_through_sigmoid_is_the_ufunc_bit_for_bit(dtype):
    x, ct = _pair(dtype, shape=(257,))
    y, vjp = jax.vjp(sbj.sigmoid, jnp.asarray(x))
    assert_same(np.asarray(y), np.asarray(jax.nn.sigmoid(jnp.asarray(x))))
    (grad,) = jax.jit(vjp)(jnp.asarray(ct))
    # JAX's convention for complex: ct * (1 - y) * y, the ufunc at conj(y).
    assert_same(np.asarray(grad), _ufunc(ct, np.conj(np.asarray(y))))
    if np.dtype(dtype).kind == "f":
        grad = jax.jit(jax.grad(lambda x: (sbj.sigmoid(x) * ct).sum()))(jnp.asarray(x))
        assert_same(np.asarray(grad), _ufunc(ct, np.asarray(y)))


def test_grad_matches_jaxs_own_sigmoid_and_differentiates_twice():
    x = jnp.linspace(-6, 6, 101)
    ours = jax.grad(lambda x: sbj.sigmoid(x).sum())
    theirs = jax.grad(lambda x: jax.nn.sigmoid(x).sum())
    np.testing.assert_allclose(ours(x), theirs(x), rtol=1e-15, atol=0)
    second = jax.vmap(jax.grad(jax.grad(sbj.sigmoid)))(x)
    np.testing.assert_allclose(second, jax.vmap(jax.grad(jax.grad(jax.nn.sigmoid)))(x),
                               rtol=1e-12, atol=1e-15)
    check_grads(sbj.sigmoid_backward, (x, jax.nn.sigmoid(x)), order=2,
                              modes=("fwd", "rev"))
    xc = jnp.linspace(-2, 2, 7) + 0.5j
    check_grads(sbj.sigmoid_backward, (xc, jax.nn.sigmoid(xc)), order=2,
                              modes=("fwd", "rev"))


def _reference(g, y):
    """The plain jnp formula, which JAX differentiates itself."""
    return g * jnp.conj((1 - y) * y)


def _output_term(g, y, dy):
    """The derivative's term in output, as sigmoid_backward.jax writes it."""
    return g * jnp.conj((1 - 2 * y) * dy)


def _holomorphic(dtype):
    return np.dtype(dtype).kind == "c"


def _roundings(dtype):
    """A real product rounds once; a complex one's parts up to twice."""
    return 2 if _holomorphic(dtype) else 1


@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=str)
def test_jvp_is_the_kernel_on_the_tangent_plus_the_output_term(dtype):
    g, y = (jnp.asarray(a) for a in _pair(dtype, shape=(4, 9)))
    dg, dy = (jnp.asarray(a) for a in _pair(dtype, shape=(4, 9))[::-1])
    primal, tangent = jax.jvp(sbj.sigmoid_backward, (g, y), (dg, dy))
    assert_same(np.asarray(primal), _ufunc(g, y))
    expected = jnp.asarray(_ufunc(dg, y)) + _output_term(g, y, dy)   # the same formula
    assert_same(np.asarray(tangent), np.asarray(expected))
    (_, only_g), (_, only_y) = (jax.jvp(sbj.sigmoid_backward, (g, y), t)
                                for t in ((dg, jnp.zeros_like(y)), (jnp.zeros_like(g), dy)))
    assert_same(np.asarray(only_g), _ufunc(dg, y))   # the kernel on the tangent, bit for bit
    # And JAX's own derivative of the plain formula, within roundings.
    _, theirs = jax.jvp(_reference, (g, y), (dg, dy))
    assert_within_roundings(np.asarray(tangent), np.asarray(theirs), _roundings(dtype), "jvp")


@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=str)
def test_jacobians_and_hessian_of_sigmoid_backward_are_the_plain_formulas(dtype):
    g, y = (jnp.asarray(a) for a in _pair(dtype, shape=(6,)))
    ct = jnp.asarray(_pair(dtype, shape=(6,))[1])
    options = {"argnums": (0, 1), "holomorphic": _holomorphic(dtype)}

    def total(f):
        return lambda g, y: (f(g, y) * ct).sum()
    for name, transform in (("jacfwd", jax.jacfwd), ("jacrev", jax.jacrev)):
        ours = transform(sbj.sigmoid_backward, **options)(g, y)
        theirs = transform(_reference, **options)(g, y)
        # The derivative in grad_output is the kernel at the unit vectors.
        assert_same(np.diagonal(np.asarray(ours[0])), _ufunc(np.ones_like(g), y))
        for a, b in zip(ours, theirs, strict=True):
            assert_within_roundings(np.asarray(a), np.asarray(b), _roundings(dtype), name)
    ours = jax.hessian(total(sbj.sigmoid_backward), **options)(g, y)
    theirs = jax.hessian(total(_reference), **options)(g, y)
    for a, b in zip(jax.tree.leaves(ours), jax.tree.leaves(theirs), strict=True):
        assert_within_roundings(np.asarray(a), np.asarray(b), _roundings(dtype), "hessian")


def test_vmap_is_one_call_on_the_batch():
    g, y = _pair(np.float32, shape=(5, 7))
    for in_axes, args in (((0, 0), (g, y)), ((1, None), (g.T, y[0]))):
        jaxpr = jax.make_jaxpr(jax.vmap(sbj.sigmoid_backward, in_axes=in_axes))(*args).jaxpr
        calls = [e for e in jaxpr.eqns if e.primitive.name == "sigmoid_backward"]
        assert [c.outvars[0].aval.shape for c in calls] == [(5, 7)]


@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=str)
def test_sigmoids_derivatives_in_both_modes_are_the_kernel(dtype):
    x, dx = (jnp.asarray(a) for a in _pair(dtype, shape=(9,)))
    y = jax.nn.sigmoid(x)
    conj_y = np.conj(np.asarray(y))
    primal, tangent = jax.jvp(sbj.sigmoid, (x,), (dx,))
    assert_same(np.asarray(primal), np.asarray(y))
    assert_same(np.asarray(tangent), _ufunc(dx, conj_y))
    assert_same(np.asarray(jax.jit(lambda x, t: jax.jvp(sbj.sigmoid, (x,), (t,))[1])(x, dx)),
                _ufunc(dx, conj_y))
    (cotangent,) = jax.vjp(sbj.sigmoid, x)[1](dx)
    assert_same(np.asarray(cotangent), _ufunc(dx, conj_y))
    options = {"holomorphic": _holomorphic(dtype)}
    ones = _ufunc(np.ones_like(dx), conj_y)
    for transform in (jax.jacfwd, jax.jacrev):
        assert_same(np.diagonal(np.asarray(transform(sbj.sigmoid, **options)(x))), ones)
    assert_same(np.asarray(jax.vmap(sbj.sigmoid)(x)), np.asarray(y))
    # And jax.nn.sigmoid's own derivatives, within roundings.
    _, theirs = jax.jvp(jax.nn.sigmoid, (x,), (dx,))
    assert_within_roundings(np.asarray(tangent), np.asarray(theirs), _roundings(dtype), "jvp")

    def total(f):
        return lambda x: (f(x) * dx).sum()
    ours = jax.hessian(total(sbj.sigmoid), **options)(x)
    theirs = jax.hessian(total(jax.nn.sigmoid), **options)(x)
    assert_within_roundings(np.asarray(ours), np.asarray(theirs), _roundings(dtype), "hessian")


def test_python_floats_differentiate_as_for_jax_nn_sigmoid():
    for transform in (lambda f: lambda x: jax.jvp(f, (x,), (1.0,))[1], jax.grad, jax.hessian):
        ours, theirs = transform(sbj.sigmoid)(1.5), transform(jax.nn.sigmoid)(1.5)
        assert float(ours) == pytest.approx(float(theirs), rel=1e-15)
    assert jax.jvp(sbj.sigmoid_backward, (2.0, 0.5), (1.0, 1.0))[1] == 0.25 + 0.0


def test_broadcasting_and_weak_scalars_follow_jax():
    g = jnp.ones((3, 1), jnp.bfloat16)
    result = sbj.sigmoid_backward(g, jnp.array([0.25, 0.5], jnp.bfloat16))
    assert result.shape == (3, 2) and result.dtype == jnp.bfloat16
    assert sbj.sigmoid_backward(g, 0.5).dtype == jnp.bfloat16   # a Python float is weak
    assert sbj.sigmoid_backward(jnp.float32(2.0), 0.5) == 0.5


# (grad_output's shape, output's shape): a row, a column, both sides, an
# outer product, a scalar, empty, unit axes, and a broadcast axis between two
# full ones (the handler's outer loop); then rows of runs large enough for
# two threads' shares (compute_rows), under an outer loop too.
BROADCASTS = [((6, 70), (70,)), ((6, 1), (1, 70)), ((70,), (6, 1)), ((), (5,)), ((5,), ()),
              ((3, 1, 4), (3, 5, 4)), ((2, 0, 3), (3,)), ((1, 1), (1,)), ((4, 1, 1, 9), (3, 9)),
              ((700, 37), (37,)), ((700, 37), (700, 1)), ((3, 400, 29), (400, 1)),
              ((5, 1, 300, 41), (1, 3, 1, 41))]


@pytest.mark.parametrize("shapes", BROADCASTS, ids=str)
@pytest.mark.parametrize("dtype", [np.float32, "bfloat16", np.complex128], ids=str)
def test_broadcast_operands_are_the_ufuncs_bit_for_bit(dtype, shapes):
    rng = np.random.default_rng(23)
    g = random_array(rng, shapes[0], dtype)
    y = random_array(rng, shapes[1], dtype, scale=1.0)
    assert_same(np.asarray(sbj.sigmoid_backward(g, y)), _ufunc(g, y))
    assert_same(np.asarray(jax.jit(sbj.sigmoid_backward)(g, y)), _ufunc(g, y))


def test_a_broadcast_operand_reaches_the_handler_unbroadcast():
    """The handler broadcasts by reading with step 0: XLA materialises
    nothing (no broadcast_in_dim), under jit and under vmap."""
    g, y = jnp.ones((64, 4096), jnp.float32), jnp.full((4096,), 0.5, jnp.float32)
    for lowered in (jax.jit(sbj.sigmoid_backward).lower(g, y),
                    jax.jit(jax.vmap(sbj.sigmoid_backward, (0, None))).lower(g, y)):
        text = lowered.as_text()
        assert "custom_call @sigmoid_backward" in text and "broadcast" not in text


def test_the_gradient_of_a_broadcast_operand_sums_over_its_broadcast_axes():
    rng = np.random.default_rng(29)
    y = jnp.asarray(rng.random((5, 7)))
    for g in (jnp.asarray(rng.standard_normal((1, 7))), jnp.asarray(rng.standard_normal(7)),
              jnp.asarray(rng.standard_normal((5, 1)))):
        ours = jax.grad(lambda g: jnp.sum(sbj.sigmoid_backward(g, y)))(g)
        plain = jax.grad(lambda g: jnp.sum(g * (1 - y) * y))(g)
        assert ours.shape == g.shape
        assert_within_roundings(np.asarray(ours), np.asarray(plain), 8)


@pytest.mark.skipif(huge_page_bytes() == 0, reason="huge pages are advised under 'madvise' only")
def test_a_large_result_is_advised_huge_pages():
    """XLA's CPU client gives a large result a fresh mapping; the handler
    advises it MADV_HUGEPAGE (VmFlags "hg"), before it writes it."""
    n = max(2 * huge_page_bytes(), 40 << 20) // 4
    g, y = _pair(np.float32, shape=(n,))
    result = jax.jit(sbj.sigmoid_backward)(jnp.asarray(g), jnp.asarray(y)).block_until_ready()
    assert advised_huge_pages(result.unsafe_buffer_pointer())   # once the handler has run
    assert_same(np.asarray(result), _ufunc(g, y))


def test_integer_results_are_refused_by_dtype():
    with pytest.raises(TypeError, match="promote to int"):
        sbj.sigmoid_backward(jnp.ones(3, jnp.int32), jnp.ones(3, jnp.int32))


def test_without_the_target_the_import_says_how_to_build_it():
    script = ("import sys; sys.modules['sigmoid_backward._frameworks._xla_ffi'] = None\n"
              "import sigmoid_backward.jax\n")
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode != 0
    assert "ImportError: sigmoid_backward.jax needs the package's XLA FFI target" in proc.stderr
    assert "-Csetup-args=-Djax=enabled" in proc.stderr


def test_one_device_lowers_the_plain_call():
    """The sharding rule costs a single-device program nothing: it lowers
    to the custom call alone, as without the rule."""
    g, y = jnp.ones((8, 16), jnp.float32), jnp.full((16,), 0.5, jnp.float32)
    text = jax.jit(sbj.sigmoid_backward).lower(g, y).as_text()
    assert "custom_call @sigmoid_backward" in text and "CustomSPMDPartitioning" not in text


# ---- Sharded arrays: each device computes its own shards --------------------
# On 2 and 4 host devices, in a process of its own (jax_sharded_child.py):
# XLA_FLAGS gives the devices only before jax initialises.

@pytest.fixture(scope="module", params=[(2, "Auto", "Shardy"), (2, "Explicit", "Shardy"),
                                        (4, "Auto", "Shardy"), (4, "Explicit", "Shardy"),
                                        (4, "Auto", "GSPMD")],
                ids=lambda p: f"{p[0]} devices, {p[1]}, {p[2]}")
def sharded(request):
    """The child's records by case.  GSPMD, the partitioner before Shardy
    (deprecated), propagates through the call's other rule."""
    ndev, axis_type, partitioner = request.param
    child = pathlib.Path(__file__).with_name("jax_sharded_child.py")
    env = dict(os.environ, JAX_USE_SHARDY_PARTITIONER=str(int(partitioner == "Shardy")))
    proc = subprocess.run([sys.executable, str(child), str(ndev), axis_type],
                          capture_output=True, text=True, timeout=600, env=env)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return ndev, {row["case"]: row for row in json.loads(proc.stdout.splitlines()[-1])}


def _computed_on_shards(row):
    """No all-gather and no other collective; every custom call computes
    one device's shard of the result; the values are the single-device
    call's, bit for bit."""
    case = row["case"]
    assert "error" not in row, f"{case}: {row.get('error')}"
    assert all(row["bit_equal"]), f"{case}: not the single-device call's bits"
    assert "all-gather" not in row["collectives"], f"{case}: {row['collectives']}"
    assert row["calls"], f"{case}: no custom call"
    assert all(c in row["shard_shapes"] for c in row["calls"]), \
        f"{case}: custom calls on {row['calls']}, shards {row['shard_shapes']}"


def test_a_sharded_input_stays_sharded(sharded):
    ndev, rows = sharded
    cases = ["rows", "columns", "replicated"] + (
        ["rows and columns", "rows on both axes"] if ndev == 4 else [])
    for case in ([f"{c}, {d}" for c in cases for d in ("float32", "bfloat16")]
                 + ["y (m,) replicated, g rows", "y (m,) sharded, g columns",
                    "y a Python float, g rows"]):
        row = rows[case]
        _computed_on_shards(row)
        assert row["collectives"] == [], f"{case}: {row['collectives']}"
        assert all(row["same_sharding"]), f"{case}: {row['input']} -> {row['outputs']}"
    # The custom call runs on 1/ndev of the array where it is sharded on all axes.
    assert rows["rows, float32"]["calls"] == [[16 // 2, 24]]
    if ndev == 4:
        assert rows["rows on both axes, float32"]["calls"] == [[16 // 4, 24]]


def test_transforms_of_a_sharded_call_stay_sharded(sharded):
    _, rows = sharded
    for case in ("vmap", "vmap, y unbatched", "jvp", "vjp of sigmoid"):
        row = rows[case]
        _computed_on_shards(row)
        assert row["collectives"] == [], f"{case}: {row['collectives']}"
        assert all(row["same_sharding"]), f"{case}: {row['input']} -> {row['outputs']}"


def test_operands_sharded_differently_are_resharded_or_refused_as_jax_does(sharded):
    """grad_output on rows, output on columns: where JAX computes g * y
    (mesh axes Auto), one operand is resharded to the other's sharding and
    each device computes its shard (no all-gather); where it refuses g * y
    (Explicit: the user reshards), the call is refused too, by name."""
    _, rows = sharded
    row = rows["g rows, y columns"]
    if row["jax_product_refused"]:
        assert row.get("error", "").startswith(
            "ShardingTypeError: sigmoid_backward: grad_output"), row
        return
    _computed_on_shards(row)
    assert row["outputs"] in ([row["input"]], [row["y_sharding"]])
