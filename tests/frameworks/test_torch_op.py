"""sigmoid_backward.torch: the torch.library op and sigmoid(x).  Skipped
without PyTorch (a failure under SIGMOID_BACKWARD_REQUIRE_FRAMEWORKS=1)."""
import importlib
import os
import subprocess
import sys

import pytest

import sigmoid_backward
from sigmoid_backward import sigmoid_backward as function

from dtypes_catalogue import BY_NAME
from helpers import (
    advised_huge_pages,
    assert_same,
    assert_within_roundings,
    huge_page_bytes,
    import_framework,
    tensor_values,
)

torch = import_framework("torch")
sbt = importlib.import_module("sigmoid_backward.torch")
# The Python route's CPU kernel, which calls the function (kernel_calls).
registration = importlib.import_module("sigmoid_backward._frameworks._torch_registration")
fresh_cache = importlib.import_module("torch._inductor.utils").fresh_cache
run_and_get_code = importlib.import_module("torch._inductor.utils").run_and_get_code

# torch.compile's and torch.func's imports of torch.jit warn; not ours to fix.
pytestmark = [pytest.mark.filterwarnings("ignore:`torch.jit.script_method` is deprecated"),
              pytest.mark.filterwarnings("ignore:`torch.jit.script` is deprecated")]

DTYPES = [name for name in BY_NAME if hasattr(torch, name)]   # the package's that torch has
OP = torch.ops.sigmoid_backward.sigmoid_backward
ATEN = torch.ops.aten.sigmoid_backward


def _aten_computes(dtype):
    """Does aten.sigmoid_backward compute in this dtype (asked, not assumed:
    torch 2.13 has no float8 kernel, and no autograd for float8)?"""
    one = torch.ones(2).to(getattr(torch, dtype))
    try:
        ATEN(one, one)
    except (RuntimeError, NotImplementedError):
        return False
    return True


def _pair(dtype, shape=(4, 5), requires_grad=False):
    gen = torch.Generator().manual_seed(3)
    dtype = getattr(torch, dtype)
    try:
        g = torch.randn(shape, generator=gen, dtype=dtype)
        y = torch.rand(shape, generator=gen, dtype=dtype)
    except (RuntimeError, NotImplementedError):   # no random kernel (float8): drawn in float32
        g = torch.randn(shape, generator=gen).to(dtype)
        y = torch.rand(shape, generator=gen).to(dtype)
    return g.requires_grad_(requires_grad), y.requires_grad_(requires_grad)


@pytest.mark.parametrize("dtype", DTYPES)
def test_op_computes_the_function(dtype):
    g, y = _pair(dtype)
    result = sbt.sigmoid_backward(g, y)
    assert type(result) is torch.Tensor and result.dtype == g.dtype and result.is_contiguous()
    assert_same(tensor_values(result), function(tensor_values(g), tensor_values(y)))
    assert_same(tensor_values(OP(g, y)), tensor_values(result))


def test_op_broadcasts_promotes_as_pytorch_and_lays_out_as_aten():
    g = torch.randn(3, 1, dtype=torch.float16)
    y = torch.rand(4, 3, dtype=torch.float32).t()   # transposed: a strided input
    result = sbt.sigmoid_backward(g, y)
    assert result.shape == (3, 4) and result.dtype == torch.float32
    assert result.stride() == ATEN(g, y).stride()
    assert_same(result.numpy(), function(g.numpy(), y.numpy()))
    # A 0-d tensor takes part in PyTorch's promotion as a scalar would.
    half = sbt.sigmoid_backward(torch.ones(3, dtype=torch.bfloat16), torch.tensor(0.5))
    assert half.dtype == torch.bfloat16


def _layouts():
    """(name, grad_output, output): the memory formats aten's iterator keeps."""
    x4, x5 = torch.randn(2, 3, 4, 5), torch.randn(2, 3, 4, 5, 6)
    last, last3d = torch.channels_last, torch.channels_last_3d
    return [
        ("channels_last", x4.to(memory_format=last), x4.sigmoid().to(memory_format=last)),
        ("channels_last, broadcast", x4.to(memory_format=last), torch.rand(4, 5)),
        ("contiguous first", x4, x4.sigmoid().to(memory_format=last)),
        ("channels_last_3d", x5.to(memory_format=last3d), x5.sigmoid().to(memory_format=last3d)),
        ("transposed", torch.randn(5, 4).t(), torch.rand(5, 4).t()),
        ("transposed with a 0-d", torch.tensor(0.5), torch.rand(5, 4).t()),
        ("sliced", torch.randn(4, 6)[:, ::2], torch.rand(4, 3)),
        # Rows of runs large enough for two threads' shares (compute_rows).
        ("a broadcast row, large", torch.randn(700, 37), torch.rand(37)),
        ("a broadcast column, large", torch.randn(700, 37), torch.rand(700, 1)),
        ("sliced, large", torch.randn(900, 80)[:, ::2], torch.rand(900, 40)),
    ]


@pytest.mark.parametrize("name, g, y", _layouts(), ids=[case[0] for case in _layouts()])
def test_result_keeps_the_memory_format_as_aten_does(name, g, y):
    theirs = ATEN(g, y)
    ours = OP(g, y)
    assert ours.stride() == theirs.stride(), name
    assert_same(ours.numpy(), theirs.numpy())
    fake = OP(g.to("meta"), y if y.dim() == 0 else y.to("meta"))   # the fake kernel's
    assert fake.stride() == theirs.stride(), name


@pytest.mark.skipif(sbt._NATIVE is None, reason="the native ops allocate their results")
@pytest.mark.skipif(huge_page_bytes() == 0, reason="huge pages are advised under 'madvise' only")
@pytest.mark.parametrize("name", ["sigmoid_backward", "sigmoid"])
def test_a_large_result_is_advised_huge_pages(name):
    """A result larger than glibc's largest mmap threshold is a fresh mapping
    on every call; the native ops advise it MADV_HUGEPAGE (VmFlags "hg";
    that the advice comes before the kernel writes, which is what makes it
    count, the flag cannot show), and still lay it out, and compute it, as
    aten does."""
    huge = huge_page_bytes()
    rows = max(2 * huge, 40 << 20) // 4 // 1000
    g, y = torch.rand(rows, 1000).t(), torch.rand(rows, 1000).t()   # transposed: strided
    if name == "sigmoid":
        ours, theirs = torch.ops.sigmoid_backward.sigmoid(g), torch.sigmoid(g)
    else:
        ours, theirs = OP(g, y), ATEN(g, y)
    assert advised_huge_pages(ours.data_ptr())
    assert ours.stride() == theirs.stride()
    assert_same(ours.numpy(), theirs.numpy())


@pytest.mark.skipif(sbt._NATIVE is None, reason="the native ops allocate their results")
@pytest.mark.skipif(huge_page_bytes() == 0, reason="huge pages are advised under 'madvise' only")
@pytest.mark.parametrize("setting, advised", [("0", False), ("1", True)])
def test_the_huge_page_advice_can_be_turned_off(setting, advised):
    """SIGMOID_BACKWARD_MADVISE_HUGEPAGE=0, as NUMPY_MADVISE_HUGEPAGE=0 for
    NumPy: for a machine where advised faults stall on compaction."""
    script = ("import sys, torch, sigmoid_backward.torch\n"
              f"sys.path.append({os.path.dirname(os.path.dirname(__file__))!r})\n"
              "from helpers import advised_huge_pages\n"
              "g = torch.rand(40 << 18)\n"
              "r = torch.ops.sigmoid_backward.sigmoid_backward(g, g)\n"
              "print(advised_huge_pages(r.data_ptr()))\n")
    env = dict(os.environ, SIGMOID_BACKWARD_MADVISE_HUGEPAGE=setting)
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=300, env=env)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == [str(advised)]


def _aten_error(*args):
    """What aten.sigmoid_backward raises for these arguments."""
    with pytest.raises(Exception) as caught:
        ATEN(*args)
    return caught.value


def test_op_refuses_integer_results_by_dtype_as_aten_does():
    ints = torch.ones(3, dtype=torch.int64)
    with pytest.raises(type(_aten_error(ints, ints)), match=r"promote to torch.int64"):
        sbt.sigmoid_backward(ints, ints)
    with pytest.raises(TypeError, match=r"promote to torch.int64"):   # and the package's kind
        sbt.sigmoid_backward(ints.to("meta"), ints.to("meta"))


def test_shapes_that_do_not_broadcast_raise_as_aten_does():
    for device in ("cpu", "meta"):
        g, y = torch.ones(3, device=device), torch.ones(4, device=device)
        with pytest.raises(type(_aten_error(g, y)),
                           match=r"shape \(3,\) and output of shape \(4,\) do not broadcast"):
            OP(g, y)


def _builtin_kind(error):
    """The builtin class an error is of (FakeTensor's device error is a RuntimeError)."""
    return next(c for c in type(error).__mro__ if c.__module__ == "builtins")


@pytest.fixture
def allocations(monkeypatch):
    """The shapes the fake kernel allocates results of, as they are allocated."""
    made = []
    new_empty = torch.Tensor.new_empty
    monkeypatch.setattr(torch.Tensor, "new_empty",
                        lambda self, *a, **k: made.append(a) or new_empty(self, *a, **k))
    return made


@pytest.mark.parametrize("g_device, g_shape, y_device, y_shape", [
    ("cpu", (3,), "meta", (3,)),
    ("meta", (3,), "cpu", (3,)),
    ("meta", (), "cpu", (3,)),   # a 0-d tensor on meta is no scalar to the CPU
    ("cpu", (3,), "meta", ()),
])
def test_mixed_devices_raise_as_aten_does_and_allocate_nothing(
        g_device, g_shape, y_device, y_shape, allocations):
    g = torch.ones(g_shape, device=g_device)
    y = torch.full(y_shape, 0.5, device=y_device)
    expected = type(_aten_error(g, y))
    with pytest.raises(expected, match=f"grad_output is on {g_device} and output on {y_device}"):
        OP(g, y)
    assert allocations == []
    g.requires_grad_()   # through autograd's kernel too
    with pytest.raises(expected, match="expected all tensors on one device"):
        OP(g, y)
    assert allocations == []


@pytest.mark.parametrize("scalar_first", [True, False])
def test_a_0d_cpu_tensor_goes_with_a_meta_tensor_as_for_aten(scalar_first):
    args = (torch.tensor(0.5, dtype=torch.float64), torch.ones(2, 3, device="meta"))
    args = args if scalar_first else args[::-1]
    ours, theirs = OP(*args), ATEN(*args)
    assert (ours.device, ours.dtype, ours.shape) == (theirs.device, theirs.dtype, theirs.shape)


def test_fake_kernel_checks_devices_with_no_gpu():
    fake_tensor = importlib.import_module("torch._subclasses.fake_tensor")
    with fake_tensor.FakeTensorMode():
        cuda, cpu = torch.empty(3, device="cuda"), torch.empty(3)
        meta = torch.empty(3, device="meta")
        for g, y in ((cuda, cpu), (cpu, cuda), (meta, cpu)):
            with pytest.raises(_builtin_kind(_aten_error(g, y)), match="one device"):
                OP(g, y)
        # Both on a GPU: aten computes there; the op cannot, and says so
        # (the dispatcher would too, later, for real tensors).
        assert ATEN(cuda, cuda).device.type == "cuda"
        for args in ((cuda, cuda), (cuda, torch.empty(()))):
            with pytest.raises(NotImplementedError,
                               match=r"tensors on cuda:0: the op computes on the CPU.*aten"):
                OP(*args)
        assert OP(cpu, cpu).device.type == "cpu"
        assert OP(meta, meta).device.type == "meta"


def test_other_layouts_raise_as_aten_does():
    dense = torch.ones(2, 3)
    sparse = dense.to_sparse()
    with pytest.raises(type(_aten_error(sparse, dense)), match="'SparseCPU' backend"):
        OP(sparse, dense)


# opcheck checks the schema with torch's own arithmetic, which has no float8.
@pytest.mark.parametrize("dtype", [dtype for dtype in DTYPES if _aten_computes(dtype)])
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


# ---- torch.compile: Inductor decomposes the op into aten's, and fuses it ------

def _compiled(fn, *args):
    """Runs fn, which calls functions compiled by Inductor: its result, and
    the code Inductor generated for it (the backward's too, when fn runs
    one).  Dynamo's compiled frames are dropped first, and Inductor's
    caches are its own (a graph cached before the op had its decomposition
    would be served as it was)."""
    torch._dynamo.reset()
    with fresh_cache():
        return run_and_get_code(fn, *args)


def _calls_our_ops(codes):
    """Whether Inductor's code calls one of our ops: a kernel it cannot see
    into, between the kernels it generates."""
    return any("torch.ops.sigmoid_backward." in code for code in codes)


def test_without_its_decomposition_inductor_calls_the_op(monkeypatch):
    # What the tests below look for in Inductor's code, where it is.
    from torch._inductor import decomposition
    assert OP.default in decomposition.decompositions
    g, y = _pair("float32", shape=(64,))
    try:
        with monkeypatch.context() as patch:
            for op in {OP.default, sbt._ROUTE_OP}:
                patch.delitem(decomposition.decompositions, op)
            decomposition.fast_random_decomps.cache_clear()   # its copy of the table
            result, codes = _compiled(torch.compile(lambda g, y: OP(g, y) * 2, fullgraph=True),
                                      g, y)
    finally:
        decomposition.fast_random_decomps.cache_clear()
    assert _calls_our_ops(codes)
    assert_same(result.numpy(), (OP(g, y) * 2).numpy())


def test_a_process_that_compiled_before_gets_the_decomposition():
    """Inductor's table as a compile takes it (select_decomp_table) is a
    copy made at the process's first compile: a process that compiled
    before importing sigmoid_backward.torch gets the decomposition too."""
    script = (
        "import torch\n"
        "from torch._inductor.utils import fresh_cache, run_and_get_code\n"
        "with fresh_cache():\n"
        "    torch.compile(lambda x: x * 2)(torch.ones(4))\n"
        "    import sigmoid_backward.torch as sbt\n"
        "    _, codes = run_and_get_code(torch.compile(sbt.sigmoid_backward), torch.ones(4),\n"
        "                                torch.ones(4))\n"
        "print(any('torch.ops.sigmoid_backward.' in code for code in codes))\n")
    assert subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          check=True).stdout.split() == ["False"]


@pytest.mark.parametrize("dynamo_first", [False, True])
def test_sigmoid_module_compiles_whether_dynamo_came_first(dynamo_first):
    """Importing sigmoid_backward.torch imports no Dynamo (about 0.9 s for
    every user); Dynamo learns to trace sigmoid() in place of Sigmoid's C
    forward when it is imported, or at once if it was."""
    script = (
        "import sys, torch\n"
        + ("import torch._dynamo\n" if dynamo_first else "")
        + "before = 'torch._dynamo' in sys.modules\n"
        "import sigmoid_backward.torch as sbt\n"
        "print(before, 'torch._dynamo' in sys.modules)\n"
        "model = torch.nn.Sequential(torch.nn.Linear(4, 4), sbt.Sigmoid())\n"
        "x = torch.randn(3, 4)\n"
        "compiled = torch.compile(model, fullgraph=True, backend='aot_eager')\n"
        "print(torch.equal(compiled(x), model(x)))\n")
    before, after, same = subprocess.run([sys.executable, "-c", script], capture_output=True,
                                         text=True, check=True).stdout.split()
    assert after == before and same == "True"


# (Inductor leaves complex arithmetic to aten's kernels, and warns.)
@pytest.mark.filterwarnings("ignore:Torchinductor does not support code generation for complex")
@pytest.mark.parametrize("dtype", [dtype for dtype in DTYPES if _aten_computes(dtype)])
def test_inductor_fuses_atens_op_in_place_of_ours(dtype):
    g, y = _pair(dtype, shape=(64,))
    theirs, _ = _compiled(torch.compile(lambda g, y: ATEN(g, y) * 2, fullgraph=True), g, y)
    for op in (OP, sbt.sigmoid_backward):   # the op, and the module's function
        doubled = torch.compile(lambda g, y, op=op: op(g, y) * 2, fullgraph=True)
        ours, codes = _compiled(doubled, g, y)
        assert not _calls_our_ops(codes), codes
        assert_same(tensor_values(ours), tensor_values(theirs))


@pytest.mark.parametrize("dtype", [dtype for dtype in DTYPES if not _aten_computes(dtype)])
def test_inductor_computes_float8_as_the_kernel_does(dtype):
    # aten has no float8 op to agree with: every pair of values gives the
    # eager kernel's result (in float32, rounded once; NaN past e4m3fn's range).
    values = torch.arange(256, dtype=torch.uint8).view(getattr(torch, dtype))
    g, y = values.repeat_interleave(256), values.repeat(256)
    ours, codes = _compiled(torch.compile(lambda g, y: OP(g, y), fullgraph=True), g, y)
    assert not _calls_our_ops(codes), codes
    assert_same(tensor_values(ours), tensor_values(OP(g, y)))


def test_inductor_decomposes_the_op_under_dynamic_shapes():
    # Broadcast and promoted (float16 with float32 gives float32), two shapes.
    cases = [(_pair("float16", shape=(rows, 7))[0], _pair("float32", shape=(7,))[1])
             for rows in (6, 3)]
    ours = torch.compile(lambda g, y: OP(g, y) + 1, fullgraph=True, dynamic=True)
    theirs = torch.compile(lambda g, y: ATEN(g, y) + 1, fullgraph=True, dynamic=True)
    results, codes = _compiled(lambda: [ours(g, y) for g, y in cases])
    assert len(codes) == 1, "one graph for both shapes"
    assert not _calls_our_ops(codes), codes
    for result, (g, y) in zip(results, cases, strict=True):
        assert_same(result.numpy(), theirs(g, y).numpy())


def _sigmoid_ops():
    ops = {"sigmoid_backward.torch.sigmoid": sbt.sigmoid,
           "sigmoid_backward.torch.Sigmoid()": sbt.Sigmoid()}
    if sbt._NATIVE is not None:
        ops["torch.ops.sigmoid_backward.sigmoid"] = torch.ops.sigmoid_backward.sigmoid
    return ops


@pytest.mark.parametrize("name", list(_sigmoid_ops()))
@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
def test_inductor_fuses_sigmoid_and_its_derivative(name, dtype):
    x, grad = _pair(dtype, shape=(64,))

    def forward_backward(sigmoid):
        compiled = torch.compile(lambda x: sigmoid(x) * 3, fullgraph=True)
        leaf = x.clone().requires_grad_()
        return lambda: (compiled(leaf).backward(grad), leaf.grad)[1]
    ours, codes = _compiled(forward_backward(_sigmoid_ops()[name]))
    theirs, _ = _compiled(forward_backward(torch.sigmoid))
    assert len(codes) == 2, "a forward and a backward"
    assert not _calls_our_ops(codes), codes
    assert_same(tensor_values(ours), tensor_values(theirs))


def test_eager_calls_keep_the_kernel_beside_inductors_decomposition(kernel_calls):
    from torch._inductor import decomposition
    _compiled(torch.compile(lambda g, y: OP(g, y), fullgraph=True), *_pair("float32"))
    assert OP.default in decomposition.decompositions   # what eager calls do not take
    start = kernel_calls()
    g, y = _pair("float32")
    x = g.clone().requires_grad_()
    with torch.profiler.profile() as profile:
        OP(g, y)
        sbt.sigmoid(x).sum().backward()
    assert tuple(now - then for now, then in zip(kernel_calls(), start, strict=True)) == (2, 40)
    names = {event.name for event in profile.events()}
    assert "sigmoid_backward::sigmoid_backward" in names
    assert not names & {"aten::sigmoid_backward", "aten::mul"}, names


# torch.export's own use of a deprecated pytree check warns; not ours to fix.
@pytest.mark.filterwarnings("ignore:`isinstance\\(treespec, LeafSpec\\)` is deprecated")
def test_export_keeps_the_op():
    # The decomposition is Inductor's alone: an exported program keeps the
    # op, decomposed to the core aten op set too.
    from torch._inductor import decomposition
    assert OP.default in decomposition.decompositions

    class Module(torch.nn.Module):
        def forward(self, g, y):
            return OP(g, y)
    program = torch.export.export(Module(), _pair("float32")).run_decompositions()
    targets = [node.target for node in program.graph.nodes if node.op == "call_function"]
    assert targets == [OP.default]


def test_inductor_gets_the_decomposition_whichever_is_imported_first():
    """Inductor imported before this module: the module's import registers
    the decomposition; after it: Inductor's import does, before any compile
    can take Inductor's table."""
    op = "torch.ops.sigmoid_backward.sigmoid_backward.default"
    inductor_first = ("import torch, torch._inductor.decomposition as inductor\n"
                      "import sigmoid_backward.torch\n"
                      f"print({op} in inductor.decompositions)\n")
    inductor_after = (
        "import torch, sigmoid_backward.torch as sbt\n"
        "from sigmoid_backward._frameworks import _torch_inductor\n"
        "print(_torch_inductor._inductor_decomposes)\n"
        "import torch._inductor.decomposition as inductor\n"
        f"print({op} in inductor.decompositions)\n"
        "from torch._inductor.utils import fresh_cache, run_and_get_code\n"
        "with fresh_cache():\n"
        "    _, codes = run_and_get_code(torch.compile(sbt.sigmoid_backward, dynamic=True),\n"
        "                                torch.ones(4), torch.ones(4))\n"
        "print(any('torch.ops.sigmoid_backward.' in code for code in codes))\n")
    outputs = [subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                              check=True).stdout.split()
               for script in (inductor_first, inductor_after)]
    assert outputs == [["True"], ["False", "True", "False"]]


def test_aten_sigmoid_backward_is_left_alone():
    # PyTorch's own kernel still rounds float16 at every step; the op once.
    g, y = _pair("float16", shape=(4096,))
    assert torch.equal(torch.ops.aten.sigmoid_backward(g, y), g * (1 - y) * y)
    assert not torch.equal(sbt.sigmoid_backward(g, y), g * (1 - y) * y)


# --- torch.func: each transform through the op and sigmoid gives aten's values

func = torch.func
# Where the op's kernel and aten's agree bit for bit, so do the transforms,
# whose formulas are aten's; float16 (the op rounds once) and complex (its
# products differ in the last bit) are within roundings.
BIT_FOR_BIT = ("float32", "float64", "bfloat16")
REAL_ONLY = {"grad", "jacrev", "jacfwd", "hessian", "grad of grad", "vmap of grad",
             "vmap of jacrev"}


def _op_transforms(dtype):
    g, y = _pair(dtype, shape=(3, 4))
    tg, ty = _pair(dtype, shape=(3, 4))
    y_row, g16 = y[0], g[:, 0]   # broadcast; per-example 0-d under vmap

    def total(f):
        return lambda g, y: (f(g, y) * tg).sum()
    return {
        "jvp": lambda f: func.jvp(f, (g, y), (tg, ty)),
        "jvp, output's tangent alone": lambda f: func.jvp(lambda y: f(g, y), (y,), (ty,)),
        "jvp, broadcast": lambda f: func.jvp(f, (g, y_row), (tg, ty[0])),
        "vjp": lambda f: func.vjp(f, g, y)[1](tg),
        "vjp, broadcast": lambda f: func.vjp(f, g, y_row)[1](tg),
        "vmap": lambda f: func.vmap(f)(g, y),
        "vmap, one input batched": lambda f: func.vmap(f, in_dims=(None, 1))(g16, y),
        "vmap of 0-d examples": lambda f: func.vmap(f, in_dims=(0, None))(g16, y_row[0]),
        "vmap of jvp": lambda f: func.vmap(lambda a, b: func.jvp(f, (a, b), (tg[0], ty[0])))(g, y),
        "grad": lambda f: func.grad(total(f), argnums=(0, 1))(g, y),
        "jacrev": lambda f: func.jacrev(f, argnums=(0, 1))(g, y_row),
        "jacfwd": lambda f: func.jacfwd(f, argnums=(0, 1))(g, y_row),
        "hessian": lambda f: func.hessian(total(f), argnums=(0, 1))(g, y),
        "grad of grad": lambda f: func.grad(
            lambda y: func.grad(total(f), argnums=1)(g, y).sum())(y),
        "vmap of grad": lambda f: func.vmap(func.grad(lambda a, b: f(a, b).sum()))(g, y),
        # the backward runs under vmap on what the vjp saved, its level gone
        "vmap of jacrev": lambda f: func.vmap(func.jacrev(f, argnums=(0, 1)))(g, y),
        "vmap of vjp": lambda f: func.vmap(lambda a, b, t: func.vjp(f, a, b)[1](t))(g, y, tg),
    }


def _sigmoid_transforms(dtype):
    x, t = _pair(dtype, shape=(5,))
    x = x * 4
    return {
        "jvp": lambda f: func.jvp(f, (x,), (t,)),
        "vjp": lambda f: func.vjp(f, x)[1](t),
        "vmap": lambda f: func.vmap(f)(x),
        "vmap of jvp": lambda f: func.vmap(lambda x: func.jvp(f, (x,), (t[0],)))(x),
        "grad": lambda f: func.grad(lambda x: (f(x) * t).sum())(x),
        "jacrev": lambda f: func.jacrev(f)(x),
        "jacfwd": lambda f: func.jacfwd(f)(x),
        "hessian": lambda f: func.hessian(lambda x: (f(x) * t).sum())(x),
        "grad of grad": lambda f: func.grad(lambda x: func.grad(lambda x: f(x).sum())(x).sum())(x),
        "vmap of grad": lambda f: func.vmap(func.grad(f))(x),
        "vmap of jacrev": lambda f: func.vmap(func.jacrev(f))(x),
        "vmap of vjp": lambda f: func.vmap(lambda a, b: func.vjp(f, a)[1](b))(x, t),
    }


def _roundings(dtype):
    """A real product rounds once; a complex one's parts up to twice, and
    broadcasting sums them."""
    return 2 if "complex" in str(dtype) else 1


def _assert_matches(ours, theirs, dtype, context):
    ours = torch.utils._pytree.tree_leaves(ours)
    theirs = torch.utils._pytree.tree_leaves(theirs)
    for i, (a, b) in enumerate(zip(ours, theirs, strict=True)):
        if dtype in BIT_FOR_BIT:
            assert_same(tensor_values(a), tensor_values(b), f"{context}, result {i}")
        else:
            assert_within_roundings(tensor_values(a), tensor_values(b), _roundings(dtype),
                                    f"{context}, {i}")


def _cases(transforms):
    """Each transform in each dtype aten computes in (what it is compared with)."""
    return [(dtype, name) for dtype in DTYPES if _aten_computes(dtype)
            for name in transforms("float64")
            if "complex" not in dtype or name not in REAL_ONLY]


@pytest.fixture
def kernel_calls(monkeypatch):
    """A function giving how many times the op's CPU kernel computed since
    the test began, and on how many elements: the native kernel's counters,
    or the Python kernel's calls of the function."""
    native = sbt._NATIVE
    if native is not None:
        start = native.kernel_counts()
        return lambda: tuple(now - then
                             for now, then in zip(native.kernel_counts(), start, strict=True))
    calls = []
    monkeypatch.setattr(registration, "_function", lambda g, y: calls.append(
        torch.broadcast_shapes(g.shape, y.shape).numel()) or function(g, y))
    return lambda: (len(calls), sum(calls))


@pytest.mark.parametrize("dtype, name", _cases(_op_transforms))
def test_transforms_of_the_op_give_atens_values_on_its_kernel(dtype, name, kernel_calls):
    transform = _op_transforms(dtype)[name]
    theirs = transform(ATEN)
    ours = transform(OP)
    _assert_matches(ours, theirs, dtype, f"{name} ({dtype})")
    assert kernel_calls()[0], "the kernel did not run"


@pytest.mark.parametrize("dtype, name", _cases(_sigmoid_transforms))
def test_transforms_of_sigmoid_give_torch_sigmoids_values_on_the_kernel(
        dtype, name, kernel_calls):
    transform = _sigmoid_transforms(dtype)[name]
    theirs = transform(torch.sigmoid)
    ours = transform(sbt.sigmoid)
    _assert_matches(ours, theirs, dtype, f"{name} ({dtype})")
    assert kernel_calls()[0] or name == "vmap", "the kernel did not run"


def test_vmap_calls_the_kernel_once_for_the_batch(kernel_calls):
    g, y = _pair("float32", shape=(8, 5))
    func.vmap(OP, in_dims=(1, None))(g, y[:, 0])
    assert kernel_calls() == (1, 40)


def test_vmap_rule_at_each_level_gives_atens_values(kernel_calls):
    g, y = _pair("float64", shape=(3, 4))
    scale = torch.arange(3.0, dtype=torch.float64)
    cases = {
        "nothing batched at the level": lambda f: func.vmap(lambda s: f(g, y) * s)(scale),
        "vmap of vmap": lambda f: func.vmap(func.vmap(f))(g, y),
        "one input batched at each level": lambda f: func.vmap(
            func.vmap(f, in_dims=(0, None)), in_dims=(None, 0))(g, y),
    }
    for name, case in cases.items():
        assert_same(case(OP).numpy(), case(ATEN).numpy(), name)
    assert kernel_calls()[0] == len(cases)   # one call each, on its whole batch


@pytest.mark.skipif(sbt._NATIVE is None, reason="the native route's C++ vmap rules")
@pytest.mark.parametrize("name", ["sigmoid_backward", "sigmoid"])
def test_vmaps_usual_calls_enter_no_python(name):
    """Under vmap, sigmoid, and sigmoid_backward with the batch at 0 of
    every batched input (one dtype), are computed by the C++ rules with no
    Python frame of this package between the call and the kernel; other
    calls (sigmoid_backward's batch elsewhere, grad) take the Python
    kernel, which shows that the probe sees it."""
    g, y = _pair("float32", shape=(3, 4))
    op = getattr(torch.ops.sigmoid_backward, name)   # no Python of ours above the kernel

    def probed(*inputs):
        names = []
        sys.setprofile(lambda frame, event, _: event == "call" and names.append(
            frame.f_globals.get("__name__")))
        try:
            result = op(*inputs)
        finally:
            sys.setprofile(None)
        entered.append(names)
        return result
    unary = name == "sigmoid"
    cases = {   # whether Python runs under it
        "vmap": (func.vmap(probed), False),
        "vmap, batch at 1": (func.vmap(probed, in_dims=1 if unary else (1, 1)), not unary),
        "vmap of vmap": (func.vmap(func.vmap(probed)), False),
        "grad": (func.grad(lambda *a: probed(*a).sum()), True),
    }
    for case, (transform, python) in cases.items():
        entered = []
        transform(g) if unary else transform(g, y)
        ran = [n for names in entered for n in names if n and n.startswith("sigmoid_backward")]
        assert bool(ran) == python, f"{case}: {ran}"


def test_plain_calls_run_the_kernel_and_nothing_else(kernel_calls):
    g, y = _pair("float32")
    with torch.profiler.profile() as profile:
        OP(g, y)
        OP(g.requires_grad_(), y).sum().backward()
    assert kernel_calls() == (3, 60)   # the two calls, then backward's
    names = {event.name for event in profile.events()}
    assert "sigmoid_backward::sigmoid_backward" in names
    assert "aten::sigmoid_backward" not in names


@pytest.mark.parametrize("dtype", ["float32", "float64", "bfloat16", "complex128"])
def test_forward_mode_autograd_gives_atens_tangent(dtype):
    forward_ad = torch.autograd.forward_ad
    g, y = _pair(dtype)
    tg, ty = _pair(dtype)
    results = []
    for f in (OP, ATEN):
        with forward_ad.dual_level():
            out = f(forward_ad.make_dual(g, tg), forward_ad.make_dual(y, ty))
            primal, tangent = forward_ad.unpack_dual(out)
            assert tangent is not None
            results.append((primal, tangent))
    _assert_matches(results[0], results[1], dtype, "forward AD")


def test_functionalize_runs_the_op():
    g, y = _pair("float64")
    assert_same(func.functionalize(OP)(g, y).numpy(), OP(g, y).numpy())


def test_show_config_says_which_route_runs():
    from sigmoid_backward import _build_config
    section = sigmoid_backward.show_config(mode="dicts")["PyTorch op"]
    assert section["route"] == sbt.ROUTE
    built = _build_config.TORCH
    same_torch = (built["version"], built["git"]) == (torch.__version__,
                                                      torch.version.git_version)
    if same_torch and os.environ.get("SIGMOID_BACKWARD_TORCH") != "python":
        assert sbt.ROUTE.startswith("native") and sbt._NATIVE is not None
    else:
        assert sbt.ROUTE.startswith("python") and sbt._NATIVE is None
    if os.environ.get("SIGMOID_BACKWARD_REQUIRE_NATIVE_TORCH") == "1":   # .ci/run's step 8
        assert sbt._NATIVE is not None, sbt.ROUTE


def test_a_native_op_built_for_another_torch_is_never_loaded():
    """After a torch upgrade the .so is not loaded (its C++ ABI may differ):
    the Python registration computes, and says why."""
    script = (
        "import sigmoid_backward._build_config as built\n"
        "built.TORCH = {'version': '0.0.1', 'git': 'elsewhere'}\n"
        "import sys, torch, sigmoid_backward.torch as sbt\n"
        "assert 'sigmoid_backward._frameworks._torch_op' not in sys.modules\n"
        "g, y = torch.randn(5), torch.rand(5)\n"
        "assert torch.equal(sbt.sigmoid_backward(g, y), torch.ops.aten.sigmoid_backward(g, y))\n"
        "print(sbt.ROUTE)\n")
    route = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                           check=True).stdout
    assert route.startswith("python (the native op was built for torch 0.0.1, this is torch "
                            + torch.__version__)


def _mlp(dtype):
    torch.manual_seed(0)
    nn = torch.nn
    return nn.Sequential(nn.Linear(8, 32), nn.Sigmoid(),
                         nn.Sequential(nn.Linear(32, 32), nn.Sigmoid()),
                         nn.Linear(32, 1)).to(getattr(torch, dtype))


def _train(model, dtype, steps=20):
    gen = torch.Generator().manual_seed(1)
    x = torch.randn(64, 8, generator=gen).to(getattr(torch, dtype))
    target = torch.randn(64, 1, generator=gen).to(getattr(torch, dtype))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    losses = []
    for _ in range(steps):
        optimizer.zero_grad()
        loss = torch.nn.functional.mse_loss(model(x), target)
        loss.backward()
        optimizer.step()
        losses.append(loss.detach())
    return torch.stack(losses), [p.detach().clone() for p in model.parameters()]


@pytest.mark.parametrize("dtype", ["float32", "bfloat16", "float64"])
def test_replace_sigmoid_trains_bit_identically(dtype, kernel_calls):
    reference = _mlp(dtype)
    ours = sbt.replace_sigmoid(_mlp(dtype))
    kinds = [type(m) for m in ours.modules()]
    assert kinds.count(sbt.Sigmoid) == 2 and torch.nn.Sigmoid not in kinds
    ref_losses, ref_params = _train(reference, dtype)
    our_losses, our_params = _train(ours, dtype)
    assert kernel_calls()[0] == 20 * 2, "the kernel did not compute both sigmoids' gradients"
    assert torch.equal(our_losses, ref_losses)
    assert all(torch.equal(a, b) for a, b in zip(our_params, ref_params, strict=True))


def test_replace_sigmoid_takes_a_bare_sigmoid_and_refuses_other_objects():
    assert type(sbt.replace_sigmoid(torch.nn.Sigmoid())) is sbt.Sigmoid
    model = torch.nn.Linear(2, 2)
    assert sbt.replace_sigmoid(model) is model
    with pytest.raises(TypeError, match="model: expected a torch.nn.Module, got str"):
        sbt.replace_sigmoid("model")


@pytest.mark.parametrize("dtype", ["float32", "float64", "bfloat16"])
def test_forward_mode_through_sigmoid_gives_torch_sigmoids_tangent(dtype, kernel_calls):
    """torch.autograd.forward_ad outside torch.func: the native sigmoid
    computes the tangent itself; never a result without one."""
    forward_ad = torch.autograd.forward_ad
    x, tangent = _pair(dtype)
    results = []
    for f in (sbt.sigmoid, torch.sigmoid):
        with forward_ad.dual_level():
            primal, out_tangent = forward_ad.unpack_dual(f(forward_ad.make_dual(x, tangent)))
            assert out_tangent is not None
            results.append((primal, out_tangent))
    assert torch.equal(results[0][0], results[1][0])
    assert torch.equal(results[0][1], results[1][1])
    assert kernel_calls()[0] == 1


class _Recorded(torch.Tensor):
    """A tensor subclass whose __torch_function__ records what it sees."""
    seen = []

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        cls.seen.append(func)
        return super().__torch_function__(func, types, args, kwargs or {})


class _Mode(torch.overrides.TorchFunctionMode):
    def __init__(self):
        super().__init__()
        self.seen = []

    def __torch_function__(self, func, types, args=(), kwargs=None):
        self.seen.append(func)
        return func(*args, **(kwargs or {}))


_EAGER_ENTRIES = {   # ours, and the torch function that gives its values
    "sigmoid": (lambda *a: sbt.sigmoid(*a), torch.sigmoid, 1),
    "sigmoid_backward": (lambda *a: sbt.sigmoid_backward(*a), ATEN, 2),
    "Sigmoid": (lambda *a: sbt.Sigmoid()(*a), torch.sigmoid, 1),
}


@pytest.mark.parametrize("name", _EAGER_ENTRIES)
def test_eager_calls_go_through_torch_function_as_torchs_own_do(name):
    """The native route's eager calls go to the dispatcher directly for plain
    tensors and Parameters; a subclass's __torch_function__ and a
    TorchFunctionMode still see the call, as they see torch's own ops'."""
    ours, theirs, arity = _EAGER_ENTRIES[name]
    args = _pair("float32")[:arity]
    expected = theirs(*args)
    _Recorded.seen = []
    result = ours(*(a.as_subclass(_Recorded) for a in args))
    assert _Recorded.seen and type(result) is _Recorded
    assert torch.equal(result.as_subclass(torch.Tensor), expected)
    with _Mode() as mode:
        result = ours(*args)
    assert mode.seen and torch.equal(result, expected)
    if sbt._NATIVE is not None:   # the call itself, not only the ops inside it
        op = getattr(torch.ops.sigmoid_backward, name.lower()).default
        assert _Recorded.seen[0] is op and mode.seen[0] is op
    params = [torch.nn.Parameter(a.clone()) for a in args]
    references = [a.clone().requires_grad_(True) for a in args]
    ours(*params).sum().backward()
    theirs(*references).sum().backward()
    for param, reference in zip(params, references, strict=True):
        assert torch.equal(param.grad, reference.grad)


@pytest.mark.parametrize("name", _EAGER_ENTRIES)
def test_eager_calls_refuse_what_is_not_a_tensor(name):
    ours, _, arity = _EAGER_ENTRIES[name]
    with pytest.raises((TypeError, RuntimeError)):
        ours(*[[0.5]] * arity)


@pytest.mark.skipif(sbt._NATIVE is None, reason="the native route's entry points")
@pytest.mark.parametrize("name", _EAGER_ENTRIES)
def test_plain_tensors_skip_the_op_objects_python(name):
    """Plain tensors go from the module's function to the dispatcher: no
    OpOverload.__call__ (the op object's Python) runs; a subclass's call
    takes it, which shows the probe sees it."""
    ours, _, arity = _EAGER_ENTRIES[name]
    args = _pair("float32")[:arity]

    def entered(inputs):
        names = []
        sys.setprofile(lambda frame, event, _: event == "call" and names.append(
            (frame.f_code.co_name, frame.f_globals.get("__name__"))))
        try:
            ours(*inputs)
        finally:
            sys.setprofile(None)
        return names
    assert ("__call__", "torch._ops") not in entered(args)
    assert ("__call__", "torch._ops") in entered([a.as_subclass(_Recorded) for a in args])


class _SigmoidOfTheFunction(torch.nn.Module):
    def forward(self, x):
        return sbt.sigmoid(x)


@pytest.mark.parametrize("strict", [False, True])
def test_sigmoid_module_exports_as_the_function_does(strict):
    """Sigmoid's forward is the native entry itself in eager mode, but every
    trace sees sigmoid(): export, strict (Dynamo) or not (fake tensors),
    gives the function's graph, which loads without the native op."""
    def exported(module):
        torch.manual_seed(0)
        model = torch.nn.Sequential(torch.nn.Linear(8, 8), module, torch.nn.Linear(8, 1))
        program = torch.export.export(model, (torch.randn(4, 8),), strict=strict)
        return model, program, [str(n.target) for n in program.graph.nodes
                                if n.op == "call_function"]
    model, program, ours = exported(sbt.Sigmoid())
    _, _, theirs = exported(_SigmoidOfTheFunction())
    assert ours == theirs
    assert not any(target.startswith("sigmoid_backward") for target in ours), ours
    x = torch.randn(4, 8)
    assert torch.equal(program.module()(x), model(x))


def test_sigmoid_modules_eager_forward_runs_no_python_below_it():
    """On the native route Sigmoid's forward calls the C entry (as
    nn.Sigmoid's calls torch.sigmoid's binding): no frame of the package
    but the forward itself; on the Python route, sigmoid() and what it
    runs (which shows the probe sees them)."""
    x = _pair("float32")[0]
    module = sbt.Sigmoid()
    names = []
    sys.setprofile(lambda frame, event, _: event == "call" and names.append(
        (frame.f_code.co_name, frame.f_globals.get("__name__"))))
    try:
        module(x)
    finally:
        sys.setprofile(None)
    ours = [name for name, where in names if where and where.startswith("sigmoid_backward")]
    if sbt._NATIVE is not None:
        assert ours == ["forward"]
    else:   # sigmoid(), then its autograd.Function's Python
        assert ours[:2] == ["forward", "sigmoid"] and len(ours) > 2
