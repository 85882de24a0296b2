# Type stubs for the public API (PEP 561; shipped with py.typed).
from typing import Any, Protocol, SupportsIndex, TypeVar, overload

import numpy as np
from numpy.typing import ArrayLike, DTypeLike

from . import reference as reference

__version__: str
OPENMP_ENABLED: bool

__all__ = [
    "sigmoid_backward",
    "get_num_threads",
    "set_num_threads",
    "reference",
    "OPENMP_ENABLED",
    "__version__",
]

class _SupportsDLPack(Protocol):
    # Any DLPack producer (PyTorch tensors, JAX arrays, ...): the signature
    # of __dlpack__ varies between producers and versions of the protocol.
    def __dlpack__(self, *args: Any, **kwargs: Any) -> Any: ...
    def __dlpack_device__(self) -> tuple[int, int]: ...

_Input = ArrayLike | _SupportsDLPack
_Out = TypeVar("_Out", bound=np.ndarray[Any, Any])

@overload
def sigmoid_backward(
    grad_output: _Input,
    output: _Input,
    /,
    out: _Out | tuple[_Out],
    *,
    dtype: DTypeLike | None = None,
    num_threads: SupportsIndex | None = None,
) -> _Out: ...
# Without out=: a new ndarray, a NumPy scalar when both inputs are 0-d, or a
# lazy dask.array.Array when an input is one (Dask is optional, so this
# cannot be spelled here).
@overload
def sigmoid_backward(
    grad_output: _Input,
    output: _Input,
    /,
    out: None = None,
    *,
    dtype: DTypeLike | None = None,
    num_threads: SupportsIndex | None = None,
) -> Any: ...
def get_num_threads() -> int: ...
def set_num_threads(n: SupportsIndex | None) -> None: ...
