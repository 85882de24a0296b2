/* The one place that knows whether OpenMP is there: every other file asks
 * these two functions, so the package compiles and runs either way. */
#ifndef SIGMOID_BACKWARD_OPENMP_H
#define SIGMOID_BACKWARD_OPENMP_H
#ifdef _OPENMP
#  include <omp.h>
static inline int sb_openmp_enabled(void) { return 1; }
/* Honours OMP_NUM_THREADS and omp_set_num_threads(), which is how
 * threadpoolctl limits OpenMP libraries. */
static inline int sb_omp_max_threads(void) { return omp_get_max_threads(); }
/* The processors available to this process (its affinity mask). */
static inline int sb_omp_num_procs(void) { return omp_get_num_procs(); }
#else
static inline int sb_openmp_enabled(void) { return 0; }
static inline int sb_omp_max_threads(void) { return 1; }
static inline int sb_omp_num_procs(void) { return 1; }
#endif
#endif
