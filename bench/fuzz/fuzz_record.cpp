// SPDX-License-Identifier: Apache-2.0
// Fuzz harness: auto_scheduler tuning-log text -> parseMeasureRecords (TVM measure_record.cc
// format), then what every reader does with a good record: decode its workload key, write it back
// (toLine must give a line that parses again) and its serialized input. Also detectLogFormat.
// Seeds: ../shared/data/logs/ansor/*.json, split into lines (bench/fuzz/run.sh).
#include "bench/fuzz/fuzz_common.h"
#include "engine/record/record_io.h"

using namespace tb::record;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string text = tb::fuzz::bytes(data, size);
    (void)detectLogFormat(text);
    tb::fuzz::expectUserError([&] {
        const auto log = parseMeasureRecords(text);
        for (const MeasureRecord& r : log.records) {
            const std::string line = r.toLine();
            const MeasureRecord again = MeasureRecord::fromLine(line);  // a written line must read back
            if (again.toLine() != line) __builtin_trap();              // ... to the same line
            (void)r.serializedInput();
            (void)r.meanCost();
            tb::fuzz::expectUserError([&] { (void)r.workload(); });
        }
    });
    return 0;
}
