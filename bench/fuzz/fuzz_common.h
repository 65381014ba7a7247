// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file fuzz_common.h
/// \brief What every libFuzzer harness in bench/fuzz shares.
///
/// Each harness defines `LLVMFuzzerTestOneInput(data, size)`: it feeds the bytes to one engine
/// parser and returns 0. A rejection the parser documents (tb::UserError, tb::rpc::RpcError) is
/// the expected answer to garbage and is swallowed; anything else escaping (an InternalError, a
/// std::out_of_range or nlohmann::json exception, a crash, a sanitizer report, an abort) is a bug
/// the fuzzer reports. The same sources build two ways (bench/fuzz/CMakeLists.txt): with clang's
/// -fsanitize=fuzzer under TB_FUZZ=ON, and as plain executables (regress_main.cpp) that replay the
/// regression inputs of tests/fuzz/regressions/<harness>/ in the normal build.

#include <cstddef>
#include <cstdint>
#include <string>

#include "engine/support/error.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);

namespace tb::fuzz {

inline std::string bytes(const std::uint8_t* data, std::size_t size) {
    return std::string(reinterpret_cast<const char*>(data), size);
}

/// Runs `f`, swallowing tb::UserError (the documented rejection); everything else propagates.
template <class F>
void expectUserError(F&& f) {
    try {
        f();
    } catch (const tb::UserError&) {
    }
}

/// Runs `f`, swallowing tb::UserError and the layer's own documented error type E.
template <class E, class F>
void expectUserErrorOr(F&& f) {
    try {
        f();
    } catch (const tb::UserError&) {
    } catch (const E&) {
    }
}

}  // namespace tb::fuzz
