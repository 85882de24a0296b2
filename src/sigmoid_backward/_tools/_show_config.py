"""``sigmoid_backward.show_config()``: how this copy was built and what it
runs where it is imported, as ``numpy.show_config()`` says it for NumPy.

The build half comes from ``_build_config.py``, which meson generates; the
run-time half from the kernels (``_kernels``) and the thread policy.  A copy
built without OpenMP also says so at import (:func:`warn_if_single_threaded`),
since pip hides the build's own warning.
"""
import platform
import warnings

import numpy as np

from .._build_config import COMPILER, MACHINE, NUMPY_BUILT_AGAINST, OPENMP
from .._kernel import _kernels, _threads
from .._version import __version__

MODES = ("stdout", "dicts")


def _openmp():
    section = {"enabled": _kernels.ENABLED, "build option": OPENMP["build option"]}
    if _kernels.ENABLED:
        section.update(runtime=OPENMP["runtime"], version=OPENMP["version"])
    return section


def _isa():
    return {"compiled": _kernels.compiled_isas(),
            "runnable here": _kernels.available_isas(),
            "selected": _kernels.current_isa()}


def _threads_section():
    """The threads a call without ``num_threads=`` runs on: the requested
    default (:func:`get_num_threads`) capped as the kernels cap it, at
    OpenMP's limit and at the CPUs this process may use (_threads.h); a small
    call wakes fewer."""
    return {"default": _threads.resolve_threads(None),
            "requested": _threads.get_num_threads(),
            "CPUs": _kernels.num_procs()}


def config():
    """The configuration :func:`show_config` prints, as nested dicts."""
    return {
        "sigmoid_backward": {"version": __version__},
        "Compiler": dict(COMPILER),
        "Machine": {"built for": "{cpu family}-{system}".format(**MACHINE),
                    "running on": f"{platform.machine()}-{platform.system().lower()}"},
        "Python": {"version": platform.python_version(), "numpy": np.__version__,
                   "numpy built against": NUMPY_BUILT_AGAINST},
        "OpenMP": _openmp(),
        "ISA": _isa(),
        "Threads": _threads_section(),
        "Thresholds (bytes)": _kernels.thresholds(),
    }


def _lines(sections):
    for name, section in sections.items():
        yield f"{name}:"
        for key, value in section.items():
            if isinstance(value, list):
                value = ", ".join(value)
            yield f"  {key}: {value}"


def show_config(mode="stdout"):
    """Show how sigmoid_backward was built and what it runs here.

    Like ``numpy.show_config()``: the version; the C compiler and its
    exactness flags; whether the kernels run on OpenMP threads, and which
    runtime (libgomp, LLVM's libomp, MSVC's vcomp); the instruction sets
    compiled, those this CPU runs and the one selected; the threads a call
    runs on by default (the requested count, :func:`get_num_threads`, capped
    at the CPUs this process may use), the requested count and the CPUs; and
    the kernels' size thresholds.

    Parameters
    ----------
    mode : {"stdout", "dicts"}, optional
        ``"stdout"`` (the default) prints the configuration; ``"dicts"``
        returns it instead, as a dict of sections, each a dict.

    Returns
    -------
    dict or None
        The configuration for ``mode="dicts"``, else None.

    Raises
    ------
    ValueError
        When ``mode`` is neither ``"stdout"`` nor ``"dicts"``.
    """
    if mode not in MODES:
        raise ValueError(f"mode must be 'stdout' or 'dicts', got {mode!r}")
    sections = config()
    if mode == "dicts":
        return sections
    print("\n".join(_lines(sections)))
    return None


def openmp_line():
    """One line on OpenMP, for ``python -m sigmoid_backward``."""
    openmp = _openmp()
    if not openmp["enabled"]:
        return f"OpenMP: off ({_why_single_threaded()}): 1 thread"
    threads = _threads_section()
    n = threads["default"]
    capped = f" (capped from {threads['requested']})" if threads["requested"] != n else ""
    return (f"OpenMP: on, {openmp['runtime']}, OpenMP {openmp['version']}: "
            f"{n} thread{'s' if n != 1 else ''} by default{capped}")


def isa_line():
    """One line on the instruction sets, for ``python -m sigmoid_backward``."""
    isa = _isa()
    return f"ISA: {isa['selected']} (compiled: {', '.join(isa['compiled'])})"


def _why_single_threaded():
    if OPENMP["build option"] == "disabled":
        return "built with -Dopenmp=disabled"
    compiler = COMPILER
    return f"{compiler['name']} {compiler['version']} had no usable OpenMP at build time"


def warn_if_single_threaded():
    """Warn (RuntimeWarning) when this copy was built without OpenMP: its
    kernels then run on one thread whatever is asked, and pip does not show
    the build's warning.  Called once, at import."""
    if _kernels.ENABLED:
        return
    if OPENMP["build option"] == "disabled":
        remedy = "build it again without -Dopenmp=disabled"
    else:
        remedy = (f"{OPENMP['hint']}, then build it again with "
                  f"-Csetup-args=-Dopenmp=enabled (which fails rather than build without it)")
    warnings.warn(f"sigmoid_backward was built without OpenMP ({_why_single_threaded()}): "
                  f"its kernels run on one thread.  For threads, {remedy}.",
                  RuntimeWarning, stacklevel=2)
