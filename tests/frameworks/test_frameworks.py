"""Tensors back for tensors (src/sigmoid_backward/_frameworks/_tensors.py): PyTorch
CPU tensors and JAX arrays give their own type back, ``out=`` takes a
tensor, and arrays in device memory are refused without a copy.  The
PyTorch and JAX tests skip without those libraries (and fail instead under
SIGMOID_BACKWARD_REQUIRE_FRAMEWORKS=1); the device stand-ins need neither."""
import pathlib
import subprocess
import sys

import numpy as np
import pytest

from sigmoid_backward import sigmoid_backward as sb

from dtypes_catalogue import ALL_DTYPES
from helpers import assert_same, import_framework, numpy_refusal, random_array, tensor_values
from hostile import ArrayImpl, Tensor, ndarray

# --- PyTorch ---------------------------------------------------------------


@pytest.fixture(scope="module")
def torch():
    return import_framework("torch")


def _tensor(torch, a):
    """A tensor over the ndarray ``a``'s memory (ml_dtypes' types, bfloat16
    and float8, through their bits)."""
    if a.dtype.type.__module__ == "ml_dtypes":
        return torch.from_numpy(a.view(f"i{a.itemsize}")).view(getattr(torch, a.dtype.name))
    return torch.from_numpy(a)


def _pair(dtype, shape=(3, 5)):
    rng = np.random.default_rng(11)
    return random_array(rng, shape, dtype), random_array(rng, shape, dtype, scale=1.0)


@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=str)
def test_torch_tensors_give_a_tensor_of_the_compute_dtype(torch, dtype):
    g, y = _pair(dtype)
    result = sb(_tensor(torch, g), _tensor(torch, y))
    assert type(result) is torch.Tensor
    assert result.dtype == getattr(torch, dtype.name) and result.shape == g.shape
    assert_same(tensor_values(result), sb(g, y))


def test_torch_result_shares_memory_with_the_numpy_result(torch, monkeypatch):
    wrapped = []
    from_numpy = torch.from_numpy
    monkeypatch.setattr(torch, "from_numpy", lambda a: wrapped.append(a) or from_numpy(a))
    for name in ("float32", "bfloat16"):
        t = torch.ones(4, dtype=getattr(torch, name))
        result = sb(t, t)
        assert result.data_ptr() == wrapped[-1].__array_interface__["data"][0]


def test_torch_mixed_with_numpy_scalars_and_0d(torch):
    t = torch.tensor([[0.25], [0.5]], dtype=torch.float16)
    y = np.array([0.1, 0.2, 0.3], np.float32)
    result = sb(t, y)   # float16 with float32: a float32 tensor of the broadcast shape
    assert type(result) is torch.Tensor and result.dtype == torch.float32
    assert_same(result.numpy(), sb(t.numpy(), y))
    assert sb(y, torch.tensor(0.5)).dtype == torch.float32
    assert sb(t, 2.0).dtype == torch.float16   # a Python float stays weak
    scalar = sb(torch.tensor(2.0), torch.tensor(0.5))
    assert type(scalar) is torch.Tensor and scalar.shape == ()   # 0-d: a 0-d tensor
    assert scalar.item() == 0.5
    assert sb(torch.tensor([1, 2]), torch.tensor([True, False])).dtype == torch.float64


def test_torch_inputs_needing_care_are_read_right_and_left_alone(torch):
    g = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = torch.nn.Parameter(torch.tensor([1.0, 2.0, 3.0]))
    with torch.no_grad():   # under grad mode they are refused (below)
        result = sb(g, y)
    assert not result.requires_grad and g.grad is None and g.requires_grad
    assert_same(result.numpy(), np.array([0.0, -4.0, -18.0], np.float32))
    base = torch.tensor([1 + 2j, -3 + 0.5j], dtype=torch.complex64)
    assert_same(sb(base.conj(), 0.5).numpy(), sb(np.conj(base.numpy()), 0.5))
    assert_same(sb(base._neg_view(), 0.5).numpy(), sb(-base.numpy(), 0.5))
    strided = torch.arange(24, dtype=torch.bfloat16).reshape(4, 6).t()[::2]
    assert_same(tensor_values(sb(strided, 0.5)),
                sb(tensor_values(strided.contiguous()), 0.5))


@pytest.mark.parametrize("make", [
    lambda torch: torch.tensor([1.0, 2.0], requires_grad=True),
    lambda torch: torch.nn.Parameter(torch.tensor([1.0, 2.0])),
    lambda torch: torch.tensor([1.0, 2.0], requires_grad=True).to(torch.bfloat16),
])
def test_torch_gradients_that_would_be_lost_are_refused(torch, make):
    t = make(torch)
    calls = ((lambda: sb(t, 0.5), "grad_output"), (lambda: sb(np.ones(2), t), "output"),
             (lambda: sb(t, 0.5, out=np.empty(2, np.float64)), "grad_output"))
    for call, name in calls:
        with pytest.raises(TypeError, match=f"^{name}: a tensor that requires grad, under grad "
                                            f"mode: .* silently lost; use sigmoid_backward.torch"):
            call()
    with torch.no_grad():
        assert_same(tensor_values(sb(t, 0.5)), sb(tensor_values(t), 0.5))
    assert_same(tensor_values(sb(t.detach(), 0.5)), sb(tensor_values(t), 0.5))


@pytest.mark.filterwarnings("ignore:`torch.jit.script` is deprecated")   # torch.func's import
def test_torch_func_transforms_are_refused_for_the_op(torch):
    func = torch.func
    transforms = (lambda f: func.grad(lambda x: f(x).sum()),
                  lambda f: lambda x: func.jvp(f, (x,), (x,)),
                  func.vmap)
    for transform in transforms:
        for f, argument in ((lambda x: sb(x, 0.5), "grad_output"),
                            (lambda x: sb(np.ones(3, np.float32), x), "output")):
            with pytest.raises(TypeError, match=f"^{argument}: a tensor inside a torch.func "
                                                f"transform .* sigmoid_backward.torch"):
                transform(f)(torch.ones(3))


def test_torch_forward_mode_tangents_are_refused(torch):
    forward_ad = torch.autograd.forward_ad
    with forward_ad.dual_level():
        dual = forward_ad.make_dual(torch.ones(3), torch.ones(3))
        for call, name in ((lambda: sb(dual, 0.5), "grad_output"),
                           (lambda: sb(np.ones(3), dual), "output")):
            with pytest.raises(TypeError, match=f"^{name}: a dual tensor .* whose tangent the "
                                                f"result would silently lose"):
                call()
        # Without a tangent, a tensor reads as ever, inside the level too.
        assert sb(torch.ones(3), 0.5).tolist() == [0.25] * 3
        assert sb(forward_ad.unpack_dual(dual).primal, 0.5).tolist() == [0.25] * 3


def test_torch_options_apply(torch):
    g = torch.tensor([1.0, 2.0, 3.0])
    result = sb(g, 0.5, dtype=np.float64, num_threads=1)
    assert result.dtype == torch.float64
    kept = torch.full((3,), 7.0)
    sb(g, 0.5, out=kept, where=np.array([True, False, True]))
    assert kept.tolist() == [0.25, 7.0, 0.75]


@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=str)
def test_torch_out_tensor_is_written_and_returned(torch, dtype):
    g, y = _pair(dtype)
    for out in (torch.empty(g.shape, dtype=getattr(torch, dtype.name)),
                torch.empty(g.shape[::-1], dtype=getattr(torch, dtype.name)).t()):  # strided
        assert sb(_tensor(torch, g), _tensor(torch, y), out=out) is out
        assert_same(tensor_values(out.contiguous()), sb(g, y))
    out = torch.empty(g.shape, dtype=getattr(torch, dtype.name))
    assert sb(g, y, out=(out,)) is out   # NumPy inputs, a tuple of one
    assert_same(tensor_values(out), sb(g, y))


@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=str)
def test_tensor_inputs_write_an_array_or_buffer_out(torch, dtype):
    """The result of tensors goes into a NumPy (or buffer) out as given, and
    that out is returned."""
    g, y = _pair(dtype)
    expected = sb(g, y)
    for wrap in (lambda a: a, lambda a: (a,)):
        out = np.zeros_like(expected)
        assert sb(_tensor(torch, g), _tensor(torch, y), out=wrap(out)) is out
        assert_same(out, expected)
    if dtype.kind == "f" and dtype.itemsize >= 4:
        buffer = memoryview(bytearray(expected.nbytes)).cast(dtype.char, expected.shape)
        assert sb(_tensor(torch, g), _tensor(torch, y), out=buffer) is buffer
        assert_same(np.asarray(buffer), expected)


def test_torch_out_casts_as_a_ufunc_out_does(torch):
    out = torch.zeros(3, dtype=torch.bfloat16)
    sb(np.array([1.0, 2.0, 3.0], np.float32), 0.5, out=out)
    assert out.tolist() == [0.25, 0.5, 0.75]
    kind, message = numpy_refusal(
        lambda ufunc: ufunc(np.ones(3, np.complex64), 0.5, out=np.zeros(3, np.float32)))
    with pytest.raises(kind, match=message):
        sb(np.ones(3, np.complex64), 0.5, out=torch.zeros(3))


@pytest.mark.parametrize("make, message", [
    (lambda torch: torch.zeros(3, requires_grad=True), "^out: a tensor that requires grad"),
    (lambda torch: torch.zeros(3, dtype=torch.complex64).conj(), "^out: a lazily conjugated"),
    (lambda torch: torch.zeros(3, dtype=torch.complex64)._neg_view(), "^out: a lazily"),
    (lambda torch: torch.zeros(3, dtype=torch.int8),   # NumPy's refusal, asked at run time
     numpy_refusal(lambda ufunc: ufunc(np.ones(3, np.float32), 0.5,
                                       out=np.zeros(3, np.int8)))[1]),
    (lambda torch: torch.zeros(3, dtype=torch.complex32),
     "^out: cannot write into a torch.Tensor of dtype torch.complex32"),
])
@pytest.mark.filterwarnings("ignore:ComplexHalf support is experimental")
def test_torch_out_that_cannot_be_written_raises_and_stays_untouched(torch, make, message):
    out = make(torch)
    before = out.detach().clone()
    with pytest.raises(TypeError, match=message):
        sb(torch.ones(3), 0.5, out=out)
    def raw(t):   # the bytes (torch.equal has no complex32)
        return t.detach().resolve_conj().resolve_neg().view(torch.uint8)
    assert torch.equal(raw(out), raw(before))


def test_torch_bad_shapes_raise_as_for_arrays(torch):
    with pytest.raises(ValueError, match="could not be broadcast"):
        sb(torch.ones(3), torch.ones(4))
    out = torch.zeros(4)
    with pytest.raises(ValueError, match="could not be broadcast"):
        sb(torch.ones(3), 0.5, out=out)
    assert not out.any()


def test_torch_other_devices_are_refused_without_a_copy(torch):
    meta = torch.ones(3, device="meta")
    with pytest.raises(TypeError, match="^grad_output: a torch.Tensor on meta: .*"
                                        "torch.ops.aten.sigmoid_backward"):
        sb(meta, 0.5)
    with pytest.raises(TypeError, match="^out: a torch.Tensor on meta"):
        sb(np.ones(3, np.float32), 0.5, out=meta)


# --- Device stand-ins: no framework needed ---------------------------------


@pytest.mark.parametrize("make, where, own_op", [
    (Tensor, "cuda:0", r"torch\.ops\.aten\.sigmoid_backward"),
    (ndarray, "cuda:1", "CuPy's own arithmetic"),
    (ArrayImpl, "gpu", r"jax\.vjp\(jax\.nn\.sigmoid"),
])
@pytest.mark.parametrize("argument", ["grad_output", "output", "out"])
def test_device_arrays_are_refused_naming_the_device_and_the_frameworks_op(
        make, where, own_op, argument):
    make.copied = False
    args = {"grad_output": np.ones(3, np.float32), "output": 0.5, "out": None}
    args[argument] = make()
    if argument == "out" and make is ArrayImpl:
        where, own_op = "cannot be written", "JAX arrays are immutable"
    with pytest.raises(TypeError, match=f"^{argument}: a .* {where}.*{own_op}"):
        sb(args["grad_output"], args["output"], out=args["out"])
    assert not make.copied, "the device array was copied to the host"


def test_recognising_arrays_imports_no_framework():
    tests = str(pathlib.Path(__file__).resolve().parents[1])   # hostile.py: tests/
    script = ("import sys, numpy as np, sigmoid_backward as sb\n"
              f"sys.path.insert(0, {tests!r})\n"
              "from hostile import ndarray\n"
              "sb.sigmoid_backward(np.ones(3), 0.5); sb.sigmoid_backward([1.0], 0.5)\n"
              "try:\n    sb.sigmoid_backward(ndarray(), 0.5)\nexcept TypeError:\n    pass\n"
              "print(sorted(m for m in ('torch', 'jax', 'cupy') if m in sys.modules))\n")
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "[]"


# --- JAX -------------------------------------------------------------------


@pytest.fixture(scope="module")
def jax():
    jax = import_framework("jax")
    x64 = jax.config.jax_enable_x64
    jax.config.update("jax_enable_x64", True)   # else float64 is silently float32
    yield jax
    jax.config.update("jax_enable_x64", x64)


@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=str)
def test_jax_arrays_give_a_jax_array(jax, dtype):
    g, y = _pair(dtype)
    result = sb(jax.numpy.asarray(g), jax.numpy.asarray(y))
    assert isinstance(result, jax.Array) and not isinstance(result, np.ndarray)
    assert result.dtype == dtype and result.devices() == {jax.devices("cpu")[0]}
    assert_same(np.asarray(result), sb(g, y))


def test_jax_mixed_with_numpy_and_0d(jax):
    g = jax.numpy.ones((2, 1), dtype=jax.numpy.float32)
    y = np.array([0.25, 0.5, 0.75], np.float32)
    assert_same(np.asarray(sb(g, y)), sb(np.ones((2, 1), np.float32), y))
    scalar = sb(jax.numpy.float32(2.0), 0.5)
    assert isinstance(scalar, jax.Array) and scalar.shape == () and float(scalar) == 0.5


def test_jax_64_bit_results_need_x64(jax):
    jax.config.update("jax_enable_x64", False)
    try:
        g = jax.numpy.ones(3, jax.numpy.float32)
        with pytest.raises(TypeError, match="float64, which JAX holds only with "
                                            "jax.config.update"):
            sb(g, np.array([0.5, 0.5, 0.5]))
    finally:
        jax.config.update("jax_enable_x64", True)


def test_jax_out_is_refused_as_immutable(jax):
    out = jax.numpy.zeros(3)
    with pytest.raises(TypeError, match="^out: .* JAX arrays are immutable"):
        sb(np.ones(3), 0.5, out=out)


def test_jax_tracers_point_at_sigmoid_backward_jax(jax):
    with pytest.raises(TypeError, match="^grad_output: a JAX tracer .* sigmoid_backward.jax"):
        jax.jit(lambda g: sb(g, 0.5))(jax.numpy.ones(3))


def test_two_frameworks_in_one_call_are_refused(torch, jax):
    with pytest.raises(TypeError, match="^grad_output is a torch.Tensor and output a jaxlib"):
        sb(torch.ones(3), jax.numpy.ones(3))
