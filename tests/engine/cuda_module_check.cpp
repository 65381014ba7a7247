// SPDX-License-Identifier: Apache-2.0
// Manual check on a CUDA machine (not built by CMake: it needs the CUDA toolkit): NVRTC-compiles each
// GpuModule that `TB_GPU_EXPORT=<dir> tst_gpu_lower` exported (<dir>/<case>/module.json, in<i>.bin,
// out<i>.bin), runs its launches with the driver API on the exported inputs and compares the outputs
// with the interpreter's (same tolerance as tests/engine/test_util.h compareOutputs).
//   g++ -O1 -std=c++17 -I/usr/local/cuda/include cuda_module_check.cpp -o cuda_module_check \
//       -L/usr/local/cuda/lib64 -L/usr/local/cuda/lib64/stubs -lnvrtc -lcuda -Wl,-rpath,/usr/local/cuda/lib64
//   ./cuda_module_check <dir>/*
#include <cuda.h>
#include <nvrtc.h>
#include <nlohmann/json.hpp>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>
#include <chrono>
#define CK(x) do { CUresult r = (x); if (r != CUDA_SUCCESS) { const char* s; cuGetErrorString(r, &s); std::printf("%s: %s\n", #x, s); return 1; } } while (0)
std::vector<float> readF(const std::string& p) {
    std::ifstream in(p, std::ios::binary); std::vector<float> v;
    in.seekg(0, std::ios::end); size_t n = in.tellg(); in.seekg(0); v.resize(n / 4); in.read((char*)v.data(), n); return v;
}
int runOne(const std::string& dir) {
    nlohmann::json m = nlohmann::json::parse(std::ifstream(dir + "/module.json"));
    std::string src = m["source"];
    nvrtcProgram prog; nvrtcCreateProgram(&prog, src.c_str(), "k.cu", 0, nullptr, nullptr);
    const char* opts[] = {"--gpu-architecture=sm_90", "-default-device"};
    nvrtcResult rr = nvrtcCompileProgram(prog, 1, opts);
    size_t logn; nvrtcGetProgramLogSize(prog, &logn); std::string log(logn, 0); nvrtcGetProgramLog(prog, log.data());
    if (rr != NVRTC_SUCCESS) { std::printf("%s: NVRTC FAILED\n%s\n", dir.c_str(), log.c_str()); return 1; }
    size_t ptxn; nvrtcGetPTXSize(prog, &ptxn); std::string ptx(ptxn, 0); nvrtcGetPTX(prog, ptx.data());
    CUmodule mod; CK(cuModuleLoadData(&mod, ptx.c_str()));
    auto elems = m["buffer_elements"].get<std::vector<int64_t>>();
    int numArgs = m["num_args"];
    std::vector<CUdeviceptr> bufs(elems.size());
    int nIn = 0;
    for (size_t i = 0; i < elems.size(); ++i) {
        CK(cuMemAlloc(&bufs[i], elems[i] * 4));
        std::ifstream t(dir + "/in" + std::to_string(i) + ".bin");
        if (t) { auto v = readF(dir + "/in" + std::to_string(i) + ".bin"); CK(cuMemcpyHtoD(bufs[i], v.data(), v.size() * 4)); ++nIn; }
        else CK(cuMemsetD32(bufs[i], 0x7fc00000u, elems[i]));
    }
    auto launchAll = [&]() -> int {
        for (auto& l : m["launches"]) {
            CUfunction f; CK(cuModuleGetFunction(&f, mod, l["entry"].get<std::string>().c_str()));
            std::vector<void*> args; std::vector<CUdeviceptr> ptrs;
            for (int a : l["args"]) ptrs.push_back(bufs[a]);
            for (auto& p : ptrs) args.push_back(&p);
            auto g = l["grid"], b = l["block"];
            CK(cuLaunchKernel(f, g[0], g[1], g[2], b[0], b[1], b[2], 0, nullptr, args.data(), nullptr));
        }
        CK(cuCtxSynchronize());
        return 0;
    };
    if (launchAll()) return 1;
    int bad = 0;
    for (int o = nIn; o < numArgs; ++o) {
        auto want = readF(dir + "/out" + std::to_string(o) + ".bin");
        std::vector<float> got(elems[o]); CK(cuMemcpyDtoH(got.data(), bufs[o], got.size() * 4));
        for (size_t i = 0; i < got.size(); ++i)
            if (!(std::fabs(got[i] - want[i]) <= 2e-3f * std::max(1.f, std::fabs(want[i])))) { if (bad++ < 3) std::printf("  mismatch %zu: %g vs %g\n", i, got[i], want[i]); }
    }
    auto t0 = std::chrono::steady_clock::now();
    for (int r = 0; r < 100; ++r) if (launchAll()) return 1;
    double us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count() / 100;
    std::printf("%s: %s (%zu launches, %.1f us per run incl. sync)\n", dir.c_str(), bad ? "WRONG" : "OK", m["launches"].size(), us);
    return bad ? 1 : 0;
}
int main(int argc, char** argv) {
    CK(cuInit(0)); CUdevice d; CK(cuDeviceGet(&d, 0)); CUcontext c; CK(cuDevicePrimaryCtxRetain(&c, d)); CK(cuCtxSetCurrent(c));
    int rc = 0;
    for (int i = 1; i < argc; ++i) rc |= runOne(argv[i]);
    return rc;
}
