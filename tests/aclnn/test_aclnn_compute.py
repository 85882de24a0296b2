"""Results of the two-phase API, bit for bit against the reference twin:
every dtype (with BF16 gated per SoC), promotion, broadcasting, strided and
offset views, 0-d and empty tensors, every format, every kind of buffer."""
import array
import mmap
import warnings

import ml_dtypes
import numpy as np
import pytest

import sigmoid_backward
from sigmoid_backward import aclnn
from sigmoid_backward.aclnn import (
    ACL_BF16,
    ACL_DOUBLE,
    ACL_FLOAT,
    ACL_FLOAT16,
    ACL_FORMAT_ND,
    ACLNN_ERR_PARAM_INVALID,
    ACLNN_SUCCESS,
    aclCreateTensor,
    aclGetRecentErrMsg,
    aclnnSigmoidBackwardGetWorkspaceSize,
)

from aclnn_support import (  # noqa: F401 (autouse)
    NP_OF,
    SIX,
    castable,
    clean_aclnn_state,
    expected,
    gather,
    indices,
    make,
    promote,
    run,
    sample,
)
from helpers import assert_same


def check_call(g_type, y_type, gi_type, g_dims, y_dims, rng, **layout):
    """Build contiguous tensors, run both phases, compare with the reference."""
    g_vals = sample(NP_OF[g_type], g_dims, rng, "g")
    y_vals = sample(NP_OF[y_type], y_dims, rng, "y")
    shape = list(np.broadcast_shapes(tuple(g_dims), tuple(y_dims)))
    g, g_buf = make(g_dims, g_type, g_vals, **layout.get("g", {}))
    y, y_buf = make(y_dims, y_type, y_vals, **layout.get("y", {}))
    # The logical arrays as the tensors see them (a stride-0 view repeats).
    g_vals = gather(g_buf, g_dims, g.stride, g.offset)
    y_vals = gather(y_buf, y_dims, y.stride, y.offset)
    gi, buf = make(shape, gi_type, **layout.get("gi", {}))
    size = run(g, y, gi)
    got = gather(buf, shape, gi.stride, gi.offset)
    assert_same(got, expected(g_vals, y_vals, gi_type))
    return size, buf


@pytest.mark.parametrize("gi_type", SIX, ids=lambda t: t.name)
@pytest.mark.parametrize("y_type", SIX, ids=lambda t: t.name)
@pytest.mark.parametrize("g_type", SIX, ids=lambda t: t.name)
def test_every_dtype_triple(g_type, y_type, gi_type):
    """All 216 triples: success exactly when the promotion (docs/semantics.md) casts to
    gradInput's dtype, and then the reference's values."""
    rng = np.random.default_rng([g_type, y_type, gi_type])
    if castable(promote(g_type, y_type), gi_type):
        size, _ = check_call(g_type, y_type, gi_type, [3, 5], [3, 5], rng)
        if g_type == y_type == gi_type:
            assert size == 0   # the common case needs no workspace
    else:
        g, y, gi = (make([3, 5], t)[0] for t in (g_type, y_type, gi_type))
        status, size, executor = aclnnSigmoidBackwardGetWorkspaceSize(g, y, gi)
        assert (status, size, executor) == (ACLNN_ERR_PARAM_INVALID, 0, None)


@pytest.mark.parametrize("soc, bf16", [("Ascend910", False), ("Ascend310P", False),
                                       ("Ascend910B", True), ("Ascend910_93", True),
                                       ("Ascend950", True)])
@pytest.mark.parametrize("g_type", SIX, ids=lambda t: t.name)
def test_bf16_gating_per_soc(soc, bf16, g_type):
    aclnn.set_soc_version(soc)
    rng = np.random.default_rng(7)
    if g_type == ACL_BF16 and not bf16:
        g, y, gi = (make([4], t)[0] for t in (ACL_BF16, ACL_BF16, ACL_BF16))
        status, _, executor = aclnnSigmoidBackwardGetWorkspaceSize(g, y, gi)
        assert status == ACLNN_ERR_PARAM_INVALID and executor is None
        assert soc in aclGetRecentErrMsg()
    else:
        out = promote(g_type, g_type)
        check_call(g_type, g_type, out, [4], [4], rng)


@pytest.mark.parametrize("soc", ["Ascend910", "Ascend310P"])
def test_bf16_output_and_grad_input_pass_without_bf16(soc):
    """docs/semantics.md: the operator gates BF16 on gradOutput only."""
    aclnn.set_soc_version(soc)
    check_call(ACL_FLOAT, ACL_BF16, ACL_BF16, [6], [6], np.random.default_rng(1))


def test_broadcast_spec_example():
    """docs/semantics.md: [1,4,1,1] with [1,1,4,4] into [1,4,4,4]."""
    size, _ = check_call(ACL_FLOAT, ACL_FLOAT, ACL_FLOAT, [1, 4, 1, 1], [1, 1, 4, 4],
                         np.random.default_rng(2))
    assert size > 0


@pytest.mark.parametrize("g_dims, y_dims", [([3, 1], [1, 4]), ([4], [2, 3, 4]),
                                            ([], [2, 3]), ([2, 1, 3], [5, 1])])
def test_broadcast_shapes(g_dims, y_dims):
    check_call(ACL_DOUBLE, ACL_FLOAT16, ACL_DOUBLE, g_dims, y_dims, np.random.default_rng(3))


@pytest.mark.parametrize("gi_type", [ACL_FLOAT, ACL_FLOAT16, ACL_DOUBLE, ACL_BF16],
                         ids=lambda t: t.name)
def test_float_with_float16(gi_type):
    """docs/semantics.md: a FLOAT with FLOAT16 pair succeeds (computed in float32)."""
    rng = np.random.default_rng(4)
    check_call(ACL_FLOAT, ACL_FLOAT16, gi_type, [8], [8], rng)
    check_call(ACL_FLOAT16, ACL_FLOAT, gi_type, [8], [8], rng)


def test_float64_into_float32():
    rng = np.random.default_rng(5)
    g = rng.uniform(-3, 3, 64)
    y = rng.uniform(0, 1, 64)
    gt, _ = make([64], ACL_DOUBLE, g)
    yt, _ = make([64], ACL_DOUBLE, y)
    gi, buf = make([64], ACL_FLOAT)
    size = run(gt, yt, gi)
    assert size > 0   # the float64 result is staged, then rounded once
    assert_same(buf, (g * (1 - y) * y).astype(np.float32))


TRANSPOSED = {"stride": [1, 2], "offset": 1, "storage": 5}


@pytest.mark.parametrize("which", [("g",), ("y",), ("gi",), ("g", "y", "gi")])
def test_non_contiguous_views(which):
    """dims [2,2], stride [1,2], offset 1 on the inputs, the output or all."""
    layout = {name: TRANSPOSED for name in which}
    _, buf = check_call(ACL_FLOAT, ACL_FLOAT, ACL_FLOAT, [2, 2], [2, 2],
                        np.random.default_rng(6), **layout)
    if "gi" in which:
        assert buf[0] == 0   # the storage element outside the view is untouched


def test_transposed_everywhere_needs_no_workspace():
    """Three Fortran-ordered views run the kernel in place."""
    size, _ = check_call(ACL_FLOAT, ACL_FLOAT, ACL_FLOAT, [2, 2], [2, 2],
                         np.random.default_rng(6), g=TRANSPOSED, y=TRANSPOSED, gi=TRANSPOSED)
    assert size == 0


@pytest.mark.parametrize("layout", [
    {"stride": [9, 2], "offset": 3, "storage": 50},      # gaps in both dims
    {"stride": [0, 1], "offset": 0, "storage": 4},       # a broadcast (stride 0) input
    {"stride": [1, 6], "offset": 2, "storage": 30},      # column-major with a gap
])
@pytest.mark.parametrize("g_type, gi_type", [(ACL_FLOAT, ACL_FLOAT), (ACL_BF16, ACL_FLOAT),
                                             (ACL_DOUBLE, aclnn.ACL_COMPLEX128)])
def test_strided_views(layout, g_type, gi_type):
    rng = np.random.default_rng(8)
    gi_layout = layout if layout["stride"][0] else {}  # a stride-0 gradInput aliases itself
    _, buf = check_call(g_type, g_type, gi_type, [5, 4], [5, 4], rng,
                        g=layout, y=layout, gi=gi_layout)
    if gi_layout:
        touched = np.zeros(buf.size, bool)
        touched[indices([5, 4], layout["stride"], layout["offset"])] = True
        assert np.all(buf[~touched] == 0)


@pytest.mark.parametrize("g_type", [ACL_FLOAT, ACL_BF16, aclnn.ACL_COMPLEX64])
def test_zero_d(g_type):
    rng = np.random.default_rng(9)
    check_call(g_type, g_type, g_type, [], [], rng)
    check_call(g_type, g_type, g_type, [], [3, 2], rng)
    check_call(g_type, g_type, g_type, [], [], rng, g={"offset": 2, "storage": 3},
               gi={"offset": 1, "storage": 4})


@pytest.mark.parametrize("fmt", [*aclnn.aclFormat, 999, -7], ids=str)
def test_every_format(fmt):
    """The operator does not look at the format; unknown values pass too."""
    rng = np.random.default_rng(10)
    g_vals, y_vals = sample(np.float32, [2, 3], rng, "g"), sample(np.float32, [2, 3], rng, "y")
    g = make([2, 3], ACL_FLOAT, g_vals, fmt=fmt)[0]
    y = make([2, 3], ACL_FLOAT, y_vals, fmt=fmt)[0]
    gi, buf = make([2, 3], ACL_FLOAT, fmt=fmt)
    assert gi.format == fmt
    assert run(g, y, gi) == 0
    assert_same(buf.reshape(2, 3), expected(g_vals, y_vals, ACL_FLOAT))


def _buffers(data):
    """The same bytes in every kind of buffer-protocol object."""
    raw = data.tobytes()
    m = mmap.mmap(-1, len(raw))
    m.write(raw)
    return {
        "ndarray-uint8": np.frombuffer(raw, np.uint8).copy(),
        "ndarray-int16-2d": np.frombuffer(raw, np.int16).copy().reshape(2, -1),
        # Fortran-ordered, its memory still holding ``raw`` in order.
        "ndarray-fortran": np.frombuffer(raw, np.uint8).copy().reshape(-1, 2).T,
        "ndarray-bfloat16": np.frombuffer(raw, ml_dtypes.bfloat16).copy(),
        "bytearray": bytearray(raw),
        "memoryview": memoryview(bytearray(raw)),
        "array.array": array.array("b", raw),
        "mmap": m,
    }


@pytest.mark.parametrize("kind", list(_buffers(np.zeros(8, np.float32))))
def test_buffer_kinds(kind):
    rng = np.random.default_rng(11)
    g_vals = sample(np.float32, [8], rng, "g")
    y_vals = sample(np.float32, [8], rng, "y")
    g_buf = _buffers(g_vals)[kind]
    y_buf = _buffers(y_vals)[kind]
    gi_buf = _buffers(np.zeros(8, np.float32))[kind]
    g, y, gi = (aclCreateTensor([2, 4], ACL_FLOAT, [4, 1], 0, ACL_FORMAT_ND, [8], b)
                for b in (g_buf, y_buf, gi_buf))
    assert run(g, y, gi) == 0
    got = np.frombuffer(memoryview(gi_buf).cast("B") if not isinstance(gi_buf, np.ndarray)
                        else gi_buf.tobytes(order="A"), np.float32)
    assert_same(got, expected(g_vals, y_vals, ACL_FLOAT))
    for t in (g, y, gi):   # releases the exports (an mmap can close again)
        assert aclnn.aclDestroyTensor(t) == ACLNN_SUCCESS


def test_read_only_input_buffers():
    rng = np.random.default_rng(12)
    g_vals, y_vals = sample(np.float32, [6], rng, "g"), sample(np.float32, [6], rng, "y")
    ro = np.broadcast_to(y_vals, (6,))   # a read-only ndarray view
    assert not ro.flags.writeable
    g = aclCreateTensor([6], ACL_FLOAT, [1], 0, ACL_FORMAT_ND, [6], g_vals.tobytes())
    y = aclCreateTensor([6], ACL_FLOAT, [1], 0, ACL_FORMAT_ND, [6], ro)
    gi, buf = make([6], ACL_FLOAT)
    run(g, y, gi)
    assert_same(buf, expected(g_vals, y_vals, ACL_FLOAT))


@pytest.mark.parametrize("shift", [1, 2, 3, 5])
def test_misaligned_buffers(shift):
    """Buffers at odd addresses are staged: the kernel only takes aligned arrays."""
    rng = np.random.default_rng(13)
    g_vals = sample(np.complex128, [7], rng, "g")
    y_vals = sample(np.complex128, [7], rng, "y")
    tensors, gi_mem = [], None
    for vals in (g_vals, y_vals, np.zeros(7, np.complex128)):
        mem = bytearray(shift + vals.nbytes)
        mem[shift:] = vals.tobytes()
        tensors.append(aclCreateTensor([7], aclnn.ACL_COMPLEX128, [1], 0, ACL_FORMAT_ND, [7],
                                       memoryview(mem)[shift:]))
        gi_mem = mem
    assert run(*tensors) > 0
    assert_same(np.frombuffer(bytes(gi_mem[shift:]), np.complex128),
                expected(g_vals, y_vals, aclnn.ACL_COMPLEX128))


def test_in_place_on_grad_output():
    """gradInput may be gradOutput itself (same view): no workspace needed."""
    rng = np.random.default_rng(14)
    g_vals, y_vals = sample(np.float32, [3, 4], rng, "g"), sample(np.float32, [3, 4], rng, "y")
    g, g_buf = make([3, 4], ACL_FLOAT, g_vals)
    y = make([3, 4], ACL_FLOAT, y_vals)[0]
    assert run(g, y, g) == 0
    assert_same(g_buf.reshape(3, 4), expected(g_vals, y_vals, ACL_FLOAT))


@pytest.mark.parametrize("gi_offset", [1, 2, 3])
def test_partial_overlap_reads_before_writing(gi_offset):
    """gradInput over the same buffer as gradOutput, shifted: the result is
    computed from the original gradOutput, as if it had been copied first."""
    rng = np.random.default_rng(15)
    g_vals, y_vals = sample(np.float64, [10], rng, "g"), sample(np.float64, [10], rng, "y")
    shared = np.zeros(13)
    shared[:10] = g_vals
    g = aclCreateTensor([10], ACL_DOUBLE, [1], 0, ACL_FORMAT_ND, [13], shared)
    gi = aclCreateTensor([10], ACL_DOUBLE, [1], gi_offset, ACL_FORMAT_ND, [13], shared)
    y = make([10], ACL_DOUBLE, y_vals)[0]
    assert run(g, y, gi) > 0
    assert_same(shared[gi_offset:gi_offset + 10], expected(g_vals, y_vals, ACL_DOUBLE))


def test_nan_and_inf_pass_through():
    g_vals = np.array([np.nan, 1, np.inf, -np.inf, 1, 0], np.float32)
    y_vals = np.array([0.5, np.nan, 0.5, 2, np.inf, np.inf], np.float32)
    g, y = make([6], ACL_FLOAT, g_vals)[0], make([6], ACL_FLOAT, y_vals)[0]
    gi, buf = make([6], ACL_FLOAT)
    run(g, y, gi)
    assert_same(buf, expected(g_vals, y_vals, ACL_FLOAT))


def test_overflow_gives_inf_without_warnings():
    """IEEE results are the contract: no RuntimeWarning from phase 2."""
    g_vals = np.array([1e300, -1e300, 3.0], np.float64)
    y_vals = np.array([0.5, 0.5, 0.5], np.float64)
    g, y = make([3], ACL_DOUBLE, g_vals)[0], make([3], ACL_DOUBLE, y_vals)[0]
    gi, buf = make([3], ACL_FLOAT)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        run(g, y, gi)
    assert buf.tolist() == [np.inf, -np.inf, 0.75]


@pytest.mark.parametrize("threads", [1, 2])
def test_results_do_not_depend_on_threads(threads):
    """Large enough for the kernel's parallel path, through staging too."""
    rng = np.random.default_rng(16)
    g_vals = sample(np.float32, [300, 1], rng, "g")
    y_vals = sample(np.float16, [1, 400], rng, "y")
    g, y = make([300, 1], ACL_FLOAT, g_vals)[0], make([1, 400], ACL_FLOAT16, y_vals)[0]
    gi, buf = make([300, 400], ACL_FLOAT)
    sigmoid_backward.set_num_threads(threads)
    try:
        run(g, y, gi)
    finally:
        sigmoid_backward.set_num_threads(None)
    assert_same(buf.reshape(300, 400), expected(g_vals, y_vals, ACL_FLOAT))
