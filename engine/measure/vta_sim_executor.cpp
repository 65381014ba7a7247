// SPDX-License-Identifier: Apache-2.0
#include "engine/measure/vta_sim_executor.h"

#include <algorithm>
#include <fstream>
#include <iterator>

#include "engine/measure/measure.h"
#include "engine/support/error.h"
#include "engine/vta/vta_task.h"

namespace tb::measure {
namespace {

constexpr std::streamoff kMaxProgramBytes = 1 << 20;

rpc::RunReply fail(MeasureErrorNo e, std::string msg) {
    rpc::RunReply r;
    r.errorNo = int(e);
    r.errorMsg = std::move(msg);
    r.costs = {kMaxFloat};
    return r;
}

}  // namespace

VtaSimExecutor::VtaSimExecutor(vta::VtaConfig cfg) : m_measurer(std::move(cfg)) {}

rpc::RunReply VtaSimExecutor::run(const rpc::RunRequest& request) {
    std::lock_guard<std::mutex> lock(m_mu);
    const vta::VtaConfig& cfg = m_measurer.config();
    std::ifstream f(request.modulePath, std::ios::binary | std::ios::ate);
    if (!f) return fail(MeasureErrorNo::CompileDevice, "cannot read the uploaded VTA program '" + request.module + "'");
    if (f.tellg() > kMaxProgramBytes)
        return fail(MeasureErrorNo::CompileDevice, "malformed VTA program: larger than 1 MiB");
    f.seekg(0);
    const std::string text((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());

    vta::VtaProgram program;
    autotvm::ConfigEntity config;
    try {
        program = vta::VtaProgram::fromText(text);
    } catch (const UserError& e) {  // "VTA program: <what>"
        return fail(MeasureErrorNo::CompileDevice, std::string("malformed ") + e.what());
    }
    if (program.model != cfg.model() || program.target != vta::vtaTargetString(cfg))
        return fail(MeasureErrorNo::CompileDevice, "VTA model mismatch: the program is for " + program.model +
                                                       " (target '" + program.target + "'), this server simulates " +
                                                       cfg.model() + " (target '" + vta::vtaTargetString(cfg) + "')");
    try {
        config = autotvm::ConfigEntity::fromJson(program.config);
        const autotvm::ConfigSpace space = vta::vtaTaskSpace(program.taskName, program.args);
        TB_USER_CHECK(config.index >= 0 && config.index < std::int64_t(space.size()))
            << "config index " << config.index << " is outside the task's space of " << space.size();
        const autotvm::ConfigEntity decoded = space.get(config.index);
        TB_USER_CHECK(decoded.entityJson() == config.entityJson())
            << "config index " << config.index << " decodes to " << decoded.entityJson().dump()
            << ", not to the program's " << config.entityJson().dump();
    } catch (const UserError& e) {
        return fail(MeasureErrorNo::CompileDevice, std::string("malformed VTA program: ") + e.what());
    }

    vta::VtaMeasureOutcome out;
    try {
        out = m_measurer.measure(program.taskName, program.args, config, program.seed);
    } catch (const UserError& e) {
        return fail(MeasureErrorNo::CompileDevice, std::string("malformed VTA program: ") + e.what());
    }
    if (!out.ok()) return fail(MeasureErrorNo(out.errorNo), out.errorMsg);
    rpc::RunReply reply;
    reply.costs.assign(size_t(std::max(request.repeat, 1)), out.seconds);
    reply.deviceCounters = vta::statsMap(out.stats);
    return reply;
}

}  // namespace tb::measure
