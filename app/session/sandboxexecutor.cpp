// SPDX-License-Identifier: Apache-2.0
#include "app/session/sandboxexecutor.h"

#include <chrono>
#include <fstream>
#include <iterator>

#include "engine/codegen/target.h"
#include "engine/measure/local_runner.h"

namespace tb::session {

SandboxExecutor::SandboxExecutor() = default;
SandboxExecutor::~SandboxExecutor() = default;

rpc::RunReply SandboxExecutor::run(const rpc::RunRequest& request) {
    const auto t0 = std::chrono::steady_clock::now();
    rpc::RunReply reply;
    auto done = [&] {
        reply.elapsedSec = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        return reply;
    };
    codegen::CompiledKernel k;
    k.name = request.function.empty() ? std::string("default_function") : request.function;
    k.target = codegen::Target::host().str();
    k.runsOnHost = true;
    for (const auto& a : request.args) {
        if (a.dtype != "float32") {
            reply.errorNo = rpc::kErrorNoCompileDevice;
            reply.errorMsg = "unsupported argument dtype '" + a.dtype + "' (float32 only)";
            return done();
        }
        int64_t n = 1;
        for (int64_t d : a.shape) n *= d;
        k.argElements.push_back(n);
    }
    std::ifstream in(request.modulePath, std::ios::binary);
    if (!in) {
        reply.errorNo = rpc::kErrorNoCompileDevice;
        reply.errorMsg = "cannot read the uploaded module '" + request.module + "'";
        return done();
    }
    k.object.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());

    std::lock_guard<std::mutex> lock(m_mutex);
    const std::string key = std::to_string(request.number) + "/" + std::to_string(request.repeat) + "/" +
                            std::to_string(request.minRepeatMs) + "/" + std::to_string(request.enableCpuCacheFlush) +
                            "/" + std::to_string(request.timeoutSec);
    if (!m_runner || key != m_runnerKey) {
        measure::RunnerOptions o;
        o.number = request.number;
        o.repeat = request.repeat;
        o.minRepeatMs = request.minRepeatMs;
        o.enableCpuCacheFlush = request.enableCpuCacheFlush;
        o.timeoutS = request.timeoutSec;
        m_runner = std::make_unique<measure::LocalRunner>(o);
        m_runnerKey = key;
    }
    const measure::MeasureResult r = m_runner->runOne(k);
    reply.errorNo = int(r.errorNo);
    reply.errorMsg = r.errorMsg;
    if (r.ok()) reply.costs = r.costs;
    return done();
}

}  // namespace tb::session
