// SPDX-License-Identifier: Apache-2.0
#include "engine/measure/gpu_executor.h"

#include <chrono>
#include <fstream>
#include <iterator>

#include <nlohmann/json.hpp>

namespace tb::measure {

namespace {

rpc::RunReply fail(int errorNo, std::string msg) {
    rpc::RunReply r;
    r.errorNo = errorNo;
    r.errorMsg = std::move(msg);
    return r;
}

bool readFile(const std::string& path, std::string* out) {
    std::ifstream f(path, std::ios::binary);
    if (!f) return false;
    out->assign(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
    return !f.bad();
}

// The reason the device would refuse one of the module's launches, or "" (file comment).
std::string launchLimitProblem(const codegen::GpuModule& m, const gpu::GpuDeviceAttributes& a) {
    for (const codegen::GpuLaunch& l : m.launches) {
        const int64_t threads = l.block[0] * l.block[1] * l.block[2];
        if (threads > a.maxThreadsPerBlock)
            return "launch of '" + l.entry + "': " + std::to_string(threads) + " threads per block exceed the device's " +
                   std::to_string(a.maxThreadsPerBlock) + " (max_threads_per_block)";
        for (size_t d = 0; d < 3; ++d)
            if (a.maxThreadDimensions[d] > 0 && l.block[d] > a.maxThreadDimensions[d])
                return "launch of '" + l.entry + "': block dimension " + std::to_string(d) + " is " +
                       std::to_string(l.block[d]) + ", the device allows " + std::to_string(a.maxThreadDimensions[d]);
        if (l.sharedBytes > a.maxSharedMemoryPerBlock)
            return "launch of '" + l.entry + "': " + std::to_string(l.sharedBytes) +
                   " bytes of shared memory exceed the device's " + std::to_string(a.maxSharedMemoryPerBlock) +
                   " (max_shared_memory_per_block)";
    }
    return {};
}

}  // namespace

GpuExecutor::GpuExecutor(gpu::GpuApi api, int index, uint64_t seed, const nlohmann::json& overrides)
    : m_api(api), m_index(index), m_seed(seed), m_attributes(gpu::queryGpuAttributesIsolated(api, index)) {
    if (overrides.is_null() || overrides.empty()) return;
    if (!overrides.is_object()) throw std::invalid_argument("attribute overrides must be a JSON object");
    nlohmann::json j = gpu::toJson(m_attributes);
    for (const auto& [name, value] : overrides.items()) {
        if (!j.contains(name)) throw std::invalid_argument("unknown device attribute '" + name + "'");
        j[name] = value;
    }
    m_attributes = gpu::gpuDeviceAttributesFromJson(j);
    m_enforceLimits = true;
}

rpc::RunReply GpuExecutor::run(const rpc::RunRequest& req) {
    const auto t0 = std::chrono::steady_clock::now();
    std::string text;
    if (!readFile(req.modulePath, &text)) return fail(gpu::kErrorCompileDevice, "cannot read module '" + req.module + "'");
    codegen::GpuModule module;
    try {
        module = codegen::gpuModuleFromJson(nlohmann::json::parse(text));
    } catch (const std::exception& e) {
        return fail(gpu::kErrorCompileDevice, std::string("malformed GPU module '") + req.module + "': " + e.what());
    }
    if (m_enforceLimits)
        if (std::string problem = launchLimitProblem(module, m_attributes); !problem.empty())
            return fail(gpu::kErrorRuntimeDevice, problem);
    CheckSpec check;
    bool haveCheck = false;
    if (std::string blob; readFile(req.modulePath + std::string(kCheckBlobSuffix), &blob)) {
        try {
            check = decodeCheckBlob(blob);
            haveCheck = true;
        } catch (const std::exception& e) {
            return fail(gpu::kErrorUnknown, e.what());
        }
    }
    gpu::GpuMeasureOptions o;
    o.number = req.number;
    o.repeat = req.repeat;
    o.minRepeatMs = req.minRepeatMs;
    o.seed = m_seed;
    const gpu::GpuMeasureResult r =
        gpu::measureGpuModuleIsolated(m_api, m_index, module, o, haveCheck ? &check : nullptr, req.timeoutSec);
    rpc::RunReply reply = fail(r.errorNo, r.errorMsg);
    reply.costs = r.costs;
    reply.elapsedSec = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    return reply;
}

rpc::CallReply GpuExecutor::call(const rpc::CallRequest& req) {
    if (req.function != kGpuDeviceAttributesFunction) return MeasureExecutor::call(req);
    rpc::CallReply r;
    r.result = {{"error_no", 0},
                {"error_msg", ""},
                {"device_api", gpu::gpuApiName(m_api)},
                {"attributes", gpu::toJson(m_attributes)}};
    return r;
}

}  // namespace tb::measure
