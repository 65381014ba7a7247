// SPDX-License-Identifier: Apache-2.0
// tunebench-gpu-selftest: the GPU runtime's checks on a machine without Qt (the H100 of
// GPU-MACHINE.md), where the Qt Test suites cannot run. For one device it prints the attributes,
// then runs the sample modules (tools/gpu/sample_modules.h) in that device's language: vector add
// and the tiled matmul + bias + ReLU (two launches, shared memory, a workspace) must give the CPU's
// answers with positive device times; a source that does not compile must be COMPILE_DEVICE with
// the compiler's log; an out-of-bounds write RUNTIME_DEVICE; a wrong expected value WRONG_ANSWER; an
// endless kernel RUN_TIMEOUT. Prints one line per case and "selftest: N passed, M failed"; exits 0
// only when every case passed.
//
//   tunebench-gpu-selftest [--device opencl|cuda] [--device-index N]
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>

#include <nlohmann/json.hpp>

#include "engine/measure/gpu_device.h"
#include "tools/gpu/sample_modules.h"

using namespace tb::gpu;

int main(int argc, char** argv) {
    GpuApi api = GpuApi::OpenCL;
    int index = 0;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        if (a == "--device" && i + 1 < argc) {
            api = parseGpuApi(argv[++i]);
        } else if (a == "--device-index" && i + 1 < argc) {
            index = std::atoi(argv[++i]);
        } else {
            std::fprintf(stderr, "usage: tunebench-gpu-selftest [--device opencl|cuda] [--device-index N]\n");
            return 2;
        }
    }
    const tb::codegen::GpuLanguage lang =
        api == GpuApi::CUDA ? tb::codegen::GpuLanguage::CUDA : tb::codegen::GpuLanguage::OpenCL;
    int passed = 0, failed = 0;
    auto report = [&](const char* name, bool ok, const std::string& detail) {
        std::printf("%s %-28s %s\n", ok ? "PASS" : "FAIL", name, detail.c_str());
        std::fflush(stdout);
        (ok ? passed : failed)++;
    };
    try {
        const GpuDeviceAttributes a = queryGpuAttributesIsolated(api, index, 120);
        std::printf("%s device %d attributes: %s\n", gpuApiName(api), index, toJson(a).dump().c_str());
        report("attributes", a.exist && a.maxThreadsPerBlock > 0 && a.maxSharedMemoryPerBlock > 0, a.deviceName);
    } catch (const GpuError& e) {
        report("attributes", false, e.what());
        std::printf("selftest: %d passed, %d failed\n", passed, failed);
        return 1;
    }
    GpuMeasureOptions o;
    o.number = 10;
    o.repeat = 3;
    o.minRepeatMs = 50;
    auto costs = [](const GpuMeasureResult& r) {
        std::string s;
        for (double c : r.costs) s += std::to_string(c * 1e6) + " us ";
        return s;
    };
    auto expectOk = [&](const char* name, const samples::SampleCase& s) {
        const GpuMeasureResult r = measureGpuModuleIsolated(api, index, s.module, o, &s.check, 120);
        bool ok = r.ok() && r.costs.size() == 3;
        for (double c : r.costs) ok = ok && c > 0;
        report(name, ok, r.ok() ? costs(r) : r.errorMsg);
    };
    auto expectError = [&](const char* name, const tb::codegen::GpuModule& m, const GpuCheck* check, int errorNo,
                           const std::string& needle, double timeout) {
        const GpuMeasureResult r = measureGpuModuleIsolated(api, index, m, o, check, timeout);
        const bool ok = r.errorNo == errorNo && r.errorMsg.find(needle) != std::string::npos;
        report(name, ok, "error " + std::to_string(r.errorNo) + ": " + r.errorMsg.substr(0, 300));
    };
    expectOk("vector_add", samples::vectorAdd(lang, 1 << 20));
    expectOk("tiled_matmul_bias_relu", samples::tiledMatmulBiasRelu(lang));
    expectOk("tiled_matmul_bias_relu_512", samples::tiledMatmulBiasRelu(lang, 512, 512, 512));
    expectError("compile_error", samples::brokenSource(lang), nullptr, kErrorCompileDevice, "undeclared_value", 120);
    expectError("out_of_bounds", samples::outOfBoundsWrite(lang), nullptr, kErrorRuntimeDevice, "out-of-bounds", 120);
    samples::SampleCase wrong = samples::vectorAdd(lang);
    wrong.check.expected[2][17] += 1.0f;
    expectError("wrong_answer", wrong.module, &wrong.check, kErrorWrongAnswer, "element 17", 120);
    expectError("endless_kernel", samples::endlessLoop(lang), nullptr, kErrorRunTimeout, "killed", 8);
    std::printf("selftest: %d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
