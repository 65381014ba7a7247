// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file target.h
/// \brief A compilation target, parsed from TVM's target string syntax.
///
/// TVM names targets with strings such as `llvm -mcpu=znver4`, `llvm -mtriple=aarch64-linux-gnu
/// -mattr=+neon`, `llvm -keys=cpu -mcpu=skylake-avx512 -num-cores=4`. The tuner, the record logs
/// (auto_scheduler v0.6 stores the string) and the GUI's target picker all carry this string; the
/// code generator needs the parsed fields. Omitted fields default to the machine we run on
/// (`sys::getHostCPUName()` / `sys::getHostCPUFeatures()`; znver4 with AVX-512 on the project's
/// machines), but only when the triple is the host's: a cross target without -mcpu gets LLVM's
/// generic CPU for that triple. An x86 host CPU that LLVM does not know (it answers "generic", as
/// LLVM 16 does on Zen 5) is named after the newest CPU LLVM knows whose instruction set the host
/// has (znver4 on Zen 5), so that the name written into records and target strings still means
/// AVX-512 when it is parsed again.

#include <string>
#include <vector>

namespace tb::codegen {

struct Target {
    std::string kind = "llvm";        ///< only "llvm" today (CPU code through LLVM)
    std::string mtriple;              ///< LLVM triple, e.g. "x86_64-pc-linux-gnu", "aarch64-linux-gnu"
    std::string mcpu;                 ///< LLVM CPU name, e.g. "znver4", "generic"
    std::vector<std::string> mattr;   ///< LLVM features with sign: "+avx512f", "+neon", "-avx2"
    std::vector<std::string> keys;    ///< TVM keys ("cpu", "arm_cpu"); default {"cpu"}
    int numCores = 0;                 ///< -num-cores (0 = unspecified)
    std::string model;                ///< -model (free text, kept for the record)
    int optLevel = 3;                 ///< -opt-level (0..3) for LLVM

    /// Parse a TVM target string: `kind [-key=value]...` with keys mtriple, mcpu, mattr (comma list
    /// of +feat/-feat), keys (comma list), num-cores, model, opt-level, mabi, device (ignored
    /// for CPUs), and the flag `-link-params` style booleans `-key` are rejected. Unset fields are
    /// filled from the host as described in the file comment. Throws tb::UserError naming the string
    /// and the problem for: an empty string, a kind other than llvm, an option without '-' or '=',
    /// an unknown option, a bad number, an -mattr entry without +/-, a triple LLVM does not know,
    /// or a CPU name LLVM does not know for that triple.
    static Target parse(const std::string& text);
    /// The running machine: host triple, CPU and features (= parse("llvm")).
    static Target host();

    /// The canonical TVM string (`llvm -keys=cpu -mcpu=znver4 -mtriple=...`); parse(str()) == *this.
    std::string str() const;
    /// The comma-joined feature string LLVM's TargetMachine takes ("+avx512f,+fma,...").
    std::string featureString() const;
    /// True when code for this target runs on this machine (same architecture as the host).
    bool runsOnHost() const;
    /// Native SIMD width in bits that kernels should use: 512 with +avx512f, 256 with +avx/+avx2,
    /// 128 for SSE/NEON/other.
    int vectorBits() const;
    /// True when the feature is enabled: an explicit "+name"/"-name" in mattr decides, else the CPU's
    /// default features (hasFeature("avx512f") for znver4). `name` must be a feature of this
    /// target's architecture (LLVM warns on stderr about unknown names and answers true).
    bool hasFeature(const std::string& name) const;

    bool operator==(const Target& o) const = default;
};

}  // namespace tb::codegen
