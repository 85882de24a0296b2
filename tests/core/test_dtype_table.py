"""The dtypes are one table in C (_dtypes.h, which the kernels and the
promoter are made from) and one in Python (_dtypes.py, which the ufunc's
registration, golden and aclnn read): the two, the ufunc's loops and the
reference's own promotion table must agree."""
import itertools

import numpy as np
import pytest

from sigmoid_backward import _dtypes, _kernels, reference, ufunc
from sigmoid_backward.aclnn import _constants


def test_the_c_table_is_the_python_table():
    c_table = dict(_kernels.DTYPE_TABLE)   # name -> itemsize, in _dtypes.h's order
    assert sorted(c_table) == sorted(d.name for d in _dtypes.TABLE)
    for d in _dtypes.TABLE:
        assert d.dtype.name == d.name and c_table[d.name] == d.dtype.itemsize
        assert d.narrow == (d.dtype.itemsize == 2)


@pytest.mark.parametrize("g, y", list(itertools.product(_dtypes.SUPPORTED, repeat=2)), ids=str)
def test_every_pair_has_a_loop_in_the_promotion_of_the_pair(g, y):
    result = reference.result_dtype(np.empty(0, g), np.empty(0, y))
    assert ufunc.resolve_dtypes((g, y, None)) == (g, y, result)


def test_the_kernels_compute_every_dtype_of_the_table():
    for d in _dtypes.TABLE:
        g = np.array([1.0, 2.0], d.dtype)
        assert np.array_equal(ufunc(g, g.astype(d.dtype)), reference.sigmoid_backward(g, g))


def test_aclnn_maps_each_dtype_from_the_table():
    assert {int(acl): dt for acl, dt in _constants.COMPUTE_DTYPES.items()} == \
        {d.acl: d.dtype for d in _dtypes.TABLE}
    for d in _dtypes.TABLE:
        assert _constants.aclDataType(d.acl).name.startswith("ACL_")
