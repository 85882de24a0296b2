"""sigmoid_backward: the gradient of the sigmoid, fast and exact, on the CPU.

``sigmoid_backward(grad_output, output)`` computes
``grad_output * (1 - output) * output`` (conjugated for complex) for float16,
bfloat16, float32, float64, complex64 and complex128, with NumPy
broadcasting and promotion.  ``ufunc`` is the same computation as a real
``numpy.ufunc``; the function is that ufunc plus a ``num_threads=``
argument.  It is the CPU twin of the Ascend CANN operator
``aclnnSigmoidBackward`` (``sigmoid_backward.aclnn``).  ``show_config()``
says how this copy was built: compiler, OpenMP, instruction sets.
"""
from . import reference
from ._kernel._kernels import ENABLED as OPENMP_ENABLED
from ._kernel._threads import get_num_threads, set_num_threads
from ._numpy._function import sigmoid_backward
from ._numpy._ufunc import ufunc
from ._tools import _show_config
from ._tools._show_config import show_config
from ._version import __version__

__all__ = [
    "sigmoid_backward",
    "ufunc",
    "get_num_threads",
    "set_num_threads",
    "reference",
    "OPENMP_ENABLED",
    "show_config",
    "__version__",
]

# pip hides the build's warning; a single-threaded copy says so here, once.
_show_config.warn_if_single_threaded()
