// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file log_summary.h
/// \brief What a tuning log holds, at a glance: counts, errors, best cost per workload.
///
/// The first question about any log (ours, TVM's, tophub's) is "how did tuning go": how many
/// measurements, how many failed and why (TVM's error names), which workloads were tuned and the
/// best latency and throughput reached for each, and which lines could not be read. Used by
/// `tunebench-cli log summary` and the GUI's log inspector. Works on both formats.

#include <map>
#include <string>
#include <vector>

#include "engine/record/record_io.h"

namespace tb::record {

/// One workload (same decoded key for auto_scheduler; same task name + args for AutoTVM), over
/// all targets in the log.
struct WorkloadSummary {
    std::string key;            ///< the workload key as first seen (auto_scheduler) / task+args JSON (AutoTVM)
    std::string name;           ///< DAG hash or function name (auto_scheduler) / task name (AutoTVM)
    int records = 0;
    int valid = 0;
    double bestCost = 0;        ///< seconds, mean of the best valid record's costs; +inf if none valid
    int bestLine = 0;           ///< 1-based line of that record (0 if none)
    std::string bestTarget;     ///< target of that record
    double flop = -1;           ///< from the caller's map, -1 if unknown
    double gflops = -1;         ///< flop / bestCost / 1e9, -1 if unknown
};

struct LogSummary {
    LogFormat format = LogFormat::Unknown;
    int totalLines = 0;
    int records = 0;
    int valid = 0;              ///< error_no 0 with at least one cost
    int commentLines = 0;
    int blankLines = 0;
    std::map<int, int> errorCounts;           ///< error_no -> count (0 included)
    std::map<std::string, int> versions;      ///< "v" / "version" as text -> count
    /// AutoTVM records in the old v0.1 format (also counted under versions["0.1"]): TVM >= 0.7
    /// skips them when loading a log; we read and show them.
    int v01Records = 0;
    std::vector<WorkloadSummary> workloads;   ///< in order of first appearance
    std::vector<BadLine> badLines;
};

/// FLOP counts by workload key (as written in the log, or any spelling that decodes to the same
/// workload for auto_scheduler).
using FlopMap = std::map<std::string, double>;

LogSummary summarize(const LogContents<MeasureRecord>& log, const FlopMap& flops = {});
LogSummary summarize(const LogContents<AutoTvmRecord>& log, const FlopMap& flops = {});

/// Reads `path` (format detected; an undecidable file, e.g. one of AutoTVM v0.1 lines only, is read
/// in the format that yields more records, auto_scheduler on a tie) and summarizes it. Throws
/// tb::UserError if the file cannot be read.
LogSummary summarizeFile(const std::string& path, const FlopMap& flops = {});

}  // namespace tb::record
