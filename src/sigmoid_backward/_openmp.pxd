# OpenMP shim: cimport from here, never from Cython's openmp.pxd, so the
# package also builds without OpenMP (see _openmp.h).
cdef extern from "_openmp.h" nogil:
    int sb_openmp_enabled()
    int sb_omp_max_threads()
    int sb_omp_num_procs()
