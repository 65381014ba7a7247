// SPDX-License-Identifier: Apache-2.0
#include "engine/measure/gpu_runner.h"
#include "engine/measure/gpu_worker_client.h"

#include <chrono>

#include <nlohmann/json.hpp>

#include "engine/measure/gpu_executor.h"
#include "engine/rpc/rpc_session.h"
#include "engine/rpc/tracker_client.h"
#include "engine/support/error.h"

namespace tb::measure {

MeasureResult toMeasureResult(const gpu::GpuMeasureResult& g) {
    MeasureResult r;
    r.errorNo = g.errorNo >= 0 && g.errorNo <= int(MeasureErrorNo::UnknownError) ? MeasureErrorNo(g.errorNo)
                                                                                  : MeasureErrorNo::UnknownError;
    r.errorMsg = g.errorMsg;
    r.costs = r.ok() ? g.costs : std::vector<double>{kMaxFloat};
    r.timestamp = nowTimestamp();
    return r;
}

GpuLocalRunner::GpuLocalRunner(GpuRunnerOptions options) : m_options(std::move(options)) {
    TB_USER_CHECK(m_options.number >= 1 && m_options.repeat >= 1) << "number and repeat must be >= 1";
    TB_USER_CHECK(m_options.timeoutS > 0) << "the run timeout must be > 0 s";
    TB_USER_CHECK(m_options.minRepeatMs >= 0) << "min_repeat_ms must be >= 0";
}

std::vector<MeasureResult> GpuLocalRunner::run(const std::vector<MeasureInput>& inputs,
                                               const std::vector<BuildResult>& builds) {
    TB_CHECK(inputs.size() == builds.size()) << inputs.size() << " inputs but " << builds.size() << " build results";
    const long long batch = ++m_batches;
    std::vector<MeasureResult> results;
    results.reserve(inputs.size());
    gpu::GpuMeasureOptions o;
    o.number = m_options.number;
    o.repeat = m_options.repeat;
    o.minRepeatMs = m_options.minRepeatMs;
    o.seed = m_options.seed;
    const std::string device = std::string("local ") + gpu::gpuApiName(m_options.api) + " device " +
                               std::to_string(m_options.deviceIndex);
    for (size_t i = 0; i < inputs.size(); ++i) {
        const BuildResult& b = builds[i];
        MeasureResult r;
        if (b.errorNo != MeasureErrorNo::NoError) {
            r = toMeasureResult({int(b.errorNo), b.errorMsg, {}, {}});
        } else if (!b.gpuModule) {
            r = toMeasureResult({gpu::kErrorCompileDevice, "the GPU runner got a candidate without a GPU module", {}, {}});
        } else {
            r = runStep(batch, int(i), inputs[i].workloadKey, device, [&] {
                const auto t0 = std::chrono::steady_clock::now();
                // In tunebench-gpu-worker, not a fork of this process: this process links LLVM 16,
                // which PoCL's own LLVM must not meet (gpu_worker_client.h).
                MeasureResult m = toMeasureResult(measureGpuModuleInWorker(
                    m_options.api, m_options.deviceIndex, *b.gpuModule, o, inputs[i].check.get(), m_options.timeoutS));
                m.allCost = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
                return m;
            });
        }
        r.allCost += b.timeCost;
        results.push_back(std::move(r));
    }
    return results;
}

RemoteGpuDevice queryRemoteGpuDevice(const std::string& trackerHost, int trackerPort, const std::string& key,
                                     double requestTimeoutS, const std::string& token) {
    const std::string where = "device of key '" + key + "' at the tracker " + trackerHost + ":" + std::to_string(trackerPort);
    rpc::CallReply reply;
    try {
        rpc::ConnectOptions co;
        co.retryTimeoutMs = 5000;
        rpc::TrackerSession tracker = rpc::TrackerSession::connect(trackerHost, trackerPort, co);
        rpc::SessionOptions so;
        so.token = token;
        rpc::RpcSession s = rpc::requestSession(tracker, key, 1, so, 3, int(requestTimeoutS * 1000));
        rpc::CallRequest req;
        req.function = kGpuDeviceAttributesFunction;
        reply = s.call(req, 30);
        s.close();
    } catch (const rpc::RpcError& e) {
        TB_USER_ERROR() << "cannot query the " << where << ": " << e.what();
    }
    const rpc::Json& j = reply.result;
    TB_USER_CHECK(j.value("error_no", -1) == 0)
        << "the " << where << " is not a GPU device server: " << j.value("error_msg", std::string("no answer"));
    RemoteGpuDevice d;
    try {
        d.deviceApi = j.at("device_api").get<std::string>();
        d.attributes = gpu::gpuDeviceAttributesFromJson(nlohmann::json::parse(j.at("attributes").dump()));
    } catch (const std::exception& e) {
        TB_USER_ERROR() << "the " << where << " sent malformed attributes: " << e.what();
    }
    return d;
}

HardwareParams hardwareParamsFromGpu(const gpu::GpuDeviceAttributes& a) {
    HardwareParams p = HardwareParams::gpu(a.maxSharedMemoryPerBlock, a.maxThreadsPerBlock, a.warpSize);
    p.maxVthreadExtent = a.warpSize / 4 > 1 ? a.warpSize / 4 : a.warpSize;  // seed 003's formula
    return p;
}

}  // namespace tb::measure
