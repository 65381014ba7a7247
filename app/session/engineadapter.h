// SPDX-License-Identifier: Apache-2.0
#pragma once
// The one place where engine results become Qt value types (STYLE.md §3.3 "Engine -> Qt
// conversion happens in one place"). Internal to the session library: widgets never include it.

#include <QString>

#include <string>
#include <unordered_map>

#include "app/session/snapshots.h"
#include "engine/codegen/target.h"
#include "engine/measure/gpu_runner.h"
#include "engine/measure/machine_peak.h"
#include "engine/measure/measure.h"
#include "engine/runtime/kernel_roofline.h"
#include "engine/schedule/loop_state.h"
#include "engine/te/compute_dag.h"
#include "engine/tuning/network_tuner.h"
#include "engine/tuning/tuning_job.h"

namespace tb::session::adapter {

inline QString qstr(const std::string& s) { return QString::fromStdString(s); }

/// The engine job the window's settings describe, field for field (the worker builds it with
/// tuning::buildTuner). Unknown strategy / runner texts map to the CLI's defaults.
tuning::TuningJob engineJob(const TuningJob& job);
/// The window's settings for an engine job (e.g. one read from a `tune` command line): every field
/// a `tune` option sets survives engineJob(sessionJob(j)).
TuningJob sessionJob(const tuning::TuningJob& job);

/// Every task of the tuner as a table row. `tuningTask` is the task whose round is running now
/// (-1 between rounds): it is shown as "tuning" and marked as the scheduler's pick.
QList<TaskRow> taskRows(const tuning::NetworkTuner& tuner, int tuningTask);

/// One measured trial; `flop` is the task's FLOP count, `elapsedS` the job's clock.
MeasureRow measureRow(const tuning::MeasuredTrial& trial, double flop, double elapsedS);

/// A profile's kernels on the roofline (runtime::kernelRoofline) with the roofs they were judged by.
RooflineSnapshot rooflineSnapshot(const std::vector<runtime::KernelRoofline>& rows, const measure::MachinePeak& peak);

/// One build or device step for the fleet timeline: times relative to `jobStartEpoch` (seconds
/// since the Unix epoch when the job's engine objects were built), the task found by the
/// candidate's workload key in `taskOfKey` (-1 when absent).
FleetEvent fleetEvent(const measure::MeasureEvent& e, const std::unordered_map<std::string, int>& taskOfKey,
                      double jobStartEpoch, quint64 jobId);

/// The estimated-total-latency point after a round.
LatencyPoint latencyPoint(const tuning::TaskScheduler& scheduler);

/// The attributes a GPU device server of `key` reported (measure::queryRemoteGpuDevice), under
/// TVM's names, in the order the tracker panel lists them: device_api, device_name, the three the
/// search reads (max_threads_per_block, warp_size, max_shared_memory_per_block), max_vthread_extent
/// as measure::hardwareParamsFromGpu derives it, then the rest.
GpuDeviceRow gpuDeviceRow(const std::string& key, const measure::RemoteGpuDevice& device);

/// The DAG view of one task: stages, read edges and the DAG print; when `best` is defined, its
/// lowered loop nest, LLVM IR and assembly for `target` (compiled here: call it off the GUI thread).
/// For a GPU target instead: the kernels' loop nests and their OpenCL C / CUDA C source with the
/// launch dimensions (codegen::buildGpuModule's lowering), of `best`, or of the GPU default
/// schedule while `best` is undefined. Lowering or compile failures land in DagSnapshot::error,
/// never as exceptions.
DagSnapshot dagSnapshot(const te::ComputeDAG& dag, const State& best, double bestCost, const codegen::Target& target);

}  // namespace tb::session::adapter
