// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file sample_modules.h
/// \brief Hand-written GpuModules with known answers, in OpenCL C and CUDA C: what the GPU device
/// side is tested with before (and independently of) the host's GPU code generator. Used by the Qt
/// tests (tests/engine/tst_gpu_device.cpp, tst_gpu_rpc.cpp) and by the self-test program of the
/// light GPU build (tools/gpu/gpu_selftest.cpp) that runs on a machine without Qt (the H100).

#include "engine/codegen/gpu_module.h"
#include "engine/measure/gpu_device.h"

namespace tb::gpu::samples {

/// A module plus a check whose inputs are deterministic and whose expected outputs were computed
/// on the CPU (in double precision).
struct SampleCase {
    codegen::GpuModule module;
    GpuCheck check;
};

/// c = a + b over n floats: one launch of ceil(n / 64) work-groups of 64 (bounds-checked).
SampleCase vectorAdd(codegen::GpuLanguage language, int n = 1000);

/// out = relu(A x B + bias) for A (m x k), B (k x n), bias (n), out (m x n) in two launches: a
/// 16 x 16 tiled matmul through shared (__local) memory with barriers into a workspace buffer
/// (buffer 4, not an argument), then bias + ReLU from the workspace. Sizes need not be multiples
/// of 16 (partial tiles are guarded).
SampleCase tiledMatmulBiasRelu(codegen::GpuLanguage language, int m = 70, int n = 50, int k = 37);

/// A module whose source does not compile (an undeclared identifier in the kernel).
codegen::GpuModule brokenSource(codegen::GpuLanguage language);

/// vectorAdd's kernel writing 5 elements past the end of its output (inside the guard words).
codegen::GpuModule outOfBoundsWrite(codegen::GpuLanguage language);

/// A kernel that never ends (spins on a global it keeps writing).
codegen::GpuModule endlessLoop(codegen::GpuLanguage language);

}  // namespace tb::gpu::samples
