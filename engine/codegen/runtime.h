// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file runtime.h
/// \brief The C ABI between generated kernels and the process that runs them (TVM's
/// `TVMBackendParallelLaunch` / `TVMBackendAllocWorkspace`, reduced to three functions).
///
/// Generated code calls these symbols by name; the loader (jit.h) binds them to the functions below,
/// so an object file compiled here runs in any process linking tb::codegen (the caller for tests and
/// benchmarks, the measure sandbox worker for tuning).
///
/// Kernel entry ABI (every compiled kernel): `int32_t name(void* const* args)` where args[i] points
/// to the first element of argument i (the LoweredFunc's args, in order; the DAG's io tensors).
/// Returns 0. Arguments must not alias each other.

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace tb::codegen {

/// A compiled kernel's entry point (see the file comment).
using KernelFunction = int32_t (*)(void* const* args);
/// The outlined body of a parallel loop: runs iterations [begin, end) with the captured values.
using ParallelBody = void (*)(int64_t begin, int64_t end, void* closure);

/// Names and addresses of the runtime symbols generated code may call.
std::vector<std::pair<std::string, void*>> runtimeSymbols();

}  // namespace tb::codegen

extern "C" {
/// Run body over [0, extent) split statically over the engine's thread pool (ThreadPool::global());
/// nested calls run serially. Returns 0.
int32_t tb_rt_parallel_for(int64_t extent, tb::codegen::ParallelBody body, void* closure);
/// 64-byte aligned heap workspace of `bytes` bytes (Global Allocate); never returns null (aborts).
void* tb_rt_alloc(int64_t bytes);
/// Frees tb_rt_alloc memory.
void tb_rt_free(void* p);
}
