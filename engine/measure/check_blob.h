// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file check_blob.h
/// \brief CheckSpec, the optional correctness check of a candidate, and the "check blob": the form
/// in which it travels to an RPC device next to the module it checks (`<module>.check`).
///
/// Why a file of its own: every device side decodes it, the host's sandbox (sandbox_executor.h),
/// the AArch64 device server (tools/arm/) and the GPU runtime (gpu_device.h, tools/gpu/), and the
/// last two are built without the engine's libraries: this is the standard library only (plus the
/// header-only error.h).
///
/// Check blob format (little-endian):
/// ```
///   "TBCK" | u32 version = 1 | f64 rtol | f64 atol
///   u32 nInputs   | nInputs   x (u64 count | count x f32)   (count 0 = random fill)
///   u32 nExpected | nExpected x (u64 count | count x f32)   (count 0 = not checked)
/// ```

#include <string>
#include <string_view>
#include <vector>

namespace tb::measure {

/// Optional correctness check of a candidate. Argument contents are `inputs[i]` when given (size =
/// the argument's element count) and random otherwise; after the first (warm-up) call, every
/// non-empty `expected[i]` is compared elementwise with |got - want| <= atol + rtol * |want|.
struct CheckSpec {
    std::vector<std::vector<float>> inputs;    ///< per argument; empty vector = random fill
    std::vector<std::vector<float>> expected;  ///< per argument; empty vector = not checked
    double rtol = 1e-4;
    double atol = 1e-5;
};

/// Suffix of the check blob uploaded next to a module: `<module>.check`.
inline constexpr std::string_view kCheckBlobSuffix = ".check";

/// Encodes a CheckSpec in the check blob format (file comment).
std::string encodeCheckBlob(const CheckSpec& check);
/// Decodes a check blob. Throws tb::UserError naming the problem for a truncated or malformed blob.
CheckSpec decodeCheckBlob(std::string_view blob);

}  // namespace tb::measure
