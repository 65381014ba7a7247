// SPDX-License-Identifier: Apache-2.0
// Fuzz harness: a TVM target string -> codegen::Target::parse (as read from records, the CLI and
// the GUI). A parsed target must print to a string that parses back to the same Target
// (target.h: parse(str()) == *this; str() leaves the host out, as TVM's does, so the host is
// given back as parse's second argument), and its derived properties must not fail.
#include "bench/fuzz/fuzz_common.h"
#include "engine/codegen/target.h"

using tb::codegen::Target;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    if (size > 4096) return 0;  // target strings are short; LLVM's CPU tables are the slow part
    const std::string text = tb::fuzz::bytes(data, size);
    tb::fuzz::expectUserError([&] {
        const Target t = Target::parse(text);
        (void)t.featureString();
        (void)t.runsOnHost();
        (void)t.vectorBits();
        const Target again = Target::parse(t.str(), t.targetHost);
        if (!(again == t)) __builtin_trap();
    });
    return 0;
}
