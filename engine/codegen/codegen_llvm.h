// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file codegen_llvm.h
/// \brief Loop IR -> LLVM IR -> optimised object code (TVM's `codegen_llvm` + `codegen_cpu`).
///
/// Input: a LoweredFunc (lower/loop_ir.h) and a Target (target.h). Output: a relocatable ELF
/// object in memory plus the optimised LLVM IR and the assembly as text (the GUI's IR views). The
/// object exports one symbol, the kernel entry `int32_t <name>(void* const* args)` (kernel_abi.h).
///
/// How the loop kinds map to machine code:
///   - Vectorized loops with a constant extent N become one iteration of explicit `<N x float>` /
///     `<N x i64>` LLVM instructions (not left to LLVM's loop vectorizer): stride-1 accesses are
///     vector loads/stores, lane-invariant ones are scalar loads broadcast, other affine or
///     non-affine ones gathers/scatters; guards whose condition depends on the lane become masks
///     (masked loads/stores). A body that cannot be vectorized (an Allocate, a parallel loop, a store
///     to a lane-invariant address, N > 64) runs as a serial loop instead.
///   - Parallel loops are outlined into `void body(int64 begin, int64 end, void* closure)` whose
///     closure carries every live loop variable and buffer pointer, and launched with
///     `tb_rt_parallel_for` on the engine's persistent thread pool (support/thread_pool.h).
///   - Parallel bodies get their buffers as `noalias` pointers (an inner function, not inlined),
///     as the kernel itself does, so accumulators stay in registers and loads are hoisted.
///   - `pragma_auto_unroll_max_step` regions go through lower::unrollLoops; Unrolled loops with a
///     constant extent are then copied in the loop IR by lower::expandUnrolled (variable replaced
///     by its value, copies simplified: constant-matrix selects fold before LLVM sees them), up to
///     16384 stores per expanded loop; larger or non-constant ones run as serial loops.
///   - A serial loop whose body holds more than 64 stores (unrolled copies) carries
///     `llvm.loop.vectorize.enable = false`: LLVM's loop vectorizer otherwise spends seconds on it.
///   - Local Allocates up to 256 KiB live on the stack (hoisted allocas, one per function); larger
///     and Global ones on the heap (tb_rt_alloc/tb_rt_free around their body).
/// Floating point: IEEE, with FMA contraction allowed (as TVM's `AllowFPOpFusion = Fast`); no other
/// fast-math. Integers are evaluated in 64 bits. `tir.exp/log/sqrt/fabs/floor/ceil/round/pow` map to
/// LLVM intrinsics, `tir.tanh/erf` to libm, `tir.sigmoid` to 1/(1+exp(-x)), `tir.if_then_else`
/// evaluates only the taken side (branches; masks inside vector lanes).
///
/// Thread safety: compile() is reentrant (one LLVMContext per call): the Builder runs many at once.

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "engine/codegen/target.h"
#include "engine/lower/loop_ir.h"

namespace tb::codegen {

struct CompileOptions {
    bool emitLlvmIr = true;     ///< fill CompiledKernel::llvmIr (optimised module text)
    bool emitAssembly = true;   ///< fill CompiledKernel::assembly (costs a second codegen run)
    /// LLVM's optimisation pipeline in `opt -passes=` syntax (e.g. "default<O3>"); empty: the
    /// environment's TB_LLVM_PIPELINE if set, else llvmPipeline()'s choice for the target.
    std::string llvmPipeline;
};

/// The result of compiling one lowered function for one target.
struct CompiledKernel {
    std::string name;                  ///< exported entry symbol (the LoweredFunc's name)
    std::string target;                ///< Target::str() it was compiled for
    bool runsOnHost = false;           ///< the object can be loaded and run on this machine
    std::vector<uint8_t> object;       ///< ELF relocatable object (x86-64 or AArch64 ...)
    std::string llvmIr;                ///< optimised LLVM IR text (empty unless requested)
    std::string assembly;              ///< assembly text (empty unless requested)
    std::string loweredIr;             ///< LoweredFunc::print() of the compiled function
    std::vector<int64_t> argElements;  ///< elements spanned by each argument (buffer sizes)
    std::string key;                   ///< cache key: md5 of loweredIr + target + options
    double compileSeconds = 0;         ///< wall time of LLVM IR emission + optimisation + codegen (s)
    double optimizeSeconds = 0;        ///< of which LLVM's optimisation pipeline (llvmPipeline())
    double emitSeconds = 0;            ///< of which machine code emission (the object; assembly text excluded)
};

/// The kernel pipeline, LLVM's pipeline at -opt-level=3 (textual, `opt -passes=` syntax): the
/// function passes of LLVM's default<O3> that kernels need, in O3's order, each group once. It
/// compiles a tuning run's candidates with half of default<O3>'s pipeline time (30% less compile
/// time in all), and networks tuned with it run as fast as networks tuned with default<O3>;
/// codegen_llvm.cpp lists what it leaves out and the measurements.
const char* kernelPipeline();

/// The LLVM pipeline compile() runs for target and options: options.llvmPipeline, else the
/// environment's TB_LLVM_PIPELINE (e.g. TB_LLVM_PIPELINE='default<O3>' for LLVM's own), else
/// kernelPipeline() at -opt-level=3 and LLVM's default<O0..O2> below. Part of the cache key.
std::string llvmPipeline(const Target& target, const CompileOptions& options = {});

/// Compile f for target (see the file comment). The body is run through lower::unrollLoops and
/// lower::expandUnrolled first.
/// Throws tb::UserError for a pipeline text LLVM cannot parse (naming it and LLVM's reason), for IR
/// codegen cannot express (an unknown intrinsic, a load of an unbound
/// buffer: both are bugs of the lowering that produced f, reported with the offending expression)
/// and InternalError when LLVM's verifier rejects the module we built.
CompiledKernel compile(const lower::LoweredFunc& f, const Target& target, const CompileOptions& options = {});

/// compile() through the process-wide kernel cache, keyed by md5(lowered IR text, target string,
/// options): the same lowered program is compiled once (TOOLCHAIN.md pitfall 3: LLVM at O3 costs
/// 10-20 ms per kernel). Thread safe; concurrent misses on the same key may both compile.
std::shared_ptr<const CompiledKernel> compileCached(const lower::LoweredFunc& f, const Target& target,
                                                    const CompileOptions& options = {});

/// Number of entries in the kernel cache, and a way to empty it (tests, memory pressure).
size_t kernelCacheSize();
void clearKernelCache();

}  // namespace tb::codegen
