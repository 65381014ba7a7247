// SPDX-License-Identifier: Apache-2.0
#include "engine/autotvm/vta_tune.h"

#include <chrono>
#include <map>
#include <memory>
#include <set>
#include <variant>
#include <vector>

#include "engine/support/error.h"
#include "engine/vta/packed_ops.h"
#include "engine/vta/simulator.h"
#include "engine/vta/vta_task.h"

namespace tb::autotvm {
namespace {

Task makeTask(const vta::VtaConfig& cfg, const char* name, nlohmann::ordered_json args, ConfigSpace space,
              std::int64_t macs) {
    Task t;
    t.taskName = name;
    t.args = std::move(args);
    t.target = vta::vtaTargetString(cfg);
    t.space = std::move(space);
    t.flop = 2.0 * double(macs);
    return t;
}

// One task's workload, operands and reference output.
struct Conv2dCase {
    vta::Conv2dWorkload wl;
    vta::Conv2dOperands ops;
};
struct DenseCase {
    vta::DenseWorkload wl;
    vta::DenseOperands ops;
};
struct MeasureCase {
    std::variant<Conv2dCase, DenseCase> op;
    std::vector<int8_t> reference;
    std::set<std::int64_t> verified;  ///< config indices whose output was compared
};

MeasureCase makeCase(const vta::VtaConfig& cfg, const Task& task, std::uint32_t seed) {
    MeasureCase c;
    if (task.taskName == vta::kConv2dPackedTask) {
        Conv2dCase cc{vta::conv2dWorkloadFromArgs(task.args), {}};
        cc.ops = vta::randomConv2dOperands(cfg, cc.wl, true, seed);
        c.reference = vta::conv2dPackedReference(cfg, cc.wl, vta::conv2dEpilogue(true), cc.ops);
        c.op = std::move(cc);
    } else if (task.taskName == vta::kDensePackedTask) {
        DenseCase dc{vta::denseWorkloadFromArgs(task.args), {}};
        dc.ops = vta::randomDenseOperands(cfg, dc.wl, seed);
        c.reference = vta::densePackedReference(cfg, dc.wl, vta::clipEpilogue(8), dc.ops);
        c.op = std::move(dc);
    } else {
        TB_USER_ERROR() << "the VTA simulator measures conv2d_packed.vta and dense_packed.vta tasks, not '"
                        << task.taskName << "'";
    }
    return c;
}

measure::MeasureResult measureOne(const vta::VtaConfig& cfg, MeasureCase& c, const ConfigEntity& config) {
    measure::MeasureResult r;
    const auto t0 = std::chrono::steady_clock::now();
    try {
        vta::Simulator sim(cfg);
        const vta::PackedOpResult out =
            std::holds_alternative<Conv2dCase>(c.op)
                ? vta::runConv2dPacked(sim, std::get<Conv2dCase>(c.op).wl, vta::Conv2dSchedule::fromConfig(config),
                                       vta::conv2dEpilogue(true), std::get<Conv2dCase>(c.op).ops)
                : vta::runDensePacked(sim, std::get<DenseCase>(c.op).wl, vta::DenseSchedule::fromConfig(config),
                                      vta::clipEpilogue(8), std::get<DenseCase>(c.op).ops);
        r.costs = {out.report.timeSeconds()};
        if (c.verified.insert(config.index).second && out.output != c.reference) {
            r.errorNo = measure::MeasureErrorNo::WrongAnswer;
            r.errorMsg = "the simulator's output differs from the int8 reference";
        }
    } catch (const UserError& e) {
        r.errorNo = measure::MeasureErrorNo::InstantiationError;
        r.errorMsg = e.what();
    }
    if (!r.ok()) r.costs = {measure::kMaxFloat};
    r.allCost = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    r.timestamp = measure::nowTimestamp();
    return r;
}

}  // namespace

Task makeVtaConv2dTask(const vta::VtaConfig& cfg, const vta::Conv2dWorkload& wl) {
    return makeTask(cfg, vta::kConv2dPackedTask, vta::conv2dTaskArgs(cfg, wl), vta::conv2dConfigSpace(wl, cfg),
                    wl.macs());
}

Task makeVtaDenseTask(const vta::VtaConfig& cfg, const vta::DenseWorkload& wl) {
    return makeTask(cfg, vta::kDensePackedTask, vta::denseTaskArgs(cfg, wl), vta::denseConfigSpace(wl, cfg),
                    wl.macs());
}

MeasureFunction vtaSimMeasureFunction(const vta::VtaConfig& cfg, std::uint32_t seed) {
    cfg.validate();
    auto cases = std::make_shared<std::map<std::string, MeasureCase>>();  // by task name + args
    return [cfg, seed, cases](const Task& task, const std::vector<ConfigEntity>& configs) {
        TB_USER_CHECK(task.target == vta::vtaTargetString(cfg))
            << "VTA task target '" << task.target << "' is not the simulated VTA's '" << vta::vtaTargetString(cfg)
            << "'";
        const std::string key = task.taskName + task.args.dump();
        auto it = cases->find(key);
        if (it == cases->end()) it = cases->emplace(key, makeCase(cfg, task, seed)).first;
        std::vector<measure::MeasureResult> results;
        results.reserve(configs.size());
        for (const ConfigEntity& c : configs) results.push_back(measureOne(cfg, it->second, c));
        return results;
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
