// SPDX-License-Identifier: Apache-2.0
#include "engine/vta/vta_program.h"

#include <set>
#include <variant>
#include <vector>

#include "engine/support/error.h"
#include "engine/vta/vta_task.h"

namespace tb::vta {
namespace {

using ojson = nlohmann::ordered_json;

constexpr std::int64_t kMaxOperandElements = std::int64_t(1) << 26;

bool isAlu(const std::string& taskName) { return taskName == kAddTask || taskName == kMultiplyTask; }

void checkSize(const std::string& task, const char* what, std::int64_t elements) {
    TB_USER_CHECK(elements <= kMaxOperandElements)
        << task << ": the " << what << " has " << elements << " elements, more than the 2^26 this simulator takes";
}

}  // namespace

std::vector<EpilogueOp> vtaTaskEpilogue(const std::string& taskName) {
    if (taskName == kConv2dPackedTask || taskName == kGroupConv2dPackedTask) return conv2dEpilogue(true);
    if (taskName == kDensePackedTask) return clipEpilogue(8);
    if (isAlu(taskName)) return clipEpilogue(0);
    TB_USER_ERROR() << "the VTA simulator measures conv2d_packed.vta, group_conv2d_packed.vta, dense_packed.vta, add.vta and multiply.vta "
                       "tasks, not '"
                    << taskName << "'";
}

void checkVtaConfig(const VtaConfig& cfg, const std::string& taskName, const ojson& args,
                    const autotvm::ConfigEntity& config) {
    const std::vector<EpilogueOp> epilogue = vtaTaskEpilogue(taskName);
    if (taskName == kConv2dPackedTask)
        checkConv2dSchedule(cfg, conv2dWorkloadFromArgs(args), Conv2dSchedule::fromConfig(config), epilogue);
    else if (taskName == kGroupConv2dPackedTask)
        checkGroupConv2dSchedule(cfg, groupConv2dWorkloadFromArgs(args), Conv2dSchedule::fromConfig(config), epilogue);
    else if (taskName == kDensePackedTask)
        checkDenseSchedule(cfg, denseWorkloadFromArgs(args), DenseSchedule::fromConfig(config), epilogue);
    else
        checkAluSchedule(cfg, aluWorkloadFromArgs(taskName, args), AluSchedule::fromConfig(config), epilogue);
}

std::map<std::string, std::uint64_t> statsMap(const SimStats& s) {
    return {{"inp_load_nbytes", s.inp_load_nbytes}, {"wgt_load_nbytes", s.wgt_load_nbytes},
            {"acc_load_nbytes", s.acc_load_nbytes}, {"uop_load_nbytes", s.uop_load_nbytes},
            {"out_store_nbytes", s.out_store_nbytes}, {"gemm_counter", s.gemm_counter},
            {"alu_counter", s.alu_counter}};
}

// ---- the measurer ---------------------------------------------------------------------------

struct VtaSimMeasurer::Case {
    struct Conv2d {
        Conv2dWorkload wl;
        Conv2dOperands ops;
    };
    struct GroupConv2d {
        GroupConv2dWorkload wl;
        Conv2dOperands ops;
    };
    struct Dense {
        DenseWorkload wl;
        DenseOperands ops;
    };
    struct Alu {
        AluWorkload wl;
        AluOperands ops;
    };
    std::variant<Conv2d, GroupConv2d, Dense, Alu> op;
    std::vector<EpilogueOp> epilogue;
    std::vector<int8_t> reference;
    std::set<std::int64_t> verified;  ///< config indices whose output was compared
};

VtaSimMeasurer::VtaSimMeasurer(VtaConfig cfg) : m_cfg(std::move(cfg)) { m_cfg.validate(); }

VtaSimMeasurer::Case& VtaSimMeasurer::caseFor(const std::string& taskName, const ojson& args, std::uint32_t seed) {
    const std::string key = taskName + args.dump() + "#" + std::to_string(seed);
    if (auto it = m_cases.find(key); it != m_cases.end()) return *it->second;
    auto c = std::make_shared<Case>();
    c->epilogue = vtaTaskEpilogue(taskName);
    VtaConfig shape;
    auto sameShape = [&] {
        TB_USER_CHECK(shape.logBatch == m_cfg.logBatch && shape.logBlock == m_cfg.logBlock)
            << taskName << ": the packed shapes (BATCH " << shape.batch() << ", BLOCK " << shape.blockIn()
            << ") are not this VTA's (BATCH " << m_cfg.batch() << ", BLOCK " << m_cfg.blockIn() << ")";
    };
    if (taskName == kConv2dPackedTask) {
        Case::Conv2d cc{conv2dWorkloadFromArgs(args, &shape), {}};
        sameShape();
        const auto& w = cc.wl;
        checkSize(taskName, "data", std::int64_t(w.batch) * w.inFilter * w.height * w.width);
        checkSize(taskName, "kernel", std::int64_t(w.outFilter) * w.inFilter * w.hkernel * w.wkernel);
        checkSize(taskName, "output", std::int64_t(w.batch) * w.outFilter * w.outHeight() * w.outWidth());
        cc.ops = randomConv2dOperands(m_cfg, cc.wl, true, seed);
        c->reference = conv2dPackedReference(m_cfg, cc.wl, c->epilogue, cc.ops);
        c->op = std::move(cc);
    } else if (taskName == kGroupConv2dPackedTask) {
        Case::GroupConv2d gc{groupConv2dWorkloadFromArgs(args, &shape), {}};
        sameShape();
        const auto& w = gc.wl;
        checkSize(taskName, "data", std::int64_t(w.batch) * w.inFilter * w.height * w.width);
        checkSize(taskName, "kernel", std::int64_t(w.outFilter) * (w.inFilter / w.groups) * w.hkernel * w.wkernel);
        checkSize(taskName, "output", std::int64_t(w.batch) * w.outFilter * w.outHeight() * w.outWidth());
        gc.ops = randomGroupConv2dOperands(m_cfg, gc.wl, true, seed);
        c->reference = groupConv2dPackedReference(m_cfg, gc.wl, c->epilogue, gc.ops);
        c->op = std::move(gc);
    } else if (taskName == kDensePackedTask) {
        Case::Dense dc{denseWorkloadFromArgs(args, &shape), {}};
        sameShape();
        checkSize(taskName, "weight", std::int64_t(dc.wl.outFeat) * dc.wl.inFeat);
        checkSize(taskName, "data", std::int64_t(dc.wl.batch) * dc.wl.inFeat);
        dc.ops = randomDenseOperands(m_cfg, dc.wl, seed);
        c->reference = densePackedReference(m_cfg, dc.wl, c->epilogue, dc.ops);
        c->op = std::move(dc);
    } else {
        Case::Alu ac{aluWorkloadFromArgs(taskName, args, &shape), {}};
        sameShape();
        checkSize(taskName, "output", std::int64_t(ac.wl.batch) * ac.wl.channels * ac.wl.height * ac.wl.width);
        ac.ops = randomAluOperands(m_cfg, ac.wl, seed);
        c->reference = aluPackedReference(m_cfg, ac.wl, c->epilogue, ac.ops);
        c->op = std::move(ac);
    }
    return *m_cases.emplace(key, std::move(c)).first->second;
}

VtaMeasureOutcome VtaSimMeasurer::measure(const std::string& taskName, const ojson& args,
                                          const autotvm::ConfigEntity& config, std::uint32_t seed) {
    Case& c = caseFor(taskName, args, seed);  // throws for a bad task: the caller's error, not the config's
    VtaMeasureOutcome out;
    try {
        Simulator sim(m_cfg);
        const PackedOpResult r = std::visit(
            [&](auto& op) -> PackedOpResult {
                using T = std::decay_t<decltype(op)>;
                if constexpr (std::is_same_v<T, Case::Conv2d>)
                    return runConv2dPacked(sim, op.wl, Conv2dSchedule::fromConfig(config), c.epilogue, op.ops);
                else if constexpr (std::is_same_v<T, Case::GroupConv2d>)
                    return runGroupConv2dPacked(sim, op.wl, Conv2dSchedule::fromConfig(config), c.epilogue, op.ops);
                else if constexpr (std::is_same_v<T, Case::Dense>)
                    return runDensePacked(sim, op.wl, DenseSchedule::fromConfig(config), c.epilogue, op.ops);
                else
                    return runAluPacked(sim, op.wl, AluSchedule::fromConfig(config), c.epilogue, op.ops);
            },
            c.op);
        out.seconds = r.report.timeSeconds();
        out.cycles = r.report.cycles;
        out.stats = r.report.stats;
        out.instructions = r.instructions;
        if (c.verified.insert(config.index).second && r.output != c.reference) {
            out.errorNo = kVtaWrongAnswer;
            out.errorMsg = "the simulator's output differs from the int8 reference";
        }
    } catch (const UserError& e) {
        out = VtaMeasureOutcome{};
        out.errorNo = kVtaInstantiationError;
        out.errorMsg = e.what();
    }
    if (!out.ok()) out.seconds = 0;
    return out;
}

// ---- the program text -----------------------------------------------------------------------

std::string VtaProgram::toText() const {
    ojson j = ojson::object();
    j["format"] = kVtaProgramFormat;
    j["version"] = kVtaProgramVersion;
    j["target"] = target;
    j["model"] = model;
    j["task"] = taskName;
    j["args"] = args;
    j["config"] = config;
    j["seed"] = seed;
    return j.dump();
}

VtaProgram VtaProgram::fromText(std::string_view text) {
    ojson j = ojson::parse(text.begin(), text.end(), nullptr, /*allow_exceptions=*/false);
    TB_USER_CHECK(!j.is_discarded() && j.is_object()) << "VTA program: not a JSON object";
    TB_USER_CHECK(j.value("format", ojson()) == kVtaProgramFormat)
        << "VTA program: format must be \"" << kVtaProgramFormat << "\", got "
        << (j.contains("format") ? j["format"].dump() : std::string("none"));
    TB_USER_CHECK(j.value("version", ojson()) == kVtaProgramVersion)
        << "VTA program: version " << (j.contains("version") ? j["version"].dump() : std::string("none"))
        << " is not the version " << kVtaProgramVersion << " this server reads";
    static const std::set<std::string> known = {"format", "version", "target", "model", "task", "args", "config", "seed"};
    for (const auto& [k, v] : j.items()) TB_USER_CHECK(known.count(k)) << "VTA program: unknown key '" << k << "'";
    auto str = [&](const char* k) {
        TB_USER_CHECK(j.contains(k) && j[k].is_string()) << "VTA program: '" << k << "' must be a string";
        return j[k].get<std::string>();
    };
    VtaProgram p;
    p.target = str("target");
    p.model = str("model");
    p.taskName = str("task");
    TB_USER_CHECK(j.contains("args") && j["args"].is_array()) << "VTA program: 'args' must be a list";
    TB_USER_CHECK(j.contains("config") && j["config"].is_object()) << "VTA program: 'config' must be a dict";
    p.args = j["args"];
    p.config = j["config"];
    TB_USER_CHECK(j.contains("seed") && j["seed"].is_number_unsigned() && j["seed"].get<std::uint64_t>() <= 0xffffffffu)
        << "VTA program: 'seed' must be an unsigned 32-bit integer";
    p.seed = j["seed"].get<std::uint32_t>();
    return p;
}

}  // namespace tb::vta
