// SPDX-License-Identifier: Apache-2.0
#include "engine/measure/gpu_runner.h"
#include "engine/measure/gpu_worker_client.h"

#include <algorithm>
#include <chrono>
#include <optional>
#include <thread>

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
    // Candidates with a module go to one worker process (gpu_worker_client.h: the device opened
    // once, CUDA sources compiled in parallel); the others fail here.
    std::vector<std::optional<MeasureResult>> done(inputs.size());
    std::vector<size_t> which;
    std::vector<const codegen::GpuModule*> modules;
    std::vector<const gpu::GpuCheck*> checks;
    for (size_t i = 0; i < inputs.size(); ++i) {
        const BuildResult& b = builds[i];
        if (b.errorNo != MeasureErrorNo::NoError) {
            done[i] = toMeasureResult({int(b.errorNo), b.errorMsg, {}, {}});
        } else if (!b.gpuModule) {
            done[i] = toMeasureResult({gpu::kErrorCompileDevice, "the GPU runner got a candidate without a GPU module", {}, {}});
        } else {
            which.push_back(i);
            modules.push_back(b.gpuModule.get());
            checks.push_back(inputs[i].check.get());
        }
    }
    // Events: a candidate's Run step starts when the previous one's result arrives (the first one
    // when the worker starts; its time includes the batch's compilation).
    MeasureEvent e;
    e.phase = MeasureEvent::Phase::Run;
    e.batch = batch;
    e.device = device;
    e.deviceKey = "local";
    auto start = [&](size_t k) {
        if (k >= which.size()) return;
        e.kind = MeasureEvent::Kind::Started;
        e.candidate = int(which[k]);
        e.workloadKey = inputs[which[k]].workloadKey;
        e.startTime = nowTimestamp();
        e.errorNo = MeasureErrorNo::NoError;
        e.message.clear();
        emitEvent(e);
    };
    auto t0 = std::chrono::steady_clock::now();
    start(0);
    const int threads = int(std::max(1u, std::thread::hardware_concurrency()));
    measureGpuModulesInWorker(
        m_options.api, m_options.deviceIndex, modules, o, checks, m_options.timeoutS, threads, {},
        [&](int k, const gpu::GpuMeasureResult& g) {
            MeasureResult r = toMeasureResult(g);
            const auto t1 = std::chrono::steady_clock::now();
            r.allCost = std::chrono::duration<double>(t1 - t0).count();
            t0 = t1;
            e.kind = MeasureEvent::Kind::Finished;
            e.endTime = nowTimestamp();
            e.errorNo = r.errorNo;
            e.message = r.errorMsg;
            emitEvent(e);
            done[which[size_t(k)]] = std::move(r);
            start(size_t(k) + 1);
        });
    for (size_t i = 0; i < inputs.size(); ++i) {
        MeasureResult r = done[i] ? std::move(*done[i]) : toMeasureResult({gpu::kErrorUnknown, "no result from the GPU worker", {}, {}});
        r.allCost += builds[i].timeCost;
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
