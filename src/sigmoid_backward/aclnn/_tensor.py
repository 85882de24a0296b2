"""aclTensor: a strided view over caller memory, proven in bounds.

``aclCreateTensor`` takes CANN's descriptor (view dims, element strides, an
element offset, storage dims) and a buffer.  Before any element can be
touched it proves, in Python integers (which cannot overflow), that every
element the view reaches lies inside the storage and that the storage lies
inside the buffer; values that a C ``int64_t`` cannot hold count as
overflow.  Only then may :meth:`aclTensor._elements` build a NumPy view
with ``as_strided``.  An inconsistent descriptor gives ``None`` and a
message for ``aclGetRecentErrMsg``, as CANN gives ``nullptr``.
"""
import math
import operator

import numpy as np
from numpy.lib.stride_tricks import as_strided

from . import _buffer
from ._constants import (
    COMPUTE_DTYPES,
    ELEMENT_BITS,
    INT64_MAX,
    NUMPY_TO_ACL,
    aclDataType,
    aclFormat,
    aclnnStatus,
)
from ._errors import aclGetRecentErrMsg, fail, record


class _Invalid(ValueError):
    """An inconsistent descriptor; the message says which part."""


class aclTensor:
    """A tensor descriptor over caller memory (create with aclCreateTensor).

    The descriptor is read-only: the bounds proof made at creation must keep
    holding.

    Attributes
    ----------
    view_dims, stride, storage_dims : tuple of int
        As given; strides count elements.
    offset : int
        Element offset of the view's first element in the storage.
    data_type : aclDataType
    format : aclFormat or int
        Any value is kept; the operator does not look at it.
    """

    __slots__ = ("_descriptor", "_bytes", "_reach", "_source", "__weakref__")

    def __init__(self, view_dims, data_type, stride, offset, format, storage_dims,
                 data, reach, source=None):
        self._descriptor = (view_dims, data_type, stride, offset, format, storage_dims)
        self._bytes = data      # 1-d uint8 view of the buffer; None once destroyed
        self._reach = reach     # highest element index the view reaches, or None if empty
        # The caller's array: its WRITEABLE flag can be cleared after the
        # tensor was made, which our own view of its bytes does not see.
        self._source = source if isinstance(source, np.ndarray) else None

    view_dims = property(lambda self: self._descriptor[0])
    data_type = property(lambda self: self._descriptor[1])
    stride = property(lambda self: self._descriptor[2])
    offset = property(lambda self: self._descriptor[3])
    format = property(lambda self: self._descriptor[4])
    storage_dims = property(lambda self: self._descriptor[5])

    def __repr__(self):
        state = " (destroyed)" if self.destroyed else ""
        return (f"aclTensor(view_dims={list(self.view_dims)}, {self.data_type.name}, "
                f"stride={list(self.stride)}, offset={self.offset}, "
                f"format={getattr(self.format, 'name', self.format)}, "
                f"storage_dims={list(self.storage_dims)}){state}")

    @property
    def destroyed(self):
        """Whether aclDestroyTensor released it."""
        return self._bytes is None

    @property
    def writable(self):
        """Whether the buffer behind it accepts writes: our view of it, and
        the caller's array (and the arrays it views), now."""
        return self._bytes is not None and self._bytes.flags.writeable \
            and self.source_writable()

    def source_writable(self):
        """Whether the caller's array, and every array it is a view of, still
        accept writes (``arr.flags.writeable = False`` after aclCreateTensor
        must stop the operator writing it).  True once the tensor is
        destroyed: it no longer holds the array."""
        arr = self._source
        while isinstance(arr, np.ndarray):
            if not arr.flags.writeable:
                return False
            arr = arr.base
        return True

    @property
    def size(self):
        """Number of elements of the view."""
        return math.prod(self.view_dims)

    def describe(self):
        """``"ACL_FLOAT, shape [2, 2]"``: for error messages."""
        return f"{self.data_type.name}, shape {list(self.view_dims)}"

    def _elements(self):
        """The view as an ndarray over the buffer (the six compute dtypes only).

        Safe by construction: ``aclCreateTensor`` proved that the elements
        ``offset .. _reach`` lie inside the buffer, and the view addresses
        nothing outside them.
        """
        dt = COMPUTE_DTYPES[self.data_type]
        size = dt.itemsize
        if self._reach is None:  # an empty view reaches no element
            return as_strided(self._bytes[:0].view(dt), self.view_dims, (0,) * len(self.view_dims))
        span = self._reach - self.offset + 1
        base = self._bytes[self.offset * size:(self.offset + span) * size].view(dt)
        if base.size != span:  # cannot happen after the proof; never risk it
            raise RuntimeError(f"aclTensor bounds proof violated: {self!r}")
        # A dim of extent 1 never steps: its stride may be any int64, which
        # NumPy's byte strides need not hold.
        strides = tuple(s * size if d > 1 else 0
                        for d, s in zip(self.view_dims, self.stride, strict=True))
        return as_strided(base, self.view_dims, strides)


def _int(value, what):
    if isinstance(value, (bool, np.bool_)):
        raise _Invalid(f"{what} must be an integer, got {type(value).__name__}")
    try:
        return operator.index(value)
    except TypeError:
        raise _Invalid(f"{what} must be an integer, got {type(value).__name__}") from None


def _int_list(values, what):
    if values is None:
        raise _Invalid(f"{what} is null (None)")
    if isinstance(values, (str, bytes)):
        raise _Invalid(f"{what} must be a sequence of integers, got {type(values).__name__}")
    try:
        items = list(values)
    except TypeError:
        raise _Invalid(f"{what} must be a sequence of integers, got "
                       f"{type(values).__name__}") from None
    return tuple(_int(v, f"{what}[{i}]") for i, v in enumerate(items))


def _in_int64(value, what):
    if value < 0:
        raise _Invalid(f"{what} is negative ({value})")
    if value > INT64_MAX:
        raise _Invalid(f"{what} = {value} overflows int64")


def _no_overflow(value, what):
    if value > INT64_MAX:
        raise _Invalid(f"{what} = {value} overflows int64")
    return value


def _create(view_dims, data_type, stride, offset, format, storage_dims, tensor_data):
    view_dims = _int_list(view_dims, "view_dims")
    stride = _int_list(stride, "stride")
    storage_dims = _int_list(storage_dims, "storage_dims")
    offset = _int(offset, "offset")
    data_type = _int(data_type, "data_type")
    format = _int(format, "format")
    if len(view_dims) != len(stride):
        raise _Invalid(f"view_dims {list(view_dims)} has {len(view_dims)} dims but stride "
                       f"{list(stride)} has {len(stride)}")
    for values, what in ((view_dims, "view_dims"), (stride, "stride"),
                         (storage_dims, "storage_dims")):
        for i, v in enumerate(values):
            _in_int64(v, f"{what}[{i}]")
    _in_int64(offset, "offset")
    try:
        data_type = aclDataType(data_type)
    except ValueError:
        raise _Invalid(f"data_type {data_type} is not an aclDataType value") from None
    try:
        format = aclFormat(format)
    except ValueError:
        pass  # CANN passes unknown formats through, and so does the operator
    try:
        data = _buffer.flat_bytes(tensor_data, "tensor_data")
    except (TypeError, ValueError) as exc:
        raise _Invalid(str(exc)) from None

    bits = ELEMENT_BITS[data_type]
    storage_size = _no_overflow(math.prod(storage_dims),
                                f"the element count of storage_dims {list(storage_dims)}")
    storage_bytes = _no_overflow(-(-storage_size * bits // 8),
                                 f"the byte size of storage_dims {list(storage_dims)}")
    if storage_bytes > data.nbytes:
        raise _Invalid(f"storage_dims {list(storage_dims)} of {data_type.name} need "
                       f"{storage_bytes} bytes, but tensor_data holds {data.nbytes}")
    view_size = _no_overflow(math.prod(view_dims),
                             f"the element count of view_dims {list(view_dims)}")
    _no_overflow(view_size * max(1, -(-bits // 8)),
                 f"the byte size of view_dims {list(view_dims)}")
    reach = None
    if view_size > 0:
        last = sum((d - 1) * s for d, s in zip(view_dims, stride, strict=True))
        reach = _no_overflow(offset + last,
                             "the last element the view reaches")
        if reach >= storage_size:
            raise _Invalid(f"the view (dims {list(view_dims)}, stride {list(stride)}, "
                           f"offset {offset}) reaches element {reach}, outside the "
                           f"{storage_size} elements of storage_dims {list(storage_dims)}")
    return aclTensor(view_dims, data_type, stride, offset, format, storage_dims, data, reach,
                     tensor_data)


def aclCreateTensor(view_dims, data_type, stride, offset, format, storage_dims, tensor_data):
    """Describe a strided view over caller memory.

    Parameters
    ----------
    view_dims : sequence of int
        Shape of the view (``[]`` for a 0-d tensor).
    data_type : aclDataType or int
    stride : sequence of int
        One stride per view dim, counted in elements.
    offset : int
        Element index of the view's first element in the storage.
    format : aclFormat or int
        Kept, not checked.
    storage_dims : sequence of int
        Shape of the storage; its element count times the element size must
        fit in ``tensor_data``.
    tensor_data : buffer-protocol object
        The memory: any NumPy array (of any dtype, its bytes are reinterpreted
        as ``data_type``), ``bytearray``, ``memoryview``, ``array.array``,
        ``mmap``.  It may be read-only unless the tensor is an output.

    Returns
    -------
    aclTensor or None
        ``None`` for an inconsistent descriptor (negative or int64-overflowing
        values, a dims/strides length mismatch, an unknown data type, a
        storage larger than the buffer, an element of the view outside the
        storage, a buffer that is not contiguous); ``aclGetRecentErrMsg()``
        says why.
    """
    try:
        return _create(view_dims, data_type, stride, offset, format, storage_dims, tensor_data)
    except _Invalid as exc:
        record(f"aclCreateTensor: {exc}")
        return None


def aclDestroyTensor(tensor):
    """Release a tensor.  Executors that use it keep its memory alive.

    Returns
    -------
    aclnnStatus
        ACLNN_SUCCESS, also for ``None`` (as C's ``delete nullptr``);
        ACLNN_ERR_PARAM_INVALID for a non-tensor or a tensor destroyed before.
    """
    if tensor is None:
        return aclnnStatus.ACLNN_SUCCESS
    if not isinstance(tensor, aclTensor):
        return fail(aclnnStatus.ACLNN_ERR_PARAM_INVALID,
                    f"aclDestroyTensor: expected an aclTensor, got {type(tensor).__name__}")
    if tensor.destroyed:
        return fail(aclnnStatus.ACLNN_ERR_PARAM_INVALID,
                    f"aclDestroyTensor: {tensor!r} was already destroyed")
    tensor._bytes = tensor._source = None  # the caller's memory is no longer ours to hold
    return aclnnStatus.ACLNN_SUCCESS


def tensor_from_array(arr, format=aclFormat.ACL_FORMAT_ND):
    """An aclTensor viewing an ndarray's own memory (writes reach ``arr``).

    Parameters
    ----------
    arr : ndarray
        Native byte order; a dtype with an aclDataType (the six float types,
        bool and the integers); strides that are non-negative multiples of
        the item size (any view of a contiguous array qualifies, broadcast
        views included).
    format : aclFormat or int, optional

    Returns
    -------
    aclTensor

    Raises
    ------
    TypeError
        If ``arr`` is not an ndarray or its dtype has no aclDataType.
    ValueError
        For a non-native byte order or strides an aclTensor cannot express.
    """
    if not isinstance(arr, np.ndarray):
        raise TypeError(f"arr must be a numpy.ndarray, got {type(arr).__name__}")
    arr = arr.view(np.ndarray)
    if not arr.dtype.isnative:
        raise ValueError(f"arr has non-native byte order (dtype {arr.dtype.str}); "
                         f"use arr.astype(arr.dtype.newbyteorder('='))")
    data_type = NUMPY_TO_ACL.get(arr.dtype)
    if data_type is None:
        raise TypeError(f"arr has dtype {arr.dtype}, which has no aclDataType")
    size = arr.dtype.itemsize
    if any(s < 0 or s % size for s in arr.strides):
        raise ValueError(f"arr has strides {arr.strides} (bytes): an aclTensor needs "
                         f"non-negative multiples of the item size {size}; pass "
                         f"np.ascontiguousarray(arr)")
    stride = [s // size for s in arr.strides]
    # The storage: the span from the first element to the last one reached,
    # which is memory arr itself owns.
    span = 1 + sum((d - 1) * s for d, s in zip(arr.shape, stride, strict=True)) if arr.size else 0
    # As unsigned integers of the item's size where NumPy's stride tricks
    # cannot spell the dtype: as_strided rebuilds it from dtype.str, which
    # for some of ml_dtypes' types names another type ('<f1', or a void).
    raw = arr.view(f"u{size}") if arr.dtype.type.__module__ == "ml_dtypes" else arr
    storage = as_strided(raw, (span,), (size,)).view(arr.dtype)
    tensor = aclCreateTensor(arr.shape, data_type, stride, 0, format, [span], storage)
    if tensor is None:  # unreachable for an array NumPy holds; never hide it
        raise ValueError(aclGetRecentErrMsg())
    return tensor
