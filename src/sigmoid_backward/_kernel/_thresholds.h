/*
 * The kernel's size thresholds in use, in bytes (_thresholds.py derives them
 * from the CPU's caches at import; _kernels.set_thresholds changes them):
 *
 * - sb_parallel_share: each thread of a call gets at least this much of
 *   the output;
 * - sb_nt_min: a thread whose part of a contiguous output has this much
 *   writes it with non-temporal stores.
 *
 * Kernel calls read them without the GIL while another thread may set
 * them, hence the atomic accessors; no value changes a result.
 */
#ifndef SIGMOID_BACKWARD_THRESHOLDS_H
#define SIGMOID_BACKWARD_THRESHOLDS_H

#include <stddef.h>
#include <stdint.h>   /* PTRDIFF_MAX */

#include "_atomic.h"

/* No numbers here: _kernels sets both at import, before any call can read
 * them, from _thresholds.py, the one place their values and fallbacks are
 * written.  Until then they say "one thread, no streaming" (half the maximum,
 * so that twice the share does not overflow), never a second copy. */
static ptrdiff_t sb_parallel_share_bytes = PTRDIFF_MAX / 2;
static ptrdiff_t sb_nt_min_bytes = PTRDIFF_MAX;

static inline ptrdiff_t sb_parallel_share(void) { return sb_load_size(&sb_parallel_share_bytes); }
static inline ptrdiff_t sb_nt_min(void) { return sb_load_size(&sb_nt_min_bytes); }

static inline void sb_set_thresholds(ptrdiff_t parallel_share, ptrdiff_t nt_min)
{
    sb_store_size(&sb_parallel_share_bytes, parallel_share);
    sb_store_size(&sb_nt_min_bytes, nt_min);
}

#endif /* SIGMOID_BACKWARD_THRESHOLDS_H */
