// SPDX-License-Identifier: Apache-2.0
#include "engine/measure/gpu_device.h"

#include <cmath>
#include <cstring>
#include <sstream>

#include <nlohmann/json.hpp>

#include "engine/measure/child_run.h"
#include "engine/measure/timer.h"
#include "engine/support/process.h"

namespace tb::gpu {

using Json = nlohmann::json;

const char* gpuApiName(GpuApi api) { return api == GpuApi::CUDA ? "cuda" : "opencl"; }

GpuApi parseGpuApi(const std::string& name) {
    if (name == "opencl") return GpuApi::OpenCL;
    if (name == "cuda") return GpuApi::CUDA;
    throw std::invalid_argument("unknown GPU device kind '" + name + "' (opencl or cuda)");
}

Json toJson(const GpuDeviceAttributes& a) {
    return {{"exist", a.exist},
            {"max_threads_per_block", a.maxThreadsPerBlock},
            {"warp_size", a.warpSize},
            {"max_shared_memory_per_block", a.maxSharedMemoryPerBlock},
            {"compute_version", a.computeVersion},
            {"device_name", a.deviceName},
            {"max_clock_rate", a.maxClockRate},
            {"multi_processor_count", a.multiProcessorCount},
            {"max_thread_dimensions", a.maxThreadDimensions},
            {"max_registers_per_block", a.maxRegistersPerBlock},
            {"api_version", a.apiVersion},
            {"driver_version", a.driverVersion},
            {"l2_cache_size_bytes", a.l2CacheSizeBytes},
            {"total_global_memory", a.totalGlobalMemory},
            {"platform_name", a.platformName}};
}

GpuDeviceAttributes gpuDeviceAttributesFromJson(const Json& j) {
    if (!j.is_object()) throw std::invalid_argument("device attributes: not a JSON object");
    GpuDeviceAttributes a;
    auto get = [&](const char* key, auto* out) {
        if (!j.contains(key)) return;
        try {
            j.at(key).get_to(*out);
        } catch (const Json::exception&) {
            throw std::invalid_argument(std::string("device attributes: '") + key + "' has the wrong type");
        }
    };
    get("exist", &a.exist);
    get("max_threads_per_block", &a.maxThreadsPerBlock);
    get("warp_size", &a.warpSize);
    get("max_shared_memory_per_block", &a.maxSharedMemoryPerBlock);
    get("compute_version", &a.computeVersion);
    get("device_name", &a.deviceName);
    get("max_clock_rate", &a.maxClockRate);
    get("multi_processor_count", &a.multiProcessorCount);
    get("max_thread_dimensions", &a.maxThreadDimensions);
    get("max_registers_per_block", &a.maxRegistersPerBlock);
    get("api_version", &a.apiVersion);
    get("driver_version", &a.driverVersion);
    get("l2_cache_size_bytes", &a.l2CacheSizeBytes);
    get("total_global_memory", &a.totalGlobalMemory);
    get("platform_name", &a.platformName);
    return a;
}

Json toJson(const GpuMeasureResult& r) {
    Json j = {{"error_no", r.errorNo}, {"error_msg", r.errorMsg}, {"costs", r.costs}};
    if (!r.outputs.empty()) j["outputs"] = r.outputs;
    return j;
}

GpuMeasureResult gpuMeasureResultFromJson(const Json& j) {
    GpuMeasureResult r;
    try {
        j.at("error_no").get_to(r.errorNo);
        j.at("error_msg").get_to(r.errorMsg);
        j.at("costs").get_to(r.costs);
        if (j.contains("outputs")) j.at("outputs").get_to(r.outputs);
    } catch (const Json::exception& e) {
        throw std::invalid_argument(std::string("GPU measure result: ") + e.what());
    }
    return r;
}

int gpuDeviceCount(GpuApi api) { return api == GpuApi::CUDA ? detail::cudaDeviceCount() : detail::openclDeviceCount(); }

std::unique_ptr<GpuDevice> openGpuDevice(GpuApi api, int index) {
    return api == GpuApi::CUDA ? detail::openCudaDevice(index) : detail::openOpenclDevice(index);
}

namespace {

// The guard pattern: a signalling-NaN-like bit pattern no kernel computes by accident.
constexpr uint32_t kGuardBits = 0x7fb1a5edu;

GpuMeasureResult failure(int errorNo, std::string message) {
    GpuMeasureResult r;
    r.errorNo = errorNo;
    r.errorMsg = std::move(message);
    return r;
}

GpuMeasureResult measure(GpuDevice& device, const codegen::GpuModule& m, const GpuMeasureOptions& o,
                         const GpuCheck* check) {
    if (o.number < 1 || o.repeat < 1 || o.minRepeatMs < 0)
        return failure(kErrorUnknown, "timer needs number >= 1, repeat >= 1, min_repeat_ms >= 0");
    if (m.launches.empty()) return failure(kErrorCompileDevice, "the GPU module has no launches");
    const std::unique_ptr<GpuProgram> prog = device.load(m);

    std::vector<float> guard(static_cast<size_t>(kGuardElements));
    for (float& g : guard) std::memcpy(&g, &kGuardBits, 4);
    const int nBuffers = int(m.bufferElements.size());
    for (int b = 0; b < nBuffers; ++b) {
        const int64_t n = m.bufferElements[size_t(b)];
        if (b < m.numArgs) {
            const std::vector<float>* given = check && size_t(b) < check->inputs.size() ? &check->inputs[size_t(b)] : nullptr;
            if (given && !given->empty()) {
                if (int64_t(given->size()) != n)
                    return failure(kErrorUnknown, "check input " + std::to_string(b) + " has " +
                                                      std::to_string(given->size()) + " elements, the buffer has " +
                                                      std::to_string(n));
                prog->write(b, 0, given->data(), n);
            } else {
                std::vector<float> data(static_cast<size_t>(n));
                measure::fillRandom(data.data(), data.size(), o.seed + uint64_t(b));
                prog->write(b, 0, data.data(), n);
            }
        }
        prog->write(b, n, guard.data(), kGuardElements);
    }

    prog->runTimed(1);  // TVM's warm-up run; its outputs are the checked ones

    for (int b = 0; b < nBuffers; ++b) {
        std::vector<float> g(static_cast<size_t>(kGuardElements));
        prog->read(b, m.bufferElements[size_t(b)], g.data(), kGuardElements);
        if (std::memcmp(g.data(), guard.data(), g.size() * 4) != 0)
            return failure(kErrorRuntimeDevice, "out-of-bounds write detected after buffer " + std::to_string(b));
    }
    GpuMeasureResult r;
    if (check || o.returnOutputs) {
        for (int b = 0; b < m.numArgs; ++b) {
            const bool checked = check && size_t(b) < check->expected.size() && !check->expected[size_t(b)].empty();
            if (!checked && !o.returnOutputs) continue;
            std::vector<float> got(size_t(m.bufferElements[size_t(b)]));
            prog->read(b, 0, got.data(), int64_t(got.size()));
            if (checked) {
                const std::vector<float>& want = check->expected[size_t(b)];
                if (want.size() != got.size())
                    return failure(kErrorUnknown, "expected output " + std::to_string(b) + " has " +
                                                      std::to_string(want.size()) + " elements, the buffer has " +
                                                      std::to_string(got.size()));
                for (size_t k = 0; k < want.size(); ++k) {
                    if (!(std::abs(double(got[k]) - want[k]) <= check->atol + check->rtol * std::abs(double(want[k])))) {
                        std::ostringstream os;
                        os << "argument " << b << " element " << k << ": got " << got[k] << ", expected " << want[k];
                        return failure(kErrorWrongAnswer, os.str());
                    }
                }
            }
            if (o.returnOutputs) {
                r.outputs.resize(size_t(m.numArgs));
                r.outputs[size_t(b)] = std::move(got);
            }
        }
    }
    measure::TimerOptions t;
    t.number = o.number;
    t.repeat = o.repeat;
    t.minRepeatMs = o.minRepeatMs;
    r.costs = measure::timeEvaluateRounds([&](int number) { return prog->runTimed(number); }, t);
    return r;
}

}  // namespace

GpuMeasureResult measureGpuModule(GpuDevice& device, const codegen::GpuModule& module, const GpuMeasureOptions& options,
                                  const GpuCheck* check) {
    try {
        return measure(device, module, options, check);
    } catch (const GpuError& e) {
        return failure(e.errorNo(), e.what());
    } catch (const std::exception& e) {
        return failure(kErrorUnknown, e.what());
    }
}

GpuMeasureResult measureGpuModuleIsolated(GpuApi api, int index, const codegen::GpuModule& module,
                                          const GpuMeasureOptions& options, const GpuCheck* check, double timeoutSec) {
    measure::ChildOutcome c;
    try {
        c = measure::runInChild(timeoutSec, [&] {
            GpuMeasureResult r;
            try {
                const std::unique_ptr<GpuDevice> dev = openGpuDevice(api, index);
                r = measureGpuModule(*dev, module, options, check);
            } catch (const GpuError& e) {
                r = failure(e.errorNo(), e.what());
            } catch (const std::exception& e) {
                r = failure(kErrorUnknown, e.what());
            }
            return toJson(r).dump();
        });
    } catch (const std::exception& e) {
        return failure(kErrorUnknown, e.what());
    }
    if (c.timedOut) {
        std::ostringstream os;
        os << "run exceeded " << timeoutSec << " s; candidate killed";
        return failure(kErrorRunTimeout, os.str());
    }
    if (!c.ok()) {
        return failure(kErrorRuntimeDevice, "the candidate crashed the measurement process: " + describeWaitStatus(c.status));
    }
    try {
        return gpuMeasureResultFromJson(Json::parse(c.out));
    } catch (const std::exception& e) {
        return failure(kErrorUnknown, std::string("bad reply from the measurement process: ") + e.what());
    }
}

GpuDeviceAttributes queryGpuAttributesIsolated(GpuApi api, int index, double timeoutSec) {
    const measure::ChildOutcome c = measure::runInChild(timeoutSec, [&] {
        Json j;
        try {
            j = {{"ok", true}, {"attributes", toJson(openGpuDevice(api, index)->attributes())}};
        } catch (const GpuError& e) {
            j = {{"ok", false}, {"error_no", e.errorNo()}, {"error_msg", e.what()}};
        } catch (const std::exception& e) {
            j = {{"ok", false}, {"error_no", kErrorUnknown}, {"error_msg", e.what()}};
        }
        return j.dump();
    });
    if (c.timedOut) throw GpuError(kErrorRunTimeout, "reading the device attributes took longer than " +
                                                         std::to_string(int(timeoutSec)) + " s");
    if (!c.ok()) throw GpuError(kErrorRuntimeDevice, std::string("reading the device attributes crashed the child process"));
    const Json j = Json::parse(c.out);
    if (!j.at("ok").get<bool>()) throw GpuError(j.at("error_no").get<int>(), j.at("error_msg").get<std::string>());
    return gpuDeviceAttributesFromJson(j.at("attributes"));
}

}  // namespace tb::gpu
