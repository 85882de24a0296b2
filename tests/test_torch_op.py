"""sigmoid_backward.torch: the torch.library op and sigmoid(x).  Skipped
without PyTorch (a failure under SIGMOID_BACKWARD_REQUIRE_FRAMEWORKS=1)."""
import importlib

import pytest

from sigmoid_backward import sigmoid_backward as function

from helpers import BY_NAME, assert_same, import_framework, tensor_values

torch = import_framework("torch")
sbt = importlib.import_module("sigmoid_backward.torch")

# torch.compile's import of torch.jit warns; it is not ours to fix.
pytestmark = pytest.mark.filterwarnings("ignore:`torch.jit.script_method` is deprecated")

DTYPES = list(BY_NAME)
OP = torch.ops.sigmoid_backward.sigmoid_backward


def _pair(dtype, shape=(4, 5), requires_grad=False):
    gen = torch.Generator().manual_seed(3)
    dtype = getattr(torch, dtype)
    g = torch.randn(shape, generator=gen, dtype=dtype)
    y = torch.rand(shape, generator=gen, dtype=dtype)
    return g.requires_grad_(requires_grad), y.requires_grad_(requires_grad)


@pytest.mark.parametrize("dtype", DTYPES)
def test_op_computes_the_function(dtype):
    g, y = _pair(dtype)
    result = sbt.sigmoid_backward(g, y)
    assert type(result) is torch.Tensor and result.dtype == g.dtype and result.is_contiguous()
    assert_same(tensor_values(result), function(tensor_values(g), tensor_values(y)))
    assert_same(tensor_values(OP(g, y)), tensor_values(result))


def test_op_broadcasts_promotes_as_pytorch_and_returns_contiguous():
    g = torch.randn(3, 1, dtype=torch.float16)
    y = torch.rand(4, 3, dtype=torch.float32).t()   # transposed: a strided input
    result = sbt.sigmoid_backward(g, y)
    assert result.shape == (3, 4) and result.dtype == torch.float32 and result.is_contiguous()
    assert_same(result.numpy(), function(g.numpy(), y.numpy()))
    # A 0-d tensor takes part in PyTorch's promotion as a scalar would.
    half = sbt.sigmoid_backward(torch.ones(3, dtype=torch.bfloat16), torch.tensor(0.5))
    assert half.dtype == torch.bfloat16


def test_op_refuses_integer_results_by_dtype():
    with pytest.raises(TypeError, match=r"promote to torch.int64"):
        sbt.sigmoid_backward(torch.ones(3, dtype=torch.int64), torch.ones(3, dtype=torch.int64))


@pytest.mark.parametrize("dtype", DTYPES)
def test_opcheck(dtype):
    for requires_grad in (False, True):
        g, y = _pair(dtype, requires_grad=requires_grad)
        torch.library.opcheck(OP.default, (g, y))
    g, y = _pair(dtype, shape=(2, 3))
    torch.library.opcheck(OP.default, (g[:, :1], y.t().contiguous().t()))   # broadcast, strided


@pytest.mark.parametrize("dtype", ["float64", "complex128"])
def test_op_is_differentiable_twice(dtype):
    g, y = _pair(dtype, shape=(3, 4), requires_grad=True)
    y_row = y[0].detach().clone().requires_grad_()   # broadcast against g
    for args in ((g, y), (g, y_row)):
        assert torch.autograd.gradcheck(sbt.sigmoid_backward, args)
        assert torch.autograd.gradgradcheck(sbt.sigmoid_backward, args)
    x = torch.randn(6, dtype=getattr(torch, dtype), requires_grad=True)
    assert torch.autograd.gradcheck(sbt.sigmoid, (x,))
    assert torch.autograd.gradgradcheck(sbt.sigmoid, (x,))


def test_op_derivatives_are_the_formulas():
    g, y = _pair("float64", requires_grad=True)
    grad = torch.randn(g.shape, dtype=torch.float64)
    dg, dy = torch.autograd.grad(sbt.sigmoid_backward(g, y), (g, y), grad)
    assert torch.allclose(dg, grad * (1 - y) * y, rtol=1e-15, atol=0)
    assert torch.allclose(dy, grad * g * (1 - 2 * y), rtol=1e-15, atol=0)


@pytest.mark.parametrize("dtype", ["float32", "float64", "bfloat16"])
def test_sigmoid_gradients_are_torch_sigmoids_bit_for_bit(dtype):
    gen = torch.Generator().manual_seed(5)
    x = (torch.randn(10_000, generator=gen, dtype=torch.float64) * 8).to(getattr(torch, dtype))
    grad = torch.randn(10_000, generator=gen, dtype=torch.float64).to(x.dtype)
    ours_x = x.clone().requires_grad_()
    theirs_x = x.clone().requires_grad_()
    ours = sbt.sigmoid(ours_x)
    theirs = torch.sigmoid(theirs_x)
    assert torch.equal(ours, theirs)
    ours.backward(grad)
    theirs.backward(grad)
    assert_same(tensor_values(ours_x.grad), tensor_values(theirs_x.grad))


def test_sigmoid_float16_gradient_is_the_function_rounded_once():
    x = torch.linspace(-8, 8, 1001, dtype=torch.float16, requires_grad=True)
    grad = torch.linspace(-3, 3, 1001, dtype=torch.float16)
    y = sbt.sigmoid(x)
    y.backward(grad)
    assert_same(x.grad.numpy(), function(grad.numpy(), y.detach().numpy()))


def test_torch_compile_fullgraph_runs_both():
    g, y = _pair("float32", shape=(64,))
    compiled_op = torch.compile(lambda g, y: sbt.sigmoid_backward(g, y) * 2, fullgraph=True)
    assert_same(compiled_op(g, y).numpy(), (sbt.sigmoid_backward(g, y) * 2).numpy())
    compiled_sigmoid = torch.compile(lambda x: sbt.sigmoid(x) * 3, fullgraph=True)
    x = g.clone().requires_grad_()
    x_ref = g.clone().requires_grad_()
    compiled_sigmoid(x).sum().backward()
    (torch.sigmoid(x_ref) * 3).sum().backward()
    assert_same(x.grad.numpy(), x_ref.grad.numpy())


def test_aten_sigmoid_backward_is_left_alone():
    # PyTorch's own kernel still rounds float16 at every step; the op once.
    g, y = _pair("float16", shape=(4096,))
    assert torch.equal(torch.ops.aten.sigmoid_backward(g, y), g * (1 - y) * y)
    assert not torch.equal(sbt.sigmoid_backward(g, y), g * (1 - y) * y)
