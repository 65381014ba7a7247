// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file target.h
/// \brief A compilation target, parsed from TVM's target string syntax (src/target/target.cc,
/// target_kind.cc of TVM v0.14).
///
/// TVM names targets with strings such as `llvm -mcpu=znver4`, `llvm -mtriple=aarch64-linux-gnu
/// -mattr=+neon`, `cuda -arch=sm_90`, `opencl -device=mali`. The tuner, the record logs
/// (auto_scheduler v0.6 stores the string) and the GUI's target picker all carry this string; the
/// code generators and the task extraction need the parsed fields. Three kinds are known:
///
/// - `llvm`: CPU code through LLVM. Omitted fields default to the machine we run on
///   (`sys::getHostCPUName()` / `sys::getHostCPUFeatures()`; znver4 with AVX-512 on the project's
///   machines), but only when the triple is the host's: a cross target without -mcpu gets LLVM's
///   generic CPU for that triple. An x86 host CPU that LLVM does not know (it answers "generic", as
///   LLVM 16 does on Zen 5) is named after the newest CPU LLVM knows whose instruction set the host
///   has (znver4 on Zen 5), so that the name written into records and target strings still means
///   AVX-512 when it is parsed again.
/// - `cuda`: NVIDIA GPUs. Keys `cuda,gpu`; TVM's defaults -max_num_threads=1024
///   -thread_warp_size=32 are filled in. -arch (sm_XX) is kept when given; unlike TVM v0.14, which
///   asks the local GPU for it (or falls back to sm_50), an absent -arch stays absent, as in the
///   records of older TVM releases (`cuda -keys=cuda,gpu -max_num_threads=1024 -thread_warp_size=32`).
/// - `opencl`: OpenCL devices. Keys `opencl,gpu`, preceded by the -device name when given
///   (`opencl -device=mali` has keys `mali,opencl,gpu`, which is what selects TVM's Mali
///   strategies); TVM's defaults -max_threads_per_block=256 -max_shared_memory_per_block=16384
///   -max_num_threads=256 -thread_warp_size=1 -texture_spatial_limit=16384 -max_function_args=128
///   are filled in.
///
/// A GPU target usually carries a host target (TVM `Target(target, host=...)`): the CPU that runs
/// the host code and launches the kernels, e.g. `llvm -mtriple=aarch64-linux-gnu` on a Mali
/// board. It is given as `-host=<llvm target>` inside the string (quoted, or unquoted as the last
/// option, taking the rest of the string) or through parse(text, host). As in TVM, str() leaves
/// the host out: records store the device target only.
///
/// The predicates isCpu(), isGpu(), isCuda(), isOpenCL() and isMali() are what the rest of the
/// engine asks; CPU-only code (the LLVM code generator, vectorBits(), the CPU measurers) rejects a
/// GPU target with a UserError naming it.
#include <optional>
#include <string>
#include <vector>

#include "engine/support/hardware_params.h"

namespace tb::codegen {

struct Target {
    std::string kind = "llvm";        ///< "llvm" (CPU), "cuda" or "opencl"
    std::string mtriple;              ///< llvm: LLVM triple, e.g. "x86_64-pc-linux-gnu", "aarch64-linux-gnu"
    std::string mcpu;                 ///< llvm: LLVM CPU name, e.g. "znver4", "generic"; cuda: -mcpu (free text)
    std::vector<std::string> mattr;   ///< llvm: LLVM features with sign: "+avx512f", "+neon", "-avx2"
    std::vector<std::string> keys;    ///< TVM keys ("cpu", "arm_cpu"; "cuda,gpu"; "mali,opencl,gpu")
    int numCores = 0;                 ///< llvm: -num-cores (0 = unspecified)
    std::string model;                ///< -model (free text, kept for the record)
    int optLevel = 3;                 ///< llvm: -opt-level (0..3) for LLVM
    std::string device;               ///< GPU kinds: -device, e.g. "mali" (accepted and ignored for llvm)
    std::vector<std::string> libs;    ///< GPU kinds: -libs, e.g. cudnn,cublas (kept for the record)
    // GPU attributes (TVM target_kind.cc); 0 = absent. parse() fills TVM's defaults for the kind.
    std::string arch;                 ///< cuda: -arch=sm_XX ("" = unspecified)
    int maxNumThreads = 0;            ///< -max_num_threads (cuda 1024, opencl 256)
    int threadWarpSize = 0;           ///< -thread_warp_size (cuda 32, opencl 1)
    int maxThreadsPerBlock = 0;       ///< -max_threads_per_block (opencl 256; cuda: absent)
    int maxSharedMemoryPerBlock = 0;  ///< -max_shared_memory_per_block in bytes (opencl 16384; cuda: absent)
    int registersPerBlock = 0;        ///< cuda: -registers_per_block (absent by default)
    int maxFunctionArgs = 0;          ///< opencl: -max_function_args (128)
    int textureSpatialLimit = 0;      ///< opencl: -texture_spatial_limit (16384)
    /// The host target's canonical string (an llvm target), "" when none was given.
    std::string targetHost;

    /// Parse a TVM target string: `kind [-key=value]...`.
    /// llvm options: mtriple, mcpu, mattr (comma list of +feat/-feat), keys (comma list),
    /// num-cores, model, opt-level, mabi and device (both ignored for CPUs); unset fields are filled
    /// from the host as described in the file comment.
    /// cuda options: arch (sm_<number>), mcpu, max_num_threads, thread_warp_size,
    /// max_threads_per_block, max_shared_memory_per_block, registers_per_block; opencl options:
    /// device, max_num_threads, thread_warp_size, max_threads_per_block,
    /// max_shared_memory_per_block, max_function_args, texture_spatial_limit; both: keys, model,
    /// libs, device, host (an llvm target string, quoted with ' or ", or unquoted as the last option).
    /// Keys follow TVM (target.cc FromConfig): the user's -keys, then -device, then (only without
    /// -keys) the kind's default keys, duplicates dropped.
    /// Throws tb::UserError naming the string and the problem for: an empty string, an unknown
    /// kind (supported: llvm, cuda, opencl), an option without '-' or '=', an option the kind does
    /// not know, a bad number, a bad -arch, an -mattr entry without +/-, a triple LLVM does not
    /// know, a CPU name LLVM does not know for that triple, a host that is not an llvm target or is
    /// given twice, an unterminated quote.
    static Target parse(const std::string& text);
    /// parse(text) with the host target `host` (TVM `Target(text, host=host)`); an empty `host`
    /// keeps the one in `text`, if any. UserError when both name a host and they differ.
    static Target parse(const std::string& text, const std::string& host);
    /// The running machine: host triple, CPU and features (= parse("llvm")).
    static Target host();

    /// The canonical TVM string, host excluded (TVM TargetNode::str()): the kind, `-keys=...`,
    /// then the attributes in alphabetical order, e.g. `llvm -keys=cpu -mcpu=znver4 -mtriple=...`,
    /// `cuda -keys=cuda,gpu -arch=sm_90 -max_num_threads=1024 -thread_warp_size=32`,
    /// `opencl -keys=mali,opencl,gpu -device=mali -max_function_args=128 ...`.
    /// parse(str()) == *this when there is no host.
    std::string str() const;
    /// The host target parsed, or nullopt when none was given.
    std::optional<Target> hostTarget() const;

    /// `llvm`: code for a CPU.
    bool isCpu() const { return kind == "llvm"; }
    /// `cuda` or `opencl`: kernels for a GPU, launched from a host.
    bool isGpu() const { return kind == "cuda" || kind == "opencl"; }
    /// `cuda` (NVIDIA; TVM's cuda strategies).
    bool isCuda() const { return kind == "cuda"; }
    /// `opencl`, any device.
    bool isOpenCL() const { return kind == "opencl"; }
    /// A Mali GPU: an opencl target with the key `mali` (`opencl -device=mali`); TVM then takes its
    /// Mali strategies and fixed hardware parameters (HardwareParams::mali()).
    bool isMali() const;
    /// GPU targets only: TVM's default hardware parameters (search_task.cc
    /// GetDefaultHardwareParams) without a device to query. Mali: HardwareParams::mali(). cuda:
    /// HardwareParams::gpu(max_shared_memory_per_block or 49152 (48 KiB, what CUDA devices report
    /// per block), max_threads_per_block or max_num_threads, thread_warp_size). Other OpenCL:
    /// HardwareParams::gpu of the target's attributes (16384, 256, 1 by default). TVM asks device 0
    /// instead (the device-queried variant is the GPU device layer's). UserError for an llvm target.
    HardwareParams gpuHardwareParams() const;

    /// The comma-joined feature string LLVM's TargetMachine takes ("+avx512f,+fma,...").
    std::string featureString() const;
    /// True when code for this target runs on this machine (an llvm target of the host's
    /// architecture); false for GPU targets (their kernels need a GPU device and its runtime).
    bool runsOnHost() const;
    /// Native SIMD width in bits that kernels should use: 512 with +avx512f, 256 with +avx/+avx2,
    /// 128 for SSE/NEON/other. UserError for a GPU target.
    int vectorBits() const;
    /// True when the feature is enabled: an explicit "+name"/"-name" in mattr decides, else the CPU's
    /// default features (hasFeature("avx512f") for znver4). `name` must be a feature of this
    /// target's architecture (LLVM warns on stderr about unknown names and answers true). False for
    /// GPU targets.
    bool hasFeature(const std::string& name) const;

    bool operator==(const Target& o) const = default;
};

}  // namespace tb::codegen
