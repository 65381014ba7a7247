// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file measure_record.h
/// \brief One line of an auto_scheduler tuning log: what was measured and how it went.
///
/// TVM's auto_scheduler appends one JSON object per measurement (measure_record.cc,
/// REFERENCE-TVM §5.1): `{"i": [task, state], "r": result, "v": version}` where
/// * task = `[workload_key, target, hardware_params[8], target_host, layout_rewrite_option,
///   [task_input_names]]`, which older versions cut short: 2 elements (v0.2: key, target),
///   3 (v0.3: + hardware params), 5 (+ target host, layout rewrite) or 6 (v0.5+, + input names);
/// * state = `[[], [step, ...]]` (stages are never written; each step is a JSON array such as
///   `["SP", 2, 0, 1024, [2, 1, 4], 1]`);
/// * result = `[[costs in seconds], error_no, all_cost in seconds, timestamp]`.
///
/// This layer is the *format*: it keeps the steps as the raw JSON array (the schedule layer
/// decodes and replays them) and remembers the shape of the line it read (task tuple length,
/// whether "v" was present) so that writing a record back gives the same JSON value, and, for a
/// line TVM wrote, the same bytes. Parsing a line is strict and throws tb::UserError with the
/// reason; whole-file reading is tolerant (record_io.h).

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/record/workload_key.h"
#include "engine/support/hardware_params.h"

namespace tb::record {

/// The log version TVM writes today (measure_record.h `AUTO_SCHEDULER_LOG_VERSION`).
inline constexpr const char* kAutoSchedulerLogVersion = "v0.6";

/// TVM MeasureErrorNO (auto_scheduler measure.h, autotvm measure.py; same numbering): 0 NO_ERROR,
/// 1 INSTANTIATION_ERROR, 2 COMPILE_HOST, 3 COMPILE_DEVICE, 4 RUNTIME_DEVICE, 5 WRONG_ANSWER,
/// 6 BUILD_TIMEOUT, 7 RUN_TIMEOUT, 8 UNKNOWN_ERROR. Other numbers give "ERROR_<n>".
std::string measureErrorName(int errorNo);

/// The task tuple `i[0]`. Which of the optional tail fields a line carried is kept in `arity`.
struct RecordTask {
    std::string workloadKey;          ///< the JSON string, as written (see WorkloadKey)
    std::string target;               ///< e.g. "llvm -keys=cpu -link-params=0"
    /// `i[0][2]` in TVM's record order; meaningful when arity >= 3 (all zero when the line had none).
    HardwareParams hardwareParams{0, 0, 0, 0, 0, 0, 0, 0};
    std::string targetHost;           ///< "" = none; meaningful when arity >= 5
    int layoutRewriteOption = 0;      ///< 0 NoRewrite, 1 InsertTransformStage, 2 RewriteForPreTransformed
    std::vector<std::string> taskInputNames;  ///< meaningful when arity == 6
    /// Number of elements written: 2, 3, 5 or 6 (TVM's reader accepts exactly these).
    int arity = 6;
};

struct MeasureRecord {
    RecordTask task;
    /// The state's transform steps, `i[1][1]`: a JSON array of step arrays (first element the
    /// step prefix string). Decoded by the schedule layer.
    nlohmann::json steps = nlohmann::json::array();
    /// Per-repeat run times in seconds (TVM writes `[1e+10]` for failed runs).
    std::vector<double> costs;
    int errorNo = 0;
    /// Seconds spent building and running this candidate.
    double allCost = 0;
    /// Unix time in seconds when measured (TVM writes it as an integer).
    double timestamp = 0;
    /// The log version string; new records carry kAutoSchedulerLogVersion.
    std::string version = kAutoSchedulerLogVersion;
    /// False if the line had no "v" member (TVM's reader allows that); then none is written.
    bool hasVersion = true;

    /// True if the measurement succeeded (error_no 0) and has at least one cost.
    bool valid() const { return errorNo == 0 && !costs.empty(); }
    /// Mean of costs in seconds (TVM's `np.mean(res.costs)`); +infinity when costs is empty.
    double meanCost() const;
    /// The decoded workload key.
    WorkloadKey workload() const { return WorkloadKey::parse(task.workloadKey); }

    /// The record as one TVM log line, without the newline: keys in TVM's order i, r, v,
    /// dmlc::JSONWriter spacing and number format (json_format.h). Non-finite costs are written as
    /// 1e+10, TVM's cost for a failed run; the timestamp is truncated to an integer, as TVM does.
    std::string toLine() const;
    /// The serialized input (`{"i": ...}` part only): two records measured the same program on
    /// the same task iff these are equal (TVM's SerializeMeasureInput, used by distill to dedup).
    std::string serializedInput() const;

    /// Parses one line (without its newline). Throws tb::UserError naming the problem (not JSON,
    /// missing or mistyped member, wrong task tuple length, an AutoTVM line, ...).
    static MeasureRecord fromLine(std::string_view line);
    /// As fromLine, from an already parsed JSON object.
    static MeasureRecord fromJson(const nlohmann::json& object);
};

}  // namespace tb::record
