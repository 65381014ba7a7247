// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file cpu_caches.h
/// \brief The CPU cache hierarchy of this machine, read from Linux sysfs
/// (/sys/devices/system/cpu/cpu0/cache/index*/{level,type,size}).
///
/// Why: whether a kernel should be timed with warm or cold caches depends on whether its data stays
/// in the last-level cache (LLC) inside the network. A kernel tuned with warm caches (TVM's default,
/// `enable_cpu_cache_flush=False`) whose inputs and weights exceed the LLC is timed faster than it
/// runs between the other kernels of a network, so the search favours the wrong schedules (issue
/// 15: resnet-18's 46.8 MB of weights against a 32 MB L3). The tuner picks the measurement policy
/// per task (tuning/measure_policy.h) from the LLC this process keeps, measured
/// (machine_peak.h effectiveLastLevelCacheBytes) and capped at the size read here: on a VM sysfs
/// reports the host's. TVM has no such query; its `HardwareParams` knows only the cache line.

#include <cstdint>
#include <string>
#include <vector>

namespace tb::measure {

/// One cache of cpu0 as sysfs describes it.
struct CpuCache {
    int level = 0;      ///< 1, 2, 3, ...
    std::string type;   ///< "Data", "Instruction" or "Unified"
    int64_t bytes = 0;  ///< capacity in bytes
};

/// The caches listed under `dir` (a sysfs cpu cache directory: index0, index1, ... each with the
/// files level, type and size, size written as "32K", "1024K", "32M" or plain bytes), ordered by
/// level. Entries that cannot be read or parsed are skipped; an absent directory gives an empty list
/// (containers and non-Linux systems may not have it). Never throws.
std::vector<CpuCache> readCpuCaches(const std::string& dir = "/sys/devices/system/cpu/cpu0/cache");

/// Bytes of the largest-level data or unified cache in `caches` (the last-level cache), 0 if none.
int64_t lastLevelCacheBytes(const std::vector<CpuCache>& caches);

/// This machine's last-level cache in bytes (readCpuCaches() once per process), 0 when unknown.
int64_t hostLastLevelCacheBytes();

}  // namespace tb::measure
