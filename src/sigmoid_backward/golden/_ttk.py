"""Golden functions with the signature TTK calls, so that an operator's
``tests/assets/golden.py`` can be one import::

    from sigmoid_backward.golden import (
        __golden__, aclnn_sigmoid_backward_golden, sigmoid_grad_golden)

TTK looks a golden function up in ``__golden__`` (``{"kernel": {op_name:
function name}}``, and ``"aclnn"`` alike), passes the inputs as NumPy arrays
in the operator's order, and the csv's facts as keyword arguments
(``input_dtypes``, ``output_dtypes``, ``testcase_name``, ...).  bfloat16 may
come as raw 2-byte ``|V2`` arrays; the result then goes back the same way.
"""
import numpy as np

from .._kernel._dtypes import BFLOAT16, castable
from .._numpy._function import sigmoid_backward
from ._dtype_names import RAW_BFLOAT16, as_supported, lookup
from ._errors import GoldenError

__golden__ = {"kernel": {"sigmoid_grad": "sigmoid_grad_golden"},
              "aclnn": {"aclnnSigmoidBackward": "aclnn_sigmoid_backward_golden"}}


def _golden(grad_output, output, kwargs):
    g, y = np.asarray(grad_output), np.asarray(output)
    raw = RAW_BFLOAT16 in (g.dtype, y.dtype)
    result = np.asarray(sigmoid_backward(as_supported(g), as_supported(y)))
    out = kwargs.get("output_dtypes")
    if out:
        out_dtype = lookup(out if isinstance(out, str) else out[0])
        if not castable(result.dtype, out_dtype):
            raise GoldenError(f"output_dtypes: the result is {result.dtype}, and complex is "
                              f"never cast to {out_dtype}")
        result = result.astype(out_dtype, copy=False)
    return result.view(RAW_BFLOAT16) if raw and result.dtype == BFLOAT16 else result


def sigmoid_grad_golden(y, dy, **kwargs):
    """The golden of the kernel ``SigmoidGrad``: ``dy * (1 - y) * y``.

    Parameters
    ----------
    y, dy : numpy.ndarray
        The sigmoid's output and the incoming gradient, in the kernel's
        order; bfloat16 as ml_dtypes' type or raw ``|V2``.
    **kwargs
        TTK's facts; ``output_dtypes`` (its first entry), when given, is the
        result's dtype.

    Returns
    -------
    numpy.ndarray
        Computed as ``sigmoid_backward(dy, y)``: bit-identical to
        ``(1 - y) * dy * y`` in float32 for 16-bit dtypes, rounded once.
    """
    return _golden(dy, y, kwargs)


def aclnn_sigmoid_backward_golden(gradOutput, output, **kwargs):
    """The golden of ``aclnnSigmoidBackward``: ``gradOutput * (1 - output) *
    output`` (conjugated for complex), in the inputs' promoted dtype, cast
    to ``output_dtypes[0]`` when given.  See :func:`sigmoid_grad_golden`."""
    return _golden(gradOutput, output, kwargs)
