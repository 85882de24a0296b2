// Transparent huge pages for the large results of the native torch ops
// (_torch_op.cc) and of the XLA target (_xla_ffi.cc), which their
// frameworks allocate.
//
// PyTorch's CPU allocator takes an allocation larger than glibc's largest
// mmap threshold (32 MiB on 64-bit) from a fresh mmap on every call, and
// munmaps it when freed, so the kernel faults and zeroes each result 4 KiB
// at a time: 9,766 faults for a 1e7-element float32 result, 14 of aten's
// 19 ms at that size on one thread (benchmarks/NOTES.md, 41); XLA's CPU
// client does the same.  Advised MADV_HUGEPAGE before its first touch, such
// a result faults in huge pages (2 MiB on x86-64).  NumPy advises its own
// arrays of 4 MiB and more so; PyTorch advises its allocations only under
// THP_MEM_ALLOC_ENABLE.
//
// The advice is asked only where it changes something: when the kernel
// gives huge pages to advised memory only ("[madvise]" in
// /sys/kernel/mm/transparent_hugepage/enabled; under "always" every such
// range has them already, under "never" none), for results of at least two
// huge pages (NumPy advises from 4 MiB, two huge pages of x86-64), on the
// huge pages wholly inside the result.  A block glibc reuses from its heap
// (results of 4-32 MiB) is faulted in already: the advice costs a system
// call then, and lets khugepaged collapse the range into huge pages later.
// Under the "madvise" defrag policy an advised fault may compact memory
// first, which can stall it; SIGMOID_BACKWARD_MADVISE_HUGEPAGE=0 in the
// environment turns the advice off, as NUMPY_MADVISE_HUGEPAGE=0 does
// NumPy's.
#ifndef SIGMOID_BACKWARD_HUGE_PAGES_H
#define SIGMOID_BACKWARD_HUGE_PAGES_H

#include <cstddef>
#include <cstdint>

#ifdef __linux__
#include <sys/mman.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#endif

namespace sb_pages {

// The huge page's size, in bytes, when the kernel gives huge pages only to
// advised ranges; 0 when advice would change nothing, is not Linux's, or is
// turned off.  Read once, at the first large result.
inline size_t AdvisedHugePageBytes() {
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  static const size_t bytes = [] {
    const char* wanted = std::getenv("SIGMOID_BACKWARD_MADVISE_HUGEPAGE");
    if (wanted != nullptr && std::strcmp(wanted, "0") == 0) return size_t{0};
    char mode[128] = {0};
    unsigned long long size = 0;
    if (FILE* f = std::fopen("/sys/kernel/mm/transparent_hugepage/enabled", "r")) {
      if (std::fgets(mode, sizeof mode, f) == nullptr) mode[0] = '\0';
      std::fclose(f);
    }
    if (std::strstr(mode, "[madvise]") == nullptr) return size_t{0};
    if (FILE* f = std::fopen("/sys/kernel/mm/transparent_hugepage/hpage_pmd_size", "r")) {
      if (std::fscanf(f, "%llu", &size) != 1) size = 0;
      std::fclose(f);
    }
    // A power of two, or no advice (the rounding below relies on it).
    return (size != 0 && (size & (size - 1)) == 0) ? static_cast<size_t>(size) : size_t{0};
  }();
  return bytes;
#else
  return 0;
#endif
}

// Advise the huge pages wholly inside [data, data + nbytes), before anything
// touches them.  Advice only: a failure leaves the memory as it was.
inline void AdviseHugePages(void* data, size_t nbytes) {
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  const size_t huge = AdvisedHugePageBytes();
  if (huge == 0 || nbytes / 2 < huge) return;
  const uintptr_t start = reinterpret_cast<uintptr_t>(data);
  const uintptr_t begin = (start + huge - 1) & ~(uintptr_t{huge} - 1);
  const uintptr_t end = (start + nbytes) & ~(uintptr_t{huge} - 1);
  if (end > begin) madvise(reinterpret_cast<void*>(begin), end - begin, MADV_HUGEPAGE);
#else
  (void)data;
  (void)nbytes;
#endif
}

}  // namespace sb_pages

#endif  // SIGMOID_BACKWARD_HUGE_PAGES_H
