# Type stubs for sigmoid_backward.reference (PEP 561).
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, DTypeLike

def result_dtype(g: Any, y: Any) -> np.dtype[Any]: ...
def sigmoid_backward(
    grad_output: ArrayLike, output: ArrayLike, /, *, dtype: DTypeLike | None = None
) -> np.ndarray[Any, Any]: ...
