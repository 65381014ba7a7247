// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file measure_policy.h
/// \brief The measurement policy of a task: are its candidates timed with the CPU caches flushed
/// before each repeat (TVM `enable_cpu_cache_flush`) or warm, chosen per task by default.
///
/// Why: a kernel timed warm, with its weights in the last-level cache (LLC) from the previous call,
/// can run slower inside a network, where the other kernels' data has evicted them; the search then
/// prefers schedules that only win warm (issue 15: resnet-18, 46.8 MB of weights against a 32 MB
/// L3, ran 49.3 ms tuned warm against 43.3 ms untuned). TVM leaves the choice to the user, one flag
/// for all tasks. Here `auto` (the default) decides per task from the LLC size: the part of it this
/// process keeps, measured (machine_peak.h effectiveLastLevelCacheBytes; on the Xeon VM of 2026-11-30
/// sysfs says 503 MB and one thread streams at cache speed only up to ~50 MB):
///   - flush when the task's own inputs + weights (te placeholders, measure::dagTraffic) exceed the
///     LLC: even alone they cannot stay cached;
///   - flush when the network's weights together exceed a quarter of the LLC: between two runs of
///     the task the other tasks' weights and the activations pass through the cache, which other
///     cores share too (other processes; other tenants on a VM host), so its weights arrive cold.
///     resnet-18 above; mobilenet_v1 as well, whose 16.9 MB of weights are half of this VM's
///     33.6 MB L3: its 14x14x512 1x1 conv lost 67-80 us a call in the network, what it loses timed
///     with every argument but the input flushed to DRAM (`bench_opt_level --cold`), and logs tuned
///     with the flush ran the network 3-7% faster at 2 threads, 0-4% at 1 (two seeds, 1196 trials
///     each, at the same trials per second);
///   - warm otherwise (a small network's weights stay in the L3 from one run to the next).
/// Where `auto` flushes because of the network's weights, it flushes only the task's weights (the
/// placeholders bound to the network's constants: weights, biases, folded scales), not its
/// activations: in the network a kernel's input was just written by the kernel before it and its
/// output goes to a planned buffer that other kernels used a moment ago, both in cache. TVM's flush
/// also evicts the output (and any input but the first), which makes every candidate of a small
/// kernel wait for DRAM write-allocates that the network never sees: mobilenet_v1's 14x14x512
/// depthwise conv, 0.82 MB of activations and 18 KB of weights, was tuned at 39 us a call flushed
/// and ran its best state at 25 us in the network; tuned with its activations warm it ran 15 us
/// there (all nine depthwise tasks retuned: -0.09 ms of 5.6 at 1 thread). A task whose own
/// inputs exceed the LLC, or whose constants are unknown, keeps TVM's flush (every argument but
/// the first); a task with no constants (a pooling) is timed warm.
/// `on` and `off` force the choice for every task (`off` is TVM's default). The LLC is this
/// machine's: for a remote device (RPC runner) it is unknown, and `auto` keeps caches warm there.
/// What a flush does is the runner's (TVM's cache_flush_cpu_non_first_arg: every argument but the
/// first, the data input, is evicted before each repeat, and as in TVM's LocalRunner each repeat is
/// then one call: local_runner.h RunnerOptions::enableCpuCacheFlush).

#include <cstdint>
#include <string>

namespace tb::tuning {

/// `--cache-flush on|off|auto`.
enum class CacheFlushMode { Off, On, Auto };

/// "off", "on" or "auto".
const char* cacheFlushModeName(CacheFlushMode m);
/// Parses "off", "on" or "auto"; throws tb::UserError naming the bad value otherwise.
CacheFlushMode parseCacheFlushMode(const std::string& text);

/// One task's choice and why.
struct TaskMeasurePolicy {
    bool flush = false;               ///< flush the caches before each repeat
    int64_t taskInputBytes = 0;       ///< the task's inputs + weights (bytes)
    int64_t networkWeightBytes = 0;   ///< all weights of the network (bytes)
    int64_t llcBytes = 0;             ///< the last-level cache (bytes); 0 = unknown
    /// The task's constant inputs (bytes; -1 = unknown: the task was not extracted from a network).
    int64_t taskWeightBytes = -1;
    /// With `flush`: evict only the task's constants (SearchTask::flushArgs), not its activations.
    bool weightsOnly = false;
    CacheFlushMode mode = CacheFlushMode::Auto;
    /// "flush: inputs+weights 40.1 MB > LLC 32.0 MB", "flush: network weights 16.9 MB > LLC/4 8.0 MB",
    /// "warm: inputs+weights 1.2 MB <= LLC 32.0 MB, network weights 3.0 MB <= LLC/4 8.0 MB", "flush: --cache-flush on",
    /// "warm: LLC unknown", "flush weights 2.4 MB: network weights 16.9 MB > LLC/4 8.0 MB",
    /// "warm: no weights, network weights 16.9 MB > LLC/4 8.0 MB" ...
    std::string reason() const;
};

/// The policy of a task whose inputs + weights take `taskInputBytes`, of which its constants (the
/// network's weights, biases) take `taskWeightBytes` (-1: unknown), in a network whose weights take
/// `networkWeightBytes`, under `mode`, on a machine with an LLC of `llcBytes` (0: unknown, so `auto`
/// keeps the caches warm). See the file comment for the rule.
TaskMeasurePolicy chooseMeasurePolicy(int64_t taskInputBytes, int64_t networkWeightBytes, CacheFlushMode mode,
                                      int64_t llcBytes, int64_t taskWeightBytes = -1);

}  // namespace tb::tuning
