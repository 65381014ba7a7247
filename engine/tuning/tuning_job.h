// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file tuning_job.h
/// \brief A tuning job as one value (what to tune, for which target, how to measure, how to
/// search), and the one function that turns it into the wired engine objects.
///
/// TVM's tune_network tutorial assembles a job by hand: `extract_tasks(mod, params, target)`, a
/// `LocalRunner` or `RPCRunner(key, host, port, number, repeat, min_repeat_ms,
/// enable_cpu_cache_flush, timeout)`, `TuningOptions(num_measure_trials, runner,
/// measure_callbacks=[RecordToFile(log)])` and `TaskScheduler(tasks, task_weights,
/// load_log_file=log).tune(tune_option)`. Here the CLI (`tunebench-cli tune`), the window's worker
/// and bench_cost_model describe their job with a `TuningJob` and call `buildTuner`, so the three
/// cannot drift apart: every field below is a `tune` option, and the window's session panel sets
/// the same fields. The result (`Tuner`) owns the builder, the runner, the record writer, the
/// measurer (TVM ProgramMeasurer), the cost model, one sketch policy per task and the task scheduler
/// (NetworkTuner), wired as TVM's TaskScheduler.tune wires them, plus LogEstimatedLatency.
///
/// Driving stays with the caller (DESIGN.md §3.3): `tuner->network().tune()` runs everything,
/// `step()` one round; the caller adds its observers and scheduler callbacks (PrintTableInfo, the
/// GUI) before the first round.

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "engine/codegen/target.h"
#include "engine/graph/graph.h"
#include "engine/measure/measure.h"
#include "engine/record/record_io.h"
#include "engine/schedule/layout_rewrite.h"
#include "engine/support/hardware_params.h"
#include "engine/tuning/measure_policy.h"
#include "engine/tuning/network_tuner.h"
#include "engine/tuning/program_measurer.h"

namespace tb::tuning {

/// Where a job's network comes from (`--network NAME | --onnx FILE`, `--batch`, `--layout`,
/// `--shape`, `--no-winograd`).
struct NetworkSource {
    std::string zooName = "mobilenet";  ///< a graph::networkNames() name; unused when onnxPath is set
    std::string onnxPath;               ///< an ONNX model file; takes precedence over zooName
    std::vector<std::string> shapes;    ///< ONNX input bindings, "name=1,3,224,224" (graph::parseShapeMap)
    int64_t batch = 1;                  ///< zoo networks only
    std::string layout = "NHWC";        ///< "NHWC" (ONNX models are converted) or "NCHW"
    /// false keeps NHWC 3x3 convolutions direct where TVM rewrites them to winograd (TaskExtractionOptions::winograd).
    bool winograd = true;
    /// With `winograd`: also tune, beside each winograd task, the direct conv2d task of the same
    /// convolutions (TaskExtractionOptions::winogradAlternatives; `--winograd-or-direct`); the
    /// compiler then runs whichever has the faster record, per convolution.
    bool winogradAlternatives = false;
    bool operator==(const NetworkSource&) const = default;
};

/// The graph `source` names: the zoo network at `batch` in `layout`, or the ONNX model with
/// `shapes` bound (converted to NHWC when layout is NHWC; `shapes` are ignored for zoo networks).
/// Throws tb::UserError naming the bad field (batch < 1, unknown layout or network, unreadable
/// model, malformed shape).
graph::Graph loadNetwork(const NetworkSource& source);
/// "mobilenet", or the ONNX file's base name without extension (messages).
std::string networkName(const NetworkSource& source);

/// How candidates are timed: TVM's LocalRunner (a sandbox process here) or RPCRunner (a device of
/// `key` from the tracker at trackerHost:trackerPort). Timing fields are TVM's runner arguments.
struct RunnerConfig {
    enum class Kind { Local, Rpc };
    Kind kind = Kind::Local;
    std::string trackerHost = "127.0.0.1";  ///< rpc only
    int trackerPort = 9190;                 ///< rpc only
    std::string key;                        ///< device key, e.g. "rasp4b-64"; rpc only (required)
    double timeoutS = 10;                   ///< per candidate: load + check + timing (s)
    int number = 3;                         ///< runs per measurement (TVM `number`)
    int repeat = 1;                         ///< measurements per candidate (TVM `repeat`)
    int minRepeatMs = 100;                  ///< TVM `min_repeat_ms`: raise `number` until one measurement lasts this long
    /// TVM `enable_cpu_cache_flush`, per task: on/off for every task, or auto (the default): flush
    /// for the tasks whose data does not stay in the last-level cache (measure_policy.h).
    CacheFlushMode cacheFlush = CacheFlushMode::Auto;
    double trackerRetryTimeoutS = 60;       ///< rpc: give up on an unreachable tracker after this long (s)
    /// Local CPU runner: candidates per pipeline slice (ProgramMeasurer::setPipelineSlice; 0 = none,
    /// TVM's build-all-then-run-all). Ignored by the RPC and GPU runners, which keep whole batches.
    int pipelineSlice = 0;
    /// Local CPU runner: stop timing a candidate whose first call is this many times slower than
    /// the task's best so far (ProgramMeasurer::setAbandonFactor; 0 = off, TVM's behaviour).
    double abandonFactor = 2.5;
    /// Local CPU runner: time every candidate for screenMs first, and to min_repeat_ms only those
    /// within this factor of the task's best so far (ProgramMeasurer::setScreen; 0 = off, TVM's).
    /// On by default: resnet-18's conv tuned 13-35% more trials per second with it, at the same
    /// best kernel after 256 trials within the run-to-run spread (bench/search/throughput.sh). 1.1
    /// rather than 1.2 since 2026-11-30: late in a run most candidates land within 1.2x of the best
    /// (29% of mobilenet's 6000 trials fell in [1.05, 1.2) against 1.7% that improved it), and
    /// mobilenet_v1, 3000 trials, tuned 14% faster (345 s against 402 s) to a network of the same
    /// latency within the host's noise (README).
    double screenFactor = 1.1;
    double screenMs = 10;  ///< the screening part of a measurement (ms; RunnerOptions::screenMs)
    /// Local CPU runner: count only the timing slices in which no worker thread was preempted
    /// (timer.h TimerOptions::rejectPreempted). Tasks whose policy flushes the caches are timed whole.
    bool rejectPreempted = false;
    /// Local CPU runner: each round's result is the fastest of this many slices of min_repeat_ms
    /// (timer.h TimerOptions::slices, which gives the measurements; 1 = TVM's mean over the round).
    int slices = 1;
    bool operator==(const RunnerConfig&) const = default;
};

/// Everything a tuning run needs. Defaults are `tunebench-cli tune`'s (= TVM's where TVM has one).
struct TuningJob {
    NetworkSource network;
    /// TVM target string, e.g. "llvm -mcpu=znver4"; empty = this CPU (resolveTarget).
    std::string target;
    /// The host target of a GPU target (TVM `Target(target, host=...)`, `--target-host`), e.g.
    /// "llvm -mtriple=aarch64-linux-gnu" for a Mali board; empty = the one inside `target`, if any.
    std::string targetHost;
    /// Hardware the search assumes and the records carry; nullopt = measure::defaultHardwareParams(target).
    std::optional<HardwareParams> hardware;
    RunnerConfig runner;
    /// Search: trials, measures per round, early stopping, scheduler strategy, seed (also the
    /// runner's input seed), cost model ("xgb"/"random"), default-schedule seeding, policy params.
    TuneOptions search;
    /// Tune only these tasks, by index in extraction order (`--tasks 2,5`); empty = every task.
    std::vector<int> taskIds;
    /// Measure-record log (TVM v0.6 lines, appended and flushed per record); empty = no records.
    std::string logPath;
    /// Continue from the records already in logPath (counts, best costs, cost model, measured sets).
    bool resume = false;
    /// TVM LogEstimatedLatency file (one line per round); empty = none.
    std::string latencyLogPath = "total_latency.tsv";
    /// The tasks' layout rewrite (schedule/layout_rewrite.h, `--layout-rewrite 0|2`); nullopt = TVM's
    /// choice for tasks from a network (LayoutRewriteOption.get_target_default(target, True)):
    /// RewriteForPreTransformed on CPU targets, NoRewrite on GPUs (our GPU lowering has no rewrite).
    std::optional<LayoutRewriteOption> layoutRewrite;
};

/// A job's target: `text` parsed (tb::UserError for a bad string), or this CPU when empty, and the
/// string written into the records: `text` itself, or "llvm -keys=cpu -mcpu=<this CPU>". A non-empty
/// `host` is the target host (codegen::Target::parse(text, host)); records leave it out, as TVM's do.
struct ResolvedTarget {
    codegen::Target target;
    std::string recordString;
};
ResolvedTarget resolveTarget(const std::string& text, const std::string& host = {});

/// The runner a RunnerConfig describes: the local sandbox runner (the target must run here) or the
/// RPC runner through the tracker (measure/rpc_runner.h). `seed` seeds the local runner's inputs.
/// Throws tb::UserError for bad timing values, a missing device key or a bad tracker port. Shared
/// by buildTuner and AutoTVM's tune command.
std::unique_ptr<measure::ProgramRunner> makeRunner(const RunnerConfig& rc, const ResolvedTarget& target,
                                                   uint64_t seed);

/// The engine objects of one job, built by buildTuner. Not copyable; members die in reverse order
/// of construction (the scheduler first, the runner's sandbox and the log writer last).
class Tuner {
public:
    ~Tuner();
    Tuner(const Tuner&) = delete;
    Tuner& operator=(const Tuner&) = delete;

    const TuningJob& job() const { return m_job; }
    const ResolvedTarget& target() const { return m_target; }
    /// What the tasks carry (the job's, or the target's defaults).
    const HardwareParams& hardware() const { return m_hardware; }
    /// The layout rewrite every task carries (the job's, or the target's default).
    LayoutRewriteOption layoutRewrite() const { return m_layoutRewrite; }
    /// Tasks the network has, and the extraction index of each task tuned (NetworkTuner's order).
    int extractedTasks() const { return m_extracted; }
    const std::vector<int>& taskIndices() const { return m_taskIndices; }

    measure::ProgramBuilder& builder() { return *m_builder; }
    measure::ProgramRunner& runner() { return *m_runner; }
    ProgramMeasurer& measurer() { return *m_measurer; }
    const ProgramMeasurer& measurer() const { return *m_measurer; }
    NetworkTuner& network() { return *m_network; }
    const NetworkTuner& network() const { return *m_network; }
    /// What resume found in the log (job.resume); nullopt when the job did not resume.
    const std::optional<ResumeStats>& resumeStats() const { return m_resume; }
    /// The runner as built, in one line for logs, e.g. "local sandbox (16-lane FMAs): number 3,
    /// repeat 1, min_repeat_ms 100, timeout 10 s, cache flush on" (read back from the runner object;
    /// with --cache-flush auto "cache flush auto: 22 of 22 tasks flushed, LLC 50.3 MB measured (sysfs
    /// 503.3 MB)"). A local runner's line names the full-rate FMA width the cost model assumes
    /// (TuneOptions::fmaLanes) and, when it flushes any task, how a flushed kernel is timed ("(a flushed
    /// kernel: number 1, repeat 10, min_repeat_ms 0)", RunnerOptions::enableCpuCacheFlush).
    std::string runnerSummary() const;
    /// The measurement policy of every tuned task (network().tasks() order), as chosen from
    /// job().runner.cacheFlush; empty for GPU targets (no cache flush there).
    const std::vector<TaskMeasurePolicy>& measurePolicies() const { return m_policies; }

private:
    friend std::unique_ptr<Tuner> buildTuner(const TuningJob& job);
    Tuner() = default;

    TuningJob m_job;
    ResolvedTarget m_target;
    HardwareParams m_hardware;
    LayoutRewriteOption m_layoutRewrite = LayoutRewriteOption::NoRewrite;
    int m_extracted = 0;
    std::vector<int> m_taskIndices;
    std::vector<TaskMeasurePolicy> m_policies;
    std::optional<ResumeStats> m_resume;
    std::unique_ptr<measure::ProgramBuilder> m_builder;
    std::unique_ptr<measure::ProgramRunner> m_runner;
    std::unique_ptr<record::RecordWriter> m_writer;
    std::unique_ptr<ProgramMeasurer> m_measurer;
    std::unique_ptr<LogEstimatedLatency> m_latencyLog;
    std::unique_ptr<NetworkTuner> m_network;
};

/// Builds everything `job` describes: loads the network, extracts its tasks for the target
/// (graph::extractTasks, with job.network.winograd), keeps job.taskIds, fills each task's hardware
/// params and measurement policy (measure_policy.h: this machine's LLC for the local runner,
/// unknown for RPC devices), and creates the LocalBuilder, the runner (local sandbox or RPC), the record writer
/// (append), the ProgramMeasurer, the NetworkTuner (cost model, policies, scheduler) and the
/// LogEstimatedLatency callback; then resumes from the log when job.resume. Slow (task
/// extraction, a sandbox process start). Throws tb::UserError naming the problem: bad network,
/// target or task ID, a network without tasks, a local runner for a target that does not run
/// here, an RPC runner without a key, a bad cost model or strategy option.
std::unique_ptr<Tuner> buildTuner(const TuningJob& job);

}  // namespace tb::tuning
