"""Which Ascend product (SoC) the API behaves as: it decides BF16 support.

As in the operator (docs/semantics.md, "SoC and BF16"): the Atlas training
and inference series (Ascend910, Ascend310P) have no BF16; Atlas A2 and A3
(Ascend910B, Ascend910_93) do, and so does the Ascend 950 family (Ascend
950PR / 950DT, SoC name Ascend950), the "regbase" architecture the
operator's newer source accepts BF16 on.  The default is Ascend910B, which
supports all six dtypes.  :func:`set_soc_version` wins over the environment
variable ``SIGMOID_BACKWARD_SOC_VERSION``, which is read at each use so that
a process (or a test) can change it.
"""
import os
import threading

from ._errors import record

ENV_VAR = "SIGMOID_BACKWARD_SOC_VERSION"
DEFAULT = "Ascend910B"

# SoC name -> whether it supports BF16.
SOCS = {
    "Ascend910": False,
    "Ascend310P": False,
    "Ascend910B": True,
    "Ascend910_93": True,
    "Ascend950": True,     # Ascend 950PR / 950DT
}

_lock = threading.Lock()
_explicit = None


def _unknown(name, source):
    return (f"unknown SoC {name!r} ({source}); known are "
            f"{', '.join(SOCS)}")


def set_soc_version(name):
    """Behave as the product ``name`` from now on; ``None`` restores the
    default (``SIGMOID_BACKWARD_SOC_VERSION``, else "Ascend910B").

    Known names: "Ascend910" and "Ascend310P" (no BF16), "Ascend910B",
    "Ascend910_93" and "Ascend950" (BF16).

    Raises
    ------
    TypeError
        If ``name`` is not a string or None.
    ValueError
        For an unknown name.
    """
    global _explicit
    if name is not None:
        if not isinstance(name, str):
            raise TypeError(f"name must be a str, got {type(name).__name__}")
        if name not in SOCS:
            raise ValueError(_unknown(name, "set_soc_version"))
    with _lock:
        _explicit = name


def current():
    """The SoC name in effect.

    Raises
    ------
    ValueError
        If the environment variable names an unknown SoC.
    """
    with _lock:
        explicit = _explicit
    if explicit is not None:
        return explicit
    name = os.environ.get(ENV_VAR, "").strip()
    if not name:
        return DEFAULT
    if name not in SOCS:
        raise ValueError(_unknown(name, f"environment variable {ENV_VAR}"))
    return name


def supports_bf16(name):
    return SOCS[name]


def aclrtGetSocName():
    """The name of the SoC in effect ("Ascend910B" by default).

    Returns
    -------
    str or None
        ``None`` (C's nullptr) if ``SIGMOID_BACKWARD_SOC_VERSION`` names an
        unknown SoC; ``aclGetRecentErrMsg()`` then says so.
    """
    try:
        return current()
    except ValueError as exc:
        record(f"aclrtGetSocName: {exc}")
        return None
