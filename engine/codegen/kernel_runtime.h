// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file kernel_runtime.h
/// \brief The host side of the kernel ABI (kernel_abi.h): tb_rt_parallel_for on the engine's thread
/// pool, tb_rt_alloc/tb_rt_free on the heap. TVM's analogue is the part of libtvm_runtime behind
/// c_backend_api.h (src/runtime/thread_pool.cc, workspace_pool.cc). Not to be confused with
/// engine/runtime/, the graph executor that runs a whole network (TVM's graph_executor).
///
/// Built as its own object library (tb_kernel_runtime, dependencies: support/thread_pool only) and
/// linked into every process that runs kernels: tb::codegen (the JIT binds generated code to
/// runtimeSymbols()), tunebench-runner and the AArch64 device server (which export the functions
/// from their executables for the kernel libraries they dlopen()). Parallel loops run on
/// ThreadPool::global(), sized by TB_NUM_THREADS (default: all cores).

#include <string>
#include <utility>
#include <vector>

#include "engine/codegen/kernel_abi.h"

namespace tb::codegen {

/// A compiled kernel's entry point (kernel_abi.h).
using KernelFunction = TBKernelFunction;
/// The outlined body of a parallel loop (kernel_abi.h).
using ParallelBody = TBParallelBody;

/// Names and addresses of the kernel ABI functions defined here, for binding generated code.
std::vector<std::pair<std::string, void*>> runtimeSymbols();

}  // namespace tb::codegen
