"""The kernel's size thresholds, derived at import from the caches the CPU reports.

Two decisions depend on the machine:

- **How many threads a call wakes.**  Waking a thread costs a few
  microseconds, so each thread's share of the output must be worth more
  than that: at least ``parallel_share_bytes``.  A call uses
  ``min(threads, output bytes // parallel_share_bytes)`` threads, so two
  threads run from twice the share on, and more cores need larger calls.
  The share is a sixteenth of one core's L2: 64 KiB for the 1 MiB L2 of
  AMD Zen 4 and 5, where two threads measured faster than one from 125-250
  KiB of output (benchmarks/NOTES.md); a larger L2 comes with cores that
  stream faster from it, so they need more bytes to pay for the wake-up.
- **When to write the output with non-temporal stores.**  They skip reading
  out's old lines (3 bytes of traffic per output byte instead of 4), but
  the output then leaves the cache, and a reader that comes next pays for
  it.  A thread streams its part of the output when the part has at least
  ``nt_min_bytes``, an eighth of the last-level cache: with two threads the
  output is then a quarter of that cache (glibc's memcpy streams from the
  same quarter), and with its inputs it no longer stays there anyway.  Per
  thread, because each thread brings the capacity and bandwidth of its own
  core's L2.  A 32 MiB L3 streams from 4 MiB per thread, the constant
  measured on a Zen 5 guest with a reader of the output; a 300 MiB L3 from
  37.5 MiB per thread.

Cache sizes come from Linux's ``/sys/devices/system/cpu/cpu0/cache``.
Where they cannot be read (other systems, containers that hide sysfs), the
values measured on the development machines apply: 64 KiB and 4 MiB.
Without non-temporal stores (off x86-64 the kernels' copy is a plain
memcpy) a call never streams: it would only add a copy.

``_kernels.set_thresholds`` overrides both, for tests and benchmarks; the
results never depend on them.
"""
import os

FALLBACK_SHARE = 64 << 10
FALLBACK_NT_MIN = 4 << 20
MIN_SHARE, MAX_SHARE = 32 << 10, 256 << 10
NEVER = (1 << 63) - 1

_SYSFS = "/sys/devices/system/cpu/cpu0/cache"


def _size(text):
    """'1024K' -> 1048576 (sysfs writes K, M or G, or plain bytes)."""
    text = text.strip().upper()
    scale = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}.get(text[-1:], 1)
    return int(text.rstrip("KMG")) * scale


def cache_sizes(root=_SYSFS):
    """``{level: bytes}`` of the data and unified caches of CPU 0, as Linux
    reports them; ``{}`` where it does not."""
    sizes: dict[int, int] = {}
    try:
        entries = sorted(os.listdir(root))
    except OSError:
        return sizes
    for entry in entries:
        if not entry.startswith("index"):
            continue
        try:
            with open(os.path.join(root, entry, "type")) as f:
                kind = f.read().strip()
            with open(os.path.join(root, entry, "level")) as f:
                level = int(f.read())
            with open(os.path.join(root, entry, "size")) as f:
                size = _size(f.read())
        except (OSError, ValueError):
            continue
        if kind in ("Data", "Unified") and size > 0:
            sizes[level] = max(size, sizes.get(level, 0))
    return sizes


def derive(sizes, nontemporal=True):
    """``(parallel_share_bytes, nt_min_bytes)`` for caches ``{level: bytes}``
    (see the module's docstring); ``nontemporal`` says whether the build
    has non-temporal stores at all."""
    l2 = sizes.get(2)
    share = FALLBACK_SHARE if not l2 else min(MAX_SHARE, max(MIN_SHARE, l2 // 16))
    last = sizes[max(sizes)] if sizes and max(sizes) >= 2 else None
    nt_min = FALLBACK_NT_MIN if not last else last // 8
    return share, (nt_min if nontemporal else NEVER)
