"""The hypothesis strategies and properties of the aclnn descriptor fuzzing,
run by test_aclnn_fuzz.py (300 examples each, in every run) and by
test_aclnn_hardening.py (10,000 examples each, under the ``slow`` marker).

Two properties:

1. ``check_create_tensor`` over ``descriptors()``: aclCreateTensor accepts a
   descriptor exactly when a brute-force oracle finds every reachable element
   inside the storage and the storage inside the buffer (with C int64
   limits), and the element view it builds lies inside the buffer's bytes.
2. ``check_both_phases`` (drawing its own case): both phases, over buffers
   with guard bytes on either side (the tensors see only the middle slice),
   with tensors that may share one buffer: the guard bytes, the workspace's
   guard bytes and every byte outside gradInput's view stay untouched, and
   gradInput holds the reference result of the inputs as they were before
   the call.

``FUZZ`` is the settings of the 300-example runs.
"""
import itertools
import math

import numpy as np
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from numpy.lib.array_utils import byte_bounds

from sigmoid_backward import aclnn
from sigmoid_backward.aclnn import ACL_FORMAT_ND, ACLNN_SUCCESS, aclGetRecentErrMsg

from aclnn_support import NP_OF, SIX, expected, indices
from helpers import assert_same

INT64_MAX = 2 ** 63 - 1
BITS = {aclnn.ACL_DT_UNDEFINED: 0, aclnn.ACL_STRING: 0, aclnn.ACL_UINT1: 1, aclnn.ACL_INT4: 4,
        aclnn.ACL_INT8: 8, aclnn.ACL_UINT8: 8, aclnn.ACL_BOOL: 8, aclnn.ACL_INT16: 16,
        aclnn.ACL_UINT16: 16, aclnn.ACL_FLOAT16: 16, aclnn.ACL_BF16: 16, aclnn.ACL_INT32: 32,
        aclnn.ACL_UINT32: 32, aclnn.ACL_FLOAT: 32, aclnn.ACL_COMPLEX32: 32, aclnn.ACL_INT64: 64,
        aclnn.ACL_UINT64: 64, aclnn.ACL_DOUBLE: 64, aclnn.ACL_COMPLEX64: 64,
        aclnn.ACL_COMPLEX128: 128, aclnn.ACL_HIFLOAT8: 8, aclnn.ACL_FLOAT8_E5M2: 8,
        aclnn.ACL_FLOAT8_E4M3FN: 8, aclnn.ACL_FLOAT8_E8M0: 8}
GUARD = 48
FUZZ = settings(max_examples=300, deadline=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])

small = st.integers(0, 6)
wild = st.one_of(st.integers(-2, 9), st.sampled_from([2 ** 31, 2 ** 62, INT64_MAX,
                                                     INT64_MAX + 1, 2 ** 64]))


def _oracle(dims, data_type, stride, offset, storage, nbytes):
    """Whether the descriptor is consistent, by brute force."""
    values = [*dims, *stride, offset, *storage]
    if len(dims) != len(stride) or any(v < 0 or v > INT64_MAX for v in values):
        return False
    if data_type not in BITS:
        return False
    bits = BITS[data_type]
    n_storage = math.prod(storage)
    if n_storage > INT64_MAX or -(-n_storage * bits // 8) > INT64_MAX:
        return False
    if -(-n_storage * bits // 8) > nbytes:
        return False
    n_view = math.prod(dims)
    if n_view > INT64_MAX or n_view * max(1, -(-bits // 8)) > INT64_MAX:
        return False
    if n_view == 0:
        return True
    # Every reachable element, enumerated (dims are small here, or all 1).
    reach = max(offset + sum(i * s for i, s in zip(index, stride, strict=True))
                for index in itertools.product(*(range(min(d, 5)) for d in dims)))
    reach = max(reach, offset + sum((d - 1) * s for d, s in zip(dims, stride, strict=True)))
    return reach <= INT64_MAX and reach < n_storage


@st.composite
def descriptors(draw):
    """(dims, data_type, stride, offset, storage, nbytes, shift): a descriptor,
    often inconsistent, over ``nbytes`` bytes starting ``shift`` bytes in."""
    ndim = draw(st.integers(0, 4))
    data_type = draw(st.one_of(st.sampled_from(list(BITS)), st.integers(-3, 40)))
    nbytes, shift = draw(st.integers(0, 96)), draw(st.integers(0, 7))
    dims = draw(st.lists(st.one_of(small, wild), min_size=ndim, max_size=ndim))
    stride = draw(st.lists(st.one_of(small, wild), min_size=max(0, ndim - 1),
                           max_size=ndim + 1))
    offset = draw(st.one_of(small, wild))
    storage = draw(st.lists(st.one_of(st.integers(0, 12), wild), min_size=0, max_size=3))
    return dims, data_type, stride, offset, storage, nbytes, shift


def check_create_tensor(dims, data_type, stride, offset, storage, nbytes, shift):
    """Property 1: a tensor exactly when the oracle says so, and inside its bytes."""
    full = bytearray(GUARD + nbytes + GUARD)
    middle = memoryview(full)[GUARD + shift:GUARD + nbytes]
    tensor = aclnn.aclCreateTensor(dims, data_type, stride, offset, ACL_FORMAT_ND, storage,
                                   middle)
    want = _oracle(dims, data_type, stride, offset, storage, len(middle))
    message = aclGetRecentErrMsg()
    assert (tensor is not None) == want, (message, dims, stride, offset, storage)
    assert (message == "") == want
    if tensor is not None and data_type in NP_OF and tensor.size:
        elements = tensor._elements()
        start = np.frombuffer(middle, np.uint8).ctypes.data if len(middle) else None
        low, high = byte_bounds(elements)
        assert start <= low and high <= start + len(middle)


def _layout(draw, dims, data_type):
    """(stride, offset, elements of storage) for a view, usually valid."""
    if draw(st.booleans()):
        stride = [math.prod(dims[i + 1:]) for i in range(len(dims))]
        offset = draw(st.integers(0, 3))
    else:
        stride = draw(st.lists(st.integers(0, 5), min_size=len(dims), max_size=len(dims)))
        offset = draw(st.integers(0, 5))
    last = sum((d - 1) * s for d, s in zip(dims, stride, strict=True))
    reach = offset + last if all(dims) else -1
    storage = reach + 1 + draw(st.integers(-1, 3))   # -1: one element short, invalid
    return stride, offset, max(storage, 0)


def _input_dims(draw, out_dims):
    """Dims that broadcast to out_dims (often equal to them), now and then not."""
    choice = draw(st.integers(0, 9))
    if choice == 0:
        return draw(st.lists(st.integers(0, 3), max_size=3))
    if choice < 5:
        return list(out_dims)
    lead = draw(st.integers(0, len(out_dims)))
    return [1 if draw(st.booleans()) else d for d in out_dims[lead:]]


def check_both_phases(draw):
    """Property 2, drawing its case with ``draw`` (``st.data().draw``): the
    draws depend on one another, and on whether phase 1 succeeds."""
    # One dtype and one shared buffer are likely: that is where the kernel
    # runs in place and partial overlaps must be staged.
    if draw(st.booleans()):
        types = [draw(st.sampled_from(SIX))] * 3
    else:
        types = [draw(st.sampled_from(SIX)) for _ in range(3)]
    out_dims = draw(st.lists(st.integers(0, 4), max_size=3))
    all_dims = [_input_dims(draw, out_dims), _input_dims(draw, out_dims), out_dims]
    buffer_of = [draw(st.sampled_from([0, 2, 2])), draw(st.sampled_from([1, 2, 2])), 2]
    layouts = [_layout(draw, d, t) for d, t in zip(all_dims, types, strict=True)]
    if draw(st.integers(0, 3)) == 0:
        # gradOutput a few elements before or after gradInput, same layout:
        # the kernel must not read what it has already overwritten.
        types[0], all_dims[0], buffer_of[0] = types[2], list(out_dims), buffer_of[2]
        stride, offset, storage = layouts[2]
        shift = draw(st.integers(-2, 2))
        layouts[0] = (stride, max(0, offset + shift), storage + max(0, shift))
    shifts = [draw(st.sampled_from([0, 0, 1, 2, 4, 8])) for _ in range(3)]
    seed = draw(st.integers(0, 2 ** 32 - 1))
    rng = np.random.default_rng(seed)

    # Each buffer: guard | middle (what the tensors get) | guard, random bytes.
    need = [0, 0, 0]
    for k, (_stride, _offset, storage) in enumerate(layouts):
        need[buffer_of[k]] = max(need[buffer_of[k]], storage * NP_OF[types[k]].itemsize)
    fulls = [rng.integers(0, 256, GUARD + shifts[b] + need[b] + GUARD, np.uint8)
             for b in range(3)]
    middles = [f[GUARD + shifts[b]:GUARD + shifts[b] + need[b]] for b, f in enumerate(fulls)]
    before = [f.copy() for f in fulls]

    tensors, logical = [], []
    for k, (stride, offset, storage) in enumerate(layouts):
        middle = middles[buffer_of[k]]
        tensor = aclnn.aclCreateTensor(all_dims[k], types[k], stride, offset, ACL_FORMAT_ND,
                                       [storage], middle)
        tensors.append(tensor)
        if tensor is not None:
            typed = middle[:storage * NP_OF[types[k]].itemsize].view(NP_OF[types[k]])
            logical.append(np.asarray(typed)[indices(all_dims[k], stride, offset)])
    aclGetRecentErrMsg()

    stream_kind = draw(st.sampled_from([None, "stream"]))
    ws_full = None
    if None not in tensors:
        status, size, executor = aclnn.aclnnSigmoidBackwardGetWorkspaceSize(*tensors)
        if status == ACLNN_SUCCESS:
            ws_shift = draw(st.integers(0, 9))
            ws_full = rng.integers(0, 256, GUARD + ws_shift + size + GUARD, np.uint8)
            ws_before = ws_full.copy()
            workspace = ws_full[GUARD + ws_shift:GUARD + ws_shift + size] if size else None
            stream = aclnn.aclrtCreateStream()[1] if stream_kind else None
            assert aclnn.aclnnSigmoidBackward(workspace, size, executor, stream) == 0
            assert aclnn.aclrtSynchronizeStream(stream) == 0, aclGetRecentErrMsg()
            if stream is not None:
                assert aclnn.aclrtDestroyStream(stream) == 0
            # The workspace's guards are intact.
            assert np.array_equal(ws_full[:GUARD + ws_shift], ws_before[:GUARD + ws_shift])
            assert np.array_equal(ws_full[GUARD + ws_shift + size:],
                                  ws_before[GUARD + ws_shift + size:])
        else:
            assert aclGetRecentErrMsg() != ""

    # Only the bytes of gradInput's elements may have changed.
    may_change = [np.zeros(f.size, bool) for f in fulls]
    gi_stride, gi_offset, gi_storage = layouts[2]
    gi_index = indices(out_dims, gi_stride, gi_offset)
    if ws_full is not None:
        size = NP_OF[types[2]].itemsize
        base = GUARD + shifts[buffer_of[2]]
        for i in gi_index.ravel():
            may_change[buffer_of[2]][base + i * size:base + (i + 1) * size] = True
    for f, old, mask in zip(fulls, before, may_change, strict=True):
        assert np.array_equal(f[~mask], old[~mask])

    # The values: the reference on the inputs as they were before the call,
    # unless gradInput writes some element twice (then the order decides).
    if ws_full is not None and len(np.unique(gi_index)) == gi_index.size:
        stride, offset, storage = layouts[2]
        middle = middles[buffer_of[2]]
        typed = middle[:storage * NP_OF[types[2]].itemsize].view(NP_OF[types[2]])
        got = np.asarray(typed)[gi_index]
        assert_same(got, expected(logical[0], logical[1], types[2]))
