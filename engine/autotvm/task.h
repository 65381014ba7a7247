// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file task.h
/// \brief An AutoTVM tuning task and its measurement (TVM python/tvm/autotvm/task/task.py `Task`,
/// measure/measure.py `measure_option` / `create_measure_batch`, record.py `encode`).
///
/// A task is (template, serialized args, target): its config space and its FLOP count (TVM's
/// `task.flop`, counted on the program of the space's first config, as TVM counts it on the
/// schedule built while the space is collected). Measuring a batch of configs instantiates each
/// config (template.h), lowers its State (lower/lower_state.h, or lower/lower_gpu.h + OpenCL C / CUDA C
/// for a GPU target), then builds and runs the batch with
/// the measure layer's ProgramBuilder / ProgramRunner, exactly as the auto-scheduler's candidates
/// are measured. Failures are data: a config whose instantiation or lowering throws is
/// INSTANTIATION_ERROR with the message; build and run errors keep the measure layer's codes.
/// Every measured config becomes one AutoTVM v0.2 record (record/autotvm_record.h), costs `[1e9]`
/// when it failed, as TVM's `encode` writes them.

#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/autotvm/template.h"
#include "engine/codegen/gpu_module.h"
#include "engine/measure/measure.h"
#include "engine/support/hardware_params.h"
#include "engine/record/autotvm_record.h"

namespace tb::autotvm {

/// TVM's autotvm.task.Task for one template instance.
struct Task {
    const Template* tmpl = nullptr;
    std::string taskName;
    nlohmann::ordered_json args;     ///< serialized args as in a record
    std::string target;              ///< written into records, e.g. "llvm -keys=cpu -mcpu=znver4"
    ConfigSpace space;
    double flop = 0;                 ///< FLOPs of one run (TVM task.flop)

    /// Builds the task. Throws tb::UserError for an unknown template, args that do not fit it, or
    /// a template that cannot be instantiated here.
    static Task create(const std::string& taskName, const nlohmann::ordered_json& args, std::string target);
    /// The program of config `entity` (Template::instantiate with this task's args). tb::UserError
    /// for a task without a template (tmpl null: the VTA tasks of vta_tune.h).
    TemplateInstance instantiate(const ConfigEntity& entity) const;
};

/// Measures a batch of configs of a task in one go, one result per config in order; never throws
/// for a bad config (its result carries the error). For devices whose measurement is not a
/// built-and-run host program, e.g. the VTA simulator (vta_tune.h: costs are simulated seconds).
using MeasureFunction =
    std::function<std::vector<measure::MeasureResult>(const Task& task, const std::vector<ConfigEntity>& configs)>;

/// The measure side of tuning (TVM measure_option(builder, runner)): both must outlive it. When
/// `measureFunction` is set it measures instead, and builder and runner are not used.
struct MeasureOption {
    measure::ProgramBuilder* builder = nullptr;
    measure::ProgramRunner* runner = nullptr;
    MeasureFunction measureFunction = nullptr;
};

/// One measured config (TVM's (MeasureInput, MeasureResult) pair).
struct MeasuredConfig {
    ConfigEntity config;
    measure::MeasureResult result;
};

/// TVM's GPU verify pass as the AutoTVM LocalBuilder runs it for a GPU device (check_gpu:
/// max_threads_per_block, max_shared_memory_per_block; python/tvm/autotvm/measure/
/// measure_methods.py gpu_verify_pass): throws tb::UserError ("Skipped because of invalid gpu
/// kernel: ...") when a launch of `m` exceeds the limits of `hw` (a limit <= 0 is not checked).
void checkGpuLimits(const codegen::GpuModule& m, const HardwareParams& hw);

/// Instantiates, lowers, builds and runs `configs` (in order; one result each), or hands them to
/// option.measureFunction when set (tb::Error when it returns another number of results). Never
/// throws for a bad config. For a GPU target (`opencl ...`, `cuda ...`) each config is lowered for the GPU
/// (lower/lower_gpu.h) and emitted as a GpuModule (OpenCL C or CUDA C) that the runner's GPU
/// device compiles and runs; a module over the target's thread or shared-memory limits
/// (checkGpuLimits; the Mali target's are TVM's fixed Mali-T860 ones) is INSTANTIATION_ERROR, as
/// TVM's builder reports it.
std::vector<measure::MeasureResult> measureConfigs(const Task& task, const std::vector<ConfigEntity>& configs,
                                                   const MeasureOption& option);

/// The record TVM's log_to_file callback writes for a measured config (version 0.2, tvm_version
/// "0.14.0", kwargs {}, costs [1e9] on error).
record::AutoTvmRecord makeRecord(const Task& task, const ConfigEntity& config, const measure::MeasureResult& result);

/// (pick_best itself is record::pickBestIndices / pickBestFile, record/history_best.h.)

}  // namespace tb::autotvm
