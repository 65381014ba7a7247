// SPDX-License-Identifier: Apache-2.0
#pragma once
// Plain Qt value types that carry engine results across the session bridge (DESIGN.md §3.5):
// widgets and models only ever see these, never engine types. Copied into queued signals, so
// they are cheap implicitly-shared Qt containers of small structs.

#include <QList>
#include <QMetaType>
#include <QString>
#include <QStringList>

namespace tb::session {

/// One row of the live task-scheduler table.
struct TaskRow {
    int id = -1;
    QString workloadKey;
    QString description;       ///< TVM task description, e.g. "vm_mod_fused_nn_conv2d_add_nn_relu"
    double weight = 1;         ///< occurrences in the network
    double flop = 0;           ///< FLOPs of one run
    double bestMs = -1;        ///< best measured latency in ms; < 0 = none yet
    double gflops = 0;         ///< flop / best / 1e9
    int trials = 0;            ///< measured trials spent on this task
    double share = 0;          ///< weight*best / sum over measured tasks (= the estimated total latency once all are), 0..1
    QString state;             ///< "pending", "tuning", "tuned", "dead"
    bool next = false;         ///< the scheduler's next pick
    /// Measurement policy (engine/tuning/measure_policy.h): "flush" (caches flushed before each
    /// repeat), "warm", or empty when it does not apply (GPU targets).
    QString cacheFlush;
    QString cacheFlushReason;  ///< why, e.g. "flush: network weights 46.8 MB > LLC/4 8.4 MB"
    /// -1, or the id of the winograd task this direct conv2d task is the alternative of
    /// (`--winograd-or-direct`, engine/tuning/network_tuner.h NetworkTask::alternativeOf).
    int alternativeOf = -1;
    bool operator==(const TaskRow&) const = default;
};

/// One measured candidate.
struct MeasureRow {
    int taskId = -1;
    int trial = 0;             ///< global trial index (0-based)
    double costMs = -1;        ///< mean cost in ms; < 0 for an error
    double gflops = 0;
    int errorNo = 0;           ///< TVM MeasureErrorNO 0..8
    QString errorMessage;
    double elapsedS = 0;       ///< seconds since the job started (< 0: before it, for fromLog rows)
    double predicted = 0;      ///< the cost model's score when the candidate was picked
    double allCostS = 0;       ///< wall time the candidate took: build + run (s)
    bool fromLog = false;      ///< read back from the log of an earlier run (resume): no prediction
};

/// A point of the estimated-total-latency curve.
struct LatencyPoint {
    int trials = 0;
    double elapsedS = 0;
    double estimatedMs = -1;   ///< < 0 while some task has no valid measurement
    double partialMs = -1;     ///< sum(weight * best) over the tasks measured so far (< 0: none yet)
    int tasksWithCost = 0;     ///< tasks with a valid measurement
    int tasks = 0;
};

/// A tracker's SUMMARY, flattened.
struct DeviceKeyRow {
    QString key;
    int total = 0, free = 0, pending = 0;
    bool operator==(const DeviceKeyRow&) const = default;
};
struct ServerRow {
    QString address;  ///< "host:port"
    QString key;      ///< "server:<device key>"
    bool operator==(const ServerRow&) const = default;
};
/// What the GPU device servers of one tracker key say about their device (measure::
/// queryRemoteGpuDevice through the tracker, as TVM's `remote.device(...).max_threads_per_block`),
/// for the tracker panel: the search takes its hardware parameters from these when tuning for the key.
struct GpuDeviceRow {
    QString key;                      ///< device key, e.g. "rk3399"
    QString deviceApi;                ///< "opencl" or "cuda"
    /// (name, value) under TVM's names: device_api, device_name, max_threads_per_block, warp_size,
    /// max_shared_memory_per_block, ..., then max_vthread_extent as the search derives it.
    QList<QPair<QString, QString>> attributes;
    QString value(const QString& name) const {
        for (const auto& [n, v] : attributes)
            if (n == name) return v;
        return {};
    }
    bool operator==(const GpuDeviceRow&) const = default;
};
struct DeviceQueueSnapshot {
    QString tracker;  ///< "host:port"
    QList<DeviceKeyRow> keys;
    QList<ServerRow> servers;
    QList<GpuDeviceRow> gpuDevices;  ///< the keys whose servers are GPU device servers (queried once each)
};

/// One step of one candidate on one device (the engine's measure::MeasureEvent on the job's
/// clock), for the fleet timeline: a build on this machine, an upload to a device, a run on it;
/// or a device that broke off.
struct FleetEvent {
    enum Kind { Started, Finished, DeviceLost };
    enum Phase { Build, Upload, Run };
    int kind = Started;
    int phase = Run;
    quint64 jobId = 0;
    int taskId = -1;          ///< the job's task the candidate belongs to; -1: unknown / none
    qint64 batch = 0;         ///< the builder's / runner's batch counter
    int candidate = -1;       ///< index into the batch
    QString device;           ///< "127.0.0.1:9091" (an RPC device), "local sandbox", "host" (builds)
    QString deviceKey;        ///< "rasp4b-64", "local", "builder"
    double startS = 0;        ///< seconds since the job started
    double endS = -1;         ///< Finished / DeviceLost: seconds since the job started; < 0 while running
    int errorNo = 0;          ///< TVM MeasureErrorNO
    QString message;
};

/// A device the window started (session::DeviceFleet): a child process registering with a tracker.
struct FleetDeviceRow {
    int id = -1;
    QString name;             ///< "ARM board 0", "host server 1", "Mali board 0" (English: the engine's names)
    bool arm = false;         ///< an emulated AArch64 board (else a sandboxed host server)
    bool mali = false;        ///< an emulated Mali board: a PoCL GPU device server (scripts/mali-board)
    bool vta = false;         ///< a simulated VTA (rpc-server --device vta): measurements are simulated time
    QString key;              ///< device key
    qint64 pid = -1;          ///< -1 once it ended
    QString ended;            ///< how it ended; empty while running
    QString log;
    bool operator==(const FleetDeviceRow&) const = default;
};

/// A task's compute DAG for the DAG view: stages (in TVM stage order), read edges, texts.
struct DagSnapshot {
    quint64 jobId = 0;            ///< the job it belongs to (late answers of an old job are dropped)
    int taskId = -1;
    QString workloadKey;
    QString description;          ///< the task's description, e.g. "vm_mod_fused_nn_dense_add"
    QStringList stages;           ///< stage names, e.g. "p0", "pad_temp", "conv2d_nhwc"
    QList<bool> isPlaceholder;    ///< per stage
    QStringList stageDetails;     ///< per stage: the stage's line of the full-mode print
    QList<QPair<int, int>> edges; ///< (producer stage, consumer stage)
    QString dagText;              ///< full-mode print, as TVM prints a task's DAG
    QString loopNest;             ///< the best schedule's lowered loop nest (empty until measured)
    QString stateText;            ///< the best state as TVM prints a loop State (empty until measured)
    double bestMs = -1;           ///< the best state's measured latency, < 0 when none
    QString llvmIr;
    QString assembly;
    /// GPU targets: the kernels of the best state (or, untuned, of the GPU default schedule) as
    /// codegen::buildGpuModule emits them, OpenCL C or CUDA C; empty for CPU targets.
    QString kernelSource;
    QString kernelLanguage;       ///< "OpenCL C" or "CUDA C"; empty for CPU targets
    QStringList kernelEntries;    ///< the kernels' entry names, in launch order
    QStringList launches;         ///< per launch: "entry grid=(x, y, z) block=(x, y, z) shared=N B"
    bool kernelFromDefault = false;  ///< the kernels are the default schedule's (no measured state yet)
    QString error;                ///< why lowering or compiling the best state failed (empty: fine)
};

/// What the log inspector shows of one TVM log (auto_scheduler or AutoTVM).
struct LogWorkloadRow {
    QString key;
    QString name;
    int records = 0, valid = 0;
    double bestMs = -1;   ///< < 0: no valid record
    double gflops = -1;   ///< < 0: FLOPs unknown
    QString target;
};
struct LogPoint {
    int record = 0;       ///< 0-based record index in the file
    int workload = 0;     ///< index into workloads
    double costMs = -1;   ///< < 0 for an error
    int errorNo = 0;
};
struct LogSnapshot {
    QString path;
    QString format;       ///< "auto_scheduler", "autotvm"
    int totalLines = 0, records = 0, valid = 0, commentLines = 0;
    QList<QPair<int, int>> errorCounts;       ///< (error_no, count)
    QList<LogWorkloadRow> workloads;
    QList<QPair<int, QString>> badLines;      ///< (line, reason)
    QList<LogPoint> points;
};

/// One workload of two logs side by side (the log inspector's comparison): the same workload as
/// TVM decodes keys (so a flat and a nested key of one workload meet).
struct LogMatch {
    QString key;          ///< as written in log A (in log B when A lacks it)
    int a = -1, b = -1;   ///< index into each log's workloads; -1 = not in that log
};

/// What an earlier run of a job left in its log, in the shapes a live run reports (resume).
/// A compiled network's kernels on the machine's roofline (engine/runtime/kernel_roofline.h), from
/// "Compile && benchmark": one point per kernel (= task) and the two measured roofs.
struct RooflineKernel {
    QString name;              ///< the fused group, e.g. "fused_nn_conv2d_add_nn_relu"
    QString shape;             ///< its output shape, e.g. "1x56x56x128" (tells apart kernels of one name)
    int calls = 0;             ///< calls per network run
    double ms = 0;             ///< time of one call (ms)
    double flop = 0;           ///< FLOPs of one call
    double bytes = 0;          ///< compulsory bytes of one call (inputs + weights + output)
    double gflops = 0;         ///< achieved GFLOP/s
    double intensity = 0;      ///< FLOP per byte
    QString bound;             ///< "compute", "memory" or "unknown"
    double fraction = 0;       ///< achieved / the roof at its intensity (0..1, may exceed 1 for cached data)
    bool operator==(const RooflineKernel&) const = default;
};
struct RooflineSnapshot {
    double peakGflops = 0;     ///< measured FP32 FMA peak (GFLOP/s)
    double bandwidthGBs = 0;   ///< measured triad bandwidth (GB/s)
    int threads = 0;           ///< threads both were measured with (the kernels' pool)
    bool quiet = true;         ///< false: measured on a busy machine only, the roofs may be low
    QList<RooflineKernel> kernels;
    bool operator==(const RooflineSnapshot&) const = default;
};

struct TuningHistory {
    QString path;
    QList<MeasureRow> measurements;   ///< the records of the job's tasks, in file order (fromLog set)
    QList<LatencyPoint> points;       ///< the estimated total latency after each of their rounds
    QString error;                    ///< why the log could not be read (empty: fine)
};

/// Everything needed to start a tuning job from the window: the Qt-side mirror of the engine's
/// tuning::TuningJob (engine/tuning/tuning_job.h), one field per `tunebench-cli tune` option, so
/// that the session panel can set every option the CLI has. The worker converts it
/// (adapter::engineJob); defaults are the CLI's unless noted.
struct TuningJob {
    // ---- network (--network | --onnx, --shape, --batch, --layout, --no-winograd, --winograd-or-direct)
    QString network = QStringLiteral("mobilenet");  ///< zoo name; ignored when onnxPath is set
    QString onnxPath;
    QStringList shapes;          ///< "name=1,3,224,224" bindings for dynamic ONNX inputs
    int batch = 1;
    QString layout = QStringLiteral("NHWC");
    bool winograd = true;        ///< false = --no-winograd
    bool winogradOrDirect = false; ///< --winograd-or-direct: also tune each winograd conv's direct task
    // ---- target (--target, --target-host)
    QString target;              ///< TVM target string; empty = host CPU
    QString targetHost;          ///< GPU targets: the host target (TVM's host=, --target-host); empty = none
    // ---- search (--trials, --per-round, --early-stopping, --strategy, --seed, --cost-model,
    //      --no-default-seed, --tasks)
    int trials = 0;              ///< 0 = 64 x tasks
    int perRound = 64;
    int earlyStopping = -1;
    QString strategy = QStringLiteral("gradient");
    quint64 seed = 0;
    QString costModel = QStringLiteral("xgb");  ///< "xgb" or "random"
    bool seedDefaultSchedule = true;  ///< false = --no-default-seed
    QList<int> taskIds;          ///< tune only these tasks (extraction order); empty = all
    // ---- runner (--runner, --tracker, --key, --number, --repeat, --min-repeat-ms, --timeout, --cache-flush)
    QString runner = QStringLiteral("local");  ///< "local" or "rpc"
    QString trackerHost = QStringLiteral("127.0.0.1");
    int trackerPort = 9190;
    QString deviceKey;
    int number = 3;              ///< runner number (TVM `number`)
    int repeat = 1;              ///< runner repeat (TVM `repeat`)
    int minRepeatMs = 100;       ///< runner min_repeat_ms
    double timeoutS = 10;        ///< runner timeout per candidate (s)
    /// TVM enable_cpu_cache_flush (--cache-flush): "on", "off" or "auto" (per task, the default)
    QString cacheFlush = QStringLiteral("auto");
    int pipelineSlice = 0;       ///< --pipeline (RunnerConfig::pipelineSlice); no control in the window
    double abandonFactor = 2.5;  ///< --abandon-factor (RunnerConfig::abandonFactor); no control in the window
    double screenFactor = 1.1;   ///< --screen (RunnerConfig::screenFactor); no control in the window
    double screenMs = 10;        ///< --screen-ms (RunnerConfig::screenMs); no control in the window
    bool rejectPreempted = false;  ///< --reject-preempted (RunnerConfig::rejectPreempted); no control in the window
    int slices = 1;              ///< --slices (RunnerConfig::slices); no control in the window
    /// --layout-rewrite (tuning::TuningJob::layoutRewrite): 0 or 2; -1 = the target's default (2 on
    /// CPUs, 0 on GPUs); no control in the window
    int layoutRewrite = -1;
    /// Give up on an unreachable tracker after this long (s); not a CLI option. The window's
    /// default is shorter than the CLI's 60 s: a tracker that is not there should fail the job soon.
    double trackerRetryTimeoutS = 10;
    // ---- log (--log, --resume, --tsv)
    QString logPath = QStringLiteral("tunebench.json");
    bool resume = false;
    QString latencyLogPath;      ///< TVM's total_latency.tsv lines; empty (the window's default) = none
    // ---- AutoTVM mode (`tunebench-cli autotvm tune --network`: --tuner, --n-trial): the zoo network's
    //      AutoTVM tasks (NCHW) tuned one after another; batch, target, earlyStopping (<= 0: never),
    //      seed, the local runner's fields and the log are shared with the auto-scheduler mode
    bool autotvm = false;
    QString tuner = QStringLiteral("xgb");  ///< a TuningSession::autotvmTunerNames() name
    int nTrial = 100;            ///< configs per task (min with the task's space size, as TVM's tutorials)

    bool operator==(const TuningJob&) const = default;
};

}  // namespace tb::session

Q_DECLARE_METATYPE(tb::session::TaskRow)
Q_DECLARE_METATYPE(tb::session::MeasureRow)
Q_DECLARE_METATYPE(tb::session::LatencyPoint)
Q_DECLARE_METATYPE(tb::session::GpuDeviceRow)
Q_DECLARE_METATYPE(tb::session::DeviceQueueSnapshot)
Q_DECLARE_METATYPE(tb::session::FleetEvent)
Q_DECLARE_METATYPE(tb::session::FleetDeviceRow)
Q_DECLARE_METATYPE(tb::session::TuningJob)
Q_DECLARE_METATYPE(tb::session::DagSnapshot)
Q_DECLARE_METATYPE(tb::session::LogSnapshot)
Q_DECLARE_METATYPE(tb::session::TuningHistory)
Q_DECLARE_METATYPE(tb::session::RooflineSnapshot)
