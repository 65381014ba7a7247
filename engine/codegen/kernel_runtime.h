// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file kernel_runtime.h
/// \brief The host side of the kernel ABI (kernel_abi.h): tb_rt_parallel_for on the engine's thread
/// pool, tb_rt_alloc/tb_rt_free from a per-thread workspace cache. TVM's analogue is the part of libtvm_runtime behind
/// c_backend_api.h (src/runtime/thread_pool.cc, workspace_pool.cc). Not to be confused with
/// engine/runtime/, the graph executor that runs a whole network (TVM's graph_executor).
///
/// Built as its own object library (tb_kernel_runtime, dependencies: support/thread_pool only) and
/// linked into every process that runs kernels: tb::codegen (the JIT binds generated code to
/// runtimeSymbols()), tunebench-runner and the AArch64 device server (which export the functions
/// from their executables for the kernel libraries they dlopen()). Parallel loops run on
/// ThreadPool::global(), sized by TB_NUM_THREADS (default: all cores).

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "engine/codegen/kernel_abi.h"

namespace tb::codegen {

/// A compiled kernel's entry point (kernel_abi.h).
using KernelFunction = TBKernelFunction;
/// The outlined body of a parallel loop (kernel_abi.h).
using ParallelBody = TBParallelBody;

/// A kernel's global scratch buffer (an Allocate at the root: a packed input, a padded copy), 64-byte
/// aligned, `bytes` long (0 gives a 64-byte block); aborts when the heap is exhausted. Blocks freed
/// by workspaceFree stay with the freeing thread (up to 1 GiB per thread) and are handed out again
/// to a request of at least half their size, like TVM's WorkspacePool: without it a buffer above
/// glibc's mmap threshold (32 MiB: PP-OCR det's dilated 24x641x641 input is 39 MB) was mapped and
/// page-faulted anew on every call, 30 ms of a 1 ms convolution.
void* workspaceAlloc(size_t bytes);
/// Returns a block of workspaceAlloc (null: nothing).
void workspaceFree(void* p);

/// Names and addresses of the kernel ABI functions defined here, for binding generated code.
std::vector<std::pair<std::string, void*>> runtimeSymbols();

}  // namespace tb::codegen
