// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file autotvm_record.h
/// \brief One line of an AutoTVM tuning log (TVM python/tvm/autotvm/record.py, log version 0.2).
///
/// AutoTVM tunes a hand-written schedule template over a knob space; a record says which template
/// (task name + arguments), which point of its space (config index and knob values) and how it
/// ran. Line format (REFERENCE-TVM §5.2), written by Python's `json.dumps`:
/// `{"input": [target, task_name, args, kwargs], "config": {"index": int, "code_hash": str|null,
/// "entity": [[knob, kind, value], ...]}, "result": [costs, error_no, all_cost, timestamp],
/// "version": 0.2, "tvm_version": "0.7.dev0"}`.
///
/// Tophub's pre-tuned files (the logs TVM downloads) are in this format. Arguments, kwargs and the
/// config are kept as ordered JSON, so writing a record back reproduces the line byte for byte.
/// Version 0.1 lines (`{"i": ..., "v": 0.1}`) are refused, as TVM refuses them.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace tb::record {

struct AutoTvmRecord {
    std::string target;       ///< e.g. "llvm -device=arm_cpu -model=rk3399 -mtriple=aarch64-linux-gnu"
    std::string taskName;     ///< the template, e.g. "conv2d_NCHWc.x86"
    /// Serialized template arguments (tensors as ["TENSOR", shape, dtype]), in order.
    nlohmann::ordered_json args = nlohmann::ordered_json::array();
    nlohmann::ordered_json kwargs = nlohmann::ordered_json::object();
    /// The config object as read: index, code_hash, entity (knob values), in the line's order.
    nlohmann::ordered_json config = nlohmann::ordered_json::object();
    /// Per-repeat run times in seconds (TVM writes [1e9] for failed runs).
    std::vector<double> costs;
    int errorNo = 0;
    double allCost = 0;       ///< seconds spent building and running
    double timestamp = 0;     ///< Unix time, seconds (fractional)
    bool integerTimestamp = false;  ///< the line wrote the timestamp as an integer
    /// "version" as read (0.2 for every current log); nullopt if absent.
    std::optional<nlohmann::ordered_json> version = nlohmann::ordered_json(0.2);
    /// "tvm_version" as read; nullopt if absent.
    std::optional<std::string> tvmVersion;

    bool valid() const { return errorNo == 0 && !costs.empty(); }
    /// Mean of costs in seconds; +infinity when empty.
    double meanCost() const;
    /// The config index (point of the template's space).
    std::int64_t configIndex() const;
    /// TVM's `Task.workload` = (task_name, *args) as a JSON list in json.dumps form: the identity
    /// of the tuned operator, independent of target and config.
    std::string workloadKey() const;
    /// The dedup key of TVM's `measure_str_key(inp)`: target, workload, kwargs and config.
    std::string serializedInput() const;

    /// The record as json.dumps writes it (key order input, config, result, version,
    /// tvm_version), without newline.
    std::string toLine() const;
    /// Parses one line; throws tb::UserError naming the problem.
    static AutoTvmRecord fromLine(std::string_view line);
    static AutoTvmRecord fromJson(const nlohmann::ordered_json& object);
};

}  // namespace tb::record
