// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file build_module.h
/// \brief Compiling a whole network with its tuned schedules: TVM's `relay.build` under
/// `auto_scheduler.ApplyHistoryBest(log)` (REFERENCE-TVM §5.1), and the compiled module it returns
/// (graph executor, benchmark, export).
///
/// This is the end of the tuning pipeline (DESIGN.md §1): the log says how fast every task *can*
/// run; this file makes the network actually run that fast. The steps, in order:
///   1. The graph goes through the same passes as task extraction (graph::optimizeForTasks with the
///      target's layout options) and is partitioned by graph::fuseOps, so every fused group's te
///      DAG, and so its workload key, is exactly the task the tuner saw.
///   2. Every group (reductions and injective glue alike) is lowered to a DAG (graph::lowerGroup).
///      Groups with identical DAGs share one kernel.
///   3. Each distinct DAG looks up the best valid record of its workload key for the target
///      (record::HistoryBest, TVM ApplyHistoryBest); its steps are replayed (replaySteps), bounds
///      inferred and the state lowered (lower::lowerState). A group without a record, or whose
///      record fails to replay, gets the default schedule (default_schedule.h), and if even that
///      fails, the unscheduled lowering (lower::lowerComputeDag). The report says which.
///   4. Kernels are compiled in parallel by codegen (through its kernel cache) and loaded in
///      process.
///   5. Tensors are placed by the static memory plan (memory_plan.h), constants are copied into
///      their storages once, and a GraphRuntime (graph_runtime.h) runs the kernels in order.
///
/// Threads: kernels run their parallel loops on ThreadPool::global() (TB_NUM_THREADS); build()
/// also compiles on it.

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "engine/graph/graph.h"
#include "engine/runtime/benchmark.h"
#include "engine/search/default_schedule.h"
#include "engine/runtime/graph_json.h"
#include "engine/runtime/graph_runtime.h"
#include "engine/te/interpreter.h"

namespace tb::codegen {
struct CompiledKernel;
class LoadedKernel;
struct GpuModule;
}  // namespace tb::codegen

namespace tb::runtime {

struct BuildOptions {
    /// TVM target string. Empty: this machine, `llvm -keys=cpu -mcpu=<host cpu>` (what
    /// `tunebench-cli tune` tunes for). Must run on this machine unless `load` is false.
    std::string target;
    /// true: load the kernels in process, so the module runs here. false: compile only (TVM's
    /// cross-compiling relay.build, e.g. for `llvm -mtriple=aarch64-linux-gnu -mattr=+neon`): the
    /// module can be exported (and its library run on a device), not run here.
    bool load = true;
    /// Tuning log; empty: no records, every group gets a default. Its format is told by its lines
    /// (record::detectLogFormat): auto_scheduler records (TVM v0.2-v0.6 lines) are applied as
    /// auto_scheduler.ApplyHistoryBest does; AutoTVM records (v0.2) as autotvm.apply_history_best
    /// (autotvm/apply_history_best.h): NCHW convs become conv2d_NCHWc blocked by their configs and
    /// are scheduled by the conv2d_NCHWc.x86 template, dense ops computed and scheduled by
    /// dense_pack.x86 or dense_nopack.x86, each with the best record's config or, without one,
    /// the template's fallback config (reported as default). On an arm_cpu target the arm_cpu
    /// templates, on a Mali target (`opencl -device=mali`) the Mali templates schedule the convs
    /// and dense ops, each group lowered for the GPU by its template (apply_history_best.h).
    std::string logPath;
    /// ApplyHistoryBest include_compatible: use a record of the same DAG hash whose shapes divide
    /// ours when no exact record exists.
    bool includeCompatible = false;
    /// Groups without a record: true = default_schedule.h, false = the unscheduled lowering.
    bool defaultSchedules = true;
    /// false: no winograd rewrite of NHWC 3x3 convolutions (graph::AlterLayoutOptions::winograd).
    /// true: TVM's rule, except where the log holds a faster record for a convolution's direct
    /// conv2d task than for its winograd task (or the only one): that one is compiled direct
    /// (BuildReport::winogradChoice), so a log tuned with --no-winograd, or merged from both, needs
    /// no flag here.
    bool winograd = true;
    search::DefaultScheduleOptions defaults;  ///< vectorLanes is overridden by the target's vector width
    /// CPU targets: a tuned kernel whose record was timed with its weights in a rewritten layout
    /// (task layout_rewrite_option 1 or 2, schedule/layout_rewrite.h) reads them in that layout: its
    /// constant weights are transformed once here, at compile time (TVM's AutoSchedulerLayoutRewrite).
    /// Default schedules read their constant weights rewritten the same way (into their tiles' loop
    /// order). false: every kernel reads the original layouts.
    bool layoutRewrite = true;
};

/// Where a kernel's schedule came from.
enum class ScheduleSource { Tuned, Default, Unscheduled };
/// "tuned", "default", "unscheduled".
const char* scheduleSourceName(ScheduleSource s);

/// One distinct kernel of the compiled network.
struct KernelReport {
    std::string symbol;          ///< exported entry symbol
    std::string funcName;        ///< TVM's fused function name, e.g. "fused_nn_conv2d_add_nn_relu"
    std::string workloadKey;     ///< TVM workload key of the group's DAG
    ScheduleSource source = ScheduleSource::Default;
    std::string note;            ///< why not tuned, when a record existed but failed (empty otherwise)
    double recordMs = -1;        ///< mean cost of the record used (ms), -1 if none
    double flop = 0;             ///< FLOPs of one call (TVM FlopEstimator), 0 if unknown
    bool hasReduce = false;      ///< the DAG has a reduction (it is a tuning task)
    int calls = 0;               ///< graph nodes that call it
    int steps = 0;               ///< transform steps of the schedule (0 for unscheduled)
    /// AutoTVM logs: the template and config that scheduled it ("conv2d_NCHWc.x86 #123", or
    /// "conv2d_NCHWc.x86 fallback"); empty for a kernel that is no AutoTVM workload.
    std::string autotvmConfig;
    double compileSeconds = 0;   ///< LLVM time (0 on a kernel-cache hit)
    /// The weights the kernel reads pre-transformed, as `<placeholder> <original layout> -> <new
    /// layout>` (TVM's layout strings, `;`-separated); empty when none.
    std::string layoutRewrite;
};

struct BuildReport {
    std::string target;          ///< the target string used
    /// Per convolution that TVM's rule rewrites to winograd (in graph order): kept winograd (true)
    /// or compiled direct (false) because the log's record of its direct conv2d task is faster (or
    /// the only one). Empty: the rule for every convolution (no log, or the log agrees with it).
    std::vector<bool> winogradChoice;
    int graphNodes = 0;          ///< nodes of the optimized graph
    int groups = 0;              ///< fused groups = kernel calls per run
    int tunedCalls = 0, defaultCalls = 0, unscheduledCalls = 0;  ///< groups by schedule source
    std::string logFormat = "no";  ///< "auto_scheduler", "autotvm", "unknown" or "no" (no log)
    int logRecords = 0;          ///< records read from the log (valid or not)
    int logBadLines = 0;         ///< unparsable lines of the log
    int64_t plannedBytes = 0;    ///< intermediate storage after memory planning (bytes)
    int64_t naiveBytes = 0;      ///< intermediate storage with one buffer per tensor (bytes)
    int64_t paramBytes = 0;      ///< constants (bytes)
    /// Bytes of the loaded network's tensors (constants and intermediates) that the kernel backs
    /// with 2 MiB huge pages (support/huge_page_arena.h); -1 when not loaded or not known.
    int64_t hugePageBytes = -1;
    double passSeconds = 0, lowerSeconds = 0, compileSeconds = 0, loadSeconds = 0;  ///< wall time
    std::vector<KernelReport> kernels;  ///< distinct kernels, in order of first call

    /// A readable multi-line summary: counts, memory, and one line per kernel (source, calls,
    /// record cost), untuned reduction kernels flagged.
    std::string text() const;
};

struct GpuNetworkState;
}  // namespace tb::runtime
namespace tb::gpu {
struct GpuMeasureOptions;
struct GpuMeasureResult;
}  // namespace tb::gpu
namespace tb::runtime {

/// A compiled network, loaded and ready to run (TVM's GraphModule).
///
/// GPU targets (`cuda`, `opencl`): the network is one codegen::GpuModule (gpuModule()): every fused
/// group's kernels, launched in execution order over the buffers of the memory plan, the inputs,
/// params and outputs first (its arguments: gpuArgumentNodes()). run() and benchmark() open the
/// first device of the target's API on this machine (measure/gpu_device.h: PoCL or an NVIDIA GPU)
/// in tunebench-gpu-worker (measure/gpu_worker_client.h), which compiles the source, copies the
/// params and inputs and times with device events; a device elsewhere gets gpuModule() through a
/// GPU device server (network_eval.h runGpuNetworkOnDevice).
class CompiledModule {
public:
    ~CompiledModule();
    CompiledModule(CompiledModule&&) noexcept;
    CompiledModule& operator=(CompiledModule&&) noexcept;

    const BuildReport& report() const { return m_report; }
    /// False for a module built with BuildOptions::load = false (cross-compiled). GPU modules are
    /// runnable when this machine has a device of their API (found at the first run()).
    bool runnable() const { return m_runtime != nullptr || m_gpu != nullptr; }
    /// GPU targets: the whole network as one GPU module (see the class comment); null otherwise.
    const codegen::GpuModule* gpuModule() const;
    /// GPU targets: the exec node (graph()) of each argument buffer of gpuModule(), in order.
    const std::vector<int>& gpuArgumentNodes() const;
    /// The constants by param name (`p0`, ...), float32.
    const std::map<std::string, NamedArray>& params() const { return m_params; }
    /// The graph executor. Throws UserError for a module that is not runnable().
    GraphRuntime& runtime();
    const ExecGraph& graph() const { return m_runtime ? m_runtime->graph() : m_graph; }

    /// Sets the inputs (in the network's input order; each buffer's shape must equal the input's),
    /// runs once and returns the outputs. Throws UserError on a wrong count or shape.
    std::vector<te::Buffer> run(const std::vector<te::Buffer>& inputs);

    /// TVM `module.benchmark(dev, repeat=, number=, min_repeat_ms=)`: the time evaluator of
    /// measure/timer.h around one run() (inputs as last set). Times in seconds.
    BenchmarkResult benchmark(int repeat = 5, int number = 5, double minRepeatMs = 0);

    /// The compiled kernels (same order as report().kernels): objects, lowered IR text.
    const std::vector<std::shared_ptr<const codegen::CompiledKernel>>& kernels() const { return m_kernels; }

    /// Writes `dir/deploy_lib.so` (every kernel's object linked with ld.lld, or clang/cc -shared),
    /// `dir/deploy_graph.json` (graph_json.h) and `dir/deploy_param.params`. Creates `dir`.
    /// Throws UserError when the directory cannot be written or no linker works (the message
    /// carries the linker's output).
    void exportLibrary(const std::string& dir) const;

private:
    friend CompiledModule build(const graph::Graph& g, const BuildOptions& options);
    CompiledModule();
    BuildReport m_report;
    std::vector<std::shared_ptr<const codegen::CompiledKernel>> m_kernels;  // distinct kernels
    std::vector<std::unique_ptr<codegen::LoadedKernel>> m_loaded;
    std::map<std::string, NamedArray> m_params;
    std::unique_ptr<GraphRuntime> m_runtime;
    ExecGraph m_graph;  // the executable graph of a module that is not runnable(), or a GPU module's
    std::unique_ptr<GpuNetworkState> m_gpu;  // GPU targets only
    gpu::GpuMeasureResult runGpu(const gpu::GpuMeasureOptions& o, bool returnOutputs) const;
};

/// Compiles `g` (see the file comment). Throws UserError for a target that does not run here (unless
/// options.load is false), an unreadable log, or an operator without a te lowering (naming it);
/// InternalError on a bug.
CompiledModule build(const graph::Graph& g, const BuildOptions& options = {});

/// The host target string build() uses by default: `llvm -keys=cpu -mcpu=<host cpu>`.
std::string hostTargetString();

/// max |got - want| / max |want| over n values (0 when both are all zero, +inf when only want is).
double relativeMaxError(const float* got, const float* want, size_t n);

}  // namespace tb::runtime
