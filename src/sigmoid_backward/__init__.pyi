# Type stubs for the public API (PEP 561; shipped with py.typed).
from typing import Any, Literal, Protocol, SupportsIndex, TypeVar, overload

import numpy as np
from numpy.typing import ArrayLike, DTypeLike

from . import reference as reference

__version__: str
OPENMP_ENABLED: bool

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

class _SupportsDLPack(Protocol):
    # Any DLPack producer (PyTorch tensors, JAX arrays, ...): the signature
    # of __dlpack__ varies between producers and versions of the protocol.
    def __dlpack__(self, *args: Any, **kwargs: Any) -> Any: ...
    def __dlpack_device__(self) -> tuple[int, int]: ...

_Input = ArrayLike | _SupportsDLPack
# out= is an ndarray, or a PyTorch CPU tensor (a DLPack producer), and is returned.
_Out = TypeVar("_Out", bound=np.ndarray[Any, Any] | _SupportsDLPack)
_Casting = Literal["no", "equiv", "safe", "same_kind", "unsafe"]
_Order = Literal["K", "A", "C", "F"]

# The sigmoid gradient as a numpy.ufunc (nin=2, nout=1).
ufunc: np.ufunc

@overload
def sigmoid_backward(
    grad_output: _Input,
    output: _Input,
    /,
    out: _Out | tuple[_Out],
    *,
    where: ArrayLike = True,
    casting: _Casting = "same_kind",
    order: _Order = "K",
    dtype: DTypeLike | None = None,
    subok: bool = True,
    num_threads: SupportsIndex | None = None,
) -> _Out: ...
# Without out=: a new ndarray, a NumPy scalar when both inputs are 0-d, or
# the container an __array_ufunc__ override returns (an xarray DataArray, a
# pandas Series, a lazy dask.array.Array...), which cannot be spelled here.
@overload
def sigmoid_backward(
    grad_output: Any,
    output: Any,
    /,
    out: None = None,
    *,
    where: ArrayLike = True,
    casting: _Casting = "same_kind",
    order: _Order = "K",
    dtype: DTypeLike | None = None,
    subok: bool = True,
    num_threads: SupportsIndex | None = None,
) -> Any: ...
def get_num_threads() -> int: ...
def set_num_threads(n: SupportsIndex | None) -> None: ...

# How this copy was built and what it runs here (a dict of sections, each a
# dict, for mode="dicts").
@overload
def show_config(mode: Literal["stdout"] = "stdout") -> None: ...
@overload
def show_config(mode: Literal["dicts"]) -> dict[str, dict[str, Any]]: ...
