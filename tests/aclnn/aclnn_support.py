"""Helpers shared by the tests of sigmoid_backward.aclnn (test_aclnn_*.py).

The oracle side never goes through the code under test: logical arrays are
gathered from the buffers by explicit index arithmetic (not as_strided), the
expected values come from ``sigmoid_backward.reference``, and the tests
compare bit for bit with ``helpers.assert_same``.
"""
import threading

import numpy as np
import pytest

from sigmoid_backward import aclnn, reference

from dtypes_catalogue import BFLOAT16, COMPLEX64, COMPLEX128, FLOAT16, FLOAT32, FLOAT64, NPU_DTYPES

# The operator's dtypes (docs/semantics.md): CANN's codes written out here
# rather than imported from the package, each to its dtype by name.
NP_OF = {
    aclnn.ACL_FLOAT: FLOAT32,
    aclnn.ACL_FLOAT16: FLOAT16,
    aclnn.ACL_DOUBLE: FLOAT64,
    aclnn.ACL_COMPLEX64: COMPLEX64,
    aclnn.ACL_COMPLEX128: COMPLEX128,
    aclnn.ACL_BF16: BFLOAT16,
}
assert set(NP_OF.values()) == set(NPU_DTYPES), "NP_OF is not the NPU operator's list"
SIX = list(NP_OF)
UNSUPPORTED = [t for t in aclnn.aclDataType if t not in NP_OF]

# The operator's promotion table (docs/semantics.md), literally.
_F16, _BF16, _F32, _F64, _C64, _C128 = (aclnn.ACL_FLOAT16, aclnn.ACL_BF16, aclnn.ACL_FLOAT,
                                        aclnn.ACL_DOUBLE, aclnn.ACL_COMPLEX64,
                                        aclnn.ACL_COMPLEX128)
_ORDER = [_F16, _BF16, _F32, _F64, _C64, _C128]
_TABLE = [
    [_F16, _F32, _F32, _F64, _C64, _C128],
    [_F32, _BF16, _F32, _F64, _C64, _C128],
    [_F32, _F32, _F32, _F64, _C64, _C128],
    [_F64, _F64, _F64, _F64, _C128, _C128],
    [_C64, _C64, _C64, _C128, _C64, _C128],
    [_C128, _C128, _C128, _C128, _C128, _C128],
]


def promote(a, b):
    return _TABLE[_ORDER.index(a)][_ORDER.index(b)]


def castable(src, dst):
    """The operator's rule: any cast but complex to real."""
    return not (src in (_C64, _C128) and dst not in (_C64, _C128))


def contiguous_strides(dims):
    strides = [1] * len(dims)
    for i in range(len(dims) - 2, -1, -1):
        strides[i] = dims[i + 1] * strides[i + 1]
    return strides


def sample(dtype, shape, rng, kind):
    """Values for gradOutput (kind 'g') or output (kind 'y'), no NaN."""
    dt = np.dtype(dtype)
    if kind == "g":
        re, im = rng.uniform(-3, 3, shape), rng.uniform(-3, 3, shape)
    else:
        re, im = rng.uniform(-0.5, 1.5, shape), rng.uniform(-0.5, 0.5, shape)
    if dt.kind == "c":
        return (re + 1j * im).astype(dt)
    return re.astype(dt)


def make(dims, data_type, values=None, *, stride=None, offset=0, storage=None, fill=0,
         fmt=aclnn.ACL_FORMAT_ND):
    """A tensor over a fresh numpy buffer of ``storage`` elements, with
    ``values`` (logical, C order) placed by explicit index arithmetic.

    Returns (tensor, buffer): the buffer is the typed numpy storage.
    """
    dims = list(dims)
    stride = contiguous_strides(dims) if stride is None else list(stride)
    if storage is None:
        storage = offset + sum((d - 1) * s for d, s in zip(dims, stride, strict=True)) + 1 \
            if all(dims) else 0
    buf = np.full(storage, fill, NP_OF[data_type])
    if values is not None:
        buf[indices(dims, stride, offset)] = np.asarray(values, NP_OF[data_type])
    tensor = aclnn.aclCreateTensor(dims, data_type, stride, offset, fmt, [storage], buf)
    assert tensor is not None, aclnn.aclGetRecentErrMsg()
    return tensor, buf


def raw(dims, data_type):
    """A contiguous tensor of any aclDataType over a zeroed bytearray."""
    dims = list(dims)
    size = int(np.prod(dims))
    tensor = aclnn.aclCreateTensor(dims, data_type, contiguous_strides(dims), 0,
                                   aclnn.ACL_FORMAT_ND, [size], bytearray(16 * size))
    assert tensor is not None, aclnn.aclGetRecentErrMsg()
    return tensor


def indices(dims, stride, offset):
    """Storage index of every element of the view, by explicit arithmetic."""
    idx = np.full(tuple(dims), offset, np.int64)
    if idx.size:
        grid = np.indices(tuple(dims), dtype=np.int64)
        for k, s in enumerate(stride):
            idx += grid[k] * s
    return idx


def gather(buf, dims, stride, offset):
    """The view's logical array out of a typed buffer (a copy)."""
    return np.asarray(buf)[indices(dims, stride, offset)]


def expected(g, y, out_type):
    """The reference result cast to gradInput's dtype."""
    with np.errstate(invalid="ignore", over="ignore"):  # NaN and inf inputs are on purpose
        return np.asarray(reference.sigmoid_backward(g, y)).astype(NP_OF[out_type])


def run(g, y, gi, stream=None):
    """Both phases (and a synchronize); returns the phase-1 workspace size."""
    status, size, executor = aclnn.aclnnSigmoidBackwardGetWorkspaceSize(g, y, gi)
    aclnn.check(status)
    workspace = bytearray(size) if size else None
    aclnn.check(aclnn.aclnnSigmoidBackward(workspace, size, executor, stream))
    aclnn.check(aclnn.aclrtSynchronizeStream(stream))
    return size


@pytest.fixture(autouse=True)
def clean_aclnn_state(monkeypatch):
    """The default SoC (Ascend910B, which takes a BF16 gradOutput) and no
    stale error messages.  Autouse in every module that imports it."""
    monkeypatch.delenv("SIGMOID_BACKWARD_SOC_VERSION", raising=False)
    aclnn.set_soc_version(None)
    aclnn.aclGetRecentErrMsg()
    yield
    aclnn.set_soc_version(None)


# ---- streams -------------------------------------------------------------------

STREAM_WAIT = 30  # seconds: a bound for a hung stream test, never reached


def hold(stream):
    """Block ``stream`` until the returned event is set."""
    gate, started = threading.Event(), threading.Event()

    def blocked():
        started.set()
        assert gate.wait(STREAM_WAIT)
    assert stream._launch("hold", blocked)
    assert started.wait(STREAM_WAIT)
    return gate
