"""The dtypes are one table in C (_dtypes.h, which the kernels and the
promoter are made from) and one in Python (_dtypes.py, which the ufunc's
registration, golden and aclnn read): the two, the ufunc's loops, the loops
``ufunc.types`` lists and the reference's own promotion table must agree."""
import ctypes
import itertools
import re

import numpy as np
import pytest

from sigmoid_backward import _dtypes, _kernels, reference, ufunc
from sigmoid_backward.aclnn import _constants

from helpers import ALL_DTYPES, BF16, assert_same, random_array

RNG = np.random.default_rng(5)


def test_the_c_table_is_the_python_table():
    c_table = dict(_kernels.DTYPE_TABLE)   # name -> itemsize, in _dtypes.h's order
    assert sorted(c_table) == sorted(d.name for d in _dtypes.TABLE)
    for d in _dtypes.TABLE:
        assert d.dtype.name == d.name and c_table[d.name] == d.dtype.itemsize
        assert d.narrow == (d.dtype.itemsize == 2)
    assert set(_dtypes.SUPPORTED) == set(ALL_DTYPES)


@pytest.mark.parametrize("g, y", list(itertools.product(_dtypes.SUPPORTED, repeat=2)), ids=str)
def test_every_pair_has_a_loop_in_the_promotion_of_the_pair(g, y):
    result = reference.result_dtype(np.empty(0, g), np.empty(0, y))
    assert ufunc.resolve_dtypes((g, y, None)) == (g, y, result)


def _numpys(dtype):
    """A dtype of NumPy's own, which has a type character for ufunc.types."""
    return dtype.char in np.typecodes["All"] and np.dtype(dtype.char) == dtype


def _loop_dtypes(loop):
    """'ef->f' -> (float16, float32, float32)."""
    return tuple(np.dtype(c) for c in loop[:2] + loop[-1])


def test_types_lists_the_loops_of_numpys_dtypes_as_np_multiply_lists_its():
    numpys = [d for d in _dtypes.SUPPORTED if _numpys(d)]
    assert numpys == [d for d in _dtypes.SUPPORTED if type(d).__module__ == "numpy.dtypes"]
    assert BF16 not in numpys
    # The same-dtype loops first, as in np.multiply's list, then the mixed.
    pairs = [(d, d) for d in numpys] + [(g, y) for g in numpys for y in numpys if g != y]
    expected = [f"{g.char}{y.char}->{ufunc.resolve_dtypes((g, y, None))[2].char}"
                for g, y in pairs]
    assert ufunc.types == expected and ufunc.ntypes == len(expected)
    assert ufunc.types[:len(numpys)] == [t for t in np.multiply.types if t in expected]
    char = f"[{re.escape(np.typecodes['All'])}]"   # a type character of NumPy's
    form = re.compile(f"{char}{char}->{char}")
    assert all(form.fullmatch(t) for t in np.multiply.types)
    assert all(form.fullmatch(t) for t in ufunc.types)


def test_each_listed_loop_is_a_loop_the_ufunc_runs_as_listed():
    for loop in ufunc.types:
        g, y, result = _loop_dtypes(loop)
        assert ufunc.resolve_dtypes((g, y, None), signature=(g, y, result)) == (g, y, result)
        assert reference.result_dtype(np.empty(0, g), np.empty(0, y)) == result


def test_a_signature_without_a_loop_is_refused_as_np_multiply_refuses_it():
    f32, f64 = np.dtype(np.float32), np.dtype(np.float64)
    a = np.ones(3, f64)
    for u in (np.multiply, ufunc):
        with pytest.raises(TypeError) as raised:
            u(a, a, signature=(f64, f64, f32))
        assert str(raised.value) == (f"No loop matching the specified signature and casting "
                                     f"was found for ufunc {u.__name__}")


_LOOP = ctypes.CFUNCTYPE(None, ctypes.POINTER(ctypes.c_void_p), ctypes.POINTER(ctypes.c_ssize_t),
                         ctypes.POINTER(ctypes.c_ssize_t), ctypes.c_void_p)


class _UFuncObject(ctypes.Structure):
    """The head of NumPy's PyUFuncObject (numpy/ufuncobject.h), up to types."""
    _fields_ = [("ob_base", ctypes.c_byte * object.__basicsize__),
                ("nin", ctypes.c_int), ("nout", ctypes.c_int), ("nargs", ctypes.c_int),
                ("identity", ctypes.c_int), ("functions", ctypes.POINTER(_LOOP)),
                ("data", ctypes.POINTER(ctypes.c_void_p)), ("ntypes", ctypes.c_int),
                ("reserved1", ctypes.c_int), ("name", ctypes.c_char_p),
                ("types", ctypes.POINTER(ctypes.c_byte))]


def test_the_loop_tables_inner_loops_compute_what_the_ufunc_computes():
    """NumPy reads the legacy table behind ufunc.types but runs the
    ArrayMethods; the table's own inner loops compute the same all the
    same, on any strides."""
    table = _UFuncObject.from_address(id(ufunc))
    assert (table.name, table.nin, table.nout, table.nargs, table.ntypes) == \
        (b"sigmoid_backward", 2, 1, 3, ufunc.ntypes)   # the layout is NumPy's
    for i, loop in enumerate(ufunc.types):
        g_dtype, y_dtype, result = _loop_dtypes(loop)
        assert table.types[3 * i:3 * i + 3] == [g_dtype.num, y_dtype.num, result.num]
        g = random_array(RNG, (64,), g_dtype)
        y = random_array(RNG, (128,), y_dtype)[::2]
        out = np.empty(64, result)
        args = (ctypes.c_void_p * 3)(g.ctypes.data, y.ctypes.data, out.ctypes.data)
        steps = (ctypes.c_ssize_t * 3)(g.strides[0], y.strides[0], out.strides[0])
        table.functions[i](args, (ctypes.c_ssize_t * 1)(64), steps, table.data[i])
        assert_same(out, ufunc(g, y), loop)


def test_the_kernels_compute_every_dtype_of_the_table():
    for d in _dtypes.TABLE:
        g = np.array([1.0, 2.0], d.dtype)
        assert np.array_equal(ufunc(g, g.astype(d.dtype)), reference.sigmoid_backward(g, g))


def test_aclnn_maps_each_dtype_from_the_table():
    assert {int(acl): dt for acl, dt in _constants.COMPUTE_DTYPES.items()} == \
        {d.acl: d.dtype for d in _dtypes.TABLE}
    for d in _dtypes.TABLE:
        assert _constants.aclDataType(d.acl).name.startswith("ACL_")
