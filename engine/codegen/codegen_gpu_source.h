// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file codegen_gpu_source.h
/// \brief OpenCL C and CUDA C source emission from the GPU loop IR (lower_gpu.h): TVM's
/// CodeGenOpenCL / CodeGenCUDA (src/target/source/), producing the GpuModule (gpu_module.h) that a
/// GPU device compiles and runs.
///
/// Why source and not LLVM: the device side compiles the kernels itself (OpenCL: the driver's
/// `clBuildProgram`, PoCL here and on the emulated Mali boards; CUDA: NVRTC next to the driver on the
/// GPU machine), so the host needs no GPU toolchain and the device server no LLVM. For CUDA this is
/// also TVM's default (CodeGenCUDA + NVRTC/nvcc); PTX through LLVM's NVPTX backend would tie the
/// host's LLVM build to the device's PTX ISA version and need a second code generator, while one
/// C-like emitter covers both languages: they differ only in qualifiers and built-in names (the
/// table at the top of the .cpp file).
///
/// What each IR construct becomes (OpenCL C | CUDA C):
///   - kernel k of the GpuLoweredFunc: `__kernel void name(__global float* restrict A, ...)` |
///     `extern "C" __global__ void __launch_bounds__(threads) name(float* __restrict__ A, ...)`;
///     the parameters are the global buffers it touches (GpuKernel::params order), all float32 (or
///     the buffer's dtype) pointers; shapes are constants in the code.
///   - ThreadBinding loop: `int v = (int)get_group_id(d)` / `get_local_id(d)` | `blockIdx.x` /
///     `threadIdx.x`; a loop bound with a smaller extent than the launch is guarded by
///     `if (v < extent)`; a vthread loop is a serial loop (lower_gpu.h).
///   - Shared buffers: declared once at the top of the kernel, `__local float b[n];` |
///     `__shared__ __align__(16) float b[n];` (float4 moves need 16-byte alignment); Local buffers:
///     `float b[n];` where allocated (CUDA: `__align__(16)` too).
///   - Barrier: `barrier(CLK_LOCAL_MEM_FENCE);` | `__syncthreads();`.
///   - Unrolled loop: `#pragma unroll` before the loop (both compilers unroll it fully).
///   - Vectorized loop of constant extent n whose body is one store: a vector statement when every
///     access is contiguous in the lane (or lane-invariant): OpenCL `vstore4(f(vload4(0, A + i), ...),
///     0, B + j)` (n in 2, 3, 4, 8, 16; any arithmetic OpenCL defines on vectors); CUDA only copies,
///     `*(float4*)(B + j) = *(float4*)(A + i)` (n in 2, 4) with both offsets proven multiples of n
///     (CUDA's vector types have no arithmetic operators without headers). Otherwise an unrolled
///     scalar loop.
///   - Integer arithmetic is 32-bit `int` (TVM's index type on GPUs); floordiv / floormod become
///     `/` and `%` where both operands are proven non-negative, else inline helper functions.
///   - Float intrinsics: the language's float overloads (`exp`, `fmax` | `expf`, `fmaxf`, ...);
///     infinities and NaN without headers.

#include <string>

#include "engine/codegen/gpu_module.h"
#include "engine/lower/lower_gpu.h"
#include "engine/schedule/loop_state.h"
#include "engine/te/compute_dag.h"

namespace tb::codegen {

/// The source of every kernel of `f` in `language` as one translation unit (helpers first, then the
/// kernels in launch order). Throws tb::UserError for an expression the emitter cannot write (an
/// unknown intrinsic), tb::InternalError for malformed IR.
std::string emitGpuSource(const lower::GpuLoweredFunc& f, GpuLanguage language);

/// The GpuModule of `f`: emitGpuSource's text, one launch per kernel (entry, grid, block, buffer
/// indices, shared bytes), the element counts of f.buffers() (DAG tensors, then workspaces) and
/// numArgs = f.args.size().
GpuModule makeGpuModule(const lower::GpuLoweredFunc& f, GpuLanguage language);

/// Lower `state` for a GPU and emit it: lower::lowerStateGpu(dag, state, name) then makeGpuModule.
/// `state` must have gone through inferBound (its loops have ranges). Kernel names are
/// `<name>_kernel<k>`. Errors: those of lowerStateGpu (UserError for a schedule a GPU cannot run,
/// e.g. an unbound root stage) and of emitGpuSource.
GpuModule buildGpuModule(const te::ComputeDAG& dag, const State& state, GpuLanguage language,
                         const std::string& name = "default_function");

}  // namespace tb::codegen
