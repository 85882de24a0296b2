"""Hypothesis fuzzing of tensor descriptors: the two properties of
aclnn_fuzzing.py, 300 examples each.

1. aclCreateTensor accepts a descriptor exactly when a brute-force oracle
   says it is consistent, and the element view lies inside the buffer.
2. Both phases never touch a byte outside gradInput's view (guard bytes
   around every buffer and the workspace), and gradInput holds the
   reference result.

tests/aclnn/test_aclnn_hardening.py runs the same strategies and properties with
10,000 examples under the ``slow`` marker.
"""
from hypothesis import given
from hypothesis import strategies as st

from aclnn_fuzzing import FUZZ, check_both_phases, check_create_tensor, descriptors


@FUZZ
@given(descriptors())
def test_create_tensor_matches_oracle(case):
    check_create_tensor(*case)


@FUZZ
@given(data=st.data())
def test_both_phases_never_touch_guard_bytes(data):
    check_both_phases(data.draw)
