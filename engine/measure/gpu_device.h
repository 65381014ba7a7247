// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file gpu_device.h
/// \brief The GPU runtime of the device side: open an OpenCL or CUDA device, read its attributes
/// under TVM's names, compile and run a codegen::GpuModule, and time it with TVM's time evaluator
/// on device events. Failures are data (TVM's MeasureErrorNO), never crashes of the caller.
///
/// Why it exists: a GPU candidate is source text (gpu_module.h) that must be compiled and timed on
/// the machine that has the GPU: a PoCL "Mali" board here, the H100 of GPU-MACHINE.md. That machine
/// runs a light device server (tools/gpu/) without LLVM, Qt or the engine libraries, so this runtime
/// (library tb::gpu_device) depends only on the standard library, nlohmann/json, tb::gpu_module,
/// the dependency-free timer (timer.h) and, at run time, the vendor libraries:
///  - OpenCL through the ICD loader (libOpenCL.so.1, linked: find_package(OpenCL)); platforms and
///    devices are listed GPUs first, then the others (PoCL's CPU device), as TVM's OpenCL
///    workspace falls back to CPU devices when there is no GPU.
///  - CUDA through the driver API (libcuda.so.1) and NVRTC (libnvrtc.so), both dlopen()ed at run
///    time with prototypes declared here, so the same binary builds without a CUDA toolkit and
///    runs where one is installed. Source is compiled by NVRTC for the device's own architecture
///    (`--gpu-architecture=sm_XY`, a CUBIN), loaded with cuModuleLoadData. Kernels must be
///    `extern "C"` (as TVM's CUDA codegen writes them): entries are looked up by plain name.
///
/// Timing (TVM src/runtime/profiling.cc WrapTimeEvaluator with the device's Timer): one warm-up run
/// of the module (every launch in order), then `repeat` rounds of `number` runs, `number` growing
/// until a round lasts minRepeatMs (timer.h timeEvaluateRounds); a round's duration is read from
/// device events, not the host clock: OpenCL sums the profiled (END - START) of every kernel event
/// of the round, as TVM's OpenCLTimerNode does; CUDA takes cuEventElapsedTime between an event
/// recorded before the round and one after it, as TVM's CUDATimerNode does. Costs are seconds per
/// run of the whole module (all its launches). The CPU cache flush has no GPU meaning and is not
/// done.
///
/// Isolation: a kernel can hang, fault, or poison its context (CUDA after an illegal address). The
/// `*Isolated` functions do everything (runtime initialization included) in a forked child with a
/// deadline (child_run.h); the caller never initializes OpenCL or CUDA itself, so forking stays
/// safe. A hang is RUN_TIMEOUT, a crash RUNTIME_DEVICE.
///
/// Error numbers (TVM MeasureErrorNO): the runtime library missing, no such device, a source that
/// does not compile (the build log is the message), a missing entry -> COMPILE_DEVICE (3); a
/// launch the device refuses (work-group too large, out of resources), a fault, an out-of-bounds
/// write caught by the guard words after each buffer -> RUNTIME_DEVICE (4); outputs unlike the
/// check's expected values -> WRONG_ANSWER (5); past the deadline -> RUN_TIMEOUT (7).

#include <array>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "engine/codegen/gpu_module.h"
#include "engine/measure/check_blob.h"

namespace tb::gpu {

/// The vendor API a device is driven through ("opencl", "cuda": TVM's device type names).
enum class GpuApi { OpenCL, CUDA };
const char* gpuApiName(GpuApi api);
/// "opencl" or "cuda"; throws std::invalid_argument for anything else.
GpuApi parseGpuApi(const std::string& name);

/// TVM MeasureErrorNO values this runtime produces (measure.h MeasureErrorNo has the full enum; this
/// library does not depend on it).
inline constexpr int kErrorNone = 0;
inline constexpr int kErrorCompileDevice = 3;
inline constexpr int kErrorRuntimeDevice = 4;
inline constexpr int kErrorWrongAnswer = 5;
inline constexpr int kErrorRunTimeout = 7;
inline constexpr int kErrorUnknown = 8;

/// An expected failure of the device side, with its TVM error number.
class GpuError : public std::runtime_error {
public:
    GpuError(int errorNo, const std::string& message) : std::runtime_error(message), m_errorNo(errorNo) {}
    int errorNo() const { return m_errorNo; }

private:
    int m_errorNo;
};

/// A device's attributes, as TVM's DeviceAPI::GetAttr answers them (DeviceAttrKind; the python
/// properties of `tvm.runtime.Device`). JSON keys are TVM's property names.
struct GpuDeviceAttributes {
    bool exist = false;                 ///< exist
    int maxThreadsPerBlock = 0;         ///< max_threads_per_block (OpenCL: CL_DEVICE_MAX_WORK_GROUP_SIZE)
    int warpSize = 0;                   ///< warp_size (OpenCL: 1, as TVM: OpenCL has no portable query)
    int maxSharedMemoryPerBlock = 0;    ///< max_shared_memory_per_block, bytes (OpenCL: CL_DEVICE_LOCAL_MEM_SIZE)
    std::string computeVersion;         ///< compute_version: "9.0" (CUDA), "3.0" (OpenCL's "OpenCL 3.0 ...")
    std::string deviceName;             ///< device_name
    int maxClockRate = 0;               ///< max_clock_rate, kHz (OpenCL reports MHz: x1000 as TVM)
    int multiProcessorCount = 0;        ///< multi_processor_count (SMs; OpenCL compute units)
    std::array<int64_t, 3> maxThreadDimensions{0, 0, 0};  ///< max_thread_dimensions (x, y, z)
    int maxRegistersPerBlock = 0;       ///< max_registers_per_block (0: unknown; OpenCL has none)
    int apiVersion = 0;                 ///< api_version: CUDA driver API version (13000), OpenCL 300/120
    std::string driverVersion;          ///< driver_version
    int64_t l2CacheSizeBytes = 0;       ///< l2_cache_size_bytes (OpenCL: CL_DEVICE_GLOBAL_MEM_CACHE_SIZE)
    int64_t totalGlobalMemory = 0;      ///< total_global_memory, bytes
    std::string platformName;           ///< TuneBench's: the OpenCL platform ("Portable Computing Language") or "CUDA"
    bool operator==(const GpuDeviceAttributes&) const = default;
};
nlohmann::json toJson(const GpuDeviceAttributes& a);
/// Inverse of toJson; missing keys keep their defaults. Throws std::invalid_argument for a
/// mistyped key.
GpuDeviceAttributes gpuDeviceAttributesFromJson(const nlohmann::json& j);

/// Float32 words after every buffer that hold a known pattern: a kernel that writes past the end
/// of its buffer damages them (RUNTIME_DEVICE "out-of-bounds write").
inline constexpr int64_t kGuardElements = 64;

/// A GpuModule compiled for one device, with its buffers allocated (each bufferElements[i] +
/// kGuardElements floats, zero-filled). Owned by the process that loaded it.
class GpuProgram {
public:
    virtual ~GpuProgram() = default;
    /// Copies `n` floats to / from buffer `buffer` starting at element `offset`. Throws GpuError
    /// (RUNTIME_DEVICE) when the device refuses (a previous fault poisoned the context).
    virtual void write(int buffer, int64_t offset, const float* data, int64_t n) = 0;
    virtual void read(int buffer, int64_t offset, float* data, int64_t n) = 0;
    /// Runs every launch of the module in order, `times` times over, waits for the end and returns
    /// the device time in milliseconds (file comment: OpenCL sums kernel events, CUDA spans the
    /// round; a CUDA module of several launches replays them as one CUDA graph). Throws
    /// GpuError(RUNTIME_DEVICE) naming the launch when one is refused or fails.
    virtual double runTimed(int times) = 0;
};

/// One opened device.
class GpuDevice {
public:
    virtual ~GpuDevice() = default;
    virtual GpuApi api() const = 0;
    virtual const GpuDeviceAttributes& attributes() const = 0;
    /// Compiles `module.source` and allocates its buffers. Throws GpuError: COMPILE_DEVICE with the
    /// compiler's log when the source does not build or names no such entry, or when the module's
    /// language is not this device's; RUNTIME_DEVICE when the buffers cannot be allocated.
    virtual std::unique_ptr<GpuProgram> load(const codegen::GpuModule& module) = 0;
    /// Compiles the sources of `modules` ahead of their load(), on up to `threads` threads, where
    /// the vendor compiler allows it: CUDA compiles with NVRTC (thread-safe) and load() then only
    /// loads the CUBIN, failing with the same COMPILE_DEVICE error when the source did not compile;
    /// OpenCL does nothing here (load() builds). A batch of candidates (tunebench-gpu-worker) pays
    /// its compile time once, spread over the cores. Never throws.
    virtual void precompile(const std::vector<const codegen::GpuModule*>& modules, int threads) {}
};

/// Devices of `api` visible to this process (0 when the runtime library is present but there are
/// none). Throws GpuError(COMPILE_DEVICE) with a sentence naming the library when it is missing.
int gpuDeviceCount(GpuApi api);
/// Opens device `index` (0-based, in the order of the file comment). Throws GpuError
/// (COMPILE_DEVICE) when the runtime library is missing or there is no such device.
std::unique_ptr<GpuDevice> openGpuDevice(GpuApi api, int index = 0);

/// Optional correctness check: measure::CheckSpec (check_blob.h), per argument buffer: `inputs[i]`
/// fills argument i (else random in [-1, 1) from the seed); after the warm-up run every non-empty
/// `expected[i]` is compared with |got - want| <= atol + rtol * |want|. It reaches a device server
/// as a check blob.
using GpuCheck = measure::CheckSpec;

/// TVM time-evaluator parameters plus what to return.
struct GpuMeasureOptions {
    int number = 3;            ///< runs per round (grows to reach minRepeatMs)
    int repeat = 1;            ///< rounds = costs returned
    double minRepeatMs = 100;  ///< a round lasts at least this long (device time, ms)
    uint64_t seed = 0;         ///< random fill of arguments without check inputs
    bool returnOutputs = false;  ///< copy every argument buffer back after the warm-up run
};

struct GpuMeasureResult {
    int errorNo = kErrorNone;
    std::string errorMsg;
    std::vector<double> costs;                 ///< seconds per module run, one per repeat
    std::vector<std::vector<float>> outputs;   ///< argument buffers after the warm-up (returnOutputs)
    bool ok() const { return errorNo == kErrorNone; }
};
nlohmann::json toJson(const GpuMeasureResult& r);
GpuMeasureResult gpuMeasureResultFromJson(const nlohmann::json& j);

/// Loads `module` on `device`, fills the arguments, makes the warm-up run, checks, times (file
/// comment). Never throws for a candidate's failure: GpuErrors become the result's error.
GpuMeasureResult measureGpuModule(GpuDevice& device, const codegen::GpuModule& module,
                                  const GpuMeasureOptions& options, const GpuCheck* check = nullptr);

/// measureGpuModule in a forked child that opens device `index` of `api` itself; killed after
/// timeoutSec (RUN_TIMEOUT); a crash is RUNTIME_DEVICE. Never throws for the candidate's failure.
GpuMeasureResult measureGpuModuleIsolated(GpuApi api, int index, const codegen::GpuModule& module,
                                          const GpuMeasureOptions& options, const GpuCheck* check,
                                          double timeoutSec);

/// The attributes of device `index` of `api`, read in a forked child (so this process never
/// initializes the vendor runtime). Throws GpuError with the child's reason when the device cannot
/// be opened, or RUN_TIMEOUT after timeoutSec.
GpuDeviceAttributes queryGpuAttributesIsolated(GpuApi api, int index, double timeoutSec = 60);

namespace detail {
// Backends (opencl_device.cpp, cuda_device.cpp).
int openclDeviceCount();
std::unique_ptr<GpuDevice> openOpenclDevice(int index);
int cudaDeviceCount();
std::unique_ptr<GpuDevice> openCudaDevice(int index);
}  // namespace detail

}  // namespace tb::gpu
