// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file gpu_runner.h
/// \brief The host side of GPU measuring: GpuLocalRunner (a GPU of this machine, each candidate in a
/// tunebench-gpu-worker process), the remote device-attribute query through the tracker, and HardwareParams from
/// a device's attributes (seed 003's "get the hardware parameters from the remote device").
///
/// Remote GPU devices need no runner of their own: RpcRunner (rpc_runner.h) sends a candidate whose
/// BuildResult carries a gpuModule to the device as its JSON wire form, and a GPU device server
/// (gpu_executor.h) runs it. GpuLocalRunner is the LocalRunner of GPU candidates: the same error
/// records, with the GPU runtime's isolation (gpu_device.h) instead of the CPU sandbox worker.

#include <cstdint>
#include <string>
#include <vector>

#include "engine/measure/gpu_device.h"
#include "engine/measure/measure.h"
#include "engine/support/hardware_params.h"

namespace tb::measure {

struct GpuRunnerOptions {
    gpu::GpuApi api = gpu::GpuApi::OpenCL;
    int deviceIndex = 0;
    // TVM LocalRunner defaults: timeout 10, number 3, repeat 1, min_repeat_ms 100.
    double timeoutS = 10;  ///< per candidate: compile + check + timing (s)
    int number = 3;
    int repeat = 1;
    double minRepeatMs = 100;
    uint64_t seed = 0;  ///< random fill of arguments without check inputs
};

/// Runs GPU candidates (BuildResult::gpuModule) on a GPU of this machine, a batch in one
/// tunebench-gpu-worker process (gpu_worker_client.h measureGpuModulesInWorker: never a fork of
/// this LLVM-linked process; the device opened once per batch, CUDA sources compiled on every core,
/// each candidate still timed out and crash-isolated on its own). Build errors pass through; a candidate without a GPU
/// module is COMPILE_DEVICE. Never throws for a candidate's failure.
class GpuLocalRunner final : public ProgramRunner {
public:
    /// Throws tb::UserError for number/repeat < 1, timeoutS <= 0 or minRepeatMs < 0.
    explicit GpuLocalRunner(GpuRunnerOptions options);
    std::vector<MeasureResult> run(const std::vector<MeasureInput>& inputs,
                                   const std::vector<BuildResult>& builds) override;
    const GpuRunnerOptions& options() const { return m_options; }

private:
    GpuRunnerOptions m_options;
    long long m_batches = 0;
};

/// A GPU runtime result as a MeasureResult (error number and message kept; costs {kMaxFloat} on
/// error; timestamp now).
MeasureResult toMeasureResult(const gpu::GpuMeasureResult& r);

/// What a remote GPU device answered about itself.
struct RemoteGpuDevice {
    std::string deviceApi;  ///< "opencl" or "cuda"
    gpu::GpuDeviceAttributes attributes;
};

/// Asks the tracker for a device of `key` (waiting up to requestTimeoutS) and calls its
/// `tunebench.gpu.device_attributes` (gpu_executor.h): TVM's `request_remote(key, host, port)`
/// then `remote.device(...).max_shared_memory_per_block` & co. Throws tb::UserError naming the
/// tracker or the key when no device answers, or when the device is not a GPU server.
RemoteGpuDevice queryRemoteGpuDevice(const std::string& trackerHost, int trackerPort, const std::string& key,
                                     double requestTimeoutS = 60, const std::string& token = {});

/// HardwareParams from a device's attributes as seed 003 builds them: HardwareParams::gpu
/// (num_cores -1, vector 16, cache line 64, max_local_memory INT32_MAX) with the device's
/// max_shared_memory_per_block, max_threads_per_block and warp_size, and max_vthread_extent =
/// warp_size / 4 when that is > 1, else warp_size.
HardwareParams hardwareParamsFromGpu(const gpu::GpuDeviceAttributes& attributes);

}  // namespace tb::measure
