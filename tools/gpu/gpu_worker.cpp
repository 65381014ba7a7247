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
#include <cstdio>
#include <fstream>
#include <iterator>
#include <optional>
#include <sstream>
#include <string>

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
        const codegen::GpuModule m = codegen::gpuModuleFromJson(nlohmann::json::parse(readFile(dir + "/module.json")));
        gpu::GpuMeasureOptions o;
        const auto& jo = req.at("options");
        o.number = jo.at("number").get<int>();
        o.repeat = jo.at("repeat").get<int>();
        o.minRepeatMs = jo.at("min_repeat_ms").get<double>();
        o.seed = jo.at("seed").get<uint64_t>();
        o.returnOutputs = !req.at("return_buffers").empty();
        std::optional<measure::CheckSpec> check;
        std::ifstream probe(dir + "/check.bin");
        if (probe.good()) check = measure::decodeCheckBlob(readFile(dir + "/check.bin"));
        auto device = gpu::openGpuDevice(gpu::parseGpuApi(req.at("api").get<std::string>()), req.at("device_index").get<int>());
        r = gpu::measureGpuModule(*device, m, o, check ? &*check : nullptr);
    } catch (const gpu::GpuError& e) {
        r = {};
        r.errorNo = e.errorNo();
        r.errorMsg = e.what();
    } catch (const std::exception& e) {
        r = {};
        r.errorNo = gpu::kErrorUnknown;
        r.errorMsg = std::string("GPU worker: ") + e.what();
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
    std::ofstream res(dir + "/result.json");
    res << gpu::toJson(r).dump();
    return res.good() ? 0 : 1;
}
