"""Turn an input argument into an ndarray: NumPy inputs, and DLPack producers.

``numpy.asarray`` covers sequences, the buffer protocol and ``__array__``.
DLPack producers (PyTorch tensors, JAX arrays, ...) are imported with
``numpy.from_dlpack``, which shares their memory instead of copying, with
three gaps filled here:

- NumPy cannot import bfloat16 through DLPack (it has no such dtype).  The
  producer's export is relabelled as uint16, the same 16 bits, and the array
  viewed as ml_dtypes' bfloat16: exact and without a copy, for any producer.
- PyTorch refuses to export a tensor that requires grad, and exports the data
  of a lazily negated view (``is_neg()``) without the negation: a silently
  wrong value.  Torch tensors are therefore detached and their lazy
  conjugate/negative bits resolved first.  The result never carries autograd
  history, as for any NumPy array.
- When a producer can export through neither DLPack nor ``__array__``, or
  its buffer export fails (NumPy then makes a 0-d object array of it), the
  error names the argument and keeps the export's reason.
"""
import ctypes

import numpy as np

from .._kernel import _dtypes

# DLPack's ABI (dlpack.h): the structs a capsule points to, and the codes
# this module reads.
_DL_UINT = 1
_DL_BFLOAT = 4


class _DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8),
                ("lanes", ctypes.c_uint16)]


class _DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p),
                ("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32),
                ("ndim", ctypes.c_int32),
                ("dtype", _DLDataType),
                ("shape", ctypes.c_void_p),
                ("strides", ctypes.c_void_p),
                ("byte_offset", ctypes.c_uint64)]


class _DLManagedTensor(ctypes.Structure):  # capsule name "dltensor"
    _fields_ = [("dl_tensor", _DLTensor), ("manager_ctx", ctypes.c_void_p),
                ("deleter", ctypes.c_void_p)]


class _DLManagedTensorVersioned(ctypes.Structure):  # "dltensor_versioned"
    _fields_ = [("major", ctypes.c_uint32), ("minor", ctypes.c_uint32),
                ("manager_ctx", ctypes.c_void_p), ("deleter", ctypes.c_void_p),
                ("flags", ctypes.c_uint64), ("dl_tensor", _DLTensor)]


_MANAGED = {b"dltensor": _DLManagedTensor,
            b"dltensor_versioned": _DLManagedTensorVersioned}

_capsule_name = ctypes.pythonapi.PyCapsule_GetName
_capsule_name.restype = ctypes.c_char_p
_capsule_name.argtypes = [ctypes.py_object]
_capsule_pointer = ctypes.pythonapi.PyCapsule_GetPointer
_capsule_pointer.restype = ctypes.c_void_p
_capsule_pointer.argtypes = [ctypes.py_object, ctypes.c_char_p]


class _Bfloat16AsUint16:
    """A DLPack producer that forwards another one's export, relabelling a
    bfloat16 export as uint16 so that NumPy imports the bits.

    The capsule is a fresh export that the consumer owns, so rewriting its
    dtype field before NumPy reads it changes nothing else: the producer's
    deleter does not look at the dtype.
    """

    def __init__(self, producer):
        self._producer = producer
        self.relabelled = False

    def __dlpack_device__(self):
        return self._producer.__dlpack_device__()

    def __dlpack__(self, **kwargs):
        capsule = self._producer.__dlpack__(**kwargs)
        name = _capsule_name(capsule)
        managed = _MANAGED.get(name)
        if managed is not None:
            pointer = _capsule_pointer(capsule, name)
            dtype = managed.from_address(pointer).dl_tensor.dtype
            if (dtype.code, dtype.bits, dtype.lanes) == (_DL_BFLOAT, 16, 1):
                dtype.code = _DL_UINT
                self.relabelled = True
        return capsule


def _from_dlpack(obj):
    producer = _Bfloat16AsUint16(obj)
    arr = np.from_dlpack(producer)
    return arr.view(_dtypes.BFLOAT16) if producer.relabelled else arr


_FRAMEWORK_OF_MODULE = {"torch": "torch", "jax": "jax", "jaxlib": "jax", "cupy": "cupy"}
# Classes seen, and their framework: a small call pays for a dict lookup,
# not a walk of the class's bases.  Bounded, for programs that make classes.
_FRAMEWORK_OF_CLASS: dict[type, str | None] = {
    cls: None for cls in (np.ndarray, float, int, complex, bool, type(None), list, tuple)}
_MAX_CLASSES = 1024


def framework(obj):
    """"torch", "jax" or "cupy" when ``obj`` is that framework's array (a
    tensor subclass, a JAX tracer), else None.  Known by its class's module,
    so that no framework is imported to ask."""
    cls = type(obj)
    try:
        return _FRAMEWORK_OF_CLASS[cls]
    except KeyError:
        pass
    found = None
    for c in cls.__mro__:
        module = getattr(c, "__module__", None)
        if isinstance(module, str):
            found = _FRAMEWORK_OF_MODULE.get(module.partition(".")[0])
            if found is not None:
                break
    if len(_FRAMEWORK_OF_CLASS) < _MAX_CLASSES:
        _FRAMEWORK_OF_CLASS[cls] = found
    return found


def plain_tensor(tensor):
    """A torch tensor without autograd history or lazy conj/neg bits."""
    if tensor.requires_grad:
        tensor = tensor.detach()
    # Both return the tensor itself when the bit is not set.
    return tensor.resolve_conj().resolve_neg()


def as_array(obj, name):
    """Any ``numpy.asarray`` input, or a DLPack producer, as an ndarray.

    Parameters
    ----------
    obj : array_like or DLPack producer
        The argument.
    name : str
        The argument's name, for error messages.

    Returns
    -------
    ndarray
        ``obj`` itself for an ndarray; otherwise an array that shares the
        producer's memory where DLPack or the buffer protocol allow it.

    Raises
    ------
    ValueError
        For nested sequences that do not form an array (ragged lists).
    TypeError
        When ``obj`` cannot be made an array, e.g. its ``__array__`` or
        buffer export raises, or its DLPack export fails and nothing else
        works.
    """
    if type(obj) is np.ndarray:
        return obj
    dlpack_error = None
    try:
        if framework(obj) == "torch":
            obj = plain_tensor(obj)
        if hasattr(obj, "__dlpack__") and not isinstance(obj, np.ndarray):
            try:
                return _from_dlpack(obj)
            except (TypeError, ValueError, BufferError, RuntimeError, AttributeError) as exc:
                dlpack_error = exc  # e.g. a device NumPy cannot read: try __array__
        arr = np.asarray(obj)
    except ValueError as exc:  # ragged nested sequences, among others
        raise ValueError(f"{name}: cannot make an array of it: {exc}") from exc
    except Exception as exc:
        raise TypeError(f"{name}: cannot make an array of a "
                        f"{type(obj).__name__}: {exc}") from exc
    if arr.dtype == object and arr.ndim == 0:
        # NumPy wrapped the object itself in an object array: it offered no
        # data NumPy could read.  Say why, where a protocol it offered failed.
        if dlpack_error is not None:
            raise TypeError(f"{name}: cannot import a {type(obj).__name__} through "
                            f"DLPack: {dlpack_error}") from dlpack_error
        if isinstance(obj, memoryview) or hasattr(type(obj), "__buffer__"):
            try:  # NumPy swallows a failing buffer export (e.g. Python 3.12+)
                memoryview(obj)
            except Exception as exc:
                raise TypeError(f"{name}: cannot read the buffer of a "
                                f"{type(obj).__name__}: {exc}") from exc
    return arr
