// SPDX-License-Identifier: Apache-2.0
// tunebench-gpu-server: the measurement server of a GPU machine, TVM's runtime-only
// `python -m tvm.exec.rpc_server --tracker HOST:PORT --key KEY` for TuneBench's GPU candidates. It
// registers with the tracker under KEY (TVM's protocol), answers the device-attribute call the host
// reads HardwareParams with, and compiles, checks and times uploaded GpuModules on one OpenCL or
// CUDA device (engine/measure/gpu_executor.h), each in a forked child with the request's timeout.
//
// What it is made of: engine/rpc's RpcServer and the GPU runtime (engine/measure/gpu_device.h:
// OpenCL through the ICD loader, CUDA driver API + NVRTC dlopen()ed at run time). No Qt, no LLVM,
// no engine library beyond those: tools/gpu/build.sh builds it where only g++, cmake and
// nlohmann-json are installed (the H100 machine of GPU-MACHINE.md). scripts/mali-board starts a
// fleet of them on PoCL ("Mali" boards, key rk3399).
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "engine/measure/gpu_executor.h"
#include "engine/rpc/rpc_server.h"
#include "engine/support/error.h"
#include "engine/support/log.h"
#include "engine/support/process.h"
#include "tools/server_args.h"

namespace {

void usage(FILE* f) {
    std::fprintf(f,
                 "usage: tunebench-gpu-server [--device opencl|cuda] [--device-index N] [--tracker HOST:PORT]\n"
                 "                            [--key KEY] [--host ADDR] [--port P] [--port-end P]\n"
                 "                            [--custom-addr ADDR] [--token T] [--work-dir DIR] [--seed N]\n"
                 "                            [--attr NAME=VALUE]...\n"
                 "Serves TuneBench GPU measurements (OpenCL C / CUDA C modules) on one device of this machine\n"
                 "and registers with an RPC tracker under KEY (default: the device kind), like\n"
                 "`python -m tvm.exec.rpc_server`.\n"
                 "  --device D        opencl (the ICD loader's devices, GPUs first) or cuda (default opencl)\n"
                 "  --device-index N  which device of that kind (default 0; `clinfo -l`, `nvidia-smi -L`)\n"
                 "  --host ADDR       listen address (default 0.0.0.0, as TVM)\n"
                 "  --port P          first port tried (default 9090; 0: any free port); --port-end P (default 9199)\n"
                 "  --attr NAME=VALUE report VALUE for the device attribute NAME (TVM's names: max_threads_per_block,\n"
                 "                    max_shared_memory_per_block, device_name, ...) and enforce the launch limits among\n"
                 "                    them: an emulated device (scripts/mali-board). VALUE is JSON, else a string.\n");
}

int serve(int argc, char** argv) {
    tb::rpc::RpcServerOptions o;
    o.host = "0.0.0.0";
    tb::gpu::GpuApi api = tb::gpu::GpuApi::OpenCL;
    int index = 0;
    uint64_t seed = 0;
    nlohmann::json overrides = nlohmann::json::object();
    tb::tools::ArgReader r(argc, argv);
    while (r.next()) {
        if (r.arg() == "-h" || r.arg() == "--help") {
            usage(stdout);
            return 0;
        } else if (r.is("--device-index")) {
            index = std::atoi(r.value().c_str());
        } else if (r.is("--device")) {
            try {
                api = tb::gpu::parseGpuApi(r.value());
            } catch (const std::invalid_argument& e) {
                TB_USER_ERROR() << "--device: " << e.what();
            }
        } else if (tb::tools::applyServerOption(r, o)) {
        } else if (r.is("--attr")) {
            const std::string v = r.value();
            const size_t eq = v.find('=');
            TB_USER_CHECK(eq != std::string::npos && eq > 0) << "--attr wants NAME=VALUE, got '" << v << "'";
            const std::string text = v.substr(eq + 1);
            overrides[v.substr(0, eq)] = nlohmann::json::accept(text) ? nlohmann::json::parse(text) : nlohmann::json(text);
        } else if (r.is("--seed")) {
            seed = std::strtoull(r.value().c_str(), nullptr, 10);
        } else {
            std::fprintf(stderr, "error: unknown option '%s'\n", r.arg().c_str());
            usage(stderr);
            return 2;
        }
    }
    if (o.key.empty()) o.key = tb::gpu::gpuApiName(api);
    o.log = tb::logLine;

    const tb::StopSignals signals;  // before the server's threads start
    std::shared_ptr<tb::measure::GpuExecutor> executor;
    try {
        executor = std::make_shared<tb::measure::GpuExecutor>(api, index, seed, overrides);
    } catch (const tb::gpu::GpuError& e) {
        std::fprintf(stderr, "error: %s device %d: %s\n", tb::gpu::gpuApiName(api), index, e.what());
        return 1;
    } catch (const std::invalid_argument& e) {
        TB_USER_ERROR() << "--attr: " << e.what();
    }
    tb::rpc::RpcServer server(o, executor);
    try {
        server.start();
    } catch (const tb::rpc::RpcError& e) {
        std::fprintf(stderr, "error: %s\n", e.what());
        return 1;
    }
    const tb::gpu::GpuDeviceAttributes& a = executor->attributes();
    tb::logLine("tunebench-gpu-server key '" + o.key + "' listening on port " + std::to_string(server.port()) + ": " +
                tb::gpu::gpuApiName(api) + " device " + std::to_string(index) + " '" + a.deviceName + "' (" +
                a.platformName + ", max_threads_per_block " + std::to_string(a.maxThreadsPerBlock) +
                ", max_shared_memory_per_block " + std::to_string(a.maxSharedMemoryPerBlock) + ", warp_size " +
                std::to_string(a.warpSize) + ")");
    signals.wait();
    server.stop();
    return 0;
}

}  // namespace

int main(int argc, char** argv) { return tb::runMain([&] { return serve(argc, argv); }); }
