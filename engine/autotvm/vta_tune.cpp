// SPDX-License-Identifier: Apache-2.0
#include "engine/autotvm/vta_tune.h"

#include <chrono>
#include <memory>
#include <vector>

#include "engine/graph/passes/quantize.h"
#include "engine/support/error.h"
#include "engine/vta/graph_pack.h"
#include "engine/vta/vta_network.h"
#include "engine/vta/vta_task.h"

namespace tb::autotvm {
namespace {

Task makeTask(const vta::VtaConfig& cfg, const char* name, nlohmann::ordered_json args, ConfigSpace space,
              double flop) {
    Task t;
    t.taskName = name;
    t.args = std::move(args);
    t.target = vta::vtaTargetString(cfg);
    t.space = std::move(space);
    t.flop = flop;
    return t;
}

measure::MeasureResult toMeasureResult(const vta::VtaMeasureOutcome& o) {
    measure::MeasureResult r;
    r.errorNo = measure::MeasureErrorNo(o.errorNo);
    r.errorMsg = o.errorMsg;
    r.costs = {o.ok() ? o.seconds : measure::kMaxFloat};
    if (o.ok()) r.deviceCounters = vta::statsMap(o.stats);
    return r;
}

void checkTarget(const vta::VtaConfig& cfg, const Task& task) {
    TB_USER_CHECK(task.target == vta::vtaTargetString(cfg))
        << "VTA task target '" << task.target << "' is not the simulated VTA's '" << vta::vtaTargetString(cfg) << "'";
}

}  // namespace

Task makeVtaConv2dTask(const vta::VtaConfig& cfg, const vta::Conv2dWorkload& wl) {
    return makeTask(cfg, vta::kConv2dPackedTask, vta::conv2dTaskArgs(cfg, wl), vta::conv2dConfigSpace(wl, cfg),
                    2.0 * double(wl.macs()));
}

Task makeVtaGroupConv2dTask(const vta::VtaConfig& cfg, const vta::GroupConv2dWorkload& wl) {
    return makeTask(cfg, vta::kGroupConv2dPackedTask, vta::groupConv2dTaskArgs(cfg, wl),
                    vta::groupConv2dConfigSpace(wl, cfg), 2.0 * double(wl.macs()));
}

Task makeVtaDenseTask(const vta::VtaConfig& cfg, const vta::DenseWorkload& wl) {
    return makeTask(cfg, vta::kDensePackedTask, vta::denseTaskArgs(cfg, wl), vta::denseConfigSpace(wl, cfg),
                    2.0 * double(wl.macs()));
}

Task makeVtaAluTask(const vta::VtaConfig& cfg, const vta::AluWorkload& wl, bool scalarRhs) {
    return makeTask(cfg, vta::aluTemplateName(wl.op), vta::aluTaskArgs(cfg, wl, scalarRhs), vta::aluConfigSpace(wl, cfg),
                    double(wl.batch) * wl.channels * wl.height * wl.width);
}

VtaNetworkTasks extractVtaNetworkTasks(const vta::VtaConfig& cfg, const graph::Graph& network,
                                       const std::set<std::string>& ops) {
    TB_USER_CHECK(!(ops.count("add") || ops.count("multiply")) || vta::vtaTargetHasAluOps(cfg))
        << "VTA " << cfg.target << " has no ALU-only operators (add.vta/multiply.vta exist for sim and intelfocl)";
    const graph::Graph packed = vta::graphPack(graph::quantize(network), cfg.batch(), cfg.blockOut(), cfg.wgtWidth());
    const vta::TaskExtraction ex = vta::extractVtaTasks(packed, cfg, ops);
    VtaNetworkTasks out;
    out.extracted = ex.extracted;
    out.filtered = ex.filtered;
    for (const vta::VtaNetTask& t : ex.tasks) {
        VtaNetworkTask n;
        if (t.conv) {
            n.task = makeVtaConv2dTask(cfg, *t.conv);
            n.workload = vta::workloadStr(*t.conv);
        } else {
            TB_CHECK(t.alu.has_value()) << "extracted VTA task " << t.name << " has no workload";
            n.task = makeVtaAluTask(cfg, *t.alu);  // the seed merged a scalar rhs into lhs's shape
            n.workload = vta::workloadStr(*t.alu);
        }
        n.count = t.count;
        out.tasks.push_back(std::move(n));
    }
    return out;
}

std::vector<record::AutoTvmRecord> logToFileRecords(const Task& task, const ConfigEntity& config,
                                                    const measure::MeasureResult& result) {
    std::vector<record::AutoTvmRecord> out{makeRecord(task, config, result)};
    if (auto scalar = vta::scalarRhsArgs(task.args)) {
        out.push_back(out.front());
        out.back().args = std::move(*scalar);
    }
    return out;
}

MeasureFunction vtaSimMeasureFunction(const vta::VtaConfig& cfg, std::uint32_t seed) {
    auto measurer = std::make_shared<vta::VtaSimMeasurer>(cfg);
    return [cfg, seed, measurer](const Task& task, const std::vector<ConfigEntity>& configs) {
        checkTarget(cfg, task);
        std::vector<measure::MeasureResult> results;
        results.reserve(configs.size());
        for (const ConfigEntity& c : configs) {
            const auto t0 = std::chrono::steady_clock::now();
            measure::MeasureResult r = toMeasureResult(measurer->measure(task.taskName, task.args, c, seed));
            r.allCost = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
            r.timestamp = measure::nowTimestamp();
            results.push_back(std::move(r));
        }
        return results;
    };
}

vta::VtaProgram makeVtaProgram(const Task& task, const ConfigEntity& config, std::uint32_t seed) {
    TB_USER_CHECK(vta::isVtaTaskName(task.taskName)) << "'" << task.taskName << "' is not a VTA task";
    vta::VtaProgram p;
    p.target = task.target;
    const std::optional<std::string> model = vta::vtaModelOfTarget(task.target);
    TB_USER_CHECK(model.has_value()) << "VTA task target '" << task.target << "' names no -model=";
    p.model = *model;
    p.taskName = task.taskName;
    p.args = task.args;
    p.config = config.toJson();
    p.seed = seed;
    return p;
}

MeasureFunction vtaRpcMeasureFunction(const vta::VtaConfig& cfg, const measure::RpcRunnerOptions& options,
                                      std::uint32_t seed) {
    cfg.validate();
    auto runner = std::make_shared<measure::RpcRunner>(options);
    return [cfg, seed, runner](const Task& task, const std::vector<ConfigEntity>& configs) {
        checkTarget(cfg, task);
        std::vector<measure::MeasureInput> inputs(configs.size());
        std::vector<measure::BuildResult> builds(configs.size());
        for (size_t i = 0; i < configs.size(); ++i) {
            const auto t0 = std::chrono::steady_clock::now();
            inputs[i].workloadKey = task.taskName + " " + task.args.dump();
            inputs[i].stateText = configs[i].entityJson().dump();
            try {  // TVM's builder instantiates the template first: a refused config is never uploaded
                vta::checkVtaConfig(cfg, task.taskName, task.args, configs[i]);
                builds[i].program = std::make_shared<const measure::DeviceProgram>(
                    measure::DeviceProgram{vta::kVtaProgramSuffix, makeVtaProgram(task, configs[i], seed).toText()});
            } catch (const UserError& e) {
                builds[i].errorNo = measure::MeasureErrorNo::InstantiationError;
                builds[i].errorMsg = e.what();
            }
            builds[i].timeCost = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        }
        return runner->run(inputs, builds);
    };
}

std::string vtaTunerName(const std::string& name) {
    if (name == "xgb" || name == "xgb_rank" || name == "xgb_rank_binary") return name + "_knob";
    if (name == "grid") return "gridsearch";
    TB_USER_CHECK(name.rfind("xgb", 0) != 0 || name.ends_with("_knob"))
        << "tuner '" << name << "': VTA tasks have no TIR loop nest for itervar or curve features; use knob features"
        << " (xgb, xgb_knob, xgb_rank, xgb_rank_knob, ...)";
    return name;
}

std::unique_ptr<Tuner> makeVtaTuner(const std::string& name, const Task& task, std::uint64_t seed, int planSize) {
    const std::string resolved = vtaTunerName(name);
    TB_USER_CHECK(planSize >= 1) << "the xgb tuner's plan size must be positive, got " << planSize;
    if (resolved == "xgb_knob") return std::make_unique<XGBTuner>(task, planSize, "knob", "reg", seed);
    if (resolved == "xgb_rank_knob") return std::make_unique<XGBTuner>(task, planSize, "knob", "rank", seed);
    if (resolved == "xgb_rank_binary_knob")
        return std::make_unique<XGBTuner>(task, planSize, "knob", "rank-binary", seed);
    return makeTuner(resolved, task, seed);
}

}  // namespace tb::autotvm
