// SPDX-License-Identifier: Apache-2.0
// Fuzz harness: AutoTVM tuning-log text -> parseAutoTvmRecords (TVM autotvm/record.py v0.2 and
// v0.1 lines), then what readers do with a good record: workload key, serialized input, config
// index, and writing it back (toLine must read back to the same line). Seeds:
// ../shared/data/logs/autotvm/*.log, split into lines (bench/fuzz/run.sh).
#include "bench/fuzz/fuzz_common.h"
#include "engine/record/record_io.h"

using namespace tb::record;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string text = tb::fuzz::bytes(data, size);
    tb::fuzz::expectUserError([&] {
        const auto log = parseAutoTvmRecords(text);
        for (const AutoTvmRecord& r : log.records) {
            (void)r.workloadKey();
            (void)r.serializedInput();
            (void)r.meanCost();
            tb::fuzz::expectUserError([&] { (void)r.configIndex(); });
            const std::string line = r.toLine();
            const AutoTvmRecord again = AutoTvmRecord::fromLine(line);
            if (again.toLine() != line) __builtin_trap();
        }
    });
    return 0;
}
