// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file machine_peak.h
/// \brief The two roofs of this machine's roofline, measured: the FP32 FMA peak (FLOP/s) and the
/// memory bandwidth of a STREAM triad (bytes/s), at a given thread count, cached per machine.
///
/// Why: a kernel's speed means little without its limit. The roofline model (Williams, Waterman,
/// Patterson, "Roofline: an insightful visual performance model", CACM 2009) bounds a kernel of
/// arithmetic intensity I (FLOP per byte of memory traffic) by min(peak, I x bandwidth). Datasheet
/// numbers are wrong on a shared VM (clocks, a neighbour's load, turbo), so both roofs are measured
/// on this machine with the code bench/kernels uses for its peak (ANCHORS.md "Physical limits"):
///   - peak: each thread runs 12 independent chains of vector FMAs (512-bit with AVX-512F, else
///     256-bit with AVX2+FMA, else scalar), long enough that the loop overhead vanishes; FLOPs =
///     threads x iterations x 12 chains x lanes x 2; the best of a few rounds counts.
///   - bandwidth: the STREAM triad a[i] = b[i] + s * c[i] (McCalpin) over three float arrays of at
///     least 4x the last-level cache each (STREAM's own rule), split statically over the threads
///     (first touch by the same thread); bytes = 3 x 4 x N per pass (STREAM's count: the write
///     allocate of a is not counted); the best of a few passes counts.
/// Both run on the engine's thread pool (support/thread_pool.h), which is what generated kernels run
/// on, so "at T threads" means the same T as TB_NUM_THREADS.
///
/// The measurement takes one to two seconds, so machinePeak() stores it in a JSON file under the
/// user's cache directory (defaultPeakCachePath) keyed by the machine (machineKey: CPU model, hardware
/// threads, LLC size) and the thread count. A measurement taken while the machine was busy (1-minute
/// load average above half its hardware threads: a build, a tuning run) is too low, so it is kept
/// but not trusted: the next call measures again and keeps the best of both, until one run happens
/// on a quiet machine; from then on the entry is read as is.

#include <cstdint>
#include <string>

namespace tb::measure {

/// The measured roofs at one thread count.
struct MachinePeak {
    int threads = 1;              ///< threads of the pool the numbers were measured with
    double flopsPerSecond = 0;    ///< FP32 FMA peak (FLOP/s)
    double bytesPerSecond = 0;    ///< STREAM triad bandwidth (bytes/s)
    std::string machine;          ///< machineKey() at measurement
    bool fromCache = false;       ///< read from the cache file rather than measured now
    /// At least one of the runs behind these numbers saw a quiet machine (else they may be low).
    bool quiet = false;
    int runs = 0;                 ///< measurements behind the numbers (each the best of its rounds)
    double loadAverage = -1;      ///< 1-minute load average before the latest run (-1: unknown)
    /// The ridge point (FLOP/byte): kernels of lower arithmetic intensity are memory-bound.
    double ridgeIntensity() const { return bytesPerSecond > 0 ? flopsPerSecond / bytesPerSecond : 0; }
};

/// The FP32 FMA peak of `threads` threads of ThreadPool::global() in FLOP/s: the best of `rounds`
/// timed calls of the FMA chains described in the file comment. Throws tb::UserError when `threads`
/// is < 1 or exceeds the pool's size, or rounds < 1.
double measureFmaPeak(int threads, int rounds = 20);

/// The STREAM triad bandwidth of `threads` pool threads in bytes/s over three float arrays of
/// `arrayBytes` bytes each (0: max(4 x the LLC, 64 MiB)); the best of `rounds` passes after one
/// untimed pass. Throws tb::UserError for threads out of range (as measureFmaPeak), rounds < 1 or
/// an array smaller than 4 KiB.
double measureTriadBandwidth(int threads, int64_t arrayBytes = 0, int rounds = 5);

/// FP32 lanes of one FMA instruction at this core's full FMA throughput, which is what a register
/// block's cycles scale with (the cost model's group-6 features, cost_model/feature.h):
///   - 16 where a 512-bit FMA issues as often as a 256-bit one: two 512-bit FMA pipes (Intel Xeon
///     since Skylake-SP; this project's current VM, whose CPUID says "rocketlake");
///   - 8 on AVX2+FMA cores, and on AVX-512 cores that run a 512-bit FMA as two 256-bit halves (AMD
///     Zen 4) or have one 512-bit pipe (Intel client cores): there a zmm FMA costs two ymm ones;
///   - 4 without AVX2+FMA (SSE).
/// Measured, because CPU names lie on VMs (the model number here is a client part's while the core
/// has a server core's two pipes): one thread times the 512-bit and the 256-bit FMA chains of
/// measureFmaPeak (about 4 ms each, best of 3), and 16 is the answer when the 512-bit chains give
/// at least 1.5x the 256-bit chains' FLOP/s (the two cases differ by 2x). Measured once per process;
/// the environment variable TB_FMA_LANES (4, 8 or 16) overrides it (A/B runs, a known machine).
/// Throws tb::UserError for a TB_FMA_LANES that is not 4, 8 or 16.
int fullRateFmaLanes();

/// The last-level cache this process gets, measured (bytes): one thread's STREAM triad over three
/// arrays of S = 1, 2, 4, ... 64 MiB each against the same triad over three 256 MiB arrays (memory);
/// the answer is 3 x the largest S up to which every size streamed at least 1.5x memory's bandwidth,
/// capped at the LLC sysfs reports (cpu_caches.h). 0 when even 3 x 1 MiB streams at memory speed.
///
/// Why: sysfs reports the LLC of the hardware, and on a VM that is not what one tenant keeps. The
/// Xeon VM of 2026-11-30 reports a 480 MiB L3; one thread streamed 21.7-23.5 GB/s up to 3 x 16 MiB and
/// 9.2-10.0 GB/s from 3 x 32 MiB on, so its weights past ~48 MB come from memory. resnet-50's kernels
/// ran 25 ms (54%) slower in the network than their warm sum (`compile --profile`), most where the
/// weights are largest. The tuner's `--cache-flush auto` (tuning/measure_policy.h) decides with this
/// size. The measurement takes about a second (the 768 MiB of the memory reference are allocated and
/// touched), once per process: effectiveLastLevelCacheBytes(). The environment variable
/// TB_LLC_BYTES (a byte count) replaces it, for known machines and for tests.
int64_t measureEffectiveLastLevelCacheBytes();

/// measureEffectiveLastLevelCacheBytes() once per process, or TB_LLC_BYTES when set. Throws
/// tb::UserError for a TB_LLC_BYTES that is not a non-negative integer.
int64_t effectiveLastLevelCacheBytes();

/// "AMD EPYC 9654 96-Core Processor | family 25 model 17 | 2 hw threads | LLC 33554432 B": what
/// identifies this machine in the cache file (from /proc/cpuinfo and cpu_caches.h).
std::string machineKey();

/// The cache file: $TB_CACHE_DIR/machine_peak.json, else $XDG_CACHE_HOME/tunebench/machine_peak.json,
/// else $HOME/.cache/tunebench/machine_peak.json ("" when none of the three is set).
std::string defaultPeakCachePath();

/// The roofs of this machine at `threads` threads: read from `cachePath` when it holds a quiet entry
/// for machineKey() and `threads`; else measured (measureFmaPeak, measureTriadBandwidth with the
/// defaults), each roof the maximum of this run and a busy entry's, and written to the file (created
/// with its directory; an unwritable or empty path only means the next call measures again). A
/// malformed cache file is replaced, and so is an entry whose bandwidth an older triad probe measured
/// (field triad_probe: the scalar probe before 2026-12-01 read memory speed from L2 on Zen 5).
/// Throws tb::UserError for threads out of range, as measureFmaPeak.
MachinePeak machinePeak(int threads, const std::string& cachePath = defaultPeakCachePath());

}  // namespace tb::measure
