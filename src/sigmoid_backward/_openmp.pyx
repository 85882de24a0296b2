# cython: language_level=3
"""What OpenMP allows this process: the one module that asks (see _openmp.h).

It links OpenMP like the kernels, so it reads the same runtime.  The limit
it reports is advice for the thread policy (_threads.py): the kernels pass
an explicit num_threads clause, which OpenMP's limit does not override.
"""

ENABLED = bool(sb_openmp_enabled())


def max_threads():
    """OpenMP's thread limit in the calling thread: ``OMP_NUM_THREADS``, or
    what ``omp_set_num_threads`` last set there (threadpoolctl, or another
    library sharing the OpenMP runtime); 1 without OpenMP."""
    return sb_omp_max_threads()
