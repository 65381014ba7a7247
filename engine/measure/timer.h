// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file timer.h
/// \brief TVM's time evaluator (src/runtime/profiling.cc `WrapTimeEvaluator`, REFERENCE-TVM §4.2),
/// plus the CPU cache flush and guarded argument buffers the sandbox worker uses.
///
/// Semantics: one untimed warm-up call; then for each of `repeat` rounds: the optional preprocess
/// (the cache flush), `number` timed calls; if they took less than `minRepeatMs`, `number` grows to
/// max(minRepeatMs / (elapsed / number) + 1, number * 1.618) and the round is re-timed; the round's
/// result is elapsed / number seconds.
///
/// extendShortRound (the default) keeps that contract (a round lasts at least minRepeatMs, its
/// result is its time per call, later rounds start from the grown number) without TVM's waste: a
/// round that was too short is not thrown away and re-timed, it goes on with just enough further
/// calls (ceil((minRepeatMs - elapsed) / (elapsed / calls)), at least one) until it has lasted
/// minRepeatMs, and its result is the total time over all its calls. TVM re-times the whole round,
/// so every candidate slower than minRepeatMs / number paid `number` extra calls (a 20 ms kernel:
/// 60 ms of a 200 ms measurement). With a cache flush (preprocess), the calls right after the flush
/// count in the result in both modes when `number` calls last minRepeatMs; here they also count
/// when the round is extended. extendShortRound = false is TVM's exact behaviour. After round i, when cooldownIntervalMs > 0 and
/// i % repeatsToCooldown == 0, the thread sleeps cooldownIntervalMs. Shared by the worker process
/// and by in-process benchmarks so both time exactly the same way.
///
/// rejectPreempted (timeEvaluate only, without a preprocess): on a shared machine most of the spread
/// between two measurements of one kernel comes from other processes taking a core while it runs
/// (issue 20: a median 13% coefficient of variation across rounds at load 4 on 2 cores). With this
/// option a round is timed in slices of about kSliceMs (at least one call each); a slice counts only
/// when no thread of this process was involuntarily switched out during it (getrusage's
/// ru_nivcsw did not move: no preemption, no yield to another runnable task). The round lasts until
/// its counted slices add up to minRepeatMs, or until it has run kPreemptedCap x minRepeatMs in all;
/// its result is the counted time per counted call, or, when no slice was clean, the median slice's
/// time per call. The result still means "seconds per call of this kernel with every core it asked
/// for", TVM's meaning, just measured only while that was true. On an idle machine it costs
/// nothing (every slice is clean); under load it costs up to kPreemptedCap x the round's time.
/// Interference it cannot see: a neighbour sharing the last-level cache or memory bandwidth, and a
/// hypervisor stealing the virtual CPU.

#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

namespace tb::measure {

struct TimerOptions {
    int number = 3;                 ///< calls per timed round (grows with minRepeatMs)
    int repeat = 1;                 ///< timed rounds (= number of results)
    double minRepeatMs = 100;       ///< minimum duration of a round (ms)
    double cooldownIntervalMs = 0;  ///< sleep between rounds (ms)
    int repeatsToCooldown = 1;      ///< sleep after every this many rounds
    bool skipWarmup = false;        ///< the caller already made the warm-up call
    bool extendShortRound = true;   ///< extend a round shorter than minRepeatMs (see the file comment)
    bool rejectPreempted = false;   ///< count only slices without preemption (see the file comment)
    /// Early abandon (timeEvaluate only; seconds, 0 = off): after the warm-up, one call is timed;
    /// when it took longer than this, the result is that one time ({t}, a single cost) and nothing
    /// more is run. The search only needs to know that such a candidate is far from the best, and a
    /// full measurement of a slow kernel (min_repeat_ms, or `number` calls of it) is the most
    /// expensive measurement of a round. Not TVM's: its runner times every candidate alike.
    double abandonAboveS = 0;
    /// Screening (extendShortRound only, not with rejectPreempted; 0 = off): the first round pauses when it has lasted
    /// screenMs; when its time per call so far exceeds screenAboveS (seconds), that time is the
    /// result ({t}, a single cost) and nothing more is run; otherwise the round goes on to
    /// minRepeatMs, its screening calls included, and the other rounds follow as usual. A candidate
    /// that passes costs nothing extra. Not TVM's: see ProgramMeasurer::setScreen for why.
    double screenMs = 0;
    double screenAboveS = 0;
    /// Fastest slice (extendShortRound only; 1 = TVM's round): a round is timed as consecutive
    /// slices of at least minRepeatMs / slices each (the preprocess before each one), until it has
    /// lasted minRepeatMs and made at least `number` calls, and its result is the smallest time per
    /// call among its slices. The same timing budget as one TVM round (+4% of wall time per
    /// measurement); what changes is the statistic: another process that takes a core for part of
    /// the round slows some slices, not the fastest one. A kernel slower than a slice makes one call
    /// per slice, so it is the fastest of its `number` (or more) calls. Not TVM's (the mean).
    /// It helps only against interference shorter than a slice. bench_stability on resnet-18's conv
    /// (median coefficient of variation of a state's time across rounds, TVM's 1 x 100 ms against
    /// the fastest of 5 x 20 ms, the same run): 9.4% / 1.3%, 2.6% / 7.5%, 10.7% / 10.6%, 8.7% / 6.1%
    /// and 7.3% / 8.7% (16 rounds) on the shared 2-core VM of stop 32. So it is not the default.
    int slices = 1;
};

/// rejectPreempted: the target length of one slice (ms), and how long a round may run in all, as a
/// multiple of minRepeatMs, before it settles for what it has.
inline constexpr double kSliceMs = 1.0;
inline constexpr double kPreemptedCap = 4.0;

/// Time f as described in the file comment; returns `repeat` per-call times in seconds.
/// `preprocess` (may be empty) runs before every round, outside the timed region.
std::vector<double> timeEvaluate(const std::function<void()>& f, const TimerOptions& options,
                                 const std::function<void()>& preprocess = {});

/// The rounds of TimerOptions::rejectPreempted (see the file comment), without the warm-up call.
/// `switchCounter` returns a count that moves whenever a thread of the timed code was switched out;
/// empty = this process's involuntary context switches (getrusage ru_nivcsw). Tests pass their own.
/// Returns `repeat` per-call times in seconds.
std::vector<double> timeEvaluateUnpreempted(const std::function<void()>& f, const TimerOptions& options,
                                            const std::function<long()>& switchCounter = {});

/// The same rounds with the caller's clock: `timedRound(number)` makes `number` calls and returns
/// their duration in milliseconds (device events on a GPU: gpu_device.h). The warm-up call is the
/// caller's (skipWarmup is ignored). Returns `repeat` per-call times in seconds.
std::vector<double> timeEvaluateRounds(const std::function<double(int number)>& timedRound,
                                       const TimerOptions& options, const std::function<void()>& preprocess = {});

/// Evict [data, data + bytes) from every CPU cache level, as TVM's cache_flush_cpu_non_first_arg does
/// for each argument: one `clflushopt` per 64-byte line on an x86-64 CPU that has it (CPUID.7:EBX[23],
/// Skylake and later), else `clflush`; `dc civac` on AArch64; then a full fence. Both x86
/// instructions evict a line from every level; clflush is ordered against every other clflush, so its
/// lines leave one at a time (9.4 MB took 6.1-7.0 ms on the issue-20 Xeon), while clflushopt's
/// overlap (0.45-0.48 ms), and a 9.4 MB read after either ran at DRAM speed (0.59-1.2 ms, against
/// 0.34-0.36 warm). TVM uses clflush; the state it leaves is the same, only sooner.
void flushCache(const void* data, size_t bytes);

/// Whether flushCache uses clflushopt on this CPU (false off x86-64).
bool flushCacheUsesClflushopt();

/// A float array surrounded by inaccessible guard pages, with canary bytes in the slack between the
/// array and the guards: a kernel that writes out of bounds either faults (SIGSEGV) or leaves a
/// damaged canary that `intact()` reports. 64-byte aligned data; move-only. The writable part is
/// whole 2 MiB-aligned transparent huge pages (madvise; 4 KiB pages where the kernel gives none):
/// the array then sits in physically contiguous memory whose cache-set mapping follows its virtual
/// offset, the same in every measurement, which halved the round-to-round spread of one kernel's
/// time on the issue-20 machine (bench_stability). The array ends at the guard page after it.
class GuardedBuffer {
public:
    explicit GuardedBuffer(size_t elements);
    ~GuardedBuffer();
    GuardedBuffer(GuardedBuffer&& o) noexcept;
    GuardedBuffer& operator=(GuardedBuffer&&) = delete;
    GuardedBuffer(const GuardedBuffer&) = delete;

    float* data() const { return m_data; }
    size_t size() const { return m_elements; }
    /// False when a canary byte before or after the array changed.
    bool intact() const;

private:
    void* m_map = nullptr;
    size_t m_mapBytes = 0;
    unsigned char* m_lo = nullptr;  // first writable byte (canary region before the data)
    unsigned char* m_hi = nullptr;  // one past the last writable byte
    float* m_data = nullptr;
    size_t m_elements = 0;
};

/// Deterministic uniform [-1, 1) fill (splitmix64 stream of `seed`).
void fillRandom(float* data, size_t n, uint64_t seed);

}  // namespace tb::measure
