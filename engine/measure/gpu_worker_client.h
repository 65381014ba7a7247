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

#include <functional>
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

/// A batch of candidates for one worker process (a tuning round): measureGpuModule of each module
/// on device `index` of `api`, in order, `checks[i]` (may be null; the vector may be empty) checking
/// module i. The worker opens the device once and compiles every source first on
/// `compileThreads` threads (GpuDevice::precompile: NVRTC for CUDA), instead of a process, a
/// context and a serial compile per candidate. Isolation stays per candidate: each has timeoutSec
/// from the moment the previous one finished (the first one also gets the batch's compile time,
/// timeoutSec per `compileThreads` modules); one past its deadline is RUN_TIMEOUT, one that kills
/// the worker RUNTIME_DEVICE, and a new worker takes the rest. Results are in the modules' order.
/// `onResult(i, result)`, when given, is called on this thread as each result arrives, in order.
/// Never throws for a module's failure.
std::vector<gpu::GpuMeasureResult> measureGpuModulesInWorker(
    gpu::GpuApi api, int index, const std::vector<const codegen::GpuModule*>& modules,
    const gpu::GpuMeasureOptions& options, const std::vector<const gpu::GpuCheck*>& checks, double timeoutSec,
    int compileThreads = 1, const std::string& workerPath = {},
    const std::function<void(int, const gpu::GpuMeasureResult&)>& onResult = {});

}  // namespace tb::measure
