/* SPDX-License-Identifier: Apache-2.0 */
#pragma once
/// \file kernel_abi.h
/// \brief The kernel ABI: what a kernel compiled by codegen_llvm.h expects of the process that runs
/// it. TVM's analogue is include/tvm/runtime/c_backend_api.h (`TVMBackendParallelLaunch`,
/// `TVMBackendAllocWorkspace`, `TVMBackendFreeWorkspace`), which libtvm_runtime provides to every
/// module TVM compiles; ours is reduced to three functions.
///
/// Plain C declarations with no dependency, so that every host includes this one header: the
/// engine's own (kernel_runtime.h: the JIT in tests, benchmarks and the measure sandbox worker;
/// tunebench-runner for exported networks) and the AArch64 device server (tools/arm/), which is
/// cross-compiled without the engine's libraries.
///
/// **Entry.** Every kernel exports one function `int32_t name(void* const* args)` (TBKernelFunction):
/// args[i] points to the first element of argument i (the LoweredFunc's arguments in order: the
/// DAG's input and output tensors, dense, row-major). Buffers are addressed as float32; arguments
/// must not alias each other. Returns 0.
///
/// **Imports.** A kernel's undefined symbols are the three functions below (parallel loops and heap
/// buffers) and libm/libc (`expf`, `tanhf`, `erff`, `memset`, ...). The host binds them: the JIT
/// through kernel_runtime.h's runtimeSymbols(); a process that dlopen()s a shared library of kernels
/// by exporting them from its executable (`-rdynamic`, CMake ENABLE_EXPORTS).

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/// A compiled kernel's entry point (see the file comment).
typedef int32_t (*TBKernelFunction)(void* const* args);

/// The outlined body of a parallel loop: runs iterations [begin, end) with the values the loop
/// captured (closure, owned by the caller).
typedef void (*TBParallelBody)(int64_t begin, int64_t end, void* closure);

/// Runs body over [0, extent) and returns 0 when every iteration has run. The host splits the range
/// statically into min(extent, threads) contiguous chunks run concurrently (TVM's thread pool does
/// the same); a call from inside a parallel body runs serially. extent <= 0 runs nothing.
int32_t tb_rt_parallel_for(int64_t extent, TBParallelBody body, void* closure);

/// A 64-byte aligned heap buffer of at least `bytes` bytes for a Global (or large Local) Allocate;
/// never returns null (the process aborts when memory is exhausted).
void* tb_rt_alloc(int64_t bytes);

/// Frees a tb_rt_alloc buffer.
void tb_rt_free(void* p);

#ifdef __cplusplus
}

namespace tb::kernel_abi {
/// The imported symbols' names, as codegen emits the calls (the declarations above).
inline constexpr const char* kParallelFor = "tb_rt_parallel_for";
inline constexpr const char* kAlloc = "tb_rt_alloc";
inline constexpr const char* kFree = "tb_rt_free";
}  // namespace tb::kernel_abi
#endif
