// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file hardware_params.h
/// \brief The hardware facts a search task is tuned for (TVM `auto_scheduler.HardwareParams`,
/// include/tvm/auto_scheduler/search_task.h, defaults in src/auto_scheduler/search_task.cc).
///
/// One value type shared by every layer that speaks of the hardware: the search rules read it
/// (parallelism goal `16 * numCores`, vector width, cache line for features; GPU sketch rules will
/// read the thread, shared-memory and warp limits), the measurer writes it into every record, and
/// the record layer reads and writes it as the 8-element array of a log line. It lives in support,
/// the lowest layer, because the record layer depends on nothing else.
///
/// The fields are TVM's, in TVM's record order (measure_record.cc writes them in this order):
/// num_cores, vector_unit_bytes, cache_line_bytes, max_shared_memory_per_block,
/// max_local_memory_per_block, max_threads_per_block, max_vthread_extent, warp_size. They are `int`
/// as in TVM; logs written by TVM before 0.8 call the fifth one max_registers_per_block.
///
/// Defaults per target kind follow TVM's `HardwareParamsNode::GetDefaultHardwareParams`:
/// | kind | num_cores | vector | cache line | shared mem | local mem | threads | vthread | warp |
/// |---|---|---|---|---|---|---|---|---|
/// | CPU (llvm) | MaxConcurrency() | 64 | 64 | 0 | 0 | 0 | 0 | 0 |
/// | CUDA, ROCm, Vulkan, OpenCL (queried device) | -1 | 16 | 64 | device | INT32_MAX | device | warp/4 (>= 1) | device |
/// | OpenCL -device=mali | -1 | 16 | 64 | 32768 | INT32_MAX | 256 | 1 | 1 |
/// TVM queries the CUDA/OpenCL device through its device API; `gpu()` takes those three device
/// facts instead (codegen::Target::gpuHardwareParams() takes them from the target's attributes
/// when no device is asked: 49152 / 1024 / 32 for `cuda`, 16384 / 256 / 1 for `opencl`). The one deviation: for CPUs, `cpu()` takes the vector width of the target (TVM
/// hard-codes 64 bytes, AVX-512, even for NEON) — see measure::defaultHardwareParams, the factory
/// that picks these per target.

#include <climits>

namespace tb {

struct HardwareParams {
    int numCores = 1;                 ///< cores the generated code may use (-1 on GPUs, as TVM)
    int vectorUnitBytes = 64;         ///< width of the SIMD unit in bytes
    int cacheLineBytes = 64;          ///< cache line in bytes (features, cache-write rules)
    int maxSharedMemoryPerBlock = 0;  ///< GPU: bytes of shared memory per thread block
    int maxLocalMemoryPerBlock = 0;   ///< GPU: bytes of local memory per block ("max_registers_per_block" before TVM 0.8)
    int maxThreadsPerBlock = 0;       ///< GPU: threads per block
    int maxVthreadExtent = 0;         ///< GPU: largest virtual-thread extent
    int warpSize = 0;                 ///< GPU: threads per warp

    friend bool operator==(const HardwareParams&, const HardwareParams&) = default;

    /// TVM's CPU defaults: (numCores, vectorUnitBytes, 64, 0, 0, 0, 0, 0). `numCores` <= 0 means
    /// this machine's hardware threads (TVM's `threading::MaxConcurrency()`).
    static HardwareParams cpu(int numCores, int vectorUnitBytes);
    /// TVM's defaults for a GPU whose device reports these limits (CUDA, ROCm, Vulkan, OpenCL):
    /// (-1, 16, 64, maxSharedMemoryPerBlock, INT32_MAX, maxThreadsPerBlock, max(1, warpSize / 4),
    /// warpSize). E.g. an NVIDIA GPU: gpu(49152, 1024, 32).
    static HardwareParams gpu(int maxSharedMemoryPerBlock, int maxThreadsPerBlock, int warpSize);
    /// TVM's fixed defaults for `opencl -device=mali` (the device is usually remote, so TVM does not
    /// query it): (-1, 16, 64, 32768, INT32_MAX, 256, 1, 1).
    static HardwareParams mali();
};

}  // namespace tb
