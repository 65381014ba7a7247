// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file compute_dag.h
/// \brief The compute DAG: the unit the auto-scheduler tunes (TVM `auto_scheduler.ComputeDAG`).
///
/// A ComputeDAG holds the io tensors of one fused subgraph (inputs, then outputs), its operations
/// in TVM's stage order (post-order DFS from the outputs, each op's inputs visited in first-load
/// order), the access-analysis facts the sketch rules need (REFERENCE-TVM §1.1), its FLOP count
/// by TVM's FlopEstimator rules (§4.4), and its printed forms. The simple-mode print is what TVM
/// hashes into the workload key: `["<md5 hex>", [shape0], [shape1], ...]` (§0), byte-exact.

#include <map>
#include <string>
#include <vector>

#include "engine/te/operation.h"

namespace tb::te {

/// Per-operation facts of TVM's AccessAnalyzer.
struct OpAccessInfo {
    /// Every read of a producer: tensor op -> list of index tuples (one per load site).
    std::vector<std::pair<Operation, std::vector<std::vector<Expr>>>> readFrom;
    /// Every consumer that reads this op: consumer op -> its index tuples into this op.
    std::vector<std::pair<Operation, std::vector<std::vector<Expr>>>> readBy;
    bool isSimpleAccess = false;        ///< every index is a plain (possibly missing/reordered) axis var
    bool isStrictlyInlineable = false;  ///< simple, same order, no missing/duplicated axis, no exp, no branch
    bool needsMultiLevelTiling = false; ///< TVM "HasDataReuse" (see compute_dag.cpp)
    bool isOutput = false;              ///< consumed by no op of the DAG
};

class ComputeDAG {
public:
    ComputeDAG() = default;
    /// A DAG over io `tensors` (inputs first, then outputs), as TVM's `ComputeDAG(Array<Tensor>)`.
    /// Throws InternalError if an output reads a placeholder that is not listed.
    explicit ComputeDAG(std::vector<Tensor> tensors);
    /// A DAG whose io tensors are the placeholders reachable from `outputs` in pre-order DFS
    /// discovery (TVM relay_integration `traverse_to_get_io_tensors`) followed by `outputs`.
    static ComputeDAG fromOutputs(const std::vector<Tensor>& outputs);

    /// The io tensors: inputs then outputs (their shapes form the workload key).
    const std::vector<Tensor>& tensors() const { return m_tensors; }
    /// Operations in stage order (placeholders included), as TVM prints them.
    const std::vector<Operation>& ops() const { return m_ops; }
    /// Placeholder tensors among tensors(), and the outputs.
    std::vector<Tensor> inputs() const;
    std::vector<Tensor> outputs() const;

    /// Floating-point operation count (TVM FlopEstimator); -1 if some op is not countable.
    double flopCount() const { return m_flop; }

    /// The DAG text. Full mode (the tutorials' `print(task.compute_dag)`) appends each placeholder's
    /// shape; simple mode (hashed) prints `name = PLACEHOLDER ` and calls as `Op(<name>)`.
    std::string print(bool simpleMode = false) const;
    /// md5 hex of print(true).
    std::string hash() const;
    /// TVM's workload key: JSON `["<md5>", [d0, d1, ...], ...]` with python json.dumps separators.
    std::string workloadKey() const;

    /// Access facts of one op of this DAG (throws InternalError for a foreign op).
    const OpAccessInfo& access(const Operation& op) const;
    const OpAccessInfo& access(const OperationNode* op) const;
    /// Stage index of op in ops(), or -1.
    int opIndex(const OperationNode* op) const;
    /// True if `op` and its consumer `target` index the same axes in the same order (TVM
    /// AccessAnalyzer::ElementWiseMatch: every read of op by target is the target's own axis list,
    /// and target's output shape equals op's).
    bool elementWiseMatch(const Operation& op, const Operation& target) const;
    /// Consumers of op inside the DAG.
    std::vector<Operation> consumers(const Operation& op) const;

private:
    void analyze();

    std::vector<Tensor> m_tensors;
    std::vector<Operation> m_ops;
    std::map<const OperationNode*, OpAccessInfo> m_access;
    double m_flop = 0;
};

/// FLOPs of a list of ops by TVM's rules (REFERENCE-TVM §4.4); -1 when not countable.
double estimateFlop(const std::vector<Operation>& ops);

/// A workload key string from a hash and shapes: `["hash", [1, 2], [3]]`.
std::string makeWorkloadKey(const std::string& hash, const std::vector<std::vector<int64_t>>& shapes);

}  // namespace tb::te
