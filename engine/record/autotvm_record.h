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
///
/// Version 0.1 lines (TopHub's `*_v0.01` files, TVM <= 0.5 record.py) are read for inspection
/// and marked (`isV01()`): `{"i": [target, task_name, args, kwargs, workload, {"i": index,
/// "c": code_hash, "t": template_key, "e": entity}], "r": [costs, error_no, all_cost, timestamp],
/// "v": 0.1}`. TVM >= 0.7 skips such lines ("AutoTVM log version 0.1 is no longer supported");
/// we show them, with the config normalized to the v0.2 shape (index, code_hash, entity) and the
/// old fields kept in `v01`. Their task names are the old ones ("topi_nn_conv2d"), so no current
/// template applies them.

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

    /// What only a v0.1 line has.
    struct V01Fields {
        nlohmann::ordered_json workload;  ///< "i"[4]: the old workload tuple, e.g. ["conv2d", [1, 3, 224, 224, "float32"], ...]
        std::string templateKey;          ///< config "t": "direct", "winograd", ...
        nlohmann::ordered_json object;    ///< the line as read (toLine() writes it back unchanged)
    };
    /// Set for a v0.1 line (then `version` is 0.1 and `tvmVersion` absent).
    std::optional<V01Fields> v01;
    bool isV01() const { return v01.has_value(); }

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
    /// tvm_version), without newline. A v0.1 record is written back as it was read.
    std::string toLine() const;
    /// Parses one line (v0.2, or v0.1 marked as such); throws tb::UserError naming the problem.
    static AutoTvmRecord fromLine(std::string_view line);
    static AutoTvmRecord fromJson(const nlohmann::ordered_json& object);
};

}  // namespace tb::record
