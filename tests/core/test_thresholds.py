"""The kernel's thresholds come from the caches the CPU reports
(src/sigmoid_backward/_kernel/_thresholds.py)."""
import pytest

from sigmoid_backward._kernel import _kernels, _thresholds

KIB, MIB = 1 << 10, 1 << 20


def _sysfs(tmp_path, caches):
    """A fake /sys/devices/system/cpu/cpu0/cache with (level, type, size)."""
    for i, (level, kind, size) in enumerate(caches):
        d = tmp_path / f"index{i}"
        d.mkdir()
        (d / "level").write_text(f"{level}\n")
        (d / "type").write_text(f"{kind}\n")
        (d / "size").write_text(f"{size}\n")
    return str(tmp_path)


def test_cache_sizes_from_sysfs(tmp_path):
    root = _sysfs(tmp_path, [(1, "Data", "48K"), (1, "Instruction", "32K"),
                             (2, "Unified", "2048K"), (3, "Unified", "300M")])
    assert _thresholds.cache_sizes(root) == {1: 48 * KIB, 2: 2 * MIB, 3: 300 * MIB}


def test_unreadable_caches_give_nothing(tmp_path):
    assert _thresholds.cache_sizes(str(tmp_path / "missing")) == {}
    (tmp_path / "index0").mkdir()   # no files in it
    assert _thresholds.cache_sizes(str(tmp_path)) == {}


@pytest.mark.parametrize("caches, share, nt_min", [
    ({1: 32 * KIB, 2: 1 * MIB, 3: 32 * MIB}, 64 * KIB, 4 * MIB),          # AMD Zen 4 / 5
    ({1: 48 * KIB, 2: 2 * MIB, 3: 300 * MIB}, 128 * KIB, 300 * MIB // 8),  # Sapphire Rapids
    ({1: 32 * KIB, 2: 256 * KIB, 3: 8 * MIB}, 32 * KIB, 1 * MIB),     # small L2: floor of 32 KiB
    ({1: 64 * KIB, 2: 16 * MIB}, 256 * KIB, 2 * MIB),                 # L2 last; capped share
    ({}, 64 * KIB, 4 * MIB),                                          # nothing known
])
def test_rule(caches, share, nt_min):
    assert _thresholds.derive(caches) == (share, nt_min)
    assert _thresholds.derive(caches, nontemporal=False) == (share, _thresholds.NEVER)


def test_the_kernel_uses_the_derived_values():
    derived = _thresholds.derive(_thresholds.cache_sizes(), nontemporal=_kernels.NONTEMPORAL)
    limits = _kernels.thresholds()
    assert (limits["parallel_share_bytes"], limits["nt_min_bytes"]) == derived
