"""aclCreateTensor / aclDestroyTensor / tensor_from_array: which descriptors
are consistent, and that a tensor only ever reaches its own storage."""
import array
import mmap
import sys

import ml_dtypes
import numpy as np
import pytest

from sigmoid_backward import aclnn
from sigmoid_backward.aclnn import (
    ACL_BF16,
    ACL_DOUBLE,
    ACL_FLOAT,
    ACL_FORMAT_NCHW,
    ACL_FORMAT_ND,
    ACLNN_ERR_PARAM_INVALID,
    ACLNN_SUCCESS,
    aclCreateTensor,
    aclDestroyTensor,
    aclGetRecentErrMsg,
    tensor_from_array,
)

from aclnn_support import clean_aclnn_state, expected, gather, run, sample  # noqa: F401
from helpers import assert_same
from hostile import BufferRaises, closed_mmap, released_memoryview

BIG = 2 ** 63 - 1



_FRESH = object()


def create(dims=(2, 2), dtype=ACL_FLOAT, stride=(2, 1), offset=0, fmt=ACL_FORMAT_ND,
           storage=(4,), data=_FRESH):
    data = bytearray(16) if data is _FRESH else data
    return aclCreateTensor(list(dims) if isinstance(dims, tuple) else dims, dtype,
                           list(stride) if isinstance(stride, tuple) else stride,
                           offset, fmt, list(storage) if isinstance(storage, tuple) else storage,
                           data)


def test_valid_descriptor_keeps_its_fields():
    t = create(dims=(2, 2), stride=(1, 2), offset=0, fmt=ACL_FORMAT_NCHW)
    assert t is not None
    assert (t.view_dims, t.stride, t.offset, t.storage_dims) == ((2, 2), (1, 2), 0, (4,))
    assert t.data_type is ACL_FLOAT and t.format is ACL_FORMAT_NCHW
    assert "ACL_FLOAT" in repr(t) and t.writable and not t.destroyed
    assert aclGetRecentErrMsg() == ""


def test_numpy_integers_are_accepted():
    t = aclCreateTensor(np.array([2, 2]), np.int64(ACL_FLOAT), (np.int32(2), 1), np.int8(0),
                        ACL_FORMAT_ND, (4,), bytearray(16))
    assert t is not None and t.view_dims == (2, 2)


@pytest.mark.parametrize("kwargs, words", [
    ({"dims": (2, -2)}, ["view_dims[1]", "negative"]),
    ({"stride": (-1, 1)}, ["stride[0]", "negative"]),
    ({"offset": -1}, ["offset", "negative"]),
    ({"storage": (-4,)}, ["storage_dims[0]", "negative"]),
    ({"stride": (2,)}, ["2 dims", "has 1"]),
    ({"dims": (4,)}, ["1 dims", "has 2"]),
    ({"dtype": 5}, ["data_type 5"]),
    ({"dtype": 99}, ["data_type 99"]),
    ({"dtype": "ACL_FLOAT"}, ["data_type", "str"]),
    ({"storage": (5,)}, ["20 bytes", "holds 16"]),
    ({"storage": (2, 3)}, ["24 bytes", "holds 16"]),
    ({"offset": 1}, ["reaches element 4", "4 elements"]),
    ({"stride": (3, 1)}, ["reaches element 4"]),
    ({"dims": (1, 5), "stride": (0, 1)}, ["reaches element 4"]),
    ({"dims": (BIG + 1, 1)}, ["overflows int64"]),
    ({"stride": (BIG + 1, 1)}, ["overflows int64"]),
    ({"offset": BIG + 1}, ["overflows int64"]),
    ({"storage": (2 ** 32, 2 ** 31)}, ["element count", "overflows int64"]),
    ({"storage": (2 ** 31, 2 ** 30, 2)}, ["byte size", "overflows int64"]),
    ({"dims": (2 ** 40, 2 ** 40), "stride": (0, 0)}, ["element count", "overflows int64"]),
    ({"dims": (2 ** 31, 2 ** 31), "stride": (0, 0)}, ["byte size", "overflows int64"]),
    ({"dims": (3, 2), "stride": (BIG // 2 + 1, 1)}, ["last element", "overflows int64"]),
    ({"dims": None}, ["view_dims", "null"]),
    ({"stride": "21"}, ["stride", "sequence"]),
    ({"storage": 4}, ["storage_dims", "sequence"]),
    ({"dims": (2.0, 2)}, ["view_dims[0]", "float"]),
    ({"dims": (True, 2)}, ["view_dims[0]", "bool"]),
    ({"offset": None}, ["offset", "NoneType"]),
    ({"fmt": 1.5}, ["format", "float"]),
    ({"data": None}, ["tensor_data", "buffer protocol"]),
    ({"data": [0] * 16}, ["tensor_data", "buffer protocol"]),
    ({"data": np.zeros(32, np.uint8)[::2]}, ["contiguous"]),
    ({"data": memoryview(bytearray(32))[::2]}, ["contiguous"]),
    ({"data": np.zeros(16, object)}, ["Python objects"]),
    ({"data": memoryview(np.zeros(16, object))}, ["Python objects"]),
    ({"data": released_memoryview()}, ["tensor_data: cannot read the buffer of a memoryview",
                                       "released memoryview"]),
    ({"data": closed_mmap()}, ["tensor_data: cannot read the buffer of a mmap", "closed"]),
])
def test_inconsistent_descriptor_gives_none(kwargs, words):
    assert create(**kwargs) is None
    message = aclGetRecentErrMsg()
    assert message.startswith("aclCreateTensor: ")
    for word in words:
        assert word in message, (word, message)


@pytest.mark.skipif(sys.version_info < (3, 12), reason="__buffer__ is Python 3.12+ (PEP 688)")
def test_buffer_export_that_raises_gives_none():
    """The export is the caller's code: what it raises becomes the message."""
    assert create(data=BufferRaises()) is None
    assert aclGetRecentErrMsg() == ("aclCreateTensor: tensor_data: cannot read the buffer "
                                    "of a BufferRaises: export failed")


def test_huge_stride_on_a_unit_dim_is_harmless():
    """A dim of extent 1 never steps, whatever its stride."""
    t = create(dims=(1, 4), stride=(BIG, 1))
    assert t is not None and t._elements().shape == (1, 4)


def test_empty_view_reaches_nothing():
    t = create(dims=(0, 3), stride=(BIG, BIG), offset=BIG, storage=(0,), data=b"")
    assert t is not None and t.size == 0 and t._elements().shape == (0, 3)


def test_unknown_format_is_kept():
    t = create(fmt=1234)
    assert t is not None and t.format == 1234


@pytest.mark.parametrize("dtype, n, nbytes", [(aclnn.ACL_INT4, 3, 2), (aclnn.ACL_UINT1, 9, 2),
                                              (aclnn.ACL_COMPLEX32, 2, 8),
                                              (aclnn.ACL_INT64, 2, 16)])
def test_sub_byte_and_other_sizes(dtype, n, nbytes):
    assert create(dims=(n,), dtype=dtype, stride=(1,), storage=(n,),
                  data=bytearray(nbytes)) is not None
    assert create(dims=(n,), dtype=dtype, stride=(1,), storage=(n,),
                  data=bytearray(nbytes - 1)) is None


@pytest.mark.parametrize("dtype", [aclnn.ACL_STRING, aclnn.ACL_DT_UNDEFINED])
def test_sizeless_types_reach_no_bytes(dtype):
    t = create(dims=(3,), dtype=dtype, stride=(1,), storage=(3,), data=b"")
    assert t is not None
    assert create(dims=(3,), dtype=dtype, stride=(1,), offset=3, storage=(3,), data=b"") is None


@pytest.mark.parametrize("data", [
    bytearray(16), memoryview(bytearray(16)), array.array("f", [0] * 4),
    np.zeros(4, np.float32), np.zeros(8, ml_dtypes.bfloat16), np.zeros((2, 2), np.int32, order="F"),
    bytes(16), memoryview(bytes(16)),
], ids=lambda d: type(d).__name__)
def test_buffer_kinds_accepted(data):
    t = create(data=data)
    assert t is not None
    assert t.writable == (not isinstance(data, bytes) and not (
        isinstance(data, memoryview) and data.readonly))


def test_mmap_cannot_close_under_a_tensor():
    m = mmap.mmap(-1, 16)
    t = create(data=m)
    with pytest.raises(BufferError):
        m.close()
    aclDestroyTensor(t)
    del t
    m.close()


def test_destroy():
    t = create()
    assert aclDestroyTensor(t) == ACLNN_SUCCESS and t.destroyed and not t.writable
    assert aclDestroyTensor(t) == ACLNN_ERR_PARAM_INVALID
    assert "already destroyed" in aclGetRecentErrMsg()
    assert aclDestroyTensor(None) == ACLNN_SUCCESS        # as delete nullptr
    assert aclDestroyTensor("tensor") == ACLNN_ERR_PARAM_INVALID


# tensor_from_array ---------------------------------------------------------------

@pytest.mark.parametrize("make_view", [
    lambda a: a,
    lambda a: a.T,
    lambda a: a[::2, 1:],
    lambda a: a[1:, ::-1][:, ::-1],
    lambda a: np.broadcast_to(a[:1], a.shape),
    lambda a: a[2, 3, ...],
    lambda a: a[:0],
], ids=["contiguous", "transposed", "strided", "positive-again", "broadcast", "0-d", "empty"])
@pytest.mark.parametrize("dtype", [np.float32, ml_dtypes.bfloat16, np.complex128])
def test_tensor_from_array_views(make_view, dtype):
    rng = np.random.default_rng(0)
    base = sample(dtype, (4, 6), rng, "g")
    view = make_view(base)
    t = tensor_from_array(view)
    assert t.view_dims == view.shape
    assert np.array_equal(t._elements(), view) or view.size == 0
    assert t.writable == view.flags.writeable


def test_tensor_from_array_writes_reach_the_array():
    rng = np.random.default_rng(1)
    g, y = sample(np.float64, (3, 4), rng, "g"), sample(np.float64, (3, 4), rng, "y")
    out = np.zeros((4, 3), np.float32).T     # a transposed output
    run(tensor_from_array(g), tensor_from_array(y), tensor_from_array(out))
    assert_same(out, expected(g, y, ACL_FLOAT))


def test_tensor_from_array_bf16_and_formats():
    a = np.ones((2, 2), ml_dtypes.bfloat16)
    t = tensor_from_array(a, ACL_FORMAT_NCHW)
    assert t.data_type is ACL_BF16 and t.format is ACL_FORMAT_NCHW


@pytest.mark.parametrize("bad, error", [
    ([1.0, 2.0], TypeError),
    (np.zeros(3, np.dtype(">f8")), ValueError),
    (np.zeros(3, np.float32)[::-1], ValueError),
    (np.zeros(4, np.uint8).view(np.dtype([("a", np.uint8), ("b", np.uint8)])), TypeError),
    (np.zeros(3, object), TypeError),
    (np.zeros(3, np.longdouble), TypeError),
    (np.ndarray((2,), np.float32, buffer=bytearray(10), offset=1, strides=(5,)), ValueError),
])
def test_tensor_from_array_rejects(bad, error):
    with pytest.raises(error):
        tensor_from_array(bad)


def test_element_view_is_the_descriptor():
    """The ndarray the kernels see equals explicit index arithmetic."""
    buf = np.arange(12, dtype=np.float64)
    t = aclCreateTensor([2, 3], ACL_DOUBLE, [5, 2], 1, ACL_FORMAT_ND, [12], buf)
    assert np.array_equal(t._elements(), gather(buf, [2, 3], [5, 2], 1))


@pytest.mark.parametrize("field", ["view_dims", "data_type", "stride", "offset", "format",
                                   "storage_dims"])
def test_descriptor_is_read_only(field):
    """The bounds proof must keep holding: no field can change after creation."""
    t = create()
    with pytest.raises(AttributeError):
        setattr(t, field, getattr(t, field))
