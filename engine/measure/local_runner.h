// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file local_runner.h
/// \brief LocalRunner: times candidates in a sandbox worker process on this machine (TVM
/// LocalRunner, REFERENCE-TVM §4.1/4.2; DESIGN.md decision 2).
///
/// The runner starts `tunebench-worker` (fork + exec) and keeps it for the next candidates. For each
/// candidate it sends the object code over a Unix socket; the worker loads it in memory, fills the
/// arguments (random, or the CheckSpec's inputs) in buffers fenced by guard pages and canaries,
/// makes the warm-up call, checks the answer, then times it with TVM's evaluator (timer.h). The
/// result maps to TVM's error codes:
///   - the worker dies (SIGSEGV, abort, ...)                          -> RUNTIME_DEVICE
///   - a canary next to an argument changed (out-of-bounds write)     -> RUNTIME_DEVICE
///   - no reply within `timeoutS` (an infinite loop)                  -> RUN_TIMEOUT (worker killed)
///   - the output differs from CheckSpec::expected                    -> WRONG_ANSWER
///   - the object does not load (bad bytes, other architecture)       -> COMPILE_DEVICE
/// After a crash, a timeout or a wrong answer the worker is replaced by a fresh one, so each bad
/// candidate costs exactly one error record and later candidates are unaffected. Build errors are
/// passed through. Candidates run one at a time (timings must not overlap).

#include <optional>
#include <string>
#include <sys/types.h>

#include "engine/measure/measure.h"
#include "engine/measure/timer.h"

namespace tb::measure {

struct RunnerOptions {
    double timeoutS = 10;             ///< per-candidate limit for load + check + timing (s)
    int number = 3;                   ///< TVM `number`
    int repeat = 1;                   ///< TVM `repeat`
    double minRepeatMs = 100;         ///< TVM `min_repeat_ms`
    double cooldownIntervalS = 0;     ///< TVM `cooldown_interval` (s)
    /// Flush every argument but the first before each repeat. As TVM's LocalRunner does, a flushed
    /// kernel is then timed one call per repeat (number 1, min_repeat_ms 0: the calls after the first
    /// would find the caches warm again), and over max(repeat, flushRepeat) repeats.
    bool enableCpuCacheFlush = false;
    /// The fewest repeats of a flushed kernel: one call right after a flush is one sample, and TVM's
    /// tutorials pair the flush with repeat 10.
    int flushRepeat = 10;
    /// Time only the slices of a round in which no thread of the worker was preempted (timer.h
    /// TimerOptions::rejectPreempted); a candidate timed with a cache flush is timed whole.
    bool rejectPreempted = false;
    /// How long the screening part of a measurement lasts (ms; timer.h TimerOptions::screenMs); it
    /// applies to candidates whose MeasureInput::screenAboveS is set.
    double screenMs = 10;
    /// Time each round as the fastest of this many slices (timer.h TimerOptions::slices; 1 = TVM's
    /// mean over the round). Not with rejectPreempted.
    int slices = 1;
    int numThreads = 0;               ///< worker thread-pool size (TB_NUM_THREADS); 0 = all cores
    uint64_t seed = 0;                ///< random input seed
    /// Worker executable; empty = $TB_WORKER_PATH, else the tunebench-worker built with the engine,
    /// else `tunebench-worker` next to the running executable.
    std::string workerPath;
};

class LocalRunner : public ProgramRunner {
public:
    /// Throws tb::UserError when the worker executable cannot be found.
    explicit LocalRunner(RunnerOptions options = {});
    ~LocalRunner() override;
    LocalRunner(const LocalRunner&) = delete;
    LocalRunner& operator=(const LocalRunner&) = delete;

    std::vector<MeasureResult> run(const std::vector<MeasureInput>& inputs, const std::vector<BuildResult>& builds) override;
    /// Run one built kernel (args sized from kernel.argElements). `cacheFlush` overrides
    /// options().enableCpuCacheFlush for this kernel (MeasureInput::cacheFlush); nullopt keeps it.
    /// abandonAboveS and screenAboveS as MeasureInput's; `flushArgs` the arguments a flush evicts
    /// (MeasureInput::flushArgs: empty = every argument but the first). An index out of range is
    /// an InternalError.
    MeasureResult runOne(const codegen::CompiledKernel& kernel, const CheckSpec* check = nullptr,
                         std::optional<bool> cacheFlush = std::nullopt, double abandonAboveS = 0,
                         double screenAboveS = 0, const std::vector<int>& flushArgs = {});

    const RunnerOptions& options() const { return m_options; }
    /// How many worker processes were started so far (1 + restarts).
    int workersStarted() const { return m_started; }
    /// Pid of the live worker, or -1.
    pid_t workerPid() const { return m_pid; }

private:
    void startWorker();
    /// Kill (if alive) and reap the worker; returns a description of how it ended.
    std::string stopWorker(bool kill);

    RunnerOptions m_options;
    long long m_batches = 0;  // batches run (MeasureEvent::batch)
    pid_t m_pid = -1;
    int m_fd = -1;
    int m_started = 0;
};

}  // namespace tb::measure
