// SPDX-License-Identifier: Apache-2.0
#include "engine/autotvm/task.h"

#include <memory>

#include "engine/codegen/codegen_gpu_source.h"
#include "engine/codegen/target.h"
#include "engine/lower/lower_state.h"
#include "engine/support/error.h"

namespace tb::autotvm {

Task Task::create(const std::string& taskName, const nlohmann::ordered_json& args, std::string target) {
    const Template* t = findTemplate(taskName);
    TB_USER_CHECK(t) << "unknown AutoTVM template '" << taskName << "'";
    TB_USER_CHECK(t->canInstantiate()) << "AutoTVM template '" << taskName << "' cannot be tuned here yet";
    TB_USER_CHECK(args.is_array()) << taskName << ": args must be a JSON list";
    Task task;
    task.tmpl = t;
    task.taskName = taskName;
    task.args = args;
    task.target = std::move(target);
    task.space = t->space(args);
    TB_USER_CHECK(task.space.size() > 0) << taskName << ": the config space is empty";
    // TVM counts the FLOPs on the program built while the space is collected: the first config.
    const TemplateInstance first = task.instantiate(task.space.get(0));
    task.flop = first.flop > 0 ? first.flop : first.dag->flopCount();
    TB_USER_CHECK(task.flop > 0) << taskName << ": cannot count the FLOPs of the compute";
    return task;
}

TemplateInstance Task::instantiate(const ConfigEntity& entity) const {
    TB_USER_CHECK(tmpl) << "task " << taskName << " has no TIR template here (a VTA task is measured on the VTA "
                        << "simulator, vta_tune.h)";
    return tmpl->instantiate(TaskArgs(taskName, args), entity);
}

void checkGpuLimits(const codegen::GpuModule& m, const HardwareParams& hw) {
    for (const codegen::GpuLaunch& l : m.launches) {
        const std::int64_t threads = l.block[0] * l.block[1] * l.block[2];
        TB_USER_CHECK(hw.maxThreadsPerBlock <= 0 || threads <= hw.maxThreadsPerBlock)
            << "Skipped because of invalid gpu kernel: " << l.entry << " launches " << threads
            << " threads per block (" << l.block[0] << " x " << l.block[1] << " x " << l.block[2]
            << "), more than the device's max_threads_per_block " << hw.maxThreadsPerBlock;
        TB_USER_CHECK(hw.maxSharedMemoryPerBlock <= 0 || l.sharedBytes <= hw.maxSharedMemoryPerBlock)
            << "Skipped because of invalid gpu kernel: " << l.entry << " uses " << l.sharedBytes
            << " bytes of shared memory, more than the device's " << hw.maxSharedMemoryPerBlock;
    }
}

std::vector<measure::MeasureResult> measureConfigs(const Task& task, const std::vector<ConfigEntity>& configs,
                                                   const MeasureOption& option) {
    if (option.measureFunction) {
        std::vector<measure::MeasureResult> results = option.measureFunction(task, configs);
        TB_CHECK(results.size() == configs.size())
            << "the measure function returned " << results.size() << " results for " << configs.size() << " configs";
        return results;
    }
    TB_CHECK(option.builder && option.runner) << "measureConfigs needs a builder and a runner";
    std::vector<measure::MeasureInput> inputs(configs.size());
    std::vector<std::string> errors(configs.size());
    const codegen::Target target = codegen::Target::parse(task.target);
    for (size_t i = 0; i < configs.size(); ++i) {
        inputs[i].workloadKey = task.taskName;
        try {
            const TemplateInstance inst = task.instantiate(configs[i]);
            if (target.isGpu()) {
                codegen::GpuModule m = codegen::buildGpuModule(
                    *inst.dag, inst.state, target.isCuda() ? codegen::GpuLanguage::CUDA : codegen::GpuLanguage::OpenCL);
                checkGpuLimits(m, target.gpuHardwareParams());
                inputs[i].gpuModule = std::make_shared<codegen::GpuModule>(std::move(m));
            } else {
                inputs[i].func = std::make_shared<lower::LoweredFunc>(lower::lowerState(*inst.dag, inst.state));
            }
            inputs[i].stateText = configs[i].entityJson().dump();
        } catch (const std::exception& e) {
            errors[i] = e.what();  // the builder reports a null function as INSTANTIATION_ERROR
        }
    }
    std::vector<measure::BuildResult> builds = option.builder->build(inputs);
    std::vector<measure::MeasureResult> results = option.runner->run(inputs, builds);
    TB_CHECK(results.size() == configs.size()) << "runner returned " << results.size() << " results";
    for (size_t i = 0; i < configs.size(); ++i) {
        if (errors[i].empty()) continue;
        results[i].errorNo = measure::MeasureErrorNo::InstantiationError;
        results[i].errorMsg = errors[i];
        results[i].costs = {measure::kMaxFloat};
    }
    return results;
}

record::AutoTvmRecord makeRecord(const Task& task, const ConfigEntity& config, const measure::MeasureResult& result) {
    record::AutoTvmRecord r;
    r.target = task.target;
    r.taskName = task.taskName;
    r.args = task.args;
    r.kwargs = nlohmann::ordered_json::object();
    r.config = config.toJson();
    r.costs = result.ok() ? result.costs : std::vector<double>{1e9};
    r.errorNo = int(result.errorNo);
    r.allCost = result.allCost;
    r.timestamp = result.timestamp > 0 ? result.timestamp : measure::nowTimestamp();
    r.version = nlohmann::ordered_json(0.2);
    r.tvmVersion = "0.14.0";
    return r;
}

}  // namespace tb::autotvm
