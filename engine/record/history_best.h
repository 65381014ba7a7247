// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file history_best.h
/// \brief Best-record lookup (TVM ApplyHistoryBest) and log distillation (distill / pick_best).
///
/// After tuning, compilation asks "what is the best schedule for this workload on this target?".
/// TVM answers with ApplyHistoryBest (auto_scheduler/dispatcher.py; autotvm/task/dispatcher.py):
/// every valid record (error_no 0) is filed, with cost = mean(costs) in seconds, under
/// * each of its target's keys (`cpu`, `arm_cpu`, `gpu`, ...: target_info.h), and
/// * its target's `-model=` unless that is "unknown",
/// then under the workload (auto_scheduler: decoded hash + flattened args, so nested and flat keys
/// meet; AutoTVM: task name + args), keeping the lowest cost (the first of equal costs).
/// A query tries the query target's model first, then each of its keys in order. With
/// include_compatible (auto_scheduler only), when no record has exactly the workload, a record of
/// the same hash whose args divide the query's is used, ranked by cost × calc_workload_dis_factor.
///
/// Distill (`python -m tvm.auto_scheduler.measure_record --mode distill`) and pick_best
/// (`python -m tvm.autotvm.record --mode pick`) reduce a log to those winners. One deliberate
/// difference: TVM collects the winners' *inputs* and then writes the first record with each such
/// input, which is a worse measurement of the same program if it was measured twice; we write the
/// winning record itself (same program, its best measurement). Order is the log's order.

#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "engine/record/autotvm_record.h"
#include "engine/record/measure_record.h"
#include "engine/record/record_io.h"
#include "engine/record/workload_key.h"

namespace tb::record {

/// auto_scheduler ApplyHistoryBest over a set of records (it owns copies).
class HistoryBest {
public:
    explicit HistoryBest(bool includeCompatible = false) : m_includeCompatible(includeCompatible) {}
    explicit HistoryBest(const std::vector<MeasureRecord>& records, bool includeCompatible = false);

    /// Files one record (ignored unless valid()).
    void add(const MeasureRecord& record);

    /// The best record for `workloadKey` on `target` (a TVM target string), or nullptr. The
    /// pointer stays valid until the next add().
    const MeasureRecord* query(std::string_view target, std::string_view workloadKey) const;
    /// The cost (seconds) a query would rank the answer by (× dis factor for compatible ones);
    /// +infinity if query() returns nullptr.
    double queryCost(std::string_view target, std::string_view workloadKey) const;

    /// Indices (in add() order) of every record that is best somewhere (by a key or by a model),
    /// ascending, without duplicates.
    std::vector<size_t> winnerIndices() const;
    /// All records added (valid or not), in add() order.
    const std::vector<MeasureRecord>& records() const { return m_records; }

private:
    struct Entry {
        size_t index = 0;
        double cost = 0;
    };
    // key (target key or model) -> workload name -> canonical flat args -> best
    using ArgsMap = std::map<std::string, Entry>;
    using NameMap = std::map<std::string, ArgsMap>;
    static void file(std::map<std::string, NameMap>& table, const std::string& key, const WorkloadKey& wk,
                     size_t index, double cost, bool insertIfMissing);
    std::pair<const Entry*, double> match(const std::map<std::string, NameMap>& table, const std::string& key,
                                          const WorkloadKey& wk) const;
    std::pair<const Entry*, double> lookup(std::string_view target, std::string_view workloadKey) const;

    bool m_includeCompatible = false;
    std::vector<MeasureRecord> m_records;
    std::vector<WorkloadKey> m_workloads;
    std::map<std::string, NameMap> m_byTargetKey;
    std::map<std::string, NameMap> m_byModel;
};

/// Indices of the records distill keeps, ascending: the winners of HistoryBest(records), each
/// serialized input once.
std::vector<size_t> distillIndices(const std::vector<MeasureRecord>& records);

/// What distillRecordFile did.
struct DistillReport {
    int inputRecords = 0;      ///< records read from the input file
    int existingRecords = 0;   ///< records read from a pre-existing output file (merged, as TVM)
    int written = 0;           ///< records in the new output file
    std::vector<BadLine> inputBadLines;
    std::vector<BadLine> existingBadLines;
};

/// TVM distill_record_file: the best records of `inPath` and of an existing `outPath` together
/// replace `outPath` (written to a temporary file, then renamed). Throws tb::UserError if a file
/// cannot be read or written; bad lines are reported, not fatal.
DistillReport distillRecordFile(const std::string& inPath, const std::string& outPath);

/// AutoTVM ApplyHistoryBest: best record per (target key or model, workload).
class AutoTvmHistoryBest {
public:
    AutoTvmHistoryBest() = default;
    explicit AutoTvmHistoryBest(const std::vector<AutoTvmRecord>& records);
    void add(const AutoTvmRecord& record);
    /// Best record for `workloadKey` (AutoTvmRecord::workloadKey() form) on `target`, or nullptr.
    const AutoTvmRecord* query(std::string_view target, std::string_view workloadKey) const;
    std::vector<size_t> winnerIndices() const;
    const std::vector<AutoTvmRecord>& records() const { return m_records; }

private:
    struct Entry {
        size_t index = 0;
        double cost = 0;
    };
    std::vector<AutoTvmRecord> m_records;
    std::map<std::pair<std::string, std::string>, Entry> m_byTargetKey;
    std::map<std::pair<std::string, std::string>, Entry> m_byModel;
};

/// TVM autotvm.record.pick_best: indices of the records to keep, ascending.
std::vector<size_t> pickBestIndices(const std::vector<AutoTvmRecord>& records);

/// pick_best on files (TVM overwrites `outPath` without merging; so do we). Same report type.
DistillReport pickBestFile(const std::string& inPath, const std::string& outPath);

}  // namespace tb::record
