// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file measure.h
/// \brief Measuring candidate programs: inputs, results, error codes, hardware parameters and the
/// builder/runner interfaces (TVM `auto_scheduler/measure.h` + `python/.../measure.py`,
/// REFERENCE-TVM §4).
///
/// A candidate is a lowered function (lower/loop_ir.h), an already compiled kernel (object bytes +
/// argument sizes) or a GPU module (source + launches, codegen/gpu_module.h: compiled on the device); the search layer hands a batch of `MeasureInput`s to a `ProgramBuilder`
/// (compiles in parallel: builder.h) and the results to a `ProgramRunner` (times them: a sandboxed
/// worker process for LocalRunner, local_runner.h; an RPC device later). The search never needs to
/// know LLVM: it only sees these value types.
///
/// Failures are data, never exceptions of the caller (DESIGN.md decision 2): every input gets
/// exactly one BuildResult and one MeasureResult, with `errorNo` from `MeasureErrorNo` (TVM's
/// numbering, identical in auto_scheduler and AutoTVM) and a message. Failed results carry the cost
/// `kMaxFloat` (1e10) as TVM's.
///
/// How to add a new runner: implement ProgramRunner::run so that it returns one result per input in
/// order, maps every failure to an error code, and never lets a candidate crash the caller.

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "engine/codegen/codegen_llvm.h"
#include "engine/codegen/gpu_module.h"
#include "engine/codegen/target.h"
#include "engine/lower/loop_ir.h"
#include "engine/measure/check_blob.h"
#include "engine/support/hardware_params.h"

namespace tb::measure {

/// TVM's MeasureErrorNO (auto_scheduler measure.h ~57, autotvm measure.py ~68).
enum class MeasureErrorNo : int {
    NoError = 0,
    InstantiationError = 1,  ///< the schedule could not be replayed / lowered
    CompileHost = 2,         ///< host compilation failed
    CompileDevice = 3,       ///< loading the module or setting up the timer failed
    RuntimeDevice = 4,       ///< crash or detected memory error while running
    WrongAnswer = 5,         ///< output differs from the reference
    BuildTimeout = 6,
    RunTimeout = 7,
    UnknownError = 8,
};
/// "NO_ERROR", "INSTANTIATION_ERROR", "COMPILE_HOST", ... (TVM's names).
const char* errorName(MeasureErrorNo e);

/// The cost assigned to failed measurements (TVM's MAX_FLOAT = 1e10 seconds).
inline constexpr double kMaxFloat = 1e10;

/// One candidate to build and run.
struct MeasureInput {
    /// The program to compile (null when `prebuilt` is set).
    std::shared_ptr<const lower::LoweredFunc> func;
    /// An already compiled kernel (the builder passes it through).
    std::shared_ptr<const codegen::CompiledKernel> prebuilt;
    /// A GPU candidate ready to run (OpenCL C or CUDA C source plus its launches: gpu_module.h).
    /// The builder passes it through to BuildResult::gpuModule; GpuLocalRunner (gpu_runner.h) and
    /// an RpcRunner whose devices are GPU servers run it. `func` and `prebuilt` are then null.
    std::shared_ptr<const codegen::GpuModule> gpuModule;
    /// Optional correctness check (the runner then restarts the worker after a wrong answer).
    std::shared_ptr<const CheckSpec> check;
    /// Early abandon and screening against the best cost of the candidate's workload (CPU local
    /// runner; GPU and RPC runners ignore them). The reference is the smaller of bestCostS (the
    /// task's best mean cost before this batch, seconds; 0 = none yet) and the best result the
    /// runner has seen for this workload key earlier in the same batch, so that a task's first
    /// batch is screened as well. With a reference:
    ///   - abandonFactor > 0: a candidate whose first timed call takes longer than abandonFactor x
    ///     the reference stops there; that call is its only cost (timer.h abandonAboveS);
    ///   - screenFactor > 0: a candidate whose first RunnerOptions::screenMs of timing run slower per
    ///     call than screenFactor x the reference stops there; that time is its only cost (timer.h
    ///     screenAboveS). The measurer sets all three (tuning/program_measurer.h).
    double bestCostS = 0;
    double abandonFactor = 0;
    double screenFactor = 0;
    /// The task's measurement policy (tuning/measure_policy.h): flush the CPU caches before each
    /// repeat (true) or not (false), overriding the runner's enable_cpu_cache_flush; nullopt = the
    /// runner's setting. CPU runners only (local sandbox, RPC); GPU runners ignore it.
    std::optional<bool> cacheFlush;
    /// The arguments the flush evicts (SearchTask::flushArgs): empty = every argument but the
    /// first (TVM's cache_flush_cpu_non_first_arg). The local runner only; RPC runners flush as
    /// TVM's remote timer does.
    std::vector<int> flushArgs;
    /// Opaque identification for logs and records: the workload key and the state's text.
    std::string workloadKey;
    std::string stateText;
};

/// A device program that is neither host code nor a GPU module: bytes uploaded as they are under a
/// name ending in `suffix`, then run without a function name or arguments; the device reads what to
/// do from the bytes (the VTA program of vta/vta_program.h, run by measure/vta_sim_executor.h).
struct DeviceProgram {
    std::string suffix;  ///< e.g. ".vta.json"
    std::string bytes;
};

/// The builder's output for one input (TVM BuildResult).
struct BuildResult {
    std::shared_ptr<const codegen::CompiledKernel> kernel;  ///< null on error and for GPU candidates
    /// A GPU candidate's module (MeasureInput::gpuModule); null on error and for CPU candidates.
    std::shared_ptr<const codegen::GpuModule> gpuModule;
    /// A device program (set by whoever builds it, e.g. autotvm/vta_tune.h; RpcRunner uploads it).
    std::shared_ptr<const DeviceProgram> program;
    MeasureErrorNo errorNo = MeasureErrorNo::NoError;
    std::string errorMsg;
    double timeCost = 0;  ///< build wall time (s)
};

/// The runner's output for one input (TVM MeasureResult).
struct MeasureResult {
    std::vector<double> costs;  ///< seconds per call, one per repeat; {kMaxFloat} on error
    MeasureErrorNo errorNo = MeasureErrorNo::NoError;
    std::string errorMsg;
    double allCost = 0;    ///< wall time spent on this candidate: build + load + run (s)
    double timestamp = 0;  ///< seconds since the Unix epoch when the result was produced
    /// Counters of the device for this run, by name (the VTA simulator's TVM stats() names:
    /// inp_load_nbytes, ..., alu_counter); empty for devices without counters and on error. Not
    /// part of TVM's MeasureResult: never written to records.
    std::map<std::string, std::uint64_t> deviceCounters;

    /// Mean of costs (s); kMaxFloat on error.
    double meanCost() const;
    bool ok() const { return errorNo == MeasureErrorNo::NoError; }
};

/// The hardware parameters a task for `target` is tuned with when the user gives none (TVM
/// `HardwareParamsNode::GetDefaultHardwareParams`, search_task.cc; the table in
/// support/hardware_params.h). For CPU (llvm) targets: numCores = -num-cores or this machine's
/// hardware threads, vectorUnitBytes = Target::vectorBits()/8 (64 with AVX-512, 32 with AVX2, 16
/// for NEON; TVM writes 64 for every CPU), cacheLineBytes = 64, the GPU fields 0. GPU targets:
/// Target::gpuHardwareParams() (Mali: HardwareParams::mali(); CUDA/OpenCL: HardwareParams::gpu of
/// the target's attributes, where TVM would query device 0). Throws tb::UserError for a target
/// kind without defaults.
HardwareParams defaultHardwareParams(const codegen::Target& target);

/// One step of one candidate on one machine, for live views of a device fleet (the window's
/// timeline) and logs: a build on this machine, an upload to a device, a run on a device. TVM has
/// no such hook (its RPCRunner only reports whole batches); it exists so that a fleet of boards can
/// be watched while it measures. Builders and runners report events through a MeasureEventSink
/// when one is set; nothing in the engine depends on them.
struct MeasureEvent {
    enum class Kind {
        Started,     ///< the step began (startTime set)
        Finished,    ///< the step ended (startTime, endTime, errorNo, message set)
        DeviceLost,  ///< the device broke off (message says how); its in-flight candidate gets an error record
    };
    enum class Phase {
        Build,   ///< compiling on this machine (device "host", deviceKey "builder")
        Upload,  ///< preparing (linking) and uploading the module to the device
        Run,     ///< loading and timing on the device
    };
    Kind kind = Kind::Started;
    Phase phase = Phase::Run;
    long long batch = 0;      ///< the builder's / runner's batch counter (1, 2, ...)
    int candidate = -1;       ///< index into the batch; -1 for DeviceLost
    std::string workloadKey;  ///< MeasureInput::workloadKey of the candidate (empty for DeviceLost)
    std::string device;       ///< "host:port" of an RPC device, "local sandbox", or "host" for builds
    std::string deviceKey;    ///< the device's key, e.g. "rasp4b-64"; "local" / "builder" for this machine
    double startTime = 0;     ///< seconds since the Unix epoch (nowTimestamp)
    double endTime = 0;       ///< Finished and DeviceLost: seconds since the Unix epoch
    MeasureErrorNo errorNo = MeasureErrorNo::NoError;
    std::string message;      ///< the error message (Finished with an error, DeviceLost)
};

/// Receives MeasureEvents. Called on the builder's or runner's own threads (the RPC runner's
/// worker threads), so it must be thread safe and quick; exceptions it throws are swallowed.
using MeasureEventSink = std::function<void(const MeasureEvent&)>;

/// The event hook builders and runners share.
class MeasureEventSource {
public:
    /// Sets (an empty function: clears) the observer. Call it between batches, not during one.
    void setEventSink(MeasureEventSink sink) { m_eventSink = std::move(sink); }

    /// Slices of one batch. A pipelined measurer (tuning::ProgramMeasurer with a pipeline slice)
    /// hands a batch to the builder and the runner in consecutive pieces, so that one piece is timed
    /// while the next is compiled. Observers must still see one batch: before each piece the measurer
    /// calls beginSlice(index of the piece's first candidate in the batch), and endSlices() after the
    /// last one. Events then carry the candidate's index in the whole batch and the batch number of
    /// the first piece, although each piece is a build()/run() call of its own (which advances the
    /// implementation's batch counter). Call them between calls, as setEventSink.
    void beginSlice(int firstCandidate) {
        if (firstCandidate > 0) ++m_batchShift;  // this call continues the batch the previous one began
        m_candidateOffset = firstCandidate;
    }
    void endSlices() { m_candidateOffset = 0; }

protected:
    ~MeasureEventSource() = default;
    bool hasEventSink() const { return bool(m_eventSink); }
    /// One Run step on this machine (deviceKey "local"): emits Started, calls `run`, emits
    /// Finished with the result's error, and returns the result.
    MeasureResult runStep(long long batch, int candidate, const std::string& workloadKey, const std::string& device,
                             const std::function<MeasureResult()>& run) const;
    /// Calls the sink, if any; an observer's bug never ends a batch.
    void emitEvent(const MeasureEvent& e) const noexcept {
        if (!m_eventSink) return;
        try {
            if (m_batchShift == 0 && m_candidateOffset == 0) {
                m_eventSink(e);
            } else {
                MeasureEvent sliced = e;  // see beginSlice
                sliced.batch -= m_batchShift;
                if (sliced.candidate >= 0) sliced.candidate += m_candidateOffset;
                m_eventSink(sliced);
            }
        } catch (...) {
        }
    }

private:
    MeasureEventSink m_eventSink;
    long long m_batchShift = 0;  // calls that continued a batch so far (beginSlice)
    int m_candidateOffset = 0;   // index of the current call's first candidate in its batch
};

/// Compiles batches of candidates (TVM ProgramBuilder).
class ProgramBuilder : public MeasureEventSource {
public:
    virtual ~ProgramBuilder() = default;
    /// One BuildResult per input, in order. Never throws for a bad candidate.
    virtual std::vector<BuildResult> build(const std::vector<MeasureInput>& inputs) = 0;
};

/// Times batches of built candidates (TVM ProgramRunner).
class ProgramRunner : public MeasureEventSource {
public:
    virtual ~ProgramRunner() = default;
    /// One MeasureResult per input, in order; build errors are passed through.
    virtual std::vector<MeasureResult> run(const std::vector<MeasureInput>& inputs,
                                           const std::vector<BuildResult>& builds) = 0;
};

/// Seconds since the Unix epoch (MeasureResult::timestamp).
double nowTimestamp();

}  // namespace tb::measure
