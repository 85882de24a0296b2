"""What ships and what it says: the distribution's metadata, version and
licences, the wheel and sdist configuration, the type stubs, the
documentation's links, tables and examples, ``python -m sigmoid_backward``
and its ``bench`` command, ``show_config()``, and the benchmarks."""
