// SPDX-License-Identifier: Apache-2.0
// tunebench-gpu-worker: measures one GPU module for a host process that must not load the vendor
// runtime itself (engine/measure/gpu_worker_client.h). The host links LLVM 16; PoCL loads its own
// LLVM (15 on Debian 12) and, in one process with LLVM 16, calls into the wrong library and
// crashes. So candidates and networks run here, in a process with no LLVM.
//
//   tunebench-gpu-worker DIR
//
// DIR holds request.json ({"api", "device_index", "options": {number, repeat, min_repeat_ms,
// seed}, "return_buffers": [i, ...]}), module.json (codegen::toJson of the GpuModule) and, when
// present, check.bin (measure::encodeCheckBlob). The worker writes DIR/result.json
// (gpu::toJson of the GpuMeasureResult, without outputs) and DIR/out<i>.bin (raw float32) for each
// requested argument buffer i. Exit status 0 when result.json was written.
//
// Batch mode (a tuning round's candidates, gpu_worker_client.h measureGpuModulesInWorker):
// request.json also has "count": N and "first": F; the modules are module<i>.json and the checks
// check<i>.bin (when present) for i in [F, N). The device is opened once, every CUDA source is
// compiled first on "compile_threads" threads (GpuDevice::precompile), then the candidates run in
// order, each result written to result<i>.json as soon as it is known (through a rename, so the
// client never reads half a file). After a candidate fails at run time (RUNTIME_DEVICE: a CUDA
// fault poisons the context) the worker stops; the client starts a new one for the rest.
// With TB_GPU_WORKER_VERBOSE set, a batch prints its compile and run seconds to stderr.
#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/codegen/gpu_module.h"
#include "engine/measure/check_blob.h"
#include "engine/measure/gpu_device.h"

using namespace tb;

namespace {

std::string readFile(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw std::runtime_error("cannot read " + path);
    return std::string(std::istreambuf_iterator<char>(in), {});
}

gpu::GpuMeasureOptions measureOptions(const nlohmann::json& req) {
    gpu::GpuMeasureOptions o;
    const auto& jo = req.at("options");
    o.number = jo.at("number").get<int>();
    o.repeat = jo.at("repeat").get<int>();
    o.minRepeatMs = jo.at("min_repeat_ms").get<double>();
    o.seed = jo.at("seed").get<uint64_t>();
    return o;
}

std::optional<measure::CheckSpec> readCheck(const std::string& path) {
    std::ifstream probe(path);
    if (!probe.good()) return std::nullopt;
    return measure::decodeCheckBlob(readFile(path));
}

gpu::GpuMeasureResult failure(int errorNo, std::string message) {
    gpu::GpuMeasureResult r;
    r.errorNo = errorNo;
    r.errorMsg = std::move(message);
    return r;
}

bool writeResult(const std::string& dir, const std::string& name, const gpu::GpuMeasureResult& r) {
    const std::string tmp = dir + "/." + name + ".tmp";
    {
        std::ofstream res(tmp);
        res << gpu::toJson(r).dump();
        if (!res.good()) return false;
    }
    return std::rename(tmp.c_str(), (dir + "/" + name).c_str()) == 0;
}

/// Batch mode (file comment). Returns the exit status.
int runBatch(const std::string& dir, const nlohmann::json& req) {
    const int count = req.at("count").get<int>(), first = req.value("first", 0);
    const int threads = std::max(1, req.value("compile_threads", 1));
    const bool verbose = std::getenv("TB_GPU_WORKER_VERBOSE") != nullptr;
    std::vector<std::optional<codegen::GpuModule>> modules(size_t(std::max(count, 0)));
    std::vector<std::string> loadErrors(modules.size());
    std::unique_ptr<gpu::GpuDevice> device;
    std::string openError;
    int openErrorNo = gpu::kErrorUnknown;
    try {
        device = gpu::openGpuDevice(gpu::parseGpuApi(req.at("api").get<std::string>()), req.at("device_index").get<int>());
    } catch (const gpu::GpuError& e) {
        openError = e.what();
        openErrorNo = e.errorNo();
    } catch (const std::exception& e) {
        openError = std::string("GPU worker: ") + e.what();
    }
    const gpu::GpuMeasureOptions o = measureOptions(req);
    if (device) {
        std::vector<const codegen::GpuModule*> all;
        for (int i = first; i < count; ++i) {
            try {
                modules[size_t(i)] = codegen::gpuModuleFromJson(
                    nlohmann::json::parse(readFile(dir + "/module" + std::to_string(i) + ".json")));
                all.push_back(&*modules[size_t(i)]);
            } catch (const std::exception& e) {
                loadErrors[size_t(i)] = std::string("GPU worker: ") + e.what();
            }
        }
        const auto t0 = std::chrono::steady_clock::now();
        device->precompile(all, threads);
        if (verbose)
            std::fprintf(stderr, "tunebench-gpu-worker: compiled %zu modules on %d threads in %.2f s\n", all.size(),
                         threads, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    }
    const auto tRun = std::chrono::steady_clock::now();
    for (int i = first; i < count; ++i) {
        gpu::GpuMeasureResult r;
        if (!device) {
            r = failure(openErrorNo, openError);
        } else if (!modules[size_t(i)]) {
            r = failure(gpu::kErrorUnknown, loadErrors[size_t(i)]);
        } else {
            try {
                const auto check = readCheck(dir + "/check" + std::to_string(i) + ".bin");
                r = gpu::measureGpuModule(*device, *modules[size_t(i)], o, check ? &*check : nullptr);
            } catch (const std::exception& e) {
                r = failure(gpu::kErrorUnknown, std::string("GPU worker: ") + e.what());
            }
            modules[size_t(i)].reset();
        }
        r.outputs.clear();
        if (!writeResult(dir, "result" + std::to_string(i) + ".json", r)) return 1;
        // A run-time fault may have poisoned the device context: the rest go to a new worker.
        if (r.errorNo == gpu::kErrorRuntimeDevice && device) return 0;
    }
    if (verbose)
        std::fprintf(stderr, "tunebench-gpu-worker: ran %d modules in %.2f s\n", count - first,
                     std::chrono::duration<double>(std::chrono::steady_clock::now() - tRun).count());
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc != 2) {
        std::fprintf(stderr, "usage: tunebench-gpu-worker DIR (started by TuneBench's GPU runner)\n");
        return 2;
    }
    const std::string dir = argv[1];
    gpu::GpuMeasureResult r;
    nlohmann::json req;
    try {
        req = nlohmann::json::parse(readFile(dir + "/request.json"));
        if (req.contains("count")) return runBatch(dir, req);
        const codegen::GpuModule m = codegen::gpuModuleFromJson(nlohmann::json::parse(readFile(dir + "/module.json")));
        gpu::GpuMeasureOptions o = measureOptions(req);
        o.returnOutputs = !req.at("return_buffers").empty();
        const auto check = readCheck(dir + "/check.bin");
        auto device = gpu::openGpuDevice(gpu::parseGpuApi(req.at("api").get<std::string>()), req.at("device_index").get<int>());
        r = gpu::measureGpuModule(*device, m, o, check ? &*check : nullptr);
    } catch (const gpu::GpuError& e) {
        r = failure(e.errorNo(), e.what());
    } catch (const std::exception& e) {
        r = failure(gpu::kErrorUnknown, std::string("GPU worker: ") + e.what());
    }
    if (r.ok() && req.contains("return_buffers")) {
        for (int b : req.at("return_buffers").get<std::vector<int>>()) {
            if (b < 0 || size_t(b) >= r.outputs.size()) continue;
            std::ofstream out(dir + "/out" + std::to_string(b) + ".bin", std::ios::binary);
            out.write(reinterpret_cast<const char*>(r.outputs[size_t(b)].data()),
                      std::streamsize(r.outputs[size_t(b)].size() * sizeof(float)));
        }
    }
    r.outputs.clear();
    return writeResult(dir, "result.json", r) ? 0 : 1;
}
