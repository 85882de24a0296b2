"""The dtypes are one description (_dtype_spec.py), from which the build
generates the C table (_dtypes.h: the kernels, the promoter) and _dtypes.py
makes NumPy's: the two, the ufunc's loops and the reference's own promotion
must agree, and the NPU operator's list (aclnn, golden) stays its own."""
import itertools

import numpy as np
import pytest

from sigmoid_backward import reference, ufunc
from sigmoid_backward._kernel import _dtype_spec, _dtypes, _kernels
from sigmoid_backward.aclnn import _constants
from sigmoid_backward.golden import _dtype_names

from dtypes_catalogue import NPU_NAMES


def test_the_c_table_is_the_python_table():
    c_table = dict(_kernels.DTYPE_TABLE)   # name -> itemsize, in _dtypes.h's order
    assert list(c_table) == [d.name for d in _dtypes.TABLE] == \
        [spec["name"] for spec in _dtype_spec.DTYPES]
    for d in _dtypes.TABLE:
        assert d.dtype.name == d.name and c_table[d.name] == d.dtype.itemsize
    for spec in _dtype_spec.DTYPES:
        narrow = dict((d.name, d.narrow) for d in _dtypes.TABLE)[spec["name"]]
        assert narrow == spec["storage"].startswith("u"), spec["name"]
        if narrow:   # sign, exponent and mantissa fill the storage
            assert 1 + spec["format"][0] + spec["format"][1] == 8 * c_table[spec["name"]]


@pytest.mark.parametrize("g, y", list(itertools.product(_dtypes.SUPPORTED, repeat=2)), ids=str)
def test_every_pair_has_a_loop_in_the_promotion_of_the_pair(g, y):
    result = reference.result_dtype(np.empty(0, g), np.empty(0, y))
    assert ufunc.resolve_dtypes((g, y, None)) == (g, y, result)


def test_the_kernels_compute_every_dtype_of_the_table():
    for d in _dtypes.TABLE:
        g = np.array([1.0, 2.0], d.dtype)
        assert np.array_equal(ufunc(g, g.astype(d.dtype)), reference.sigmoid_backward(g, g))


# aclDataType's name of each of the NPU operator's dtypes (CANN's acl_base.h).
ACL_NAMES = {"float16": "ACL_FLOAT16", "bfloat16": "ACL_BF16", "float32": "ACL_FLOAT",
             "float64": "ACL_DOUBLE", "complex64": "ACL_COMPLEX64",
             "complex128": "ACL_COMPLEX128"}


def test_aclnn_and_golden_keep_the_npu_operators_own_list():
    """A dtype the CPU learns is not one the NPU operator accepts: aclnn's
    and golden's lists are the operator's six, whatever the table holds."""
    assert {acl.name: dt.name for acl, dt in _constants.COMPUTE_DTYPES.items()} == \
        {ACL_NAMES[name]: name for name in NPU_NAMES}
    assert list(_dtype_names.DTYPES) == list(NPU_NAMES)
