// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file gpu_worker_client.h
/// \brief Measuring a GPU module in a separate process, tunebench-gpu-worker (tools/gpu), from a
/// host process that links LLVM.
///
/// Why: the host (tunebench-cli, the window, the tests) links LLVM 16 for CPU code generation.
/// PoCL, this machine's OpenCL device, compiles kernels with its own LLVM (15 on Debian 12); loaded
/// into a process that already uses LLVM 16, its passes call into LLVM 16's and crash (seen as
/// SIGSEGV in VerifierPass::run under PoCL's clang). A fork of the host inherits LLVM 16, so the
/// forked isolation of gpu_device.h is not enough there: the worker is a fresh executable that
/// links only the GPU runtime (tb::gpu_device). It also keeps the crash and hang isolation: the
/// worker is killed at the deadline (RUN_TIMEOUT) and a signal is RUNTIME_DEVICE.
///
/// The exchange goes through a private temporary directory (gpu_worker.cpp documents the files):
/// module and check data can be hundreds of MB for a whole network.

#include <string>
#include <vector>

#include "engine/codegen/gpu_module.h"
#include "engine/measure/gpu_device.h"

namespace tb::measure {

/// The worker executable: $TB_GPU_WORKER_PATH, else tunebench-gpu-worker next to this process's
/// executable or in ../bin from it (the build tree's layout). Throws tb::UserError naming the
/// variable when none is found.
std::string findGpuWorker();

/// measureGpuModule (gpu_device.h) on device `index` of `api`, run by the worker at `workerPath`
/// (empty: findGpuWorker()). `returnBuffers` lists the argument buffers whose contents after the
/// warm-up run come back in result.outputs (indexed like the module's buffers; others empty).
/// Never throws for the module's failure: a worker past timeoutSec is killed (RUN_TIMEOUT), a
/// worker killed by a signal is RUNTIME_DEVICE, a worker that cannot start COMPILE_DEVICE.
gpu::GpuMeasureResult measureGpuModuleInWorker(gpu::GpuApi api, int index, const codegen::GpuModule& module,
                                               const gpu::GpuMeasureOptions& options, const gpu::GpuCheck* check,
                                               double timeoutSec, const std::vector<int>& returnBuffers = {},
                                               const std::string& workerPath = {});

}  // namespace tb::measure
