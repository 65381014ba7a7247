// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file gpu_module.h
/// \brief A GPU program as code generation hands it to a GPU device: kernel source text (OpenCL C or
/// CUDA C), the launches to run in order, and the buffers they read and write.
///
/// Why it exists: the GPU path splits across machines and layers. The host lowers a State
/// (lower/) and emits source (codegen/, the OpenCL C and CUDA C emitters); the device side (a GPU
/// runtime: OpenCL through the ICD loader, CUDA through the driver API and NVRTC) compiles that
/// source and runs it, either in-process or in a device server reached through the tracker, which
/// has no LLVM, no Qt and no engine library. This value type is the only thing the two sides share,
/// so it has no dependency but the standard library and nlohmann/json (its wire form).
///
/// TVM's analogue: the device module of `tvm.build` for a GPU target (`SplitHostDevice` makes one
/// `__global__` kernel per thread-bound root nest; the host function launches them in order with
/// their grid/block extents, `ThreadAxisConfig`), serialized as the source of an OpenCLModule /
/// CUDAModule plus its `FunctionInfo` (name, argument types, launch parameter tags).
///
/// Buffers: `buffers[0 .. numArgs)` are the lowered function's arguments (the ComputeDAG's tensors in
/// order: inputs, then outputs), the rest are global workspace intermediates (e.g. a `pad_temp`
/// computed at root by its own kernel). All are float32, dense, row-major, sized in elements.
/// Each launch names its kernel arguments as indices into `buffers`, in the order of the kernel's
/// parameter list. Scalar kernel parameters are not used: shapes are constants in the source.

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace tb::codegen {

/// The source language of a GpuModule.
enum class GpuLanguage { OpenCL, CUDA };
const char* gpuLanguageName(GpuLanguage l);  ///< "opencl", "cuda" (TVM's target kinds)

/// One kernel launch: `entry` over `grid` work-groups (CUDA blocks) of `block` work-items (threads);
/// x is dimension 0. OpenCL's global size is grid[i] * block[i].
struct GpuLaunch {
    std::string entry;                 ///< kernel function name in GpuModule::source
    std::array<int64_t, 3> grid{1, 1, 1};
    std::array<int64_t, 3> block{1, 1, 1};
    std::vector<int> args;             ///< indices into GpuModule::buffers, in parameter order
    int64_t sharedBytes = 0;           ///< static shared (__local) memory the kernel declares, bytes
    bool operator==(const GpuLaunch&) const = default;
};

struct GpuModule {
    GpuLanguage language = GpuLanguage::OpenCL;
    std::string source;                    ///< one complete translation unit with every kernel
    std::vector<GpuLaunch> launches;       ///< run in this order, each after the previous finished
    std::vector<int64_t> bufferElements;   ///< float32 element count of each buffer
    int numArgs = 0;                       ///< buffers[0 .. numArgs) are the function's arguments
    bool operator==(const GpuModule&) const = default;
};

/// Wire form (JSON object with keys "language", "source", "launches", "buffer_elements", "num_args").
nlohmann::json toJson(const GpuModule& m);
/// Inverse of toJson. Throws std::invalid_argument naming the field for a malformed object: a
/// missing or mistyped key, an unknown language, a launch argument index outside `buffers`,
/// non-positive extents or sizes, or numArgs outside [0, buffers.size()].
GpuModule gpuModuleFromJson(const nlohmann::json& j);

}  // namespace tb::codegen
