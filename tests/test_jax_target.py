"""sigmoid_backward.jax: the XLA FFI target under jit, vmap and grad, bit
for bit the ufunc's.  Skipped without jax (a failure under
SIGMOID_BACKWARD_REQUIRE_FRAMEWORKS=1, where the target must be built too)."""
import importlib
import subprocess
import sys

import numpy as np
import pytest

import sigmoid_backward

from helpers import ALL_DTYPES, assert_same, import_framework, random_array, specials

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


def test_broadcasting_and_weak_scalars_follow_jax():
    g = jnp.ones((3, 1), jnp.bfloat16)
    result = sbj.sigmoid_backward(g, jnp.array([0.25, 0.5], jnp.bfloat16))
    assert result.shape == (3, 2) and result.dtype == jnp.bfloat16
    assert sbj.sigmoid_backward(g, 0.5).dtype == jnp.bfloat16   # a Python float is weak
    assert sbj.sigmoid_backward(jnp.float32(2.0), 0.5) == 0.5


def test_integer_results_are_refused_by_dtype():
    with pytest.raises(TypeError, match="promote to int"):
        sbj.sigmoid_backward(jnp.ones(3, jnp.int32), jnp.ones(3, jnp.int32))


def test_without_the_target_the_import_says_how_to_build_it():
    script = ("import sys; sys.modules['sigmoid_backward._xla_ffi'] = None\n"
              "import sigmoid_backward.jax\n")
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode != 0
    assert "ImportError: sigmoid_backward.jax needs the package's XLA FFI target" in proc.stderr
    assert "-Csetup-args=-Djax=enabled" in proc.stderr
