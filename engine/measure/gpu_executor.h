// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file gpu_executor.h
/// \brief GpuExecutor: what a GPU device server does with a session's requests (the
/// rpc::MeasureExecutor of `tunebench-gpu-server` and `tunebench-cli rpc-server --device
/// opencl|cuda`), and the name of the device-attribute call the host reads HardwareParams with.
///
/// Why: engine/rpc serves sessions and knows nothing about code (measure_executor.h); the GPU
/// runtime (gpu_device.h) knows nothing about sessions. This adapter joins them, so one server
/// implementation (RpcServer: TVM's tracker registration and handshake) serves CPUs, ARM boards and
/// GPUs alike.
///
/// Requests:
///  - run (RunRequest): the uploaded blob `module` is a GpuModule in its JSON wire form
///    (codegen::toJson); `<module>.check`, when uploaded too, is a check blob (check_blob.h). The
///    module runs in a forked child (measureGpuModuleIsolated) on the server's device with the
///    request's number / repeat / min_repeat_ms, killed after the request's timeout. The CPU cache
///    flush is ignored, `function` and `args` too (the module names its own launches and buffers).
///    A blob that is not a GpuModule is COMPILE_DEVICE "malformed GPU module: <field>".
///  - call `tunebench.gpu.device_attributes` (no arguments): {"error_no": 0, "error_msg": "",
///    "device_api": "opencl"|"cuda", "attributes": {TVM's names: max_shared_memory_per_block,
///    max_threads_per_block, warp_size, ...}} (gpu_device.h GpuDeviceAttributes). This stands in
///    for TVM's `remote.device(...)` attribute queries (`dev.max_shared_memory_per_block` & co.,
///    RPC code kDevGetAttr), which seed 003 makes to fill HardwareParams.
/// The attributes are read once, at construction, in a forked child (the server process never
/// initializes the vendor runtime, so its measuring children can).
///
/// Emulated boards: attribute overrides (`--attr max_threads_per_block=256` of the server) replace
/// what the device reports, and the launch limits among them are then enforced as the emulated
/// device would: a launch whose block exceeds max_threads_per_block or max_thread_dimensions, or
/// that declares more shared memory than max_shared_memory_per_block, is RUNTIME_DEVICE (a Mali
/// refuses such a work-group with CL_INVALID_WORK_GROUP_SIZE / CL_OUT_OF_RESOURCES). This is how
/// scripts/mali-board makes PoCL on this machine's CPU a fleet of RK3399 "Mali" boards for the
/// search (seed 003 reads HardwareParams from the device).

#include <cstdint>
#include <string>

#include <nlohmann/json_fwd.hpp>

#include "engine/measure/gpu_device.h"
#include "engine/rpc/measure_executor.h"

namespace tb::measure {

/// The kCall function answering the device's attributes (file comment).
inline constexpr const char* kGpuDeviceAttributesFunction = "tunebench.gpu.device_attributes";

class GpuExecutor final : public rpc::MeasureExecutor {
public:
    /// Reads the attributes of device `index` of `api` (in a child). Throws gpu::GpuError with the
    /// reason when the runtime library is missing or there is no such device, so a server does not
    /// register a device it cannot use.
    /// `overrides`: attribute name (TVM's, as in toJson(GpuDeviceAttributes)) -> value; throws
    /// std::invalid_argument for an unknown name or a mistyped value.
    GpuExecutor(gpu::GpuApi api, int index = 0, uint64_t seed = 0, const nlohmann::json& overrides = {});

    rpc::RunReply run(const rpc::RunRequest& request) override;
    rpc::CallReply call(const rpc::CallRequest& request) override;

    gpu::GpuApi api() const { return m_api; }
    const gpu::GpuDeviceAttributes& attributes() const { return m_attributes; }

private:
    gpu::GpuApi m_api;
    int m_index;
    uint64_t m_seed;
    gpu::GpuDeviceAttributes m_attributes;
    bool m_enforceLimits = false;  ///< overrides were given: the emulated device's limits apply
};

}  // namespace tb::measure
