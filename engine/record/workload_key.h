// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file workload_key.h
/// \brief A parsed auto_scheduler workload key, compared as TVM compares them.
///
/// Records name their task by a workload key, a JSON string (REFERENCE-TVM §5.1):
/// * an extracted task: `["<md5 of the simple-mode DAG print>", [1, 7, 7, 2048], ...]` (newer TVM
///   nests one shape per io tensor) or `["<md5>", 1, 7, 7, 2048, ...]` (older logs, flat);
/// * a registered function: `["matmul_add", 1024, 1024, 1024, "float32"]`.
///
/// TVM never compares key strings: `decode_workload_key` (auto_scheduler/utils.py) splits off
/// element 0 (hash or function name) and flattens the rest into one tuple, and ApplyHistoryBest,
/// distill and `calc_workload_dis_factor` work on that (name, flat args) pair. So the nested and the
/// flat key of one workload are the same workload, and this type makes them compare equal. A key
/// that is not a JSON list decodes, as in TVM, to (the whole string, no args).

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace tb::record {

class WorkloadKey {
public:
    WorkloadKey() = default;
    /// Decodes `key` as TVM's decode_workload_key. Never throws: an undecodable key becomes
    /// name = key, no args.
    static WorkloadKey parse(std::string_view key);

    /// The key string as given to parse().
    const std::string& text() const { return m_text; }
    /// Element 0: the DAG hash or the registered function name (the whole key if undecodable).
    const std::string& name() const { return m_name; }
    /// True if the key was a JSON list (so args() is meaningful).
    bool decodable() const { return m_decodable; }
    /// True if name() looks like a DAG hash (32 lower-case hex digits) rather than a function name.
    bool isDagHash() const;
    /// The arguments as written (element 1.. of the list), nesting kept.
    const std::vector<nlohmann::json>& rawArgs() const { return m_rawArgs; }
    /// The arguments flattened depth-first, as TVM's decode_workload_key returns them.
    const std::vector<nlohmann::json>& args() const { return m_flatArgs; }
    /// True if the raw arguments contain a nested list (the newer, per-tensor-shape form).
    bool nested() const;

    /// A canonical text of (name, flat args) such that two keys are equal() iff their canonical
    /// texts are equal (numbers compare by value, so 4 and 4.0 are one argument, as in Python).
    /// Use it as a map key.
    const std::string& canonical() const { return m_canonical; }
    /// The flat args' canonical text alone (TVM's `workload_args` dictionary key).
    const std::string& canonicalArgs() const { return m_canonicalArgs; }

    /// Same workload as TVM sees it: same name and equal flattened args.
    friend bool operator==(const WorkloadKey& a, const WorkloadKey& b) { return a.m_canonical == b.m_canonical; }

private:
    std::string m_text;
    std::string m_name;
    bool m_decodable = false;
    std::vector<nlohmann::json> m_rawArgs;
    std::vector<nlohmann::json> m_flatArgs;
    std::string m_canonical;
    std::string m_canonicalArgs;
};

/// TVM `calc_workload_dis_factor(target, candidate)` (auto_scheduler/measure_record.py): how much
/// bigger the target workload is than a compatible candidate. +infinity if the names or the
/// flattened arity differ; per argument, integers must both be zero or the target's must be a
/// multiple of the candidate's (the factor multiplies target/candidate), any other argument must
/// be equal. 1 means the same workload.
double calcWorkloadDisFactor(const WorkloadKey& target, const WorkloadKey& candidate);

}  // namespace tb::record
