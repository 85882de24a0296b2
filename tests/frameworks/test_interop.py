"""DLPack producers as inputs (src/sigmoid_backward/_numpy/_inputs.py): PyTorch
CPU tensors and JAX arrays read without a copy, bfloat16 included, and the
values they give.  test_frameworks.py tests the result types.  Each
library's tests skip without it (fail under
SIGMOID_BACKWARD_REQUIRE_FRAMEWORKS=1)."""
import numpy as np
import pytest

from sigmoid_backward import sigmoid_backward as sb
from sigmoid_backward._numpy._inputs import as_array

from dtypes_catalogue import BFLOAT16, BY_NAME
from helpers import assert_same, import_framework, tensor_values
from hostile import DLPackOnly

# --- PyTorch ---------------------------------------------------------------

@pytest.fixture(scope="module")
def torch():
    return import_framework("torch")


def _torch_pair(torch, dtype, shape=(3, 5)):
    gen = torch.Generator().manual_seed(7)
    g = (torch.rand(shape, generator=gen, dtype=torch.float64) * 4 - 2).to(dtype)
    y = torch.rand(shape, generator=gen, dtype=torch.float64).to(dtype)
    if dtype.is_complex:
        g = g + 1j * torch.rand(shape, generator=gen, dtype=torch.float64).to(dtype)
    return g, y


# float16 is left out: PyTorch's CPU kernel rounds every step to float16,
# where the operator computes in float32 and rounds once (it differs in the last
# bit for about a third of the values).
@pytest.mark.parametrize("name", ["bfloat16", "float32", "float64", "complex64", "complex128"])
def test_torch_matches_torch_sigmoid_backward(torch, name):
    # The operator's rule: same evaluation order and conjugation as PyTorch's CPU kernel.
    g, y = _torch_pair(torch, getattr(torch, name), shape=(64, 257))
    expected = torch.ops.aten.sigmoid_backward(g, y)
    assert_same(tensor_values(sb(g, y)), tensor_values(expected))


def test_torch_bfloat16_is_read_without_a_copy(torch):
    t = torch.arange(6, dtype=torch.bfloat16).reshape(2, 3)
    arr = as_array(t, "grad_output")
    assert arr.dtype == BFLOAT16 and arr.shape == (2, 3)
    assert arr.__array_interface__["data"][0] == t.data_ptr()
    assert_same(arr, np.arange(6, dtype=BFLOAT16).reshape(2, 3))


def test_torch_non_contiguous_views(torch):
    base = torch.arange(24, dtype=torch.float32).reshape(4, 6) / 24
    for view in (base.t(), base[::2, 1::3], base[:, 2], base.expand(2, 4, 6)):
        assert_same(sb(view, view).numpy(), sb(view.numpy(), view.numpy()))
    bf = base.to(torch.bfloat16).t()
    assert_same(tensor_values(sb(bf, 0.5)), sb(tensor_values(bf.contiguous()), 0.5))


def test_torch_integer_and_bool_tensors_compute_in_float64(torch):
    result = sb(torch.tensor([1, 2]), torch.tensor([True, False]))
    assert_same(result.numpy(), np.array([0.0, 0.0]))


def test_torch_inputs_are_not_modified(torch):
    g, y = _torch_pair(torch, torch.bfloat16)
    before = (g.clone(), y.clone())
    sb(g, y)
    assert torch.equal(g, before[0]) and torch.equal(y, before[1])


@pytest.mark.filterwarnings("ignore:ComplexHalf support is experimental")
def test_torch_unsupported_dtype_names_the_argument(torch):
    with pytest.raises(TypeError, match="^output: cannot make an array of a Tensor"):
        sb(1.0, torch.ones(2, dtype=torch.complex32))


def test_relabelling_is_generic_for_any_dlpack_producer(torch):
    # DLPackOnly forwards only the DLPack protocol: no torch special case applies.
    t = torch.tensor([0.5, -1.0, 3.0], dtype=torch.bfloat16)
    arr = as_array(DLPackOnly(t), "output")
    assert arr.dtype == BFLOAT16
    assert_same(arr, np.array([0.5, -1.0, 3.0], BFLOAT16))
    # Other dtypes pass through unchanged.
    assert_same(as_array(DLPackOnly(torch.tensor([1.5], dtype=torch.float16)), "output"),
          np.array([1.5], np.float16))


# --- JAX -------------------------------------------------------------------

@pytest.fixture(scope="module")
def jnp():
    return import_framework("jax").numpy


@pytest.mark.parametrize("name", ["float16", "bfloat16", "float32", "complex64"])
def test_jax_arrays_match_numpy(jnp, name):
    g = jnp.linspace(-2, 2, 12, dtype=name).reshape(3, 4)
    y = jnp.linspace(0, 1, 4, dtype=name)
    result = sb(g, y)
    assert result.dtype == BY_NAME[name]
    assert_same(result, sb(np.asarray(g), np.asarray(y)))


def test_jax_bfloat16_goes_through_dlpack(jnp):
    g = jnp.arange(4, dtype=jnp.bfloat16)
    arr = as_array(g, "grad_output")
    assert arr.dtype == BFLOAT16
    assert_same(arr, np.arange(4, dtype=BFLOAT16))
