"""Flat byte views over buffer-protocol objects: the aclnn API's "memory".

A C caller hands CANN a ``void *``; a Python caller hands this module any
object exporting the buffer protocol (a NumPy array of any dtype, including
ml_dtypes' bfloat16, a ``bytearray``, ``memoryview``, ``array.array``,
``mmap``).  Every later access goes through the one-dimensional ``uint8``
array made here, which

- covers exactly the object's bytes, so its length bounds every access;
- keeps the object exported (a ``bytearray`` cannot be resized, an ``mmap``
  cannot be closed) and alive for as long as the view exists;
- is read-only when the object's buffer is.
"""
import numpy as np


def flat_bytes(obj, name):
    """The bytes of ``obj`` as a 1-d ``uint8`` ndarray sharing its memory.

    Parameters
    ----------
    obj : buffer-protocol object
        The memory.  It must be one contiguous block (C or Fortran order).
    name : str
        The argument's name, for error messages.

    Returns
    -------
    ndarray
        A view, never a copy: writes through it reach ``obj``.

    Raises
    ------
    TypeError
        If ``obj`` does not export a buffer, its export fails (a released
        memoryview, a closed mmap, a ``__buffer__`` that raises), or it is an
        array of Python objects.
    ValueError
        If its buffer is not one contiguous block.
    """
    if not isinstance(obj, np.ndarray):
        try:
            view = memoryview(obj)
        except Exception as exc:
            # The export is the caller's code (Python 3.12+ ``__buffer__``) or
            # a closed object: whatever it raises becomes this one error, so
            # the aclnn functions can turn it into a status.
            if isinstance(exc, TypeError) and not hasattr(type(obj), "__buffer__"):
                raise TypeError(f"{name} must export the buffer protocol (a NumPy array, "
                                f"bytearray, memoryview, array.array, mmap...), got "
                                f"{type(obj).__name__}") from None
            raise TypeError(f"{name}: cannot read the buffer of a {type(obj).__name__}: "
                            f"{exc}") from exc
        if "O" in view.format:
            raise TypeError(f"{name} holds Python objects (buffer format "
                            f"{view.format!r}), not raw memory")
        if view.c_contiguous:
            return np.frombuffer(view.cast("B"), np.uint8)
        # A Fortran-ordered or strided memoryview: NumPy reads its layout.
        obj = np.asarray(view)
    arr = obj.view(np.ndarray)  # drop subclass behaviour (np.memmap, np.matrix)
    if arr.dtype.hasobject:
        # Its bytes are PyObject pointers: writing them would corrupt memory.
        raise TypeError(f"{name} holds Python objects (dtype {arr.dtype}), not raw memory")
    if arr.flags.c_contiguous:
        flat = arr.reshape(-1)
    elif arr.flags.f_contiguous:
        flat = arr.T.reshape(-1)  # the transpose is C-contiguous: a view
    else:
        raise ValueError(f"{name} must be one contiguous block of memory; got an "
                         f"array with shape {arr.shape} and strides {arr.strides} (bytes)")
    if flat.dtype.itemsize == 0:  # e.g. dtype 'V0': no bytes at all
        empty = np.empty(0, np.uint8)
        empty.flags.writeable = arr.flags.writeable
        return empty
    return flat.view(np.uint8)
