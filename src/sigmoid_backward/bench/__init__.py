"""The timing tools, installed with the package because ``python -m
sigmoid_backward bench`` runs them (the repository's ``benchmarks/`` folder,
the asv suite and the scripts, is not installed and imports them from here):

- ``_report.py``: the ``bench`` command and its report;
- ``timing.py``: how every timing tool times (inputs, interleaved samples,
  same-round ratios, formatting);
- ``small_calls.py``: the small calls off the fast path, shared with the asv
  suite;
- ``_bandwidth_floor.pyx``: the memory-bandwidth floor the report compares
  the kernels with.

None of it is the library's API.  This file imports nothing, so that the
main command's timing line (``timing``) costs no more than it did.
"""
